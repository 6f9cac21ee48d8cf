"""The round loop and attribution, proved with an operation that does known work."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest
from fakes import (
    DIRS,
    FILE_BYTES,
    FILES,
    KNOWN_ROUNDS,
    SCRATCH_BYTES,
    FakeBackend,
    KnownWrite,
    run_known,
    sandbox_for,
)

from vcsbench.bench import canary
from vcsbench.bench import watch as watch_module
from vcsbench.bench.log import VERIFY_BATCH
from vcsbench.bench.plan import RoundPlan
from vcsbench.bench.policy import VerifyPolicy
from vcsbench.bench.rounds import BenchmarkRun
from vcsbench.errors import VcsbenchError
from vcsbench.measure import sampler as sampler_module
from vcsbench.workload.operation import RoundPaths

ROUNDS = KNOWN_ROUNDS
WRITTEN = FILES * FILE_BYTES + SCRATCH_BYTES


def test_known_work_on_ext4_is_attributed_to_the_byte(root: None, tmp_path: Path) -> None:
    with sandbox_for("ext4:size=256M", tmp_path) as sandbox:
        bench = run_known(sandbox)
    assert [WRITTEN] * ROUNDS == bench.rounds.values["io_write_syscall"]
    assert [WRITTEN] * ROUNDS == bench.rounds.values["io_write_logical"]
    assert WRITTEN == bench.per_repo("io_write_logical")
    assert 0 == bench.per_repo("io_read_syscall")
    assert FILES * FILE_BYTES == bench.per_repo("footprint_content")
    assert FILES + DIRS + 1 == bench.per_repo("footprint_inodes")
    assert FILES * FILE_BYTES <= bench.per_repo("footprint_allocated")
    assert SCRATCH_BYTES + 1024 == bench.per_repo("scratch_allocated")  # + its directory
    assert 2 == bench.per_repo("scratch_inodes")
    # The device wrote at least the data, after syncfs, in each round.
    assert all(v is not None and v >= WRITTEN for v in bench.rounds.values["io_write_device"])
    # Who wrote it: this process, charged with every round's bytes and every canary's
    # files (and the verifier's none: it reads), beside the device's journal; what the
    # device wrote beyond their charges is no task's (none here: the journal's covers it).
    found = bench.writers
    assert found is not None and found.unattributed_share is not None
    assert bench.canary is not None and bench.canary.timed == ROUNDS
    ours = ROUNDS * WRITTEN + bench.canary.timed * canary.FILES * canary.SIZE
    me = Path("/proc/self/comm").read_text().strip()
    assert any(  # another process of this name may write too, on a shared machine
        ours <= w.write_bytes <= ours + 64 * 1024
        for w in found.top
        if w.name == me and not w.kernel_thread
    ), found.top
    assert any(w.kernel_thread and w.name.startswith("jbd2/loop") for w in found.top)
    assert found.charged_bytes >= sum(w.write_bytes for w in found.top)
    assert 0 <= found.unattributed_share <= 1


def test_content_bytes_compare_across_filesystems_and_directory_bytes_do_not(
    root: None, tmp_path: Path
) -> None:
    found = {}
    for spec in ("tmpfs", "ext4:size=256M"):
        with sandbox_for(spec, tmp_path) as sandbox:
            found[spec] = run_known(sandbox, rounds=2)
    tmpfs, ext4 = found["tmpfs"], found["ext4:size=256M"]
    assert tmpfs.per_repo("footprint_content") == ext4.per_repo("footprint_content")
    assert (DIRS + 1) * 1024 == ext4.per_repo("footprint_dirs")  # 1 KiB blocks at 256M
    assert tmpfs.per_repo("footprint_dirs") != ext4.per_repo("footprint_dirs")


def test_failed_rounds_are_no_samples_and_per_repo_counts_successes(tmp_path: Path) -> None:
    with sandbox_for(f"dir:{tmp_path}", tmp_path) as sandbox:
        bench = run_known(sandbox, fail_rounds=frozenset({1, 4}))
    assert 2 == bench.errors
    assert [True, False, True, True, False, True] == bench.rounds.ok
    assert 4 == len(bench.samples_s)
    assert WRITTEN == bench.per_repo("io_write_syscall")
    assert "RuntimeError: planted failure" in bench.error_samples[0].error
    assert 1 == bench.error_samples[0].round


def test_every_round_failing_leaves_no_figure(tmp_path: Path) -> None:
    with sandbox_for(f"dir:{tmp_path}", tmp_path) as sandbox:
        bench = run_known(sandbox, rounds=3, fail_rounds=frozenset({0, 1, 2}))
    assert bench.failed and [] == bench.samples_s
    assert None is bench.median_ms
    assert "every round failed" == bench.metric("io_write_syscall").reason


def test_a_verification_failure_is_an_error_not_a_sample(tmp_path: Path) -> None:
    with sandbox_for(f"dir:{tmp_path}", tmp_path) as sandbox:
        assert sandbox.info is not None
        backend = FakeBackend({"corrupt": "true"})
        run = BenchmarkRun(KnownWrite(backend), sandbox.info, sandbox.root / "b", RoundPlan(3))
        run.run_all()
        bench = run.finish(backend.describe())
    assert 3 == bench.errors and [] == bench.samples_s
    assert bench.error_samples[0].error.startswith("verify: d0/f00.bin: content differs")


def test_dir_sandbox_leaves_device_io_out_unless_asked(tmp_path: Path) -> None:
    with sandbox_for(f"dir:{tmp_path}", tmp_path) as sandbox:
        bench = run_known(sandbox, rounds=2)
    assert None is bench.metric("io_write_device").total
    assert "device=shared" in bench.metric("io_write_device").reason
    assert not bench.filesystem.device_shared
    with sandbox_for(f"dir:{tmp_path},device=shared", tmp_path) as sandbox:
        shared = run_known(sandbox, rounds=2)
    assert shared.filesystem.device_shared
    if shared.filesystem.device is not None:
        assert shared.metric("io_write_device").total is not None


def test_round_counters_are_the_same_with_the_sampler_on_and_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    busy = type(
        "BusySampler",
        (sampler_module.SystemSampler,),
        {"__init__": lambda self, dev: sampler_module.SystemSampler.__init__(self, dev, 0.001)},
    )
    off = type(
        "NoSampler",
        (sampler_module.SystemSampler,),
        {"start": lambda self: None, "stop": lambda self: []},
    )
    found = {}
    for name, cls in (("on", busy), ("off", off)):
        monkeypatch.setattr(watch_module, "SystemSampler", cls)  # where the rounds are watched
        with sandbox_for(f"dir:{tmp_path}", tmp_path) as sandbox:
            found[name] = run_known(sandbox, rounds=40)
    assert found["on"].sampler["samples"], "the sampler ran alongside the rounds"
    for key, each_round in (("io_write_syscall", WRITTEN), ("io_read_syscall", 0)):
        assert [each_round] * 40 == found["off"].rounds.values[key]
        assert [each_round] * 40 == found["on"].rounds.values[key]


@pytest.mark.parametrize(
    ("sample", "total"), [(None, 7), (1, 7), (2, 7), (3, 7), (5, 101), (100, 100_000)]
)
def test_verify_sample_picks_evenly_spaced_rounds_without_a_set(
    sample: int | None, total: int
) -> None:
    policy = VerifyPolicy(sample)
    if sample is None or sample >= total:
        expected = set(range(total))
    elif sample == 1:
        expected = {total - 1}
    else:
        expected = {round(i * (total - 1) / (sample - 1)) for i in range(sample)}
    assert expected == {i for i in range(total) if policy.verifies(i, total)}


def test_scratch_directories_that_stay_empty_are_removed(tmp_path: Path) -> None:
    with sandbox_for(f"dir:{tmp_path}", tmp_path) as sandbox:
        run_known(sandbox, rounds=3, fail_rounds=frozenset({1}))
        assert ["r0000000", "r0000002"] == sorted(os.listdir(sandbox.root / "bench" / "scratch"))


def test_a_huge_repository_count_costs_no_memory_before_the_first_round(tmp_path: Path) -> None:
    import tracemalloc

    with sandbox_for(f"dir:{tmp_path}", tmp_path) as sandbox:
        assert sandbox.info is not None
        # Half the free inodes: the filesystem is shared (another test worker makes files
        # on it between this read and the run's own check)
        free = os.statvfs(sandbox.root).f_favail // 2
        tracemalloc.start()
        BenchmarkRun(KnownWrite(FakeBackend()), sandbox.info, sandbox.root / "b", RoundPlan(free))
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert peak < 1 << 20, f"{peak} bytes for {free:,} rounds"


def test_more_repositories_than_free_inodes_are_refused_in_one_line(
    root: None, tmp_path: Path
) -> None:
    from vcsbench.errors import VcsbenchError

    with sandbox_for("ext4:size=16M", tmp_path) as sandbox:
        assert sandbox.info is not None
        with pytest.raises(VcsbenchError, match=r"--repos 100,000,000 cannot fit in the ext4"):
            BenchmarkRun(
                KnownWrite(FakeBackend()), sandbox.info, sandbox.root / "b", RoundPlan(100_000_000)
            )


def test_a_filesystem_without_an_inode_table_is_not_refused(root: None, tmp_path: Path) -> None:
    with sandbox_for("btrfs:size=256M", tmp_path) as sandbox:
        assert 0 == os.statvfs(sandbox.root).f_files
        bench = run_known(sandbox, rounds=3)
    assert 3 == len(bench.samples_s)


def test_recycled_workers_keep_every_round_counter_exact(root: None, tmp_path: Path) -> None:
    """Rounds run in forked workers (3, 3, then 1 round each) are recorded exactly as rounds
    run in the benchmark's own process: the worker is the measured process."""
    found = {}
    with sandbox_for("ext4:size=256M", tmp_path) as sandbox:
        assert sandbox.info is not None
        for recycle in (0, 3):
            backend = FakeBackend()
            run = BenchmarkRun(
                operation=KnownWrite(backend),
                sandbox=sandbox.info,
                workdir=sandbox.root / f"bench-{recycle}",
                plan=RoundPlan(7, recycle=recycle),
            )
            run.run_all()
            found[recycle] = run.finish(backend.describe())
    plain, recycled = found[0], found[3]
    for key in ("io_write_syscall", "io_write_logical"):
        assert recycled.rounds.values[key] == plain.rounds.values[key] == [WRITTEN] * 7
    assert recycled.rounds.values["io_read_syscall"] == [0] * 7
    for name in ("footprint_content", "footprint_inodes", "scratch_allocated"):
        assert recycled.per_repo(name) == plain.per_repo(name), name
    assert (recycled.repos, recycled.errors, recycled.verified) == (7, 0, 7)
    assert recycled.harness.workers["workers"] == 3
    assert plain.harness.workers["workers"] == 0
    assert all(w > 0 for w in recycled.rounds.wall_ns)
    # The floor is measured on the last round, which a worker ran.
    assert recycled.floor_ratio is not None
    # So is the canary after every round (seven: fewer than canary.MOST), each timing kept.
    for bench in (plain, recycled):
        assert bench.canary is not None and bench.canary.timed == len(bench.canary.each_us) == 7
        wholes = sorted(whole for whole, _ in bench.canary.each_us)
        assert all(0 < writes <= whole for whole, writes in bench.canary.each_us)
        assert bench.canary.ms == pytest.approx(wholes[3] / 1000, abs=0.001)


