"""``vcsbench doctor --calibrate``: the rig checks itself against known synthetic work.

Each check is a pure judgement (``check_*``) of what was measured against what is known,
so that every one of them can fail, and a test proves that it does.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vcsbench.measure.footprint import footprint
from vcsbench.measure.probes import Probe
from vcsbench.sandbox import FsSpec, Sandbox
from vcsbench.sandbox.throttle import rate_text

CALIBRATION_BYTES = 16 << 20
TOLERANCE = 0.01
PROBE_OVERHEAD_LIMIT_US = 5_000.0
"""A before/after pair (syncfs included) slower than this would dominate a round's
harness time; the rig is then too slow to run thousands of rounds."""
TIMER_STEP_LIMIT_NS = 1_000
"""A clock that cannot tell 1 us apart cannot time a 0.2 ms operation to 1%."""


@dataclass(frozen=True)
class Check:
    """One calibration check: ``ok`` is None where the check does not apply."""

    fs: str
    name: str
    ok: bool | None
    detail: str
    warn_only: bool = False
    """A judgement of the machine and the harness together (timing), not of a counter:
    beyond its goal it warns, and the calibration still passes."""

    @property
    def status(self) -> str:
        if self.ok is False and self.warn_only:
            return "WARN"
        return {True: "PASS", False: "FAIL", None: "n/a"}[self.ok]

    @property
    def failed(self) -> bool:
        return self.ok is False and not self.warn_only

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


def check_syscall_bytes(fs: str, wrote: int, wchar: int) -> Check:
    return Check(
        fs,
        "write: syscall bytes",
        _within(wrote, wchar),
        f"wrote {wrote} B, wchar counted {wchar} B ({_pct(wrote, wchar)})",
    )


def check_logical_write(fs: str, wrote: int, write_bytes: int) -> Check:
    return Check(
        fs,
        "write: logical IO",
        _within(wrote, write_bytes),
        f"wrote {wrote} B + fsync, /proc/self/io write_bytes {write_bytes}"
        f" B ({_pct(wrote, write_bytes)})",
    )


def check_device_write(fs: str, device: str, wrote: int, device_bytes: int, requests: int) -> Check:
    # The device must see at least the data, and not wildly more (journal and metadata
    # of one file are a few blocks, not a second copy of 16 MiB).
    ok = wrote <= device_bytes <= 2 * wrote
    return Check(
        fs,
        "write: device IO",
        ok,
        f"device {device} wrote {device_bytes} B in {requests} requests for {wrote} B "
        f"(x{device_bytes / wrote:.3f}; accepted x1 to x2)",
    )


def check_waited_child(fs: str, child_bytes: int, counted: int, source: str) -> Check:
    # Copy-on-write filesystems account some metadata to the writer: allow 64 KiB more.
    slack = int(TOLERANCE * child_bytes) + 65536
    return Check(
        fs,
        "write: waited child",
        child_bytes <= counted <= child_bytes + slack,
        f"child wrote {child_bytes} B, parent's {source} grew by {counted} B "
        f"({_pct(child_bytes, counted)}; accepted: +0 to +{slack} B)",
    )


def check_footprint_allocated(fs: str, walk: int, du: int) -> Check:
    return Check(fs, "footprint: allocated", walk == du, f"walk {walk} B, du -B1 -s {du} B")


def check_footprint_apparent(fs: str, walk: int, du: int, inodes: int) -> Check:
    return Check(
        fs,
        "footprint: apparent",
        walk == du,
        f"walk {walk} B, du -b -s {du} B ({inodes} inodes)",
    )


def check_probe_overhead(fs: str, read_ns: int, synced_ns: int) -> Check:
    return Check(
        fs,
        "probe overhead",
        synced_ns / 1000 <= PROBE_OVERHEAD_LIMIT_US,
        f"{read_ns / 1000:.1f} us per before/after read, {synced_ns / 1000:.1f} us with "
        f"the two syncfs calls (accepted up to {PROBE_OVERHEAD_LIMIT_US:,.0f} us; all "
        "outside every timed region)",
    )


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
    yield check_syscall_bytes(fs, k, delta.process.wchar)
    if storage_accounted:
        yield check_logical_write(fs, k, delta.process.write_bytes)
    else:
        yield Check(
            fs,
            "write: logical IO",
            None,
            f"{sandbox.info.fstype} has no backing store; the kernel accounts no "
            "storage writes (write_bytes stays 0)",
        )
    if has_device and delta.device is not None:
        yield check_device_write(
            fs,
            sandbox.info.device or "?",
            k,
            delta.device.write_bytes,
            delta.device.write_requests,
        )
    else:
        yield Check(fs, "write: device IO", None, sandbox.info.device_note or "no block device")

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
    yield check_waited_child(
        fs, child_bytes, counted, "write_bytes" if storage_accounted else "wchar"
    )

    tree = sandbox.root / "tree"
    tree.mkdir()
    _make_tree(tree)
    os.sync()
    mine = footprint(tree)
    yield check_footprint_allocated(fs, mine.allocated_bytes, _du(["-B1"], tree))
    yield check_footprint_apparent(fs, mine.apparent_bytes, _du(["-b"], tree), mine.inodes)

    read_ns = Probe(sandbox.root, sandbox.info.device_stat_path, sync=False).overhead_ns()
    yield check_probe_overhead(fs, read_ns, probe.overhead_ns())
    if sandbox.info.throttle is not None:
        yield from throttle_checks(fs, sandbox.info.throttle["measured"])


def throttle_checks(fs: str, measured: dict[str, dict[str, Any]]) -> Iterator[Check]:
    """A storage profile's limits against what the device delivered under them (measured
    when the sandbox was made): within 10 %, or the machine cannot honour the profile."""
    for key, r in measured.items():
        direction, unit = key.split("_")
        shown = rate_text(key, r["measured"])
        if unit == "iops":
            shown += f" (limit {r['expected']:,.0f})"
        else:
            binding = "" if r["binding"] == key else f", its {direction} IO/s limit binding first"
            shown += f" (expected {r['expected'] / 1e6:,.1f}{binding})"
        yield Check(fs, f"profile: {key}", bool(r["ok"]), f"{shown}; accepted within 10 %")


def check_timer(implementation: str, resolution_s: float, steps_ns: list[int]) -> Check:
    ordered = sorted(steps_ns)
    smallest, median = ordered[0], ordered[len(ordered) // 2]
    return Check(
        "-",
        "timer resolution",
        median <= TIMER_STEP_LIMIT_NS,
        f"perf_counter ({implementation}) resolution {resolution_s * 1e9:.0f} ns, smallest "
        f"observed step {smallest} ns, median {median} ns (accepted up to "
        f"{TIMER_STEP_LIMIT_NS} ns)",
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
    return check_timer(info.implementation, info.resolution, deltas)


def calibrate(
    specs: list[FsSpec],
    image_dir: Path | None = None,
    first: Callable[[Sandbox], Iterator[Check]] | None = None,
) -> Iterator[Check]:
    """The rig's checks in each sandbox; ``first``: more checks in the first one (the
    harness against a bare loop, from the layer that runs benchmarks)."""
    yield timer_check()
    # The harness against a bare loop where the device is as it is: on a throttled one
    # every round waits for the throttle, and the check would take minutes.
    plain = [spec for spec in specs if not spec.limits]
    for spec in specs:
        with Sandbox(spec, image_dir) as sandbox:
            yield from run_checks(sandbox)
            if first is not None and plain and spec is plain[0]:
                yield from first(sandbox)
