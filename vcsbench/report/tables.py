"""Tables for people: one per (operation, payload, filesystem), a row per backend variant.

Reads results only (``vcsbench.results``); never imports measuring code. Metric columns
come from the registry (``TABLE_METRICS``).
"""

from __future__ import annotations

import csv
import html
import io
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path

from vcsbench.errors import VcsbenchError
from vcsbench.report.blocks import DEFAULT_BLOCK, blocks, growth, slope_ms_per_1000
from vcsbench.report.format import (
    TABULATE_FORMAT,
    code,
    fmt_metric,
    fmt_ms,
    fmt_ratio,
    inline,
    render_rows,
    table,
)
from vcsbench.report.headline import headline
from vcsbench.report.stability import warnings as stability_warnings
from vcsbench.results.io import result_stem
from vcsbench.results.metrics import METRICS
from vcsbench.results.model import Benchmark, Run

FORMATS = ("md", "github", "rst", "html", "latex", "csv")
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

__all__ = ["FORMATS", "render", "render_rows", "summary", "table_rows"]


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


def run_labels(benches: Iterable[Benchmark]) -> dict[str, str]:
    """A run label per result file, where two files hold the same benchmark (variant, op,
    payload, fs): rows must then say which run they are."""
    seen: dict[tuple[str, str, str, str, str], set[str]] = {}
    for bench in benches:  # the same benchmark on the same machine in several files
        seen.setdefault((*bench.key, bench.machine), set()).add(bench.source)
    if all(len(sources) < 2 for sources in seen.values()):
        return {}
    sources = list(dict.fromkeys(b.source for b in benches))
    stems = [result_stem(src) for src in sources]
    if len(set(stems)) < len(stems):
        stems = [str(src) for src in sources]
    return dict(zip(sources, stems, strict=True))


def _uses_scratch(rows: list[Benchmark]) -> bool:
    return any((b.per_repo(SCRATCH_METRIC) or 0) > 0 for b in rows)


def machine_labels(benches: Iterable[Benchmark]) -> dict[str, str]:
    """A short label per machine ("A", "B", ...) when the results come from several."""
    machines = list(dict.fromkeys(b.machine for b in benches))
    if len(machines) < 2:
        return {}
    return {m: chr(ord("A") + i) if i < 26 else str(i) for i, m in enumerate(machines)}


def all_rows(grouped: dict[tuple[str, str, str], list[Benchmark]]) -> list[Benchmark]:
    return [b for rows in grouped.values() for b in rows]


def check_units(benches: Iterable[Benchmark]) -> None:
    """Refuse to put in one table figures whose units disagree with the registry."""
    for bench in benches:
        for name, value in bench.metrics.items():
            if value.unit and value.unit != METRICS[name].unit:
                raise VcsbenchError(
                    f"{bench.source}: {bench.name} records {name} in {value.unit!r}, not "
                    f"{METRICS[name].unit!r}; results in other units are not merged"
                )


def origin_of(machines: dict[str, str], runs: dict[str, str]) -> Callable[[Benchmark], str] | None:
    """Where a row came from (machine, run), when the inputs differ in that."""
    if not machines and not runs:
        return None

    def origin(bench: Benchmark) -> str:
        parts = []
        if machines:
            parts.append(f"machine {machines[bench.machine]}")
        if runs:
            parts.append(f"run {runs[bench.source]}")
        return ", ".join(parts)

    return origin


