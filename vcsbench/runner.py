"""One benchmark: N rounds of one operation, each measured, verified and recorded.

The round loop itself belongs to pytest-benchmark (``benchmark.pedantic``); this class
supplies its ``setup``/``target``/``teardown`` so that only the operation sits inside
the timed call, and everything else -- preparing, probing, syncing, verifying -- sits
outside it.
"""

from __future__ import annotations

import os
import statistics
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vcsbench.errors import VcsbenchError
from vcsbench.filesystems import SandboxInfo
from vcsbench.probes import (
    Delta,
    DeviceCounters,
    Footprint,
    Probe,
    Snapshot,
    current_rss_bytes,
    drop_caches,
    footprint,
    peak_rss_bytes,
    peak_rss_reset,
)
from vcsbench.sampler import SAMPLE_UNITS, SystemSampler
from vcsbench.workloads import Operation

SCHEMA_VERSION = 1
FLOOR_ROUNDS = 5
CACHE_STATES = ("warm", "cold")

Progress = Callable[[int, int, float], None]
"""Called after each round with (rounds done, rounds in all, seconds since start)."""


@dataclass(frozen=True)
class VerifyPolicy:
    """Which rounds are verified: all, or ``sample`` evenly spaced ones."""

    sample: int | None = None

    @classmethod
    def parse(cls, text: str) -> VerifyPolicy:
        if text == "all":
            return cls()
        kind, _, count = text.partition(":")
        if kind == "sample" and count.isdigit() and int(count) > 0:
            return cls(int(count))
        raise VcsbenchError(f"verify {text!r} is not 'all' or 'sample:K' with K > 0")

    def rounds(self, total: int) -> set[int]:
        if self.sample is None or self.sample >= total:
            return set(range(total))
        if self.sample == 1:
            return {total - 1}
        return {round(i * (total - 1) / (self.sample - 1)) for i in range(self.sample)}

    def __str__(self) -> str:
        return "all" if self.sample is None else f"sample:{self.sample}"


@dataclass
class _Round:
    index: int
    repo: Path
    checkout: Path
    t_start_s: float = 0.0
    wall_ns: int = 0
    delta: Delta | None = None
    error: str | None = None
    verified: bool = False


@dataclass
class _TreeEntry:
    is_dir: bool
    data: bytes = b""


