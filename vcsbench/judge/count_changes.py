"""What the counted rounds of two sides say changed: each count judged at one run a side,
as it behaves between rounds (:mod:`vcsbench.results.counted`).

- *exact*: every counted round of each side made the same count (most system calls):
  any difference is a change, whatever the machine did -- the kernel counted each call;
- *steady*: the count moves between rounds, but little (instructions, with what each
  round's place in its process does: under :data:`STEADY` of its median): the rounds are
  paired by index, and a change is a median ratio beyond :data:`FLOOR` with every pair
  moved by more than half of it the same way;
- *moving*: beyond :data:`STEADY` between rounds (git's re-reading of files whose time
  stamps race with the index's; a threaded path): no verdict at one run a side -- it is
  said to move, and by how much, and time's run-to-run verdict stands alone.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from vcsbench.results.counted import COUNTED, Counted, share_range
from vcsbench.results.model import Benchmark

STEADY = 0.05
"""The most a steady count's counted rounds range over, as a share of their median."""
FLOOR = 0.01
"""The smallest change of a steady count that is called one: four times the most two
runs of one build moved a median here (0.23 %: 40 runs of a git-pygit2 commit)."""
MIN_PAIRED = 3
"""The fewest counted rounds paired by index a steady count is judged on."""


@dataclass(frozen=True)
class CountChange:
    """One count of the counted rounds, base against other."""

    name: str
    base: float | None
    other: float | None
    kind: str
    """``exact``, ``steady``, ``moving`` or ``missing``."""
    changed: bool
    why: str = ""
    """Why there is no verdict (a moving count, too few rounds, not counted)."""

    @property
    def label(self) -> str:
        return COUNTED[self.name][0]

    @property
    def ratio(self) -> float | None:
        if self.base is None or self.other is None:
            return None
        if self.base == 0:
            return None if self.other else 1.0
        return self.other / self.base

    def text(self) -> str:
        """As a person says it: ``+1 fsync-family calls (7 → 8, in every round)``,
        ``+2.1 % instructions (1,868,920 → 1,908,161, median of 5 rounds)``."""
        assert self.base is not None and self.other is not None
        step = self.other - self.base
        if self.kind == "exact":
            return (
                f"{step:+,.0f} {self.label} ({self.base:,.0f} → {self.other:,.0f}, in every "
                "counted round)"
            )
        ratio = self.ratio
        share = f"{100 * (ratio - 1):+.1f} %" if ratio is not None else f"{step:+,.0f}"
        return f"{share} {self.label} ({self.base:,.0f} → {self.other:,.0f}, medians)"


def judge_counted(base: list[Benchmark], other: list[Benchmark]) -> dict[str, CountChange]:
    """Each count both sides counted, judged (every run's counted rounds pooled a side)."""
    sides = [[b.counted for b in group if b.counted is not None] for group in (base, other)]
    if not sides[0] or not sides[1]:
        return {}
    found = {}
    for name in COUNTED:
        found[name] = judge_pair(name, sides[0], sides[1])
    return {k: v for k, v in found.items() if v.kind != "missing" or v.why}


def _pooled(counted: list[Counted], name: str) -> list[int]:
    return [v for c in counted for v in c.series(name)]


def judge_pair(name: str, base: list[Counted], other: list[Counted]) -> CountChange:
    """One count of the counted rounds of each side (each side's runs pooled), judged."""
    b, o = _pooled(base, name), _pooled(other, name)
    if not b or not o:
        reasons = [c.missing[name] for c in (*base, *other) if name in c.missing]
        return CountChange(name, None, None, "missing", False, reasons[0] if reasons else "")
    mb, mo = statistics.median(b), statistics.median(o)
    if len(set(b)) == 1 and len(set(o)) == 1:
        return CountChange(name, mb, mo, "exact", mb != mo)
    moves = count_moves(b, o, "counted rounds")
    if moves:
        return CountChange(name, mb, mo, "moving", False, moves)
    ratios = _paired_ratios(name, base, other)
    if len(ratios) < MIN_PAIRED:
        why = f"too few counted rounds ({len(ratios)} paired) for a verdict: --counted "
        return CountChange(name, mb, mo, "steady", False, f"{why}{MIN_PAIRED} or more")
    middle = statistics.median(ratios)
    sign = 1.0 if middle >= 1 else -1.0
    beyond = abs(middle - 1) > FLOOR
    every = all((r - 1) * sign > FLOOR / 2 for r in ratios)
    if beyond and not every:
        moved = sum((r - 1) * sign > FLOOR / 2 for r in ratios)
        why = f"its counted rounds disagree: {moved} of {len(ratios)} moved by more than "
        return CountChange(name, mb, mo, "steady", False, f"{why}{FLOOR / 2:.1%} the median's way")
    return CountChange(name, mb, mo, "steady", beyond)


def _paired_ratios(name: str, base: list[Counted], other: list[Counted]) -> list[float]:
    """Each counted round of the other side over the base's round of the same index (a
    side's runs: the median of each index): rounds of one index do the same work in the
    same place of their process's life (a git-pygit2 commit's second round counted 1.6 %
    more than its others, in every run), so the pair cancels what the index does."""
    sides = []
    for runs in (base, other):
        width = min(c.rounds for c in runs)
        by_index = []
        for i in range(width):
            found = [
                v
                for c in runs
                if c.ok[i] and (v := c.values.get(name, [None] * width)[i]) is not None
            ]
            by_index.append(statistics.median(found) if found else None)
        sides.append(by_index)
    return [o / b for b, o in zip(*sides, strict=False) if b and o is not None]


def count_moves(base: Sequence[float], other: Sequence[float], rounds: str = "rounds") -> str:
    """Why a count that is not the same in every round has no verdict at one run a side
    (it moves beyond :data:`STEADY` of its median on a side), or ``""``: it is steady."""
    ranges = [share_range(side) for side in (base, other)]
    if None not in ranges and max(r for r in ranges if r is not None) <= STEADY:
        return ""
    worst = max((r for r in ranges if r is not None), default=None)
    what = "" if worst is None or None in ranges else f" by {100 * worst:.0f} % of its median"
    return f"it moves between {rounds}{what}: no verdict at one run a side"
