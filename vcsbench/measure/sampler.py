"""A system sampler in a process of its own: what an operator reads off top and iostat.

Every ``interval_s`` it records load average, CPU user/system/iowait shares since the
previous sample, the CPU time processes other than the run's used (``others_cpu``: what
competed with the run, which the load average cannot tell from the run's own verifying
processes), Dirty and Writeback memory, and the sandbox device's in-flight requests
and busy share, and the share of the time some task waited on IO (the kernel's pressure
stall information: the run's own fsyncs among them). A last sample is taken as it stops,
over the time since the one before: a run shorter than the interval has one. It runs as
a separate process, so that its reads of ``/proc`` add
nothing to the counters of the process that runs the operations (a sampler thread there
added about 2.7 KB of read-syscall bytes and 0.3 ms of CPU to whichever round it
overlapped). Its CPU and IO fold into the parent's only when it is waited for, after
the last round.

Samples carry ``t_s``, seconds on ``perf_counter`` -- CLOCK_MONOTONIC, the same clock in
every process -- so they line up with the rounds' start times.

``python -m vcsbench.measure.sampler --interval S [--device STAT] --out-fd N`` is the
child; it stops when its standard input closes (also when its parent dies). It writes
its samples to descriptor N, an anonymous memory file (``memfd``) its parent made: a run
killed at any moment leaves no sample file behind.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil

SAMPLE_UNITS = {
    "t_s": "s",
    "loadavg_1m": "processes",
    "runnable": "processes",
    "others_cpu": "CPUs",
    "cpu_user_pct": "%",
    "cpu_system_pct": "%",
    "cpu_iowait_pct": "%",
    "cpu_steal_pct": "%",
    "dirty_bytes": "B",
    "writeback_bytes": "B",
    "device_in_flight": "requests",
    "device_busy_pct": "%",
    "io_pressure_pct": "%",
}


def _meminfo(keys: tuple[str, ...]) -> dict[str, int]:
    values: dict[str, int] = {}
    for line in Path("/proc/meminfo").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in keys:
            values[key] = int(rest.split()[0]) * 1024
    return values


def _device(stat_path: str) -> tuple[int, int]:
    """(in-flight requests, busy ms) of a block device's sysfs stat file."""
    fields = Path(stat_path).read_text().split()
    return int(fields[8]), int(fields[9])


def _runnable() -> int:
    """Tasks running or ready to run at this instant (/proc/loadavg's fourth field), the
    sampler itself not counted: what competes now, where the 1-minute load average still
    carries the minute before (an aged sandbox's filling processes, just ended)."""
    with open("/proc/loadavg") as f:
        running = f.read().split()[3].partition("/")[0]
    return max(0, int(running) - 1)


TICK_S = 1 / os.sysconf("SC_CLK_TCK")


