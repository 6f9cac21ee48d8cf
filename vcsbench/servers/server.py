"""One server process vcsbench starts and stops: on 127.0.0.1 (or the address a load is
told to listen on), a free port or the one asked for, its log in the run's log
directory, every process it starts in a cgroup of its own.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from vcsbench.errors import VcsbenchError
from vcsbench.sandbox.ownership import cgroup2_root
from vcsbench.sandbox.state import run_token

HOST = "127.0.0.1"
STARTUP_S = 10.0


def free_port(host: str = HOST) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def check_port(port: int, host: str = HOST, option: str = "--port") -> None:
    """One line if ``port`` on ``host`` cannot be listened on."""
    if not 0 < port < 65536:
        raise VcsbenchError(f"{option} {port} is not a TCP port; use 1-65535, or leave it out")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError as exc:
            raise VcsbenchError(
                f"port {port} on {host} is already in use ({exc.strerror}); give another "
                f"{option} or leave it out for a free one"
            ) from None


def check_host(host: str, option: str) -> None:
    """One line if this machine cannot listen on ``host``."""
    try:
        free_port(host)
    except OSError as exc:
        raise VcsbenchError(
            f"{option} {host!r} is not an address of this machine ({exc.strerror or exc}); "
            "give one of its IP addresses, or leave it out for 127.0.0.1"
        ) from None


class CpuGroup:
    """A cgroup (v2) of vcsbench's own for one server: every process the server starts
    is in it, so its CPU is counted whether or not anyone reaps those processes (a CGI
    under Apache), and ``cgroup.kill`` ends them all."""

    made = 0
    """Groups this process made: each has a number of its own (an interleaved run serves
    several variants, each its own Apache, at once)."""

    def __init__(self, root: Path, name: str) -> None:
        # Its name holds the run's token: cleanup ends what is in it only on that proof.
        CpuGroup.made += 1
        number = f"-{CpuGroup.made}" if CpuGroup.made > 1 else ""
        self.path = root / f"vcsbench-{name}-{os.getpid()}-{run_token()}{number}"
        self.path.mkdir()

    def join(self) -> None:
        """Put the calling process in the group (run in the child before exec)."""
        fd = os.open(self.path / "cgroup.procs", os.O_WRONLY)
        try:
            os.write(fd, str(os.getpid()).encode())
        finally:
            os.close(fd)

    def close(self) -> None:
        """End what is left in the group and remove it (it is empty once they are gone)."""
        kill = self.path / "cgroup.kill"
        if kill.exists() and (self.path / "cgroup.procs").read_text().strip():
            kill.write_text("1")
        deadline = time.monotonic() + 5
        while True:
            try:
                self.path.rmdir()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)


@dataclass
class Server:
    """One server process: its command, the URL prefix of its repositories, its log."""

    name: str
    argv: list[str]
    port: int
    url_base: str
    log: Path
    host: str = HOST
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    group: CpuGroup | None = field(default=None, repr=False)

    @property
    def cpu_method(self) -> str:
        if self.group is not None:
            return f"the server's cgroup ({self.group.path}/cpu.stat): every process it started"
        return (
            "the server's session in /proc: live processes and the children they reaped "
            "(processes nobody waited for are missed)"
        )

    def start(self) -> None:
        """Start the server (its binary checked by :func:`require_binary` beforehand)."""
        check_port(self.port, self.host)
        root = cgroup2_root()
        self.group = CpuGroup(root, self.name) if root is not None else None
        with open(self.log, "ab") as log:
            # Its own session: a Ctrl-C at the terminal reaches vcsbench, which stops it.
            self.proc = subprocess.Popen(
                self.argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=self.group.join if self.group is not None else None,
            )
        deadline = time.monotonic() + STARTUP_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                tail = self.log.read_text(errors="replace").strip().splitlines()[-3:]
                self.proc = None
                if self.group is not None:
                    self.group.close()
                    self.group = None
                raise VcsbenchError(
                    f"{self.name} exited at start ({'; '.join(tail) or 'no output'}); "
                    f"see {self.log}"
                )
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                if sock.connect_ex((self.host, self.port)) == 0:
                    return
            time.sleep(0.02)
        self.stop()
        raise VcsbenchError(
            f"{self.name} did not listen on {self.host}:{self.port} within {STARTUP_S:.0f} s"
        )

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        """End the server and every process of its session (forked connection handlers)."""
        proc, self.proc = self.proc, None
        group, self.group = self.group, None
        if proc is None:
            if group is not None:
                group.close()
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        with contextlib.suppress(ProcessLookupError):  # handlers left in its session
            os.killpg(proc.pid, signal.SIGKILL)
        if group is not None:  # and any process that left the session (a CGI)
            group.close()

    def __enter__(self) -> Server:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
