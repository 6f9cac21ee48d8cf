"""The system sampler: a run shorter than its interval still has a sample, and what
competed with it is counted -- a process of known CPU use started beside it."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

from vcsbench.measure.sampler import SystemSampler

SPIN = "import time\nend = time.monotonic() + 30\nwhile time.monotonic() < end:\n    pass\n"


def test_a_run_shorter_than_the_interval_has_one_sample_that_sees_a_busy_cpu() -> None:
    hog = subprocess.Popen(
        [sys.executable, "-c", SPIN],
        # whatever this test inherited, the child takes the signal as sent
        preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL),
    )
    try:
        time.sleep(0.3)  # the spinning process is running
        sampler = SystemSampler(None, interval_s=0.5)
        sampler.start()
        time.sleep(0.15)  # a run of 0.15 s: under the interval
        samples = sampler.stop()
    finally:
        hog.terminate()
        hog.wait(timeout=30)
    assert len(samples) == 1
    # One CPU's worth spun beside the run (the scheduler may share it with others)
    assert samples[0]["others_cpu"] >= 0.5, samples
    quiet = SystemSampler(None, interval_s=0.5)
    quiet.start()
    quiet_samples = quiet.stop()
    assert len(quiet_samples) <= 1  # stopped at once: at most the last one, never a crash
