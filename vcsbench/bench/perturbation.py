"""Does the harness move what it measures? vcsbench's rounds against a bare loop.

The bare loop is the simplest measurement of the same work: the operation's own timed
call (the backend's calls, as the benchmark makes them) on a fresh path, from the same
starting state (its prepare's writes on disk), with ``perf_counter_ns`` around it and
nothing else -- no probes, no sampler, no footprint walk, no verification, no worker.
The harness is :class:`~vcsbench.bench.rounds.BenchmarkRun`, as a benchmark runs. They
alternate in blocks of consecutive rounds (which of each pair of blocks goes first drawn
at random), in the same process and sandbox: within a block, each bare round follows bare
rounds and each harness round the harness's own work, so an effect of that work on the
next call (caches the probes and the verification evict, a CPU gone idle meanwhile) shows
on the harness's side only -- rounds alternating one by one would put it on both. The
perturbation is the median of the block pairs' ratios (the harness block's median over
the bare block's), with a distribution-free interval of that median from the pairs'
order statistics (a sign test's); drift slower than a pair of blocks hits both alike. The
system sampler, a process of the harness waking every half second, runs beside both
sides' rounds alike.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from vcsbench.bench.plan import RoundPlan
from vcsbench.bench.rounds import BenchmarkRun
from vcsbench.errors import VcsbenchError
from vcsbench.measure.calibrate import Check
from vcsbench.measure.probes import syncfs
from vcsbench.results.metrics import PERTURBATION_GOAL
from vcsbench.results.stats import order_interval
from vcsbench.sandbox import Sandbox, SandboxInfo
from vcsbench.sandbox.removal import remove_tree
from vcsbench.workload.operation import Operation, RoundPaths

GOAL = PERTURBATION_GOAL
"""The harness's median may exceed the bare loop's by this factor at most."""
BLOCKS = 12
"""Pairs of blocks in doctor --calibrate."""
BLOCKS_BESIDE = 6
"""Pairs of blocks beside a benchmark (--perturbation on, once)."""
BUDGET_ONCE_S = 1.0
"""About how long the check made once per backend of a run (--perturbation once, the
default) may take: its rounds per block are set from three untimed pilot rounds."""
OVER_BUDGET = 5.0
"""With a budget, the check is not made where even its least (two rounds a block) is
foretold to take more than this many budgets: on a throttled device a history's round
that copies its seed took 0.7 s, and the least check 19 s against a budget of 1 s."""


class OverBudget(VcsbenchError):
    """The check would take far longer than its budget: not measured, and why."""


ROUNDS = 100
"""Rounds per block."""
PILOT_ROUNDS = 3
LEVEL = 0.95
"""The interval's least confidence."""
METHOD = " ".join(__doc__.split("\n\n")[1].split()) if __doc__ else ""


@dataclass(frozen=True)
class Perturbation:
    """Each pair of blocks: the bare block's rounds and the harness block's (ms), in the
    order the pairs ran."""

    label: str
    blocks_ms: tuple[tuple[tuple[float, ...], tuple[float, ...]], ...]

    @property
    def blocks(self) -> list[tuple[float, float]]:
        """Per pair of blocks: the bare and the harness median (ms)."""
        return [(statistics.median(b), statistics.median(h)) for b, h in self.blocks_ms]

    @property
    def ratios(self) -> list[float]:
        return [harness / bare for bare, harness in self.blocks]

    @property
    def ratio(self) -> float:
        return statistics.median(self.ratios)

    @property
    def interval(self) -> tuple[float, float]:
        """A distribution-free interval of the median block ratio
        (:func:`~vcsbench.results.stats.order_interval`)."""
        low, high, _ = order_interval(self.ratios, LEVEL)
        return low, high

    @property
    def confidence(self) -> float:
        """How sure the interval is to hold the median ratio (distribution-free)."""
        return order_interval(self.ratios, LEVEL)[2]

    @property
    def rounds(self) -> int:
        """Rounds a side."""
        return sum(len(h) for _, h in self.blocks_ms)

    @property
    def medians(self) -> tuple[float, float]:
        """The bare loop's and the harness's median over all their rounds (ms)."""
        return (
            statistics.median(v for b, _ in self.blocks_ms for v in b),
            statistics.median(v for _, h in self.blocks_ms for v in h),
        )

    def describe(self) -> dict[str, object]:
        low, high = self.interval
        bare, harness = self.medians
        return {
            "label": self.label,
            "ratio": self.ratio,
            "interval": [low, high],
            "confidence": self.confidence,
            "blocks": len(self.blocks_ms),
            "rounds": self.rounds,
            "medians_ms": [bare, harness],
            "bare_ms": [b for b, _ in self.blocks],
            "harness_ms": [h for _, h in self.blocks],
            "goal": GOAL,
            "method": METHOD,
        }


