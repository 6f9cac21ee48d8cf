"""The result model: one run of benchmarks, and the JSON it is stored as.

A result file is pytest-benchmark JSON (so pytest-benchmark's own ``compare`` reads it).
vcsbench's part of it is owned here and nowhere else:

- ``document["vcsbench"]``: :class:`Run` facts (version, schema, command, run id) and
  the benchmarks pytest-benchmark cannot hold (every round failed: it has no sample);
- ``benchmarks[i]["extra_info"]["vcsbench"]``: one :class:`Benchmark`;
- ``machine_info["vcsbench"]``: :class:`Machine`.

One clock: every time figure comes from ``Rounds.wall_ns`` and ``Rounds.ok``, the
runner's ``perf_counter_ns`` around the operation alone. pytest-benchmark's ``stats`` are
fed exactly the successful rounds' wall times and are never read back.

Format history (``SCHEMA_VERSION``):

1. first version: samples read from pytest-benchmark's ``stats.data``; ``rounds`` held
   ``cpu_s``, ``io_write_logical`` and ``io_write_device`` beside ``wall_ns``.
2. ``rounds.values`` keyed by metric name; footprint split into content, directories
   and allocated, scratch space apart; the backend's variant label; ``repos_ok``;
   ``device_shared`` for ``dir:`` sandboxes; all-failed benchmarks kept in
   ``document["vcsbench"]["failed_benchmarks"]``; ``rounds_asked`` and ``partial`` for a
   benchmark an interrupt cut short. :func:`migrate_benchmark` reads 1.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from vcsbench.results.metrics import METRICS, metric

if TYPE_CHECKING:
    from vcsbench.results.load import Load

SCHEMA_VERSION = 2
READABLE_SCHEMAS = (1, 2)
CLOCK = (
    "perf_counter_ns around the operation alone; pytest-benchmark's stats hold the same "
    "successful rounds' wall times"
)


class SchemaError(ValueError):
    """A result document that does not have the shape of this schema; one line."""


def _expect(value: object, kind: type | tuple[type, ...], where: str) -> Any:
    if isinstance(value, bool) and kind in (int, float, (int, float)):
        raise SchemaError(f"{where} is a boolean, expected a number")
    if value is None:
        raise SchemaError(f"{where} is missing")
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise SchemaError(f"{where} is {type(value).__name__}, expected {names}")
    return value


def _field(data: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in data:
        raise SchemaError(f"{where} lacks {key!r}")
    return _expect(data[key], kind, f"{where}.{key}")


def _optional(
    data: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str, default: Any
) -> Any:
    value = data.get(key, default)
    if value is None:
        return default
    return _expect(value, kind, f"{where}.{key}")


def _str_map(value: object, where: str) -> dict[str, str]:
    data = _expect(value, dict, where)
    return {str(k): str(v) for k, v in data.items()}


def _numbers(value: object, where: str) -> list[float | None]:
    items = _expect(value, list, where)
    out: list[float | None] = []
    for i, item in enumerate(items):
        out.append(None if item is None else float(_expect(item, (int, float), f"{where}[{i}]")))
    return out


@dataclass(frozen=True)
class BackendInfo:
    name: str
    vcs: str
    options: dict[str, str]
    versions: dict[str, str]
    variant: str = ""
    """The label rows carry: the name, with the options that differ from the defaults."""
    durability: str = ""
    """What the variant does to make a commit survive a crash (fsync or not)."""

    @property
    def label(self) -> str:
        return self.variant or self.name

    @classmethod
    def from_json(cls, data: object, where: str) -> BackendInfo:
        d = _expect(data, dict, where)
        return cls(
            name=_field(d, "name", str, where),
            vcs=_optional(d, "vcs", str, where, ""),
            options=_str_map(d.get("options") or {}, f"{where}.options"),
            versions=_str_map(d.get("versions") or {}, f"{where}.versions"),
            variant=_optional(d, "variant", str, where, ""),
            durability=_optional(d, "durability", str, where, ""),
        )


@dataclass(frozen=True)
class PayloadInfo:
    name: str
    description: str
    files: int
    bytes: int
    sha256: str
    seed: int | None = None

    @classmethod
    def from_json(cls, data: object, where: str) -> PayloadInfo:
        d = _expect(data, dict, where)
        return cls(
            name=_field(d, "name", str, where),
            description=_optional(d, "description", str, where, ""),
            files=_optional(d, "files", int, where, 0),
            bytes=_optional(d, "bytes", int, where, 0),
            sha256=_optional(d, "sha256", str, where, ""),
            seed=_optional(d, "seed", int, where, None),
        )


@dataclass(frozen=True)
class FilesystemInfo:
    spec: str
    kind: str
    fstype: str
    mount_options: str = ""
    mountpoint: str = ""
    device: str | None = None
    device_stat_path: str | None = None
    image_path: str | None = None
    image_size_bytes: int | None = None
    kernel: str = ""
    device_shared: bool = False
    """dir: sandboxes only: device counters were taken from a device others also use."""
    disk: str = ""
    """The disk under the image or directory ("memory" for tmpfs)."""

    @classmethod
    def from_json(cls, data: object, where: str) -> FilesystemInfo:
        d = _expect(data, dict, where)
        return cls(
            spec=_field(d, "spec", str, where),
            kind=_optional(d, "kind", str, where, ""),
            fstype=_optional(d, "fstype", str, where, ""),
            mount_options=_optional(d, "mount_options", str, where, ""),
            mountpoint=_optional(d, "mountpoint", str, where, ""),
            device=_optional(d, "device", str, where, None),
            device_stat_path=_optional(d, "device_stat_path", str, where, None),
            image_path=_optional(d, "image_path", str, where, None),
            image_size_bytes=_optional(d, "image_size_bytes", int, where, None),
            kernel=_optional(d, "kernel", str, where, ""),
            device_shared=_optional(d, "device_shared", bool, where, False),
            disk=_optional(d, "disk", str, where, ""),
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
    def from_json(cls, data: object, where: str) -> Metric:
        d = _expect(data, dict, where)
        total = d.get("total")
        per_repo = d.get("per_repo")
        return cls(
            unit=_optional(d, "unit", str, where, ""),
            total=None if total is None else float(_expect(total, (int, float), where)),
            per_repo=None if per_repo is None else float(_expect(per_repo, (int, float), where)),
            reason=_optional(d, "reason", str, where, ""),
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
        d = _expect(data, dict, where)
        wall = [int(_expect(w, (int, float), where)) for w in _field(d, "wall_ns", list, where)]
        ok = [bool(_expect(v, bool, f"{where}.ok")) for v in _field(d, "ok", list, where)]
        starts = [float(v or 0.0) for v in _numbers(d.get("t_start_s") or [], f"{where}.t")]
        if len(ok) != len(wall):
            raise SchemaError(f"{where}: {len(wall)} wall times but {len(ok)} ok flags")
        values = {
            str(k): _numbers(v, f"{where}.values.{k}")
            for k, v in _expect(d.get("values") or {}, dict, f"{where}.values").items()
            if k in METRICS
        }
        for key, series in values.items():
            if len(series) != len(wall):
                raise SchemaError(
                    f"{where}.values.{key}: {len(series)} values but {len(wall)} rounds"
                )
        return cls(starts, wall, ok, values)


@dataclass(frozen=True)
class RoundError:
    round: int
    error: str


@dataclass
class Benchmark:
    """One benchmark: N rounds of one operation, backend variant, payload and sandbox."""

    name: str
    backend: BackendInfo
    op: str
    payload: PayloadInfo
    filesystem: FilesystemInfo
    repos: int
    """Rounds run (each on its own repository)."""
    errors: int
    verified: int
    metrics: dict[str, Metric]
    rounds: Rounds
    cache: str = "warm"
    cache_note: str = ""
    verify: str = "all"
    error_samples: list[RoundError] = field(default_factory=list)
    error_kinds: dict[str, int] = field(default_factory=dict)
    """How many failed rounds had each kind of error."""
    diagnosis: str = ""
    """What the failures have in common, where vcsbench knows (a full sandbox)."""
    floor: dict[str, Any] = field(default_factory=dict)
    harness: dict[str, Any] = field(default_factory=dict)
    sampler: dict[str, Any] = field(default_factory=dict)
    rounds_asked: int = 0
    age: int = 0
    """Repositories the sandbox was filled with before the first round (``--age``)."""
    layout: str = "flat"
    """Where repositories go: ``flat`` (one directory) or ``hashed`` (``@hashed/ab/cd/``)."""
    """Rounds the benchmark was to run; more than ``repos`` when it was interrupted."""
    schema_version: int = SCHEMA_VERSION
    source: str = ""
    """The file it was read from (not stored)."""
    machine: str = ""
    """The machine it ran on, as ``Machine.description`` (not stored: the run's)."""

    # -- identity --------------------------------------------------------------------

    @property
    def label(self) -> str:
        return self.backend.label

    @property
    def fs(self) -> str:
        return self.filesystem.spec

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.op, self.payload.name, self.fs, self.label)

    # -- figures, all from the one clock ------------------------------------------------

    @property
    def partial(self) -> bool:
        """Interrupted: fewer rounds than asked (the finished ones are kept)."""
        return self.rounds_asked > self.repos

    @property
    def repos_text(self) -> str:
        return (
            f"{self.repos:,} of {self.rounds_asked:,} (partial)"
            if self.partial
            else str(self.repos)
        )

    @property
    def repos_ok(self) -> int:
        return sum(self.rounds.ok)

    @property
    def failed(self) -> bool:
        return self.repos_ok == 0

    @property
    def samples_s(self) -> list[float]:
        """Wall time of each successful round, in seconds."""
        return self.rounds.series("wall")

    def quantile_ms(self, q: float) -> float | None:
        ordered = sorted(self.samples_s)
        if not ordered:
            return None
        position = q * (len(ordered) - 1)
        low = int(position)
        high = min(low + 1, len(ordered) - 1)
        return (ordered[low] + (ordered[high] - ordered[low]) * (position - low)) * 1000

    @property
    def median_ms(self) -> float | None:
        samples = self.samples_s
        return statistics.median(samples) * 1000 if samples else None

    @property
    def iqr_ms(self) -> float | None:
        q1, q3 = self.quantile_ms(0.25), self.quantile_ms(0.75)
        return None if q1 is None or q3 is None else q3 - q1

    @property
    def total_ms(self) -> float | None:
        samples = self.samples_s
        return sum(samples) * 1000 if samples else None

    def metric(self, name: str) -> Metric:
        metric(name)  # a name outside the registry is a programming error
        return self.metrics.get(name) or Metric.missing(name, "not recorded in this result")

    def per_repo(self, name: str) -> float | None:
        return self.metric(name).per_repo

    @property
    def floor_ratio(self) -> float | None:
        value = self.floor.get("ratio")
        return float(value) if isinstance(value, (int, float)) else None

    # -- JSON ---------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "name": self.name,
            "op": self.op,
            "backend": asdict(self.backend),
            "payload": asdict(self.payload),
            "filesystem": asdict(self.filesystem),
            "cache": self.cache,
            "cache_note": self.cache_note,
            "verify": self.verify,
            "clock": CLOCK,
            "repos": self.repos,
            "rounds_asked": max(self.rounds_asked, self.repos),
            "age": self.age,
            "layout": self.layout,
            "partial": self.partial,
            "repos_ok": self.repos_ok,
            "verified": self.verified,
            "errors": self.errors,
            "error_samples": [asdict(e) for e in self.error_samples],
            "error_kinds": self.error_kinds,
            "diagnosis": self.diagnosis,
            "metrics": {k: v.to_json() for k, v in self.metrics.items()},
            "floor": self.floor,
            "harness": self.harness,
            "rounds": self.rounds.to_json(),
            "sampler": self.sampler,
        }

    @classmethod
    def from_json(cls, data: object, where: str, source: str = "") -> Benchmark:
        d = _expect(data, dict, where)
        version = d.get("schema_version")
        if version not in READABLE_SCHEMAS:
            raise SchemaError(
                f"{where}: vcsbench schema {version!r} is not one this version reads "
                f"({', '.join(map(str, READABLE_SCHEMAS))})"
            )
        if version == 1:
            d = migrate_benchmark(d)
        metrics = {
            str(k): Metric.from_json(v, f"{where}.metrics.{k}")
            for k, v in _field(d, "metrics", dict, where).items()
            if k in METRICS
        }
        samples = [
            RoundError(
                int(_field(e, "round", int, f"{where}.error_samples")),
                str(_field(e, "error", str, f"{where}.error_samples")),
            )
            for e in _optional(d, "error_samples", list, where, [])
        ]
        return cls(
            name=_optional(d, "name", str, where, ""),
            backend=BackendInfo.from_json(d.get("backend"), f"{where}.backend"),
            op=_field(d, "op", str, where),
            payload=PayloadInfo.from_json(d.get("payload"), f"{where}.payload"),
            filesystem=FilesystemInfo.from_json(d.get("filesystem"), f"{where}.filesystem"),
            repos=_field(d, "repos", int, where),
            rounds_asked=_optional(d, "rounds_asked", int, where, 0),
            age=_optional(d, "age", int, where, 0),
            layout=_optional(d, "layout", str, where, "flat"),
            errors=_field(d, "errors", int, where),
            verified=_optional(d, "verified", int, where, 0),
            metrics=metrics,
            rounds=Rounds.from_json(d.get("rounds"), f"{where}.rounds"),
            cache=_optional(d, "cache", str, where, "warm"),
            cache_note=_optional(d, "cache_note", str, where, ""),
            verify=_optional(d, "verify", str, where, "all"),
            error_samples=samples,
            error_kinds={
                str(k): int(_expect(v, int, f"{where}.error_kinds"))
                for k, v in _optional(d, "error_kinds", dict, where, {}).items()
            },
            diagnosis=_optional(d, "diagnosis", str, where, ""),
            floor=_optional(d, "floor", dict, where, {}),
            harness=_optional(d, "harness", dict, where, {}),
            sampler=_optional(d, "sampler", dict, where, {}),
            schema_version=SCHEMA_VERSION,
            source=source,
        )


