"""A load run: for each access path, in a sandbox of its own, the repositories, the
server, the load engine, and the loop over steps.

The loop is here, in the run's process: the engine (:mod:`vcsbench.load.engine`) runs
one step when asked and answers with its sessions' raw records; then, untimed, the
scenario reads back what the step wrote (a session whose work is not there becomes a
``verify`` error), the step is reduced to its figures, and the result file is written
again, whole, before the next step is asked for. So a run stopped at any moment (a
signal, SIGKILL then ``vcsbench cleanup``, a full disk) keeps every step that finished,
verified; an interrupted step's sessions are not kept. The engine's records and the
server logs live outside the sandbox, so a sandbox that fills up makes failed sessions,
counted with their cause, and the run goes on to the next access path.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from vcsbench.errors import VcsbenchError
from vcsbench.load.document import LoadDocument
from vcsbench.load.driver import ANSWER_S, Engine, engine_nice, start_workers, stop_workers
from vcsbench.load.engine_args import EngineArgs
from vcsbench.load.engine_config import EngineConfig
from vcsbench.load.figures import capacity, step_figures
from vcsbench.load.live import LiveView
from vcsbench.load.paths import AccessPath
from vcsbench.load.plan import LoadPlan
from vcsbench.load.repositories import fill_present, give_students_their_term
from vcsbench.measure.machine import filesystem_info
from vcsbench.measure.sampler import SystemSampler
from vcsbench.measure.writers import device_of
from vcsbench.results import Run, parse
from vcsbench.results.io import beside, own_directory
from vcsbench.results.outlock import owned
from vcsbench.sandbox import Sandbox, open_sandbox
from vcsbench.servers.apache import APACHE_USER, apache_ids
from vcsbench.servers.distance import Distance
from vcsbench.servers.server import free_port
from vcsbench.servers.transports import Service
from vcsbench.workload.payloads import load_payload


def _service(
    path: AccessPath, workdir: Path, logs: Path, plan: LoadPlan, distance: Distance | None
) -> Service | None:
    """The path's server, its credentials in the sandbox (a local path has none)."""
    transport = path.transport
    if transport is None:
        return None
    return Service(
        transport,
        workdir / "repos",
        workdir / "credentials",
        logs,
        port=plan.port,
        host=plan.listen,
        distance=distance,
    )


def _serve_as_apache(workdir: Path, repos: Path, path: AccessPath) -> None:
    """Apache writes as its own user: it must own the repositories and reach them."""
    os.chmod(workdir, 0o711)
    os.chown(repos, *apache_ids())
    closed = [d for d in workdir.parents if not os.stat(d).st_mode & 0o001]
    if closed:
        raise VcsbenchError(
            f"{path.name} serves as {APACHE_USER}, which cannot reach the sandbox: "
            f"{closed[0]} is closed to others; use --fs tmpfs (or ext4, xfs, btrfs), or a "
            "dir: sandbox below directories others may enter"
        )


def engine_config(
    plan: LoadPlan,
    path: AccessPath,
    repos: Path,
    service: Service | None,
    sandbox: Sandbox,
    start: Mapping[str, bytes],
) -> EngineConfig:
    """What the load engine is told (its one message in: the rest are steps)."""
    assert sandbox.info is not None
    server = service.server if service is not None else None
    return EngineConfig(
        scenario=plan.scenario.name,
        mix=plan.mix,
        path=path,
        repos=str(repos),
        url_base=service.url_base if service is not None else "",
        client_env=service.client_env if service is not None else {},
        ca_file=service.ca_file if service is not None else None,
        students=plan.students,
        payload=plan.payload,
        precreate=plan.precreate,
        term=plan.into_term,
        steps=tuple(plan.steps),
        shape=plan.shape,
        arrivals=plan.arrivals.kind,
        arrival_seed=plan.arrivals.seed,
        think_min_s=plan.think[0],
        think_max_s=plan.think[1],
        max_clients=plan.max_clients,
        workers=plan.locust_workers,
        external_workers=plan.expect_workers > 0,
        step_seconds=plan.step_seconds,
        step_ops=plan.step_ops,
        start=dict(start),
        device_stat=sandbox.info.device_stat_path,
        throttle_device=device_of(sandbox.info.device_stat_path)[1]
        if sandbox.info.throttle
        else None,
        server_session=server.pid if server is not None else None,  # a session leader
        server_cgroup=str(server.group.path) if server and server.group else None,
        client_home=str(sandbox.make_dir("vcsbench-clients-")),
    )


