"""``vcsbench store``: result files into the results store (an index over them; the
files stay the record), and what the store holds."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from vcsbench.cli.command import Command
from vcsbench.errors import VcsbenchError

if TYPE_CHECKING:
    from vcsbench.results.io import Whole


def add_store_option(parser: argparse.ArgumentParser, also: str = "") -> None:
    parser.add_argument(
        "--store",
        metavar="FILE|URL",
        default=None,
        help=f"the results store{also}: a SQLite file, or a postgresql:// URL a team shares "
        "(default: store.sqlite in vcsbench's data directory, $VCSBENCH_DATA or "
        "~/.local/share/vcsbench)",
    )


def store_path(args: argparse.Namespace) -> str | Path | None:
    """The store asked for: a SQLite file's path, a PostgreSQL URL, or None (none)."""
    from vcsbench.store.db import POSTGRES
    from vcsbench.store.store import default_path

    given = getattr(args, "store", None)
    if given == "none":
        return None
    if given and POSTGRES.match(given):
        return str(given)
    return Path(given) if given else default_path()


def remember(args: argparse.Namespace, out: Path, whole: Whole | None = None) -> None:
    """A run's result file into the store, after it is written (``whole``: as it was
    read already); a store that fails is a warning, never the run's failure (the file is
    the record)."""
    path = store_path(args)
    if path is None or not out.is_file():
        return
    from vcsbench.store.db import shown_url
    from vcsbench.store.store import Store

    where = shown_url(str(path))
    try:
        with Store(path, writing=True) as store:
            added = store.add(out, whole)
    except Exception as exc:  # whatever the database raised: the file is kept, and said
        why = shown_url(str(exc))
        print(f"warning: the results store {where} did not take {out}: {why}", file=sys.stderr)
        return
    what = f"{added.benchmarks} benchmark(s) of {out.name}" if added.benchmarks else out.name
    print(
        f"stored: {what} in {where}"
        + ("" if added.new else " (there already)")
        + " (vcsbench history reads it; --store none leaves a run out)"
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    # Each action a parser of its own, so that --store may come before the files
    # (`store add --store X FILES`, as vcsbench's own messages write it) or after them.
    actions = parser.add_subparsers(
        dest="action", metavar="ACTION", required=True, parser_class=type(parser)
    )
    add = actions.add_parser("add", help="result files, or directories to search, into the store")
    add.add_argument("paths", nargs="+", type=Path, help="result files, or directories")
    add_store_option(add)
    info = actions.add_parser("info", help="what the store holds")
    add_store_option(info)


def run(args: argparse.Namespace) -> int:
    from vcsbench.bench.progress import duration
    from vcsbench.store.db import StoreFull
    from vcsbench.store.store import Store, result_files

    path = store_path(args)
    if path is None:
        raise VcsbenchError("--store none: this command needs a store; give its file")
    with Store(path, writing=args.action == "add") as store:
        if args.action == "info":
            runs, series, machines = store.counts()
            print(f"{store.where}: {runs} runs, {series} series on {machines} machine(s)")
            return 0
        files = result_files(args.paths)
        added = already = points = 0
        refused: list[str] = []
        started = time.monotonic()
        for index, file in enumerate(files, 1):
            try:
                found = store.add(file)
            except StoreFull as exc:  # no later file fits either: said once, with how many
                raise VcsbenchError(
                    f"{exc}; added {added} of {len(files)} file(s) before it filled"
                ) from None
            except VcsbenchError as exc:
                refused.append(str(exc))
                continue
            added += found.new
            already += not found.new
            points += found.benchmarks if found.new else 0
            if index % 200 == 0:
                elapsed = time.monotonic() - started
                left = elapsed / index * (len(files) - index)
                print(f"{index} of {len(files)} files, ~{duration(left)} left", file=sys.stderr)
        runs, series, machines = store.counts()
    print(
        f"added {added} run(s) ({points} benchmark(s)); {already} already there; "
        f"{len(refused)} refused; the store {store.where}: {runs} runs, {series} series on "
        f"{machines} machine(s)"
    )
    for line in refused[:10]:
        print(f"refused: {line}")
    if len(refused) > 10:
        print(f"refused: and {len(refused) - 10} more")
    return 1 if refused else 0


COMMAND = Command(
    "store",
    add_arguments,
    run,
    dict(
        help="add result files to the results store (an index over them), or say what it holds",
        description="The results store indexes result files for vcsbench history: per run "
        "its file and machine, per benchmark its median, canary, CPU, errors and versions. "
        "run, study and load add their results to it themselves (--store none: not). "
        "The result files stay the record.",
    ),
)
