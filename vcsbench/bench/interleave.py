"""Variants of one benchmark in alternating blocks of rounds, and what the blocks say.

With ``--interleave``, the variants of one (operation, payload, filesystem) run in one
sandbox in B blocks: in each block every variant runs its next share of the rounds, in
an order drawn for each pair of blocks and reversed for its second (the seed drawn for
the run and recorded): every variant leads as often as it trails. A slow hour of the
machine then falls on every variant alike.

The comparison of the blocks: :mod:`vcsbench.judge.paired`.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vcsbench.judge.paired import METHOD
from vcsbench.results.harness import Interleaved

if TYPE_CHECKING:
    from vcsbench.bench.rounds import BenchmarkRun

DEFAULT_BLOCKS = 30
"""Blocks by default (fewer where they would hold under ``MIN_BLOCK_ROUNDS`` rounds, but
never fewer than a verdict needs, ``paired.MIN_BLOCKS``, while there are rounds for them): at
30 blocks of 10 rounds, an A/A of git-pygit2 create+commit on a busy 2-core machine came
out different in 1 run of 20, and a 10% slowdown in 20 of 20; at 10 blocks of 30, 18 of
20 (a block as long as a scheduler's slice is hit whole by another process); with every
variant in a worker pinned to one CPU, 0 of 20 A/A runs."""
MIN_BLOCK_ROUNDS = 10

__all__ = [
    "DEFAULT_BLOCKS",
    "METHOD",
    "MIN_BLOCK_ROUNDS",
    "Block",
    "Blocks",
    "describe_blocks",
    "targets",
]


@dataclass(frozen=True)
class Block:
    """One variant's share of one block: rounds ``first`` .. ``end - 1`` of its log."""

    number: int
    variant: str
    first: int
    end: int


@dataclass
class Blocks:
    """A group's blocks: how many were planned, those run so far (each member's share),
    the seed their order was drawn from, and the CPU every member was pinned to."""

    planned: int
    seed: int
    cpu: int
    done: list[Block]


def targets(rounds: int, blocks: int) -> list[int]:
    """Rounds done by the end of each block (the last is all of them)."""
    return [math.ceil(rounds * (k + 1) / blocks) for k in range(blocks)]


def describe_blocks(
    text: str, texts: list[str], blocks: Blocks, run: BenchmarkRun, process: str
) -> Interleaved:
    """What a variant's result records of its group: the variants, each block's rounds,
    its place in the block's order and its median time there (ms; None: no round of the
    block succeeded)."""
    done = blocks.done
    order: dict[int, list[str]] = {}
    for block in done:
        order.setdefault(block.number, []).append(block.variant)
    mine = [b for b in done if b.variant == text]
    medians: list[float | None] = []
    for block in mine:
        walls = [run.log.wall_ns[i] / 1e6 for i in range(block.first, block.end) if run.log.ok[i]]
        medians.append(statistics.median(walls) if walls else None)
    return Interleaved(
        variants=tuple(texts),
        blocks=blocks.planned,
        rounds=tuple((b.first, b.end) for b in mine),
        position=tuple(order[b.number].index(text) for b in mine),
        median_ms=tuple(medians),
        order_seed=blocks.seed,
        cpu=blocks.cpu,
        process=process,
        method=METHOD,
    )
