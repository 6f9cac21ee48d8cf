"""The canary between runs: fixed work beside the rounds takes the machine's drift out of
a time verdict where this machine's calibration shows it moves with the benchmarks, and
withholds the verdict where the machine moved and the canary does not track them.

Synthetic machines and runs of known drift and known change (the statistic), and the
frozen result with its rounds and its canary scaled by known factors (``compare``)."""

from __future__ import annotations

import json
import math
import os
import random
import statistics
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from helpers import REPO, canary_beside, edited_result, scale_times, vcsbench

from vcsbench.bench import canary as canary_module
from vcsbench.bench.canary import MOST, CanaryTimer, summary
from vcsbench.judge.verdict import ALPHA, between
from vcsbench.results.canary import Canary
from vcsbench.results.layout import run_facts
from vcsbench.results.rounds import Rounds
from vcsbench.results.spread import SpreadCell

TINY = REPO / "tests" / "data" / "tiny-ext4.json"
DRIFT = 0.10
"""The machine's level between runs (log sd): what this project's machine type showed for
svn-fs commit on ext4 on a noisy day."""
OWN = 0.015
"""What moves a run's median apart from the machine (its own sampling, log sd)."""


def machine_runs(rng: random.Random, runs: int, change: float = 1.0) -> list[tuple[float, float]]:
    """``runs`` runs' (median, canary) on a machine whose level drifts by ``DRIFT``; the
    canary moves with it, the median too and by ``OWN`` of its own."""
    found = []
    for _ in range(runs):
        level = math.exp(rng.gauss(0, DRIFT))
        found.append((10.0 * level * change * math.exp(rng.gauss(0, OWN)), 1.0 * level))
    return found


def cell_from(runs: list[tuple[float, float]], writes: list[float] | None = None) -> SpreadCell:
    """A calibration of these (median, canary) runs, and the canary's writes if given."""
    figures = {
        "time": tuple(t for t, _ in runs),
        "time_per_canary": tuple(t / c for t, c in runs),
        "canary": tuple(c for _, c in runs),
    }
    if writes is not None:
        figures["time_per_writes"] = tuple(t / w for (t, _), w in zip(runs, writes, strict=True))
    return SpreadCell("svn-fs", "commit", "ext4", 100, figures)


def test_against_the_canary_drift_gives_no_verdict_and_a_tenth_is_found() -> None:
    """Three runs a side on a machine that drifts 10 % between runs: the medians alone
    read a 10 % slowdown less than half the time; over the canary (which this machine's
    calibration picks) the A/A reads a change at most at the rate asked and the 10 %
    slowdown at least 19 times in 20."""
    rng = random.Random(3)
    trials, false, found, raw_found = 1000, 0, 0, 0

    def over(runs: list[tuple[float, float]]) -> list[float | None]:
        return [t / c for t, c in runs]

    for _ in range(trials):
        cell = cell_from(machine_runs(rng, 8))
        assert cell.time_figure() == "time_per_canary"
        base, same = machine_runs(rng, 3), machine_runs(rng, 3)
        slower = machine_runs(rng, 3, change=1.10)
        false += between("time", over(base), over(same), cell, figure="time_per_canary").significant
        found += between(
            "time", over(base), over(slower), cell, figure="time_per_canary"
        ).significant
        raw = between("time", [t for t, _ in base], [t for t, _ in slower], cell)
        raw_found += raw.significant
    assert false / trials <= 2 * ALPHA, false
    assert found / trials >= 0.95, found
    assert raw_found / trials < 0.5, raw_found


def test_a_canary_that_does_not_track_the_benchmark_is_not_used() -> None:
    """Where the canary moves apart from the benchmark, dividing by it adds its spread:
    the calibration keeps the median alone."""
    rng = random.Random(5)
    runs = [(10 * math.exp(rng.gauss(0, 0.02)), math.exp(rng.gauss(0, 0.10))) for _ in range(8)]
    assert cell_from(runs).time_figure() == "time"


def test_the_calibration_picks_the_canarys_writes_where_they_track_the_benchmark() -> None:
    """A backend that does not flush moves with the canary's writes, not with its fsync:
    the calibration picks the writes; one that flushes, the whole canary."""
    rng = random.Random(9)
    levels = [math.exp(rng.gauss(0, DRIFT)) for _ in range(8)]
    flushes = [math.exp(rng.gauss(0, DRIFT)) for _ in range(8)]
    own = [math.exp(rng.gauss(0, OWN)) for _ in range(8)]
    no_flush = [(10 * lv * o, lv * f) for lv, f, o in zip(levels, flushes, own, strict=True)]
    assert cell_from(no_flush, writes=levels).time_figure() == "time_per_writes"
    flushing = [(10 * f * o, f) for f, o in zip(flushes, own, strict=True)]
    assert cell_from(flushing, writes=levels).time_figure() == "time_per_canary"


# -- compare, with the canaries in the files -----------------------------------------------