def run_path(
    plan: LoadPlan,
    path: AccessPath,
    logs: Path,
    record: LoadDocument,
    distance: Distance | None = None,
) -> None:
    """One access path's load (at ``distance`` from its server, where given), in a
    sandbox of its own, its entry in ``record`` written after every step."""
    payload = dict(load_payload(plan.payload).files)
    with open_sandbox(plan.fs) as sandbox:
        assert sandbox.info is not None
        workdir = sandbox.root / "load"
        repos = workdir / "repos"
        repos.mkdir(parents=True)
        if path.served_as_apache and os.geteuid() == 0:
            _serve_as_apache(workdir, repos, path)
        present = (
            fill_present(path, workdir, plan.age, plan.population, plan.fs.text)
            if plan.age
            else None
        )
        held: list[int] = []
        if present is not None and plan.population is not None and plan.into_term:
            held = give_students_their_term(path, workdir, plan.students, plan.population)
            present["students_repositories"] = plan.students
        t0 = time.perf_counter()
        start = plan.scenario.prepare(
            path, repos, payload, plan.students, history=plan.history, precreate=plan.precreate
        )
        entry: dict[str, Any] = {
            "path": path.name,
            "vcs": path.vcs,
            "server": None,
            "distance": None if distance is None else distance.to_json(),
            "filesystem": filesystem_info(sandbox.info).to_json(),  # as a benchmark has it
            "steps": [],
            "capacity": capacity([], plan.capacity_factor),
            "verified_repositories": 0,
            "verify_failures": [],
            "verify_failure_count": 0,
            "harness": {
                "precreate_s": time.perf_counter() - t0,
                **({"present": present} if present is not None else {}),
                "verify_s": 0.0,
                "engine_nice": engine_nice(),
                "engine_nice_note": "the load engine's CPU priority (nice); its clients and "
                "the servers run at 0",
            },
            "engine": {},
            "error_details": [],
            "locust_workers": plan.locust_workers,
            "workers_lost": [],
            "raw": {},
            "sampler": [],
        }
        record.loads.append(entry)
        service = _service(path, workdir, logs, plan, distance)
        sampler = SystemSampler(sandbox.info.device_stat_path, interval_s=0.25)
        engine: Engine | None = None
        workers: list[subprocess.Popen[bytes]] = []
        try:
            if service is not None:
                service.start(sandbox.record_process)
                entry["server"] = service.describe()
                if service.calibration is not None:
                    entry["distance"] = entry["server"]["distance"]
                    print(f"vcsbench load: {calibration_line(entry['distance'])}", file=sys.stderr)
                    record.write()
            config = engine_config(plan, path, repos, service, sandbox, start)
            args = EngineArgs(out=str(record.out))
            if plan.locust_workers:
                bind = plan.master_bind
                port = plan.master_port or free_port(bind)
                args = EngineArgs(str(record.out), plan.locust_workers, bind, port)
                if plan.expect_workers:
                    print(
                        f"vcsbench load: Locust master on {bind}:{port} waits "
                        f"for {plan.expect_workers} worker(s): on each machine run `vcsbench "
                        f"load-worker {bind}:{port}`",
                        file=sys.stderr,
                        flush=True,
                    )
            sampler.start()
            engine = Engine(args.argv(), sandbox)
            workers = start_workers(plan, sandbox, args.port)
            ready = engine.ask(
                {"config": config.to_json()}, 600 if plan.expect_workers else ANSWER_S
            )
            entry["engine"] = ready["ready"]["engine"]
            _steps(plan, path, repos, engine, sampler, entry, record, start, payload, held)
            engine.close()
        finally:
            if engine is not None:
                engine.kill()
            stop_workers(workers, sandbox)
            entry["sampler"] = sampler.stop()
            if service is not None:
                service.stop(sandbox.forget_process)
            record.write()


def _steps(
    plan: LoadPlan,
    path: AccessPath,
    repos: Path,
    engine: Engine,
    sampler: SystemSampler,
    entry: dict[str, Any],
    record: LoadDocument,
    start: Mapping[str, bytes],
    payload: dict[str, bytes],
    held: Sequence[int] = (),
) -> None:
    """The steps, each asked for, verified, reduced and written before the next
    (``held``: each student's revisions before the load, where its term's)."""
    raw: dict[str, list[Any]] = entry["raw"]
    io_counted = path.name != "apache-git"  # its CGI processes are reaped unseen
    verified: set[str] = set()
    view = LiveView(plan.live, path.name, len(plan.steps))
    for index, level in enumerate(plan.steps):
        try:
            answer = engine.ask(
                {"step": {"index": index, "level": level}},
                plan.step_seconds + ANSWER_S,
                view.callback(),
            )
        finally:
            view.end()
        step = answer["done"]
        first = len(raw.get("step", []))
        for key, values in step["records"].items():
            raw.setdefault(key, []).extend(values)
        t1 = time.perf_counter()
        found = plan.scenario.verify_step(path, repos, raw, index, start, payload, held)
        entry["harness"]["verify_s"] += time.perf_counter() - t1
        verified |= found.read
        entry["verified_repositories"] = len(verified)
        entry["verify_failure_count"] += len(found.problems)
        entry["verify_failures"] = (entry["verify_failures"] + found.problems)[:20]
        entry["verification"] = plan.scenario.verification(
            len(verified), entry["verify_failures"], entry["verify_failure_count"]
        )
        step["records"] = {key: values[first:] for key, values in raw.items()}
        figures = step_figures(step, sampler.samples(), io_counted)
        entry["steps"].append(figures)
        entry["capacity"] = capacity(entry["steps"], plan.capacity_factor)
        entry["error_details"] = (entry["error_details"] + step["details"])[:20]
        entry["workers_lost"] = step.get("workers_lost", [])
        record.write()
        unit = "arrivals/s" if plan.shape == "open" else "client" + ("" if level == 1 else "s")
        errors = ", ".join(f"{k} {v}" for k, v in sorted(figures["errors"].items()))
        print(
            f"step {index + 1}/{len(plan.steps)}: {level:g} {unit}, {figures['sessions']} "
            f"sessions in {figures['duration_s']:.1f} s"
            + (f", errors: {errors}" if errors else ", no error")
            + "; verified and written",
            file=sys.stderr,
            flush=True,
        )


