"""A load run in the result model: what ``vcsbench load`` measured, per access path and step.

A load result file holds one object, ``vcsbench_load`` (format ``LOAD_SCHEMA``): the run's
plan and command, the machine, and per access path (``loads``) its steps' figures, its
capacity and the raw session records the figures were computed from. :func:`parse_load`
reads it into a :class:`Load`, which a :class:`~vcsbench.results.model.Run` carries beside
(instead of) benchmarks, so ``report`` and ``compare`` read load runs through the same
loader, with the same one-line errors for a damaged file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from vcsbench.results.environment import FilesystemInfo
from vcsbench.results.load_step import MAX_KINDS, LoadStep
from vcsbench.results.schema import (
    SchemaError,
    count,
    expect,
    number,
    numbers,
    optional,
    optional_count,
    optional_number,
    required,
)

LOAD_SCHEMA = 1
LOAD_KEY = "vcsbench_load"
RAW_KEYS = ("step", "t_start", "latency_s", "error")


def bandwidth_text(kbit: float) -> str:
    if kbit >= 1000:
        return f"{kbit / 1000:g} Mbit/s"
    return f"{kbit:g} kbit/s"


def distance_label(rtt_ms: float, bandwidth_kbit: float | None) -> str:
    """``rtt 50 ms`` (``, 100 Mbit/s``): a distance as every report names it."""
    text = f"rtt {rtt_ms:g} ms"
    return text + (f", {bandwidth_text(bandwidth_kbit)}" if bandwidth_kbit is not None else "")


@dataclass(frozen=True)
class LoadDistance:
    """The distance put between a path's clients and its server, and what was measured
    of it before the load (None: not measured, the path could not be run)."""

    rtt_ms: float
    bandwidth_kbit: float | None = None
    measured_rtt_ms: float | None = None
    measured_bandwidth_kbit: float | None = None
    within_tolerance: bool | None = None
    method: str = ""

    @property
    def label(self) -> str:
        return distance_label(self.rtt_ms, self.bandwidth_kbit)

    @classmethod
    def from_json(cls, data: object, where: str) -> LoadDistance:
        d = expect(data, dict, where)
        found = optional(d, "calibration", dict, where, None) or {}
        inner = f"{where}.calibration"
        return cls(
            rtt_ms=number(d, "rtt_ms", where),
            bandwidth_kbit=optional_number(d, "bandwidth_kbit", where),
            measured_rtt_ms=optional_number(found, "measured_rtt_ms", inner),
            measured_bandwidth_kbit=optional_number(found, "measured_bandwidth_kbit", inner),
            within_tolerance=optional(found, "within_tolerance", bool, inner, None),
            method=optional(found, "method", str, inner, ""),
        )


@dataclass(frozen=True)
class Capacity:
    """The highest step by the rule in ``rule`` (throughput still rising, p95 within a
    bound, no error); ``stopped``: what ended it."""

    level: float | None
    ops_per_s: float | None = None
    p95_ms: float | None = None
    rule: str = ""
    reason: str = ""
    stopped: str = ""

    @classmethod
    def from_json(cls, data: object, where: str) -> Capacity:
        d = expect(data, dict, where)
        return cls(
            level=optional_number(d, "level", where),
            ops_per_s=optional_number(d, "ops_per_s", where),
            p95_ms=optional_number(d, "p95_ms", where),
            rule=optional(d, "rule", str, where, ""),
            reason=optional(d, "reason", str, where, ""),
            stopped=optional(d, "stopped", str, where, ""),
        )


MAX_SENTENCE = 1000
"""A path's verification sentence read from a file, at most (characters)."""
MAX_VERSIONS = 20
"""A path's server packages read from a file, at most."""


