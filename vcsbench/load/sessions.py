"""Sessions in the load engine: the Locust users, and one session's life.

Runs in the engine's process (Locust patches the standard library for gevent on
import: this module imports it first). Each Locust user is one student machine; its
client's work is a subprocess (svnmucc, git) or a client process of its own
(``local:``), so C users have C sessions in flight at once: gevent waits on their
pipes, it does not run their work. What a session is comes from the run's scenario
(:mod:`vcsbench.load.scenarios`); every session's start and latency are kept raw.
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import gevent  # type: ignore[import-untyped]
import gevent.queue  # type: ignore[import-untyped]

# Locust first: it patches the standard library before anything else imports it.
from locust import User, constant, task

from vcsbench.load.client_base import Client, SessionError
from vcsbench.load.clients import make_client
from vcsbench.load.engine_config import EngineConfig
from vcsbench.load.scenarios import SCENARIOS
from vcsbench.workload.payloads import load_payload

MAX_DETAILS = 20
RECORD_FIELDS = (
    "step", "student", "visit", "t_intended", "t_start", "latency_s", "error", "retries",
    "kind",
)  # fmt: skip
"""Per session: its step, student and visit; when it was due (open loop: its arrival
time; closed loop: when it started), when the client's work started, its latency from
when it was due (the client's own preparation left out), its error kind or None, how
often a refused commit was tried again (shared), and its kind (the scenario's name, or
in a mixed one the kind it took: commit, update, clone)."""


class Shared:
    """What the users of this process share (gevent: one thread, no locks needed)."""

    def __init__(self, config: EngineConfig) -> None:
        self.config = config
        self.scenario = SCENARIOS[config.scenario]
        self.students = config.students
        self.payload = dict(load_payload(config.payload).files)
        self.start = dict(config.start)
        """The files the repositories started with (what a clone must hold)."""
        self.visits = [0] * self.students
        self.busy: set[int] = set()
        self.next = 0
        self.open = False
        self.step = -1
        self.in_flight = 0
        self.started = 0
        self.pool: list[Client] = []
        """Clients free for a user to take (closed loop)."""
        self.clients: list[Client] = []
        """Every client made, to close at the end."""
        self.home = Path()
        self.made = 0
        self.records: dict[str, list[Any]] = {k: [] for k in RECORD_FIELDS}
        self.details: list[str] = []
        # Open loop: the step's schedule, the free clients, how late each arrival left.
        self.rate = 0.0
        self.phase = 0.0
        """A worker's offset into the schedule, in arrivals (its index / the workers)."""
        self.t0 = 0.0
        self.arrivals = 0
        self.gaps: random.Random | None = None
        """Poisson arrivals: the step's seeded source of exponential gaps."""
        self.due = 0.0
        """Poisson arrivals: when the next one is due."""
        self.free: Any = None
        self.lags: list[float] = []
        self.env: Any = None
        self.clones = 0
        self.commits: dict[int, int] = {}
        self.committed: dict[int, int] = {}
        """Mixed: each student's last visit whose commit succeeded (what an update brings)."""
        self.next_update = 0
        self.credit: dict[str, int] = {}
        """Mixed: each kind's credit in the weighted round robin that picks the next."""

    def take(self) -> tuple[int, int] | None:
        """The next student not being served, and the visit this is for them. A Locust
        worker serves its own share of the students (every N-th), so no two workers
        submit for one student at once."""
        stride = self.config.workers or 1
        offset = self.config.worker_index
        mine = range(offset, self.students, stride)
        for _ in range(len(mine)):
            student = mine[self.next % len(mine)]
            self.next += 1
            if student not in self.busy:
                self.busy.add(student)
                self.visits[student] += 1
                return student, self.visits[student]
        return None

    def take_committed(self) -> tuple[int, int] | None:
        """Mixed: a student not being served whose commit succeeded before (this
        process's own students), in turn, and that commit's visit."""
        done = [s for s in self.committed if s not in self.busy]
        if not done:
            return None
        student = done[self.next_update % len(done)]
        self.next_update += 1
        self.busy.add(student)
        return student, self.committed[student]

    def detail(self, text: str) -> None:
        if len(self.details) < MAX_DETAILS:
            self.details.append(text)

    def take_records(self) -> tuple[dict[str, list[Any]], list[str]]:
        """The sessions recorded since the last call, and their first errors' details."""
        records, details = self.records, self.details
        self.records = {k: [] for k in RECORD_FIELDS}
        self.details = []
        return records, details


SHARED: Shared


def serve(client: Client, intended: float | None) -> None:
    """One session on ``client``: take one (the scenario says which), prepare (untimed),
    time it from ``intended`` (open loop) or from its start, check it (untimed), and
    record it."""
    shared = SHARED
    scenario = shared.scenario
    session = scenario.begin(shared, client)
    if session is None:
        gevent.sleep(0.005)
        return
    step = shared.step
    error: str | None = None
    retries = 0
    shared.in_flight += 1
    try:
        t_prepare = time.perf_counter()
        try:
            scenario.prepare_client(client, session)
        except SessionError as exc:  # the client's own side failed: not a session
            scenario.undo(shared, session)
            shared.detail(f"prepare: {exc}")
            return
        shared.started += 1
        failure: Exception | None = None
        t_start = time.perf_counter()
        try:
            retries = scenario.timed(client, session)
        except Exception as exc:  # a client bug is an error in the results too
            failure = exc
        end = time.perf_counter()  # the failure is written down after the clock stops
        if isinstance(failure, SessionError):
            error = failure.kind
            shared.detail(str(failure))
        elif failure is not None:
            error = "client"
            shared.detail(f"client: {type(failure).__name__}: {failure}")
        problems = scenario.check(client, session)
        if problems and error is None:
            error = "verify"
            shared.detail(f"verify: session {session.student}: {'; '.join(problems[:2])}")
        scenario.settled(shared, session, error is None)
    finally:
        shared.in_flight -= 1
        scenario.end(shared, session)
    due = t_start if intended is None else intended
    latency = end - due - (0.0 if intended is None else t_start - t_prepare)
    kind = session.kind or scenario.name
    values = (step, session.student, session.visit, due, t_start, latency, error, retries, kind)
    for key, value in zip(RECORD_FIELDS, values, strict=True):
        shared.records[key].append(value)
    shared.env.events.request.fire(
        request_type=shared.config.path.name,
        name=kind,
        response_time=latency * 1000,
        response_length=0,
        exception=SessionError(error, "") if error else None,
        context={},
    )


class Student(User):
    """Closed loop: one student machine submitting back to back."""

    wait_time = constant(0)

    def on_start(self) -> None:
        shared = SHARED
        if not shared.pool:  # more users than made for (a worker took over a lost one's)
            fill_pool(shared, shared.home, range(shared.made, shared.made + 1))
        self.client_ = shared.pool.pop()
        config = shared.config
        self.pause_ = random.Random(f"think:{config.worker_index}:{self.client_.index}")

    def on_stop(self) -> None:
        SHARED.pool.append(self.client_)

    @task
    def submit(self) -> None:
        if not SHARED.open:
            gevent.sleep(0.005)
            return
        serve(self.client_, None)
        config = SHARED.config
        if config.think_max_s > 0:  # the pause is the user's, not the session's: untimed
            gevent.sleep(self.pause_.uniform(config.think_min_s, config.think_max_s))


class Arrivals(User):
    """Open loop: sessions arrive on a fixed schedule whatever the server does; each takes
    a free client (waiting for one if all are busy, which counts in its latency)."""

    wait_time = constant(0)

    @task
    def dispatch(self) -> None:
        shared = SHARED
        if not shared.open:
            gevent.sleep(0.005)
            return
        if shared.gaps is not None:
            intended = shared.due
        else:
            intended = shared.t0 + (shared.arrivals + shared.phase) / shared.rate
        if intended >= shared.t0 + shared.config.step_seconds:
            # The schedule ends with the step: no arrival is due after it, even if this
            # loop runs late and the step is closed later than its end.
            gevent.sleep(0.005)
            return
        wait = intended - time.perf_counter()
        if wait > 0:
            gevent.sleep(wait)
        if not shared.open:
            return
        shared.arrivals += 1
        if shared.gaps is not None:
            shared.due += shared.gaps.expovariate(shared.rate)
        shared.lags.append(time.perf_counter() - intended)
        gevent.spawn(_arrival, intended)


def open_schedule(shared: Shared) -> None:
    """A step's arrivals begin now (``shared.t0``): evenly spaced, or Poisson -- gaps
    drawn from the exponential distribution at the step's rate, from a source seeded by
    the run's seed, the step and the worker, so a run's arrival times are the same every
    time it is made (each worker's share is a Poisson process of its own; together they
    are one at the whole rate)."""
    config = shared.config
    if config.arrivals != "poisson" or not config.open_loop:
        shared.gaps = None
        return
    shared.gaps = random.Random(f"{config.arrival_seed}:{shared.step}:{config.worker_index}")
    shared.due = shared.t0 + shared.gaps.expovariate(shared.rate)


def _arrival(intended: float) -> None:
    shared = SHARED
    client = shared.free.get()
    try:
        serve(client, intended)
    finally:
        shared.free.put(client)


def fill_pool(shared: Shared, home: Path, indexes: range) -> None:
    """More clients for this process (open loop: also in the queue of free ones)."""
    shared.home = home
    if shared.config.open_loop and shared.free is None:
        shared.free = gevent.queue.Queue()
    for index in indexes:
        client = make_client(shared.config, home / f"client-{index}")
        client.index = index
        shared.pool.append(client)
        shared.clients.append(client)
        shared.made = max(shared.made, index + 1)
        if shared.free is not None:
            shared.free.put(client)


def set_shared(config: EngineConfig, env: Any) -> Shared:
    """This process's sessions' shared state, for a run's configuration."""
    global SHARED
    SHARED = Shared(config)
    SHARED.env = env
    return SHARED


def wait_until(condition: Any, timeout: float) -> bool:
    deadline = time.perf_counter() + timeout
    while not condition():
        if time.perf_counter() > deadline:
            return False
        gevent.sleep(0.01)
    return True
