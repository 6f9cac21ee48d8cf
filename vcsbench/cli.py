"""The ``vcsbench`` command: a thin front door to the package."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from vcsbench import __version__
from vcsbench.errors import VcsbenchError


def _doctor(args: argparse.Namespace) -> int:
    from vcsbench.backends import REGISTRY
    from vcsbench.environment import machine_info

    if args.calibrate:
        return _calibrate(args)
    rows = []
    for name, cls in REGISTRY.items():
        availability = cls.available()
        rows.append({
            "name": name,
            "vcs": cls.vcs,
            "available": availability.ok,
            "reason": availability.reason,
            "versions": cls().versions() if availability.ok else {},
            "options": dict(cls.option_defaults),
        })
    can_mount = os.geteuid() == 0
    if args.json:
        print(json.dumps({"version": __version__, "backends": rows, "can_mount": can_mount,
                          "machine": machine_info()}, indent=2))
        return 0
    print(f"vcsbench {__version__}")
    for row in rows:
        state = "available" if row["available"] else f"UNAVAILABLE: {row['reason']}"
        print(f"  {row['name']:11} {row['vcs']:4} {state}")
        versions = row["versions"]
        assert isinstance(versions, dict)
        for tool, version in versions.items():
            print(f"      {tool}: {version}")
    print("  mounting sandboxes (tmpfs, ext4, xfs, btrfs): "
          + ("yes (root)" if can_mount else "no (not root); use --fs dir:PATH"))
    return 0


def _calibrate(args: argparse.Namespace) -> int:
    from vcsbench.calibrate import calibrate
    from vcsbench.filesystems import parse_fs_list

    if args.fs:
        specs = parse_fs_list(args.fs)
    elif os.geteuid() == 0:
        specs = parse_fs_list("tmpfs,ext4,xfs,btrfs")
    else:
        specs = parse_fs_list(f"dir:{tempfile.gettempdir()}")
        print(f"not root: calibrating in {specs[0].text} only (sandboxes need root)")
    failed = 0
    for check in calibrate(specs, args.image_dir):
        print(check.line(), flush=True)
        failed += check.ok is False
    print(f"{failed} check(s) failed" if failed else "all checks passed")
    return 1 if failed else 0


def _cleanup(args: argparse.Namespace) -> int:
    from vcsbench.filesystems import clean_stale

    cleaned = clean_stale()
    for item in cleaned:
        print(f"removed {item}")
    print(f"{len(cleaned)} leftover sandbox(es) of killed runs removed")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="vcsbench",
        description="Micro-benchmarks for version-control backends: time, CPU, IO at the "
        "process and at the device, and disk footprint, on filesystems vcsbench controls.",
    )
    parser.add_argument("--version", action="version", version=f"vcsbench {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    doctor = commands.add_parser(
        "doctor", help="show backends, versions and whether sandboxes can be mounted",
        description="List every backend with availability, reason and versions; with "
        "--calibrate, check the measuring rig against known synthetic work.",
    )
    doctor.add_argument("--json", action="store_true", help="print as JSON")
    doctor.add_argument("--calibrate", action="store_true",
                        help="check timer, IO and footprint probes in each sandbox; "
                        "exit 1 if any check fails")
    doctor.add_argument("--fs", help="sandboxes to calibrate in (default: tmpfs,ext4,xfs,btrfs "
                        "as root, else dir:$TMPDIR)")
    doctor.add_argument("--image-dir", type=Path, help="where loop images go (default: temp)")
    doctor.set_defaults(func=_doctor)

    cleanup = commands.add_parser(
        "cleanup", help="remove sandboxes left behind by killed runs",
        description="Unmount, detach and delete what killed vcsbench runs left behind; "
        "touches only what their state files record.",
    )
    cleanup.set_defaults(func=_cleanup)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
    except VcsbenchError as exc:
        print(f"vcsbench: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        print(f"vcsbench: {exc or 'interrupted'}", file=sys.stderr)
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
