"""``vcsbench doctor --calibrate``: the rig checks itself against known synthetic work."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from vcsbench.filesystems import FsSpec, Sandbox
from vcsbench.probes import Probe, footprint

CALIBRATION_BYTES = 16 << 20
TOLERANCE = 0.01


@dataclass(frozen=True)
class Check:
    """One calibration check: ``ok`` is None where the check does not apply."""

    fs: str
    name: str
    ok: bool | None
    detail: str

    @property
    def status(self) -> str:
        return {True: "PASS", False: "FAIL", None: "n/a"}[self.ok]

    def line(self) -> str:
        return f"[{self.status:4}] {self.fs:8} {self.name:22} {self.detail}"


def _within(expected: int, actual: int) -> bool:
    return abs(actual - expected) <= TOLERANCE * expected


def _pct(expected: int, actual: int) -> str:
    return f"{100.0 * (actual - expected) / expected:+.2f}%"


def _write_fsync(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def _make_tree(root: Path) -> None:
    """Directories, empty, small, odd-sized and multi-block files, a hard link, a symlink."""
    for d in range(5):
        sub = root / f"dir{d}" / "nested"
        sub.mkdir(parents=True)
        for f in range(12):
            (sub / f"file{f}.bin").write_bytes(os.urandom((f * 3907 * (d + 1)) % 70000))
    (root / "empty").write_bytes(b"")
    os.link(root / "dir0" / "nested" / "file5.bin", root / "hardlink.bin")
    os.symlink("dir1", root / "symlink")


def _du(args: list[str], path: Path) -> int:
    out = subprocess.run(
        ["du", *args, "-s", str(path)], capture_output=True, text=True, check=True
    ).stdout
    return int(out.split()[0])


def run_checks(sandbox: Sandbox) -> Iterator[Check]:
    """Yield each check's result as it is made, in ``sandbox``."""
    assert sandbox.info is not None
    fs = sandbox.info.kind
    probe = Probe(sandbox.root, sandbox.info.device_stat_path)
    has_device = sandbox.info.device_stat_path is not None
    storage_accounted = sandbox.info.fstype != "tmpfs"
    data = os.urandom(CALIBRATION_BYTES)
    k = len(data)

    before = probe.before()
    _write_fsync(sandbox.root / "calibration.bin", data)
    delta = Probe.delta(before, probe.after(), 0)
    yield Check(
        fs,
        "write: syscall bytes",
        _within(k, delta.process.wchar),
        f"wrote {k} B, wchar counted {delta.process.wchar} B ({_pct(k, delta.process.wchar)})",
    )
    if storage_accounted:
        yield Check(
            fs,
            "write: logical IO",
            _within(k, delta.process.write_bytes),
            f"wrote {k} B + fsync, /proc/self/io write_bytes {delta.process.write_bytes}"
            f" B ({_pct(k, delta.process.write_bytes)})",
        )
    else:
        yield Check(
            fs,
            "write: logical IO",
            None,
            f"{sandbox.info.fstype} has no backing store; the kernel accounts no "
            "storage writes (write_bytes stays 0)",
        )
    if has_device and delta.device is not None:
        yield Check(
            fs,
            "write: device IO",
            delta.device.write_bytes >= k,
            f"device {sandbox.info.device} wrote {delta.device.write_bytes} B in "
            f"{delta.device.write_requests} requests for {k} B "
            f"(x{delta.device.write_bytes / k:.3f})",
        )
    else:
        yield Check(fs, "write: device IO", None, "no block device under this filesystem")

    child_bytes = 4 << 20
    before = probe.before()
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import os,sys; fd=os.open(sys.argv[1], os.O_WRONLY|os.O_CREAT, 0o644); "
            "os.write(fd, os.urandom(int(sys.argv[2]))); os.fsync(fd); os.close(fd)",
            str(sandbox.root / "child.bin"),
            str(child_bytes),
        ],
        check=True,
    )
    delta = Probe.delta(before, probe.after(), 0)
    counted = delta.process.write_bytes if storage_accounted else delta.process.wchar
    source = "write_bytes" if storage_accounted else "wchar"
    # Copy-on-write filesystems account some metadata to the writer: allow 64 KiB more.
    slack = int(TOLERANCE * child_bytes) + 65536
    yield Check(
        fs,
        "write: waited child",
        child_bytes <= counted <= child_bytes + slack,
        f"child wrote {child_bytes} B, parent's {source} grew by {counted} B "
        f"({_pct(child_bytes, counted)}; accepted: +0 to +{slack} B)",
    )

    tree = sandbox.root / "tree"
    tree.mkdir()
    _make_tree(tree)
    os.sync()
    mine = footprint(tree)
    du_allocated = _du(["-B1"], tree)
    du_apparent = _du(["-b"], tree)
    yield Check(
        fs,
        "footprint: allocated",
        mine.allocated_bytes == du_allocated,
        f"walk {mine.allocated_bytes} B, du -B1 -s {du_allocated} B",
    )
    yield Check(
        fs,
        "footprint: apparent",
        mine.apparent_bytes == du_apparent,
        f"walk {mine.apparent_bytes} B, du -b -s {du_apparent} B ({mine.inodes} inodes)",
    )

    read_ns = Probe(sandbox.root, sandbox.info.device_stat_path, sync=False).overhead_ns()
    synced_ns = probe.overhead_ns()
    yield Check(
        fs,
        "probe overhead",
        True,
        f"{read_ns / 1000:.1f} us per before/after read, {synced_ns / 1000:.1f} us with "
        "the two syncfs calls (all outside every timed region)",
    )


def timer_check() -> Check:
    info = time.get_clock_info("perf_counter")
    deltas = []
    for _ in range(1000):
        a = time.perf_counter_ns()
        b = time.perf_counter_ns()
        while b == a:
            b = time.perf_counter_ns()
        deltas.append(b - a)
    deltas.sort()
    smallest = deltas[0]
    return Check(
        "-",
        "timer resolution",
        smallest < 1_000_000,
        f"perf_counter ({info.implementation}) resolution {info.resolution * 1e9:.0f} "
        f"ns, smallest observed step {smallest} ns, median {deltas[500]} ns",
    )


def calibrate(specs: list[FsSpec], image_dir: Path | None = None) -> Iterator[Check]:
    yield timer_check()
    for spec in specs:
        with Sandbox(spec, image_dir) as sandbox:
            yield from run_checks(sandbox)
