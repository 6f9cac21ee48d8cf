"""Verdicts between runs: the run is the unit, this machine's measured run-to-run spread is
what a change must stand out of, and the gate fails what it cannot judge.

Synthetic runs: a frozen result whose rounds are scaled by known factors (a known drift, a
known change), with a known calibration recorded in it."""

from __future__ import annotations

import json
import math
import random
import statistics
from pathlib import Path
from typing import Any

import pytest
from helpers import REPO, edited_result, keep_rounds, retotal, run_args, scale_times, vcsbench

from vcsbench.judge.verdict import ALPHA, between, runs_needed
from vcsbench.results.layout import benchmark_part, run_facts
from vcsbench.results.run_figures import run_figure
from vcsbench.results.spread import SpreadCell

TINY = REPO / "tests" / "data" / "tiny-ext4.json"
TINY_TMPFS = REPO / "tests" / "data" / "tiny-tmpfs.json"


def cell_of(sd: float, runs: int = 10, backend: str = "git-pygit2") -> SpreadCell:
    """A calibration whose runs' medians have exactly ``sd`` as the standard deviation of
    their logarithms."""
    z = [i - (runs - 1) / 2 for i in range(runs)]
    scale = statistics.stdev(z)
    figures = tuple(math.exp(sd * v / scale) for v in z)
    return SpreadCell(backend, "create+commit", "ext4", 12, {"time": figures, "cpu": figures})


def spread_json(sd: float, runs: int = 10) -> dict[str, Any]:
    return {
        "fingerprint": "test",
        "machine": "the test's",
        "measured": "2026-11-26T00:00:00+00:00",
        "command": "vcsbench run (synthetic)",
        "runs": runs,
        "cells": [cell_of(sd, runs, name).to_json() for name in ("git-pygit2", "svn-fs")],
    }


def run_file(
    tmp_path: Path, name: str, factor: float, sd: float | None = None, src: Path = TINY
) -> str:
    """The frozen result with every round ``factor`` times as long, recording a
    calibration of ``sd`` (None: none)."""

    def edit(document: dict[str, Any], benches: list[dict[str, Any]]) -> None:
        for bench in benches:
            scale_times(bench, factor)
        if sd is not None:
            run_facts(document)["spread"] = spread_json(sd)

    return edited_result(src, tmp_path / f"{name}.json", edit)


def time_line(stdout: str, benchmark: str = "git-pygit2 create+commit") -> str:
    return next(line for line in stdout.splitlines() if benchmark in line and "|" in line)


# -- the test itself, as a statistic ------------------------------------------------------


def test_a_known_drift_gives_verdicts_at_the_rate_asked_and_a_change_beyond_it_always() -> None:
    """Runs whose levels drift by a known 3 % (log-normal), the calibration drawn from the
    same machine: one run a side reads a change in about ALPHA of A/A pairs, and a 50 %
    slowdown in every pair."""
    rng = random.Random(7)
    sd, trials = 0.03, 2000
    false, found = 0, 0
    for _ in range(trials):
        calibration = [math.exp(rng.gauss(0, sd)) for _ in range(10)]
        cell = SpreadCell("b", "op", "ext4", 100, {"time": tuple(calibration)})
        base, other = math.exp(rng.gauss(0, sd)), math.exp(rng.gauss(0, sd))
        false += between("time", [base], [other], cell).significant
        found += between("time", [base], [other * 1.5], cell).significant
    assert false / trials <= 2 * ALPHA, false
    assert found == trials


def test_the_pooled_test_agrees_with_scipy_where_there_is_no_calibration() -> None:
    from scipy import stats

    base, other = [1.0, 1.04, 0.97], [1.12, 1.18, 1.09, 1.15]
    found = between("time", list(base), list(other), None)
    lb, lo = [math.log(v) for v in base], [math.log(v) for v in other]
    reference = stats.ttest_ind(lo, lb, equal_var=True)
    assert found.p is not None and found.interval is not None
    assert math.isclose(found.p, reference.pvalue, rel_tol=1e-9)
    interval = reference.confidence_interval(1 - ALPHA)
    assert math.isclose(math.log(found.interval[0]), interval.low, rel_tol=1e-9)
    assert math.isclose(math.log(found.interval[1]), interval.high, rel_tol=1e-9)


