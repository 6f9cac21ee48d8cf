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


def least_sample(p: int) -> int:
    """The fewest successful sessions a step's p-th percentile is read from: enough that
    at least one lies above it (1 / (1 - p/100): 2 for p50, 20 for p95, 100 for p99).
    From fewer, "p99" is the slowest session by another name; it is not given, and no
    capacity verdict rests on a p95 that is not."""
    return round(100 / (100 - p))


def latency_ms(ok: list[float]) -> dict[str, float | None]:
    """The percentiles (each where the sample holds it, :func:`least_sample`), max and
    mean of sorted successful latencies (s), in ms."""
    return {
        **{
            f"p{p}": quantile(ok, p / 100) * 1000 if len(ok) >= least_sample(p) else None
            for p in PERCENTILES
        },
        "max": ok[-1] * 1000 if ok else None,
        "mean": sum(ok) / len(ok) * 1000 if ok else None,
    }


def _outcomes(
    records: dict[str, list[Any]], sessions: range | list[int]
) -> tuple[list[float], dict[str, int]]:
    """Of these sessions: the successful ones' latencies (s), sorted, and the failed ones
    counted by error kind."""
    ok = sorted(records["latency_s"][i] for i in sessions if records["error"][i] is None)
    errors: dict[str, int] = {}
    for i in sessions:
        kind = records["error"][i]
        if kind is not None:
            errors[kind] = errors.get(kind, 0) + 1
    return ok, errors


def _kind_figures(records: dict[str, list[Any]], kind: str) -> dict[str, Any]:
    """One kind's sessions of a mixed step: how many, how many failed by error, and the
    latency percentiles of its successful ones."""
    mine = [i for i, k in enumerate(records["kind"]) if k == kind]
    ok, errors = _outcomes(records, mine)
    return {"sessions": len(mine), "ok": len(ok), "errors": errors, "latency_ms": latency_ms(ok)}


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
    ok, errors = _outcomes(records, range(n))
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
        "latency_ms": latency_ms(ok),
        "server_cpu_s": server_cpu,
        "server_processes_ended": ended,
        "client_cpu_s": after["client_cpu_s"] - before["client_cpu_s"],
    }
    kinds = records.get("kind") or []
    if len(set(kinds)) > 1:  # a mixed scenario: each kind's own figures beside the whole's
        row["kinds"] = {kind: _kind_figures(records, kind) for kind in dict.fromkeys(kinds)}
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
        if before.get("flushes") is not None and after.get("flushes") is not None:
            # read after the step's first syncfs and before its last: the harness's own
            # flushes are not the step's
            flushes = after["flushes"] - before["flushes"]
            row["device"] |= {
                "flush_requests": flushes,
                "flush_requests_per_session": flushes / per,
            }
        if before.get("throttle_ios") and after.get("throttle_ios"):
            # under a storage profile: the IOs its limits counted, before merging
            (read0, write0), (read1, write1) = before["throttle_ios"], after["throttle_ios"]
            reads, writes = read1 - read0, write1 - write0
            row["device"] |= {"throttle_read_ios": reads, "throttle_write_ios": writes}
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
    if step.get("writers") is not None:
        row["writers"] = step["writers"]
    window = [s for s in samples if before["t"] <= s["t_s"] <= after["t"]]
    row["system"] = _system(window)
    if before.get("io_pressure") and after.get("io_pressure") and duration > 0:
        # the share of the step's wall time some task (full: every task) stalled on IO
        (some0, full0), (some1, full1) = before["io_pressure"], after["io_pressure"]
        some, full = some1 - some0, full1 - full0
        row["system"] |= {
            "io_pressure_some_pct": 100 * some / (duration * 1e6),
            "io_pressure_full_pct": 100 * full / (duration * 1e6),
        }
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


RISE = 0.05
"""A step past the first counts toward the capacity only if its successful sessions per
second rose by more than this share over the step before: more clients that bring no
more throughput are queueing, not capacity."""


def capacity_rule(factor: float, base_ms: float | None = None, generator: bool = False) -> str:
    """The capacity rule in words, with the path's lowest p95 where it is known."""
    lowest = "the lowest step p95" + (f" ({base_ms:,.1f} ms)" if base_ms is not None else "")
    return (
        f"the highest step whose p95 stayed within {factor:g}x {lowest}, among the steps "
        f"counting up from the first while ok/s rose more than {RISE:.0%} a step with no "
        "error" + (" and the load generator on its schedule" if generator else "")
    )


def _level(row: dict[str, Any]) -> str:
    if "generator" in row:
        return f"{row['level']:g} arrivals/s"
    return f"{row['level']:g} client" + ("" if row["level"] == 1 else "s")


def _too_few(row: dict[str, Any]) -> str:
    return (
        f"{row['ok']} successful sessions at {_level(row)}, fewer than the "
        f"{least_sample(95)} a p95 is read from: longer steps (--step-seconds) give more"
    )


def capacity(figures: list[dict[str, Any]], factor: float) -> dict[str, Any]:
    """The highest level (clients, or arrivals per second) whose p95 stayed within
    ``factor`` x the lowest p95 of any step without errors, among the steps counting up
    from the first while successful sessions per second rose by more than ``RISE`` a
    step, with no error (and, open loop, a generator on its schedule). Throughput and
    latency together: more clients that bring no more throughput are queueing. The
    lowest p95, not the first step's: a first step may be mostly repository creation.
    The same rule for closed and open loops; ``stopped`` says what ended the steps
    counted (empty: the last step was still rising)."""
    if not figures or not figures[0]["ok"]:
        return {"level": None, "reason": "the first step has no successful session"}
    if figures[0]["latency_ms"]["p95"] is None:
        return {"level": None, "reason": _too_few(figures[0])}
    clean = [
        r["latency_ms"]["p95"]
        for r in figures
        if not r["errors"] and r["latency_ms"]["p95"] is not None
    ]
    base = min(clean) if clean else figures[0]["latency_ms"]["p95"]
    rule = capacity_rule(factor, base, any("generator" in row for row in figures))
    counted: list[dict[str, Any]] = []
    stopped = ""
    for row in figures:
        if row["errors"] or not row["ok"]:
            stopped = f"errors at {_level(row)}"
        elif row["latency_ms"]["p95"] is None:
            stopped = _too_few(row)
        elif row.get("generator", {}).get("behind"):  # a late generator offered less load
            stopped = f"the load generator falling behind at {_level(row)}"
        elif counted and row["ops_per_s"] <= counted[-1]["ops_per_s"] * (1 + RISE):
            stopped = (
                f"ok/s {row['ops_per_s']:,.1f} at {_level(row)}, not {RISE:.0%} above "
                f"{counted[-1]['ops_per_s']:,.1f} at {_level(counted[-1])}"
            )
        if stopped:
            break
        counted.append(row)
    within = [row for row in counted if row["latency_ms"]["p95"] <= factor * base]
    if counted and counted[-1] not in within:  # the last step counted is past the bound
        last = counted[-1]
        stopped = (
            f"p95 {last['latency_ms']['p95']:,.1f} ms at {_level(last)}, over "
            f"{factor * base:,.1f} ms" + (f"; then {stopped}" if stopped else "")
        )
    if not within:
        reason = "the first step had errors" if not counted else "no step within the bound"
        return {"level": None, "rule": rule, "reason": reason, "stopped": stopped}
    best = within[-1]
    return {
        "level": best["level"],
        "ops_per_s": best["ops_per_s"],
        "p95_ms": best["latency_ms"]["p95"],
        "rule": rule,
        "stopped": stopped,
    }
