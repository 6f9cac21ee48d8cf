"""The table ``vcsbench run`` prints when it ends: a row per benchmark with the figures a
person looks at first, and the run's warnings."""

from __future__ import annotations

from vcsbench.report.format import counted, fmt_metric, fmt_ms, fmt_ratio
from vcsbench.report.format import table as text_table
from vcsbench.report.tables import spread_text
from vcsbench.results.metrics import DURABILITY_METRICS, KEPT_FOOTPRINT
from vcsbench.results.model import Run

SHORT = {"sync_calls": "fsync calls/repo", "io_flush_requests_device": "flushes/repo"}
"""The durability columns' headers, short: the report's tables name them in full."""


def summary(files: list[Run]) -> str:
    """A compact plain-text table of every benchmark, for the end of a run."""
    lines = []
    benches = sorted((b for f in files for b in f.benchmarks), key=lambda b: b.key)
    durability = counted(benches, DURABILITY_METRICS)  # columns only where counted
    kept = counted(benches, (KEPT_FOOTPRINT,))
    device = counted(benches, ("io_write_device",))  # none on tmpfs: no column of n/a
    for bench in benches:
        median = bench.median_ms
        lines.append(
            [
                bench.label,
                bench.op,
                bench.payload.shown,
                bench.fs,
                bench.repos_text,
                fmt_ms(median),
                spread_text(bench),
                f"{1000 / median:,.0f}" if median else "—",
                *(fmt_metric(m, bench.per_repo(m)) for m in device),
                fmt_metric("footprint_allocated", bench.per_repo("footprint_allocated")),
                *(fmt_metric(m, bench.per_repo(m)) for m in kept + durability),
                fmt_ratio(bench.floor_ratio),
                bench.errors,
            ]
        )
    return text_table(
        [
            "backend",
            "op",
            "payload",
            "fs",
            "repos",
            "median ms",
            "IQR",
            "ops/s",
            *(["device KiB/repo"] if device else []),
            "allocated KiB/repo",
            *(["kept KiB/repo"] if kept else []),
            *(SHORT[m] for m in durability),
            "x floor",
            "errors",
        ],
        lines,
        "simple",
    )
