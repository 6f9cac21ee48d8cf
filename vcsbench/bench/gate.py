"""The pytest door's gate: ``--benchmark-compare-fail`` judged as ``vcsbench compare
--fail-on`` judges, not on pytest-benchmark's statistics.

pytest-benchmark fails a stat (``min:5%``) that moved beyond a threshold between the saved
run and this one, taking each run's rounds as samples of both: drift between the runs
reads as a regression, a benchmark missing from one run or one that failed passes. For
vcsbench's benchmarks the saved run and this one are compared with the runs as the unit
and this machine's run-to-run spread (:mod:`vcsbench.report.compare`), and the gate
fails closed. A percentage on any field is a gate on time; an absolute difference is
refused (a ratio is what the spread can judge).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from vcsbench.bench import adapter
from vcsbench.errors import VcsbenchError
from vcsbench.results.model import Run


def _gate(checks: list[Any]) -> dict[str, float]:
    from pytest_benchmark.utils import PercentageRegressionCheck

    limits = []
    for check in checks:
        if not isinstance(check, PercentageRegressionCheck):
            raise VcsbenchError(
                f"--benchmark-compare-fail {check.field}:{check.threshold:g}: vcsbench "
                "judges a change as a ratio against this machine's run-to-run spread; give "
                f"a percentage ({check.field}:5%)"
            )
        limits.append(float(check.threshold) / 100)
    return {"time": min(limits)}


def _saved(session: Any, path: object) -> Path:
    """Where a saved run pytest-benchmark compared against is (its file storage names it
    relative to itself)."""
    found = Path(str(path))
    root = getattr(session.storage, "path", None)
    if found.is_absolute():
        return found
    if root is None:
        raise VcsbenchError(
            "--benchmark-compare-fail: the saved run is not in file storage, which vcsbench's "
            "gate reads; use --benchmark-storage=file://DIR, or vcsbench compare on result files"
        )
    return Path(str(root)) / found


def _this_run(config: pytest.Config, session: Any) -> Run:
    """This session's benchmarks: its result file where it writes one (every benchmark
    kept there whole), else from pytest-benchmark's records of them."""
    from vcsbench.bench.record import result_path, write_results
    from vcsbench.results.io import parse, read

    path = result_path(config)
    if path is not None:
        write_results(config)
        return read(path)
    document = config.hook.pytest_benchmark_generate_json(
        config=config,
        benchmarks=[b for b in session.benchmarks if not b.has_error],
        include_data=False,
        machine_info=session.get_machine_info(),
        commit_info={},
    )
    config.hook.pytest_benchmark_update_json(
        config=config, benchmarks=session.benchmarks, output_json=document
    )
    return parse(document, Path("this run"))


def judge(config: pytest.Config, write: Any) -> bool | None:
    """Run the gate and write its lines; whether it passed (None: it was not asked)."""
    from vcsbench.judge.comparison import compare_runs
    from vcsbench.judge.limits import gate_lines
    from vcsbench.results.io import read

    session = adapter.session_of(config)
    if session is None or not session.compare_fail or not session.compared_mapping:
        return None
    gate = _gate(session.compare_fail)
    bases = [read(_saved(session, path)) for path in session.compared_mapping]
    this = _this_run(config, session)
    failed: list[str] = []
    for base in bases:
        pairs, left = compare_runs([base], [this])
        fails, judged = gate_lines(pairs, left, gate, (1, 1))
        failed += fails
        for line in judged:
            write(f"vcsbench: gate: {line}")
    for line in failed:
        write(f"vcsbench: GATE FAILS {line}")
    limit = f"{100 * gate['time']:g}%"
    write(
        f"vcsbench: gate (--benchmark-compare-fail, time beyond +{limit}, the runs the unit): "
        + ("failed" if failed else "passed")
    )
    return not failed
