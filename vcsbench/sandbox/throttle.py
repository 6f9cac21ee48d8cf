"""Storage profiles: the sandbox's loop device limited to the IOs and bytes per second of
the user's disk, by the kernel's block throttling.

The kernel offers it here as cgroup v1's ``blkio.throttle.{read,write}_{iops,bps}_device``
in the root group: a rule ``MAJ:MIN LIMIT`` applies to every IO submitted to that one
device, by any process. A rule outlives the process that set it and follows the device
number, so a stale one would slow down the next loop device of that number, someone
else's: every rule is recorded in the sandbox's state file before it is set, removed
before the loop device is detached, and removed by cleanup only on a device proven the
run's (:mod:`vcsbench.sandbox.cleanup`). A rule found on a new loop device, which this run
did not set, is refused in one line and left as it is.

The profiles are models of a kind of disk, not measurements of one: each says where its
figures come from, and each sandbox measures what its device delivers (:func:`measure`).
"""

from __future__ import annotations

import mmap
import os
import random
import time
from dataclasses import dataclass
from pathlib import Path

BLKIO = Path("/sys/fs/cgroup/blkio")
LIMITS = ("read_iops", "write_iops", "read_bps", "write_bps")
SPEC_KEYS = {
    "read-iops": "read_iops",
    "write-iops": "write_iops",
    "read-bw": "read_bps",
    "write-bw": "write_bps",
}
MB = 1_000_000
TOLERANCE = 0.10
"""A profile is honoured when each measured rate is within 10 % of its limit."""


@dataclass(frozen=True)
class Profile:
    name: str
    limits: dict[str, int]
    source: str


PROFILES = {
    p.name: p
    for p in (
        Profile(
            "hdd",
            {"read_iops": 80, "write_iops": 80, "read_bps": 150 * MB, "write_bps": 150 * MB},
            "a 7,200 rpm disk: half a turn (4.2 ms) and an average seek (about 8.5 ms) per "
            "random IO, so about 80 IO/s; about 150 MB/s along a track",
        ),
        Profile(
            "sata-ssd",
            {"read_iops": 90_000, "write_iops": 80_000}
            | {"read_bps": 550 * MB, "write_bps": 520 * MB},
            "a SATA SSD as such disks are rated: the 6 Gbit/s link carries about 550 MB/s; "
            "90,000/80,000 random 4 KiB IO/s at queue depth 32",
        ),
        Profile(
            "cloud-ssd",
            {"read_iops": 3000, "write_iops": 3000, "read_bps": 125 << 20, "write_bps": 125 << 20},
            "a network block volume at its baseline, as AWS EBS gp3 is sold: 3,000 IO/s and "
            "125 MiB/s, whatever the IO size",
        ),
        Profile(
            "usb-stick",
            {"read_iops": 1000, "write_iops": 100, "read_bps": 30 * MB, "write_bps": 10 * MB},
            "a USB 2.0 flash stick: the 480 Mbit/s bus leaves about 30 MB/s to read; its "
            "flash writes about 10 MB/s, and small random writes are slower still",
        ),
    )
}


def rate_text(key: str, value: float) -> str:
    """A rate for limit ``key``: ``80 write IO/s``, ``150.0 MB/s read``."""
    direction, unit = key.split("_")
    if unit == "iops":
        return f"{value:,.0f} {direction} IO/s"
    return f"{value / MB:,.1f} MB/s {direction}"


def describe_limits(limits: dict[str, int]) -> str:
    """``80 read IO/s, 80 write IO/s, 150.0 MB/s read, 150.0 MB/s write``."""
    return ", ".join(rate_text(key, limits[key]) for key in LIMITS if key in limits)


