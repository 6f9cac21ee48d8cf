"""Change points over a series: planted shifts of known size and place found where they
were planted, noise of the machine's known spread raising (almost) no alert, and the
machine's drift, which moves the canary too, raising none."""

from __future__ import annotations

import math
import random
import re
from pathlib import Path

import pytest
from helpers import planted_history_store, vcsbench

from vcsbench.judge.changes import change_points
from vcsbench.results.spread import SpreadCell

SPREAD = 0.021
"""svn-fs commit on ext4 over its canary, this project's machine type, 2026-11-27
(``vcsbench doctor --spread --fs ext4``)."""


def calibration(rng: random.Random, sd: float = SPREAD, runs: int = 8) -> SpreadCell:
    return SpreadCell(
        "svn-fs",
        "commit",
        "ext4",
        100,
        {"time": tuple(math.exp(rng.gauss(0, sd)) for _ in range(runs))},
    )


def series(
    rng: random.Random, shifts: dict[int, float], n: int = 60, sd: float = SPREAD
) -> list[float]:
    level, values = 0.0, []
    for i in range(n):
        level += math.log(shifts.get(i, 1.0))
        values.append(10 * math.exp(level + rng.gauss(0, sd)))
    return values


def test_a_planted_tenth_is_found_where_it_was_with_its_size() -> None:
    rng = random.Random(1)
    found = change_points(series(rng, {30: 1.10}), calibration(rng))
    assert len(found) == 1
    (point,) = found
    assert abs(point.index - 30) <= 2
    assert point.change.interval is not None
    low, high = point.change.interval
    assert low < 1.10 < high and point.change.ratio == pytest.approx(1.10, abs=0.03)


def test_the_goal_over_100_series_with_0_to_2_shifts_at_this_machines_spread() -> None:
    """100 series of 60 runs, each with 0-2 planted shifts of 10 % (up or down, at least 8
    runs apart), noise this machine's measured spread: at least 95 % of shifts found
    within 2 runs of where they were planted, at most 5 % of alerts false."""
    rng = random.Random(2026)
    planted = found = alerts = false = 0
    for _ in range(100):
        where: list[int] = []
        for _ in range(rng.choice((0, 1, 2))):
            while True:
                at = rng.randrange(5, 56)
                if all(abs(at - w) >= 8 for w in where):
                    where.append(at)
                    break
        shifts = {w: 1.10 ** rng.choice((1, -1)) for w in where}
        points = [c.index for c in change_points(series(rng, shifts), calibration(rng))]
        planted += len(where)
        found += sum(any(abs(c - w) <= 2 for c in points) for w in where)
        alerts += len(points)
        false += sum(all(abs(c - w) > 2 for w in where) for c in points)
    assert planted > 80
    assert found / planted >= 0.95, (found, planted)
    assert false / alerts <= 0.05, (false, alerts)


def test_noise_alone_raises_no_alert() -> None:
    rng = random.Random(3)
    alerts = sum(len(change_points(series(rng, {}), calibration(rng))) for _ in range(50))
    assert alerts <= 2  # at most 5 % of the 50 series: the goal's false-alert bound


# -- history, from the store ---------------------------------------------------------------


def test_history_finds_the_release_that_slowed_it_and_not_the_machine(tmp_path: Path) -> None:
    """Twelve runs: the machine 20 % slower from run 4 on (the canary with it), the
    benchmark 25 % slower from run 8 on with another library version. History over the
    canary names run 9 (the 9th; 0-based 8) as the benchmark's change with its size, and
    run 5 as the machine's, from the canary's own series."""
    store = planted_history_store(tmp_path)
    result = vcsbench("history", "git-pygit2 create+commit", "--store", str(store))
    assert 0 == result.returncode, result.stderr
    rows = {
        int(cells[0]): cells
        for line in result.stdout.splitlines()
        if line.startswith("| ")
        and (cells := [c.strip() for c in line.strip("|").split("|")])[0].isdigit()
    }
    assert len(rows) == 12
    size = re.fullmatch(r"(\d\.\d\d)x slower \[(\d\.\d\d)–(\d\.\d\d)\]", rows[9][-1])
    assert size is not None, rows[9]
    assert float(size[1]) == pytest.approx(1.25, abs=0.03)
    assert float(size[2]) < 1.25 < float(size[3])
    # the machine's step is the canary's: said as the machine's, at its run
    machine = re.fullmatch(
        r"the machine: canary (\d\.\d\d)x \[(\d\.\d\d)–(\d\.\d\d)\]", rows[5][-1]
    )
    assert machine is not None, rows[5]
    assert float(machine[2]) < 1.2 < float(machine[3])
    assert all(rows[i][-1] == "" for i in range(1, 13) if i not in (5, 9))
    assert "Change points on the rounds over the canary of 12 runs" in result.stdout
    overview = vcsbench("history", "--store", str(store))
    assert re.search(r"run 9: 1\.2\dx slower \[", overview.stdout), overview.stdout
    assert "the machine at run 5: canary 1.20x [" in overview.stdout
    assert "pygit2 9.9.9 (runs 9-12)" in overview.stdout