def calibration_line(distance: Mapping[str, Any]) -> str:
    """The distance asked for and what a client saw through the proxy, in one line."""
    found = distance.get("calibration") or {}
    text = (
        f"distance: rtt {distance['rtt_ms']:g} ms asked, "
        f"{found.get('measured_rtt_ms', float('nan')):.2f} ms measured "
        f"(median of {found.get('exchanges', 0)} round trips)"
    )
    if found.get("measured_bandwidth_kbit") is not None:
        text += (
            f"; {distance['bandwidth_kbit']:g} kbit/s asked, "
            f"{found['measured_bandwidth_kbit']:,.0f} kbit/s measured"
        )
    if not found.get("within_tolerance", True):
        text += f" -- MISSED by more than {100 * found.get('tolerance', 0.1):.0f}%"
    return text


def _summary(entry: dict[str, Any]) -> str:
    """One line on how an access path's sessions went: errors by kind and the first
    cause, so that a server that failed says so on screen."""
    sessions = sum(row["sessions"] for row in entry["steps"])
    errors: dict[str, int] = {}
    for row in entry["steps"]:
        for kind, count in row["errors"].items():
            errors[kind] = errors.get(kind, 0) + count
    if entry.get("failure"):
        return f"vcsbench load: {entry['path']} could not be run: {entry['failure']}"
    if not errors:
        return f"vcsbench load: {entry['path']}: {sessions:,} sessions, no error"
    kinds = ", ".join(f"{kind} {count:,}" for kind, count in sorted(errors.items()))
    first = entry["error_details"][0] if entry["error_details"] else "no detail kept"
    return (
        f"vcsbench load: {entry['path']}: {sum(errors.values()):,} of {sessions:,} sessions "
        f"failed ({kinds}); first: {first}"
    )


def run_load(plan: LoadPlan, out: Path, command: Sequence[str], run_id: str = "") -> Run:
    """Run the plan over each access path, writing the result file after every step;
    return it as the model reads it. An access path that cannot be run is recorded as
    such and the run goes on; an interrupt keeps what finished and is raised again. The
    result file is held for the run (a second run writing it is refused before it starts)."""
    with owned(out):
        return _run_load(plan, out, command, run_id)


def _run_load(plan: LoadPlan, out: Path, command: Sequence[str], run_id: str) -> Run:
    # Absolute: servers resolve relative paths against their own roots (Apache's
    # ServerRoot), not against this directory.
    logs = beside(out.resolve(), "-logs")
    own_directory(logs, "the server log directory")
    record = LoadDocument(plan, out, command, run_id or uuid.uuid4().hex)
    for path, distance in ((p, d) for p in plan.paths for d in plan.distances):
        at = f" at {distance.label}" if distance is not None else ""
        print(
            f"vcsbench load: {plan.scenario.name} over {path.name}{at} on {plan.fs.text}",
            file=sys.stderr,
        )
        entries = len(record.loads)
        try:
            run_path(plan, path, logs, record, distance)
        except KeyboardInterrupt:
            entry = record.loads[-1] if record.loads else None
            during = f" during step {len(entry['steps']) + 1} of {path.name}" if entry else ""
            record.stopped(
                f"the run was interrupted{during}: every step that finished is kept, "
                "verified; the interrupted step and the rest did not run"
            )
            raise
        except VcsbenchError as exc:
            if len(record.loads) == entries:  # it failed before its entry was made
                record.loads.append(
                    {
                        "path": path.name,
                        "vcs": path.vcs,
                        "steps": [],
                        "distance": None if distance is None else distance.to_json(),
                    }
                )
            record.loads[-1]["failure"] = str(exc)
            record.write()
        print(_summary(record.loads[-1]), file=sys.stderr, flush=True)
    return parse({"vcsbench_load": record.facts}, out)
