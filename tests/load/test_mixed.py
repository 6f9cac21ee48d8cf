"""A mixed load (``--scenario mixed --mix``): commits, updates and clones in the proportions
asked, each kind's figures apart, every session verified; bad mixes refused in one line."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from helpers import one_client_config, require_backend, submitted_repositories, vcsbench

from vcsbench.load.figures import step_figures
from vcsbench.load.paths import parse_path


def _step(kinds: list[str], latency: list[float], errors: list[str | None]) -> dict[str, Any]:
    n = len(kinds)
    records = {
        "step": [0] * n, "student": list(range(n)), "visit": [1] * n,
        "t_intended": [0.0] * n, "t_start": [0.0] * n, "latency_s": latency,
        "error": errors, "retries": [0] * n, "kind": kinds,
    }  # fmt: skip
    counters = {
        "device": None, "server_cpu_s": 0.0, "server_cpu_by_pid": {},
        "server_write_by_pid": {}, "client_cpu_s": 0.0,
    }  # fmt: skip
    return {
        "level": 2,
        "records": records,
        "before": {"t": 0.0, **counters},
        "after": {**counters, "t": 10.0},
    }


def test_each_kinds_figures_are_its_own_sessions() -> None:
    """Ten commits of 10..100 ms, five updates of 2 ms and one failed, four clones of
    1 s: each kind's percentiles are over its own successful sessions."""
    kinds = ["commit"] * 10 + ["update"] * 6 + ["clone"] * 4
    latency = [0.01 * (i + 1) for i in range(10)] + [0.002] * 5 + [9.0] + [1.0] * 4
    errors: list[str | None] = [None] * 15 + ["update"] + [None] * 4
    row = step_figures(_step(kinds, latency, errors), [])
    by = row["kinds"]
    assert list(by) == ["commit", "update", "clone"]
    assert by["commit"]["sessions"] == 10 and by["commit"]["ok"] == 10
    assert by["commit"]["latency_ms"]["p50"] == pytest.approx(55.0)
    assert by["commit"]["latency_ms"]["p90"] == pytest.approx(91.0)
    assert by["commit"]["latency_ms"]["p95"] is None  # ten commits hold no p95
    assert by["update"]["sessions"] == 6 and by["update"]["ok"] == 5
    assert by["update"]["errors"] == {"update": 1}
    assert by["update"]["latency_ms"]["max"] == pytest.approx(2.0)  # the failed one out
    assert by["clone"]["latency_ms"]["p50"] == pytest.approx(1000.0)
    # the whole step: every session, as before
    assert row["sessions"] == 20 and row["errors"] == {"update": 1}
    # one kind (any other scenario): no breakdown
    assert "kinds" not in step_figures(_step(["deadline"] * 3, [0.1] * 3, [None] * 3), [])


def test_an_update_that_left_the_working_copy_wrong_is_found(tmp_path: Path) -> None:
    from vcsbench.load.client_base import Client
    from vcsbench.load.repositories import repo_name
    from vcsbench.load.scenario import Session
    from vcsbench.load.scenarios import SCENARIOS

    config = one_client_config("svnserve", str(tmp_path), scenario="mixed", students=8)
    client = Client(config, tmp_path)
    wc = client.wc_dir(repo_name(3))
    (wc / ".svn").mkdir(parents=True)
    (wc / "a.txt").write_bytes(b"an older revision")
    mixed = SCENARIOS["mixed"]
    problems = mixed.check(client, Session(3, 1, {"a.txt": b"the newest"}, "update"))
    assert problems == ["a.txt: content differs (17 bytes, expected 10)"]
    assert wc.is_dir()  # kept for the next update
    never = mixed.check(client, Session(4, 1, {"a.txt": b"x"}, "update"))
    assert never == [f"{client.wc_dir(repo_name(4))} was not made"]


def test_a_mixed_steps_lost_commit_is_flipped_among_its_other_kinds(tmp_path: Path) -> None:
    """The commits are verified as a deadline's, among updates and clones: student 1's
    second commit claimed good is not in its repository, and that commit -- not the
    update beside it -- becomes a verify error."""
    from vcsbench.load.scenarios import SCENARIOS
    from vcsbench.workload.payloads import load_payload

    payload = dict(load_payload("hello").files)
    repos = submitted_repositories(tmp_path, payload, 2)
    n = 5
    records: dict[str, list[Any]] = {
        "step": [0] * n, "student": [0, 1, 1, 1, 3], "visit": [1, 1, 1, 2, 1],
        "t_intended": [0.0] * n, "t_start": [0.0] * n, "latency_s": [0.01] * n,
        "error": [None] * n, "retries": [0] * n,
        "kind": ["commit", "commit", "update", "commit", "clone"],
    }  # fmt: skip
    found = SCENARIOS["mixed"].verify_step(
        parse_path("local:svn-fs"), repos, records, 0, {}, payload
    )
    assert records["error"] == [None, None, None, "verify", None]
    assert {"s000000", "s000001"} == found.read
    assert 1 == len(found.problems) and "1 revisions, 2 sessions succeeded" in found.problems[0]