def migrate_benchmark(old: Mapping[str, Any]) -> dict[str, Any]:
    """A schema-1 benchmark in schema 2's shape; what 1 did not record is marked missing."""
    new = dict(old)
    rounds = dict(old.get("rounds") or {})
    values: dict[str, Any] = {}
    for old_key, new_key in (
        ("cpu_s", "cpu"),
        ("io_write_logical", "io_write_logical"),
        ("io_write_device", "io_write_device"),
    ):
        if old_key in rounds:
            values[new_key] = rounds.pop(old_key)
    rounds["values"] = values
    new["rounds"] = rounds
    metrics = dict(old.get("metrics") or {})
    user, sys_ = metrics.get("cpu_user") or {}, metrics.get("cpu_sys") or {}
    if user.get("total") is not None and sys_.get("total") is not None:
        repos = int(old.get("repos") or 0)
        total = float(user["total"]) + float(sys_["total"])
        metrics["cpu"] = {"unit": "s", "total": total, "per_repo": total / repos if repos else None}
    not_in_1 = "not recorded by schema 1 (apparent bytes then mixed content and directories)"
    for name in ("footprint_content", "footprint_dirs", "scratch_allocated", "scratch_inodes"):
        metrics[name] = {"unit": metric(name).unit, "total": None, "per_repo": None}
        metrics[name]["reason"] = not_in_1
    new["metrics"] = metrics
    new["schema_version"] = SCHEMA_VERSION
    return new


