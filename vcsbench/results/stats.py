"""Order statistics shared by every figure made from samples: one definition of a quantile."""

from __future__ import annotations

from collections.abc import Sequence


def quantile(ordered: Sequence[float], q: float) -> float:
    """The ``q`` quantile of sorted values, interpolated between order statistics (the
    definition numpy and R (type 7) use)."""
    position = q * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
