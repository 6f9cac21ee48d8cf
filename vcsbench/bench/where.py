"""Where a benchmark's rounds run outside this process: a worker of another interpreter
(a ``version=`` variant's environment, or this one for a member of an interleaved group),
and the process its counted rounds run in -- each made from the same
:class:`~vcsbench.bench.plan.WorkerSpec`."""

from __future__ import annotations

import sys
from pathlib import Path

from vcsbench.backends import Backend, Variant
from vcsbench.bench.envs import environment_of
from vcsbench.bench.plan import RoundPlan, WorkerSpec
from vcsbench.errors import Refusal
from vcsbench.workload.operations import OperationSpec

BuiltIn = tuple[OperationSpec, str] | None
"""The built-in operation and payload a benchmark runs; None: a benchmark of your own."""


def worker_of(
    variant: Variant, vcs: Backend, root: Path, built_in: BuiltIn, cpu: int | None
) -> tuple[Path | None, WorkerSpec | None]:
    """Where a member's rounds run: (the interpreter of its worker process, what that
    worker makes), or (None, None) for this process. A ``version=`` variant's rounds
    run in its environment; a member of an interleaved group (``cpu``: the CPU they all
    run on) in a worker of its own."""
    found = environment_of(variant)
    if found is None and cpu is None:
        return None, None
    if built_in is None:
        raise Refusal(
            f"{variant.text}: a version= variant runs vcsbench's built-in "
            "operations (vcsbench.operation(...)); a benchmark of your own runs on this "
            "process's library"
        )
    spec = _spec(variant, vcs, root, built_in, cpu)
    return (found.python if found is not None else Path(sys.executable)), spec


def counting_of(
    variant: Variant, vcs: Backend, root: Path, built_in: BuiltIn, plan: RoundPlan
) -> tuple[Path, WorkerSpec] | str:
    """How a member's counted rounds are made: the interpreter of their process (its
    environment's, for a ``version=`` variant) and what that process makes; or why
    there are none."""
    if not plan.counted:
        return "no counted rounds were asked (--counted 0)"
    if built_in is None:
        return (
            "a benchmark of your own is counted in its timed rounds only: counted rounds "
            "make vcsbench's built-in operations anew in a process of their own"
        )
    found = environment_of(variant)
    spec = _spec(variant, vcs, root, built_in, None)
    return (found.python if found is not None else Path(sys.executable)), spec


def _spec(
    variant: Variant, vcs: Backend, root: Path, built_in: tuple[OperationSpec, str], cpu: int | None
) -> WorkerSpec:
    """What a process of another interpreter makes to run a member's rounds."""
    op, payload = built_in
    return WorkerSpec(
        variant=variant.plain.text,
        options=dict(vcs.options),
        op=op.text,
        payload=payload,
        temp_root=str(root),
        cpu=cpu,
    )
