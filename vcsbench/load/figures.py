"""A load step's figures, from its sessions' raw records and the counters read around it;
and the capacity, from the steps so far.

Percentiles are over the step's successful sessions (a failed one is counted by kind,
never a fast sample); device bytes and requests are the sandbox's block device over the
step's window (synced at both ends); the server's CPU and writes are what each of its
processes grew by (:func:`vcsbench.measure.processes.grown`).
"""

from __future__ import annotations

from typing import Any

from vcsbench.measure.processes import grown
from vcsbench.results.stats import quantile

LAG_LIMIT_S = 0.020
"""Open loop: a p99 generator lag above this (or a tenth of the arrival interval, if
more) means the load generator, not the server, set the pace."""
PERCENTILES = (50, 90, 95, 99)
LATENCY = {
    "closed": "each session's wall time, from its start to its end, measured by the load "
    "engine around the client's work (raw values kept in 'raw')",
    "open": "from each session's scheduled arrival to its end, the client's own preparation "
    "left out: waiting for a free client counts, so a stalled server shows in the "
    "percentiles (no coordinated omission); raw values kept in 'raw'",
}


def step_figures(
    step: dict[str, Any], samples: list[dict[str, Any]], io_counted: bool = True
) -> dict[str, Any]:
    """One step's figures. ``step``: what the engine answered for it (its ``records``
    verified); ``samples``: the system sampler's, of which those in the step's window
    count; ``io_counted``: the server's processes' own IO can be read (not where
    short-lived processes nobody waits for do the writing, as git http-backend's under
    Apache)."""
    records = step["records"]
    before, after = step["before"], step["after"]
    duration = after["t"] - before["t"]
    n = len(records["step"])
    ok = sorted(records["latency_s"][i] for i in range(n) if records["error"][i] is None)
    errors: dict[str, int] = {}
    for kind in records["error"]:
        if kind is not None:
            errors[kind] = errors.get(kind, 0) + 1
    if before["server_cpu_s"] is not None:
        server_cpu, ended = after["server_cpu_s"] - before["server_cpu_s"], 0
    else:
        server_cpu, ended = grown(before["server_cpu_by_pid"], after["server_cpu_by_pid"])
    written, _ = grown(before["server_write_by_pid"], after["server_write_by_pid"])
    row: dict[str, Any] = {
        "level": step["level"],
        "t0": before["t"],
        "t1": after["t"],
        "retries": sum(records.get("retries") or [0]),
        "duration_s": duration,
        "sessions": n,
        "ok": len(ok),
        "errors": errors,
        "ops_per_s": len(ok) / duration if duration > 0 else None,
        "latency_ms": {
            **{f"p{p}": quantile(ok, p / 100) * 1000 if ok else None for p in PERCENTILES},
            "max": ok[-1] * 1000 if ok else None,
            "mean": sum(ok) / len(ok) * 1000 if ok else None,
        },
        "server_cpu_s": server_cpu,
        "server_processes_ended": ended,
        "client_cpu_s": after["client_cpu_s"] - before["client_cpu_s"],
    }
    if before["device"] is not None and after["device"] is not None:
        delta = [a - b for a, b in zip(after["device"], before["device"], strict=True)]
        per = len(ok) or 1
        row["device"] = {
            "read_bytes": delta[0],
            "write_bytes": delta[1],
            "server_process_write_bytes": int(written) if io_counted else None,
            # What the device wrote that no server process wrote: the journal,
            # metadata, and writeback the processes were not charged with.
            "unattributed_share": max(0.0, 1 - written / delta[1])
            if delta[1] and io_counted
            else None,
            "read_requests": delta[2],
            "write_requests": delta[3],
            "write_bytes_per_session": delta[1] / per,
            "write_requests_per_session": delta[3] / per,
        }
    if "arrivals" in step:  # open loop: how late the generator sent each arrival
        lags = sorted(step["generator_lag_s"])
        limit = max(LAG_LIMIT_S, 0.1 / step["level"])
        p99 = quantile(lags, 0.99) if lags else 0.0
        row["offered_per_s"] = step["arrivals"] / (duration or 1)
        row["generator"] = {
            "arrivals": step["arrivals"],
            "lag_ms_p50": quantile(lags, 0.5) * 1000 if lags else None,
            "lag_ms_p99": p99 * 1000,
            "lag_ms_max": lags[-1] * 1000 if lags else None,
            "limit_ms": limit * 1000,
            "behind": p99 > limit,
        }
    window = [s for s in samples if before["t"] <= s["t_s"] <= after["t"]]
    row["system"] = _system(window)
    return row


def _system(window: list[dict[str, Any]]) -> dict[str, Any]:
    def mean(key: str) -> float | None:
        values = [s[key] for s in window if s.get(key) is not None]
        return sum(values) / len(values) if values else None

    def peak(key: str) -> float | None:
        values = [s[key] for s in window if s.get(key) is not None]
        return max(values) if values else None

    return {
        "samples": len(window),
        "iowait_pct_mean": mean("cpu_iowait_pct"),
        "device_busy_pct_mean": mean("device_busy_pct"),
        "dirty_bytes_max": peak("dirty_bytes"),
        "writeback_bytes_max": peak("writeback_bytes"),
    }


def capacity(figures: list[dict[str, Any]], factor: float) -> dict[str, Any]:
    """The highest level (clients, or arrivals per second) whose step kept p95 within
    ``factor`` x the first step's p95 with no error, counting up from the first step."""
    if not figures or figures[0]["latency_ms"]["p95"] is None:
        return {"level": None, "reason": "the first step has no successful session"}
    base = figures[0]["latency_ms"]["p95"]
    best = None
    for row in figures:
        p95 = row["latency_ms"]["p95"]
        if row["errors"] or p95 is None or p95 > factor * base:
            break
        if row.get("generator", {}).get("behind"):  # a late generator offered less load
            break
        best = row
    rule = (
        f"the highest step whose p95 stayed within {factor:g}x the first step's "
        f"({base:.1f} ms) with no error, counting up from the first step"
    )
    if any("generator" in row for row in figures):
        rule += ", stopping at a step whose load generator fell behind its schedule"
    if best is None:
        return {"level": None, "rule": rule, "reason": "the first step had errors"}
    return {
        "level": best["level"],
        "ops_per_s": best["ops_per_s"],
        "p95_ms": best["latency_ms"]["p95"],
        "rule": rule,
    }
