"""A load run: sandbox, repositories, server, the Locust process, verification, figures.

For each access path, in a sandbox of its own: the repository directory is made (and the
students' repositories too with ``precreate``), the server is started on loopback, the
system sampler runs, and the engine (:mod:`vcsbench.load.engine`) drives the steps.
Afterwards, untimed, every student's repository is read back: it must hold one revision
per session that succeeded and the last successful submission's files; a repository
that does not turns that student's last successful session into an error. Then the raw
latencies become each step's figures and the capacity.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vcsbench.backends import backend_class, make_backend
from vcsbench.backends._git import git_env, read_git_objects
from vcsbench.backends.base import compare_files
from vcsbench.backends.svn_verifier import SvnVerifier
from vcsbench.bench.payloads import load_payload, payload_names
from vcsbench.errors import VcsbenchError
from vcsbench.load import servers
from vcsbench.load.clients import (
    SERVER_PATHS,
    SHARED,
    STORM,
    path_vcs,
    repo_name,
    shared_content,
    shared_file,
    submission,
)
from vcsbench.report.blocks import quantile
from vcsbench.results import Run, parse
from vcsbench.results.io import own_directory, write_document
from vcsbench.results.load import LOAD_SCHEMA
from vcsbench.sandbox import Sandbox, open_sandbox, parse_fs_spec

SCENARIOS = ("deadline", "shared", "clone-storm")
SHAPES = ("closed", "open")
LAG_LIMIT_S = 0.020
"""Open loop: a p99 generator lag above this (or a tenth of the arrival interval, if
more) means the load generator, not the server, set the pace."""
PERCENTILES = (50, 90, 95, 99)


@dataclass
class LoadPlan:
    scenario: str
    paths: list[str]
    fs: str
    students: int
    steps: list[float]
    """Closed loop: clients at once, per step; open loop: arrivals per second."""
    step_seconds: float
    step_ops: int
    payload: str
    precreate: bool
    capacity_factor: float
    port: int = 0
    shape: str = "closed"
    max_clients: int = 64
    history: int = 100
    """clone-storm: the revisions of the repository every client clones."""
    workers: int = 0
    """Locust worker processes on this machine (0: one process runs every user)."""
    expect_workers: int = 0
    """Locust workers started elsewhere (``vcsbench load-worker``) that the master waits for."""
    master_bind: str = servers.HOST
    master_port: int = 0
    listen: str = servers.HOST
    """The address the servers listen on (and their URLs name)."""

    @classmethod
    def parse(
        cls,
        *,
        scenario: str,
        paths: str,
        fs: str,
        students: int,
        steps: str,
        step_seconds: float,
        step_ops: int,
        payload: str,
        precreate: bool,
        capacity_factor: float,
        port: int = 0,
        shape: str = "closed",
        max_clients: int = 64,
        history: int = 100,
        workers: int = 0,
        expect_workers: int = 0,
        master_bind: str = servers.HOST,
        master_port: int = 0,
        listen: str = servers.HOST,
    ) -> LoadPlan:
        if scenario not in SCENARIOS:
            raise VcsbenchError(f"scenario {scenario!r} is not known; use {', '.join(SCENARIOS)}")
        path_list = [p.strip() for p in paths.split(",") if p.strip()]
        if not path_list:
            raise VcsbenchError("--paths is empty; give e.g. svnserve,git-daemon,local:svn-fs")
        for path in path_list:
            check_path(path)
        parse_fs_spec(fs)
        if shape not in SHAPES:
            raise VcsbenchError(f"--shape {shape!r} is not known; use {' or '.join(SHAPES)}")
        what = (
            "client counts >= 1, like 1,2,4,8"
            if shape == "closed"
            else ("arrival rates per second > 0, like 2,20")
        )
        try:
            step_list = [float(s) if shape == "open" else int(s) for s in steps.split(",")]
        except ValueError:
            step_list = []
        if not step_list or any(s <= 0 for s in step_list):
            raise VcsbenchError(f"--steps {steps!r} is not a list of {what}")
        clients = int(max(step_list)) if shape == "closed" else max_clients
        if max_clients < 1:
            raise VcsbenchError(f"--max-clients {max_clients} must be >= 1")
        if students < clients:
            raise VcsbenchError(
                f"--students {students} is fewer than the {clients} clients that may be busy "
                "at once; each client serves a different student at a time"
            )
        if workers < 0 or expect_workers < 0:
            raise VcsbenchError("--workers and --expect-workers must be >= 0")
        if workers and expect_workers:
            raise VcsbenchError(
                "give --workers (worker processes here) or --expect-workers (workers started "
                "elsewhere with vcsbench load-worker), not both"
            )
        local = [p for p in path_list if p.startswith("local:")]
        if expect_workers and local:
            raise VcsbenchError(
                f"access path {local[0]} works on this machine's files; workers started "
                "elsewhere can use the server paths only"
            )
        servers.check_host(listen, "--listen")
        if expect_workers:
            servers.check_host(master_bind, "--master-bind")
            if master_port:
                servers.check_port(master_port, master_bind, "--master-port")
        elif master_port or master_bind != servers.HOST:
            raise VcsbenchError("--master-bind and --master-port go with --expect-workers")
        if (workers or expect_workers) and step_ops:
            raise VcsbenchError("--step-ops works with one Locust process; leave out --workers")
        if history < 1:
            raise VcsbenchError(f"--history {history} must be >= 1 (revisions to clone)")
        if step_seconds <= 0:
            raise VcsbenchError(f"--step-seconds {step_seconds} must be > 0")
        if payload not in payload_names():
            raise VcsbenchError(
                f"payload {payload!r} is not known; use {', '.join(payload_names())}"
            )
        if capacity_factor <= 1:
            raise VcsbenchError(f"--capacity-factor {capacity_factor} must be > 1, like 2")
        if port:
            if len([p for p in path_list if p in SERVER_PATHS]) > 1:
                raise VcsbenchError("--port applies to one server path at a time; leave it out")
            servers.check_port(port)
        return cls(
            scenario,
            path_list,
            fs,
            students,
            step_list,
            step_seconds,
            step_ops,
            payload,
            precreate,
            capacity_factor,
            port,
            shape,
            max_clients,
            history,
            workers,
            expect_workers,
            master_bind,
            master_port,
            listen,
        )


def check_path(path: str) -> None:
    if path in SERVER_PATHS:
        servers.require_binary(path)
        return
    if path.startswith("local:"):
        name = path.split(":", 1)[1]
        try:
            cls = backend_class(name)
        except VcsbenchError as exc:
            raise VcsbenchError(f"access path {path!r}: {exc}") from None
        if cls.vcs not in ("svn", "git"):
            raise VcsbenchError(f"access path {path!r}: only svn and git backends are offered")
        ok = cls.available()
        if not ok.ok:
            raise VcsbenchError(f"access path {path!r}: {ok.reason}")
        return
    raise VcsbenchError(
        f"access path {path!r} is not known; use {', '.join(SERVER_PATHS)} or local:BACKEND "
        "(local:svn-fs, local:git-pygit2)"
    )


def _create_server_side(path: str, repo: Path) -> None:
    if path_vcs(path) == "svn":
        argv = ["svnadmin", "create", str(repo)]
    else:
        argv = ["git", "init", "-q", "--bare", "-b", "main", str(repo)]
    if path.startswith("apache-"):
        argv = servers.as_server_user(argv)
    subprocess.run(argv, check=True, capture_output=True, env=git_env())


def precreate(path: str, repos: Path, students: int) -> None:
    """Every student's repository, made the way the path's server side makes them."""
    if path.startswith("local:"):
        with make_backend(path.split(":", 1)[1]) as backend:
            for student in range(students):
                backend.create(repos / repo_name(student))
        return
    for student in range(students):
        _create_server_side(path, repos / repo_name(student))


STORM_BUILDERS = {"svn": ("svn-fs", "svn-cli"), "git": ("git-pygit2", "git-cli")}


def build_storm(
    path: str, repos: Path, payload: dict[str, bytes], history: int, repo_name_: str = STORM
) -> dict[str, bytes]:
    """The repository every clone-storm client clones (or the shared one: ``repo_name_``):
    the payload, then ``history - 1`` revisions that each rewrite one small file (as the
    benchmarks' history seeds). Returns the files its newest revision holds."""
    from vcsbench.backends import REGISTRY
    from vcsbench.bench.operations import COMMIT_MESSAGE, HISTORY_FILE

    vcs = path_vcs(path)
    if path.startswith("local:"):
        name = path.split(":", 1)[1]
    else:
        name = next(n for n in STORM_BUILDERS[vcs] if REGISTRY[n].available().ok)
    scratch = repos.parent / f"{repo_name_}-scratch"
    scratch.mkdir()
    files = dict(payload)
    repo = repos / repo_name_
    with make_backend(name) as backend:
        backend.create(repo)
        backend.commit(repo, payload, COMMIT_MESSAGE, scratch)
        for i in range(1, history):
            files[HISTORY_FILE] = f"history {i}\n".encode()
            backend.commit(repo, {HISTORY_FILE: files[HISTORY_FILE]}, f"history {i}", scratch)
    if path.startswith("apache-") and os.geteuid() == 0:  # its user serves it
        import pwd

        user = pwd.getpwnam(servers.APACHE_USER)
        for directory, dirs, names in os.walk(repo):
            for entry in [directory, *(os.path.join(directory, n) for n in dirs + names)]:
                os.lchown(entry, user.pw_uid, user.pw_gid)
    return files


def _revisions_git(repo: Path) -> int:
    proc = subprocess.run(
        ["git", "--git-dir", str(repo), "rev-list", "--count", "HEAD"],
        capture_output=True,
        env=git_env(),
        check=False,
    )
    return int(proc.stdout) if proc.returncode == 0 else 0


def _read_back(
    reader: SvnVerifier | None, repo: Path, files: dict[str, bytes]
) -> tuple[int, list[str]]:
    """A repository's revisions (svn: the youngest; git: HEAD's commits) and how its
    newest files differ from ``files``: svn by the reader process, git by vcsbench's own
    object reader. A repository that cannot be read: -1 and why."""
    try:
        if reader is not None:
            revisions, actual = reader.read(repo, sorted(files))
            return revisions, compare_files(files, actual)
        return _revisions_git(repo), compare_files(files, read_git_objects(repo, sorted(files)))
    except Exception as exc:
        return -1, [f"could not be read: {type(exc).__name__}: {exc}"]


def verify(
    path: str, repos: Path, records: dict[str, list[Any]], payload: dict[str, bytes]
) -> tuple[int, list[str]]:
    """Read every visited repository back; flip the last good session of each that is
    wrong into a ``verify`` error. Returns how many were read and what failed."""
    last_ok: dict[int, int] = {}
    ok_count: dict[int, int] = {}
    for i, student in enumerate(records["student"]):
        if records["error"][i] is None:
            ok_count[student] = ok_count.get(student, 0) + 1
            last_ok[student] = i
    reader = SvnVerifier() if path_vcs(path) == "svn" else None
    problems: list[str] = []
    try:
        for student, index in sorted(last_ok.items()):
            files = submission(payload, student, records["visit"][index])
            revisions, wrong = _read_back(reader, repos / repo_name(student), files)
            if revisions != ok_count[student]:
                wrong.append(f"{revisions} revisions, {ok_count[student]} sessions succeeded")
            if wrong:
                records["error"][index] = "verify"
                problems.append(f"{repo_name(student)}: {'; '.join(wrong[:2])}")
    finally:
        if reader is not None:
            reader.close()
    return len(last_ok), problems


def verify_shared(
    path: str, repos: Path, records: dict[str, list[Any]], start: dict[str, bytes]
) -> tuple[int, list[str]]:
    """The shared repository read back: one revision per successful commit on top of the
    first, each committer's file as its last successful commit left it. A wrong file
    turns that committer's last successful session into a ``verify`` error."""
    last_ok: dict[int, int] = {}
    ok = 0
    for i, committer in enumerate(records["student"]):
        if records["error"][i] is None:
            ok += 1
            last_ok[committer] = i
    expected = dict(start)
    for committer, i in last_ok.items():
        expected[shared_file(committer)] = shared_content(committer, records["visit"][i])
    reader = SvnVerifier() if path_vcs(path) == "svn" else None
    try:
        revisions, wrong = _read_back(reader, repos / SHARED, expected)
    finally:
        if reader is not None:
            reader.close()
    if revisions >= 0:
        revisions -= 1  # the first commit (svn r1, git's root commit) was made before the load
    problems: list[str] = []
    if revisions != ok:
        problems.append(f"{revisions} commits after the first, {ok} sessions succeeded")
    for line in wrong:
        problems.append(line)
        name = line.split(":", 1)[0]
        for committer, i in last_ok.items():
            if shared_file(committer) == name:
                records["error"][i] = "verify"
    return 1, problems


def step_figures(
    document: dict[str, Any],
    samples: list[dict[str, Any]],
    capacity_factor: float,
    io_counted: bool = True,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Each step's figures from the raw records, and the capacity. ``io_counted``: the
    server's processes' own IO can be read (not where short-lived processes nobody waits
    for do the writing, as git http-backend's under Apache)."""
    records = document["records"]
    figures: list[dict[str, Any]] = []
    for index, step in enumerate(document["steps"]):
        before, after = step["before"], step["after"]
        duration = after["t"] - before["t"]
        mine = [i for i, s in enumerate(records["step"]) if s == index]
        ok = sorted(records["latency_s"][i] for i in mine if records["error"][i] is None)
        errors: dict[str, int] = {}
        for i in mine:
            kind = records["error"][i]
            if kind is not None:
                errors[kind] = errors.get(kind, 0) + 1
        retries = sum(records.get("retries", [0] * len(records["step"]))[i] for i in mine)
        if before["server_cpu_s"] is not None:
            server_cpu, ended = after["server_cpu_s"] - before["server_cpu_s"], 0
        else:
            server_cpu, ended = grown(before["server_cpu_by_pid"], after["server_cpu_by_pid"])
        written, _ = grown(before["server_write_by_pid"], after["server_write_by_pid"])
        row: dict[str, Any] = {
            "level": step["level"],
            "t0": before["t"],
            "t1": after["t"],
            "retries": retries,
            "duration_s": duration,
            "sessions": len(mine),
            "ok": len(ok),
            "errors": errors,
            "ops_per_s": len(ok) / duration if duration > 0 else None,
            "latency_ms": {
                **{f"p{p}": quantile(ok, p / 100) * 1000 if ok else None for p in PERCENTILES},
                "max": ok[-1] * 1000 if ok else None,
                "mean": sum(ok) / len(ok) * 1000 if ok else None,
            },
            "server_cpu_s": server_cpu,
            "server_processes_ended": ended,
            "client_cpu_s": after["client_cpu_s"] - before["client_cpu_s"],
        }
        if before["device"] is not None and after["device"] is not None:
            delta = [a - b for a, b in zip(after["device"], before["device"], strict=True)]
            per = len(ok) or 1
            row["device"] = {
                "read_bytes": delta[0],
                "write_bytes": delta[1],
                "server_process_write_bytes": written if io_counted else None,
                # What the device wrote that no server process wrote: the journal,
                # metadata, and writeback the processes were not charged with.
                "unattributed_share": max(0.0, 1 - written / delta[1])
                if delta[1] and io_counted
                else None,
                "read_requests": delta[2],
                "write_requests": delta[3],
                "write_bytes_per_session": delta[1] / per,
                "write_requests_per_session": delta[3] / per,
            }
        if "arrivals" in step:  # open loop: how late the generator sent each arrival
            lags = sorted(step["generator_lag_s"])
            limit = max(LAG_LIMIT_S, 0.1 / step["level"])
            p99 = quantile(lags, 0.99) if lags else 0.0
            row["offered_per_s"] = step["arrivals"] / (duration or 1)
            row["generator"] = {
                "arrivals": step["arrivals"],
                "lag_ms_p50": quantile(lags, 0.5) * 1000 if lags else None,
                "lag_ms_p99": p99 * 1000,
                "lag_ms_max": lags[-1] * 1000 if lags else None,
                "limit_ms": limit * 1000,
                "behind": p99 > limit,
            }
        window = [s for s in samples if before["t"] <= s["t_s"] <= after["t"]]
        row["system"] = _system(window)
        figures.append(row)
    return figures, capacity(figures, capacity_factor)


def grown(before: dict[str, float], after: dict[str, float]) -> tuple[float, int]:
    """What the processes read at a step's end grew by since its start (all of it for
    one that started during the step), and how many read at the start had ended: their
    share of the step is not seen."""
    total = sum(value - before.get(pid, 0) for pid, value in after.items())
    return total, sum(1 for pid in before if pid not in after)


def _system(window: list[dict[str, Any]]) -> dict[str, Any]:
    def mean(key: str) -> float | None:
        values = [s[key] for s in window if s.get(key) is not None]
        return sum(values) / len(values) if values else None

    def peak(key: str) -> float | None:
        values = [s[key] for s in window if s.get(key) is not None]
        return max(values) if values else None

    return {
        "samples": len(window),
        "iowait_pct_mean": mean("cpu_iowait_pct"),
        "device_busy_pct_mean": mean("device_busy_pct"),
        "dirty_bytes_max": peak("dirty_bytes"),
        "writeback_bytes_max": peak("writeback_bytes"),
    }


def capacity(figures: list[dict[str, Any]], factor: float) -> dict[str, Any]:
    """The highest level (clients, or arrivals per second) whose step kept p95 within
    ``factor`` x the first step's p95 with no error, counting up from the first step."""
    if not figures or figures[0]["latency_ms"]["p95"] is None:
        return {"level": None, "reason": "the first step has no successful session"}
    base = figures[0]["latency_ms"]["p95"]
    best = None
    for row in figures:
        p95 = row["latency_ms"]["p95"]
        if row["errors"] or p95 is None or p95 > factor * base:
            break
        if row.get("generator", {}).get("behind"):  # a late generator offered less load
            break
        best = row
    rule = (
        f"the highest step whose p95 stayed within {factor:g}x the first step's "
        f"({base:.1f} ms) with no error, counting up from the first step and stopping "
        "at a step whose load generator fell behind its schedule"
    )
    if best is None:
        return {"level": None, "rule": rule, "reason": "the first step had errors"}
    return {
        "level": best["level"],
        "ops_per_s": best["ops_per_s"],
        "p95_ms": best["latency_ms"]["p95"],
        "rule": rule,
    }


ENGINE_NICE = -10
"""The load engine's CPU priority where it may be raised (root): above the clients and
servers it starts, which run at the ordinary 0, so that arrivals leave on schedule when
they fill the CPU (on two cores they do)."""


def engine_nice() -> int:
    return ENGINE_NICE if os.geteuid() == 0 else 0


def _engine_priority() -> None:
    os.setpriority(os.PRIO_PROCESS, 0, engine_nice())


def _engine(config: dict[str, Any], workdir: Path, sandbox: Sandbox) -> dict[str, Any] | None:
    config_path = workdir / "engine-config.json"
    config_path.write_text(json.dumps(config))
    out = workdir / "engine-out.json"
    # Its own session (its clients' processes with it): recorded, so that cleanup can end
    # it all if this process is killed.
    argv = [sys.executable, "-m", "vcsbench.load.engine", str(config_path), str(out)]
    external = bool(config.get("external_workers"))
    if config.get("workers"):
        bind = config["master_bind"]
        config["master_port"] = config.get("master_port") or servers.free_port(bind)
        argv += ["--master", str(config["workers"]), bind, str(config["master_port"])]
        if external:
            print(
                f"vcsbench load: Locust master on {bind}:{config['master_port']} waits for "
                f"{config['workers']} worker(s): on each machine run `vcsbench load-worker "
                f"{bind}:{config['master_port']}`",
                file=sys.stderr,
                flush=True,
            )
    proc = subprocess.Popen(argv, start_new_session=True, preexec_fn=_engine_priority)
    sandbox.record_process(proc.pid)
    workers = []
    try:
        for _ in range(0 if external else int(config.get("workers") or 0)):
            port = str(config["master_port"])
            home = str(sandbox.make_dir("vcsbench-clients-"))
            worker = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "vcsbench.load.engine",
                    "--worker",
                    servers.HOST,
                    port,
                    home,
                ],
                start_new_session=True,
                preexec_fn=_engine_priority,
            )
            sandbox.record_process(worker.pid)
            workers.append(worker)
        code = proc.wait()
        sandbox.forget_process(proc.pid)
        for worker in workers:  # the master's quit ends them
            try:
                worker.wait(timeout=30)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()
            sandbox.forget_process(worker.pid)
    except BaseException:
        for each in [proc, *workers]:
            each.terminate()
        for each in [proc, *workers]:
            try:
                each.wait(timeout=30)
            except subprocess.TimeoutExpired:
                each.kill()
                each.wait()
        raise
    if code != 0 or not out.exists():
        raise VcsbenchError(f"the load engine (Locust) exited {code}; its output is above")
    return _engine_out(workdir)


def _engine_out(workdir: Path) -> dict[str, Any] | None:
    """What the engine wrote: every step it finished (None before the first)."""
    out = workdir / "engine-out.json"
    if not out.exists():
        return None
    document: dict[str, Any] = json.loads(out.read_text())
    return document


def run_path(plan: LoadPlan, path: str, logs: Path) -> dict[str, Any]:
    """One access path's load, in a sandbox of its own."""
    from vcsbench.measure.sampler import SystemSampler

    vcs = path_vcs(path)
    payload = dict(load_payload(plan.payload).files)
    with open_sandbox(plan.fs) as sandbox:
        assert sandbox.info is not None
        workdir = Path(tempfile.mkdtemp(prefix="vcsbench-load-", dir=sandbox.root))
        repos = workdir / "repos"
        repos.mkdir()
        if path.startswith("apache-") and os.geteuid() == 0:  # Apache writes as its user
            import pwd

            user = pwd.getpwnam(servers.APACHE_USER)
            os.chmod(workdir, 0o711)  # mkdtemp's 0700 would keep it out
            os.chown(repos, user.pw_uid, user.pw_gid)
            closed = [d for d in workdir.parents if not os.stat(d).st_mode & 0o001]
            if closed:
                raise VcsbenchError(
                    f"{path} serves as {servers.APACHE_USER}, which cannot reach the sandbox: "
                    f"{closed[0]} is closed to others; use --fs tmpfs (or ext4, xfs, btrfs), "
                    "or a dir: sandbox below directories others may enter"
                )
        t0 = time.perf_counter()
        storm_files: dict[str, bytes] = {}
        shared_start: dict[str, bytes] = {}
        if plan.scenario == "clone-storm":
            storm_files = build_storm(path, repos, payload, plan.history)
        elif plan.scenario == "shared":
            shared_start = build_storm(path, repos, payload, 1, SHARED)
        elif plan.precreate:
            precreate(path, repos, plan.students)
        precreate_s = time.perf_counter() - t0
        server = None
        interrupted: KeyboardInterrupt | None = None
        url_base = ""
        if path == "svnserve":
            server = servers.svnserve(repos, logs, plan.port, plan.listen)
            url_base = server.url_base
        elif path == "git-daemon":
            server = servers.git_daemon(repos, logs, plan.port, plan.listen)
            url_base = server.url_base
        elif path.startswith("apache-"):
            server = servers.apache(repos, logs, plan.port, plan.listen)
            url_base = f"{server.url_base}/{path.removeprefix('apache-')}"
        sampler = SystemSampler(sandbox.info.device_stat_path, interval_s=0.25)
        config = {
            "scenario": plan.scenario,
            "path": path,
            "repos": str(repos),
            "url_base": url_base,
            "students": plan.students,
            "payload": plan.payload,
            "precreate": plan.precreate,
            "steps": plan.steps,
            "shape": plan.shape,
            "max_clients": plan.max_clients,
            "workers": plan.workers or plan.expect_workers,
            "external_workers": plan.expect_workers > 0,
            "master_bind": plan.master_bind,
            "master_port": plan.master_port,
            "step_seconds": plan.step_seconds,
            "step_ops": plan.step_ops,
            "storm_files": {rel: data.decode("latin-1") for rel, data in storm_files.items()},
            "device_stat": sandbox.info.device_stat_path,
            "server_session": None,
            "client_home": str(sandbox.make_dir("vcsbench-clients-")),
        }
        try:
            if server is not None:
                server.start()
                assert server.pid is not None
                sandbox.record_process(server.pid, server.group.path if server.group else None)
                config["server_session"] = server.pid  # a session leader: its id is its pid
                config["server_cgroup"] = str(server.group.path) if server.group else None
            sampler.start()
            try:
                document = _engine(config, workdir, sandbox)
            except KeyboardInterrupt as exc:  # keep the steps that finished, then stop
                interrupted = exc
                document = _engine_out(workdir)
            finally:
                samples = sampler.stop()
        finally:
            cpu_method = server.cpu_method if server is not None else ""
            if server is not None and server.pid is not None:
                pid = server.pid
                server.stop()
                sandbox.forget_process(pid)
        if document is None:
            raise interrupted or VcsbenchError("the load engine wrote no results")
        t1 = time.perf_counter()
        if plan.scenario == "deadline":
            verified, problems = verify(path, repos, document["records"], payload)
        elif plan.scenario == "shared":
            verified, problems = verify_shared(path, repos, document["records"], shared_start)
        else:  # each clone was checked after its session, untimed
            verified, problems = len(document["records"]["step"]), []
        verify_s = time.perf_counter() - t1
        # Apache's CGI daemon lets git http-backend's processes be reaped unseen, so
        # their writes are nobody's in /proc: the share is not known there.
        io_counted = path != "apache-git"
        figures, cap = step_figures(document, samples, plan.capacity_factor, io_counted)
        return {
            "path": path,
            "vcs": vcs,
            "server": None
            if server is None
            else {
                "name": server.name,
                "argv": shlex.join(server.argv),
                "log": str(server.log),
                "cpu": cpu_method,
            },
            "filesystem": sandbox.info.as_dict(),
            "steps": figures,
            "capacity": cap,
            "verified_repositories": verified,
            "verify_failures": problems[:20],
            "verify_failure_count": len(problems),
            "harness": {
                "precreate_s": precreate_s,
                "verify_s": verify_s,
                "engine_nice": engine_nice(),
                "engine_nice_note": "the load engine's CPU priority (nice); its clients "
                "and the servers run at 0",
            },
            "engine": document["engine"],
            "error_details": document["error_details"],
            "locust_workers": plan.workers or plan.expect_workers,
            "workers_lost": document.get("workers_lost", []),
            "raw": document["records"],
            "sampler": samples,
            "interrupted": interrupted,
        }


def run_load(plan: LoadPlan, out: Path, command: Sequence[str]) -> Run:
    """Run the plan over each access path; write the result file (what finished, on an
    interrupt or a failure, before re-raising it) and return it as the model reads it."""
    from vcsbench.measure.machine import machine_info

    # Absolute: servers resolve relative paths against their own roots (Apache's
    # ServerRoot), not against this directory.
    logs = out.resolve().with_name(out.name.removesuffix(".gz").removesuffix(".json") + "-logs")
    own_directory(logs, "the server log directory")
    loads = []
    interrupted: KeyboardInterrupt | None = None
    failed: VcsbenchError | None = None
    for path in plan.paths:
        print(f"vcsbench load: {plan.scenario} over {path} on {plan.fs}", file=sys.stderr)
        try:
            entry = run_path(plan, path, logs)
        except KeyboardInterrupt as exc:  # before this path finished a step
            interrupted = exc
            break
        except VcsbenchError as exc:  # keep the paths that finished, then say what failed
            failed = exc
            break
        interrupted = entry.pop("interrupted")
        loads.append(entry)
        if interrupted is not None:
            break
    document = {
        "vcsbench_load": {
            "schema_version": LOAD_SCHEMA,
            "command": shlex.join(command),
            "scenario": plan.scenario,
            "shape": plan.shape,
            "max_clients": plan.max_clients if plan.shape == "open" else None,
            "students": plan.students,
            "payload": plan.payload,
            "precreate": plan.precreate,
            "history": plan.history if plan.scenario == "clone-storm" else None,
            "step_seconds": plan.step_seconds,
            "step_ops": plan.step_ops,
            "capacity_factor": plan.capacity_factor,
            "latency": LATENCY[plan.shape],
            "machine": machine_info(),
            "loads": loads,
        }
    }
    if interrupted is not None:
        document["vcsbench_load"]["interrupted"] = (
            "the run was interrupted: the steps that finished are kept, the rest did not run"
        )
    if failed is not None:
        document["vcsbench_load"]["interrupted"] = (
            f"the run stopped at {plan.paths[len(loads)]}: {failed}; the paths before it are kept"
        )
    if loads:
        write_document(document, out)
        if interrupted is not None or failed is not None:
            print(f"vcsbench load: what finished is in {out}", file=sys.stderr)
    if interrupted is not None:
        raise interrupted
    if failed is not None:
        raise failed
    return parse(document, out)


LATENCY = {
    "closed": "each session's wall time, from its start to its end, measured by the load "
    "engine around the client's work (raw values kept in 'raw')",
    "open": "from each session's scheduled arrival to its end, the client's own preparation "
    "left out: waiting for a free client counts, so a stalled server shows in the "
    "percentiles (no coordinated omission); raw values kept in 'raw'",
}