def _containers(workdir: Path) -> None:
    for container in ("repos", "checkouts", "scratch"):
        (workdir / container).mkdir(parents=True)


def _bare_round(operation: Operation, workdir: Path, index: int) -> int:
    """One timed call of the operation on round ``index``'s fresh paths after its untimed
    prepare (ns); verified later (a failed call is an error here too).

    Each call starts where a harness round starts: with what the prepare wrote on disk
    (``syncfs`` after it, untimed), as the probe's ``syncfs`` before every round leaves it
    so that a round's device IO is its own. The starting state is part of the work: on
    ext4, a git-pygit2 commit into a repository whose creation is still dirty in the page
    cache took 0.70 ms against 0.77 ms once it is on disk."""
    paths = RoundPaths.of(workdir, index)
    paths.scratch.mkdir()
    operation.prepare(paths)
    syncfs(workdir)
    start = time.perf_counter_ns()
    operation.run(paths)
    return time.perf_counter_ns() - start


def _verify_bare(operation: Operation, workdir: Path, rounds: int) -> None:
    done = [RoundPaths.of(workdir, index) for index in range(rounds)]
    problems = [p for found in operation.verify_many(done) for p in found]
    if problems:
        raise VcsbenchError(f"the bare loop's rounds failed their verification: {problems[0]}")


def measure(
    make: Callable[[], Operation],
    sandbox: SandboxInfo,
    root: Path,
    label: str,
    blocks: int = BLOCKS,
    rounds: int = ROUNDS,
    seed: int = 0,
    budget_s: float | None = None,
) -> Perturbation:
    """The harness against the bare loop for the operation ``make()`` gives: ``blocks``
    pairs of blocks of ``rounds`` rounds each side below ``root`` (in ``sandbox``); with a
    ``budget_s``, fewer rounds a block (at least two) so that they take about that long,
    as the median of three untimed pilot rounds of the bare loop foretells. Its
    directories are removed once it is measured: the sandbox is left as it was found."""
    order = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    if sandbox.throttle is not None:  # the bare loop's seed too is built off the device
        make = _unthrottled_seeds(make)
    try:
        if budget_s is not None:
            pilot_s = _pilot(make(), root / "pilot")
            _remove(root / "pilot")
            least_s = 2 * blocks * 2 * pilot_s
            if least_s > OVER_BUDGET * budget_s:
                raise OverBudget(
                    f"a bare round takes {pilot_s:.3f} s (prepare included), so its least "
                    f"check ({blocks} pairs of blocks of 2 rounds) would take about "
                    f"{least_s:.0f} s, over {OVER_BUDGET:g}x its budget of {budget_s:g} s; "
                    "--perturbation on measures it beside every benchmark"
                )
            rounds = max(2, min(rounds, int(budget_s / (2 * blocks * pilot_s))))
        found = _blocks(make, sandbox, root, blocks, rounds, order)
    except BaseException:
        remove_tree(root)  # what it can: the failure is the news, not what stays
        raise
    _remove(root)
    return Perturbation(label, found)


def _unthrottled_seeds(make: Callable[[], Operation]) -> Callable[[], Operation]:
    def made() -> Operation:
        operation = make()
        operation.seeds_unthrottled = True
        return operation

    return made


