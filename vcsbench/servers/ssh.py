"""sshd as a VCS host runs it: keys made for the run, one client key allowed, and that key
bound to one command -- the VCS's own restricted entry point (``git-shell``, ``svnserve
-t``, ``hg-ssh``) -- so a connection can run nothing else.

Nothing of the machine's ssh configuration is read or changed: sshd reads only the run's
``sshd_config`` (its host key, its ``authorized_keys``), and clients run ``ssh -F
/dev/null`` with the run's key and known-hosts file. OpenSSH's sshd, started by root,
needs an empty ``/run/sshd`` to confine its unprivileged half in; it is given one in a
mount namespace of its own (a private tmpfs on ``/run``, which ends with it), so the
machine's ``/run`` is never written. sshd runs as root and allows root, by key, only
with the forced command (``PermitRootLogin forced-commands-only``); passwords are refused.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

from vcsbench.errors import VcsbenchError
from vcsbench.servers.server import HOST, Server, free_port

SSHD = "/usr/sbin/sshd"
HOST_ALIAS = "vcsbench-sshd"
"""The name the client checks the host key under, whatever port (or proxy) it goes
through."""
MAX_STARTUPS = 256
"""Connections sshd takes before authentication at once; its default (10:30:100) drops
some beyond 10 at random, which a clone storm of 16 reaches."""

FORCED = {
    "git": 'cd {root} && exec git-shell -c "$SSH_ORIGINAL_COMMAND"',
    "svn": "exec svnserve -t -r {root}",
    "hg": "cd {root} && HGRCPATH= HGPLAIN=1 exec hg-ssh *",
}
"""The one command each VCS's key may run: the VCS's restricted entry point over the
repositories below ``root`` (hg-ssh: those that exist when the connection is made)."""


def _keygen(path: Path) -> None:
    made = subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "vcsbench-run", "-f", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    if made.returncode != 0:
        raise VcsbenchError(f"ssh-keygen could not make the run's key: {made.stderr.strip()}")


@dataclass(frozen=True)
class SshKeys:
    """The run's host key, client key and known-hosts file, in a directory of its own."""

    directory: Path
    host_key: Path
    client_key: Path
    known_hosts: Path
    fingerprint: str
    """The host key's SHA-256 fingerprint, as ssh-keygen prints it."""

    @classmethod
    def make(cls, directory: Path) -> SshKeys:
        host_key, client_key = directory / "host_key", directory / "client_key"
        _keygen(host_key)
        _keygen(client_key)
        public = (directory / "host_key.pub").read_text().split()
        known_hosts = directory / "known_hosts"
        known_hosts.write_text(f"{HOST_ALIAS} {public[0]} {public[1]}\n")
        printed = subprocess.run(
            ["ssh-keygen", "-l", "-E", "sha256", "-f", str(host_key)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        return cls(directory, host_key, client_key, known_hosts, printed[1])

    def client_command(self, port: int | None = None) -> str:
        """The ssh a client runs (``GIT_SSH_COMMAND``, ``SVN_SSH``, Mercurial's ``ui.ssh``):
        the run's key alone, the run's host key alone, no prompt; ``port`` where the URL
        cannot say it (Subversion's svn+ssh)."""
        argv = [
            "ssh", "-F", "/dev/null", "-i", str(self.client_key),
            "-o", "IdentitiesOnly=yes", "-o", "IdentityAgent=none",
            "-o", f"UserKnownHostsFile={self.known_hosts}",
            "-o", "GlobalKnownHostsFile=/dev/null",
            "-o", f"HostKeyAlias={HOST_ALIAS}",
            "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes",
            "-o", "LogLevel=ERROR",
        ]  # fmt: skip
        if port is not None:
            argv += ["-p", str(port)]
        return shlex.join(argv)

    def describe(self) -> dict[str, str]:
        return {"host_key": f"ed25519, made for the run ({self.fingerprint})"}


def forced_command(vcs: str, root: Path) -> str:
    return FORCED[vcs].format(root=shlex.quote(str(root)))


def sshd(
    root: Path, logs: Path, keys: SshKeys, vcs: str, port: int = 0, host: str = HOST
) -> Server:
    """sshd on ``host``:``port`` for ``vcs``'s repositories below ``root``: the run's key,
    bound to the VCS's command (:data:`FORCED`), the run's user alone."""
    port = port or free_port(host)
    user = run_user()
    forced = forced_command(vcs, root)
    authorized = keys.directory / "authorized_keys"
    public = (keys.directory / "client_key.pub").read_text().strip()
    escaped = forced.replace("\\", "\\\\").replace('"', '\\"')
    authorized.write_text(f'command="{escaped}",restrict {public}\n')
    authorized.chmod(0o600)
    config = logs / "sshd_config"  # paths and settings, no secret: kept with the logs
    config.write_text(
        "\n".join(
            [
                f"ListenAddress {host}:{port}",
                f"HostKey {keys.host_key}",
                f"AuthorizedKeysFile {authorized}",
                "PidFile none",
                f"AllowUsers {user}",
                "PermitRootLogin forced-commands-only",
                "PubkeyAuthentication yes",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "UsePAM no",
                # the run's files live below the sandbox's temporary directory, which
                # others may write; they are the run's own (0600 in a 0700 directory)
                "StrictModes no",
                "UseDNS no",
                "PrintMotd no",
                "PermitUserEnvironment no",
                # sshd runs the forced command through the user's shell; bash built as
                # Debian's reads ~/.bashrc for a command sshd starts, unless it is a
                # nested shell. SHLVL=1 makes it one: the user's rc (pyenv init, say) is
                # no part of a VCS command, and a session killed while that rc held a
                # lock left every later one waiting 60 s for it (seen: pyenv rehash)
                "SetEnv SHLVL=1",
                f"MaxStartups {MAX_STARTUPS}",
                "LogLevel VERBOSE",
            ]
        )
        + "\n"
    )
    inside = (
        "mount -t tmpfs -o size=1m,mode=755 vcsbench-sshd /run && mkdir -m 755 /run/sshd && "
        f"exec {SSHD} -D -e -f {shlex.quote(str(config))}"
    )
    argv = ["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c", inside]
    url = f"ssh://{user}@{host}:{port}"
    return Server("sshd", argv, port, url, logs / "sshd.log", host)


def run_user() -> str:
    """The run's user: the one sshd lets in."""
    import pwd

    return pwd.getpwuid(os.geteuid()).pw_name
