"""Tables for people: one per (operation, payload, filesystem), a row per backend.

Reads result files only (``vcsbench.results``); never imports measuring code.
"""

from __future__ import annotations

import csv
import html
import io
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tabulate import tabulate

from vcsbench.errors import VcsbenchError
from vcsbench.results import BenchResult, ResultFile

FORMATS = ("md", "github", "rst", "html", "latex", "csv")
TABULATE_FORMAT = {
    "md": "pipe",
    "github": "github",
    "rst": "rst",
    "latex": "latex",
    "html": "unsafehtml",
}
WIDE_SPREAD = 0.10
KIB = 1024.0

COLUMNS = [
    "backend",
    "repos",
    "median ms",
    "p95 ms",
    "p99 ms",
    "vs fastest",
    "CPU ms",
    "logical KiB written",
    "device KiB written",
    "apparent KiB",
    "allocated KiB",
    "inodes",
    "x floor",
    "errors",
]


def fmt_ms(value: float | None) -> str:
    if value is None:
        return "—"
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}" if value >= 1 else f"{value:.3f}"


def fmt_num(value: float | None, scale: float = 1.0, digits: int = 1) -> str:
    if value is None:
        return "n/a"
    scaled = value / scale
    return f"{scaled:,.0f}" if abs(scaled) >= 1000 else f"{scaled:,.{digits}f}"


def fmt_ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}x"


def groups(results: Iterable[BenchResult]) -> dict[tuple[str, str, str], list[BenchResult]]:
    grouped: dict[tuple[str, str, str], list[BenchResult]] = defaultdict(list)
    for bench in results:
        grouped[(bench.op, bench.payload, bench.fs)].append(bench)
    for rows in grouped.values():
        rows.sort(key=lambda b: (b.median_ms is None, b.median_ms or 0.0))
    return dict(grouped)


def spread_flag(bench: BenchResult) -> str:
    median, iqr = bench.median_ms, bench.iqr_ms
    if median and iqr is not None and iqr > WIDE_SPREAD * median:
        return f" (wide: IQR {100 * iqr / median:.0f}%)"
    return ""


def table_rows(
    rows: list[BenchResult], baseline: str | None = None
) -> tuple[list[str], list[list[str]]]:
    """Header and formatted rows of one group's table."""
    fastest = min((b.median_ms for b in rows if b.median_ms), default=None)
    base = next((b for b in rows if b.backend == baseline), None)
    header = list(COLUMNS)
    if baseline:
        header.insert(6, f"vs {baseline}")
    out: list[list[str]] = []
    for bench in rows:
        median = bench.median_ms
        cpu = None
        user, sys_ = bench.per_repo("cpu_user"), bench.per_repo("cpu_sys")
        if user is not None and sys_ is not None:
            cpu = (user + sys_) * 1000
        floor_ratio = (bench.info.get("floor") or {}).get("ratio")
        line = [
            bench.backend,
            str(bench.repos),
            fmt_ms(median) + spread_flag(bench),
            fmt_ms(bench.quantile_ms(0.95)),
            fmt_ms(bench.quantile_ms(0.99)),
            fmt_ratio(median / fastest if median and fastest else None),
            fmt_num(cpu, digits=2),
            fmt_num(bench.per_repo("io_write_logical"), KIB),
            fmt_num(bench.per_repo("io_write_device"), KIB),
            fmt_num(bench.per_repo("footprint_apparent"), KIB),
            fmt_num(bench.per_repo("footprint_allocated"), KIB),
            fmt_num(bench.per_repo("footprint_inodes"), digits=0),
            fmt_ratio(floor_ratio),
            f"{bench.errors}/{bench.repos}" if bench.errors else "0",
        ]
        if baseline:
            base_median = base.median_ms if base else None
            line.insert(6, fmt_ratio(median / base_median if median and base_median else None))
        out.append(line)
    return header, out


def environment(files: list[ResultFile]) -> list[tuple[str, str]]:
    """(label, value) lines describing where and how the results were obtained."""
    lines: list[tuple[str, str]] = []

    def add(label: str, value: str) -> None:
        if value and (label, value) not in lines:
            lines.append((label, value))

    for result in files:
        machine = result.machine.get("vcsbench", {})
        add(
            "machine",
            f"{machine.get('cpu_model', '?')}, {machine.get('cpu_count', '?')} CPUs, "
            f"{fmt_num(machine.get('memory_bytes'), 1 << 30)} GiB memory",
        )
        add(
            "system",
            f"{machine.get('distribution', '?')}, kernel {machine.get('kernel', '?')}, "
            f"Python {machine.get('python', '?')}",
        )
        for bench in result.benchmarks:
            fs = bench.fs_info
            device = fs.get("device") or "no block device"
            add(
                "filesystem",
                f"{fs.get('spec')}: {fs.get('fstype')} ({fs.get('mount_options')}) on {device}",
            )
            backend = bench.backend_info
            versions = ", ".join(f"{k} {v}" for k, v in backend.get("versions", {}).items())
            options = ", ".join(f"{k}={v}" for k, v in backend.get("options", {}).items() if v)
            add(
                "backend",
                f"{bench.backend}: {versions}" + (f"; options {options}" if options else ""),
            )
            add("cache", f"{bench.info.get('cache', '?')}; verify {bench.info.get('verify', '?')}")
        if result.command:
            add("command", result.command)
        add("results", f"{Path(result.path).name} ({result.datetime})")
    order = ["machine", "system", "filesystem", "backend", "cache", "command", "results"]
    return sorted(lines, key=lambda line: order.index(line[0]))


