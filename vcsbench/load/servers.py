"""The real servers a load run talks to, started by vcsbench on 127.0.0.1 and stopped by it.

Each listens on loopback only, on a free port (or the one asked for), serves the
sandbox's repository directory and logs into the run's log directory, which is kept
with the results.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from vcsbench.errors import VcsbenchError

HOST = "127.0.0.1"
STARTUP_S = 10.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def check_port(port: int) -> None:
    """One line if ``port`` on 127.0.0.1 cannot be listened on."""
    if not 0 < port < 65536:
        raise VcsbenchError(f"port {port} is not a TCP port; use 1-65535, or leave it out")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((HOST, port))
        except OSError as exc:
            raise VcsbenchError(
                f"port {port} on {HOST} is already in use ({exc.strerror}); give another "
                "--port or leave it out for a free one"
            ) from None


@dataclass
class Server:
    """One server process: its command, the URL prefix of its repositories, its log."""

    name: str
    argv: list[str]
    port: int
    url_base: str
    log: Path
    package: str
    """The Debian package that brings the binary, for the error when it is missing."""
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    def start(self) -> None:
        if shutil.which(self.argv[0]) is None:
            raise VcsbenchError(
                f"{self.argv[0]} is not installed (needed for {self.name}); as root run: "
                f"apt-get install -y {self.package}"
            )
        check_port(self.port)
        with open(self.log, "ab") as log:
            # Its own session: a Ctrl-C at the terminal reaches vcsbench, which stops it.
            self.proc = subprocess.Popen(
                self.argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        deadline = time.monotonic() + STARTUP_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                tail = self.log.read_text(errors="replace").strip().splitlines()[-3:]
                self.proc = None
                raise VcsbenchError(
                    f"{self.name} exited at start ({'; '.join(tail) or 'no output'}); "
                    f"see {self.log}"
                )
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                if sock.connect_ex((HOST, self.port)) == 0:
                    return
            time.sleep(0.02)
        self.stop()
        raise VcsbenchError(
            f"{self.name} did not listen on {HOST}:{self.port} within {STARTUP_S:.0f} s"
        )

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        """End the server and every process of its session (forked connection handlers)."""
        proc, self.proc = self.proc, None
        if proc is None:
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

    def __enter__(self) -> Server:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def svnserve(root: Path, logs: Path, port: int = 0) -> Server:
    """``svnserve`` in daemon mode (a process forked per connection), anonymous writes."""
    port = port or free_port()
    conf = logs / "svnserve.conf"
    conf.write_text("[general]\nanon-access = write\nauth-access = write\n")
    argv = [
        "svnserve",
        "--daemon",
        "--foreground",
        "--listen-host",
        HOST,
        "--listen-port",
        str(port),
        "--root",
        str(root),
        "--config-file",
        str(conf),
        "--log-file",
        str(logs / "svnserve-requests.log"),
    ]
    return Server(
        "svnserve", argv, port, f"svn://{HOST}:{port}", logs / "svnserve.log", "subversion"
    )


def git_daemon(root: Path, logs: Path, port: int = 0) -> Server:
    """``git daemon`` serving every repository below ``root``, pushes allowed."""
    port = port or free_port()
    argv = [
        "git",
        "daemon",
        "--reuseaddr",
        f"--listen={HOST}",
        f"--port={port}",
        f"--base-path={root}",
        "--export-all",
        "--enable=receive-pack",
        "--informative-errors",
        "--verbose",
        f"--pid-file={logs / 'git-daemon.pid'}",
        str(root),
    ]
    return Server("git-daemon", argv, port, f"git://{HOST}:{port}", logs / "git-daemon.log", "git")
