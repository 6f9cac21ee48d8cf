"""``vcsbench report``: tables (and plots) for RFCs, from result files only."""

from __future__ import annotations

import argparse
import base64
import os
from pathlib import Path

from vcsbench.cli.command import Command
from vcsbench.errors import VcsbenchError
from vcsbench.results import Run


def _block_size(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number >= 1")
    return int(text)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", nargs="+", help="result JSON files")
    parser.add_argument(
        "--format", default="md", choices=["md", "github", "rst", "html", "latex", "csv"]
    )
    parser.add_argument(
        "--out", type=Path, help="directory to write report.<ext> into (html: with plots embedded)"
    )
    parser.add_argument("--plots", type=Path, help="directory to write plots into")
    parser.add_argument(
        "--plot-format",
        choices=["png", "svg"],
        default="png",
        help="png (default), or svg: PNG and SVG of every plot",
    )
    parser.add_argument(
        "--plot-kinds",
        default="all",
        metavar="LIST",
        help="which plots: summary, latency, cdf, timeline, footprint, growth (default: all; "
        "growth where a benchmark has two blocks of rounds)",
    )
    parser.add_argument("--baseline", help="backend variant to add a ratio column against")
    parser.add_argument(
        "--block-size",
        type=_block_size,
        default=1000,
        metavar="N",
        help="rounds per block for cost as repositories accumulate: per-block percentiles, "
        "the growth column and plot, shown where a benchmark has two blocks (default 1000)",
    )


def _plot_kinds(text: str) -> tuple[str, ...]:
    from vcsbench.report.plots import PLOT_KINDS

    kinds = tuple(k.strip() for k in text.split(",") if k.strip())
    if kinds == ("all",):
        return PLOT_KINDS
    unknown = [k for k in kinds if k not in PLOT_KINDS]
    if unknown or not kinds:
        raise VcsbenchError(f"--plot-kinds {text!r}: use some of {', '.join(PLOT_KINDS)}, or all")
    return kinds


def run(args: argparse.Namespace) -> int:

    from vcsbench.report.tables import render
    from vcsbench.results import read_many

    runs = read_many(args.results)
    load_runs = [run for run in runs if run.load is not None]
    bench_runs = [run for run in runs if run.load is None]
    plot_dir = args.plots or (args.out / "plots" if args.out and args.format == "html" else None)
    parts: list[str] = []
    if load_runs:
        parts.append(_report_loads(args, load_runs, plot_dir))
    plots: list[tuple[str, str]] = []
    if bench_runs and plot_dir is not None:
        from vcsbench.report.plots import write_plots

        try:
            written = write_plots(
                bench_runs, plot_dir, args.plot_format, _plot_kinds(args.plot_kinds),
                args.block_size,
            )  # fmt: skip
        except OSError as exc:
            raise _unwritable("--plots", plot_dir, exc) from None
        for title, png in written:
            if args.format == "html":
                data = base64.b64encode(png.read_bytes()).decode()
                plots.append((title, f"data:image/png;base64,{data}"))
            else:
                plots.append((title, os.path.relpath(png, args.out or Path.cwd())))
    if bench_runs:
        parts.append(render(bench_runs, args.format, args.baseline, plots, args.block_size))
    text = "\n".join(parts)
    if args.out is None:
        print(text, end="")
        return 0
    suffix = {
        "md": "md",
        "github": "md",
        "rst": "rst",
        "html": "html",
        "latex": "tex",
        "csv": "csv",
    }[args.format]
    from vcsbench.results.io import own_directory, write_file

    path = own_directory(args.out, "--out") / f"report.{suffix}"
    write_file(path, text, "--out")
    print(f"wrote {path}" + (f" and {len(plots)} plots in {plot_dir}" if plots else ""))
    return 0


def _unwritable(option: str, where: Path, exc: OSError) -> VcsbenchError:
    return VcsbenchError(
        f"{option} {where}: cannot be written ({exc.strerror or exc}); give a directory "
        "you can write"
    )


def _report_loads(args: argparse.Namespace, runs: list[Run], plot_dir: Path | None) -> str:
    """Load results: each one's tables (and with --plots, its plots beneath them)."""
    from vcsbench.report.load import load_csv, load_markdown
    from vcsbench.report.loadplots import write_load_plots

    if args.format == "csv":
        return load_csv(runs)
    parts = []
    for run in runs:
        parts.append(load_markdown(run, args.format))
        if plot_dir is None:
            continue
        try:
            written = write_load_plots(run, Path(plot_dir), args.plot_format)
        except OSError as exc:
            raise _unwritable("--plots", Path(plot_dir), exc) from None
        for title, png in written:
            parts.append(f"![{title}]({os.path.relpath(png, args.out or Path.cwd())})\n")
    return "\n".join(parts)


COMMAND = Command(
    "report",
    add_arguments,
    run,
    dict(
        help="tables (and plots) for RFCs from result files",
        description="One table per (operation, payload, filesystem), a row per backend, "
        "with the environment and the command that reproduces the run. Several result "
        "files are merged into the same tables.",
    ),
)
