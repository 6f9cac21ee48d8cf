"""``vcsbench run``: the benchmark suite (the one ``pytest --benchmark-only`` runs), and
``--resume`` of an interrupted run."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from vcsbench import __version__
from vcsbench.cli.command import Command
from vcsbench.cli.common import (
    add_selection,
    check_out,
    interrupted,
    out_path,
    selection_of,
    this_whole,
)
from vcsbench.cli.repeat import SERIES_RUN, repeat_count, repeated, run_paths
from vcsbench.errors import VcsbenchError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_selection(parser)
    parser.add_argument(
        "--resume",
        type=Path,
        metavar="RESULTS",
        help="run only what RESULTS (written by an interrupted 'vcsbench run') lacks or has "
        "partial, with its selection, into the same file",
    )
    parser.add_argument(
        "--repeat",
        type=repeat_count,
        default=1,
        metavar="N",
        help="the same run N times, each a process and a file of its own (NAME-1.json ... "
        "NAME-N.json), then each benchmark's median run by run and how far the runs fall "
        "apart; with --fs A,B also each filesystem against the first over the runs (the "
        "run as the unit: how 'is xfs better?' is answered between runs)",
    )
    parser.add_argument(
        "pytest_args",
        nargs=argparse.REMAINDER,
        help="after --: extra pytest arguments, e.g. -- --benchmark-save=base",
    )


def run(args: argparse.Namespace) -> int:
    from vcsbench.bench.runner import run_suite

    if args.resume is not None:
        if args.repeat > 1:
            raise VcsbenchError(
                f"--repeat {args.repeat} with --resume: a resumed run is one file; resume "
                "each unfinished file of a series on its own"
            )
        return _resume(args)
    selection = selection_of(args)
    out = out_path(args, "run")
    paths = run_paths(out, args.repeat) if args.repeat > 1 else [out]
    for path in paths:
        check_out(path)
    there = [str(p) for p in paths if args.repeat > 1 and (p.exists() or p.is_symlink())]
    if there:
        raise VcsbenchError(
            f"--repeat {args.repeat} --out {out}: writes {there[0]}"
            + (f" and {len(there) - 1} more" if len(there) > 1 else "")
            + ", which is there already (--out names the series, not those files); give "
            "another --out, or move them"
        )
    extra = [a for a in args.pytest_args if a != "--"]
    if not selection.cases():
        raise VcsbenchError("nothing to run: " + "; ".join(selection.unsupported() or ["no case"]))
    if args.repeat > 1:
        return repeated(selection, paths, args.store, extra)
    code, run_id = run_suite(selection, out, extra, command=["vcsbench", *sys.argv[1:]])
    return conclude(args, out, run_id, code)


def _resume(args: argparse.Namespace) -> int:
    """Run what an earlier ``vcsbench run`` left missing or partial, into the same file."""

    from vcsbench.bench.options import OPTIONS
    from vcsbench.bench.recorded import PLACE_OPTIONS
    from vcsbench.bench.runner import run_suite
    from vcsbench.bench.selection import Selection
    from vcsbench.measure.machine import machine_info
    from vcsbench.results import layout, parse
    from vcsbench.results.io import read_document

    path = Path(args.resume)
    document = read_document(path)
    earlier = parse(document, path)
    where = f"--resume {path}"
    if earlier.version != __version__:
        raise VcsbenchError(
            f"{where}: written by vcsbench {earlier.version or '?'}, this is {__version__}; "
            "results of two versions are not one run (start a new one)"
        )
    here = machine_info()
    for key in ("cpu_model", "cpu_count", "memory_bytes", "kernel"):
        if here[key] != getattr(earlier.machine, key):
            raise VcsbenchError(
                f"{where}: written on another machine ({key} {getattr(earlier.machine, key)!r}, "
                f"here {here[key]!r}); resume it there, or start a new run"
            )
    facts = layout.run_facts(document)
    if facts.get("door") != "vcsbench run":
        raise VcsbenchError(
            f"{where}: not written by 'vcsbench run' (by {str(facts.get('door', '?'))[:40]}); "
            "only its results can be resumed"
        )
    # Data, never a command: vcsbench's own options, each checked as on the command line;
    # programs and places only as the command line states them again.
    defaults = {o.dest: o.default for o in OPTIONS}
    stated = {
        dest: getattr(args, dest)
        for dest in PLACE_OPTIONS
        if getattr(args, dest, None) not in (None, [], "", defaults.get(dest))
    }
    selection = Selection.from_recorded(facts.get("selection"), where, stated)
    extra = [a for a in args.pytest_args if a != "--"]
    carry = layout.finished(document)
    kept, done = len(carry), carry.names
    if all(f"test_vcs[{name}]" in done for name in selection.case_ids()):
        print(f"nothing to resume: all {kept} benchmark(s) of {path} finished")
        return 0
    shown = shlex.join(["vcsbench", "run", *selection.command_line()])
    print(f"resuming {path}: {kept} finished benchmark(s) kept, running the rest of: {shown}")
    command = ["vcsbench", "run", *selection.command_line(), "--out", str(path)]
    code, run_id = run_suite(selection, path, extra, command=command, carry=carry)
    return conclude(args, path, run_id, code)


def conclude(
    args: argparse.Namespace, out: Path, run_id: str, code: int, answer_first: bool = False
) -> int:
    """This run's summary table, the ratios of what ran interleaved (with
    ``answer_first``, each read in words before everything: ``vcsbench time A B``) and the
    results path, then the exit status."""
    from vcsbench.report.formats.markup import block
    from vcsbench.report.interleaved import answers, interleaved
    from vcsbench.report.summary import summary
    from vcsbench.report.terminal import for_terminal

    whole = this_whole(out, run_id)
    run = None if whole is None else whole.run
    if run is not None:
        from vcsbench.cli.store import remember
        from vcsbench.report.stability import warnings

        remember(args, out, whole)
        series = os.environ.get(SERIES_RUN, "")
        if series:  # one run of --repeat's: the series' answer comes at its end
            for line in warnings(run.benchmarks, run.machine.cpu_count):
                print(f"warning: {line}")
            print(f"results: {out} (run {series} of the series; its tables: vcsbench report {out})")
            return interrupted(out, run) or code
        print()
        said = answers(run.benchmarks) if answer_first else []
        if said:
            print(for_terminal("\n".join(f"- {line}" for line in said)) + "\n")
        print(summary([run]))
        blocks = interleaved(run.benchmarks)
        if blocks:
            print("\n" + for_terminal("\n\n".join(block(item, "md") for item in blocks)))
        for line in warnings(run.benchmarks, run.machine.cpu_count):
            print(f"warning: {line}")
        print(f"\nresults: {out}")
    return interrupted(out, run) or code


COMMAND = Command(
    "run",
    add_arguments,
    run,
    dict(
        help="run the benchmark suite (the same one pytest --benchmark-only runs)",
        description="Run backend x operation x payload x filesystem benchmarks and write "
        "pytest-benchmark JSON with vcsbench's metrics. Arguments after -- go to pytest.",
    ),
)
