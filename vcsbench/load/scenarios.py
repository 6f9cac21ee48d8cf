"""Load scenarios: what a session is, each scenario one object.

A scenario says, in order: what the server side holds before the load (:meth:`prepare`,
untimed, in the run's process); in the load engine, which session a free client takes
next (:meth:`begin`), its untimed preparation on the client, the timed work, and an
untimed check after it; and after each step, in the run's process, how the repositories
are read back (:meth:`verify_step`), which turns a session whose work is not there into
a ``verify`` error. A new scenario is a class here and a line in :data:`SCENARIOS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from vcsbench.backends.files import Files
from vcsbench.load.paths import AccessPath
from vcsbench.load.repositories import (
    SHARED,
    Reader,
    build_history,
    make_student_repositories,
    repo_name,
    shared_content,
    shared_file,
    submission,
)

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
    clones_history: ClassVar[bool] = False
    """Its sessions clone the repository of ``--history`` revisions (the result says how
    many)."""

    def describe(self, payload: str, precreate: bool, history: int) -> str:
        """A session in words, for the result file (reports print it)."""
        raise NotImplementedError

    def prepare(
        self, path: AccessPath, repos: Path, payload: Files, students: int, *, history: int,
        precreate: bool,
    ) -> Files:  # fmt: skip
        """Untimed, before the load: what the server side holds. Returns the files its
        repositories start with (what a clone holds, what the shared one holds)."""
        return {}

    # -- in the load engine ----------------------------------------------------------

    def begin(self, shared: Any, client: Any) -> Session | None:
        """The session a free client takes now (None: none is free)."""
        raise NotImplementedError

    def undo(self, shared: Any, session: Session) -> None:
        """The client's own preparation failed: the session did not happen."""

    def prepare_client(self, client: Any, session: Session) -> None:
        """Untimed: what the client does before the session."""

    def timed(self, client: Any, session: Session) -> int:
        """The session's timed work; the retries it took."""
        raise NotImplementedError

    def check(self, client: Any, session: Session) -> list[str]:
        """Untimed, right after the session: what is wrong with its result."""
        return []

    def settled(self, shared: Any, session: Session, ok: bool) -> None:
        """The session's outcome is known (its check done): ``ok`` or not."""

    def end(self, shared: Any, session: Session) -> None:
        """The session is over (whatever its outcome)."""

    # -- after each step, in the run's process ----------------------------------------

    def verify_step(
        self, path: AccessPath, repos: Path, records: Records, step: int, start: Files,
        payload: Files,
    ) -> Verified:  # fmt: skip
        """Read back what step ``step`` wrote; flip the wrong sessions to ``verify``."""
        return Verified()


def _tally(records: Records) -> tuple[dict[int, int], dict[int, int]]:
    """Per student (committer): successful sessions so far, and the last one's index."""
    ok: dict[int, int] = {}
    last: dict[int, int] = {}
    for i, student in enumerate(records["student"]):
        if records["error"][i] is None:
            ok[student] = ok.get(student, 0) + 1
            last[student] = i
    return ok, last


def _flip(records: Records, step: int, student: int) -> None:
    """Mark ``student``'s last successful session of ``step`` as a ``verify`` error (if it
    had one: a step's failed sessions are errors already)."""
    for i in range(len(records["step"]) - 1, -1, -1):
        mine = records["step"][i] == step and records["student"][i] == student
        if mine and records["error"][i] is None:
            records["error"][i] = "verify"
            return


