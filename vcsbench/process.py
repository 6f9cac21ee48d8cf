"""This process: its stop signals, what it is doing, and what it has up that must come down.

Every layer that makes something that must not outlive the run (a sandbox, a server)
registers it here as a :class:`Closer` while it is up; the closing line of an
interrupted run is made from what this module knows, and no layer reads another's
private state for it.

SIGINT, SIGTERM and SIGHUP become :class:`Interrupted` (a ``KeyboardInterrupt``), so
that ``with`` blocks unwind and tear down; a second one abandons the teardown. Code that
makes a kernel object and records it holds them (:func:`signals_held`), so a signal
lands after the record says what exists. A process forked to help (a worker, a walker,
a filler) calls :func:`as_helper`: default handlers, and death with its parent.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Literal, Protocol

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_PR_SET_PDEATHSIG = 1


class Closer(Protocol):
    """Something up that must come down: ``close`` takes it down (safe to call twice)
    and returns the steps that failed; ``what`` names it for a person."""

    @property
    def what(self) -> str: ...

    def close(self) -> list[str]: ...


class Interrupted(KeyboardInterrupt):
    """A stop signal, turned into an exception so that everything up is torn down."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.signum = signum


class _State:
    def __init__(self) -> None:
        self.signals: list[int] = []
        self.up: list[Closer] = []
        self.torn_down: list[str] = []
        self.doing = ""
        self.installed = threading.Event()


_STATE = _State()


def received() -> list[int]:
    """The stop signals this process received, in order."""
    return list(_STATE.signals)


def note_signal(signum: int) -> None:
    """Count a stop signal that arrived before the handlers were installed."""
    _STATE.signals.append(signum)


def doing(text: str) -> None:
    """Say what runs now (for the closing line of an interrupt); "" when nothing does."""
    _STATE.doing = text


def activity() -> str:
    return _STATE.doing


def register(closer: Closer) -> None:
    """``closer`` is up; it is closed at exit if nothing closed it before."""
    install_signal_handlers()
    _STATE.up.append(closer)


def closed(closer: Closer, failures: list[str]) -> None:
    """``closer`` came down (or tried to: ``failures``); it is no longer up."""
    with contextlib.suppress(ValueError):
        _STATE.up.remove(closer)
    if not failures and getattr(closer, "counted", True):
        _STATE.torn_down.append(closer.what)


def still_up() -> list[str]:
    """What is up and was not closed: the closing line names it for ``cleanup``."""
    return [closer.what for closer in _STATE.up]


def torn_down() -> list[str]:
    return list(_STATE.torn_down)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Hold the stop signals while something is made (or removed) and recorded."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _on_signal(signum: int, frame: FrameType | None) -> None:
    _STATE.signals.append(signum)
    if len(_STATE.signals) > 1:
        live = ", ".join(still_up()) or "none"
        print(
            f"vcsbench: second signal ({signal.Signals(signum).name}): abandoning the "
            f"teardown of what is still up ({live}); run 'vcsbench cleanup' to remove what "
            "is left",
            file=sys.stderr,
        )
    raise Interrupted(signum)


def install_signal_handlers() -> None:
    """Make the stop signals unwind (where nobody else handles them), and close whatever
    is still up at exit."""
    if _STATE.installed.is_set() or threading.current_thread() is not threading.main_thread():
        return
    for signum in STOP_SIGNALS:
        if signal.getsignal(signum) in (signal.SIG_DFL, signal.default_int_handler, None):
            signal.signal(signum, _on_signal)
    atexit.register(_close_all)
    _STATE.installed.set()


def _close_all() -> None:
    for closer in list(reversed(_STATE.up)):
        closed(closer, closer.close())


@dataclass
class Child:
    """A child command that ran to its end: its exit status, its output where captured,
    and the stop signals passed to it."""

    code: int
    out: str = ""
    err: str = ""
    passed: list[int] = field(default_factory=list)


def run_child(
    command: list[str],
    capture: bool | Literal["stdout"] = False,
    env: Mapping[str, str] | None = None,
) -> Child:
    """Run ``command`` (a vcsbench of its own, say) to its end in a process group of its
    own, so that a stop signal reaches it once, as this process passes it on (a Ctrl-C
    from the terminal reaches only this one), and it keeps and takes down what it made as
    any run does; a signal ignored here (nohup, cron) stays ignored. ``capture``: its
    output kept (``"stdout"``: its standard output alone, its standard error shown as it
    comes); ``env``: added to its environment."""
    passed: list[int] = []
    started: list[subprocess.Popen[str]] = []

    def forward(signum: int, _frame: FrameType | None) -> None:
        passed.append(signum)
        for child in started:
            child.send_signal(signum)

    held = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    for signum, handler in held.items():
        if handler is not signal.SIG_IGN:
            signal.signal(signum, forward)
    pipe = subprocess.PIPE if capture else None
    try:
        child = subprocess.Popen(
            command,
            stdout=pipe,
            stderr=pipe if capture is True else None,
            text=True,
            process_group=0,
            env=None if env is None else {**os.environ, **env},
        )
        started.append(child)
        for early in list(passed):  # arrived while it was being started
            child.send_signal(early)
        out, err = child.communicate()
    finally:
        for signum, handler in held.items():
            signal.signal(signum, handler)
    return Child(child.returncode, out or "", err or "", passed)


def as_helper() -> None:
    """In a process forked to help: the stop signals end it, as by default (the
    handlers are its parent's), and it dies when its parent does, so that nothing of a
    killed run goes on writing."""
    parent = os.getppid()
    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_DFL)
    die_with_parent(parent)


def die_with_parent(parent: int | None = None) -> None:
    """Be killed (SIGKILL) when the parent process ends; at once if it already has."""
    parent = os.getppid() if parent is None else parent
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent ended before the request took
        os._exit(1)


def proc_stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command's name (the state first, then
    the parent, ...; proc(5) numbers from 3), or None for a process that is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def group_members(leader: int) -> list[int]:
    """The processes of the process group ``leader`` led (or leads), zombies left out."""
    members = []
    for entry in os.scandir("/proc"):
        fields = proc_stat(int(entry.name)) if entry.name.isdigit() else None
        # state, parent, process group: a member not yet a zombie
        if fields is not None and fields[2] == str(leader) and fields[0] != "Z":
            members.append(int(entry.name))
    return members


def end_group_members(leader: int, wait_s: float = 10.0) -> None:
    """End what is left of the process group ``leader`` led, once the leader is gone, and
    wait (at most ``wait_s``) until no member is left: ending the leader alone leaves
    its children running (a load client's git or svn command, still writing into a
    directory about to be removed)."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        members = group_members(leader)
        if not members:
            return
        for pid in members:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


COUNT_ROUND = "VCSBENCH_COUNT_ROUND"
"""The environment variable naming the counted round a process runs in
(:mod:`vcsbench.measure.instructions`): every command a round starts carries it, so that
its counts are the round's."""


def child_env(env: Mapping[str, str] | None) -> Mapping[str, str] | None:
    """The environment a command is started with: ``env`` (None: this process's), with
    the counted round this process is in, where it is in one (else ``env`` itself: no
    copy in a timed call)."""
    counted = os.environ.get(COUNT_ROUND)
    if env is None or counted is None:
        return env
    return {**env, COUNT_ROUND: counted}
