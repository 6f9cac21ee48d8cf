"""Order statistics shared by every figure made from samples: one definition of a quantile."""

from __future__ import annotations

import math
from collections.abc import Sequence


def quantile(ordered: Sequence[float], q: float) -> float:
    """The ``q`` quantile of sorted values, interpolated between order statistics (the
    definition numpy and R (type 7) use)."""
    position = q * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _half_binomial(n: int, k: int) -> float:
    """P(Binomial(n, 1/2) = k), in logarithms: C(n, k) / 2^n overflows a float's range
    on either side for a thousand values."""
    return math.exp(
        math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) - n * math.log(2)
    )


def order_interval(values: Sequence[float], level: float = 0.95) -> tuple[float, float, float]:
    """A distribution-free interval of the median of ``values`` (a sign test's): the k-th
    smallest and k-th largest, k the largest keeping confidence 1 - 2 P(Binomial(n, 1/2)
    < k) at least ``level``; returns (low, high, confidence). With too few values for
    ``level`` (n < 6 at 95%), the extremes and their confidence 1 - 2^(1-n)."""
    n = len(values)
    if not n:
        raise ValueError("no values")
    best = (1, 1 - 2 * 0.5**n)
    below = 0.0
    for k in range(1, n // 2 + 1):
        below += _half_binomial(n, k - 1)
        if 1 - 2 * below < level:
            break
        best = (k, 1 - 2 * below)
    k, confidence = best
    ordered = sorted(values)
    return ordered[k - 1], ordered[-k], confidence