def test_runs_needed_finds_the_change_at_its_power() -> None:
    """At the number of runs it names, a known change is found about 4 times in 5 (and
    one run fewer, less often)."""
    rng = random.Random(11)
    sd, change = 0.03, 0.10
    cell = cell_of(sd, runs=10)
    n = runs_needed(sd, cell.df(), change)
    assert n is not None and 1 < n < 10

    def rate(runs: int) -> float:
        hits = 0
        for _ in range(1000):
            base = [math.exp(rng.gauss(0, sd)) for _ in range(runs)]
            other = [math.exp(rng.gauss(0, sd)) * (1 + change) for _ in range(runs)]
            hits += between("time", base, other, cell).significant
        return hits / 1000

    assert rate(n) >= 0.75
    assert rate(n - 1) < rate(n)


# -- compare, between single runs --------------------------------------------------------


def test_one_run_a_side_without_a_calibration_gives_the_ratio_and_no_verdict(
    tmp_path: Path,
) -> None:
    result = vcsbench("compare", run_file(tmp_path, "a", 1.0), run_file(tmp_path, "b", 3.0))
    assert 0 == result.returncode, result.stderr
    line = time_line(result.stdout)
    assert "~ 3.00x: no verdict: one run a side, no spread measured" in line
    assert "slower" not in result.stdout and "faster" not in result.stdout
    assert "vcsbench doctor --spread" in result.stdout


def test_one_run_a_side_reads_a_change_only_beyond_the_machines_spread(tmp_path: Path) -> None:
    """Calibration: 3 % between runs (10 runs). A 5 % difference is within it; a 40 %
    one is a verdict, with its interval from that spread."""
    base = run_file(tmp_path, "a", 1.0, sd=0.03)
    within = vcsbench("compare", base, run_file(tmp_path, "b", 1.05, sd=0.03))
    assert 0 == within.returncode, within.stderr
    line = time_line(within.stdout)
    assert "~ 1.05x [" in line and "within run-to-run spread" in line
    beyond = vcsbench("compare", base, run_file(tmp_path, "c", 1.4, sd=0.03))
    line = time_line(beyond.stdout)
    assert "1.40x slower (1.40x [" in line
    assert "git-pygit2 create+commit ext4 ±3.0%" in beyond.stdout


def test_a_busy_run_gets_no_verdict_and_says_why(tmp_path: Path) -> None:
    def busy(document: dict[str, Any], benches: list[dict[str, Any]]) -> None:
        run_facts(document)["spread"] = spread_json(0.03)
        for bench in benches:
            scale_times(bench, 1.4)
            bench["sampler"]["samples"] = [
                {"t_s": float(i), "runnable": 3, "others_cpu": 1.1} for i in range(4)
            ]

    other = edited_result(TINY, tmp_path / "busy.json", busy)
    result = vcsbench("compare", run_file(tmp_path, "a", 1.0, sd=0.03), other)
    line = time_line(result.stdout)
    assert "no verdict: busy machine in the other run" in line
    assert "other processes used 1.10 CPUs" in line
    assert "slower" not in line


# -- several runs a side -----------------------------------------------------------------


def sides(tmp_path: Path, base: list[float], other: list[float]) -> list[str]:
    return [
        "compare",
        "--base-runs", *(run_file(tmp_path, f"a{i}", f) for i, f in enumerate(base)),
        "--other-runs", *(run_file(tmp_path, f"b{i}", f) for i, f in enumerate(other)),
    ]  # fmt: skip


def test_drift_between_alternating_runs_is_no_change_where_one_pair_says_it_is(
    tmp_path: Path,
) -> None:
    """A/A with drift: the machine 3 % slower each run, the sides alternating (A B A B A
    B). Runs as the unit: no verdict. The first base run against the last other run as
    single runs, with the 3 % calibration: 1.15x reads as a change."""
    drift = [1.00, 1.03, 1.06, 1.09, 1.12, 1.15]
    result = vcsbench(*sides(tmp_path, drift[0::2], drift[1::2]))
    assert 0 == result.returncode, result.stdout + result.stderr
    assert "slower" not in result.stdout and "faster" not in result.stdout
    assert "~ 1.03x [" in time_line(result.stdout)
    single = vcsbench(
        "compare", run_file(tmp_path, "x", 1.00, sd=0.03), run_file(tmp_path, "y", 1.15, sd=0.03)
    )
    assert "1.15x slower" in time_line(single.stdout)


