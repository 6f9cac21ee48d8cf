"""Does the harness move what it measures? vcsbench's rounds against a bare loop.

The bare loop is the simplest measurement of the same work: the operation's own timed
call (the backend's calls, as the benchmark makes them) on a fresh path, from the same
starting state (its prepare's writes on disk), with ``perf_counter_ns`` around it and
nothing else -- no probes, no sampler, no footprint walk, no verification, no worker.
The harness is :class:`~vcsbench.bench.rounds.BenchmarkRun`, as a benchmark runs. They
alternate round by round (the order within each pair drawn at random), in the same
process and sandbox, so that the machine's drift -- on a loop device, the host disk's
slow spells lasting a fraction of a second -- hits both alike; the perturbation is the
median of the pairs' ratios (harness round over bare round), with a distribution-free
interval of that median from the pairs' order statistics (a sign test's, 95%). Blocks of
consecutive pairs show how the check agreed with itself over its duration (each block's
two medians). The system sampler, a process of the harness waking every half second,
runs beside both sides' rounds alike.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

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
BLOCKS_BESIDE = 6
"""Blocks of pairs beside a benchmark (--perturbation on)."""
BUDGET_ONCE_S = 1.0
"""About how long the check made once per backend of a run (--perturbation once, the
default) may take: its pairs per block are set from three untimed pilot rounds."""
ROUNDS = 100
"""Pairs of rounds per block."""
PILOT_ROUNDS = 3
LEVEL = 0.95
"""The interval's least confidence."""


@dataclass(frozen=True)
class Perturbation:
    """Each pair of rounds, bare and harness (ms), in the order they ran, and into how
    many blocks of consecutive pairs they are cut for showing."""

    label: str
    pairs: tuple[tuple[float, float], ...]
    block_count: int = BLOCKS

    @property
    def ratios(self) -> list[float]:
        return [harness / bare for bare, harness in self.pairs]

    @property
    def ratio(self) -> float:
        return statistics.median(self.ratios)

    @property
    def interval(self) -> tuple[float, float]:
        """The k-th smallest and k-th largest pair ratio: a distribution-free interval of
        the median ratio (:func:`~vcsbench.results.stats.order_interval`)."""
        low, high, _ = order_interval(self.ratios, LEVEL)
        return low, high

    @property
    def confidence(self) -> float:
        """How sure the interval is to hold the median ratio (distribution-free)."""
        return order_interval(self.ratios, LEVEL)[2]

    @property
    def medians(self) -> tuple[float, float]:
        """The bare loop's and the harness's median over all their rounds (ms)."""
        return (
            statistics.median(b for b, _ in self.pairs),
            statistics.median(h for _, h in self.pairs),
        )

    @property
    def blocks(self) -> list[tuple[float, float]]:
        """Per block of consecutive pairs: the bare and the harness median (ms)."""
        count = max(1, min(self.block_count, len(self.pairs)))
        size = len(self.pairs) / count
        cuts = [self.pairs[round(i * size) : round((i + 1) * size)] for i in range(count)]
        return [
            (statistics.median(b for b, _ in cut), statistics.median(h for _, h in cut))
            for cut in cuts
        ]

    def describe(self) -> dict[str, object]:
        low, high = self.interval
        bare, harness = self.medians
        return {
            "label": self.label,
            "ratio": self.ratio,
            "interval": [low, high],
            "confidence": self.confidence,
            "pairs": len(self.pairs),
            "medians_ms": [bare, harness],
            "bare_ms": [b for b, _ in self.blocks],
            "harness_ms": [h for _, h in self.blocks],
            "goal": GOAL,
            "method": __doc__.split("\n\n")[1].replace("\n", " ") if __doc__ else "",
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
    times ``rounds`` pairs of rounds below ``root`` (in ``sandbox``); with a ``budget_s``,
    fewer (at least one a block) so that they take about that long, as the median of
    three untimed pilot rounds of the bare loop foretells. Its directories are removed
    once it is measured: the sandbox is left as it was found."""
    order = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    if sandbox.throttle is not None:  # the bare loop's seed too is built off the device
        make = _unthrottled_seeds(make)
    try:
        if budget_s is not None:
            pilot_s = _pilot(make(), root / "pilot")
            rounds = max(1, min(rounds, int(budget_s / (2 * blocks * pilot_s))))
            _remove(root / "pilot")
        pairs = _pairs(make, sandbox, root, blocks * rounds, order)
    except BaseException:
        remove_tree(root)  # what it can: the failure is the news, not what stays
        raise
    _remove(root)
    return Perturbation(label, tuple(pairs), blocks)


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


def _pairs(
    make: Callable[[], Operation],
    sandbox: SandboxInfo,
    root: Path,
    count: int,
    order: random.Random,
) -> list[tuple[float, float]]:
    """``count`` pairs of rounds, one bare and one the harness's, in a random order
    within each pair; both sides verified (the harness each round after it, outside its
    timed region)."""
    bare_op, bare_dir = make(), root / "bare"
    _containers(bare_dir)
    run = BenchmarkRun(make(), sandbox, root / "harness", rounds=count)
    bare_ns: list[int] = []
    try:
        for index in range(count):
            for kind in order.sample(["bare", "harness"], 2):
                if kind == "bare":
                    bare_ns.append(_bare_round(bare_op, bare_dir, index))
                else:
                    run.run_to(index + 1)
    finally:
        run.stop_workers()
    _verify_bare(bare_op, bare_dir, count)
    bench = run.finish(run.operation.backend.describe())
    if bench.errors or len(bench.samples_s) != count:
        first = bench.error_samples[0].error if bench.error_samples else "rounds missing"
        raise VcsbenchError(f"the harness's rounds failed: {first}")
    return [(b / 1e6, h * 1000) for b, h in zip(bare_ns, bench.samples_s, strict=True)]


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
        f"{low:.3f}-{high:.3f}x over {len(found.pairs):,} alternating pairs of rounds; bare "
        f"{bare:.3f} ms, harness {harness:.3f} ms), goal <= {GOAL:g}x",
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
