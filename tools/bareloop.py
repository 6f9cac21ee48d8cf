"""The simplest independent measurement of what vcsbench times, and vcsbench beside it.

``loop``: the library calls of one operation and nothing else -- a fresh filesystem of
its own (tmpfs, or ext4 on a loop device made as vcsbench makes one), ``perf_counter_ns``
around each round's calls, the median printed. Its calls and filesystem
(``tools/barecalls.py``) import no vcsbench code: they are the yardstick, not the
instrument. create: a bare repository (pygit2) or ``svn.repos.create``;
create+commit: that and one commit of ``test.txt`` ("hello world", vcsbench's ``hello``
payload) into the repository the call handed back; commit: into a repository holding that
first revision (made and put on disk untimed: ``syncfs``), one more revision replacing
``test.txt`` and adding a file, as vcsbench's ``commit`` does.

``compare``: the loop, then ``pytest benchmarks --benchmark-only`` for the same work, then
the loop again, ``--runs`` times; each run's ratio is vcsbench's median over the mean of
the two loops' medians beside it (the machine's drift over the minute between them is in
that ratio, which is why there are several runs). As root (it mounts)::

    .venv/bin/python tools/bareloop.py compare --fs tmpfs --ops create+commit --runs 3

``counted``: what counting durability costs the timed call. The loop in one process and
filesystem, in pairs of blocks (which goes first drawn at random): one block with
vcsbench's fsync-family counter (:class:`vcsbench.measure.syscalls.SyscallCounter`, perf
events on the syscall tracepoints, inherited by children) open, one with it closed; the
ratio per pair is the counted block's median over the other's, reported as the median
ratio with a sign test's interval. The counted rounds also give the calls each made::

    .venv/bin/python tools/bareloop.py counted --fs ext4 --ops commit --blocks 12
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from barecalls import (
    BACKENDS,
    CHANGE,
    FIRST,
    OPS,
    canary_once,
    copy_tree,
    filesystem,
    git_calls,
    svn_calls,
    syncfs,
)

CANARIES: list[float] = []
"""The last loop's canary timings (ms), with ``canary=True``."""


def loop(
    backend: str,
    op: str,
    fs: str,
    rounds: int,
    sync: bool = False,
    copied: bool = False,
    warmup: int = 0,
    canary: bool = False,
) -> float:
    """The median round (ms) of ``rounds`` rounds, each verified after all are timed.
    ``sync``: every timed call starts with the filesystem synced, as vcsbench's rounds
    start (its probe's syncfs); otherwise only commit's prepared repository is synced.
    ``copied``: commit's repository is a copy of one made once, not made in place.
    ``warmup``: rounds made first and left out of the median, as vcsbench's warm-up and
    pilot rounds are. ``canary``: vcsbench's canary after every round, untimed by the
    round; its timings in ``CANARIES``."""
    calls = git_calls() if backend == "git-pygit2" else svn_calls()
    timed = calls[op]
    took: list[int] = []
    CANARIES.clear()
    with filesystem(fs) as mnt:
        # In a directory of their own, as vcsbench's are (in one process, alternating, the
        # filesystem's root and one level down took the same: svn-fs create 5.10 / 5.21 ms).
        (mnt / "repos").mkdir()
        paths = [str(mnt / "repos" / f"r{i:07d}") for i in range(warmup + rounds)]
        if copied:
            calls["create+commit"](str(mnt / "first"))
        for path in paths:
            if op == "commit" and copied:
                copy_tree(mnt / "first", Path(path))
            elif op == "commit":
                calls["create+commit"](path)
            if op == "commit" or sync:
                syncfs(mnt)
            start = time.perf_counter_ns()
            timed(path)
            took.append(time.perf_counter_ns() - start)
            if canary:
                CANARIES.append(canary_once(mnt, len(took)))
        want = {"create": None, "create+commit": FIRST, "commit": {**FIRST, **CHANGE}}[op]
        for path in paths:
            if want is None:
                if not os.path.isdir(path):
                    raise SystemExit(f"{path} was not made")
            else:
                calls["check"](path, want)
    return statistics.median(took[warmup:]) / 1e6


