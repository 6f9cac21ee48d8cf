"""The canary, timed: the same few system calls on the benchmark's sandbox after every
``EVERY``-th round, outside the round's timing and its probes (what it is for:
:mod:`vcsbench.results.canary`).

A directory, ``FILES`` files of ``SIZE`` bytes written into it (the canary's **writes**,
timed apart: system calls and the page cache, what a backend that does not flush meets)
and the first one fsync'd -- on a journaling filesystem a journal commit (what a backend
that flushes meets), on tmpfs nothing.
Timed with the rounds' clock; then verified (every file there, of its size) and removed,
untimed. A canary that fails is left out and counted, never a fast sample.
"""

from __future__ import annotations

import os
import shutil
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from vcsbench.results.canary import Canary

EVERY = 5
FILES = 10
SIZE = 4096
METHOD = (
    f"after every {EVERY}th round, outside its timing: mkdir, {FILES} files of "
    f"{SIZE // 1024} KiB written (its writes), then the first fsync'd, in the sandbox; "
    "verified and removed untimed"
)
_DATA = b"canary\n" * (SIZE // 7) + b"c" * (SIZE % 7)


class CanaryTimer:
    """The canary of one benchmark's rounds, in ``root`` (a directory of its own beside
    the rounds' containers, never scanned as their footprint)."""

    def __init__(self, root: Path, clock: Callable[[], int] = time.perf_counter_ns) -> None:
        self.root = root
        self.clock = clock
        self.failed = 0
        self._made = 0

    def due(self, index: int) -> bool:
        return index % EVERY == EVERY - 1

    def time_once(self) -> tuple[int, int] | None:
        """One canary's nanoseconds, whole and up to its fsync (its writes alone), or
        None (counted in ``failed``) if it failed."""
        self._made += 1
        here = self.root / f"c{os.getpid()}-{self._made}"
        try:
            self.root.mkdir(exist_ok=True)
            start = self.clock()
            here.mkdir()
            for i in range(FILES):
                fd = os.open(here / f"f{i}", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                try:
                    os.write(fd, _DATA)
                finally:
                    os.close(fd)
            written = self.clock()
            fd = os.open(here / "f0", os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            took = (self.clock() - start, written - start)
            sizes = [os.stat(here / f"f{i}").st_size for i in range(FILES)]
        except OSError:
            self.failed += 1
            return None
        finally:
            shutil.rmtree(here, ignore_errors=True)
        if sizes != [SIZE] * FILES:
            self.failed += 1
            return None
        return took


def summary(timings_ns: list[int], writes_ns: list[int]) -> Canary | None:
    """The benchmark's canary from its timings, whole and its writes alone (None: none
    was timed)."""
    if not timings_ns:
        return None
    writes = statistics.median(writes_ns) / 1e6 if writes_ns else None
    each = tuple(
        (round(whole / 1000), round(part / 1000))
        for whole, part in zip(timings_ns, writes_ns, strict=True)
    )
    return Canary(statistics.median(timings_ns) / 1e6, len(timings_ns), EVERY, METHOD, writes, each)
