"""Plots of result files (matplotlib, PNG and SVG). Reads results only.

- latency: box plots per backend on a log scale, ops/s beside, errors marked;
- cdf: share of operations finished within t, per backend;
- timeline: per-operation latency over the run, with the system sampler's iowait,
  Dirty/Writeback and device busy on the same time axis;
- footprint: content vs allocated bytes per repository, per backend and filesystem.
"""

from __future__ import annotations

import re
import zlib
from collections import defaultdict
from pathlib import Path

import matplotlib
import matplotlib.axis
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from vcsbench.report.tables import groups
from vcsbench.results.model import Benchmark, Run

DPI = 110
SAMPLER_SERIES = (
    # (memory axis?, sample key, legend, colour, divisor)
    (False, "cpu_iowait_pct", "iowait %", "tab:red", 1),
    (False, "device_busy_pct", "device busy %", "tab:purple", 1),
    (True, "dirty_bytes", "Dirty", "tab:orange", 2**20),
    (True, "writeback_bytes", "Writeback", "tab:green", 2**20),
)


PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
KNOWN = ("git-pygit2", "git-cli", "svn-fs", "svn-pysvn", "svn-cli")
"""Backends with a colour of their own; any other name gets one by a stable hash."""
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def style(label: str) -> tuple[str, str]:
    """(colour, marker) of a backend variant: the same in every plot and every report.

    A backend keeps its colour; its variants are told apart by the marker.
    """
    name, _, options = label.partition("[")
    if name in KNOWN:
        colour = PALETTE[KNOWN.index(name)]
    else:
        colour = PALETTE[len(KNOWN) + zlib.crc32(name.encode()) % (len(PALETTE) - len(KNOWN))]
    marker = MARKERS[zlib.crc32(options.encode()) % len(MARKERS)] if options else MARKERS[0]
    return colour, marker


def _plain_log_ticks(axis: matplotlib.axis.Axis) -> None:
    """Log-scale ticks written as 2, 5, 10 rather than 2x10^0."""
    formatter = matplotlib.ticker.FuncFormatter(lambda value, _: f"{value:g}")
    axis.set_major_formatter(formatter)
    axis.set_minor_formatter(formatter)


