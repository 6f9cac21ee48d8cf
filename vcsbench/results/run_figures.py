"""A run's one value for a figure that drifts, and which of them a time comparison
between runs uses: the median alone, or over the canary beside the run's rounds (or the
canary's writes), whichever this machine's calibration found steadiest
(:mod:`vcsbench.results.canary`); and whether the machine itself moved between runs."""

from __future__ import annotations

from vcsbench.results.model import Benchmark
from vcsbench.results.spread import SpreadCell
from vcsbench.results.verdict import between


def over(
    median: float | None, canary: float | None, writes: float | None, name: str
) -> float | None:
    """A time figure (``spread.TIME_FIGURES``) from a run's median and its canary's
    medians, whole and its writes (None where one it needs is missing)."""
    under = {"time": 1.0, "time_canary": canary, "time_writes": writes}.get(name)
    return median / under if median is not None and under else None


def run_figure(bench: Benchmark, name: str) -> float | None:
    """A run's one value for a drifting figure (``spread.FIGURES``): its median time
    (ms), its CPU per repository, that median over its canary's, the canary's median."""
    canary = bench.canary
    if name == "canary":
        return None if canary is None else canary.ms
    if name in ("time_canary", "time_writes"):
        if canary is None:
            return None
        return over(bench.median_ms, canary.ms, canary.writes_ms, name)
    return bench.median_ms if name == "time" else bench.per_repo(name)


def time_figure(cell: SpreadCell | None, benches: list[Benchmark]) -> str:
    """The figure a time comparison uses: over each run's canary (or its writes) where
    every run has it and this machine's calibration found it moves least between runs;
    else the median itself ("")."""
    if cell is None or (chosen := cell.time_figure()) == "time":
        return ""
    return chosen if all(run_figure(b, chosen) for b in benches) else ""


def machine_moved(cell: SpreadCell | None, base: list[Benchmark], other: list[Benchmark]) -> str:
    """Why a time or CPU verdict on the runs' own figures is withheld because the
    machine moved between them (their canaries differ beyond the canary's calibrated
    spread), or ""."""
    if cell is None or cell.sd_log("canary") is None:
        return ""
    moved = between(
        "canary",
        [run_figure(b, "canary") for b in base],
        [run_figure(b, "canary") for b in other],
        cell,
    )
    if not moved.significant or moved.ratio is None:
        return ""
    return f"no verdict: the machine moved between the runs (its canary {moved.ratio:.2f}x)"
