"""``vcsbench time``: your command timed in each backend's repositories, on the
filesystems asked, with every figure ``run`` gives (hyperfine's door, with vcsbench's IO,
footprint and interleaving). It is ``vcsbench run --ops 'cmd[run=...]'`` written for you:
:mod:`vcsbench.workload.command` is the operation."""

from __future__ import annotations

import argparse
import re
import sys

from vcsbench.cli.command import Command
from vcsbench.cli.common import add_selection, check_out, out_path, selection_of
from vcsbench.errors import VcsbenchError
from vcsbench.workload.command import DEFAULT_TIMEOUT_S, MAX_TIMEOUT_S, VCSES, spec_text

_PREFIX = re.compile(r"^(git|svn|hg):\s*")
TOOLS = {
    "git": "git",
    "svn": "svn",
    "svnadmin": "svn",
    "svnlook": "svn",
    "svnserve": "svn",
    "hg": "hg",
}
"""A command's first word and the VCS whose repositories it is for."""

EPILOG = """\
examples:
  vcsbench time 'git gc -q' --backends git-cli,git-pygit2 --fs ext4,xfs
  vcsbench time 'svnadmin verify -q .' 'git fsck' --repos 50
  vcsbench time 'git gc -q' 'git repack -adq' --backends git-cli   # A against B
  vcsbench time --prepare 'git repack -adq' 'git count-objects -v'
  vcsbench time 'hg: sh -c "hg log > /dev/null"' --payloads many-files

Each round: a fresh repository with the payload as its first revision, made by the
backend under test (untimed); --prepare in it (untimed); COMMAND timed, in it. A command
starting with git, svn, svnadmin, svnlook or hg runs on that VCS's backends only; 'git:',
'svn:' or 'hg:' before a command says so for any other. Several commands run interleaved
in blocks on each backend, and the answer comes first: each command's time over the
fastest's, block by block, with its interval and verdict (--interleave off: one after
the other). Several filesystems or variants run interleaved as in 'vcsbench run'.

Each call of COMMAND, --prepare and --check runs in a cgroup of the run's own: what it
leaves running is ended when it exits, and a call past --timeout is ended and fails its
round. The perturbation check (--perturbation once, the default) times the harness
against a bare loop before the first benchmark of each backend: it runs each command
3 + 12 x K more times (K = --repos, at most 50, fewer for a slow command: about a second
of them); --perturbation off skips it.
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "commands",
        nargs="+",
        metavar="COMMAND",
        help="a command to time in each round's repository (its working directory); "
        "$VCSBENCH_REPO, $VCSBENCH_SCRATCH, $VCSBENCH_VCS and $VCSBENCH_BACKEND are set; "
        "run through /bin/sh only where it needs a shell",
    )
    parser.add_argument(
        "--prepare",
        default="",
        metavar="CMD",
        help="run in each round's repository before COMMAND, untimed (exit 0 or the round fails)",
    )
    parser.add_argument(
        "--check",
        default="",
        metavar="CMD",
        help="verify each round by this command's exit status, untimed (default: the "
        "backend's reader finds the payload's revision still the newest)",
    )
    parser.add_argument(
        "--timeout",
        default=str(DEFAULT_TIMEOUT_S),
        metavar="S",
        help="end a call of COMMAND, --prepare or --check that runs longer than S seconds, "
        f"with every process it started, and count its round an error (default "
        f"{DEFAULT_TIMEOUT_S}); whatever a call leaves running (a daemon) is ended when it "
        "exits",
    )
    add_selection(parser, defaults={"payloads": "hello", "kept": "none"}, exclude=("ops",))


def ops_of(args: argparse.Namespace) -> list[str]:
    """The ``cmd[...]`` operations for the commands given, each kept to its VCS."""
    try:
        limit = float(args.timeout)
    except ValueError:
        limit = -1.0
    if not 0 < limit <= MAX_TIMEOUT_S:
        raise VcsbenchError(
            f"--timeout {args.timeout!r} is not a number of seconds above 0 and at most "
            f"{MAX_TIMEOUT_S:,} (how long one call of a command may run)"
        )
    ops: list[str] = []
    for given in args.commands:
        vcs, command = vcs_of(given)
        if not command:
            raise VcsbenchError(f"command {given!r} is empty; give the command to time")
        timeout = "" if args.timeout == str(DEFAULT_TIMEOUT_S) else args.timeout
        ops.append(spec_text(command, args.prepare, args.check, vcs, timeout))
    if len(set(ops)) != len(ops):
        raise VcsbenchError("the same command is given twice; give each once")
    return ops


def vcs_of(given: str) -> tuple[str, str]:
    """(the VCS a command is for, or "", the command): from a ``git:`` prefix, else from
    its first word."""
    text = given.strip()
    prefix = _PREFIX.match(text)
    if prefix:
        return prefix.group(1), text[prefix.end() :].strip()
    words = text.split(maxsplit=1)
    return (TOOLS.get(words[0], "") if words else ""), text


def run(args: argparse.Namespace) -> int:
    from vcsbench.bench.runner import run_suite
    from vcsbench.cli.run import conclude

    ops = ops_of(args)
    selection = selection_of(args, ops=",".join(ops))
    out = out_path(args, "time")
    check_out(out)
    if not selection.cases():
        why = selection.unsupported() or [
            "no backend of --backends keeps the repositories the commands are for "
            f"({', '.join(sorted({vcs_of(c)[0] or 'any' for c in args.commands}))}); "
            f"a 'VCS:' before a command says which ({', '.join(VCSES)})"
        ]
        raise VcsbenchError("nothing to time: " + "; ".join(why))
    if selection.perturbation != "off":
        print(perturbation_cost(selection.repos, selection.perturbation))
    command = ["vcsbench", *sys.argv[1:]]
    # the summary after the run is the answer (pytest-benchmark's tables stay in the file)
    code, run_id = run_suite(selection, out, command=command, door="vcsbench time")
    return conclude(args, out, run_id, code, answer_first=len(ops) > 1)


def perturbation_cost(repos: int, mode: str) -> str:
    """What the perturbation check adds to the executions asked, said before it runs."""
    from vcsbench.bench.beside import ROUNDS_BESIDE
    from vcsbench.bench.perturbation import BLOCKS_BESIDE, PILOT_ROUNDS

    extra = 2 * BLOCKS_BESIDE * min(ROUNDS_BESIDE, repos)
    if mode == "once":
        return (
            f"the perturbation check runs each command up to {PILOT_ROUNDS + extra} more "
            f"times beside the {repos} asked, before the first benchmark of each backend "
            "(fewer for a slow command: about a second of them); --perturbation off skips it"
        )
    return (
        f"the perturbation check runs each command {extra} more times beside the {repos} "
        "asked, before every benchmark (--perturbation on); --perturbation off skips it"
    )


COMMAND = Command(
    "time",
    add_arguments,
    run,
    dict(
        help="time your own command in each backend's repositories (like hyperfine, with "
        "vcsbench's IO, footprint and verification)",
        description="Time COMMAND in a fresh repository of each backend (and filesystem,\n"
        "and variant) per round, with every figure 'vcsbench run' gives: time, CPU, IO at\n"
        "the process and the device, footprint. A round whose command exits non-zero is an\n"
        "error, never a fast sample.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    ),
)
