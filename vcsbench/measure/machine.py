"""Facts about the machine a run is on, recorded with every result. Knows the OS only."""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Any


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
