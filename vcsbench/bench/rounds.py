"""One benchmark: N rounds of one operation, each measured, verified and recorded.

vcsbench owns the round loop and the one clock: ``perf_counter_ns`` around the
operation's ``run`` alone. Everything else -- preparing, dropping caches, reading the
counters, syncing, verifying -- sits outside that region. A round that raises or fails
verification is an error and never a sample.

The parts are apart so each can be tested with a fake operation that does known work:
the loop (:mod:`vcsbench.bench.loop`) drives the rounds and records them (``RoundLog``);
:class:`BenchmarkRun` places them (this process, or workers: :mod:`vcsbench.bench.placement`)
and computes footprint and scratch attribution, the floor and the metrics in ``finish``
from what was recorded (:mod:`vcsbench.bench.harness`).
"""

from __future__ import annotations

import contextlib
import cProfile
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from vcsbench.bench import canary, harness
from vcsbench.bench.counted import count_rounds
from vcsbench.bench.figures import benchmark_metrics, filesystem_info
from vcsbench.bench.loop import RoundLoop, RoundsEnd
from vcsbench.bench.maintained import as_kept
from vcsbench.bench.placement import Placement
from vcsbench.bench.trouble import SandboxFailed, describe
from vcsbench.bench.workers import WorkerEnd
from vcsbench.errors import VcsbenchError
from vcsbench.measure import writers
from vcsbench.measure.footprint import Footprint
from vcsbench.measure.probes import (
    current_rss_bytes,
    peak_rss_bytes,
    peak_rss_reset,
    read_device,
)
from vcsbench.measure.sampler import SAMPLE_UNITS
from vcsbench.results.counted import Counted
from vcsbench.results.environment import BackendInfo, PayloadInfo
from vcsbench.results.model import (
    Benchmark,
)
from vcsbench.results.writers import Writers
from vcsbench.workload.contained import close_own_group
from vcsbench.workload.operation import RoundPaths


@dataclass
class BenchmarkRun(RoundLoop):
    """One benchmark: its rounds (:class:`~vcsbench.bench.loop.RoundLoop`) in this process or in
    workers, the sandbox filled first, the warm-up, and the result."""

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

    @property
    def worker_ends(self) -> list[WorkerEnd]:
        """How each worker process ended (its RSS; the rounds as it left them)."""
        return self._placement.ends if self._placement is not None else []

    def stop_workers(self) -> None:
        if self._placement is not None:
            self._placement.stop()

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
                send(WorkerEnd(0, 0, describe(exc)))
        finally:
            with contextlib.suppress(BaseException):  # what it made itself: no exit handlers
                close_own_group()
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
        """The next ``count`` rounds in a worker process (:mod:`vcsbench.bench.placement`),
        which sends each round's record as it finishes: memory the backend's library keeps
        across calls goes with it. The worker is the measured process: /proc/self/io and
        getrusage are its own, so every counter stays per round and exact. Workers are
        forked by a spawner forked before the first round, so none of them carries the
        records of the rounds before it: a worker's memory is the same at round 100,000
        as at round 1."""
        first = len(self.log)
        if self._placement is None:
            self._placement = Placement(
                self._worker_rounds,
                self.environment,
                self._worker_spec,
                recycle=self.plan.recycle if 0 < self.plan.recycle < self.rounds else 0,
                lend=self.operation.backend.lend_helpers,
            )
        warmup = self.plan.warmup if first == 0 else 0
        for record in self._placement.rounds(first, count, self.rounds, warmup):
            self._accept(record)
        end = self._placement.ends[-1]
        self.described = self._placement.described or self.described
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
                problems = [describe(exc)]
            if problems:
                raise VcsbenchError(
                    f"{kind} round {index + 1} of {count} failed: " + "; ".join(problems[:3])
                )

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
                sync_reason=self.probe.calls.reason,
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
                log.canary_ns.tolist(), log.canary_writes_ns.tolist(), self.canary.every
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
                processes=self._placement.processes if self._placement is not None else 0,
                environment=self.environment,
                kept=kept,
            ),
            sampler={
                "interval_s": self._sampler.interval_s,
                "units": SAMPLE_UNITS,
                "samples": samples,
            },
            writers=found,
            counted=self.counted,
        )

    def _close_rounds(self) -> RoundsEnd:
        """Once, as the last round ends (before any maintenance, which is no part of the
        benchmark): its wall time, the sampler's samples, who wrote, the memory."""
        if self._closed is None:
            wall_s = time.perf_counter() - self._t0 if self._started else 0.0
            samples = self._sampler.stop() if self._started else []
            found = self._writers()
            self.probe.close()
            rss_peak, rss_growth = peak_rss_bytes(), current_rss_bytes() - self._rss_start
            ends = self.worker_ends
            if ends:  # the measured processes were the workers
                rss_peak = max(w.peak_rss for w in ends)
                rss_growth = max(w.rss_growth for w in ends)
            self._closed = (wall_s, samples, found, rss_peak, rss_growth)
        return self._closed

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

    def _writers(self) -> Writers | None:
        """Who wrote to the sandbox's device from the first round to now (the rounds, and
        the preparation, verification and canaries around them)."""
        stat_path = self.sandbox.device_stat_path
        if self._writers_before is None or not stat_path:
            return None
        snap, written = self._writers_before
        written = read_device(stat_path).write_bytes - written
        return Writers.from_json(writers.since(snap, written, stat_path), "writers")

    def _measured(self, index: int) -> list[Path]:
        return self.operation.measured(self.paths(index))
