"""The system sampler: a run shorter than its interval still has a sample, and what
competed with it is counted -- a process of known CPU use started beside it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

from vcsbench.measure.sampler import SystemSampler

SPIN = (
    "import signal, sys, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_DFL)\n"
    "end = time.monotonic() + 30\n"
    "while time.monotonic() < end:\n"
    "    pass\n"
)


def other_process(token: str) -> int:
    """A spinning process that is not this test's descendant (its parent exits at once),
    as another tenant's job is: the sampler counts what is not the run's own. Its pid."""
    launcher = subprocess.run(
        ["sh", "-c", f'"$0" -c "$1" {token} >/dev/null 2>&1 & echo $!', sys.executable, SPIN],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(launcher.stdout.strip())


def end_ours(pid: int, token: str) -> None:
    """End the spinning process, proved ours by the token in its command line."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return
    if token.encode() in cmdline:
        os.kill(pid, signal.SIGTERM)


def test_a_run_shorter_than_the_interval_has_one_sample_that_sees_a_busy_cpu() -> None:
    token = f"vcsbench-test-{uuid.uuid4().hex}"
    hog = other_process(token)
    try:
        time.sleep(0.3)  # the spinning process is running
        sampler = SystemSampler(None, interval_s=0.5)
        sampler.start()
        time.sleep(0.15)  # a run of 0.15 s: under the interval
        samples = sampler.stop()
    finally:
        end_ours(hog, token)
    assert len(samples) == 1
    # One CPU's worth spun beside the run (the scheduler may share it with a test beside)
    assert samples[0]["others_cpu"] >= 0.5, samples
    quiet = SystemSampler(None, interval_s=0.5)
    quiet.start()
    quiet_samples = quiet.stop()
    assert len(quiet_samples) <= 1  # stopped at once: at most the last one, never a crash


def test_other_processes_cpu_is_averaged_over_the_time_each_sample_covers() -> None:
    """Two full samples of an idle machine and a last one of 50 ms in which another
    process used 0.9 CPUs: 0.045 CPU-seconds over 1.05 s, 0.043 CPUs on average, not
    busy (the samples' plain mean, 0.30, read busy); the same burst over a full
    interval: 0.30 CPUs, busy."""
    from vcsbench.results.run_figures import busy, over_time

    class Bench:
        def __init__(self, last_t: float) -> None:
            self.sampler = {
                "interval_s": 0.5,
                "samples": [
                    {"t_s": 100.5, "others_cpu": 0.0},
                    {"t_s": 101.0, "others_cpu": 0.0},
                    {"t_s": last_t, "others_cpu": 0.9},
                ],
            }

    short, full = Bench(101.05), Bench(101.5)
    assert abs(over_time(short.sampler["samples"], "others_cpu", 0.5) - 0.045 / 1.05) < 1e-9
    assert "" == busy(short, 2)  # type: ignore[arg-type]
    assert "other processes used 0.30 CPUs on average" == busy(full, 2)  # type: ignore[arg-type]
    # without the interval (results written before it was kept): each sample alike
    assert abs(over_time(short.sampler["samples"], "others_cpu", None) - 0.3) < 1e-9
