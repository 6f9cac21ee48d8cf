"""The figures that drift between runs -- one table that the judgement and the store share:
which a calibration measures, which a time comparison may use, which are compared with
the runs as the unit, and when a run's machine counts as busy."""

from __future__ import annotations

FIGURES = (
    "time", "cpu", "time_per_canary", "time_per_writes", "canary", "writes",
    "instructions", "instructions_rounds",
)  # fmt: skip
"""The figures whose spread is measured: they drift; bytes, footprint and counts do not.
``time_per_canary``: the run's rounds over its canary, each round over the canary timed
right after it (:meth:`vcsbench.results.canary.Canary.per_round`); ``time_per_writes``:
over the canary's writes alone (up to its fsync); ``canary``, ``writes``: the canary's
own medians, whole and its writes; ``instructions``: the median of the run's counted
rounds (``doctor --spread --counted N``), and ``instructions_rounds`` how far its counted
rounds range, over that median: a count's spread between runs and between rounds,
measured, not assumed. (A calibration's ``time_canary`` and ``time_writes``,
from before the rounds were paired with their canaries, were the medians' ratios: they
are not read.)"""
COUNT_FIGURES = ("instructions", "instructions_rounds")
"""The counted rounds' figures a calibration keeps (:func:`run_figures.run_figure`)."""
TIME_FIGURES = ("time", "time_per_canary", "time_per_writes")
"""What a time comparison may use, the calibration choosing per cell."""
UNDER = {"time_per_canary": "canary", "time_per_writes": "canary's writes"}
"""What each time figure other than the median alone is over, for a person."""
LOAD_PER_CPU = 1.0
"""Results sampled before ``others_cpu``: busy with more runnable tasks than CPUs."""
OTHERS_CPU = 0.2
"""Busy: processes other than the run's used more than this many CPUs on average (an idle
machine here: 0.00-0.02)."""
DRIFTING = ("time", "cpu")
"""Figures compared with the runs as the unit; the others on the rounds."""
