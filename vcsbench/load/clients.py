"""What one client does over each access path: a student's session at the deadline.

A session is the first visit's repository creation (unless the repositories were made
beforehand) and one commit of the student's submission. ``prepare`` is the client's own
untimed work (writing the files on the student's machine); ``session`` is what is timed.

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
from vcsbench.load.repositories import (
    SHARED,
    STORM,
    repo_name,
    shared_content,
    shared_file,
)
from vcsbench.sandbox.removal import remove_tree


class SvnUrlClient(Client):
    def __init__(self, config: EngineConfig, scratch: Path) -> None:
        super().__init__(config, scratch)
        if self.ca_file is not None:  # the client's configuration: the run's certificate alone
            (scratch / "servers").write_text(
                f"[global]\nssl-authority-files = {self.ca_file}\nssl-trust-default-ca = no\n"
            )

    def prepare(self, student: int, visit: int, files: Mapping[str, bytes]) -> None:
        self.src = self.scratch / "src"
        remove_tree(self.src)
        for rel, data in files.items():
            target = self.src / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)

    def session(self, student: int, visit: int, files: Mapping[str, bytes]) -> None:
        name = repo_name(student)
        if visit == 1 and not self.precreated:
            self.create_server_side(student)
        argv = ["svnmucc", "--non-interactive", "--no-auth-cache"]
        argv += ["--config-dir", str(self.scratch), "-m", f"submission {visit}"]
        argv += ["-U", f"{self.url_base}/{name}"]
        if visit == 1:
            for directory in parents_of(list(files)):
                argv += ["mkdir", directory]
        for rel in files:
            argv += ["put", str(self.src / rel), rel]
        run_program(argv, "commit", self.env)

    def shared_commit(self, committer: int, n: int) -> int:
        name = shared_file(committer)
        source = self.scratch / name
        source.write_bytes(shared_content(committer, n))
        argv = ["svnmucc", "--non-interactive", "--no-auth-cache", "--config-dir"]
        argv += [str(self.scratch), "-m", f"committer {committer} commit {n}"]
        argv += ["-U", f"{self.url_base}/{SHARED}", "put", str(source), name]
        for retries in range(MAX_RETRIES + 1):
            try:
                run_program(argv, "commit", self.env)
                return retries
            except SessionError as exc:
                if not rejected(exc) or retries == MAX_RETRIES:
                    raise
        return MAX_RETRIES

    def clone(self, n: int) -> None:
        argv = ["svn", "checkout", "-q", "--non-interactive", "--config-dir", str(self.scratch)]
        run_program(
            [*argv, f"{self.url_base}/{STORM}", str(self.clone_dir(n))], "checkout", self.env
        )

    def update_prepare(self, student: int) -> None:
        wc = self.wc_dir(student)
        if not wc.exists():
            argv = ["svn", "checkout", "-q", "--non-interactive", "--config-dir"]
            argv += [str(self.scratch), f"{self.url_base}/{repo_name(student)}", str(wc)]
            run_program(argv, "prepare", self.env)

    def update(self, student: int) -> None:
        argv = ["svn", "update", "-q", "--non-interactive", "--config-dir", str(self.scratch)]
        run_program([*argv, str(self.wc_dir(student))], "update", self.env)


class GitRemoteClient(Client):
    """Each student's clone stays in the clients' directory between visits, as on a
    student's machine, so a later visit pushes on top of the earlier ones."""

    def __init__(self, config: EngineConfig, scratch: Path) -> None:
        from vcsbench.backends._git import git_env

        super().__init__(config, scratch)
        self.env = {**git_env(), **config.client_env}

    def prepare(self, student: int, visit: int, files: Mapping[str, bytes]) -> None:
        self.work = self.scratch.parent / repo_name(student)
        if not self.work.exists():
            url = f"{self.url_base}/{repo_name(student)}"
            run_program(["git", "init", "-q", "-b", "main", str(self.work)], "prepare", self.env)
            run_program(self._git("remote", "add", "origin", url), "prepare", self.env)
        for rel, data in files.items():
            target = self.work / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)

    def _git(self, *args: str) -> list[str]:
        return ["git", "-C", str(self.work), *args]

    def session(self, student: int, visit: int, files: Mapping[str, bytes]) -> None:
        if visit == 1 and not self.precreated:
            self.create_server_side(student)
        run_program(self._git("add", "-A"), "commit", self.env)
        run_program(self._git("commit", "-q", "-m", f"submission {visit}"), "commit", self.env)
        run_program(self._git("push", "-q", "origin", "main"), "push", self.env)

    def clone(self, n: int) -> None:
        argv = ["git", "clone", "-q", f"{self.url_base}/{STORM}", str(self.clone_dir(n))]
        run_program(argv, "clone", self.env)

    def update_prepare(self, student: int) -> None:
        wc = self.wc_dir(student)
        if not wc.exists():
            argv = ["git", "clone", "-q", f"{self.url_base}/{repo_name(student)}", str(wc)]
            run_program(argv, "prepare", self.env)

    def update(self, student: int) -> None:
        argv = ["git", "-C", str(self.wc_dir(student)), "pull", "-q", "--ff-only"]
        run_program(argv, "update", self.env)

    def shared_prepare(self, committer: int) -> None:
        self.work = self.scratch / "shared-clone"
        if not self.work.exists():
            argv = ["git", "clone", "-q", f"{self.url_base}/{SHARED}", str(self.work)]
            run_program(argv, "prepare", self.env)

    def shared_commit(self, committer: int, n: int) -> int:
        (self.work / shared_file(committer)).write_bytes(shared_content(committer, n))
        run_program(self._git("add", "-A"), "commit", self.env)
        message = f"committer {committer} commit {n}"
        run_program(self._git("commit", "-q", "-m", message), "commit", self.env)
        for retries in range(MAX_RETRIES + 1):  # the clone's branch, whatever its name
            try:
                run_program(self._git("push", "-q", "origin", "HEAD"), "push", self.env)
                return retries
            except SessionError as exc:
                if not rejected(exc) or retries == MAX_RETRIES:
                    raise
            run_program(self._git("pull", "-q", "--rebase"), "pull", self.env)
        return MAX_RETRIES


