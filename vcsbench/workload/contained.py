"""A user's command, contained: every process it starts in a cgroup of the run's own, a
time limit on each call, and whatever it leaves running ended as soon as it exits.

The command is the user's (``vcsbench time``'s COMMAND, ``--prepare``, ``--check``), so it
may fork a daemon, or never exit. Each call is started from inside the run's command group
(cgroup v2, its name holding the run's token: ``vcsbench-cmd-PID-TOKEN``): this process
steps into the group for the ``fork`` alone and back out, so the command is in the group
from its first instruction and so is everything it starts, whatever session it makes.
Where there is no cgroup v2 to use (not root), the command leads a session of its own and
what is left of that session is ended instead. A call that outlives its limit is ended
with everything it started; the round is an error. ``vcsbench cleanup`` ends a killed
run's group by the token in its name.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from vcsbench import process
from vcsbench.sandbox.ownership import cgroup2_root
from vcsbench.servers.server import CpuGroup

MAX_STDERR = 64 << 10
"""A failed command's stderr kept to say why it failed."""
END_WAIT_S = 5.0
"""How long the processes of an ended call are waited for."""


class CommandGroup:
    """The cgroup every call of a user's command starts in: made once a run (a worker
    forked later uses it too), ended and removed when the run closes (a
    :class:`process.Closer`)."""

    counted = False
    """Not a sandbox: the closing line of an interrupted run counts sandboxes."""

    def __init__(self, root: Path) -> None:
        self.group = CpuGroup(root, "cmd")
        self.home = root / _own_cgroup()
        """Where this process was, and returns to after each fork."""
        self._procs = os.open(self.group.path / "cgroup.procs", os.O_RDONLY)
        self.pid = os.getpid()
        """The process that made it (a forked worker that does closes it itself)."""
        process.register(self)

    @property
    def what(self) -> str:
        return f"your command's processes ({self.group.path})"

    @contextlib.contextmanager
    def entered(self) -> Iterator[None]:
        """This process inside the group while the block runs (a ``fork`` in it is born
        there), and back where it was after it, whatever happens."""
        _move_self(self.group.path)
        try:
            yield
        finally:
            _move_self(self.home)

    def members(self) -> list[int]:
        """The processes in the group now (read through a descriptor kept open)."""
        try:
            return [int(p) for p in os.pread(self._procs, 1 << 16, 0).split()]
        except (OSError, ValueError):
            return []

    def end_members(self) -> int:
        """End every process left in the group and wait until it is empty: how many."""
        me = os.getpid()
        left = [pid for pid in self.members() if pid != me]
        if not left:
            return 0
        if me in self.members():  # never itself: it failed to step back out (said then)
            for pid in left:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        else:
            (self.group.path / "cgroup.kill").write_text("1")
        deadline = time.monotonic() + END_WAIT_S
        while set(self.members()) - {me} and time.monotonic() < deadline:
            time.sleep(0.005)
        return len(left)

    def close(self) -> list[str]:
        with contextlib.suppress(OSError):
            os.close(self._procs)
        try:
            self.group.close()
        except OSError as exc:
            return [f"remove cgroup {self.group.path}: {exc.strerror}"]
        finally:
            process.closed(self, [])
        return []


_GROUP: list[CommandGroup | None] = []


def command_group() -> CommandGroup | None:
    """The run's command group, made on first use (None: no cgroup v2 to use here). A
    worker forked later uses its parent's: rounds run one process at a time."""
    if not _GROUP:
        root = cgroup2_root()
        _GROUP.append(CommandGroup(root) if root is not None else None)
    return _GROUP[0]


def close_own_group() -> None:
    """In a process about to end without its exit handlers (a forked worker leaving by
    ``os._exit``): the command group it made, if it made one, ended and removed."""
    if _GROUP and _GROUP[0] is not None and _GROUP[0].pid == os.getpid():
        _GROUP[0].close()
        _GROUP.clear()


@dataclass
class Ended:
    """How a call ended: its exit status (None: ended at its time limit), the start of
    its stderr, and how many processes it left running (ended with it)."""

    code: int | None
    stderr: bytes
    left: int = 0