def _process_ticks() -> dict[int, tuple[int, int, int]]:
    """Every process's (parent, CPU ticks so far, start tick), from /proc/PID/stat; kernel
    threads (children of kthreadd, pid 2) left out: they work for whoever asked them."""
    found: dict[int, tuple[int, int, int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                text = handle.read()
        except OSError:  # it ended
            continue
        fields = text[text.rfind(b")") + 2 :].split()
        parent = int(fields[1])
        if parent == 2 or int(name) == 2:
            continue
        found[int(name)] = (parent, int(fields[11]) + int(fields[12]), int(fields[19]))
    return found


def _others_cpu(
    before: dict[int, tuple[int, int, int]],
    after: dict[int, tuple[int, int, int]],
    ours: int,
    seconds: float,
) -> float:
    """CPUs' worth of time that processes other than ``ours`` and its descendants (and
    this sampler) used between two scans, over ``seconds``."""
    children: dict[int, list[int]] = {}
    for pid, (parent, _, _) in after.items():
        children.setdefault(parent, []).append(pid)
    tree, stack = {os.getpid()}, [ours]
    while stack:
        pid = stack.pop()
        tree.add(pid)
        stack.extend(children.get(pid, []))
    ticks = 0
    for pid, (_, used, start) in after.items():
        if pid in tree:
            continue
        old = before.get(pid)
        ticks += used - old[1] if old is not None and old[2] == start else used
    return ticks * TICK_S / seconds if seconds > 0 else 0.0


def sample_loop(interval_s: float, device_stat_path: str | None, out: Any) -> None:
    """Write one JSON line per sample to ``out`` until standard input closes."""
    ours = os.getppid()
    processes = _process_ticks()
    psutil.cpu_times_percent(interval=None)  # the first call sets the baseline
    prev_busy = _device(device_stat_path)[1] if device_stat_path else 0
    prev_t = time.perf_counter()
    prev_stalled = _io_stalled_us()
    # Started and baselined: the parent waits for this line before its first round, so
    # the sampler's own start-up does not overlap a timed operation.
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        readable, _, _ = select.select([sys.stdin], [], [], interval_s)
        closed = bool(readable) and not os.read(sys.stdin.fileno(), 4096)
        now = time.perf_counter()
        if closed and now - prev_t < MIN_LAST_S:
            return
        # The last sample covers the time since the one before it: a run shorter than
        # the interval still has one, and what competed with it is known.
        scanned = _process_ticks()
        others = _others_cpu(processes, scanned, ours, now - prev_t)
        processes = scanned
        cpu = psutil.cpu_times_percent(interval=None)
        mem = _meminfo(("Dirty", "Writeback"))
        stalled = _io_stalled_us()
        sample: dict[str, Any] = {
            "t_s": now,
            "loadavg_1m": psutil.getloadavg()[0],
            "runnable": _runnable(),
            "others_cpu": round(others, 3),
            "cpu_user_pct": cpu.user + cpu.nice,
            "cpu_system_pct": cpu.system,
            "cpu_iowait_pct": getattr(cpu, "iowait", 0.0),
            "cpu_steal_pct": getattr(cpu, "steal", 0.0),
            "dirty_bytes": mem.get("Dirty", 0),
            "writeback_bytes": mem.get("Writeback", 0),
            "device_in_flight": None,
            "device_busy_pct": None,
            "io_pressure_pct": None
            if stalled is None or prev_stalled is None
            else round(min(100.0, (stalled - prev_stalled) / ((now - prev_t) * 1e4)), 2),
        }
        prev_stalled = stalled
        if device_stat_path:
            in_flight, busy = _device(device_stat_path)
            sample["device_in_flight"] = in_flight
            sample["device_busy_pct"] = min(
                100.0, 100.0 * (busy - prev_busy) / ((now - prev_t) * 1000)
            )
            prev_busy = busy
        prev_t = now
        out.write(json.dumps(sample) + "\n")
        out.flush()
        if closed:
            return


MIN_LAST_S = 0.02
"""The shortest time a last sample covers (a shorter one says nothing of CPU shares)."""


def _io_stalled_us() -> int | None:
    """Microseconds some task waited on IO so far (/proc/pressure/io, ``some``), or None
    where the kernel has no pressure stall information."""
    try:
        with open("/proc/pressure/io") as f:
            first = f.readline()
    except OSError:
        return None
    total = first.rpartition("total=")[2].strip()
    return int(total) if total.isdigit() else None


class SystemSampler:
    """Runs the sampler process between ``start()`` and ``stop()``."""

    def __init__(self, device_stat_path: str | None, interval_s: float = 0.5) -> None:
        self.device_stat_path = device_stat_path
        self.interval_s = interval_s
        self._proc: subprocess.Popen[bytes] | None = None
        self._out: int | None = None

    def start(self) -> None:
        self._out = os.memfd_create("vcsbench-sampler", os.MFD_CLOEXEC)
        argv = [
            sys.executable,
            "-m",
            "vcsbench.measure.sampler",
            "--interval",
            str(self.interval_s),
        ]
        if self.device_stat_path:
            argv += ["--device", self.device_stat_path]
        self._proc = subprocess.Popen(
            [*argv, "--out-fd", str(self._out)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            pass_fds=(self._out,),
        )
        assert self._proc.stdout is not None
        self._proc.stdout.readline()

    def samples(self) -> list[dict[str, Any]]:
        """The samples so far (the sampler goes on)."""
        if self._out is None:
            return []
        # pread: the file's offset is the writing child's as well, and stays where it is.
        size = os.fstat(self._out).st_size
        text = os.pread(self._out, size, 0).decode()
        lines = text.splitlines()
        if lines and not text.endswith("\n"):  # one being written
            lines = lines[:-1]
        return [json.loads(line) for line in lines if line.strip()]

    def stop(self) -> list[dict[str, Any]]:
        """End the sampler process and return its samples (none if it never started)."""
        if self._proc is None or self._out is None:
            return []
        try:
            if self._proc.stdin is not None:
                self._proc.stdin.close()
            if self._proc.stdout is not None:
                self._proc.stdout.close()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            os.lseek(self._out, 0, os.SEEK_SET)
            with os.fdopen(os.dup(self._out), "rb") as handle:
                text = handle.read().decode()
        finally:
            os.close(self._out)
            self._proc, self._out = None, None
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vcsbench.measure.sampler")
    parser.add_argument("--interval", type=float, default=0.5)
    parser.add_argument("--device", default=None)
    parser.add_argument("--out-fd", type=int, required=True)
    args = parser.parse_args(argv)
    with os.fdopen(args.out_fd, "w") as out, contextlib.suppress(KeyboardInterrupt):
        sample_loop(args.interval, args.device, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
