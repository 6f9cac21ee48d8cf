"""git-fsync: git's t/perf p0008, `git add` of 500 files with core.fsync off and each
core.fsyncMethod, beside the figures git's commit c0f4752ed2 published."""

from __future__ import annotations

from vcsbench.report.format import fmt_ratio
from vcsbench.results.model import Benchmark, Run
from vcsbench.studies.base import (
    PER_REPO_NOTE,
    Study,
    first,
    fs_note,
    groups,
    variant_table,
)

GIT_FSYNC_SOURCE = (
    "git commit c0f4752ed2 (core.fsyncmethod: batched disk flushes for loose-objects, "
    "Neeraj Singh, first in git 2.37): 'git add' of 500 files, Linux: Hyper-V VM, kernel "
    "5.11 (Ubuntu 20.04), fast SSD; the case is git's t/perf/p0008-odb-fsync.sh"
)
GIT_FSYNC_PUBLISHED = {"none": 0.06, "fsync": 1.88, "batch": 0.15}
"""Seconds for ``git add`` of 500 files on Linux, as published (Mac and Windows: below)."""
GIT_FSYNC_OTHERS = "Mac: none 0.35 s, fsync 11.18 s, batch 0.41 s; Windows: 0.61, 2.47, 1.53"
GIT_FSYNC_VARIANTS = ",".join(
    [
        "git-cli[core.fsync=none]",
        *(
            f"git-cli[core.fsync=loose-object,core.fsyncMethod={method}]"
            for method in ("fsync", "writeout-only", "batch")
        ),
    ]
)


def fsync_mode(bench: Benchmark) -> str:
    """``none``, or the ``core.fsyncMethod`` a variant syncs loose objects with."""
    options = bench.backend.options
    if options.get("core.fsync") == "none":
        return "none"
    return options.get("core.fsyncMethod") or "fsync"


def _flush_cost(group: list[Benchmark], none: Benchmark | None) -> str:
    """What one flushed object costs, here and as published: (fsync - none) / files."""
    fsync = first(group, lambda b: fsync_mode(b) == "fsync")
    if fsync is None or none is None or fsync.median_ms is None or none.median_ms is None:
        return ""
    files = fsync.payload.files
    here = (fsync.median_ms - none.median_ms) / files
    published = (GIT_FSYNC_PUBLISHED["fsync"] - GIT_FSYNC_PUBLISHED["none"]) * 1000 / 500
    return (
        f"Each object flushed one by one costs (fsync - none) / {files} files = "
        f"{here:.2f} ms here, {published:.2f} ms in the published run; the ratios follow "
        "from that and from the add without flushes. "
    )


def git_fsync_tables(runs: list[Run]) -> dict[str, str]:
    out: dict[str, str] = {}
    for (fs, op, payload), group in groups(runs).items():
        none = first(group, lambda b: fsync_mode(b) == "none" and b.backend.name == "git-cli")

        def published(bench: Benchmark) -> tuple[str, str]:
            mode = fsync_mode(bench)
            if mode not in GIT_FSYNC_PUBLISHED:
                return "—", "—"
            seconds = GIT_FSYNC_PUBLISHED[mode]
            return f"{seconds:.2f}", fmt_ratio(seconds / GIT_FSYNC_PUBLISHED["none"])

        table = variant_table(
            group,
            dict.fromkeys((b.label for b in group), none),
            published,
            ("c0f4752ed2 Linux s", "c0f4752ed2 ratio"),
            durability=False,
        )
        notes = (
            f"{_flush_cost(group, none)}"
            f"`{op}` of `{payload}` into a repository with one commit, as p0008 does; ratios "
            "to `core.fsync=none` (p0008's first case). Device write requests are what batch "
            "mode saves: one flush for the whole add instead of one per object. "
            f"{PER_REPO_NOTE}{fs_note(fs)} Published: {GIT_FSYNC_SOURCE}; "
            f"{GIT_FSYNC_OTHERS}."
        )
        out[f"{fs}/{op}/{payload}"] = f"### git-fsync on {fs}\n\n{table}\n\n_{notes}_\n"
    return out


STUDY = Study(
    "git-fsync",
    "git's t/perf p0008: `git add` of 500 files with core.fsync off and each "
    "core.fsyncMethod (fsync, writeout-only, batch), beside git's published figures",
    GIT_FSYNC_VARIANTS,
    "add",
    "p0008",
    "ext4,xfs,btrfs",
    20,
    git_fsync_tables,
    ("git",),
    GIT_FSYNC_SOURCE,
)
