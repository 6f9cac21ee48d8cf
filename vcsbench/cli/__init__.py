"""The ``vcsbench`` command: a thin front door, one module per command.

Each command module defines ``COMMAND`` (:class:`~vcsbench.cli.command.Command`: its
name, its options and its handler); a new command is a module and a line in
:data:`COMMANDS`. Bad input is one line and exit 2; a stop signal ends with one line
saying what was kept, and 128 + the signal.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from vcsbench import __version__
from vcsbench.cli import (
    bisect,
    cleanup,
    compare,
    doctor,
    export,
    history,
    load,
    load_worker,
    report,
    run,
    store,
    study,
    timing,
)
from vcsbench.cli.command import Command
from vcsbench.cli.common import interrupted
from vcsbench.errors import VcsbenchError, without_secrets

COMMANDS: tuple[Command, ...] = tuple(
    module.COMMAND
    for module in (
        doctor,
        run,
        timing,
        study,
        load,
        load_worker,
        report,
        compare,
        history,
        bisect,
        store,
        export,
        cleanup,
    )
)


class OneLineParser(argparse.ArgumentParser):
    """A bad argument is one line naming it and where the accepted values are (argparse
    prints the whole usage first: eleven lines for ``vcsbench study``)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {without_secrets(message)}; see {self.prog} --help\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="vcsbench",
        description="Micro-benchmarks for version-control backends: time, CPU, IO at the "
        "process and at the device, and disk footprint, on filesystems vcsbench controls.",
    )
    parser.add_argument("--version", action="version", version=f"vcsbench {__version__}")
    commands = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, parser_class=OneLineParser
    )
    for command in COMMANDS:
        sub = commands.add_parser(command.name, **command.parser)
        command.add_arguments(sub)
        sub.set_defaults(func=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
    except VcsbenchError as exc:
        print(f"vcsbench: error: {without_secrets(str(exc))}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into `head` and the like: no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        from vcsbench import process

        if not process.received():  # a Ctrl-C before any handler of vcsbench's was installed
            import signal

            process.note_signal(signal.SIGINT)
        return interrupted()
    return interrupted() or code


if __name__ == "__main__":
    sys.exit(main())
