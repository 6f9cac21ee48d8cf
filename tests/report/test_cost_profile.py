"""The report's cost profile: what counted rounds counted, per operation, beside the time
ratio -- a file with known counts planted, and the figures the report gives for them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers import REPO, edited_result, vcsbench

TINY = REPO / "tests" / "data" / "tiny-ext4.json"
COUNTS = {
    "git-pygit2": {"instructions": [1_870_000] * 5, "sync_calls": [0] * 5, "write_calls": [6] * 5},
    "svn-fs": {
        "instructions": [4_650_000, 4_660_000, 4_680_000, 4_640_000, 4_660_000],
        "sync_calls": [7] * 5,
        "write_calls": [82] * 5,
    },
}


def with_profiles(tmp_path: Path) -> str:
    def edit(document: dict[str, Any], benches: list[dict[str, Any]]) -> None:
        for bench in benches:
            values = COUNTS[bench["backend"]["variant"]]
            bench["counted"] = {"ok": [True] * 5, "values": values, "seconds": 14.0}

    return edited_result(TINY, tmp_path / "profiled.json", edit)


def test_the_report_explains_a_time_ratio_by_the_counts_beside_it(tmp_path: Path) -> None:
    found = vcsbench("report", with_profiles(tmp_path))
    assert 0 == found.returncode, found.stderr
    text = found.stdout
    assert "Why, in counts" in text
    why = next(line for line in text.splitlines() if "M instructions" in line)
    assert "1.87 M instructions · 0 fsync · 6 writes" in why
    assert "4.66 M instructions (2.49x) · 7 fsync · 82 writes" in why
    assert "Cost profile per operation, from counted rounds" in text
    assert "(5 a benchmark, 28 s in all)" in text
    row = next(
        line for line in text.splitlines() if line.startswith("| svn-fs") and "4,640,000" in line
    )
    assert "4,640,000–4,680,000 (median 4,660,000.0)" in row
    cells = [cell.strip() for cell in row.split("|")]
    assert "7" in cells and "82" in cells  # fsync-family and write calls, exact


def test_a_file_without_counted_rounds_shows_no_profile(tmp_path: Path) -> None:
    found = vcsbench("report", str(TINY))
    assert 0 == found.returncode, found.stderr
    assert "Why, in counts" not in found.stdout
    assert "Cost profile" not in found.stdout
