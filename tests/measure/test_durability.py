"""Durability counted: fsync-family calls and device flushes, proved with known work."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeBackend, KnownWrite, run_known, sandbox_for
from helpers import REPO, edited_result, vcsbench

from vcsbench.bench.plan import RoundPlan
from vcsbench.bench.rounds import BenchmarkRun
from vcsbench.measure import syscalls
from vcsbench.measure.probes import Probe, read_device
from vcsbench.measure.syscalls import SyscallCounter
from vcsbench.report.summary import summary
from vcsbench.results.io import read
from vcsbench.results.model import Benchmark
from vcsbench.workload.operation import RoundPaths

TINY = REPO / "tests" / "data" / "tiny-ext4.json"
FSYNCS = 3
FDATASYNCS = 2
CHILD_FSYNCS = 1
CALLS = FSYNCS + FDATASYNCS + CHILD_FSYNCS
CHILD = (
    "import os, sys\n"
    "fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)\n"
    "os.write(fd, b'c' * 4096)\n"
    "os.fsync(fd)\n"
    "os.close(fd)\n"
)


def known_syncs(directory: Path) -> None:
    """Exactly FSYNCS fsync and FDATASYNCS fdatasync calls here, and CHILD_FSYNCS fsync in a
    waited child, each after a write."""
    fd = os.open(directory / "synced", os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        for _ in range(FSYNCS):
            os.write(fd, b"s" * 4096)
            os.fsync(fd)
        for _ in range(FDATASYNCS):
            os.write(fd, b"d" * 4096)
            os.fdatasync(fd)
    finally:
        os.close(fd)
    subprocess.run([sys.executable, "-c", CHILD, str(directory / "child")], check=True)


class KnownSyncs(KnownWrite):
    """KnownWrite's files, then the known durability calls in the repository."""

    name = "known-syncs"

    def run(self, paths: RoundPaths) -> None:
        super().run(paths)
        known_syncs(paths.repo)


def run_syncs(sandbox_root: Path, info: object, rounds: int, recycle: int = 0) -> Benchmark:
    backend = FakeBackend()
    run = BenchmarkRun(
        operation=KnownSyncs(backend),
        sandbox=info,  # type: ignore[arg-type]
        workdir=sandbox_root / f"syncs-{recycle}",
        plan=RoundPlan(rounds, recycle=recycle),
    )
    run.run_all()
    return run.finish(backend.describe())


def test_the_counter_counts_known_calls_and_a_childs_to_the_call(
    root: None, tmp_path: Path
) -> None:
    counter = SyscallCounter()
    first = counter.read()
    assert first is not None, counter.reason
    known_syncs(tmp_path)
    assert (counter.read() or {})["sync_calls"] == first["sync_calls"] + CALLS
    counter.close()


def test_known_syncs_are_counted_per_round_and_reach_the_device(root: None, tmp_path: Path) -> None:
    """Every round's calls counted to the call, in the benchmark's process and in recycled
    workers; the device's flushes at least one a round where the round syncs, and none
    where it does not -- though the harness's syncfs after every round flushed the device
    each time: its flushes are left out."""
    with sandbox_for("ext4:size=256M", tmp_path) as sandbox:
        assert sandbox.info is not None and sandbox.info.device_stat_path is not None
        plain = run_syncs(sandbox.root, sandbox.info, 5)
        recycled = run_syncs(sandbox.root, sandbox.info, 5, recycle=2)
        device_before = read_device(sandbox.info.device_stat_path).flush_requests
        quiet = run_known(sandbox, rounds=5)
        device_after = read_device(sandbox.info.device_stat_path).flush_requests
    for bench in (plain, recycled):
        assert [CALLS] * 5 == bench.rounds.values["sync_calls"]
        assert CALLS == bench.per_repo("sync_calls")
        flushes = bench.rounds.values["io_flush_requests_device"]
        assert all(v is not None and v >= 1 for v in flushes), flushes
    assert [0] * 5 == quiet.rounds.values["sync_calls"]
    flushes = quiet.rounds.values["io_flush_requests_device"]
    # ext4's journal may commit on its own 5-second timer inside one round, no more.
    assert sum(1 for v in flushes if v) <= 1, flushes
    assert device_before is not None and device_after is not None
    assert device_after - device_before >= 5 + sum(v or 0 for v in flushes)


def test_calls_that_cannot_be_counted_are_missing_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(syscalls, "_IDS", {})
    monkeypatch.setattr(syscalls, "_WHY", ["no tracepoints here (planted)"])
    counter = SyscallCounter()
    assert counter.read() is None
    assert counter.reason == "no tracepoints here (planted)"
    (tmp_path / "d").mkdir()
    with sandbox_for(f"dir:{tmp_path / 'd'}", tmp_path) as sandbox:
        assert sandbox.info is not None
        bench = run_syncs(sandbox.root, sandbox.info, 3)
    metric = bench.metrics["sync_calls"]
    assert metric.total is None and metric.per_repo is None
    assert "not counted" in metric.reason and "root" in metric.reason
    assert "block device" in metric.reason
    assert bench.rounds.values["sync_calls"] == [None] * 3
    assert bench.metrics["io_flush_requests_device"].total is None  # a directory: no device


