"""Where a benchmark's rounds run, chosen once: one interface, three places.

- :class:`InProcess`: the benchmark's own process runs the round loop;
- :class:`Workers`, forked: a process forked for each K rounds (``--recycle``: memory a
  library keeps across calls goes with it), from a spawner that lends them the backend's
  verifier processes;
- :class:`Workers`, of another interpreter (a ``version=`` variant's environment, or this
  interpreter for a member of an interleaved group), serving each block of rounds:
  :mod:`vcsbench.bench.envworker`.

Each yields the records of the rounds it is asked for, as they come, and says what it
cost the harness: processes of another interpreter started, and each worker's end (its
RSS, the rounds as its time budget left them). The benchmark keeps the records
(:class:`~vcsbench.bench.rounds.BenchmarkRun`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol

from vcsbench.bench.log import RoundRecord
from vcsbench.bench.loop import RoundLoop
from vcsbench.bench.trouble import SandboxFailed, describe
from vcsbench.bench.workers import EnvironmentSpawner, Spawner, WorkerEnd, WorkerExit
from vcsbench.errors import VcsbenchError
from vcsbench.workload.contained import close_own_group


class Placement(Protocol):
    ends: list[WorkerEnd]
    """Each worker's end: its peak and grown RSS, the rounds as it left them (none in
    process)."""
    described: dict[str, object] | None
    """The backend as a worker of another interpreter described it (its library)."""
    processes: int
    """Worker processes started (0: the rounds ran in the benchmark's process)."""
    block: int
    """The most rounds one request runs (0: as many as are asked)."""

    def rounds(self, first: int, count: int, total: int, warmup: int = 0) -> Iterator[RoundRecord]:
        """The records of rounds ``first`` .. ``first + count - 1`` (of ``total``), as they
        finish; :class:`SandboxFailed` once the sandbox failed every round of a batch.
        ``warmup``: rounds run first and not recorded, where the place runs them."""
        ...

    def total(self) -> int:
        """The benchmark's rounds as the last block's time budget left them."""
        ...

    def stop(self) -> None: ...


class InProcess:
    """The rounds in this process: the loop's own batches."""

    def __init__(self, loop: RoundLoop) -> None:
        self._loop = loop
        self.ends: list[WorkerEnd] = []
        self.described: dict[str, object] | None = None
        self.processes = 0
        self.block = 0

    def rounds(self, first: int, count: int, total: int, warmup: int = 0) -> Iterator[RoundRecord]:
        yield from self._loop.batches(first, count)

    def total(self) -> int:
        return self._loop.rounds

    def stop(self) -> None:
        pass


class Workers:
    """The worker processes of one benchmark, started on first use."""

    def __init__(
        self,
        loop: RoundLoop,
        environment: Path | None,
        spec: Callable[[], dict[str, object]],
        recycle: int,
        lend: Callable[[], Callable[[], None]] | None = None,
    ) -> None:
        """``environment``: the interpreter of a worker of another kind, which makes the
        benchmark from ``spec()`` and stays for blocks until it has run ``recycle`` rounds
        (0: every block); else forked workers of ``recycle`` rounds each. ``lend``: starts
        the helpers forked workers share in turn (:class:`Spawner`)."""
        self._loop = loop
        self._lend = lend
        self._environment = environment
        self._spec = spec
        self._recycle = recycle
        self._spawner: Spawner | EnvironmentSpawner | None = None
        self.ends: list[WorkerEnd] = []
        self.described: dict[str, object] | None = None
        self.processes = 0
        self.block = recycle

    def rounds(self, first: int, count: int, total: int, warmup: int = 0) -> Iterator[RoundRecord]:
        if self._spawner is None:
            self._spawner = (
                Spawner(self._forked, self._lend)
                if self._environment is None
                else EnvironmentSpawner(self._environment, self._spec(), self._recycle)
            )
        spawner = self._spawner
        spawner.start_worker(first, count, total, warmup=warmup)
        end: WorkerEnd | None = None
        exited = ""
        while True:  # on an exception, the loop stops the spawner and the worker with it
            message = spawner.receive()
            if isinstance(message, WorkerEnd):
                end = message
            elif isinstance(message, WorkerExit):
                exited = message.how
                break
            else:
                yield message
        self.described = spawner.described or self.described
        self.processes = spawner.processes
        if end is None or end.failure:
            why = end.failure if end is not None else f"it {exited or 'exited'} without a word"
            raise VcsbenchError(f"the worker for rounds {first}-{first + count - 1} failed: {why}")
        self.ends.append(end)
        if end.stopped:
            raise SandboxFailed

    def total(self) -> int:
        return self.ends[-1].rounds if self.ends else self._loop.rounds

    def stop(self) -> None:
        if self._spawner is not None:
            self._spawner.stop()
            self._spawner = None

    def _forked(self, first: int, count: int, total: int, send: Callable[[object], None]) -> None:
        """In a forked worker: its rounds, each record sent as it finishes, then its RSS;
        it never returns and never runs cleanup of others."""
        code = 1
        try:
            self._loop.block(first, count, total, send)
            code = 0
        except BaseException as exc:
            with contextlib.suppress(BaseException):
                send(WorkerEnd(0, 0, describe(exc)))
        finally:
            with contextlib.suppress(BaseException):  # what it made itself: no exit handlers
                close_own_group()
            os._exit(code)


def placement_for(
    loop: RoundLoop,
    environment: Path | None,
    spec: Callable[[], dict[str, object]],
    lend: Callable[[], Callable[[], None]] | None,
) -> Placement:
    """Where the loop's rounds run: in workers where the plan recycles them (fewer rounds
    a worker than the benchmark's) or another interpreter runs them, else here."""
    plan = loop.plan
    recycle = plan.recycle if 0 < plan.recycle < plan.rounds else 0
    if recycle or environment is not None:
        return Workers(loop, environment, spec, recycle, lend)
    return InProcess(loop)
