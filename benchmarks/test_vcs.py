"""The vcsbench suite: backend x operation x payload x filesystem.

Run with ``pytest benchmarks --benchmark-only`` (or ``vcsbench run``); the ``--vcs-*``
options select the matrix, see ``pytest --help``.
"""

from typing import Any

from vcsbench.plugin import VcsSession


def test_vcs(
    benchmark: Any, vcs_session: VcsSession, backend: str, op: str, payload: str, fs: str
) -> None:
    vcs_session.run(benchmark, backend=backend, op=op, payload=payload, fs=fs)
