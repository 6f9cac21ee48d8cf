"""``vcsbench load-worker HOST:PORT``: a Locust worker for a load master elsewhere."""

from __future__ import annotations

import argparse
import subprocess

from vcsbench.cli.command import Command
from vcsbench.errors import VcsbenchError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("master", metavar="HOST:PORT", help="the master, as it printed")


def run(args: argparse.Namespace) -> int:
    host, _, port = str(args.master).rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise VcsbenchError(f"master {args.master!r} is not HOST:PORT, like 10.0.0.5:5557")
    # The engine in a process of its own: Locust patches the standard library for gevent.
    from vcsbench.load.engine_args import EngineArgs

    return subprocess.call(EngineArgs(host=host, port=int(port), worker=True).argv())


COMMAND = Command(
    "load-worker",
    add_arguments,
    run,
    dict(
        help="a Locust worker for a 'vcsbench load --expect-workers' master elsewhere",
        description="Connect to a load master (vcsbench load --expect-workers N), take the "
        "configuration and the users it gives, and send each step's sessions back. Needs "
        "vcsbench, its clients (svn, svnmucc, git) and a route to the master and the "
        "servers.",
    ),
)