def _slug(*parts: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", "-".join(parts)).strip("_")


PLOT_FORMATS = {"png": (".png",), "svg": (".png", ".svg")}
"""``png`` alone keeps a set of plots small enough to check in; ``svg`` adds vectors."""


def _save(fig: Figure, directory: Path, stem: str, suffixes: tuple[str, ...]) -> list[Path]:
    written = []
    for suffix in suffixes:
        path = directory / f"{stem}{suffix}"
        fig.savefig(path, dpi=DPI, bbox_inches="tight")
        written.append(path)
    plt.close(fig)
    return written


def _no_samples(rows: list[Benchmark], title: str) -> Figure:
    """What a plot of latencies shows when no round succeeded: the errors, said plainly."""
    fig, ax = plt.subplots(figsize=(8, 1.2 + 0.4 * len(rows)))
    ax.set_axis_off()
    ax.set_title(title)
    text = "\n".join(f"{b.label}: every round failed ({b.errors} of {b.repos})" for b in rows)
    ax.text(0.5, 0.5, text, ha="center", va="center", color="red", transform=ax.transAxes)
    return fig


def _has_samples(rows: list[Benchmark]) -> bool:
    return any(b.samples_s for b in rows)


def latency_boxplot(rows: list[Benchmark], title: str) -> Figure:
    if not _has_samples(rows):
        return _no_samples(rows, title)
    fig, ax = plt.subplots(figsize=(9, 0.6 * len(rows) + 1.6))
    data = [[s * 1000 for s in b.samples_s] if not b.failed else [float("nan")] for b in rows]
    boxes = ax.boxplot(
        data,
        vert=False,
        whis=(1, 99),
        showfliers=True,
        patch_artist=True,
        flierprops={"markersize": 2, "alpha": 0.4},
    )
    for box, bench in zip(boxes["boxes"], rows, strict=True):
        box.set_facecolor(style(bench.label)[0])
        box.set_alpha(0.6)
    ax.set_yticks(range(1, len(rows) + 1), [b.label for b in rows])
    ax.set_xscale("log")
    _plain_log_ticks(ax.xaxis)
    ax.set_xlabel("latency per operation (ms, log scale); whiskers p1-p99")
    ax.set_title(title)
    ax.invert_yaxis()
    for i, bench in enumerate(rows, start=1):
        median = bench.median_ms
        text = f"{1000 / median:,.0f} ops/s" if median else "failed"
        if bench.errors:
            text += f"  ✗ {bench.errors} errors"
        ax.annotate(
            text,
            xy=(1.01, i),
            xycoords=("axes fraction", "data"),
            va="center",
            color="red" if bench.errors else "black",
            fontsize=9,
        )
    ax.grid(axis="x", which="both", alpha=0.3)
    return fig


def latency_cdf(rows: list[Benchmark], title: str) -> Figure:
    if not _has_samples(rows):
        return _no_samples(rows, title)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for bench in rows:
        if bench.failed or not bench.samples_s:
            continue
        ordered = sorted(s * 1000 for s in bench.samples_s)
        shares = [100 * (i + 1) / len(ordered) for i in range(len(ordered))]
        colour, _ = style(bench.label)
        ax.step(ordered, shares, where="post", label=bench.label, color=colour)
    ax.set_xscale("log")
    _plain_log_ticks(ax.xaxis)
    ax.set_xlabel("latency per operation (ms, log scale)")
    ax.set_ylabel("operations finished within t (%)")
    ax.set_ylim(0, 100)
    ax.set_title(title)
    ax.grid(which="both", alpha=0.3)
    ax.legend(loc="lower right")
    return fig


def timeline(rows: list[Benchmark], title: str) -> Figure:
    if not _has_samples(rows):
        return _no_samples(rows, title)
    fig, (lat, cpu, mem) = plt.subplots(
        3, 1, figsize=(10, 8), sharex=True, gridspec_kw={"height_ratios": [2, 1, 1]}
    )
    starts = [t for b in rows for t in b.rounds.t_start_s if t]
    origin = min(starts) if starts else 0.0
    for bench in rows:
        rounds = bench.rounds
        points = [
            (t - origin, w / 1e6)
            for t, w, ok in zip(rounds.t_start_s, rounds.wall_ns, rounds.ok, strict=False)
            if ok and t
        ]
        if points:
            colour, marker = style(bench.label)
            lat.scatter(
                *zip(*points, strict=True),
                s=4,
                label=bench.label,
                alpha=0.6,
                color=colour,
                marker=marker,
            )
        samples = bench.sampler.get("samples", [])
        if not samples:
            continue
        ts = [s["t_s"] - origin for s in samples]
        for on_memory, key, label, color, scale in SAMPLER_SERIES:
            if samples[0].get(key) is None:
                continue
            (mem if on_memory else cpu).plot(
                ts,
                [s[key] / scale for s in samples],
                marker=".",
                color=color,
                label=label if bench is rows[0] else None,
            )
    lat.set_yscale("log")
    _plain_log_ticks(lat.yaxis)
    lat.set_ylabel("latency (ms, log)")
    lat.set_title(title)
    lat.legend(loc="upper right", markerscale=3)
    cpu.set_ylabel("%")
    cpu.set_ylim(0, 100)
    mem.set_ylabel("MiB")
    mem.set_xlabel("time since the first operation (s)")
    for ax in (lat, cpu, mem):
        ax.grid(alpha=0.3)
        if ax is not lat and ax.get_legend_handles_labels()[0]:
            ax.legend(loc="upper right")
    return fig


def footprint(benches: list[Benchmark], title: str) -> Figure:
    labels = [f"{b.label}\n{b.fs}" for b in benches]
    content = [(b.per_repo("footprint_content") or 0) / 1024 for b in benches]
    allocated = [(b.per_repo("footprint_allocated") or 0) / 1024 for b in benches]
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(benches)), 4.5))
    xs = range(len(benches))
    ax.bar([x - 0.2 for x in xs], content, width=0.4, label="content (file bytes)")
    ax.bar([x + 0.2 for x in xs], allocated, width=0.4, label="allocated (st_blocks)")
    ax.set_xticks(list(xs), labels, fontsize=8)
    ax.set_ylabel("KiB per repository")
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    ax.legend()
    return fig


def write_plots(
    files: list[Run], directory: Path, plot_format: str = "png"
) -> list[tuple[str, Path]]:
    """Write every plot as PNG (and SVG with ``svg``); return (title, PNG path) for each."""
    suffixes = PLOT_FORMATS[plot_format]
    directory.mkdir(parents=True, exist_ok=True)
    made: list[tuple[str, Path]] = []
    benches = [b for f in files for b in f.benchmarks]
    for (op, payload, fs), rows in groups(benches).items():
        what = f"{op}, payload {payload}, fs {fs}"
        for kind, draw in (
            ("latency", latency_boxplot),
            ("cdf", latency_cdf),
            ("timeline", timeline),
        ):
            title = f"{kind}: {what}"
            paths = _save(draw(rows, title), directory, _slug(kind, op, payload, fs), suffixes)
            made.append((title, paths[0]))
    by_op: dict[tuple[str, str], list[Benchmark]] = defaultdict(list)
    for bench in benches:
        by_op[(bench.op, bench.payload.name)].append(bench)
    for (op, payload), rows in by_op.items():
        title = f"footprint per repository after {op}, payload {payload}"
        paths = _save(footprint(rows, title), directory, _slug("footprint", op, payload), suffixes)
        made.append((title, paths[0]))
    return made
