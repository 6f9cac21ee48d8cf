"""A capacity plan: what N submissions in a window ask of the disk, from the figures a
load measured per session (``--plan students=10000,window=60m``).

Arithmetic on measured figures only: the rate the students arrive at (N over the window,
evenly: a real deadline's last minutes are steeper, which the plan says) times each
figure per successful session. Nothing is extrapolated beyond that product.
"""

from __future__ import annotations

from dataclasses import dataclass

from vcsbench.errors import VcsbenchError

USAGE = "students=N,window=T (T in s, m or h, e.g. 60m)"
MAX_STUDENTS = 100_000_000
MAX_WINDOW_S = 30 * 86400
UNITS = {"s": 1, "m": 60, "h": 3600}


@dataclass(frozen=True)
class Deadline:
    """``students`` submissions (one session each) within ``window_s`` seconds."""

    students: int
    window_s: float
    text: str

    @classmethod
    def parse(cls, text: str) -> Deadline:
        """From ``students=N,window=T``; one line naming what is wrong."""
        fields: dict[str, str] = {}
        for part in text.split(","):
            key, sep, value = part.strip().partition("=")
            if not sep or key not in ("students", "window") or key in fields:
                raise VcsbenchError(f"--plan {text!r}: {part.strip()!r} is not one of {USAGE}")
            fields[key] = value.strip()
        if set(fields) != {"students", "window"}:
            raise VcsbenchError(f"--plan {text!r} needs both: {USAGE}")
        students = fields["students"].replace("_", "")
        if not students.isdigit() or not 1 <= int(students) <= MAX_STUDENTS:
            raise VcsbenchError(
                f"--plan students={fields['students']!r} is not a whole number from 1 to "
                f"{MAX_STUDENTS:,}"
            )
        window = fields["window"]
        amount, unit = window[:-1], window[-1:]
        if unit not in UNITS or not amount.isdigit() or int(amount) < 1:
            raise VcsbenchError(
                f"--plan window={window!r} is not a whole number of s, m or h (e.g. 60m)"
            )
        seconds = int(amount) * UNITS[unit]
        if seconds > MAX_WINDOW_S:
            raise VcsbenchError(f"--plan window={window!r} is longer than 30 days")
        return cls(int(students), float(seconds), text)

    @property
    def sessions_per_s(self) -> float:
        return self.students / self.window_s

    def window_text(self) -> str:
        minutes = self.window_s / 60
        return f"{minutes:g} min" if minutes < 120 else f"{minutes / 60:g} h"


@dataclass(frozen=True)
class PerSession:
    """What the device did per successful session of an access path, over every step it
    was counted in."""

    sessions: int
    write_requests: float
    write_bytes: float
    flushes: float | None
    """None where the kernel's device statistics had no flush field."""


@dataclass(frozen=True)
class Need:
    """What the deadline asks of the disk on one path: per second, evenly spread."""

    sessions_per_s: float
    write_iops: float
    write_bytes_per_s: float
    flushes_per_s: float | None


def need(deadline: Deadline, per: PerSession) -> Need:
    rate = deadline.sessions_per_s
    return Need(
        sessions_per_s=rate,
        write_iops=per.write_requests * rate,
        write_bytes_per_s=per.write_bytes * rate,
        flushes_per_s=None if per.flushes is None else per.flushes * rate,
    )
