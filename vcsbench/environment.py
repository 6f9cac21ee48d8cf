"""Facts about the machine a run is on, recorded with every result."""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Any

from vcsbench.backends import REGISTRY


def _first(path: str, key: str) -> str:
    try:
        for line in Path(path).read_text().splitlines():
            name, _, value = line.partition(":" if ":" in line else "=")
            if name.strip() == key:
                return value.strip().strip('"')
    except OSError:
        pass
    return ""


def backend_versions() -> dict[str, dict[str, str]]:
    """Each available backend's library and tool versions (default options)."""
    versions: dict[str, dict[str, str]] = {}
    for name, cls in REGISTRY.items():
        if cls.available().ok:
            versions[name] = cls().versions()
    return versions


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
        "backend_versions": backend_versions(),
    }