def unavailable() -> str | None:
    """Why this kernel offers no block throttling here, or None."""
    missing = [k for k in LIMITS if not (BLKIO / f"blkio.throttle.{k}_device").exists()]
    if not missing:
        return None
    try:  # cgroup v2's io.max limits a group's processes only, never the root's
        v2 = "io" in Path("/sys/fs/cgroup/cgroup.controllers").read_text().split()
    except OSError:
        v2 = False
    also = (
        "; cgroup v2's io.max is here, but it limits the processes of a group, not a "
        "device, and vcsbench does not use it yet"
        if v2
        else ""
    )
    return (
        f"this kernel offers no block throttling here (no cgroup v1 "
        f"{BLKIO}/blkio.throttle.{missing[0]}_device{also}); run without a storage profile"
    )


def device_number(device: str) -> str:
    """``MAJ:MIN`` of a block device node."""
    rdev = os.stat(device).st_rdev
    return f"{os.major(rdev)}:{os.minor(rdev)}"


def rules_on(devno: str) -> dict[str, int]:
    """The throttle rules the kernel holds for ``devno`` (none where there is no
    throttling to read)."""
    found: dict[str, int] = {}
    for key in LIMITS:
        try:
            text = (BLKIO / f"blkio.throttle.{key}_device").read_text()
        except OSError:
            continue
        for line in text.splitlines():
            number, _, value = line.partition(" ")
            if number == devno and value.strip().isdigit():
                found[key] = int(value)
    return found


def counted_ios(devno: str) -> tuple[int, int] | None:
    """The read and write IOs the throttle has counted on ``devno`` (its root group, where
    every process here is): IOs as submitted, before the block layer merges adjacent
    ones into the requests the device's stat counts. None where nothing is counted."""
    try:
        text = (BLKIO / "blkio.throttle.io_serviced").read_text()
    except OSError:
        return None
    found = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[0] == devno and fields[2].isdigit():
            found[fields[1]] = int(fields[2])
    if "Read" not in found or "Write" not in found:
        return None
    return found["Read"], found["Write"]


def set_rule(devno: str, key: str, value: int) -> None:
    """Write one rule (``value`` 0 removes it)."""
    (BLKIO / f"blkio.throttle.{key}_device").write_text(f"{devno} {value}\n")


def clear_rules(devno: str) -> list[str]:
    """Remove every rule on ``devno``; the removals that failed, as text."""
    failed = []
    for key in rules_on(devno):
        try:
            set_rule(devno, key, 0)
        except OSError as exc:
            failed.append(f"remove throttle rule {key} on {devno}: {exc.strerror}")
    return failed


# -- what the device delivers -----------------------------------------------------------

IO_SIZE = {"iops": 4096, "bps": 1 << 20}
FILE_BYTES = 64 << 20
WARM_S = 0.3
"""The throttle lets a first slice through at once: measured after it."""


def _window_s(limit: int, unit: str) -> float:
    """Long enough for about 100 IOs at an IOPS limit (at least 1 s, at most 3 s)."""
    if unit == "iops":
        return min(3.0, max(1.0, 100.0 / limit))
    return 1.0


def _device_ios(stat_path: str | None, direction: str) -> tuple[int, int]:
    """(IOs completed, bytes) in ``direction`` by the device, from its stat file."""
    if stat_path is None:
        return 0, 0
    fields = Path(stat_path).read_text().split()
    ios, sectors = (fields[0], fields[2]) if direction == "read" else (fields[4], fields[6])
    return int(ios), int(sectors) * 512


def _ios(fd: int, view: memoryview, direction: str, unit: str, seconds: float) -> tuple[int, float]:
    """Direct IOs of ``len(view)`` bytes, one at a time, for ``seconds``: random offsets
    for an IOPS limit, sequential for bandwidth. (IOs done, seconds taken)."""
    size = len(view)
    slots = FILE_BYTES // size
    rng = random.Random(0)
    count = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        offset = (rng.randrange(slots) if unit == "iops" else count % slots) * size
        if direction == "write":
            done = os.pwrite(fd, view, offset)
        else:
            done = os.preadv(fd, [view], offset)
        if done != size:
            raise OSError(f"a {size}-byte direct IO moved {done} bytes")
        count += 1
    return count, time.perf_counter() - start