def spread(runs: list[tuple[float, float]]) -> dict[str, Any]:
    cells = []
    for backend in ("git-pygit2", "svn-fs"):
        cell = cell_from(runs).to_json()
        cell.update(backend=backend, op="create+commit")
        cells.append(cell)
    return {
        "fingerprint": "test",
        "machine": "the test's",
        "measured": "2026-11-27T00:00:00+00:00",
        "command": "vcsbench run (synthetic)",
        "runs": len(runs),
        "cells": cells,
    }


def run_file(
    tmp_path: Path, name: str, machine: float, change: float, runs: list[tuple[float, float]]
) -> str:
    """The frozen result on a machine ``machine`` times as slow (the rounds and the canary
    both), its benchmarks ``change`` times as slow besides, recording the calibration
    ``runs``."""

    def edit(document: dict[str, Any], benches: list[dict[str, Any]]) -> None:
        for bench in benches:
            scale_times(bench, machine * change)
            canary_beside(bench, 1.0 * machine)
        run_facts(document)["spread"] = spread(runs)

    return edited_result(TINY, tmp_path / f"{name}.json", edit)


def time_line(stdout: str) -> str:
    return next(line for line in stdout.splitlines() if "git-pygit2 create+commit" in line)


def test_compare_takes_the_machines_drift_out_against_the_canary(tmp_path: Path) -> None:
    """The machine 30 % slower in the other run, the benchmark not: no verdict. The
    benchmark 15 % slower on the same machine: a verdict, said to be against the canary."""
    # A calibration whose canary moves 10 % with the medians and whose medians move 1 %
    # of their own: the figure over the canary moves 1 %.
    levels = [0.85, 0.9, 0.95, 1.0, 1.05, 1.1, 1.15, 1.2]
    own = [1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 1.01, 0.99]
    runs = [(10 * lv * o, lv) for lv, o in zip(levels, own, strict=True)]
    base = run_file(tmp_path, "a", 1.0, 1.0, runs)
    drifted = vcsbench("compare", base, run_file(tmp_path, "b", 1.3, 1.0, runs))
    assert 0 == drifted.returncode, drifted.stderr
    line = time_line(drifted.stdout)
    assert "~ 1.00x [" in line and "against the canary: within run-to-run spread" in line
    assert "slower" not in drifted.stdout
    assert "(against the canary ±1.3%)" in drifted.stdout
    changed = vcsbench("compare", base, run_file(tmp_path, "c", 1.0, 1.15, runs))
    assert "1.15x slower (1.15x [" in time_line(changed.stdout)
    assert "against the canary)" in time_line(changed.stdout)


def test_compare_withholds_the_verdict_where_the_machine_moved(tmp_path: Path) -> None:
    """A calibration whose canary does not track the medians (the median alone is used):
    the machine 40 % slower in the other run reads as no verdict, and says the canary
    moved, where the median alone would say 1.40x slower."""
    canaries = [0.99, 1.01, 1.0, 0.98, 1.02, 1.0, 0.99, 1.01]
    medians = [9.9, 10.2, 10.0, 10.1, 9.8, 10.0, 10.3, 9.7]
    runs = list(zip(medians, canaries, strict=True))
    result = vcsbench(
        "compare", run_file(tmp_path, "a", 1.0, 1.0, runs), run_file(tmp_path, "b", 1.4, 1.0, runs)
    )
    assert 0 == result.returncode, result.stderr
    line = time_line(result.stdout)
    assert "~ 1.40x [" in line
    assert "no verdict: the machine moved between the runs (its canary 1.40x)" in line


# -- each round over the canary after it ---------------------------------------------------


def paired_run(rng: random.Random, rounds: int = 100) -> tuple[Rounds, Canary]:
    """One run of ``rounds`` rounds on a machine whose speed changes from round to round
    (log sd 10 %), the canary after each round as slow as that round's machine; each
    round's own work varies 5 % of its own."""
    walls, each = [], []
    for _ in range(rounds):
        machine = math.exp(rng.gauss(0, 0.10))
        walls.append(round(10_000_000 * machine * math.exp(rng.gauss(0, 0.05))))
        each.append((round(1000 * machine), round(300 * machine)))
    canary = summary([1000 * w for w, _ in each], [1000 * p for _, p in each])
    assert canary is not None
    return Rounds([], walls, [True] * rounds, {}), canary


def test_each_round_over_the_canary_after_it_takes_out_drift_as_fast_as_a_round() -> None:
    """On a machine that drifts from one round to the next, each round over the canary
    timed after it moves between runs as little as the rounds' own work lets it (5 % a
    round, about 0.6 % for the median of 100); the medians' ratio keeps the drift's
    sampling error besides (0.99 % against 0.62 % here)."""
    rng = random.Random(11)
    paired, medians = [], []
    for _ in range(200):
        rounds, canary = paired_run(rng)
        per = canary.per_round(rounds)
        assert per is not None
        paired.append(math.log(per))
        medians.append(math.log(statistics.median(rounds.wall_ns) / 1000 / (canary.ms * 1000)))
        assert canary.per_round(rounds, writes=True) == pytest.approx(per * 1000 / 300, rel=0.01)
    assert statistics.mean(paired) == pytest.approx(math.log(10), abs=0.005)
    assert statistics.stdev(paired) < 0.008
    assert statistics.stdev(medians) > 1.4 * statistics.stdev(paired)


