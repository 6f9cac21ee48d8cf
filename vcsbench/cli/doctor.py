"""``vcsbench doctor``: backends, their versions, and whether sandboxes can be mounted;
with ``--calibrate``, the rig checked against known synthetic work."""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from vcsbench import __version__
from vcsbench.cli.command import Command
from vcsbench.errors import VcsbenchError
from vcsbench.measure.machine import machine_info

if TYPE_CHECKING:
    from vcsbench.results.spread import SpreadCell


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print as JSON")
    parser.add_argument(
        "--calibrate",
        action="store_true",
        help="check timer, IO and footprint probes in each sandbox; exit 1 if any check fails",
    )
    parser.add_argument(
        "--fs",
        help="sandboxes to calibrate in (default: tmpfs,ext4,xfs,btrfs as root, else "
        "dir:$TMPDIR); a storage profile (ext4:profile=hdd) is checked against what the "
        "device delivers",
    )
    parser.add_argument("--image-dir", type=Path, help="where loop images go (default: temp)")
    spread = parser.add_argument_group(
        "run-to-run spread",
        "how far the same benchmark moves between separate runs on this machine: compare "
        "and report judge changes between runs against it",
    )
    spread.add_argument(
        "--spread",
        action="store_true",
        help="measure it: the same benchmarks in --runs separate runs (an A/A across runs), "
        "kept for this machine and recorded by every later run",
    )
    spread.add_argument(
        "--runs", type=int, default=None, metavar="K", help="runs (default 8, at least 3)"
    )
    spread.add_argument("--backends", default=None, help="default git-pygit2,svn-fs")
    spread.add_argument("--ops", default=None, help="default create+commit,commit")
    spread.add_argument("--payloads", default=None, help="default submission")
    spread.add_argument("--repos", default=None, help="rounds a benchmark (default 100)")
    spread.add_argument(
        "--counted",
        type=int,
        default=None,
        metavar="N",
        help="counted rounds in each run (default 0): the instructions' spread between runs "
        "and rounds beside time's (each run's counted rounds take 5-20 s a benchmark)",
    )
    spread.add_argument(
        "--keep", type=Path, default=None, metavar="DIR", help="keep the runs' result files here"
    )


def run(args: argparse.Namespace) -> int:
    from vcsbench.backends import REGISTRY

    if args.spread:
        return _spread(args)
    given = [f"--{n}" for n in ("runs", "backends", "ops", "payloads", "repos", "keep", "counted")]
    given = [flag for flag in given if getattr(args, flag[2:]) is not None]
    if given:
        raise VcsbenchError(f"{', '.join(given)}: options of --spread; add --spread")
    if args.calibrate:
        return _calibrate(args)
    rows = []
    for name, cls in REGISTRY.items():
        availability = cls.available()
        versions: dict[str, str] = {}
        if availability.ok:
            with cls() as backend:
                versions = backend.versions()
        rows.append(
            {
                "name": name,
                "vcs": cls.vcs,
                "available": availability.ok,
                "reason": availability.reason,
                "versions": versions,
                "options": dict(cls.option_defaults),
            }
        )
    can_mount = os.geteuid() == 0
    if args.json:
        print(
            json.dumps(
                {
                    "version": __version__,
                    "backends": rows,
                    "can_mount": can_mount,
                    "machine": machine_info(),
                },
                indent=2,
            )
        )
        return 0
    print(f"vcsbench {__version__}")
    for row in rows:
        state = "available" if row["available"] else f"UNAVAILABLE: {row['reason']}"
        print(f"  {row['name']:11} {row['vcs']:4} {state}")
        versions_shown = row["versions"]
        assert isinstance(versions_shown, dict)
        for tool, version in versions_shown.items():
            print(f"      {tool}: {version}")
    print(
        "  mounting sandboxes (tmpfs, ext4, xfs, btrfs): "
        + ("yes (root)" if can_mount else "no (not root); use --fs dir:PATH")
    )
    print(_spread_text())
    return 0


