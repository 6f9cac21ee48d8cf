"""A result file owned by the run writing it.

A run writes its result file again after every benchmark, copying the benchmarks already
written from the file itself; a second run writing the same path meanwhile would have
each copy the other's bytes (one run's results lost, the file damaged). So a run holds
its output from before its first benchmark to its end, as a name only one process can
hold: a Unix socket bound in the abstract namespace, named by the output's full path.
The kernel lets the name go when the process ends however it ends (SIGKILL too), and it
is no file: nothing is left beside the output, nothing needs removing.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
from collections.abc import Iterator
from pathlib import Path

from vcsbench.errors import VcsbenchError

_HELD: dict[Path, tuple[socket.socket, int]] = {}
"""The outputs this process holds: path -> (its socket, times taken)."""


def _key(out: Path) -> Path:
    return out.parent.resolve() / out.name


def _name(key: Path) -> bytes:
    digest = hashlib.sha256(os.fsencode(key)).hexdigest()[:40]
    return b"\0vcsbench-out-" + digest.encode()


def holder(name: bytes) -> int | None:
    """The process holding abstract socket ``name``, where /proc shows it."""
    wanted = "@" + name[1:].decode()
    inodes: set[str] = set()
    with contextlib.suppress(OSError), open("/proc/net/unix") as table:
        for line in table:
            fields = line.split()
            if len(fields) >= 8 and fields[7] == wanted:
                inodes.add(f"socket:[{fields[6]}]")
    if not inodes:
        return None
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    if os.readlink(f"/proc/{pid}/fd/{fd}") in inodes:
                        return int(pid)
    return None


def acquire(out: Path, option: str = "--out") -> None:
    """Hold ``out`` for this process (again, if it holds it already), or refuse in one
    line naming the process that does."""
    key = _key(out)
    if key in _HELD:
        sock, count = _HELD[key]
        _HELD[key] = (sock, count + 1)
        return
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.set_inheritable(False)
    try:
        sock.bind(_name(key))
    except OSError:
        sock.close()
        pid = holder(_name(key))
        who = f" (process {pid})" if pid is not None else ""
        raise VcsbenchError(
            f"{option} {out}: another run{who} is writing it; wait for it to end, or give "
            "another path"
        ) from None
    _HELD[key] = (sock, 1)


def release(out: Path) -> None:
    """Let ``out`` go, once every acquire of this process is matched."""
    key = _key(out)
    if key not in _HELD:
        return
    sock, count = _HELD[key]
    if count > 1:
        _HELD[key] = (sock, count - 1)
        return
    del _HELD[key]
    sock.close()


@contextlib.contextmanager
def owned(out: Path, option: str = "--out") -> Iterator[None]:
    """``out`` held for the block."""
    acquire(out, option)
    try:
        yield
    finally:
        release(out)
