"""The result model: one run of benchmarks, and the JSON it is stored as.

A result file is pytest-benchmark JSON (so pytest-benchmark's own ``compare`` reads it).
Where vcsbench's part of it lives is :mod:`vcsbench.results.layout`'s alone; what each
part holds is this module's: :class:`Run` (the run's facts), :class:`Benchmark` (one
benchmark's), :class:`~vcsbench.results.environment.Machine`.

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

import math
import statistics
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from vcsbench.results.canary import Canary
from vcsbench.results.counted import Counted
from vcsbench.results.environment import (
    BackendInfo,
    FilesystemInfo,
    Machine,
    PayloadInfo,
    history_by_name,
)
from vcsbench.results.harness import Harness
from vcsbench.results.metrics import METRICS, metric
from vcsbench.results.migrate import READABLE_SCHEMAS, SCHEMA_VERSION, migrate_benchmark
from vcsbench.results.rounds import CLOCK, MAX_ROUNDS, Metric, RoundError, Rounds
from vcsbench.results.schema import (
    SchemaError,
    count,
    expect,
    not_negative,
    optional,
    optional_number,
    required,
)
from vcsbench.results.stats import quantile
from vcsbench.results.writers import Writers

if TYPE_CHECKING:
    from vcsbench.results.load import Load
    from vcsbench.results.spread import Spread, SpreadCell


class BenchmarkKey(NamedTuple):
    """What a benchmark is, in whichever run holds it: its operation, payload, filesystem
    (as asked) and variant, in the order reports sort by. Compare pairs two runs'
    benchmarks by it, and the store names a series by it (:func:`vcsbench.store.points.
    series_of`: with the machine and the filesystem as made), which history reads."""

    op: str
    payload: str
    fs: str
    variant: str

    @property
    def text(self) -> str:
        """As a person reads it: variant, operation, payload as shown, filesystem."""
        return f"{self.variant} {self.op} {history_by_name(self.payload)} {self.fs}"


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
    canary: Canary | None = None
    """Fixed filesystem work timed between its rounds (:mod:`vcsbench.results.canary`)."""
    harness: Harness = field(default_factory=Harness)
    sampler: dict[str, Any] = field(default_factory=dict)
    rounds_asked: int = 0
    """Rounds the benchmark was to run; more than ``repos`` when it was interrupted."""
    writers: Writers | None = None
    """Who wrote to the sandbox's device over the benchmark (none without a device)."""
    age: int = 0
    """Repositories the sandbox was filled with before the first round (``--age``)."""
    layout: str = "flat"
    """Where repositories go: ``flat`` (one directory) or ``hashed`` (``@hashed/ab/cd/``)."""
    counted: Counted | None = None
    """Its counted rounds, outside the timed ones (``--counted``): instructions and every
    kind of system call (:mod:`vcsbench.results.counted`); None: none were run."""
    schema_version: int = SCHEMA_VERSION
    source: str = ""
    """The file it was read from (not stored)."""
    machine: str = ""
    """The machine it ran on, as ``Machine.description`` (not stored: the run's)."""
    spread: SpreadCell | None = None
    """Its machine's run-to-run spread for this backend, operation and filesystem type,
    as the run recorded it (not stored: the run's)."""

    # -- identity --------------------------------------------------------------------

    @property
    def label(self) -> str:
        return self.backend.label

    @property
    def case(self) -> str:
        """The benchmark as a person reads it: variant, operation, payload as shown, fs."""
        return self.key.text

    @property
    def fs(self) -> str:
        return self.filesystem.spec

    @property
    def key(self) -> BenchmarkKey:
        return BenchmarkKey(self.op, self.payload.name, self.fs, self.label)

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
        return quantile(ordered, q) * 1000 if ordered else None

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
            "payload": {
                k: v for k, v in asdict(self.payload).items() if k != "history" or v is not None
            },
            "filesystem": self.filesystem.to_json(),
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
            **({"canary": self.canary.to_json()} if self.canary is not None else {}),
            "harness": self.harness.to_json(),
            "rounds": self.rounds.to_json(),
            "sampler": self.sampler,
            **({"writers": self.writers.to_json()} if self.writers is not None else {}),
            **({"counted": self.counted.to_json()} if self.counted is not None else {}),
        }

    @classmethod
    def from_json(cls, data: object, where: str, source: str = "") -> Benchmark:
        d = expect(data, dict, where)
        version = d.get("schema_version")
        if version not in READABLE_SCHEMAS:
            raise SchemaError(
                f"{where}: vcsbench schema {version!r} is not one this version reads "
                f"({', '.join(map(str, READABLE_SCHEMAS))})"
            )
        if version == 1:
            d = migrate_benchmark(d)
        metrics = {
            str(k): Metric.from_json(v, f"{where}.metrics.{k}", str(k))
            for k, v in required(d, "metrics", dict, where).items()
            if k in METRICS
        }
        samples = [
            RoundError(
                count(expect(e, dict, f"{where}.error_samples[{i}]"), "round", where),
                str(required(e, "error", str, f"{where}.error_samples[{i}]")),
            )
            for i, e in enumerate(optional(d, "error_samples", list, where, []))
        ]
        floor = optional(d, "floor", dict, where, {})
        for key in ("ratio", "ms_per_repo"):
            optional_number(floor, key, f"{where}.floor")
        benchmark = cls(
            name=optional(d, "name", str, where, ""),
            backend=BackendInfo.from_json(d.get("backend"), f"{where}.backend"),
            op=required(d, "op", str, where),
            payload=PayloadInfo.from_json(d.get("payload"), f"{where}.payload"),
            filesystem=FilesystemInfo.from_json(d.get("filesystem"), f"{where}.filesystem"),
            repos=count(d, "repos", where),
            rounds_asked=count(d, "rounds_asked", where, 0),
            age=count(d, "age", where, 0),
            layout=optional(d, "layout", str, where, "flat"),
            errors=count(d, "errors", where),
            verified=count(d, "verified", where, 0),
            metrics=metrics,
            rounds=Rounds.from_json(d.get("rounds"), f"{where}.rounds"),
            cache=optional(d, "cache", str, where, "warm"),
            cache_note=optional(d, "cache_note", str, where, ""),
            verify=optional(d, "verify", str, where, "all"),
            error_samples=samples,
            error_kinds={
                str(k): int(not_negative(expect(v, int, f"{where}.error_kinds.{k}"), where))
                for k, v in optional(d, "error_kinds", dict, where, {}).items()
            },
            diagnosis=optional(d, "diagnosis", str, where, ""),
            floor=floor,
            canary=Canary.from_json(d.get("canary"), f"{where}.canary"),
            harness=Harness.from_json(d.get("harness"), f"{where}.harness"),
            sampler=optional(d, "sampler", dict, where, {}),
            writers=None
            if d.get("writers") is None
            else Writers.from_json(d["writers"], f"{where}.writers"),
            counted=Counted.from_json(d.get("counted"), f"{where}.counted"),
            schema_version=SCHEMA_VERSION,
            source=source,
        )
        recorded = len(benchmark.rounds)
        if benchmark.repos > MAX_ROUNDS or (recorded and recorded != benchmark.repos):
            raise SchemaError(
                f"{where}.repos: {benchmark.repos:,} rounds, but {recorded:,} are recorded "
                "(a file vcsbench wrote records every round it counts)"
            )
        _totals_agree(benchmark, where)
        return benchmark