def table_rows(
    rows: list[Benchmark],
    baseline: str | None = None,
    machines: dict[str, str] | None = None,
    runs: dict[str, str] | None = None,
    block: int = DEFAULT_BLOCK,
) -> tuple[list[str], list[list[str]]]:
    """Header and formatted rows of one group's table: a machine column for several
    machines, a run column where several files hold the same benchmark."""
    fastest = min((b.median_ms for b in rows if b.median_ms), default=None)
    base = next((b for b in rows if b.label == baseline), None)
    metrics = [*TABLE_METRICS, *([SCRATCH_METRIC] if _uses_scratch(rows) else [])]
    header = ["backend", *(["run"] if runs else []), *(["machine"] if machines else [])]
    header += ["repos", "median ms", "IQR", "p95 ms", "p99 ms", "vs fastest"]
    if baseline:
        header.append(f"vs {baseline}")
    growths = [growth(b, block) for b in rows]
    growing = any(g is not None for g in growths)
    if growing:
        header += [f"growth (last/first {block:,})", "slope ms/1k repos"]
    header += [METRICS[m].label for m in metrics] + ["x floor", "errors"]
    out: list[list[str]] = []
    for bench, grew in zip(rows, growths, strict=True):
        median = bench.median_ms
        line = [
            bench.label,
            *([runs[bench.source]] if runs else []),
            *([machines[bench.machine]] if machines else []),
            bench.repos_text,
            fmt_ms(median),
            spread_text(bench),
            fmt_ms(bench.quantile_ms(0.95)),
            fmt_ms(bench.quantile_ms(0.99)),
            fmt_ratio(median / fastest if median and fastest else None),
        ]
        if baseline:
            base_median = base.median_ms if base else None
            line.append(fmt_ratio(median / base_median if median and base_median else None))
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


def environment(files: list[Run]) -> list[tuple[str, str]]:
    """(label, value) lines describing where and how the results were obtained."""
    lines: list[tuple[str, str]] = []

    def add(label: str, value: str) -> None:
        if value and (label, value) not in lines:
            lines.append((label, value))

    for result in files:
        machine = result.machine
        add("machine", machine.description)
        add(
            "system",
            f"{machine.distribution or '?'}, kernel {machine.kernel or '?'}, "
            f"Python {machine.python or '?'}",
        )
        for bench in result.benchmarks:
            fs = bench.filesystem
            device = fs.device or "no device counters"
            if fs.device_shared:
                device += " (shared with everything else on it)"
            add("filesystem", f"{fs.spec}: {fs.fstype} ({fs.mount_options}) on {device}")
            backend = bench.backend
            versions = ", ".join(f"{k} {v}" for k, v in backend.versions.items())
            options = ", ".join(f"{k}={v}" for k, v in backend.options.items() if v)
            durability = f"; durability: {backend.durability}" if backend.durability else ""
            add(
                "backend",
                f"{bench.label}: {versions}"
                + (f"; options {options}" if options else "")
                + durability,
            )
            add("cache", f"{bench.cache}; verify {bench.verify}")
        if result.command:
            add("command", result.command)
        add("results", f"{Path(result.path).name} ({result.datetime})")
    order = ["machine", "system", "filesystem", "backend", "cache", "command", "results"]
    return sorted(lines, key=lambda line: order.index(line[0]))


