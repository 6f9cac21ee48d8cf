"""The system calls a round made, by kind, counted by the kernel: the fsync family (what
durability is made of), renames, opens, mkdir and unlink, lookups (and the failed ones
apart), read and write calls, mmaps, processes and programs started (:data:`KINDS`).

Each system call has a tracepoint on entry (``syscalls:sys_enter_NAME``) and on exit
(``sys_exit_NAME``, where a filter ``ret < 0`` keeps the failed calls); a perf event
counting each, opened for this process with ``inherit`` (children started after it count
too, folded in when they exit: a backend's subprocesses, waited for inside the round),
all in one group read with one ``read`` before and after the round. What the counter
needs: root (or ``perf_event_paranoid`` below 2) and the tracepoints' ids, read from
tracefs -- the one mounted at ``/sys/kernel/tracing`` if there is one, else a tracefs a
child mounts in a mount namespace of its own (it goes with the child: nothing is left
mounted, whatever happens). Where either is missing, nothing is counted and the reason
is said: the figure is missing, never a zero.

Counting costs the counted process's system calls a little while it is open (the kernel
takes the traced path for all of them, and counts each event it counts): the kinds
counted inside timed rounds (:data:`IN_ROUND`) moved no median beyond its interval
(``tools/bareloop.py counted``, docs/counts.md); counting every kind cost an svn commit
4 %. A probe counts only where its sandbox has a block device of its own.

A counter belongs to the process that opened it (a forked worker opens its own, as the
probe's ``/proc/self/io`` descriptor).
"""

from __future__ import annotations

import ctypes
import json
import os
import struct
import subprocess
import sys
from pathlib import Path

FAMILY = ("fsync", "fdatasync", "sync_file_range", "syncfs", "msync", "sync")
"""The calls that make data durable: what a commit's durability is made of."""
LOOKUPS = ("newstat", "newlstat", "newfstat", "newfstatat", "statx", "access", "faccessat",
           "faccessat2", "readlink", "readlinkat")  # fmt: skip
"""The calls that look a path (or a descriptor) up without opening it."""
KINDS: dict[str, tuple[str, ...]] = {
    "sync_calls": FAMILY,
    "rename_calls": ("rename", "renameat", "renameat2"),
    "open_calls": ("open", "openat", "openat2", "creat"),
    "mkdir_calls": ("mkdir", "mkdirat"),
    "unlink_calls": ("unlink", "unlinkat", "rmdir"),
    "stat_calls": LOOKUPS,
    "read_calls": ("read", "pread64", "readv", "preadv", "preadv2"),
    "write_calls": ("write", "pwrite64", "writev", "pwritev", "pwritev2"),
    "mmap_calls": ("mmap",),
    "process_calls": ("clone", "clone3", "fork", "vfork"),
    "exec_calls": ("execve", "execveat"),
}
"""Each kind of call a round counts (a registry metric of the name), and its calls: each
counted on entry."""
FAILED = {"stat_failed_calls": LOOKUPS}
"""Kinds counted on exit where the call failed (``ret < 0``): a lookup of a path that is
not there (git's probing for files it may not have)."""
EVENTS = [
    *((kind, "enter", call) for kind, calls in KINDS.items() for call in calls),
    *((kind, "exit", call) for kind, calls in FAILED.items() for call in calls),
]
"""(kind, tracepoint side, system call) of every event a counter may count."""
IN_ROUND = ("sync_calls", "rename_calls", "mkdir_calls", "unlink_calls", "process_calls",
            "exec_calls")  # fmt: skip
"""The kinds counted inside timed rounds: calls a round makes a few of, whose counting
costs it nothing measurable. The frequent ones (opens, lookups, reads and writes, mmaps:
hundreds a commit) cost an svn commit 4 % counted there, and are counted in rounds of
their own."""
TRACEFS = Path("/sys/kernel/tracing")
_PERF_TYPE_TRACEPOINT = 2
_INHERIT = 1 << 1
_PERF_FLAG_FD_CLOEXEC = 1 << 3
_SYS_PERF_EVENT_OPEN = {"x86_64": 298, "aarch64": 241}
_ATTR_SIZE = 112  # PERF_ATTR_SIZE_VER5

_libc = ctypes.CDLL(None, use_errno=True)


class _Attr(ctypes.Structure):
    """``struct perf_event_attr`` as far as version 5 (what a counting event needs)."""

    _fields_ = [
        ("type", ctypes.c_uint32),
        ("size", ctypes.c_uint32),
        ("config", ctypes.c_uint64),
        ("sample_period", ctypes.c_uint64),
        ("sample_type", ctypes.c_uint64),
        ("read_format", ctypes.c_uint64),
        ("flags", ctypes.c_uint64),
        ("wakeup_events", ctypes.c_uint32),
        ("bp_type", ctypes.c_uint32),
        ("config1", ctypes.c_uint64),
        ("config2", ctypes.c_uint64),
        ("branch_sample_type", ctypes.c_uint64),
        ("sample_regs_user", ctypes.c_uint64),
        ("sample_stack_user", ctypes.c_uint32),
        ("clockid", ctypes.c_int32),
        ("sample_regs_intr", ctypes.c_uint64),
        ("aux_watermark", ctypes.c_uint32),
        ("sample_max_stack", ctypes.c_uint16),
        ("reserved", ctypes.c_uint16),
    ]


NO_DEVICE = "counted only on a filesystem with a block device of its own"
_IDS: dict[str, int] = {}
_WHY = [""]
_PERF_FORMAT_GROUP = 1 << 3
_PERF_EVENT_IOC_SET_FILTER = 0x40082406


