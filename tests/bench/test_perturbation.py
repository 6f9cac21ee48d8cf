"""The harness against a bare loop: the interval's arithmetic, the judgement, and the
measurement of an operation whose time is known (a 2 ms sleep)."""

from __future__ import annotations

import functools
import json
import statistics
import time
from pathlib import Path
from typing import ClassVar

import pytest
from fakes import FakeBackend, KnownWrite
from helpers import REPO, vcsbench

from vcsbench.bench import perturbation
from vcsbench.bench.perturbation import Perturbation, check_perturbation, measure
from vcsbench.results.layout import benchmark_part
from vcsbench.sandbox import Sandbox, parse_fs_spec
from vcsbench.workload.operation import RoundPaths

# Timing- or signal-bound: run in make test's serial pass, alone on the machine.
pytestmark = pytest.mark.serial

SLEEP_S = 0.002
ADDED_S = 0.001


def test_the_interval_is_the_order_statistics_that_keep_95_percent() -> None:
    found = Perturbation("x", tuple(((1.0,), (1 + i / 100,)) for i in range(12)))
    assert 1.055 == pytest.approx(found.ratio)  # the median of 1.00 .. 1.11
    # 12 blocks: P(Binomial(12, 1/2) < 3) = 79/4096 a side: the 3rd from each end, 96.1%.
    assert (1.02, 1.09) == found.interval
    assert abs(found.confidence - (1 - 2 * 79 / 4096)) < 1e-12


def test_the_interval_of_a_thousand_pairs_is_the_sign_tests() -> None:
    """1,200 pairs (doctor's 12 blocks of 100): C(1200, k) / 2^1200 is beyond a float's
    range, and the interval still matches the normal approximation's k = n/2 - 1.96
    sqrt(n)/2 = 566 from each end."""
    from vcsbench.results.stats import order_interval

    low, high, confidence = order_interval([float(i) for i in range(1200)])
    assert (565.0, 634.0) == (low, high)
    assert 0.95 <= confidence < 0.96


def test_drift_that_hits_both_sides_of_each_pair_alike_is_not_reported() -> None:
    """The machine slows down threefold over the check, in spells lasting a pair of blocks:
    the bare block of each pair takes what the moment gives, the harness's 3% more. The
    ratio is 1.03 whatever the drift; the blocks show the drift itself."""
    moments = [1.0 + 2 * i / 11 + (0.5 if i % 3 == 1 else 0.0) for i in range(12)]
    found = Perturbation("drift", tuple(((m,) * 25, (1.03 * m,) * 25) for m in moments))
    assert 1.03 == pytest.approx(found.ratio)
    assert (1.03, 1.03) == pytest.approx(found.interval)
    bare_first, _ = found.blocks[0]
    bare_last, harness_last = found.blocks[-1]
    assert bare_last > 2 * bare_first  # the drift is there, and it is not the harness's
    assert 1.03 == pytest.approx(harness_last / bare_last)
    assert 300 == found.describe()["rounds"]


def test_the_check_fails_a_harness_beyond_the_goal_and_passes_one_within() -> None:
    slow = Perturbation("slow", tuple(((1.0,) * 10, (1.10,) * 10) for _ in range(12)))
    fine = Perturbation("fine", tuple(((1.0,) * 10, (1.01,) * 10) for _ in range(12)))
    assert check_perturbation("tmpfs", slow).ok is False
    assert "WARN" == check_perturbation("tmpfs", slow).status  # a warning: timing, not a counter
    assert not check_perturbation("tmpfs", slow).failed
    assert check_perturbation("tmpfs", fine).ok is True
    assert (
        "harness/bare loop 1.100x (96% interval 1.100-1.100x over 12 alternating pairs of "
        "blocks of 10 rounds"
    ) in check_perturbation("tmpfs", slow).detail


class Sleeps(KnownWrite):
    """A timed call that makes a directory and sleeps 2 ms: bare loop and harness should
    time the same."""

    def run(self, paths: RoundPaths) -> None:
        paths.repo.mkdir()
        time.sleep(SLEEP_S)

    def expected(self) -> dict[str, bytes]:
        return {}


def test_an_operation_of_known_time_measures_the_same_bare_and_in_the_harness(
    tmp_path: Path,
) -> None:
    with Sandbox(parse_fs_spec(f"dir:{tmp_path}"), tmp_path) as sandbox:
        assert sandbox.info is not None
        found = measure(
            lambda: Sleeps(FakeBackend()), sandbox.info, sandbox.root / "p", "sleep", 4, 20
        )
    assert 80 == found.rounds
    for bare, harness in found.blocks:
        assert SLEEP_S * 1000 <= bare < SLEEP_S * 1000 * 1.5
        assert SLEEP_S * 1000 <= harness < SLEEP_S * 1000 * 1.5
    assert 0.9 < found.ratio < 1.1


