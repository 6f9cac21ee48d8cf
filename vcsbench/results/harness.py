"""What a benchmark records of its own harness, typed: part of the result model.

Beside its figures a benchmark keeps how they were taken: the harness's cost around the
timed operations, where its rounds ran (its own process or workers), what was filled in
first and replayed, the check of the harness against a bare loop, a remote variant's
server, another release's environment, pytest-benchmark's rules it followed, its
sandbox's teardown, and, for a member of an interleaved group, the blocks it ran in. The
reader checks each field where it reads it (a result file is data from anywhere); parts
whose inner shape only people read (the server, the environment, the harness check) stay
mappings, checked to be mappings; keys this version does not know are kept as read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vcsbench.results.schema import SchemaError, count, expect, optional, optional_number

KNOWN = (
    "probe_overhead_us_per_round",
    "benchmark_wall_s",
    "ops_wall_s",
    "footprint_s",
    "harness_s_per_round",
    "sampler",
    "workers",
    "note",
    "age",
    "replay",
    "perturbation",
    "server",
    "environment",
    "pytest_benchmark_rules",
    "teardown_s",
    "teardown_note",
    "interleaved",
    "kept",
)
MAX_BLOCKS = 100_000


@dataclass(frozen=True)
class Interleaved:
    """A member of an interleaved group: the group's members, each of its blocks' rounds,
    its place in each block's order and its median there (None: no round succeeded)."""

    variants: tuple[str, ...]
    blocks: int
    rounds: tuple[tuple[int, int], ...]
    position: tuple[int, ...]
    median_ms: tuple[float | None, ...]
    order_seed: int | None = None
    cpu: int | None = None
    process: str = ""
    method: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "variants": list(self.variants),
            "blocks": self.blocks,
            "rounds": [list(r) for r in self.rounds],
            "position": list(self.position),
            "median_ms": list(self.median_ms),
        }
        for key in ("order_seed", "cpu", "process", "method"):
            value = getattr(self, key)
            if value not in (None, ""):
                out[key] = value
        return out

    @classmethod
    def from_json(cls, data: object, where: str) -> Interleaved:
        d = expect(data, dict, where)
        medians = expect(d.get("median_ms"), list, f"{where}.median_ms")
        if len(medians) > MAX_BLOCKS:
            raise SchemaError(
                f"{where}.median_ms holds {len(medians)} blocks, at most {MAX_BLOCKS}"
            )
        rounds = expect(d.get("rounds") or [], list, f"{where}.rounds")
        return cls(
            variants=tuple(
                expect(v, str, f"{where}.variants[]")
                for v in expect(d.get("variants") or [], list, f"{where}.variants")
            ),
            blocks=count(d, "blocks", where, len(medians)),
            rounds=tuple(
                (
                    int(expect(r[0], int, f"{where}.rounds[]")),
                    int(expect(r[1], int, f"{where}.rounds[]")),
                )
                for r in (expect(x, list, f"{where}.rounds[]") for x in rounds)
                if len(r) == 2
            ),
            position=tuple(
                int(expect(p, int, f"{where}.position[]"))
                for p in expect(d.get("position") or [], list, f"{where}.position")
            ),
            median_ms=tuple(
                None if m is None else float(expect(m, (int, float), f"{where}.median_ms[]"))
                for m in medians
            ),
            order_seed=optional(d, "order_seed", int, where, None),
            cpu=optional(d, "cpu", int, where, None),
            process=optional(d, "process", str, where, ""),
            method=optional(d, "method", str, where, ""),
        )


@dataclass
class Harness:
    """A benchmark's record of its harness (see the module's docstring)."""

    benchmark_wall_s: float | None = None
    ops_wall_s: float | None = None
    footprint_s: float | None = None
    harness_s_per_round: float | None = None
    probe_overhead_us_per_round: float | None = None
    sampler: str = ""
    workers: dict[str, Any] = field(default_factory=dict)
    note: str = ""
    age: dict[str, Any] | None = None
    replay: dict[str, Any] | None = None
    perturbation: dict[str, Any] | None = None
    server: dict[str, Any] | None = None
    environment: dict[str, Any] | None = None
    pytest_benchmark_rules: dict[str, Any] | None = None
    teardown_s: float | None = None
    teardown_note: str = ""
    interleaved: Interleaved | None = None
    kept: dict[str, Any] | None = None
    """How the footprint as kept was had: by what, of how many repositories."""
    other: dict[str, Any] = field(default_factory=dict)
    """Keys of another version, kept as read."""
    read_keys: frozenset[str] | None = None
    """The keys the record had where it was read from a file (None: made here): written
    back, it has those and the ones set since, so a file reads and writes back the same."""

    def to_json(self) -> dict[str, Any]:
        made = self._made()
        if self.read_keys is not None:
            made = {k: v for k, v in made.items() if k in self.read_keys or v not in (None, "", {})}
        return {**self.other, **made}

    def _made(self) -> dict[str, Any]:
        """The record as this version writes it."""
        out: dict[str, Any] = {
            "probe_overhead_us_per_round": self.probe_overhead_us_per_round,
            "benchmark_wall_s": self.benchmark_wall_s,
            "ops_wall_s": self.ops_wall_s,
            "footprint_s": self.footprint_s,
            "harness_s_per_round": self.harness_s_per_round,
            "sampler": self.sampler,
            "workers": self.workers,
            "note": self.note,
        }
        for key in ("age", "replay", "perturbation", "server", "environment", "kept"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.pytest_benchmark_rules:
            out["pytest_benchmark_rules"] = self.pytest_benchmark_rules
        out["teardown_s"] = self.teardown_s
        if self.teardown_note:
            out["teardown_note"] = self.teardown_note
        if self.interleaved is not None:
            out["interleaved"] = self.interleaved.to_json()
        return out

    @classmethod
    def from_json(cls, data: object, where: str) -> Harness:
        d = expect(data if data is not None else {}, dict, where)

        def mapping(key: str) -> dict[str, Any] | None:
            value = d.get(key)
            return None if value is None else dict(expect(value, dict, f"{where}.{key}"))

        interleaved = d.get("interleaved")
        return cls(
            benchmark_wall_s=optional_number(d, "benchmark_wall_s", where),
            ops_wall_s=optional_number(d, "ops_wall_s", where),
            footprint_s=optional_number(d, "footprint_s", where),
            harness_s_per_round=optional_number(d, "harness_s_per_round", where, signed=True),
            probe_overhead_us_per_round=optional_number(d, "probe_overhead_us_per_round", where),
            sampler=optional(d, "sampler", str, where, ""),
            workers=mapping("workers") or {},
            note=optional(d, "note", str, where, ""),
            age=mapping("age"),
            replay=mapping("replay"),
            perturbation=mapping("perturbation"),
            server=mapping("server"),
            environment=mapping("environment"),
            pytest_benchmark_rules=mapping("pytest_benchmark_rules"),
            teardown_s=optional_number(d, "teardown_s", where),
            teardown_note=optional(d, "teardown_note", str, where, ""),
            interleaved=None
            if interleaved is None
            else Interleaved.from_json(interleaved, f"{where}.interleaved"),
            kept=mapping("kept"),
            other={k: v for k, v in d.items() if k not in KNOWN},
            read_keys=frozenset(d),
        )
