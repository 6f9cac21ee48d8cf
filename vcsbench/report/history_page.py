"""``vcsbench history --html DIR``: a static page of series, each with its plot (asv
publish's idea, from the store): every run's median, the level between change points,
where each change starts and how large it is, and the canary below, so a machine that
moved is seen beside a benchmark that did."""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from vcsbench.report.document import Document, Heading, paragraph, table
from vcsbench.report.document import Figure as PageFigure
from vcsbench.report.formats.html import page
from vcsbench.report.history import Judged, change_text, judged, machine_text, method, run_rows
from vcsbench.report.plotkit import save, slug
from vcsbench.results.io import own_directory, write_file
from vcsbench.store.rows import Series

MAX_SERIES = 60
"""The most series on one page: a plot and a table each."""


def levels(series: Series, judge: Judged) -> list[tuple[int, int, float]]:
    """The median's level between change points: (first run, last run, the geometric
    mean of the judged runs' medians there), runs numbered from 1."""
    cuts = [0, *(c.index for c in judge.changes), len(judge.points)]
    found = []
    for a, b in itertools.pairwise(cuts):
        runs = judge.points[a:b]
        medians = [series.points[i].median_ms or 0.0 for i in runs]
        if runs and all(m > 0 for m in medians):
            mean = math.exp(sum(math.log(m) for m in medians) / len(medians))
            found.append((runs[0] + 1, runs[-1] + 1, mean))
    return found


def _mark(ax: Any, at: int, text: str, colour: str) -> None:
    """A dashed line where a change starts (before run ``at``), said at the top."""
    ax.axvline(at - 0.5, color=colour, ls="--", lw=1)
    ax.annotate(
        text,
        (at - 0.5, 1.0),
        xycoords=("data", "axes fraction"),
        xytext=(3, -12),
        textcoords="offset points",
        fontsize=7,
        color=colour,
    )


def series_plot(series: Series, judge: Judged) -> Figure:
    """Two panels over the run number: the median (judged runs filled, busy or failed
    ones hollow), its level between change points and a line where each starts; the
    canary and its writes below."""
    points = series.points
    runs = list(range(1, len(points) + 1))
    fig, (top, low) = plt.subplots(
        2, 1, figsize=(9, 5), sharex=True, gridspec_kw={"height_ratios": [3, 1.3]}
    )
    judged_runs = set(judge.points)
    used = [(i + 1, p.median_ms) for i, p in enumerate(points) if i in judged_runs]
    hollow = [
        (i + 1, p.median_ms) for i, p in enumerate(points) if i not in judged_runs and p.median_ms
    ]
    if used:
        top.plot(*zip(*used, strict=True), "o", color="tab:blue", ms=4, label="median (judged)")
    if hollow:
        top.plot(
            *zip(*hollow, strict=True), "o", mfc="none", color="grey", ms=4,
            label="busy or with errors (not judged)",
        )  # fmt: skip
    for first, last, level in levels(series, judge):
        top.hlines(level, first - 0.4, last + 0.4, color="tab:orange", lw=2)
    for change in judge.changes:
        at = judge.points[change.index] + 1
        _mark(top, at, f"run {at}: {change_text(change)}", "tab:red")
    top.set_ylabel("median ms")
    top.set_title(f"{series.benchmark}\nmachine {series.machine_key}", fontsize=9)
    top.legend(fontsize=7, loc="best")
    canary = [(x, p.canary_ms) for x, p in zip(runs, points, strict=True) if p.canary_ms]
    writes = [
        (x, p.canary_writes_ms) for x, p in zip(runs, points, strict=True) if p.canary_writes_ms
    ]
    if canary:
        low.plot(*zip(*canary, strict=True), ".-", color="tab:green", lw=0.8, label="canary")
    if writes:
        low.plot(*zip(*writes, strict=True), ".-", color="tab:olive", lw=0.8, label="its writes")
    if canary or writes:
        low.legend(fontsize=7, loc="upper left")
    else:
        low.text(0.5, 0.5, "no canary recorded", ha="center", va="center", transform=low.transAxes)
    for change in judge.machine:
        at = judge.points[change.index] + 1
        _mark(low, at, f"the machine, run {at}: {machine_text(change)}", "tab:green")
    low.set_ylabel("canary ms")
    low.set_xlabel("run (oldest first)")
    fig.text(
        0.01,
        0.005,
        f"{len(points)} runs, {points[0].started[:16]} to {points[-1].started[:16]} (UTC); "
        f"change points found on the {judge.figure}; orange: the median's level between them",
        fontsize=7,
        color="grey",
    )
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    return fig


def history_page(found: list[Series], store: str, directory: Path) -> Path:
    """``history.html`` in ``directory`` with a plot (PNG beside it) and the runs of
    each series; its path."""
    own_directory(directory, "--html")
    doc = Document("vcsbench history")
    doc.add(
        paragraph(
            f"{len(found)} series from the results store {store}: each benchmark on one "
            "machine, its runs oldest first, where its level changed beyond the machine's "
            "run-to-run drift, and the canary timed beside its rounds."
        )
    )
    for n, series in enumerate(found, 1):
        judge = judged(series)
        stem = f"series-{n:02d}-{slug(series.benchmark)[:60]}"
        (png,) = save(series_plot(series, judge), directory, stem, (".png",))
        header, rows, _ = run_rows(series, judge)
        doc.add(
            Heading(series.benchmark),
            paragraph(f"machine {series.machine_key}: {series.machine}"),
            PageFigure(series.benchmark, png.name),
            table(header, rows, 1, frozenset({"started (UTC)", "busy", "versions"})),
            paragraph(method(judge), tone="note"),
        )
    path = directory / "history.html"
    write_file(path, page([doc]), "the page")
    return path
