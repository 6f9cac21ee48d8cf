"""Plots of a load run, per access path, from the raw session records.

- ``steps``: GitHub Enterprise's figure: per step a boxplot of the successful sessions'
  latencies on a log scale, the achieved ok/s as a line on a second axis, and every
  failed session as a red cross at its latency.
- ``percentiles``: the ApacheBench curve: latency against percentile, a line per step.
- ``timeline``: every session's latency at the time it started, with iowait, device busy
  and Dirty/Writeback from the system sampler on the same time axis.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from vcsbench.report.format import level_text
from vcsbench.report.plotkit import PLOT_FORMATS, plain_log_ticks, save
from vcsbench.results.io import own_directory
from vcsbench.results.load import Load, LoadPath
from vcsbench.results.model import Run

LOAD_PLOT_KINDS = ("steps", "percentiles", "timeline")


def _slug(text: str) -> str:
    """As the plots of reference runs are named: ``local:svn-fs`` → ``local-svn-fs``."""
    return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-")


def _unit(shape: str) -> str:
    return "clients" if shape == "closed" else "arrivals/s"


def _by_step(raw: dict[str, list[Any]], n: int) -> tuple[list[list[float]], list[list[float]]]:
    ok: list[list[float]] = [[] for _ in range(n)]
    failed: list[list[float]] = [[] for _ in range(n)]
    for step, latency, error in zip(raw["step"], raw["latency_s"], raw["error"], strict=True):
        (ok if error is None else failed)[step].append(latency * 1000)
    return ok, failed


def plot_steps(load: Load, entry: LoadPath) -> Figure:
    steps = entry.steps
    ok, failed = _by_step(entry.raw, len(steps))
    fig, ax = plt.subplots(figsize=(9, 5))
    positions = list(range(1, len(steps) + 1))
    shown = [values if values else [float("nan")] for values in ok]
    ax.boxplot(shown, positions=positions, widths=0.5, whis=(1, 99), showfliers=False)
    for position, values in zip(positions, failed, strict=True):
        if values:
            ax.scatter([position] * len(values), values, marker="x", color="red", zorder=3)
    ax.set_yscale("log")
    plain_log_ticks(ax.yaxis, [v for values in [*ok, *failed] for v in values])
    ax.set_xticks(positions, [f"{row.level:g}" for row in steps])
    ax.set_xlabel(_unit(load.shape))
    ax.set_ylabel("session latency, ms (log; box: quartiles, whiskers: p1-p99)")
    rate = ax.twinx()
    rate.plot(positions, [row.ops_per_s or 0 for row in steps], color="tab:blue", marker="o")
    rate.set_ylabel("successful sessions per second", color="tab:blue")
    rate.set_ylim(bottom=0)
    errors = sum(len(v) for v in failed)
    ax.set_title(
        f"{load.scenario} over {entry.label} on {entry.fs}: "
        f"latency and throughput per step ({errors:,} failed sessions, red x)"
    )
    fig.tight_layout()
    return fig


def plot_percentiles(load: Load, entry: LoadPath) -> Figure:
    steps = entry.steps
    ok, _ = _by_step(entry.raw, len(steps))
    fig, ax = plt.subplots(figsize=(9, 5))
    for row, values in zip(steps, ok, strict=True):
        if not values:
            continue
        values.sort()
        n = len(values)
        percent = [100 * (i + 0.5) / n for i in range(n)]
        ax.plot(percent, values, label=level_text(load, row.level))
    ax.set_yscale("log")
    plain_log_ticks(ax.yaxis, [v for values in ok for v in values])
    ax.set_xlabel("percentile of the step's successful sessions")
    ax.set_ylabel("latency, ms (log)")
    ax.set_xlim(0, 100)
    ax.legend(fontsize="small")
    ax.set_title(f"{load.scenario} over {entry.label}: latency by percentile, per step")
    fig.tight_layout()
    return fig


def plot_timeline(load: Load, entry: LoadPath) -> Figure:
    raw = entry.raw
    samples = entry.sampler
    starts = raw["t_intended"] or raw["t_start"]
    t0 = min([*starts, *(s["t_s"] for s in samples)], default=0.0)
    fig, (lat, cpu, mem) = plt.subplots(3, 1, figsize=(10, 8), sharex=True)
    sessions = list(zip(starts, raw["latency_s"], raw["error"], strict=True))
    good = [(t - t0, x * 1000) for t, x, e in sessions if not e]
    bad = [(t - t0, x * 1000) for t, x, e in sessions if e]
    if good:
        lat.scatter(*zip(*good, strict=True), s=4, label="session")
    if bad:
        lat.scatter(*zip(*bad, strict=True), s=16, marker="x", color="red", label="failed")
    lat.set_yscale("log")
    plain_log_ticks(lat.yaxis, [x for _, x in good + bad])
    lat.set_ylabel("latency, ms (log)")
    lat.legend(fontsize="small", loc="upper left")
    for i, row in enumerate(entry.steps):  # each step shaded, its level named
        for axis in (lat, cpu, mem):
            axis.axvspan(row.t0 - t0, row.t1 - t0, alpha=0.06 * (1 + i % 2))
        lat.annotate(
            f"{row.level:g}", (row.t0 - t0, 1), xycoords=("data", "axes fraction"),
            fontsize="x-small", va="top",
        )  # fmt: skip
    times = [s["t_s"] - t0 for s in samples]
    cpu.plot(times, [s["cpu_iowait_pct"] for s in samples], label="iowait %")
    busy = [s.get("device_busy_pct") for s in samples]
    if any(b is not None for b in busy):
        cpu.plot(times, [b if b is not None else float("nan") for b in busy], label="device busy %")
    cpu.set_ylabel("%")
    cpu.set_ylim(0, 100)
    cpu.legend(fontsize="small", loc="upper left")
    mem.plot(times, [s["dirty_bytes"] / 2**20 for s in samples], label="Dirty")
    mem.plot(times, [s["writeback_bytes"] / 2**20 for s in samples], label="Writeback")
    mem.set_ylabel("MiB")
    mem.set_xlabel("seconds since the first session was due")
    mem.legend(fontsize="small", loc="upper left")
    lat.set_title(
        f"{load.scenario} over {entry.label} on {entry.fs}: sessions and the system over time"
    )
    fig.tight_layout()
    return fig


PLOTTERS = {"steps": plot_steps, "percentiles": plot_percentiles, "timeline": plot_timeline}


def write_load_plots(
    run: Run, out_dir: Path, fmt: str = "png", kinds: tuple[str, ...] = ()
) -> list[tuple[str, Path]]:
    """Each kind of plot for each access path of a load result; (title, file) pairs."""
    load = run.load
    if load is None:
        return []
    own_directory(out_dir, "--plots")
    written = []
    for entry in load.paths:
        for kind in kinds or LOAD_PLOT_KINDS:
            stem = f"load-{_slug(load.scenario)}-{_slug(entry.label)}-{kind}"
            fig = PLOTTERS[kind](load, entry)
            first, *_ = save(fig, out_dir, stem, PLOT_FORMATS[fmt])
            written.append((f"{load.scenario} over {entry.label}: {kind}", first))
    return written
