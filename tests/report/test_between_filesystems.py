"""Two filesystems between runs: each run's filesystems are set against the baseline of
their own run, several interleaved runs get a row with the run as the unit, and one run
on each of two filesystems gets no verdict, whichever way its canaries moved.

The frozen result edited into runs of known drift and known difference."""

from __future__ import annotations

import copy
import math
import statistics
from pathlib import Path
from typing import Any

from helpers import REPO, canary_beside, edited_result, on_another_machine, scale_times, vcsbench

from vcsbench.report.ratios import over_runs
from vcsbench.results.layout import benchmark_part, run_facts
from vcsbench.results.spread import SpreadCell

TINY = REPO / "tests" / "data" / "tiny-ext4.json"
EXT4 = "ext4:size=256M"
XFS = "xfs:size=256M"
BLOCKS = 6
BACKENDS = ("git-pygit2", "svn-fs")


def on_xfs(entry: dict[str, Any]) -> None:
    """A pytest-benchmark entry of the frozen result moved, in name, onto xfs."""
    for key in ("group", "name", "fullname", "param"):
        entry[key] = entry[key].replace(EXT4, XFS)
    entry["params"]["fs"] = XFS
    fs = benchmark_part(entry)["filesystem"]
    fs.update(spec=XFS, kind="xfs", fstype="xfs")
    benchmark_part(entry)["name"] = entry["name"]


def interleaved(bench: dict[str, Any], member: int, medians: list[float]) -> None:
    """The benchmark a member of an ext4/xfs group of one run, its blocks' medians given."""
    bench["harness"]["interleaved"] = {
        "variants": ["git-pygit2 on ext4", "git-pygit2 on xfs"],
        "blocks": BLOCKS,
        "rounds": [[2 * k, 2 * k + 2] for k in range(BLOCKS)],
        "position": [(k + member) % 2 for k in range(BLOCKS)],
        "median_ms": medians,
        "order_seed": 7,
        "cpu": 1,
        "process": "test",
        "method": "test",
    }


def both_run(tmp_path: Path, name: str, machine: float, xfs: float) -> str:
    """One run of git-pygit2 on ext4 and xfs interleaved, on a machine ``machine`` times as
    slow as the frozen result's, xfs ``xfs`` times ext4's in every block."""

    def edit(document: dict[str, Any], _: list[dict[str, Any]]) -> None:
        ext4 = document["benchmarks"][0]
        other = copy.deepcopy(ext4)
        on_xfs(other)
        document["benchmarks"] = [ext4, other]
        mine, theirs = benchmark_part(ext4), benchmark_part(other)
        scale_times(mine, machine)
        scale_times(theirs, machine * xfs)
        levels = [machine * (1 + 0.02 * (k % 3)) for k in range(BLOCKS)]
        interleaved(mine, 0, levels)
        interleaved(theirs, 1, [level * xfs for level in levels])

    return edited_result(TINY, tmp_path / f"{name}.json", edit)


def rows(stdout: str) -> list[str]:
    """The rows of the report's table against ext4."""
    section = stdout.split(f"### Against {EXT4}", 1)[1].split("\n#", 1)[0]
    return [line for line in section.splitlines() if line.startswith("| git-pygit2 ")]


def test_each_run_against_its_own_ext4_and_the_runs_as_the_unit(tmp_path: Path) -> None:
    """Three runs, the second on a machine 30 % slower, xfs 0.94x, 0.95x and 0.96x of ext4
    in their blocks: each run's row is its own ratio (never its xfs over another run's
    ext4, which would read the machine's 1.3x), and the row over the runs is their
    geometric mean with a t interval over three, which leaves out 1."""
    files = [
        both_run(tmp_path, "one", 1.0, 0.94),
        both_run(tmp_path, "two", 1.3, 0.95),
        both_run(tmp_path, "three", 1.0, 0.96),
    ]
    result = vcsbench("report", *files, "--baseline", EXT4)
    assert 0 == result.returncode, result.stderr
    found = rows(result.stdout)
    assert 4 == len(found), result.stdout
    for line, (run, ratio) in zip(
        found, [("one", 0.94), ("two", 0.95), ("three", 0.96)], strict=False
    ):
        assert f"| {run} " in line and f"{ratio:.3f}x [{ratio:.3f}–{ratio:.3f}] faster" in line
    logs = [math.log(r) for r in (0.94, 0.95, 0.96)]
    mean = math.exp(statistics.mean(logs))
    half = 4.302653 * statistics.stdev(logs) / math.sqrt(3)  # t(2) at 97.5 %
    low, high = math.exp(math.log(mean) - half), math.exp(math.log(mean) + half)
    assert f"| over 3 runs | {mean:.3f}x [{low:.3f}–{high:.3f}] faster" in found[3], found[3]
    assert "1.2" not in "".join(line.split("|")[6] for line in found)


