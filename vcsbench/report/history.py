"""``vcsbench history``: a benchmark's figures over time on each machine, from the store
(:mod:`vcsbench.store.store`), written for a person.

Several series: one line each (runs, dates, the first and last run's median, the versions
it ran with and where they changed). One series: every run of it, oldest first, with its
canary and its rounds over it, each over the canary timed right after it (the figure the
machine's drift moves least on machines where the calibration found so:
:mod:`vcsbench.results.canary`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vcsbench.judge.changes import ChangePoint, change_points
from vcsbench.judge.count_changes import FLOOR, STEADY
from vcsbench.judge.count_history import CountStep, count_steps, counts_at
from vcsbench.report.document import Document, Table, lines_of, table
from vcsbench.report.format import fmt_ms
from vcsbench.results.drifting import UNDER
from vcsbench.store.rows import Point, Series

SHOWN = {"time": "median", **{name: f"rounds over the {under}" for name, under in UNDER.items()}}


@dataclass(frozen=True)
class Judged:
    """A series' change points, and what they were found on."""

    points: list[int]
    """The runs judged (indexes into the series): neither busy nor with errors."""
    changes: list[ChangePoint]
    """Indexes into ``points``."""
    figure: str
    """What they were found on, for a person (``SHOWN``)."""
    key: str
    """The same as the calibration names it (``spread.TIME_FIGURES``)."""
    spread: str
    """Where the spread came from, for a person."""
    machine: list[ChangePoint] = field(default_factory=list)
    """Where the canary's own level moved (indexes into ``points``): the machine, not
    the code -- the same detector on the canary's medians."""
    counts: list[CountStep] = field(default_factory=list)
    """Where a count per operation stepped (indexes into the series' points), every run
    judged: counts do not drift (:mod:`vcsbench.judge.count_history`)."""
    counting: tuple[bool, ...] = ()
    """Per run of the series: whether it and the run before both counted."""

    def steps_at(self, run: int) -> list[CountStep]:
        return [s for s in self.counts if s.index == run]


def judged(series: Series) -> Judged:
    """The change points of a series, on the runs a verdict can use: over the canary
    where every such run has one and the machine's calibration (as the newest run
    recorded it) found that figure moves less; else the median."""
    used = [i for i, p in enumerate(series.points) if not p.busy and not p.errors and p.median_ms]
    cell = next((c for p in reversed(series.points) if (c := p.cell()) is not None), None)
    figure = cell.time_figure() if cell is not None else "time"
    if not all(series.points[i].figure(figure) for i in used):
        figure = "time"
    values = [series.points[i].figure(figure) or 0.0 for i in used]
    spread = (
        f"this machine's calibration ({cell.df(figure) + 1} runs) or the series' own, the larger"
        if cell is not None
        else "the series' own (no calibration recorded)"
    )
    canaries = [series.points[i].canary_ms or 0.0 for i in used]
    machine = change_points(canaries, cell, "canary") if all(canaries) else []
    return Judged(
        points=used,
        changes=change_points(values, cell, figure),
        figure=SHOWN[figure],
        key=figure,
        spread=spread,
        machine=machine,
        counts=count_steps(series.points),
        counting=tuple(counts_at(series.points, i) for i in range(len(series.points))),
    )


def change_text(change: ChangePoint) -> str:
    found = change.change
    assert found.ratio is not None and found.interval is not None
    low, high = found.interval
    if found.ratio >= 1:
        return f"{found.ratio:.2f}x slower [{low:.2f}–{high:.2f}]"
    return (
        f"{1 / found.ratio:.2f}x faster (after / before {found.ratio:.2f}x [{low:.2f}–{high:.2f}])"
    )


def _change_cell(
    code: ChangePoint | None,
    machine: ChangePoint | None,
    judged: bool,
    steps: list[CountStep],
    counting: bool,
) -> str:
    """What starts at a run: a change of the benchmark's level, of the machine's (its
    canary's), of its counts, or nothing ("not judged" for a busy run or one with errors:
    its time; its counts are judged all the same)."""
    said = [change_text(code)] if code is not None else []
    if code is not None and counting and not steps:
        said.append(NO_COUNT)
    if machine is not None:
        said.append(f"the machine: canary {machine_text(machine)}")
    if not judged:
        said.insert(0, "time not judged")
    if steps:
        said.append("counts: " + ", ".join(s.text() for s in steps))
    return "; ".join(said)


NO_COUNT = "in no count: the machine's or the kernel's, not the code's"
"""What a change of time with no count beside it is: the code executed the same and asked
the kernel for the same."""


def machine_text(change: ChangePoint) -> str:
    """A change of the canary's level: after over before, with its interval."""
    found = change.change
    assert found.ratio is not None and found.interval is not None
    low, high = found.interval
    return f"{found.ratio:.2f}x [{low:.2f}–{high:.2f}]"


def _day(started: str) -> str:
    return started[:16].replace("T", " ") if started else "?"


def _versions(points: tuple[Point, ...]) -> str:
    """The versions a series ran with, and the runs each held (``a (runs 1-4), b (5-9)``)."""
    spans: list[tuple[str, int, int]] = []
    for index, point in enumerate(points, 1):
        if spans and spans[-1][0] == point.versions:
            spans[-1] = (point.versions, spans[-1][1], index)
        else:
            spans.append((point.versions, index, index))
    if len(spans) == 1:
        return spans[0][0] or "not recorded"
    return "; ".join(
        f"{text or 'not recorded'} (run{'s' if a != b else ''} {a}{f'-{b}' if a != b else ''})"
        for text, a, b in spans
    )


