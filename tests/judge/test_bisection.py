"""Bisection over a chain of versions with a known change (vcsbench.judge.bisection)."""

from __future__ import annotations

import math
import random

import pytest

from vcsbench.judge.bisection import Skip, bisect, side_of
from vcsbench.judge.paired import Paired, paired

VERSIONS = [f"1.{i}.0" for i in range(16)]


def exact(ratio: float, half_width: float = 0.02) -> Paired:
    return Paired(ratio, ratio * (1 - half_width), ratio * (1 + half_width), 0.95, 30)


def chain_with_change_at(k: int, size: float = 1.10):
    """A chain whose versions from ``k`` on are ``size`` times the good one."""
    measured: list[int] = []

    def measure(index: int, attempt: int) -> Paired:
        measured.append(index)
        return exact(size if index >= k else 1.0)

    return measure, measured


@pytest.mark.parametrize("k", range(1, 16))
def test_a_change_at_any_of_16_versions_is_found_in_five_steps(k: int) -> None:
    measure, measured = chain_with_change_at(k)
    out = bisect(VERSIONS, measure, 0.05)
    assert (out.last_good, out.first_bad) == (k - 1, k)
    assert len(out.steps) <= 1 + math.ceil(math.log2(15)) == 5
    assert measured[0] == 15 and out.change is not None and out.change.ratio == 1.10
    assert out.share() == pytest.approx(1.0)


def test_faster_is_a_change_too() -> None:
    measure, _ = chain_with_change_at(6, size=0.85)
    out = bisect(VERSIONS, measure, 0.05)
    assert out.first_bad == 6


def test_no_change_past_the_threshold_is_said_and_nothing_else_is_measured() -> None:
    measure, measured = chain_with_change_at(3, size=1.03)
    out = bisect(VERSIONS, measure, 0.05)
    assert out.first_bad is None and measured == [15]
    assert "no change past 5%" in out.nothing and "1.030x [1.009–1.051]" in out.nothing
    # a change all the same (its interval leaves out 1): said, and how to bisect it
    assert (
        "slower by 3.0% (its interval leaves out 1: a change), under the 5% asked to bisect "
        "(--threshold 3% bisects it)"
    ) in out.nothing


def test_a_change_the_interval_does_not_exclude_is_not_bisected() -> None:
    out = bisect(VERSIONS, lambda i, a: Paired(1.2, 0.95, 1.5, 0.95, 30), 0.05)
    assert out.first_bad is None and "no change past" in out.nothing
    assert "its interval holds 1: no change beyond this machine's noise" in out.nothing


def test_an_unclear_step_is_measured_again_then_decided_by_its_median() -> None:
    calls: list[tuple[int, int]] = []

    def measure(index: int, attempt: int) -> Paired:
        calls.append((index, attempt))
        if index == 15:
            return exact(1.10)
        # halfway is sqrt(1.1) = 1.0488: this interval crosses it, twice
        return Paired(1.06, 1.03, 1.08, 0.95, 30) if index >= 8 else exact(1.0)

    out = bisect(VERSIONS, measure, 0.05)
    assert (8, 1) in calls and (8, 2) in calls
    sides = [s.side for s in out.steps if s.index == 8]
    assert sides == ["unclear", "by its median"]
    assert out.first_bad == 8 and out.uncertain and "bad" in out.uncertain[0].why


def test_a_version_that_cannot_be_measured_is_skipped_and_its_neighbours_tried() -> None:
    def measure(index: int, attempt: int) -> Paired:
        if index == 7:
            raise Skip("pip could not install 1.7.0")
        return exact(1.10 if index >= 7 else 1.0)

    out = bisect(VERSIONS, measure, 0.05)
    skipped = out.skipped
    assert [s.index for s in skipped] == [7] and "pip could not" in skipped[0].why
    # the change is at 7, which cannot run: the answer is 6 .. 8 with 7 between them
    assert (out.last_good, out.first_bad) == (6, 8)


def test_a_bad_version_that_cannot_run_ends_it_in_one_line() -> None:
    def measure(index: int, attempt: int) -> Paired:
        raise Skip("pip could not install 1.15.0")

    out = bisect(VERSIONS, measure, 0.05)
    assert out.first_bad is None and "could not be measured: pip could not" in out.nothing