def counted(backend: str, op: str, fs: str, blocks: int, rounds: int) -> str:
    """One line: the fsync-family calls per round, and the counted blocks' median over
    the uncounted blocks' (per pair of blocks), with its interval."""
    import random

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from vcsbench.measure.syscalls import IN_ROUND, SyscallCounter
    from vcsbench.results.stats import order_interval

    calls = git_calls() if backend == "git-pygit2" else svn_calls()
    timed = calls[op]
    ratios: list[float] = []
    per_round: set[int] = set()
    with filesystem(fs) as mnt:
        (mnt / "repos").mkdir()
        serial = 0
        for _pair in range(blocks):
            medians = {}
            for on in random.sample([True, False], 2):
                counter = SyscallCounter(kinds=IN_ROUND)
                if on and counter.read() is None:
                    raise SystemExit(f"no counter: {counter.reason}")
                took = []
                paths = []
                for _ in range(rounds):
                    path = str(mnt / "repos" / f"r{serial:07d}")
                    serial += 1
                    paths.append(path)
                    if op == "commit":
                        calls["create+commit"](path)
                        syncfs(mnt)
                    first = (counter.read() or {}).get("sync_calls") if on else None
                    start = time.perf_counter_ns()
                    timed(path)
                    took.append(time.perf_counter_ns() - start)
                    if on:
                        per_round.add((counter.read() or {}).get("sync_calls", 0) - (first or 0))
                counter.close()
                want = {"create": None, "create+commit": FIRST, "commit": {**FIRST, **CHANGE}}
                for path in paths:
                    if want[op] is None and not os.path.isdir(path):
                        raise SystemExit(f"{path} was not made")
                    if want[op] is not None:
                        calls["check"](path, want[op])
                medians[on] = statistics.median(took)
            ratios.append(medians[True] / medians[False])
    low, high, confidence = order_interval(ratios)
    calls_text = "-".join(str(v) for v in sorted({min(per_round), max(per_round)}))
    return (
        f"{backend} {op} {fs}: {calls_text} fsync-family calls a round; counted / uncounted "
        f"{statistics.median(ratios):.3f} ({low:.3f}-{high:.3f}, {confidence:.0%}; "
        f"{blocks} pairs of {rounds} rounds)"
    )


def vcsbench_medians(
    fs: str, ops: list[str], rounds: int, extra: list[str]
) -> dict[tuple[str, str], tuple[float, float | None]]:
    """pytest-benchmark's median (ms) per backend and operation, from its JSON, and the
    median of vcsbench's canary beside its rounds (ms; None if it timed none)."""
    with tempfile.TemporaryDirectory(prefix="bareloop-json-") as where:
        out = Path(where) / "run.json"
        argv = [
            sys.executable,
            "-m",
            "pytest",
            "benchmarks",
            "--benchmark-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "--vcs-progress=none",
            f"--vcs-backends={','.join(BACKENDS)}",
            f"--vcs-ops={','.join(ops)}",
            "--vcs-payloads=hello",
            f"--vcs-fs={fs}",
            f"--vcs-repos={rounds}",
            f"--benchmark-json={out}",
            *extra,
        ]
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        found = json.loads(out.read_text())
    medians = {}
    for bench in found["benchmarks"]:
        result = bench["extra_info"]["vcsbench"]
        backend, op = result["backend"]["name"], result["op"]
        canary = result.get("canary") or {}
        medians[(backend, op)] = (bench["stats"]["median"] * 1000, canary.get("ms"))
    return medians