def test_workers_carry_none_of_what_the_benchmark_process_grew(tmp_path: Path) -> None:
    """Workers are forked from a spawner made before the first round: 64 MiB the
    benchmark's process takes on after the first worker's rounds is in no later worker."""
    from vcsbench.measure.probes import current_rss_bytes

    ballast: list[bytes] = []
    rss: list[int] = []

    def progress(done: int, total: int, elapsed: float) -> None:
        if not ballast:
            rss.append(current_rss_bytes())
            ballast.append(b"x" * (64 << 20))  # written, so resident
            rss.append(current_rss_bytes())

    with sandbox_for(f"dir:{tmp_path}", tmp_path) as sandbox:
        assert sandbox.info is not None
        backend = FakeBackend()
        run = BenchmarkRun(
            operation=KnownWrite(backend),
            sandbox=sandbox.info,
            workdir=sandbox.root / "bench",
            plan=RoundPlan(6, recycle=2),
            progress=progress,
        )
        run.run_all()
        bench = run.finish(backend.describe())
    assert rss[1] - rss[0] >= 60 << 20  # the benchmark's process grew
    peaks = [w.peak_rss for w in run.worker_ends]
    assert len(peaks) == 3 and bench.errors == 0
    assert max(peaks) - min(peaks) < 16 << 20, peaks  # the workers did not


