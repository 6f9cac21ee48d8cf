"""The store's rows read back as typed points and series, every value checked as a result
file's are: a store is shared (a team's server) and may be edited or damaged, so a value
of the wrong type, out of range or holding a control character (a terminal escape) is one
line naming the row and the column, never a traceback nor an escape on the terminal."""

from __future__ import annotations

import datetime
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vcsbench.errors import VcsbenchError
from vcsbench.results.schema import SchemaError
from vcsbench.results.spread import SpreadCell

MAX_TEXT = 4096
"""Longer text from a result file (a command line, a description) is cut to this."""
MAX_FIGURE = 1e12
"""The largest time, CPU or ratio a point may hold (ms: 31 years); more is a damaged row."""
MAX_COUNT = 10**12
MAX_COUNTS = 64
"""The most counts a point holds."""
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

POINT = (  # a Point's columns in its fields' order, as both queries read them
    "p.started, p.median_ms, p.canary_ms, p.canary_writes_ms, p.per_canary, p.per_writes, "
    "p.cpu_ms, p.repos, p.errors, p.busy, p.versions, r.path, p.spread, p.counts"
)


@dataclass(frozen=True)
class Point:
    started: str
    median_ms: float | None
    canary_ms: float | None
    canary_writes_ms: float | None
    per_canary: float | None
    """Its rounds over their canary (``spread.TIME_FIGURES``' ``time_per_canary``)."""
    per_writes: float | None
    cpu_ms: float | None
    repos: int
    errors: int
    busy: str
    versions: str
    path: str
    spread: str
    """The machine's calibration for this cell as the run recorded it (JSON), or ""."""
    counts: str = ""
    """Its counts per operation (JSON: name -> [median, how far its rounds ranged over
    it]), or "" (none counted)."""

    def count_figures(self) -> dict[str, tuple[float, float]]:
        """Its counts per operation: name -> (median, how far its rounds ranged over it:
        0, the same in every round); a value that is not one is left out (the store is
        shared: it may be damaged)."""
        if not self.counts:
            return {}
        try:
            found = json.loads(self.counts)
        except (ValueError, RecursionError):
            return {}
        if not isinstance(found, dict):
            return {}
        kept = {}
        for name, value in list(found.items())[:MAX_COUNTS]:
            if (
                isinstance(name, str)
                and isinstance(value, list)
                and len(value) == 2
                and isinstance(value[0], int | float)
                and not isinstance(value[0], bool)
                and math.isfinite(value[0])
                and 0 <= value[0] <= MAX_COUNT
                and isinstance(value[1], int | float)
                and not isinstance(value[1], bool)
                and math.isfinite(value[1])
                and 0 <= value[1] <= MAX_COUNT
            ):
                kept[name] = (float(value[0]), float(value[1]))
        return kept

    def figure(self, name: str) -> float | None:
        """Its value of a time figure (``spread.TIME_FIGURES``), if it has one."""
        return {
            "time": self.median_ms or None,
            "time_per_canary": self.per_canary,
            "time_per_writes": self.per_writes,
        }.get(name)

    def cell(self) -> SpreadCell | None:
        if not self.spread:
            return None
        try:
            return SpreadCell.from_json(json.loads(self.spread), "the store's spread")
        except (ValueError, RecursionError, SchemaError):
            return None


@dataclass(frozen=True)
class Series:
    machine_key: str
    machine: str
    benchmark: str
    points: tuple[Point, ...]


_COLUMNS = [column.split(".")[1] for column in POINT.split(", ")]
_KINDS = ("text", "figure", "figure", "figure", "figure", "figure", "figure", "count",
          "count", "text", "text", "text", "text", "text")  # fmt: skip
"""What each column of :data:`POINT` holds, in order."""


class RowError(VcsbenchError):
    """A value of the store that is not what its column holds."""


def point_of(row: Sequence[Any], where: str) -> Point:
    """The point a row of :data:`POINT`'s columns holds, each value checked."""
    if len(row) != len(_COLUMNS):
        raise RowError(f"{where}: a row of {len(row)} values, not {len(_COLUMNS)}")
    values = [_checked(k, v, n, where) for k, v, n in zip(_KINDS, row, _COLUMNS, strict=True)]
    try:
        datetime.datetime.fromisoformat(values[0])
    except ValueError:
        raise RowError(_bad(where, "started", values[0], "a date and time")) from None
    return Point(*values)


def head_of(row: Sequence[Any], where: str) -> tuple[str, str, str, str]:
    """(series, machine key, machine, benchmark) of a row, each checked as text."""
    series, key, machine, benchmark = (
        _checked("text", v, n, where)
        for v, n in zip(row, ("series", "machine_key", "machine", "benchmark"), strict=True)
    )
    return series, key, machine, benchmark


def _checked(kind: str, value: Any, name: str, where: str) -> Any:
    if kind == "text":
        if not isinstance(value, str) or len(value) > MAX_TEXT:
            raise RowError(_bad(where, name, value, f"text of at most {MAX_TEXT:,} characters"))
        if _CONTROL.search(value):
            raise RowError(_bad(where, name, value, "printable text (a control character)"))
        return value
    if kind == "count":
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
            raise RowError(_bad(where, name, value, "a whole number from 0"))
        return value
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not 0 <= value <= MAX_FIGURE
    ):
        raise RowError(_bad(where, name, value, f"a number from 0 to {MAX_FIGURE:g}, or empty"))
    return float(value)


def _bad(where: str, name: str, value: Any, expected: str) -> str:
    shown = _CONTROL.sub("?", repr(value))[:40]
    return (
        f"{where}: {name} {shown} is not {expected}; the store is an index over result "
        "files: add them to a new one (vcsbench store add --store NEW FILE|DIR ...)"
    )
