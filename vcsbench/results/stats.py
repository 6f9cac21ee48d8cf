"""Order statistics shared by every figure made from samples (one definition of a
quantile, the sign test's interval of a median), and the Mann-Whitney U test for figures
compared on their rounds: where samples are small and untied, the exact null
distribution of U (as scipy's ``method="exact"``), otherwise the normal approximation
with tie and continuity correction (scipy's ``method="asymptotic"``); checked against
scipy in the tests. Between runs, Student's t comes from scipy itself
(:mod:`vcsbench.judge.verdict`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache


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


EXACT_MAX_N = 50
"""Both samples at most this large and no ties: the exact distribution."""


def _ranks(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, bool]:
    """(rank sum of ``a``, tie term sum(t^3 - t), whether any value is tied)."""
    pooled = sorted([(v, 0) for v in a] + [(v, 1) for v in b])
    n = len(pooled)
    rank_sum = 0.0
    ties = 0.0
    i = 0
    while i < n:
        j = i
        while j + 1 < n and pooled[j + 1][0] == pooled[i][0]:
            j += 1
        rank = (i + j) / 2 + 1
        rank_sum += rank * sum(1 for k in range(i, j + 1) if pooled[k][1] == 0)
        t = j - i + 1
        ties += t**3 - t
        i = j + 1
    return rank_sum, ties, ties > 0


@cache
def _u_counts(n1: int, n2: int) -> tuple[int, ...]:
    """How many arrangements give each U = 0..n1*n2 (no ties)."""
    if n1 == 0 or n2 == 0:
        return (1,)
    # f(u; m, n) = f(u - n; m - 1, n) + f(u; m, n - 1)
    with_last_of_first = _u_counts(n1 - 1, n2)
    with_last_of_second = _u_counts(n1, n2 - 1)
    counts = [0] * (n1 * n2 + 1)
    for u, c in enumerate(with_last_of_first):
        counts[u + n2] += c
    for u, c in enumerate(with_last_of_second):
        counts[u] += c
    return tuple(counts)


def _exact_p(u: float, n1: int, n2: int) -> float:
    """Two-sided exact p-value for ``u = max(U1, U2)``: 2 P(U >= u)."""
    counts = _u_counts(min(n1, n2), max(n1, n2))
    total = math.comb(n1 + n2, n1)
    at_least = sum(counts[math.ceil(u) :])
    return min(1.0, 2 * at_least / total)


def mann_whitney_p(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided p-value of the Mann-Whitney U test of ``a`` against ``b``."""
    n1, n2 = len(a), len(b)
    if n1 < 1 or n2 < 1:
        return 1.0
    rank_sum, ties, tied = _ranks(a, b)
    u1 = rank_sum - n1 * (n1 + 1) / 2
    u = max(u1, n1 * n2 - u1)
    if not tied and max(n1, n2) <= EXACT_MAX_N:
        return _exact_p(u, n1, n2)
    n = n1 + n2
    mu = n1 * n2 / 2
    sigma = math.sqrt(n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1))))
    if sigma == 0:
        return 1.0
    z = (u - mu - 0.5) / sigma
    return max(0.0, min(1.0, math.erfc(z / math.sqrt(2))))
