"""The process of a counted pass: rounds of a benchmark's operation, outside its timed
rounds, each counted whole (:mod:`vcsbench.bench.counted` starts it and reads it).

Run as ``<interpreter> -m vcsbench.bench.countworker`` -- under callgrind for the
instructions, plainly for the system calls of every kind -- it reads one JSON line (what
to make: a :class:`~vcsbench.bench.plan.WorkerSpec`; where; how many rounds; the planted
work), makes the backend and operation with its interpreter's library, and runs the
rounds in a directory of their own: each prepared, its operation (and the planted work,
as a timed round has it) between the counter's bounds, then verified. It writes one
JSON line per round on a descriptor of its own (the library's prints go to stderr): its
error or None, and the system calls it made where those are counted.
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
    as_helper()
    adopt_run_token()
    out: TextIO = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    spec = json.loads(sys.stdin.readline())

    from vcsbench.backends import Variant
    from vcsbench.backends.reach import Remote
    from vcsbench.bench.plan import WorkerSpec
    from vcsbench.bench.planted import Planted
    from vcsbench.bench.trouble import describe
    from vcsbench.measure.instructions import Counter
    from vcsbench.measure.syscalls import SyscallCounter
    from vcsbench.workload.operation import RoundPaths
    from vcsbench.workload.operations import make_operation
    from vcsbench.workload.payloads import load_payload

    def send(message: dict[str, object]) -> None:
        out.write(json.dumps(message) + "\n")
        out.flush()

    worker = WorkerSpec.from_json(spec["worker"])
    base = Path(spec["base"])
    rounds = int(spec["rounds"])
    layout = str(spec["layout"])
    planted = Planted.from_json(spec["planted"])
    counter = Counter(Path(spec["library"])) if spec["library"] else None
    calls = SyscallCounter() if spec["mode"] == "calls" else None
    try:
        backend = Variant.parse(worker.variant).make(worker.options)
        backend.ready(Path(worker.temp_root))
        if worker.reach is not None:
            backend.reach(Remote.from_json(worker.reach))
        operation = make_operation(worker.op, backend, load_payload(worker.payload))
        for container in ("repos", "checkouts", "scratch"):
            (base / container).mkdir(parents=True)
    except Exception as exc:
        send({"failed": describe(exc)})
        _leave(1)
    send({"counting": counter is not None and counter.counting})
    for index in range(rounds):
        paths = RoundPaths.of(base, index, layout)
        error = None
        before = after = None
        try:
            paths.scratch.mkdir()
            paths.repo.parent.mkdir(parents=True, exist_ok=True)
            operation.prepare(paths)
        except Exception as exc:
            error = f"prepare: {describe(exc)}"
        if error is None:
            before = calls.read() if calls is not None else None
            if counter is not None:
                counter.start(index)
            try:
                operation.run(paths)
                planted.run(paths, counter)
            except Exception as exc:
                error = describe(exc)
            finally:
                if counter is not None:
                    counter.end()
            after = calls.read() if calls is not None else None
        elif counter is not None:  # its part is written all the same, in the rounds' order
            counter.start(index)
            counter.end()
        if error is None:
            try:
                problems = operation.verify_many([paths])[0]
            except Exception as exc:
                problems = [f"the verifier failed: {describe(exc)}"]
            if problems:
                error = "verify: " + "; ".join(problems[:3])
        values = {k: after[k] - before[k] for k in after} if before is not None and after else None
        send({"round": index, "error": error, "calls": values})
    send({"end": True, "reason": calls.reason if calls is not None else ""})
    _leave(0)


def _leave(code: int) -> None:
    with contextlib.suppress(BaseException):
        close_own_group()
    os._exit(code)


if __name__ == "__main__":
    main()