def compare(
    fs: str, ops: list[str], rounds: int, runs: int, extra: list[str], sync: bool, copied: bool
) -> None:
    print(
        f"vcsbench median / bare-loop median, {fs}, {rounds} rounds, hello; each run: "
        "loop, vcsbench, loop (ratio over the two loops' mean); both time vcsbench's "
        "canary after every round, so each ratio is also given over the canaries "
        "(the machine's drift between the processes taken out)"
        + ("; the loop syncs the filesystem before each call" if sync else "")
        + ("; commit's repository a copy" if copied else "")
    )
    rows: dict[tuple[str, str], list[str]] = {}
    adjusted: dict[tuple[str, str], list[float]] = {}

    def bare_loop(backend: str, op: str) -> tuple[float, float]:
        median = loop(backend, op, fs, rounds, sync, copied, canary=True)
        return median, statistics.median(CANARIES)

    for run in range(runs):
        before = {(b, o): bare_loop(b, o) for b in BACKENDS for o in ops}
        bench = vcsbench_medians(fs, ops, rounds, extra)
        after = {(b, o): bare_loop(b, o) for b in BACKENDS for o in ops}
        for key in before:
            (b_ms, b_can), (a_ms, a_can), (v_ms, v_can) = before[key], after[key], bench[key]
            bare = (b_ms + a_ms) / 2
            cell = f"{v_ms / bare:.3f} ({v_ms:.3f} / {b_ms:.3f}, {a_ms:.3f} ms"
            if v_can:
                over = (v_ms / v_can) / ((b_ms / b_can + a_ms / a_can) / 2)
                adjusted.setdefault(key, []).append(over)
                cell += f"; over the canaries {over:.3f}: {v_can:.3f} / {b_can:.3f}, {a_can:.3f} ms"
            rows.setdefault(key, []).append(cell + ")")
        print(f"run {run + 1} of {runs} done", file=sys.stderr)
    for (backend, op), cells in rows.items():
        print(f"{backend} {op}: " + "; ".join(cells))
    for (backend, op), ratios in adjusted.items():
        print(
            f"{backend} {op}: median over the canaries {statistics.median(ratios):.3f} "
            f"(runs {min(ratios):.3f}-{max(ratios):.3f})"
        )


SYNC_HELP = "syncfs before every timed call, as vcsbench's rounds start"
COPY_HELP = (
    "commit into a copy of a repository made once (written again file by file), as "
    "vcsbench prepares its rounds, not into one made in place"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("loop", help="the bare loop alone")
    one.add_argument("--backend", choices=BACKENDS, required=True)
    both = sub.add_parser("compare", help="the loop, vcsbench, the loop; --runs times")
    both.add_argument("--runs", type=int, default=3)
    both.add_argument(
        "--pytest-args", default="", help="more arguments for pytest, split at spaces"
    )
    count = sub.add_parser("counted", help="blocks with the system-call counter open or not")
    count.add_argument("--blocks", type=int, default=12, help="pairs of blocks")
    for each in (one, both):
        each.add_argument("--syncfs-first", action="store_true", help=SYNC_HELP)
        each.add_argument("--copied-start", action="store_true", help=COPY_HELP)
        each.add_argument(
            "--warmup", type=int, default=0, help="rounds first, left out of the median"
        )
    for each in (one, both, count):
        each.add_argument(
            "--ops", default="create+commit", help=f"comma-separated, of {', '.join(OPS)}"
        )
        each.add_argument("--fs", choices=("tmpfs", "ext4"), default="tmpfs")
        each.add_argument(
            "--rounds", type=int, default=400, help="rounds (counted: rounds a block)"
        )
    args = parser.parse_args()
    ops = args.ops.split(",")
    bad = [op for op in ops if op not in OPS]
    if bad:
        parser.error(f"--ops {bad[0]!r}: not one of {', '.join(OPS)}")
    if args.command == "counted":
        for backend in BACKENDS:
            for op in ops:
                print(counted(backend, op, args.fs, args.blocks, args.rounds), flush=True)
        return
    if args.command == "loop":
        for op in ops:
            median = loop(
                args.backend,
                op,
                args.fs,
                args.rounds,
                args.syncfs_first,
                args.copied_start,
                args.warmup,
            )
            print(f"{args.backend} {op} {args.fs}: median {median:.4f} ms")
    else:
        compare(
            args.fs,
            ops,
            args.rounds,
            args.runs,
            args.pytest_args.split(),
            args.syncfs_first,
            args.copied_start,
        )


if __name__ == "__main__":
    main()
