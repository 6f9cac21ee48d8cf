"""The spread between a benchmark's earlier runs on this machine, read from the results
store: what a comparison between runs widens the machine's calibration with.

A calibration (``vcsbench doctor --spread``) is a few runs in a few minutes; on this
project's machine type the same benchmark then moves more over the next half hour than
it did in them (2026-11-27: svn-fs create+commit over its canary's writes ±1.4 % in the
calibration, ±3.6 % between the 40 A/A runs that followed). Every run goes into the
store, so the store holds what the machine did over hours: the runs of the same
benchmark, on the same machine, with the same versions, before the ones compared. Their
spread, read from neighbouring runs (:func:`tail_spread`: a slow trend moves it little, a
real change between two of them is one difference of many), is used where it is wider
than the calibration's.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

from vcsbench.results.drifting import FIGURES
from vcsbench.results.model import Benchmark, Run
from vcsbench.results.spread import SEEN_LEAST, SEEN_RUNS, Seen
from vcsbench.store.points import machine_key, series_of, versions_of
from vcsbench.store.rows import Point
from vcsbench.store.store import Store

Seen_in = Callable[[Benchmark, list[Run]], dict[str, Seen]]


def value(point: Point, figure: str) -> float | None:
    """A stored run's value of a drifting figure (``spread.FIGURES``)."""
    if figure in ("canary", "writes"):
        return point.canary_ms if figure == "canary" else point.canary_writes_ms
    if figure == "cpu":
        return point.cpu_ms
    return point.figure(figure)


def tail_spread(logs: list[float]) -> float | None:
    """The run-to-run spread of a series (logarithms, oldest first) from its neighbouring
    runs: the root mean square of their differences over sqrt(2). Unlike their median it
    keeps what the tails of the machine's drift weigh, where a verdict's false alarms
    are; a slow trend moves it little, and a real change between two of 30 runs (10 %)
    widens a 3 % spread to 3.3 %."""
    diffs = [b - a for a, b in itertools.pairwise(logs)]
    if len(diffs) < 3:
        return None
    return math.sqrt(sum(d * d for d in diffs) / len(diffs) / 2) or None


def spreads(points: list[Point]) -> dict[str, Seen]:
    """Each figure's spread over ``points`` (oldest first), where every one has it and
    there are ``SEEN_LEAST`` or more."""
    found: dict[str, Seen] = {}
    if len(points) < SEEN_LEAST:
        return found
    for figure in FIGURES:
        values = [value(p, figure) for p in points]
        if any(v is None or v <= 0 for v in values):
            continue
        sd = tail_spread([math.log(v) for v in values if v is not None])
        if sd is not None:
            found[figure] = Seen(sd, len(points), points[0].started)
    return found


def seen_in(store: Store) -> Seen_in:
    """For a benchmark of the given runs: the spread of its earlier runs in ``store``
    (started before the oldest of them, on the machine of the run holding it, with its
    versions, not busy, every round ok; the last ``SEEN_RUNS``)."""

    def seen(bench: Benchmark, runs: list[Run]) -> dict[str, Seen]:
        holder = next((r for r in runs if any(b is bench for b in r.benchmarks)), None)
        oldest = min((r.datetime for r in runs if r.datetime), default="")
        if holder is None or not oldest:
            return {}
        series = series_of(machine_key(holder)[0], bench)
        return spreads(store.earlier(series, oldest, versions_of(bench), SEEN_RUNS))

    return seen