def test_over_runs_says_no_difference_where_the_runs_disagree() -> None:
    """Runs whose ratios fall either side of 1 (a difference that moves with the run, not
    drift inside one): no verdict over them, however tight each run's blocks were."""
    found = over_runs([0.95, 1.05, 0.97, 1.04])
    assert found is not None and found.interval is not None
    assert found.interval[0] < 1 < found.interval[1]
    assert "no significant difference" == found.verdict()
    assert over_runs([0.95]) is None


def one_fs_run(tmp_path: Path, name: str, xfs: bool, time: float, canary: float) -> str:
    """A run of the frozen result on one filesystem, its rounds ``time`` times as long and
    a canary of ``canary`` ms beside them, recording a calibration in which the canary
    tracks the medians (so the same filesystem's runs are compared over it)."""
    levels = [0.85, 0.9, 0.95, 1.0, 1.05, 1.1, 1.15, 1.2]
    own = [1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 1.01, 0.99]
    medians = tuple(10 * lv * o for lv, o in zip(levels, own, strict=True))
    figures = {
        "time": medians,
        "time_per_canary": tuple(m / lv for m, lv in zip(medians, levels, strict=True)),
        "canary": tuple(levels),
    }

    def edit(document: dict[str, Any], benches: list[dict[str, Any]]) -> None:
        for entry, bench in zip(document["benchmarks"], benches, strict=True):
            scale_times(bench, time)
            canary_beside(bench, canary)
            if xfs:
                on_xfs(entry)
        cells = [SpreadCell(b, "create+commit", "ext4", 100, figures).to_json() for b in BACKENDS]
        run_facts(document)["spread"] = {
            "fingerprint": "test", "machine": "the test's", "runs": 8, "cells": cells,
            "measured": "2026-11-28T00:00:00+00:00", "command": "vcsbench run (synthetic)",
        }  # fmt: skip

    return edited_result(TINY, tmp_path / f"{name}.json", edit)


def test_one_run_on_each_filesystem_gets_no_verdict(tmp_path: Path) -> None:
    """ext4 in one run, xfs in another, the rounds 0.85x and the canary on xfs 0.6x of
    ext4's: the time is the medians' 0.85x, never the rounds over their canaries (1.42x
    slower: the canary moves with the filesystem), and neither compare nor report gives a
    verdict, and both say to run the two in one run."""
    ext4 = one_fs_run(tmp_path, "ext4", False, 1.0, 1.0)
    xfs = one_fs_run(tmp_path, "xfs", True, 0.85, 0.6)
    compared = vcsbench("compare", ext4, xfs, "--store", "none")
    assert 0 == compared.returncode, compared.stderr
    line = next(x for x in compared.stdout.splitlines() if "git-pygit2 create+commit" in x)
    why = f"no verdict: {EXT4} and {XFS} in separate runs, one each"
    assert "~ 0.85x [" in line and why in line and f"(--fs {EXT4},{XFS})" in line, line
    assert "slower" not in compared.stdout and "faster" not in compared.stdout
    spread = next(x for x in compared.stdout.splitlines() if "run-to-run spread (one" in x)
    assert "git-pygit2 create+commit ext4 ±" in spread and "canary" not in spread, spread
    gated = vcsbench("compare", ext4, xfs, "--store", "none", "--fail-on", "time:10%")
    assert 1 == gated.returncode and "cannot judge, " + why in gated.stdout
    reported = vcsbench("report", ext4, xfs, "--baseline", EXT4)
    assert 0 == reported.returncode, reported.stderr
    row = rows(reported.stdout)[0]
    assert "0.850x [" in row and why in row, row


