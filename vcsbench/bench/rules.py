"""pytest-benchmark's own options, as vcsbench's round loop takes them.

A pytest-benchmark user's options mean here what they mean there, where they have a
meaning for one verified operation per round; the others are refused in one line that
names what vcsbench offers instead (never silently ignored):

- ``--benchmark-min-rounds N``: at least N rounds (more than ``--vcs-repos`` if it asks
  fewer);
- ``--benchmark-max-time S``: no more rounds than fit in S seconds of the benchmark
  (projected after each batch of rounds; never fewer than the min-rounds);
- ``--benchmark-warmup [on]``: min(rounds, ``--benchmark-warmup-iterations``) rounds run
  first, verified and discarded;
- ``--benchmark-disable-gc``: Python's collector off inside the timed region;
- ``--benchmark-cprofile COLUMN``: one more round, under cProfile, after the measured ones
  (its time is no sample), shown by pytest-benchmark.

Refused: ``--benchmark-min-time`` and ``--benchmark-calibration-precision`` (they tune an
inner loop vcsbench does not have), ``--benchmark-precision`` and ``--benchmark-timer``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from vcsbench.errors import VcsbenchError

MIN_ROUNDS_DEFAULT = 5
"""pytest-benchmark's default --benchmark-min-rounds (5.x)."""

_REFUSED: dict[str, tuple[object, str]] = {
    # dest: (pytest-benchmark's default, why vcsbench has no use for it and what instead)
    "benchmark_min_time": (
        5e-06,
        "sets the shortest round of an inner loop pytest-benchmark calibrates; vcsbench "
        "times one operation per round, with no loop: set the rounds with --vcs-repos",
    ),
    "benchmark_calibration_precision": (
        10,
        "tunes the calibration of an inner loop vcsbench does not have (one operation per "
        "round): set the rounds with --vcs-repos",
    ),
    "benchmark_precision": (
        None,
        "is not used by vcsbench: set the rounds with --vcs-repos (or a time budget with "
        "--benchmark-max-time); `vcsbench compare` says whether a difference is beyond noise",
    ),
}
_TIMERS = ("time.perf_counter", "perf_counter")


@dataclass(frozen=True)
class RoundRules:
    """How many rounds a benchmark runs and how, beyond ``--vcs-repos``."""

    min_rounds: int | None = None
    """Given --benchmark-min-rounds (None: not given)."""
    max_time_s: float | None = None
    warmup_rounds: int | None = None
    """Given --benchmark-warmup: at most this many warm-up rounds (the rounds cap it)."""
    gc_off: bool = False
    cprofile: str | None = None

    def rounds(self, asked: int) -> int:
        return max(asked, self.min_rounds or 0)

    def warmup(self, rounds: int) -> int:
        return min(rounds, self.warmup_rounds) if self.warmup_rounds else 0

    def budget_floor(self, rounds: int) -> int:
        """The fewest rounds a time budget may leave."""
        return min(rounds, self.min_rounds or MIN_ROUNDS_DEFAULT)

    def describe(self, rounds: int) -> dict[str, object]:
        """What a result records of the rules it ran under (only those given)."""
        out: dict[str, object] = {}
        if self.min_rounds is not None:
            out["min_rounds"] = self.min_rounds
        if self.max_time_s is not None:
            out["max_time_s"] = self.max_time_s
            out["max_time_note"] = (
                "the rounds that fit in this many seconds of the benchmark (set-up, probes "
                "and verification included), projected after each batch"
            )
        if self.warmup(rounds):
            out["warmup_rounds"] = self.warmup(rounds)
        if self.gc_off:
            out["gc"] = "off in the timed region (--benchmark-disable-gc)"
        if self.cprofile:
            out["cprofile"] = "one more round under cProfile, not a sample"
        return out


def _same(value: object, default: object) -> bool:
    """Whether an option's value is its default (pytest-benchmark keeps some numbers as
    the text they were given in: "0.000005", "1.0")."""
    if isinstance(default, int | float) and isinstance(value, str | int | float):
        try:
            return float(value) == float(default)
        except ValueError:
            return False
    return value == default


def from_options(get: Callable[[str], Any], flags: frozenset[str] = frozenset()) -> RoundRules:
    """The rules from pytest-benchmark's options (``get(dest)``: the option's value, None
    where pytest-benchmark is not installed); ``flags``: the ``--benchmark-*`` flags on
    the command line (an option counts as given when its flag is there or its value is
    not pytest-benchmark's default). A refused option is a one-line error."""

    def _given(get: Callable[[str], Any], dest: str, default: object) -> Any:
        value = get(dest)
        given = "--" + dest.replace("_", "-") in flags or not _same(value, default)
        return value if given and value is not None else None

    for dest, (default, why) in _REFUSED.items():
        if _given(get, dest, default) is not None:
            flag = "--" + dest.replace("_", "-")
            raise VcsbenchError(f"{flag}={get(dest)} {why}; drop the flag")
    timer = get("benchmark_timer")
    if timer is not None and str(timer) not in _TIMERS:
        raise VcsbenchError(
            f"--benchmark-timer={timer} is not used by vcsbench: it times each operation "
            "with perf_counter_ns around the call alone (one clock for every figure); drop "
            "the flag"
        )
    warmup = bool(get("benchmark_warmup"))
    return RoundRules(
        min_rounds=_given(get, "benchmark_min_rounds", MIN_ROUNDS_DEFAULT),
        max_time_s=_float(_given(get, "benchmark_max_time", 1.0)),
        warmup_rounds=int(get("benchmark_warmup_iterations") or 0) if warmup else None,
        gc_off=bool(get("benchmark_disable_gc")),
        cprofile=get("benchmark_cprofile") or None,
    )


def _float(value: object) -> float | None:
    return None if value is None else float(str(value))


RULES = pytest.StashKey[RoundRules]()


def rules_of(config: pytest.Config) -> RoundRules:
    """pytest-benchmark's options as the round loop takes them (checked once, at
    collection: a refused one is a usage error of one line)."""
    if RULES not in config.stash:
        args = [*config.invocation_params.args, *config.getini("addopts")]
        flags = frozenset(str(a).split("=")[0] for a in args if str(a).startswith("--benchmark-"))
        try:
            config.stash[RULES] = from_options(lambda d: config.getoption(d, None), flags)
        except VcsbenchError as exc:
            raise pytest.UsageError(str(exc)) from None
    return config.stash[RULES]
