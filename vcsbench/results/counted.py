"""A benchmark's counted rounds: rounds of its operation outside the timed ones, each
counted whole -- the instructions it executed in user space (valgrind's callgrind, its
children included) and the system calls it made of every kind -- what is too costly to
count while a round is timed (:mod:`vcsbench.bench.counted` runs them).

A count is judged by what it does between rounds: where every counted round made the
same (the system calls of most operations), it is exact and any difference is a change;
where it moves (instructions move a little with what each round's paths and contents
hash to; a threaded path moves more), its spread is recorded and a change must stand out
of it (:mod:`vcsbench.judge.comparison`).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from vcsbench.results.schema import (
    LARGEST,
    SchemaError,
    expect,
    optional,
    required,
    str_map,
)

COUNTED: dict[str, tuple[str, str]] = {
    "instructions": (
        "instructions",
        "user-space instructions the operation executed, its children's included (each "
        "counted whole): valgrind's callgrind, in counted rounds of their own",
    ),
    "sync_calls": ("fsync-family calls", "fsync, fdatasync, sync_file_range, syncfs, msync, sync"),
    "rename_calls": ("renames", "rename, renameat, renameat2"),
    "open_calls": ("opens", "open, openat, openat2, creat"),
    "mkdir_calls": ("mkdirs", "mkdir, mkdirat"),
    "unlink_calls": ("unlinks", "unlink, unlinkat, rmdir"),
    "stat_calls": ("lookups", "stat, lstat, fstat, newfstatat, statx, access, readlink"),
    "stat_failed_calls": ("failed lookups", "the lookups that returned an error"),
    "read_calls": ("reads", "read, pread64, readv, preadv, preadv2"),
    "write_calls": ("writes", "write, pwrite64, writev, pwritev, pwritev2"),
    "mmap_calls": ("mmaps", "mmap"),
    "process_calls": ("processes", "clone, clone3, fork, vfork (processes and threads)"),
    "exec_calls": ("execs", "execve, execveat (failed tries too)"),
}
"""Each count of a counted round: (its label, what it counts)."""
MAX_COUNTED = 10_000
"""The most counted rounds a benchmark records."""


@dataclass
class Counted:
    """A benchmark's counted rounds and what each counted."""

    ok: list[bool]
    """Each counted round succeeded (ran and was verified)."""
    values: dict[str, list[int | None]] = field(default_factory=dict)
    """Each count's value in each counted round (None: that round's is missing)."""
    missing: dict[str, str] = field(default_factory=dict)
    """Why a count was not counted (no valgrind, not root), by name."""
    seconds: float = 0.0
    """What the counted rounds cost: their wall time, processes started to end."""
    how: str = ""

    @property
    def rounds(self) -> int:
        return len(self.ok)

    def series(self, name: str) -> list[int]:
        """A count's values in the successful counted rounds."""
        return [
            v for v, good in zip(self.values.get(name, []), self.ok, strict=False)
            if good and v is not None
        ]  # fmt: skip

    def figure(self, name: str) -> float | None:
        """A count per operation: the median over the successful counted rounds."""
        found = self.series(name)
        return float(statistics.median(found)) if found else None

    def exact(self, name: str) -> bool:
        """Every successful counted round made the same count."""
        found = self.series(name)
        return bool(found) and len(set(found)) == 1

    def spread(self, name: str) -> float | None:
        """How far the count moves between rounds (:func:`share_range`)."""
        return share_range(self.series(name))

    def to_json(self) -> dict[str, Any]:
        return {
            "how": self.how,
            "seconds": round(self.seconds, 3),
            "ok": self.ok,
            "values": self.values,
            "missing": self.missing,
        }

    @classmethod
    def from_json(cls, data: object, where: str) -> Counted | None:
        if data is None:
            return None
        d = expect(data, dict, where)
        ok = [bool(expect(v, bool, f"{where}.ok")) for v in required(d, "ok", list, where)]
        if len(ok) > MAX_COUNTED:
            raise SchemaError(f"{where}.ok: {len(ok):,} counted rounds, over {MAX_COUNTED:,}")
        values: dict[str, list[int | None]] = {}
        for name, series in expect(d.get("values") or {}, dict, f"{where}.values").items():
            if name not in COUNTED:
                continue
            found = expect(series, list, f"{where}.values.{name}")
            if len(found) != len(ok):
                raise SchemaError(
                    f"{where}.values.{name}: {len(found)} values but {len(ok)} counted rounds"
                )
            values[name] = [_count(v, f"{where}.values.{name}") for v in found]
        seconds = d.get("seconds", 0.0)
        if not isinstance(seconds, (int, float)) or not 0 <= seconds < LARGEST:
            raise SchemaError(f"{where}.seconds: {seconds!r} is not a number of seconds")
        return cls(
            ok=ok,
            values=values,
            missing=str_map(d.get("missing") or {}, f"{where}.missing"),
            seconds=float(seconds),
            how=optional(d, "how", str, where, ""),
        )


def share_range(values: Sequence[float]) -> float | None:
    """How far a count ranges over its rounds: (max - min) / median; 0 where every round
    made the same; None with no rounds, or a median of 0."""
    middle = statistics.median(values) if values else 0
    return (max(values) - min(values)) / middle if middle else None


def _count(value: object, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < LARGEST:
        raise SchemaError(f"{where}: {value!r} is not a count (a whole number >= 0)")
    return value