def test_beside_a_device_the_reason_is_the_counters_own(
    root: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a filesystem with a device of its own, a counter that cannot count says why it
    could not (here: no tracepoints), not the general rule."""
    monkeypatch.setattr(syscalls, "_IDS", {})
    monkeypatch.setattr(syscalls, "_WHY", ["no tracepoints here (planted)"])
    with sandbox_for("ext4:size=64M", tmp_path) as sandbox:
        assert sandbox.info is not None and sandbox.info.device_stat_path is not None
        bench = run_syncs(sandbox.root, sandbox.info, 3)
    metric = bench.metrics["sync_calls"]
    assert metric.total is None
    assert "not counted: no tracepoints here (planted)" == metric.reason


def test_a_sandbox_without_a_device_of_its_own_opens_no_counter(tmp_path: Path) -> None:
    """Counting costs tmpfs rounds about 2 % (tools/bareloop.py counted): a probe counts only
    where the sandbox has a block device, and says so where it has none."""
    probe = Probe(tmp_path, None, sync=False)
    assert probe.before().calls is None
    assert probe.calls.reason == syscalls.NO_DEVICE
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    assert probe.after().calls is None
    probe.close()


def with_syncs(tmp_path: Path, name: str, calls: dict[str, int]) -> str:
    """The frozen ext4 result with each backend's rounds making ``calls[backend]``
    fsync-family calls (a backend not named: not counted, as a run without root)."""

    def edit(document: dict[str, Any], benches: list[dict[str, Any]]) -> None:
        for bench in benches:
            count = calls.get(bench["backend"]["name"])
            if count is None:
                continue
            rounds = bench["rounds"]
            rounds["values"]["sync_calls"] = [count if ok else None for ok in rounds["ok"]]
            total = count * bench["repos_ok"]
            bench["metrics"]["sync_calls"] = {"unit": "calls", "total": total, "per_repo": count}

    return edited_result(TINY, tmp_path / f"{name}.json", edit)


def test_compare_shows_and_gates_counted_calls_and_only_where_counted(tmp_path: Path) -> None:
    base = with_syncs(tmp_path, "base", {"git-pygit2": 0, "svn-fs": 7})
    other = with_syncs(tmp_path, "other", {"git-pygit2": 10, "svn-fs": 7})
    result = vcsbench("compare", base, other)
    assert 0 == result.returncode, result.stderr
    header = next(line for line in result.stdout.splitlines() if "per repository" in line)
    assert "fsync-family calls" in header and "device flushes" not in header
    svn = next(line for line in result.stdout.splitlines() if "svn-fs" in line and "→" in line)
    assert "7.0 → 7.0 (1.00x ~)" in svn
    git = next(line for line in result.stdout.splitlines() if "git-pygit2" in line and "→" in line)
    assert "0.0 → 10.0" in git
    gated = vcsbench("compare", base, other, "--fail-on", "sync_calls:10%")
    assert 1 == gated.returncode, gated.stdout
    uncounted = vcsbench("compare", str(TINY), str(TINY))
    assert "fsync-family calls" not in uncounted.stdout
    not_measured = vcsbench("compare", str(TINY), str(TINY), "--fail-on", "sync_calls:10%")
    assert 1 == not_measured.returncode
    assert "sync_calls not measured" in not_measured.stdout + not_measured.stderr


def test_the_runs_summary_shows_counted_calls_and_only_where_counted(tmp_path: Path) -> None:
    counted = summary([read(with_syncs(tmp_path, "counted", {"git-pygit2": 0, "svn-fs": 7}))])
    header, _, *rows = counted.splitlines()
    assert "fsync calls/repo" in header and "flushes/repo" not in header
    column = header.index("fsync calls/repo")
    calls = {row.split()[0]: row[column:].split()[0] for row in rows}
    assert {"git-pygit2": "0.0", "svn-fs": "7.0"} == {k: calls[k] for k in ("git-pygit2", "svn-fs")}
    assert "fsync calls/repo" not in summary([read(TINY)])


def test_the_runs_summary_has_a_device_column_only_where_a_device_was_counted() -> None:
    """tmpfs has no block device: no column of n/a; ext4's device bytes per repository."""
    tmpfs = summary([read(TINY.parent / "tiny-tmpfs.json")]).splitlines()[0]
    assert "device KiB/repo" not in tmpfs and "allocated KiB/repo" in tmpfs
    ext4 = summary([read(TINY)])
    header, _, *rows = ext4.splitlines()
    column = header.index("device KiB/repo")
    assert all(row[column:].split()[0] not in ("n/a", "—") for row in rows if row.strip())
