"""What a load scenario is (:class:`Scenario`): a session composed of a client's verbs.

A scenario says, in order: what the server side holds before the load (:meth:`prepare`,
untimed, in the run's process); in the load engine, which session a free client takes
next (:meth:`begin`), the verbs of its untimed preparation on the client, the timed
verbs, and an untimed check after them; and after each step, in the run's process, how
the repositories are read back (:meth:`verify_step`), which turns a session whose work is
not there into a ``verify`` error, and the sentence that says what was read
(:meth:`verification`). The scenarios are in :mod:`vcsbench.load.scenarios`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from vcsbench.backends.files import Files
from vcsbench.load.client_base import Client
from vcsbench.load.paths import AccessPath

Records = dict[str, list[Any]]
"""A path's sessions so far, as parallel lists: ``step``, ``student``, ``visit``,
``t_intended``, ``t_start``, ``latency_s``, ``error`` (a kind, or None), ``retries``."""


@dataclass(frozen=True)
class Session:
    """One session: whose (a student, a committer, a clone's number), which visit, and
    the files it commits."""

    student: int
    visit: int
    files: Files
    kind: str = ""
    """In a mixed scenario, which kind it is (commit, update, clone)."""


@dataclass
class Verified:
    """What reading back after a step found: the repositories (or clones) read, by name,
    and what was wrong."""

    read: set[str] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)


class Scenario:
    name: ClassVar[str]
    summary: ClassVar[str]
    """One line for ``--help``."""
    students_repositories: ClassVar[bool] = False
    """Its sessions commit into each student's own repository (with ``--age term:...``,
    the student's repository of the term)."""
    clones_history: ClassVar[bool] = False
    """Its sessions clone the repository of ``--history`` revisions (the result says how
    many)."""

    def describe(self, payload: str, precreate: bool, history: int, term: bool = False) -> str:
        """A session in words, for the result file (reports print it); ``term``: into
        the students' repositories of the term."""
        raise NotImplementedError

    def prepare(
        self, path: AccessPath, repos: Path, payload: Files, students: int, *, history: int,
        precreate: bool,
    ) -> Files:  # fmt: skip
        """Untimed, before the load: what the server side holds (a term's repositories
        are there already). Returns the files its repositories start with (what a clone
        holds, what the shared one holds)."""
        return {}

    # -- in the load engine ----------------------------------------------------------

    def begin(self, shared: Any, client: Client) -> Session | None:
        """The session a free client takes now (None: none is free)."""
        raise NotImplementedError

    def undo(self, shared: Any, session: Session) -> None:
        """The client's own preparation failed: the session did not happen."""

    def prepare_client(self, client: Client, session: Session) -> None:
        """Untimed: what the client does before the session."""

    def timed(self, client: Client, session: Session) -> int:
        """The session's timed work; the retries it took."""
        raise NotImplementedError

    def check(self, client: Client, session: Session) -> list[str]:
        """Untimed, right after the session: what is wrong with its result."""
        return []

    def settled(self, shared: Any, session: Session, ok: bool) -> None:
        """The session's outcome is known (its check done): ``ok`` or not."""

    def end(self, shared: Any, session: Session) -> None:
        """The session is over (whatever its outcome)."""

    # -- after each step, in the run's process ----------------------------------------

    def verify_step(
        self, path: AccessPath, repos: Path, records: Records, step: int, start: Files,
        payload: Files, held: Sequence[int] = (),
    ) -> Verified:  # fmt: skip
        """Read back what step ``step`` wrote; flip the wrong sessions to ``verify``.
        ``held``: each student's revisions before the load (a term's history)."""
        return Verified()

    def verification(self, read: int, failures: list[str], failed: int) -> str:
        """What the reading back found, in one sentence for the report: ``read``
        repositories (or clones) read so far, ``failed`` of them wrong (the first
        ``failures`` said)."""
        raise NotImplementedError


def tally(records: Records) -> tuple[dict[int, int], dict[int, int]]:
    """Per student (committer): successful sessions so far, and the last one's index."""
    ok: dict[int, int] = {}
    last: dict[int, int] = {}
    for i, student in enumerate(records["student"]):
        if records["error"][i] is None:
            ok[student] = ok.get(student, 0) + 1
            last[student] = i
    return ok, last


def flip(records: Records, step: int, student: int) -> None:
    """Mark ``student``'s last successful session of ``step`` as a ``verify`` error (if it
    had one: a step's failed sessions are errors already)."""
    for i in range(len(records["step"]) - 1, -1, -1):
        mine = records["step"][i] == step and records["student"][i] == student
        if mine and records["error"][i] is None:
            records["error"][i] = "verify"
            return
