"""``vcsbench report``: tables (and plots) for RFCs, from result files only."""

from __future__ import annotations

import argparse
import base64
import os
from pathlib import Path
from typing import TYPE_CHECKING

from vcsbench.cli.command import Command
from vcsbench.errors import VcsbenchError
from vcsbench.report.formats import FORMATS
from vcsbench.results.deadline import Deadline

if TYPE_CHECKING:
    from vcsbench.results.model import Run


def _block_size(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number >= 1")
    return int(text)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", nargs="+", help="result JSON files")
    parser.add_argument(
        "--format",
        default="md",
        choices=FORMATS,
        help="md (default), github, rst, latex, html (one page: contents, sortable tables, "
        "plots embedded), or csv (the figures, a row per benchmark or load step)",
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
    parser.add_argument(
        "--plan",
        metavar="students=N,window=T",
        help="for load results: a capacity plan, what N submissions in the window ask of "
        "the disk on each access path from the figures measured per session (e.g. "
        "students=10000,window=60m)",
    )
    parser.add_argument(
        "--baseline",
        help="backend variant to add a ratio column against; or a filesystem of the results "
        "(e.g. ext4) to set every other filesystem against it (each run's against its own; "
        "several runs of --fs ext4,xfs also get a row over the runs); or an operation as run "
        "(e.g. commit, against commit[history=100])",
    )
    parser.add_argument(
        "--fail-on",
        metavar="time:N%",
        help="for interleaved variants: exit 1 where one is significantly slower than the "
        "baseline (the blocks as the unit) by more than N%% -- a CI gate on one run",
    )
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
    from vcsbench.results import read_many

    limit = _time_gate(args.fail_on) if args.fail_on else None
    args.plan = Deadline.parse(args.plan) if args.plan else None
    runs = read_many(args.results)
    bench_runs = [run for run in runs if run.load is None]
    if limit is None:
        return _report(args, runs)
    from vcsbench.report.interleaved import block_regressions

    benches = [bench for run in bench_runs for bench in run.benchmarks]
    if not any(bench.harness.interleaved for bench in benches):
        raise VcsbenchError(
            "report --fail-on gates interleaved variants, and these results have none; run "
            "the variants together (vcsbench run --interleave), or compare runs with "
            "compare --fail-on"
        )
    code = _report(args, runs)
    found = block_regressions(benches, args.baseline, limit)
    for line in found:
        print(f"REGRESSION {line}")
    return 1 if found else code


def _report(args: argparse.Namespace, runs: list[Run]) -> int:
    from vcsbench.report.document import Document, Figure
    from vcsbench.report.formats import write
    from vcsbench.report.formats.csv import loads
    from vcsbench.report.load import load_document
    from vcsbench.report.tables import document, render

    load_runs = [run for run in runs if run.load is not None]
    bench_runs = [run for run in runs if run.load is None]
    plot_dir = args.plots or (args.out / "plots" if args.out and args.format == "html" else None)
    if args.format == "csv":
        text = "\n".join(
            [
                *([loads(load_runs)] if load_runs else []),
                *([render(bench_runs, "csv")] if bench_runs else []),
            ]
        )
        return _emit(args, text, 0, plot_dir)
    documents: list[Document] = []
    plotted = 0
    for run in load_runs:
        doc = load_document(run, args.plan)
        if plot_dir is not None:
            from vcsbench.report.loadplots import write_load_plots

            try:
                written = write_load_plots(run, Path(plot_dir), args.plot_format)
            except OSError as exc:
                raise _unwritable("--plots", Path(plot_dir), exc) from None
            doc.add(*(Figure(title, _src(args, png)) for title, png in written))
            plotted += len(written)
        documents.append(doc)
    if bench_runs:
        plots: list[tuple[str, str]] = []
        if plot_dir is not None:
            from vcsbench.report.plots import write_plots

            try:
                written = write_plots(
                    bench_runs, plot_dir, args.plot_format, _plot_kinds(args.plot_kinds),
                    args.block_size,
                )  # fmt: skip
            except OSError as exc:
                raise _unwritable("--plots", plot_dir, exc) from None
            plots = [(title, _src(args, png)) for title, png in written]
            plotted += len(plots)
        documents.append(document(bench_runs, args.baseline, plots, args.block_size))
    return _emit(args, write(documents, args.format), plotted, plot_dir)


def _time_gate(text: str) -> float:
    from vcsbench.judge.limits import parse_gate

    gate = parse_gate(text)
    if set(gate) != {"time"}:
        raise VcsbenchError(
            f"report --fail-on {text!r}: only time:N% (the blocks are timed); for bytes and "
            "footprint between runs use compare --fail-on"
        )
    return gate["time"]


def _src(args: argparse.Namespace, png: Path) -> str:
    """A plot as the report refers to it: embedded in html, else a path relative to it."""
    if args.format == "html":
        return f"data:image/png;base64,{base64.b64encode(png.read_bytes()).decode()}"
    return os.path.relpath(png, args.out or Path.cwd())


def _emit(args: argparse.Namespace, text: str, plotted: int, plot_dir: Path | None) -> int:
    """The report on stdout, or as report.<ext> in --out."""
    from vcsbench.report.formats import SUFFIX
    from vcsbench.results.io import own_directory, write_file

    if args.out is None:
        print(text, end="")
        return 0
    path = own_directory(args.out, "--out") / f"report.{SUFFIX[args.format]}"
    write_file(path, text, "--out")
    print(f"wrote {path}" + (f" and {plotted} plots in {plot_dir}" if plotted else ""))
    return 0


def _unwritable(option: str, where: Path, exc: OSError) -> VcsbenchError:
    return VcsbenchError(
        f"{option} {where}: cannot be written ({exc.strerror or exc}); give a directory "
        "you can write"
    )


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
