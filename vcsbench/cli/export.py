"""``vcsbench export``: result files in a dashboard's format (Bencher's BMF)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from vcsbench.cli.command import Command
from vcsbench.errors import VcsbenchError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", nargs="+", help="result files")
    from vcsbench.report.export import EXPORT_FORMATS

    parser.add_argument("--format", choices=EXPORT_FORMATS, default="bmf")
    parser.add_argument("--out", type=Path, help="file to write (default: standard output)")


def run(args: argparse.Namespace) -> int:
    from vcsbench.report.export import to_bmf
    from vcsbench.results import read_many

    document = to_bmf(read_many(args.results))
    try:
        text = json.dumps(document, indent=2, allow_nan=False) + "\n"
    except ValueError as exc:  # a figure that is not a finite number: not JSON
        raise VcsbenchError(f"the export holds a figure that is not a number ({exc})") from None
    if args.out is None:
        print(text, end="")
        return 0
    from vcsbench.results.io import write_file

    write_file(args.out, text, "--out")
    print(f"wrote {args.out}: {len(document)} benchmarks")
    return 0


COMMAND = Command(
    "export",
    add_arguments,
    run,
    dict(
        help="result files in a dashboard's format (Bencher's BMF)",
        description="Write the benchmarks of RESULTS in Bencher Metric Format: latency "
        "(median ns, quartiles as bounds) and every per-repository figure, so a team can "
        "keep history per machine (testbed) in Bencher.",
    ),
)
