"""The VCSs' own daemons: ``svnserve`` (svn://) and ``git daemon`` (git://), each serving
every repository below one directory, anonymous writes allowed (on loopback, for the run)."""

from __future__ import annotations

from pathlib import Path

from vcsbench.servers.server import HOST, Server, free_port


def svnserve(root: Path, logs: Path, port: int = 0, host: str = HOST) -> Server:
    """``svnserve`` in daemon mode (a process forked per connection), anonymous writes."""
    port = port or free_port(host)
    conf = logs / "svnserve.conf"
    conf.write_text("[general]\nanon-access = write\nauth-access = write\n")
    argv = [
        "svnserve",
        "--daemon",
        "--foreground",
        "--listen-host",
        host,
        "--listen-port",
        str(port),
        "--root",
        str(root),
        "--config-file",
        str(conf),
        "--log-file",
        str(logs / "svnserve-requests.log"),
    ]
    return Server("svnserve", argv, port, f"svn://{host}:{port}", logs / "svnserve.log", host)


def git_daemon(root: Path, logs: Path, port: int = 0, host: str = HOST) -> Server:
    """``git daemon`` serving every repository below ``root``, pushes allowed."""
    port = port or free_port(host)
    argv = [
        "git",
        "daemon",
        "--reuseaddr",
        f"--listen={host}",
        f"--port={port}",
        f"--base-path={root}",
        "--export-all",
        "--enable=receive-pack",
        "--informative-errors",
        "--verbose",
        f"--pid-file={logs / 'git-daemon.pid'}",
        str(root),
    ]
    return Server("git-daemon", argv, port, f"git://{host}:{port}", logs / "git-daemon.log", host)
