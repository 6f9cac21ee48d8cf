"""``vcsbench bisect``: the first version of an access path whose figure changed."""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from vcsbench.cli.bisect_counts import Stopped, by_counts
from vcsbench.cli.command import Command
from vcsbench.errors import VcsbenchError

if TYPE_CHECKING:
    from vcsbench.backends.builds import Builds
    from vcsbench.judge.paired import Paired

MIN_BLOCKS = 6
"""The fewest blocks a step runs in: the order-statistics interval of 6 block ratios,
their smallest to their largest, holds the median with 96.9 %."""
MIN_ROUNDS = 10 * MIN_BLOCKS
DEFAULTS: dict[str, str | None] = {
    "ops": "create+commit",
    "payloads": "hello",
    "fs": "tmpfs",
    "repos": "200",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from vcsbench.bench.options import add_options

    parser.add_argument(
        "backend",
        nargs="?",
        help="the access path whose library releases to bisect (with --good and --bad), "
        "e.g. git-pygit2",
    )
    parser.add_argument("--good", help="the release known good: the first of the chain")
    parser.add_argument(
        "--bad", help="the release known bad: the last; every release pip can install here "
        "between the two is a version to try"
    )  # fmt: skip
    parser.add_argument(
        "--chain",
        help="instead of a backend and releases: the versions as backend variants, oldest "
        "first, comma-separated, e.g. 'git-cli[bin=/opt/git-2.30/bin],"
        "git-cli[bin=/opt/git-2.40/bin]' (the first good, the last bad)",
    )
    parser.add_argument(
        "--source",
        type=Path,
        metavar="DIR",
        help="instead of releases: commits of this git checkout from --good to --bad (the "
        "first-parent line), each built with --build and run as BACKEND[bin=...] "
        "(git-cli or svn-cli)",
    )
    parser.add_argument(
        "--build",
        metavar="CMD",
        help="with --source: the shell command that builds a commit in its tree and "
        "installs it into $VCSBENCH_PREFIX (its tools in $VCSBENCH_PREFIX/bin), e.g. "
        "'make -j2 prefix=$VCSBENCH_PREFIX install'",
    )
    parser.add_argument(
        "--by",
        default="counts",
        metavar="FIGURE",
        help="what decides a step: counts (the default: the first count that changed from "
        "the good to the bad version, instructions first, each version one run with "
        "counted rounds), one count by name (instructions, sync_calls, rename_calls...), "
        "or time (each version interleaved with the good one, a ratio with its interval)",
    )
    parser.add_argument(
        "--threshold",
        default="5%",
        help="the smallest change to bisect, as a percentage (default 5%%): the bad version "
        "must be this much slower or faster than the good one",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="a directory for each step's results and the answer (default: results/bisect-<time>/)",
    )
    add_options(
        parser.add_argument,
        defaults=DEFAULTS,
        exclude=("backends", "interleave"),
    )


def threshold_of(text: str) -> float:
    found = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*%\s*", text)
    value = float(found.group(1)) / 100 if found else None
    if value is None or not 0 < value < 10:
        raise VcsbenchError(
            f"--threshold {text!r} is not a percentage above 0, e.g. 5% (slower or faster "
            "by more than that)"
        )
    return value


def by_of(text: str) -> str:
    from vcsbench.results.counted import COUNTED

    if text in ("time", "counts", *COUNTED):
        return text
    raise VcsbenchError(
        f"--by {text!r} is not time, counts or a count's name ({', '.join(COUNTED)})"
    )


def chain_of(args: argparse.Namespace) -> list[str]:
    """The versions to bisect, as backend variants, oldest first."""
    from vcsbench.backends import REGISTRY, Variant, split_list

    if args.chain:
        if args.backend or args.good or args.bad:
            raise VcsbenchError("--chain names every version: give it alone, or a backend "
                                "with --good and --bad")  # fmt: skip
        chain = split_list(args.chain)
    else:
        if not (args.backend and args.good and args.bad):
            raise VcsbenchError(
                "bisect what: a backend with --good and --bad releases (e.g. git-pygit2 "
                "--good 1.15.1 --bad 1.21.0), or --chain with the versions as variants"
            )
        cls = REGISTRY.get(args.backend)
        if cls is None or cls.pypi is None:
            offered = ", ".join(n for n, c in REGISTRY.items() if c.pypi is not None)
            raise VcsbenchError(
                f"{args.backend!r} has no library releases to bisect; releases: {offered}; "
                "any other access path: --chain with its versions as variants (bin=...)"
            )
        from vcsbench.bench.envs import between

        chain = [f"{args.backend}[version={v}]" for v in between(cls.pypi, args.good, args.bad)]
    if len(chain) < 2:
        raise VcsbenchError(f"--chain {args.chain!r}: two versions at least, good then bad")
    texts = [Variant.parse(text).text for text in chain]
    twice = sorted({t for t in texts if texts.count(t) > 1})
    if twice:
        raise VcsbenchError(f"{twice[0]} is in the chain twice: each version once")
    return texts


def source_versions(
    args: argparse.Namespace, out: Path, stack: contextlib.ExitStack
) -> tuple[list[str], Builds]:
    """``--source``: the commits from --good to --bad (their short hashes) and what builds
    each on demand, their trees in a ``dir:`` sandbox under ``out`` (on ``stack``:
    removed after, and by cleanup after a SIGKILL)."""
    from vcsbench.backends import REGISTRY
    from vcsbench.backends.builds import Builds, commits
    from vcsbench.results.io import own_directory
    from vcsbench.sandbox import Sandbox, parse_fs_spec

    cls = REGISTRY.get(args.backend or "")
    if cls is None or "bin" not in cls.option_defaults:
        offered = ", ".join(n for n, c in REGISTRY.items() if "bin" in c.option_defaults)
        raise VcsbenchError(
            f"--source: the backend {args.backend!r} does not run tools from a directory; "
            f"one of {offered} does (BACKEND[bin=DIR])"
        )
    if not (args.good and args.bad and args.build):
        raise VcsbenchError("--source needs --good and --bad (commits) and --build (a command)")
    if args.chain:
        raise VcsbenchError("--source names its versions by commit: give it without --chain")
    found = commits(args.source.resolve(), args.good, args.bad)
    installs = own_directory((out / "builds").resolve(), "--out")
    trees = stack.enter_context(Sandbox(parse_fs_spec(f"dir:{installs}"))).root
    builds = Builds(args.source.resolve(), args.build, trees, installs, found, _contained)
    return [c.sha[:10] for c in found], builds


def _contained(
    argv: list[str], cwd: Path, env: dict[str, str], log: Path, limit_s: float
) -> int | None:
    """A build, contained as a user's command is (:mod:`vcsbench.workload.contained`)."""
    from vcsbench.workload.contained import call

    with log.open("wb") as into:
        ended = call(argv, cwd, env, limit_s, into)
    if isinstance(ended, OSError):
        raise VcsbenchError(f"--build could not start ({ended.strerror})")
    return ended.code


def run(args: argparse.Namespace) -> int:
    with contextlib.ExitStack() as stack:
        return _run(args, stack)


def _run(args: argparse.Namespace, stack: contextlib.ExitStack) -> int:
    from vcsbench.cli.common import selection_of
    from vcsbench.judge.bisection import bisect
    from vcsbench.report.bisect_text import answer, header, step_line
    from vcsbench.results.io import own_directory, write_file

    threshold = threshold_of(args.threshold)
    by = by_of(args.by)
    out = args.out or Path("results") / f"bisect-{time.strftime('%Y%m%d-%H%M%S')}"
    if out.is_symlink():
        raise VcsbenchError(
            f"--out {out}: is a symlink; vcsbench writes its files only where no link leads "
            "elsewhere: remove it, or give another path"
        )
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise VcsbenchError(f"--out {out}: exists and is not an empty directory")
    if args.source is not None:
        chain, builds = source_versions(args, out, stack)
        spec_of = builds.spec_of(args.backend)
    else:
        chain, builds = chain_of(args), None
        spec_of = chain.__getitem__
    selection = selection_of(args, backends=args.backend or chain[0], interleave="off")
    if len(selection.ops) != 1 or len(selection.payloads) != 1 or len(selection.fs) != 1:
        raise VcsbenchError(
            "bisect measures one figure: give one --ops, one --payloads and one --fs"
        )
    repos = args.repos
    if by != "time":
        return by_counts(args, chain, spec_of, out, by, selection)
    if not str(repos).isdigit() or int(repos) < MIN_ROUNDS:
        raise VcsbenchError(
            f"--repos {repos!r}: a whole number of rounds a version, {MIN_ROUNDS} or more "
            f"(at least {MIN_BLOCKS} blocks of 10: an interval of 95 % or more)"
        )
    own_directory(out, "--out")
    figure = (
        f"{selection.ops[0].text} · payload {selection.payloads[0]} · fs {selection.fs[0].text}"
    )
    print(header(chain, figure, threshold, int(repos)), flush=True)
    steps = _Steps(args, chain, spec_of, out, int(repos))
    try:
        outcome = bisect(
            chain, steps.measure, threshold, say=lambda s: print(step_line(s, chain), flush=True)
        )
    except Stopped as stop:
        print(f"bisect stopped during step {steps.made}: the steps before it are above, each "
              f"step's results in {out}")  # fmt: skip
        return int(str(stop))
    text = answer(outcome, figure, out)
    if builds is not None and outcome.first_bad is not None:
        found = builds.commits[outcome.first_bad]
        text += f"\nThe commit: {found.sha} {found.subject}\n"
    write_file(out / "bisect.md", text, "the answer")
    print()
    print(text, end="")
    print(f"each step's results and pytest's lines: {out}/step-NN.json, .log; this answer: "
          f"{out / 'bisect.md'}")  # fmt: skip
    return 0 if outcome.first_bad is not None else 1


class _Steps:
    """Each step: the good version and one other, interleaved in one run of their own."""

    def __init__(
        self,
        args: argparse.Namespace,
        chain: list[str],
        spec_of: Callable[[int], str],
        out: Path,
        repos: int,
    ) -> None:
        self.args, self.chain, self.out, self.repos = args, chain, out, repos
        self.spec_of = spec_of
        """The variant that runs a version (a release, a variant as given, a build)."""
        self.made = 0
        self.stopped = 0
        self.took: list[float] = []

    def _say_running(self, index: int, repos: int) -> None:
        """What runs now, and the time left at the pace so far (stderr: progress)."""
        from vcsbench.report.bisect_text import most_steps, names

        shown = names(self.chain)
        most = max(most_steps(len(self.chain)), self.made)
        pace = ""
        if self.took:
            each = sum(self.took) / len(self.took)
            pace = (
                f"; ~{each:.0f}s a step so far, ~{each * (most - self.made + 1):.0f}s left at most"
            )
        print(
            f"running step {self.made} of {most}: {shown[index]} against {shown[0]}, "
            f"{repos} rounds each{pace}",
            file=sys.stderr,
            flush=True,
        )

    def measure(self, index: int, attempt: int) -> Paired | None:
        from vcsbench.backends.builds import BuildFailed
        from vcsbench.bench.runner import run_suite
        from vcsbench.cli.common import interrupted, selection_of, this_run
        from vcsbench.judge.bisection import Skip
        from vcsbench.judge.paired import paired

        repos = self.repos * 2 ** (attempt - 1)
        self.made += 1  # the step's number, as the bisection counts it (a skip is one)
        self._say_running(index, repos)
        try:
            good, other = self.spec_of(0), self.spec_of(index)
        except BuildFailed as why:
            raise Skip(str(why)) from None
        blocks = max(MIN_BLOCKS, min(30, repos // 10))
        selection = selection_of(
            self.args, backends=f"{good},{other}", repos=str(repos), interleave=str(blocks)
        )
        path = self.out / f"step-{self.made:02d}.json"
        command = ["vcsbench", *sys.argv[1:], f"(step {self.made}: {other} against {good})"]
        log = path.with_suffix(".log")
        started = time.monotonic()
        try:  # pytest's own lines go to the step's log; progress (stderr) stays in view
            with log.open("w") as into, contextlib.redirect_stdout(into):
                code, run_id = run_suite(
                    selection, path, [], command=command, door="vcsbench bisect"
                )
        except VcsbenchError as why:
            raise Skip(str(why)) from None
        self.took.append(time.monotonic() - started)
        run = this_run(path, run_id)
        self.stopped = interrupted(path, run)
        if self.stopped:
            raise Stopped(self.stopped)
        if run is None:
            raise Skip(f"its run wrote no results (exit {code}); see {log}")
        found = {b.label: b for b in run.benchmarks}
        for text in (good, other):
            bench = found.get(text)
            if bench is None:
                raise Skip(f"{text} did not run (exit {code}); see {log}")
            if bench.errors:
                raise Skip(f"{text}: {bench.errors} of {bench.repos} rounds failed")
        mine, base = found[other].harness.interleaved, found[good].harness.interleaved
        if mine is None or base is None:
            raise Skip("its run was not interleaved")
        return paired(base.median_ms, mine.median_ms)


COMMAND = Command(
    "bisect",
    add_arguments,
    run,
    dict(
        help="find the first version of an access path whose figure changed",
        description=textwrap.fill(
            "Given a good and a bad version (library releases from the package "
            "index, commits of a local source checkout built with your command, or any "
            "chain of variants such as bin= directories), each step runs one "
            "version against the good one interleaved in one run and reads its ratio with an "
            "interval, block by block; a version is like the bad one when its interval lies "
            "past the halfway point of the change. N versions take 1 + ceil(log2(N-1)) steps, "
            "plus one for each unclear or skipped version. One operation, one payload, one "
            "filesystem.",
            width=80,
        ),
        epilog="examples:\n"
        "  vcsbench bisect git-pygit2 --good 1.15.1 --bad 1.21.0 --ops create+commit --fs tmpfs\n"
        "  vcsbench bisect --chain 'git-cli[bin=/opt/git-2.30/bin],git-cli[bin=/opt/git-2.40/bin]'"
        " --ops clone --payloads submission --fs ext4\n"
        "  vcsbench bisect git-cli --source ~/src/git --good v2.39.0 --bad v2.40.0 "
        "--build 'make -j2 prefix=$VCSBENCH_PREFIX install' --ops commit --fs ext4\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    ),
)
