"""The load scenarios, each a session composed of a client's verbs (create, init, clone,
write, commit, update: :class:`vcsbench.load.client_base.Client`). A new scenario is a
class here and a line in :data:`SCENARIOS`; what a scenario is: :mod:`vcsbench.load.scenario`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from vcsbench.backends.files import Files
from vcsbench.load.client_base import Client, tree_problems
from vcsbench.load.paths import AccessPath
from vcsbench.load.repositories import (
    SHARED,
    STORM,
    Reader,
    build_history,
    make_student_repositories,
    repo_name,
    shared_content,
    shared_file,
    submission,
)
from vcsbench.load.scenario import Records, Scenario, Session, Verified, flip, tally
from vcsbench.sandbox.removal import remove_tree


class Deadline(Scenario):
    name = "deadline"
    students_repositories = True
    summary = (
        "students create their repository at the first visit (unless --precreate; with "
        "--age term:..., each commits into its own repository of the term) and commit "
        "their submission"
    )

    def describe(self, payload: str, precreate: bool, history: int, term: bool = False) -> str:
        first = (
            "a commit into the student's own repository of the term (its working copy made "
            "untimed at the first visit)"
            if term
            else "a commit"
            if precreate
            else "a first visit creates the repository, then a commit"
        )
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

    def prepare_client(self, client: Client, session: Session) -> None:
        """The student's machine: a working copy (a new one at the first visit) and the
        submission's files written into it."""
        name, wc = repo_name(session.student), client.student_dir(repo_name(session.student))
        if not wc.exists():
            if client.config.term:  # the term's repository: its history checked out
                client.clone(name, wc, "prepare")
            else:
                client.init(name, wc)
        client.write(wc, session.files)

    def timed(self, client: Client, session: Session) -> int:
        """A first visit's repository made on the server's side (unless made beforehand,
        or the term's), then the commit."""
        name, first = repo_name(session.student), session.visit == 1
        wc, message = client.student_dir(name), f"submission {session.visit}"
        new = first and not client.config.term
        made = new and not client.config.precreate
        return client.commit(name, wc, message, empty=new, retry=False, create=made)

    def end(self, shared: Any, session: Session) -> None:
        shared.busy.discard(session.student)

    def verify_step(
        self, path: AccessPath, repos: Path, records: Records, step: int, start: Files,
        payload: Files, held: Sequence[int] = (),
    ) -> Verified:  # fmt: skip
        """Every student the step served: one revision per successful session so far
        (beyond the ``held`` ones of its term), and the last successful submission's
        files."""
        ok, last = tally(records)
        served = sorted(
            {s for i, s in enumerate(records["student"]) if records["step"][i] == step} & set(ok)
        )
        problems: list[str] = []
        with Reader(path.vcs) as reader:
            for student in served:
                files = submission(payload, student, records["visit"][last[student]])
                revisions, wrong = reader.read(repos / repo_name(student), files)
                before = held[student] if held else 0
                if revisions != before + ok[student]:
                    on = f" on the term's {before}" if before else ""
                    wrong.append(f"{revisions} revisions, {ok[student]} sessions succeeded{on}")
                if wrong:
                    flip(records, step, student)
                    problems.append(f"{repo_name(student)}: {'; '.join(wrong[:2])}")
        return Verified({repo_name(s) for s in served}, problems)

    def verification(self, read: int, failures: list[str], failed: int) -> str:
        return f"Verified {read:,} repositories, each after the step that wrote it" + (
            f"; {failed} failed (counted as errors)." if failed else ", all as committed."
        )


class SharedRepository(Scenario):
    name = "shared"
    summary = "every client commits its own file into one shared repository, retrying refusals"

    def describe(self, payload: str, precreate: bool, history: int, term: bool = False) -> str:
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

    def prepare_client(self, client: Client, session: Session) -> None:
        """The committer's working copy of the shared repository (a clone, the first
        time), its own file rewritten."""
        wc = client.wc_dir(SHARED)
        if not wc.exists():
            client.clone(SHARED, wc, "prepare")
        committer, n = session.student, session.visit
        client.write(wc, {shared_file(committer): shared_content(committer, n)})

    def timed(self, client: Client, session: Session) -> int:
        message = f"committer {session.student} commit {session.visit}"
        return client.commit(SHARED, client.wc_dir(SHARED), message, empty=False, retry=True)

    def verify_step(
        self, path: AccessPath, repos: Path, records: Records, step: int, start: Files,
        payload: Files, held: Sequence[int] = (),
    ) -> Verified:  # fmt: skip
        """The shared repository: one revision per successful commit on top of the
        first, each committer's file as its last successful commit left it."""
        ok, last = tally(records)
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
                flip(records, step, owner)
        return Verified({SHARED}, problems)

    def verification(self, read: int, failures: list[str], failed: int) -> str:
        return "Read the shared repository back afterwards: " + (
            "; ".join(failures[:3]) + " (counted as errors)."
            if failed
            else "one revision per successful commit, every committer's file as its "
            "last commit left it."
        )


