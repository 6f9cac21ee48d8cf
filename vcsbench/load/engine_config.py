"""What the load engine is told about the run, once, as its first message: typed here, and
serialized in one place for the process boundary (the run to its engine, a Locust master
to its workers). Kept apart from ``engine.py``, which patches the standard library for
gevent when imported."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from vcsbench.load.paths import AccessPath


@dataclass(frozen=True)
class EngineConfig:
    """The run's plan as one engine (or one Locust worker) needs it: what its sessions
    are, where the repositories and the server are, and what its counters read."""

    scenario: str
    path: AccessPath
    repos: str
    """Where the repositories are (the sandbox's directory of them)."""
    students: int
    payload: str
    precreate: bool
    steps: tuple[float, ...]
    shape: str
    """closed (a level is a number of clients) or open (arrivals a second)."""
    max_clients: int
    step_seconds: float
    step_ops: int | None = None
    arrivals: str = "fixed"
    """Open loop: ``fixed`` (evenly spaced) or ``poisson`` (exponential gaps, seeded)."""
    arrival_seed: int = 1
    think_min_s: float = 0.0
    think_max_s: float = 0.0
    """Closed loop: each client's pause between its sessions, drawn evenly in between."""
    mix: tuple[tuple[str, int], ...] = ()
    """Mixed: each kind and its weight (``--mix``)."""
    url_base: str = ""
    client_env: Mapping[str, str] = field(default_factory=dict)
    ca_file: str | None = None
    start: Mapping[str, bytes] = field(default_factory=dict)
    """The files the repositories start with (what a clone must hold)."""
    workers: int = 0
    """Locust workers (0: every user in the engine's process)."""
    external_workers: bool = False
    """Workers started by hand on other machines (they get longer to connect)."""
    worker_index: int = 0
    """Which worker this is (a worker's copy, from its master)."""
    device_stat: str | None = None
    throttle_device: str | None = None
    server_session: int | None = None
    """The server's session leader (its processes are the server's work)."""
    server_cgroup: str | None = None
    client_home: str = ""
    """Where the clients work (made and recorded by the run)."""
    term: bool = False
    """Each student's repository is its own of the term, with history (``--age
    term:...``): a first visit checks it out and commits into it."""

    @property
    def open_loop(self) -> bool:
        return self.shape == "open"

    @property
    def pool(self) -> int:
        """Clients made before the first step: the most that can be in flight at once."""
        return self.max_clients if self.open_loop else int(max(self.steps))

    def for_worker(self, index: int, workers: int) -> EngineConfig:
        return replace(self, worker_index=index, workers=workers)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["path"] = self.path.to_json()
        data["steps"] = list(self.steps)
        data["client_env"] = dict(self.client_env)
        data["start"] = {rel: raw.decode("latin-1") for rel, raw in self.start.items()}
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EngineConfig:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"engine configuration: unknown keys {unknown}")
        values = dict(data)
        values["path"] = AccessPath.from_json(data["path"])
        values["steps"] = tuple(float(s) for s in data["steps"])
        values["mix"] = tuple((str(kind), int(weight)) for kind, weight in data.get("mix", ()))
        values["start"] = {rel: text.encode("latin-1") for rel, text in data["start"].items()}
        return cls(**values)