def _names() -> list[str]:
    """Every tracepoint the counter uses, as ``sys_enter_NAME``."""
    return sorted({f"sys_{side}_{call}" for _, side, call in EVENTS})


def _read_ids(root: Path) -> dict[str, int]:
    found = {}
    for name in _names():
        path = root / "events" / "syscalls" / name / "id"
        if path.is_file():
            found[name] = int(path.read_text())
    return found


def tracepoint_ids() -> tuple[dict[str, int], str]:
    """The tracepoints' ids (``sys_enter_fsync`` -> id), and why there are none where
    there are none. Read once a process."""
    if _IDS or _WHY[0]:
        return _IDS, _WHY[0]
    if os.uname().machine not in _SYS_PERF_EVENT_OPEN:
        _WHY[0] = f"counting system calls is not wired for {os.uname().machine}"
        return _IDS, _WHY[0]
    if (TRACEFS / "events").is_dir():
        _IDS.update(_read_ids(TRACEFS))
    elif os.geteuid() == 0:
        _IDS.update(_own_tracefs_ids())
    if not _IDS:
        _WHY[0] = "counting system calls needs the kernel's syscall tracepoints (tracefs) and root"
    return _IDS, _WHY[0]


_READ_IN_OWN_NAMESPACE = """
import json, subprocess, sys
from pathlib import Path
subprocess.run(["mount", "-t", "tracefs", "nodev", "/sys/kernel/tracing"], check=True)
root = Path("/sys/kernel/tracing/events/syscalls")
ids = {n: int((root / n / "id").read_text())
       for n in sys.argv[1:] if (root / n / "id").is_file()}
print(json.dumps(ids))
"""


def _own_tracefs_ids() -> dict[str, int]:
    """The ids from a tracefs mounted in a mount namespace of a child's own
    (``unshare --mount``): it goes with the child, so nothing is left mounted whatever
    happens to this process."""
    done = subprocess.run(
        [
            "unshare", "--mount", "--propagation", "private",
            sys.executable, "-c", _READ_IN_OWN_NAMESPACE, *_names(),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    )  # fmt: skip
    if done.returncode != 0:
        return {}
    try:
        found = json.loads(done.stdout)
    except ValueError:
        return {}
    known = set(_names())
    return {str(k): int(v) for k, v in found.items() if k in known and isinstance(v, int)}


def _open(tracepoint: int, group: int = -1) -> int:
    attr = _Attr()
    attr.type = _PERF_TYPE_TRACEPOINT
    attr.size = _ATTR_SIZE
    attr.config = tracepoint
    attr.flags = _INHERIT
    attr.read_format = _PERF_FORMAT_GROUP
    number = _SYS_PERF_EVENT_OPEN[os.uname().machine]
    fd = int(
        _libc.syscall(
            ctypes.c_long(number),
            ctypes.byref(attr),
            ctypes.c_int(0),
            ctypes.c_int(-1),
            ctypes.c_int(group),
            ctypes.c_ulong(_PERF_FLAG_FD_CLOEXEC),
        )
    )
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return fd


def _failed_only(fd: int) -> None:
    """Count the event only where the call returned an error."""
    if _libc.ioctl(fd, ctypes.c_ulong(_PERF_EVENT_IOC_SET_FILTER), ctypes.c_char_p(b"ret < 0")):
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


class SyscallCounter:
    """The system calls of this process and its children by kind (:data:`KINDS`,
    :data:`FAILED`), counted by the kernel: one group of perf events, read at once."""

    def __init__(self, enabled: bool = True, kinds: tuple[str, ...] = (*KINDS, *FAILED)) -> None:
        self.kinds = kinds
        """The kinds it counts (the others read None)."""
        self._fds: list[int] = []
        self._kinds: list[str] = []
        """The kind of each event of the group, in the group's order."""
        self._pid = 0
        self.enabled = enabled
        self.reason = "" if enabled else NO_DEVICE
        """Why nothing is counted ("" when it is)."""

    def _ready(self) -> bool:
        if not self.enabled:
            return False
        if self._pid == os.getpid():
            return bool(self._fds)
        self._fds, self._kinds, self._pid = [], [], os.getpid()  # a forked process: its own
        ids, why = tracepoint_ids()
        if not ids:
            self.reason = why
            return False
        try:
            for kind, side, call in EVENTS:
                tracepoint = ids.get(f"sys_{side}_{call}")
                if kind not in self.kinds:
                    continue
                if tracepoint is None:  # a call this kernel does not have (fork on arm64)
                    continue
                fd = _open(tracepoint, self._fds[0] if self._fds else -1)
                self._fds.append(fd)
                self._kinds.append(kind)
                if side == "exit":
                    _failed_only(fd)
        except OSError as exc:
            self.close()
            self.reason = f"the kernel refused a perf event counting system calls ({exc.strerror})"
            return False
        return True

    def read(self) -> dict[str, int] | None:
        """The calls of each kind it counts so far (None where they cannot be counted)."""
        if not self._ready():
            return None
        data = os.read(self._fds[0], 8 * (1 + len(self._fds)))
        (count,) = struct.unpack_from("Q", data)
        found = dict.fromkeys(self.kinds, 0)
        for kind, value in zip(self._kinds, struct.unpack_from(f"{count}Q", data, 8), strict=True):
            found[kind] += value
        return found

    def close(self) -> None:
        if self._pid == os.getpid():
            for fd in reversed(self._fds):
                os.close(fd)
        self._fds, self._kinds = [], []