@dataclass
class LoadPath:
    """One access path's load, in a sandbox of its own."""

    path: str
    vcs: str
    filesystem: FilesystemInfo | None
    """None for a path whose sandbox could not be made."""
    steps: list[LoadStep]
    capacity: Capacity
    raw: dict[str, list[Any]]
    """Every session: its step, latency, error kind (None if it succeeded), start times."""
    sampler: list[dict[str, Any]] = field(default_factory=list)
    server: dict[str, Any] | None = None
    verified_repositories: int = 0
    verify_failures: list[str] = field(default_factory=list)
    verify_failure_count: int = 0
    verification: str = ""
    """What reading the repositories back found, in the scenario's own sentence (files
    from before it was written: none)."""
    harness: dict[str, Any] = field(default_factory=dict)
    error_details: list[Any] = field(default_factory=list)
    locust_workers: int = 0
    workers_lost: list[str] = field(default_factory=list)
    failure: str = ""
    """Why the path could not be run (its steps, if any, finished before)."""
    distance: LoadDistance | None = None

    @property
    def label(self) -> str:
        """The path as reports name it: with its distance where it was run at one."""
        return self.path + (f" at {self.distance.label}" if self.distance is not None else "")

    @property
    def fs(self) -> str:
        return self.filesystem.spec if self.filesystem is not None else "?"

    @property
    def server_versions(self) -> dict[str, str]:
        """Its server's packages and their versions, as the run found them installed
        ({} for a local path, or a file from before they were recorded); a file's odd
        entries are left out, never trusted."""
        found = (self.server or {}).get("versions")
        if not isinstance(found, dict):
            return {}
        return {
            k[:80]: v[:80]
            for k, v in list(found.items())[:MAX_VERSIONS]
            if isinstance(k, str) and isinstance(v, str)
        }

    @classmethod
    def from_json(cls, data: object, where: str) -> LoadPath:
        d = expect(data, dict, where)
        raw = expect(d.get("raw") or {k: [] for k in RAW_KEYS}, dict, f"{where}.raw")
        if raw:
            sizes = {len(expect(raw.get(k), list, f"{where}.raw.{k}")) for k in RAW_KEYS}
            if len(sizes) != 1:
                raise SchemaError(f"{where}.raw: its {', '.join(RAW_KEYS)} lists differ in length")
            numbers(raw["latency_s"], f"{where}.raw.latency_s")
        steps = expect(d.get("steps"), list, f"{where}.steps")
        failure = optional(d, "failure", str, where, "")
        return cls(
            path=required(d, "path", str, where),
            vcs=optional(d, "vcs", str, where, ""),
            filesystem=None
            if failure and d.get("filesystem") is None
            else FilesystemInfo.from_json(d.get("filesystem"), f"{where}.filesystem"),
            steps=[LoadStep.from_json(s, f"{where}.steps[{i}]") for i, s in enumerate(steps)],
            capacity=Capacity(None, reason=failure)
            if failure and d.get("capacity") is None
            else Capacity.from_json(d.get("capacity"), f"{where}.capacity"),
            raw=raw,
            sampler=expect(d.get("sampler") or [], list, f"{where}.sampler"),
            server=optional(d, "server", dict, where, None),
            verified_repositories=count(d, "verified_repositories", where, 0),
            verify_failures=[str(x) for x in optional(d, "verify_failures", list, where, [])],
            verify_failure_count=count(d, "verify_failure_count", where, 0),
            verification=optional(d, "verification", str, where, "")[:MAX_SENTENCE],
            harness=optional(d, "harness", dict, where, {}),
            error_details=optional(d, "error_details", list, where, []),
            locust_workers=count(d, "locust_workers", where, 0),
            workers_lost=[str(x) for x in optional(d, "workers_lost", list, where, [])],
            failure=failure,
            distance=None
            if d.get("distance") is None
            else LoadDistance.from_json(d["distance"], f"{where}.distance"),
        )


@dataclass(frozen=True)
class Arrivals:
    """An open loop's arrival times: evenly spaced (``fixed``) or at Poisson times from a
    seeded source (``poisson:SEED``), as ``--arrivals`` gives them and the result keeps
    them."""

    kind: str = "fixed"
    seed: int = 1

    @property
    def text(self) -> str:
        return f"poisson:{self.seed}" if self.kind == "poisson" else self.kind

    @classmethod
    def parse(cls, text: str) -> Arrivals | None:
        """``fixed``, ``poisson`` or ``poisson:SEED`` (a whole number); None: not one."""
        kind, sep, seed = text.strip().partition(":")
        if kind not in ("fixed", "poisson") or (sep and (kind == "fixed" or not seed.isdigit())):
            return None
        return cls(kind, int(seed) if sep else 1)


