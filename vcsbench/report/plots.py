"""Plots of result files (matplotlib, PNG and SVG). Reads results only.

- latency: box plots per backend on a log scale, ops/s beside, errors marked;
- cdf: share of operations finished within t, per backend;
- timeline: per-operation latency over the run, with the system sampler's iowait,
  Dirty/Writeback and device busy on the same time axis;
- footprint: content vs allocated bytes per repository, per backend and filesystem.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import matplotlib
import matplotlib.axis
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from vcsbench.report.blocks import DEFAULT_BLOCK, blocks
from vcsbench.report.plotkit import (
    MIN_SAMPLES,
    PLOT_FORMATS,
    SAMPLER_SERIES,
    footer,
    has_samples,
    legend_outside,
    no_samples,
    plain_log_ticks,
    save,
    slug,
    style,
)
from vcsbench.report.tables import groups
from vcsbench.results.io import own_directory
from vcsbench.results.model import Benchmark, Run


def latency_boxplot(rows: list[Benchmark], title: str) -> Figure:
    if not has_samples(rows):
        return no_samples(rows, title)
    fig, ax = plt.subplots(figsize=(9, 0.6 * len(rows) + 1.6))
    data = [[s * 1000 for s in b.samples_s] if not b.failed else [float("nan")] for b in rows]
    boxes = ax.boxplot(
        data,
        orientation="horizontal",
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
    plain_log_ticks(ax.xaxis, [v for d in data for v in d if v == v])
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
    footer(fig, rows)
    return fig


def latency_cdf(rows: list[Benchmark], title: str) -> Figure:
    if not has_samples(rows):
        return no_samples(rows, title)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for bench in rows:
        if bench.failed or not bench.samples_s:
            continue
        ordered = sorted(s * 1000 for s in bench.samples_s)
        shares = [100 * (i + 1) / len(ordered) for i in range(len(ordered))]
        colour, _ = style(bench.label)
        ax.step(ordered, shares, where="post", label=bench.label, color=colour)
    ax.set_xscale("log")
    plain_log_ticks(ax.xaxis, [s * 1000 for b in rows for s in b.samples_s])
    ax.set_xlabel("latency per operation (ms, log scale)")
    ax.set_ylabel("operations finished within t (%)")
    ax.set_ylim(0, 100)
    ax.set_title(title)
    ax.grid(which="both", alpha=0.3)
    legend_outside(ax)
    footer(fig, rows)
    return fig


def _varies(values: list[float]) -> bool:
    return bool(values) and max(values) > 0 and max(values) != min(values)


def timeline(rows: list[Benchmark], title: str) -> Figure:
    if not has_samples(rows):
        return no_samples(rows, title)
    starts = [t for b in rows for t in b.rounds.t_start_s if t]
    origin = min(starts) if starts else 0.0
    # The sampler's series that move at all, with enough points to be a line; a panel
    # without one is not drawn. One benchmark: a colour per series; several: a colour per
    # benchmark (as its latency dots) and a line style per series.
    series: dict[bool, list[tuple[str, str, str, str, list[float], list[float]]]] = {
        False: [],
        True: [],
    }
    few = 0
    for on_memory, key, label, color, scale, dashes in SAMPLER_SERIES:
        for bench in rows:
            samples = bench.sampler.get("samples", [])
            values = [s.get(key) for s in samples]
            if not samples or any(v is None for v in values):
                continue
            if len(samples) < MIN_SAMPLES:
                few = max(few, len(samples))
                continue
            ys = [float(v) / scale for v in values if v is not None]
            if _varies(ys):
                ts = [s["t_s"] - origin for s in samples]
                name = label if len(rows) == 1 else f"{label} ({bench.label})"
                colour, marker = (color, ".") if len(rows) == 1 else style(bench.label)
                series[on_memory].append((name, colour, marker, dashes, ts, ys))
    panels = 1 + bool(series[False]) + bool(series[True])
    ratios = [2] + [1] * (panels - 1)
    fig, axes = plt.subplots(
        panels,
        1,
        figsize=(10, 3.2 + 2.2 * (panels - 1)),
        sharex=True,
        gridspec_kw={"height_ratios": ratios},
        squeeze=False,
    )
    lat = axes[0][0]
    latencies: list[float] = []
    for bench in rows:
        rounds = bench.rounds
        points = [
            (t - origin, w / 1e6)
            for t, w, ok in zip(rounds.t_start_s, rounds.wall_ns, rounds.ok, strict=False)
            if ok and t
        ]
        if points:
            colour, marker = style(bench.label)
            latencies += [p[1] for p in points]
            lat.scatter(
                *zip(*points, strict=True),
                s=4,
                label=bench.label,
                alpha=0.6,
                color=colour,
                marker=marker,
            )
    lat.set_yscale("log")
    plain_log_ticks(lat.yaxis, latencies)
    lat.set_ylabel("latency (ms, log)")
    if few:
        title += (
            f"\n(machine series left out: {few} sample(s) only, one every "
            f"{rows[0].sampler.get('interval_s', '?')} s)"
        )
    lat.set_title(title)
    legend_outside(lat, markerscale=3)
    index = 1
    for on_memory, unit in ((False, "%"), (True, "MiB")):
        if not series[on_memory]:
            continue
        ax = axes[index][0]
        index += 1
        for name, color, marker, dashes, ts, ys in series[on_memory]:
            ax.plot(ts, ys, marker=marker, markersize=4, color=color, linestyle=dashes, label=name)
        ax.set_ylabel(unit)
        if unit == "%":
            ax.set_ylim(0, 100)
        legend_outside(ax)
    axes[-1][0].set_xlabel("time since the first operation (s)")
    for row in axes:
        row[0].grid(alpha=0.3)
    footer(fig, rows)
    return fig


def footprint(benches: list[Benchmark], title: str) -> Figure:
    """Per filesystem a panel; per backend its colour: content (light) beside allocated."""
    by_fs: dict[str, list[Benchmark]] = {}
    for bench in benches:
        by_fs.setdefault(bench.fs, []).append(bench)
    width = max(len(rows) for rows in by_fs.values())
    fig, axes = plt.subplots(
        1,
        len(by_fs),
        figsize=(min(16, 1.2 + 1.0 * width * len(by_fs)), 4.2),
        sharey=True,
        squeeze=False,
    )
    for ax, (fs, rows) in zip(axes[0], by_fs.items(), strict=True):
        xs = range(len(rows))
        for x, bench in zip(xs, rows, strict=True):
            colour, _ = style(bench.label)
            content = (bench.per_repo("footprint_content") or 0) / 1024
            allocated = (bench.per_repo("footprint_allocated") or 0) / 1024
            ax.bar(x - 0.2, content, width=0.4, color=colour, alpha=0.35)
            ax.bar(x + 0.2, allocated, width=0.4, color=colour)
        ax.set_xticks(list(xs), [b.label for b in rows], fontsize=8, rotation=30, ha="right")
        ax.set_title(fs, fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("KiB per repository (light: content, dark: allocated)")
    fig.suptitle(title)
    footer(fig, benches)
    return fig


def summary(benches: list[Benchmark]) -> Figure:
    """The headline as a picture: per benchmark group, each backend's median time (with
    its 95% interval) and device KiB written per repository, side by side."""
    from vcsbench.report.headline import median_interval

    groups_: dict[tuple[str, str, str], list[Benchmark]] = {}
    for bench in benches:
        groups_.setdefault((bench.op, bench.payload.name, bench.fs), []).append(bench)
    keys = list(groups_)
    # The device panel only where some benchmark had a device (tmpfs has none).
    devices = any(b.per_repo("io_write_device") is not None for b in benches)
    fig, axes = plt.subplots(
        1,
        2 if devices else 1,
        figsize=(12 if devices else 8, 1.2 + 0.32 * len(keys)),
        sharey=True,
        squeeze=False,
    )
    time_ax = axes[0][0]
    io_ax = axes[0][1] if devices else time_ax
    labels = list(dict.fromkeys(b.label for b in benches))
    offsets = {label: (i - (len(labels) - 1) / 2) * 0.12 for i, label in enumerate(labels)}
    times: list[float] = []
    for y, key in enumerate(keys):
        for bench in groups_[key]:
            colour, marker = style(bench.label)
            median = bench.median_ms
            if median is not None:
                interval = median_interval([s * 1000 for s in bench.samples_s])
                low, high = interval if interval else (median, median)
                times += [low, high]
                time_ax.errorbar(
                    median,
                    y + offsets[bench.label],
                    xerr=[[median - low], [high - median]],
                    fmt=marker,
                    color=colour,
                    markersize=4,
                    capsize=2,
                    label=None if bench.label in _seen(time_ax) else bench.label,
                )
            device = bench.per_repo("io_write_device")
            if device is not None:
                io_ax.plot(
                    device / 1024, y + offsets[bench.label], marker, color=colour, markersize=4
                )
    time_ax.set_yticks(
        range(len(keys)),
        [f"{op} · {groups_[(op, p, fs)][0].payload.shown} · {fs}" for op, p, fs in keys],
        fontsize=7,
    )
    time_ax.invert_yaxis()
    if times:
        time_ax.set_xscale("log")
        plain_log_ticks(time_ax.xaxis, times)
    time_ax.set_xlabel("median ms per operation (95% interval), log")
    if devices:
        io_ax.set_xlabel("device KiB written per repository")
    for ax in axes[0]:
        ax.grid(axis="x", which="both", alpha=0.3)
    handles, names = time_ax.get_legend_handles_labels()
    if handles:
        io_ax.legend(handles, names, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    # Above the figure's top edge, growing upwards (the saved image's tight box takes it
    # in): a figure a few groups high has no room for two lines over its axes.
    fig.suptitle(
        "summary: every backend per benchmark group"
        + ("" if devices else "\n(no device counters in these sandboxes: no device panel)"),
        y=1.0,
        va="bottom",
    )
    footer(fig, benches)
    return fig


def _seen(ax: Any) -> set[str]:
    return set(ax.get_legend_handles_labels()[1])


def growth_plot(rows: list[Benchmark], title: str, size: int = DEFAULT_BLOCK) -> Figure:
    """Latency against repositories already present: every round as a faint dot, each
    block's p50 as a line and its p90 and p99 dashed."""
    fig, ax = plt.subplots(figsize=(8, 4.5))
    every: list[float] = []
    labels = [b.label for b in rows]
    for bench in rows:
        found = [b for b in blocks(bench, size) if b.p50_ms is not None]
        if len(found) < 2:
            continue
        colour, _ = style(bench.label)
        name = bench.label
        if labels.count(bench.label) > 1:  # one variant from several runs: say which
            name = f"{bench.label}, {bench.age:,} present first"
        rounds = bench.rounds
        xs = [bench.age + i for i in range(len(rounds)) if rounds.ok[i]]
        ys = [rounds.wall_ns[i] / 1e6 for i in range(len(rounds)) if rounds.ok[i]]
        every += ys
        ax.scatter(xs, ys, s=2, alpha=0.15, color=colour, linewidths=0)
        mids = [b.present + b.rounds / 2 for b in found]
        ax.plot(mids, [b.p50_ms or 0.0 for b in found], color=colour, label=f"{name} p50")
        for q, style_ in (("p90_ms", "--"), ("p99_ms", ":")):
            values: list[float] = [getattr(b, q) for b in found]
            ax.plot(mids, values, color=colour, linestyle=style_, label=f"{name} {q[:3]}")
    ax.set_yscale("log")
    plain_log_ticks(ax.yaxis, every or None)
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda x, _: f"{x:,.0f}"))
    ax.set_xlabel("repositories already in the sandbox")
    ax.set_ylabel("latency per operation (ms, log scale)")
    ax.set_title(title)
    ax.grid(which="both", alpha=0.3)
    legend_outside(ax)
    footer(fig, rows)
    return fig


