"""What a client's verbs are over each access path (create, init, clone, write, commit,
update: :class:`vcsbench.load.client_base.Client`); scenarios compose them into sessions.

Access paths:

- ``local:BACKEND``: a vcsbench backend (``local:svn-fs``, ``local:git-pygit2``) in a
  process of the client's own, against the sandbox's repositories directly (how MarkUs
  called Subversion through its bindings in 2011); a library's blocking calls in one
  process could not overlap, so each client has one.
- ``svnserve``: ``svnadmin create`` on the server's side for a first visit, then one
  ``svnmucc`` commit over svn://.
- ``git-daemon``: ``git init --bare`` on the server's side for a first visit; the
  student's clone commits and pushes over git://.
- ``apache-svn``, ``apache-git``: the same over http:// through Apache httpd, with
  mod_dav_svn and ``git http-backend``; the server's side runs as Apache's user.
- ``apache-hg``, ``hg-ssh``: ``hg init`` on the server's side for a first visit; the
  student's repository commits and pushes over http:// (hgweb) or ssh:// (hg-ssh).
- ``*-https``, ``*-ssh``: the same over TLS (the client trusts the run's certificate
  alone) or ssh (the run's key and host key alone); what a client needs comes from the
  run (``client_env``, ``ca_file``), never from the machine's configuration.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vcsbench.backends._svn import parents_of
from vcsbench.load.client_base import (
    MAX_RETRIES,
    Client,
    SessionError,
    local_client_child,
    rejected,
    run_program,
)
from vcsbench.load.engine_config import EngineConfig
from vcsbench.load.requests import Clone, Commit, Create, Request, Stage, Update, encode


class SvnUrlClient(Client):
    """svn commits with ``svnmucc`` from the files written (no working copy is needed to
    commit, as none is at a student's first visit); a clone is a checkout."""

    def __init__(self, config: EngineConfig, scratch: Path) -> None:
        super().__init__(config, scratch)
        self.new_directories: list[str] = []
        if self.ca_file is not None:  # the client's configuration: the run's certificate alone
            (scratch / "servers").write_text(
                f"[global]\nssl-authority-files = {self.ca_file}\nssl-trust-default-ca = no\n"
            )

    def _svn(self, program: str, *args: str) -> list[str]:
        return [program, *args, "--non-interactive", "--config-dir", str(self.scratch)]

    def write(self, wc: Path, files: Mapping[str, bytes]) -> None:
        """As any client writes them; into a checkout (a term's repository), the
        directories it did not have are noted: the commit makes them."""
        checkout = (wc / ".svn").is_dir()
        self.new_directories = (
            [d for d in parents_of(list(files)) if not (wc / d).is_dir()] if checkout else []
        )
        super().write(wc, files)

    def _commit(self, name: str, wc: Path, message: str, *, empty: bool, retry: bool) -> int:
        url = f"{self.url_base}/{name}"
        argv = self._svn("svnmucc", "--no-auth-cache", "-m", message, "-U", url)
        for directory in parents_of(self.written) if empty else self.new_directories:
            argv += ["mkdir", directory]
        for rel in self.written:
            argv += ["put", str(wc / rel), rel]
        for retries in range(MAX_RETRIES + 1):
            try:
                run_program(argv, "commit", self.env)
                return retries
            except SessionError as exc:
                if not retry or not rejected(exc) or retries == MAX_RETRIES:
                    raise
        return MAX_RETRIES

    def clone(self, name: str, wc: Path, kind: str = "clone") -> None:
        argv = self._svn("svn", "checkout", "-q", f"{self.url_base}/{name}", str(wc))
        run_program(argv, "checkout" if kind == "clone" else kind, self.env)

    def update(self, wc: Path) -> None:
        run_program(self._svn("svn", "update", "-q", str(wc)), "update", self.env)


class GitRemoteClient(Client):
    """A working copy is a clone (or, for a repository not made yet, a new one with the
    server as its remote); a commit is ``git commit`` and a push of the branch."""

    def __init__(self, config: EngineConfig, scratch: Path) -> None:
        from vcsbench.backends._git import git_env

        super().__init__(config, scratch)
        self.env = {**git_env(), **config.client_env}

    def _git(self, wc: Path, *args: str) -> list[str]:
        return ["git", "-C", str(wc), *args]

    def init(self, name: str, wc: Path) -> None:
        run_program(["git", "init", "-q", "-b", "main", str(wc)], "prepare", self.env)
        url = f"{self.url_base}/{name}"
        run_program(self._git(wc, "remote", "add", "origin", url), "prepare", self.env)

    def clone(self, name: str, wc: Path, kind: str = "clone") -> None:
        run_program(["git", "clone", "-q", f"{self.url_base}/{name}", str(wc)], kind, self.env)

    def _commit(self, name: str, wc: Path, message: str, *, empty: bool, retry: bool) -> int:
        run_program(self._git(wc, "add", "-A"), "commit", self.env)
        run_program(self._git(wc, "commit", "-q", "-m", message), "commit", self.env)
        for retries in range(MAX_RETRIES + 1):  # the working copy's branch, whatever its name
            try:
                run_program(self._git(wc, "push", "-q", "origin", "HEAD"), "push", self.env)
                return retries
            except SessionError as exc:
                if not retry or not rejected(exc) or retries == MAX_RETRIES:
                    raise
            run_program(self._git(wc, "pull", "-q", "--rebase"), "pull", self.env)
        return MAX_RETRIES

    def update(self, wc: Path) -> None:
        run_program(self._git(wc, "pull", "-q", "--ff-only"), "update", self.env)


class HgRemoteClient(Client):
    """As git's; hg reads the run's configuration alone (``HGRCPATH``: its ssh command or
    certificate, or none), and a new working copy pushes to the server by its URL."""

    def __init__(self, config: EngineConfig, scratch: Path) -> None:
        from vcsbench.backends._hg import hg_env

        super().__init__(config, scratch)
        self.env = {**hg_env(), **config.client_env}

    def _hg(self, wc: Path, *args: str) -> list[str]:
        return ["hg", "--cwd", str(wc), *args]

    def init(self, name: str, wc: Path) -> None:
        run_program(["hg", "init", str(wc)], "prepare", self.env)

    def clone(self, name: str, wc: Path, kind: str = "clone") -> None:
        run_program(["hg", "clone", "-q", f"{self.url_base}/{name}", str(wc)], kind, self.env)

    def _commit(self, name: str, wc: Path, message: str, *, empty: bool, retry: bool) -> int:
        run_program(self._hg(wc, "commit", "-A", "-m", message), "commit", self.env)
        push = self._hg(wc, "push", f"{self.url_base}/{name}")
        for retries in range(MAX_RETRIES + 1):
            try:
                run_program(push, "push", self.env)
                return retries
            except SessionError as exc:
                if not retry or not rejected(exc) or retries == MAX_RETRIES:
                    raise
            # another committer's changeset landed first: take it, put ours on top
            rebase = ("--config", "extensions.rebase=")
            run_program(self._hg(wc, *rebase, "pull", "--rebase"), "pull", self.env)
        return MAX_RETRIES

    def update(self, wc: Path) -> None:
        run_program(self._hg(wc, "pull", "-q", "-u"), "update", self.env)


class LocalClient(Client):
    """A backend in a process of this client's own (``python -m vcsbench.load.client_process``),
    against the sandbox's repositories directly: each verb one typed request
    (:mod:`vcsbench.load.requests`)."""

    def __init__(self, config: EngineConfig, scratch: Path) -> None:
        super().__init__(config, scratch)
        backend = self.path.backend
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "vcsbench.load.client_process", backend, str(scratch)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            preexec_fn=local_client_child,
        )
        # Started and warm before any step: a step's sessions do not share the CPU with
        # the clients' own start-up.
        assert self.proc.stdout is not None
        if b'"ready"' not in self.proc.stdout.readline():
            self.close()
            raise SessionError("client", f"the {backend} client process did not start")

    @property
    def pid(self) -> int:
        return self.proc.pid

    def create(self, name: str) -> None:
        self._ask(Create(str(self.repos / name)))

    def init(self, name: str, wc: Path) -> None:
        """The backend commits into the repository itself: no working copy."""

    def write(self, wc: Path, files: Mapping[str, bytes]) -> None:
        # Staged in the client's process now, untimed: the payload's files can be large.
        self._ask(Stage({rel: data.decode("latin-1") for rel, data in files.items()}))

    def commit(
        self, name: str, wc: Path, message: str, *, empty: bool, retry: bool, create: bool = False
    ) -> int:
        """One request, the create with it (a second round trip costs about 95 us here,
        inside a timed session)."""
        request = Commit(str(self.repos / name), message, MAX_RETRIES if retry else 0, create)
        return int(self._ask(request).get("retries", 0))

    def clone(self, name: str, wc: Path, kind: str = "clone") -> None:
        self._ask(Clone(str(self.repos / name), str(wc), kind))

    def update(self, wc: Path) -> None:
        self._ask(Update(str(wc)))

    def _ask(self, request: Request) -> dict[str, Any]:
        """Send one request; the reply, or the failure as a SessionError."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(encode(request))
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except OSError as exc:
            raise SessionError("client", f"the client process is gone ({exc})") from None
        if not line:
            raise SessionError("client", "the client process ended")
        reply: dict[str, Any] = json.loads(line)
        if reply.get("error"):
            raise SessionError(reply["kind"], reply["error"])
        return reply

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        super().close()


def make_client(config: EngineConfig, scratch: Path) -> Client:
    scratch.mkdir(exist_ok=True)  # in the clients' directory, which the run made: never again
    path = config.path
    if path.local:
        return LocalClient(config, scratch)
    remote = {"svn": SvnUrlClient, "git": GitRemoteClient, "hg": HgRemoteClient}[path.vcs]
    return remote(config, scratch)
