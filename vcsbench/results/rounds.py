"""A benchmark's rounds as a result file holds them: each round's start, wall time,
success and per-round metric values as parallel arrays (:class:`Rounds`), a metric's
figure or why there is none (:class:`Metric`), the failed rounds' errors; every unit a
file gives checked against the one this vcsbench reads. The benchmark and the run that
carry them: :mod:`vcsbench.results.model`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vcsbench.results.metrics import METRICS, metric
from vcsbench.results.schema import (
    SchemaError,
    expect,
    numbers,
    optional,
    optional_number,
    required,
)

CLOCK = (
    "perf_counter_ns around the operation alone; pytest-benchmark's stats hold the same "
    "successful rounds' wall times"
)


@dataclass(frozen=True)
class Metric:
    """A benchmark's figure for one registry metric, or why there is none."""

    unit: str
    total: float | None
    per_repo: float | None
    reason: str = ""

    @classmethod
    def missing(cls, name: str, reason: str) -> Metric:
        return cls(metric(name).unit, None, None, reason)

    @classmethod
    def from_json(cls, data: object, where: str, name: str) -> Metric:
        """Metric ``name``'s figure; negative only where the registry says it can be."""
        d = expect(data, dict, where)
        signed = METRICS[name].signed
        return cls(
            unit=_unit(optional(d, "unit", str, where, ""), metric(name).unit, where),
            total=optional_number(d, "total", where, signed=signed),
            per_repo=optional_number(d, "per_repo", where, signed=signed),
            reason=optional(d, "reason", str, where, ""),
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"unit": self.unit, "total": self.total, "per_repo": self.per_repo}
        if self.reason:
            out["reason"] = self.reason
        return out


@dataclass
class Rounds:
    """Per-round records, as parallel arrays (compact at any N)."""

    t_start_s: list[float] = field(default_factory=list)
    wall_ns: list[int] = field(default_factory=list)
    ok: list[bool] = field(default_factory=list)
    values: dict[str, list[float | None]] = field(default_factory=dict)
    """Per-round value of each metric with a ``round_key``, in the metric's unit."""

    def __len__(self) -> int:
        return len(self.wall_ns)

    def series(self, key: str, ok_only: bool = True) -> list[float]:
        """A metric's per-round values (``wall`` in seconds), successful rounds only."""
        if key == "wall":
            raw: list[float | None] = [w / 1e9 for w in self.wall_ns]
        else:
            raw = self.values.get(key, [])
        return [
            float(v)
            for v, good in zip(raw, self.ok, strict=False)
            if v is not None and (good or not ok_only)
        ]

    def to_json(self) -> dict[str, Any]:
        return {
            "unit": {"t_start_s": "s (perf_counter)", "wall_ns": "ns"}
            | {k: metric(k).unit for k in self.values},
            "t_start_s": self.t_start_s,
            "wall_ns": self.wall_ns,
            "ok": self.ok,
            "values": self.values,
        }

    @classmethod
    def from_json(cls, data: object, where: str) -> Rounds:
        d = expect(data, dict, where)
        units = expect(d.get("unit") or {}, dict, f"{where}.unit")
        for key, want in (
            {"t_start_s": "s (perf_counter)", "wall_ns": "ns"}
            | {k: metric(k).unit for k in units if k in METRICS}
        ).items():
            if key in units:
                _unit(expect(units[key], str, f"{where}.unit.{key}"), want, f"{where}.unit.{key}")
        wall_raw = numbers(required(d, "wall_ns", list, where), f"{where}.wall_ns")
        if None in wall_raw:
            raise SchemaError(f"{where}.wall_ns[{wall_raw.index(None)}] is missing")
        wall = [int(w or 0) for w in wall_raw]
        ok = [bool(expect(v, bool, f"{where}.ok")) for v in required(d, "ok", list, where)]
        starts = [float(v or 0.0) for v in numbers(d.get("t_start_s") or [], f"{where}.t_start_s")]
        if len(ok) != len(wall):
            raise SchemaError(f"{where}: {len(wall)} wall times but {len(ok)} ok flags")
        values = {
            str(k): numbers(v, f"{where}.values.{k}", signed=METRICS[k].signed)
            for k, v in expect(d.get("values") or {}, dict, f"{where}.values").items()
            if k in METRICS
        }
        for key, series in values.items():
            if len(series) != len(wall):
                raise SchemaError(
                    f"{where}.values.{key}: {len(series)} values but {len(wall)} rounds"
                )
        return cls(starts, wall, ok, values)


def _unit(found: str, want: str, where: str) -> str:
    """A unit a result file gives, refused where it is not the one this vcsbench reads the
    figure in (a number in another unit would be read as if it were in this one)."""
    if found and found != want:
        raise SchemaError(f"{where}: unit {found!r} is not {want!r}, the unit this vcsbench reads")
    return want


MAX_ROUNDS = 10**9
"""More rounds than any run makes (a million repositories is the largest asked of it)."""


@dataclass(frozen=True)
class RoundError:
    round: int
    error: str
