"""Exports for dashboards that keep history across machines.

``bmf``: Bencher Metric Format -- ``{benchmark: {measure: {value, lower_value,
upper_value}}}``. Time goes in Bencher's ``latency`` measure (nanoseconds per operation:
the median, with the first and third quartiles as bounds); every other figure vcsbench
has goes in a measure named after its registry metric (``io-write-device``: bytes per
repository, ``footprint-inodes``: inodes per repository), in the registry's unit. A
benchmark is named ``variant op payload fs``; the machine is Bencher's testbed.

A load run's steps are benchmarks too, named ``load scenario shape path fs level``:
``latency`` is the step's p50 with its p99 as the upper bound (nanoseconds),
``throughput`` its successful sessions per second, ``errors`` its failed sessions.
"""

from __future__ import annotations

from typing import Any

from vcsbench.results.metrics import METRICS
from vcsbench.results.model import Benchmark, Run

EXPORT_FORMATS = ("bmf",)


def bmf_name(bench: Benchmark) -> str:
    partial = " (partial)" if bench.partial else ""
    return f"{bench.case}{partial}"


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


def load_measures(run: Run) -> dict[str, dict[str, dict[str, float]]]:
    out: dict[str, dict[str, dict[str, float]]] = {}
    if run.load is None:
        return out
    for entry in run.load.paths:
        for step in entry.steps:
            name = (
                f"load {run.load.scenario} {run.load.shape} {entry.label} {entry.fs} {step.level:g}"
            )
            measures: dict[str, dict[str, float]] = {"errors": {"value": step.error_count}}
            lat = step.latency_ms
            if lat["p50"] is not None and lat["p99"] is not None:
                measures["latency"] = {"value": lat["p50"] * 1e6, "upper_value": lat["p99"] * 1e6}
            if step.ops_per_s is not None:
                measures["throughput"] = {"value": step.ops_per_s}
            out[name] = measures
    return out


def to_bmf(runs: list[Run]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for run in runs:
        out.update(load_measures(run))
        for bench in run.benchmarks:
            measures = bmf_measures(bench)
            if measures:
                out[bmf_name(bench)] = measures
    return out
