"""Tables for people: one per (operation, payload, filesystem), a row per backend variant.

Reads results only (``vcsbench.results``); never imports measuring code. Metric columns
come from the registry (``TABLE_METRICS``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from vcsbench.errors import VcsbenchError
from vcsbench.report.axis import FS, OP, axis_baseline, operations
from vcsbench.report.axis import filesystems as fs_axis
from vcsbench.report.blocks import DEFAULT_BLOCK, blocks, growth, slope_ms_per_1000
from vcsbench.report.calls import calls_blocks, profile_blocks
from vcsbench.report.document import (
    Document,
    Figure,
    Heading,
    Items,
    Line,
    Paragraph,
    Table,
    paragraph,
    table,
)
from vcsbench.report.environment import environment
from vcsbench.report.format import (
    counted,
    fmt_metric,
    fmt_ms,
    fmt_ratio,
    writers_text,
)
from vcsbench.report.formats import FORMATS, write
from vcsbench.report.formats.csv import benchmarks as to_csv
from vcsbench.report.headline import headline
from vcsbench.report.interleaved import interleaved
from vcsbench.report.origins import (
    machine_labels,
    named_release,
    origin_of,
    release_of,
    run_labels,
)
from vcsbench.report.ratios import time_ratio
from vcsbench.report.stability import warnings as stability_warnings
from vcsbench.results.metrics import DURABILITY_METRICS, KEPT_FOOTPRINT, METRICS
from vcsbench.results.model import Benchmark, Run

WIDE_SPREAD = 0.10
TABLE_METRICS = (
    "cpu",
    "io_write_logical",
    "io_write_device",
    "footprint_content",
    "footprint_allocated",
    "footprint_inodes",
)
SCRATCH_METRIC = "scratch_allocated"
"""Shown, in a column of its own, only where some backend of the table used scratch."""
CHANGE_METRIC = "footprint_change"
"""Shown only where it says more than the footprint: some round began with something
(a copied seed), so what the operation added or freed is not all that is there."""

__all__ = ["FORMATS", "document", "render", "table_rows"]


def present_text(bench: Benchmark) -> str:
    """The repositories in the sandbox before the first round (``--age``): a population's
    shape beside its count (students × assignments, commits each)."""
    if not bench.age:
        return "0"
    about = bench.harness.age or {}
    population = about.get("population") if isinstance(about, dict) else None
    if not isinstance(population, dict):
        return f"{bench.age:,}"
    commits = population.get("commits")
    commits = commits if isinstance(commits, dict) else {}

    def count(value: object) -> str:  # a result file is data: what is not a count is "?"
        return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else "?"

    return (
        f"{bench.age:,} ({count(population.get('students'))} × "
        f"{count(population.get('assignments'))}, {count(commits.get('min'))}–"
        f"{count(commits.get('max'))} commits)"
    )


def groups(results: Iterable[Benchmark]) -> dict[tuple[str, str, str], list[Benchmark]]:
    grouped: dict[tuple[str, str, str], list[Benchmark]] = defaultdict(list)
    for bench in results:
        grouped[(bench.op, bench.payload.name, bench.fs)].append(bench)
    for rows in grouped.values():
        rows.sort(key=lambda b: (b.median_ms is None, b.median_ms or 0.0))
    return dict(grouped)


def spread_pct(bench: Benchmark) -> float | None:
    """The interquartile range as a share of the median, in percent."""
    median, iqr = bench.median_ms, bench.iqr_ms
    return 100 * iqr / median if median and iqr is not None else None


def spread_text(bench: Benchmark) -> str:
    pct = spread_pct(bench)
    if pct is None:
        return "—"
    return f"{pct:.0f}%" + (" wide" if pct > 100 * WIDE_SPREAD else "")


def _uses_scratch(rows: list[Benchmark]) -> bool:
    return any((b.per_repo(SCRATCH_METRIC) or 0) > 0 for b in rows)


def _changes_held(rows: list[Benchmark]) -> bool:
    return any(
        b.per_repo(CHANGE_METRIC) is not None
        and b.per_repo(CHANGE_METRIC) != b.per_repo("footprint_allocated")
        for b in rows
    )


def check_units(benches: Iterable[Benchmark]) -> None:
    """Refuse to put in one table figures whose units disagree with the registry."""
    for bench in benches:
        for name, value in bench.metrics.items():
            if value.unit and value.unit != METRICS[name].unit:
                raise VcsbenchError(
                    f"{bench.source}: {bench.name} records {name} in {value.unit!r}, not "
                    f"{METRICS[name].unit!r}; results in other units are not merged"
                )


def _vs(bench: Benchmark, base: Benchmark | None) -> str:
    """``bench``'s time over ``base``'s with its interval ("—" without a figure)."""
    if base is None:
        return "—"
    if bench is base:
        return "1.00x"
    found = time_ratio(bench, base)
    return found.text() if found else "—"


def table_rows(
    rows: list[Benchmark],
    baseline: str | None = None,
    machines: dict[str, str] | None = None,
    runs: dict[str, str] | None = None,
    block: int = DEFAULT_BLOCK,
) -> tuple[list[str], list[list[str]]]:
    """Header and formatted rows of one group's table: a machine column for several
    machines, a run column where several files hold the same benchmark."""
    timed = [b for b in rows if b.median_ms]
    fastest = min(timed, key=lambda b: b.median_ms or 0.0) if timed else None
    base = next((b for b in rows if b.label == baseline), None)
    metrics = [
        *TABLE_METRICS[:5],
        *counted(rows, (KEPT_FOOTPRINT,)),
        *TABLE_METRICS[5:],
        *([CHANGE_METRIC] if _changes_held(rows) else []),
        *([SCRATCH_METRIC] if _uses_scratch(rows) else []),
        *counted(rows, DURABILITY_METRICS),
    ]
    header = ["backend", *(["run"] if runs else []), *(["machine"] if machines else [])]
    aged = any(b.age for b in rows)
    header += ["repos", *(["present first"] if aged else [])]
    # one direction of ratio: to the baseline where it is in the group, else the fastest
    reference = base if base is not None and base.median_ms else fastest
    header += ["median ms", "IQR", "p95 ms", "p99 ms"]
    header.append(f"vs {baseline}" if reference is base and base is not None else "vs fastest")
    release = release_of(rows)
    growths = [growth(b, block) for b in rows]
    growing = any(g is not None for g in growths)
    if growing:
        header += [f"growth (last/first {block:,})", "slope ms/1k repos"]
    header += [METRICS[m].label for m in metrics] + ["x floor", "errors"]
    out: list[list[str]] = []
    for bench, grew in zip(rows, growths, strict=True):
        median = bench.median_ms
        line = [
            named_release(bench.label, release(bench)),
            *([runs[bench.source]] if runs else []),
            *([machines[bench.machine]] if machines else []),
            bench.repos_text,
            *([present_text(bench)] if aged else []),
            fmt_ms(median),
            spread_text(bench),
            fmt_ms(bench.quantile_ms(0.95)),
            fmt_ms(bench.quantile_ms(0.99)),
            _vs(bench, reference),
        ]
        if growing:
            slope = slope_ms_per_1000(bench)
            line += [
                fmt_ratio(grew),
                "—" if slope is None else f"{slope:+.3f}",
            ]
        line += [fmt_metric(m, bench.per_repo(m)) for m in metrics]
        line += [
            fmt_ratio(bench.floor_ratio),
            f"{bench.errors}/{bench.repos}" if bench.errors else "0",
        ]
        out.append(line)
    return header, out


def document(
    files: list[Run],
    baseline: str | None = None,
    plots: list[tuple[str, str]] | None = None,
    block: int = DEFAULT_BLOCK,
) -> Document:
    """The whole report: warnings, the headline, a table per group, the environment, the
    plots ((title, data URI or path)); ``block``: rounds per block for growth as
    repositories accumulate."""
    benches = [b for f in files for b in f.benchmarks]
    check_units(benches)
    grouped = groups(benches)
    machines = machine_labels(benches)
    labels, filesystems, ops = {b.label for b in benches}, fs_axis(benches), operations(benches)
    axis = None
    if baseline and baseline not in labels:
        axis = FS if baseline in filesystems else OP if baseline in ops else None
        if axis is None:
            raise VcsbenchError(
                f"baseline {baseline!r} is neither a backend, a filesystem nor an operation of "
                f"these results; backends: {', '.join(sorted(labels))}; filesystems: "
                f"{', '.join(filesystems)}; operations: {', '.join(ops)}"
            )
    axis_base = baseline if axis is not None else None
    if axis is not None:
        baseline = None  # the per-group tables compare backends; the axis has its section
    runs = run_labels(benches)
    doc = Document("vcsbench report")
    advice = stability_warnings(benches, max((f.machine.cpu_count for f in files), default=0))
    throttled = {b.filesystem.spec: b.filesystem.throttle for b in benches}
    for spec, throttle in throttled.items():
        for problem in throttle.problems if throttle is not None else ():
            advice.append(f"{spec}: the storage profile was not honoured: {problem}")
    if advice:
        doc.add(Items(tuple(("warning", line) for line in advice)))
    if machines or runs:  # the labels the headline's "from" column uses
        doc.add(
            Items(
                tuple((f"machine {label}", machine) for machine, label in machines.items())
                + tuple((f"run {label}", source) for source, label in runs.items())
            )
        )
    doc.add(Heading("Headline"), *headline(grouped, origin_of(machines, runs), baseline))
    if axis is not None and axis_base is not None:
        doc.add(
            Heading(f"Against {axis_base}", 3),
            *axis_baseline(benches, axis, axis_base, runs, machines),
        )
    side_by_side = interleaved(benches, baseline)
    if side_by_side:
        doc.add(Heading("Interleaved variants", 3), *side_by_side)
    doc.add(Heading("Details"), paragraph(LEGEND, tone="note"))
    for (op, _, fs), rows in grouped.items():
        header, body = table_rows(rows, baseline, machines, runs, block)
        doc.add(
            Heading(f"{op} · payload {rows[0].payload.shown} · fs {fs}", 3),
            table(header, body, 1, frozenset(TEXT_COLUMNS)),
        )
        doc.add(*calls_blocks(rows))
        doc.add(*profile_blocks(rows))
        doc.add(*error_paragraphs(rows))
        written = [(b.label, b.writers) for b in rows if b.writers is not None]
        if written:
            doc.add(
                paragraph(
                    "Who wrote to the device over each benchmark (its rounds, and the "
                    "preparation and verification around them; the top tasks by what the "
                    "kernel charged them with, /proc/PID/io, the rest charged to no task): "
                    + "; ".join(f"{label}: {writers_text(found)}" for label, found in written)
                    + "."
                )
            )
        for bench in rows:
            blocks_table = block_table(bench, block)
            if blocks_table:
                doc.add(
                    paragraph(f"As repositories accumulate: {bench.label}, blocks of {block:,}"),
                    blocks_table,
                )
    doc.add(Heading("Environment"), Items(tuple(environment(files)), frozenset({"command"})))
    if plots:
        doc.add(Heading("Plots"), *(Figure(title, src) for title, src in plots))
    return doc


def render(
    files: list[Run],
    fmt: str = "md",
    baseline: str | None = None,
    plots: list[tuple[str, str]] | None = None,
    block: int = DEFAULT_BLOCK,
) -> str:
    """The report in ``fmt`` (csv: the figures, a row per benchmark)."""
    if fmt not in FORMATS:
        raise VcsbenchError(f"format {fmt!r} is not one of {', '.join(FORMATS)}")
    if fmt == "csv":
        benches = [b for f in files for b in f.benchmarks]
        check_units(benches)
        return to_csv(groups(benches))
    return write([document(files, baseline, plots, block)], fmt)


MAX_BLOCK_ROWS = 20


def block_table(bench: Benchmark, size: int) -> Table | None:
    """Per block of rounds: repositories present, latency percentiles, device bytes and
    filesystem space per round; None with fewer than two blocks. Long runs show
    ``MAX_BLOCK_ROWS`` evenly spaced blocks, always the first and the last."""
    found = blocks(bench, size)
    if len(found) < 2:
        return None
    step = max(1, -(-len(found) // MAX_BLOCK_ROWS))
    shown = found[::step] if found[-1] in found[::step] else [*found[::step], found[-1]]
    body = [
        [
            f"{b.present:,}",
            f"{b.ok:,}/{b.rounds:,}",
            fmt_ms(b.p50_ms),
            fmt_ms(b.p90_ms),
            fmt_ms(b.p99_ms),
            fmt_metric("io_write_device", b.device_written),
            fmt_metric("fs_used_delta", b.fs_used),
        ]
        for b in shown
    ]
    header = [
        "repositories present",
        "ok rounds",
        "p50 ms",
        "p90 ms",
        "p99 ms",
        "device KiB written/round",
        "fs used KiB/round",
    ]
    return table(header, body, 0)


TEXT_COLUMNS = ("backend", "run", "machine")


def error_paragraphs(rows: list[Benchmark]) -> list[Paragraph]:
    """Failed operations grouped by kind, with counts, and what vcsbench knows of them."""
    found: list[Paragraph] = []
    for bench in rows:
        if not bench.errors:
            continue
        kinds = bench.error_kinds or {e.error: 1 for e in bench.error_samples}
        counted = "; ".join(
            f"{n} x {kind}" for kind, n in sorted(kinds.items(), key=lambda kv: -kv[1])
        )
        lines: list[Line] = [
            (f"errors of {bench.label}: {bench.errors} of {bench.repos}: {counted}",)
        ]
        if bench.diagnosis:
            lines.append((f"cause: {bench.diagnosis}",))
        found.append(Paragraph(tuple(lines), "warning"))
    return found


LEGEND = (
    "median/p95/p99: wall time of one operation (ms), failed rounds excluded; IQR: "
    "interquartile range over the median (wide: over 10%); vs fastest (or vs the "
    "baseline given, where it is in the table: one direction in a report): median over that "
    "row's, with its interval as in the headline (†: none); CPU: user+sys incl. "
    "child processes; KiB columns and inodes are "
    "per repository; content: the files' bytes, the same on every filesystem; "
    "allocated: blocks on this filesystem; x floor: median over plain mkdir/write of "
    "the same files in the same sandbox (below 1: the operation took less time than "
    "those plain writes of its result); allocated change (where shown): after the round "
    "minus before it, what the operation added or freed."
)
