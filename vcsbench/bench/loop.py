"""The round loop: each round prepared, its operation alone timed by the one clock
(``perf_counter_ns``), its counters read, its record made; rounds verified in batches,
never while one is timed. A round that raises or fails verification is an error and
never a sample. :class:`RoundLoop` runs in whichever process the rounds are placed in
(:mod:`vcsbench.bench.placement`): the benchmark's own, a forked worker, a worker of
another interpreter; the benchmark around it (:class:`~vcsbench.bench.rounds.BenchmarkRun`)
keeps the records, fills the sandbox first and makes the result."""

from __future__ import annotations

import contextlib
import cProfile
import errno
import gc
import math
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from vcsbench.bench import floor
from vcsbench.bench.canary import CanaryTimer
from vcsbench.bench.figures import round_values
from vcsbench.bench.log import VERIFY_BATCH, RoundRecord
from vcsbench.bench.plan import RoundPlan
from vcsbench.bench.trouble import SandboxFailed, describe, sandbox_trouble
from vcsbench.bench.workers import WorkerEnd
from vcsbench.errors import Refusal, VcsbenchError
from vcsbench.measure import instructions
from vcsbench.measure.footprint import footprint
from vcsbench.measure.instructions import Counter
from vcsbench.measure.probes import (
    Probe,
    Snapshot,
    current_rss_bytes,
    drop_caches,
    peak_rss_bytes,
    peak_rss_reset,
)
from vcsbench.sandbox import SandboxInfo
from vcsbench.servers.apache import give_tree
from vcsbench.workload.operation import Operation, RoundPaths


def wait(ns: int) -> None:
    """Busy-wait ``ns`` nanoseconds: a sleep would wake late by the scheduler's slack, a
    spin ends on time."""
    end = time.perf_counter_ns() + ns
    while time.perf_counter_ns() < end:
        pass


@dataclass
class RoundLoop:
    """The rounds of one (backend, op, payload, sandbox) benchmark, each made into a record,
    in the process they are placed in."""

    operation: Operation
    sandbox: SandboxInfo
    workdir: Path
    plan: RoundPlan
    clock: Callable[[], int] = time.perf_counter_ns
    """The one clock, read right before and right after the operation (nanoseconds); a
    test gives one that moves by known amounts."""
    owner: tuple[int, int] | None = None
    """Whose each round's repository is made once it is prepared (uid, gid): the user a
    remote variant's server writes as (Apache's)."""
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
        self.canary = CanaryTimer(self.workdir / "canary", self.plan.rounds)
        self.diagnosis = ""
        """What the failures have in common, once a round found it (the sandbox filled
        up): the rounds after it are not diagnosed again."""
        self.t0 = 0.0
        """When the benchmark began (perf_counter, one clock for every process here), for
        its time budget."""
        self._spinner = Counter(instructions.library()) if self.plan.planted.work else None
        """The counter's library, for planted work (``work=``): its loop of known length."""

    def paths(self, index: int) -> RoundPaths:
        """Round ``index``'s paths: after the ``age`` repositories filled in first."""
        return RoundPaths.of(self.workdir, self.plan.age + index, self.plan.layout)

    # -- the rounds ---------------------------------------------------------------------

    def batches(self, first: int, count: int) -> Iterator[RoundRecord]:
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
                found = [[f"the verifier failed: {describe(exc)}"]] * len(wanted)
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
                    self.diagnosis = record.diagnosis
                    break
        return [record for _, _, record in done]

    def _keep_to_budget(self, done: int) -> None:
        """With a time budget: the rounds that fit in it, projected from the ``done``
        rounds so far (at least one more while any are left, so the last round is still
        the floor's)."""
        if self.plan.budget_s is None or not done or done >= self.rounds:
            return
        per_round = (time.perf_counter() - self.t0) / done
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
            error = f"prepare: {describe(exc)}"
        if floor_round is None:
            floor_round = index == self.rounds - 1
        is_floor_round = floor_round and error is None
        roots = self.operation.measured(paths)
        floor_before = floor.snapshot(roots, self.workdir) if is_floor_round else floor.NOTHING
        try:  # what the round's paths held before it: the change is the footprint less this
            held = footprint(*roots, processes=1).allocated_bytes if error is None else 0
        except OSError as exc:
            held, error = 0, f"prepare: the footprint before the round: {describe(exc)}"
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
                if plan.planted:
                    plan.planted.run(paths, self._spinner)
            except Exception as exc:
                error = describe(exc)
            wall_ns = self.clock() - start
        if plan.gc_off:
            gc.enable()
        delta = Probe.delta(before, self.probe.after(), wall_ns)
        record = RoundRecord(t_start_s, wall_ns, round_values(delta), held_bytes=held)
        if self.canary.due(index):  # outside the timing and the probes, beside every round
            record.canary_ns = self.canary.time_once()
        if is_floor_round and error is None:
            with contextlib.suppress(OSError):  # the floor is then missing, with its reason
                record.floor_tree = floor.changed(roots, self.workdir, floor_before)
        try:  # an empty scratch directory goes; one a backend wrote in stays, to be measured
            os.rmdir(paths.scratch)
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOENT) and error is None:
                error = f"scratch: {describe(exc)}"
        record.error = error
        return record

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

    def block(self, first: int, count: int, total: int, send: Callable[[object], None]) -> None:
        """In a worker process: rounds ``first`` .. ``first + count - 1`` of ``total``, each
        record sent as it finishes, then a :class:`WorkerEnd` with its RSS and the rounds
        as its time budget left them."""
        self.rounds = total
        peak_rss_reset()
        start_rss = current_rss_bytes()
        stopped = False
        try:
            for record in self.batches(first, count):
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
