"""Facts about the machine a run is on and the filesystem it runs in, recorded with every
result (a benchmark's and a load run's alike)."""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Any

from vcsbench.results.environment import FilesystemInfo, Throttle
from vcsbench.sandbox import SandboxInfo


def _first(path: str, key: str) -> str:
    try:
        for line in Path(path).read_text().splitlines():
            name, _, value = line.partition(":" if ":" in line else "=")
            if name.strip() == key:
                return value.strip().strip('"')
    except OSError:
        pass
    return ""


def machine_info() -> dict[str, Any]:
    mem_kib = _first("/proc/meminfo", "MemTotal").split()[0] or "0"
    return {
        "cpu_model": _first("/proc/cpuinfo", "model name"),
        "cpu_count": os.cpu_count(),
        "memory_bytes": int(mem_kib) * 1024,
        "kernel": platform.release(),
        "distribution": _first("/etc/os-release", "PRETTY_NAME"),
        "python": platform.python_version(),
        "is_root": os.geteuid() == 0,
    }


def filesystem_info(info: SandboxInfo) -> FilesystemInfo:
    """What a result records of the sandbox a benchmark ran in (the sandbox's own record,
    less why it has no device counters, which the metrics say)."""
    return FilesystemInfo(
        spec=info.spec,
        kind=info.kind,
        fstype=info.fstype,
        mount_options=info.mount_options,
        mountpoint=info.mountpoint,
        device=info.device,
        device_stat_path=info.device_stat_path,
        image_path=info.image_path,
        image_size_bytes=info.image_size_bytes,
        kernel=info.kernel,
        device_shared=info.device_shared,
        disk=info.disk,
        throttle=None if info.throttle is None else Throttle.of_sandbox(info.throttle),
    )
