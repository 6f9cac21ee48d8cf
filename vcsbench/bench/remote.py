"""A benchmark's repositories served, for a variant that reaches them through a server
(``git-cli[remote=git-ssh]``, ``svn-cli[remote=apache-svn-https,rtt=50]``): the server
the transport names is started over the benchmark's repository directory, with the
credentials made for it (and a distance where ``rtt=`` asks for one, measured first),
for the whole benchmark; the backend is told where it is (:class:`Remote`), and its
clone, checkout and update go through it. What is timed is the client's command against
that server -- the cost of one client, where ``vcsbench load`` measures many."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from vcsbench.backends import Variant
from vcsbench.backends.base import Backend
from vcsbench.backends.reach import Remote
from vcsbench.errors import VcsbenchError
from vcsbench.sandbox import Sandbox
from vcsbench.servers.apache import APACHE_USER, apache_ids
from vcsbench.servers.distance import Distance, parse_rtts, toxiproxy_binary
from vcsbench.servers.transports import TRANSPORTS, Service, Transport


def remote_of(variant: Variant) -> tuple[Transport, Distance | None] | None:
    """The transport a variant's ``remote=`` names and the distance its ``rtt=`` asks
    for, checked: one line for a transport that is not known, of another VCS, or not
    installed, and for ``rtt=`` without ``remote=``."""
    options = variant.backend_options
    name, rtt = options.get("remote", ""), options.get("rtt", "")
    if not name:
        if rtt:
            raise VcsbenchError(
                f"{variant.text}: rtt= is the distance to a server; give remote= too"
            )
        return None
    transport = TRANSPORTS.get(name)
    if transport is None or transport.vcs != variant.cls.vcs:
        offered = ", ".join(t.name for t in TRANSPORTS.values() if t.vcs == variant.cls.vcs)
        raise VcsbenchError(
            f"{variant.text}: remote={name!r} is not a transport to {variant.cls.vcs} "
            f"repositories; use one of {offered}"
        )
    transport.require()
    distance = None
    if rtt:
        (ms,) = parse_rtts(rtt, f"{variant.text}: rtt=")
        toxiproxy_binary()
        distance = Distance(ms)
    return transport, distance


def reaches(variant: Variant, needs: frozenset[str]) -> bool:
    """Whether an operation needing ``needs`` goes through a remote variant's server
    (or the variant has none)."""
    return not variant.backend_options.get("remote") or bool(needs & variant.cls.remote_calls)


def _open_to_apache(workdir: Path) -> tuple[int, int] | None:
    """Apache serves as its own user, which must reach the repositories and, to take a
    commit, own them: each round's repository is given to it once prepared (the ids
    returned; None where vcsbench is not root and Apache serves as this user)."""
    os.chmod(workdir, 0o711)
    closed = [d for d in workdir.parents if not os.stat(d).st_mode & 0o001]
    if closed:
        raise VcsbenchError(
            f"Apache serves as {APACHE_USER}, which cannot reach the sandbox: {closed[0]} "
            "is closed to others; use a tmpfs, ext4, xfs or btrfs sandbox, or a dir: "
            "sandbox below directories others may enter"
        )
    return apache_ids() if os.geteuid() == 0 else None


@contextmanager
def served(
    variant: Variant, vcs: Backend, workdir: Path, sandbox: Sandbox
) -> Iterator[tuple[dict[str, Any], tuple[int, int] | None] | None]:
    """With ``remote=``: the server over ``workdir``'s repositories, running until the
    block ends (recorded in the sandbox's state while it runs), ``vcs`` told where it is.
    Yields what the result records of it and whose each round's repository must be
    (Apache's user, or None), or None for a variant without ``remote=``."""
    found = remote_of(variant)
    if found is None:
        yield None
        return
    transport, distance = found
    root = workdir / "repos"
    owner = _open_to_apache(workdir) if transport.server == "apache" else None
    service = Service(
        transport,
        root,
        workdir / "credentials",
        sandbox.make_dir("vcsbench-server-logs-"),
        distance=distance,
    )
    try:
        service.start(sandbox.record_process)
        vcs.reach(
            Remote(transport.name, str(root), service.url_base, service.client_env, service.ca_file)
        )
        yield service.describe(), owner
    finally:
        service.stop(sandbox.forget_process)
