"""Bisection by a count: the first version whose operation makes a different count of
one kind -- its instructions, its fsync calls -- each version measured once, in a run of
its own, with counted rounds (``--counted``).

A count does not drift with the machine, so a version needs no reference run beside it:
the first run measures the good and the bad version together, and names the count that
decides, where none is asked for: the first that changed between them (instructions,
then the system calls by kind), judged as compare judges counts at one run a side.
Each later run measures one version halfway between the last good and the first bad one
known: it is **like the bad one** where its count lies past the halfway point between
the good and the bad version's (their geometric mean; for a count the same in every
round, equal to the bad one's), else **like the good one**. N versions take at most
1 + ceil(log2(N - 1)) runs, plus one for each version that cannot be measured.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from vcsbench.judge.count_changes import CountChange, judge_pair
from vcsbench.results.counted import COUNTED, Counted

METHOD = " ".join(" ".join(__doc__.split("\n\n")[1:3]).split()) if __doc__ else ""


class Unmeasured(Exception):
    """A version whose counted rounds could not be run, with why (skipped, said)."""


@dataclass(frozen=True)
class CountStep:
    number: int
    index: int
    version: str
    value: float | None
    side: str
    """``good``, ``bad``, ``ends`` (the first run: both ends), ``skipped``."""
    why: str = ""


@dataclass
class CountOutcome:
    versions: list[str]
    by: str = ""
    """The count that decides (``instructions``, ``sync_calls``...)."""
    change: CountChange | None = None
    steps: list[CountStep] = field(default_factory=list)
    runs: int = 0
    last_good: int = 0
    first_bad: int | None = None
    nothing: str = ""


Measure = Callable[[list[int]], dict[int, Counted]]
"""Run the versions at these indices (one run) and return each one's counted rounds;
raise :class:`Unmeasured` when the run could not be made."""


def decisive(good: Counted, bad: Counted, asked: str | None) -> tuple[str, CountChange | None, str]:
    """The count that decides, its change from good to bad, and why there is none."""
    names = [asked] if asked else list(COUNTED)
    for name in names:
        change = judge_pair(name, [good], [bad])
        if change.changed:
            return name, change, ""
    if asked:
        change = judge_pair(asked, [good], [bad])
        return asked, None, change.why or f"{COUNTED[asked][0]} did not change"
    return "", None, "no count changed between them"


def bisect_counts(
    versions: list[str],
    measure: Measure,
    asked: str | None = None,
    say: Callable[[CountStep], None] = lambda step: None,
) -> CountOutcome:
    out = CountOutcome(versions)
    last = len(versions) - 1
    ends = measure([0, last])
    out.runs = 1
    good, bad = ends[0], ends[last]
    name, change, why = decisive(good, bad, asked)
    out.by, out.change = name, change
    for index in (0, last):
        value = ends[index].figure(name) if name else None
        done = CountStep(len(out.steps) + 1, index, versions[index], value, "ends")
        out.steps.append(done)
        say(done)
    if change is None:
        out.nothing = f"{versions[last]} against {versions[0]}: {why}"
        return out
    assert change.base is not None and change.other is not None
    exact = change.kind == "exact"
    half = (
        math.sqrt(change.base * change.other)
        if change.base > 0 and change.other > 0
        else (change.base + change.other) / 2
    )
    low, high = 0, last
    live = set(range(1, last))
    while True:
        between = sorted(i for i in live if low < i < high)
        if not between:
            break
        index = between[len(between) // 2]
        live.discard(index)
        out.runs += 1
        try:
            found = measure([index])[index]
        except Unmeasured as reason:
            done = CountStep(
                len(out.steps) + 1, index, versions[index], None, "skipped", str(reason)
            )
            out.steps.append(done)
            say(done)
            continue
        value = found.figure(name)
        if value is None:
            why = found.missing.get(name, "no counted round succeeded")
            done = CountStep(len(out.steps) + 1, index, versions[index], None, "skipped", why)
            out.steps.append(done)
            say(done)
            continue
        if exact:
            like_bad = value == change.other
        else:
            like_bad = value > half if change.other > change.base else value < half
        side = "bad" if like_bad else "good"
        done = CountStep(len(out.steps) + 1, index, versions[index], value, side)
        out.steps.append(done)
        say(done)
        if like_bad:
            high = index
        else:
            low = index
    out.last_good, out.first_bad = low, high
    return out
