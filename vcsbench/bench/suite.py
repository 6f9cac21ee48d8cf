"""The vcsbench suite: backend variant x operation x payload x filesystem.

Shipped inside the package, so that an installed vcsbench runs it (``vcsbench run``);
``benchmarks/test_vcs.py`` in the source tree is this module under pytest's name, for
``pytest benchmarks --benchmark-only``. The ``--vcs-*`` options select the matrix.
"""

from typing import Any

from vcsbench.bench.plugin import VcsSession


def test_vcs(
    benchmark: Any, vcs_session: VcsSession, backend: str, op: str, payload: str, fs: str
) -> None:
    vcs_session.run(benchmark, backend=backend, op=op, payload=payload, fs=fs)
