"""The progress lines: no promise from the first round alone, and a run's time left that
the first benchmark's own pace sets (the run's start-up is no pace)."""

from __future__ import annotations

from typing import Any

import pytest

from vcsbench.bench import progress as progress_module
from vcsbench.bench.progress import ProgressDisplay


class Writer:
    hasmarkup = False
    width_of_current_line = 0

    def __init__(self) -> None:
        self.lines: list[str] = []

    def line(self, text: str = "") -> None:
        self.lines.append(text)

    def write(self, text: str) -> None:
        self.lines.append(text)

    def flush(self) -> None:
        pass


class Config:
    def __init__(self) -> None:
        self.writer = Writer()
        self.pluginmanager = self

    def get_terminal_writer(self) -> Writer:
        return self.writer

    def getplugin(self, name: str) -> None:
        return None


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now

    def perf_counter(self) -> float:
        return self.now


def test_no_line_from_the_first_round_and_the_run_left_at_the_benchmarks_pace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = Clock()
    monkeypatch.setattr(progress_module, "time", clock)
    config: Any = Config()
    # Benchmark 1 of 4; the run started 30 s ago (imports, a sandbox made: no pace).
    shown = ProgressDisplay(config, "lines", "b", (1, 4, clock.now - 30), out=config.writer)
    shown(1, 1000, 0.5)  # the first round took 0.5 s: nothing said yet
    assert [] == config.writer.lines
    clock.now += 5
    shown(500, 1000, 5.0)  # 100 rounds/s: 5 s left here, 3 benchmarks like it after
    assert ["[1/4] b: 500/1,000 rounds, 100.0/s, 5s left; run: ~0m35s left"] == (
        config.writer.lines
    )


def test_after_the_first_benchmark_the_run_left_is_at_the_runs_pace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = Clock()
    monkeypatch.setattr(progress_module, "time", clock)
    config: Any = Config()
    shown = ProgressDisplay(config, "lines", "b", (3, 4, clock.now - 45), out=config.writer)
    clock.now += 5
    # Benchmark 3 of 4 half done, 50 s into the run: 2.5 of 4 in 50 s, 30 s to go.
    shown(5, 10, 5.0)
    assert config.writer.lines[-1].endswith("; run: ~0m30s left")


def test_a_log_gets_the_first_pace_at_5_s_then_a_line_each_half_minute_and_the_last(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = Clock()
    monkeypatch.setattr(progress_module, "time", clock)
    config: Any = Config()
    shown = ProgressDisplay(config, "lines", "b", out=config.writer)
    start = clock.now
    said = []
    for second in range(1, 91):  # a round a second for 90 s
        clock.now = start + second
        before = len(config.writer.lines)
        shown(second, 90, float(second))
        if len(config.writer.lines) > before:
            said.append(second)
    # at 5 s, 35 s, 65 s, and the last round's (a bar would redraw every 0.2 s)
    assert [5, 35, 65, 90] == said


def test_a_groups_first_pace_counts_its_members_as_benchmarks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Three benchmarks interleaved, the run's first of 9: their rounds together took 5 s
    for half, so the group takes 10 s, and the run as many again for the two groups after
    it (make bench's first line read ~3m15s left for a run that took 1m31s)."""
    clock = Clock()
    monkeypatch.setattr(progress_module, "time", clock)
    config: Any = Config()
    shown = ProgressDisplay(config, "lines", "g", (1, 9, clock.now), members=3, out=config.writer)
    clock.now += 5
    shown(1500, 3000, 5.0)
    assert config.writer.lines[-1].endswith("; run: ~0m25s left")
    # the second group (benchmarks 4-6), half done 20 s into the run: 4.5 of 9 in 20 s
    later = ProgressDisplay(
        config, "lines", "g", (4, 9, clock.now - 15), members=3, out=config.writer
    )
    clock.now += 5
    later(1500, 3000, 5.0)
    assert config.writer.lines[-1].endswith("; run: ~0m20s left")
