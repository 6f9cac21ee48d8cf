"""One benchmark: N rounds of one operation, each measured, verified and recorded.

vcsbench owns the round loop and the one clock: ``perf_counter_ns`` around the
operation's ``run`` alone. Everything else -- preparing, dropping caches, reading the
counters, syncing, verifying -- sits outside that region. A round that raises or fails
verification is an error and never a sample.

The parts are apart so each can be tested with a fake operation that does known work:
:class:`BenchmarkRun` drives the rounds and records them (``RoundLog``); footprint and
scratch attribution, the floor (``floor``) and the metrics (``_metrics``) are computed
in ``finish`` from what was recorded.
"""

from __future__ import annotations

import contextlib
import cProfile
import errno
import gc
import math
import os
import statistics
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from vcsbench.bench import floor
from vcsbench.bench.figures import benchmark_metrics, filesystem_info, round_values
from vcsbench.bench.log import (
    VERIFY_BATCH,
    RoundLog,
    RoundRecord,
)
from vcsbench.bench.plan import RoundPlan, WorkerSpec
from vcsbench.bench.trouble import SandboxFailed, sandbox_trouble
from vcsbench.bench.workers import EnvironmentSpawner, Spawner, WorkerEnd, WorkerExit
from vcsbench.errors import Refusal, VcsbenchError
from vcsbench.measure import writers
from vcsbench.measure.footprint import Footprint, footprint
from vcsbench.measure.probes import (
    Probe,
    Snapshot,
    current_rss_bytes,
    drop_caches,
    peak_rss_bytes,
    peak_rss_reset,
    read_device,
)
from vcsbench.measure.sampler import SAMPLE_UNITS, SystemSampler
from vcsbench.process import signals_held
from vcsbench.results.environment import BackendInfo, PayloadInfo
from vcsbench.results.model import (
    Benchmark,
)
from vcsbench.results.writers import Writers
from vcsbench.sandbox import SandboxInfo
from vcsbench.servers.apache import give_tree
from vcsbench.workload.operation import Operation, RoundPaths

Progress = Callable[..., None]
"""Called after each round with (rounds done, rounds in all, seconds since start), and
while an aged sandbox is filled with the same and ``unit="repositories filled in"``."""


def wait(ns: int) -> None:
    """Busy-wait ``ns`` nanoseconds: a sleep would wake late by the scheduler's slack, a
    spin ends on time."""
    end = time.perf_counter_ns() + ns
    while time.perf_counter_ns() < end:
        pass


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().replace("\n", " ")
    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    origin = f" [{Path(where.filename).name}:{where.lineno}]" if where else ""
    return f"{type(exc).__name__}: {text}{origin}"


