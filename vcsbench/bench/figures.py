"""A benchmark's figures: what one round cost (:func:`round_values`), and every registry
metric of the benchmark from its rounds and its scans (:func:`benchmark_metrics`)."""

from __future__ import annotations

from vcsbench.bench.log import FOOTPRINT_METRICS, SCRATCH_METRICS, SUMMED, RoundLog
from vcsbench.bench.maintained import AsKept
from vcsbench.measure.footprint import Footprint
from vcsbench.measure.probes import Delta
from vcsbench.results.metrics import CALL_METRICS, METRICS
from vcsbench.results.rounds import Metric
from vcsbench.sandbox import SandboxInfo


def round_values(delta: Delta) -> dict[str, float | None]:
    """What one round cost, by registry metric name (device ones None without a device)."""
    process, device = delta.process, delta.device
    values: dict[str, float | None] = {
        "cpu": process.cpu_user_s + process.cpu_sys_s,
        "cpu_user": process.cpu_user_s,
        "cpu_sys": process.cpu_sys_s,
        "io_read_logical": process.read_bytes,
        "io_write_logical": process.write_bytes,
        "io_read_syscall": process.rchar,
        "io_write_syscall": process.wchar,
        "io_read_device": device.read_bytes if device else None,
        "io_write_device": device.write_bytes if device else None,
        "io_read_requests_device": device.read_requests if device else None,
        "io_write_requests_device": device.write_requests if device else None,
        "io_flush_requests_device": delta.flushes,
        "fs_used_delta": delta.fs.used_bytes,
        "fs_inodes_delta": delta.fs.used_inodes,
    }
    for name in CALL_METRICS:
        values[name] = delta.calls.get(name) if delta.calls is not None else None
    return values


UNCOUNTED = {
    **dict.fromkeys(
        CALL_METRICS,
        "not counted: system calls are counted on a filesystem with a block device of its "
        "own (ext4, xfs, btrfs), as root, by the kernel's syscall tracepoints",
    ),
    "io_flush_requests_device": "not counted: this kernel's block device statistics have "
    "no flush field",
}
"""Figures a round may not have been able to count, and why."""


def _counted(log: RoundLog, name: str) -> bool:
    """Whether some successful round counted ``name`` (an uncounted round keeps NaN)."""
    return any(ok and value == value for ok, value in zip(log.ok, log.values[name], strict=True))


def benchmark_metrics(
    log: RoundLog,
    info: SandboxInfo,
    result: Footprint | str,
    scratch: Footprint | str,
    rss_peak: int,
    rss_growth: int,
    kept: AsKept | str = "not kept",
    sync_reason: str = "",
) -> dict[str, Metric]:
    """Every registry metric of a benchmark, from its rounds' log, its footprint and
    scratch scans (or why each failed) and its memory; a figure that cannot be had
    (no device, no storage, every round failed) says why; ``sync_reason``: why the
    fsync-family counter counted nothing beside a device, as it found it."""
    ok = log.ok_count
    storage = info.fstype != "tmpfs"
    no_storage = f"{info.fstype} has no backing store: the kernel accounts no storage IO"
    no_device = info.device_note or "no block device under this filesystem"
    out: dict[str, Metric] = {}

    def put(name: str, total: float | None, reason: str = "") -> None:
        d = METRICS[name]
        if total is None:
            out[name] = Metric(d.unit, None, None, reason)
            return
        per_repo = total / ok if ok and d.per_repo else None
        out[name] = Metric(d.unit, total, per_repo, "" if d.per_repo else reason)

    if not ok:
        for name in METRICS:
            out[name] = Metric.missing(name, "every round failed")
        return out
    put("wall", sum(log.ok_wall_s()))
    for name in SUMMED:
        total: float | None = log.totals[name]
        reason = ""
        if name in ("io_read_logical", "io_write_logical") and not storage:
            total, reason = None, no_storage
        elif name.endswith("_device") and info.device_stat_path is None:
            total, reason = None, no_device
        elif name in UNCOUNTED and not _counted(log, name):
            found = sync_reason if name in CALL_METRICS and info.device_stat_path else ""
            total, reason = None, f"not counted: {found}" if found else UNCOUNTED[name]
        put(name, total, reason)
    for name, attribute in FOOTPRINT_METRICS.items():
        if isinstance(result, str):
            put(name, None, result)
        else:
            put(name, getattr(result, attribute))
    if isinstance(result, str):
        put("footprint_change", None, result)
    else:
        put("footprint_change", result.allocated_bytes - log.held_bytes)
    for name, attribute in SCRATCH_METRICS.items():
        if isinstance(scratch, str):
            put(name, None, scratch)
        else:
            put(name, getattr(scratch, attribute))
    put("rss_peak", rss_peak, "a peak is not divided by repositories; see rss_growth")
    put("rss_growth", rss_growth)
    out.update(kept_metrics(kept))
    return out


KEPT_METRICS = {
    "footprint_kept_allocated": "allocated_bytes",
    "footprint_kept_content": "content_bytes",
    "footprint_kept_inodes": "inodes",
}


def kept_metrics(kept: AsKept | str) -> dict[str, Metric]:
    """The footprint as kept, per repository of those kept; a total only where every
    repository that succeeded was kept (a sample's total would be of the sample)."""
    out = {}
    for name, attribute in KEPT_METRICS.items():
        unit = METRICS[name].unit
        if isinstance(kept, str):
            out[name] = Metric(unit, None, None, kept)
            continue
        value = getattr(kept.kept, attribute)
        whole = kept.repositories == kept.of
        out[name] = Metric(
            unit,
            value if whole else None,
            value / kept.repositories,
            ""
            if whole
            else f"kept {kept.repositories:,} of {kept.of:,} repositories: per repository of those",
        )
    return out
