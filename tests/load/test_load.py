"""Load runs: real overlap of C clients, figures from raw latencies, the capacity rule,
verification afterwards, errors counted when the server dies, nothing left after SIGINT,
and bad input in one line."""

from __future__ import annotations

import itertools
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from helpers import (
    DATA,
    one_client_config,
    require_backend,
    skip_or_fail,
    submitted_repositories,
    vcsbench,
    vcsbench_mounts,
)

from vcsbench.backends import make_backend
from vcsbench.load.figures import capacity, step_figures
from vcsbench.load.paths import parse_path
from vcsbench.load.scenarios import SCENARIOS
from vcsbench.workload.payloads import load_payload

CLI = (sys.executable, "-m", "vcsbench.cli")


@pytest.fixture(autouse=True)
def _no_clients_directory_left() -> Any:
    """Every load leaves the session's temp directory as it found it (a clients'
    directory left there once was found only by a later test)."""
    temp = Path(os.environ["TMPDIR"])
    before = set(temp.glob("vcsbench-*"))
    yield
    assert set() == set(temp.glob("vcsbench-*")) - before


def _max_in_flight(records: dict[str, Any], step: int) -> int:
    """The most sessions of ``step`` in flight at one instant, from their raw intervals."""
    edges = []
    for i, s in enumerate(records["step"]):
        if s == step:
            start = records["t_start"][i]
            edges += [(start, 1), (start + records["latency_s"][i], -1)]
    depth = best = 0
    for _, change in sorted(edges, key=lambda e: (e[0], e[1])):
        depth += change
        best = max(best, depth)
    return best