@dataclass
class BenchmarkRun:
    """Drives and records the rounds of one (backend, op, payload, sandbox) benchmark."""

    operation: Operation
    sandbox: SandboxInfo
    workdir: Path
    plan: RoundPlan
    progress: Progress | None = None
    name: str = ""
    clock: Callable[[], int] = time.perf_counter_ns
    """The one clock, read right before and right after the operation (nanoseconds); a
    test gives one that moves by known amounts."""
    owner: tuple[int, int] | None = None
    """Whose each round's repository is made once it is prepared (uid, gid): the user a
    remote variant's server writes as (Apache's)."""
    environment: Path | None = None
    """The interpreter of a worker process every round runs in (a ``version=`` variant's
    environment, or this one for a member of an interleaved group):
    :class:`~vcsbench.bench.workers.EnvironmentSpawner`."""
    worker: WorkerSpec | None = None
    """What that worker makes."""
    attach: bool = False
    """The workdir exists already (in an environment's worker: the benchmark's own)."""

    def __post_init__(self) -> None:
        if self.sandbox.throttle is not None:  # the seed is built off the throttled device
            self.operation.seeds_unthrottled = True
        self.rounds = self.plan.rounds
        """The rounds to run: the plan's, lowered by a time budget as it goes."""
        st = os.statvfs(self.workdir.parent)
        free_inodes = st.f_favail
        # btrfs (and others with dynamic inodes) report no inode table: nothing to check.
        wanted = self.rounds + self.plan.age
        if st.f_files and wanted > free_inodes:
            age = self.plan.age
            asked = f"--repos {self.rounds:,}" + (f" and --age {age:,}" if age else "")
            raise Refusal(
                f"{asked} cannot fit in the {self.sandbox.spec} sandbox: it has "
                f"{free_inodes:,} free inodes and every repository takes at least one; use "
                "fewer repositories or a larger sandbox (size=..., mkfs=-N ...)"
            )
        if not self.attach:
            self.workdir.mkdir(parents=True, exist_ok=False)
            for container in ("repos", "checkouts", "scratch"):
                (self.workdir / container).mkdir()
        self.probe = Probe(self.workdir, self.sandbox.device_stat_path)
        self.log = RoundLog()
        self._sampler = SystemSampler(self.sandbox.device_stat_path)
        self._floor_tree: dict[str, floor.TreeEntry] = {}
        self._started = False
        self.diagnosis = ""
        """What the failures have in common when it is known (the sandbox filled up)."""
        self._overhead_ns = 0
        self._rss_start = 0
        self._t0 = 0.0
        self.age_info: dict[str, object] = {}
        self._workers: list[WorkerEnd] = []
        self._spawner: Spawner | EnvironmentSpawner | None = None
        self.described: dict[str, object] | None = None
        """The backend as the environment's worker described it (its library's versions)."""
        self.stopped = False
        """The sandbox failed every round of a batch: no more rounds are to be run."""
        self._env_processes = 0
        self._writers_before: tuple[writers.Snapshot, int] | None = None

    def paths(self, index: int) -> RoundPaths:
        """Round ``index``'s paths: after the ``age`` repositories filled in first."""
        return RoundPaths.of(self.workdir, self.plan.age + index, self.plan.layout)

    # -- the rounds ---------------------------------------------------------------------

    def run_all(self) -> None:
        try:
            self.run_to(self.rounds)
        finally:
            self.stop_workers()

    def run_to(self, target: int) -> None:
        """Run rounds until ``target`` of them are done (or the benchmark's rounds, if
        fewer): the whole benchmark, or its next block when variants are interleaved.
        A worker process of an environment stays for the next block."""
        if not self._started:
            self._start()
        try:
            while not self.stopped and len(self.log) < min(target, self.rounds):
                left = min(target, self.rounds) - len(self.log)
                recycled = 0 < self.plan.recycle < self.rounds
                if recycled or self.environment is not None:
                    self._run_worker(min(self.plan.recycle, left) if recycled else left)
                else:
                    for record in self._batches(len(self.log), left):
                        self._accept(record)
        except SandboxFailed:
            self.stopped = True  # the diagnosis says why; the rounds not run make it partial

    def stop_workers(self) -> None:
        if self._spawner is not None:
            self._spawner.stop()
            self._spawner = None

    def _batches(self, first: int, count: int) -> Iterator[RoundRecord]:
        """Rounds ``first`` .. ``first + count - 1``, verified in batches of
        ``VERIFY_BATCH``; each batch's records once it is verified. A time budget may end
        them sooner (it lowers ``rounds``)."""
        start = first
        while start < min(first + count, self.rounds):
            records = self._rounds(
                start, min(start + VERIFY_BATCH, first + count, self.rounds) - start
            )
            failed = all(r.error for r in records)
            if failed and start == 0 and len(records) < self.rounds:
                # Nothing works: the first error says why sooner than the other rounds would.
                records[-1].diagnosis = records[-1].diagnosis or (
                    f"every one of the first {len(records)} rounds failed, so the other "
                    f"{self.rounds - len(records):,} were not run; first: {records[0].error}"
                )
            yield from records
            if failed and any(r.diagnosis for r in records):
                raise SandboxFailed
            start += len(records)
            self._keep_to_budget(start)

    def _rounds(self, first: int, count: int) -> list[RoundRecord]:
        """Rounds ``first`` .. ``first + count - 1``, then their verification, together
        (never while a round is timed): a backend whose reader takes several
        repositories at once verifies them in parallel across cores."""
        done = []
        for index in range(first, first + count):
            paths = self.paths(index)
            done.append((index, paths, self._round(index, paths)))
        wanted = [
            (paths, record)
            for index, paths, record in done
            if record.error is None and self.plan.verify.verifies(index, self.rounds)
        ]
        if wanted:
            try:
                found = self.operation.verify_many([paths for paths, _ in wanted])
            except Exception as exc:  # the reader failed: those rounds are not verified
                found = [[f"the verifier failed: {_describe(exc)}"]] * len(wanted)
            for (_, record), problems in zip(wanted, found, strict=True):
                record.verified = True
                if problems:
                    more = f" (+{len(problems) - 3} more)" if len(problems) > 3 else ""
                    record.error = "verify: " + "; ".join(problems[:3]) + more
        for index, _, record in done:
            if record.error is not None and not self.diagnosis:
                record.diagnosis = sandbox_trouble(
                    self.workdir, self.sandbox.spec, index, record.error
                )
                if record.diagnosis:
                    break
        return [record for _, _, record in done]

    def _keep_to_budget(self, done: int) -> None:
        """With a time budget: the rounds that fit in it, projected from the ``done``
        rounds so far (at least one more while any are left, so the last round is still
        the floor's)."""
        if self.plan.budget_s is None or not done or done >= self.rounds:
            return
        per_round = (time.perf_counter() - self._t0) / done
        fit = math.ceil(self.plan.budget_s / per_round) if per_round > 0 else self.rounds
        self.rounds = min(self.rounds, max(fit, self.plan.min_rounds, done + 1))

    def _round(self, index: int, paths: RoundPaths, floor_round: bool | None = None) -> RoundRecord:
        """One round: prepare, time the operation alone, read counters (verified by
        :meth:`_rounds` afterwards). ``floor_round``: whether the floor is measured on it
        (default: on the benchmark's last round)."""
        error: str | None = None
        try:
            paths.scratch.mkdir()
            if self.plan.layout != "flat":  # the fan-out directories exist on a host already
                paths.repo.parent.mkdir(parents=True, exist_ok=True)
            self.operation.prepare(paths)
            if self.owner is not None:
                give_tree(paths.repo, self.owner)
        except Exception as exc:  # a sandbox that fails (read-only, full) fails the round
            error = f"prepare: {_describe(exc)}"
        if floor_round is None:
            floor_round = index == self.rounds - 1
        is_floor_round = floor_round and error is None
        roots = self.operation.measured(paths)
        floor_before = floor.snapshot(roots, self.workdir) if is_floor_round else {}
        try:  # what the round's paths held before it: the change is the footprint less this
            held = footprint(*roots, processes=1).allocated_bytes if error is None else 0
        except OSError as exc:
            held, error = 0, f"prepare: the footprint before the round: {_describe(exc)}"
        plan = self.plan
        if plan.cache == "cold":
            drop_caches()
        if plan.gc_off:
            gc.disable()
        before: Snapshot = self.probe.before()
        t_start_s = time.perf_counter()
        wall_ns = 0
        if error is None:
            start = self.clock()
            try:
                self.operation.run(paths)
                if plan.delay_ns:
                    wait(plan.delay_ns)
            except Exception as exc:
                error = _describe(exc)
            wall_ns = self.clock() - start
        if plan.gc_off:
            gc.enable()
        delta = Probe.delta(before, self.probe.after(), wall_ns)
        record = RoundRecord(t_start_s, wall_ns, round_values(delta), held_bytes=held)
        if is_floor_round and error is None:
            with contextlib.suppress(OSError):  # the floor is then missing, with its reason
                record.floor_tree = floor.changed(roots, self.workdir, floor_before)
        try:  # an empty scratch directory goes; one a backend wrote in stays, to be measured
            os.rmdir(paths.scratch)
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOENT) and error is None:
                error = f"scratch: {_describe(exc)}"
        record.error = error
        return record

    def _accept(self, record: RoundRecord) -> None:
        """Keep a finished round's record (from this process or a worker). The stop
        signals wait while it is written down: a round is in the log whole or not at all
        (an interrupted run keeps its log, and every per-round array the same length)."""
        with signals_held():
            self.log.add(record.t_start_s, record.wall_ns, record.values, record.error)
            self.log.held_bytes += record.held_bytes
            self.log.verified += record.verified
        if record.diagnosis and not self.diagnosis:
            self.diagnosis = record.diagnosis
        if record.floor_tree is not None:
            self._floor_tree = record.floor_tree
        if self.progress is not None:
            self.progress(len(self.log), self.rounds, time.perf_counter() - self._t0)

    def _worker_rounds(
        self, first: int, count: int, total: int, send: Callable[[object], None]
    ) -> None:
        """In a worker process: rounds ``first`` .. ``first + count - 1`` of ``total``, each
        record sent as it finishes, then its RSS; it never returns and never runs cleanup
        of others."""
        code = 1
        try:
            self.worker_block(first, count, total, send)
            code = 0
        except BaseException as exc:
            with contextlib.suppress(BaseException):
                send(WorkerEnd(0, 0, _describe(exc)))
        finally:
            os._exit(code)

    def worker_block(
        self, first: int, count: int, total: int, send: Callable[[object], None]
    ) -> None:
        """Rounds ``first`` .. ``first + count - 1`` of ``total`` in this (worker)
        process, each record sent as it finishes, then a :class:`WorkerEnd` with its RSS."""
        self.rounds = total
        peak_rss_reset()
        start_rss = current_rss_bytes()
        stopped = False
        try:
            for record in self._batches(first, count):
                send(record)
        except SandboxFailed:
            stopped = True
        send(
            WorkerEnd(
                peak_rss_bytes(),
                current_rss_bytes() - start_rss,
                stopped=stopped,
                rounds=self.rounds,
            )
        )

    def _run_worker(self, count: int) -> None:
        """The next ``count`` rounds in a worker process, which sends each round's record
        as it finishes and exits: memory the backend's library keeps across calls goes
        with it. The worker is the measured process: /proc/self/io and getrusage are its
        own, so every counter stays per round and exact. Workers are forked by a spawner
        forked before the first round, so none of them carries the records of the rounds
        before it: a worker's memory is the same at round 100,000 as at round 1."""
        first = len(self.log)
        if self._spawner is None:
            self._spawner = (
                Spawner(self._worker_rounds)
                if self.environment is None
                else EnvironmentSpawner(
                    self.environment,
                    self._worker_spec(),
                    persistent=not 0 < self.plan.recycle < self.rounds,
                )
            )
        spawner = self._spawner
        if isinstance(spawner, EnvironmentSpawner):
            warmup = self.plan.warmup if first == 0 else 0
            spawner.start_worker(first, count, self.rounds, warmup=warmup)
        else:
            spawner.start_worker(first, count, self.rounds)
        end: WorkerEnd | None = None
        exited = ""
        while True:  # on an exception, run_all stops the spawner and the worker with it
            message = spawner.receive()
            if isinstance(message, WorkerEnd):
                end = message
            elif isinstance(message, WorkerExit):
                exited = message.how
                break
            else:
                self._accept(message)
        if isinstance(spawner, EnvironmentSpawner):
            self.described = spawner.described or self.described
            self._env_processes = spawner.processes
        if end is None or end.failure:
            why = end.failure if end is not None else f"it {exited or 'exited'} without a word"
            raise VcsbenchError(f"the worker for rounds {first}-{first + count - 1} failed: {why}")
        self._workers.append(end)
        self.rounds = end.rounds  # as the worker's time budget left them
        if end.stopped:
            raise SandboxFailed

    def _worker_spec(self) -> dict[str, object]:
        """What an environment's worker needs to run this benchmark's rounds: what to make,
        the plan (its rounds as they stand), the sandbox, the workdir, the start time."""
        assert self.worker is not None
        return {
            "worker": replace(self.worker, owner=self.owner).to_json(),
            "plan": self.plan.with_rounds(self.rounds).to_json(),
            "sandbox": self.sandbox.as_dict(),
            "workdir": str(self.workdir),
            "t0": self._t0,
        }

    def started_at(self, t0: float) -> None:
        """In an environment's worker: the benchmark began at ``t0`` (perf_counter, one
        clock for every process here), for its time budget."""
        self._t0 = t0
        self._started = True

    def _start(self) -> None:
        if self.plan.age:
            from vcsbench.bench.age import fill

            self.age_info = fill(
                self.operation.backend,
                self.workdir,
                self.plan.age,
                self.plan.layout,
                self.progress,
                sandbox=self.sandbox.spec,
                population=self.plan.population,
            )
        if self.plan.warmup and self.environment is None:  # else its first worker runs them
            self.aside("warmup", self.plan.warmup)
        self._started = True
        self._overhead_ns = self.probe.overhead_ns(pairs=10)
        peak_rss_reset()
        self._rss_start = current_rss_bytes()
        self._sampler.start()
        stat_path = self.sandbox.device_stat_path
        if stat_path:
            self._writers_before = (writers.snapshot(), read_device(stat_path).write_bytes)
        self._t0 = time.perf_counter()

    def aside(self, kind: str, count: int, profile: cProfile.Profile | None = None) -> None:
        """``count`` rounds in ``workdir/kind`` that are not the benchmark's (warm-up
        rounds; one under ``profile``), untimed and each verified: one that fails is the
        benchmark's error."""
        base = self.workdir / kind
        for container in ("repos", "checkouts", "scratch"):
            (base / container).mkdir(parents=True)
        for index in range(count):
            paths = RoundPaths.of(base, index, self.plan.layout)
            try:
                paths.scratch.mkdir()
                paths.repo.parent.mkdir(parents=True, exist_ok=True)
                self.operation.prepare(paths)
                if profile is not None:
                    profile.enable()
                try:
                    self.operation.run(paths)
                finally:
                    if profile is not None:
                        profile.disable()
                problems = self.operation.verify_many([paths])[0]
            except Exception as exc:
                problems = [_describe(exc)]
            if problems:
                raise VcsbenchError(
                    f"{kind} round {index + 1} of {count} failed: " + "; ".join(problems[:3])
                )

    # -- after the last round -----------------------------------------------------------

    def finish(self, describe_backend: dict[str, object]) -> Benchmark:
        """Stop sampling; measure footprint, scratch and floor; return the benchmark."""
        wall_s = time.perf_counter() - self._t0 if self._started else 0.0
        samples = self._sampler.stop() if self._started else []
        found = self._writers()
        self.probe.close()
        rss_end = current_rss_bytes()
        rss_peak = peak_rss_bytes()
        rss_growth = rss_end - self._rss_start
        if self._workers:  # the measured processes were the workers
            rss_peak = max(w.peak_rss for w in self._workers)
            rss_growth = max(w.rss_growth for w in self._workers)
        # A harness failure here (a scan, the floor) costs the figure it was for, never
        # the timed, verified rounds: the figure is marked missing with the reason.
        result: Footprint | str
        scratch: Footprint | str
        scan_start = time.perf_counter()
        try:
            if self.plan.age or self.operation.footprint_by_round:
                # the rounds' own paths: not the repositories filled in before; the
                # paths a user's benchmark names, wherever they are
                measured = [p for i in range(len(self.log)) for p in self._measured(i)]
                result = footprint(*measured)
            else:
                containers = (self.workdir / c for c in self.operation.containers)
                result = footprint(*containers, roots=False)
        except OSError as exc:
            result = f"the footprint scan failed: {_describe(exc)}"
        try:
            scratch = footprint(self.workdir / "scratch", roots=False)
        except OSError as exc:
            scratch = f"the scratch scan failed: {_describe(exc)}"
        footprint_s = time.perf_counter() - scan_start
        log = self.log
        ok_walls = log.ok_wall_s()
        median_ms = statistics.median(ok_walls) * 1000 if ok_walls else None
        try:
            floor_figures = floor.measure(self._floor_tree, self.workdir, median_ms)
        except OSError as exc:
            floor_figures = {
                "ms_per_repo": None,
                "ratio": None,
                "reason": f"the floor could not be measured: {_describe(exc)}",
            }
        n_rounds = len(log)
        replay = self._replay_info()
        if self.described is not None:  # the worker's library, under the caller's name
            describe_backend = {**self.described, "variant": describe_backend["variant"]}
        return Benchmark(
            name=self.name,
            backend=BackendInfo.from_json(describe_backend, "backend"),
            op=self.operation.label,
            payload=PayloadInfo.from_json(self.operation.payload.describe(), "payload"),
            filesystem=filesystem_info(self.sandbox),
            repos=n_rounds,
            rounds_asked=self.rounds,
            age=self.plan.age,
            layout=self.plan.layout,
            errors=log.error_count,
            verified=log.verified,
            metrics=benchmark_metrics(
                self.log, self.sandbox, result, scratch, rss_peak, rss_growth
            ),
            rounds=log.to_rounds(),
            cache=self.plan.cache,
            cache_note="cold is meaningless on tmpfs: its page cache is the storage"
            if self.plan.cache == "cold" and self.sandbox.fstype == "tmpfs"
            else "",
            verify=str(self.plan.verify),
            error_samples=list(log.errors),
            error_kinds=dict(log.error_kinds),
            diagnosis=self.diagnosis,
            floor=floor_figures,
            harness={
                "probe_overhead_us_per_round": self._overhead_ns / 1000 if self._started else None,
                "benchmark_wall_s": wall_s,
                "ops_wall_s": log.ops_wall_ns / 1e9,
                "footprint_s": footprint_s,
                "harness_s_per_round": (wall_s - log.ops_wall_ns / 1e9) / n_rounds
                if n_rounds
                else None,
                "sampler": "a separate process (python -m vcsbench.measure.sampler)",
                **({"age": self.age_info} if self.age_info else {}),
                **({"replay": replay} if replay else {}),
                "workers": {
                    "rounds_per_worker": self.plan.recycle if self._workers else None,
                    "workers": self._env_processes or len(self._workers),
                    "note": (
                        "each worker a process of the variant's environment "
                        f"({self.environment}) that ran its rounds and exited"
                        if self.environment is not None
                        else "each worker a forked process that ran its rounds and exited"
                    )
                    + "; rss_peak and rss_growth are the largest of the workers'"
                    if self._workers
                    else "every round in the benchmark's own process",
                },
                "note": "harness = prepare, probes, syncfs and verification around the timed "
                "operations; none of it is inside a timed region",
            },
            sampler={
                "interval_s": self._sampler.interval_s,
                "units": SAMPLE_UNITS,
                "samples": samples,
            },
            writers=found,
        )

    def _replay_info(self) -> dict[str, float] | None:
        """A history payload's replay into the seed: commits, seconds, commits/s."""
        seed_info = getattr(self.operation, "seed_info", None)
        return seed_info(self.paths(0).seeds) if seed_info is not None else None

    def _writers(self) -> Writers | None:
        """Who wrote to the sandbox's device from the first round to now (the rounds, and
        the preparation and verification around them)."""
        stat_path = self.sandbox.device_stat_path
        if self._writers_before is None or not stat_path:
            return None
        snap, written = self._writers_before
        written = read_device(stat_path).write_bytes - written
        return Writers.from_json(writers.since(snap, written, stat_path), "writers")

    def _measured(self, index: int) -> list[Path]:
        return self.operation.measured(self.paths(index))
