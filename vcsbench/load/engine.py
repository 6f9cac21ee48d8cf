"""The load engine: Locust, headless, in a process of its own, driven one step at a time.

``python -m vcsbench.load.engine --run OUT [--master N HOST PORT]`` (OUT: the result
file it works for, so that ``ps`` says which run it is) reads requests from its
standard input and answers on its standard output, one JSON line each (everything else
it or Locust prints goes to its standard error):

- ``{"config": {...}}`` -> ``{"ready": {"client_pids": [...], "engine": {...}}}``: the
  clients are made and warm;
- ``{"step": {"index": i, "level": L}}`` -> ``{"done": {...}}``: the step ran (closed
  loop: L clients back to back; open loop: L arrivals a second) until its time or
  operation count was up and its last session in flight ended; the answer holds its
  sessions' raw records and the counters read around it (device, the server's CPU and
  writes, the clients' CPU);
- ``{"quit": true}`` -> ``{"bye": true}``; an end of input is a quit too.

The run's process owns the loop over steps (:mod:`vcsbench.load.run`): it verifies,
reduces and writes each step durably before it asks for the next, so a run killed at
any moment keeps every step that finished. Two drivers run a step: :class:`LocalDriver`
(every user in this process) and :class:`MasterDriver` (a Locust master whose workers,
here or on other machines, run the users and send each step's records back).
``--worker HOST PORT [HOME]`` is such a worker.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import gevent  # type: ignore[import-untyped]

# Locust first: it patches the standard library before anything else imports it.
import locust
from gevent.fileobject import FileObjectPosix  # type: ignore[import-untyped]
from locust.env import Environment

from vcsbench.load import live as live_view
from vcsbench.load import sessions
from vcsbench.load.counters import answer, step_end, step_start, step_writers
from vcsbench.load.engine_args import EngineArgs
from vcsbench.load.engine_config import EngineConfig
from vcsbench.load.sessions import RECORD_FIELDS, Arrivals, Student, fill_pool, wait_until
from vcsbench.measure.processes import (
    own_cpu_s,
)
from vcsbench.sandbox.removal import remove_tree
from vcsbench.sandbox.state import MARKER

DRAIN_S = 300.0
"""The longest a step waits for its sessions in flight after its time is up."""
WORKER_TIMEOUT_S = 60.0
ENGINE = {"locust": locust.__version__, "gevent": gevent.__version__}


Live = Callable[[dict[str, Any]], None]
"""Where a step's live messages go (:mod:`vcsbench.load.live`)."""


class Driver(Protocol):
    def ready(self) -> dict[str, Any]: ...

    def step(self, index: int, level: float, live: Live) -> dict[str, Any]: ...

    def close(self) -> None: ...


class LocalDriver:
    """Every user in this process."""

    def __init__(self, config: EngineConfig) -> None:
        self.config = config
        self.open_loop = config.open_loop
        env = Environment(
            user_classes=[Arrivals if self.open_loop else Student], catch_exceptions=False
        )
        self.shared = sessions.set_shared(config, env)
        self.runner = env.create_local_runner()
        self.home = Path(config.client_home)  # made and recorded by the run
        fill_pool(self.shared, self.home, range(config.pool))
        # The server's work: the server's session, or the local clients' processes.
        self.server_pids = [c.pid for c in self.shared.clients if hasattr(c, "pid")]

    def ready(self) -> dict[str, Any]:
        return {"client_pids": self.server_pids, "engine": ENGINE}

    def step(self, index: int, level: float, live: Live) -> dict[str, Any]:
        shared, config = self.shared, self.config
        shared.step = index
        users = 1 if self.open_loop else int(level)
        self.runner.start(users, spawn_rate=min(users, 100))
        wait_until(lambda: self.runner.user_count >= users, WORKER_TIMEOUT_S)
        gevent.sleep(0.05)  # every user's on_start has run
        snap, before = step_start(config, self.server_pids)
        shared.started = shared.arrivals = 0
        shared.rate = float(level)
        shared.lags = []
        shared.t0 = time.perf_counter()
        sessions.open_schedule(shared)
        shared.open = True
        deadline = shared.t0 + config.step_seconds
        target = config.step_ops or 0
        due = shared.t0 + live_view.EVERY_S
        while (now := time.perf_counter()) < deadline and not (target and shared.started >= target):
            if now >= due:
                due += live_view.EVERY_S
                records = shared.records
                failed = sum(e is not None for e in records["error"])
                p50, p95 = live_view.percentiles([x * 1000 for x in records["latency_s"]])
                done, elapsed = len(records["latency_s"]), now - shared.t0
                live(
                    live_view.figures(
                        index, level, elapsed, config.step_seconds, done, failed, p50, p95
                    )
                )
            gevent.sleep(0.01)
        shared.open = False
        wait_until(lambda: not shared.in_flight, DRAIN_S)
        after, server = step_end(config, self.server_pids)
        records, details = shared.take_records()
        step = answer(level, before, after, records, details)
        step["writers"] = step_writers(config, snap, before, after, server)
        if self.open_loop:
            step["arrivals"] = shared.arrivals
            step["generator_lag_s"] = shared.lags
        return step

    def close(self) -> None:
        self.runner.quit()
        for client in self.shared.clients:
            client.close()
        remove_tree(self.home, last=MARKER)  # killed midway, the rest can still be proven