@dataclass
class Load:
    """A load run's plan and its access paths' results."""

    scenario: str
    shape: str
    students: int
    payload: str
    precreate: bool
    step_seconds: float
    capacity_factor: float
    latency: str
    """How a session's latency was measured, in words."""
    paths: list[LoadPath]
    max_clients: int | None = None
    history: int | None = None
    step_ops: int = 0
    interrupted: str = ""
    session: str = ""
    """What a session was, in words (written by the scenario that ran)."""
    age: int = 0
    """Repositories the server held before the load (``--age``)."""
    population: str = ""
    """What they were (``--age term:...``); empty: alike, as created."""
    into_term: bool = False
    """The students committed into their own repositories of the term (files before
    that: into new repositories of their own, beside the term's)."""
    arrivals: Arrivals = field(default_factory=Arrivals)
    """Open loop: how sessions arrived (files before ``--arrivals``: fixed)."""
    think_s: tuple[float, float] | None = None
    """Closed loop: each client's pause between its sessions (low, high); None: none."""
    mix: dict[str, int] = field(default_factory=dict)
    """Mixed: each kind of session and its weight ({} for another scenario)."""

    @classmethod
    def from_json(cls, data: object, where: str) -> Load:
        d = expect(data, dict, where)
        paths = expect(d.get("loads"), list, f"{where}.loads")
        return cls(
            scenario=required(d, "scenario", str, where),
            shape=required(d, "shape", str, where),
            students=count(d, "students", where),
            payload=required(d, "payload", str, where),
            precreate=required(d, "precreate", bool, where),
            step_seconds=number(d, "step_seconds", where),
            capacity_factor=number(d, "capacity_factor", where),
            latency=optional(d, "latency", str, where, ""),
            paths=[LoadPath.from_json(p, f"{where}.loads[{i}]") for i, p in enumerate(paths)],
            max_clients=optional_count(d, "max_clients", where),
            history=optional_count(d, "history", where),
            step_ops=count(d, "step_ops", where, 0),
            interrupted=optional(d, "interrupted", str, where, ""),
            session=optional(d, "session", str, where, ""),
            age=count(d, "age", where, 0),
            population=optional(d, "population", str, where, "") or "",
            into_term=bool(optional(d, "into_term", bool, where, False)),
            arrivals=_arrivals(optional(d, "arrivals", str, where, "") or "fixed", where),
            think_s=_pause(d.get("think_s"), f"{where}.think_s"),
            mix=_mix(d.get("mix"), f"{where}.mix"),
        )


def _arrivals(text: str, where: str) -> Arrivals:
    found = Arrivals.parse(text[:40])
    if found is None:
        raise SchemaError(f"{where}.arrivals: {text[:40]!r} is not fixed, poisson or poisson:SEED")
    return found


MAX_WEIGHT = 1000
"""A mixed load's largest weight of a kind (``--mix``), and a result file's."""


def _mix(value: object, where: str) -> dict[str, int]:
    found = expect(value or {}, dict, where)
    if len(found) > MAX_KINDS or not all(
        isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_WEIGHT
        for v in found.values()
    ):
        raise SchemaError(
            f"{where}: not kinds of session with whole weights from 0 to {MAX_WEIGHT}"
        )
    return {str(k)[:40]: int(v) for k, v in found.items()}


def _pause(value: object, where: str) -> tuple[float, float] | None:
    if value is None:
        return None
    pair = expect(value, list, where)
    if len(pair) != 2 or not all(
        isinstance(x, (int, float)) and not isinstance(x, bool) and 0 <= x <= 3600 for x in pair
    ):
        raise SchemaError(f"{where}: not a pause [low, high] in seconds from 0 to 3600")
    return float(pair[0]), float(pair[1])


def is_load_document(document: object) -> TypeGuard[dict[str, Any]]:
    return isinstance(document, dict) and LOAD_KEY in document


def parse_load(document: Mapping[str, Any]) -> tuple[Load, dict[str, Any], str, str]:
    """The :class:`Load` of a load document, its machine facts, command and run id."""
    facts = expect(document[LOAD_KEY], dict, LOAD_KEY)
    version = facts.get("schema_version")
    if version != LOAD_SCHEMA:
        raise SchemaError(
            f"load result format {version!r}; this vcsbench reads format {LOAD_SCHEMA}"
        )
    load = Load.from_json(facts, LOAD_KEY)
    machine = optional(facts, "machine", dict, LOAD_KEY, {})
    command = optional(facts, "command", str, LOAD_KEY, "")
    return load, machine, command, optional(facts, "run_id", str, LOAD_KEY, "")
