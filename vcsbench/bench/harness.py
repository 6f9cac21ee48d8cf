"""What a benchmark records of its own harness once its rounds are done: the scans of
what the rounds left (footprint, scratch), the floor, and the harness record -- its
cost around the timed operations, where the rounds ran, what was filled in first and
replayed. A harness failure here costs the figure it was for, never the timed, verified
rounds: the figure is marked missing with the reason."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vcsbench.bench import floor
from vcsbench.bench.maintained import AsKept
from vcsbench.bench.trouble import describe
from vcsbench.bench.workers import WorkerEnd
from vcsbench.measure.footprint import Footprint, footprint
from vcsbench.results.harness import Harness

NOTE = (
    "harness = prepare, probes, syncfs and verification around the timed operations; none "
    "of it is inside a timed region"
)


def scans(
    rounds_paths: Iterable[Path] | None, containers: Iterable[Path], scratch_dir: Path
) -> tuple[Footprint | str, Footprint | str, float]:
    """(the rounds' footprint, the scratch's, seconds the scans took): of the rounds' own
    paths where given (not the repositories filled in before; the paths a user's
    benchmark names, wherever they are), else of the containers."""
    started = time.perf_counter()
    result: Footprint | str
    scratch: Footprint | str
    try:
        if rounds_paths is not None:
            result = footprint(*rounds_paths)
        else:
            result = footprint(*containers, roots=False)
    except OSError as exc:
        result = f"the footprint scan failed: {describe(exc)}"
    try:
        scratch = footprint(scratch_dir, roots=False)
    except OSError as exc:
        scratch = f"the scratch scan failed: {describe(exc)}"
    return result, scratch, time.perf_counter() - started


def floor_of(
    tree: dict[str, floor.TreeEntry], workdir: Path, median_ms: float | None
) -> dict[str, Any]:
    try:
        return floor.measure(tree, workdir, median_ms)
    except OSError as exc:
        return {
            "ms_per_repo": None,
            "ratio": None,
            "reason": f"the floor could not be measured: {describe(exc)}",
        }


@dataclass(frozen=True)
class Beside:
    """What is made before a benchmark's rounds and recorded beside them: a remote
    variant's server, a ``version=`` variant's environment, the pytest-benchmark rules
    that set its rounds, the harness against a bare loop (:mod:`vcsbench.bench.beside`)."""

    server: dict[str, Any] | None = None
    environment: dict[str, Any] | None = None
    pytest_benchmark_rules: dict[str, Any] | None = None
    perturbation: dict[str, Any] | None = None


def record(
    *,
    started: bool,
    overhead_ns: int,
    wall_s: float,
    ops_wall_ns: int,
    footprint_s: float,
    rounds: int,
    age_info: dict[str, object],
    replay: dict[str, float] | None,
    recycle: int,
    ends: list[WorkerEnd],
    processes: int,
    environment: Path | None,
    kept: AsKept | str = "not kept",
    beside: Beside = Beside(),
) -> Harness:
    """The harness record of a benchmark: its cost per round beside the timed
    operations, and where its rounds ran."""
    if ends:
        where = (
            f"each worker a process of the variant's environment ({environment}) that ran "
            "its rounds and exited"
            if environment is not None
            else "each worker a forked process that ran its rounds and exited"
        ) + "; rss_peak and rss_growth are the largest of the workers'"
    else:
        where = "every round in the benchmark's own process"
    return Harness(
        probe_overhead_us_per_round=overhead_ns / 1000 if started else None,
        benchmark_wall_s=wall_s,
        ops_wall_s=ops_wall_ns / 1e9,
        footprint_s=footprint_s,
        harness_s_per_round=(wall_s - ops_wall_ns / 1e9) / rounds if rounds else None,
        sampler="a separate process (python -m vcsbench.measure.sampler)",
        age=dict(age_info) if age_info else None,
        replay=dict(replay) if replay else None,
        workers={
            "rounds_per_worker": recycle if ends else None,
            "workers": processes or len(ends),
            "note": where,
        },
        note=NOTE,
        kept=kept.record() if isinstance(kept, AsKept) else None,
        server=beside.server,
        environment=beside.environment,
        pytest_benchmark_rules=beside.pytest_benchmark_rules,
        perturbation=beside.perturbation,
    )
