"""What the kernel says about mounts and loop devices (read-only helpers)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from vcsbench.errors import VcsbenchError


def _unescape(field_text: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field_text)


def mount_entry(path: str) -> dict[str, str] | None:
    """The /proc/self/mountinfo entry whose mount point is exactly ``path`` (the top one)."""
    found = None
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fields = left.split()
        if _unescape(fields[4]) == path:
            fstype, source, super_opts = right.split()[:3]
            found = {
                "mountpoint": path,
                "fstype": fstype,
                "source": _unescape(source),
                "options": ",".join(dict.fromkeys([*fields[5].split(","), *super_opts.split(",")])),
            }
    return found


def mounts_below(path: str) -> list[str]:
    """Mount points at or below ``path`` (as this process's mount namespace sees them)."""
    prefix = path.rstrip("/") + "/"
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = _unescape(line.split()[4])
        if point == path or point.startswith(prefix):
            found.append(point)
    return found


def mount_containing(path: Path) -> dict[str, str]:
    """The mountinfo entry of the filesystem ``path`` is on."""
    path = path.resolve()
    for candidate in [path, *path.parents]:
        entry = mount_entry(str(candidate))
        if entry is not None:
            return entry
    raise VcsbenchError(f"no mount found for {path}")


def block_device_stat(source: str) -> tuple[str | None, str | None]:
    """(device name, sysfs stat path) for a mount source like /dev/loop3, or (None, None)."""
    if not source.startswith("/dev/"):
        return None, None
    name = Path(os.path.realpath(source)).name
    stat = Path("/sys/class/block") / name / "stat"
    return (name, str(stat)) if stat.exists() else (None, None)


def loop_backings() -> dict[str, tuple[int, int]]:
    """Every loop device attached, and the identity (st_dev, st_ino) of the file behind
    it: what proves a loop device is backed by one exact file, deleted or not."""
    try:
        proc = subprocess.run(
            ["losetup", "--list", "--json", "-O", "NAME,BACK-INO,BACK-MAJ:MIN"],
            capture_output=True,
            text=True,
            check=False,
        )
        devices = json.loads(proc.stdout or "{}").get("loopdevices", [])
    except (OSError, ValueError):
        return {}
    found: dict[str, tuple[int, int]] = {}
    for entry in devices:
        major, _, minor = str(entry.get("back-maj:min", "")).strip().partition(":")
        inode = entry.get("back-ino")
        if major.isdigit() and minor.isdigit() and isinstance(inode, int):
            found[str(entry["name"])] = (os.makedev(int(major), int(minor)), inode)
    return found


def disk_model(path: Path) -> str:
    """The disk under ``path``: device name and model as sysfs gives them (best effort)."""
    try:
        source = mount_containing(path)["source"]
    except VcsbenchError:
        return ""
    if not source.startswith("/dev/"):
        return source
    name = Path(os.path.realpath(source)).name
    block = Path("/sys/class/block") / name
    disk = block.resolve().parent.name if (block / "partition").exists() else name
    device = Path("/sys/block") / disk / "device"
    for attribute in ("model", "vendor"):
        try:
            value = (device / attribute).read_text().strip()
        except OSError:
            continue
        if value:
            return f"{disk} ({value})"
    return disk
