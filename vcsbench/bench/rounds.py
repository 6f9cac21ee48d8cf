"""One benchmark: N rounds of one operation, each measured, verified and recorded.

vcsbench owns the round loop and the one clock: ``perf_counter_ns`` around the
operation's ``run`` alone. Everything else -- preparing, dropping caches, reading the
counters, syncing, verifying -- sits outside that region. A round that raises or fails
verification is an error and never a sample.

The parts are apart so each can be tested with a fake operation that does known work:
:class:`BenchmarkRun` drives the rounds and records them (``RoundLog``); footprint and
scratch attribution, the floor (``floor``) and the metrics (``_metrics``) are computed
in ``finish`` from what was recorded.
"""

from __future__ import annotations

import contextlib
import errno
import multiprocessing
import os
import re
import signal
import statistics
import time
import traceback
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from vcsbench.bench import floor
from vcsbench.bench.operations import Operation, RoundPaths
from vcsbench.errors import VcsbenchError
from vcsbench.measure.probes import (
    Delta,
    Footprint,
    Probe,
    Snapshot,
    current_rss_bytes,
    drop_caches,
    footprint,
    peak_rss_bytes,
    peak_rss_reset,
)
from vcsbench.measure.sampler import SAMPLE_UNITS, SystemSampler
from vcsbench.process import STOP_SIGNALS, as_helper
from vcsbench.results.metrics import METRICS
from vcsbench.results.model import (
    BackendInfo,
    Benchmark,
    FilesystemInfo,
    Metric,
    PayloadInfo,
    RoundError,
    Rounds,
)
from vcsbench.sandbox import SandboxInfo

CACHE_STATES = ("warm", "cold")
MAX_ERROR_SAMPLES = 20

Progress = Callable[..., None]
"""Called after each round with (rounds done, rounds in all, seconds since start), and
while an aged sandbox is filled with the same and ``unit="repositories filled in"``."""


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

    def verifies(self, index: int, total: int) -> bool:
        """Whether round ``index`` of ``total`` is verified; no set of rounds is built."""
        k = self.sample
        if k is None or k >= total:
            return True
        if k == 1:
            return index == total - 1
        nearest = round(index * (k - 1) / (total - 1))
        return round(nearest * (total - 1) / (k - 1)) == index

    def __str__(self) -> str:
        return "all" if self.sample is None else f"sample:{self.sample}"


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().replace("\n", " ")
    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    origin = f" [{Path(where.filename).name}:{where.lineno}]" if where else ""
    return f"{type(exc).__name__}: {text}{origin}"


def error_kind(error: str) -> str:
    """An error's kind, for counting alike errors: its text without numbers and origin."""
    text = re.sub(r" \[[^\]]*\]$", "", error)
    text = re.sub(r"r\d{7}|\d+", "N", text)
    return text[:120]


FULL_FREE_BYTES = 1 << 20