def test_a_real_shift_is_caught_with_its_interval_and_gated(tmp_path: Path) -> None:
    base, other = [1.00, 1.02, 0.99], [1.20, 1.23, 1.19]
    result = vcsbench(*sides(tmp_path, base, other), "--fail-on", "time:10%")
    assert 1 == result.returncode, result.stdout + result.stderr
    expected = between("time", base, other, None)
    assert expected.interval is not None and expected.ratio is not None
    line = time_line(result.stdout)
    assert f"{expected.ratio:.2f}x slower" in line
    assert f"[{expected.interval[0]:.2f}–{expected.interval[1]:.2f}]" in line
    assert "GATE FAILS git-pygit2 create+commit hello ext4:size=256M: time" in result.stdout
    assert "(1.00x ~)" in result.stdout  # bytes and footprint do not move with the clock


# -- the gate fails closed ---------------------------------------------------------------


def gate(tmp_path: Path, base: str, other: str, spec: str = "time:10%") -> tuple[int, str]:
    result = vcsbench("compare", base, other, "--fail-on", spec)
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, result.stdout + result.stderr


def test_the_gate_passes_what_it_can_judge_and_says_what_it_could_detect(tmp_path: Path) -> None:
    """With a calibration of 1 % a single run a side can judge 10 %."""
    code, out = gate(
        tmp_path, run_file(tmp_path, "a", 1.0, sd=0.01), run_file(tmp_path, "b", 1.02, sd=0.01)
    )
    assert 0 == code, out
    assert "gate passed: time:10%" in out
    assert "within +10% (it would detect +" in out


def test_the_gate_fails_a_rising_error_rate_whatever_the_base_had(tmp_path: Path) -> None:
    def fail(count: int) -> Any:
        def edit(document: dict[str, Any], benches: list[dict[str, Any]]) -> None:
            run_facts(document)["spread"] = spread_json(0.01)
            for bench in benches:
                bench["rounds"]["ok"] = [i >= count for i in range(len(bench["rounds"]["ok"]))]
                bench["repos_ok"] = bench["repos"] - count
                bench["errors"] = count
                bench["error_samples"] = [{"round": 0, "error": "planted"}]
                retotal(bench)

        return edit

    base = edited_result(TINY, tmp_path / "a.json", fail(1))
    other = edited_result(TINY, tmp_path / "b.json", fail(12))
    code, out = gate(tmp_path, base, other)
    assert 1 == code
    assert "error rate rose from 1 of 12 to 12 of 12 rounds" in out


def test_the_gate_fails_a_benchmark_missing_from_the_other_run(tmp_path: Path) -> None:
    def drop_git(document: dict[str, Any], benches: list[dict[str, Any]]) -> None:
        document["benchmarks"] = [
            e
            for e in document["benchmarks"]
            if benchmark_part(e)["backend"]["name"] != "git-pygit2"
        ]

    other = edited_result(TINY, tmp_path / "b.json", drop_git)
    code, out = gate(tmp_path, run_file(tmp_path, "a", 1.0, sd=0.01), other)
    assert 1 == code
    assert "GATE FAILS only in base (a.json): git-pygit2 create+commit hello" in out


def test_the_gate_fails_a_run_without_rounds(tmp_path: Path) -> None:
    def empty(document: dict[str, Any], benches: list[dict[str, Any]]) -> None:
        run_facts(document)["spread"] = spread_json(0.01)
        keep_rounds(benches[0], 0)

    code, out = gate(
        tmp_path,
        run_file(tmp_path, "a", 1.0, sd=0.01),
        edited_result(TINY, tmp_path / "b.json", empty),
    )
    assert 1 == code
    assert "no rounds in other" in out