def call(
    argv: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    limit_s: float,
    log: BinaryIO | None = None,
) -> Ended | OSError:
    """Run ``argv`` contained (in :func:`command_group`, or a session of its own), until
    it exits or ``limit_s`` passes; then end whatever it left running (a daemon it
    forked), or, past the limit, it and everything it started. Where nothing is left the
    check costs one read of the group's member list (under a microsecond here). Its
    output goes to ``log`` where given (then no stderr is kept), else nowhere."""
    group = command_group()
    try:
        with group.entered() if group is not None else contextlib.nullcontext():
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=process.child_env(env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL if log is None else log,
                stderr=subprocess.PIPE if log is None else subprocess.STDOUT,
                start_new_session=True,
            )
    except OSError as exc:
        return exc
    try:
        kept, exited = _wait(proc, limit_s)
    except BaseException:  # an interrupt: nothing of the call outlives it, nor its group
        _end(proc, group)
        if group is not None:
            group.close()
            _GROUP.clear()
        raise
    left = _end(proc, group)
    return Ended(proc.returncode if exited else None, kept, left)


def _end(proc: subprocess.Popen[bytes], group: CommandGroup | None) -> int:
    """End what is left of a call (all of it, if it is still running): how many
    processes were."""
    if group is not None:
        left = group.end_members()
    else:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
            left = 1
        except (ProcessLookupError, PermissionError):
            left = 0
    if proc.returncode is None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=END_WAIT_S)
    if proc.stderr is not None:
        proc.stderr.close()
    return left


_POLL: list[tuple[int, select.poll]] = []
"""A poll object per process, made once: one made per call (or a ``selectors`` one) cost
an exec'd ``/bin/true`` 5 % (50 µs) in its timed call; a kept one, nothing measurable."""


def _poller() -> select.poll:
    if not _POLL or _POLL[0][0] != os.getpid():
        _POLL[:] = [(os.getpid(), select.poll())]
    return _POLL[0][1]


def _wait(proc: subprocess.Popen[bytes], limit_s: float) -> tuple[bytes, bool]:
    """(the first :data:`MAX_STDERR` bytes of its stderr, whether it exited) once the
    process exits or ``limit_s`` passes. Its exit is waited for, not its stderr's end: a
    daemon it left may hold that open."""
    if process.COUNT_ROUND in os.environ:  # a counted round, under valgrind: no pidfd_open
        return _wait_counted(proc, limit_s)
    err = proc.stderr.fileno() if proc.stderr is not None else -1
    pidfd = os.pidfd_open(proc.pid)
    kept = b""
    deadline = time.monotonic() + limit_s
    poller = _poller()
    watched = [pidfd, *([err] if err >= 0 else [])]
    for fd in watched:
        poller.register(fd, select.POLLIN)
    try:
        exited = False
        while not exited:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return kept, False
            for fd, _ in poller.poll(max(1, int(remaining * 1000))):
                if fd == pidfd:
                    exited = True
                elif fd == err and err in watched:
                    if chunk := os.read(err, 1 << 16):
                        kept += chunk[: max(0, MAX_STDERR - len(kept))]
                    else:  # its end: the exit is all there is left to wait for
                        poller.unregister(err)
                        watched.remove(err)
    finally:
        for fd in watched:
            poller.unregister(fd)
        os.close(pidfd)
    proc.wait()
    if err < 0:
        return kept, True
    os.set_blocking(err, False)  # what it wrote before it exited; a daemon's, not waited for
    with contextlib.suppress(BlockingIOError, OSError):
        while len(kept) < MAX_STDERR and (chunk := os.read(err, 1 << 16)):
            kept += chunk[: MAX_STDERR - len(kept)]
    return kept, True


def _wait_counted(proc: subprocess.Popen[bytes], limit_s: float) -> tuple[bytes, bool]:
    """:func:`_wait` in a counted round: valgrind 3.19 does not know ``pidfd_open``, so
    the process's exit and stderr are waited for together (its instructions are counted:
    a blocking wait executes few)."""
    try:
        _, err = proc.communicate(timeout=limit_s)
    except subprocess.TimeoutExpired:
        return b"", False
    return (err or b"")[:MAX_STDERR], True


def _own_cgroup() -> str:
    """This process's cgroup v2 path, relative to the hierarchy's root."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        if line.startswith("0::"):
            return line[3:].lstrip("/")
    return ""


def _move_self(group: Path) -> None:
    fd = os.open(group / "cgroup.procs", os.O_WRONLY)
    try:
        os.write(fd, b"0")
    finally:
        os.close(fd)
