"""System calls by kind, counted per round: proved with an operation that makes a known
number of each beyond what another, otherwise the same, makes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from fakes import FakeBackend, KnownWrite, sandbox_for

from vcsbench.bench.plan import RoundPlan
from vcsbench.bench.rounds import BenchmarkRun
from vcsbench.measure.syscalls import SyscallCounter
from vcsbench.results.metrics import CALL_METRICS
from vcsbench.results.model import Benchmark
from vcsbench.sandbox import Sandbox
from vcsbench.workload.operation import RoundPaths

KNOWN = {
    "open_calls": 3,
    "write_calls": 3,
    "sync_calls": 2,
    "rename_calls": 5,
    "mkdir_calls": 4,
    "stat_calls": 6,
    "stat_failed_calls": 6,  # the failed lookups, which are lookups too
    "unlink_calls": 4,  # three files and one directory (rmdir)
}
"""What one round of :class:`KnownCalls` makes beyond :class:`KnownWrite`'s."""
CHILD = (
    "import os, sys\n"
    "for i in range(2):\n"
    "    os.rename(sys.argv[1] + str(i), sys.argv[1] + str(i + 1))\n"
)
ROUNDS = 6


class KnownCalls(KnownWrite):
    """KnownWrite's work, then :data:`KNOWN`'s calls in the round's scratch directory
    (and, with ``child``, two more renames in a waited child)."""

    name = "known-calls"

    def __init__(self, backend: FakeBackend, child: bool = False) -> None:
        super().__init__(backend)
        self.child = child

    def run(self, paths: RoundPaths) -> None:
        super().run(paths)
        self.calls_only(paths, self.child)

    @staticmethod
    def calls_only(paths: RoundPaths, child: bool = False) -> None:
        work = str(paths.scratch)
        for name in ("a", "x", "y"):
            fd = os.open(f"{work}/{name}", os.O_WRONLY | os.O_CREAT, 0o644)
            os.write(fd, b"k")
            if name != "y":
                os.fsync(fd)
            os.close(fd)
        for old, new in zip("abcde", "bcdef", strict=True):
            os.rename(f"{work}/{old}", f"{work}/{new}")
        for i in range(4):
            os.mkdir(f"{work}/d{i}")
        for i in range(6):
            os.path.lexists(f"{work}/absent{i}")
        for name in ("f", "x", "y"):
            os.unlink(f"{work}/{name}")
        os.rmdir(f"{work}/d0")
        if child:
            os.close(os.open(f"{work}/c0", os.O_WRONLY | os.O_CREAT, 0o644))
            subprocess.run([sys.executable, "-c", CHILD, f"{work}/c"], check=True)


def run_calls(sandbox: Sandbox, operation: KnownWrite, name: str) -> Benchmark:
    assert sandbox.info is not None
    run = BenchmarkRun(
        operation=operation, sandbox=sandbox.info, workdir=sandbox.root / name,
        plan=RoundPlan(ROUNDS),
    )  # fmt: skip
    run.run_all()
    return run.finish(FakeBackend().describe())


def test_every_kind_is_counted_to_the_call(root: None, tmp_path: Path) -> None:
    """The counter of every kind around the known calls alone: KNOWN's, kind by kind,
    and none of the kinds they do not make (read calls and mmaps among them)."""
    counter = SyscallCounter()
    before = counter.read()
    assert before is not None, counter.reason
    paths = RoundPaths.of(tmp_path, 0)
    paths.repo.parent.mkdir(parents=True)
    paths.scratch.mkdir(parents=True)
    operation = KnownCalls(FakeBackend())
    KnownWrite.run(operation, paths)  # the part whose calls are not known ahead
    middle = counter.read()
    assert middle is not None
    KnownCalls.calls_only(paths)
    after = counter.read()
    counter.close()
    assert after is not None
    found = {kind: after[kind] - middle[kind] for kind in after}
    found["read_calls"] -= 1  # the counter's own read
    assert found == {kind: KNOWN.get(kind, 0) for kind in found}


def test_each_kind_in_rounds_is_counted_to_the_call_in_every_round(
    root: None, tmp_path: Path
) -> None:
    """Beside the same work without them, the known calls are exactly KNOWN's in every
    round, for each kind counted inside timed rounds, and the figures are the same in
    every round of either benchmark."""
    with sandbox_for("ext4:size=256M", tmp_path) as sandbox:
        plain = run_calls(sandbox, KnownWrite(FakeBackend()), "plain")
        known = run_calls(sandbox, KnownCalls(FakeBackend()), "known")
    assert 0 == plain.errors == known.errors
    for name in CALL_METRICS:
        base, more = plain.rounds.values[name], known.rounds.values[name]
        assert None not in base and None not in more, (name, plain.metrics[name].reason)
        assert len(set(base)) == 1 and len(set(more)) == 1, (name, base, more)
        assert more[0] - base[0] == KNOWN.get(name, 0), name
        assert known.per_repo(name) == more[0]


def test_a_waited_childs_calls_are_the_rounds(root: None, tmp_path: Path) -> None:
    """Two renames in a child the round waits for are the round's: its renames are
    KNOWN's and two, and it started one process and one program."""
    with sandbox_for("ext4:size=256M", tmp_path) as sandbox:
        known = run_calls(sandbox, KnownCalls(FakeBackend()), "known")
        child = run_calls(sandbox, KnownCalls(FakeBackend(), child=True), "child")
    values = child.rounds.values
    assert [v - k for v, k in zip(values["rename_calls"], known.rounds.values["rename_calls"],
                                  strict=True)] == [2] * ROUNDS  # fmt: skip
    assert set(values["process_calls"]) == {known.rounds.values["process_calls"][0] + 1}
    assert set(values["exec_calls"]) == {known.rounds.values["exec_calls"][0] + 1}


def test_without_a_device_no_call_is_counted_and_each_says_why(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with sandbox_for(f"dir:{tmp_path / 'd'}", tmp_path) as sandbox:
        bench = run_calls(sandbox, KnownCalls(FakeBackend()), "known")
    for name in CALL_METRICS:
        assert bench.rounds.values[name] == [None] * ROUNDS
        assert bench.metrics[name].total is None
        assert "block device of its own" in bench.metrics[name].reason
