"""This machine's run-to-run spread: how far the same benchmark moves between runs.

The rounds of one run are not independent samples of "this benchmark on this machine":
each run (a process, a sandbox made anew, an hour of the machine) has a level of its own,
and a comparison between runs must stand out of how much those levels differ.
``vcsbench doctor --spread`` measures it: the same benchmarks in K separate runs one after
another (an A/A across runs), each run's figure kept (its median time, its CPU time per
repository). The spread of a cell -- a backend, an operation (its options aside) and a
filesystem type -- is the standard deviation of the logarithms of its K figures, with
K - 1 degrees of freedom. A run records the calibration of the machine it ran on
(:func:`recorded_for`), so a comparison reads it from the result files alone.

Where a machine's calibration is kept: :mod:`vcsbench.results.calibration`.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import statistics
from dataclasses import dataclass, field
from typing import Any

from vcsbench.results.drifting import FIGURES, TIME_FIGURES
from vcsbench.results.schema import SchemaError, count, expect, optional, required

SPREAD_FILE_VERSION = 1


def op_class(op: str) -> str:
    """The operation a cell is kept for: its name, its options aside (``commit[back=3]``
    is ``commit``)."""
    return op.split("[", 1)[0]


SEEN_RUNS = 30
"""The most recent earlier runs of a benchmark the store's spread is read from."""
SEEN_LEAST = 6
"""Fewer earlier runs than this and the store's spread is not used."""


@dataclass(frozen=True)
class Seen:
    """A figure's spread between a benchmark's earlier runs on this machine, with the
    same versions, as the results store holds them."""

    sd: float
    runs: int
    since: str
    """The oldest of those runs' start (ISO 8601)."""

    @property
    def df(self) -> int:
        """What the estimate is worth in degrees of freedom: the mean square of
        neighbouring differences is about two thirds as efficient as a variance (von
        Neumann's), so two thirds of the differences it was read from."""
        return max(1, 2 * (self.runs - 1) // 3)


def own_spread(logs: list[float]) -> float | None:
    """A series' run-to-run spread from itself (logarithms, oldest first): the median
    absolute difference of neighbouring runs over 0.954 (for normal noise, |d| of two
    draws has median 0.954 sd); a step where something changed, or a slow trend, moves
    one difference only."""
    diffs = [abs(b - a) for a, b in itertools.pairwise(logs)]
    if len(diffs) < 3:
        return None
    return statistics.median(diffs) / 0.954 or None


@dataclass(frozen=True)
class SpreadCell:
    """One backend, operation and filesystem type, run K times: each run's figures."""

    backend: str
    op: str
    fstype: str
    rounds: int
    """Rounds each run had: the spread is of runs that long."""
    figures: dict[str, tuple[float, ...]]
    """Per figure (``FIGURES``), each run's value: the median ms, the CPU s per repository."""
    seen: dict[str, Seen] = field(default_factory=dict, compare=False)
    """Per figure, the spread the results store saw between this benchmark's earlier
    runs (:func:`own_spread`), where it had enough; never written to a file."""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.backend, self.op, self.fstype)

    def _own_sd(self, figure: str) -> float | None:
        values = self.figures.get(figure, ())
        if len(values) < 2 or min(values) <= 0:
            return None
        return statistics.stdev(math.log(v) for v in values)

    def store_spread(self, figure: str) -> Seen | None:
        """The store's spread of ``figure`` where it is wider than the calibration's."""
        found = self.seen.get(figure)
        own = self._own_sd(figure)
        return found if found is not None and (own is None or found.sd > own) else None

    def sd_log(self, figure: str = "time") -> float | None:
        """The standard deviation of the logarithms of the runs' figures (None below two
        runs or where one is not positive): the calibration's, or the store's where that
        is wider -- the spread a comparison must stand out of is the wider one."""
        wider = self.store_spread(figure)
        return wider.sd if wider is not None else self._own_sd(figure)

    def df(self, figure: str = "time") -> int:
        wider = self.store_spread(figure)
        return wider.df if wider is not None else self._own_df(figure)

    def _own_df(self, figure: str) -> int:
        return max(0, len(self.figures.get(figure, ())) - 1)

    def basis(self, figure: str = "time") -> str:
        """Where the spread :meth:`sd_log` gives was measured, for a person."""
        wider = self.store_spread(figure)
        if wider is not None:
            return (
                f"this benchmark's {wider.runs} earlier runs in the store (since "
                f"{wider.since[:10]}), wider than the calibration"
            )
        return f"this machine's calibration ({self._own_df(figure) + 1} runs)"

    def with_seen(self, seen: dict[str, Seen]) -> SpreadCell:
        return dataclasses.replace(self, seen=dict(seen))

    def time_figure(self) -> str:
        """Of the median alone, over the canary and over the canary's writes
        (``TIME_FIGURES``), the one that moved least between the calibration's runs:
        where the machine's drift was most of their spread, the canary takes it out --
        the whole canary for a backend that flushes, its writes for one that does not."""
        sds = {
            name: sd
            for name in TIME_FIGURES
            if (sd := self.sd_log(name)) is not None and self._own_df(name) >= self._own_df("time")
        }
        if "time" not in sds:
            return "time"
        return min(sds, key=lambda name: (sds[name], TIME_FIGURES.index(name)))

    def to_json(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "op": self.op,
            "fstype": self.fstype,
            "rounds": self.rounds,
            "figures": {k: list(v) for k, v in self.figures.items()},
        }

    @classmethod
    def from_json(cls, data: object, where: str) -> SpreadCell:
        d = expect(data, dict, where)
        figures: dict[str, tuple[float, ...]] = {}
        for name, values in expect(d.get("figures") or {}, dict, f"{where}.figures").items():
            if name not in FIGURES:
                continue
            items = expect(values, list, f"{where}.figures.{name}")
            if len(items) > 1000:
                raise SchemaError(f"{where}.figures.{name} holds {len(items)} runs, at most 1000")
            found = tuple(
                float(expect(v, (int, float), f"{where}.figures.{name}[]")) for v in items
            )
            if any(v <= 0 for v in found):
                raise SchemaError(f"{where}.figures.{name} holds a value <= 0")
            figures[name] = found
        return cls(
            backend=required(d, "backend", str, where),
            op=required(d, "op", str, where),
            fstype=required(d, "fstype", str, where),
            rounds=count(d, "rounds", where, 0),
            figures=figures,
        )