@pytest.mark.serial
def test_known_times_reach_the_reported_median_and_p99(tmp_path: Path) -> None:
    """Round i takes i+1 ms on a clock that moves only by what the operation says: the
    median, p99 and the totals vcsbench reports, and the report's row, are known."""
    from fakes import KnownClock, KnownDelay

    from vcsbench.report.tables import table_rows

    clock = KnownClock()
    delays = [(i + 1) * 1_000_000 for i in range(100)]
    with sandbox_for(f"dir:{tmp_path}", tmp_path) as sandbox:
        assert sandbox.info is not None
        backend = FakeBackend()
        run = BenchmarkRun(
            operation=KnownDelay(backend, clock, delays),
            sandbox=sandbox.info,
            workdir=sandbox.root / "bench",
            plan=RoundPlan(100),
            clock=clock,
        )
        run.run_all()
        bench = run.finish(backend.describe())
    assert delays == bench.rounds.wall_ns
    assert 50.5 == pytest.approx(bench.median_ms)
    assert 99.01 == pytest.approx(bench.quantile_ms(0.99))  # type 7 between 99 and 100
    assert 5.050 == pytest.approx(bench.metric("wall").total)
    header, (row,) = table_rows([bench])
    cells = dict(zip(header, row, strict=True))
    assert ("50.5", "99.0") == (cells["median ms"], cells["p99 ms"])


