"""What several commands share: the selection options, the result path and what is
written beside it, and the closing line of an interrupted run."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from vcsbench.errors import VcsbenchError

if TYPE_CHECKING:
    from vcsbench.bench.selection import Selection
    from vcsbench.results import Run
    from vcsbench.results.io import Whole


def add_selection(
    parser: argparse.ArgumentParser,
    *,
    defaults: dict[str, str | None] | None = None,
    exclude: tuple[str, ...] = (),
) -> None:
    from vcsbench.bench.options import add_options

    add_options(parser.add_argument, defaults=defaults, exclude=exclude)
    parser.add_argument("--name", default=None, help="run name (default: <command>-<time>)")
    parser.add_argument(
        "--out", type=Path, default=None, help="results JSON path (default: results/<name>.json)"
    )
    from vcsbench.cli.store import add_store_option

    add_store_option(parser, " the results are added to, or none")


def selection_of(args: argparse.Namespace, **fixed: str) -> Selection:
    from vcsbench.bench.selection import Selection

    values = vars(args)
    return Selection.from_getter(lambda dest: fixed.get(dest, values.get(dest)))


def out_path(args: argparse.Namespace, prefix: str) -> Path:
    import time

    name = args.name or f"{prefix}-{time.strftime('%Y%m%d-%H%M%S')}"
    return Path(args.out) if args.out else Path("results") / f"{name}.json"


def this_run(out: Path, run_id: str) -> Run | None:
    """The results this run wrote, or None (it wrote none; an older file is not ours)."""
    whole = this_whole(out, run_id)
    return None if whole is None else whole.run


def this_whole(out: Path, run_id: str) -> Whole | None:
    """:func:`this_run` with the file's bytes and JSON, for the store to take without
    reading it again."""
    from vcsbench.results.io import read_whole

    if not out.exists():
        return None
    whole = read_whole(out)
    return whole if whole.run.run_id == run_id else None


def check_out(out: Path, table: bool = False, logs: bool = False) -> None:
    """Refuse, before any sandbox is made, a result path that cannot be written (a
    directory, a symlink, a place nothing can be written), and with ``table`` and
    ``logs`` the ``.md`` and ``-logs/`` beside it likewise. Directories missing above it
    are made, and said."""
    from vcsbench.results.io import beside, own_directory, writable_target

    writable_target(out, "--out")
    if table:
        writable_target(beside(out, ".md"), "the table beside --out,")
    if logs and os.path.lexists(beside(out, "-logs")):
        own_directory(beside(out, "-logs"), "the server log directory beside --out,")
    missing = [p for p in [out.parent, *out.parent.parents] if not p.exists()]
    top = missing[-1] if missing else None
    if top is not None and top.parent == Path(top.anchor or "/"):
        raise VcsbenchError(
            f"--out {out}: {top} does not exist, and vcsbench makes no directory at "
            f"{top.parent} (a mistyped path?); make it first, or give a path below a "
            "directory that exists"
        )
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out.parent, prefix=f".{out.name}."):
            pass
        if out.exists() and not os.access(out, os.W_OK):
            raise PermissionError(13, "not writable")
    except OSError as exc:
        raise VcsbenchError(
            f"--out {out}: cannot be written ({exc.strerror or exc}); give a path in a "
            "directory you can write"
        ) from None
    if missing:
        made = ", ".join(str(p) for p in reversed(missing))
        print(f"vcsbench: made the directories {made} for the results", file=sys.stderr)


_SAID: list[int] = []


def interrupted(out: Path | None = None, run: Run | None = None) -> int:
    """After a termination signal: one line on what happened; 128 + the signal, else 0."""
    import signal

    from vcsbench import process

    signals = process.received()
    if not signals:
        return 0
    signum = signals[0]
    if _SAID:
        return 128 + signum
    _SAID.append(signum)
    doing = process.activity()
    where = f" during {doing}" if doing else ""
    down = process.torn_down()
    torn = f"{len(down)} sandbox(es) torn down" if down else "no sandbox was up"
    up = process.still_up()
    left = (
        "nothing left mounted" if not up else f"left up: {', '.join(up)} (run 'vcsbench cleanup')"
    )
    kept = "no results written"
    if run is not None and out is not None and run.load is not None:
        steps = sum(len(entry.steps) for entry in run.load.paths)
        kept = (
            f"{steps} finished step(s) of {len(run.load.paths)} access path(s) kept in {out}, "
            "each verified when it ended"
        )
    elif run is not None and out is not None:
        partial = sum(b.partial for b in run.benchmarks)
        kept = f"{len(run.benchmarks)} benchmark(s) kept in {out}" + (
            f", {partial} of them partial" if partial else ""
        )
    print(
        f"vcsbench: interrupted by {signal.Signals(signum).name}{where}; {torn}, {left}; {kept}",
        file=sys.stderr,
    )
    return 128 + signum
