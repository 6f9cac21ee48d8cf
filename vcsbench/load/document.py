"""A load run's result file as the run goes (:class:`LoadDocument`): the plan's facts
and each access path's entry, written again, whole and atomically, after every step."""

from __future__ import annotations

import platform
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vcsbench.errors import without_secrets
from vcsbench.load.figures import LATENCY
from vcsbench.load.plan import LoadPlan
from vcsbench.measure.machine import machine_info
from vcsbench.results.io import write_document
from vcsbench.results.load import LOAD_SCHEMA


class LoadDocument:
    """The load result file as the run goes: written again, whole and atomically, after
    every step, so that whatever stops the run keeps every step that finished."""

    def __init__(self, plan: LoadPlan, out: Path, command: Sequence[str], run_id: str) -> None:
        self.out = out
        self.facts: dict[str, Any] = {
            "schema_version": LOAD_SCHEMA,
            "run_id": run_id,
            "command": without_secrets(shlex.join(command)),
            "scenario": plan.scenario.name,
            "session": plan.scenario.describe(
                plan.payload, plan.precreate, plan.history, plan.into_term
            ),
            "shape": plan.shape,
            "max_clients": plan.max_clients if plan.shape == "open" else None,
            "arrivals": plan.arrivals.text if plan.shape == "open" else None,
            "think_s": list(plan.think) if plan.think[1] > 0 else None,
            "students": plan.students,
            "payload": plan.payload,
            "precreate": plan.precreate,
            "age": plan.age,
            "population": plan.population.text if plan.population else None,
            "into_term": plan.into_term,
            "history": plan.history if plan.scenario.clones_history else None,
            "mix": dict(plan.mix) if plan.mix else None,
            "step_seconds": plan.step_seconds,
            "step_ops": plan.step_ops,
            "capacity_factor": plan.capacity_factor,
            "latency": LATENCY[plan.shape],
            "machine": machine_info(),
            "node": platform.node(),
            "loads": [],
        }

    @property
    def loads(self) -> list[dict[str, Any]]:
        loads: list[dict[str, Any]] = self.facts["loads"]
        return loads

    def write(self) -> None:
        write_document({"vcsbench_load": self.facts}, self.out)

    def stopped(self, why: str) -> None:
        self.facts["interrupted"] = why
        self.write()
