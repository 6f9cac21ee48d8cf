"""The ``vcsbench`` fixture: your own VCS benchmark in a few lines, measured like the suite.

::

    import pytest

    @pytest.mark.vcs(backends=["git-cli"], fs=["ext4", "xfs"])
    def test_gc_after_history(vcsbench):
        def prepare(r):                  # untimed: make what the operation needs
            r.backend.create(r.repo)
            for i in range(50):
                r.backend.commit(r.repo, {"log.txt": b"%d" % i}, f"c{i}", r.scratch)

        def run(r):                      # timed: the operation alone
            r.sh("git", "-C", r.repo, "gc", "-q")

        def verify(r):                   # untimed: what should hold afterwards
            return r.backend.verify(r.repo, {"log.txt": b"49"})

        vcsbench(run, prepare=prepare, verify=verify)

Each case (backend variant x filesystem, from ``@pytest.mark.vcs`` or the ``--vcs-*``
options) runs ``--vcs-repos`` rounds, each in a fresh repository of a fresh sandbox; the
result -- time from the one clock, CPU, IO at the process and the device, footprint,
floor, errors -- goes into the same result file, report and compare as the suite's.
Every round is verified; ``verify`` is required (a failed round is an error, never a
fast sample). The footprint is what the round's repository and checkout hold after it,
and whatever ``outputs`` names (a copy the operation made, say), with the change from
before the timed call as its own figure. The round's ``checkout`` is a path only: the
benchmark makes it if it wants one. A benchmark that names no payload has none (its
label says "none"; ``r.files`` then says to name one). The built-in operations go through
:meth:`VcsBench.operation`, the same path.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vcsbench.backends import Backend, Variant
from vcsbench.backends.files import Files
from vcsbench.backends.tools import run_tool
from vcsbench.errors import VcsbenchError
from vcsbench.sandbox import FsSpec, parse_fs_spec
from vcsbench.workload.operation import Operation, RoundPaths
from vcsbench.workload.operations import OperationSpec
from vcsbench.workload.payloads import Payload, load_payload

if TYPE_CHECKING:
    from vcsbench.bench.selection import Selection
    from vcsbench.bench.session import VcsSession
    from vcsbench.results.model import Benchmark


@dataclass(frozen=True)
class Round:
    """What a user's callables get: the round's paths, the backend and the payload."""

    repo: Path
    checkout: Path
    scratch: Path
    backend: Backend
    payload: Payload
    index: int

    @property
    def files(self) -> Files:
        if self.payload is NO_PAYLOAD:
            raise VcsbenchError(
                "this benchmark names no payload, so r.files has nothing; name one: "
                "@pytest.mark.vcs(payload='hello') (or 'submission', 'many-files', ...)"
            )
        return self.payload.files

    def sh(self, *argv: str | Path) -> bytes:
        """Run a command (no shell); its stdout, or :class:`ToolError` with its stderr."""
        return run_tool([str(a) for a in argv])


NO_PAYLOAD = Payload("none", "no payload: the benchmark makes its own content", {}, None)
"""A user's benchmark without ``payload=``: labelled "none", not as a payload it never used."""

Step = Callable[[Round], object]
Check = Callable[[Round], Sequence[str]]


class CallableOperation(Operation):
    """An operation made of a user's callables."""

    needs = frozenset()
    footprint_by_round = True

    def __init__(
        self,
        name: str,
        backend: Backend,
        payload: Payload,
        run: Step,
        prepare: Step | None,
        verify: Check,
        outputs: Callable[[Round], Sequence[Path]] | None,
    ) -> None:
        super().__init__(backend, payload)
        self.name = name  # type: ignore[misc]
        self._run, self._prepare, self._verify, self._outputs = run, prepare, verify, outputs
        self._current: Round | None = None

    def _round(self, paths: RoundPaths) -> Round:
        if self._current is None or self._current.repo != paths.repo:
            index = int(paths.repo.name.lstrip("r") or 0)
            self._current = Round(
                paths.repo, paths.checkout, paths.scratch, self.backend, self.payload, index
            )
        return self._current

    def prepare(self, paths: RoundPaths) -> None:
        # The round's handle is made here, untimed; run() only looks it up.
        round_ = self._round(paths)
        if self._prepare is not None:
            self._prepare(round_)

    def run(self, paths: RoundPaths) -> None:
        self._run(self._round(paths))

    def expected(self) -> Files:
        return {}

    def verify(self, paths: RoundPaths) -> list[str]:
        return [str(problem) for problem in self._verify(self._round(paths))]

    def measured(self, paths: RoundPaths) -> list[Path]:
        extra = list(self._outputs(self._round(paths))) if self._outputs is not None else []
        return [paths.repo, paths.checkout, *extra]


class VcsBench:
    """The ``vcsbench`` fixture of one case (backend variant, filesystem)."""

    def __init__(
        self, benchmark: Any, session: VcsSession, backend: Variant, fs: FsSpec, request: Any
    ) -> None:
        self.benchmark = benchmark
        self.session = session
        self.backend = backend
        self.fs = fs
        marker = request.node.get_closest_marker("vcs")
        self.payload_name: str | None = marker.kwargs.get("payload") if marker else None
        self.repos: int | None = marker.kwargs.get("repos") if marker else None
        self.name = request.node.originalname.removeprefix("test_")
        self.result: Benchmark | None = None
        """The benchmark's result once it ran (None with --benchmark-disable)."""

    def __call__(
        self,
        run: Step,
        *,
        verify: Check,
        prepare: Step | None = None,
        outputs: Callable[[Round], Sequence[Path]] | None = None,
        name: str | None = None,
    ) -> Benchmark | None:
        """Time ``run`` in every round, after an untimed ``prepare``, then ``verify``
        (problems as strings; empty: the round is good). ``outputs`` names paths the
        round writes besides its repository and checkout, counted in its footprint."""
        if not callable(verify):
            raise VcsbenchError("vcsbench(...) needs verify=: every timed operation is verified")
        op_name = name or self.name
        payload = NO_PAYLOAD if self.payload_name is None else load_payload(self.payload_name)
        self.result = self.session.run_operation(
            self.benchmark,
            self.backend,
            self.fs,
            op_name,
            payload.name,
            lambda vcs: CallableOperation(op_name, vcs, payload, run, prepare, verify, outputs),
            self.repos,
        )
        return self.result

    def operation(self, op: OperationSpec | str, payload: str) -> Benchmark | None:
        """One of the built-in operations (``create``, ``commit[history=10]``, ...), as the
        suite runs it (named, it is parsed here, once)."""
        spec = op if isinstance(op, OperationSpec) else OperationSpec.parse(op)
        self.result = self.session.run_operation(
            self.benchmark,
            self.backend,
            self.fs,
            spec.text,
            payload,
            lambda vcs: spec.make(vcs, load_payload(payload)),
            built_in=(spec, payload),
        )
        return self.result


def cases_for(marker: Any, selection: Selection) -> list[tuple[Variant, FsSpec]]:
    """(backend variant, fs spec) pairs of a user's benchmark: its marker's, parsed here
    once, or else the selection's."""
    names = list(marker.kwargs.get("backends", [])) if marker else []
    specs = list(marker.kwargs.get("fs", [])) if marker else []
    try:
        backends = [Variant.parse(name) for name in names] or list(selection.backends)
        fs = [parse_fs_spec(spec) for spec in specs] or list(selection.fs)
    except VcsbenchError as exc:
        raise VcsbenchError(f"@pytest.mark.vcs: {exc}") from None
    return [(b, f) for f in fs for b in backends]
