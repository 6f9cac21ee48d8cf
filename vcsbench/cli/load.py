"""``vcsbench load``: many clients at once over the real servers (Locust)."""

from __future__ import annotations

import argparse
import sys
import uuid
from pathlib import Path

from vcsbench.cli.command import Command
from vcsbench.cli.common import check_out, interrupted, out_path, this_run
from vcsbench.results.io import beside


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from vcsbench.load.options import add_load_options

    add_load_options(parser.add_argument)
    parser.add_argument(
        "--out", type=Path, default=None, help="results JSON (default results/load-<time>.json)"
    )
    parser.add_argument("--name", default=None, help=argparse.SUPPRESS)
    from vcsbench.cli.store import add_store_option

    add_store_option(parser, " the results are added to, or none")


def run(args: argparse.Namespace) -> int:
    from vcsbench.load.plan import LoadPlan
    from vcsbench.load.run import run_load
    from vcsbench.process import install_signal_handlers
    from vcsbench.report.formats import write
    from vcsbench.report.load import load_document
    from vcsbench.results.io import write_file

    plan = LoadPlan.from_getter(lambda dest: getattr(args, dest))
    out = out_path(args, "load")
    check_out(out, table=True, logs=True)
    install_signal_handlers()
    run_id = uuid.uuid4().hex
    try:
        run = run_load(plan, out, ["vcsbench", *sys.argv[1:]], run_id)
    except KeyboardInterrupt:
        return interrupted(out, this_run(out, run_id))
    from vcsbench.cli.store import remember

    remember(args, out)
    text = write([load_document(run, plan.deadline)], "md")
    table = beside(out, ".md")
    write_file(table, text, "the table")
    from vcsbench.report.terminal import for_terminal

    print()
    print(for_terminal(text))  # the terminal's width; the file keeps the Markdown
    print(f"results: {out}; table: {table}")
    if run.load is not None and all(e.failure and not e.steps for e in run.load.paths):
        first = run.load.paths[0]
        print(
            f"vcsbench load: nothing was measured: no access path could be run (the first, "
            f"{first.path}: {first.failure[:200]})",
            file=sys.stderr,
        )
        return 1
    if plan.fail_on == "errors" and run.load is not None:
        failed = sum(row.error_count for entry in run.load.paths for row in entry.steps)
        broken = [entry.path for entry in run.load.paths if entry.failure]
        if failed or broken:
            print(
                f"vcsbench load: --fail-on errors: {failed:,} session(s) failed"
                + (f"; could not be run: {', '.join(broken)}" if broken else ""),
                file=sys.stderr,
            )
            return 1
    return 0


COMMAND = Command(
    "load",
    add_arguments,
    run,
    dict(
        help="many clients at once over the real servers (Locust): latency, errors, capacity",
        description="Run a load scenario over each access path, in a sandbox of its own: "
        "servers (svnserve, git daemon, Apache with mod_dav_svn, git http-backend or "
        "hgweb, over http or https, and sshd) are started on 127.0.0.1 with credentials "
        "made for the run, and stopped by vcsbench; with --rtt, each path is run at each "
        "round-trip time through a proxy, the round trip measured first; "
        "Locust runs C clients at once for each step of --steps (closed loop); after each "
        "step every repository it wrote is read back and the step is written to the "
        "result file. Prints a table per path with p50-p99, errors, "
        "device IO per session and the capacity, and writes the JSON (raw latencies "
        "included) and the table as Markdown.",
    ),
)