def test_when_every_round_of_the_first_batch_fails_the_rest_are_not_run(tmp_path: Path) -> None:
    with sandbox_for(f"dir:{tmp_path}", tmp_path) as sandbox:
        bench = run_known(sandbox, rounds=200, fail_rounds=frozenset(range(200)))
    assert VERIFY_BATCH == bench.repos == bench.errors and 200 == bench.rounds_asked
    assert bench.diagnosis.startswith(
        f"every one of the first {VERIFY_BATCH} rounds failed, so the other "
        f"{200 - VERIFY_BATCH} were not run; first: RuntimeError: planted failure"
    )


def test_one_failure_in_the_first_batch_does_not_stop_the_rounds(tmp_path: Path) -> None:
    with sandbox_for(f"dir:{tmp_path}", tmp_path) as sandbox:
        bench = run_known(sandbox, rounds=100, fail_rounds=frozenset(range(VERIFY_BATCH - 1)))
    assert 100 == bench.repos and VERIFY_BATCH - 1 == bench.errors and not bench.diagnosis


class Counted(KnownWrite):
    """Known work that also says whether Python's collector was on during the call."""

    def __init__(self, backend: FakeBackend) -> None:
        super().__init__(backend)
        self.gc_seen: list[bool] = []

    def run(self, paths: RoundPaths) -> None:
        self.gc_seen.append(gc.isenabled())
        super().run(paths)


def test_warmup_rounds_run_verified_and_are_not_samples(tmp_path: Path) -> None:
    with sandbox_for(f"dir:{tmp_path}", tmp_path) as sandbox:
        assert sandbox.info is not None
        backend = FakeBackend()
        operation = Counted(backend)
        run = BenchmarkRun(operation, sandbox.info, sandbox.root / "b", RoundPlan(3, warmup=2))
        run.run_all()
        bench = run.finish(backend.describe())
        assert 2 == len(list((sandbox.root / "b" / "warmup" / "repos").iterdir()))
    assert 5 == operation.calls and 3 == bench.repos == len(bench.samples_s)
    # Only the measured rounds' repositories are the footprint.
    assert FILES * FILE_BYTES == bench.per_repo("footprint_content")


def test_a_failing_warmup_round_is_the_benchmarks_error(tmp_path: Path) -> None:
    with sandbox_for(f"dir:{tmp_path}", tmp_path) as sandbox:
        assert sandbox.info is not None
        backend = FakeBackend({"corrupt": "true"})
        run = BenchmarkRun(
            KnownWrite(backend), sandbox.info, sandbox.root / "b", RoundPlan(3, warmup=1)
        )
        with pytest.raises(VcsbenchError, match=r"^warmup round 1 of 1 failed: d0/f00.bin"):
            run.run_all()


def test_the_collector_is_off_only_in_the_timed_region_when_asked(tmp_path: Path) -> None:
    seen = {}
    for gc_off in (False, True):
        with sandbox_for(f"dir:{tmp_path}", tmp_path) as sandbox:
            assert sandbox.info is not None
            operation = Counted(FakeBackend())
            run = BenchmarkRun(
                operation, sandbox.info, sandbox.root / "b", RoundPlan(3, gc_off=gc_off)
            )
            run.run_all()
            run.finish(operation.backend.describe())
            assert gc.isenabled()
            seen[gc_off] = operation.gc_seen
    assert [True] * 3 == seen[False] and [False] * 3 == seen[True]


class Repack(KnownWrite):
    """Starts from FILES files it writes in prepare (untimed) and removes half of them in
    the timed call: the footprint after is half, the change minus half."""

    def prepare(self, paths: RoundPaths) -> None:
        self.backend.create(paths.repo)
        for rel, data in self.payload.files.items():
            target = paths.repo / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)

    def run(self, paths: RoundPaths) -> None:
        for rel in sorted(self.payload.files)[: FILES // 2]:
            (paths.repo / rel).unlink()

    def expected(self) -> dict[str, bytes]:
        return dict(sorted(self.payload.files.items())[FILES // 2 :])


def test_the_footprint_change_is_after_minus_before_the_round(root: None, tmp_path: Path) -> None:
    with sandbox_for("tmpfs", tmp_path) as sandbox:
        assert sandbox.info is not None
        backend = FakeBackend()
        run = BenchmarkRun(Repack(backend), sandbox.info, sandbox.root / "b", RoundPlan(4))
        run.run_all()
        bench = run.finish(backend.describe())
    assert 0 == bench.errors
    # tmpfs allocates whole pages: FILE_BYTES is two of them, exactly.
    assert FILES // 2 * FILE_BYTES == bench.per_repo("footprint_content")
    assert -(FILES // 2) * FILE_BYTES == bench.per_repo("footprint_change")
