"""A time ratio between two benchmarks of the results, with the interval that holds for how
they ran.

- **Interleaved** (one group of one run: variants, or filesystems, in alternating blocks):
  the median of the block ratios with its distribution-free interval
  (:mod:`vcsbench.judge.paired`); drift between blocks cancels.
- **One after the other** (two benchmarks of a run, or of two runs): each is one run's
  level, and the interval comes from this machine's run-to-run spread as the files record
  it (:mod:`vcsbench.judge.verdict`); with none recorded, the ratio has no interval and
  no verdict, and says so. Two runs of one filesystem whose canaries moved apart beyond
  their calibrated spread get no verdict either: the machine moved between them; nor do
  two runs of two filesystems, whose canaries move with the filesystem. The rounds
  of the two are never taken as samples of the difference: drift between them would read
  as one.
- **Over runs** (several runs, each with the pair interleaved): each run's by-block ratio is
  one sample, the run the unit (:func:`over_runs`): what differs from run to run in the
  effect itself (a fresh filesystem's layout, the hour) widens the interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from vcsbench.judge.drift import machine_moved
from vcsbench.judge.paired import LEVEL, MIN_EFFECT, Paired, paired
from vcsbench.judge.verdict import ALPHA, between
from vcsbench.results.harness import Interleaved
from vcsbench.results.model import Benchmark
from vcsbench.results.run_figures import busy
from vcsbench.results.spread import SpreadCell

BY_BLOCK = "by block"
BY_SPREAD = "run-to-run spread"
OVER_RUNS = "over runs"
NO_INTERVAL = "no interval: run one after the other, and no run-to-run spread recorded"
EXPLAINED = (
    f"Intervals: by block ({LEVEL:.0%} or more) where the two ran interleaved; else "
    f"({1 - ALPHA:.0%}) from this machine's run-to-run spread as the results record it "
    "(vcsbench doctor --spread), the two having run one after the other; where neither is "
    "known, none (marked †): drift between the two may be all of such a ratio."
)
NS = "ns: the interval holds 1, no significant difference."

OVER_RUNS_EXPLAINED = (
    ' A row "over N runs": each run\'s by-block ratio one sample, the run the unit '
    "(their geometric mean, a 95% t interval over the runs): how much the difference itself "
    "moves from one run to the next (a fresh filesystem, another hour) is in its interval, "
    "which a single run's blocks cannot see."
)


@dataclass(frozen=True)
class Ratio:
    """``bench`` over ``base``: the ratio, its interval, and how it was found."""

    value: float
    interval: tuple[float, float] | None
    how: str
    significant: bool
    busy: str = ""
    """What made the machine busy while one of the two ran one after the other, if it was."""
    withheld: str = ""
    """Why there is no verdict otherwise (the machine moved between the two runs)."""

    def text(self, digits: int = 2) -> str:
        shown = f"{self.value:.{digits}f}x"
        if self.interval is None:
            return shown + " †"
        return f"{shown} [{self.interval[0]:.{digits}f}–{self.interval[1]:.{digits}f}]"

    @classmethod
    def by_block(cls, found: Paired) -> Ratio:
        """The ratio of an interleaved pair, its blocks the unit."""
        interval = (found.low, found.high)
        return cls(found.ratio, interval, BY_BLOCK, found.significant, withheld=found.withheld)

    def cell(self, digits: int = 2) -> str:
        """:meth:`text` for a table, marked "ns" where the interval holds 1 (no
        significant difference)."""
        quiet = self.interval is not None and not (self.significant or self.busy)
        return self.text(digits) + (" ns" if quiet and not self.withheld else "")

    def in_words(self, digits: int = 2, aside: str = "") -> str:
        """The ratio for a sentence: how many times as long, between which bounds; "no
        significant difference" where the interval holds 1; else why it is no verdict.
        ``aside`` goes inside its parentheses."""
        more = f"; {aside}" if aside else ""
        if self.interval is None or self.busy or self.withheld:
            return f"{self.text(digits)}, {self.verdict()}" + (f" ({aside})" if aside else "")
        low, high = (f"{end:.{digits}f}" for end in self.interval)
        if not self.significant:
            return (
                f"no significant difference ({self.value:.{digits}f}x, between {low} and "
                f"{high}{more})"
            )
        return f"{self.value:.{digits}f} times as long (between {low} and {high}{more})"

    def verdict(self) -> str:
        if self.busy:
            return f"no verdict (busy machine: {self.busy})"
        if self.withheld:
            return self.withheld
        if self.interval is None:
            return "no verdict (†)"
        if not self.significant:
            return "no significant difference"
        if abs(self.value - 1) < MIN_EFFECT:
            return f"a difference under {MIN_EFFECT:.0%}"
        return "slower" if self.value > 1 else "faster"


def _blocks(bench: Benchmark) -> Interleaved | None:
    return bench.harness.interleaved


def same_group(a: Benchmark, b: Benchmark) -> bool:
    """Whether the two ran interleaved in one group (one run, one order seed)."""
    ba, bb = _blocks(a), _blocks(b)
    return (
        ba is not None
        and bb is not None
        and a.source == b.source
        and ba.order_seed == bb.order_seed
        and ba.variants == bb.variants
    )


def _cell(a: Benchmark, b: Benchmark) -> SpreadCell | None:
    cells = [c for c in (a.spread, b.spread) if c is not None]
    return max(cells, key=lambda c: c.sd_log() or 0.0, default=None)


def time_ratio(bench: Benchmark, base: Benchmark) -> Ratio | None:
    """``bench``'s time over ``base``'s (None where either has no successful round)."""
    if bench.median_ms is None or not base.median_ms:
        return None
    if same_group(bench, base):
        mine, theirs = _blocks(bench), _blocks(base)
        assert mine is not None and theirs is not None
        found = paired(theirs.median_ms, mine.median_ms)
        if found is not None:
            return Ratio.by_block(found)
    loaded = next((why for b in (bench, base) if (why := busy(b, 0))), "")
    cell = _cell(bench, base)
    moved = machine_moved(cell, [base], [bench]) if bench.source != base.source else ""
    change = between("time", [base.median_ms], [bench.median_ms], cell, loaded or moved)
    assert change.ratio is not None
    return Ratio(
        change.ratio,
        change.interval,
        BY_SPREAD if change.interval is not None else NO_INTERVAL,
        change.significant,
        loaded,
        moved,
    )


def over_runs(ratios: list[float]) -> Ratio | None:
    """Several runs' by-block ratios of one pair, the run the unit: their geometric mean
    with a t interval over the runs' log ratios (``LEVEL``, n - 1 degrees of freedom);
    None under two runs. Each run's ratio is free of drift; how much the effect itself
    differs from run to run is what the interval is made of."""
    if len(ratios) < 2 or any(r <= 0 for r in ratios):
        return None
    from scipy import stats

    logs = [math.log(r) for r in ratios]
    mean = sum(logs) / len(logs)
    low, high = (math.exp(v) for v in stats.t.interval(LEVEL, len(logs) - 1, mean, stats.sem(logs)))
    return Ratio(math.exp(mean), (low, high), OVER_RUNS, low > 1 or high < 1)
