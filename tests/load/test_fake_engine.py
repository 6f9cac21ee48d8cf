"""The load run against an engine whose sessions are known (``fake_engine.py``): what the
run reduces, verifies and writes for each step is those sessions' figures, exactly."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from helpers import one_client_config, require_backend

from vcsbench.load import run as load_run
from vcsbench.load.engine_args import EngineArgs
from vcsbench.load.plan import LoadPlan

FAKE = Path(__file__).with_name("fake_engine.py")


class FakeEngineArgs(EngineArgs):
    def argv(self) -> list[str]:
        return [sys.executable, str(FAKE)]


def test_each_steps_figures_are_its_known_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    require_backend("git-pygit2")
    monkeypatch.setattr(load_run, "EngineArgs", FakeEngineArgs)
    (tmp_path / "fs").mkdir()
    plan = LoadPlan.parse(
        scenario="deadline", paths="local:git-pygit2", fs=f"dir:{tmp_path / 'fs'}",
        students=12, steps="1,2", step_seconds=1.0, precreate=True, live="lines",
    )  # fmt: skip
    out = tmp_path / "load.json"
    capsys.readouterr()
    load_run.run_load(plan, out, ["vcsbench", "load"])
    # The live view, halfway through each step: its first half's sessions, as sent.
    # Step 1: k = 0..4 (1-5 ms, k = 4 refused); step 2: k = 0..9 (1-10 ms, k = 4, 9).
    said = capsys.readouterr().err
    assert (
        "local:git-pygit2, running step 1 of 2: 1 s of 2 s, 5 sessions so far (1 failed), "
        "p50 3 ms, p95 5 ms (not yet verified)\nstep 1/2: 1 client, 10 sessions" in said
    )
    assert (
        "running step 2 of 2: 1 s of 2 s, 10 sessions so far (2 failed), p50 5 ms, p95 10 ms"
        in said
    )
    (entry,) = json.loads(out.read_text())["vcsbench_load"]["loads"]
    first, second = entry["steps"]
    # Step 1 (1 client): sessions k = 0..9, k + 1 ms each; k = 4 and 9 refused.
    assert (10, 8, {"refused": 2}) == (first["sessions"], first["ok"], first["errors"])
    assert 8 / 2.0 == first["ops_per_s"]  # 8 successes in the 2.0 s window
    assert 9.0 == pytest.approx(first["latency_ms"]["max"])
    assert (1 + 2 + 3 + 4 + 6 + 7 + 8 + 9) / 8 == pytest.approx(first["latency_ms"]["mean"])
    # Step 2 (2 clients): k = 0..19 over 12 students; k = 4, 9, 14, 19 refused; k = 0
    # (student 0) recorded a success but committed nothing: the read-back finds student
    # 0 one revision short and flips its last success of the step (k = 12) to verify.
    assert (20, 15) == (second["sessions"], second["ok"])
    assert {"refused": 4, "verify": 1} == second["errors"]
    assert 15 / 2.0 == second["ops_per_s"]
    ok_ms = [k + 1 for k in range(20) if k not in (4, 9, 12, 14, 19)]
    assert max(ok_ms) == pytest.approx(second["latency_ms"]["max"])
    assert sum(ok_ms) / len(ok_ms) == pytest.approx(second["latency_ms"]["mean"])
    assert 1 == entry["verify_failure_count"]
    assert entry["verify_failures"][0].startswith("s000000: ")
    # Every student with a success read back: all but student 9 (refused both times).
    assert 11 == entry["verified_repositories"]
    # ...in the scenario's own sentence, which the report prints as it is.
    assert entry["verification"] == (
        "Verified 11 repositories, each after the step that wrote it; 1 failed (counted as errors)."
    )
    assert {"fake": "1"} == entry["engine"]
    # The store knows the load's machine as this machine, as a benchmark run made here
    # is known (its host name and facts): one machine, not two.
    from vcsbench.measure.machine import machine_info
    from vcsbench.results import read
    from vcsbench.results.calibration import fingerprint
    from vcsbench.store.points import machine_key

    assert machine_key(read(out))[0] == fingerprint(machine_info())[0]


def test_the_known_engines_counters_are_the_real_ones_keys() -> None:
    """A step's counters with nothing counted have every key the engine reads, so the
    known engine's steps are read as a real one's are."""
    from vcsbench.load.counters import counters, nothing_counted

    config = one_client_config("local:git-pygit2", "/nonexistent")
    assert set(nothing_counted(0.0)) == set(counters(config, [], []))