def _spread_text() -> str:
    """This machine's run-to-run spread as last measured, for a person."""
    from vcsbench.judge.verdict import single_run_reach
    from vcsbench.results.calibration import fingerprint, load_spread, spread_path
    from vcsbench.results.drifting import UNDER

    digest = fingerprint(machine_info())[0]
    found = load_spread(digest)
    if found is None:
        return (
            "  run-to-run spread: not measured on this machine; without it, compare gives no "
            "time verdict between single runs (vcsbench doctor --spread measures it)"
        )
    lines = [
        f"  run-to-run spread ({spread_path(digest)}, measured {found.measured}, "
        f"{found.runs} runs of: {found.command}):"
    ]
    for cell in found.cells:
        used = cell.time_figure()
        sd = cell.sd_log(used)
        reach = single_run_reach(sd, cell.df(used)) if sd is not None else None
        medians = ", ".join(f"{v:.3g}" for v in cell.figures.get("time", ()))
        against = "".join(
            f"; over its {what} ±{100 * sd:.1f}%"
            + (" (compare uses this: the machine's drift taken out)" if used == name else "")
            for name, what in UNDER.items()
            if (sd := cell.sd_log(name)) is not None
        )
        if "canary" in cell.figures and not any(name in cell.figures for name in UNDER):
            against += (
                "; measured before each round was paired with its canary, so compare uses "
                "the median alone (doctor --spread measures it again)"
            )
        lines.append(
            f"    {cell.backend} {cell.op} {cell.fstype}: ±{100 * (cell.sd_log() or 0):.1f}% "
            f"(medians ms: {medians}){against}; one run a side reads a change beyond "
            + (f"{100 * reach:.0f}%" if reach is not None else "n/a")
            + _count_spread(cell)
        )
    return "\n".join(lines)


def _count_spread(cell: SpreadCell) -> str:
    """The counted rounds' instructions beside time: how far they moved between runs and
    between a run's rounds, where the spread runs counted them."""
    found = cell.figures.get("instructions", ())
    if len(found) < 2:
        return ""
    sd = cell.sd_log("instructions") or 0.0
    rounds = cell.figures.get("instructions_rounds", ())
    within = f", its counted rounds ranging over {100 * max(rounds):.1f}% at most" if rounds else ""
    return (
        f"; instructions ±{100 * sd:.2f}% between runs (medians "
        f"{min(found):,.0f}–{max(found):,.0f}){within}"
    )


def _spread(args: argparse.Namespace) -> int:
    from vcsbench.bench.spread import (
        DEFAULT_BACKENDS,
        DEFAULT_OPS,
        DEFAULT_PAYLOADS,
        DEFAULT_REPOS,
        DEFAULT_RUNS,
        measure_spread,
    )
    from vcsbench.results.calibration import save_spread

    if args.calibrate:
        raise VcsbenchError("--spread and --calibrate are two checks; run them one at a time")
    fs = args.fs or ("tmpfs,ext4" if os.geteuid() == 0 else f"dir:{tempfile.gettempdir()}")
    run_args = [
        "--backends", args.backends or DEFAULT_BACKENDS,
        "--ops", args.ops or DEFAULT_OPS,
        "--payloads", args.payloads or DEFAULT_PAYLOADS,
        "--repos", str(args.repos or DEFAULT_REPOS),
        "--fs", fs,
        "--perturbation", "off",
        "--counted", str(args.counted or 0),
    ]  # fmt: skip
    if args.image_dir:
        run_args += ["--image-dir", str(args.image_dir)]
    runs = DEFAULT_RUNS if args.runs is None else args.runs
    print(f"spread: {runs} separate runs of vcsbench run {' '.join(run_args)}", flush=True)
    found = measure_spread(runs, run_args, args.keep, say=lambda line: print(line, flush=True))
    path = save_spread(found)
    print(f"kept for this machine in {path}")
    print(_spread_text())
    return 0


def _calibrate(args: argparse.Namespace) -> int:
    from vcsbench.bench.perturbation import GOAL as PERTURBATION_GOAL
    from vcsbench.bench.perturbation import perturbation_checks
    from vcsbench.measure.calibrate import calibrate
    from vcsbench.sandbox import parse_fs_list

    if args.fs:
        specs = parse_fs_list(args.fs)
    elif os.geteuid() == 0:
        specs = parse_fs_list("tmpfs,ext4,xfs,btrfs")
    else:
        specs = parse_fs_list(f"dir:{tempfile.gettempdir()}")
        print(f"not root: calibrating in {specs[0].text} only (sandboxes need root)")
    failed = warned = 0
    for check in calibrate(specs, args.image_dir, first=perturbation_checks):
        print(check.line(), flush=True)
        failed += check.failed
        warned += check.status == "WARN"
    print(f"{failed} check(s) failed" if failed else "all checks passed")
    if warned:
        print(
            f"{warned} warning(s): the harness moved a timing beyond "
            f"{PERTURBATION_GOAL:g}x a bare loop of the same calls on this machine now; "
            "rerun on an idle machine before reading small differences"
        )
    return 1 if failed else 0


COMMAND = Command(
    "doctor",
    add_arguments,
    run,
    dict(
        help="show backends, versions and whether sandboxes can be mounted",
        description="List every backend with availability, reason and versions; with "
        "--calibrate, check the measuring rig against known synthetic work.",
    ),
)
