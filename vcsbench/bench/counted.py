"""Counted rounds: a benchmark's operation run again after its timed rounds, outside
them, each round counted whole -- what costs too much to count while a round is timed.

Two passes, each a process of the benchmark's interpreter running
:mod:`vcsbench.bench.countworker` in a directory of the benchmark's sandbox (the same
filesystem), each making the backend and operation anew:

- *instructions*: the process under valgrind's callgrind (:mod:`vcsbench.measure.instructions`),
  with a fixed hash seed (``PYTHONHASHSEED=0``: the same dictionaries iterate the same
  way in every run); each round's user-space instructions, its children's included;
- *system calls*: the process plain, every kind of call counted by the kernel
  (:mod:`vcsbench.measure.syscalls`) around each round's operation -- under valgrind they
  would be valgrind's too.

Each counted round is prepared and verified as a timed round is (a round that fails is
no count) and carries the planted work a timed round does. What the passes cost is
recorded with them.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from vcsbench.bench.plan import WorkerSpec
from vcsbench.bench.planted import Planted
from vcsbench.measure import instructions
from vcsbench.measure.syscalls import FAILED, KINDS
from vcsbench.results.counted import Counted

HOW = (
    "counted rounds after the timed ones, in a directory of the same sandbox, each a "
    "round of the operation prepared and verified as a timed round is (one more first in "
    "each process, not kept: it carries the process's one-time costs): instructions in "
    "user space by valgrind's callgrind (the operation's children each counted whole; a "
    "process started with PYTHONHASHSEED=0, instrumented from its first round where no "
    "round started a process), every kind of system call by the kernel's "
    "syscall tracepoints in a process of their own (under valgrind they would be "
    "valgrind's too)"
)
START_S = 120.0
"""What a counted pass's process may take beyond its rounds: an interpreter and a
library loaded under valgrind."""
SLOWDOWN = 200
"""How much slower than its timed median a round may run under callgrind before the pass
is stopped (callgrind runs Python 20-100x slower)."""


class CountFailed(Exception):
    """A counted pass failed as a whole; the message says how."""


def count_rounds(
    python: Path,
    worker: WorkerSpec,
    base: Path,
    rounds: int,
    layout: str,
    planted: Planted,
    round_s: float,
    instructions_too: bool = True,
) -> Counted:
    """``rounds`` counted rounds of ``worker``'s operation in ``base`` (two passes), each
    pass bounded by ``round_s`` (the timed rounds' median) times :data:`SLOWDOWN` a round;
    ``instructions_too`` False: the system calls' pass alone (what a bisection by a call's
    count needs), the instructions said to be not asked for."""
    started = time.perf_counter()
    kept = rounds
    rounds += 1  # the first is the process's warm-up: its one-time costs are not the operation's
    missing: dict[str, str] = {}
    values: dict[str, list[int | None]] = {}
    ok = [True] * rounds
    library: Path | None = None
    try:
        library = instructions.library()
    except instructions.Unavailable as exc:
        missing["instructions"] = str(exc)
    counting_instructions = library is not None and instructions_too
    if library is not None and not instructions_too:
        missing["instructions"] = "not asked for (the system calls alone were counted)"
    limit = START_S + rounds * max(round_s, 0.01) * SLOWDOWN
    kinds = (*KINDS, *FAILED)
    try:
        errors, calls, reason, _ = _pass(
            python, [], worker, base / "calls", rounds, layout, planted, library, "calls", limit
        )
        ok = [good and e is None for good, e in zip(ok, errors, strict=True)]
        # a round that started a process (or where none could be counted) is counted
        # from its process's start: its children must be instrumented from theirs
        children = bool(reason) or any(c is None or c["process_calls"] for c in calls)
        if reason:
            missing.update(dict.fromkeys(kinds, reason))
        else:
            for kind in kinds:
                values[kind] = [None if c is None else int(c[kind]) for c in calls]
    except CountFailed as exc:
        missing.update(dict.fromkeys(kinds, str(exc)))
        children = True
    if counting_instructions:
        out = Path(tempfile.mkdtemp(prefix="vcsbench-counted-"))
        try:
            errors, _, _, pid = _pass(
                python,
                instructions.command(out, children),
                worker,
                base / "instructions",
                rounds,
                layout,
                planted,
                library,
                "instructions",
                limit,
                out,
            )
            ok = [good and e is None for good, e in zip(ok, errors, strict=True)]
            values["instructions"] = instructions.read_counts(out, pid, rounds)
        except (CountFailed, ValueError, OSError) as exc:
            missing["instructions"] = str(exc)
        finally:
            shutil.rmtree(out, ignore_errors=True)  # made above, ours alone
    return Counted(
        ok=ok[-kept:],
        values={name: found[-kept:] for name, found in values.items()},
        missing=missing,
        seconds=time.perf_counter() - started,
        how=HOW,
    )


def _pass(
    python: Path,
    prefix: list[str],
    worker: WorkerSpec,
    base: Path,
    rounds: int,
    layout: str,
    planted: Planted,
    library: Path | None,
    mode: str,
    limit: float,
    out: Path | None = None,
) -> tuple[list[str | None], list[dict[str, int] | None], str, int]:
    """One pass: each round's error (None: it counted), its system calls (where counted),
    why none were counted (``""``: they were), and its process's id (its files' names)."""
    spec = {
        "worker": worker.to_json(),
        "base": str(base),
        "rounds": rounds,
        "layout": layout,
        "planted": planted.to_json(),
        "library": None if library is None else str(library),
        "mode": mode,
    }
    env = {**os.environ, instructions.ROUND_VAR: instructions.MAIN, "PYTHONHASHSEED": "0"}
    proc = subprocess.Popen(
        [*prefix, str(python), "-m", "vcsbench.bench.countworker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,  # a group of its own: it and all it started end together
    )
    try:
        stdout, stderr = proc.communicate(json.dumps(spec) + "\n", timeout=limit)
    except subprocess.TimeoutExpired:
        _end(proc)
        raise CountFailed(
            f"the {mode} pass took over {limit:,.0f} s for {rounds} rounds and was stopped"
        ) from None
    except BaseException:  # an interrupt: nothing of the pass outlives it
        _end(proc)
        raise
    errors: list[str | None] = ["not run"] * rounds
    calls: list[dict[str, int] | None] = [None] * rounds
    reason = ""
    for line in stdout.splitlines()[: rounds + 3]:
        message = json.loads(line)
        if "failed" in message:
            raise CountFailed(f"the {mode} pass could not start: {message['failed']}")
        if "round" in message and 0 <= int(message["round"]) < rounds:
            index = int(message["round"])
            errors[index] = message["error"]
            calls[index] = message["calls"]
        if "end" in message:
            reason = str(message["reason"])
    if proc.returncode != 0 and all(e == "not run" for e in errors):
        last = (stderr.strip().splitlines() or ["no output"])[-1]
        raise CountFailed(f"the {mode} pass exited with {proc.returncode}: {last}")
    if out is not None and mode == "instructions":
        _check_log(out, proc.pid)
    return errors, calls, reason, proc.pid


def _end(proc: subprocess.Popen[str]) -> None:
    """The pass's process group killed (valgrind, the interpreter under it and every
    command it started), and reaped."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()


def _check_log(out: Path, pid: int) -> None:
    """valgrind's own word on the counting process: an error there voids its counts."""
    log = out / f"valgrind.{pid}.log"
    if log.is_file():
        text = log.read_text(errors="replace")[:4096]
        for line in text.splitlines():
            if "unhandled" in line.lower() or "fatal" in line.lower():
                raise CountFailed(f"valgrind: {line.split('== ', 1)[-1].strip()}")
