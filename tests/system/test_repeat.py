"""``vcsbench run --repeat N``: N runs, each a process and a file of its own, closed by
what they say together; a stop signal reaches the running one once and starts no other."""

from __future__ import annotations

import math
import signal
import statistics
import subprocess
from pathlib import Path

import pytest
from helpers import RUN_ARGV, run_args, vcsbench, wait_for

from vcsbench.results import read


def test_a_series_is_runs_of_their_own_and_its_closing_reads_their_files(
    tmp_path: Path,
) -> None:
    out = tmp_path / "series.json"
    argv = ["--backends", "git-pygit2", "--repos", "40", "--fs", f"dir:{tmp_path}"]
    done = vcsbench(*RUN_ARGV[3:], *argv, "--repeat", "3", "--out", str(out), "--store", "none")
    assert 0 == done.returncode, done.stdout[-3000:] + done.stderr
    paths = [tmp_path / f"series-{k}.json" for k in (1, 2, 3)]
    runs = [read(p) for p in paths]
    assert not out.exists()
    assert 3 == len({run.run_id for run in runs})  # three runs, not one written thrice
    for path, run in zip(paths, runs, strict=True):
        assert f"--out {path}" in run.command and "--repeat" not in run.command
        (bench,) = run.benchmarks
        assert 40 == bench.repos and 0 == bench.errors
    medians = [run.benchmarks[0].median_ms for run in runs]
    closing = done.stdout.split("3 runs, each a process of its own:", 1)[1]
    (row,) = [line for line in closing.splitlines() if line.startswith("git-pygit2  ")]
    apart = 100 * statistics.stdev(math.log(m) for m in medians if m)
    assert " ".join(f"{m:.3g}" for m in medians if m) in row
    assert row.rstrip().endswith(f"±{apart:.1f}%"), row
    assert "== run 3 of 3" in done.stdout and "left" in done.stdout.split("== run 2 of 3")[1]
    # each run ends with its file, not its tables: the series' answer is at its end
    assert f"results: {paths[0]} (run 1/3 of the series; its tables: vcsbench report" in (
        done.stdout
    )
    assert "IQR" not in done.stdout


@pytest.mark.serial
def test_a_stop_signal_reaches_the_running_run_once_and_starts_no_other(tmp_path: Path) -> None:
    """The run is a process group of its own: the signal reaches it only as passed on,
    once (a second would abandon its teardown), and it keeps its rounds as any run. One
    signal here, SIGTERM (SIGINT is passed on by the same code: test_a_child_gets_a_stop_
    signal_once_as_passed_on; each stops a run: test_safety)."""
    signum = signal.SIGTERM
    out = tmp_path / "series.json"
    proc = subprocess.Popen(
        [
            *RUN_ARGV,
            *("--backends", "svn-fs", "--repos", "100000", "--fs", f"dir:{tmp_path}"),
            *("--repeat", "3", "--out", str(out), "--store", "none"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    wait_for(proc, "rounds")
    proc.send_signal(signum)
    output, _ = proc.communicate(timeout=120)
    assert 128 + signum == proc.returncode, output[-2000:]
    first = tmp_path / "series-1.json"
    (bench,) = read(first).benchmarks
    assert bench.partial and 0 < bench.repos < 100_000
    assert f"1 benchmark(s) kept in {first}, 1 of them partial" in output
    name = signal.Signals(signum).name
    assert f"run 1 of 3 stopped by {name}; the runs after it were not started" in output
    assert "second signal" not in output
    assert not (tmp_path / "series-2.json").exists()


def test_a_series_refuses_what_it_cannot_be(tmp_path: Path) -> None:
    bad = vcsbench("run", "--repeat", "0", "--fs", f"dir:{tmp_path}")
    assert 2 == bad.returncode
    assert "'0' is not a number of runs; give a whole number from 1 to 100" in bad.stderr
    resumed = vcsbench("run", "--repeat", "2", "--resume", str(tmp_path / "r.json"))
    assert 0 != resumed.returncode
    assert "--repeat 2 with --resume: a resumed run is one file" in resumed.stderr


def test_a_series_never_overwrites_files_it_was_not_named(tmp_path: Path) -> None:
    """--out fs.json names the series; fs-2.json, there already, is the user's."""
    (tmp_path / "fs-2.json").write_text("mine")
    found = vcsbench(
        *run_args("2", fs=f"dir:{tmp_path}", out=tmp_path / "fs.json"), "--repeat", "3"
    )
    assert 2 == found.returncode
    (line,) = found.stderr.strip().splitlines()
    assert f"writes {tmp_path / 'fs-2.json'}, which is there already" in line
    assert "mine" == (tmp_path / "fs-2.json").read_text()
    assert not (tmp_path / "fs-1.json").exists()


def test_a_run_leaves_no_storage_directory_of_pytest_benchmarks(tmp_path: Path) -> None:
    found = vcsbench(*run_args("2", fs=f"dir:{tmp_path}", out=tmp_path / "r.json"), cwd=tmp_path)
    assert 0 == found.returncode, found.stderr
    assert not (tmp_path / ".benchmarks").exists()


CHILD = """
import signal, sys, time
got = []
for each in (signal.SIGINT, signal.SIGTERM):
    signal.signal(each, lambda signum, frame: got.append(signum))
print("ready", flush=True)
deadline = time.monotonic() + 30
while not got and time.monotonic() < deadline:
    time.sleep(0.01)
time.sleep(0.5)  # a second copy of the signal would arrive in this
print(f"got {len(got)}")
sys.exit(3)
"""


@pytest.mark.serial
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_child_gets_a_stop_signal_once_as_passed_on(signum: int) -> None:
    """run_child (``--repeat``'s runs, ``doctor --spread``'s): the signal this process
    receives is passed to the child once, and the child's own status comes back."""
    import os
    import sys
    import threading

    from vcsbench.process import run_child

    # This process's disposition set here: one started from cron or nohup has SIGINT
    # ignored, which run_child rightly leaves ignored.
    inherited = signal.signal(signum, signal.default_int_handler)
    try:
        timer = threading.Timer(1.0, os.kill, (os.getpid(), signum))
        timer.start()
        try:
            child = run_child([sys.executable, "-c", CHILD], capture=True)
        finally:
            timer.cancel()
        assert signal.default_int_handler == signal.getsignal(signum)  # given back
    finally:
        signal.signal(signum, inherited)
    assert 3 == child.code and [signum] == child.passed
    assert "ready\ngot 1\n" == child.out


def test_each_run_of_a_series_is_named_beside_the_one_asked() -> None:
    from vcsbench.cli.repeat import run_paths

    assert [Path("a/r-1.json.gz"), Path("a/r-2.json.gz")] == run_paths(Path("a/r.json.gz"), 2)
    assert [Path("x.y-1.json")] == run_paths(Path("x.y.json"), 1)
