"""Where a benchmark's rounds run when not in the benchmark's own process: worker
processes, each the measured process of its rounds.

Two kinds (:mod:`vcsbench.bench.workers`): a process forked for each K rounds
(``--recycle``: memory a library keeps across calls goes with it), or a process of
another interpreter (a ``version=`` variant's environment, or this interpreter for a
member of an interleaved group) serving each block of rounds. :class:`Placement` asks a
worker for the next rounds and yields their records as they come; the round loop keeps
them. What the workers ended with (their RSS, how the time budget left the rounds) is
kept for the result.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from vcsbench.bench.log import RoundRecord
from vcsbench.bench.workers import EnvironmentSpawner, Spawner, WorkerEnd, WorkerExit
from vcsbench.errors import VcsbenchError

Work = Callable[[int, int, int, Callable[[object], None]], None]
"""What a forked worker runs: rounds first .. first + count - 1 of total, each record sent."""


class Placement:
    """The worker processes of one benchmark, started on first use."""

    def __init__(
        self,
        work: Work,
        environment: Path | None,
        spec: Callable[[], dict[str, object]],
        recycle: int,
        lend: Callable[[], Callable[[], None]] | None = None,
    ) -> None:
        """``work``: a forked worker's rounds; ``environment``: the interpreter of a worker
        of another kind instead, which makes the benchmark from ``spec()`` and stays for
        blocks until it has run ``recycle`` rounds (0: every block). ``lend``: starts the
        helpers forked workers share in turn (:class:`Spawner`)."""
        self._work = work
        self._lend = lend
        self._environment = environment
        self._spec = spec
        self._recycle = recycle
        self._spawner: Spawner | EnvironmentSpawner | None = None
        self.ends: list[WorkerEnd] = []
        """Each worker's end: its peak and grown RSS, the rounds as it left them."""
        self.described: dict[str, object] | None = None
        """The backend as a worker of another interpreter described it (its library)."""
        self.processes = 0
        """Processes of another interpreter started."""

    def rounds(self, first: int, count: int, total: int, warmup: int = 0) -> Iterator[RoundRecord]:
        """The records of rounds ``first`` .. ``first + count - 1`` (of ``total``) as a
        worker sends them; its end in :attr:`ends`. ``warmup``: rounds a worker of
        another interpreter runs first, unrecorded."""
        if self._spawner is None:
            self._spawner = (
                Spawner(self._work, self._lend)
                if self._environment is None
                else EnvironmentSpawner(self._environment, self._spec(), self._recycle)
            )
        spawner = self._spawner
        if isinstance(spawner, EnvironmentSpawner):
            spawner.start_worker(first, count, total, warmup=warmup)
        else:
            spawner.start_worker(first, count, total)
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
        if isinstance(spawner, EnvironmentSpawner):
            self.described = spawner.described or self.described
            self.processes = spawner.processes
        if end is None or end.failure:
            why = end.failure if end is not None else f"it {exited or 'exited'} without a word"
            raise VcsbenchError(f"the worker for rounds {first}-{first + count - 1} failed: {why}")
        self.ends.append(end)

    def stop(self) -> None:
        if self._spawner is not None:
            self._spawner.stop()
            self._spawner = None