class Deadline(Scenario):
    name = "deadline"
    summary = (
        "students create their repository at the first visit (unless --precreate) and "
        "commit their submission"
    )

    def describe(self, payload: str, precreate: bool, history: int) -> str:
        first = "a commit" if precreate else "a first visit creates the repository, then a commit"
        return f"{first} of the `{payload}` payload and a line that changes"

    def prepare(
        self, path: AccessPath, repos: Path, payload: Files, students: int, *, history: int,
        precreate: bool,
    ) -> Files:  # fmt: skip
        if precreate:
            make_student_repositories(path, repos, students)
        return {}

    def begin(self, shared: Any, client: Any) -> Session | None:
        taken = shared.take()
        if taken is None:
            return None
        student, visit = taken
        return Session(student, visit, submission(shared.payload, student, visit))

    def undo(self, shared: Any, session: Session) -> None:
        shared.visits[session.student] -= 1

    def prepare_client(self, client: Any, session: Session) -> None:
        client.prepare(session.student, session.visit, session.files)

    def timed(self, client: Any, session: Session) -> int:
        client.session(session.student, session.visit, session.files)
        return 0

    def end(self, shared: Any, session: Session) -> None:
        shared.busy.discard(session.student)

    def verify_step(
        self, path: AccessPath, repos: Path, records: Records, step: int, start: Files,
        payload: Files,
    ) -> Verified:  # fmt: skip
        """Every student the step served: one revision per successful session so far,
        and the last successful submission's files."""
        ok, last = _tally(records)
        served = sorted(
            {s for i, s in enumerate(records["student"]) if records["step"][i] == step} & set(ok)
        )
        problems: list[str] = []
        with Reader(path.vcs) as reader:
            for student in served:
                files = submission(payload, student, records["visit"][last[student]])
                revisions, wrong = reader.read(repos / repo_name(student), files)
                if revisions != ok[student]:
                    wrong.append(f"{revisions} revisions, {ok[student]} sessions succeeded")
                if wrong:
                    _flip(records, step, student)
                    problems.append(f"{repo_name(student)}: {'; '.join(wrong[:2])}")
        return Verified({repo_name(s) for s in served}, problems)


class SharedRepository(Scenario):
    name = "shared"
    summary = "every client commits its own file into one shared repository, retrying refusals"

    def describe(self, payload: str, precreate: bool, history: int) -> str:
        return (
            "a commit into one shared repository, each client rewriting a file of its own; "
            "a commit refused because another landed first (git: not a fast-forward, svn: "
            "out of date) is updated and tried again, and counted as a retry"
        )

    def prepare(
        self, path: AccessPath, repos: Path, payload: Files, students: int, *, history: int,
        precreate: bool,
    ) -> Files:  # fmt: skip
        return build_history(path, repos, payload, 1, SHARED)

    def begin(self, shared: Any, client: Any) -> Session | None:
        committer = client.index
        shared.commits[committer] = shared.commits.get(committer, 0) + 1
        return Session(committer, shared.commits[committer], {})

    def undo(self, shared: Any, session: Session) -> None:
        shared.commits[session.student] -= 1

    def prepare_client(self, client: Any, session: Session) -> None:
        client.shared_prepare(session.student)

    def timed(self, client: Any, session: Session) -> int:
        retries: int = client.shared_commit(session.student, session.visit)
        return retries

    def verify_step(
        self, path: AccessPath, repos: Path, records: Records, step: int, start: Files,
        payload: Files,
    ) -> Verified:  # fmt: skip
        """The shared repository: one revision per successful commit on top of the
        first, each committer's file as its last successful commit left it."""
        ok, last = _tally(records)
        expected = dict(start)
        for committer, i in last.items():
            expected[shared_file(committer)] = shared_content(committer, records["visit"][i])
        with Reader(path.vcs) as reader:
            revisions, wrong = reader.read(repos / SHARED, expected)
        problems: list[str] = []
        commits = sum(ok.values())
        if revisions >= 0 and revisions - 1 != commits:  # the first was made before the load
            problems.append(
                f"{revisions - 1} commits after the first, {commits} sessions succeeded"
            )
        owners = {shared_file(c): c for c in last}
        for line in wrong:
            problems.append(line)
            owner = owners.get(line.split(":", 1)[0])
            if owner is not None:
                _flip(records, step, owner)
        return Verified({SHARED}, problems)


class CloneStorm(Scenario):
    name = "clone-storm"
    clones_history = True
    summary = "every client clones one repository of --history revisions"

    def describe(self, payload: str, precreate: bool, history: int) -> str:
        return (
            f"a clone (svn: a checkout) of one repository of {history} revisions "
            f"(the `{payload}` payload, then one small file rewritten per revision), "
            "checked file by file afterwards, untimed"
        )

    def prepare(
        self, path: AccessPath, repos: Path, payload: Files, students: int, *, history: int,
        precreate: bool,
    ) -> Files:  # fmt: skip
        return build_history(path, repos, payload, history)

    def begin(self, shared: Any, client: Any) -> Session | None:
        shared.clones += 1
        return Session(shared.clones - 1, 1, shared.start)

    def timed(self, client: Any, session: Session) -> int:
        client.clone(session.student)
        return 0

    def check(self, client: Any, session: Session) -> list[str]:
        problems: list[str] = client.clone_problems(session.student, session.files)
        return problems

    def verify_step(
        self, path: AccessPath, repos: Path, records: Records, step: int, start: Files,
        payload: Files,
    ) -> Verified:  # fmt: skip
        """Each clone was checked file by file after its session, in the engine."""
        clones = {
            f"clone {s}" for i, s in enumerate(records["student"]) if records["step"][i] == step
        }
        return Verified(clones, [])