def sandbox_trouble(path: Path, spec: str, index: int, error: str = "") -> str:
    """What is wrong with the sandbox holding ``path`` when round ``index`` failed there
    with ``error`` (it turned read-only, it ran out of inodes or of space), in words; ""
    when nothing is. A round that failed for want of space (ENOSPC) may have freed what
    it took, so a sandbox that is nearly out counts as out then."""
    try:
        st = os.statvfs(path)
    except OSError as exc:
        return f"the sandbox {spec} cannot be read at round {index} ({exc.strerror})"
    if st.f_flag & os.ST_RDONLY:
        return (
            f"the sandbox {spec} turned read-only at round {index} (the kernel does that "
            "after an I/O error, or when its journal fails); the rounds before are kept"
        )
    free, inodes = st.f_bfree * st.f_frsize, st.f_ffree
    no_space = "No space left on device" in error
    if st.f_files and (inodes == 0 or (no_space and inodes < max(64, st.f_files // 100))):
        return (
            f"the sandbox {spec} ran out of inodes at round {index} ({free:,} bytes still "
            "free); give it more inodes with mkfs=-N ..., or run fewer repositories"
        )
    if free < max(FULL_FREE_BYTES, st.f_blocks * st.f_frsize // (50 if no_space else 200)):
        return (
            f"the sandbox {spec} filled up at round {index} ({free:,} bytes, {inodes:,} "
            "inodes free); give it more room with size=..., or run fewer repositories"
        )
    if no_space:
        return (
            f"the sandbox {spec} had no space left at round {index} ({free:,} bytes, "
            f"{inodes:,} inodes free); give it more room with size=... or mkfs=-N ..."
        )
    return ""


class SandboxFailed(Exception):
    """Every round of a batch failed, and the sandbox says why (read-only, full): the
    rounds to come would fail the same way, so the benchmark stops, its rounds kept."""


def round_values(delta: Delta) -> dict[str, float | None]:
    """What one round cost, by registry metric name (device ones None without a device)."""
    process, device = delta.process, delta.device
    values: dict[str, float | None] = {
        "cpu": process.cpu_user_s + process.cpu_sys_s,
        "cpu_user": process.cpu_user_s,
        "cpu_sys": process.cpu_sys_s,
        "io_read_logical": process.read_bytes,
        "io_write_logical": process.write_bytes,
        "io_read_syscall": process.rchar,
        "io_write_syscall": process.wchar,
        "io_read_device": device.read_bytes if device else None,
        "io_write_device": device.write_bytes if device else None,
        "io_read_requests_device": device.read_requests if device else None,
        "io_write_requests_device": device.write_requests if device else None,
        "fs_used_delta": delta.fs.used_bytes,
        "fs_inodes_delta": delta.fs.used_inodes,
    }
    return values


SUMMED = tuple(name for name, d in METRICS.items() if d.totalled == "sum" and name != "wall")
FOOTPRINT_METRICS = {
    "footprint_content": "content_bytes",
    "footprint_dirs": "dir_bytes",
    "footprint_apparent": "apparent_bytes",
    "footprint_allocated": "allocated_bytes",
    "footprint_inodes": "inodes",
}
SCRATCH_METRICS = {"scratch_allocated": "allocated_bytes", "scratch_inodes": "inodes"}
NAN = float("nan")
VERIFY_BATCH = 64
"""Rounds run before their verification: a batch's rounds are kept (or lost, if the run
is interrupted inside it) together."""
KEPT_PER_ROUND = tuple(name for name, d in METRICS.items() if d.round_key and name != "wall")


@dataclass
class RoundRecord:
    """What one round left: its timing, counters and outcome, sent whole by a worker."""

    t_start_s: float
    wall_ns: int
    values: dict[str, float | None]
    error: str | None = None
    verified: bool = False
    diagnosis: str = ""
    floor_tree: dict[str, floor.TreeEntry] | None = None


@dataclass(frozen=True)
class WorkerExit:
    """The spawner's word that a worker process ended (after everything it sent)."""

    how: str


class Spawner:
    """A process forked from the benchmark's before its first round, which forks each
    worker on request and reports its end. Workers forked from it carry none of the
    records the benchmark's process keeps meanwhile.

    Every message reaches the benchmark's process on one pipe, in order: a worker's
    records and its :class:`WorkerEnd`, then the spawner's :class:`WorkerExit` for it
    (written after the worker is reaped, so nothing of the worker's can follow it)."""

    def __init__(self, work: Callable[[int, int, Callable[[object], None]], None]) -> None:
        context = multiprocessing.get_context("fork")
        self._results, results_writer = context.Pipe(duplex=False)
        requests, self._requests = context.Pipe(duplex=False)
        self.worker_pid = 0
        self.pid = os.fork()
        if self.pid == 0:  # the spawner: serves requests until the benchmark closes its pipe
            code = 0
            try:
                as_helper()
                self._results.close()
                self._requests.close()
                while True:
                    try:
                        first, count = requests.recv()
                    except EOFError:
                        break
                    pid = os.fork()
                    if pid == 0:
                        as_helper()  # dies with the spawner, as the spawner with the run
                        requests.close()
                        work(first, count, results_writer.send)  # never returns
                    results_writer.send(("started", pid))
                    _, status = os.waitpid(pid, 0)
                    how = (
                        f"exited with {os.waitstatus_to_exitcode(status)}"
                        if os.WIFEXITED(status)
                        else f"was killed by signal {os.WTERMSIG(status)}"
                    )
                    results_writer.send(WorkerExit(how))
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        requests.close()
        results_writer.close()

    def start_worker(self, first: int, count: int) -> None:
        self._requests.send((first, count))

    def receive(self) -> RoundRecord | WorkerEnd | WorkerExit:
        """The next message: a round's record, a :class:`WorkerEnd` or a
        :class:`WorkerExit`; a spawner that died is an error."""
        while True:
            try:
                message = self._results.recv()
            except EOFError:
                raise VcsbenchError("the worker spawner ended unexpectedly") from None
            if isinstance(message, tuple) and message[:1] == ("started",):
                self.worker_pid = message[1]
                continue
            if isinstance(message, WorkerExit):
                self.worker_pid = 0
            assert isinstance(message, RoundRecord | WorkerEnd | WorkerExit)
            return message

    def stop(self) -> None:
        """End the spawner (and a worker still running); reap the spawner."""
        if self.worker_pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.worker_pid, signal.SIGKILL)
        self._requests.close()  # an idle spawner reads the end of its requests and exits
        with contextlib.suppress(ProcessLookupError, ChildProcessError):
            os.kill(self.pid, signal.SIGKILL)  # one waiting for a worker that is gone
            os.waitpid(self.pid, 0)
        self._results.close()


@dataclass(frozen=True)
class WorkerEnd:
    """A worker's last message: its peak and grown RSS, or why it stopped."""

    peak_rss: int
    rss_growth: int
    failure: str = ""
    stopped: bool = False
    """The sandbox failed every round of a batch: no more rounds are to be run."""


def _plain(value: float) -> float | int | None:
    """A kept value as the result file writes it: None for NaN, whole numbers as ints."""
    if value != value:  # NaN: the round had no such value
        return None
    return int(value) if value.is_integer() else value


class RoundLog:
    """Every round's record in typed arrays (8 bytes a value, not a Python object and a
    list slot each); running totals over successful rounds. :meth:`to_rounds` gives the
    result model's lists, once, at the end."""

    def __init__(self) -> None:
        self.t_start_s = array("d")
        self.wall_ns = array("q")
        self.ok = array("b")
        self.values = {name: array("d") for name in KEPT_PER_ROUND}
        self.totals: dict[str, float] = dict.fromkeys(SUMMED, 0.0)
        self.errors: list[RoundError] = []
        self.error_count = 0
        self.error_kinds: dict[str, int] = {}
        self.verified = 0
        self.ops_wall_ns = 0
        self.ok_count = 0

    def __len__(self) -> int:
        return len(self.wall_ns)

    def add(
        self, t_start_s: float, wall_ns: int, values: dict[str, float | None], error: str | None
    ) -> None:
        index = len(self.wall_ns)
        ok = error is None
        self.t_start_s.append(t_start_s)
        self.wall_ns.append(wall_ns)
        self.ok.append(ok)
        for name, kept in self.values.items():
            value = values.get(name)
            kept.append(NAN if value is None else value)
        self.ops_wall_ns += wall_ns
        if ok:
            self.ok_count += 1
            for name in SUMMED:
                value = values.get(name)
                if value is not None:
                    self.totals[name] += value
        else:
            self.error_count += 1
            kind = error_kind(error or "")
            self.error_kinds[kind] = self.error_kinds.get(kind, 0) + 1
            if len(self.errors) < MAX_ERROR_SAMPLES:
                self.errors.append(RoundError(index, error or ""))

    def ok_wall_s(self) -> list[float]:
        return [w / 1e9 for w, good in zip(self.wall_ns, self.ok, strict=True) if good]

    def to_rounds(self) -> Rounds:
        return Rounds(
            t_start_s=self.t_start_s.tolist(),
            wall_ns=self.wall_ns.tolist(),
            ok=[bool(x) for x in self.ok],
            values={name: [_plain(v) for v in kept] for name, kept in self.values.items()},
        )


@dataclass
class BenchmarkRun:
    """Drives and records the rounds of one (backend, op, payload, sandbox) benchmark."""

    operation: Operation
    sandbox: SandboxInfo
    workdir: Path
    rounds: int
    cache: str = "warm"
    verify: VerifyPolicy = field(default_factory=VerifyPolicy)
    progress: Progress | None = None
    name: str = ""
    age: int = 0
    """Repositories to fill the sandbox with before the first round (untimed)."""
    layout: str = "flat"
    recycle: int = 0
    """Rounds per worker process (a new one for each K rounds); 0, or at least the
    benchmark's rounds: all in this one."""

    def __post_init__(self) -> None:
        if self.cache not in CACHE_STATES:
            raise VcsbenchError(f"cache {self.cache!r} is not one of {', '.join(CACHE_STATES)}")
        st = os.statvfs(self.workdir.parent)
        free_inodes = st.f_favail
        # btrfs (and others with dynamic inodes) report no inode table: nothing to check.
        wanted = self.rounds + self.age
        if st.f_files and wanted > free_inodes:
            asked = f"--repos {self.rounds:,}" + (f" and --age {self.age:,}" if self.age else "")
            raise VcsbenchError(
                f"{asked} cannot fit in the {self.sandbox.spec} sandbox: it has "
                f"{free_inodes:,} free inodes and every repository takes at least one; use "
                "fewer repositories or a larger sandbox (size=..., mkfs=-N ...)"
            )
        self.workdir.mkdir(parents=True, exist_ok=False)
        for container in ("repos", "checkouts", "scratch"):
            (self.workdir / container).mkdir()
        self.probe = Probe(self.workdir, self.sandbox.device_stat_path)
        self.log = RoundLog()
        self._sampler = SystemSampler(self.sandbox.device_stat_path)
        self._floor_tree: dict[str, floor.TreeEntry] = {}
        self._started = False
        self.diagnosis = ""
        """What the failures have in common when it is known (the sandbox filled up)."""
        self._overhead_ns = 0
        self._rss_start = 0
        self._t0 = 0.0
        self.age_info: dict[str, object] = {}
        self._workers: list[WorkerEnd] = []
        self._spawner: Spawner | None = None

    def paths(self, index: int) -> RoundPaths:
        """Round ``index``'s paths: after the ``age`` repositories filled in first."""
        return RoundPaths.of(self.workdir, self.age + index, self.layout)

    # -- the rounds ---------------------------------------------------------------------

    def run_all(self) -> None:
        if not self._started:
            self._start()
        try:
            while len(self.log) < self.rounds:
                left = self.rounds - len(self.log)
                if 0 < self.recycle < self.rounds:
                    self._run_worker(min(self.recycle, left))
                else:
                    for record in self._batches(len(self.log), left):
                        self._accept(record)
        except SandboxFailed:
            pass  # stopped: the diagnosis says why, and the rounds not run make it partial
        finally:
            if self._spawner is not None:
                self._spawner.stop()
                self._spawner = None

    def run_round(self) -> None:
        """One round in this process: run it, verify it and record it."""
        if not self._started:
            self._start()
        for record in self._rounds(len(self.log), 1):
            self._accept(record)

    def _batches(self, first: int, count: int) -> Iterator[RoundRecord]:
        """Rounds ``first`` .. ``first + count - 1``, verified in batches of
        ``VERIFY_BATCH``; each batch's records once it is verified."""
        for start in range(first, first + count, VERIFY_BATCH):
            records = self._rounds(start, min(VERIFY_BATCH, first + count - start))
            yield from records
            if all(r.error for r in records) and any(r.diagnosis for r in records):
                raise SandboxFailed

    def _rounds(self, first: int, count: int) -> list[RoundRecord]:
        """Rounds ``first`` .. ``first + count - 1``, then their verification, together
        (never while a round is timed): a backend whose reader takes several
        repositories at once verifies them in parallel across cores."""
        done = []
        for index in range(first, first + count):
            paths = self.paths(index)
            done.append((index, paths, self._round(index, paths)))
        wanted = [
            (paths, record)
            for index, paths, record in done
            if record.error is None and self.verify.verifies(index, self.rounds)
        ]
        if wanted:
            try:
                found = self.operation.verify_many([paths for paths, _ in wanted])
            except Exception as exc:  # the reader failed: those rounds are not verified
                found = [[f"the verifier failed: {_describe(exc)}"]] * len(wanted)
            for (_, record), problems in zip(wanted, found, strict=True):
                record.verified = True
                if problems:
                    more = f" (+{len(problems) - 3} more)" if len(problems) > 3 else ""
                    record.error = "verify: " + "; ".join(problems[:3]) + more
        for index, _, record in done:
            if record.error is not None and not self.diagnosis:
                record.diagnosis = sandbox_trouble(
                    self.workdir, self.sandbox.spec, index, record.error
                )
                if record.diagnosis:
                    break
        return [record for _, _, record in done]

    def _round(self, index: int, paths: RoundPaths) -> RoundRecord:
        """One round: prepare, time the operation alone, read counters (verified by
        :meth:`_rounds` afterwards)."""
        error: str | None = None
        try:
            paths.scratch.mkdir()
            if self.layout != "flat":  # the fan-out directories exist on a host already
                paths.repo.parent.mkdir(parents=True, exist_ok=True)
            self.operation.prepare(paths)
        except Exception as exc:  # a sandbox that fails (read-only, full) fails the round
            error = f"prepare: {_describe(exc)}"
        is_floor_round = index == self.rounds - 1 and error is None
        roots = self.operation.measured(paths)
        floor_before = floor.snapshot(roots, self.workdir) if is_floor_round else {}
        if self.cache == "cold":
            drop_caches()
        before: Snapshot = self.probe.before()
        t_start_s = time.perf_counter()
        wall_ns = 0
        if error is None:
            start = time.perf_counter_ns()
            try:
                self.operation.run(paths)
            except Exception as exc:
                error = _describe(exc)
            wall_ns = time.perf_counter_ns() - start
        delta = Probe.delta(before, self.probe.after(), wall_ns)
        record = RoundRecord(t_start_s, wall_ns, round_values(delta))
        if is_floor_round and error is None:
            with contextlib.suppress(OSError):  # the floor is then missing, with its reason
                record.floor_tree = floor.changed(roots, self.workdir, floor_before)
        try:  # an empty scratch directory goes; one a backend wrote in stays, to be measured
            os.rmdir(paths.scratch)
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOENT) and error is None:
                error = f"scratch: {_describe(exc)}"
        record.error = error
        return record

    def _accept(self, record: RoundRecord) -> None:
        """Keep a finished round's record (from this process or a worker). The stop
        signals wait while it is written down: a round is in the log whole or not at all
        (an interrupted run keeps its log, and every per-round array the same length)."""
        held = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            self.log.add(record.t_start_s, record.wall_ns, record.values, record.error)
            self.log.verified += record.verified
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        if record.diagnosis and not self.diagnosis:
            self.diagnosis = record.diagnosis
        if record.floor_tree is not None:
            self._floor_tree = record.floor_tree
        if self.progress is not None:
            self.progress(len(self.log), self.rounds, time.perf_counter() - self._t0)

    def _worker_rounds(self, first: int, count: int, send: Callable[[object], None]) -> None:
        """In a worker process: rounds ``first`` .. ``first + count - 1``, each record sent
        as it finishes, then its RSS; it never returns and never runs cleanup of others."""
        code = 1
        try:
            peak_rss_reset()
            start_rss = current_rss_bytes()
            stopped = False
            try:
                for record in self._batches(first, count):
                    send(record)
            except SandboxFailed:
                stopped = True
            send(WorkerEnd(peak_rss_bytes(), current_rss_bytes() - start_rss, stopped=stopped))
            code = 0
        except BaseException as exc:
            with contextlib.suppress(BaseException):
                send(WorkerEnd(0, 0, _describe(exc)))
        finally:
            os._exit(code)

    def _run_worker(self, count: int) -> None:
        """The next ``count`` rounds in a worker process, which sends each round's record
        as it finishes and exits: memory the backend's library keeps across calls goes
        with it. The worker is the measured process: /proc/self/io and getrusage are its
        own, so every counter stays per round and exact. Workers are forked by a spawner
        forked before the first round, so none of them carries the records of the rounds
        before it: a worker's memory is the same at round 100,000 as at round 1."""
        first = len(self.log)
        if self._spawner is None:
            self._spawner = Spawner(self._worker_rounds)
        spawner = self._spawner
        spawner.start_worker(first, count)
        end: WorkerEnd | None = None
        exited = ""
        while True:  # on an exception, run_all stops the spawner and the worker with it
            message = spawner.receive()
            if isinstance(message, WorkerEnd):
                end = message
            elif isinstance(message, WorkerExit):
                exited = message.how
                break
            else:
                self._accept(message)
        if end is None or end.failure:
            why = end.failure if end is not None else f"it {exited or 'exited'} without a word"
            raise VcsbenchError(f"the worker for rounds {first}-{first + count - 1} failed: {why}")
        self._workers.append(end)
        if end.stopped:
            raise SandboxFailed

    def _start(self) -> None:
        if self.age:
            from vcsbench.bench.age import fill

            self.age_info = fill(
                self.operation.backend,
                self.workdir,
                self.age,
                self.layout,
                self.progress,
                sandbox=self.sandbox.spec,
            )
        self._started = True
        self._overhead_ns = self.probe.overhead_ns(pairs=10)
        peak_rss_reset()
        self._rss_start = current_rss_bytes()
        self._sampler.start()
        self._t0 = time.perf_counter()

    @property
    def failed_rounds(self) -> int:
        return self.log.error_count

    def ok_wall_s(self) -> list[float]:
        return self.log.ok_wall_s()

    # -- after the last round -----------------------------------------------------------

    def finish(self, describe_backend: dict[str, object]) -> Benchmark:
        """Stop sampling; measure footprint, scratch and floor; return the benchmark."""
        wall_s = time.perf_counter() - self._t0 if self._started else 0.0
        samples = self._sampler.stop() if self._started else []
        self.probe.close()
        rss_end = current_rss_bytes()
        rss_peak = peak_rss_bytes()
        rss_growth = rss_end - self._rss_start
        if self._workers:  # the measured processes were the workers
            rss_peak = max(w.peak_rss for w in self._workers)
            rss_growth = max(w.rss_growth for w in self._workers)
        # A harness failure here (a scan, the floor) costs the figure it was for, never
        # the timed, verified rounds: the figure is marked missing with the reason.
        result: Footprint | str
        scratch: Footprint | str
        scan_start = time.perf_counter()
        try:
            if self.age:  # the rounds' own paths, not the repositories filled in before
                measured = [p for i in range(len(self.log)) for p in self._measured(i)]
                result = footprint(*measured)
            else:
                containers = (self.workdir / c for c in self.operation.containers)
                result = footprint(*containers, roots=False)
        except OSError as exc:
            result = f"the footprint scan failed: {_describe(exc)}"
        try:
            scratch = footprint(self.workdir / "scratch", roots=False)
        except OSError as exc:
            scratch = f"the scratch scan failed: {_describe(exc)}"
        footprint_s = time.perf_counter() - scan_start
        log = self.log
        ok_walls = log.ok_wall_s()
        median_ms = statistics.median(ok_walls) * 1000 if ok_walls else None
        try:
            floor_figures = floor.measure(self._floor_tree, self.workdir, median_ms)
        except OSError as exc:
            floor_figures = {
                "ms_per_repo": None,
                "ratio": None,
                "reason": f"the floor could not be measured: {_describe(exc)}",
            }
        n_rounds = len(log)
        return Benchmark(
            name=self.name,
            backend=BackendInfo.from_json(describe_backend, "backend"),
            op=self.operation.label,
            payload=PayloadInfo.from_json(self.operation.payload.describe(), "payload"),
            filesystem=FilesystemInfo.from_json(self.sandbox.as_dict(), "filesystem"),
            repos=n_rounds,
            rounds_asked=self.rounds,
            age=self.age,
            layout=self.layout,
            errors=log.error_count,
            verified=log.verified,
            metrics=self._metrics(result, scratch, rss_peak, rss_growth),
            rounds=log.to_rounds(),
            cache=self.cache,
            cache_note="cold is meaningless on tmpfs: its page cache is the storage"
            if self.cache == "cold" and self.sandbox.fstype == "tmpfs"
            else "",
            verify=str(self.verify),
            error_samples=list(log.errors),
            error_kinds=dict(log.error_kinds),
            diagnosis=self.diagnosis,
            floor=floor_figures,
            harness={
                "probe_overhead_us_per_round": self._overhead_ns / 1000 if self._started else None,
                "benchmark_wall_s": wall_s,
                "ops_wall_s": log.ops_wall_ns / 1e9,
                "footprint_s": footprint_s,
                "harness_s_per_round": (wall_s - log.ops_wall_ns / 1e9) / n_rounds
                if n_rounds
                else None,
                "sampler": "a separate process (python -m vcsbench.measure.sampler)",
                **({"age": self.age_info} if self.age_info else {}),
                "workers": {
                    "rounds_per_worker": self.recycle if self._workers else None,
                    "workers": len(self._workers),
                    "note": "each worker a forked process that ran its rounds and exited; "
                    "rss_peak and rss_growth are the largest of the workers'"
                    if self._workers
                    else "every round in the benchmark's own process",
                },
                "note": "harness = prepare, probes, syncfs and verification around the timed "
                "operations; none of it is inside a timed region",
            },
            sampler={
                "interval_s": self._sampler.interval_s,
                "units": SAMPLE_UNITS,
                "samples": samples,
            },
        )

    def _measured(self, index: int) -> list[Path]:
        return self.operation.measured(self.paths(index))

    def _metrics(
        self, result: Footprint | str, scratch: Footprint | str, rss_peak: int, rss_growth: int
    ) -> dict[str, Metric]:
        log, info = self.log, self.sandbox
        ok = log.ok_count
        storage = info.fstype != "tmpfs"
        no_storage = f"{info.fstype} has no backing store: the kernel accounts no storage IO"
        no_device = info.device_note or "no block device under this filesystem"
        out: dict[str, Metric] = {}

        def put(name: str, total: float | None, reason: str = "") -> None:
            d = METRICS[name]
            if total is None:
                out[name] = Metric(d.unit, None, None, reason)
                return
            per_repo = total / ok if ok and d.per_repo else None
            out[name] = Metric(d.unit, total, per_repo, "" if d.per_repo else reason)

        if not ok:
            for name in METRICS:
                out[name] = Metric.missing(name, "every round failed")
            return out
        put("wall", sum(log.ok_wall_s()))
        for name in SUMMED:
            total: float | None = log.totals[name]
            reason = ""
            if name in ("io_read_logical", "io_write_logical") and not storage:
                total, reason = None, no_storage
            elif name.endswith("_device") and info.device_stat_path is None:
                total, reason = None, no_device
            put(name, total, reason)
        for name, attribute in FOOTPRINT_METRICS.items():
            if isinstance(result, str):
                put(name, None, result)
            else:
                put(name, getattr(result, attribute))
        for name, attribute in SCRATCH_METRICS.items():
            if isinstance(scratch, str):
                put(name, None, scratch)
            else:
                put(name, getattr(scratch, attribute))
        put("rss_peak", rss_peak, "a peak is not divided by repositories; see rss_growth")
        put("rss_growth", rss_growth)
        return out
