"""``vcsbench compare``: result files against a base, with significance and a CI gate."""

from __future__ import annotations

import argparse

from vcsbench.cli.command import Command
from vcsbench.errors import VcsbenchError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("base", help="result JSON (vcsbench or pytest-benchmark --benchmark-save)")
    parser.add_argument(
        "others", nargs="+", metavar="OTHER", help="result files to compare against BASE, each"
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


COMMAND = Command(
    "compare",
    add_arguments,
    run,
    dict(
        help="compare result files against a base, with significance",
        description="Match benchmarks of BASE and each OTHER; show medians, ratios and a "
        "Mann-Whitney U test per benchmark, what differs between the environments, and "
        "benchmarks found in one file only.",
    ),
)
