"""What every load client is: a student machine with a scratch directory of its own
(:class:`Client`), the error a failed session raises, and how a client runs a program
(its priority, the line that says why it failed, a refusal told from a failure). Each
access path's client is in :mod:`vcsbench.load.clients`."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vcsbench.load.engine_config import EngineConfig
from vcsbench.load.repositories import repo_name, server_side_create
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
    """One student machine: a scratch directory of its own outside the sandbox."""

    def __init__(self, config: EngineConfig, scratch: Path) -> None:
        self.config = config
        self.path = config.path
        self.repos = Path(config.repos)
        self.scratch = scratch
        self.precreated = config.precreate
        self.url_base = config.url_base
        self.env = {**os.environ, **config.client_env}
        """The environment of every command the client runs: the run's ssh command or
        certificate where its transport needs one."""
        self.ca_file = config.ca_file
        self.index = 0
        """Which of the run's clients this is (shared: the committer it plays)."""

    def create_server_side(self, student: int) -> None:
        """Timed, at a first visit: the server's side makes the student's repository."""
        argv, env = server_side_create(self.path, self.repos / repo_name(student))
        run_program(argv, "create", env)

    def prepare(self, student: int, visit: int, files: Mapping[str, bytes]) -> None:
        """Untimed: what the student does before submitting."""

    def session(self, student: int, visit: int, files: Mapping[str, bytes]) -> None:
        raise NotImplementedError

    def clone(self, n: int) -> None:
        """Timed (clone-storm): a clone or checkout of the storm repository into
        :meth:`clone_dir`."""
        raise NotImplementedError

    def shared_prepare(self, committer: int) -> None:
        """Untimed (shared): what the committer's machine needs first (a clone)."""

    def shared_commit(self, committer: int, n: int) -> int:
        """Timed (shared): commit the committer's file, retrying a refused commit; returns
        the retries."""
        raise NotImplementedError

    def clone_dir(self, n: int) -> Path:
        return self.scratch / f"clone-{n}"

    def wc_dir(self, student: int) -> Path:
        """Mixed: this client's working copy of a student's repository, kept between its
        updates of it."""
        return self.scratch / f"wc-{repo_name(student)}"

    def update_prepare(self, student: int) -> None:
        """Untimed (mixed): the working copy to update, made now if this client has none
        of the student's repository yet (then it is already at the newest)."""
        raise NotImplementedError

    def update(self, student: int) -> None:
        """Timed (mixed): bring :meth:`wc_dir` to the repository's newest revision."""
        raise NotImplementedError

    def update_problems(self, student: int, expected: Mapping[str, bytes]) -> list[str]:
        """Untimed: how the working copy differs from ``expected``; it is kept for the
        next update."""
        return _tree_problems(self.wc_dir(student), expected)

    def clone_problems(self, n: int, expected: Mapping[str, bytes]) -> list[str]:
        """Untimed: how clone ``n`` differs from ``expected``; then the clone is removed."""
        target = self.clone_dir(n)
        try:
            return _tree_problems(target, expected)
        finally:
            remove_tree(target)

    def close(self) -> None:
        remove_tree(self.scratch)


def _tree_problems(target: Path, expected: Mapping[str, bytes]) -> list[str]:
    """How the tree a client made at ``target`` differs from ``expected`` (VCS metadata
    aside), or that it was not made."""
    from vcsbench.workload.operation import tree_problems

    if not target.is_dir():
        return [f"{target} was not made"]
    return tree_problems(target, dict(expected), frozenset({".git", ".svn", ".hg"}))
