"""``vcsbench compare``: result files against a base, with significance and a CI gate."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from vcsbench.cli.command import Command
from vcsbench.cli.store import add_store_option
from vcsbench.errors import VcsbenchError
from vcsbench.report.formats import FORMATS

if TYPE_CHECKING:
    from vcsbench.store.earlier import Seen_in


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "base", nargs="?", help="result JSON (vcsbench or pytest-benchmark --benchmark-save)"
    )
    parser.add_argument(
        "others", nargs="*", metavar="OTHER", help="result files to compare against BASE, each"
    )
    parser.add_argument(
        "--base-runs",
        nargs="+",
        metavar="FILE",
        help="instead of BASE: several runs of the base side (at least two), with "
        "--other-runs; each run's figure is one value, and a change must stand out of the "
        "spread between runs",
    )
    parser.add_argument(
        "--other-runs", nargs="+", metavar="FILE", help="several runs of the other side"
    )
    add_store_option(
        parser,
        " whose earlier runs of each benchmark (this machine, the same versions) widen the "
        "calibration's spread where theirs is wider; none: the calibration alone",
    )
    parser.add_argument(
        "--format",
        default="md",
        choices=FORMATS,
        help="md (default), github, rst, latex, html (one page), or csv (the tables); "
        "with html or csv, --fail-on's answer goes to stderr",
    )
    parser.add_argument(
        "--fail-on",
        metavar="SPEC",
        help="e.g. time:10%%,io_write_device:5%%: exit 1 on a regression beyond a "
        "threshold, and on whatever the gate cannot judge (a benchmark missing, no rounds, "
        "a rising error rate, a figure not measured, too few runs to detect the threshold)",
    )


def _seen(args: argparse.Namespace, stack: contextlib.ExitStack) -> Seen_in | None:
    """The store's spread of earlier runs, where a store is there to read (a missing
    default store is no store yet: the calibration alone)."""
    from vcsbench.cli.store import store_path
    from vcsbench.store.earlier import seen_in
    from vcsbench.store.store import Store

    path = store_path(args)
    if isinstance(path, Path) and not path.is_file():
        if args.store is not None:
            raise VcsbenchError(
                f"--store {path}: no store there (runs add to one as they finish); give the "
                "store's file, or --store none to judge by the calibration alone"
            )
        return None
    return None if path is None else seen_in(stack.enter_context(Store(path)))


def run(args: argparse.Namespace) -> int:
    with contextlib.ExitStack() as stack:
        return _run(args, stack)


def _run(args: argparse.Namespace, stack: contextlib.ExitStack) -> int:
    from vcsbench.judge.comparison import compare_runs
    from vcsbench.judge.limits import gate_lines, parse_gate
    from vcsbench.report.compare import compare_document
    from vcsbench.report.document import lines_of
    from vcsbench.report.formats import write
    from vcsbench.report.formats.markup import MARKUPS
    from vcsbench.report.load_compare import compare_loads
    from vcsbench.results import read

    repeats = args.base_runs is not None or args.other_runs is not None
    if repeats and (args.base is not None or args.base_runs is None or args.other_runs is None):
        raise VcsbenchError(
            "give either BASE OTHER... or --base-runs FILE... --other-runs FILE..., not a mix"
        )
    if not repeats and (args.base is None or not args.others):
        raise VcsbenchError("give BASE and at least one OTHER (or --base-runs and --other-runs)")
    gate = parse_gate(args.fail_on) if args.fail_on else {}
    if repeats:
        bases = [read(path) for path in args.base_runs]
        sides = [[read(path) for path in args.other_runs]]
    else:
        bases = [read(args.base)]
        sides = [[read(path)] for path in args.others]
    for run_ in (*bases, *(r for side in sides for r in side)):
        if run_.kind != bases[0].kind:
            raise VcsbenchError(
                f"{run_.path} holds {run_.kind} and {bases[0].path} {bases[0].kind}; compare "
                "results of one kind (benchmarks with benchmarks, load runs with load runs)"
            )
    if bases[0].load is not None:
        if repeats:
            raise VcsbenchError(
                "--base-runs and --other-runs compare benchmark results, not load runs"
            )
        if gate:
            raise VcsbenchError(
                "--fail-on gates benchmark results; a load run's steps have no gate yet"
            )
        print(write([compare_loads(bases[0], side[0]) for side in sides], args.format), end="")
        return 0
    failed: list[str] = []
    seen = _seen(args, stack)
    documents = []
    for others in sides:
        pairs, left = compare_runs(bases, others, seen)
        doc = compare_document(bases, others, pairs, left)
        if gate:
            fails, judged = gate_lines(pairs, left, gate, (len(bases), len(others)))
            failed += fails
            if judged:
                doc.add(lines_of(*(f"gate: {line}" for line in judged)))
        documents.append(doc)
    print(write(documents, args.format), end="")
    # The gate's answer last, on its own lines: on stdout after text, on stderr after a
    # page or a sheet (which it would spoil)
    answer = sys.stdout if args.format in MARKUPS else sys.stderr
    for line in failed:
        print(f"GATE FAILS {line}", file=answer)
    if gate and not failed:
        print(f"gate passed: {args.fail_on}", file=answer)
    return 1 if failed else 0


COMMAND = Command(
    "compare",
    add_arguments,
    run,
    dict(
        help="compare result files against a base, with significance",
        description="Match benchmarks of BASE and each OTHER (or of several runs a side); "
        "show each run's median, the ratio with its interval, and a verdict only where "
        "drift between runs could not have made it: the runs are the unit, judged against "
        "this machine's run-to-run spread (vcsbench doctor --spread) and the spread between "
        "each side's runs. Also: what differs between the environments, and benchmarks "
        "found in one file only.",
    ),
)