def _grows(rows: list[Benchmark], size: int) -> bool:
    return any(len(blocks(b, size)) >= 2 for b in rows)


PLOT_KINDS = ("summary", "latency", "cdf", "timeline", "footprint", "growth")


def write_plots(
    files: list[Run],
    directory: Path,
    plot_format: str = "png",
    kinds: tuple[str, ...] = PLOT_KINDS,
    block: int = DEFAULT_BLOCK,
) -> list[tuple[str, Path]]:
    """Write the plots of ``kinds`` as PNG (and SVG with ``svg``); return (title, PNG path)."""
    suffixes = PLOT_FORMATS[plot_format]
    own_directory(directory, "--plots")
    made: list[tuple[str, Path]] = []
    benches = [b for f in files for b in f.benchmarks]
    title = "summary: every backend per benchmark group"
    if "summary" in kinds:
        made.append((title, save(summary(benches), directory, "summary", suffixes)[0]))
    for (op, payload, fs), rows in groups(benches).items():
        what = f"{op}, payload {rows[0].payload.shown}, fs {fs}"
        for kind, draw in (
            ("latency", latency_boxplot),
            ("cdf", latency_cdf),
            ("timeline", timeline),
        ):
            if kind not in kinds:
                continue
            title = f"{kind}: {what}"
            paths = save(draw(rows, title), directory, slug(kind, op, payload, fs), suffixes)
            made.append((title, paths[0]))
        if "growth" in kinds and _grows(rows, block):
            title = f"growth as repositories accumulate: {what}, blocks of {block:,}"
            figure = growth_plot(rows, title, block)
            paths = save(figure, directory, slug("growth", op, payload, fs), suffixes)
            made.append((title, paths[0]))
    by_op: dict[tuple[str, str], list[Benchmark]] = defaultdict(list)
    for bench in benches:
        by_op[(bench.op, bench.payload.name)].append(bench)
    for (op, payload), rows in by_op.items() if "footprint" in kinds else ():
        title = f"footprint per repository after {op}, payload {rows[0].payload.shown}"
        paths = save(footprint(rows, title), directory, slug("footprint", op, payload), suffixes)
        made.append((title, paths[0]))
    return made
