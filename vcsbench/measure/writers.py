"""Who wrote it: the processes' and the device's kernel threads' writes over an interval,
as iotop shows them, beside what the device wrote.

The kernel charges a write to the task that dirtied the page (``write_bytes`` in
/proc/PID/io, with the children it reaped -- less, here, what a child reaped in the
interval had written before it), not to the thread that later submits it, and
charges much of a filesystem's own writing to no task. Measured on this project's
machine: 200 fsync'd 4 KiB writes on a loop-mounted ext4 made the device write 7.1 MiB;
the writing process was charged with 800 KiB, the journal thread (jbd2/loop0-8) with
76 KiB. What the device wrote beyond what its writers were charged with is named as
such: the share the kernel attributes to no task -- here 88 %, the journal.

Counted against the device: the kernel threads named for the device (``jbd2/loop0-8``,
``xfsaild/loop0``, ``flush-7:0``), the processes that are the measurement's own (the
benchmark's process and all below it; a load's servers), and any other process only where
it holds the device at the snapshot after (its working directory or an open file on it):
a charge is for any device, and another tenant's process writing its own disk is no
writer of this one (``elsewhere_bytes``, apart). Not counted: other kernel threads -- the
loop device's own worker (``kworker/…-loop0``) is charged with writing its image file,
which is the device's IO seen again from below, and another disk's flusher with that
disk's. So the unattributed share is a lower bound.

**vcsbench's own processes apart.** A load run's own processes -- the run, its engine,
Locust's workers, the clients and the VCS programs they start -- load the server; they
are not its writers. Given the run's process (``own_root``) and the server's (``server``:
its session or cgroup, and the local clients that do a local path's work), a task that
descends from the run and not from the server is listed apart (``own``), never ranked
among the writers. A benchmark's harness is not split so: the operation runs in it (or in
the programs it starts and reaps, whose charges are then its own).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from vcsbench.process import proc_stat

PF_KTHREAD = 0x00200000
"""A kernel thread (``flags`` in /proc/PID/stat)."""
TOP = 5


@dataclass(frozen=True)
class Task:
    name: str
    kernel: bool
    write_bytes: int
    parent: int = 0


Snapshot = dict[tuple[int, int], Task]


def snapshot() -> Snapshot:
    """Every task's write charge now, by (pid, start time)."""
    found: Snapshot = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        fields = proc_stat(pid)
        if fields is None:
            continue
        try:
            text = Path(f"/proc/{pid}/io").read_text()
            name = Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:  # gone, or not ours to read
            continue
        written = next(
            (int(line.split()[1]) for line in text.splitlines() if line.startswith("write_bytes:")),
            0,
        )
        kernel = bool(int(fields[6]) & PF_KTHREAD)
        found[(pid, int(fields[19]))] = Task(name, kernel, written, int(fields[1]))
    return found


def device_of(stat_path: str | None) -> tuple[str, str]:
    """The block device's name and number (``loop0``, ``7:0``) from its stat file's path
    (``/sys/block/loop0/stat``); empty where there is none."""
    if not stat_path:
        return "", ""
    folder = Path(stat_path).parent
    try:
        return folder.name, (folder / "dev").read_text().strip()
    except OSError:
        return folder.name, ""


def device_thread(name: str, device: str, number: str) -> bool:
    """Whether a kernel thread of this name works for the block device ``device``
    (``loop0``) of number ``number`` (``7:0``): its journal, log or flusher."""
    if not device:
        return False
    return bool(re.search(rf"/{re.escape(device)}(?!\d)", name)) or (
        bool(number) and name.endswith(f"flush-{number}")
    )


def _descends(pid: int, roots: set[int], parents: dict[int, int]) -> bool:
    """Whether ``pid`` is one of ``roots`` or below one of them (by the snapshots'
    parent links; a bounded walk: a pid reused into a loop ends it)."""
    for _ in range(64):
        if pid in roots:
            return True
        if pid not in parents or pid <= 1:
            return False
        pid = parents[pid]
    return False