def render(
    files: list[Run],
    fmt: str = "md",
    baseline: str | None = None,
    plots: list[tuple[str, str]] | None = None,
    block: int = DEFAULT_BLOCK,
) -> str:
    """The whole report in ``fmt``; ``plots`` are (title, data URI or path) for html;
    ``block``: rounds per block for growth as repositories accumulate."""
    if fmt not in FORMATS:
        raise VcsbenchError(f"format {fmt!r} is not one of {', '.join(FORMATS)}")
    benches = [b for f in files for b in f.benchmarks]
    check_units(benches)
    grouped = groups(benches)
    machines = machine_labels(benches)
    if baseline and baseline not in {b.label for b in benches}:
        raise VcsbenchError(f"baseline {baseline!r} is not a backend in these results")
    if fmt == "csv":
        return _csv(grouped, baseline)
    if fmt == "html":
        return _html(files, grouped, baseline, plots or [])
    parts: list[str] = []
    env = environment(files)
    if fmt in ("md", "github"):
        parts.append("## Environment\n")
        parts.extend(
            f"- **{label}**: {code(value)}"
            if label == "command"
            else f"- **{label}**: {inline(value, fmt)}"
            for label, value in env
        )
    else:
        parts.append(table(["", "environment"], [list(line) for line in env], fmt))
    if machines:
        parts.append("")
        parts.extend(
            f"- **machine {label}**: {inline(machine, fmt)}" for machine, label in machines.items()
        )
    runs = run_labels(benches)
    if runs:
        parts.append("")
        parts.extend(
            f"- **run {inline(label, fmt)}**: {inline(source, fmt)}"
            for source, label in runs.items()
        )
    advice = stability_warnings(benches, max((f.machine.cpu_count for f in files), default=0))
    if advice:
        parts.append("")
        parts.extend(
            f"- **warning**: {inline(line, fmt)}"
            if fmt in ("md", "github")
            else f"warning: {inline(line, fmt)}"
            for line in advice
        )
    if fmt in ("md", "github"):
        parts.append("\n## Headline\n")
    elif fmt == "rst":
        parts.append("\nHeadline\n--------\n")
    else:
        parts.append("\n% Headline")
    parts.extend(headline(grouped, fmt, origin_of(machines, runs)))
    if fmt in ("md", "github"):
        parts.append("\n## Details\n")
    parts.append(_legend(fmt))
    for (op, payload, fs), rows in grouped.items():
        header, body = table_rows(rows, baseline, machines, runs, block)
        title = inline(f"{op} · payload {payload} · fs {fs}", fmt)
        if fmt in ("md", "github"):
            parts.append(f"\n### {title}\n")
        elif fmt == "rst":
            parts.append(f"\n{title}\n{'-' * len(title)}\n")
        else:
            parts.append(f"\n% {title}")
        parts.append(aligned(body, header, TABULATE_FORMAT[fmt]))
        parts.extend(inline(line, fmt) if line.strip() else line for line in error_lines(rows))
        for bench in rows:
            blocks_table = block_table(bench, block, TABULATE_FORMAT[fmt])
            if blocks_table:
                parts.append(
                    f"\nAs repositories accumulate: {inline(bench.label, fmt)}, blocks of "
                    f"{block:,}\n"
                )
                parts.append(blocks_table)
    if plots and fmt in ("md", "github"):
        parts.append("\n## Plots\n")
        parts.extend(
            f"![{inline(title, fmt).replace(']', ' ')}]({src.replace(' ', '%20')})"
            for title, src in plots
        )
    return "\n".join(parts) + "\n"


MAX_BLOCK_ROWS = 20


def block_table(bench: Benchmark, size: int, tablefmt: str) -> str:
    """Per block of rounds: repositories present, latency percentiles, device bytes and
    filesystem space per round; "" with fewer than two blocks. Long runs show
    ``MAX_BLOCK_ROWS`` evenly spaced blocks, always the first and the last."""
    found = blocks(bench, size)
    if len(found) < 2:
        return ""
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
    return table(header, body, tablefmt)


TEXT_COLUMNS = ("backend", "run", "machine")


def aligned(body: list[list[str]], header: list[str], tablefmt: str) -> str:
    """A table with text columns on the left and every number on the right."""
    align = ["left" if h in TEXT_COLUMNS else "right" for h in header]
    return table(header, body, tablefmt, align)


def error_lines(rows: list[Benchmark]) -> list[str]:
    """Failed operations grouped by kind, with counts, and what vcsbench knows of them."""
    lines: list[str] = []
    for bench in rows:
        if not bench.errors:
            continue
        kinds = bench.error_kinds or {e.error: 1 for e in bench.error_samples}
        counted = "; ".join(
            f"{n} x {kind}" for kind, n in sorted(kinds.items(), key=lambda kv: -kv[1])
        )
        lines.append(f"\nerrors of {bench.label}: {bench.errors} of {bench.repos}: {counted}")
        if bench.diagnosis:
            lines.append(f"  cause: {bench.diagnosis}")
    return lines


