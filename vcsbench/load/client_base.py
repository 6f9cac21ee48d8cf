"""What every load client is: a student machine with a scratch directory of its own that
offers the VCS verbs scenarios compose (:class:`Client`), the error a failed session
raises, and how a client runs a program (its priority, the line that says why it failed,
a refusal told from a failure). Each access path's verbs are in
:mod:`vcsbench.load.clients`."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vcsbench.load.engine_config import EngineConfig
from vcsbench.load.repositories import server_side_create
from vcsbench.process import die_with_parent
from vcsbench.sandbox.removal import remove_tree  # what is left goes with the run's clients

MAX_RETRIES = 50


REFUSALS = (
    "rejected",
    "fetch first",
    "non-fast-forward",
    "out of date",
    "out-of-date",
    "new remote head",
    "repository changed while pushing",
    "current tip is not the first parent",
)
"""What a VCS says when it refuses a commit because another landed first (git: not a
fast-forward, or to libgit2 committing into a shared repository the branch moved since
its tip was read; svn: out of date; hg: a new remote head, or the repository changed while
pushing), which a client answers by updating and trying again."""


def rejected(exc: SessionError) -> bool:
    text = str(exc).lower()
    return any(mark in text for mark in REFUSALS)


class SessionError(Exception):
    """A failed session; ``kind`` is what the error table counts it under."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind


def ordinary_priority() -> None:
    """In a client's process, before its program runs: the ordinary CPU priority. The load
    engine runs above it (as root), so that it keeps its schedule when the clients and
    the servers fill the CPU; what it starts competes as any client would."""
    os.setpriority(os.PRIO_PROCESS, 0, 0)


def _preexec() -> Any:
    return ordinary_priority if os.getpriority(os.PRIO_PROCESS, 0) != 0 else None


def local_client_child() -> None:
    """A local client's process: the ordinary priority, and death with the engine that
    started it (one killed mid-commit had gone on writing below the clients' directory
    after the run removed it, and made it again)."""
    ordinary_priority()
    die_with_parent()


def run_program(argv: list[str], kind: str, env: Mapping[str, str] | None = None) -> None:
    proc = subprocess.run(
        argv,
        capture_output=True,
        env=dict(env) if env else None,
        check=False,
        preexec_fn=_preexec(),
    )
    if proc.returncode != 0:
        text = (proc.stderr or proc.stdout).decode(errors="replace").strip().splitlines()
        # the line that says why: a refusal, else Subversion's error or hg's abort
        refusal = [line for line in text if any(mark in line.lower() for mark in REFUSALS)]
        telling = refusal or [line for line in text if "E1" in line or "abort:" in line]
        line = (telling or text or [f"{argv[0]} exited {proc.returncode}"])[-1]
        raise SessionError(kind, line.strip())


class Client:
    """One student machine: a scratch directory of its own outside the sandbox, and the
    verbs a session is made of over its access path. A scenario
    (:mod:`vcsbench.load.scenarios`) says which verbs a session is and which of them are
    timed; a verb's failure is a :class:`SessionError` of the kind it names."""

    def __init__(self, config: EngineConfig, scratch: Path) -> None:
        self.config = config
        self.path = config.path
        self.repos = Path(config.repos)
        self.scratch = scratch
        self.url_base = config.url_base
        self.env = {**os.environ, **config.client_env}
        """The environment of every command the client runs: the run's ssh command or
        certificate where its transport needs one."""
        self.ca_file = config.ca_file
        self.index = 0
        """Which of the run's clients this is (shared: the committer it plays)."""
        self.written: list[str] = []
        """The files :meth:`write` wrote last, which the next commit commits."""

    # -- the verbs -------------------------------------------------------------------

    def create(self, name: str) -> None:
        """The server's side makes repository ``name``."""
        argv, env = server_side_create(self.path, self.repos / name)
        run_program(argv, "create", env)

    def init(self, name: str, wc: Path) -> None:
        """A new working copy at ``wc`` whose commits go to repository ``name`` (which
        may not exist yet): by default a directory of the files to commit."""
        wc.mkdir(parents=True, exist_ok=True)

    def clone(self, name: str, wc: Path, kind: str = "clone") -> None:
        """A working copy of repository ``name`` as it is now, at ``wc``; a failure
        counts under ``kind``."""
        raise NotImplementedError

    def write(self, wc: Path, files: Mapping[str, bytes]) -> None:
        """The files as the student's machine has them before committing them. A working
        copy checked out of a term's history is data: a link in it is replaced where a
        file is written, never written through, and a directory that is a link refused."""
        self.written = list(files)
        for rel, data in files.items():
            target = wc / rel
            for parent in list(target.relative_to(wc).parents)[:-1]:
                if (wc / parent).is_symlink():
                    raise SessionError("prepare", f"{wc / parent} is a link, not a directory")
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_symlink():
                target.unlink()
            target.write_bytes(data)

    def commit(
        self, name: str, wc: Path, message: str, *, empty: bool, retry: bool, create: bool = False
    ) -> int:
        """The files last written to ``wc`` committed to repository ``name`` (``empty``:
        which has no revision yet; ``create``: made first, by :meth:`create`, as a first
        visit makes it); with ``retry``, a commit refused because another landed first is
        brought up to date and tried again. Returns the retries."""
        if create:
            self.create(name)
        return self._commit(name, wc, message, empty=empty, retry=retry)

    def _commit(self, name: str, wc: Path, message: str, *, empty: bool, retry: bool) -> int:
        """:meth:`commit` over the client's access path, the repository there."""
        raise NotImplementedError

    def update(self, wc: Path) -> None:
        """The working copy at ``wc`` brought to its repository's newest revision."""
        raise NotImplementedError

    # -- where a client keeps its working copies ---------------------------------------

    def student_dir(self, name: str) -> Path:
        """The student's own working copy of ``name``: in the clients' directory, kept
        between visits as on a student's machine (any client of the engine may serve a
        student's next visit)."""
        return self.scratch.parent / name

    def wc_dir(self, name: str) -> Path:
        """This client's own working copy of ``name``, kept between its sessions."""
        return self.scratch / f"wc-{name}"

    def clone_dir(self, n: int) -> Path:
        return self.scratch / f"clone-{n}"

    def close(self) -> None:
        remove_tree(self.scratch)


def tree_problems(target: Path, expected: Mapping[str, bytes], *, exact: bool = True) -> list[str]:
    """How the tree a client made at ``target`` differs from ``expected`` (VCS metadata
    aside; not ``exact``: files beyond ``expected`` allowed), or that it was not made."""
    from vcsbench.workload.operation import tree_problems as differences

    if not target.is_dir():
        return [f"{target} was not made"]
    return differences(target, dict(expected), frozenset({".git", ".svn", ".hg"}), exact=exact)
