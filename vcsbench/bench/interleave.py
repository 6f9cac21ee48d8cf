"""Variants of one benchmark in alternating blocks of rounds, and what the blocks say.

With ``--interleave``, the variants of one (operation, payload, filesystem) run in one
sandbox in B blocks: in each block every variant runs its next share of the rounds, in
an order drawn for each pair of blocks and reversed for its second (the seed drawn for
the run and recorded): every variant leads as often as it trails. A slow hour of the
machine then falls on every variant alike.

The block is the unit of comparison. For a baseline A and a variant V of one group,
block k gives the ratio r_k = median_V(k) / median_A(k) of rounds run side by side in
time, in which drift between blocks cancels; the comparison is the median of the r_k
with a distribution-free interval from their order statistics (a sign test: for 30
blocks the 10th smallest and 10th largest, 95.7%). V differs from A when the interval
leaves out 1. Rounds within a block are not independent samples of the difference and
are not used as such.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vcsbench.results.stats import order_interval

if TYPE_CHECKING:
    from vcsbench.bench.rounds import BenchmarkRun

DEFAULT_BLOCKS = 30
"""Blocks by default (fewer where they would hold under ``MIN_BLOCK_ROUNDS`` rounds): at
30 blocks of 10 rounds, an A/A of git-pygit2 create+commit on a busy 2-core machine came
out different in 1 run of 20, and a 10% slowdown in 20 of 20; at 10 blocks of 30, 18 of
20 (a block as long as a scheduler's slice is hit whole by another process)."""
MIN_BLOCK_ROUNDS = 10
LEVEL = 0.95
METHOD = " ".join(__doc__.split("\n\n")[2].split()) if __doc__ else ""


@dataclass(frozen=True)
class Block:
    """One variant's share of one block: rounds ``first`` .. ``end - 1`` of its log."""

    number: int
    variant: str
    first: int
    end: int


def targets(rounds: int, blocks: int) -> list[int]:
    """Rounds done by the end of each block (the last is all of them)."""
    return [math.ceil(rounds * (k + 1) / blocks) for k in range(blocks)]


def describe_blocks(
    text: str, texts: list[str], blocks: int, done: list[Block], run: BenchmarkRun
) -> dict[str, object]:
    """What a variant's result records of its group: the variants, each block's rounds,
    its place in the block's order and its median time there (ms; None: no round of the
    block succeeded)."""
    order: dict[int, list[str]] = {}
    for block in done:
        order.setdefault(block.number, []).append(block.variant)
    mine = [b for b in done if b.variant == text]
    medians: list[float | None] = []
    for block in mine:
        walls = [run.log.wall_ns[i] / 1e6 for i in range(block.first, block.end) if run.log.ok[i]]
        medians.append(statistics.median(walls) if walls else None)
    return {
        "variants": texts,
        "blocks": blocks,
        "rounds": [[b.first, b.end] for b in mine],
        "position": [order[b.number].index(text) for b in mine],
        "median_ms": medians,
        "method": METHOD,
    }


@dataclass(frozen=True)
class Paired:
    """A variant against a baseline over the blocks both ran."""

    ratio: float
    low: float
    high: float
    confidence: float
    blocks: int

    @property
    def significant(self) -> bool:
        return self.low > 1 or self.high < 1

    def verdict(self) -> str:
        if not self.significant:
            return "no significant difference"
        return "slower" if self.ratio > 1 else "faster"


def paired(base: list[float | None], other: list[float | None]) -> Paired | None:
    """The block-by-block comparison of ``other`` with ``base`` (their block medians, in
    block order); None with fewer than 2 blocks both have."""
    ratios = [o / b for b, o in zip(base, other, strict=False) if b and o is not None]
    if len(ratios) < 2:
        return None
    low, high, confidence = order_interval(ratios, LEVEL)
    return Paired(statistics.median(ratios), low, high, confidence, len(ratios))
