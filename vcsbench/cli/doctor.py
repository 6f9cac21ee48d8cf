"""``vcsbench doctor``: backends, their versions, and whether sandboxes can be mounted;
with ``--calibrate``, the rig checked against known synthetic work."""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

from vcsbench import __version__
from vcsbench.cli.command import Command


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


def run(args: argparse.Namespace) -> int:
    from vcsbench.backends import REGISTRY
    from vcsbench.measure.machine import machine_info

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
