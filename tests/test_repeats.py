"""compare with several runs a side: the runs are the unit, so drift between runs is not
a change and a real shift still is. Synthetic runs: a frozen result with every timed
figure scaled by a known factor per run."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from helpers import REPO, vcsbench
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from vcsbench.report.stats import t_quantile, t_two_sided_p, welch_log_ratio

TINY = REPO / "tests" / "data" / "tiny-ext4.json"
TIME_STATS = ("min", "max", "mean", "stddev", "median", "iqr", "q1", "q3", "ld15iqr", "hd15iqr")


def scaled(tmp_path: Path, name: str, factor: float) -> str:
    """The frozen result with every round's time (and pytest-benchmark's stats) times
    ``factor``: a run of the same work on a machine ``factor`` as slow."""
    document = json.loads(TINY.read_text())
    for bench in document["benchmarks"]:
        rounds = bench["extra_info"]["vcsbench"]["rounds"]
        rounds["wall_ns"] = [round(ns * factor) for ns in rounds["wall_ns"]]
        stats = bench["stats"]
        for key in TIME_STATS:
            stats[key] *= factor
        stats["total"] *= factor
        stats["data"] = [value * factor for value in stats["data"]]
        stats["ops"] = 1 / stats["mean"]
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(document))
    return str(path)


def sides(tmp_path: Path, base: list[float], other: list[float]) -> list[str]:
    return [
        "compare",
        "--base-runs", *(scaled(tmp_path, f"a{i}", f) for i, f in enumerate(base)),
        "--other-runs", *(scaled(tmp_path, f"b{i}", f) for i, f in enumerate(other)),
    ]  # fmt: skip


def test_drift_between_runs_is_not_a_change_where_one_pair_of_runs_says_it_is(
    tmp_path: Path,
) -> None:
    """A/A with drift: the machine 3 % slower each run, the sides alternating (A B A B A
    B). Runs as the unit: no change. The first base run against the last other run, as
    two single runs: a significant 'slower' -- the trap the repeats are for."""
    drift = [1.00, 1.03, 1.06, 1.09, 1.12, 1.15]
    result = vcsbench(*sides(tmp_path, drift[0::2], drift[1::2]), "--fail-on", "time:1%")
    assert 0 == result.returncode, result.stdout + result.stderr
    assert "slower" not in result.stdout and "faster" not in result.stdout
    assert "~ (1.03x" in result.stdout  # the geometric means' ratio, within the spread
    single = vcsbench("compare", scaled(tmp_path, "a0", 1.00), scaled(tmp_path, "b2", 1.15))
    assert "1.15x slower" in single.stdout


def test_a_real_shift_is_caught_with_its_interval_and_gated(tmp_path: Path) -> None:
    base, other = [1.00, 1.02, 0.99], [1.20, 1.23, 1.19]
    result = vcsbench(*sides(tmp_path, base, other), "--fail-on", "time:10%")
    assert 1 == result.returncode, result.stdout + result.stderr
    expected = welch_log_ratio(base, other)
    assert 1.19 < expected[0] < 1.22
    line = next(x for x in result.stdout.splitlines() if "git-pygit2 create+commit" in x)
    assert f"{expected[0]:.2f}x slower" in line
    assert f"95% {expected[1]:.2f}-{expected[2]:.2f}x" in line
    assert "REGRESSION git-pygit2 create+commit hello ext4:size=256M: time" in result.stdout
    # bytes and footprint do not move with the clock: the same in every run, no change
    assert "(1.00x ~)" in result.stdout
    calm = vcsbench(*sides(tmp_path, base, other), "--fail-on", "time:30%")
    assert 0 == calm.returncode, calm.stdout
    assert "REGRESSION" not in calm.stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--base-runs", "x.json", "--other-runs", "y.json", "z.json"], "at least two result"),
        (["a.json", "--base-runs", "x.json", "y.json"], "not a mix"),
        ([], "give BASE and at least one OTHER"),
    ],
)
def test_a_repeats_comparison_asked_wrongly_is_one_line(
    tmp_path: Path, args: list[str], says: str
) -> None:
    for name in ("a", "x", "y", "z"):
        Path(tmp_path / f"{name}.json").write_text(TINY.read_text())
    result = vcsbench("compare", *args, cwd=tmp_path)
    assert 2 == result.returncode
    (line,) = result.stderr.strip().splitlines()
    assert says in line


def test_students_t_agrees_with_scipy() -> None:
    from scipy import stats

    for df in (1.0, 2.0, 2.7, 4.5, 10.0, 57.3):
        for t in (0.1, 1.0, 2.5, 6.0):
            assert math.isclose(t_two_sided_p(t, df), 2 * stats.t.sf(t, df), rel_tol=1e-9)
        for q in (0.9, 0.975, 0.995):
            assert math.isclose(t_quantile(q, df), stats.t.ppf(q, df), rel_tol=1e-9)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(0.5, 2.0), min_size=2, max_size=8),
    st.lists(st.floats(0.5, 2.0), min_size=2, max_size=8),
)
def test_welchs_test_on_logs_agrees_with_scipy(base: list[float], other: list[float]) -> None:
    from scipy import stats

    lb, lo = [math.log(v) for v in base], [math.log(v) for v in other]
    # scipy warns (and its figures are unreliable) where a side has almost no spread
    assume(max(lb) - min(lb) > 1e-3 and max(lo) - min(lo) > 1e-3)
    ratio, low, high, p = welch_log_ratio(base, other)
    found = stats.ttest_ind(lo, lb, equal_var=False)
    assert math.isclose(p, found.pvalue, rel_tol=1e-6, abs_tol=1e-12)
    interval = found.confidence_interval(0.95)
    assert math.isclose(math.log(low), interval.low, rel_tol=1e-6, abs_tol=1e-9)
    assert math.isclose(math.log(high), interval.high, rel_tol=1e-6, abs_tol=1e-9)
    assert math.isclose(ratio, math.exp(sum(lo) / len(lo) - sum(lb) / len(lb)))