def test_a_harness_with_a_known_added_delay_is_reported_by_that_much(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The harness's clock made to lose 1 ms inside every timed call (the bare loop keeps
    the plain one): the check reports the 2 ms operation as about 3 ms, 1.5x, beyond the
    goal."""

    def late_clock() -> int:
        time.sleep(ADDED_S)  # before the start (untimed) and before the end (timed)
        return time.perf_counter_ns()

    monkeypatch.setattr(
        perturbation, "BenchmarkRun", functools.partial(perturbation.BenchmarkRun, clock=late_clock)
    )
    with Sandbox(parse_fs_spec(f"dir:{tmp_path}"), tmp_path) as sandbox:
        assert sandbox.info is not None
        found = measure(
            lambda: Sleeps(FakeBackend()), sandbox.info, sandbox.root / "p", "late", 4, 20
        )
        assert not (sandbox.root / "p").exists()  # its directories are gone
    # By the blocks' median: one block's sleeps may overshoot by a few tenths of a ms.
    added = statistics.median(harness - bare for bare, harness in found.blocks)
    assert ADDED_S * 1000 * 0.9 < added < ADDED_S * 1000 * 1.4, found.blocks
    # The ratio is the delay over the bare round, which a sleep makes 2.0-2.9 ms on a
    # busy machine: bounded by the same delay bounds over the bare rounds as measured.
    low, high = (
        statistics.median(1 + ADDED_S * 1000 * k / b for b, _ in found.blocks) for k in (0.9, 1.4)
    )
    assert 1.3 < low <= found.ratio <= high, (low, found.ratio, high)
    check = check_perturbation("dir", found)
    assert "WARN" == check.status
    assert f"harness/bare loop {found.ratio:.3f}x" in check.detail


class Lingers(Sleeps):
    """A timed call that takes 1 ms longer when the harness's probe read the counters
    since the last call: work between rounds that lands on the next call, whichever side
    it is (caches evicted, a CPU gone idle)."""

    touched: ClassVar[list[bool]] = [False]

    def run(self, paths: RoundPaths) -> None:
        super().run(paths)
        if self.touched[0]:
            time.sleep(ADDED_S)
            self.touched[0] = False


def test_work_between_rounds_that_lands_on_the_next_call_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rounds alternating one by one would give the bare round after a harness round the
    same 1 ms and read 1.00x; in blocks, the bare rounds follow bare rounds: about 1.5x."""
    from vcsbench.measure.probes import Probe

    after = Probe.after

    def touching(self: Probe) -> object:
        Lingers.touched[0] = True
        return after(self)

    monkeypatch.setattr(Probe, "after", touching)
    with Sandbox(parse_fs_spec(f"dir:{tmp_path}"), tmp_path) as sandbox:
        assert sandbox.info is not None
        found = measure(
            lambda: Lingers(FakeBackend()), sandbox.info, sandbox.root / "p", "lingers", 4, 10
        )
    # each harness block pays the 1 ms, no bare block does (a sleep wakes late on a busy
    # machine, so the difference is what is bounded, not the times)
    added = statistics.median(h - b for b, h in found.blocks)
    assert ADDED_S * 1000 * 0.7 < added < ADDED_S * 1000 * 1.5, found.blocks
    assert all(h - b > ADDED_S * 1000 / 2 for b, h in found.blocks), found.blocks
    assert found.ratio > 1.25


class SlowPrepare(Sleeps):
    """A round whose untimed prepare takes 0.25 s (a seed copied onto a throttled
    device): the least check, 6 pairs of blocks of 2 rounds, would take 6 s."""

    def prepare(self, paths: RoundPaths) -> None:
        super().prepare(paths)
        time.sleep(0.25)


def test_a_check_that_would_take_many_times_its_budget_is_not_made_and_says_why(
    tmp_path: Path,
) -> None:
    with Sandbox(parse_fs_spec(f"dir:{tmp_path}"), tmp_path) as sandbox:
        assert sandbox.info is not None
        started = time.perf_counter()
        with pytest.raises(perturbation.OverBudget) as raised:
            measure(
                lambda: SlowPrepare(FakeBackend()), sandbox.info, sandbox.root / "p", "slow",
                blocks=6, budget_s=1.0,
            )  # fmt: skip
        took = time.perf_counter() - started
        assert not (sandbox.root / "p").exists()
    assert took < 2.0  # the three pilot rounds, not the check
    text = str(raised.value)
    pilot = float(text.split("a bare round takes ")[1].split(" s")[0])
    assert 0.25 <= pilot < 0.4
    assert f"would take about {24 * pilot:.0f} s, over 5x its budget of 1 s" in text


