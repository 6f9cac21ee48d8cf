"""compare widens a calibration that was too tight with the spread the results store saw
between the benchmark's earlier runs (vcsbench.store.earlier)."""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

from helpers import REPO, canary_beside, edited_result, scale_times, vcsbench

from vcsbench.results.layout import run_facts
from vcsbench.results.spread import Seen, SpreadCell, own_spread
from vcsbench.store.earlier import spreads
from vcsbench.store.rows import Point

TINY = REPO / "tests" / "data" / "tiny-ext4.json"


def calibration() -> dict[str, Any]:
    """A calibration of 8 runs whose medians moved 1 % (a quiet few minutes), the canary
    not tracking them: the median alone is the figure."""
    medians = [9.9, 10.1, 10.0, 10.2, 9.8, 10.0, 10.1, 9.9]
    canaries = [1.0, 1.02, 0.97, 1.01, 1.03, 0.98, 1.0, 0.99]
    cells = []
    for backend in ("git-pygit2", "svn-fs"):
        cell = SpreadCell(
            backend,
            "create+commit",
            "ext4",
            100,
            {"time": tuple(medians), "canary": tuple(canaries)},
        ).to_json()
        cells.append(cell)
    return {
        "fingerprint": "test",
        "machine": "the test's",
        "measured": "2026-11-27T08:00:00+00:00",
        "command": "vcsbench doctor --spread (synthetic)",
        "runs": 8,
        "cells": cells,
    }


def run_file(tmp_path: Path, name: str, when: str, factor: float) -> str:
    """The frozen result ``factor`` times as slow, started at ``when``, a run of its own."""

    def edit(document: dict[str, Any], benches: list[dict[str, Any]]) -> None:
        document["datetime"] = when
        run_facts(document)["run_id"] = f"test-{name}"
        run_facts(document)["spread"] = calibration()
        for bench in benches:
            scale_times(bench, factor)
            canary_beside(bench, 1.0)

    return edited_result(TINY, tmp_path / f"{name}.json", edit)


def time_line(stdout: str) -> str:
    return next(line for line in stdout.splitlines() if "git-pygit2 create+commit" in line)


def stored(tmp_path: Path, hour: int, seed: int) -> Path:
    """A store of 20 runs, one a minute from ``hour``:00, whose level moved 6 % (lognormal)
    from run to run."""
    rng = random.Random(seed)
    store = tmp_path / "store.sqlite"
    runs = [
        run_file(
            tmp_path, f"s{i:02d}", f"2026-11-27T{hour:02d}:{i:02d}:00+00:00",
            rng.lognormvariate(0, 0.06),
        )
        for i in range(20)
    ]  # fmt: skip
    added = vcsbench("store", "add", *runs, "--store", str(store))
    assert 0 == added.returncode, added.stderr
    return store


def test_a_drift_the_store_saw_gives_no_verdict_and_a_change_beyond_it_one(tmp_path: Path) -> None:
    """Twenty earlier runs whose level moved 6 % from run to run (the machine over an
    hour); a calibration of ±1 %. An A/A pair 1.10x apart reads "slower" on the
    calibration alone, and nothing once the store's spread is used; 1.50x still reads
    slower."""
    store = stored(tmp_path, hour=9, seed=47)
    a = run_file(tmp_path, "a", "2026-11-27T10:00:00+00:00", 1.0)
    b = run_file(tmp_path, "b", "2026-11-27T10:01:00+00:00", 1.10)
    c = run_file(tmp_path, "c", "2026-11-27T10:02:00+00:00", 1.50)
    alone = vcsbench("compare", a, b, "--store", "none")
    assert "1.10x slower (" in time_line(alone.stdout), alone.stdout
    widened = vcsbench("compare", a, b, "--store", str(store))
    assert 0 == widened.returncode, widened.stderr
    line = time_line(widened.stdout)
    assert "~ 1.10x [" in line and "within run-to-run spread" in line, line
    assert "from the store's 20 earlier runs" in widened.stdout
    changed = vcsbench("compare", a, c, "--store", str(store))
    assert "1.50x slower (" in time_line(changed.stdout), changed.stdout


def test_runs_after_the_ones_compared_are_not_used(tmp_path: Path) -> None:
    """The store's spread is of runs before the compared ones: later ones, however
    noisy, leave the calibration's verdict as it was."""
    store = stored(tmp_path, hour=11, seed=3)
    a = run_file(tmp_path, "a", "2026-11-27T10:00:00+00:00", 1.0)
    b = run_file(tmp_path, "b", "2026-11-27T10:01:00+00:00", 1.10)
    result = vcsbench("compare", a, b, "--store", str(store))
    assert "1.10x slower (" in time_line(result.stdout) and "store's" not in result.stdout


def point(median: float) -> Point:
    return Point(
        "2026-11-27T09:00:00", median, 1.0, 0.5, median, median / 0.5, 1.0, 100, 0, "", "v", "p", ""
    )


def test_the_stored_spread_of_a_known_noise_and_a_step() -> None:
    """30 runs with 5 % lognormal noise: the spread read within a quarter of 5 %; a real
    10 % step halfway (one neighbouring difference of 29) widens it by under a tenth;
    fewer than 6 runs: none."""
    rng = random.Random(1)
    noise = [rng.lognormvariate(0, 0.05) for _ in range(30)]
    found = spreads([point(10 * v) for v in noise])["time"]
    assert isinstance(found, Seen) and found.runs == 30 and found.df == 19
    assert abs(found.sd - 0.05) < 0.0125, found.sd
    steps = [10 * v * (1.1 if i >= 15 else 1) for i, v in enumerate(noise)]
    stepped = spreads([point(v) for v in steps])["time"]
    assert found.sd < stepped.sd < 1.1 * found.sd
    assert spreads([point(10.0 * v) for v in noise[:5]]) == {}
    assert own_spread([math.log(v) for v in noise[:3]]) is None


def test_a_calibration_wider_than_the_store_keeps_its_own() -> None:
    cell = SpreadCell("svn-fs", "commit", "ext4", 100, {"time": (9.0, 10.0, 11.0, 10.0)})
    widened = cell.with_seen({"time": Seen(0.01, 30, "2026-11-27")})
    assert widened.sd_log() == cell.sd_log() and widened.df() == 3
    assert widened.basis() == "this machine's calibration (4 runs)"
    wider = cell.with_seen({"time": Seen(0.2, 30, "2026-11-27T09:00")})
    assert wider.sd_log() == 0.2 and wider.df() == 19
    assert "30 earlier runs in the store (since 2026-11-27)" in wider.basis()


def test_a_store_named_that_is_not_there_is_one_line(tmp_path: Path) -> None:
    a = run_file(tmp_path, "a", "2026-11-27T10:00:00+00:00", 1.0)
    result = vcsbench("compare", a, a, "--store", str(tmp_path / "nope.sqlite"))
    assert result.returncode == 2
    assert "nope.sqlite: no store there" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
