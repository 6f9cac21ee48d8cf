"""``vcsbench compare``: result files against a base, with significance and a CI gate."""

from __future__ import annotations

import argparse

from vcsbench.cli.command import Command
from vcsbench.errors import VcsbenchError


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
    parser.add_argument(
        "--fail-on",
        metavar="SPEC",
        help="e.g. time:10%%,io_write_device:5%%: exit 1 on a significant "
        "regression beyond a threshold",
    )


def run(args: argparse.Namespace) -> int:
    from vcsbench.report.compare import compare, parse_gate, regressions, render
    from vcsbench.report.load import compare_loads
    from vcsbench.results import read

    repeats = args.base_runs is not None or args.other_runs is not None
    if repeats and (args.base is not None or args.base_runs is None or args.other_runs is None):
        raise VcsbenchError(
            "give either BASE OTHER... or --base-runs FILE... --other-runs FILE..., not a mix"
        )
    if repeats:
        return _repeats(args, parse_gate(args.fail_on) if args.fail_on else {})
    if args.base is None or not args.others:
        raise VcsbenchError("give BASE and at least one OTHER (or --base-runs and --other-runs)")
    base = read(args.base)
    others = [read(path) for path in args.others]
    for other in others:
        if other.kind != base.kind:
            raise VcsbenchError(
                f"{other.path} holds {other.kind} and {base.path} {base.kind}; compare "
                "results of one kind (benchmarks with benchmarks, load runs with load runs)"
            )
    if base.load is not None:
        print("\n".join(compare_loads(base, other) for other in others), end="")
        return 0

    gate = parse_gate(args.fail_on) if args.fail_on else {}
    found: list[str] = []
    for i, other in enumerate(others):
        pairs = compare(base, other)
        if i:
            print()
        print(render(base, other, pairs), end="")
        found += regressions(pairs, gate) if gate else []
    for line in found:
        print(f"REGRESSION {line}")
    return 1 if found else 0


def _repeats(args: argparse.Namespace, gate: dict[str, float]) -> int:
    from vcsbench.report.repeats import compare_repeats, render_repeats, repeat_regressions
    from vcsbench.results import read

    bases = [read(path) for path in args.base_runs]
    others = [read(path) for path in args.other_runs]
    if any(run.load is not None for run in (*bases, *others)):
        raise VcsbenchError("--base-runs and --other-runs compare benchmark results, not load runs")
    pairs, left = compare_repeats(bases, others)
    print(render_repeats(bases, others, pairs, left), end="")
    found = repeat_regressions(pairs, gate) if gate else []
    for line in found:
        print(f"REGRESSION {line}")
    return 1 if found else 0


COMMAND = Command(
    "compare",
    add_arguments,
    run,
    dict(
        help="compare result files against a base, with significance",
        description="Match benchmarks of BASE and each OTHER; show medians, ratios and a "
        "Mann-Whitney U test per benchmark, what differs between the environments, and "
        "benchmarks found in one file only. With --base-runs and --other-runs (several runs "
        "a side), the runs are the unit: Welch's t on each run's figure, so drift between "
        "runs is not read as a change.",
    ),
)