def test_once_a_run_measures_beside_each_backends_first_benchmark_within_its_budget(
    tmp_path: Path,
) -> None:
    out = tmp_path / "r.json"
    result = vcsbench(
        "run", "--backends", "git-pygit2", "--ops", "create,create+commit", "--payloads",
        "hello", "--repos", "400", "--fs", f"dir:{tmp_path}", "--out", str(out),
    )  # fmt: skip
    assert 0 == result.returncode, result.stderr
    first, second = (
        benchmark_part(b)["harness"]["perturbation"]
        for b in json.loads(out.read_text())["benchmarks"]
    )
    assert first["once"] and second["once"]
    assert "git-pygit2 create hello" in first["label"]
    assert first == second  # measured beside the first, recorded in both
    # Within the second's budget: fewer than the 50 rounds a block of 'on', at least one.
    bare_s = 6 * 2 * max(first["bare_ms"]) / 1000
    assert 6 == len(first["bare_ms"])
    assert bare_s < 2 * perturbation.BUDGET_ONCE_S


def test_a_benchmark_asked_to_measures_its_perturbation_beside_it_and_keeps_it(
    tmp_path: Path,
) -> None:
    out = tmp_path / "r.json"
    result = vcsbench(
        "run", "--backends", "git-pygit2", "--ops", "create", "--payloads", "hello",
        "--repos", "5", "--fs", f"dir:{tmp_path}", "--perturbation", "on", "--out", str(out),
    )  # fmt: skip
    assert 0 == result.returncode, result.stderr
    (bench,) = json.loads(out.read_text())["benchmarks"]
    found = benchmark_part(bench)["harness"]["perturbation"]
    assert "git-pygit2 create hello" in found["label"]
    assert (6, 30) == (found["blocks"], found["rounds"])  # 6 pairs of blocks of 5 (--repos 5)
    assert 6 == len(found["bare_ms"]) == len(found["harness_ms"])
    low, high = found["interval"]
    assert low <= found["ratio"] <= high
    assert found["confidence"] >= 0.95


def test_a_report_warns_of_a_harness_beyond_the_goal(tmp_path: Path) -> None:
    document = json.loads((REPO / "tests" / "data" / "tiny-tmpfs.json").read_text())
    first = benchmark_part(document["benchmarks"][0])
    first["harness"]["perturbation"] = {"ratio": 1.2, "interval": [1.1, 1.3]}
    moved = tmp_path / "moved.json"
    moved.write_text(json.dumps(document))
    report = vcsbench("report", str(moved))
    assert 0 == report.returncode, report.stderr
    assert "the harness moved the timing beyond 1.05x a bare loop of the same calls: " in (
        report.stdout
    )
    assert "create+commit hello tmpfs (1.20x)" in report.stdout
    plain = vcsbench("report", str(REPO / "tests" / "data" / "tiny-tmpfs.json"))
    assert "the harness moved" not in plain.stdout


def test_a_report_says_the_harness_check_each_result_holds(tmp_path: Path) -> None:
    """Within the goal too: the figure a reader needs to judge a small difference. A
    record without its interval (an older or a hand-made file) is left out, not guessed."""
    document = json.loads((REPO / "tests" / "data" / "tiny-tmpfs.json").read_text())
    first, second = (benchmark_part(b) for b in document["benchmarks"][:2])
    first["harness"]["perturbation"] = {
        "label": "git-pygit2 create+commit hello tmpfs",
        "ratio": 1.0123,
        "interval": [0.998, 1.021],
        "confidence": 0.961,
        "pairs": 1200,
    }
    second["harness"]["perturbation"] = {"label": "half a record", "ratio": 1.0}
    checked = tmp_path / "checked.json"
    checked.write_text(json.dumps(document))
    report = vcsbench("report", str(checked))
    assert 0 == report.returncode, report.stderr
    assert (
        "- **harness**: git-pygit2 create+commit hello tmpfs: 1.012x a bare loop of the same "
        "calls (96% interval 0.998-1.021x, 1,200 alternating pairs of rounds)"
    ) in report.stdout
    assert "half a record" not in report.stdout
    assert "the harness moved" not in report.stdout


def test_perturbation_takes_once_on_or_off() -> None:
    result = vcsbench("run", "--perturbation", "maybe", "--out", "/tmp/never-written.json")
    assert 2 == result.returncode
    assert [
        "vcsbench: error: perturbation 'maybe' is not one of once, on, off"
    ] == result.stderr.splitlines()
