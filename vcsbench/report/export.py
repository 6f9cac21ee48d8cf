"""Exports for dashboards that keep history across machines.

``bmf``: Bencher Metric Format -- ``{benchmark: {measure: {value, lower_value,
upper_value}}}``. Time goes in Bencher's ``latency`` measure (nanoseconds per operation:
the median, with the first and third quartiles as bounds); every other figure vcsbench
has goes in a measure named after its registry metric (``io-write-device``: bytes per
repository, ``footprint-inodes``: inodes per repository), in the registry's unit. A
benchmark is named ``variant op payload fs``; the machine is Bencher's testbed.
"""

from __future__ import annotations

from typing import Any

from vcsbench.results.metrics import METRICS
from vcsbench.results.model import Benchmark, Run

EXPORT_FORMATS = ("bmf",)


def bmf_name(bench: Benchmark) -> str:
    partial = " (partial)" if bench.partial else ""
    return f"{bench.label} {bench.op} {bench.payload.name} {bench.fs}{partial}"


def bmf_measures(bench: Benchmark) -> dict[str, dict[str, float]]:
    measures: dict[str, dict[str, float]] = {}
    median = bench.median_ms
    q1, q3 = bench.quantile_ms(0.25), bench.quantile_ms(0.75)
    if median is not None and q1 is not None and q3 is not None:
        measures["latency"] = {
            "value": median * 1e6,
            "lower_value": q1 * 1e6,
            "upper_value": q3 * 1e6,
        }
    for name, metric in bench.metrics.items():
        if name == "wall" or metric.per_repo is None or not METRICS[name].per_repo:
            continue
        measures[name.replace("_", "-")] = {"value": float(metric.per_repo)}
    return measures


def to_bmf(runs: list[Run]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for run in runs:
        for bench in run.benchmarks:
            measures = bmf_measures(bench)
            if measures:
                out[bmf_name(bench)] = measures
    return out