class HgRemoteClient(Client):
    """As git's: each student's repository stays in the clients' directory between visits
    and pushes its new changeset; hg reads the run's configuration alone (``HGRCPATH``:
    its ssh command or certificate, or none)."""

    def __init__(self, config: EngineConfig, scratch: Path) -> None:
        from vcsbench.backends._hg import hg_env

        super().__init__(config, scratch)
        self.env = {**hg_env(), **config.client_env}

    def _hg(self, *args: str) -> list[str]:
        return ["hg", "--cwd", str(self.work), *args]

    def prepare(self, student: int, visit: int, files: Mapping[str, bytes]) -> None:
        self.work = self.scratch.parent / repo_name(student)
        if not self.work.exists():
            run_program(["hg", "init", str(self.work)], "prepare", self.env)
        for rel, data in files.items():
            target = self.work / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)

    def session(self, student: int, visit: int, files: Mapping[str, bytes]) -> None:
        if visit == 1 and not self.precreated:
            self.create_server_side(student)
        run_program(self._hg("commit", "-A", "-m", f"submission {visit}"), "commit", self.env)
        run_program(self._hg("push", f"{self.url_base}/{repo_name(student)}"), "push", self.env)

    def clone(self, n: int) -> None:
        argv = ["hg", "clone", "-q", f"{self.url_base}/{STORM}", str(self.clone_dir(n))]
        run_program(argv, "clone", self.env)

    def update_prepare(self, student: int) -> None:
        wc = self.wc_dir(student)
        if not wc.exists():
            argv = ["hg", "clone", "-q", f"{self.url_base}/{repo_name(student)}", str(wc)]
            run_program(argv, "prepare", self.env)

    def update(self, student: int) -> None:
        argv = ["hg", "--cwd", str(self.wc_dir(student)), "pull", "-q", "-u"]
        run_program(argv, "update", self.env)

    def shared_prepare(self, committer: int) -> None:
        self.work = self.scratch / "shared-clone"
        if not self.work.exists():
            argv = ["hg", "clone", "-q", f"{self.url_base}/{SHARED}", str(self.work)]
            run_program(argv, "prepare", self.env)

    def shared_commit(self, committer: int, n: int) -> int:
        (self.work / shared_file(committer)).write_bytes(shared_content(committer, n))
        message = f"committer {committer} commit {n}"
        run_program(self._hg("commit", "-A", "-m", message), "commit", self.env)
        for retries in range(MAX_RETRIES + 1):
            try:
                run_program(self._hg("push"), "push", self.env)
                return retries
            except SessionError as exc:
                if not rejected(exc) or retries == MAX_RETRIES:
                    raise
            # another committer's changeset landed first: take it, put ours on top
            rebase = ("--config", "extensions.rebase=")
            run_program(self._hg(*rebase, "pull", "--rebase"), "pull", self.env)
        return MAX_RETRIES


class LocalClient(Client):
    """A backend in a process of this client's own (``python -m vcsbench.load.client_process``)."""

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

    def prepare(self, student: int, visit: int, files: Mapping[str, bytes]) -> None:
        # The request is encoded here, untimed: the payload's files can be large.
        self.request = _encode(
            {
                "repo": str(self.repos / repo_name(student)),
                "create": visit == 1 and not self.precreated,
                "files": {rel: data.decode("latin-1") for rel, data in files.items()},
                "message": f"submission {visit}",
            }
        )

    def session(self, student: int, visit: int, files: Mapping[str, bytes]) -> None:
        self._ask(self.request)

    def clone(self, n: int) -> None:
        self._ask(_encode({"repo": str(self.repos / STORM), "clone": str(self.clone_dir(n))}))

    def update_prepare(self, student: int) -> None:
        wc = self.wc_dir(student)
        if not wc.exists():
            repo = str(self.repos / repo_name(student))
            self._ask(_encode({"repo": repo, "working_copy": str(wc)}))
        self.request = _encode({"repo": "", "update": str(wc)})

    def update(self, student: int) -> None:
        self._ask(self.request)

    def shared_commit(self, committer: int, n: int) -> int:
        request = {
            "repo": str(self.repos / SHARED),
            "create": False,
            "files": {shared_file(committer): shared_content(committer, n).decode()},
            "message": f"committer {committer} commit {n}",
            "retry": MAX_RETRIES,
        }
        return int(self._ask(_encode(request)).get("retries", 0))

    def _ask(self, line: bytes) -> dict[str, Any]:
        """Send one encoded request; the reply, or the failure as a SessionError."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(line)
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


def _encode(request: dict[str, Any]) -> bytes:
    return json.dumps(request).encode() + b"\n"


def make_client(config: EngineConfig, scratch: Path) -> Client:
    scratch.mkdir(exist_ok=True)  # in the clients' directory, which the run made: never again
    path = config.path
    if path.local:
        return LocalClient(config, scratch)
    remote = {"svn": SvnUrlClient, "git": GitRemoteClient, "hg": HgRemoteClient}[path.vcs]
    return remote(config, scratch)
