"""What every plot shares: a backend's colour and marker, log ticks people read, the footer
(rounds, machine, sandbox), and the writer (a 256-colour PNG, SVG beside when asked)."""

from __future__ import annotations

import io
import re
import warnings
import zlib
from pathlib import Path
from typing import Any

import matplotlib
import matplotlib.axis
import matplotlib.ticker
import PIL.Image

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from vcsbench.results.io import write_file
from vcsbench.results.model import Benchmark

# A log axis over figures that are all zero (a result whose clock said 0) draws empty;
# matplotlib's warning about it would reach the terminal as a stack line.
warnings.filterwarnings("ignore", "Data has no positive values", UserWarning)
DPI = 110
SAMPLER_SERIES = (
    # (memory axis?, sample key, legend, colour, divisor, line style). The machine's
    # figures, not the run's alone: the legend says so.
    (False, "cpu_iowait_pct", "iowait % (whole machine)", "tab:red", 1, "-"),
    (False, "device_busy_pct", "device busy % (sandbox's device)", "tab:purple", 1, "--"),
    (True, "dirty_bytes", "Dirty (whole machine)", "tab:orange", 2**20, "-"),
    (True, "writeback_bytes", "Writeback (whole machine)", "tab:green", 2**20, "--"),
)
MIN_SAMPLES = 5
"""A sampler series with fewer points is not drawn: two points of a 1-second benchmark
are no timeline."""


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


def plain_log_ticks(axis: matplotlib.axis.Axis, values: list[float] | None = None) -> None:
    """Log-scale ticks written as 2, 5, 10 rather than 2x10^0, labelled on a few values
    only (1, 2, 5 per decade; every integer where the data span less than a decade), so
    that labels never collide and a narrow range still gets two."""
    positive = [v for v in values or [] if v > 0]
    narrow = bool(positive) and max(positive) / min(positive) < 10
    subs = tuple(range(1, 10)) if narrow else (1.0, 2.0, 5.0)
    axis.set_major_locator(matplotlib.ticker.LogLocator(base=10, subs=subs))
    axis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda value, _: f"{value:g}"))
    axis.set_minor_locator(matplotlib.ticker.LogLocator(base=10, subs=tuple(range(1, 10))))
    axis.set_minor_formatter(matplotlib.ticker.NullFormatter())


def footer(fig: Figure, rows: list[Benchmark]) -> None:
    """What every plot states: rounds, machine and sandbox."""
    rounds = sorted({b.repos for b in rows})
    machines = sorted({b.machine.split(",")[0] for b in rows if b.machine})
    sandboxes = sorted({sandbox_text(b) for b in rows})
    text = (
        f"rounds: {', '.join(f'{n:,}' for n in rounds)} · machine: {'; '.join(machines) or '?'}"
        f" · sandbox: {'; '.join(sandboxes)}"
    )
    # Below everything the axes drew, x labels included: a fixed offset in points.
    fig.canvas.draw()
    boxes = [box for box in (ax.get_tightbbox() for ax in fig.axes) if box is not None]
    lowest = min((box.y0 for box in boxes), default=0.0) / fig.dpi / fig.get_figheight()
    fig.text(0.01, min(0.0, lowest) - 0.01, text, fontsize=7, color="#555", va="top")


def sandbox_text(bench: Benchmark) -> str:
    fs = bench.filesystem
    size = f", {fs.image_size_bytes / 2**30:g} GiB image" if fs.image_size_bytes else ""
    return f"{fs.spec} ({fs.fstype}{size})"


def legend_outside(ax: Any, **kwargs: Any) -> None:
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, **kwargs)


def slug(*parts: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", "-".join(parts)).strip("_")


PLOT_FORMATS = {"png": (".png",), "svg": (".png", ".svg")}
"""``png`` alone keeps a set of plots small enough to check in; ``svg`` adds vectors."""


def save(fig: Figure, directory: Path, stem: str, suffixes: tuple[str, ...]) -> list[Path]:
    written = []
    for suffix in suffixes:
        path = directory / f"{stem}{suffix}"
        buffer = io.BytesIO()
        fig.savefig(buffer, dpi=DPI, bbox_inches="tight", format=suffix.lstrip("."))
        if suffix == ".png":
            # An adaptive 256-colour palette: the same picture in about a third of the bytes.
            image = PIL.Image.open(buffer).convert("RGB")
            buffer = io.BytesIO()
            image.quantize(colors=256).save(buffer, format="png", optimize=True)
        write_file(path, buffer.getvalue(), "plot")
        written.append(path)
    plt.close(fig)
    return written


def no_samples(rows: list[Benchmark], title: str) -> Figure:
    """What a plot of latencies shows when no round succeeded: the errors, said plainly."""
    fig, ax = plt.subplots(figsize=(8, 1.2 + 0.4 * len(rows)))
    ax.set_axis_off()
    ax.set_title(title)
    text = "\n".join(f"{b.label}: every round failed ({b.errors} of {b.repos})" for b in rows)
    ax.text(0.5, 0.5, text, ha="center", va="center", color="red", transform=ax.transAxes)
    return fig


def has_samples(rows: list[Benchmark]) -> bool:
    return any(b.samples_s for b in rows)
