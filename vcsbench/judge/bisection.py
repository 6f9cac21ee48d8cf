"""Bisection over an ordered chain of versions: the first one whose figure changed.

Versions are given oldest first; the first is *good*, the last *bad*. Every step
measures one version against the good one **in one interleaved run** (blocks
alternating; the median of the block ratios with its interval), so the machine's drift
between steps cancels and every step's ratio is against the same reference.

The first step measures the bad version: the change to find is its ratio, and bisection
goes on only where that ratio's interval leaves out 1 and the ratio is past the
threshold. Then each step takes a version halfway between the last good and the first
bad one known. A version is **like the bad one** where its whole interval lies past the
halfway point of the change (the geometric mean of 1 and the bad version's ratio), **like
the good one** where its whole interval lies short of it. An interval across the halfway
point is measured once more with twice the rounds; if it still crosses, the median
decides and the answer says that step was not certain. A version that cannot be
measured (it does not install, its run failed) is skipped and said, and its neighbours
are tried. So N versions take ``1 + ceil(log2(N - 1))`` steps, plus one for each
unclear step and each skipped version met.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from vcsbench.judge.paired import Paired

MAX_VERSIONS = 1000
METHOD = (
    " ".join(__doc__.split("\n\n")[1].split()) + " " + " ".join(__doc__.split("\n\n")[2].split())
    if __doc__
    else ""
)


class Skip(Exception):
    """A version that cannot be measured, with the reason (said, and bisection goes on
    around it)."""


@dataclass(frozen=True)
class Step:
    """One step: which version, against the good one, what was found and what it means."""

    number: int
    index: int
    version: str
    found: Paired | None
    side: str
    """``bad``, ``good``, ``unclear`` (measured again), ``by its median`` (still unclear
    at the last attempt: decided by the median), ``skipped``, or ``change`` (step 1)."""
    attempt: int = 1
    why: str = ""

    def cell(self) -> str:
        if self.found is None:
            return "—"
        return f"{self.found.ratio:.3f}x [{self.found.low:.3f}–{self.found.high:.3f}]"


@dataclass
class Outcome:
    """Where the bisection ended: the last good and first bad version (indices), or why
    there was nothing to bisect."""

    versions: list[str]
    threshold: float
    steps: list[Step] = field(default_factory=list)
    change: Paired | None = None
    last_good: int = 0
    first_bad: int | None = None
    nothing: str = ""
    """Why there is no answer (no change past the threshold, the bad one failed)."""

    @property
    def skipped(self) -> list[Step]:
        return [s for s in self.steps if s.side == "skipped"]

    @property
    def uncertain(self) -> list[Step]:
        return [s for s in self.steps if s.side == "by its median"]

    def measured(self, index: int) -> Step | None:
        """The last step that measured this version (None: the good one, or never)."""
        found = [s for s in self.steps if s.index == index and s.found is not None]
        return found[-1] if found else None

    def share(self) -> float | None:
        """How much of the whole change lies between the last good and the first bad
        version: their ratios' logarithms over the bad version's (1.0: all of it)."""
        if self.first_bad is None or self.change is None or self.change.ratio == 1:
            return None
        bad = self.measured(self.first_bad)
        good = 1.0 if self.last_good == 0 else None
        if self.last_good and (step := self.measured(self.last_good)) and step.found:
            good = step.found.ratio
        if bad is None or bad.found is None or good is None:
            return None
        return math.log(bad.found.ratio / good) / math.log(self.change.ratio)


def side_of(found: Paired, change: float) -> str:
    """``bad`` where the interval lies past the halfway point of ``change`` (a ratio to
    the good version), ``good`` where it lies short of it, else ``unclear``."""
    half = math.sqrt(change)
    if change > 1:
        return "bad" if found.low > half else "good" if found.high < half else "unclear"
    return "bad" if found.high < half else "good" if found.low > half else "unclear"


def direction(ratio: float) -> str:
    """A ratio of times in a word: slower above 1, faster below."""
    return "slower" if ratio > 1 else "faster"


def past_threshold(found: Paired, threshold: float) -> bool:
    """A change to bisect: the interval leaves out 1 and the ratio is past the threshold
    (slower by more than it, or faster by more than 1/(1 + threshold))."""
    return found.significant and (found.ratio > 1 + threshold or found.ratio < 1 / (1 + threshold))


Measure = Callable[[int, int], Paired | None]
"""Measure version ``index`` against the good one, at ``attempt`` (1, then 2 with twice
the rounds); None: too few blocks for a figure; raise :class:`Skip` when it cannot run."""


def bisect(
    versions: list[str],
    measure: Measure,
    threshold: float,
    say: Callable[[Step], None] = lambda step: None,
    attempts: int = 2,
) -> Outcome:
    """Bisect ``versions`` (oldest first; the first good, the last bad), saying each step
    as it is found."""
    if not 2 <= len(versions) <= MAX_VERSIONS:
        raise ValueError(f"{len(versions)} versions: from 2 to {MAX_VERSIONS:,}")
    out = Outcome(versions, threshold)

    def step(index: int) -> Step:
        for attempt in range(1, attempts + 1):
            number = len(out.steps) + 1
            try:
                found = measure(index, attempt)
            except Skip as reason:
                done = Step(number, index, versions[index], None, "skipped", attempt, str(reason))
                break
            if found is None:
                done = Step(
                    number, index, versions[index], None, "skipped", attempt,
                    "too few blocks with figures",
                )  # fmt: skip
                break
            if out.change is None:
                done = Step(number, index, versions[index], found, "change", attempt)
                break
            side = side_of(found, out.change.ratio)
            if side == "unclear" and attempt == attempts:
                half = math.sqrt(out.change.ratio)
                past = found.ratio > half if out.change.ratio > 1 else found.ratio < half
                side = "by its median"
                how = f"like the {'bad' if past else 'good'} one by its median"
                done = Step(number, index, versions[index], found, side, attempt, how)
                break
            done = Step(number, index, versions[index], found, side, attempt)
            if side != "unclear":
                break
            out.steps.append(done)
            say(done)
        out.steps.append(done)
        say(done)
        return done

    last = len(versions) - 1
    first = step(last)
    if first.found is None:
        out.nothing = f"the bad version {versions[last]} could not be measured: {first.why}"
        return out
    out.change = first.found
    if not past_threshold(first.found, threshold):
        found = first.found
        if found.significant:  # a change, smaller than the one asked to bisect
            why = (
                f"{direction(found.ratio)} by {abs(found.ratio - 1):.1%} (its interval leaves "
                f"out 1: a change), under the {threshold:.0%} asked to bisect (--threshold "
                f"{max(1, math.floor(abs(found.ratio - 1) * 100))}% bisects it)"
            )
        else:
            why = "its interval holds 1: no change beyond this machine's noise"
        out.nothing = (
            f"{versions[last]} is {first.cell()} of {versions[0]}: {why}; no change past "
            f"{threshold:.0%} to find"
        )
        return out
    low, high = 0, last
    live = set(range(1, last))
    while True:
        between = sorted(i for i in live if low < i < high)
        if not between:
            break
        index = between[len(between) // 2]
        done = step(index)
        live.discard(index)
        if done.side == "skipped":
            continue
        bad = done.side == "bad" or (done.side == "by its median" and "bad" in done.why)
        if bad:
            high = index
        else:
            low = index
    out.last_good, out.first_bad = low, high
    return out