SUMMED = ("cpu", "io_write_logical", "io_read_logical")
"""Metrics whose total is the sum of their successful rounds' values: a file whose total says other
than its rounds would be judged on one by the gate and shown on the other."""
AGREE = 0.01
"""How far a total may be from its rounds' sum: the reference results differ by 0.06 %
at most (a release's environment counts its worker's CPU apart from its rounds')."""


def _totals_agree(benchmark: Benchmark, where: str) -> None:
    for name in SUMMED:
        values = benchmark.rounds.values.get(name)
        total = benchmark.metrics[name].total if name in benchmark.metrics else None
        ok = benchmark.rounds.ok
        kept = [v for v, good in zip(values or [], ok, strict=False) if good]
        if not kept or total is None or None in kept:
            continue
        summed = math.fsum(v for v in kept if v is not None)
        if abs(summed - total) > AGREE * max(abs(summed), abs(total)) + 1e-6:
            raise SchemaError(
                f"{where}.metrics.{name}.total is {total:g}, but its rounds sum to "
                f"{summed:g} (a file vcsbench wrote has its rounds add up to its total)"
            )


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
    spread: Spread | None = None
    """The run-to-run spread of the machine it ran on, as measured before it (the cells
    for its filesystem types; None where none was)."""
    node: str = ""
    """The host name it ran on, as pytest-benchmark recorded it ("" where none was)."""

    @property
    def kind(self) -> str:
        return "load" if self.load is not None else "benchmarks"

    @property
    def name(self) -> str:
        from pathlib import Path

        return Path(self.path).name
