"""The headline over several runs of one machine: each run's row, then a row over them whose
ratios take each run's by-block ratio as one sample, the run as the unit.

The frozen result (git-pygit2 and svn-fs create+commit) edited into runs in which the two
backends ran interleaved, svn-fs a known multiple of git-pygit2 in every block."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path
from typing import Any

from helpers import REPO, edited_result, on_another_machine, scale_times, vcsbench

from vcsbench.results.layout import benchmark_part

TINY = REPO / "tests" / "data" / "tiny-ext4.json"
BLOCKS = 6


def interleaved_run(tmp_path: Path, name: str, machine: float, svn: float) -> str:
    """A run of both backends interleaved, on a machine ``machine`` times as slow as the
    frozen result's, svn-fs ``svn`` times git-pygit2 in every block."""

    def edit(_: dict[str, Any], benches: list[dict[str, Any]]) -> None:
        levels = [machine * (1 + 0.03 * (k % 3)) for k in range(BLOCKS)]
        for member, bench in enumerate(benches):
            scale_times(bench, machine)
            factor = svn if bench["backend"]["name"] == "svn-fs" else 1.0
            bench["harness"]["interleaved"] = {
                "variants": ["git-pygit2", "svn-fs"],
                "blocks": BLOCKS,
                "rounds": [[2 * k, 2 * k + 2] for k in range(BLOCKS)],
                "position": [(k + member) % 2 for k in range(BLOCKS)],
                "median_ms": [level * factor for level in levels],
                "order_seed": 11,
                "cpu": 1,
                "process": "test",
                "method": "test",
            }

    return edited_result(TINY, tmp_path / f"{name}.json", edit)


def headline(stdout: str) -> list[str]:
    section = stdout.split("## Headline", 1)[1].split("\n\n", 3)[2]
    return [line for line in section.splitlines() if line.startswith("| create+commit")]


def expected(ratios: list[float]) -> str:
    """Their geometric mean and 95 % t interval, as the row over the runs writes it."""
    logs = [math.log(r) for r in ratios]
    t975 = {2: 12.706205, 3: 4.302653}[len(logs)]
    mean, half = statistics.mean(logs), t975 * statistics.stdev(logs) / math.sqrt(len(logs))
    low, high, value = math.exp(mean - half), math.exp(mean + half), math.exp(mean)
    return f"{value:.2f}x [{low:.2f}–{high:.2f}]"


def test_a_row_over_the_runs_takes_each_runs_blocks_as_one_sample(tmp_path: Path) -> None:
    """svn-fs 3.0x, 3.1x and 3.2x of git-pygit2 in three runs, the second on a machine 30 %
    slower: the row over the runs reads their geometric mean with the t interval over
    three (the machine's speed cancels in each run's blocks), git-pygit2 the fastest."""
    files = [
        interleaved_run(tmp_path, "one", 1.0, 3.0),
        interleaved_run(tmp_path, "two", 1.3, 3.1),
        interleaved_run(tmp_path, "three", 1.0, 3.2),
    ]
    result = vcsbench("report", *files)
    assert 0 == result.returncode, result.stderr
    rows = headline(result.stdout)
    assert 4 == len(rows), result.stdout
    over = [c.strip() for c in rows[3].split("|")[4:7]]
    assert ["over 3 runs", "(fastest)", expected([3.0, 3.1, 3.2])] == over
    assert 'A row "over N runs"' in result.stdout


def test_each_machine_gets_its_own_row_over_its_runs(tmp_path: Path) -> None:
    """Two runs on each of two machines, svn-fs 3.0x and 3.1x on one and 5.0x and 5.2x on
    the other: a row over the runs for each machine, never one over all four."""
    files = [
        interleaved_run(tmp_path, "one", 1.0, 3.0),
        interleaved_run(tmp_path, "two", 1.0, 3.1),
        interleaved_run(tmp_path, "three", 1.0, 5.0),
        interleaved_run(tmp_path, "four", 1.0, 5.2),
    ]
    for path in files[2:]:
        on_another_machine(path)
    result = vcsbench("report", *files)
    assert 0 == result.returncode, result.stderr
    over = [r for r in headline(result.stdout) if "over " in r]
    assert 2 == len(over), result.stdout
    assert "machine A, over 2 runs" in over[0] and expected([3.0, 3.1]) in over[0]
    assert "machine B, over 2 runs" in over[1] and expected([5.0, 5.2]) in over[1]


def test_no_row_over_runs_whose_backends_ran_one_after_the_other(tmp_path: Path) -> None:
    """Without blocks in common, a run's ratio carries the drift between the two
    benchmarks, the same way in every run (they run in the same order): no row over the
    runs is made of such ratios."""

    def plain(name: str, svn: float) -> str:
        def edit(_: dict[str, Any], benches: list[dict[str, Any]]) -> None:
            for bench in benches:
                if bench["backend"]["name"] == "svn-fs":
                    scale_times(bench, svn)

        return edited_result(TINY, tmp_path / f"{name}.json", edit)

    result = vcsbench("report", plain("one", 1.0), plain("two", 1.1))
    assert 0 == result.returncode, result.stderr
    assert not [r for r in headline(result.stdout) if "over " in r], result.stdout


def test_no_row_over_runs_of_two_releases(tmp_path: Path) -> None:
    """git-pygit2 in another release in the second run (a file from before an upgrade):
    the two runs are not runs of one thing, and no row is made over them."""
    files = [
        interleaved_run(tmp_path, "one", 1.0, 3.0),
        interleaved_run(tmp_path, "two", 1.0, 3.1),
    ]
    document = json.loads(Path(files[1]).read_text())
    for entry in document["benchmarks"]:
        backend = benchmark_part(entry)["backend"]
        if backend["name"] == "git-pygit2":
            backend["versions"]["pygit2"] = "1.15.1"
    Path(files[1]).write_text(json.dumps(document))
    result = vcsbench("report", *files)
    assert 0 == result.returncode, result.stderr
    rows = headline(result.stdout)
    assert 4 == len(rows) and "run two, pygit2 1.15.1" in rows[1], result.stdout
    assert not [r for r in rows if "over " in r], result.stdout
