"""What other processes did: a server's processes' CPU and writes, read from /proc and
from a cgroup, for the steps of a load.

A server's work is done by processes that come and go (a handler forked per
connection, a CGI nobody waits for). Where vcsbench made the server a cgroup, the
cgroup counts every process that was ever in it. Otherwise each process is read by
itself, with the children it reaped, so that a step counts what each one grew by and a
process that ended is named, never subtracted from the others (:func:`grown`).
"""

from __future__ import annotations

import os
import resource
from pathlib import Path

from vcsbench.process import proc_stat


def members(pids: list[int], session: int | None, group: str | None = None) -> list[int]:
    """``pids`` and every live process of a server: those in its cgroup where it has one
    (also a CGI daemon that left its session), else those in its ``session``."""
    if group:
        try:
            listed = Path(group, "cgroup.procs").read_text().split()
        except OSError:
            listed = []
        return sorted({*pids, *(int(p) for p in listed)})
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        if pid in pids:
            found.append(pid)
            continue
        if session is None:
            continue
        fields = proc_stat(pid)
        if fields is not None and int(fields[3]) == session:
            found.append(pid)
    return found


def cpu_by_pid(pids: list[int]) -> dict[str, float]:
    """CPU seconds of each process (by pid), with the children it has reaped, so that a
    handler that ended is counted once, in its parent."""
    seconds: dict[str, float] = {}
    ticks = os.sysconf("SC_CLK_TCK")
    for pid in pids:
        fields = proc_stat(pid)
        if fields is not None:  # utime stime cutime cstime
            seconds[str(pid)] = sum(int(f) for f in fields[11:15]) / ticks
    return seconds


def written_by_pid(pids: list[int]) -> dict[str, int]:
    """Bytes each process (by pid, with the children it reaped) caused to be written to
    storage (``write_bytes`` in /proc/PID/io)."""
    written: dict[str, int] = {}
    for pid in pids:
        try:
            text = Path(f"/proc/{pid}/io").read_text()
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith("write_bytes:"):
                written[str(pid)] = int(line.split()[1])
    return written


def grown(before: dict[str, float], after: dict[str, float]) -> tuple[float, int]:
    """What the processes read at an interval's end grew by since its start (all of it
    for one that started within it), and how many read at the start had ended: their
    share of the interval is not seen."""
    total = sum(value - before.get(pid, 0) for pid, value in after.items())
    return total, sum(1 for pid in before if pid not in after)


def cgroup_cpu_s(group: Path) -> float:
    """CPU seconds of every process that was ever in ``group`` (cgroup v2 ``cpu.stat``)."""
    for line in (group / "cpu.stat").read_text().splitlines():
        key, _, value = line.partition(" ")
        if key == "usage_usec":
            return int(value) / 1e6
    return 0.0


def own_cpu_s() -> float:
    """CPU seconds of this process and the children it has reaped."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
