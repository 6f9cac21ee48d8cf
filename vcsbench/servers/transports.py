"""Every way a client reaches repositories through a server vcsbench starts, one
:class:`Transport` each, and a :class:`Service`: that server running over a directory of
repositories, with the credentials made for it, a distance in front of it where asked, and
what its clients need to reach and trust it.

A new transport is a line in :data:`TRANSPORTS` (and, for a new kind of server, a
factory in :meth:`Service._make_server`).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vcsbench.errors import VcsbenchError
from vcsbench.servers import apache as apache_server
from vcsbench.servers.daemons import git_daemon, svnserve
from vcsbench.servers.distance import Distance, Toxiproxy
from vcsbench.servers.server import HOST, Server
from vcsbench.servers.ssh import SSHD, SshKeys, forced_command, run_user, sshd
from vcsbench.servers.tls import Certificate


def package_versions(packages: list[str]) -> dict[str, str]:
    """Each installed Debian package's version (one dpkg-query for all); one not
    installed, or a machine without dpkg, is left out."""
    try:
        done = subprocess.run(
            ["dpkg-query", "-W", "-f=${Package} ${Version}\\n", *packages],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return {}
    found = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
    return {p: found[p].strip()[:80] for p in packages if found.get(p, "").strip()}


@dataclass(frozen=True)
class Transport:
    """How a client reaches a server: the VCS, the server, TLS or not."""

    name: str
    vcs: str
    server: str
    """svnserve, git-daemon, apache or sshd."""
    tls: bool = False
    summary: str = ""
    words: str = ""
    """What it is in the words a reader knows it by (``DAV, HTTPS (Apache, mod_ssl,
    mod_dav_svn)``); :attr:`label` puts the VCS before it."""

    @property
    def label(self) -> str:
        """``svn over DAV, HTTPS (Apache, mod_ssl, mod_dav_svn)``: how tables name it."""
        return f"{self.vcs} over {self.words or self.summary}"

    @property
    def needs(self) -> tuple[tuple[str, str], ...]:
        """(a file or command this transport needs, the Debian package that brings it)."""
        found: list[tuple[str, str]] = []
        if self.server == "svnserve":
            found.append(("svnserve", "subversion"))
        elif self.server == "git-daemon":
            found.append(("git", "git"))
        elif self.server == "apache":
            modules = apache_server.APACHE_MODULES
            found.append((apache_server.APACHE, "apache2"))
            if self.vcs == "svn":
                found.append((f"{modules}/mod_dav_svn.so", "libapache2-mod-svn"))
            if self.vcs == "hg":
                found.append((f"{modules}/mod_wsgi.so", "libapache2-mod-wsgi-py3"))
            if self.tls:
                found.append(("openssl", "openssl"))
        elif self.server == "sshd":
            found += [(SSHD, "openssh-server"), ("ssh", "openssh-client")]
            found += [("ssh-keygen", "openssh-client"), ("unshare", "util-linux")]
            found.append({"git": ("git-shell", "git"), "svn": ("svnserve", "subversion"),
                          "hg": ("hg-ssh", "mercurial")}[self.vcs])  # fmt: skip
        if self.vcs == "hg":
            found.append(("hg", "mercurial"))
        return tuple(found)

    def versions(self) -> dict[str, str]:
        """The Debian packages its server is made of, with the version installed (what a
        series of load runs is kept apart by, as a benchmark's library versions are)."""
        vcs = {"git": "git", "svn": "subversion", "hg": "mercurial"}[self.vcs]
        return package_versions(sorted({vcs, *(package for _, package in self.needs)}))

    def require(self) -> None:
        """One line naming what to install where this transport's server is missing; one
        that needs root where it is not."""
        missing = [
            (thing, package)
            for thing, package in self.needs
            if not (Path(thing).exists() if thing.startswith("/") else shutil.which(thing))
        ]
        if missing:
            names = ", ".join(os.path.basename(thing) for thing, _ in missing)
            packages = " ".join(sorted({package for _, package in missing}))
            verb = "is" if len(missing) == 1 else "are"
            raise VcsbenchError(
                f"{names} {verb} not installed (needed for {self.name}); as root run: "
                f"apt-get install -y {packages}"
            )
        if self.server == "sshd" and os.geteuid() != 0:
            raise VcsbenchError(
                f"{self.name} needs root: vcsbench starts sshd in a mount namespace of its "
                "own; run as root, or use a path without ssh"
            )


TRANSPORTS: dict[str, Transport] = {
    t.name: t
    for t in (
        Transport("svnserve", "svn", "svnserve", summary="svn:// (svnserve)", words="svnserve"),
        Transport("apache-svn", "svn", "apache", summary="http:// (Apache, mod_dav_svn)",
                  words="DAV, HTTP (Apache, mod_dav_svn)"),
        Transport("apache-svn-https", "svn", "apache", tls=True,
                  summary="https:// (Apache, mod_ssl, mod_dav_svn)",
                  words="DAV, HTTPS (Apache, mod_ssl, mod_dav_svn)"),
        Transport("svn-ssh", "svn", "sshd", summary="svn+ssh:// (sshd, svnserve -t)",
                  words="svn+ssh (sshd, svnserve -t)"),
        Transport("git-daemon", "git", "git-daemon", summary="git:// (git daemon)",
                  words="git:// (git daemon)"),
        Transport("apache-git", "git", "apache",
                  summary="smart HTTP (Apache, git http-backend)",
                  words="smart HTTP (Apache)"),
        Transport("apache-git-https", "git", "apache", tls=True,
                  summary="smart HTTPS (Apache, mod_ssl, git http-backend)",
                  words="smart HTTPS (Apache, mod_ssl)"),
        Transport("git-ssh", "git", "sshd", summary="ssh:// (sshd, git-shell)", words="SSH"),
        Transport("apache-hg", "hg", "apache", summary="http:// (Apache, hgweb under mod_wsgi)",
                  words="HTTP (hgweb)"),
        Transport("apache-hg-https", "hg", "apache", tls=True,
                  summary="https:// (Apache, mod_ssl, hgweb under mod_wsgi)",
                  words="HTTPS (hgweb, mod_ssl)"),
        Transport("hg-ssh", "hg", "sshd", summary="ssh:// (sshd, hg-ssh)",
                  words="SSH (hg-ssh)"),
    )
}  # fmt: skip


def transport(name: str) -> Transport:
    try:
        return TRANSPORTS[name]
    except KeyError:
        raise VcsbenchError(
            f"transport {name!r} is not known; use one of {', '.join(TRANSPORTS)}"
        ) from None


HANDSHAKE_S = 10.0


class Service:
    """A transport's server over the repositories below ``root``, started for a run: its
    credentials made in ``home`` (the run's, inside the sandbox: they go with it), its
    logs in ``logs``; with a ``distance``, a proxy in front of it, calibrated. Clients use
    :meth:`url`, :attr:`client_env` and :attr:`ca_file`."""

    def __init__(
        self,
        transport: Transport,
        root: Path,
        home: Path,
        logs: Path,
        *,
        port: int = 0,
        host: str = HOST,
        distance: Distance | None = None,
    ) -> None:
        self.transport = transport
        self.root = root
        self.home = home
        self.logs = logs
        self.port = port
        self.host = host
        self.distance = distance
        self.certificate: Certificate | None = None
        self.keys: SshKeys | None = None
        self.server: Server | None = None
        self.proxy: Toxiproxy | None = None
        self.proxy_port: int | None = None
        self.calibration: dict[str, Any] | None = None
        self.url_base = ""
        """What :meth:`url` puts a repository's name after."""
        self.client_env: dict[str, str] = {}
        """What a client's commands need in their environment (ssh command, trust)."""
        self.ca_file: str | None = None
        """The certificate a TLS client trusts, alone."""

    # -- lifecycle -----------------------------------------------------------------------

    def start(self, record: Callable[[int, Path | None], None]) -> None:
        """Make the credentials, start the server (and the proxy), each handed to
        ``record`` (pid, cgroup) as soon as it runs, then check that a client gets
        through."""
        self.home.mkdir(mode=0o700)
        self.server = self._make_server()
        self._start(self.server, record)
        port = self.server.port
        if self.distance is not None:
            self.proxy = Toxiproxy(self.logs)
            self._start(self.proxy.server, record)
            self.proxy_port = self.proxy.proxy(
                "server", (self.server.host, self.server.port), self.host
            )
            self.proxy.apply("server", self.distance)
            self.calibration = self.proxy.calibrate(self.distance)
            port = self.proxy_port
        self._client(port)
        self._handshake(port)

    def _start(self, server: Server, record: Callable[[int, Path | None], None]) -> None:
        server.start()
        assert server.pid is not None
        record(server.pid, server.group.path if server.group is not None else None)

    def stop(self, forget: Callable[[int], None]) -> None:
        """Stop the proxy and the server; ``forget`` each one's record once it has ended;
        remove the credentials."""
        for server in (self.proxy.server if self.proxy else None, self.server):
            if server is not None and server.pid is not None:
                pid = server.pid
                server.stop()
                forget(pid)
        if self.home.is_dir():  # the keys, the certificate: nothing of them is kept
            for made in self.home.iterdir():
                made.unlink()
            self.home.rmdir()

    def _make_server(self) -> Server:
        t = self.transport
        if t.server == "svnserve":
            return svnserve(self.root, self.logs, self.port, self.host)
        if t.server == "git-daemon":
            return git_daemon(self.root, self.logs, self.port, self.host)
        if t.server == "apache":
            if t.tls:
                self.certificate = Certificate.make(self.home, self.host)
            return apache_server.apache(
                self.root, self.logs, t.vcs, self.port, self.host, self.certificate
            )
        self.keys = SshKeys.make(self.home)
        return sshd(self.root, self.logs, self.keys, t.vcs, self.port, self.host)

    # -- what clients need ---------------------------------------------------------------

    def _client(self, port: int) -> None:
        t, host = self.transport, self.host
        if t.server == "sshd":
            assert self.keys is not None
            user = run_user()
            if t.vcs == "svn":  # svn+ssh URLs carry no port: the ssh command does
                self.url_base = f"svn+ssh://{user}@{host}"
                self.client_env["SVN_SSH"] = self.keys.client_command(port)
            elif t.vcs == "git":
                self.url_base = f"ssh://{user}@{host}:{port}{self.root}"
                self.client_env["GIT_SSH_COMMAND"] = self.keys.client_command()
            else:  # hg: a path relative to the forced command's directory
                self.url_base = f"ssh://{user}@{host}:{port}"
                self._hgrc(f"[ui]\nssh = {self.keys.client_command()}\n")
            return
        scheme = {"svnserve": "svn", "git-daemon": "git"}.get(t.server)
        if scheme is None:
            scheme = "https" if t.tls else "http"
        self.url_base = f"{scheme}://{host}:{port}" + (f"/{t.vcs}" if t.server == "apache" else "")
        if self.certificate is not None:
            self.ca_file = str(self.certificate.cert)
            if t.vcs == "git":
                self.client_env["GIT_SSL_CAINFO"] = self.ca_file
            elif t.vcs == "hg":
                self._hgrc(f"[web]\ncacerts = {self.ca_file}\n")

    def _hgrc(self, text: str) -> None:
        """Mercurial clients read this run's configuration and no other (``HGRCPATH``)."""
        hgrc = self.home / "client.hgrc"
        hgrc.write_text(text)
        self.client_env["HGRCPATH"] = str(hgrc)

    def url(self, repo: str) -> str:
        return f"{self.url_base}/{repo}"

    def server_side(self, argv: list[str]) -> list[str]:
        """A command the server's side runs (making a repository): as Apache's user for
        Apache, whose repositories are that user's."""
        if self.transport.server == "apache":
            return apache_server.as_server_user(argv)
        return argv

    def _handshake(self, port: int) -> None:
        """A connection through the port clients use that the server answers: TLS
        completed against the run's certificate alone; ssh's banner."""
        deadline = time.monotonic() + HANDSHAKE_S
        while True:
            try:
                with socket.create_connection((self.host, port), timeout=HANDSHAKE_S) as sock:
                    if self.transport.tls:
                        import ssl

                        context = ssl.create_default_context(cafile=self.ca_file)
                        with context.wrap_socket(sock, server_hostname=self.host):
                            return
                    if self.transport.server == "sshd":
                        if sock.recv(64).startswith(b"SSH-2.0-"):
                            return
                        raise OSError("no SSH banner")
                    return
            except OSError as exc:
                if time.monotonic() > deadline:
                    raise VcsbenchError(
                        f"{self.transport.name}: no handshake with the server on "
                        f"{self.host}:{port} ({exc}); see {self.logs}"
                    ) from None
                time.sleep(0.05)

    def describe(self) -> dict[str, Any]:
        """What results record: the transport, the server's command, the credentials made
        for it (fingerprints, never keys), the distance asked for and measured."""
        assert self.server is not None
        found: dict[str, Any] = {
            "name": self.server.name,
            "transport": self.transport.name,
            "summary": self.transport.summary,
            "argv": " ".join(self.server.argv),
            "log": str(self.server.log),
            "cpu": self.server.cpu_method,
            "versions": self.transport.versions(),
        }
        if self.certificate is not None:
            found["tls"] = self.certificate.describe()
        if self.keys is not None:
            found["ssh"] = {
                **self.keys.describe(),
                "forced_command": forced_command(self.transport.vcs, self.root),
            }
        if self.distance is not None:
            found["distance"] = {
                **self.distance.to_json(),
                "by": "toxiproxy (latency and bandwidth toxics) on 127.0.0.1",
                "calibration": self.calibration,
            }
        return found