class CloneStorm(Scenario):
    name = "clone-storm"
    clones_history = True
    summary = "every client clones one repository of --history revisions"

    def describe(self, payload: str, precreate: bool, history: int, term: bool = False) -> str:
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

    def timed(self, client: Client, session: Session) -> int:
        client.clone(STORM, client.clone_dir(session.student))
        return 0

    def check(self, client: Client, session: Session) -> list[str]:
        """The clone file by file; then it is removed."""
        target = client.clone_dir(session.student)
        try:
            return tree_problems(target, session.files)
        finally:
            remove_tree(target)

    def verify_step(
        self, path: AccessPath, repos: Path, records: Records, step: int, start: Files,
        payload: Files, held: Sequence[int] = (),
    ) -> Verified:  # fmt: skip
        """Each clone was checked file by file after its session, in the engine."""
        clones = {
            f"clone {s}" for i, s in enumerate(records["student"]) if records["step"][i] == step
        }
        return Verified(clones, [])

    def verification(self, read: int, failures: list[str], failed: int) -> str:
        return f"Checked {read:,} clones file by file; a wrong one counts as a `verify` error."


MIX_KINDS = ("commit", "update", "clone")


class Mixed(Scenario):
    """Sessions of several kinds in set proportions, as on a deadline night (``--mix``).
    Each process picks the next kind by smooth weighted round robin, so any run of its
    sessions holds each kind's share within one; an update waits for a student whose
    commit has succeeded (until then, a commit is taken in its place)."""

    name = "mixed"
    students_repositories = True
    clones_history = True
    summary = "commits, updates and clones in the proportions of --mix, as on a deadline night"

    def __init__(self) -> None:
        self.commit, self.clones = Deadline(), CloneStorm()

    def describe(self, payload: str, precreate: bool, history: int, term: bool = False) -> str:
        return (
            f"commit: {self.commit.describe(payload, precreate, history, term)}; update: the "
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

    def prepare_client(self, client: Client, session: Session) -> None:
        if session.kind == "commit":
            self.commit.prepare_client(client, session)
        elif session.kind == "update":  # made now if this client has none yet (then newest)
            name = repo_name(session.student)
            if not client.wc_dir(name).exists():
                client.clone(name, client.wc_dir(name), "prepare")

    def timed(self, client: Client, session: Session) -> int:
        if session.kind == "update":
            client.update(client.wc_dir(repo_name(session.student)))
            return 0
        scenario = self.commit if session.kind == "commit" else self.clones
        return scenario.timed(client, session)

    def check(self, client: Client, session: Session) -> list[str]:
        """An update's working copy file by file (it is kept for the next update); a
        clone's as the clone storm checks it."""
        if session.kind == "update":  # a term's repository holds its own files besides
            exact = not client.config.term
            wc = client.wc_dir(repo_name(session.student))
            return tree_problems(wc, session.files, exact=exact)
        return self.clones.check(client, session) if session.kind == "clone" else []

    def settled(self, shared: Any, session: Session, ok: bool) -> None:
        if ok and session.kind == "commit":
            shared.committed[session.student] = session.visit

    def end(self, shared: Any, session: Session) -> None:
        if session.kind != "clone":
            shared.busy.discard(session.student)

    def verify_step(
        self, path: AccessPath, repos: Path, records: Records, step: int, start: Files,
        payload: Files, held: Sequence[int] = (),
    ) -> Verified:  # fmt: skip
        """The commits as a deadline's (each served student's repository: a revision per
        successful commit, the last one's files); updates and clones were checked file
        by file after each session, in the engine."""
        commits = [i for i, kind in enumerate(records["kind"]) if kind == "commit"]
        view = {key: [values[i] for i in commits] for key, values in records.items()}
        found = self.commit.verify_step(path, repos, view, step, start, payload, held)
        for j, i in enumerate(commits):  # a commit found wrong is flipped in the records
            records["error"][i] = view["error"][j]
        return found

    def verification(self, read: int, failures: list[str], failed: int) -> str:
        return (
            self.commit.verification(read, failures, failed).rstrip(".")
            + " (the commits); every update's working copy and every clone checked file "
            "by file after its session, a wrong one a `verify` error."
        )


SCENARIOS: Mapping[str, Scenario] = {
    s.name: s for s in (Deadline(), SharedRepository(), CloneStorm(), Mixed())
}
