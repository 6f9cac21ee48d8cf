"""Worker processes for long benchmarks: each K rounds run in a fresh forked process,
the one measured, so that memory a library keeps across calls cannot pile up.

Workers are forked by a spawner forked before the benchmark's first round, so none of
them carries the records the benchmark's process keeps meanwhile; every process here
dies with its parent (:func:`vcsbench.process.as_helper`).
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import json
import multiprocessing
import os
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vcsbench.bench import floor
from vcsbench.bench.log import RoundRecord
from vcsbench.errors import VcsbenchError
from vcsbench.process import as_helper


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

    def __init__(
        self,
        work: Callable[[int, int, int, Callable[[object], None]], None],
        lend: Callable[[], Callable[[], None]] | None = None,
    ) -> None:
        """``lend``: called in the spawner before its first worker, to start there the
        helper processes every worker uses in turn (the backend's readers); it returns
        what ends them. After a worker that did not exit cleanly (it may have left answers
        owed) they are started again."""
        context = multiprocessing.get_context("fork")
        self._results, results_writer = context.Pipe(duplex=False)
        requests, self._requests = context.Pipe(duplex=False)
        self.worker_pid = 0
        self.pid = os.fork()
        if self.pid == 0:  # the spawner: serves requests until the benchmark closes its pipe
            code = 0
            end_lent: Callable[[], None] = lambda: None  # noqa: E731
            try:
                as_helper()
                self._results.close()
                self._requests.close()
                if lend is not None:
                    end_lent = lend()
                while True:
                    try:
                        first, count, total = requests.recv()
                    except EOFError:
                        break
                    pid = os.fork()
                    if pid == 0:
                        as_helper()  # dies with the spawner, as the spawner with the run
                        requests.close()
                        work(first, count, total, results_writer.send)  # never returns
                    results_writer.send(("started", pid))
                    _, status = os.waitpid(pid, 0)
                    how = (
                        f"exited with {os.waitstatus_to_exitcode(status)}"
                        if os.WIFEXITED(status)
                        else f"was killed by signal {os.WTERMSIG(status)}"
                    )
                    if lend is not None and how != "exited with 0":
                        end_lent = lend()  # new ones: none owes the old worker an answer
                    results_writer.send(WorkerExit(how))
            except BaseException:
                code = 1
            finally:
                with contextlib.suppress(BaseException):
                    end_lent()
                os._exit(code)
        requests.close()
        results_writer.close()
        self.processes = 0
        """Workers forked so far."""
        self.described: dict[str, object] | None = None
        """Forked workers are this interpreter's: its description stands."""

    def start_worker(self, first: int, count: int, total: int, warmup: int = 0) -> None:
        """Rounds ``first`` .. ``first + count - 1`` of ``total`` (the benchmark's
        rounds as they stand now: a time budget may have lowered them). ``warmup``: run
        by the benchmark's process before it forks, so none here (its workers inherit
        what it warmed)."""
        self._requests.send((first, count, total))
        self.processes += 1

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
    rounds: int = 0
    """The benchmark's rounds as the worker left them (a time budget lowers them)."""


def encode(message: object) -> dict[str, object]:
    """A worker's message as JSON data (an environment's worker sends it on a pipe)."""
    if isinstance(message, RoundRecord):
        return {
            "record": {
                "t_start_s": message.t_start_s,
                "wall_ns": message.wall_ns,
                "values": {
                    k: (None if v is None or v != v else v) for k, v in message.values.items()
                },
                "error": message.error,
                "verified": message.verified,
                "diagnosis": message.diagnosis,
                "held_bytes": message.held_bytes,
                "canary_ns": message.canary_ns,
                "floor_tree": None
                if message.floor_tree is None
                else {
                    rel: [entry.is_dir, base64.b64encode(entry.data).decode()]
                    for rel, entry in message.floor_tree.items()
                },
            }
        }
    if isinstance(message, WorkerEnd):
        return {"end": dataclasses.asdict(message)}
    raise TypeError(f"no encoding for {type(message).__name__}")


def decode(data: object) -> RoundRecord | WorkerEnd:
    """The inverse of :func:`encode`, checked field by field (one bad line is an error)."""
    if not isinstance(data, dict) or len(data) != 1:
        raise VcsbenchError(f"an environment's worker sent {str(data)[:80]!r}")
    if "end" in data:
        end = data["end"]
        return WorkerEnd(
            peak_rss=int(end["peak_rss"]),
            rss_growth=int(end["rss_growth"]),
            failure=str(end["failure"]),
            stopped=bool(end["stopped"]),
            rounds=int(end["rounds"]),
        )
    r = data["record"]
    tree = r["floor_tree"]
    return RoundRecord(
        t_start_s=float(r["t_start_s"]),
        wall_ns=int(r["wall_ns"]),
        values={str(k): (float("nan") if v is None else float(v)) for k, v in r["values"].items()},
        error=None if r["error"] is None else str(r["error"]),
        verified=bool(r["verified"]),
        diagnosis=str(r["diagnosis"]),
        held_bytes=int(r["held_bytes"]),
        canary_ns=None
        if r.get("canary_ns") is None
        else (int(r["canary_ns"][0]), int(r["canary_ns"][1])),
        floor_tree=None
        if tree is None
        else {
            str(rel): floor.TreeEntry(bool(d), base64.b64decode(b)) for rel, (d, b) in tree.items()
        },
    )


class EnvironmentSpawner:
    """Workers in another environment (a ``version=`` variant): processes of that
    environment's interpreter running ``vcsbench.bench.envworker``, which makes the
    backend and operation from ``spec`` and runs the rounds each request asks for,
    sending each record as a JSON line; the same interface as :class:`Spawner`. A worker
    serves the benchmark's requests (its blocks, when variants are interleaved) until it
    has run ``recycle`` rounds, then a fresh process serves the next (--recycle; 0: one
    process for every request): an interpreter's start costs about 0.3 s, a block of
    100 rounds tens of milliseconds."""

    def __init__(self, python: Path, spec: dict[str, object], recycle: int = 0) -> None:
        self.python = python
        self.spec = spec
        self.recycle = recycle
        self._rounds = 0
        """Rounds asked of the current process."""
        self._last = False
        """The current process's last request: it exits once it has served it."""
        self.worker_pid = 0
        self.processes = 0
        self.described: dict[str, object] | None = None
        """The backend as the environment's process describes it (its library versions)."""
        self._proc: subprocess.Popen[str] | None = None
        self._served = False

    def start_worker(self, first: int, count: int, total: int, warmup: int = 0) -> None:
        if self._proc is None:
            self._proc = subprocess.Popen(
                [str(self.python), "-m", "vcsbench.bench.envworker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            self.processes += 1
            self.worker_pid = self._proc.pid
            self._rounds = 0
            assert self._proc.stdin is not None
            self._proc.stdin.write(json.dumps(self.spec) + "\n")
        assert self._proc.stdin is not None
        request = {"first": first, "count": count, "total": total, "warmup": warmup}
        self._proc.stdin.write(json.dumps(request) + "\n")
        self._proc.stdin.flush()
        self._rounds += count
        self._last = 0 < self.recycle <= self._rounds
        if self._last:
            self._proc.stdin.close()
        self._served = False

    def receive(self) -> RoundRecord | WorkerEnd | WorkerExit:
        assert self._proc is not None and self._proc.stdout is not None
        if self._served:  # its block is done: the process goes on, or is reaped
            self._served = False
            if not self._last:
                return WorkerExit("served its block")
            return self._reaped()
        while True:
            line = self._proc.stdout.readline()
            if not line:
                return self._reaped()
            data = json.loads(line)
            if isinstance(data, dict) and "backend" in data:
                self.described = data["backend"]
                continue
            message = decode(data)
            if isinstance(message, WorkerEnd):
                self._served = True
            return message

    def _reaped(self) -> WorkerExit:
        """Wait for the worker (its requests closed, it exits), close its
        pipes, and say how it ended."""
        assert self._proc is not None
        if self._proc.stdin is not None and not self._proc.stdin.closed:
            with contextlib.suppress(OSError):
                self._proc.stdin.close()
        try:
            code = self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            code = self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        self._proc = None
        self.worker_pid = 0
        return WorkerExit(f"exited with {code}" if code >= 0 else f"was killed by signal {-code}")

    def stop(self) -> None:
        if self._proc is not None:
            self._reaped()
