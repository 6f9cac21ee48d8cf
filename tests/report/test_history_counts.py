"""history judges counts on every run: a planted step of one fsync a commit is named at
its run with no change of time beside it; a planted change of time with the counts the
same is said to be the machine's or the kernel's; a busy run's counts are judged."""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

from helpers import REPO, canary_beside, edited_result, scale_times, vcsbench

from vcsbench.results.layout import run_facts

JITTER = (0, 1_800, -900, 2_600, -1_500)


def run_file(tmp_path: Path, run: int, slower: float, syncs: int, busy: bool) -> str:
    rng = random.Random(run)

    def edit(document: dict[str, Any], benches: list[dict[str, Any]]) -> None:
        document["datetime"] = f"2026-12-{run + 1:02d}T10:00:00+00:00"
        run_facts(document)["run_id"] = f"run-{run}"
        for bench in benches:
            scale_times(bench, slower * math.exp(rng.gauss(0, 0.01)))
            canary_beside(bench, 1.0)
            level = 1_870_000 + rng.randint(-2_000, 2_000)  # two runs apart by 0.2 % at most
            bench["counted"] = {
                "ok": [True] * 5,
                "values": {
                    "instructions": [level + j for j in JITTER],
                    "sync_calls": [syncs] * 5,
                },
            }
            if busy:  # other processes used 1.5 CPUs beside it
                bench["sampler"]["samples"] = [{"t_s": 1.0, "others_cpu": 1.5, "runnable": 3}]

    return edited_result(
        REPO / "tests" / "data" / "tiny-ext4.json", tmp_path / f"r{run}.json", edit
    )


def test_history_names_a_count_step_and_says_whose_a_change_of_time_alone_is(
    tmp_path: Path,
) -> None:
    store = tmp_path / "s.sqlite"
    for run in range(12):
        slower = 1.3 if run >= 8 else 1.0  # time alone, from run 9: the machine's
        syncs = 8 if run >= 4 else 7  # one more fsync from run 5, time the same
        path = run_file(tmp_path, run, slower, syncs, busy=run == 4)
        assert 0 == vcsbench("store", "add", path, "--store", str(store)).returncode
    shown = vcsbench("history", "--store", str(store), "git-pygit2 create+commit")
    assert 0 == shown.returncode, shown.stderr
    rows = {
        cells[0]: cells
        for line in shown.stdout.splitlines()
        if line.startswith("| ") and (cells := [c.strip() for c in line.strip("|").split("|")])
    }
    # run 5 was busy: its time is not judged; its counts are, and one more fsync starts there
    assert "other processes used 1.50 CPUs" in rows["5"][6]  # the busy column
    assert "time not judged; counts: +1 fsync-family calls (7 → 8)" in rows["5"][-1]
    assert (
        "slower" in rows["9"][-1] and "in no count: the machine's or the kernel's" in rows["9"][-1]
    )
    for run in ("2", "3", "4", "6", "7", "8", "10", "11", "12"):
        assert "counts:" not in rows[run][-1], rows[run]
    # instructions moved under 0.2 % between runs: no step anywhere
    assert "instructions" not in "".join(cells[-1] for cells in rows.values())
