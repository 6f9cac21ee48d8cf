"""Stability advice, as pyperf and hyperfine give it: say once when the numbers may not
be steady, and what to do about it.

Two kinds of evidence, both read from results: the rounds themselves (a wide spread, or
many outliers) and the system sampler (a busy machine: load above the CPU count, CPU
steal by the hypervisor, iowait while a benchmark without a device ran).
"""

from __future__ import annotations

from typing import Any

from vcsbench.results.metrics import PERTURBATION_GOAL
from vcsbench.results.model import Benchmark
from vcsbench.results.run_figures import busy, mean_sample

WIDE_IQR = 0.10
"""Interquartile range over this share of the median: the rounds are noisy."""
OUTLIER_SHARE = 0.05
"""More than this share of rounds beyond 3 IQR of the quartiles."""
STEAL_PCT = 5.0


def _outlier_share(bench: Benchmark) -> float:
    samples = sorted(bench.samples_s)
    if len(samples) < 20:
        return 0.0
    q1 = samples[len(samples) // 4]
    q3 = samples[(3 * len(samples)) // 4]
    fence = q3 + 3 * (q3 - q1)
    return sum(1 for s in samples if s > fence) / len(samples)


def warnings(benches: list[Benchmark], cpu_count: int = 0) -> list[str]:
    """One line per kind of instability found, naming the benchmarks and what to do."""
    lines: list[str] = []
    noisy = []
    for bench in benches:
        median, iqr = bench.median_ms, bench.iqr_ms
        if median and iqr is not None and iqr > WIDE_IQR * median:
            noisy.append(bench.case)
        elif _outlier_share(bench) > OUTLIER_SHARE:
            noisy.append(f"{bench.case} (outliers)")
    if noisy:
        shown = ", ".join(noisy[:3]) + (f" and {len(noisy) - 3} more" if len(noisy) > 3 else "")
        lines.append(
            f"unsteady rounds: {shown} spread more than {WIDE_IQR:.0%} of the median (or have "
            "many outliers); compare them by their distributions, not only medians, and "
            "rerun with more --repos on an idle machine (no other jobs, a fixed CPU "
            "frequency) before drawing a conclusion"
        )
    steal = [b for b in benches if mean_sample(b, "cpu_steal_pct") > STEAL_PCT]
    load = [b for b in benches if busy(b, cpu_count)]
    if steal:
        lines.append(
            f"the hypervisor took CPU time (steal over {STEAL_PCT:.0f}%) during {len(steal)} "
            "benchmark(s): another guest was busy; their times include waiting for it, so "
            "rerun them when the host is quieter"
        )
    moved: dict[str, tuple[Benchmark, dict[str, Any]]] = {}
    for bench in benches:  # a check made once per backend is in each of its benchmarks
        found = bench.harness.perturbation
        if (
            isinstance(found, dict)
            and isinstance(found.get("ratio"), int | float)
            and found["ratio"] > PERTURBATION_GOAL
        ):
            moved.setdefault(str(found.get("label", bench.label)), (bench, found))
    if moved:
        shown = ", ".join(f"{b.case} ({p['ratio']:.2f}x)" for b, p in list(moved.values())[:3]) + (
            f" and {len(moved) - 3} more" if len(moved) > 3 else ""
        )
        lines.append(
            f"the harness moved the timing beyond {PERTURBATION_GOAL:g}x a bare loop of the "
            f"same calls: {shown}; differences smaller than that between rows are not the "
            "backends' (see doctor --calibrate)"
        )
    if load:
        lines.append(
            f"the machine was busy during {len(load)} benchmark(s) ({busy(load[0], cpu_count)}"
            f"{' in the first' if len(load) > 1 else ''}): other processes competed for the "
            "CPUs; rerun on an idle machine"
        )
    return lines
