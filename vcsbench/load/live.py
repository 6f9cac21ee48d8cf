"""A running load, watched: what a step has done so far, as Locust's own view shows it.

Every ``EVERY_S`` of a step's window the engine sends ``{"live": {...}}`` (its sessions so
far, how many failed, their median and 95th percentile) before the step's answer; the
run's process shows it on standard error (:class:`LiveView`): on a terminal one line
rewritten in place, elsewhere (a log, CI) a line every ``LINES_EVERY_S``, or one for
every message with ``--live lines``. These are the engine's counts as the sessions end,
before the read-back: the step's figures, verified, follow it.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Sequence
from typing import IO, Any

EVERY_S = 2.0
LINES_EVERY_S = 10.0
MODES = ("auto", "lines", "none")


def figures(
    index: int, level: float, elapsed_s: float, of_s: float, sessions: int, failed: int,
    p50_ms: float | None, p95_ms: float | None,
) -> dict[str, Any]:  # fmt: skip
    """A live message: the step, how far into its window, its sessions so far."""
    return {
        "index": index,
        "level": level,
        "elapsed_s": elapsed_s,
        "of_s": of_s,
        "sessions": sessions,
        "failed": failed,
        "p50_ms": p50_ms,
        "p95_ms": p95_ms,
    }


def percentiles(latencies_ms: Sequence[float]) -> tuple[float | None, float | None]:
    """The median and 95th percentile (nearest rank; None of nothing)."""
    ordered = sorted(latencies_ms)
    return _rank(ordered, 0.50), _rank(ordered, 0.95)


def _rank(ordered: Sequence[float], q: float) -> float | None:
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)] if ordered else None


def text(message: dict[str, Any], path: str, steps: int) -> str:
    def ms(value: float | None) -> str:
        return "-" if value is None else f"{value:,.0f} ms"

    return (
        f"{path}, running step {int(message['index']) + 1} of {steps}: "
        f"{float(message['elapsed_s']):.0f} s of {float(message['of_s']):.0f} s, "
        f"{int(message['sessions']):,} sessions so far ({int(message['failed']):,} failed), "
        f"p50 {ms(message['p50_ms'])}, p95 {ms(message['p95_ms'])} (not yet verified)"
    )


class LiveView:
    """Shows a path's live messages on ``stream``, as ``mode`` says."""

    def __init__(self, mode: str, path: str, steps: int, stream: IO[str] | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.mode = mode
        if mode == "auto" and self.stream.isatty():
            self.mode = "terminal"
        self.path, self.steps = path, steps
        self._shown = False
        self._last = -math.inf

    def show(self, message: dict[str, Any]) -> None:
        line = text(message, self.path, self.steps)
        now = time.monotonic()
        if self.mode == "terminal":
            self.stream.write(f"\r\x1b[K{line}")
            self._shown = True
        elif self.mode == "lines" or (self.mode == "auto" and now - self._last >= LINES_EVERY_S):
            self.stream.write(f"{line}\n")
            self._last = now
        else:
            return
        self.stream.flush()

    def callback(self) -> Callable[[dict[str, Any]], None] | None:
        return None if self.mode == "none" else self.show

    def end(self) -> None:
        """Before the step's own line: the line rewritten in place is cleared."""
        if self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._shown = False
        self._last = -math.inf
