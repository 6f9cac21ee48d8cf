"""Work of a known amount planted inside every timed call, after the operation: what a
comparison must find, to show it finds what it should (a power check, as ``copy=`` is the
A/A). ``delay=88us`` waits a known time; ``work=N`` executes N thousand turns of a loop
of a known number of instructions (2 a turn: a count grows by exactly 2,000 N);
``syncs=K`` makes K fsync calls of a file in the round's scratch directory (K more in the
fsync family, and K device flushes where there is a device)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vcsbench.measure.instructions import Counter
    from vcsbench.workload.operation import RoundPaths

TURNS = 1000
"""Turns of the loop per unit of ``work=``."""


@dataclass(frozen=True)
class Planted:
    work: int = 0
    """Thousands of turns of the counter's loop (2,000 instructions each)."""
    syncs: int = 0
    """fsync calls of a file in the round's scratch directory."""

    def __bool__(self) -> bool:
        return bool(self.work or self.syncs)

    def run(self, paths: RoundPaths, counter: Counter | None) -> None:
        if self.work:
            assert counter is not None, "work= needs the counter's library"
            counter.spin(self.work * TURNS)
        if self.syncs:
            fd = os.open(paths.scratch / ".planted", os.O_WRONLY | os.O_CREAT, 0o600)
            try:
                for _ in range(self.syncs):
                    os.write(fd, b"x")
                    os.fsync(fd)
            finally:
                os.close(fd)
            os.unlink(paths.scratch / ".planted")

    def to_json(self) -> dict[str, Any]:
        return {"work": self.work, "syncs": self.syncs}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Planted:
        return cls(work=int(data["work"]), syncs=int(data["syncs"]))
