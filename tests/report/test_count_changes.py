"""compare names what changed in the system calls an operation made: exactly, at one run a
side, where every round of each side made the same count; where a count moves between
rounds (git's fan-out directories, made or not with what each commit hashes to), it says
so and gives no verdict."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers import REPO, edited_result, vcsbench

from vcsbench.results.layout import run_facts

TINY = REPO / "tests" / "data" / "tiny-ext4.json"


def with_calls(tmp_path: Path, name: str, counts: dict[str, list[int]]) -> str:
    """The frozen run with these per-round counts in every benchmark (a list shorter than
    the rounds repeats)."""

    def edit(document: dict[str, Any], benches: list[dict[str, Any]]) -> None:
        run_facts(document)["run_id"] = f"run-{name}"
        for bench in benches:
            rounds = len(bench["rounds"]["wall_ns"])
            for metric, given in counts.items():
                values = [given[i % len(given)] for i in range(rounds)]
                bench["rounds"]["values"][metric] = values
                bench["rounds"].setdefault("unit", {})[metric] = "calls"
                bench["metrics"][metric] = {
                    "unit": "calls", "total": sum(values), "per_repo": sum(values) / rounds
                }  # fmt: skip

    return edited_result(TINY, tmp_path / f"{name}.json", edit)


def test_one_more_fsync_and_two_renames_are_named_at_one_run_a_side(tmp_path: Path) -> None:
    base = with_calls(tmp_path, "a", {"sync_calls": [7], "rename_calls": [5], "mkdir_calls": [1]})
    other = with_calls(tmp_path, "b", {"sync_calls": [8], "rename_calls": [7], "mkdir_calls": [1]})
    found = vcsbench("compare", base, other)
    assert 0 == found.returncode, found.stderr
    assert "Counts that changed, per operation (at one run a side):" in found.stdout
    lines = [x for x in found.stdout.splitlines() if x.startswith("- ")]
    assert len(lines) == 2  # both benchmarks of the file
    for line in lines:
        assert (
            "+1 fsync-family calls (7 → 8, in every round), +2 renames (5 → 7, in every round)"
            in line
        ), line
        assert "mkdirs" not in line


def test_the_same_counts_and_counts_that_move_between_rounds_give_no_verdict(
    tmp_path: Path,
) -> None:
    """The same count on both sides: nothing said. A count that moves between rounds --
    as a git-pygit2 commit's mkdirs did in an A/A pair on ext4: 2 or 3 in the base's
    rounds, 3 in every round of the other, p=3.7e-07 on the rounds taken as independent
    draws, which they are not -- is said to move, with no verdict, and fails a gate."""
    base = with_calls(tmp_path, "a", {"sync_calls": [7], "mkdir_calls": [2, 3, 2, 2, 3]})
    other = with_calls(tmp_path, "b", {"sync_calls": [7], "mkdir_calls": [3]})
    found = vcsbench("compare", base, other)
    assert 0 == found.returncode, found.stderr
    assert "Counts that changed" not in found.stdout
    assert "mkdirs: it moves between rounds by 50 % of its median: no verdict" in found.stdout
    gated = vcsbench("compare", base, other, "--fail-on", "mkdir_calls:10%")
    assert 1 == gated.returncode
    assert "mkdir_calls: cannot judge: it moves between rounds" in gated.stdout + gated.stderr


def test_a_gate_on_a_count_fails_one_more_fsync_from_none_and_passes_the_same(
    tmp_path: Path,
) -> None:
    """One run a side, no spread measured: a count the same in every round is judged all
    the same. 0 → 1 fsync-family call fails any limit; 5 → 5 renames passes, said so."""
    base = with_calls(tmp_path, "a", {"sync_calls": [0], "rename_calls": [5]})
    other = with_calls(tmp_path, "b", {"sync_calls": [1], "rename_calls": [5]})
    found = vcsbench("compare", base, other, "--fail-on", "sync_calls:50%,rename_calls:1%")
    assert 1 == found.returncode, found.stdout + found.stderr
    text = found.stdout + found.stderr
    assert "sync_calls 0 → 1 per operation, the same in every round: exceeds +50%" in text
    assert "rename_calls 5 → 5 per operation, the same in every round: within +1%" in text
    same = vcsbench("compare", base, base, "--fail-on", "sync_calls:1%,rename_calls:1%")
    assert 0 == same.returncode, same.stdout + same.stderr
