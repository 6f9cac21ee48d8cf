"""What a load step is measured by: the counters read at its edges (the device, the
server's CPU and writes, the clients' CPU, IO pressure), who wrote over it, and the
answer the engine sends for it. No Locust here: the engine imports it first."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from vcsbench.load.engine_config import EngineConfig
from vcsbench.measure import writers
from vcsbench.measure.probes import read_device, read_io_pressure, syncfs
from vcsbench.measure.processes import (
    cgroup_cpu_s,
    cpu_by_pid,
    members,
    own_cpu_s,
    written_by_pid,
)
from vcsbench.sandbox.throttle import counted_ios


def _device_flushes(config: EngineConfig) -> int | None:
    """The sandbox device's completed flush requests so far (None: none counted)."""
    stat = config.device_stat
    return read_device(stat).flush_requests if stat else None


def counters(
    config: EngineConfig, server_pids: list[int], pids: list[int] | None = None
) -> dict[str, Any]:
    """What a step's figures are differences of, read at its start and at its end;
    ``pids``: the server's processes now, where the caller has just found them."""
    group = config.server_cgroup
    if pids is None:
        pids = members(server_pids, config.server_session, group)
    device = read_device(config.device_stat) if config.device_stat else None
    throttled = config.throttle_device
    return {
        "t": time.perf_counter(),
        "throttle_ios": counted_ios(throttled) if throttled else None,
        "device": None
        if device is None
        else [device.read_bytes, device.write_bytes, device.read_requests, device.write_requests],
        "flushes": None if device is None else device.flush_requests,
        "io_pressure": read_io_pressure(),
        # A cgroup counts every process that was ever in it; otherwise each process's own
        # counters, so that a step counts what each grew by.
        "server_cpu_s": cgroup_cpu_s(Path(group)) if group else None,
        "server_cpu_by_pid": None if group else cpu_by_pid(pids),
        "server_write_by_pid": written_by_pid(pids),
        "client_cpu_s": own_cpu_s(),
    }


def nothing_counted(t: float) -> dict[str, Any]:
    """The counters :func:`counters` reads, as they read with nothing counted (no device,
    no server process), at ``t``: a step of known work's (the tests' known engine)."""
    return {
        "t": t, "throttle_ios": None, "device": None, "flushes": None, "io_pressure": None,
        "server_cpu_s": None, "server_cpu_by_pid": {}, "server_write_by_pid": {},
        "client_cpu_s": 0.0,
    }  # fmt: skip


def step_writers(
    config: EngineConfig,
    snap: writers.Snapshot,
    before: dict[str, Any],
    after: dict[str, Any],
    server: list[int],
) -> dict[str, object] | None:
    """Who wrote to the sandbox's device over a step (none where there is no device):
    the run's own processes (this engine's parent, the run, and all below it but the
    ``server``'s processes at the step's end, and the local clients that do a local
    path's work) apart."""
    if before["device"] is None or after["device"] is None:
        return None
    written = after["device"][1] - before["device"][1]
    return writers.since(
        snap, written, config.device_stat, own_root=os.getppid(), server=set(server)
    )


def answer(
    level: float,
    before: dict[str, Any],
    after: dict[str, Any],
    records: dict[str, list[Any]],
    details: list[str],
) -> dict[str, Any]:
    """A step's answer: its level, the counters around it, its sessions' records and the
    first errors' details (a driver adds what it knows besides)."""
    return {
        "level": level,
        "before": before,
        "after": after,
        "records": records,
        "details": details,
    }


def step_start(config: EngineConfig, pids: list[int]) -> tuple[writers.Snapshot, dict[str, Any]]:
    """At a step's start, once its users are up: what was dirty written back first, then
    who has written so far and the counters."""
    syncfs(Path(config.repos))
    return writers.snapshot(), counters(config, pids)


def step_end(config: EngineConfig, pids: list[int]) -> tuple[dict[str, Any], list[int]]:
    """At a step's end, its last session done: what the step left dirty is written back
    inside its window, so the device's bytes per session are its own (as the benchmarks'
    probes do); its flushes are read before that syncfs, which flushes too. The counters,
    and the server's processes they were read from (found once: a scan of /proc)."""
    flushed = _device_flushes(config)
    syncfs(Path(config.repos))
    server = members(pids, config.server_session, config.server_cgroup)
    return counters(config, pids, server) | {"flushes": flushed}, server
