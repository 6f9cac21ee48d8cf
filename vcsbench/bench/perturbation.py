"""Does the harness move what it measures? vcsbench's rounds against a bare loop.

The bare loop is the simplest measurement of the same work: the operation's own timed
call (the backend's calls, as the benchmark makes them) on a fresh path, from the same
starting state (its prepare's writes on disk), with ``perf_counter_ns`` around it and
nothing else -- no probes, no sampler, no footprint walk, no verification, no worker.
The harness is :class:`~vcsbench.bench.rounds.BenchmarkRun`, as a benchmark runs. They
run in alternating blocks of rounds (the order within each pair of blocks drawn at
random), in the same process and sandbox, so that drift in the machine hits both alike;
the perturbation is the median of the blocks' ratios (harness median over bare median),
with a distribution-free interval of that median from the blocks' order statistics (for
12 blocks, the 3rd smallest and 3rd largest ratio: 96%).
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
"""Blocks each way beside a benchmark (--perturbation on): a 97% interval, cheaply."""
BUDGET_ONCE_S = 1.0
"""About how long the check made once per backend of a run (--perturbation once, the
default) may take: its rounds per block are set from one untimed pilot round."""
ROUNDS = 100
LEVEL = 0.95
"""The interval's least confidence."""


@dataclass(frozen=True)
class Perturbation:
    """Per block: the bare loop's and the harness's median (ms)."""

    label: str
    blocks: tuple[tuple[float, float], ...]

    @property
    def ratios(self) -> list[float]:
        return [harness / bare for bare, harness in self.blocks]

    @property
    def ratio(self) -> float:
        return statistics.median(self.ratios)

    @property
    def interval(self) -> tuple[float, float]:
        """The k-th smallest and k-th largest block ratio: a distribution-free interval of
        the median ratio (:func:`~vcsbench.results.stats.order_interval`)."""
        low, high, _ = order_interval(self.ratios, LEVEL)
        return low, high

    @property
    def confidence(self) -> float:
        """How sure the interval is to hold the median ratio (distribution-free)."""
        return order_interval(self.ratios, LEVEL)[2]

    def describe(self) -> dict[str, object]:
        low, high = self.interval
        return {
            "label": self.label,
            "ratio": self.ratio,
            "interval": [low, high],
            "confidence": self.confidence,
            "bare_ms": [b for b, _ in self.blocks],
            "harness_ms": [h for _, h in self.blocks],
            "goal": GOAL,
            "method": __doc__.split("\n\n")[1].replace("\n", " ") if __doc__ else "",
        }


def bare_loop(operation: Operation, workdir: Path, rounds: int) -> list[int]:
    """``rounds`` timed calls of the operation, each on a fresh round's paths after its
    untimed prepare, every one verified afterwards (a failed call is an error here too).

    Each call starts where a harness round starts: with what the prepare wrote on disk
    (``syncfs`` after it, untimed), as the probe's ``syncfs`` before every round leaves it
    so that a round's device IO is its own. The starting state is part of the work: on
    ext4, a git-pygit2 commit into a repository whose creation is still dirty in the page
    cache took 0.70 ms against 0.77 ms once it is on disk."""
    for container in ("repos", "checkouts", "scratch"):
        (workdir / container).mkdir(parents=True)
    times: list[int] = []
    done: list[RoundPaths] = []
    for index in range(rounds):
        paths = RoundPaths.of(workdir, index)
        paths.scratch.mkdir()
        operation.prepare(paths)
        syncfs(workdir)
        start = time.perf_counter_ns()
        operation.run(paths)
        times.append(time.perf_counter_ns() - start)
        done.append(paths)
    problems = [p for found in operation.verify_many(done) for p in found]
    if problems:
        raise VcsbenchError(f"the bare loop's rounds failed their verification: {problems[0]}")
    return times


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
    """The harness against the bare loop for the operation ``make()`` gives, in
    ``blocks`` pairs of at most ``rounds`` rounds below ``root`` (in ``sandbox``); with a
    ``budget_s``, fewer rounds per block (at least one) so that the blocks' rounds take
    about that long, as one untimed pilot round of the bare loop foretells. Each block's
    directories are removed once it is measured: the sandbox is left as it was found."""
    order = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    try:
        found = _blocks(make, sandbox, root, blocks, rounds, order, budget_s)
    except BaseException:
        remove_tree(root)  # what it can: the failure is the news, not what stays
        raise
    _remove(root)
    return Perturbation(label, tuple(found))


def _blocks(
    make: Callable[[], Operation],
    sandbox: SandboxInfo,
    root: Path,
    blocks: int,
    rounds: int,
    order: random.Random,
    budget_s: float | None,
) -> list[tuple[float, float]]:
    if budget_s is not None:
        started = time.perf_counter()
        bare_loop(make(), root / "pilot", 1)
        pilot_s = time.perf_counter() - started
        rounds = max(1, min(rounds, int(budget_s / (2 * blocks * pilot_s))))
        _remove(root / "pilot")
    found: list[tuple[float, float]] = []
    for block in range(blocks):
        medians: dict[str, float] = {}
        for kind in order.sample(["bare", "harness"], 2):
            workdir = root / f"{kind}-{block}"
            operation = make()
            if kind == "bare":
                medians[kind] = statistics.median(bare_loop(operation, workdir, rounds)) / 1e6
                continue
            run = BenchmarkRun(operation, sandbox, workdir, rounds=rounds)
            run.run_all()
            bench = run.finish(operation.backend.describe())
            if bench.errors:
                first = bench.error_samples[0].error if bench.error_samples else "?"
                raise VcsbenchError(f"the harness's rounds failed: {first}")
            medians[kind] = statistics.median(bench.samples_s) * 1000
        for kind in ("bare", "harness"):
            _remove(root / f"{kind}-{block}")
        found.append((medians["bare"], medians["harness"]))
    return found


def _remove(path: Path) -> None:
    left = remove_tree(path)
    if left:
        raise VcsbenchError(f"the perturbation check's directory stays: {left[0]}")


PERTURBATION_BACKENDS = ("git-pygit2", "svn-fs")
PERTURBATION_OP = ("create+commit", "hello")


def check_perturbation(fs: str, found: Perturbation) -> Check:
    low, high = found.interval
    bare = statistics.median(b for b, _ in found.blocks)
    harness = statistics.median(h for _, h in found.blocks)
    return Check(
        fs,
        f"perturbation: {found.label}",
        found.ratio <= GOAL,
        f"harness/bare loop {found.ratio:.3f}x ({100 * found.confidence:.0f}% interval "
        f"{low:.3f}-{high:.3f}x over {len(found.blocks)} interleaved blocks; bare "
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
