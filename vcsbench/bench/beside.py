"""What a benchmark's result records beside its rounds and is made before them: a remote
variant's server, and the harness timed against a bare loop of the same calls."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import replace

from vcsbench.backends import Backend, Variant
from vcsbench.bench.rounds import BenchmarkRun
from vcsbench.sandbox import Sandbox
from vcsbench.workload.operation import Operation

ROUNDS_BESIDE = 50
"""Rounds per block of the perturbation measured beside a benchmark (--perturbation on)."""


def serve(
    stack: ExitStack, variant: Variant, vcs: Backend, run: BenchmarkRun, sandbox: Sandbox
) -> dict[str, object] | None:
    """A remote variant's server over ``run``'s repositories until ``stack`` closes, the
    backend (and a worker's) told where it is; what the result records of it."""
    from vcsbench.bench.remote import served

    serving = stack.enter_context(served(variant, vcs, run.workdir, sandbox))
    if serving is None:
        return None
    described_server, run.owner = serving
    if not isinstance(run.counting, str):
        run.counting = (
            "a remote variant is not counted: its server's work is another process's, "
            "outside the counted rounds"
        )
    if run.worker is not None:
        assert vcs.remote is not None
        run.worker = replace(run.worker, reach=vcs.remote.to_json())
    return described_server


def perturbation_beside(
    label: str,
    make: Callable[[], Operation],
    variant: str,
    run: BenchmarkRun,
    server: dict[str, object] | None,
    mode: str,
    once: dict[str, dict[str, object]],
) -> dict[str, object] | None:
    """The harness timed against a bare loop of the same calls (``--perturbation``),
    before the benchmark's rounds (no sampler, no timed round yet) in its sandbox, beside
    its work directory (``WORKDIR-perturbation``): for every benchmark (on, at most 50
    rounds a block), or beside the first of each backend variant within about a second
    (once, the default, remembered in ``once``; its later benchmarks record that figure
    and where it was measured). A check that fails is recorded as such; the benchmark's
    own rounds say what is wrong. Not where the rounds run elsewhere (a worker, a
    server): a bare loop here would not be their like."""
    from vcsbench.bench.perturbation import BLOCKS_BESIDE, BUDGET_ONCE_S, OverBudget, measure

    if run.environment is not None:
        return {
            "label": label,
            "error": "not measured: the rounds run in the variant's environment, the "
            "check in this process",
        }
    if server is not None:
        return {
            "label": label,
            "error": "not measured: the rounds reach their repositories through the "
            "variant's server, a bare loop of the calls would not",
        }
    if mode == "off":
        return None
    if mode == "once" and variant in once:
        return {**once[variant], "once": True}
    try:
        found = measure(
            make,
            run.sandbox,
            run.workdir.with_name(f"{run.workdir.name}-perturbation"),
            label,
            blocks=BLOCKS_BESIDE,
            rounds=max(1, min(ROUNDS_BESIDE, run.plan.rounds)),
            budget_s=BUDGET_ONCE_S if mode == "once" else None,
        ).describe()
    except OverBudget as exc:
        found = {"label": label, "error": f"not measured: {exc}"}
    except Exception as exc:  # a full sandbox, a failing backend: its rounds will tell
        found = {"label": label, "error": f"{type(exc).__name__}: {exc}"}
    if mode == "once":
        once[variant] = found
        found = {**found, "once": True}
    return found