def _over(point: Point, figure: str) -> str:
    value = point.figure(figure)
    return "n/a" if value is None else fmt_ms(value)


def run_rows(one: Series, judge: Judged) -> tuple[list[str], list[list[str]], list[str]]:
    """A series' runs, oldest first, one row each: the header, the rows, the alignment."""
    starts = {judge.points[c.index]: c for c in judge.changes}
    moved = {judge.points[c.index]: c for c in judge.machine}
    judged_runs = set(judge.points)
    rows = [
        [
            str(i),
            _day(p.started),
            fmt_ms(p.median_ms),
            fmt_ms(p.canary_ms),
            _over(p, judge.key if judge.key != "time" else "time_per_canary"),
            f"{p.errors}/{p.repos}",
            p.busy or "no",
            p.versions or "not recorded",
            _change_cell(
                starts.get(i - 1),
                moved.get(i - 1),
                i - 1 in judged_runs,
                judge.steps_at(i - 1),
                judge.counting[i - 1],
            ),
        ]
        for i, p in enumerate(one.points, 1)
    ]
    shown = judge.figure if judge.key != "time" else SHOWN["time_per_canary"]
    header = ["run", "started (UTC)", "median ms", "canary ms", shown]
    header += ["errors", "busy", "versions", "change from here"]
    align = ["right", "left", "right", "right", "right", "right", "left", "left", "left"]
    return header, rows, align


def _aligned(header: list[str], rows: list[list[str]], align: list[str]) -> Table:
    """A table whose text columns are those aligned left."""
    text = frozenset(name for name, side in zip(header, align, strict=True) if side == "left")
    return table(header, rows, text_columns=0, text_names=text)


def history_document(found: list[Series], store: str, counts: tuple[int, int, int]) -> Document:
    """The series found (untitled: it opens with what the store holds), for any format:
    one series alone with every run of it; several, a row each, by machine."""
    runs, series, machines = counts
    head = (
        f"vcsbench history: {len(found)} of {series} series "
        f"({runs} run{'s' if runs != 1 else ''} on {machines} machine"
        f"{'s' if machines != 1 else ''} in {store})"
    )
    doc = Document("")
    if not found:
        return doc.add(
            lines_of(head, "no series matches; vcsbench history with no pattern lists them all")
        )
    doc.add(lines_of(head))
    if len(found) == 1:
        (one,) = found
        doc.add(lines_of(f"{one.benchmark}", f"machine {one.machine_key}: {one.machine}"))
        judge = judged(one)
        doc.add(_aligned(*run_rows(one, judge)))
        return doc.add(lines_of(method(judge), f"results: {one.points[-1].path} (the newest)"))
    by_machine: dict[str, list[Series]] = {}
    for s in found:
        by_machine.setdefault(s.machine_key, []).append(s)
    for key, group in by_machine.items():
        doc.add(lines_of(f"machine {key}: {group[0].machine}"))
        rows = []
        for s in group:
            first, last = s.points[0], s.points[-1]
            judge = judged(s)
            changes = "; ".join(
                [
                    f"run {judge.points[c.index] + 1}: {change_text(c)}"
                    + (
                        f" ({NO_COUNT})"
                        if judge.counting[judge.points[c.index]]
                        and not judge.steps_at(judge.points[c.index])
                        else ""
                    )
                    for c in judge.changes
                ]
                + [f"run {s.index + 1}: {s.text()}" for s in judge.counts]
                + [
                    f"the machine at run {judge.points[c.index] + 1}: canary {machine_text(c)}"
                    for c in judge.machine
                ]
            )
            rows.append(
                [
                    s.benchmark,
                    str(len(s.points)),
                    f"{_day(first.started)} → {_day(last.started)}",
                    f"{fmt_ms(first.median_ms)} → {fmt_ms(last.median_ms)}",
                    changes or ("none" if len(judge.points) >= 4 else "too few runs"),
                    _versions(s.points),
                ]
            )
        header = ["benchmark", "runs", "from → to (UTC)", "median ms, first → last"]
        align = ["left", "right", "left", "right", "left", "left"]
        doc.add(_aligned([*header, "change points", "versions"], rows, align))
    return doc.add(
        lines_of(
            "Change points: where a series' level moved beyond the machine's run-to-run drift "
            "(PELT, then the between-runs test at p < 0.01 on the runs either side, its "
            "interval at 99 %). One series matched alone lists every run of it: "
            "vcsbench history PATTERN."
        )
    )


def method(judge: Judged) -> str:
    return (
        f"Change points on the {judge.figure} of {len(judge.points)} runs (busy runs and "
        "runs with errors are not judged): PELT (ruptures) with a penalty of 3 x sd^2 x "
        f"log n, sd from {judge.spread}; each kept where the runs after it differ from the "
        "runs before it at p < 0.01 (Student's t on the logarithms, pooled with the calibration "
        "where there is one), with its 99 % interval. The same on the canary's medians says "
        'where the machine moved ("the machine: canary 1.20x"): a change there and none in '
        "the benchmark over its canary is the machine's, not the code's. Counts per "
        "operation (instructions, system calls by kind: --counted) are judged on every run, "
        "busy or not, run to run: a count the same in every round of both runs that differs, "
        f"or one steady within {STEADY:.0%} beyond {FLOOR:.0%}; a change of time where no "
        "count changed is the machine's or the kernel's."
    )