def test_the_halfway_rule() -> None:
    assert side_of(exact(1.08), 1.10) == "bad"
    assert side_of(exact(1.01), 1.10) == "good"
    assert side_of(Paired(1.05, 1.03, 1.07, 0.95, 30), 1.10) == "unclear"
    assert side_of(exact(0.86), 0.85) == "bad"
    assert side_of(exact(0.99), 0.85) == "good"


def test_a_planted_ten_percent_through_block_noise_is_found_20_of_20_in_7_steps() -> None:
    """Each step: 20 blocks whose ratio carries 4 % noise (lognormal), as an interleaved
    run of two variants does on this machine, and the change of 10 % at a random
    version of 16. The answer must be that version every time."""
    rng = random.Random(44)
    found = 0
    for _ in range(20):
        k = rng.randrange(1, 16)

        def measure(index: int, attempt: int, k: int = k) -> Paired | None:
            true = 1.10 if index >= k else 1.0
            blocks = 20 * attempt
            base = [rng.lognormvariate(0, 0.03) for _ in range(blocks)]
            other = [b * true * rng.lognormvariate(0, 0.04) for b in base]
            return paired(base, other)

        out = bisect(VERSIONS, measure, 0.05)
        assert len(out.steps) <= 7
        found += out.first_bad == k
    assert found == 20


def test_the_answer_names_the_version_its_ratio_and_the_one_before() -> None:
    from pathlib import Path

    from vcsbench.report.bisect_text import answer, names, step_line

    chain = [f"git-pygit2[version={v}]" for v in VERSIONS]
    measure, _ = chain_with_change_at(9, size=0.85)
    lines: list[str] = []
    out = bisect(chain, measure, 0.05, say=lambda s: lines.append(step_line(s, chain)))
    text = answer(out, "create+commit · payload hello · fs tmpfs", Path("results/b"))
    assert names(chain) == VERSIONS
    assert text.startswith(
        "**1.9.0 is the first version where it changed**: 0.850x [0.833–0.867] of 1.0.0 "
        "(create+commit · payload hello · fs tmpfs, 15.0% faster), where 1.8.0, the last "
        "version like "
        "1.0.0, read 1.000x [0.980–1.020]. That step holds 100% of the change"
    )
    assert len(lines) == len(out.steps) == 5
    assert (
        lines[0].startswith("step 1   1.15.0  0.850x [0.833–0.867]")
        and "the change to find" in lines[0]
    )
    assert f"| 5 | {VERSIONS[out.steps[-1].index]} |" in text


@pytest.mark.parametrize(
    ("crossing", "says"),
    [
        ((8,), "Not certain: step 3 read across the halfway point twice and was decided by its "
         "median."),
        ((8, 12), "Not certain: steps 3 and 5 read across the halfway point twice and were "
         "decided by their medians."),
    ],
)  # fmt: skip
def test_the_answer_says_which_steps_were_not_certain(crossing: tuple[int, ...], says: str) -> None:
    """Each version in ``crossing`` reads across the halfway point at both tries."""
    from pathlib import Path

    from vcsbench.report.bisect_text import answer

    def measure(index: int, attempt: int) -> Paired:
        if index == 15:
            return exact(1.10)
        if index in crossing:  # halfway is 1.0488: 8 on the good side of it, 12 the bad
            return (
                Paired(1.04, 1.02, 1.07, 0.95, 30)
                if index == 8
                else Paired(1.06, 1.03, 1.08, 0.95, 30)
            )
        return exact(1.10 if index > 12 else 1.0)

    out = bisect(VERSIONS, measure, 0.05)
    assert says in answer(out, "commit · payload hello · fs tmpfs", Path("b"))


def test_a_count_bisection_takes_the_halfway_point_and_says_which_count() -> None:
    """Instructions steady within 0.2 % a round, 2 % more from version 5 of 9: found in
    1 + ceil(log2(8)) = 4 runs, by instructions, with no count named by the caller."""
    from vcsbench.judge.count_bisection import bisect_counts
    from vcsbench.results.counted import Counted

    jitter = (0, 1_800, -900, 2_600, -1_500)
    versions = [f"v{i}" for i in range(9)]

    def measure(indices: list[int]) -> dict[int, Counted]:
        return {
            i: Counted(
                ok=[True] * 5,
                values={
                    "instructions": [1_870_000 + (37_400 if i >= 5 else 0) + j for j in jitter],
                    "sync_calls": [7] * 5,
                },
            )
            for i in indices
        }

    outcome = bisect_counts(versions, measure)
    assert (outcome.last_good, outcome.first_bad) == (4, 5)
    assert outcome.by == "instructions" and outcome.runs == 4
