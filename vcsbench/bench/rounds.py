"""One benchmark: N rounds of one operation, each measured, verified and recorded.

vcsbench owns the round loop and the one clock: ``perf_counter_ns`` around the
operation's ``run`` alone. Everything else -- preparing, dropping caches, reading the
counters, syncing, verifying -- sits outside that region. A round that raises or fails
verification is an error and never a sample.

The parts are apart so each can be tested with a fake operation that does known work:
a :class:`BenchmarkRun` *has* a round loop (:mod:`vcsbench.bench.loop`), which makes each
round's record, and a placement (:mod:`vcsbench.bench.placement`: this process, or
workers), which runs the loop where it was chosen to; the run keeps the records
(``RoundLog``), and computes footprint and scratch attribution, the floor and the
metrics in ``finish`` from them (:mod:`vcsbench.bench.harness`).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from vcsbench.bench import canary, floor, harness
from vcsbench.bench.counted import count_rounds
from vcsbench.bench.figures import benchmark_metrics
from vcsbench.bench.harness import Beside
from vcsbench.bench.log import RoundLog, RoundRecord
from vcsbench.bench.loop import RoundLoop
from vcsbench.bench.maintained import AsKept, as_kept
from vcsbench.bench.placement import placement_for
from vcsbench.bench.plan import RoundPlan, WorkerSpec
from vcsbench.bench.trouble import SandboxFailed
from vcsbench.bench.watch import RoundsEnd, Watch
from vcsbench.bench.workers import WorkerEnd
from vcsbench.measure.footprint import Footprint
from vcsbench.measure.machine import filesystem_info
from vcsbench.measure.sampler import SAMPLE_UNITS
from vcsbench.process import signals_held
from vcsbench.results.counted import Counted
from vcsbench.results.environment import BackendInfo, PayloadInfo
from vcsbench.results.model import Benchmark
from vcsbench.sandbox import SandboxInfo
from vcsbench.workload.operation import Operation, RoundPaths

Progress = Callable[..., None]
"""Called after each round with (rounds done, rounds in all, seconds since start), and
while an aged sandbox is filled with the same and ``unit="repositories filled in"``."""


class BenchmarkRun:
    """One benchmark: its round loop, placed in this process or in workers; the sandbox
    filled first, the warm-up, the records kept, and the result."""

    def __init__(
        self,
        operation: Operation,
        sandbox: SandboxInfo,
        workdir: Path,
        plan: RoundPlan,
        progress: Progress | None = None,
        name: str = "",
        clock: Callable[[], int] = time.perf_counter_ns,
        owner: tuple[int, int] | None = None,
        environment: Path | None = None,
        worker: WorkerSpec | None = None,
        counting: tuple[Path, WorkerSpec] | str = "no counted rounds were asked (--counted 0)",
    ) -> None:
        """``clock``: the one clock (a test gives one that moves by known amounts);
        ``owner``: whose each round's repository is made once prepared (uid, gid: a remote
        variant's server's user); ``environment``: the interpreter of a worker process
        every round runs in (a ``version=`` variant's environment, or this one for a member
        of an interleaved group), making ``worker``; ``counting``: how its counted rounds
        are made (``--counted``: the interpreter and what its process makes), or why they
        cannot be."""
        self.loop = RoundLoop(operation, sandbox, workdir, plan, clock, owner)
        self.progress = progress
        self.name = name
        self.environment = environment
        self.worker = worker
        self.counting = counting
        self.placement = placement_for(
            self.loop, environment, self._worker_spec, lambda: operation.backend.lend_helpers()
        )
        self.log = RoundLog()
        self.watch = Watch(sandbox)
        """The rounds read as a whole: wall time, samples, writers, memory."""
        self._floor_tree: dict[str, floor.TreeEntry] = {}
        self._started = False
        self.diagnosis = ""
        """What the failures have in common when it is known (the sandbox filled up)."""
        self._overhead_ns = 0
        self.age_info: dict[str, object] = {}
        self.described: dict[str, object] | None = None
        """The backend as the environment's worker described it (its library's versions)."""
        self.kept: AsKept | str = (
            "not kept (--kept none)" if plan.kept.off else "not kept: the run was stopped first"
        )
        """The footprint as a server keeps the repositories, once :meth:`maintain` ran."""
        self._scanned: tuple[Footprint | str, Footprint | str, float] | None = None
        """The footprint as written, scanned before that maintenance."""
        self.stopped = False
        """The sandbox failed every round of a batch: no more rounds are to be run."""
        self.counted: Counted | None = None
        """Its counted rounds, once :meth:`count` ran."""
        self.beside = Beside()
        """What was made before its rounds and is recorded beside them."""

    # -- what the loop holds ------------------------------------------------------------

    @property
    def operation(self) -> Operation:
        return self.loop.operation

    @property
    def sandbox(self) -> SandboxInfo:
        return self.loop.sandbox

    @property
    def workdir(self) -> Path:
        return self.loop.workdir

    @property
    def plan(self) -> RoundPlan:
        return self.loop.plan

    @property
    def owner(self) -> tuple[int, int] | None:
        return self.loop.owner

    @owner.setter
    def owner(self, value: tuple[int, int] | None) -> None:
        self.loop.owner = value

    @property
    def rounds(self) -> int:
        """The rounds to run: the plan's, lowered by a time budget as it goes."""
        return self.loop.rounds

    def paths(self, index: int) -> RoundPaths:
        return self.loop.paths(index)

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
        placement = self.placement
        try:
            while not self.stopped and len(self.log) < min(target, self.rounds):
                first = len(self.log)
                left = min(target, self.rounds) - first
                count = min(placement.block, left) if placement.block else left
                warmup = self.plan.warmup if first == 0 else 0
                try:
                    for record in placement.rounds(first, count, self.rounds, warmup):
                        self._accept(record)
                finally:
                    self.described = placement.described or self.described
                    self.loop.rounds = placement.total()
        except SandboxFailed:
            self.stopped = True  # the diagnosis says why; the rounds not run make it partial

    @property
    def worker_ends(self) -> list[WorkerEnd]:
        """How each worker process ended (its RSS; the rounds as it left them)."""
        return self.placement.ends

    def stop_workers(self) -> None:
        self.placement.stop()

    def abandon(self) -> None:
        """Whatever ended the benchmark before its result: its workers and its sampler
        stopped (no-ops after a result)."""
        self.stop_workers()
        self.watch.abandon()

    def _worker_spec(self) -> dict[str, object]:
        """What an environment's worker needs to run this benchmark's rounds: what to make,
        the plan (its rounds as they stand), the sandbox, the workdir, the start time."""
        assert self.worker is not None
        return {
            "worker": replace(self.worker, owner=self.owner).to_json(),
            "plan": self.plan.with_rounds(self.rounds).to_json(),
            "sandbox": self.sandbox.as_dict(),
            "workdir": str(self.workdir),
            "t0": self.loop.t0,
        }

    def _accept(self, record: RoundRecord) -> None:
        """Keep a finished round's record (from this process or a worker). The stop
        signals wait while it is written down: a round is in the log whole or not at all
        (an interrupted run keeps its log, and every per-round array the same length)."""
        with signals_held():
            self.log.add(record.t_start_s, record.wall_ns, record.values, record.error)
            self.log.held_bytes += record.held_bytes
            if record.canary_ns is not None:
                self.log.canary_ns.append(record.canary_ns[0])
                self.log.canary_writes_ns.append(record.canary_ns[1])
            self.log.verified += record.verified
        if record.diagnosis and not self.diagnosis:
            self.diagnosis = record.diagnosis
        if record.floor_tree is not None:
            self._floor_tree = record.floor_tree
        if self.progress is not None:
            self.progress(len(self.log), self.rounds, time.perf_counter() - self.loop.t0)

    def _start(self) -> None:
        if self.plan.age:
            from vcsbench.workload.age import fill

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
            self.loop.aside("warmup", self.plan.warmup)
        self._started = True
        self._overhead_ns = self.loop.probe.overhead_ns(pairs=10)
        self.loop.t0 = self.watch.start()

    # -- after the last round -----------------------------------------------------------

    def finish(self, describe_backend: dict[str, object]) -> Benchmark:
        """Stop sampling; measure footprint, scratch and floor; return the benchmark."""
        wall_s, samples, found, rss_peak, rss_growth = self._close_rounds()
        ends = self.worker_ends
        log = self.log
        result, scratch, footprint_s = self._scanned or self._scan()
        kept = self.kept
        ok_walls = log.ok_wall_s()
        median_ms = statistics.median(ok_walls) * 1000 if ok_walls else None
        if self.described is not None:  # the worker's library, under the caller's name
            describe_backend = {**self.described, "variant": describe_backend["variant"]}
        return Benchmark(
            name=self.name,
            backend=BackendInfo.from_json(describe_backend, "backend"),
            op=self.operation.label,
            payload=PayloadInfo.from_json(self.operation.payload.describe(), "payload"),
            filesystem=filesystem_info(self.sandbox),
            repos=len(log),
            rounds_asked=self.rounds,
            age=self.plan.age,
            layout=self.plan.layout,
            errors=log.error_count,
            verified=log.verified,
            metrics=benchmark_metrics(
                log,
                self.sandbox,
                result,
                scratch,
                rss_peak,
                rss_growth,
                kept,
                sync_reason=self.loop.probe.calls.reason,
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
            canary=canary.summary(
                log.canary_ns.tolist(), log.canary_writes_ns.tolist(), self.loop.canary.every
            ),
            floor=harness.floor_of(self._floor_tree, self.workdir, median_ms),
            harness=harness.record(
                started=self._started,
                overhead_ns=self._overhead_ns,
                wall_s=wall_s,
                ops_wall_ns=log.ops_wall_ns,
                footprint_s=footprint_s,
                rounds=len(log),
                age_info=self.age_info,
                replay=self._replay_info(),
                recycle=self.plan.recycle,
                ends=ends,
                processes=self.placement.processes,
                environment=self.environment,
                kept=kept,
                beside=self.beside,
            ),
            sampler={
                "interval_s": self.watch.sampler.interval_s,
                "units": SAMPLE_UNITS,
                "samples": samples,
            },
            writers=found,
            counted=self.counted,
        )

    def _close_rounds(self) -> RoundsEnd:
        """Once, as the last round ends (before any maintenance, which is no part of the
        benchmark): what the watch read over the rounds; the loop's probes closed."""
        self.loop.probe.close()
        return self.watch.close(self.loop.t0, self.worker_ends)

    def _scan(self) -> tuple[Footprint | str, Footprint | str, float]:
        """The footprint as the rounds wrote it, and the scratch's."""
        by_round = self.plan.age or self.operation.footprint_by_round
        return harness.scans(
            [p for i in range(len(self.log)) for p in self._measured(i)] if by_round else None,
            (self.workdir / c for c in self.operation.containers),
            self.workdir / "scratch",
        )

    def maintain(self) -> None:
        """After the last round, before :meth:`finish`, untimed: the chosen repositories
        through their VCS's own maintenance (``--kept``), for the footprint as kept. A
        stop signal may land here: the figure is then missing, and the rounds kept."""
        policy = self.plan.kept
        if policy.off:
            return
        self._close_rounds()
        self._scanned = self._scan()  # as written: before any maintenance
        succeeded = [i for i, ok in enumerate(self.log.ok) if ok]
        chosen = policy.chosen(succeeded)
        self.kept = as_kept(
            self.operation, [self.paths(i) for i in chosen], len(succeeded), self.progress
        )

    def count(self) -> None:
        """After the last round, before any maintenance, outside the timed rounds and the
        benchmark's sampling: its counted rounds (``--counted``), each counted whole
        (:mod:`vcsbench.bench.counted`). A stop signal may land here: they are then
        missing, and the timed rounds kept."""
        asked = self.plan.counted
        if not asked or self.counted is not None or not self.log.ok_wall_s():
            return
        self._close_rounds()
        if isinstance(self.counting, str):
            self.counted = Counted(ok=[], missing={"instructions": self.counting})
            return
        python, spec = self.counting
        self.counted = count_rounds(
            python,
            replace(spec, owner=self.owner, cpu=None),
            self.workdir / "counted",
            asked,
            self.plan.layout,
            self.plan.planted,
            statistics.median(self.log.ok_wall_s()),
            self.plan.counted_instructions,
        )

    def _replay_info(self) -> dict[str, float] | None:
        """A history payload's replay into the seed: commits, seconds, commits/s."""
        seed_info = getattr(self.operation, "seed_info", None)
        return seed_info(self.paths(0).seeds) if seed_info is not None else None

    def _measured(self, index: int) -> list[Path]:
        return self.operation.measured(self.paths(index))
