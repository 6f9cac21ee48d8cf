"""The headline of a report: every backend side by side, one row per benchmark group.

Time is each backend's median with its ratio to the fastest in the group and that ratio's
interval as :mod:`vcsbench.report.ratios` finds it for how the two ran (by block where
interleaved, else from the machine's run-to-run spread, else none, marked). Device bytes
written and allocated bytes per repository are shown beside, as values.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from vcsbench.report.document import Block, paragraph, table
from vcsbench.report.format import fmt_metric, fmt_ms
from vcsbench.report.origins import machine_labels, named_release, release_of
from vcsbench.report.ratios import BY_BLOCK, EXPLAINED, OVER_RUNS_EXPLAINED, over_runs, time_ratio
from vcsbench.results.metrics import KEPT_FOOTPRINT
from vcsbench.results.model import Benchmark

Z95 = 1.959964


ATIME = (
    " On a mount that updates access times (relatime, the default), an operation that only "
    "reads writes too: each file's inode, the first time it is read after it was written "
    "(mount=noatime: none)."
)


def updates_atime(benches: list[Benchmark]) -> bool:
    """Whether any of them ran on a mount that writes access times as files are read."""
    return any(
        {"relatime", "strictatime"} & set(b.filesystem.mount_options.split(","))
        for b in benches
        if b.filesystem.mount_options
    )


def median_interval(samples: list[float]) -> tuple[float, float] | None:
    """A distribution-free 95% interval for the median (None below 6 samples)."""
    n = len(samples)
    if n < 6:
        return None
    ordered = sorted(samples)
    half = Z95 * math.sqrt(n) / 2
    low = max(0, math.floor(n / 2 - half) - 1)
    high = min(n - 1, math.ceil(n / 2 + half))
    return ordered[low], ordered[high]


def time_cell(
    bench: Benchmark, fastest: Benchmark, fastest_is_reference: bool = True, alone: bool = False
) -> str:
    """A benchmark's median and its ratio to the row's reference; ``alone``: the row's
    only figure, the fastest of nothing, said as its median alone."""
    median = bench.median_ms
    if median is None or fastest.median_ms is None:
        return "failed" if bench.failed else "—"
    if alone:
        return f"{fmt_ms(median)} ms"
    if bench is fastest:
        return f"{fmt_ms(median)} ms ({'fastest' if fastest_is_reference else 'baseline'})"
    found = time_ratio(bench, fastest)
    return f"{fmt_ms(median)} ms, {found.text()}" if found else f"{fmt_ms(median)} ms"


def over_runs_cells(
    rows: list[Benchmark], labels: list[str], baseline: str | None
) -> list[str] | None:
    """A group's benchmarks of one machine in several runs: per backend, its by-block
    ratio to the reference in each run, over the runs (:func:`over_runs`); the reference
    the baseline, else the backend fastest over the runs (their medians' geometric mean).
    None under two runs, or where no pair ran interleaved in every run."""
    by_run: dict[str, dict[str, Benchmark]] = {}
    for bench in rows:
        by_run.setdefault(bench.source, {})[bench.label] = bench
    runs = list(by_run.values())
    common = [x for x in labels if all(x in run and run[x].median_ms for run in runs)]
    if len(runs) < 2 or not common:
        return None
    reference = baseline if baseline in common else None
    if reference is None:
        reference = min(common, key=lambda x: sum(math.log(r[x].median_ms or 1) for r in runs))
    cells, found_any = [], False
    for label in labels:
        if label == reference:
            cells.append("(baseline)" if label == baseline else "(fastest)")
            continue
        found = [
            time_ratio(run[label], run[reference]) if label in common else None for run in runs
        ]
        ratios = [f.value for f in found if f is not None and f.how == BY_BLOCK]
        combined = over_runs(ratios) if len(ratios) == len(runs) else None
        cells.append(combined.text() if combined else "—")
        found_any = found_any or combined is not None
    return cells if found_any else None


def _metric_cells(name: str, by_label: dict[str, Benchmark], labels: list[str]) -> list[str]:
    """A registry metric per repository, a cell per backend label ("—" where absent)."""
    return [
        fmt_metric(name, by_label[label].per_repo(name)) if label in by_label else "—"
        for label in labels
    ]


def count_cell(bench: Benchmark, reference: Benchmark | None) -> str:
    """A benchmark's counted rounds in a few words: its instructions (and their ratio to
    the reference's), its fsync-family and write calls per operation."""
    counted = bench.counted
    if counted is None or not counted.rounds:
        return "—"
    parts = []
    instructions = counted.figure("instructions")
    if instructions is not None:
        theirs = (
            reference.counted.figure("instructions") if reference and reference.counted else None
        )
        ratio = f" ({instructions / theirs:.2f}x)" if theirs and reference is not bench else ""
        parts.append(f"{instructions / 1e6:,.2f} M instructions{ratio}")
    for name, word in (("sync_calls", "fsync"), ("write_calls", "writes")):
        value = counted.figure(name)
        if value is not None:
            parts.append(f"{value:,.0f} {word}")
    return " · ".join(parts) or "—"


def headline(
    grouped: dict[tuple[str, str, str], list[Benchmark]],
    origin: Callable[[Benchmark], str] | None = None,
    baseline: str | None = None,
) -> list[Block]:
    """Three tables (time, device KiB written, allocated KiB), a column per backend.

    ``origin`` names where a benchmark came from (machine, run) when the inputs differ
    in that: each group then has a row per origin, the fastest taken within it.
    """
    labels = list(dict.fromkeys(b.label for rows in grouped.values() for b in rows))
    if not labels:
        return []
    release = release_of(b for rows in grouped.values() for b in rows)
    releases: dict[str, set[str]] = {}
    for rows in grouped.values():
        for bench in rows:
            releases.setdefault(bench.label, set()).add(release(bench))
    shown = {label: named_release(label, min(releases[label])) for label in labels}
    if any(len(found) > 1 for found in releases.values()):
        # one variant in several releases (files from before and after an upgrade): each
        # row says its release where it says where it came from
        shown, came = {label: label for label in labels}, origin
        origin = lambda b: ", ".join(x for x in (came(b) if came else "", release(b)) if x)  # noqa: E731
    header = ["operation", "payload", "fs", *(["from"] if origin else []), *shown.values()]
    text_columns = len(header) - len(labels)
    time_rows, device_rows, allocated_rows, kept_rows, count_rows = [], [], [], [], []
    split: list[tuple[list[str], list[Benchmark]]] = []
    over: dict[int, list[str]] = {}  # split[k]'s row is followed by over[k], over its runs
    # Runs of one variant in several releases are not runs of one thing: no row over them.
    several_releases = any(len(found) > 1 for found in releases.values())
    machines = machine_labels(b for rows in grouped.values() for b in rows)
    for (op, _, fs), group in grouped.items():
        payload = group[0].payload.shown
        if origin is None:
            split.append(([op, payload, fs], group))
            continue
        start = len(split)
        for where in dict.fromkeys(origin(b) for b in group):
            split.append(([op, payload, fs, where], [b for b in group if origin(b) == where]))
        for machine in dict.fromkeys(b.machine for b in group):
            mine = [b for b in group if b.machine == machine]
            cells = None if several_releases else over_runs_cells(mine, labels, baseline)
            if cells is not None:
                runs = f"over {len({b.source for b in mine})} runs"
                on = f"machine {machines[machine]}, " if machines else ""
                last = max(k for k in range(start, len(split)) if split[k][1][0].machine == machine)
                over[last] = [op, payload, fs, on + runs, *cells]
    for k, (lead, rows) in enumerate(split):
        by_label = {b.label: b for b in rows}
        timed = [b for b in rows if b.median_ms is not None]
        fastest = min(timed, key=lambda b: b.median_ms or 0.0) if timed else None
        reference = by_label.get(baseline) if baseline is not None else None
        named = reference is not None and reference.median_ms is not None
        if named:
            fastest = reference  # the reference every ratio of the report is to
        time_rows.append(
            lead
            + [
                time_cell(by_label[label], fastest, not named, len(timed) < 2 and not named)
                if label in by_label and fastest
                else "—"
                for label in labels
            ]
        )
        if k in over:
            time_rows.append(over[k])
        count_rows.append(
            lead + [count_cell(by_label[x], fastest) if x in by_label else "—" for x in labels]
        )
        device_rows.append(lead + _metric_cells("io_write_device", by_label, labels))
        allocated_rows.append(lead + _metric_cells("footprint_allocated", by_label, labels))
        kept_rows.append(lead + _metric_cells(KEPT_FOOTPRINT, by_label, labels))
    kept: list[Block] = [
        paragraph(
            "Allocated KiB per repository as a server keeps it: after each VCS's own "
            "maintenance (git gc, svnadmin pack; Mercurial's revlogs as written)."
        ),
        table(header, kept_rows, text_columns),
    ]
    some_kept = any(
        b.per_repo(KEPT_FOOTPRINT) is not None for rows in grouped.values() for b in rows
    )
    benches = [b for rows in grouped.values() for b in rows]
    device: list[Block] = [
        paragraph(
            "Device KiB written per repository (journal, metadata and writeback included; "
            "what each round's untimed preparation wrote is written back by a syncfs before "
            "the round, so it is not counted)." + (ATIME if updates_atime(benches) else "")
        ),
        table(header, device_rows, text_columns),
    ]
    if all(b.per_repo("io_write_device") is None for b in benches):  # a table of n/a
        found = (b.metrics.get("io_write_device") for b in benches)
        why = sorted({m.reason for m in found if m is not None and m.reason})
        device = [
            paragraph(
                "Device KiB written per repository: not measured here"
                + (f" ({'; '.join(why)})" if why else "")
                + ", so no table."
            )
        ]
    counts: list[Block] = [
        paragraph(
            "Why, in counts (counted rounds, outside the timed ones): instructions per "
            "operation and their ratio to the same reference, fsync-family and write calls."
        ),
        table(header, count_rows, text_columns),
    ]
    if not any(b.counted is not None and b.counted.rounds for b in benches):
        counts = []
    return [
        paragraph(
            "Time per operation: median, and its ratio to the reference (the baseline where "
            f"one is given, else the group's fastest) with its interval. {EXPLAINED}"
            + (OVER_RUNS_EXPLAINED if over else "")
        ),
        table(header, time_rows, text_columns),
        *counts,
        *device,
        paragraph("Allocated KiB per repository, as the rounds wrote it."),
        table(header, allocated_rows, text_columns),
        *(kept if some_kept else []),
    ]
