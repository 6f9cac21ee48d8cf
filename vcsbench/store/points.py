"""What a result file becomes in the store: its machine's key, each benchmark's series
and point -- its figures, its counts, the versions it ran with, its machine's calibration
-- and a load's steps as points (:mod:`vcsbench.store.store` keeps them)."""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterator
from typing import Any

from vcsbench.results.calibration import fingerprint
from vcsbench.results.counted import COUNTED, share_range
from vcsbench.results.metrics import CALL_METRICS
from vcsbench.results.model import Benchmark, Run
from vcsbench.results.run_figures import busy, run_figure
from vcsbench.store.rows import MAX_TEXT


def cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def tail(text: str, most: int = 80) -> str:
    return text if len(text) <= most else "…" + text[-most + 1 :]


def machine_key(run: Run) -> tuple[str, str]:
    """(a digest, a description) of the machine a result file was made on, from what it
    recorded: pytest-benchmark's host name and vcsbench's machine facts."""
    digest, described = fingerprint(run.machine.to_json(), cut(run.node or "?"))
    return digest, cut(described)


def benchmark_key(bench: Benchmark) -> str:
    """The benchmark of a series: its key (:class:`~vcsbench.results.model.BenchmarkKey`)
    as a person reads it, with its filesystem's type and mount options as made."""
    fs = bench.filesystem
    return cut(f"{bench.key.text} ({fs.fstype or '?'} {fs.mount_options or ''})".strip())


def series_of(machine: str, bench: Benchmark) -> str:
    """The series a benchmark's run is a point of: its machine's digest and its key."""
    return f"{machine} {benchmark_key(bench)}"


def _spread_of(run: Run, bench: Benchmark) -> str:
    cell = (
        run.spread.cell(bench.backend.name, bench.op, bench.filesystem.fstype)
        if run.spread is not None
        else None
    )
    return json.dumps(cell.to_json()) if cell is not None else ""


def counts_of(bench: Benchmark) -> str:
    """What a point keeps of a benchmark's counts (JSON: name -> [median, how far its
    rounds ranged over it, 0 where every round made the same]): its counted rounds'
    counts, and the system calls its timed rounds counted where those did not; "" where
    nothing was counted."""
    found: dict[str, list[float]] = {}
    for name in CALL_METRICS:
        values = bench.rounds.series(name)
        if values:
            ranged = share_range(values)
            if ranged is None:  # a median of 0: the same in every round, or not
                ranged = float(len(set(values)) > 1)
            found[name] = [statistics.median(values), round(ranged, 6)]
    counted = bench.counted
    if counted is not None:
        for name in COUNTED:
            median, spread = counted.figure(name), counted.spread(name)
            if median is not None and name not in found:
                # a median of 0 has no share: the same in every round, or not
                share = float(not counted.exact(name)) if spread is None else spread
                found[name] = [median, round(share, 6)]
    return json.dumps(found, separators=(",", ":")) if found else ""


def versions_of(bench: Benchmark) -> str:
    """The versions the benchmark ran with, as one line (``svn 1.14.2, libsvn 1.14.2``)."""
    return versions_text(bench.backend.versions)


def versions_text(versions: dict[str, str]) -> str:
    """Versions as one line, sorted by name."""
    return cut(", ".join(f"{k} {v}" for k, v in sorted(versions.items())))


def load_points(run: Run) -> Iterator[tuple[str, tuple[Any, ...]]]:
    """A load run's steps as points of series, one series per access path and level: its
    median session latency where a benchmark has its median, sessions for rounds, the
    server's CPU per session, its errors, the versions its backend ran with."""
    load = run.load
    if load is None:
        return
    unit = "clients" if load.shape == "closed" else "arrivals/s"
    for path in load.paths:
        fs = path.filesystem.spec if path.filesystem is not None else "?"
        backend = path.path.rsplit(":", 1)[-1].split("[", 1)[0]
        versions = run.machine.backend_versions.get(backend) or path.server_versions
        text = versions_text(versions)
        for step in path.steps:
            key = cut(
                f"load {load.scenario} {load.shape}: {path.path} at {step.level:g} {unit} "
                f"({load.payload}, {fs})"
            )
            cpu = step.server_cpu_s * 1000 / step.sessions if step.sessions else None
            errors = sum(step.errors.values())
            point = (
                step.latency_ms.get("p50"),
                None,
                None,
                None,
                None,
                cpu,
                step.sessions,
                errors,
                "",
                text,
                "",
                "",
            )
            yield key, point


def points_of(run: Run, digest: str, key: str, started: str) -> list[tuple[Any, ...]]:
    """A run's rows of the store's points: one per benchmark, then its load's steps."""
    rows: list[tuple[Any, ...]] = []
    for bench in run.benchmarks:
        cpu = bench.per_repo("cpu")
        bench_key = benchmark_key(bench)
        rows.append(
            (
                digest,
                series_of(key, bench),
                key,
                bench_key,
                started,
                bench.median_ms,
                bench.canary.ms if bench.canary is not None else None,
                bench.canary.writes_ms if bench.canary is not None else None,
                run_figure(bench, "time_per_canary"),
                run_figure(bench, "time_per_writes"),
                None if cpu is None else cpu * 1000,
                bench.repos,
                bench.errors,
                cut(busy(bench, run.machine.cpu_count)),
                versions_of(bench),
                _spread_of(run, bench),
                counts_of(bench),
            )
        )
    for step_key, step_row in load_points(run):
        rows.append((digest, f"{key} {step_key}", key, step_key, started, *step_row))
    return rows