def test_a_benchmark_named_twice_is_refused(tmp_path: Path) -> None:
    def twice(document: dict[str, Any], benches: list[dict[str, Any]]) -> None:
        document["benchmarks"].append(document["benchmarks"][0])

    code, out = gate(
        tmp_path, run_file(tmp_path, "a", 1.0), edited_result(TINY, tmp_path / "b.json", twice)
    )
    assert 2 == code
    (line,) = out.strip().splitlines()
    assert "appears twice" in line


def test_an_error_count_the_rounds_disagree_with_is_refused(tmp_path: Path) -> None:
    def all_failed(document: dict[str, Any], benches: list[dict[str, Any]]) -> None:
        benches[0]["rounds"]["ok"] = [False] * len(benches[0]["rounds"]["ok"])

    other = edited_result(TINY, tmp_path / "b.json", all_failed)
    code, out = gate(tmp_path, run_file(tmp_path, "a", 1.0), other)
    assert 2 == code
    assert "counts 0 error(s) but 12 of its 12 rounds are not ok" in out


def test_a_gate_on_a_figure_not_measured_fails(tmp_path: Path) -> None:
    """tmpfs has no device: a gate on device bytes cannot judge."""
    base = run_file(tmp_path, "a", 1.0, sd=0.01, src=TINY_TMPFS)
    other = run_file(tmp_path, "b", 1.0, sd=0.01, src=TINY_TMPFS)
    code, out = gate(tmp_path, base, other, "io_write_device:5%")
    assert 1 == code
    assert "io_write_device not measured" in out


def test_a_gate_with_too_few_rounds_to_judge_fails_even_a_tenfold_slowdown(
    tmp_path: Path,
) -> None:
    def short(factor: float) -> Any:
        def edit(document: dict[str, Any], benches: list[dict[str, Any]]) -> None:
            run_facts(document)["spread"] = spread_json(0.01)
            for bench in benches:
                keep_rounds(bench, 3)
                scale_times(bench, factor)

        return edit

    base = edited_result(TINY, tmp_path / "a.json", short(1))
    other = edited_result(TINY, tmp_path / "b.json", short(10))
    code, out = gate(tmp_path, base, other)
    assert 1 == code
    assert "cannot judge, no verdict: 3 successful rounds in the base run, under 10" in out
    bytes_code, bytes_out = gate(tmp_path, base, other, "io_write_device:5%")
    assert 1 == bytes_code
    assert "too few rounds for the test to reach significance" in bytes_out


def test_a_gate_with_too_few_runs_for_its_threshold_says_how_many_would_do(
    tmp_path: Path,
) -> None:
    code, out = gate(
        tmp_path, run_file(tmp_path, "a", 1.0, sd=0.05), run_file(tmp_path, "b", 1.0, sd=0.05)
    )
    assert 1 == code
    assert "too few runs to judge +10%: it could detect only changes beyond" in out
    assert "runs a side would (--base-runs, --other-runs)" in out


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["a.json", "--base-runs", "x.json", "y.json"], "not a mix"),
        ([], "give BASE and at least one OTHER"),
        (["a.json", "x.json", "--fail-on", "time:0%"], "with N above 0"),
    ],
)
def test_a_comparison_asked_wrongly_is_one_line(tmp_path: Path, args: list[str], says: str) -> None:
    for name in ("a", "x", "y"):
        Path(tmp_path / f"{name}.json").write_text(TINY.read_text())
    result = vcsbench("compare", *args, cwd=tmp_path)
    assert 2 == result.returncode
    (line,) = result.stderr.strip().splitlines()
    assert says in line


# -- the machine's spread, measured and recorded ------------------------------------------


