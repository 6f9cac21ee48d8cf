"""A background sampler of system load: what an operator reads off top and iostat.

Every ``interval_s`` it records load average, CPU user/system/iowait shares since the
previous sample, Dirty and Writeback memory, and the sandbox device's in-flight requests
and busy share. Samples carry ``t_s``, seconds on the same ``perf_counter`` clock that
times the operations, so a report can line the two up.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from vcsbench.probes import read_device

SAMPLE_UNITS = {
    "t_s": "s",
    "loadavg_1m": "processes",
    "cpu_user_pct": "%",
    "cpu_system_pct": "%",
    "cpu_iowait_pct": "%",
    "dirty_bytes": "B",
    "writeback_bytes": "B",
    "device_in_flight": "requests",
    "device_busy_pct": "%",
}


def _cpu_ticks() -> list[int]:
    with open("/proc/stat") as handle:
        return [int(v) for v in handle.readline().split()[1:]]


def _meminfo(keys: tuple[str, ...]) -> dict[str, int]:
    values: dict[str, int] = {}
    for line in Path("/proc/meminfo").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in keys:
            values[key] = int(rest.split()[0]) * 1024
    return values


class SystemSampler:
    """Samples in a daemon thread between ``start()`` and ``stop()``."""

    def __init__(self, device_stat_path: str | None, interval_s: float = 0.5) -> None:
        self.device_stat_path = device_stat_path
        self.interval_s = interval_s
        self.samples: list[dict[str, Any]] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="vcsbench-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> list[dict[str, Any]]:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        return self.samples

    def _loop(self) -> None:
        prev_cpu = _cpu_ticks()
        prev_busy = read_device(self.device_stat_path).busy_ms if self.device_stat_path else 0
        prev_t = time.perf_counter()
        while not self._stop.wait(self.interval_s):
            now = time.perf_counter()
            cpu = _cpu_ticks()
            delta = [a - b for a, b in zip(cpu, prev_cpu, strict=False)]
            total = sum(delta) or 1
            mem = _meminfo(("Dirty", "Writeback"))
            sample: dict[str, Any] = {
                "t_s": now,
                "loadavg_1m": float(Path("/proc/loadavg").read_text().split()[0]),
                "cpu_user_pct": 100.0 * (delta[0] + delta[1]) / total,
                "cpu_system_pct": 100.0 * delta[2] / total,
                "cpu_iowait_pct": 100.0 * delta[4] / total,
                "dirty_bytes": mem.get("Dirty", 0),
                "writeback_bytes": mem.get("Writeback", 0),
                "device_in_flight": None,
                "device_busy_pct": None,
            }
            if self.device_stat_path:
                device = read_device(self.device_stat_path)
                sample["device_in_flight"] = device.in_flight
                sample["device_busy_pct"] = min(
                    100.0, 100.0 * (device.busy_ms - prev_busy) / ((now - prev_t) * 1000)
                )
                prev_busy = device.busy_ms
            self.samples.append(sample)
            prev_cpu, prev_t = cpu, now