MIX_KINDS = ("commit", "update", "clone")


class Mixed(Scenario):
    """Sessions of several kinds in set proportions, as on a deadline night (``--mix``).
    Each process picks the next kind by smooth weighted round robin, so any run of its
    sessions holds each kind's share within one; an update waits for a student whose
    commit has succeeded (until then, a commit is taken in its place)."""

    name = "mixed"
    clones_history = True
    summary = "commits, updates and clones in the proportions of --mix, as on a deadline night"

    def __init__(self) -> None:
        self.commit, self.clones = Deadline(), CloneStorm()

    def describe(self, payload: str, precreate: bool, history: int) -> str:
        return (
            f"commit: {self.commit.describe(payload, precreate, history)}; update: the "
            "student's working copy on this client (made untimed when the client first "
            "needs it) brought to the repository's newest revision, its files checked "
            f"afterwards, untimed; clone: {self.clones.describe(payload, precreate, history)}"
        )

    def prepare(
        self, path: AccessPath, repos: Path, payload: Files, students: int, *, history: int,
        precreate: bool,
    ) -> Files:  # fmt: skip
        self.commit.prepare(path, repos, payload, students, history=history, precreate=precreate)
        return self.clones.prepare(
            path, repos, payload, students, history=history, precreate=precreate
        )

    def begin(self, shared: Any, client: Any) -> Session | None:
        mix = shared.config.mix
        credit = shared.credit
        for kind, weight in mix:
            credit[kind] = credit.get(kind, 0) + weight
        kind = max(mix, key=lambda pair: credit[pair[0]])[0]
        credit[kind] -= sum(weight for _, weight in mix)
        if kind == "clone":
            clone = self.clones.begin(shared, client)
            return None if clone is None else replace(clone, kind=kind)
        taken = shared.take_committed() if kind == "update" else None
        if taken is not None:
            student, visit = taken
            return Session(student, visit, submission(shared.payload, student, visit), kind)
        found = self.commit.begin(shared, client)
        return None if found is None else replace(found, kind="commit")

    def undo(self, shared: Any, session: Session) -> None:
        if session.kind == "commit":
            self.commit.undo(shared, session)

    def prepare_client(self, client: Any, session: Session) -> None:
        if session.kind == "commit":
            self.commit.prepare_client(client, session)
        elif session.kind == "update":
            client.update_prepare(session.student)

    def timed(self, client: Any, session: Session) -> int:
        if session.kind == "update":
            client.update(session.student)
            return 0
        scenario = self.commit if session.kind == "commit" else self.clones
        return scenario.timed(client, session)

    def check(self, client: Any, session: Session) -> list[str]:
        if session.kind == "update":
            problems: list[str] = client.update_problems(session.student, session.files)
            return problems
        return self.clones.check(client, session) if session.kind == "clone" else []

    def settled(self, shared: Any, session: Session, ok: bool) -> None:
        if ok and session.kind == "commit":
            shared.committed[session.student] = session.visit

    def end(self, shared: Any, session: Session) -> None:
        if session.kind != "clone":
            shared.busy.discard(session.student)

    def verify_step(
        self, path: AccessPath, repos: Path, records: Records, step: int, start: Files,
        payload: Files,
    ) -> Verified:  # fmt: skip
        """The commits as a deadline's (each served student's repository: a revision per
        successful commit, the last one's files); updates and clones were checked file
        by file after each session, in the engine."""
        commits = [i for i, kind in enumerate(records["kind"]) if kind == "commit"]
        view = {key: [values[i] for i in commits] for key, values in records.items()}
        found = self.commit.verify_step(path, repos, view, step, start, payload)
        for j, i in enumerate(commits):  # a commit found wrong is flipped in the records
            records["error"][i] = view["error"][j]
        return found


SCENARIOS: Mapping[str, Scenario] = {
    s.name: s for s in (Deadline(), SharedRepository(), CloneStorm(), Mixed())
}