def _load(tmp_path: Path, *args: str, fs: str = "") -> dict[str, Any]:
    out = tmp_path / "load.json"
    (tmp_path / "fs").mkdir(exist_ok=True)
    fs = fs or f"dir:{tmp_path / 'fs'}"
    result = vcsbench("load", "--fs", fs, "--out", str(out), *args, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "Capacity" in result.stdout
    if "open" not in args:  # the report says what a closed loop cannot show
        said = " ".join(result.stdout.split())  # wrapped to the terminal's width
        assert "A closed loop hides a stalled server from the percentiles" in said
    document: dict[str, Any] = json.loads(out.read_text())["vcsbench_load"]
    return document


@pytest.mark.serial
def test_c_clients_have_c_sessions_in_flight_at_once(tmp_path: Path) -> None:
    """Every kind of client (a program over svn://, git://, http:// through Apache, and a
    backend's process of its own), each path in one run, each in its own sandbox."""
    require_backend("git-pygit2")
    paths = ["svnserve", "git-daemon", "local:git-pygit2"]
    fs = ""
    if os.geteuid() == 0:  # Apache serves as www-data: not below pytest's 0700 dirs
        paths, fs = [*paths, "apache-svn", "apache-git"], "tmpfs"
    document = _load(
        tmp_path, "--paths", ",".join(paths), "--students", "12", "--steps", "1,4",
        "--step-seconds", "1", fs=fs,
    )  # fmt: skip
    assert [entry["path"] for entry in document["loads"]] == paths
    for entry in document["loads"]:
        raw = entry["raw"]
        # One client: one session at a time. Four: four in flight at once, which gevent
        # alone could not give blocking client work (it would run them one after another).
        assert (_max_in_flight(raw, 0), _max_in_flight(raw, 1)) == (1, 4), entry["path"]
        assert [row["level"] for row in entry["steps"]] == [1, 4]
        assert all(not row["errors"] for row in entry["steps"]), entry["error_details"]
        # Every session is in the raw records, and the figures count them.
        assert sum(row["sessions"] for row in entry["steps"]) == len(raw["latency_s"])
        assert entry["verified_repositories"] == 12  # 12 students, each visited at least once
        assert entry["verify_failure_count"] == 0
    if os.geteuid() != 0:
        skip_or_fail("Apache's paths run in a tmpfs sandbox, which needs root")


def _steps(latencies: list[list[float]], errors: list[list[str | None]]) -> list[dict[str, Any]]:
    """Steps as the engine answers them: each with its sessions' records and counters;
    step k's N sessions in N/(k+1) s (1, 2, 3 ok/s ...), so that the throughput rises step
    by step."""
    steps = []
    for index, (lat, err) in enumerate(zip(latencies, errors, strict=True)):
        records: dict[str, list[Any]] = {
            k: [] for k in ("step", "student", "visit", "t_intended", "t_start", "latency_s")
        } | {"error": []}
        for i, (value, kind) in enumerate(zip(lat, err, strict=True)):
            for key, item in zip(
                records,
                (index, i, 1, 100.0 * index + i, 100.0 * index + i, value, kind),
                strict=True,
            ):
                records[key].append(item)
        steps.append(
            {
                "level": 2**index,
                "records": records,
                "before": {
                    "t": 100.0 * index,
                    "device": [0, 0, 0, 0],
                    "flushes": 100,
                    "io_pressure": [7_000_000, 3_000_000],
                    "server_cpu_s": None,
                    "server_cpu_by_pid": {"10": 1.0},
                    "server_write_by_pid": {"10": 1000},
                    "client_cpu_s": 0.0,
                },
                "after": {  # N s, N/2 s, ...: the same sessions in less time, step by step
                    "t": 100.0 * index + len(lat) / (index + 1),
                    "device": [0, 40960 * len(lat), 0, 3 * len(lat)],
                    "flushes": 100 + 2 * len(lat),
                    "io_pressure": [9_500_000, 4_000_000],  # 2.5 s and 1 s stalled
                    "server_cpu_s": None,
                    "server_cpu_by_pid": {"10": 3.0},
                    "server_write_by_pid": {"10": 1000 + 10240 * len(lat)},
                    "client_cpu_s": 0.5,
                },
            }
        )
    return steps


def test_step_figures_are_computed_from_the_raw_latencies() -> None:
    # Step 0: 0.01 .. 0.10 s, all good. Step 1: ten good and two failed.
    good = [0.01 * (i + 1) for i in range(10)]
    steps = _steps([good, [*good, 5.0, 6.0]], [[None] * 10, [None] * 10 + ["commit", "push"]])
    samples = [
        {"t_s": 1.0, "cpu_iowait_pct": 10.0, "device_busy_pct": 50.0, "dirty_bytes": 4096},
        {"t_s": 5.0, "cpu_iowait_pct": 30.0, "device_busy_pct": 70.0, "dirty_bytes": 8192},
        {"t_s": 50.0, "cpu_iowait_pct": 99.0, "device_busy_pct": 99.0, "dirty_bytes": 1},
    ]
    figures = [step_figures(step, samples) for step in steps]
    cap = capacity(figures, 2.0)
    first, second = figures
    assert first["sessions"] == 10 and first["ok"] == 10 and first["errors"] == {}
    assert first["ops_per_s"] == pytest.approx(1.0)  # 10 good in 10 s
    # Type-7 percentiles of 10..100 ms: p50 = 55, p90 = 91; ten sessions hold no p95 (20)
    # and no p99 (100): from them "p99" would be the slowest session by another name.
    assert first["latency_ms"]["p50"] == pytest.approx(55.0)
    assert first["latency_ms"]["p90"] == pytest.approx(91.0)
    assert first["latency_ms"]["p95"] is None and first["latency_ms"]["p99"] is None
    assert first["latency_ms"]["max"] == pytest.approx(100.0)
    # Failed sessions are counted by kind and left out of the percentiles.
    assert second["errors"] == {"commit": 1, "push": 1}
    assert second["latency_ms"]["max"] == pytest.approx(100.0)
    assert first["device"]["write_bytes_per_session"] == 40960
    assert first["device"]["write_requests_per_session"] == 3
    assert first["device"]["flush_requests"] == 20  # 100 before, 120 after
    assert first["device"]["flush_requests_per_session"] == 2
    # IO pressure: 2.5 s of the 10 s some task stalled, 1 s every task
    assert first["system"]["io_pressure_some_pct"] == pytest.approx(25.0)
    assert first["system"]["io_pressure_full_pct"] == pytest.approx(10.0)
    assert second["system"]["io_pressure_some_pct"] == pytest.approx(2.5 / 6 * 100)  # 12 in 6 s
    # The server's processes wrote a quarter of what the device did: the rest is theirs
    # to no process (journal, metadata).
    assert first["device"]["server_process_write_bytes"] == 102400
    assert first["device"]["unattributed_share"] == pytest.approx(0.75)
    assert first["server_cpu_s"] == pytest.approx(2.0)
    # Only the samples inside the step's window: (10 + 30) / 2.
    assert first["system"]["iowait_pct_mean"] == pytest.approx(20.0)
    assert first["system"]["dirty_bytes_max"] == 8192
    # no capacity verdict rests on a p95 that ten sessions cannot give
    assert cap["level"] is None
    assert cap["reason"] == (
        "10 successful sessions at 1 client, fewer than the 20 a p95 is read from: longer "
        "steps (--step-seconds) give more"
    )


@pytest.mark.parametrize("n, given", [(1, []), (2, ["p50"]), (10, ["p50", "p90"]),
                                      (19, ["p50", "p90"]), (20, ["p50", "p90", "p95"]),
                                      (99, ["p50", "p90", "p95"]),
                                      (100, ["p50", "p90", "p95", "p99"])])  # fmt: skip
def test_a_percentile_is_given_only_where_a_session_lies_above_it(n: int, given: list[str]) -> None:
    from vcsbench.load.figures import latency_ms

    found = latency_ms([0.001 * (i + 1) for i in range(n)])
    assert given == [k for k in ("p50", "p90", "p95", "p99") if found[k] is not None]
    assert found["max"] == pytest.approx(n)  # the slowest, in ms, always
    if n == 100:
        assert found["p99"] == pytest.approx(99.01)  # type 7: 99 + 0.01 x (100 - 99)


def test_io_pressure_is_read_as_the_kernel_writes_it(tmp_path: Path) -> None:
    from vcsbench.measure.probes import read_io_pressure

    psi = tmp_path / "io"
    psi.write_text(
        "some avg10=2.41 avg60=4.32 avg300=6.20 total=2014586950\n"
        "full avg10=0.12 avg60=0.47 avg300=2.47 total=1417416024\n"
    )
    assert (2014586950, 1417416024) == read_io_pressure(str(psi))
    assert None is read_io_pressure(str(tmp_path / "absent"))


def test_a_server_process_that_ends_mid_step_is_named_not_subtracted() -> None:
    (step,) = _steps([[0.01] * 10], [[None] * 10])
    step["before"]["server_cpu_by_pid"] = {"10": 1.0, "11": 5.0}
    step["after"]["server_cpu_by_pid"] = {"10": 3.0, "12": 0.25}  # 11 ended, 12 began
    row = step_figures(step, [])
    assert row["server_cpu_s"] == pytest.approx(2.25)
    assert 1 == row["server_processes_ended"]


def test_capacity_is_the_highest_step_within_the_bound_while_throughput_rises() -> None:
    def row(
        clients: int, p95: float | None, ok_s: float, errors: dict[str, int] | None = None
    ) -> Any:
        return {
            "level": clients,
            "ok": 0 if p95 is None else 100,
            "ops_per_s": ok_s,
            "errors": errors or {},
            "latency_ms": {"p95": p95},
        }

    # A first step slow with repository creation (p95 30 ms), then 12-14 ms while the
    # throughput rises; at 8 clients it rises no more (47 is not 5% above 45): 4 clients.
    # The old rule (within 2x the first step's p95, alone) said 8 clients for this path.
    storm = [row(1, 30.0, 10.0), row(2, 12.0, 25.0), row(4, 14.0, 45.0), row(8, 40.0, 47.0)]
    cap = capacity(storm, 2.0)
    assert 4 == cap["level"] and 45.0 == cap["ops_per_s"]
    assert "within 2x the lowest step p95 (12.0 ms)" in cap["rule"]
    assert "rose more than 5% a step" in cap["rule"]
    assert "ok/s 47.0 at 8 clients, not 5% above 45.0 at 4 clients" == cap["stopped"]
    # Throughput flat from the first step: more clients only queue.
    assert 1 == capacity([row(1, 10.0, 10.0), row(2, 11.0, 10.4)], 2.0)["level"]
    # Rising throughput, but p95 past 2x the lowest (20 ms) at 4 clients: 2 clients.
    rising = capacity([row(1, 10.0, 10.0), row(2, 12.0, 20.0), row(4, 25.0, 30.0)], 2.0)
    assert 2 == rising["level"]
    assert "p95 25.0 ms at 4 clients, over 20.0 ms" == rising["stopped"]
    assert "" == capacity([row(1, 10.0, 10.0), row(2, 12.0, 20.0)], 2.0)["stopped"]
    assert capacity([row(1, 10.0, 5.0), row(2, 11.0, 9.0, {"commit": 1})], 2.0)["level"] == 1
    assert capacity([row(1, None, 0.0, {"create": 3})], 2.0)["level"] is None
    # An open-loop step whose generator fell behind offered less than its level: stop.
    late = [row(2, 10.0, 2.0), {**row(20, 11.0, 15.0), "generator": {"behind": True}}]
    late_cap = capacity(late, 2.0)
    assert late_cap["level"] == 2
    assert "the load generator falling behind at 20 arrivals/s" == late_cap["stopped"]
    assert "and the load generator on its schedule" in late_cap["rule"]


def test_verification_turns_a_lost_commit_into_an_error(tmp_path: Path) -> None:
    payload = dict(load_payload("hello").files)
    repos = submitted_repositories(tmp_path, payload, 2)
    # The records claim two good sessions for student 1, but only one revision exists.
    records: dict[str, list[Any]] = {
        "step": [0, 0, 0],
        "student": [0, 1, 1],
        "visit": [1, 1, 2],
        "t_intended": [0.0, 0.1, 0.2],
        "t_start": [0.0, 0.1, 0.2],
        "latency_s": [0.01, 0.01, 0.01],
        "error": [None, None, None],
    }
    found = SCENARIOS["deadline"].verify_step(
        parse_path("local:svn-fs"), repos, records, 0, {}, payload
    )
    assert {"s000000", "s000001"} == found.read
    assert records["error"] == [None, None, "verify"]
    problems = found.problems
    assert len(problems) == 1 and problems[0].startswith("s000001: ")
    assert "1 revisions, 2 sessions succeeded" in problems[0]
    assert "content differs" in problems[0]  # visit 2's line is not there


def _processes(marker: str, within: Path | str) -> list[psutil.Process]:
    """Running processes of this test whose command line holds ``marker`` and a path
    below ``within`` (the engine names its result file; a worker its clients' home)."""
    return [
        p for p in psutil.process_iter(["cmdline"])
        if marker in " ".join(p.info["cmdline"] or [])
        and str(within) in " ".join(p.info["cmdline"] or [])
    ]  # fmt: skip


def _ended(proc: psutil.Process) -> bool:
    """Gone, or a zombie nobody reaps (its parent, the killed run, is gone)."""
    try:
        return not proc.is_running() or proc.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _server_of(logs: Path, name: str) -> psutil.Process | None:
    for proc in psutil.process_iter(["name", "cmdline"]):
        cmdline = proc.info["cmdline"] or []
        if name in (proc.info["name"] or "") and any(str(logs) in part for part in cmdline):
            return proc
    return None


def _start(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    (tmp_path / "fs").mkdir(exist_ok=True)
    return subprocess.Popen(
        [
            *CLI,
            "load",
            "--fs",
            f"dir:{tmp_path / 'fs'}",
            "--out",
            str(tmp_path / "load.json"),
            *args,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for(find: Any, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = find()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError("not seen in time")


def test_a_server_that_dies_mid_run_gives_counted_errors_not_a_hang(tmp_path: Path) -> None:
    proc = _start(
        tmp_path, "--paths", "svnserve", "--students", "30", "--steps", "1,2",
        "--step-seconds", "3", "--fail-on", "errors",
    )  # fmt: skip
    logs = tmp_path / "load-logs"
    server = _wait_for(lambda: _server_of(logs, "svnserve"))
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:  # the first step ends (however busy the machine): kill it now
        seen.append(line)
        if line.startswith("step 1/2:"):
            break
    server.kill()
    out, rest = proc.communicate(timeout=240)
    err = "".join(seen) + rest
    assert proc.returncode == 1, err  # --fail-on errors
    # Said on screen: how many failed, of which kind, and the first cause.
    summary = next(line for line in err.splitlines() if line.startswith("vcsbench load: svnserve"))
    assert "sessions failed (commit " in summary and "first: commit:" in summary
    assert "--fail-on errors:" in err
    entry = json.loads((tmp_path / "load.json").read_text())["vcsbench_load"]["loads"][0]
    first, second = entry["steps"]
    assert first["errors"] == {} and first["ok"] > 0
    # svnmucc cannot connect: each session after the kill is a failed commit.
    assert second["errors"].get("commit", 0) > 0
    assert entry["capacity"]["level"] == 1
    assert "commit" in " ".join(entry["error_details"])
    assert "Capacity: **1 client**" in out


@pytest.mark.serial
def test_open_loop_latency_counts_from_the_scheduled_arrival(tmp_path: Path) -> None:
    """A server paused for a second: in an open loop every arrival during the pause waits,
    and that shows in the upper percentiles (a closed loop would just send fewer)."""
    proc = _start(
        tmp_path, "--paths", "svnserve", "--shape", "open", "--steps", "10",
        "--step-seconds", "4", "--students", "80", "--max-clients", "16",
    )  # fmt: skip
    logs = tmp_path / "load-logs"
    server = _wait_for(lambda: _server_of(logs, "svnserve"))
    time.sleep(2.5)  # the engine starts, then the step runs for 4 s
    os.killpg(server.pid, signal.SIGSTOP)
    time.sleep(1.0)
    os.killpg(server.pid, signal.SIGCONT)
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err
    entry = json.loads((tmp_path / "load.json").read_text())["vcsbench_load"]["loads"][0]
    (step,) = entry["steps"]
    raw = entry["raw"]
    assert step["errors"] == {}
    # About ten arrivals a second for 4 s. How late the generator sent them is measured
    # (on two cores it shares the CPU with the clients and the server when the queue
    # drains after the pause) and a step is flagged exactly when its p99 is over the limit.
    generator = step["generator"]
    assert 35 <= generator["arrivals"] <= 41
    assert generator["behind"] == (generator["lag_ms_p99"] > generator["limit_ms"])
    # Arrivals in the paused second waited for it: several sessions took over half a
    # second from their arrival and the p95 shows it, while others took far less. About
    # 40 sessions hold no p99 (100 would).
    slow = [x for x in raw["latency_s"] if x > 0.5]
    assert len(slow) >= 5
    assert step["latency_ms"]["p95"] > 500 and step["latency_ms"]["p99"] is None
    assert min(raw["latency_s"]) < 0.5
    # Latency runs from the scheduled arrival, never before it.
    assert all(s >= i for s, i in zip(raw["t_start"], raw["t_intended"], strict=True))
    assert "arrivals/s" in out


def test_poisson_arrivals_have_exponential_gaps_at_the_rate_and_the_seeds_times(
    tmp_path: Path,
) -> None:
    """``--arrivals poisson:7`` at 20 a second for 5 s: about 100 arrivals, the gaps
    between their scheduled times exponential (as spread as their mean: a coefficient of
    variation near 1, where a fixed schedule's is 0) and exactly the seed's draws, so the
    same command arrives at the same times every run."""
    document = _load(
        tmp_path, "--paths", "local:svn-fs", "--shape", "open", "--steps", "20",
        "--step-seconds", "5", "--students", "80", "--max-clients", "8",
        "--arrivals", "poisson:7",
    )  # fmt: skip
    assert "poisson:7" == document["arrivals"]
    entry = document["loads"][0]
    assert entry["steps"][0]["errors"] == {}
    due = sorted(entry["raw"]["t_intended"])
    gaps = [b - a for a, b in itertools.pairwise(due)]
    assert 60 <= len(due) <= 140, len(due)  # Poisson: 100 +- 4 standard deviations
    mean = statistics.fmean(gaps)
    assert 0.035 < mean < 0.065, mean
    assert 0.7 < statistics.pstdev(gaps) / mean < 1.3
    draws = random.Random("7:0:0")
    draws.expovariate(20.0)  # the first arrival's gap from the step's start
    want = [draws.expovariate(20.0) for _ in gaps]
    assert want == pytest.approx(gaps, abs=1e-6)


def test_a_think_time_is_each_clients_untimed_pause_between_its_sessions(
    tmp_path: Path,
) -> None:
    """``--think 0.3`` with one client: every session starts at least 0.3 s after the one
    before it ended and not much later, the pause is not in any session's latency, and
    the step makes about a third as many sessions as its length allows back to back."""
    document = _load(
        tmp_path, "--paths", "local:svn-fs", "--steps", "1", "--step-seconds", "3",
        "--students", "10", "--think", "0.3",
    )  # fmt: skip
    assert [0.3, 0.3] == document["think_s"]
    raw = document["loads"][0]["raw"]
    starts, latencies = raw["t_start"], raw["latency_s"]
    order = sorted(range(len(starts)), key=starts.__getitem__)
    pauses = [starts[b] - (starts[a] + latencies[a]) for a, b in itertools.pairwise(order)]
    assert 4 <= len(starts) <= 11, len(starts)  # 3 s / (0.3 s + a session)
    assert min(pauses) >= 0.3
    assert statistics.median(pauses) < 0.3 + 0.1
    assert min(latencies) < 0.3  # the pause is in no session: a local commit takes less


@pytest.mark.parametrize(
    ("signum", "path", "server"),
    [
        (signal.SIGINT, "git-daemon", "git-daemon"),
        (signal.SIGINT, "apache-svn-https", "apache2"),
        (signal.SIGTERM, "git-ssh", "sshd"),
    ],
)
@pytest.mark.serial
def test_an_interrupted_load_leaves_no_server_and_no_mount(
    tmp_path: Path, signum: signal.Signals, path: str, server: str
) -> None:
    """Nothing is left: no server, no proxy (the ssh path runs behind one), no key or
    certificate (they live in the sandbox, which is gone), no mount."""
    if os.geteuid() != 0:
        pytest.skip("tmpfs needs root")
    (tmp_path / "fs").mkdir()
    args = ["--paths", path, "--students", "20", "--steps", "1,2", "--step-seconds", "30"]
    if path == "git-ssh":
        args += ["--rtt", "5"]
    proc = subprocess.Popen(
        [*CLI, "load", "--fs", "tmpfs", *args, "--out", str(tmp_path / "load.json")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    logs = tmp_path / "load-logs"
    _wait_for(lambda: _server_of(logs, server))
    _wait_for(lambda: _processes("vcsbench.load.engine", tmp_path))
    time.sleep(1.0)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signum, err
    assert _server_of(logs, server) is None
    assert _server_of(logs, "toxiproxy") is None
    assert vcsbench_mounts() == ""
    assert _processes("vcsbench.load.engine", tmp_path) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--scenario", "stampede"], "scenario 'stampede' is not known; use deadline"),
        (["--age", "old"], "age 'old' is not a whole number >= 0 or a population"),
        (["--age", "term:students=2"], "give assignments, commits"),
        (["--plan", "students=10"], "--plan 'students=10' needs both"),
        (["--paths", "ftp"], "access path 'ftp' is not known; use svnserve, apache-svn"),
        (["--rtt", "10,fast"], "--rtt 'fast' is not a round-trip time; give milliseconds"),
        (["--rtt", "2.5"], "--rtt '2.5' is not a whole number of milliseconds"),
        (["--rtt", "10", "--bandwidth", "lots"], "--bandwidth 'lots' is not a bandwidth; give"),
        (["--bandwidth", "10mbit"], "--bandwidth goes with --rtt (give --rtt 0 for none)"),
        (
            ["--rtt", "10", "--paths", "local:svn-fs"],
            "--rtt puts a distance between clients and a server; local:svn-fs has none",
        ),
        (["--paths", "local:hg-cli"], "only svn and git backends are offered"),
        (
            ["--paths", "local:git-pygit2[version=1.15.1]"],
            "version= is a benchmark's variant key; a load's local path takes the backend's own",
        ),
        (["--paths", "local:git-pygit2[fsync=maybe]"], "option fsync='maybe' is not a boolean"),
        (["--steps", "1,two"], "--steps '1,two' is not a list of client counts"),
        (["--students", "3", "--steps", "1,4"], "--students 3 is fewer than the 4 clients"),
        (["--shape", "spiral"], "--shape 'spiral' is not known; use closed or open"),
        (["--shape", "open", "--steps", "2,-1"], "not a list of arrival rates per second"),
        (["--shape", "open", "--arrivals", "gauss"], "--arrivals 'gauss' is not known; use"),
        (["--shape", "open", "--arrivals", "poisson:x"], "poisson:SEED (a whole number)"),
        (["--arrivals", "poisson"], "--arrivals poisson is for the open loop (--shape open)"),
        (["--think", "5-1"], "--think '5-1' is not a pause; give seconds S or LO-HI"),
        (["--think", "soon"], "--think 'soon' is not a pause"),
        (["--shape", "open", "--think", "2"], "--think is for the closed loop"),
        (["--payload", "nothing"], "payload 'nothing' is not known"),
        (["--capacity-factor", "1"], "--capacity-factor 1.0 must be > 1"),
        (["--fs", "ntfs"], "ntfs"),
        (["--expect-workers", "2", "--paths", "local:svn-fs"], "workers started elsewhere"),
        (["--workers", "1", "--expect-workers", "1"], "not both"),
        (["--master-port", "5557"], "--master-bind and --master-port go with --expect-workers"),
        (["--listen", "192.0.2.1"], "--listen '192.0.2.1' is not an address of this machine"),
    ],
)
def test_bad_load_input_is_one_line(args: list[str], message: str, tmp_path: Path) -> None:
    result = vcsbench("load", "--out", str(tmp_path / "x.json"), *args)
    assert result.returncode == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_a_local_path_takes_a_backend_variant() -> None:
    """A durable git beside svn in one load (the deadline's like with like): the variant's
    options reach each client's backend (its text is what the client process makes)."""
    require_backend("git-pygit2")
    path = parse_path("local:git-pygit2[fsync=true]")
    assert (path.vcs, path.backend) == ("git", "git-pygit2[fsync=true]")
    assert make_backend(path.backend).options["fsync"] == "true"


def test_a_load_that_measures_nothing_exits_non_zero(tmp_path: Path) -> None:
    """--age a hundred billion: no access path has room for it, each said; the run ends
    saying nothing was measured, exit 1 (a script must not read it as a load that ran)."""
    result = vcsbench(
        "load", "--age", "99999999999", "--fs", f"dir:{tmp_path}", "--store", "none",
        "--out", str(tmp_path / "x.json"),
    )  # fmt: skip
    assert 1 == result.returncode, result.stdout[-1000:]
    last = result.stderr.strip().splitlines()[-1]
    assert "nothing was measured: no access path could be run (the first, svnserve: --age" in last


def test_a_port_in_use_is_refused_in_one_line(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        result = vcsbench(
            "load", "--paths", "svnserve", "--port", str(port), "--out", str(tmp_path / "x.json")
        )
    assert result.returncode == 2
    assert f"port {port} on 127.0.0.1 is already in use" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


NEW_TRANSPORTS = (
    "apache-svn-https,svn-ssh,apache-git-https,git-ssh,apache-hg,apache-hg-https,hg-ssh"
)


@pytest.mark.parametrize(
    ("scenario", "paths", "shape"),
    [
        # every new path; each transport's clients and server in a deadline
        ("deadline", NEW_TRANSPORTS, ["--shape", "open", "--steps", "4", "--max-clients", "4"]),
        # Mercurial's clients in each scenario, and each transport once more
        ("shared", "apache-hg,hg-ssh,git-ssh,apache-svn-https", ["--steps", "2"]),
        ("clone-storm", "apache-hg-https,hg-ssh,svn-ssh,apache-git-https", ["--steps", "2"]),
    ],
    ids=["deadline", "shared", "clone-storm"],
)
def test_every_transport_serves_each_scenario_read_back_without_error(
    tmp_path: Path, scenario: str, paths: str, shape: list[str]
) -> None:
    """HTTPS, ssh and Mercurial's servers in every scenario: every session succeeds and
    is read back (deadline: the repositories; shared: the one repository; clone-storm:
    each clone, file by file), and the result says how each path was served."""
    if os.geteuid() != 0:
        pytest.skip("Apache and sshd need root")
    found = _load(
        tmp_path, "--scenario", scenario, "--paths", paths, "--students", "12",
        "--history", "5", "--step-seconds", "1", *shape, fs="tmpfs",
    )  # fmt: skip
    assert paths.split(",") == [entry["path"] for entry in found["loads"]]
    for entry in found["loads"]:
        step = entry["steps"][0]
        assert step["ok"] >= 1 and step["errors"] == {}, (entry["path"], entry["error_details"])
        assert entry["verified_repositories"] >= 1 and entry["verify_failure_count"] == 0
        server = entry["server"]
        assert ("tls" in server) == entry["path"].endswith("-https")
        assert ("ssh" in server) == entry["path"].endswith("-ssh")


@pytest.mark.serial
def test_clone_storm_clones_and_checks_every_clone(tmp_path: Path) -> None:
    require_backend("svn-fs")
    paths = ["git-daemon", "svnserve", "local:svn-fs"]
    document = _load(
        tmp_path, "--scenario", "clone-storm", "--history", "5", "--paths", ",".join(paths),
        "--steps", "1,3", "--step-seconds", "1.5",
    )  # fmt: skip
    assert document["history"] == 5
    assert [entry["path"] for entry in document["loads"]] == paths
    for entry in document["loads"]:
        raw = entry["raw"]
        assert _max_in_flight(raw, 1) == 3, entry["path"]
        assert all(not row["errors"] for row in entry["steps"]), entry["error_details"]
        # Every session's clone was checked after it, untimed.
        assert entry["verified_repositories"] == len(raw["latency_s"]) > 3


def test_a_clone_that_differs_is_reported_and_removed(tmp_path: Path) -> None:
    from vcsbench.load.client_base import Client
    from vcsbench.load.scenario import Session

    client = Client(one_client_config("svnserve", str(tmp_path)), tmp_path)
    clone = client.clone_dir(7)
    (clone / ".git").mkdir(parents=True)
    (clone / "a.txt").write_bytes(b"right")
    (clone / "extra.txt").write_bytes(b"not in the repository")
    expected = {"a.txt": b"right", "b.txt": b"missing"}
    problems = SCENARIOS["clone-storm"].check(client, Session(7, 1, expected))
    assert problems == ["b.txt: missing", "extra.txt: not in the revision"]
    assert not clone.exists()


@pytest.mark.parametrize("path", ["git-daemon", "svnserve", "local:git-pygit2"])
@pytest.mark.serial
def test_shared_committers_into_one_repository(path: str, tmp_path: Path) -> None:
    if path.startswith("local:"):
        require_backend(path.split(":", 1)[1])
    document = _load(
        tmp_path, "--scenario", "shared", "--paths", path, "--steps", "1,3",
        "--step-seconds", "1.5",
    )  # fmt: skip
    (entry,) = document["loads"]
    raw = entry["raw"]
    assert _max_in_flight(raw, 1) == 3
    assert all(not row["errors"] for row in entry["steps"])
    # One committer never races itself; retries are the records' own, summed per step.
    assert entry["steps"][0]["retries"] == 0
    for index, row in enumerate(entry["steps"]):
        assert row["retries"] == sum(
            r for s, r in zip(raw["step"], raw["retries"], strict=True) if s == index
        )
    assert entry["verify_failure_count"] == 0


def test_shared_verification_finds_a_commit_that_is_not_there(tmp_path: Path) -> None:
    require_backend("svn-fs")
    from vcsbench.load.repositories import SHARED, shared_content, shared_file

    repo = tmp_path / "repos" / SHARED
    repo.parent.mkdir()
    start = {"test.txt": b"hello world"}
    with make_backend("svn-fs") as backend:
        backend.create(repo)
        backend.commit(repo, start, "first", tmp_path)
        backend.commit(repo, {shared_file(0): shared_content(0, 1)}, "c0", tmp_path)
    # Committer 1's commit 1 is recorded as a success but never reached the repository.
    records: dict[str, list[Any]] = {
        "step": [0, 0], "student": [0, 1], "visit": [1, 1], "error": [None, None],
    }  # fmt: skip
    found = SCENARIOS["shared"].verify_step(
        parse_path("local:svn-fs"), tmp_path / "repos", records, 0, start, {}
    )
    assert {SHARED} == found.read
    assert found.problems == [
        "1 commits after the first, 2 sessions succeeded",
        f"{shared_file(1)}: missing",
    ]
    assert records["error"] == [None, "verify"]


@pytest.mark.serial
def test_cleanup_ends_what_a_killed_load_left(tmp_path: Path) -> None:
    """SIGKILL mid-step over ssh at a distance: the engine and its clients die with the
    run; sshd (in its mount namespace), toxiproxy and the sandbox that holds the run's keys
    stay, and ``vcsbench cleanup`` ends both servers by the state file and removes the
    sandbox, keys and all."""
    if os.geteuid() != 0:
        pytest.skip("tmpfs, sshd and cgroups need root")
    args = ["--paths", "hg-ssh", "--rtt", "5", "--students", "20", "--steps", "2",
            "--step-seconds", "60"]  # fmt: skip
    proc = subprocess.Popen(
        [*CLI, "load", "--fs", "tmpfs", *args, "--out", str(tmp_path / "load.json")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    logs = tmp_path / "load-logs"
    sshd = _wait_for(lambda: _server_of(logs, "sshd"))
    proxy = _wait_for(lambda: _server_of(logs, "toxiproxy"))

    def engine() -> psutil.Process | None:
        return next(iter(_processes("vcsbench.load.engine", tmp_path)), None)

    locust = _wait_for(engine)
    config = (logs / "sshd_config").read_text().splitlines()
    keys = [Path(line.split()[1]) for line in config if line.startswith("HostKey ")]
    time.sleep(1.0)
    proc.kill()
    proc.wait()
    _wait_for(lambda: _ended(locust), timeout=10)
    assert not _ended(sshd) and not _ended(proxy) and vcsbench_mounts()
    result = vcsbench("cleanup")
    assert result.returncode == 0, result.stderr
    assert _ended(sshd) and _ended(proxy)
    assert engine() is None
    assert vcsbench_mounts() == ""
    assert not list(Path("/sys/fs/cgroup").rglob(f"vcsbench-sshd-{proc.pid}-*"))
    assert keys and not any(
        (where.parent / name).exists() for where in keys for name in ("host_key", "client_key")
    )


def test_report_and_compare_read_load_results(tmp_path: Path) -> None:
    require_backend("git-pygit2")
    runs = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        out = tmp_path / name / "load.json"
        result = vcsbench(
            "load", "--paths", "local:git-pygit2", "--students", "8", "--steps", "1,2",
            "--step-seconds", "1", "--fs", f"dir:{tmp_path / name}", "--out", str(out),
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        runs.append(out)
    documents = [json.loads(p.read_text())["vcsbench_load"] for p in runs]
    caps = [d["loads"][0]["capacity"]["level"] for d in documents]

    report = vcsbench("report", str(runs[0]), "--plots", str(tmp_path / "plots"))
    assert report.returncode == 0, report.stderr
    assert "## local:git-pygit2 (git)" in report.stdout
    pngs = sorted((tmp_path / "plots").iterdir())
    assert [p.name.rsplit("-", 1)[1] for p in pngs] == [
        "percentiles.png", "steps.png", "timeline.png",
    ]  # fmt: skip
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)

    compare = vcsbench("compare", str(runs[0]), str(runs[1]))
    assert compare.returncode == 0, compare.stderr
    texts = [f"{c:g} client" + ("" if c == 1 else "s") for c in caps]
    assert f"Capacity: {texts[0]} → {texts[1]}" in compare.stdout
    if caps[0] == caps[1]:
        assert "both saturate at the same step" in compare.stdout
    else:  # the same load twice: a step apart is a verdict only beyond noise
        assert "saturates later" in compare.stdout or (
            "passed one more step, but" in compare.stdout and "not a verdict" in compare.stdout
        ), compare.stdout
    # p95 at each level, with the ratio of the two runs' values.
    p95 = [d["loads"][0]["steps"][0]["latency_ms"]["p95"] for d in documents]
    assert f"{p95[1] / p95[0]:.2f}x" in compare.stdout


def _load_file(
    path: Path, latencies: list[list[float]], scenario: str = "deadline", access: str = "svnserve"
) -> Path:
    """A load result file whose figures come from known session latencies (no errors)."""
    steps = _steps(latencies, [[None] * len(lat) for lat in latencies])
    figures = [step_figures(step, []) for step in steps]
    raw = {key: [v for step in steps for v in step["records"][key]] for key in steps[0]["records"]}
    fs = {"spec": "tmpfs", "kind": "tmpfs", "fstype": "tmpfs"}
    entry = {
        "path": access, "vcs": "svn", "filesystem": fs, "steps": figures,
        "capacity": capacity(figures, 2.0), "raw": raw, "sampler": [],
        "verified_repositories": 10,
    }  # fmt: skip
    load = {
        "schema_version": 1, "command": "vcsbench load", "scenario": scenario,
        "shape": "closed", "students": 10, "payload": "hello", "precreate": False,
        "step_seconds": 10, "capacity_factor": 2.0, "latency": "wall", "loads": [entry],
        "machine": {"cpu_count": 2},
    }  # fmt: skip
    path.write_text(json.dumps({"vcsbench_load": load}))
    return path


TENTHS = sorted([0.01 * (i + 1) for i in range(10)] * 10)
"""100 sessions, ten each of 10, 20, .. 100 ms (type 7: p50 55, p90 91, p95 and p99 100): a
step large enough for every percentile (:func:`~vcsbench.load.figures.least_sample`)."""


def test_a_load_result_is_a_run_the_reports_read(tmp_path: Path) -> None:
    from vcsbench.results import read

    # Step 1: 10..100 ms; step 2: three times slower, past the 2x factor.
    base = _load_file(tmp_path / "base.json", [TENTHS, [3 * x for x in TENTHS]])
    run = read(base)
    assert run.kind == "load" and run.benchmarks == [] and run.machine.cpu_count == 2
    assert run.load is not None
    (entry,) = run.load.paths
    assert [s.level for s in entry.steps] == [1, 2] and entry.capacity.level == 1
    # A closed loop has no arrival schedule: its rule says nothing of a generator.
    assert "generator" not in entry.capacity.rule and "counting up" in entry.capacity.rule
    assert entry.steps[1].p95_ms == pytest.approx(300.0)

    report = vcsbench("report", str(base))
    assert report.returncode == 0, report.stderr
    row = next(line for line in report.stdout.splitlines() if line.startswith("| ") and
               line.split("|")[1].strip() == "2")  # fmt: skip
    # p50 165, p90 273, p95, p99 and max 300 ms: three times step one's.
    assert [c.strip() for c in row.split("|")[4:9]] == [
        "165.0",
        "273.0",
        "300.0",
        "300.0",
        "300.0",
    ]
    assert "Capacity: **1 client** (1.0 ok/s, p95 100.0 ms)" in report.stdout

    csv_rows = vcsbench("report", "--format", "csv", str(base)).stdout.splitlines()
    header, first = csv_rows[0].split(","), csv_rows[1].split(",")
    assert header[9:14] == ["p50_ms", "p90_ms", "p95_ms", "p99_ms", "max_ms"]
    assert [float(x) for x in first[9:14]] == pytest.approx([55.0, 91.0, 100.0, 100.0, 100.0])
    assert first[header.index("capacity")] == "yes"
    # The device wrote 40 KiB in 3 requests per session, 10 sessions in 10 s.
    assert float(first[header.index("device_write_bytes_per_s")]) == pytest.approx(40960)
    assert float(first[header.index("device_write_requests_per_s")]) == pytest.approx(3)

    bmf = json.loads(vcsbench("export", str(base)).stdout)
    step = bmf["load deadline closed svnserve tmpfs 2"]
    assert step["latency"]["value"] == pytest.approx(165e6)
    assert step["latency"]["upper_value"] == pytest.approx(300e6)
    assert (
        step["throughput"]["value"] == pytest.approx(2.0) and step["errors"]["value"] == 0
    )  # 10 in 5 s

    # The other run stays within 2x at step 2: it passes one more step, beyond noise
    # over 100 sessions a side.
    other = _load_file(tmp_path / "other.json", [TENTHS, [1.5 * x for x in TENTHS]])
    compare = vcsbench("compare", str(base), str(other))
    assert compare.returncode == 0, compare.stderr
    assert (
        "Capacity: 1 client → 2 clients: **svnserve on tmpfs saturates later** (beyond noise "
        "at 2 clients: p95 300.0 → 150.0 ms, p="
    ) in compare.stdout
    assert "0.50x" in compare.stdout  # p95 at 2 clients: 150 against 300 ms
    # Ten sessions a step hold no p95: no capacity on either side, and none compared.
    tens = [sorted(set(TENTHS)), [3 * x for x in sorted(set(TENTHS))]]
    few = [_load_file(tmp_path / f"few{i}.json", tens) for i in range(2)]
    compare = vcsbench("compare", *map(str, few))
    assert compare.returncode == 0, compare.stderr
    assert (
        "Capacity: none → none: neither run has a capacity, so none is compared (10 "
        "successful sessions at 1 client, fewer than the 20 a p95 is read from"
    ) in compare.stdout


def _two_paths(tmp_path: Path) -> Path:
    """Two paths of one run, svn and git, the same latencies (capacity at 1 of steps 1, 2);
    per session svn's device made 3 write requests, 2 flushes and 40 KiB, git's 1 request,
    no flush and four times the bytes (160 KiB)."""
    path = _load_file(tmp_path / "two.json", [TENTHS, [3 * x for x in TENTHS]])
    document = json.loads(path.read_text())
    svn = document["vcsbench_load"]["loads"][0]
    git = json.loads(json.dumps(svn)) | {"path": "git-daemon", "vcs": "git"}
    for step in git["steps"]:
        step["device"]["write_bytes"] *= 4
        step["device"]["write_requests"] //= 3
        step["device"]["flush_requests"] = 0
    document["vcsbench_load"]["loads"].append(git)
    path.write_text(json.dumps(document))
    return path


def test_the_disk_answer_leads_with_the_device_per_session_and_capacity_as_a_bracket(
    tmp_path: Path,
) -> None:
    report = vcsbench("report", str(_two_paths(tmp_path)))
    assert report.returncode == 0, report.stderr
    text = report.stdout
    assert text.index("## The disk answer") < text.index("## svnserve")
    row = next(line for line in text.splitlines() if line.startswith("| svnserve "))
    cells = [c.strip() for c in row.split("|")[1:-1]]
    assert cells[2:7] == ["200", "3.0", "2.0", "40.0", "between 1 and 2 clients"]
    assert (
        "svnserve / git-daemon: per session, device write requests 3.00x (3.0 / 1.0); flushes "
        "— (2.0 / 0.0); KiB written 0.25x (40.0 / 160.0); capacity between 1 and 2 clients / "
        "between 1 and 2 clients."
    ) in text
    assert "ok/s at capacity" not in text  # one step's speed is no capacity
    # svn flushed twice a session, git never: the answer says the rows differ in durability
    assert (
        "Durability differs between these paths: svnserve 2.0 device flushes a session (each "
        "commit on the device before it is acknowledged) against git-daemon 0.0 (commits "
        "acknowledged before the device keeps them: a crash may lose them); their figures set "
        "durable commits against ones that are not. For like with like, run a durable git "
        "path beside (git: local:git-pygit2[fsync=true])."
    ) in " ".join(text.split())


def test_a_load_without_a_device_of_its_own_says_there_is_no_disk_answer(
    tmp_path: Path,
) -> None:
    """On a tmpfs nothing counts device requests: one line says so and what to run, not a
    table of dashes."""
    path = _load_file(tmp_path / "mem.json", [TENTHS])
    document = json.loads(path.read_text())
    for step in document["vcsbench_load"]["loads"][0]["steps"]:
        step["device"] = None
    path.write_text(json.dumps(document))
    text = " ".join(vcsbench("report", str(path)).stdout.split())
    assert (
        "None here: tmpfs gave no block device of the sandbox's own to count (a tmpfs is "
        "memory; a directory shares the machine's disk)"
    ) in text
    assert "| access path |" not in text


def test_a_capacity_plan_multiplies_the_deadline_rate_by_each_figure_per_session(
    tmp_path: Path,
) -> None:
    """10,000 submissions in 60 min: 2.78 sessions/s; svn's 3 write requests, 2 flushes
    and 40 KiB a session ask for 8.3 IOPS, 5.6 flushes/s and 0.11 MB/s."""
    report = vcsbench("report", str(_two_paths(tmp_path)), "--plan", "students=10000,window=60m")
    assert report.returncode == 0, report.stderr
    row = next(line for line in report.stdout.splitlines() if line.startswith("| svnserve "))
    cells = [c.strip() for c in row.split("|")[1:-1]]
    rate = 10000 / 3600
    assert cells[7:11] == [
        f"{3 * rate:,.1f}", f"{2 * rate:,.1f}", f"{40960 * rate / 1e6:,.1f}", "no storage profile",
    ]  # fmt: skip
    assert "10,000 submissions in 60 min are 2.78 sessions/s" in report.stdout
    # capacity measured: 10 ok sessions in 10 s at 1 client, below the 2.78 wanted
    assert "svnserve: **beyond** what was measured (1.0 ok/s at 1 client)" in report.stdout


@pytest.mark.serial
def test_a_steps_device_flushes_are_the_sessions_not_the_harnesss_syncfs(
    root: None, tmp_path: Path
) -> None:
    """svn-fs fdatasyncs every commit, git-pygit2 never; each step ends with the
    harness's syncfs, which flushes too. Steps of 2 s, inside ext4's 5 s journal commit
    interval counted from the syncfs that starts them: git's steps flush nothing."""
    require_backend("svn-fs")
    require_backend("git-pygit2")
    document = _load(
        tmp_path, "--paths", "local:svn-fs,local:git-pygit2", "--students", "6",
        "--steps", "1", "--step-seconds", "2", fs="ext4:size=256M",
    )  # fmt: skip
    svn, git = document["loads"]
    assert all(row["device"]["flush_requests"] == 0 for row in git["steps"]), git["steps"]
    # a session creates a repository or commits (7 fdatasync a commit, each a flush here)
    assert all(row["device"]["flush_requests_per_session"] >= 7 for row in svn["steps"])


def test_a_term_is_filled_packed_and_its_first_repositories_become_the_students(
    tmp_path: Path,
) -> None:
    """The term's repositories as a server keeps them (git gc: packed, no loose object),
    each with the history its seed drew; the first ``students`` renamed to the students'
    names, the rest left as they were; read with git itself."""
    from vcsbench.backends._git import git_env
    from vcsbench.load.paths import parse_path
    from vcsbench.load.repositories import fill_present, give_students_their_term
    from vcsbench.workload.population import parse_population

    require_backend("git-pygit2")
    population = parse_population("term:students=3,assignments=2,commits=2-5")
    path, workdir = parse_path("local:git-pygit2"), tmp_path / "load"
    (workdir / "repos").mkdir(parents=True)
    present = fill_present(path, workdir, 6, population, "test")
    assert present["kept_by"].startswith("git gc")
    held = give_students_their_term(path, workdir, 4, population)
    assert held == population.commits()[:4]
    repos = workdir / "repos"
    assert ["r0000004", "r0000005"] == sorted(p.name for p in repos.glob("r*"))

    def git(repo: Path, *args: str) -> str:
        argv = ["git", "--git-dir", str(repo), *args]
        found = subprocess.run(argv, capture_output=True, text=True, env=git_env(), check=True)
        return found.stdout

    for index, commits in enumerate(population.commits()):
        repo = repos / (f"s{index:06d}" if index < 4 else f"r{index:07d}")
        assert commits == int(git(repo, "rev-list", "--count", "HEAD")), repo
        assert list((repo / "objects" / "pack").glob("pack-*.pack")), repo
        assert "count: 0" in git(repo, "count-objects", "-v"), repo  # no loose object


def test_svn_repositories_of_a_term_are_each_their_own_with_a_uuid_of_their_own(
    tmp_path: Path,
) -> None:
    """Copies of one repository are repositories of their own, as a server's are: each
    its own UUID (svnlook reads it) and instance ID, packed by svnadmin pack."""
    from vcsbench.load.paths import parse_path
    from vcsbench.load.repositories import fill_present
    from vcsbench.workload.population import parse_population

    require_backend("svn-fs")
    population = parse_population("term:students=3,assignments=1,commits=2")  # alike
    workdir = tmp_path / "load"
    (workdir / "repos").mkdir(parents=True)
    present = fill_present(parse_path("svnserve"), workdir, 3, population, "test")
    assert present["kept_by"].startswith("svnadmin pack")
    repos = sorted((workdir / "repos").iterdir())
    uuids = {
        subprocess.run(
            ["svnlook", "uuid", str(r)], capture_output=True, text=True, check=True
        ).stdout.strip()
        for r in repos
    }
    instances = {(r / "db" / "uuid").read_text().splitlines()[1] for r in repos}
    assert 3 == len(repos) == len(uuids) == len(instances), uuids
    youngest = [
        subprocess.run(["svnlook", "youngest", str(r)], capture_output=True, text=True).stdout
        for r in repos
    ]
    assert ["2\n"] * 3 == youngest


def test_svn_students_commit_concurrently_into_their_term_over_dav_and_svnserve(
    tmp_path: Path,
) -> None:
    """Two clients at once commit into the students' own repositories of a term whose
    files are not the submission's (the commit makes the directories the term lacks):
    mod_dav_svn refused such commits into copies that shared a UUID (E160044), and
    svnmucc those whose directories were missing; every session succeeds and is read
    back."""
    if os.geteuid() != 0:
        skip_or_fail("Apache needs root")
    found = _load(
        tmp_path, "--paths", "apache-svn,svnserve", "--students", "8", "--steps", "2",
        "--step-seconds", "2", "--age", "term:students=4,assignments=2,commits=2,content=hello",
        fs="tmpfs",
    )  # fmt: skip
    for entry in found["loads"]:
        (step,) = entry["steps"]
        assert step["ok"] >= 4 and step["errors"] == {}, (entry["path"], entry["error_details"])
        assert 8 >= entry["verified_repositories"] >= 2 and entry["verify_failure_count"] == 0


def test_a_deadline_commits_into_the_students_own_term_repositories(tmp_path: Path) -> None:
    """With --age term:..., each student's deadline commits land in its own repository
    of the term: read back after the step, its revisions are the term's and one per
    successful session (a count that leaves the term's out would be a verify error)."""
    require_backend("git-pygit2")
    spec = "term:students=4,assignments=2,commits=2-4"
    document = _load(
        tmp_path, "--paths", "local:git-pygit2", "--students", "3", "--steps", "1",
        "--step-seconds", "1", "--age", spec,
    )  # fmt: skip
    assert 8 == document["age"] and spec == document["population"] and document["into_term"]
    (entry,) = document["loads"]
    present = entry["harness"]["present"]
    assert 8 == present["repositories"] and 3 == present["students_repositories"]
    (row,) = entry["steps"]
    assert not row["errors"] and row["sessions"] >= 3, row
    assert 3 == entry["verified_repositories"]
    assert "own repository of the term" in document["session"]
    report = vcsbench("report", str(tmp_path / "load.json"))
    assert "The server held 8 repositories before the load" in report.stdout
    assert "each of the 3 students committed into its own repository of the term" in (
        " ".join(report.stdout.split())
    )


def test_capacity_is_a_bracket_below_between_or_past_the_steps_measured(tmp_path: Path) -> None:
    from vcsbench.report.disk import capacity_bracket
    from vcsbench.results import read

    held = read(_load_file(tmp_path / "held.json", [TENTHS, TENTHS])).load
    assert held is not None  # the same latencies in half the time: step 2 within the rule
    assert "not reached: 2 clients (the last step) held" == capacity_bracket(held, held.paths[0])
    path = _load_file(tmp_path / "none.json", [TENTHS, TENTHS])
    document = json.loads(path.read_text())
    document["vcsbench_load"]["loads"][0]["capacity"] = {"level": None, "reason": "errors"}
    path.write_text(json.dumps(document))
    none = read(path).load
    assert none is not None
    assert "below 1 client (the first step)" == capacity_bracket(none, none.paths[0])


@pytest.mark.parametrize(
    ("plan", "message"),
    [
        ("students=10000", "needs both"),
        ("students=0,window=60m", "students='0' is not a whole number from 1"),
        ("students=10,window=60", "window='60' is not a whole number of s, m or h"),
        ("students=10,window=60m,x=1", "'x=1' is not one of students=N,window=T"),
    ],
)
def test_a_bad_plan_is_one_line(plan: str, message: str, tmp_path: Path) -> None:
    result = vcsbench("report", str(_two_paths(tmp_path)), "--plan", plan)
    assert result.returncode == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) <= 2


def test_load_compare_gives_a_verdict_only_beyond_noise(tmp_path: Path) -> None:
    many = [0.001 * (i + 1) for i in range(100)]  # 1 .. 100 ms, 100 sessions a step
    base = _load_file(tmp_path / "base.json", [many, [3 * x for x in many]])
    # Twice as slow less a hair at step 2, in the base's 3x: beyond noise, a verdict.
    other = _load_file(tmp_path / "other.json", [many, [1.9 * x for x in many]])
    compare = vcsbench("compare", str(base), str(other))
    assert compare.returncode == 0, compare.stderr
    assert "**svnserve on tmpfs saturates later** (beyond noise at 2 clients: p95 " in (
        compare.stdout
    )
    # Capacities one step apart from the same latencies shuffled into a 2x boundary:
    # step 2 of base at 2.05x, of other at 1.95x -- not beyond noise.
    near = _load_file(tmp_path / "near.json", [many, [2.05 * x for x in many]])
    nearer = _load_file(tmp_path / "nearer.json", [many, [1.95 * x for x in many]])
    compare = vcsbench("compare", str(near), str(nearer))
    assert "passed one more step, but at 2 clients the latencies do not differ beyond " in (
        compare.stdout
    )
    assert "not a verdict" in compare.stdout and "**" not in compare.stdout.split("\n")[2]
    # A shift a test calls significant (1,000 sessions a step) but within what two
    # identical runs apart in time differ by: no verdict either.
    thousand = [0.0001 * (i + 1) for i in range(1000)]
    slow = _load_file(tmp_path / "slow.json", [thousand, [2.2 * x for x in thousand]])
    fast = _load_file(tmp_path / "fast.json", [thousand, [1.9 * x for x in thousand]])
    compare = vcsbench("compare", str(slow), str(fast))
    assert "at 2 clients the p95s differ by 1.16x, within what two identical runs differ by" in (
        compare.stdout
    )


def test_compare_refuses_runs_of_different_kinds(tmp_path: Path) -> None:
    base = _load_file(tmp_path / "a.json", [TENTHS])
    other = _load_file(tmp_path / "b.json", [TENTHS], scenario="shared")
    result = vcsbench("compare", str(base), str(other))
    assert result.returncode == 2
    assert "compare runs of one scenario and shape" in result.stderr
    benchmarks = DATA / "tiny-tmpfs.json"
    result = vcsbench("compare", str(benchmarks), str(base))
    assert result.returncode == 2
    assert result.stderr.strip().endswith(
        "compare results of one kind (benchmarks with benchmarks, load runs with load runs)"
    )


def test_a_damaged_load_result_is_one_line(tmp_path: Path) -> None:
    path = _load_file(tmp_path / "a.json", [TENTHS])
    document = json.loads(path.read_text())
    del document["vcsbench_load"]["loads"][0]["steps"][0]["latency_ms"]
    path.write_text(json.dumps(document))
    result = vcsbench("report", str(path))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"vcsbench: error: {path}: vcsbench_load.loads[0].steps[0].latency_ms is missing"
    ]


def _workers() -> list[psutil.Process]:
    """This test session's Locust workers (their clients' homes are in its temp dir)."""
    return _processes("vcsbench.load.engine --worker", os.environ["TMPDIR"])


@pytest.mark.serial
def test_a_locust_master_with_two_workers_writes_one_result(tmp_path: Path) -> None:
    require_backend("git-pygit2")
    document = _load(
        tmp_path, "--paths", "local:git-pygit2", "--workers", "2", "--students", "20",
        "--steps", "2,4", "--step-seconds", "1.5",
    )  # fmt: skip
    (entry,) = document["loads"]
    raw = entry["raw"]
    # Sessions from both workers, in one file, with the users spread over them.
    assert len(set(raw["worker"])) == 2
    assert _max_in_flight(raw, 1) == 4
    assert [len(row["errors"]) for row in entry["steps"]] == [0, 0]
    assert sum(row["sessions"] for row in entry["steps"]) == len(raw["latency_s"])
    assert entry["workers_lost"] == []
    assert entry["verify_failure_count"] == 0
    assert _workers() == []


def test_a_lost_worker_leaves_the_run_to_the_others(tmp_path: Path) -> None:
    require_backend("git-pygit2")
    proc = _start(
        tmp_path, "--paths", "local:git-pygit2", "--workers", "2", "--students", "20",
        "--steps", "2,2,2", "--step-seconds", "4",
    )  # fmt: skip
    workers = _wait_for(lambda: len(_workers()) == 2 and _workers())
    time.sleep(6.0)  # into the first or second step
    workers[0].kill()
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    entry = json.loads((tmp_path / "load.json").read_text())["vcsbench_load"]["loads"][0]
    assert len(entry["workers_lost"]) == 1
    last = entry["steps"][-1]
    assert last["ok"] > 0  # the remaining worker kept submitting
    assert "1 worker(s) lost during the run" in out
    assert _workers() == []


def test_a_missing_server_binary_names_the_package(tmp_path: Path) -> None:
    """svnserve not on PATH: one line naming the Debian package, before any load."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("git", "svnadmin", "svnmucc", "findmnt", "mount", "umount"):
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    (tmp_path / "fs").mkdir()
    result = vcsbench(
        "load", "--paths", "svnserve", "--fs", f"dir:{tmp_path / 'fs'}",
        "--out", str(tmp_path / "x.json"), env={"PATH": str(bin_dir)},
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        "vcsbench: error: svnserve is not installed (needed for svnserve); as root run: "
        "apt-get install -y subversion"
    ]


def test_workers_started_elsewhere_join_a_master_by_address(tmp_path: Path) -> None:
    """``--expect-workers``: the master waits; ``vcsbench load-worker HOST:PORT`` (here on
    the same machine, as another machine would) joins it, and one result file holds the
    sessions it ran."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    master = _start(
        tmp_path, "--paths", "svnserve", "--expect-workers", "1", "--master-port", str(port),
        "--students", "10", "--steps", "1,2", "--step-seconds", "1.5",
    )  # fmt: skip
    time.sleep(2.0)
    worker = subprocess.run(
        [*CLI, "load-worker", f"127.0.0.1:{port}"], capture_output=True, text=True, timeout=240
    )
    _, err = master.communicate(timeout=240)
    assert master.returncode == 0, err
    assert worker.returncode == 0, worker.stderr
    assert f"vcsbench load-worker 127.0.0.1:{port}" in err  # the master says how to join
    entry = json.loads((tmp_path / "load.json").read_text())["vcsbench_load"]["loads"][0]
    assert len(set(entry["raw"]["worker"])) == 1
    assert all(row["ok"] > 0 and not row["errors"] for row in entry["steps"])
    assert entry["verify_failure_count"] == 0


def test_load_worker_refuses_a_master_that_is_not_host_and_port() -> None:
    result = vcsbench("load-worker", "localhost")
    assert result.returncode == 2
    assert "master 'localhost' is not HOST:PORT" in result.stderr


def _stderr_until(proc: subprocess.Popen[str], text: str) -> list[str]:
    """The run's standard error, read until a line holding ``text``."""
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if text in line:
            return seen
    raise AssertionError(f"never saw {text!r}: {''.join(seen)[-2000:]}")


STEPS3 = ["--students", "40", "--steps", "1,2,2", "--step-seconds", "3"]


def _kept(tmp_path: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((tmp_path / "load.json").read_text())
    return document["vcsbench_load"]


def test_sigkill_and_cleanup_keep_every_finished_step(tmp_path: Path) -> None:
    require_backend("git-pygit2")
    proc = _start(tmp_path, "--paths", "local:git-pygit2", *STEPS3)
    _stderr_until(proc, "step 2/3")
    proc.kill()
    proc.communicate()
    cleanup = vcsbench("cleanup")
    assert 0 == cleanup.returncode, cleanup.stderr
    (entry,) = _kept(tmp_path)["loads"]
    assert [1, 2] == [row["level"] for row in entry["steps"]]
    assert all(row["errors"] == {} and row["ok"] > 0 for row in entry["steps"])
    assert entry["verify_failure_count"] == 0
    assert sum(row["sessions"] for row in entry["steps"]) == len(entry["raw"]["step"])
    assert [] == list((tmp_path / "fs").iterdir())


@pytest.mark.parametrize("workers", ["0", "2"])
@pytest.mark.serial
def test_an_interrupt_mid_step_keeps_the_finished_steps_exact(tmp_path: Path, workers: str) -> None:
    require_backend("git-pygit2")
    proc = _start(tmp_path, "--paths", "local:git-pygit2", "--workers", workers, *STEPS3)
    _stderr_until(proc, "step 1/3")
    time.sleep(1.5)  # into step 2, sessions in flight
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert 128 + signal.SIGINT == proc.returncode, err
    load = _kept(tmp_path)
    (entry,) = load["loads"]
    (step,) = entry["steps"]
    # Every session of the kept step verified as it succeeded: none turned into an error
    # by commits the interrupted step made afterwards.
    assert step["errors"] == {} and step["ok"] == step["sessions"] > 0
    assert entry["capacity"]["level"] == 1
    assert "interrupted during step 2 of local:git-pygit2" in load["interrupted"]
    closing = [line for line in err.splitlines() if line.startswith("vcsbench: interrupted")]
    assert closing and "1 finished step(s) of 1 access path(s) kept in" in closing[0]


def test_a_full_sandbox_makes_counted_errors_and_the_run_goes_on(
    root: None, tmp_path: Path
) -> None:
    """The sandbox fills during the first path: its sessions fail, counted, with the
    cause; the engine (whose records are outside the sandbox) goes on, and so does the
    run, to the next path in a sandbox of its own."""
    require_backend("git-pygit2")
    out = tmp_path / "load.json"
    result = vcsbench(
        "load", "--fs", "tmpfs:size=1M", "--paths", "local:git-pygit2,git-daemon",
        "--students", "200", "--steps", "2,2", "--step-seconds", "2", "--out", str(out),
        timeout=300,
    )  # fmt: skip
    assert 0 == result.returncode, result.stderr
    loads = json.loads(out.read_text())["vcsbench_load"]["loads"]
    assert ["local:git-pygit2", "git-daemon"] == [entry["path"] for entry in loads]
    for entry in loads:
        assert 2 == len(entry["steps"]) and not entry.get("failure")
        errors = sum(sum(row["errors"].values()) for row in entry["steps"])
        assert errors > 0 and any(row["ok"] for row in entry["steps"])
        assert any("No space left on device" in detail for detail in entry["error_details"])
    summaries = [line for line in result.stderr.splitlines() if "sessions failed" in line]
    assert 2 == len(summaries) and all("; first: " in line for line in summaries)


def test_precreating_student_repositories_says_how_far(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from vcsbench.load import repositories
    from vcsbench.load.paths import parse_path

    monkeypatch.setattr(repositories, "PROGRESS_S", 0.0)  # a line after every repository
    repositories.make_student_repositories(parse_path("local:git-pygit2"), tmp_path, 3)
    lines = capsys.readouterr().err.splitlines()
    assert 3 == len(lines) == len(list(tmp_path.iterdir()))
    assert lines[0].startswith("vcsbench load: local:git-pygit2: 1/3 student repositories made, ")
    assert lines[-1].startswith("vcsbench load: local:git-pygit2: 3/3 student repositories made")
    assert lines[-1].endswith(", 0s left")


def test_a_checkout_is_data_a_link_in_it_is_never_written_through(tmp_path: Path) -> None:
    """A working copy checked out of a term's history may hold links: a file that is a
    link is replaced by the submission's bytes (the file it named untouched), and a
    directory that is a link is refused as the client's own failure, nothing written."""
    from vcsbench.load.client_base import Client, SessionError

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_bytes(b"mine\n")
    wc = tmp_path / "wc"
    wc.mkdir()
    (wc / "notes.txt").symlink_to(outside / "victim.txt")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    client = Client(one_client_config("local:git-pygit2", str(tmp_path)), scratch)
    client.write(wc, {"notes.txt": b"submitted\n"})
    assert not (wc / "notes.txt").is_symlink() and b"submitted\n" == (wc / "notes.txt").read_bytes()
    assert b"mine\n" == (outside / "victim.txt").read_bytes()
    (wc / "src").symlink_to(outside)
    with pytest.raises(SessionError, match="is a link, not a directory"):
        client.write(wc, {"src/main.c": b"int main;\n"})
    assert ["victim.txt"] == sorted(p.name for p in outside.iterdir())
