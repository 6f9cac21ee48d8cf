"""Counters read before and after a measured region. Knows the OS, nothing about VCS.

What each number means:

- CPU user/sys: ``getrusage``, this process plus its waited-for children, seconds.
- IO, storage-bound (``read_bytes``/``write_bytes`` of ``/proc/self/io``): bytes this
  process (and its waited children) caused to be fetched from or sent to a block
  device. A filesystem without a device (tmpfs) accounts none.
- IO, syscall (``rchar``/``wchar``): bytes passed through read/write calls, whatever
  they reach.
- Device: the sandbox's block device (``/sys/block/<dev>/stat``, 512-byte sectors), read
  after ``syncfs`` so that writeback, metadata and journal writes land inside.
"""

from __future__ import annotations

import ctypes
import os
import resource
import time
from dataclasses import dataclass
from pathlib import Path

from vcsbench.errors import VcsbenchError
from vcsbench.measure.syscalls import IN_ROUND, SyscallCounter

SECTOR_BYTES = 512

_libc = ctypes.CDLL(None, use_errno=True)


@dataclass(frozen=True)
class ProcessCounters:
    cpu_user_s: float
    cpu_sys_s: float
    read_bytes: int
    write_bytes: int
    rchar: int
    wchar: int
    probe_bytes: int = 0
    """Bytes this reading itself read from /proc/self/io: they land in the next
    reading's rchar, and are the probe's, not the measured region's."""

    def __sub__(self, other: ProcessCounters) -> ProcessCounters:
        return ProcessCounters(
            self.cpu_user_s - other.cpu_user_s,
            self.cpu_sys_s - other.cpu_sys_s,
            self.read_bytes - other.read_bytes,
            self.write_bytes - other.write_bytes,
            self.rchar - other.rchar - other.probe_bytes,
            self.wchar - other.wchar,
        )


@dataclass(frozen=True)
class DeviceCounters:
    read_bytes: int
    write_bytes: int
    read_requests: int
    write_requests: int
    in_flight: int
    busy_ms: int
    flush_requests: int | None = None
    """Cache flushes the device completed (field 16; None on a kernel without it)."""

    def __sub__(self, other: DeviceCounters) -> DeviceCounters:
        flushes = (
            None
            if self.flush_requests is None or other.flush_requests is None
            else self.flush_requests - other.flush_requests
        )
        return DeviceCounters(
            self.read_bytes - other.read_bytes,
            self.write_bytes - other.write_bytes,
            self.read_requests - other.read_requests,
            self.write_requests - other.write_requests,
            self.in_flight,
            self.busy_ms - other.busy_ms,
            flushes,
        )


@dataclass(frozen=True)
class FsUsage:
    used_bytes: int
    used_inodes: int

    def __sub__(self, other: FsUsage) -> FsUsage:
        return FsUsage(self.used_bytes - other.used_bytes, self.used_inodes - other.used_inodes)


_OPEN: dict[tuple[int, str], int] = {}
"""Descriptors of files read each round, kept open per process (a forked worker opens its
own: ``/proc/self`` names the process that opened it)."""


def _pread(path: str) -> bytes:
    """The whole of a small /proc or /sys file, read again from offset 0 (the kernel
    renders it afresh), without an open and close each time."""
    key = (os.getpid(), path)
    fd = _OPEN.get(key)
    if fd is not None:
        try:
            return os.pread(fd, 4096, 0)
        except OSError:  # the device behind a /sys file went away: open it again
            os.close(_OPEN.pop(key))
    fd = _OPEN[key] = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    return os.pread(fd, 4096, 0)


def read_process() -> ProcessCounters:
    # getrusage has microsecond resolution; os.times() counts 10 ms clock ticks.
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    io: dict[str, int] = {}
    text = _pread(f"/proc/{os.getpid()}/io")
    for line in text.splitlines():
        key, _, value = line.partition(b": ")
        io[key.decode()] = int(value)
    return ProcessCounters(
        cpu_user_s=own.ru_utime + children.ru_utime,
        cpu_sys_s=own.ru_stime + children.ru_stime,
        read_bytes=io["read_bytes"],
        write_bytes=io["write_bytes"],
        rchar=io["rchar"],
        wchar=io["wchar"],
        probe_bytes=len(text),
    )


PRESSURE_IO = "/proc/pressure/io"


def read_io_pressure(path: str = PRESSURE_IO) -> tuple[int, int] | None:
    """Microseconds some task, and every task, has stalled on IO since boot (the kernel's
    pressure stall information); None where the kernel has none."""
    try:
        text = _pread(path).decode()
    except OSError:
        return None
    totals = {}
    for line in text.splitlines():
        kind, *fields = line.split()
        for field in fields:
            if field.startswith("total="):
                totals[kind] = int(field[6:])
    if "some" not in totals or "full" not in totals:
        return None
    return totals["some"], totals["full"]