@dataclass(frozen=True)
class Spread:
    """A machine's calibration: its cells, when and how they were measured."""

    fingerprint: str
    machine: str
    """The machine as a person reads it (host, CPU, memory, kernel)."""
    measured: str
    """When (ISO 8601, UTC)."""
    command: str
    runs: int
    cells: tuple[SpreadCell, ...] = field(default_factory=tuple)

    def cell(self, backend: str, op: str, fstype: str) -> SpreadCell | None:
        key = (backend, op_class(op), fstype)
        return next((c for c in self.cells if c.key == key), None)

    def merged(self, newer: Spread) -> Spread:
        """This calibration with ``newer``'s cells in place of the ones they measure again."""
        keys = {c.key for c in newer.cells}
        kept = tuple(c for c in self.cells if c.key not in keys)
        return Spread(
            newer.fingerprint,
            newer.machine,
            newer.measured,
            newer.command,
            newer.runs,
            kept + newer.cells,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "version": SPREAD_FILE_VERSION,
            "fingerprint": self.fingerprint,
            "machine": self.machine,
            "measured": self.measured,
            "command": self.command,
            "runs": self.runs,
            "cells": [c.to_json() for c in self.cells],
        }

    @classmethod
    def from_json(cls, data: object, where: str) -> Spread:
        d = expect(data, dict, where)
        cells = expect(d.get("cells") or [], list, f"{where}.cells")
        if len(cells) > 10_000:
            raise SchemaError(f"{where}.cells holds {len(cells)} cells, at most 10000")
        return cls(
            fingerprint=required(d, "fingerprint", str, where),
            machine=optional(d, "machine", str, where, ""),
            measured=optional(d, "measured", str, where, ""),
            command=optional(d, "command", str, where, ""),
            runs=count(d, "runs", where, 0),
            cells=tuple(
                SpreadCell.from_json(c, f"{where}.cells[{i}]") for i, c in enumerate(cells)
            ),
        )