def test_a_series_closes_with_its_runs_apart_and_each_filesystem_over_the_runs(
    tmp_path: Path,
) -> None:
    """``run --repeat``'s closing over three runs of known medians (the machine 1.0x, 1.3x
    and 1.0x as slow): each benchmark's medians run by run as the files hold them, their
    standard deviation on the log scale, and xfs against ext4 with the row over the runs
    as ``report --baseline`` gives it."""
    from vcsbench.cli.repeat import together, together_document
    from vcsbench.report.formats import write
    from vcsbench.results import read

    files = [
        both_run(tmp_path, "one", 1.0, 0.94),
        both_run(tmp_path, "two", 1.3, 0.95),
        both_run(tmp_path, "three", 1.0, 0.96),
    ]
    text = together([Path(f) for f in files])
    runs = [read(f) for f in files]
    for fs in (EXT4, XFS):
        medians = [next(b.median_ms for b in run.benchmarks if b.fs == fs) for run in runs]
        assert all(m is not None for m in medians)
        apart = 100 * statistics.stdev(math.log(m) for m in medians if m)
        (row,) = [
            line
            for line in text.splitlines()
            if line.startswith("git-pygit2") and fs in line and "±" in line
        ]
        shown = " ".join(f"{m:.3g}" for m in medians)
        assert shown in row and row.rstrip().endswith(f"±{apart:.1f}%"), row
    assert 15 < apart < 16  # ln(1.3) over three runs: the series saw the 1.3x machine
    # the answer first: each filesystem against the first, then the runs one by one
    assert text.index(f"against {EXT4}, over the runs") < text.index("3 runs, each a process")
    # The same closing as a document, in Markdown: its row over the runs is the report's
    markdown = write([together_document([Path(f) for f in files])], "md")
    over = [line for line in markdown.splitlines() if "| over 3 runs |" in line]
    assert 1 == len(over) and "faster" in over[0], markdown
    report = vcsbench("report", *files, "--baseline", EXT4).stdout
    assert over[0] in report
    assert "over 3 runs" in text and "faster" in text  # on the terminal, as plain columns
    assert f"--base-runs {' '.join(files)} --other-runs" in text  # whole: to be copied


def test_two_machines_runs_are_each_their_machines_and_never_pooled(tmp_path: Path) -> None:
    """Two runs on each of two machines, xfs 0.94x and 0.95x of ext4 on one and 1.06x and
    1.07x on the other: each row names its machine, and each machine gets its own row
    over its runs (the geometric mean of its two), never one over all four (which would
    read about 1.00x and name neither)."""
    files = [
        both_run(tmp_path, "one", 1.0, 0.94),
        both_run(tmp_path, "two", 1.0, 0.95),
        both_run(tmp_path, "three", 1.0, 1.06),
        both_run(tmp_path, "four", 1.0, 1.07),
    ]
    for path in files[2:]:
        on_another_machine(path)
    result = vcsbench("report", *files, "--baseline", EXT4)
    assert 0 == result.returncode, result.stderr
    found = rows(result.stdout)
    assert 6 == len(found), result.stdout
    cells = [[c.strip() for c in line.split("|")[5:8]] for line in found]
    assert [c[:2] for c in cells] == [
        ["A", "one"], ["A", "two"], ["A", "over 2 runs"],
        ["B", "three"], ["B", "four"], ["B", "over 2 runs"],
    ]  # fmt: skip
    gm = [math.sqrt(0.94 * 0.95), math.sqrt(1.06 * 1.07)]  # each machine's own runs
    assert cells[2][2].startswith(f"{gm[0]:.3f}x [") and cells[5][2].startswith(f"{gm[1]:.3f}x [")
