"""``vcsbench history``: a benchmark's figures over time on each machine."""

from __future__ import annotations

import argparse
from pathlib import Path

from vcsbench.cli.command import Command
from vcsbench.cli.store import add_store_option, store_path
from vcsbench.errors import VcsbenchError
from vcsbench.report.formats import FORMATS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "pattern",
        nargs="?",
        default="",
        help="series whose benchmark contains this text, e.g. 'svn-fs commit' (default: all)",
    )
    add_store_option(parser)
    parser.add_argument(
        "--format",
        default="md",
        choices=FORMATS,
        help="md (default), github, rst, latex, html (one page of the tables; --html for "
        "plots), or csv (the tables)",
    )
    parser.add_argument("--json", action="store_true", help="the series as JSON")
    parser.add_argument(
        "--html",
        type=Path,
        metavar="DIR",
        help="also a static page, DIR/history.html, with each series' plot beside it "
        "(the median per run, its level between change points, the canary below)",
    )


def run(args: argparse.Namespace) -> int:
    from vcsbench.report.formats import write
    from vcsbench.report.history import history_document
    from vcsbench.store.store import Store, dumps

    path = store_path(args)
    if path is None:
        raise VcsbenchError("--store none: history needs a store; give its file")
    with Store(path) as store:
        found = list(store.series(args.pattern))
        counts = store.counts()
        where = store.where
    if args.html is not None:
        from vcsbench.report.history_page import MAX_SERIES

        if not found:
            raise VcsbenchError(f"--html: no series matches {args.pattern!r}; nothing to draw")
        if len(found) > MAX_SERIES:
            raise VcsbenchError(
                f"--html: {len(found)} series match {args.pattern!r}; a page holds at most "
                f"{MAX_SERIES}: give a narrower PATTERN"
            )
    document = history_document(found, where, counts)
    print(dumps(found) if args.json else write([document], args.format), end="")
    if args.html is not None:
        from vcsbench.report.history_page import history_page

        print(f"page: {history_page(found, where, args.html)}")
    return 0


COMMAND = Command(
    "history",
    add_arguments,
    run,
    dict(
        help="a benchmark's figures over time on each machine, from the results store",
        description="Each series is one benchmark on one machine (a new machine or kernel "
        "starts a new one): its runs, oldest first, with the median, the canary beside it "
        "and the versions each ran with.",
    ),
)
