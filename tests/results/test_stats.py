"""The Mann-Whitney U test against scipy's reference values."""

from __future__ import annotations

import random

import pytest
from scipy.stats import mannwhitneyu

from vcsbench.results.stats import mann_whitney_p


def samples(seed: int, n1: int, n2: int, shift: float) -> tuple[list[float], list[float]]:
    rng = random.Random(seed)
    return [rng.random() for _ in range(n1)], [rng.random() + shift for _ in range(n2)]


@pytest.mark.parametrize(("n1", "n2"), [(2, 2), (3, 4), (4, 4), (3, 7), (8, 8), (12, 20), (50, 50)])
@pytest.mark.parametrize("shift", [0.0, 0.3, 1.0])
def test_small_untied_samples_use_the_exact_distribution(n1: int, n2: int, shift: float) -> None:
    a, b = samples(n1 * 100 + n2, n1, n2, shift)
    expected = mannwhitneyu(a, b, alternative="two-sided", method="exact").pvalue
    assert expected == pytest.approx(mann_whitney_p(a, b), rel=1e-9)


@pytest.mark.parametrize(("n1", "n2"), [(60, 70), (200, 200), (1000, 900)])
def test_large_samples_use_the_normal_approximation(n1: int, n2: int) -> None:
    a, b = samples(n1 + n2, n1, n2, 0.05)
    expected = mannwhitneyu(a, b, alternative="two-sided", method="asymptotic").pvalue
    assert expected == pytest.approx(mann_whitney_p(a, b), rel=1e-9)


def test_tied_samples_use_the_tie_corrected_approximation() -> None:
    a, b = [1, 2, 2, 3, 4, 4, 4], [2, 3, 3, 5, 6, 6]
    expected = mannwhitneyu(a, b, alternative="two-sided", method="asymptotic").pvalue
    assert expected == pytest.approx(mann_whitney_p(a, b), rel=1e-9)


def test_at_n_4_the_exact_p_is_not_the_normal_approximations() -> None:
    a, b = [1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]
    assert 2 / 70 == pytest.approx(mann_whitney_p(a, b))
    assert mannwhitneyu(a, b, method="asymptotic").pvalue != pytest.approx(2 / 70)