def _mixed(tmp_path: Path, paths: str, mix: str, *extra: str) -> dict[str, Any]:
    out = tmp_path / "load.json"
    (tmp_path / "fs").mkdir(exist_ok=True)
    result = vcsbench(
        "load", "--scenario", "mixed", "--mix", mix, "--paths", paths, "--students", "12",
        "--history", "5", "--steps", "2", "--step-seconds", "3", "--live", "none",
        "--out", str(out), *extra, timeout=300,
    )  # fmt: skip
    assert 0 == result.returncode, result.stderr
    assert "By kind of session" in result.stdout
    document: dict[str, Any] = json.loads(out.read_text())["vcsbench_load"]
    return document


def _shares_hold(entry: dict[str, Any], mix: dict[str, int]) -> None:
    """Every session succeeded and was verified, and each kind took its share: within
    two of its weight's share of the step's sessions, plus the updates taken as commits
    while no student's commit had yet succeeded (counted from the raw records: the first
    sessions' order)."""
    (step,) = entry["steps"]
    assert step["errors"] == {} and entry["verify_failure_count"] == 0, entry["error_details"]
    kinds = step["kinds"]
    assert set(kinds) == set(mix)
    total, weight = step["sessions"], sum(mix.values())
    assert sum(k["sessions"] for k in kinds.values()) == total
    for kind, share in mix.items():
        expected = total * share / weight
        slack = 2 + (2 if kind in ("commit", "update") else 0)  # each client's first update
        assert abs(kinds[kind]["sessions"] - expected) <= slack, (kind, kinds, total)


def test_a_local_mixed_load_holds_its_proportions_and_verifies_every_kind(
    tmp_path: Path,
) -> None:
    require_backend("git-pygit2")
    mix = {"commit": 2, "update": 1, "clone": 1}
    document = _mixed(
        tmp_path, "local:git-pygit2", "commit=2,update=1,clone=1", "--fs", f"dir:{tmp_path / 'fs'}"
    )
    assert document["mix"] == mix and document["scenario"] == "mixed"
    (entry,) = document["loads"]
    _shares_hold(entry, mix)
    raw = entry["raw"]
    assert set(raw["kind"]) == set(mix)
    # an update brings a commit made after its working copy: some student was updated
    # after a later commit of theirs
    later = [
        i for i, kind in enumerate(raw["kind"])
        if kind == "update" and raw["visit"][i] > 1
    ]  # fmt: skip
    assert later, raw["visit"]


@pytest.mark.serial
def test_a_mixed_load_over_each_vcss_server(tmp_path: Path) -> None:
    """svnserve, git daemon and hgweb: svn update, git pull, hg pull -u, each working copy
    checked after its update; the report by kind."""
    if os.geteuid() != 0:
        pytest.skip("Apache needs root")
    mix = {"commit": 3, "update": 2, "clone": 1}
    document = _mixed(
        tmp_path, "svnserve,git-daemon,apache-hg", "commit=3,update=2,clone=1", "--fs", "tmpfs"
    )
    for entry in document["loads"]:
        _shares_hold(entry, mix)


@pytest.mark.parametrize(
    ("mix", "says"),
    [
        ("commit=80,pull=20", "'pull=20' is not a kind and its weight"),
        ("commit=x", "'commit=x' is not a kind and its weight"),
        ("commit=1,commit=2", "'commit=2' is not a kind and its weight"),
        ("commit=0,clone=0", "the weights must add up to more than 0"),
        ("commit=1,update=1", "local:svn-fs has no update; give it a weight of 0"),
    ],
)
def test_a_bad_mix_is_one_line(mix: str, says: str, tmp_path: Path) -> None:
    result = vcsbench(
        "load", "--scenario", "mixed", "--mix", mix, "--paths", "local:svn-fs",
        "--fs", f"dir:{tmp_path}", "--out", str(tmp_path / "x.json"),
    )  # fmt: skip
    assert 2 == result.returncode or 1 == result.returncode
    lines = result.stderr.strip().splitlines()
    assert 1 == len(lines) and says in lines[0], result.stderr
