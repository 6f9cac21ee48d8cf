"""The figures themselves as CSV, for spreadsheets: a row per benchmark, or per load step;
plain numbers, units in the header."""

from __future__ import annotations

import csv
import io

from vcsbench.report.load import load_of
from vcsbench.results.metrics import METRICS
from vcsbench.results.model import Benchmark, Run

CSV_METRICS = tuple(name for name in METRICS if name != "wall")


def benchmarks(grouped: dict[tuple[str, str, str], list[Benchmark]]) -> str:
    """Every benchmark as a row of plain numbers, units in the header, for spreadsheets."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    header = [
        "op",
        "payload",
        "fs",
        "backend",
        "variant",
        "machine",
        "file",
        "repos",
        "rounds_asked",
        "errors",
        "median_ms",
        "iqr_ms",
        "p95_ms",
        "p99_ms",
        "mean_ms",
        "floor_ratio",
    ]
    header += [f"{name}_per_repo ({METRICS[name].unit})" for name in CSV_METRICS]
    writer.writerow(header)

    def number(value: float | None) -> str:
        return "" if value is None else repr(float(value))

    for (op, _, fs), rows in grouped.items():
        for bench in rows:
            total = bench.total_ms
            mean = total / len(bench.samples_s) if total is not None else None
            writer.writerow(
                [
                    op,
                    bench.payload.shown,
                    fs,
                    bench.backend.name,
                    bench.label,
                    bench.machine,
                    bench.source,
                    bench.repos,
                    max(bench.rounds_asked, bench.repos),
                    bench.errors,
                    number(bench.median_ms),
                    number(bench.iqr_ms),
                    number(bench.quantile_ms(0.95)),
                    number(bench.quantile_ms(0.99)),
                    number(mean),
                    number(bench.floor_ratio),
                    *(number(bench.per_repo(name)) for name in CSV_METRICS),
                ]
            )
    return buffer.getvalue()


def loads(runs: list[Run]) -> str:
    """Every step of every access path as a row of plain numbers, for spreadsheets."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(
        [
            "file", "scenario", "shape", "path", "fs", "level", "sessions", "ok", "ok_per_s",
            "p50_ms", "p90_ms", "p95_ms", "p99_ms", "max_ms", "errors", "retries",
            "device_write_bytes_per_session", "server_cpu_ms_per_session", "iowait_pct",
            "offered_per_s", "generator_lag_p99_ms", "capacity",
            "device_write_bytes_per_s", "device_write_requests_per_s",
        ]
    )  # fmt: skip
    for run in runs:
        load = load_of(run)
        for entry in load.paths:
            for row in entry.steps:
                lat = row.latency_ms
                device = row.device
                writer.writerow(
                    [
                        run.name, load.scenario, load.shape, entry.label, entry.fs,
                        f"{row.level:g}", row.sessions, row.ok, row.ops_per_s,
                        *(lat[k] for k in ("p50", "p90", "p95", "p99", "max")),
                        row.error_count, row.retries,
                        device.write_bytes_per_session if device else None,
                        row.server_cpu_s * 1000 / (row.ok or 1),
                        row.system.get("iowait_pct_mean"), row.offered_per_s,
                        row.generator.lag_ms_p99 if row.generator else None,
                        "yes" if row.level == entry.capacity.level else "",
                        device.write_bytes / row.duration_s if device and row.duration_s else None,
                        device.write_requests / row.duration_s
                        if device and row.duration_s else None,
                    ]
                )  # fmt: skip
    return buffer.getvalue()
