"""One step of a load run in the result model: its sessions' figures (latency
percentiles, throughput, errors), the device's and the generator's counters
(:class:`StepDevice`, :class:`Generator`). The run that holds the steps:
:mod:`vcsbench.results.load`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vcsbench.results.schema import (
    SchemaError,
    count,
    expect,
    not_negative,
    number,
    optional_count,
    optional_number,
    required,
)
from vcsbench.results.writers import Writers

LATENCY_KEYS = ("p50", "p90", "p95", "p99", "max", "mean")


def _counts(value: object, where: str) -> dict[str, int]:
    data = expect(value, dict, where)
    return {
        str(k): int(not_negative(expect(v, int, f"{where}.{k}"), f"{where}.{k}"))
        for k, v in data.items()
    }


@dataclass(frozen=True)
class StepDevice:
    """The sandbox's block device over one step (none on a device others share)."""

    read_bytes: int
    write_bytes: int
    read_requests: int
    write_requests: int
    write_bytes_per_session: float
    write_requests_per_session: float
    server_process_write_bytes: int | None
    """What the server's processes were charged with in /proc; None where unseen."""
    unattributed_share: float | None
    """Of the device's writes, the share no server process wrote (journal, metadata)."""
    throttle_read_ios: int | None = None
    throttle_write_ios: int | None = None
    """Under a storage profile: the IOs its limits counted (submitted, before the block
    layer merged adjacent ones into the device's requests)."""
    flush_requests: int | None = None
    """The device's completed cache flushes over the step, the harness's syncfs excluded
    (None: not counted, an older result or a kernel without the field)."""
    flush_requests_per_session: float | None = None

    @classmethod
    def from_json(cls, data: object, where: str) -> StepDevice:
        d = expect(data, dict, where)
        return cls(
            read_bytes=count(d, "read_bytes", where),
            write_bytes=count(d, "write_bytes", where),
            read_requests=count(d, "read_requests", where),
            write_requests=count(d, "write_requests", where),
            write_bytes_per_session=number(d, "write_bytes_per_session", where),
            write_requests_per_session=number(d, "write_requests_per_session", where),
            server_process_write_bytes=optional_count(d, "server_process_write_bytes", where),
            unattributed_share=optional_number(d, "unattributed_share", where),
            throttle_read_ios=optional_count(d, "throttle_read_ios", where),
            throttle_write_ios=optional_count(d, "throttle_write_ios", where),
            flush_requests=optional_count(d, "flush_requests", where),
            flush_requests_per_session=optional_number(d, "flush_requests_per_session", where),
        )


@dataclass(frozen=True)
class Generator:
    """Open loop: how late the load generator sent the step's arrivals."""

    arrivals: int
    lag_ms_p50: float | None
    lag_ms_p99: float
    lag_ms_max: float | None
    limit_ms: float
    behind: bool

    @classmethod
    def from_json(cls, data: object, where: str) -> Generator:
        d = expect(data, dict, where)
        return cls(
            arrivals=count(d, "arrivals", where),
            lag_ms_p50=optional_number(d, "lag_ms_p50", where),
            lag_ms_p99=number(d, "lag_ms_p99", where),
            lag_ms_max=optional_number(d, "lag_ms_max", where),
            limit_ms=number(d, "limit_ms", where),
            behind=required(d, "behind", bool, where),
        )


MAX_KINDS = 8


def _latency(d: dict[str, Any], where: str) -> dict[str, float | None]:
    """The percentiles of a step's (or a kind's) successful sessions, in ms."""
    latency = expect(d.get("latency_ms"), dict, f"{where}.latency_ms")
    return {k: optional_number(latency, k, f"{where}.latency_ms") for k in LATENCY_KEYS}


@dataclass(frozen=True)
class KindFigures:
    """A mixed step's sessions of one kind (commit, update, clone)."""

    sessions: int
    ok: int
    errors: dict[str, int]
    latency_ms: dict[str, float | None]

    @classmethod
    def from_json(cls, data: object, where: str) -> KindFigures:
        d = expect(data, dict, where)
        return cls(
            sessions=count(d, "sessions", where),
            ok=count(d, "ok", where),
            errors=_counts(d.get("errors") or {}, f"{where}.errors"),
            latency_ms=_latency(d, where),
        )


def _kinds(value: object, where: str) -> dict[str, KindFigures]:
    data = expect(value or {}, dict, where)
    if len(data) > MAX_KINDS:
        raise SchemaError(f"{where}: {len(data)} kinds of session; at most {MAX_KINDS}")
    return {str(k)[:40]: KindFigures.from_json(v, f"{where}.{k}") for k, v in data.items()}


@dataclass(frozen=True)
class LoadStep:
    """One step: a number of clients (closed loop) or arrivals per second (open loop)."""

    level: float
    t0: float
    t1: float
    duration_s: float
    sessions: int
    ok: int
    errors: dict[str, int]
    retries: int
    ops_per_s: float | None
    latency_ms: dict[str, float | None]
    """p50, p90, p95, p99, max and mean of the successful sessions, in ms."""
    server_cpu_s: float
    """CPU of the server's processes over the step (local paths: the clients' processes,
    which do the server's work)."""
    client_cpu_s: float
    system: dict[str, Any]
    device: StepDevice | None = None
    offered_per_s: float | None = None
    generator: Generator | None = None
    server_processes_ended: int = 0
    """Server processes that ended during the step (a lost worker's): their CPU and
    writes in the step are not counted."""
    writers: Writers | None = None
    kinds: dict[str, KindFigures] = field(default_factory=dict)
    """A mixed scenario's sessions by kind ({} for one kind)."""

    @property
    def error_count(self) -> int:
        return sum(self.errors.values())

    @property
    def p95_ms(self) -> float | None:
        return self.latency_ms["p95"]

    @classmethod
    def from_json(cls, data: object, where: str) -> LoadStep:
        d = expect(data, dict, where)
        return cls(
            level=number(d, "level", where),
            t0=number(d, "t0", where),
            t1=number(d, "t1", where),
            duration_s=number(d, "duration_s", where),
            sessions=count(d, "sessions", where),
            ok=count(d, "ok", where),
            errors=_counts(d.get("errors") or {}, f"{where}.errors"),
            retries=count(d, "retries", where, 0),
            ops_per_s=optional_number(d, "ops_per_s", where),
            latency_ms=_latency(d, where),
            server_cpu_s=number(d, "server_cpu_s", where),
            server_processes_ended=count(d, "server_processes_ended", where, 0),
            client_cpu_s=number(d, "client_cpu_s", where),
            system=expect(d.get("system") or {}, dict, f"{where}.system"),
            device=None
            if d.get("device") is None
            else StepDevice.from_json(d["device"], f"{where}.device"),
            offered_per_s=optional_number(d, "offered_per_s", where),
            generator=None
            if d.get("generator") is None
            else Generator.from_json(d["generator"], f"{where}.generator"),
            writers=None
            if d.get("writers") is None
            else Writers.from_json(d["writers"], f"{where}.writers"),
            kinds=_kinds(d.get("kinds"), f"{where}.kinds"),
        )
