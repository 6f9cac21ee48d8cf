"""The measured process of a worker of another interpreter: a ``version=`` variant's
environment, or this one for a member of an interleaved group.

Run as ``<interpreter> -m vcsbench.bench.envworker`` by
:class:`vcsbench.bench.workers.EnvironmentSpawner`: it reads one JSON line (what to make:
a :class:`~vcsbench.bench.plan.WorkerSpec`; how: a :class:`~vcsbench.bench.plan.RoundPlan`;
the sandbox and workdir), then a request per block of rounds; it makes the backend and
operation with its interpreter's library, runs the rounds with the same
:class:`~vcsbench.bench.loop.RoundLoop` as every benchmark (probes, verification
in batches, the floor), and writes one JSON line per message on a
descriptor of its own (the library's prints go to stderr): the backend as it describes
itself, each round's record, and its end.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path
from typing import TextIO

from vcsbench.process import as_helper
from vcsbench.sandbox.state import adopt_run_token
from vcsbench.workload.contained import close_own_group


def main() -> None:
    as_helper()  # dies with the run that started it
    adopt_run_token()
    out: TextIO = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # anything printed is not a message
    spec = json.loads(sys.stdin.readline())

    from vcsbench.bench.plan import RoundPlan, WorkerSpec

    worker = WorkerSpec.from_json(spec["worker"])
    if worker.cpu is not None:  # the CPU every member of its group runs on
        os.sched_setaffinity(0, {worker.cpu})

    from vcsbench.backends import Variant
    from vcsbench.backends.reach import Remote
    from vcsbench.bench.loop import RoundLoop
    from vcsbench.bench.workers import WorkerEnd, encode
    from vcsbench.sandbox import SandboxInfo
    from vcsbench.workload.operations import make_operation
    from vcsbench.workload.payloads import load_payload

    def send(message: object) -> None:
        data = message if isinstance(message, dict) else encode(message)
        out.write(json.dumps(data) + "\n")
        out.flush()

    try:
        backend = Variant.parse(worker.variant).make(worker.options)
        backend.ready(Path(worker.temp_root))
        if worker.reach is not None:  # a remote variant: the server the parent started
            backend.reach(Remote.from_json(worker.reach))
        send({"backend": backend.describe()})
    except Exception as exc:  # the parent's word for it: the worker failed, and why
        send(WorkerEnd(0, 0, f"{type(exc).__name__}: {exc}"))
        os._exit(1)
    loop = RoundLoop(
        operation=make_operation(worker.op, backend, load_payload(worker.payload)),
        sandbox=SandboxInfo(**spec["sandbox"]),
        workdir=Path(spec["workdir"]),
        plan=RoundPlan.from_json(spec["plan"]),
        owner=worker.owner,
        attach=True,
    )
    loop.t0 = float(spec["t0"])  # perf_counter: one clock for every process here
    try:
        for line in sys.stdin:  # a request per block of rounds, until the parent closes it
            request = json.loads(line)
            if request.get("warmup"):
                loop.aside("warmup", int(request["warmup"]))
            loop.block(int(request["first"]), int(request["count"]), int(request["total"]), send)
    except BaseException as exc:
        with contextlib.suppress(BaseException):
            send(WorkerEnd(0, 0, f"{type(exc).__name__}: {exc}"))
        _leave(1)
    _leave(0)


def _leave(code: int) -> None:
    """End without exit handlers (the parent's closers are not this process's), the
    command group it made removed first."""
    with contextlib.suppress(BaseException):
        close_own_group()
    os._exit(code)


if __name__ == "__main__":
    main()
