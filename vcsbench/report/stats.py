"""Statistics for comparisons, checked against scipy's reference values in the tests.

``mann_whitney_p``: two-sided p-value of the Mann-Whitney U test. Where samples are
small and untied, the exact null distribution of U is used (as scipy's
``method="exact"``); otherwise the normal approximation with tie and continuity
correction (scipy's ``method="asymptotic"``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache

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


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularized incomplete beta function (Lentz's
    method, as Numerical Recipes' betacf)."""
    tiny, c, d = 1e-300, 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1 + numerator * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1) < 1e-15:
            break
    return h


def _incomplete_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b), the regularized incomplete beta function."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1) / (a + b + 2):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return 1 - math.exp(log_front) * _beta_fraction(b, a, 1 - x) / b


def t_two_sided_p(t: float, df: float) -> float:
    """Two-sided p-value of Student's t with ``df`` degrees of freedom (real df, as
    Welch's)."""
    return _incomplete_beta(df / 2, 0.5, df / (df + t * t))


def t_quantile(q: float, df: float) -> float:
    """The ``q`` quantile (q > 0.5) of Student's t: bisection on the two-sided p-value."""
    low, high = 0.0, 1.0
    while t_two_sided_p(high, df) > 2 * (1 - q):
        high *= 2
    for _ in range(200):
        mid = (low + high) / 2
        if t_two_sided_p(mid, df) > 2 * (1 - q):
            low = mid
        else:
            high = mid
    return (low + high) / 2


def welch_log_ratio(
    base: Sequence[float], other: Sequence[float], level: float = 0.95
) -> tuple[float, float, float, float]:
    """Runs as the unit: the ratio of ``other``'s geometric mean to ``base``'s (each value
    one run's figure, > 0), with Welch's t on the logarithms -- its ``level`` interval of
    the ratio and two-sided p-value. Each side needs at least two runs: the spread between
    runs is what a change must stand out of. Returns (ratio, low, high, p)."""
    if len(base) < 2 or len(other) < 2:
        raise ValueError("each side needs at least two runs")
    lb, lo = [math.log(v) for v in base], [math.log(v) for v in other]
    mb, mo = sum(lb) / len(lb), sum(lo) / len(lo)
    vb = sum((v - mb) ** 2 for v in lb) / (len(lb) - 1) / len(lb)
    vo = sum((v - mo) ** 2 for v in lo) / (len(lo) - 1) / len(lo)
    diff, se = mo - mb, math.sqrt(vb + vo)
    if se == 0:
        same = diff == 0
        return math.exp(diff), math.exp(diff), math.exp(diff), 1.0 if same else 0.0
    df = (vb + vo) ** 2 / (vb**2 / (len(lb) - 1) + vo**2 / (len(lo) - 1))
    half = t_quantile(1 - (1 - level) / 2, df) * se
    return (
        math.exp(diff),
        math.exp(diff - half),
        math.exp(diff + half),
        t_two_sided_p(diff / se, df),
    )
