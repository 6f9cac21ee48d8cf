"""A load run's plan: its options, defined once, and what they name parsed once into
objects -- the access paths (:class:`AccessPath`), the scenario, the sandbox's spec.

The options are defined once in :mod:`vcsbench.load.options` (``vcsbench load``'s
parser and a study's plan read the same table); :meth:`LoadPlan.parse` checks every
value here, before anything is made, each refusal one line naming the value.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from vcsbench.backends import backend_class, split_list
from vcsbench.errors import VcsbenchError
from vcsbench.load.live import MODES as LIVE_MODES
from vcsbench.load.options import FAIL_ON, LOAD_OPTIONS, SHAPES
from vcsbench.load.paths import AccessPath, parse_path
from vcsbench.load.scenario import Scenario
from vcsbench.load.scenarios import MIX_KINDS, SCENARIOS
from vcsbench.results.deadline import Deadline
from vcsbench.results.load import MAX_WEIGHT, Arrivals
from vcsbench.sandbox import FsSpec, parse_fs_spec, require_root
from vcsbench.servers.distance import Distance, parse_bandwidth, parse_rtts, toxiproxy_binary
from vcsbench.servers.server import HOST, check_host, check_port
from vcsbench.workload.payloads import payload_names
from vcsbench.workload.population import Population, parse_age


@dataclass(frozen=True)
class LoadPlan:
    """What a load run does, checked: every field an object or a number, never text to
    be parsed again downstream."""

    scenario: Scenario
    paths: tuple[AccessPath, ...]
    fs: FsSpec
    students: int
    steps: tuple[float, ...]
    """Closed loop: clients at once, per step; open loop: arrivals per second."""
    step_seconds: float
    step_ops: int
    payload: str
    precreate: bool
    capacity_factor: float
    port: int = 0
    shape: str = "closed"
    arrivals: Arrivals = field(default_factory=Arrivals)
    """Open loop: evenly spaced, or Poisson's exponential gaps from a seeded source."""
    think: tuple[float, float] = (0.0, 0.0)
    """Closed loop: each client's pause between its sessions, drawn evenly in (lo, hi)."""
    mix: tuple[tuple[str, int], ...] = ()
    """Mixed: each kind of session and its weight (``--mix``); () for another scenario."""
    max_clients: int = 64
    history: int = 100
    workers: int = 0
    """Locust worker processes on this machine (0: one process runs every user)."""
    expect_workers: int = 0
    """Locust workers started elsewhere (``vcsbench load-worker``) that the master waits for."""
    master_bind: str = HOST
    master_port: int = 0
    listen: str = HOST
    fail_on: str = ""
    live: str = "auto"
    """How a running step is shown (:mod:`vcsbench.load.live`)."""
    distances: tuple[Distance | None, ...] = (None,)
    """The distances every server path is run at (None: direct, no proxy)."""
    deadline: Deadline | None = None
    """``--plan``: the submissions and window the summary's capacity plan is for."""
    age: int = 0
    """Repositories the server holds before the load (``--age``)."""
    population: Population | None = None
    """What they are (``--age term:...``); None: alike, as created."""

    @property
    def locust_workers(self) -> int:
        return self.workers or self.expect_workers

    @property
    def into_term(self) -> bool:
        """The students commit into their own repositories of the term (``--age
        term:...`` with a scenario of students' repositories), not into new ones."""
        return self.population is not None and self.scenario.students_repositories

    @classmethod
    def from_getter(cls, get: Callable[[str], Any]) -> LoadPlan:
        """Parse from ``get(dest)`` (an argparse namespace's values)."""
        return cls.parse(**{o.dest: get(o.dest) for o in LOAD_OPTIONS})

    @classmethod
    def parse(cls, **given: Any) -> LoadPlan:
        """A plan from option values (by ``dest``; the table's default for each one not
        given), every value checked."""
        values = {o.dest: given.get(o.dest, o.default) for o in LOAD_OPTIONS}
        unknown = set(given) - set(values)
        if unknown:
            raise TypeError(f"not load options: {sorted(unknown)}")
        scenario = SCENARIOS.get(values["scenario"])
        if scenario is None:
            raise VcsbenchError(
                f"scenario {values['scenario']!r} is not known; use {', '.join(SCENARIOS)}"
            )
        names = split_list(str(values["paths"]))  # a variant's options: commas in brackets
        if not names:
            raise VcsbenchError("--paths is empty; give e.g. svnserve,git-daemon,local:svn-fs")
        paths = tuple(parse_path(name) for name in names)
        fs = parse_fs_spec(values["fs"])
        require_root(fs)
        shape = values["shape"]
        if shape not in SHAPES:
            raise VcsbenchError(f"--shape {shape!r} is not known; use {' or '.join(SHAPES)}")
        steps = _steps(str(values["steps"]), shape)
        arrivals = parse_arrivals(str(values["arrivals"]), shape)
        think = parse_think(str(values["think"]), shape)
        mix = parse_mix(str(values["mix"]), paths) if scenario.name == "mixed" else ()
        max_clients = int(values["max_clients"])
        clients = int(max(steps)) if shape == "closed" else max_clients
        if max_clients < 1:
            raise VcsbenchError(f"--max-clients {max_clients} must be >= 1")
        students = int(values["students"])
        if students < clients:
            raise VcsbenchError(
                f"--students {students} is fewer than the {clients} clients that may be busy "
                "at once; each client serves a different student at a time"
            )
        workers, expect = int(values["workers"]), int(values["expect_workers"])
        _check_workers(workers, expect, paths, values)
        if int(values["history"]) < 1:
            raise VcsbenchError(f"--history {values['history']} must be >= 1 (revisions to clone)")
        if float(values["step_seconds"]) <= 0:
            raise VcsbenchError(f"--step-seconds {values['step_seconds']} must be > 0")
        if values["payload"] not in payload_names():
            raise VcsbenchError(
                f"payload {values['payload']!r} is not known; use {', '.join(payload_names())}"
            )
        if float(values["capacity_factor"]) <= 1:
            raise VcsbenchError(
                f"--capacity-factor {values['capacity_factor']} must be > 1, like 2"
            )
        port = int(values["port"])
        if port:
            if len([p for p in paths if not p.local]) > 1:
                raise VcsbenchError("--port applies to one server path at a time; leave it out")
            check_port(port)
        distances = _distances(str(values["rtt"]), str(values["bandwidth"]), paths)
        present, population = parse_age(str(values["age"]))
        if population is not None and scenario.students_repositories:
            if students > population.repos:
                raise VcsbenchError(
                    f"--students {students} is more than the {population.repos:,} "
                    f"repositories of --age {population.text}: each student commits into "
                    "a repository of the term; give as many students or fewer"
                )
            if values["precreate"]:
                raise VcsbenchError(
                    f"--precreate makes new repositories; with --age {population.text} the "
                    "students commit into their own repositories of the term: leave it out"
                )
        if values["live"] not in LIVE_MODES:
            raise VcsbenchError(
                f"--live {values['live']!r} is not known; use {', '.join(LIVE_MODES)}"
            )
        if values["fail_on"] not in FAIL_ON:
            raise VcsbenchError(f"--fail-on {values['fail_on']!r} is not known; use errors")
        return cls(
            scenario=scenario,
            paths=paths,
            fs=fs,
            students=students,
            steps=steps,
            step_seconds=float(values["step_seconds"]),
            step_ops=int(values["step_ops"]),
            payload=str(values["payload"]),
            precreate=bool(values["precreate"]),
            capacity_factor=float(values["capacity_factor"]),
            port=port,
            shape=shape,
            arrivals=arrivals,
            think=think,
            mix=mix,
            max_clients=max_clients,
            history=int(values["history"]),
            workers=workers,
            expect_workers=expect,
            master_bind=str(values["master_bind"]),
            master_port=int(values["master_port"]),
            listen=str(values["listen"]),
            fail_on=str(values["fail_on"]),
            live=str(values["live"]),
            distances=distances,
            deadline=Deadline.parse(str(values["plan"])) if values["plan"] else None,
            age=present,
            population=population,
        )


