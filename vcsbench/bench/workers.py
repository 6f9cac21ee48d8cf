"""Worker processes for long benchmarks: each K rounds run in a fresh forked process,
the one measured, so that memory a library keeps across calls cannot pile up.

Workers are forked by a spawner forked before the benchmark's first round, so none of
them carries the records the benchmark's process keeps meanwhile; every process here
dies with its parent (:func:`vcsbench.process.as_helper`).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass

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

    def __init__(self, work: Callable[[int, int, int, Callable[[object], None]], None]) -> None:
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
                    results_writer.send(WorkerExit(how))
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        requests.close()
        results_writer.close()

    def start_worker(self, first: int, count: int, total: int) -> None:
        """Rounds ``first`` .. ``first + count - 1`` of ``total`` (the benchmark's
        rounds as they stand now: a time budget may have lowered them)."""
        self._requests.send((first, count, total))

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
