"""A run's one value for each figure that drifts (``drifting.FIGURES``), and whether its
machine was busy: what the judgement and the store both read of a run."""

from __future__ import annotations

import itertools
import statistics
from typing import Any

from vcsbench.results.drifting import LOAD_PER_CPU, OTHERS_CPU
from vcsbench.results.model import Benchmark


def run_figure(bench: Benchmark, name: str) -> float | None:
    """A run's one value for a drifting figure (``drifting.FIGURES``): its median time
    (ms), its CPU per repository, its rounds over their canary (or its writes), the
    canary's medians; the counted rounds' instructions and how far they range."""
    if name in ("instructions", "instructions_rounds"):
        counted = bench.counted
        if counted is None:
            return None
        return counted.figure(name) if name == "instructions" else counted.spread("instructions")
    canary = bench.canary
    if name in ("canary", "writes"):
        return None if canary is None else canary.ms if name == "canary" else canary.writes_ms
    if name in ("time_per_canary", "time_per_writes"):
        if canary is None:
            return None
        return canary.per_round(bench.rounds, writes=name == "time_per_writes")
    return bench.median_ms if name == "time" else bench.per_repo(name)


def mean_sample(bench: Benchmark, key: str) -> float:
    samples = bench.sampler.get("samples") or []
    values = [s.get(key) or 0.0 for s in samples if isinstance(s, dict)]
    return statistics.mean(values) if values else 0.0


def runnable(bench: Benchmark) -> float:
    """Tasks runnable over the benchmark, on average (its own among them); results
    written before that was sampled: the 1-minute load average."""
    samples = [s for s in bench.sampler.get("samples") or [] if isinstance(s, dict)]
    sampled = bool(samples) and all(isinstance(s.get("runnable"), int) for s in samples)
    return mean_sample(bench, "runnable" if sampled else "loadavg_1m")


def over_time(samples: list[dict[str, Any]], key: str, interval_s: object) -> float:
    """A sampled share's mean over the time the samples cover: each sample covers the
    time since the one before, the first one interval (the sampler's first wait), so a
    last sample of a few milliseconds (the sampler stopped just after one) weighs as
    little as it covers; without times, each sample alike."""
    values = [float(s.get(key) or 0.0) for s in samples]
    first = interval_s if isinstance(interval_s, int | float) and interval_s > 0 else None
    if first is None or not all(isinstance(s.get("t_s"), int | float) for s in samples):
        return statistics.mean(values) if values else 0.0
    times = [float(s["t_s"]) for s in samples]
    spans = [float(first)] + [max(0.0, b - a) for a, b in itertools.pairwise(times)]
    total = sum(spans)
    return sum(v * w for v, w in zip(values, spans, strict=True)) / total if total else 0.0


def busy(bench: Benchmark, cpu_count: int) -> str:
    """What made the machine busy during the benchmark, or "" if it was not: other
    processes' CPU time where it was sampled (on average over the time sampled), else
    more tasks runnable than CPUs."""
    samples = [s for s in bench.sampler.get("samples") or [] if isinstance(s, dict)]
    if samples and all(isinstance(s.get("others_cpu"), int | float) for s in samples):
        others = over_time(samples, "others_cpu", bench.sampler.get("interval_s"))
        if others <= OTHERS_CPU:
            return ""
        return f"other processes used {others:.2f} CPUs on average"
    load = runnable(bench)
    if not cpu_count or load <= LOAD_PER_CPU * cpu_count:
        return ""
    return f"{load:.1f} tasks runnable on {cpu_count} CPUs"