def test_doctor_spread_keeps_each_separate_runs_median_and_every_later_run_records_it(
    tmp_path: Path,
) -> None:
    """Three separate runs: the calibration holds each run's median as its result file has
    it, doctor shows it, and a later run carries it into its result file."""
    env = {"VCSBENCH_DATA": str(tmp_path / "data")}
    kept = tmp_path / "runs"
    measured = vcsbench(
        "doctor", "--spread", "--runs", "3", "--repos", "12", "--backends", "git-pygit2",
        "--ops", "create", "--payloads", "hello", "--fs", f"dir:{tmp_path}",
        "--keep", str(kept), env=env,
    )  # fmt: skip
    assert 0 == measured.returncode, measured.stdout + measured.stderr
    assert "spread: run 3 of 3 done" in measured.stdout
    from vcsbench.results import read
    from vcsbench.results.spread import Spread

    medians = [read(kept / f"spread-run-{i}.json").benchmarks[0].median_ms for i in (1, 2, 3)]
    (path,) = (tmp_path / "data").glob("spread-*.json")
    spread = Spread.from_json(json.loads(path.read_text()), "spread")
    (cell,) = spread.cells
    assert ("git-pygit2", "create") == (cell.backend, cell.op)
    assert medians == list(cell.figures["time"])
    runs = [read(kept / f"spread-run-{i}.json").benchmarks[0] for i in (1, 2, 3)]
    for name in ("time_per_canary", "time_per_writes"):  # each round over its canary
        assert list(cell.figures[name]) == [run_figure(b, name) for b in runs]
    shown = vcsbench("doctor", env=env)
    assert f"git-pygit2 create {cell.fstype}: ±{100 * (cell.sd_log() or 0):.1f}%" in shown.stdout
    out = tmp_path / "later.json"
    later = vcsbench(
        *run_args("12", fs=f"dir:{tmp_path}", out=out),
        env=env,
    )  # fmt: skip
    assert 0 == later.returncode, later.stdout + later.stderr
    recorded = read(out).spread
    assert recorded is not None and recorded.cells == spread.cells
    # A calibration from before each round was paired with its canary: not read as one
    older = json.loads(path.read_text())
    for kept_cell in older["cells"]:
        figures = kept_cell["figures"]
        figures["time_canary"] = figures.pop("time_per_canary")
        figures["time_writes"] = figures.pop("time_per_writes")
    path.write_text(json.dumps(older))
    said = vcsbench("doctor", env=env).stdout
    assert "measured before each round was paired with its canary, so compare uses" in said


def test_a_variant_of_the_same_backend_in_the_other_run_is_matched(tmp_path: Path) -> None:
    """A planted slowdown runs as git-pygit2[delay=...]: compare sets it against
    git-pygit2 of the base run, naming both."""

    def delayed(document: dict[str, Any], benches: list[dict[str, Any]]) -> None:
        run_facts(document)["spread"] = spread_json(0.01)
        for bench in benches:
            if bench["backend"]["name"] == "git-pygit2":
                bench["backend"]["variant"] = "git-pygit2[delay=1ms]"
                scale_times(bench, 2.0)

    other = edited_result(TINY, tmp_path / "b.json", delayed)
    result = vcsbench("compare", run_file(tmp_path, "a", 1.0, sd=0.01), other)
    assert 0 == result.returncode, result.stderr
    line = time_line(result.stdout, "git-pygit2 → git-pygit2[delay=1ms] create+commit")
    assert "2.00x slower" in line
    assert "only in" not in result.stdout


def test_a_report_ratio_of_a_busy_run_gives_no_verdict_and_says_why(tmp_path: Path) -> None:
    """In a report, two benchmarks run one after the other, with a calibration that
    would call their difference: one of them ran beside other processes' work."""

    def edit(document: dict[str, Any], benches: list[dict[str, Any]]) -> None:
        run_facts(document)["spread"] = spread_json(0.01)
        benches[1]["sampler"]["samples"] = [
            {"t_s": float(i), "runnable": 3, "others_cpu": 1.5} for i in range(4)
        ]

    path = edited_result(TINY, tmp_path / "busy.json", edit)
    report = vcsbench("report", path, "--baseline", "git-pygit2")
    assert 0 == report.returncode, report.stderr
    from vcsbench.report.ratios import time_ratio
    from vcsbench.results import read

    git, svn = read(path).benchmarks
    found = time_ratio(svn, git)
    assert found is not None and found.busy == "other processes used 1.50 CPUs on average"
    assert "no verdict (busy machine: other processes used 1.50 CPUs" in found.verdict()
    quiet = time_ratio(*read(run_file(tmp_path, "q", 1.0, sd=0.01)).benchmarks[::-1])
    assert quiet is not None and quiet.verdict() == "slower"  # the same pair, not busy
