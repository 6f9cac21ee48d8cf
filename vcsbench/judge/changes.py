"""Change points in a series: where a benchmark's level on one machine moved, beyond what
the machine's own run-to-run drift moves it.

Two stages. **Where**: PELT (Killick et al. 2012, as ``ruptures`` implements it) on the
logarithms of the runs' figures, a mean-shift cost, the penalty ``PENALTY`` x sd^2 x
log n with sd the machine's measured run-to-run spread for that cell (``vcsbench doctor
--spread``), or, without one, the series' own (the median of the absolute differences of
neighbouring runs, scaled to a standard deviation, which a step moves little). **Whether**:
each candidate is then a comparison between runs as every other (:mod:`vcsbench.judge.verdict`):
the runs between the neighbouring change points before and after, Student's t on their
logarithms pooled with the calibration, a change point kept at p < ``ALPHA`` with its
ratio and interval. PELT finds where; the test, the same everywhere in vcsbench, decides
whether it is a change.

Why PELT from ``ruptures``: it needs numpy and scipy only (already here); Apache Otava's
E-divisive 0.8.0 pins numpy 2.2.0 and pulls BigQuery and Slack clients. PELT is exact for
its penalised cost in linear time, and the penalty is where the machine's spread enters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from vcsbench.judge.verdict import Between, between
from vcsbench.results.spread import SpreadCell, own_spread

PENALTY = 3.0
"""PELT's penalty in units of sd^2 x log n (on synthetic series of 60 runs with 10 % shifts
at a spread of 2.1 %: 2 gave 9.9 % false alerts, 3 gave 1.1 %, both found every shift)."""
MIN_SEGMENT = 2
"""Runs at least between two change points."""


@dataclass(frozen=True)
class ChangePoint:
    index: int
    """The first run at the new level (0-based)."""
    change: Between
    """Runs after against runs before (to the neighbouring change points)."""


def change_points(
    values: list[float], cell: SpreadCell | None, figure: str = "time"
) -> list[ChangePoint]:
    """The change points of a series of runs' figures (oldest first; all positive)."""
    if len(values) < 2 * MIN_SEGMENT or any(v <= 0 for v in values):
        return []
    logs = [math.log(v) for v in values]
    known = cell.sd_log(figure) if cell is not None else None
    sd = max(known or 0.0, own_spread(logs) or 0.0)
    if not sd:
        return []
    import numpy as np
    import ruptures

    penalty = PENALTY * sd**2 * math.log(len(logs))
    signal = np.array(logs).reshape(-1, 1)
    # PELT for the mean-shift (l2) cost, as ruptures' C code does it: KernelCPD with the
    # linear kernel is that cost (ruptures.Pelt(model="l2") gives the same change points,
    # in Python: 2.45 s for 1,000 runs against 1.5 ms).
    detector = ruptures.KernelCPD(kernel="linear", min_size=MIN_SEGMENT)
    ends = [int(end) for end in detector.fit(signal).predict(pen=penalty)]
    starts = [0, *ends[:-1]]
    found = []
    for i in range(1, len(starts)):
        before = values[starts[i - 1] : starts[i]]
        after = values[starts[i] : ends[i]]
        change = between(
            "time", list(before), list(after), cell, figure=figure if figure != "time" else ""
        )
        if change.significant:
            found.append(ChangePoint(starts[i], change))
    return found
