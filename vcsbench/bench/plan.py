"""What a benchmark is and how its rounds run, decided once per case and carried as typed
objects: to the round loop (:class:`~vcsbench.bench.loop.RoundLoop`), and across
the one process boundary that needs text -- a worker of another interpreter
(:mod:`vcsbench.bench.envworker`) -- serialized once, as JSON, and read back checked.

- :class:`RoundPlan`: the rounds and their treatment (cache, verification, the
  repositories present first, layout, worker recycling, warm-up, time budget, the
  collector, a known delay).
- :class:`WorkerSpec`: what a worker of another interpreter makes to run those rounds
  (the variant without its release, its options, the operation and payload) and where
  (the sandbox's temp root, a CPU, a remote variant's server and the user it writes as).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from vcsbench.bench.planted import Planted
from vcsbench.bench.policy import CACHE_STATES, KeptPolicy, VerifyPolicy
from vcsbench.errors import VcsbenchError
from vcsbench.workload.population import Population


@dataclass(frozen=True)
class RoundPlan:
    """How a benchmark's rounds run."""

    rounds: int
    cache: str = "warm"
    verify: VerifyPolicy = field(default_factory=VerifyPolicy)
    age: int = 0
    """Repositories to fill the sandbox with before the first round (untimed)."""
    population: Population | None = None
    """What those repositories are (``--age term:...``); None: alike, as created."""
    layout: str = "flat"
    recycle: int = 0
    """Rounds per worker process (a new one for each K rounds); 0, or at least the
    benchmark's rounds: all in one."""
    warmup: int = 0
    """Rounds run first, in a directory of their own, verified and discarded."""
    budget_s: float | None = None
    """Run no more rounds than fit in this many seconds of the benchmark, as projected
    after each batch from the rounds so far (never fewer than ``min_rounds``)."""
    min_rounds: int = 1
    gc_off: bool = False
    """Python's collector held off inside the timed region (and run before it)."""
    delay_ns: int = 0
    """A known wait added inside every timed call, after the operation (``delay=``)."""
    planted: Planted = field(default_factory=Planted)
    """Known work added inside every timed call, after the operation (``work=``,
    ``syncs=``), and in every counted round."""
    counted: int = 0
    """Counted rounds after the timed ones (``--counted``): instructions under callgrind,
    and every kind of system call, each round counted whole; 0: none."""
    counted_instructions: bool = True
    """Whether counted rounds count instructions too (False: the system calls alone, a
    pass without valgrind: a bisection by a call's count)."""
    kept: KeptPolicy = field(default_factory=lambda: KeptPolicy(off=True))
    """Which repositories are maintained after the last round, in the run's own process
    (never a worker's: not carried across the boundary)."""

    def __post_init__(self) -> None:
        if self.cache not in CACHE_STATES:
            raise VcsbenchError(f"cache {self.cache!r} is not one of {', '.join(CACHE_STATES)}")

    def with_rounds(self, rounds: int) -> RoundPlan:
        return replace(self, rounds=rounds)

    def to_json(self) -> dict[str, Any]:
        """For a worker of another interpreter. The repositories present first are filled
        in the run's own process before any worker starts: a worker needs their number
        (where its rounds' repositories go), not what they are."""
        return {
            "rounds": self.rounds,
            "cache": self.cache,
            "verify": str(self.verify),
            "age": self.age,
            "layout": self.layout,
            "recycle": self.recycle,
            "warmup": self.warmup,
            "budget_s": self.budget_s,
            "min_rounds": self.min_rounds,
            "gc_off": self.gc_off,
            "delay_ns": self.delay_ns,
            "planted": self.planted.to_json(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RoundPlan:
        budget = data["budget_s"]
        return cls(
            rounds=int(data["rounds"]),
            cache=str(data["cache"]),
            verify=VerifyPolicy.parse(str(data["verify"])),
            age=int(data["age"]),
            layout=str(data["layout"]),
            recycle=int(data["recycle"]),
            warmup=int(data["warmup"]),
            budget_s=None if budget is None else float(budget),
            min_rounds=int(data["min_rounds"]),
            gc_off=bool(data["gc_off"]),
            delay_ns=int(data["delay_ns"]),
            planted=Planted.from_json(data["planted"]),
        )


@dataclass(frozen=True)
class WorkerSpec:
    """What a worker process of another interpreter makes, and where it runs."""

    variant: str
    """The variant's text without its release (the environment is the release)."""
    options: dict[str, str]
    op: str
    payload: str
    temp_root: str
    cpu: int | None = None
    """The CPU every member of an interleaved group runs on."""
    reach: dict[str, Any] | None = None
    """A remote variant's server, as the parent started it."""
    owner: tuple[int, int] | None = None
    """Whose each round's repository is made (the user a remote variant's server writes as)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "options": dict(self.options),
            "op": self.op,
            "payload": self.payload,
            "temp_root": self.temp_root,
            "cpu": self.cpu,
            "reach": self.reach,
            "owner": None if self.owner is None else list(self.owner),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> WorkerSpec:
        owner = data["owner"]
        return cls(
            variant=str(data["variant"]),
            options={str(k): str(v) for k, v in data["options"].items()},
            op=str(data["op"]),
            payload=str(data["payload"]),
            temp_root=str(data["temp_root"]),
            cpu=None if data["cpu"] is None else int(data["cpu"]),
            reach=data["reach"],
            owner=None if owner is None else (int(owner[0]), int(owner[1])),
        )