def top_writers(
    before: Snapshot,
    after: Snapshot,
    device_write_bytes: int | None,
    device: str = "",
    number: str = "",
    top: int = TOP,
    own_root: int | None = None,
    server: set[int] | None = None,
    on_device: Callable[[int], bool] | None = None,
) -> dict[str, object]:
    """The ``top`` writers to the device (``loop0``, number ``7:0``) by what they were
    charged with between two snapshots, their total, and the share of the device's
    writes charged to none of them (at least); other kernel threads' charges apart, and
    the tasks below ``own_root`` but not below ``server`` (vcsbench's own) listed apart.
    With ``on_device`` (whether a pid holds the device), a process below neither
    ``own_root`` nor ``server`` is ranked only where it does (else ``elsewhere_bytes``)."""
    # A task reaped in the interval hands its whole charge to its parent: what it had
    # before the interval is no part of the parent's growth.
    pids = {key[0]: key for key in before}
    handed: dict[tuple[int, int], int] = {}
    for key, task in before.items():
        parent = pids.get(task.parent)
        if key not in after and parent is not None:
            handed[parent] = handed.get(parent, 0) + task.write_bytes
    grown = []
    elsewhere = elsewhere_processes = 0
    for key, task in after.items():
        was = before.get(key)
        delta = task.write_bytes - (was.write_bytes if was else 0) - handed.get(key, 0)
        if delta <= 0:
            continue
        if task.kernel and not device_thread(task.name, device, number):
            elsewhere += delta
        else:
            grown.append((delta, key[0], task))
    grown.sort(key=lambda item: (-item[0], item[1]))
    parents = {key[0]: task.parent for key, task in (*before.items(), *after.items())}
    servers = server or set()
    if on_device is not None:  # another tenant's process writes its own disk: not ranked
        roots = servers | ({own_root} if own_root is not None else set())
        kept = []
        for g in grown:
            if g[2].kernel or _descends(g[1], roots, parents) or on_device(g[1]):
                kept.append(g)
            else:
                elsewhere_processes += g[0]
        grown = kept
    charged = sum(delta for delta, _, _ in grown)
    own: list[tuple[int, int, Task]] = []
    if own_root is not None:
        ranked: list[tuple[int, int, Task]] = []
        for g in grown:  # one pass: each task is the run's own or ranked
            mine = _descends(g[1], {own_root}, parents) and not _descends(g[1], servers, parents)
            (own if mine else ranked).append(g)
        grown = ranked
    unattributed = max(0.0, 1 - charged / device_write_bytes) if device_write_bytes else None
    return {
        "top": [
            {"name": task.name, "pid": pid, "kernel_thread": task.kernel, "write_bytes": delta}
            for delta, pid, task in grown[:top]
        ],
        **(
            {
                "own": [
                    {"name": task.name, "pid": pid, "write_bytes": delta}
                    for delta, pid, task in own[:top]
                ],
                "own_bytes": sum(delta for delta, _, _ in own),
            }
            if own_root is not None
            else {}
        ),
        "tasks": len(grown),
        "charged_bytes": charged,
        "other_kernel_bytes": elsewhere,
        **({"elsewhere_bytes": elsewhere_processes} if on_device is not None else {}),
        "unattributed_share": unattributed,
    }


def since(
    before: Snapshot,
    device_write_bytes: int,
    stat_path: str | None,
    own_root: int | None = None,
    server: set[int] | None = None,
) -> dict[str, object]:
    """:func:`top_writers` from ``before`` to now, for the device whose stat file is
    ``stat_path``, which wrote ``device_write_bytes`` meanwhile; a process ranked only
    where it is below ``own_root`` or ``server`` or holds the device."""
    name, number = device_of(stat_path)
    major, _, minor = number.partition(":")
    holds = (
        partial(holds_device, dev=os.makedev(int(major), int(minor)))
        if major.isdigit() and minor.isdigit()
        else None
    )
    return top_writers(
        before, snapshot(), device_write_bytes, name, number, own_root=own_root,
        server=server, on_device=holds,
    )  # fmt: skip


MAX_FDS = 4096
"""Open files looked at per process, at most."""


def holds_device(pid: int, dev: int) -> bool:
    """Whether process ``pid`` has its working directory or an open file on device
    ``dev`` now (False where it is gone or not ours to look at)."""
    try:
        if os.stat(f"/proc/{pid}/cwd").st_dev == dev:
            return True
        for fd in os.listdir(f"/proc/{pid}/fd")[:MAX_FDS]:
            with contextlib.suppress(OSError):  # closed meanwhile
                if os.stat(f"/proc/{pid}/fd/{fd}").st_dev == dev:
                    return True
    except OSError:
        return False
    return False
