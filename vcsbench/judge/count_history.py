"""Where a series' counts changed: a count per operation from one run to the next, judged
as compare judges counts at one run a side (:mod:`vcsbench.judge.count_changes`) --
counts do not drift with the machine, so each run is judged, busy or not.

A point keeps each count's median and how far its rounds ranged (0: the same in every
round). An exact count on both runs that differs is a step; a steady one (ranging under
``STEADY``) is a step beyond ``FLOOR``; one that moves more is not judged. A change point
of time at a run where no count stepped, on a series that counts, is the machine's or
the kernel's: the code asked the kernel for the same, and executed the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from vcsbench.judge.count_changes import FLOOR, STEADY
from vcsbench.results.counted import COUNTED


class Point(Protocol):
    """A run of a series, as the store keeps it (:class:`vcsbench.store.rows.Point`)."""

    def count_figures(self) -> dict[str, tuple[float, float]]: ...


@dataclass(frozen=True)
class CountStep:
    index: int
    """The first run (an index into the series' points) at the new count."""
    name: str
    before: float
    after: float
    exact: bool

    def text(self) -> str:
        label = COUNTED[self.name][0]
        if self.exact:
            return (
                f"{self.after - self.before:+,.0f} {label} ({self.before:,.0f} → {self.after:,.0f})"
            )
        share = 100 * (self.after / self.before - 1) if self.before else 0.0
        return f"{label} {share:+.1f} % ({self.before:,.0f} → {self.after:,.0f})"


def count_steps(points: Sequence[Point]) -> list[CountStep]:
    """Each count's steps over the series (oldest first), run to run."""
    found: list[CountStep] = []
    last: dict[str, tuple[float, float]] = {}
    for index, point in enumerate(points):
        for name, (value, ranged) in point.count_figures().items():
            if name not in COUNTED:
                continue
            before = last.get(name)
            last[name] = (value, ranged)
            if before is None:
                continue
            old, old_range = before
            if ranged == 0 and old_range == 0:
                if value != old:
                    found.append(CountStep(index, name, old, value, True))
            elif max(ranged, old_range) <= STEADY and old and abs(value / old - 1) > FLOOR:
                found.append(CountStep(index, name, old, value, False))
    return found


def counts_at(points: Sequence[Point], index: int) -> bool:
    """Whether the runs either side of ``index`` both counted something."""
    return 0 < index < len(points) and all(points[i].count_figures() for i in (index - 1, index))