def _distances(
    rtt: str, bandwidth: str, paths: tuple[AccessPath, ...]
) -> tuple[Distance | None, ...]:
    if not rtt:
        if bandwidth:
            raise VcsbenchError("--bandwidth goes with --rtt (give --rtt 0 for none)")
        return (None,)
    local = [p for p in paths if p.local]
    if local:
        raise VcsbenchError(
            f"--rtt puts a distance between clients and a server; {local[0].name} has none "
            "(its clients work on the repositories directly): leave it out of --paths"
        )
    kbit = parse_bandwidth(bandwidth) if bandwidth else None
    toxiproxy_binary()  # installed, or one line now rather than after the first path
    return tuple(Distance(ms, kbit) for ms in parse_rtts(rtt))


def parse_arrivals(text: str, shape: str) -> Arrivals:
    """``fixed`` or ``poisson[:SEED]``: the open loop's arrivals and their seed."""
    found = Arrivals.parse(text)
    if found is None:
        raise VcsbenchError(
            f"--arrivals {text!r} is not known; use fixed, poisson or poisson:SEED (a whole number)"
        )
    if found.kind == "poisson" and shape != "open":
        raise VcsbenchError(
            "--arrivals poisson is for the open loop (--shape open): a closed loop's clients "
            "start their next session when the last ends"
        )
    return found