def test_a_round_is_over_the_canary_of_its_stretch_and_failures_line_up_or_none() -> None:
    """After every 2nd round, rounds 0-1 over the first canary, 2-3 the second, the fifth
    (past the last) over the second; a failed round is left out; timings that do not line
    up one for one with the rounds (a canary failed) give no figure."""
    rounds = Rounds([], [2_000, 4_000, 9_000, 12_000, 15_000], [True, True, False, True, True], {})
    canary = Canary(1.0, 2, 2, "test", 0.5, ((1, 1), (3, 1)))
    # ratios: 2, 4, (failed), 4, 5 -> median 4
    assert canary.per_round(rounds) == 4.0
    assert canary.per_round(rounds, writes=True) == 8.0  # 2, 4, 12, 15
    short = Canary(1.0, 1, 2, "test", 0.5, ((1, 1),))
    assert short.per_round(rounds) is None
    assert Canary(1.0, 2, 2, "test").per_round(rounds) is None  # a file without its timings


# -- the canary itself ---------------------------------------------------------------------


def test_the_canary_reports_the_time_its_work_took_and_leaves_nothing(tmp_path: Path) -> None:
    ticks = iter([0, 1_000_000, 2_500_000, 10_000_000, 10_500_000, 13_000_000])
    timer = CanaryTimer(tmp_path / "canary", 100, clock=lambda: next(ticks))
    took = [timer.time_once(), timer.time_once()]
    assert took == [(2_500_000, 1_000_000), (3_000_000, 500_000)]
    canary = summary([t[0] for t in took if t], [t[1] for t in took if t])
    assert canary is not None and (canary.ms, canary.writes_ms, canary.timed) == (2.75, 0.75, 2)
    assert canary.each_us == ((2500, 1000), (3000, 500))
    assert Canary.from_json(json.loads(json.dumps(canary.to_json())), "canary") == canary
    assert list((tmp_path / "canary").iterdir()) == []
    assert all(timer.due(i) for i in range(100))


def test_a_long_run_times_the_canary_at_most_most_times_evenly(tmp_path: Path) -> None:
    """10,000 rounds: after every 50th (200 timings); 300: every 2nd (150); up to 200
    rounds after each; the result says which."""
    long, mid = CanaryTimer(tmp_path / "a", 10_000), CanaryTimer(tmp_path / "b", 300)
    short = CanaryTimer(tmp_path / "c", 100)
    due = [i for i in range(10_000) if long.due(i)]
    assert (long.every, len(due), due[:2], due[-1]) == (50, MOST, [49, 99], 9_999)
    assert (mid.every, sum(mid.due(i) for i in range(300))) == (2, 150)
    assert (short.every, sum(short.due(i) for i in range(100))) == (1, 100)
    canary = summary([1_000_000] * 3, [500_000] * 3, long.every)
    assert canary is not None and canary.every == 50
    assert canary.method.startswith("after every 50th round")
    each = summary([1_000_000], [500_000], short.every)
    assert each is not None and each.method.startswith("after every round,")
    second = summary([1_000_000], [500_000], mid.every)
    assert second is not None and second.method.startswith("after every 2nd round,")
    assert [canary_module.ordinal(n) for n in (3, 11, 12, 13, 21, 22, 112, 50)] == [
        "3rd",
        "11th",
        "12th",
        "13th",
        "21st",
        "22nd",
        "112th",
        "50th",
    ]


def test_the_canary_removes_what_it_did_not_expect_to_find_too(tmp_path: Path) -> None:
    """A file beside the canary's own in its directory (made between its writes and its
    removal) goes with it: the directory is removed whole."""
    timer = CanaryTimer(tmp_path / "canary", 10)
    real_stat = os.stat

    def stat_and_litter(path: object, *args: object, **kwargs: object) -> os.stat_result:
        extra = Path(str(path)).parent / "extra"
        if not os.path.lexists(extra):
            extra.write_text("x")
        return real_stat(path, *args, **kwargs)  # type: ignore[arg-type]

    with mock.patch("vcsbench.bench.canary.os.stat", stat_and_litter):
        assert timer.time_once() is not None
    assert list((tmp_path / "canary").iterdir()) == []


def test_a_canary_that_fails_is_counted_never_a_sample(tmp_path: Path) -> None:
    blocked = tmp_path / "canary"
    blocked.write_text("a file where the canary's directory would go")
    timer = CanaryTimer(blocked, 100)
    assert timer.time_once() is None and timer.failed == 1
    assert summary([], []) is None
