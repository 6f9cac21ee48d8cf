"""Progress of a run on the terminal: rounds done, rate and the time left, for the
benchmark and for the whole run. On standard error, as a log's lines or a bar: standard
output is the answer (``vcsbench run ... > answer.txt`` holds the tables, not the pace)."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

FIRST_LINE_S = 5.0
"""Written as lines (a log, CI, ``make``): a benchmark's first line after this long..."""
LOG_EVERY_S = 30.0
"""...then one each this long, and its last: a run of minutes says its pace and time left
in a few lines, and its answer is not pushed down a screen of them."""


class Stderr:
    """Standard error as the display writes to it."""

    def line(self, text: str = "") -> None:
        sys.stderr.write(text + "\n")

    def write(self, text: str) -> None:
        sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


class ProgressDisplay:
    """Rounds done, rate and time left for the running benchmark."""

    def __init__(
        self,
        config: pytest.Config,
        mode: str,
        label: str,
        overall: tuple[int, int, float] = (1, 1, 0.0),
        members: int = 1,
        out: Any = None,
    ) -> None:
        """``overall``: (this benchmark's number, benchmarks in all, run start time);
        ``members``: how many benchmarks these rounds are (an interleaved group's);
        ``out``: where the lines go (standard error; a test's writer)."""
        self.terminal = config.get_terminal_writer()
        """pytest's, on standard output: its line is ended before a progress line."""
        if mode == "auto":
            in_ci = os.environ.get("CI", "").lower() == "true"
            dumb = os.environ.get("TERM", "") in ("", "dumb")
            mode = "bar" if sys.stderr.isatty() and not dumb and not in_ci else "lines"
        self.mode = mode
        self.writer = Stderr() if out is None else out
        self.capture = config.pluginmanager.getplugin("capturemanager")
        self.label = label
        self.overall = overall
        self.members = members
        self._last = time.monotonic()
        """No line before one interval has passed: a rate from the first round alone
        (imports, caches) would promise minutes for a run of seconds."""
        self._drawn = False
        self._lines = 0

    def __call__(self, done: int, total: int, elapsed: float, unit: str = "rounds") -> None:
        if self.mode == "none":
            return
        now = time.monotonic()
        final = done == total
        # a log: the first pace after a few seconds, then a line each half minute
        log_interval = LOG_EVERY_S if self._lines else FIRST_LINE_S
        interval = 0.2 if self.mode == "bar" else log_interval
        if not final and now - self._last < interval:
            return
        self._last = now
        rate = done / elapsed if elapsed > 0 else 0.0
        left = (total - done) / rate if rate > 0 else 0.0
        number, count, started = self.overall
        members = self.members
        text = f"{self.label}: {done:,}/{total:,} {unit}, {rate:,.1f}/s, {left:.0f}s left"
        if count > 1 and unit == "rounds":
            # The run's time left: in its first benchmark (or group), as if every
            # benchmark took as long as one of these (the run's start-up is no pace);
            # then at the run's pace so far, for the benchmarks still to come.
            if number == 1:
                whole = (elapsed * total / done) * count / members if done else 0.0
                run_left = whole - elapsed
            else:
                share = (number - 1 + members * done / total) / count
                run_elapsed = time.perf_counter() - started
                run_left = run_elapsed / share - run_elapsed if share > 0 else 0.0
            text = f"[{number}/{count}] {text}; run: ~{duration(run_left)} left"
        with self._uncaptured():
            if self.terminal.width_of_current_line and not self._drawn and _one_place():
                # pytest's own output (a dot, a test id) is on this line, and this line
                # goes to the same place (a terminal, 2>&1): start a new one.
                self.terminal.line()
                self.terminal.flush()
            self._drawn = self.mode == "bar" and not final
            if self.mode == "bar":
                width = 24
                filled = int(width * done / total)
                bar = "#" * filled + "." * (width - filled)
                self.writer.write(f"\r[{bar}] {text}\x1b[K" + ("\n" if final else ""))
            else:
                self.writer.line(text)
                self._lines += 1
            self.writer.flush()

    @contextmanager
    def _uncaptured(self) -> Iterator[None]:
        if self.capture is None:
            yield
        else:
            with self.capture.global_and_fixture_disabled():
                yield


def _one_place() -> bool:
    """Standard output and standard error go to the same place (a terminal, one file)."""
    try:
        out, err = os.fstat(1), os.fstat(2)
    except OSError:
        return True
    return (out.st_dev, out.st_ino) == (err.st_dev, err.st_ino)


def duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"
