"""The canary, timed: the same few system calls on the benchmark's sandbox after every
round (every :func:`every`-th on a run of more than ``MOST`` rounds, so that it stays at
most ``MOST`` timings), outside the round's timing and its probes (what it is for:
:mod:`vcsbench.results.canary`).

A directory, ``FILES`` files of ``SIZE`` bytes written into it (the canary's **writes**,
timed apart: system calls and the page cache, what a backend that does not flush meets)
and the first one fsync'd -- on a journaling filesystem a journal commit (what a backend
that flushes meets), on tmpfs nothing.
Timed with the rounds' clock; then verified (every file there, of its size) and removed,
untimed. A canary that fails is left out and counted, never a fast sample.
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from vcsbench.results.canary import Canary

MOST = 200
"""The canary's timings in one benchmark at most. Up to this many rounds it runs after
each: a comparison between runs divides each round by the canary timed right after it
(:meth:`vcsbench.results.canary.Canary.per_round`); after every 5th of 100 rounds, as it
ran before, the medians' ratio carried the canary median's own sampling error (from 20
timings about 4 % on ext4, as much as the drift it takes out; from 100, 1.5 %).
Past it, after every n-th round: its median is as steady from 200 as from 2,000, and
each costs about as much as a short round (half a millisecond on tmpfs)."""
FILES = 10
SIZE = 4096
_DATA = b"canary\n" * (SIZE // 7) + b"c" * (SIZE % 7)


def every(rounds: int) -> int:
    """After every how many rounds the canary runs in a benchmark of ``rounds``."""
    return max(1, math.ceil(rounds / MOST))


_SUFFIX = {1: "st", 2: "nd", 3: "rd"}


def ordinal(n: int) -> str:
    """2nd, 3rd, 11th, 21st, 50th."""
    suffix = "th" if 10 <= n % 100 <= 20 else _SUFFIX.get(n % 10, "th")
    return f"{n}{suffix}"


def method(every: int) -> str:
    after = "after every round" if every == 1 else f"after every {ordinal(every)} round"
    return (
        f"{after}, outside its timing: mkdir, {FILES} files of "
        f"{SIZE // 1024} KiB written (its writes), then the first fsync'd, in the sandbox; "
        "verified and removed untimed"
    )


class CanaryTimer:
    """The canary of one benchmark's ``rounds``, in ``root`` (a directory of its own
    beside the rounds' containers, never scanned as their footprint)."""

    def __init__(
        self, root: Path, rounds: int, clock: Callable[[], int] = time.perf_counter_ns
    ) -> None:
        self.root = root
        self.clock = clock
        self.every = every(rounds)
        self.failed = 0
        self._made = 0
        self._root_made = False

    def due(self, index: int) -> bool:
        return index % self.every == self.every - 1

    def time_once(self) -> tuple[int, int] | None:
        """One canary's nanoseconds, whole and up to its fsync (its writes alone), or
        None (counted in ``failed``) if it failed."""
        self._made += 1
        here = self.root / f"c{os.getpid()}-{self._made}"
        try:
            if not self._root_made:  # once, not before every round's canary
                self.root.mkdir(exist_ok=True)
                self._root_made = True
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
            _remove(here)
        if sizes != [SIZE] * FILES:
            self.failed += 1
            return None
        return took


def _remove(here: Path) -> None:
    """The canary's directory gone: its files by name (a tree walk costs more than the
    canary), anything else there by a walk."""
    for i in range(FILES):
        with contextlib.suppress(OSError):
            os.unlink(here / f"f{i}")
    try:
        os.rmdir(here)
    except FileNotFoundError:
        pass
    except OSError:
        shutil.rmtree(here, ignore_errors=True)


def summary(timings_ns: list[int], writes_ns: list[int], every: int = 1) -> Canary | None:
    """The benchmark's canary from its timings, whole and its writes alone, timed after
    every ``every``-th round (None: none was timed)."""
    if not timings_ns:
        return None
    writes = statistics.median(writes_ns) / 1e6 if writes_ns else None
    each = tuple(
        (round(whole / 1000), round(part / 1000))
        for whole, part in zip(timings_ns, writes_ns, strict=True)
    )
    return Canary(
        statistics.median(timings_ns) / 1e6, len(timings_ns), every, method(every), writes, each
    )
