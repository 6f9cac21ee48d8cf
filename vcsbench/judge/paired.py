"""Two variants of one interleaved run compared block by block (``--interleave``).

The block is the unit of comparison. For a baseline A and a variant V of one group,
block k gives the ratio r_k = median_V(k) / median_A(k) of rounds run side by side in
time, in which drift between blocks cancels; the comparison is the median of the r_k
with a distribution-free interval from their order statistics (a sign test: for 30
blocks the 10th smallest and 10th largest, 95.7%). V differs from A when the interval
leaves out 1. Rounds within a block are not independent samples of the difference and
are not used as such.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from vcsbench.results.stats import order_interval

LEVEL = 0.95
MIN_EFFECT = 0.01
"""A difference the blocks find but smaller than this is said as such, not as slower or
faster: with many blocks a 0.3 % difference is significant and flips between runs."""
MIN_BLOCKS = next(n for n in range(2, 64) if 1 - 2 * 0.5**n >= LEVEL)
"""The fewest blocks whose interval (their extremes) holds ``LEVEL``."""
METHOD = " ".join(__doc__.split("\n\n")[1].split()) if __doc__ else ""


@dataclass(frozen=True)
class Paired:
    """A variant against a baseline over the blocks both ran."""

    ratio: float
    low: float
    high: float
    confidence: float
    blocks: int

    @property
    def enough(self) -> bool:
        """Whether the blocks give an interval at ``LEVEL`` (at 95 %, 6 blocks or more:
        from fewer, the extremes' own confidence is lower, 75 % from 3)."""
        return self.confidence >= LEVEL - 1e-9

    @property
    def withheld(self) -> str:
        """Why there is no verdict though the interval is shown ("" where there is one)."""
        if self.enough:
            return ""
        return (
            f"no verdict: {self.blocks} blocks give a {self.confidence:.0%} interval "
            f"({MIN_BLOCKS} give {LEVEL:.0%})"
        )

    @property
    def significant(self) -> bool:
        return self.enough and (self.low > 1 or self.high < 1)

    def verdict(self) -> str:
        if self.withheld:
            return self.withheld
        if not self.significant:
            return "no significant difference"
        if abs(self.ratio - 1) < MIN_EFFECT:
            return f"a difference under {MIN_EFFECT:.0%}"
        return "slower" if self.ratio > 1 else "faster"


def paired(base: Sequence[float | None], other: Sequence[float | None]) -> Paired | None:
    """The block-by-block comparison of ``other`` with ``base`` (their block medians, in
    block order); None with fewer than 2 blocks both have."""
    ratios = [o / b for b, o in zip(base, other, strict=False) if b and o is not None]
    if len(ratios) < 2:
        return None
    low, high, confidence = order_interval(ratios, LEVEL)
    return Paired(statistics.median(ratios), low, high, confidence, len(ratios))