class MasterDriver:
    """A Locust master: the users run in ``workers`` worker processes (here or on other
    machines), which send their sessions' records back at the end of each step; the
    server's counters are read here. A worker lost mid-run is left out from then on,
    and the results say so."""

    def __init__(self, config: EngineConfig, workers: int, bind: str, port: int) -> None:
        self.config = config
        self.workers = workers
        self.open_loop = config.open_loop
        env = Environment(
            user_classes=[Arrivals if self.open_loop else Student], catch_exceptions=False
        )
        self.runner = runner = env.create_master_runner(bind, port)
        ready: dict[str, dict[str, Any]] = {}
        self.drained: dict[int, dict[str, dict[str, Any]]] = {}
        configured: dict[str, int] = {}

        def on_want_config(environment: Any, msg: Any, **kwargs: Any) -> None:
            # Asked for by each worker once its handlers are in place (a configuration
            # sent as soon as it connects could reach it before, and be dropped).
            if msg.node_id not in configured and len(configured) >= workers:
                print(f"vcsbench load: worker {msg.node_id} is one too many; left idle")
                return
            index = configured.setdefault(msg.node_id, len(configured))
            runner.send_message("config", config.for_worker(index, workers).to_json(), msg.node_id)

        runner.register_message(
            "ready", lambda environment, msg, **kw: ready.update({msg.node_id: msg.data})
        )
        runner.register_message("want_config", on_want_config)
        runner.register_message(
            "drained",
            lambda environment, msg, **kw: self.drained.setdefault(msg.data["step"], {}).update(
                {msg.node_id: msg.data}
            ),
        )
        # Workers started by hand on other machines get ten minutes to connect.
        wait_s = 600.0 if config.external_workers else WORKER_TIMEOUT_S
        if not wait_until(lambda: runner.worker_count >= workers, wait_s):
            raise SystemExit(
                f"{runner.worker_count} of {workers} Locust workers connected to "
                f"{bind}:{port} within {wait_s:.0f} s"
            )
        if not wait_until(lambda: len(ready) >= workers, WORKER_TIMEOUT_S):
            raise SystemExit(
                f"{len(ready)} of {workers} Locust workers got ready within "
                f"{WORKER_TIMEOUT_S:.0f} s"
            )
        self.names = sorted(ready)
        self.client_pids = [pid for data in ready.values() for pid in data["client_pids"]]
        self.lost: list[str] = []

    def _alive(self) -> list[str]:
        clients = self.runner.clients
        nodes = clients.ready + clients.running + clients.spawning
        return sorted(node.id for node in nodes)

    def ready(self) -> dict[str, Any]:
        return {"client_pids": self.client_pids, "engine": ENGINE}

    def step(self, index: int, level: float, live: Live) -> dict[str, Any]:
        runner, config = self.runner, self.config
        alive = self._alive()
        self.lost += [n for n in self.names if n not in alive and n not in self.lost]
        users = len(alive) if self.open_loop else int(level)
        runner.send_message("step", {"index": index, "level": level, "workers": len(alive)})
        runner.start(users, spawn_rate=min(users, 100))
        wait_until(lambda: runner.user_count >= users, WORKER_TIMEOUT_S)
        gevent.sleep(0.3)  # the users' on_start has run on the workers
        snap, before = step_start(config, self.client_pids)
        runner.stats.reset_all()  # the live view counts this step's sessions only
        runner.send_message("open", {"index": index})
        t0 = time.perf_counter()
        while (left := t0 + config.step_seconds - time.perf_counter()) > 0:
            gevent.sleep(min(live_view.EVERY_S, left))
            total = runner.stats.total  # as the workers last reported (every 3 s)
            p50 = total.get_response_time_percentile(0.5) or None
            p95 = total.get_response_time_percentile(0.95) or None
            elapsed = time.perf_counter() - t0
            sessions_so_far, failed = total.num_requests, total.num_failures
            live(
                live_view.figures(
                    index, level, elapsed, config.step_seconds, sessions_so_far, failed, p50, p95
                )
            )
        runner.send_message("close", {"index": index})
        wait_until(lambda: set(self._alive()) <= set(self.drained.get(index, {})), DRAIN_S)
        after, server = step_end(config, self.client_pids)
        reports = self.drained.pop(index, {})
        after["client_cpu_s"] = before["client_cpu_s"] + sum(
            r["client_cpu_s"] for r in reports.values()
        )
        records: dict[str, list[Any]] = {k: [] for k in (*RECORD_FIELDS, "worker")}
        details: list[str] = []
        for node, report in sorted(reports.items()):
            for key in RECORD_FIELDS:
                records[key] += report["records"][key]
            records["worker"] += [node] * len(report["records"]["step"])
            details += report["details"][: max(0, sessions.MAX_DETAILS - len(details))]
        step = answer(level, before, after, records, details)
        step["writers"] = step_writers(config, snap, before, after, server)
        step.update(workers=sorted(reports), workers_lost=list(self.lost))
        if self.open_loop:
            step["arrivals"] = sum(r["arrivals"] for r in reports.values())
            step["generator_lag_s"] = [x for r in reports.values() for x in r["lags"]]
        return step

    def close(self) -> None:
        self.runner.quit()