@dataclass(frozen=True)
class Machine:
    cpu_model: str = ""
    cpu_count: int = 0
    memory_bytes: int = 0
    kernel: str = ""
    distribution: str = ""
    python: str = ""
    is_root: bool = False
    backend_versions: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def description(self) -> str:
        gib = self.memory_bytes / (1 << 30)
        return f"{self.cpu_model or '?'}, {self.cpu_count} CPUs, {gib:,.1f} GiB memory"

    @classmethod
    def from_json(cls, data: object, where: str) -> Machine:
        d = _expect(data if data is not None else {}, dict, where)
        versions = _optional(d, "backend_versions", dict, where, {})
        return cls(
            cpu_model=_optional(d, "cpu_model", str, where, ""),
            cpu_count=_optional(d, "cpu_count", int, where, 0),
            memory_bytes=_optional(d, "memory_bytes", int, where, 0),
            kernel=_optional(d, "kernel", str, where, ""),
            distribution=_optional(d, "distribution", str, where, ""),
            python=_optional(d, "python", str, where, ""),
            is_root=_optional(d, "is_root", bool, where, False),
            backend_versions={
                str(k): _str_map(v, f"{where}.backend_versions") for k, v in versions.items()
            },
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Run:
    """One result file: the benchmarks of one run and where they were taken, or, for a
    run of ``vcsbench load``, its :class:`~vcsbench.results.load.Load` (no benchmarks)."""

    path: str
    benchmarks: list[Benchmark]
    machine: Machine
    command: str = ""
    datetime: str = ""
    version: str = ""
    run_id: str = ""
    load: Load | None = None

    @property
    def kind(self) -> str:
        return "load" if self.load is not None else "benchmarks"

    @property
    def name(self) -> str:
        from pathlib import Path

        return Path(self.path).name
