"""The canary: fixed filesystem work timed between a benchmark's rounds.

It is the same few system calls on the same sandbox in every run
(:mod:`vcsbench.bench.canary` does it), so what moves it is mostly the machine -- a host
that lends the VM less CPU for a while, a device whose flushes are slower this hour.
Between separate runs that drift moves every benchmark's level by 10 % and more on this
project's machine type, together with the canary beside it (in one process, blocks of 20
svn-fs commits and 20 canaries on ext4 over 150 s: correlation 0.94 between their
medians). So a run's rounds over their canary -- each round's time over the canary's
timed right after it, the median of those ratios (:meth:`Canary.per_round`) -- is a
figure the machine's drift moves less; the calibration (``vcsbench doctor --spread``)
measures, per cell, whether it does, and a comparison between runs uses it only where it
does. Not wholly apart from the rounds: what a round leaves behind reaches the canary
after it (on ext4, in runs whose commits each spun 124-130 µs longer, the canary's writes
ran 6-12 % faster and its fsync 3-12 % slower; where svn-fs create+commits spun 3.1 ms
longer, the whole canary ran 2 % slower: the medians of 60 runs a side; docs/figures.md).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from vcsbench.results.rounds import Rounds
from vcsbench.results.schema import SchemaError, count, expect, required

MAX_TIMED = 10_000_000


@dataclass(frozen=True)
class Canary:
    """The canary of one benchmark: its median, how many times it ran, and how."""

    ms: float
    """The median of its timings (ms)."""
    timed: int
    every: int
    """It ran after every ``every``-th round."""
    method: str
    writes_ms: float | None = None
    """The median of its writes alone, up to its fsync (ms)."""
    each_us: tuple[tuple[int, int], ...] = ()
    """Every timing, whole and its writes (whole microseconds), in the order timed: what
    its median's own sampling error is read from."""

    def per_round(self, rounds: Rounds, writes: bool = False) -> float | None:
        """The median over the successful rounds of each round's time over the canary
        timed right after it (its writes alone if ``writes``): after every ``every``-th
        round, the canary after a round's stretch; rounds past the last canary, over the
        last. Paired so, drift as fast as a few rounds is taken out with the slow (the
        medians' ratio leaves it in both). None where the timings do not line up with
        the rounds one for one (a canary failed; a file without its timings)."""
        due = len(rounds.wall_ns) // self.every
        if not due or len(self.each_us) != due:
            return None
        ratios = []
        for i, (wall_ns, good) in enumerate(zip(rounds.wall_ns, rounds.ok, strict=True)):
            whole, part = self.each_us[min(i // self.every, due - 1)]
            under = part if writes else whole
            if good and under > 0:
                ratios.append(wall_ns / 1000 / under)
        return statistics.median(ratios) if ratios else None

    def to_json(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "ms": self.ms,
            "timed": self.timed,
            "every": self.every,
            "method": self.method,
        }
        if self.writes_ms is not None:
            found["writes_ms"] = self.writes_ms
        if self.each_us:
            found["each_us"] = [list(pair) for pair in self.each_us]
        return found

    @classmethod
    def from_json(cls, data: object, where: str) -> Canary | None:
        if data is None:
            return None
        d = expect(data, dict, where)
        ms = float(required(d, "ms", (int, float), where))
        if not ms > 0 or ms == float("inf"):
            raise SchemaError(f"{where}.ms is {ms!r}: a canary's median is a positive time")
        timed = count(d, "timed", where)
        if not 0 < timed <= MAX_TIMED:
            raise SchemaError(f"{where}.timed is {timed}: from 1 to {MAX_TIMED:,}")
        writes = d.get("writes_ms")
        if writes is not None:
            writes = float(expect(writes, (int, float), f"{where}.writes_ms"))
            if not 0 < writes < float("inf"):
                raise SchemaError(f"{where}.writes_ms is {writes!r}: a positive time")
        each = expect(d.get("each_us") or [], list, f"{where}.each_us")
        if len(each) > timed:
            raise SchemaError(f"{where}.each_us holds {len(each)} timings, more than timed")
        pairs = []
        for pair in each:
            items = expect(pair, list, f"{where}.each_us[]")
            if len(items) != 2 or not all(isinstance(v, int) and v >= 0 for v in items):
                raise SchemaError(f"{where}.each_us: {str(pair)[:40]} is not two whole numbers")
            pairs.append((int(items[0]), int(items[1])))
        return cls(
            ms=ms,
            timed=timed,
            every=count(d, "every", where, 1),
            method=str(d.get("method") or ""),
            writes_ms=writes,
            each_us=tuple(pairs),
        )
