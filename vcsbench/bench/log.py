"""What a benchmark's rounds left: each round's record, and the log that keeps them in
typed arrays (8 bytes a value, not a Python object each) with running totals."""

from __future__ import annotations

import re
from array import array
from dataclasses import dataclass

from vcsbench.bench import floor
from vcsbench.results.metrics import METRICS
from vcsbench.results.rounds import RoundError, Rounds

MAX_ERROR_SAMPLES = 20
SUMMED = tuple(name for name, d in METRICS.items() if d.totalled == "sum" and name != "wall")
FOOTPRINT_METRICS = {
    "footprint_content": "content_bytes",
    "footprint_dirs": "dir_bytes",
    "footprint_apparent": "apparent_bytes",
    "footprint_allocated": "allocated_bytes",
    "footprint_inodes": "inodes",
}
SCRATCH_METRICS = {"scratch_allocated": "allocated_bytes", "scratch_inodes": "inodes"}
NAN = float("nan")
VERIFY_BATCH = 64
"""Rounds run before their verification: a batch's rounds are kept (or lost, if the run
is interrupted inside it) together."""
KEPT_PER_ROUND = tuple(name for name, d in METRICS.items() if d.round_key and name != "wall")


def error_kind(error: str) -> str:
    """An error's kind, for counting alike errors: its text without numbers and origin."""
    text = re.sub(r" \[[^\]]*\]$", "", error)
    text = re.sub(r"r\d{7}|\d+", "N", text)
    return text[:120]


@dataclass
class RoundRecord:
    """What one round left: its timing, counters and outcome, sent whole by a worker."""

    t_start_s: float
    wall_ns: int
    values: dict[str, float | None]
    error: str | None = None
    verified: bool = False
    diagnosis: str = ""
    floor_tree: dict[str, floor.TreeEntry] | None = None
    held_bytes: int = 0
    """Bytes allocated to the round's measured paths before it (a copied seed, say)."""
    canary_ns: tuple[int, int] | None = None
    """The canary timed after this round, whole and its writes, if one was
    (:mod:`vcsbench.bench.canary`)."""


def _plain(value: float) -> float | int | None:
    """A kept value as the result file writes it: None for NaN, whole numbers as ints."""
    if value != value:  # NaN: the round had no such value
        return None
    return int(value) if value.is_integer() else value


class RoundLog:
    """Every round's record in typed arrays (8 bytes a value, not a Python object and a
    list slot each); running totals over successful rounds. :meth:`to_rounds` gives the
    result model's lists, once, at the end."""

    def __init__(self) -> None:
        self.t_start_s = array("d")
        self.wall_ns = array("q")
        self.ok = array("b")
        self.values = {name: array("d") for name in KEPT_PER_ROUND}
        self.totals: dict[str, float] = dict.fromkeys(SUMMED, 0.0)
        self.errors: list[RoundError] = []
        self.error_kinds: dict[str, int] = {}
        self.verified = 0
        self.ops_wall_ns = 0
        self.ok_count = 0
        self.held_bytes = 0
        """Bytes the rounds' measured paths held before their rounds, every round."""
        self.canary_ns = array("q")
        """The canaries timed between the rounds."""
        self.canary_writes_ns = array("q")
        """Their writes alone."""

    def __len__(self) -> int:
        return len(self.wall_ns)

    @property
    def error_count(self) -> int:
        return len(self) - self.ok_count

    def add(
        self, t_start_s: float, wall_ns: int, values: dict[str, float | None], error: str | None
    ) -> None:
        index = len(self.wall_ns)
        ok = error is None
        self.t_start_s.append(t_start_s)
        self.wall_ns.append(wall_ns)
        self.ok.append(ok)
        for name, kept in self.values.items():
            value = values.get(name)
            kept.append(NAN if value is None else value)
        self.ops_wall_ns += wall_ns
        if ok:
            self.ok_count += 1
            for name in SUMMED:
                value = values.get(name)
                if value is not None:
                    self.totals[name] += value
        else:
            kind = error_kind(error or "")
            self.error_kinds[kind] = self.error_kinds.get(kind, 0) + 1
            if len(self.errors) < MAX_ERROR_SAMPLES:
                self.errors.append(RoundError(index, error or ""))

    def ok_wall_s(self) -> list[float]:
        return [w / 1e9 for w, good in zip(self.wall_ns, self.ok, strict=True) if good]

    def to_rounds(self) -> Rounds:
        return Rounds(
            t_start_s=self.t_start_s.tolist(),
            wall_ns=self.wall_ns.tolist(),
            ok=[bool(x) for x in self.ok],
            values={name: [_plain(v) for v in kept] for name, kept in self.values.items()},
        )
