"""A report that holds one backend in several releases names each row's release, and
gives its ratios in one direction: to the baseline given, else to the fastest."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from helpers import REPO, edited_result, scale_times, vcsbench

from vcsbench.results.layout import benchmark_part

TINY = REPO / "tests" / "data" / "tiny-tmpfs.json"
OLD = {"pygit2": "1.15.1", "libgit2": "1.8.1"}


def with_old_release(document: dict[str, Any], benches: list[dict[str, Any]]) -> None:
    """The git-pygit2 benchmark again, as ``git-pygit2[version=1.15.1]`` on an older
    pygit2 and libgit2, every round 1.25 times as long."""
    entry = next(e for e in document["benchmarks"] if "pygit2" in e["name"])
    old = copy.deepcopy(entry)
    mine = benchmark_part(old)
    mine["backend"]["variant"] = "git-pygit2[version=1.15.1]"
    mine["backend"]["versions"].update(OLD)
    scale_times(mine, 1.25)
    old["name"] += "-old"
    document["benchmarks"].append(old)


def report(*files: str, baseline: str = "") -> str:
    args = ["--baseline", baseline] if baseline else []
    result = vcsbench("report", *files, "--format", "md", *args)
    assert 0 == result.returncode, result.stderr
    return result.stdout


def header_of(text: str, first: str) -> list[str]:
    """The cells of the first table header line that starts with ``| first``."""
    line = next(x for x in text.splitlines() if x.startswith(f"| {first} "))
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_each_row_names_its_release_where_the_report_holds_two(tmp_path: Path) -> None:
    both = edited_result(TINY, tmp_path / "both.json", with_old_release)
    text = report(both, baseline="git-pygit2")
    new = "git-pygit2 (pygit2 1.21.0, libgit2 1.9.7)"
    old = "git-pygit2[version=1.15.1] (pygit2 1.15.1, libgit2 1.8.1)"
    # the headline: a column per variant, each named with its release; svn-fs has one
    assert header_of(text, "operation")[3:] == [new, old, "svn-fs"]
    row = next(x for x in text.splitlines() if x.startswith("| create+commit "))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[3].endswith("(baseline)") and "1.25x" in cells[4]
    # the details: its rows so named, and one ratio column, to the baseline given
    details = header_of(text, "backend")
    assert "vs git-pygit2" in details and "vs fastest" not in details
    assert f"| {old} " in text.replace("  ", " ")  # the row's label
    # without a baseline: to the fastest, and still one column
    plain = header_of(report(both), "backend")
    assert "vs fastest" in plain and not any(c.startswith("vs git") for c in plain)


def test_one_variant_in_two_files_of_two_releases_says_it_in_each_row(tmp_path: Path) -> None:
    def upgraded(document: dict[str, Any], benches: list[dict[str, Any]]) -> None:
        for bench in benches:
            if bench["backend"]["name"] == "git-pygit2":
                bench["backend"]["versions"]["pygit2"] = "1.22.0"

    before = str(tmp_path / "before.json")
    Path(before).write_text(json.dumps(json.loads(TINY.read_text())))
    after = edited_result(TINY, tmp_path / "after.json", upgraded)
    text = report(before, after)
    rows = [x for x in text.splitlines() if x.startswith("| create+commit ")][:2]
    assert "run before, pygit2 1.21.0" in rows[0] and "run after, pygit2 1.22.0" in rows[1]
    assert header_of(text, "operation")[4:] == ["git-pygit2", "svn-fs"]
