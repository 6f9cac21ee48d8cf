"""A PostgreSQL server of the tests' own: Debian's ``postgresql`` binaries, a cluster made
by ``initdb`` in a directory made for it, listening on 127.0.0.1 on a free port, stopped
and removed after. As root the server runs as the ``postgres`` user (PostgreSQL refuses
root); otherwise as the user running the tests. Each test gets a database of its own."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from helpers import skip_or_fail

ROOT = Path("/usr/lib/postgresql")
INITDB = ("--auth=trust", "--no-sync", "-E", "UTF8")


def binaries() -> Path | None:
    found = sorted(
        (p for p in ROOT.glob("*/bin") if (p / "initdb").is_file()),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
    )
    return found[-1] if found else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def server() -> Iterator[str]:
    """A running server; its URL (no password: the cluster trusts its own address)."""
    bindir = binaries()
    if bindir is None:
        skip_or_fail("needs PostgreSQL's server (apt-get install postgresql)")
        raise AssertionError
    top = Path(tempfile.mkdtemp(prefix="vcsbench-test-pg-"))
    data = top / "data"
    as_user: list[str] = []
    if os.geteuid() == 0:
        import pwd

        owner = pwd.getpwnam("postgres")
        os.chmod(top, 0o755)
        data.mkdir()
        os.chown(data, owner.pw_uid, owner.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    port = _free_port()

    def ctl(*args: str) -> None:
        subprocess.run(
            [*as_user, str(bindir / "pg_ctl"), "-D", str(data), *args],
            check=True,
            capture_output=True,
            timeout=120,
        )

    started = False
    try:
        subprocess.run(
            [*as_user, str(bindir / "initdb"), "-D", str(data), "-U", "postgres", *INITDB],
            check=True,
            capture_output=True,
            timeout=120,
        )
        for attempt in range(3):  # a free port may be taken before the server binds it
            options = f"-p {port} -k {data} -c listen_addresses=127.0.0.1 -c fsync=off"
            try:
                ctl("-o", options, "-l", str(data / "server.log"), "-w", "start")
                break
            except subprocess.CalledProcessError:
                if attempt == 2:
                    raise
                port = _free_port()
        started = True
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        if started:
            ctl("-m", "immediate", "-w", "stop")
        shutil.rmtree(top, ignore_errors=True)


def database(url: str) -> str:
    """A new database on the server at ``url``: its URL."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(url, autocommit=True) as db:
        db.execute(f"CREATE DATABASE {name}")  # the name is ours, made above
    return url.rsplit("/", 1)[0] + f"/{name}"