def render(
    files: list[ResultFile],
    fmt: str = "md",
    baseline: str | None = None,
    plots: list[tuple[str, str]] | None = None,
) -> str:
    """The whole report in ``fmt``; ``plots`` are (title, data URI or path) for html."""
    if fmt not in FORMATS:
        raise VcsbenchError(f"format {fmt!r} is not one of {', '.join(FORMATS)}")
    benches = [b for f in files for b in f.benchmarks]
    grouped = groups(benches)
    if baseline and baseline not in {b.backend for b in benches}:
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
            f"- **{label}**: `{value}`" if label == "command" else f"- **{label}**: {value}"
            for label, value in env
        )
    else:
        parts.append(tabulate(env, headers=["", "environment"], tablefmt=TABULATE_FORMAT[fmt]))
    for (op, payload, fs), rows in grouped.items():
        header, body = table_rows(rows, baseline)
        title = f"{op} · payload {payload} · fs {fs}"
        if fmt in ("md", "github"):
            parts.append(f"\n### {title}\n")
        elif fmt == "rst":
            parts.append(f"\n{title}\n{'-' * len(title)}\n")
        else:
            parts.append(f"\n% {title}")
        parts.append(
            tabulate(body, headers=header, tablefmt=TABULATE_FORMAT[fmt], disable_numparse=True)
        )
    parts.append(_legend(fmt))
    return "\n".join(parts) + "\n"


def _legend(fmt: str) -> str:
    text = (
        "median/p95/p99: wall time of one operation (ms), failed rounds excluded; "
        "vs fastest: median over the fastest row's; CPU: user+sys incl. child processes; "
        "KiB columns are per repository; x floor: median over plain mkdir/write of the same "
        "files in the same sandbox; wide: IQR over 10% of the median."
    )
    return (
        f"\n{'%' if fmt == 'latex' else ''}{'_' if fmt in ('md', 'github') else ''}"
        f"{text}{'_' if fmt in ('md', 'github') else ''}"
    )


def _csv(grouped: dict[tuple[str, str, str], list[BenchResult]], baseline: str | None) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    wrote_header = False
    for (op, payload, fs), rows in grouped.items():
        header, body = table_rows(rows, baseline)
        if not wrote_header:
            writer.writerow(["op", "payload", "fs", *header])
            wrote_header = True
        for line in body:
            writer.writerow([op, payload, fs, *line])
    return buffer.getvalue()


def _html(
    files: list[ResultFile],
    grouped: dict[tuple[str, str, str], list[BenchResult]],
    baseline: str | None,
    plots: list[tuple[str, str]],
) -> str:
    esc = html.escape
    body = ["<h1>vcsbench report</h1>", "<h2>Environment</h2>", "<dl>"]
    for label, value in environment(files):
        body.append(f"<dt>{esc(label)}</dt><dd><code>{esc(value)}</code></dd>")
    body.append("</dl>")
    for (op, payload, fs), rows in grouped.items():
        header, lines = table_rows(rows, baseline)
        body.append(f"<h2>{esc(op)} · payload {esc(payload)} · fs {esc(fs)}</h2>")
        body.append(
            tabulate(
                [[esc(c) for c in line] for line in lines],
                headers=[esc(h) for h in header],
                tablefmt="unsafehtml",
                disable_numparse=True,
            )
        )
    body.append(f"<p><em>{esc(_legend('html').strip())}</em></p>")
    if plots:
        body.append("<h2>Plots</h2>")
        for title, src in plots:
            body.append(
                f'<figure><img alt="{esc(title)}" src="{src}" style="max-width:100%">'
                f"<figcaption>{esc(title)}</figcaption></figure>"
            )
    style = (
        "body{font-family:sans-serif;max-width:1400px;margin:2em auto}"
        "table{border-collapse:collapse;font-size:90%}"
        "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
        "td:first-child,th:first-child{text-align:left}dt{font-weight:bold}"
    )
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>vcsbench report</title>"
        f"<style>{style}</style></head><body>{''.join(body)}</body></html>\n"
    )


def summary(files: list[ResultFile]) -> str:
    """A compact plain-text table of every benchmark, for the end of a run."""
    lines = []
    for bench in sorted((b for f in files for b in f.benchmarks), key=lambda b: b.key):
        median = bench.median_ms
        lines.append(
            [
                bench.backend,
                bench.op,
                bench.payload,
                bench.fs,
                bench.repos,
                fmt_ms(median) + spread_flag(bench),
                f"{1000 / median:,.0f}" if median else "—",
                fmt_num(bench.per_repo("io_write_device"), KIB),
                fmt_num(bench.per_repo("footprint_allocated"), KIB),
                fmt_ratio((bench.info.get("floor") or {}).get("ratio")),
                bench.errors,
            ]
        )
    return tabulate(
        lines,
        headers=[
            "backend",
            "op",
            "payload",
            "fs",
            "repos",
            "median ms",
            "ops/s",
            "device KiB/repo",
            "allocated KiB/repo",
            "x floor",
            "errors",
        ],
        disable_numparse=True,
    )


def render_rows(header: list[str], rows: list[list[Any]], fmt: str = "md") -> str:
    return tabulate(
        rows, headers=header, tablefmt=TABULATE_FORMAT.get(fmt, "pipe"), disable_numparse=True
    )