def measure(
    root: Path, limits: dict[str, int], stat_path: str | None = None
) -> dict[str, dict[str, float | int | bool | str]]:
    """For each limit, the rate the device delivered (direct IO, one at a time, after a
    warm-up; no flush, as disks are rated): IO/s in random 4 KiB IOs, bytes/s in
    sequential 1 MiB IOs. Where an IOPS limit binds first (1 MiB IOs at the profile's
    IO/s are slower than its bandwidth), that is the limit expected, and said."""
    path = root / ".vcsbench-throttle-check"
    buffer = mmap.mmap(-1, IO_SIZE["bps"])  # page-aligned, as O_DIRECT needs
    buffer.write(os.urandom(IO_SIZE["bps"]))
    results: dict[str, dict[str, float | int | bool | str]] = {}
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            for offset in range(0, FILE_BYTES, len(buffer)):
                os.pwrite(fd, buffer, offset)
            os.fsync(fd)
        finally:
            os.close(fd)
        for key in LIMITS:
            if key not in limits:
                continue
            direction, unit = key.split("_")
            size = IO_SIZE[unit]
            flags = os.O_WRONLY if direction == "write" else os.O_RDONLY
            fd = os.open(path, flags | os.O_DIRECT | os.O_NOFOLLOW)
            try:
                with memoryview(buffer)[:size] as view:
                    _ios(fd, view, direction, unit, WARM_S)
                    device0 = _device_ios(stat_path, direction)
                    count, elapsed = _ios(fd, view, direction, unit, _window_s(limits[key], unit))
                    device1 = _device_ios(stat_path, direction)
            finally:
                os.close(fd)
            rate = count / elapsed if unit == "iops" else count * size / elapsed
            ios, moved = device1[0] - device0[0], device1[1] - device0[1]
            # The kernel counts every IO the device gets against an IOPS limit, whatever
            # its size (a disk pays per seek): large IOs reach the bandwidth limit only if
            # the IOPS limit times their size (as the device got them) is above it.
            request = moved / ios if ios else size
            expected, binding = limits[key], key
            other = f"{direction}_iops"
            if unit == "bps" and other in limits and limits[other] * request < expected:
                expected, binding = int(limits[other] * request), other
            results[key] = {
                "limit": limits[key],
                "expected": expected,
                "binding": binding,
                "measured": round(rate, 1),
                "io_bytes": size,
                "device_io_bytes": int(request),
                "device_ios_per_s": round(ios / elapsed, 1),
                "seconds": round(elapsed, 3),
                "ok": abs(rate - expected) <= TOLERANCE * expected,
            }
    finally:
        buffer.close()
        path.unlink(missing_ok=True)
    return results


def judge(results: dict[str, dict[str, float | int | bool | str]]) -> tuple[list[str], list[str]]:
    """(problems, notes): a line per limit the device did not deliver within 10 %, and a
    note per bandwidth limit an IOPS limit holds below (the kernel's throttle counts every
    IO, a disk pays per seek)."""
    problems, notes = [], []
    for key, r in results.items():
        direction, unit = key.split("_")
        measured, expected = float(r["measured"]), float(r["expected"])
        if r["binding"] != key:
            notes.append(
                f"{float(r['limit']) / MB:,.1f} MB/s {direction} is not reached: the kernel "
                f"counts each of the device's {int(r['device_io_bytes']) >> 10} KiB IOs "
                f"against the {direction} IO/s limit, so sequential {direction}s stop at "
                f"{expected / MB:,.1f} MB/s"
            )
        if r["ok"]:
            continue
        against = f"{expected:,.0f}" if unit == "iops" else f"{expected / MB:,.1f}"
        shown = f"{rate_text(key, measured)} against {against}"
        why = (
            "the disk under the image is slower than the profile: the machine cannot honour it"
            if measured < expected
            else "the throttle did not hold"
        )
        problems.append(f"{shown} ({100 * (measured / expected - 1):+.0f} %): {why}")
    return problems, notes