def run_worker(host: str, port: int, home: Path | None = None) -> None:
    """A Locust worker: it gets its configuration from the master, runs the users the
    master gives it, and sends each step's records back when the step is drained. Its
    clients live in ``home`` (made by the run for a worker on its machine), or in a
    directory of its own."""
    env = Environment(user_classes=[Student, Arrivals], catch_exceptions=False)
    runner = env.create_worker_runner(host, port)
    home = home or Path(tempfile.mkdtemp(prefix="vcsbench-clients-"))
    cpu0 = [0.0]

    def on_config(environment: Any, msg: Any, **kwargs: Any) -> None:
        config = EngineConfig.from_json(msg.data)
        shared = sessions.set_shared(config, env)
        first = config.worker_index * 10_000  # committer numbers apart per worker
        fill_pool(shared, home, range(first, first + -(-config.pool // config.workers)))
        cpu0[0] = own_cpu_s()
        runner.send_message(
            "ready", {"client_pids": [c.pid for c in shared.clients if hasattr(c, "pid")]}
        )

    def on_step(environment: Any, msg: Any, **kwargs: Any) -> None:
        shared = sessions.SHARED
        shared.step = int(msg.data["index"])
        workers = int(msg.data["workers"])
        shared.rate = float(msg.data["level"]) / workers
        shared.phase = shared.config.worker_index / workers
        shared.lags = []

    def on_open(environment: Any, msg: Any, **kwargs: Any) -> None:
        shared = sessions.SHARED
        shared.started = shared.arrivals = 0
        shared.t0 = time.perf_counter()
        sessions.open_schedule(shared)
        shared.open = True

    def on_close(environment: Any, msg: Any, **kwargs: Any) -> None:
        sessions.SHARED.open = False
        gevent.spawn(_report_step, runner, int(msg.data["index"]), cpu0)

    for name, handler in (
        ("config", on_config),
        ("step", on_step),
        ("open", on_open),
        ("close", on_close),
    ):
        runner.register_message(name, handler)
    runner.send_message("want_config")  # now that "config" has its handler
    try:
        runner.greenlet.join()
    finally:
        shared = getattr(sessions, "SHARED", None)
        if shared is not None:
            for client in shared.clients:
                client.close()
        remove_tree(home, last=MARKER)


def _report_step(runner: Any, index: int, cpu0: list[float]) -> None:
    shared = sessions.SHARED
    wait_until(lambda: shared.in_flight == 0, DRAIN_S)
    records, details = shared.take_records()
    cpu = own_cpu_s()
    runner.send_message(
        "drained",
        {
            "step": index,
            "records": records,
            "details": details,
            "client_cpu_s": cpu - cpu0[0],
            "arrivals": shared.arrivals,
            "lags": shared.lags,
        },
    )
    cpu0[0] = cpu


def serve_requests(make: Any, requests: Any, answers: Any) -> None:
    """Answer the run's requests, a JSON line each, until it says quit or goes away."""

    def answer(message: dict[str, Any]) -> None:
        answers.write(json.dumps(message) + "\n")
        answers.flush()

    line = requests.readline()
    if not line:
        return
    driver: Driver = make(EngineConfig.from_json(json.loads(line)["config"]))
    answer({"ready": driver.ready()})
    try:
        while line := requests.readline():
            request = json.loads(line)
            if "quit" in request:
                break
            step = request["step"]
            done = driver.step(
                int(step["index"]), step["level"], lambda message: answer({"live": message})
            )
            answer({"done": done})
    finally:
        driver.close()
    answer({"bye": True})


def main() -> None:
    import signal
    import traceback

    # Stopped by the run (an interrupt, an error): unwind, so the clients are closed.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    # The answers have standard output to themselves: whatever Locust or a library
    # prints goes to standard error.
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    code = 0
    try:
        args = EngineArgs.parse(sys.argv[1:])
        if args.worker:
            run_worker(args.host, args.port, Path(args.home) if args.home else None)
        else:
            requests = FileObjectPosix(sys.stdin.fileno(), "rb")  # read without blocking gevent
            if args.workers:

                def make(config: EngineConfig) -> Driver:
                    return MasterDriver(config, args.workers, args.host, args.port)

            else:
                make = LocalDriver
            serve_requests(make, requests, answers)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
        if isinstance(exc.code, str):
            answers.write(json.dumps({"error": exc.code}) + "\n")
    except BaseException as exc:
        traceback.print_exc()
        answers.write(json.dumps({"error": f"{type(exc).__name__}: {exc}"}) + "\n")
        code = 1
    answers.flush()
    sys.stdout.flush()
    sys.stderr.flush()
    # Out without waiting for threads a library left (Locust's, gevent's): an engine that
    # failed must end, not hang its run.
    os._exit(code)


if __name__ == "__main__":
    main()
