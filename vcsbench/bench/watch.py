"""What a benchmark reads over its rounds as a whole, from before the first round to the
end of the last: its wall time, the system sampler's samples, who wrote to the sandbox's
device, and the memory of the processes the rounds ran in. Started once, closed once, as
the last round ends (before any maintenance or counted rounds, which are no part of it).
The rounds themselves are read one by one by the round loop (:mod:`vcsbench.bench.loop`).
"""

from __future__ import annotations

import os
import time
from typing import Any, NamedTuple

from vcsbench.bench.workers import WorkerEnd
from vcsbench.measure import writers
from vcsbench.measure.probes import current_rss_bytes, peak_rss_bytes, peak_rss_reset, read_device
from vcsbench.measure.sampler import SystemSampler
from vcsbench.results.writers import Writers
from vcsbench.sandbox import SandboxInfo


class RoundsEnd(NamedTuple):
    """Read as the last round ends."""

    wall_s: float
    samples: list[dict[str, Any]]
    writers: Writers | None
    rss_peak: int
    rss_growth: int


class Watch:
    """The whole-interval readings of one benchmark's rounds."""

    def __init__(self, sandbox: SandboxInfo) -> None:
        self.stat_path = sandbox.device_stat_path
        self.sampler = SystemSampler(self.stat_path)
        self.started = False
        self._rss_start = 0
        self._writers_before: tuple[writers.Snapshot, int] | None = None
        self._closed: RoundsEnd | None = None
        self._sampling = False
        """The sampler runs (started, and neither closed nor abandoned)."""

    def start(self) -> float:
        """Before the first round: the memory's and the device's baselines, the sampler
        started; the time the rounds start from."""
        peak_rss_reset()
        self._rss_start = current_rss_bytes()
        self.sampler.start()
        self._sampling = True
        if self.stat_path:
            self._writers_before = (writers.snapshot(), read_device(self.stat_path).write_bytes)
        self.started = True
        return time.perf_counter()

    def close(self, t0: float, ends: list[WorkerEnd]) -> RoundsEnd:
        """Once, as the last round ends (the same readings when asked again): the wall time
        since ``t0``, the samples, who wrote, and the memory (the workers' where the rounds
        ran in workers, ``ends``)."""
        if self._closed is None:
            wall_s = time.perf_counter() - t0 if self.started else 0.0
            samples = self._stop_sampler()
            found = self._writers()
            rss_peak, rss_growth = peak_rss_bytes(), current_rss_bytes() - self._rss_start
            if ends:  # the measured processes were the workers
                rss_peak = max(w.peak_rss for w in ends)
                rss_growth = max(w.rss_growth for w in ends)
            self._closed = RoundsEnd(wall_s, samples, found, rss_peak, rss_growth)
        return self._closed

    def abandon(self) -> None:
        """The sampler stopped where the rounds ended with no result (a worker that failed,
        a bug): its process never outlives the benchmark. Nothing once closed."""
        self._stop_sampler()

    def _stop_sampler(self) -> list[dict[str, Any]]:
        """The sampler stopped, once: its samples (none where it was not running)."""
        if not self._sampling:
            return []
        self._sampling = False
        return self.sampler.stop()

    def _writers(self) -> Writers | None:
        """Who wrote to the sandbox's device from the first round to now (the rounds, and
        the preparation, verification and canaries around them)."""
        if self._writers_before is None or not self.stat_path:
            return None
        snap, written = self._writers_before
        written = read_device(self.stat_path).write_bytes - written
        # the benchmark's process and all below it are its own: ranked whatever they hold
        found = writers.since(snap, written, self.stat_path, server={os.getpid()})
        return Writers.from_json(found, "writers")