def _pilot(operation: Operation, workdir: Path, count: int = PILOT_ROUNDS) -> float:
    """How long a bare round takes, prepare included (s): the median of ``count``, so
    that the first round's one-off costs (a library's first use) do not set the pace."""
    _containers(workdir)
    took = []
    for index in range(count):
        started = time.perf_counter()
        _bare_round(operation, workdir, index)
        took.append(time.perf_counter() - started)
    _verify_bare(operation, workdir, count)
    return statistics.median(took)


def _blocks(
    make: Callable[[], Operation],
    sandbox: SandboxInfo,
    root: Path,
    blocks: int,
    rounds: int,
    order: random.Random,
) -> tuple[tuple[tuple[float, ...], tuple[float, ...]], ...]:
    """``blocks`` pairs of blocks of ``rounds`` rounds, bare and the harness's, which of
    each pair first drawn at random; both sides verified (the harness after its rounds,
    outside its timed region)."""
    bare_op, bare_dir = make(), root / "bare"
    _containers(bare_dir)
    run = BenchmarkRun(make(), sandbox, root / "harness", RoundPlan(blocks * rounds))
    bare_ns: list[int] = []
    try:
        for block in range(blocks):
            for kind in order.sample(["bare", "harness"], 2):
                if kind == "bare":
                    first = block * rounds
                    bare_ns += [
                        _bare_round(bare_op, bare_dir, i) for i in range(first, first + rounds)
                    ]
                else:
                    run.run_to((block + 1) * rounds)
    finally:
        run.stop_workers()
    _verify_bare(bare_op, bare_dir, blocks * rounds)
    bench = run.finish(run.operation.backend.describe())
    if bench.errors or len(bench.samples_s) != blocks * rounds:
        first_error = bench.error_samples[0].error if bench.error_samples else "rounds missing"
        raise VcsbenchError(f"the harness's rounds failed: {first_error}")
    harness_ms = [s * 1000 for s in bench.samples_s]
    return tuple(
        (
            tuple(ns / 1e6 for ns in bare_ns[k * rounds : (k + 1) * rounds]),
            tuple(harness_ms[k * rounds : (k + 1) * rounds]),
        )
        for k in range(blocks)
    )


def _remove(path: Path) -> None:
    left = remove_tree(path)
    if left:
        raise VcsbenchError(f"the perturbation check's directory stays: {left[0]}")


PERTURBATION_BACKENDS = ("git-pygit2", "svn-fs")
PERTURBATION_OP = ("create+commit", "hello")


def check_perturbation(fs: str, found: Perturbation) -> Check:
    low, high = found.interval
    bare, harness = found.medians
    return Check(
        fs,
        f"perturbation: {found.label}",
        found.ratio <= GOAL,
        f"harness/bare loop {found.ratio:.3f}x ({100 * found.confidence:.0f}% interval "
        f"{low:.3f}-{high:.3f}x over {len(found.blocks_ms)} alternating pairs of blocks of "
        f"{found.rounds // len(found.blocks_ms)} rounds; bare {bare:.3f} ms, harness "
        f"{harness:.3f} ms), goal <= {GOAL:g}x",
        warn_only=True,
    )


def perturbation_checks(sandbox: Sandbox) -> Iterator[Check]:
    """The harness against a bare loop of the same calls, per backend it can run here."""
    from vcsbench.backends import Variant
    from vcsbench.workload.operations import make_operation
    from vcsbench.workload.payloads import load_payload

    assert sandbox.info is not None
    op, payload = PERTURBATION_OP
    for name in PERTURBATION_BACKENDS:
        variant = Variant.parse(name)
        label = f"{name} {op} {payload}"
        if not variant.availability.ok:
            yield Check(sandbox.info.spec, f"perturbation: {label}", None, "not available")
            continue
        with variant.make() as backend:
            backend.ready(sandbox.root)
            found = measure(
                lambda: make_operation(op, backend, load_payload(payload)),
                sandbox.info,
                sandbox.root / f"perturbation-{name}",
                label,
            )
        yield check_perturbation(sandbox.info.spec, found)