def read_device(stat_path: str) -> DeviceCounters:
    fields = [int(f) for f in _pread(stat_path).split()]
    return DeviceCounters(
        read_bytes=fields[2] * SECTOR_BYTES,
        write_bytes=fields[6] * SECTOR_BYTES,
        read_requests=fields[0],
        write_requests=fields[4],
        in_flight=fields[8],
        busy_ms=fields[9],
        flush_requests=fields[15] if len(fields) > 15 else None,
    )


def read_fs_usage(path: Path) -> FsUsage:
    st = os.statvfs(path)
    return FsUsage(
        used_bytes=(st.f_blocks - st.f_bfree) * st.f_frsize,
        used_inodes=st.f_files - st.f_ffree,
    )


def syncfs(path: Path, fd: int | None = None) -> None:
    """Write back everything dirty on the filesystem holding ``path`` (through ``fd``,
    a descriptor of it, when one is open already)."""
    own = fd is None
    if fd is None:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if _libc.syncfs(fd) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err), str(path))
    finally:
        if own:
            os.close(fd)


def drop_caches() -> None:
    """Write back and drop the page, dentry and inode caches (needs root)."""
    if os.geteuid() != 0:
        raise VcsbenchError("cache=cold needs root to drop caches; run as root or use warm")
    os.sync()
    Path("/proc/sys/vm/drop_caches").write_text("3\n")


def peak_rss_reset() -> bool:
    """Reset this process's peak RSS (VmHWM) so the next reading is about what follows."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def peak_rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def current_rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


@dataclass(frozen=True)
class Snapshot:
    """Everything read at one edge of a measured region."""

    process: ProcessCounters
    device: DeviceCounters | None
    fs: FsUsage
    calls: dict[str, int] | None = None
    """The system calls counted so far, by kind (None: not counted here)."""
    flushes: int | None = None
    """The device's flushes before the probe's own syncfs (None: no device, or no field)."""


@dataclass(frozen=True)
class Delta:
    """What a measured region cost, beside its wall time."""

    wall_ns: int
    process: ProcessCounters
    device: DeviceCounters | None
    fs: FsUsage
    calls: dict[str, int] | None = None
    """The system calls the region made, by kind (its waited children's included)."""
    flushes: int | None = None
    """Device cache flushes completed in the region, the probe's syncfs after it not
    counted: the flushes the region's own calls asked for."""


class Probe:
    """Reads the counters around regions on one filesystem.

    ``before()`` is read last thing before the region and ``after()`` first thing after
    it; the caller times only the region. ``after()`` syncs the filesystem before it
    reads the device, so writeback caused by the region is attributed to it.
    """

    def __init__(self, root: Path, device_stat_path: str | None, sync: bool = True) -> None:
        self.root = root
        self.device_stat_path = device_stat_path
        self.sync = sync
        self._fd: tuple[int, int] | None = None
        self.calls = SyscallCounter(enabled=device_stat_path is not None, kinds=IN_ROUND)
        self._primed = 0

    def _root_fd(self) -> int:
        """The root, opened once per process for syncfs (and closed with the probe)."""
        if self._fd is None or self._fd[0] != os.getpid():
            self._fd = (
                os.getpid(),
                os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC),
            )
        return self._fd[1]

    def close(self) -> None:
        if self._fd is not None and self._fd[0] == os.getpid():
            os.close(self._fd[1])
        self._fd = None
        self.calls.close()

    def before(self) -> Snapshot:
        if self._primed != os.getpid():  # the counters' files opened, outside any count
            read_process()
            self._primed = os.getpid()
        if self.sync:
            syncfs(self.root, self._root_fd())
        device = read_device(self.device_stat_path) if self.device_stat_path else None
        fs = read_fs_usage(self.root)
        calls = self.calls.read()  # before the process counters: its reads are not the region's
        flushes = device.flush_requests if device is not None else None
        return Snapshot(read_process(), device, fs, calls, flushes)

    def after(self) -> Snapshot:
        process = read_process()
        calls = self.calls.read()  # after the process counters, before the probe's syncfs
        flushes = None
        if self.device_stat_path:
            flushes = read_device(self.device_stat_path).flush_requests
        if self.sync:
            syncfs(self.root, self._root_fd())
        device = read_device(self.device_stat_path) if self.device_stat_path else None
        return Snapshot(process, device, read_fs_usage(self.root), calls, flushes)

    @staticmethod
    def delta(before: Snapshot, after: Snapshot, wall_ns: int) -> Delta:
        device = (
            after.device - before.device
            if after.device is not None and before.device is not None
            else None
        )
        calls = (
            None
            if after.calls is None or before.calls is None
            else {kind: after.calls[kind] - before.calls[kind] for kind in after.calls}
        )
        flushes = (
            None
            if after.flushes is None or before.flushes is None
            else after.flushes - before.flushes
        )
        return Delta(
            wall_ns, after.process - before.process, device, after.fs - before.fs, calls, flushes
        )

    def overhead_ns(self, pairs: int = 50) -> int:
        """Median cost of one before/after pair with an empty region, in ns."""
        costs = []
        for _ in range(pairs):
            start = time.perf_counter_ns()
            self.before()
            self.after()
            costs.append(time.perf_counter_ns() - start)
        costs.sort()
        return costs[len(costs) // 2]
