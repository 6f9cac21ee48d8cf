"""pytest-benchmark's private calls, in one place.

vcsbench runs its own round loop and hands pytest-benchmark the successful rounds' wall
times, so that its statistics, ``--benchmark-compare``, ``--benchmark-save`` and
``--benchmark-histogram`` see exactly vcsbench's one clock; pytest-benchmark (5.x) has no
public call for that, nor for its session or a cProfile round. Every such call is here,
each pinned by a test, so that a release of pytest-benchmark that changes them breaks
one module.
"""

from __future__ import annotations

import cProfile
from typing import Any

import pytest


def mark_used(benchmark: Any, how: str) -> None:
    """Mark the fixture used (pytest-benchmark otherwise says it was not), saying how."""
    benchmark._mode = how


def feed(benchmark: Any, wall_s: list[float]) -> None:
    """Give pytest-benchmark these samples as its statistics, as its ``pedantic`` would:
    it keeps a benchmark's samples in the ``Metadata`` that ``_make_stats`` registers with
    its session."""
    mark_used(benchmark, "vcsbench (its own round loop)")
    stats = benchmark._make_stats(1)
    for value in wall_s:
        stats.update(value)


def save_profile(benchmark: Any, profile: cProfile.Profile) -> None:
    """pytest-benchmark's --benchmark-cprofile: a profiled round, shown and saved by it."""
    benchmark._save_cprofile(profile)


def session_of(config: pytest.Config) -> Any:
    """pytest-benchmark's session object (its options, its benchmarks, what it compared
    against), or None where it is not loaded."""
    return getattr(config, "_benchmarksession", None)


def fail_run(terminalreporter: Any) -> None:
    """Make the pytest run exit 1 from the terminal summary (a gate that failed)."""
    terminalreporter._session.exitstatus = pytest.ExitCode.TESTS_FAILED
