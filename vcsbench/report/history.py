"""``vcsbench history``: a benchmark's figures over time on each machine, from the store
(:mod:`vcsbench.results.store`), written for a person.

Several series: one line each (runs, dates, the first and last run's median, the versions
it ran with and where they changed). One series: every run of it, oldest first, with its
canary and the median over it (the figure the machine's drift moves least on machines
where the calibration found so: :mod:`vcsbench.results.canary`).
"""

from __future__ import annotations

from vcsbench.report.format import fmt_ms, render_rows
from vcsbench.results.store import Point, Series


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


def _over(point: Point) -> str:
    if point.median_ms is None or not point.canary_ms:
        return "n/a"
    return f"{point.median_ms / point.canary_ms:.2f}"


def history_text(found: list[Series], store: str, counts: tuple[int, int, int]) -> str:
    runs, series, machines = counts
    head = (
        f"vcsbench history: {len(found)} of {series} series "
        f"({runs} run{'s' if runs != 1 else ''} on {machines} machine"
        f"{'s' if machines != 1 else ''} in {store})"
    )
    if not found:
        return head + "\nno series matches; vcsbench history with no pattern lists them all\n"
    lines = [head, ""]
    if len(found) == 1:
        (one,) = found
        lines += [f"{one.benchmark}", f"machine {one.machine_key}: {one.machine}", ""]
        rows = [
            [
                str(i),
                _day(p.started),
                fmt_ms(p.median_ms),
                fmt_ms(p.canary_ms),
                _over(p),
                f"{p.errors}/{p.repos}",
                p.busy or "no",
                p.versions or "not recorded",
            ]
            for i, p in enumerate(one.points, 1)
        ]
        header = ["run", "started (UTC)", "median ms", "canary ms", "median / canary"]
        lines.append(
            render_rows([*header, "errors", "busy", "versions"], rows, "md", text_columns=2)
        )
        lines += ["", f"results: {one.points[-1].path} (the newest)"]
        return "\n".join(lines) + "\n"
    by_machine: dict[str, list[Series]] = {}
    for s in found:
        by_machine.setdefault(s.machine_key, []).append(s)
    for key, group in by_machine.items():
        lines += [f"machine {key}: {group[0].machine}", ""]
        rows = []
        for s in group:
            first, last = s.points[0], s.points[-1]
            rows.append(
                [
                    s.benchmark,
                    str(len(s.points)),
                    f"{_day(first.started)} → {_day(last.started)}",
                    f"{fmt_ms(first.median_ms)} → {fmt_ms(last.median_ms)}",
                    _versions(s.points),
                ]
            )
        header = ["benchmark", "runs", "from → to (UTC)", "median ms, first → last"]
        lines += [render_rows([*header, "versions"], rows, "md"), ""]
    lines.append(
        "One series (a benchmark on a machine) matched alone lists every run of it: "
        "vcsbench history PATTERN."
    )
    return "\n".join(lines) + "\n"
