"""The vcsbench suite: backend variant x operation x payload x filesystem.

Shipped inside the package, so that an installed vcsbench runs it (``vcsbench run``);
``benchmarks/test_vcs.py`` in the source tree is this module under pytest's name, for
``pytest --benchmark-only``. The ``--vcs-*`` options select the matrix. Each built-in
operation goes through the same ``vcsbench`` fixture API a user's benchmark does.
"""

from typing import Any

from vcsbench.backends import Variant
from vcsbench.bench.fixture import VcsBench
from vcsbench.bench.session import VcsSession
from vcsbench.sandbox import FsSpec
from vcsbench.workload.operations import OperationSpec


def test_vcs(
    benchmark: Any,
    vcs_session: VcsSession,
    backend: Variant,
    op: OperationSpec,
    payload: str,
    fs: FsSpec,
    request: Any,
) -> None:
    VcsBench(benchmark, vcs_session, backend, fs, request).operation(op, payload)
