"""The canary: fixed filesystem work timed between a benchmark's rounds.

No backend, operation or payload can move it: it is the same few system calls on the
same sandbox in every run (:mod:`vcsbench.bench.canary` does it). What moves it is the
machine -- a host that lends the VM less CPU for a while, a device whose flushes are
slower this hour. Between separate runs that drift moves every benchmark's level by
10 % and more on this project's machine type, together with the canary beside it (in
one process, blocks of 20 svn-fs commits and 20 canaries on ext4 over 150 s: correlation
0.94 between their medians). So a run's median over its canary's median is a figure the
machine's drift moves less; the calibration (``vcsbench doctor --spread``) measures,
per cell, whether it does, and a comparison between runs uses it only where it does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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

    def to_json(self) -> dict[str, Any]:
        found = {"ms": self.ms, "timed": self.timed, "every": self.every, "method": self.method}
        return found if self.writes_ms is None else {**found, "writes_ms": self.writes_ms}

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
        return cls(
            ms=ms,
            timed=timed,
            every=count(d, "every", where, 1),
            method=str(d.get("method") or ""),
            writes_ms=writes,
        )
