"""commit-graph and bitmaps: git's walks of a whole history with and without the files made
to speed them up, on a history scaled down from the Linux kernel's, beside the figures the
commits that brought them published."""

from __future__ import annotations

from collections.abc import Callable

from vcsbench.report.format import fmt_ratio
from vcsbench.results.model import Benchmark, Run
from vcsbench.studies.base import PER_REPO_NOTE, Study, Tables, first, groups, variant_table

HISTORY = "history:synthetic:10000"
SCALE = (
    "The published figures are on the Linux kernel's repository (hundreds of thousands of "
    "commits); this run's history is vcsbench's synthetic one, 10,000 commits of small "
    "source files (`history:synthetic:10000`, the same commit ids on every machine), "
    "replayed through git-cli: a walk here is shorter, and the ratio is the comparable part."
)
COMMIT_GRAPH_SOURCE = (
    "git commit 177722b344 (commit: integrate commit graph with commit parsing, Derrick "
    "Stolee, 2018), its message's figures on the Linux repository"
)
COMMIT_GRAPH_PUBLISHED = {"topo-log": (8.31, 0.94), "rev-list": (5.89, 1.07)}
"""Seconds without and with a commit-graph, as published."""
BITMAPS_SOURCE = (
    "git commit 6b8fda2db1 (pack-objects: use bitmaps when packing objects, Vicent Martí, "
    "2013), its message's figures for counting the objects of a full pack of the Linux "
    "repository, without pack reuse"
)
BITMAPS_PUBLISHED = {"objects": (44.1, 5.4)}


def _beside(
    figures: tuple[float, float] | None, is_base: Callable[[Benchmark], bool]
) -> Callable[[Benchmark], tuple[str, str]]:
    """A row's published seconds (without, with) and their ratio to the one without."""

    def beside(bench: Benchmark) -> tuple[str, str]:
        if figures is None:
            return "—", "—"
        seconds = figures[0] if is_base(bench) else figures[1]
        return f"{seconds:.2f}", fmt_ratio(seconds / figures[0])

    return beside


def _tables(
    title: str,
    published: dict[str, tuple[float, float]],
    is_base: Callable[[Benchmark], bool],
    about: str,
    source: str,
) -> Tables:
    def tables(runs: list[Run]) -> dict[str, str]:
        out: dict[str, str] = {}
        for (fs, op, payload), group in groups(runs).items():
            base = first(group, is_base)
            table = variant_table(
                group,
                dict.fromkeys((b.label for b in group), base),
                _beside(published.get(op.split("[")[0]), is_base),
                ("published s", "published ratio"),
                durability=False,
            )
            notes = (
                f"`{op}` on `{payload}`. {about} Ratios: each variant against the one without. "
                f"{SCALE} {PER_REPO_NOTE} Published: {source}."
            )
            out[f"{fs}/{op}/{payload}"] = f"### {title} on {fs}: {op}\n\n{table}\n\n_{notes}_\n"
        return out

    return tables


COMMIT_GRAPH = Study(
    "commit-graph",
    "git log --topo-order -1000 and git rev-list --all on a 10,000-commit history, with "
    "and without a commit-graph file, beside git's published figures",
    "git-cli[seed-pack=full,seed-graph=none],git-cli[seed-pack=full,seed-graph=write]",
    "topo-log,rev-list",
    HISTORY,
    "tmpfs",
    20,
    _tables(
        "commit-graph",
        COMMIT_GRAPH_PUBLISHED,
        lambda b: b.backend.options.get("seed-graph") == "none",
        "Both repacked into one pack after the replay (`git repack -a -d`); `seed-graph=none`: "
        "without a commit-graph file (one an automatic gc wrote during the replay removed), "
        "`write`: with one (`git commit-graph write --reachable`).",
        COMMIT_GRAPH_SOURCE,
    ),
    ("git",),
    COMMIT_GRAPH_SOURCE,
)

BITMAPS = Study(
    "bitmaps",
    "every object of a 10,000-commit history listed (the counting of a full pack) with and "
    "without a reachability bitmap, beside git's published figures",
    "git-cli[seed-pack=full],git-cli[seed-pack=bitmap]",
    "objects",
    HISTORY,
    "tmpfs",
    20,
    _tables(
        "bitmaps",
        BITMAPS_PUBLISHED,
        lambda b: b.backend.options.get("seed-pack") == "full",
        "Both repacked into one pack after the replay (`git repack -a -d`), `bitmap` with a "
        "reachability bitmap written beside it (`--write-bitmap-index`); the walk is `git "
        "rev-list --objects --all --use-bitmap-index`.",
        BITMAPS_SOURCE,
    ),
    ("git",),
    BITMAPS_SOURCE,
)
