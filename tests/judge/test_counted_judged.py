"""The counted rounds' counts judged at one run a side: exact ones by any difference,
steady ones (instructions) beyond 1 % where every pair of rounds of one index shows it,
moving ones not at all -- and the gate on them failing closed. Files with counts of known
size planted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import REPO, edited_result, vcsbench

from vcsbench.results.counted import Counted
from vcsbench.results.layout import run_facts
from vcsbench.results.schema import SchemaError

TINY = REPO / "tests" / "data" / "tiny-ext4.json"
JITTER = (0, 1_800, -900, 2_600, -1_500)
"""How instructions moved between five counted rounds of a git-pygit2 commit (±0.2 %)."""


def with_counted(tmp_path: Path, name: str, values: dict[str, list[int]]) -> str:
    def edit(document: dict[str, Any], benches: list[dict[str, Any]]) -> None:
        run_facts(document)["run_id"] = f"run-{name}"
        for bench in benches:
            rounds = len(next(iter(values.values())))
            bench["counted"] = {"ok": [True] * rounds, "values": values, "missing": {}}

    return edited_result(TINY, tmp_path / f"{name}.json", edit)


def instructions(level: int, shift: int = 0) -> list[int]:
    return [level + j + shift for j in JITTER]


def test_a_planted_two_percent_and_one_fsync_are_named(tmp_path: Path) -> None:
    base = with_counted(
        tmp_path, "a", {"instructions": instructions(1_870_000), "sync_calls": [0] * 5}
    )
    more = {"instructions": instructions(1_870_000, 37_400), "sync_calls": [1] * 5}
    other = with_counted(tmp_path, "b", more)
    found = vcsbench("compare", base, other)
    assert 0 == found.returncode, found.stderr
    lines = [x for x in found.stdout.splitlines() if x.startswith("- ")]
    assert lines, found.stdout
    for line in lines:
        assert "+1 fsync-family calls (0 → 1, in every counted round)" in line
        assert "+2.0 % instructions (1,870,000 → 1,907,400, medians)" in line


def test_the_same_build_twice_gives_no_count_verdict(tmp_path: Path) -> None:
    """A/A: the medians 0.2 % apart, as two runs of one build were at most here."""
    base = with_counted(
        tmp_path, "a", {"instructions": instructions(1_870_000), "sync_calls": [7] * 5}
    )
    again = {"instructions": instructions(1_870_000, 3_700), "sync_calls": [7] * 5}
    other = with_counted(tmp_path, "b", again)
    found = vcsbench("compare", base, other, "--fail-on", "instructions:2%,sync_calls:1%")
    assert 0 == found.returncode, found.stdout + found.stderr
    assert "Counts that changed" not in found.stdout
    assert "instructions 1,870,000 → 1,873,700 per operation (medians): within +2%" in found.stdout


def test_a_count_that_moves_or_too_few_rounds_gets_no_verdict_and_fails_a_gate(
    tmp_path: Path,
) -> None:
    """git-cli's commit: git reads a file again when its time stamp races the index's,
    1.6 or 11.2 million instructions a round."""
    racing = [1_600_000, 11_200_000, 1_600_000, 11_200_000, 1_600_000]
    base = with_counted(tmp_path, "a", {"instructions": racing})
    other = with_counted(tmp_path, "b", {"instructions": racing[::-1]})
    found = vcsbench("compare", base, other, "--fail-on", "instructions:5%")
    assert 1 == found.returncode
    text = found.stdout + found.stderr
    assert "instructions: it moves between counted rounds by 600 % of its median" in text
    assert "instructions: cannot judge: it moves between counted rounds" in text
    few_a = with_counted(tmp_path, "c", {"instructions": [1_000_000, 1_001_000]})
    few_b = with_counted(tmp_path, "d", {"instructions": [1_050_000, 1_051_000]})
    few = vcsbench("compare", few_a, few_b, "--fail-on", "instructions:1%")
    assert 1 == few.returncode
    assert "too few counted rounds (2 paired) for a verdict: --counted 3 or more" in few.stdout


def test_rounds_are_paired_by_index_and_must_agree(tmp_path: Path) -> None:
    """A round whose place in its process counts 1.6 % more (a git-pygit2 commit's second)
    on both sides: 2 % planted is named though the sides' rounds overlap; 2 % in three
    rounds of five and none in the others is no verdict, said."""
    second = [0, 30_000, 0, 0, 0]
    base = [1_870_000 + j + s for j, s in zip(JITTER, second, strict=True)]
    more = [round(v * 1.02) for v in base]
    a = with_counted(tmp_path, "a", {"instructions": base})
    b = with_counted(tmp_path, "b", {"instructions": more})
    found = vcsbench("compare", a, b)
    assert "+2.0 % instructions" in found.stdout, found.stdout
    part = [round(v * (1.02 if i < 3 else 1.0)) for i, v in enumerate(base)]
    c = with_counted(tmp_path, "c", {"instructions": part})
    split = vcsbench("compare", a, c)
    assert "Counts that changed" not in split.stdout
    assert "its counted rounds disagree: 3 of 5 moved by more than 0.5%" in split.stdout


def test_a_gate_on_a_count_nobody_counted_fails_closed(tmp_path: Path) -> None:
    plain = str(TINY)
    found = vcsbench("compare", plain, plain, "--fail-on", "open_calls:5%")
    assert 1 == found.returncode
    assert "open_calls not counted (no counted rounds (--counted N))" in found.stdout


@pytest.mark.parametrize(
    ("block", "refused"),
    [
        ({"ok": [True], "values": {"instructions": [1, 2]}}, "2 values but 1 counted rounds"),
        ({"ok": [True], "values": {"instructions": [10**19]}}, "is not a count"),
        ({"ok": [True], "values": {"instructions": [-1]}}, "is not a count"),
        ({"ok": [True], "values": {"instructions": [1.5]}}, "is not a count"),
        ({"ok": [True] * 10_001, "values": {}}, "over 10,000"),
        ({"ok": [True], "seconds": "a while"}, "is not a number of seconds"),
    ],
)
def test_a_bad_counted_block_is_refused_in_one_line(block: dict[str, Any], refused: str) -> None:
    with pytest.raises(SchemaError, match=refused):
        Counted.from_json(block, "counted")
