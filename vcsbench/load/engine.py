"""The load generator: Locust, headless, in a process of its own.

``python -m vcsbench.load.engine CONFIG OUT``. Locust patches the standard library for
gevent on import, which is why this runs apart from vcsbench's own process. Each Locust
user is one student machine; its client's work is a subprocess (svnmucc, git) or a
client process of its own (``local:``), so C users have C sessions in flight at once:
gevent waits on their pipes, it does not run their work.

Closed loop, step by step: for each client count C, C users submit back to back for the
step's duration (or operation count); the step ends when the last session in flight
ends, so none is cut off. Every session's start and latency are kept here, raw (Locust's
own percentiles are rounded), and written to OUT with each step's counters: the block
device, the server's and the clients' CPU.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import gevent  # type: ignore[import-untyped]
import gevent.queue  # type: ignore[import-untyped]

# Locust first: it patches the standard library before anything else imports it.
import locust
from locust import User, constant, task
from locust.env import Environment

from vcsbench.bench.payloads import load_payload
from vcsbench.load.clients import Client, SessionError, make_client, remove_tree, submission
from vcsbench.load.servers import cgroup_cpu_s
from vcsbench.measure.probes import syncfs

DRAIN_S = 300.0
"""The longest a step waits for its sessions in flight after its time is up."""

MAX_DETAILS = 20
RECORD_FIELDS = (
    "step", "student", "visit", "t_intended", "t_start", "latency_s", "error", "retries"
)  # fmt: skip
"""Per session: its step, student and visit; when it was due (open loop: its arrival
time; closed loop: when it started), when the client's work started, its latency from
when it was due (the client's own preparation left out), its error kind or None, and
how often a refused commit was tried again (shared)."""


class Shared:
    """What the users of this process share (gevent: one thread, no locks needed)."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.students = int(config["students"])
        self.payload = dict(load_payload(config["payload"]).files)
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
        self.free: Any = None
        self.lags: list[list[float]] = []
        self.env: Any = None
        self.clones = 0
        self.commits: dict[int, int] = {}
        self.storm_files = {
            rel: text.encode("latin-1") for rel, text in config.get("storm_files", {}).items()
        }

    def take(self) -> tuple[int, int] | None:
        """The next student not being served, and the visit this is for them. A Locust
        worker serves its own share of the students (every N-th), so no two workers
        submit for one student at once."""
        stride = int(self.config.get("workers") or 1)
        offset = int(self.config.get("worker_index") or 0)
        mine = range(offset, self.students, stride)
        for _ in range(len(mine)):
            student = mine[self.next % len(mine)]
            self.next += 1
            if student not in self.busy:
                self.busy.add(student)
                self.visits[student] += 1
                return student, self.visits[student]
        return None


SHARED: Shared


def serve(client: Client, intended: float | None) -> None:
    """One session on ``client``: take a student, prepare (untimed), time the session
    from ``intended`` (open loop) or from its start, and record it."""
    shared = SHARED
    scenario = shared.config["scenario"]
    storm = scenario == "clone-storm"
    together = scenario == "shared"
    retries = 0
    if storm:  # every session clones the one repository: no student is busy
        student, visit = shared.clones, 1
        shared.clones += 1
        shared.busy.add(student)
    elif together:  # the client is the committer; its commits are numbered
        student = client.index
        shared.commits[student] = visit = shared.commits.get(student, 0) + 1
    else:
        taken = shared.take()
        if taken is None:
            gevent.sleep(0.005)
            return
        student, visit = taken
    files = shared.storm_files if storm else submission(shared.payload, student, visit)
    if together:
        files = {}
    step = shared.step
    error: str | None = None
    shared.in_flight += 1
    try:
        t_prepare = time.perf_counter()
        try:
            if together:
                client.shared_prepare(student)
            elif not storm:
                client.prepare(student, visit, files)
        except SessionError as exc:  # the client's own side failed: not a session
            if together:
                shared.commits[student] -= 1
            else:
                shared.visits[student] -= 1
            _detail(shared, f"prepare: {exc}")
            return
        shared.started += 1
        t_start = time.perf_counter()
        try:
            if storm:
                client.clone(student)
            elif together:
                retries = client.shared_commit(student, visit)
            else:
                client.session(student, visit, files)
        except SessionError as exc:
            error = exc.kind
            _detail(shared, str(exc))
        except Exception as exc:  # a client bug is an error in the results too
            error = "client"
            _detail(shared, f"client: {type(exc).__name__}: {exc}")
        end = time.perf_counter()
        if storm:  # untimed: the clone holds the repository's files, then it goes
            problems = client.clone_problems(student, files)
            if problems and error is None:
                error = "verify"
                _detail(shared, f"verify: clone {student}: {'; '.join(problems[:2])}")
    finally:
        shared.in_flight -= 1
        shared.busy.discard(student)
    due = t_start if intended is None else intended
    latency = end - due - (0.0 if intended is None else t_start - t_prepare)
    for key, value in zip(
        RECORD_FIELDS,
        (step, student, visit, due, t_start, latency, error, retries),
        strict=True,
    ):
        shared.records[key].append(value)
    SHARED.env.events.request.fire(
        request_type=shared.config["path"],
        name=shared.config["scenario"],
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
            _fill_pool(shared, shared.home, range(shared.made, shared.made + 1))
        self.client_ = shared.pool.pop()

    def on_stop(self) -> None:
        SHARED.pool.append(self.client_)

    @task
    def submit(self) -> None:
        if not SHARED.open:
            gevent.sleep(0.005)
            return
        serve(self.client_, None)


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
        intended = shared.t0 + (shared.arrivals + shared.phase) / shared.rate
        if intended >= shared.t0 + float(shared.config["step_seconds"]):
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
        shared.lags[-1].append(time.perf_counter() - intended)
        gevent.spawn(_arrival, intended)


def _arrival(intended: float) -> None:
    shared = SHARED
    client = shared.free.get()
    try:
        serve(client, intended)
    finally:
        shared.free.put(client)


def _detail(shared: Shared, text: str) -> None:
    if len(shared.details) < MAX_DETAILS:
        shared.details.append(text)


def _stat_cpu(fields: list[str]) -> int:
    return sum(int(f) for f in fields[11:15])  # utime stime cutime cstime, in ticks


def _members(pids: list[int], session: int | None, group: str | None = None) -> list[int]:
    """``pids`` and every live process of the server: those in its cgroup where it has
    one (also a CGI daemon that left its session), else those in its ``session``."""
    if group:
        try:
            listed = Path(group, "cgroup.procs").read_text().split()
        except OSError:
            listed = []
        return sorted({*pids, *(int(p) for p in listed)})
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        if pid in pids:
            found.append(pid)
            continue
        if session is None:
            continue
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == session:
            found.append(pid)
    return found


def _cpu_of(members: list[int]) -> dict[str, float]:
    """CPU seconds of each of ``members`` (by pid), with the children it has reaped, so
    that a handler that ended is counted once, in its parent."""
    seconds: dict[str, float] = {}
    for pid in members:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        seconds[str(pid)] = _stat_cpu(fields) / os.sysconf("SC_CLK_TCK")
    return seconds


def _written(members: list[int]) -> dict[str, int]:
    """Bytes each of ``members`` (by pid, with the children it reaped) caused to be
    written to storage (``write_bytes`` in /proc/PID/io)."""
    written: dict[str, int] = {}
    for pid in members:
        try:
            text = Path(f"/proc/{pid}/io").read_text()
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith("write_bytes:"):
                written[str(pid)] = int(line.split()[1])
    return written


def _own_cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _device(path: str | None) -> list[int] | None:
    if not path:
        return None
    fields = [int(f) for f in Path(path).read_text().split()]
    return [fields[2] * 512, fields[6] * 512, fields[0], fields[4]]


def _counters(config: dict[str, Any], server_pids: list[int]) -> dict[str, Any]:
    group = config.get("server_cgroup")
    members = _members(server_pids, config.get("server_session"), group)
    return {
        "t": time.perf_counter(),
        "device": _device(config.get("device_stat")),
        # A cgroup counts every process that was ever in it; otherwise each process's own
        # counters, so that a step counts what each grew by (one that ended is not
        # subtracted from the others).
        "server_cpu_s": cgroup_cpu_s(Path(group)) if group else None,
        "server_cpu_by_pid": None if group else _cpu_of(members),
        "server_write_by_pid": _written(members),
        "client_cpu_s": _own_cpu(),
    }


def run(config: dict[str, Any], out: Path) -> None:
    global SHARED
    SHARED = shared = Shared(config)
    home = Path(config["client_home"])  # made and recorded by the run
    steps: list[dict[str, Any]] = []
    open_loop = config["shape"] == "open"
    env = Environment(user_classes=[Arrivals if open_loop else Student], catch_exceptions=False)
    shared.env = env
    runner = env.create_local_runner()
    try:
        pool_size = int(config["max_clients"]) if open_loop else int(max(config["steps"]))
        _fill_pool(shared, home, range(pool_size))
        # The server's work: the server's session, or the local clients' processes.
        server_pids = [c.pid for c in shared.clients if hasattr(c, "pid")]
        for index, level in enumerate(config["steps"]):
            shared.step = index
            users = 1 if open_loop else int(level)
            runner.start(users, spawn_rate=min(users, 100))
            while runner.user_count < users:
                gevent.sleep(0.01)
            gevent.sleep(0.05)  # every user's on_start has run
            syncfs(Path(config["repos"]))
            before = _counters(config, server_pids)
            shared.started = shared.arrivals = 0
            shared.rate = float(level)
            shared.lags.append([])
            shared.t0 = time.perf_counter()
            shared.open = True
            deadline = shared.t0 + float(config["step_seconds"])
            target = int(config.get("step_ops") or 0)
            while time.perf_counter() < deadline and not (target and shared.started >= target):
                gevent.sleep(0.01)
            shared.open = False
            drain = time.perf_counter() + DRAIN_S
            while shared.in_flight and time.perf_counter() < drain:
                gevent.sleep(0.005)
            # What the step left dirty is written back inside its window, so the device's
            # bytes per session are the step's own (as the benchmarks' probes do).
            syncfs(Path(config["repos"]))
            after = _counters(config, server_pids)
            step: dict[str, Any] = {"level": level, "before": before, "after": after}
            if open_loop:
                step["arrivals"] = shared.arrivals
                step["generator_lag_s"] = shared.lags[-1]
            steps.append(step)
            _write(out, shared, steps)  # an interrupted run keeps every finished step
            done = sum(1 for s in shared.records["step"] if s == index)
            unit = "arrivals/s" if open_loop else "clients"
            print(
                f"step {index + 1}/{len(config['steps'])}: {level:g} {unit}, {done} sessions "
                f"in {after['t'] - before['t']:.1f} s",
                file=sys.stderr,
                flush=True,
            )
        runner.quit()
    finally:
        for client in shared.clients:
            client.close()
        for user in list(getattr(runner, "user_greenlets", [])):
            user.kill(block=False)
        remove_tree(home)
    _write(out, shared, steps)


def _fill_pool(shared: Shared, home: Path, indexes: range) -> None:
    """More clients for this process (open loop: also in the queue of free ones)."""
    shared.home = home
    if shared.config["shape"] == "open" and shared.free is None:
        shared.free = gevent.queue.Queue()
    for index in indexes:
        client = make_client(shared.config, home / f"client-{index}")
        client.index = index
        shared.pool.append(client)
        shared.clients.append(client)
        shared.made = max(shared.made, index + 1)
        if shared.free is not None:
            shared.free.put(client)


def _wait(condition: Any, timeout: float) -> bool:
    deadline = time.perf_counter() + timeout
    while not condition():
        if time.perf_counter() > deadline:
            return False
        gevent.sleep(0.01)
    return True


WORKER_TIMEOUT_S = 60.0


def run_master(config: dict[str, Any], out: Path, workers: int, bind: str, port: int) -> None:
    """Locust's master: the users run in ``workers`` worker processes (here or on other
    machines), which send their sessions' records back at the end of each step; the
    counters of the server are read here. A worker lost mid-run is left out from then
    on, and the results say so."""
    open_loop = config["shape"] == "open"
    env = Environment(user_classes=[Arrivals if open_loop else Student], catch_exceptions=False)
    runner = env.create_master_runner(bind, port)
    ready: dict[str, dict[str, Any]] = {}
    drained: dict[int, dict[str, dict[str, Any]]] = {}
    runner.register_message(
        "ready", lambda environment, msg, **kw: ready.update({msg.node_id: msg.data})
    )
    configured: dict[str, int] = {}

    def on_want_config(environment: Any, msg: Any, **kwargs: Any) -> None:
        # Asked for by each worker once its handlers are in place (a configuration sent
        # as soon as it connects could reach it before, and be dropped as unknown).
        if msg.node_id not in configured and len(configured) >= workers:
            print(
                f"vcsbench load: worker {msg.node_id} is one too many; left idle", file=sys.stderr
            )
            return
        index = configured.setdefault(msg.node_id, len(configured))
        data = {**config, "worker_index": index, "workers": workers}
        runner.send_message("config", data, msg.node_id)

    runner.register_message("want_config", on_want_config)
    runner.register_message(
        "drained",
        lambda environment, msg, **kw: drained.setdefault(msg.data["step"], {}).update(
            {msg.node_id: msg.data}
        ),
    )
    records: dict[str, list[Any]] = {k: [] for k in (*RECORD_FIELDS, "worker")}
    details: list[str] = []
    steps: list[dict[str, Any]] = []
    lost: list[str] = []
    try:
        # Workers started by hand on other machines get ten minutes to connect.
        wait_s = 600.0 if config.get("external_workers") else WORKER_TIMEOUT_S
        if not _wait(lambda: runner.worker_count >= workers, wait_s):
            raise SystemExit(
                f"vcsbench load: {runner.worker_count} of {workers} Locust workers connected "
                f"to {bind}:{port} within {wait_s:.0f} s"
            )
        if not _wait(lambda: len(ready) >= workers, WORKER_TIMEOUT_S):
            raise SystemExit(
                f"vcsbench load: {len(ready)} of {workers} Locust workers got ready within "
                f"{WORKER_TIMEOUT_S:.0f} s"
            )
        names = sorted(ready)
        client_pids = [pid for data in ready.values() for pid in data["client_pids"]]
        for index, level in enumerate(config["steps"]):
            alive = _alive(runner)
            lost += [n for n in names if n not in alive and n not in lost]
            users = len(alive) if open_loop else int(level)
            runner.send_message("step", {"index": index, "level": level, "workers": len(alive)})
            runner.start(users, spawn_rate=min(users, 100))
            _wait(lambda users=users: runner.user_count >= users, WORKER_TIMEOUT_S)
            gevent.sleep(0.3)  # the users' on_start has run on the workers
            syncfs(Path(config["repos"]))
            before = _counters(config, client_pids)
            runner.send_message("open", {"index": index})
            gevent.sleep(float(config["step_seconds"]))
            runner.send_message("close", {"index": index})
            _wait(lambda index=index: set(_alive(runner)) <= set(drained.get(index, {})), DRAIN_S)
            syncfs(Path(config["repos"]))
            after = _counters(config, client_pids)
            reports = drained.get(index, {})
            after["client_cpu_s"] = before["client_cpu_s"] + sum(
                r["client_cpu_s"] for r in reports.values()
            )
            step: dict[str, Any] = {"level": level, "before": before, "after": after}
            step["workers"] = sorted(reports)
            if open_loop:
                step["arrivals"] = sum(r["arrivals"] for r in reports.values())
                step["generator_lag_s"] = [x for r in reports.values() for x in r["lags"]]
            for node, report in reports.items():
                for key in RECORD_FIELDS:
                    records[key] += report["records"][key]
                records["worker"] += [node] * len(report["records"]["step"])
                details += report["details"][: max(0, MAX_DETAILS - len(details))]
            steps.append(step)
            _write_document(out, steps, records, details, lost)
            print(
                f"step {index + 1}/{len(config['steps'])}: {level:g}, "
                f"{sum(len(r['records']['step']) for r in reports.values())} sessions on "
                f"{len(reports)} workers",
                file=sys.stderr,
                flush=True,
            )
    finally:
        runner.quit()
        _write_document(out, steps, records, details, lost)


def _alive(runner: Any) -> list[str]:
    nodes = runner.clients.ready + runner.clients.running + runner.clients.spawning
    return sorted(node.id for node in nodes)


def run_worker(host: str, port: int, home: Path | None = None) -> None:
    """A Locust worker: it gets its configuration from the master, runs the users the
    master gives it, and sends each step's records back when the step is drained. Its
    clients live in ``home`` (made by the run for a worker on its machine), or in a
    directory of its own."""
    global SHARED
    env = Environment(user_classes=[Student, Arrivals], catch_exceptions=False)
    runner = env.create_worker_runner(host, port)
    home = home or Path(tempfile.mkdtemp(prefix="vcsbench-clients-"))
    cpu0 = [0.0]

    def on_config(environment: Any, msg: Any, **kwargs: Any) -> None:
        global SHARED
        config = msg.data
        SHARED = shared = Shared(config)
        shared.env = env
        workers = int(config["workers"])
        top = int(config["max_clients"]) if config["shape"] == "open" else int(max(config["steps"]))
        first = int(config["worker_index"]) * 10_000  # committer numbers apart per worker
        _fill_pool(shared, home, range(first, first + -(-top // workers)))
        cpu0[0] = _own_cpu()
        runner.send_message(
            "ready", {"client_pids": [c.pid for c in shared.clients if hasattr(c, "pid")]}
        )

    def on_step(environment: Any, msg: Any, **kwargs: Any) -> None:
        shared = SHARED
        shared.step = int(msg.data["index"])
        workers = int(msg.data["workers"])
        shared.rate = float(msg.data["level"]) / workers
        shared.phase = int(shared.config["worker_index"]) / workers
        shared.lags.append([])

    def on_open(environment: Any, msg: Any, **kwargs: Any) -> None:
        SHARED.started = SHARED.arrivals = 0
        SHARED.t0 = time.perf_counter()
        SHARED.open = True

    def on_close(environment: Any, msg: Any, **kwargs: Any) -> None:
        SHARED.open = False
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
        shared = globals().get("SHARED")
        if shared is not None:
            for client in shared.clients:
                client.close()
        remove_tree(home)


def _report_step(runner: Any, index: int, cpu0: list[float]) -> None:
    shared = SHARED
    _wait(lambda: shared.in_flight == 0, DRAIN_S)
    mine = [i for i, step in enumerate(shared.records["step"]) if step == index]
    cpu = _own_cpu()
    runner.send_message(
        "drained",
        {
            "step": index,
            "records": {k: [v[i] for i in mine] for k, v in shared.records.items()},
            "details": shared.details[:MAX_DETAILS],
            "client_cpu_s": cpu - cpu0[0],
            "arrivals": shared.arrivals,
            "lags": shared.lags[-1] if shared.lags else [],
        },
    )
    cpu0[0] = cpu
    shared.details.clear()


def _write_document(
    out: Path,
    steps: list[dict[str, Any]],
    records: dict[str, list[Any]],
    details: list[str],
    lost: list[str],
) -> None:
    document = {
        "engine": {"locust": locust.__version__, "gevent": gevent.__version__},
        "steps": steps,
        "records": records,
        "error_details": details,
        "workers_lost": lost,
    }
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(json.dumps(document))
    os.replace(tmp, out)


def _write(out: Path, shared: Shared, steps: list[dict[str, Any]]) -> None:
    """The finished steps and their sessions' records (one process's run)."""
    keep = [i for i, step in enumerate(shared.records["step"]) if step < len(steps)]
    records = {k: [v[i] for i in keep] for k, v in shared.records.items()}
    _write_document(out, steps, records, shared.details, [])


def main() -> None:
    import signal
    import traceback

    # Stopped by the run (an interrupt, an error): unwind, so the clients are closed.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    code = 0
    try:
        if sys.argv[1] == "--worker":  # --worker HOST PORT [HOME]
            run_worker(sys.argv[2], int(sys.argv[3]), Path(sys.argv[4]) if sys.argv[4:] else None)
        else:
            config = json.loads(Path(sys.argv[1]).read_text())
            if len(sys.argv) > 3 and sys.argv[3] == "--master":  # CONFIG OUT --master N HOST PORT
                run_master(
                    config, Path(sys.argv[2]), int(sys.argv[4]), sys.argv[5], int(sys.argv[6])
                )
            else:
                run(config, Path(sys.argv[2]))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    # Out without waiting for threads a library left (Locust's, gevent's): an engine that
    # failed must end, not hang its run.
    os._exit(code)


if __name__ == "__main__":
    main()