def parse_think(text: str, shape: str) -> tuple[float, float]:
    """``S`` or ``LO-HI`` seconds: a closed loop's pause between a client's sessions."""
    lo, sep, hi = text.strip().partition("-")
    try:
        pair = (float(lo), float(hi if sep else lo))
    except ValueError:
        pair = (-1.0, -1.0)
    if not all(0 <= x <= 3600 for x in pair) or pair[0] > pair[1]:
        raise VcsbenchError(
            f"--think {text!r} is not a pause; give seconds S or LO-HI, from 0 to 3600, "
            "like 2 or 1-5"
        )
    if pair[1] > 0 and shape != "closed":
        raise VcsbenchError(
            "--think is for the closed loop: an open loop's arrivals come on their schedule "
            "whatever a client did last (--arrivals poisson spaces them as users arrive)"
        )
    return pair


def parse_mix(text: str, paths: tuple[AccessPath, ...]) -> tuple[tuple[str, int], ...]:
    """``KIND=WEIGHT,...`` (kinds: commit, update, clone; whole weights, their shares of the
    sessions), every kind once; a local path must have the calls its kinds need."""
    found: dict[str, int] = {}
    for part in text.split(","):
        kind, sep, weight = part.strip().partition("=")
        if not sep or kind not in MIX_KINDS or not weight.isdigit() or kind in found:
            raise VcsbenchError(
                f"--mix {text!r}: {part.strip()!r} is not a kind and its weight; give each of "
                f"{', '.join(MIX_KINDS)} at most once with a whole weight, like "
                "commit=80,update=15,clone=5"
            )
        found[kind] = int(weight)
    if not 0 < sum(found.values()) or max(found.values()) > MAX_WEIGHT:
        raise VcsbenchError(
            f"--mix {text!r}: the weights must add up to more than 0, each at most {MAX_WEIGHT}"
        )
    needs = {"update": "update", "clone": "clone"}
    for path in paths:
        if not path.local:
            continue
        calls = backend_class(path.backend).capabilities
        for kind, share in found.items():
            call = needs.get(kind)
            if (
                share
                and call
                and call not in calls
                and not (call == "clone" and "checkout" in calls)
            ):
                raise VcsbenchError(
                    f"--mix {text!r}: {path.name} has no {call}; give it a weight of 0 or "
                    "leave it out for that path"
                )
    return tuple((kind, weight) for kind, weight in found.items() if weight)


def _steps(text: str, shape: str) -> tuple[float, ...]:
    what = (
        "client counts >= 1, like 1,2,4,8"
        if shape == "closed"
        else "arrival rates per second > 0, like 2,20"
    )
    try:
        steps = tuple(float(s) if shape == "open" else int(s) for s in text.split(","))
    except ValueError:
        steps = ()
    if not steps or any(s <= 0 for s in steps):
        raise VcsbenchError(f"--steps {text!r} is not a list of {what}")
    return steps


def _check_workers(
    workers: int, expect: int, paths: tuple[AccessPath, ...], values: dict[str, Any]
) -> None:
    if workers < 0 or expect < 0:
        raise VcsbenchError("--workers and --expect-workers must be >= 0")
    if workers and expect:
        raise VcsbenchError(
            "give --workers (worker processes here) or --expect-workers (workers started "
            "elsewhere with vcsbench load-worker), not both"
        )
    local = [p for p in paths if p.local]
    if expect and local:
        raise VcsbenchError(
            f"access path {local[0].name} works on this machine's files; workers started "
            "elsewhere can use the server paths only"
        )
    check_host(values["listen"], "--listen")
    if expect:
        check_host(values["master_bind"], "--master-bind")
        if values["master_port"]:
            check_port(int(values["master_port"]), values["master_bind"], "--master-port")
    elif values["master_port"] or values["master_bind"] != HOST:
        raise VcsbenchError("--master-bind and --master-port go with --expect-workers")
    if (workers or expect) and values["step_ops"]:
        raise VcsbenchError("--step-ops works with one Locust process; leave out --workers")