def _legend(fmt: str) -> str:
    text = (
        "median/p95/p99: wall time of one operation (ms), failed rounds excluded; IQR: "
        "interquartile range over the median (wide: over 10%); vs fastest: median over the "
        "fastest row's; CPU: user+sys incl. child processes; KiB columns and inodes are "
        "per repository; content: the files' bytes, the same on every filesystem; "
        "allocated: blocks on this filesystem; x floor: median over plain mkdir/write of "
        "the same files in the same sandbox (below 1: the operation took less time than "
        "those plain writes of its result)."
    )
    return (
        f"\n{'%' if fmt == 'latex' else ''}{'_' if fmt in ('md', 'github') else ''}"
        f"{text}{'_' if fmt in ('md', 'github') else ''}"
    )


CSV_METRICS = tuple(name for name in METRICS if name != "wall")


def _csv(grouped: dict[tuple[str, str, str], list[Benchmark]], baseline: str | None) -> str:
    """Every benchmark as a row of plain numbers, units in the header, for spreadsheets."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    header = [
        "op",
        "payload",
        "fs",
        "backend",
        "variant",
        "machine",
        "file",
        "repos",
        "rounds_asked",
        "errors",
        "median_ms",
        "iqr_ms",
        "p95_ms",
        "p99_ms",
        "mean_ms",
        "floor_ratio",
    ]
    header += [f"{name}_per_repo ({METRICS[name].unit})" for name in CSV_METRICS]
    writer.writerow(header)

    def number(value: float | None) -> str:
        return "" if value is None else repr(float(value))

    for (op, payload, fs), rows in grouped.items():
        for bench in rows:
            total = bench.total_ms
            mean = total / len(bench.samples_s) if total is not None else None
            writer.writerow(
                [
                    op,
                    payload,
                    fs,
                    bench.backend.name,
                    bench.label,
                    bench.machine,
                    bench.source,
                    bench.repos,
                    max(bench.rounds_asked, bench.repos),
                    bench.errors,
                    number(bench.median_ms),
                    number(bench.iqr_ms),
                    number(bench.quantile_ms(0.95)),
                    number(bench.quantile_ms(0.99)),
                    number(mean),
                    number(bench.floor_ratio),
                    *(number(bench.per_repo(name)) for name in CSV_METRICS),
                ]
            )
    return buffer.getvalue()


HTML_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:1500px;margin:2em auto;padding:0 1em;"
    "color:#222;line-height:1.4}h1{margin-bottom:.2em}h2{border-bottom:1px solid #ddd;"
    "padding-bottom:.2em;margin-top:2em}h3{margin-top:1.5em}"
    "nav{background:#f6f8fa;border:1px solid #ddd;padding:.5em 1em;margin:1em 0}"
    "nav ol{margin:.3em 0}table{border-collapse:collapse;font-size:90%;margin:.5em 0}"
    "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
    "td.text,th.text{text-align:left}th{background:#f0f3f6;cursor:pointer}"
    "tr:nth-child(even) td{background:#fafbfc}dt{font-weight:bold}.warn{color:#a40}"
    "figure{margin:1em 0}figcaption{font-size:90%;color:#555}code{font-size:90%}"
)
SORT_SCRIPT = (
    "document.querySelectorAll('th').forEach(function(th){th.title='sort';"
    "th.addEventListener('click',function(){var t=th.closest('table'),"
    "b=t.tBodies[0],i=Array.prototype.indexOf.call(th.parentNode.children,th),"
    "d=th.dataset.d=th.dataset.d==='a'?'d':'a',r=Array.from(b.rows),"
    "n=function(x){var v=parseFloat(x.replace(/[^0-9.eE+-]/g,''));return isNaN(v)?x:v};"
    "r.sort(function(x,y){var p=n(x.cells[i].textContent),q=n(y.cells[i].textContent);"
    "var c=(typeof p==='number'&&typeof q==='number')?p-q:String(p).localeCompare(String(q));"
    "return d==='a'?c:-c});r.forEach(function(x){b.appendChild(x)})})});"
)


def _html_table(header: list[str], lines: list[list[str]], text_columns: int) -> str:
    esc = html.escape

    def cls(i: int) -> str:
        return ' class="text"' if i < text_columns or header[i] in TEXT_COLUMNS else ""

    head = "".join(f"<th{cls(i)}>{esc(h)}</th>" for i, h in enumerate(header))
    rows = "".join(
        "<tr>" + "".join(f"<td{cls(i)}>{esc(c)}</td>" for i, c in enumerate(line)) + "</tr>"
        for line in lines
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def _html(
    files: list[Run],
    grouped: dict[tuple[str, str, str], list[Benchmark]],
    baseline: str | None,
    plots: list[tuple[str, str]],
) -> str:
    """One page: headline first, a table of contents, sortable tables, plots embedded."""
    esc = html.escape
    benches = all_rows(grouped)
    machines = machine_labels(benches)
    runs = run_labels(benches)
    toc = ['<li><a href="#headline">Headline</a></li>']
    details: list[str] = []
    for n, ((op, payload, fs), rows) in enumerate(grouped.items()):
        anchor = f"g{n}"
        title = f"{op} · payload {payload} · fs {fs}"
        toc.append(f'<li><a href="#{anchor}">{esc(title)}</a></li>')
        header, lines = table_rows(rows, baseline, machines, runs)
        details.append(f'<h3 id="{anchor}">{esc(title)}</h3>')
        details.append(_html_table(header, lines, 1))
        details.extend(f"<p class='warn'>{esc(line.strip())}</p>" for line in error_lines(rows))
    toc += ['<li><a href="#environment">Environment</a></li>']
    if plots:
        toc.append('<li><a href="#plots">Plots</a></li>')
    body = [
        "<h1>vcsbench report</h1>",
        f"<nav><strong>Contents</strong><ol>{''.join(toc)}</ol></nav>",
    ]
    cpu_count = max((f.machine.cpu_count for f in files), default=0)
    body.extend(
        f"<p class='warn'>warning: {esc(w)}</p>" for w in stability_warnings(benches, cpu_count)
    )
    body.append('<h2 id="headline">Headline</h2>')
    for piece in headline(grouped, "html", origin_of(machines, runs)):
        if piece.startswith("<table"):
            body.append(piece)
        elif piece:
            body.append(f"<p>{esc(piece)}</p>")
    body.append("<h2>Details</h2>")
    body.append(f"<p><em>{esc(_legend('html').strip())}</em></p>")
    body.extend(details)
    body.append('<h2 id="environment">Environment</h2><dl>')
    for label, value in environment(files):
        body.append(f"<dt>{esc(label)}</dt><dd><code>{esc(value)}</code></dd>")
    body.append("</dl>")
    if plots:
        body.append('<h2 id="plots">Plots</h2>')
        for title, src in plots:
            body.append(
                f'<figure><img alt="{esc(title)}" src="{esc(src)}" style="max-width:100%">'
                f"<figcaption>{esc(title)}</figcaption></figure>"
            )
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width'><title>vcsbench report</title>"
        f"<style>{HTML_STYLE}</style></head><body>{''.join(body)}"
        f"<script>{SORT_SCRIPT}</script></body></html>\n"
    )


def summary(files: list[Run]) -> str:
    """A compact plain-text table of every benchmark, for the end of a run."""
    lines = []
    for bench in sorted((b for f in files for b in f.benchmarks), key=lambda b: b.key):
        median = bench.median_ms
        lines.append(
            [
                bench.label,
                bench.op,
                bench.payload.name,
                bench.fs,
                bench.repos_text,
                fmt_ms(median),
                spread_text(bench),
                f"{1000 / median:,.0f}" if median else "—",
                fmt_metric("io_write_device", bench.per_repo("io_write_device")),
                fmt_metric("footprint_allocated", bench.per_repo("footprint_allocated")),
                fmt_ratio(bench.floor_ratio),
                bench.errors,
            ]
        )
    return table(
        [
            "backend",
            "op",
            "payload",
            "fs",
            "repos",
            "median ms",
            "IQR",
            "ops/s",
            "device KiB/repo",
            "allocated KiB/repo",
            "x floor",
            "errors",
        ],
        lines,
        "simple",
    )
