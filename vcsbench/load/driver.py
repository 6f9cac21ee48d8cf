"""The load engine's processes as the run drives them: the engine (a local runner, or a
Locust master) asked one step at a time over a JSON line each way, and the Locust workers
this machine runs for a master. Each is recorded in the sandbox's state before it can
outlive the run, dies with the run's process, and is forgotten once it has ended."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import time
from collections.abc import Callable
from typing import Any

from vcsbench.errors import VcsbenchError
from vcsbench.load.engine_args import EngineArgs
from vcsbench.load.plan import LoadPlan
from vcsbench.process import die_with_parent, end_group_members
from vcsbench.sandbox import Sandbox
from vcsbench.servers.server import HOST

ENGINE_NICE = -10
"""The load engine's CPU priority where it may be raised (root): above the clients and
servers it starts, which run at the ordinary 0, so that arrivals leave on schedule when
they fill the CPU (on two cores they do)."""
ANSWER_S = 300.0
"""The longest the engine may take beyond a step's own time (its drain) to answer."""


def engine_nice() -> int:
    return ENGINE_NICE if os.geteuid() == 0 else 0


def _engine_child() -> None:
    """In the engine's process before it runs: its priority, and death with the run."""
    os.setpriority(os.PRIO_PROCESS, 0, engine_nice())
    die_with_parent()


class Engine:
    """The load engine's process, driven one request at a time (a JSON line each way).
    It is recorded in the sandbox's state (cleanup ends it after a SIGKILL of the run)
    and dies with the run's process."""

    def __init__(self, argv: list[str], sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=_engine_child,
        )
        sandbox.record_process(self.proc.pid)
        self._pending = b""

    def ask(
        self,
        request: dict[str, Any],
        timeout: float,
        live: Callable[[dict[str, Any]], None] | None = None,
    ) -> dict[str, Any]:
        """Send ``request``; the engine's answer, or its failure as one line. The live
        messages a step sends before its answer go to ``live`` (:mod:`vcsbench.load.live`);
        ``timeout`` is for the answer, however many came first."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(json.dumps(request).encode() + b"\n")
            self.proc.stdin.flush()
        except OSError:
            pass  # it is gone: said below, with its exit status
        deadline = time.monotonic() + timeout
        while True:
            line = self._line(deadline)
            if line is None:
                raise VcsbenchError(f"the load engine did not answer within {timeout:.0f} s")
            if not line:
                code = self.proc.wait()
                raise VcsbenchError(f"the load engine (Locust) exited {code}; its output is above")
            answer: dict[str, Any] = json.loads(line)
            if "live" not in answer:
                break
            if live is not None:
                live(answer["live"])
        if "error" in answer:
            raise VcsbenchError(f"the load engine failed: {answer['error']}")
        return answer

    def _line(self, deadline: float) -> bytes | None:
        """The engine's next line (b"": it ended; None: none by ``deadline``). Read from
        its descriptor into a buffer of this object's: several lines may come in one read
        (live messages, then the answer), which a select on the descriptor would not see
        waiting in a file object's buffer."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._pending:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return b""
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return line

    def close(self) -> None:
        """Ask it to quit (it closes its clients); end it if it does not."""
        if self.proc.poll() is None:
            try:
                self.ask({"quit": True}, 60)
                self.proc.wait(timeout=30)
            except (VcsbenchError, subprocess.TimeoutExpired, OSError):
                pass
        self.kill()

    def kill(self) -> None:
        """End it and its session (its clients) now, if it still runs."""
        if self.proc.poll() is None:
            for signum, wait_s in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 30.0)):
                try:
                    os.killpg(self.proc.pid, signum)
                    self.proc.wait(timeout=wait_s)
                    break
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    continue
        end_group_members(self.proc.pid)
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()
        self.sandbox.forget_process(self.proc.pid)


def start_workers(plan: LoadPlan, sandbox: Sandbox, port: int) -> list[subprocess.Popen[bytes]]:
    """The Locust worker processes this machine runs for the master (--workers)."""
    started = []
    for _ in range(plan.workers):
        home = str(sandbox.make_dir("vcsbench-clients-"))
        worker = subprocess.Popen(
            EngineArgs(host=HOST, port=port, worker=True, home=home).argv(),
            start_new_session=True,
            preexec_fn=_engine_child,
        )
        sandbox.record_process(worker.pid)
        started.append(worker)
    return started


def stop_workers(workers: list[subprocess.Popen[bytes]], sandbox: Sandbox) -> None:
    for worker in workers:  # the master's quit ends them
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()
        end_group_members(worker.pid)
        sandbox.forget_process(worker.pid)