@dataclass
class BenchmarkRun:
    """Drives the rounds of one (backend, op, payload, sandbox) benchmark."""

    operation: Operation
    sandbox: SandboxInfo
    workdir: Path
    rounds: int
    cache: str = "warm"
    verify: VerifyPolicy = field(default_factory=VerifyPolicy)
    progress: Progress | None = None

    def __post_init__(self) -> None:
        if self.cache not in CACHE_STATES:
            raise VcsbenchError(f"cache {self.cache!r} is not one of {', '.join(CACHE_STATES)}")
        self.workdir.mkdir(parents=True, exist_ok=False)
        self.probe = Probe(self.workdir, self.sandbox.device_stat_path)
        self.verify_rounds = self.verify.rounds(self.rounds)
        self.floor_round = self.rounds - 1
        self._records: list[_Round] = []
        self._before: Snapshot | None = None
        self._floor_before: dict[str, tuple[int, int, int]] = {}
        self._floor_tree: dict[str, _TreeEntry] = {}
        self._sampler = SystemSampler(self.sandbox.device_stat_path)
        self._started = False
        self.overhead_ns = 0
        self._rss_start = 0
        self._t0 = 0.0

    # -- the three callbacks pedantic calls, per round ------------------------------

    def setup(self) -> None:
        if not self._started:
            self._start()
        index = len(self._records)
        repo, checkout = self.operation.paths(self.workdir, index)
        record = _Round(index, repo, checkout)
        self._records.append(record)
        try:
            self.operation.prepare(repo)
        except Exception as exc:
            record.error = f"prepare: {_describe(exc)}"
        if record.index == self.floor_round:
            self._floor_before = _snapshot(self.workdir, repo.name)
        if self.cache == "cold":
            drop_caches()
        self._before = self.probe.before()

    def target(self) -> None:
        record = self._records[-1]
        if record.error is not None:
            return
        record.t_start_s = time.perf_counter()
        start = time.perf_counter_ns()
        try:
            self.operation.run(record.repo, record.checkout)
        except Exception as exc:
            record.error = _describe(exc)
        record.wall_ns = time.perf_counter_ns() - start

    def teardown(self) -> None:
        after = self.probe.after()
        record = self._records[-1]
        assert self._before is not None
        record.delta = Probe.delta(self._before, after, record.wall_ns)
        if record.index == self.floor_round and record.error is None:
            self._floor_tree = _changed(self.workdir, record.repo.name, self._floor_before)
        if record.error is None and record.index in self.verify_rounds:
            problems = self.operation.verify(record.repo, record.checkout)
            record.verified = True
            if problems:
                record.error = (
                    "verify: "
                    + "; ".join(problems[:3])
                    + (f" (+{len(problems) - 3} more)" if len(problems) > 3 else "")
                )
        if self.progress is not None:
            self.progress(len(self._records), self.rounds, time.perf_counter() - self._t0)

    # -- before the first and after the last round ------------------------------------

    def _start(self) -> None:
        self._started = True
        self.overhead_ns = self.probe.overhead_ns(pairs=10)
        peak_rss_reset()
        self._rss_start = current_rss_bytes()
        self._sampler.start()
        self._t0 = time.perf_counter()

    @property
    def failed_rounds(self) -> list[int]:
        return [r.index for r in self._records if r.error is not None]

    def finish(self) -> dict[str, Any]:
        """Stop sampling, measure footprint and floor, and return ``extra_info`` content."""
        wall_s = time.perf_counter() - self._t0 if self._started else 0.0
        samples = self._sampler.stop() if self._started else []
        rss_end = current_rss_bytes()
        rss_peak = peak_rss_bytes()
        final = footprint(self.workdir)
        records = self._records
        ok = [r for r in records if r.error is None]
        ops_wall_s = sum(r.wall_ns for r in records) / 1e9
        floor = self._floor()
        errors = [{"round": r.index, "error": r.error} for r in records if r.error]
        median_ms = statistics.median(r.wall_ns for r in ok) / 1e6 if ok else None
        metrics = _metrics(
            records,
            self.sandbox,
            final,
            rss_peak,
            rss_end - self._rss_start if self._started else 0,
        )
        return {
            "schema_version": SCHEMA_VERSION,
            "op": self.operation.name,
            "backend": self.operation.backend.describe(),
            "payload": self.operation.payload.describe(),
            "filesystem": self.sandbox.as_dict(),
            "cache": self.cache,
            "cache_note": "cold is meaningless on tmpfs: its page cache is the storage"
            if self.cache == "cold" and self.sandbox.fstype == "tmpfs"
            else "",
            "verify": str(self.verify),
            "repos": len(records),
            "verified": sum(r.verified for r in records),
            "errors": len(errors),
            "error_samples": errors[:20],
            "median_ms": median_ms,
            "metrics": metrics,
            "floor": {
                **floor,
                "ratio": (median_ms / floor["ms_per_repo"])
                if median_ms and floor.get("ms_per_repo")
                else None,
            },
            "harness": {
                "probe_overhead_us_per_round": self.overhead_ns / 1000 if self._started else None,
                "benchmark_wall_s": wall_s,
                "ops_wall_s": ops_wall_s,
                "harness_s_per_round": (wall_s - ops_wall_s) / len(records) if records else None,
                "note": "harness = setup, probes, syncfs, verification and pytest-benchmark's "
                "loop around the timed operations; none of it is inside a timed region",
            },
            "rounds": {
                "unit": {
                    "t_start_s": "s (perf_counter)",
                    "wall_ns": "ns",
                    "cpu_s": "s",
                    "io_write_logical": "B",
                    "io_write_device": "B",
                },
                "t_start_s": [r.t_start_s for r in records],
                "wall_ns": [r.wall_ns for r in records],
                "cpu_s": [_cpu(r) for r in records],
                "io_write_logical": [
                    r.delta.process.write_bytes if r.delta else None for r in records
                ],
                "io_write_device": [
                    r.delta.device.write_bytes if r.delta and r.delta.device else None
                    for r in records
                ],
                "ok": [r.error is None for r in records],
            },
            "sampler": {
                "interval_s": self._sampler.interval_s,
                "units": SAMPLE_UNITS,
                "samples": samples,
            },
        }

    def _floor(self) -> dict[str, Any]:
        """Time writing what the last round left with plain mkdir/open/write/close."""
        tree = self._floor_tree
        if not tree:
            return {"ms_per_repo": None, "reason": "the floor round failed or wrote nothing"}
        dirs = sorted((p for p, e in tree.items() if e.is_dir), key=lambda p: p.count("/"))
        files = [(p, e.data) for p, e in tree.items() if not e.is_dir]
        times_ns = []
        for k in range(FLOOR_ROUNDS):
            base = self.workdir / f"floor-{k}"
            base.mkdir()
            start = time.perf_counter_ns()
            for d in dirs:
                os.mkdir(base / d)
            for rel, data in files:
                fd = os.open(base / rel, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                os.write(fd, data)
                os.close(fd)
            times_ns.append(time.perf_counter_ns() - start)
        return {
            "ms_per_repo": statistics.median(times_ns) / 1e6,
            "rounds": FLOOR_ROUNDS,
            "dirs": len(dirs),
            "files": len(files),
            "bytes": sum(len(d) for _, d in files),
            "method": "mkdir + open/write/close of every directory and file the operation "
            "created or changed in its last round, same sandbox, no fsync",
        }


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().replace("\n", " ")
    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    origin = f" [{Path(where.filename).name}:{where.lineno}]" if where else ""
    return f"{type(exc).__name__}: {text}{origin}"


def _cpu(record: _Round) -> float | None:
    if record.delta is None:
        return None
    return record.delta.process.cpu_user_s + record.delta.process.cpu_sys_s


def _round_entries(workdir: Path, name: str) -> list[Path]:
    return [p for p in workdir.iterdir() if p.name == name or p.name.startswith(name + ".")]


def _snapshot(workdir: Path, name: str) -> dict[str, tuple[int, int, int]]:
    state: dict[str, tuple[int, int, int]] = {}
    for top in _round_entries(workdir, name):
        for path in [top, *top.rglob("*")]:
            st = path.lstat()
            state[path.relative_to(workdir).as_posix()] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return state


def _changed(
    workdir: Path, name: str, before: dict[str, tuple[int, int, int]]
) -> dict[str, _TreeEntry]:
    """Directories and regular files under round ``name`` that are new or changed."""
    after = _snapshot(workdir, name)
    tree: dict[str, _TreeEntry] = {}
    for rel, key in after.items():
        if before.get(rel) == key:
            continue
        path = workdir / rel
        if path.is_symlink():
            continue
        if path.is_dir():
            if rel not in before:
                tree[rel] = _TreeEntry(True)
        elif path.is_file():
            tree[rel] = _TreeEntry(False, path.read_bytes())
    # A changed file inside an existing directory needs that directory in the floor tree.
    for rel in list(tree):
        parent = rel.rsplit("/", 1)[0] if "/" in rel else ""
        while parent and parent not in tree:
            tree[parent] = _TreeEntry(True)
            parent = parent.rsplit("/", 1)[0] if "/" in parent else ""
    return tree


def _metric(unit: str, total: float | None, repos: int, reason: str = "") -> dict[str, Any]:
    if total is None:
        return {"unit": unit, "total": None, "per_repo": None, "reason": reason}
    return {"unit": unit, "total": total, "per_repo": total / repos if repos else None}


def _metrics(
    records: list[_Round], sandbox: SandboxInfo, final: Footprint, rss_peak: int, rss_growth: int
) -> dict[str, dict[str, Any]]:
    n = len(records)
    deltas = [r.delta for r in records if r.delta is not None]

    def total(pick: Callable[[Delta], float]) -> float:
        return sum(pick(d) for d in deltas)

    storage = sandbox.fstype != "tmpfs"
    no_storage = f"{sandbox.fstype} has no backing store: the kernel accounts no storage IO"
    device = sandbox.device_stat_path is not None and all(d.device for d in deltas)
    dev = [d.device for d in deltas if d.device is not None]

    def storage_io(pick: Callable[[Delta], float]) -> dict[str, Any]:
        return _metric("B", total(pick), n) if storage else _metric("B", None, n, no_storage)

    def device_io(unit: str, pick: Callable[[DeviceCounters], int]) -> dict[str, Any]:
        if not device:
            return _metric(unit, None, n, "no block device under this filesystem")
        return _metric(unit, sum(pick(d) for d in dev), n)

    return {
        "wall": _metric("s", total(lambda d: d.wall_ns / 1e9), n),
        "cpu_user": _metric("s", total(lambda d: d.process.cpu_user_s), n),
        "cpu_sys": _metric("s", total(lambda d: d.process.cpu_sys_s), n),
        "io_read_logical": storage_io(lambda d: d.process.read_bytes),
        "io_write_logical": storage_io(lambda d: d.process.write_bytes),
        "io_read_syscall": _metric("B", total(lambda d: d.process.rchar), n),
        "io_write_syscall": _metric("B", total(lambda d: d.process.wchar), n),
        "io_read_device": device_io("B", lambda d: d.read_bytes),
        "io_write_device": device_io("B", lambda d: d.write_bytes),
        "io_read_requests_device": device_io("requests", lambda d: d.read_requests),
        "io_write_requests_device": device_io("requests", lambda d: d.write_requests),
        "footprint_apparent": _metric("B", final.apparent_bytes, n),
        "footprint_allocated": _metric("B", final.allocated_bytes, n),
        "footprint_inodes": _metric("inodes", final.inodes, n),
        "fs_used_delta": _metric("B", total(lambda d: d.fs.used_bytes), n),
        "fs_inodes_delta": _metric("inodes", total(lambda d: d.fs.used_inodes), n),
        "rss_peak": {
            "unit": "B",
            "total": rss_peak,
            "per_repo": None,
            "reason": "a peak is not divided by repositories; see rss_growth",
        },
        "rss_growth": _metric("B", rss_growth, n),
    }
