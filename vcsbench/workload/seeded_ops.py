"""The operations that start from a seed (a copy of a repository the backend built once
per benchmark, made untimed): a commit into a history, checkouts, clones, updates, a
publish, a status, a gc. What they share -- building and copying the seed, reaching back
into a replayed history, a work tree beside the repository -- is
:mod:`vcsbench.workload.seeded`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from vcsbench.backends.changes import tree_differences
from vcsbench.backends.files import Files
from vcsbench.errors import VcsbenchError
from vcsbench.workload.operation import (
    COMMIT_MESSAGE,
    NO_ANSWER,
    UNTRACKED_FILE,
    RoundPaths,
    tree_problems,
)
from vcsbench.workload.seeded import IntoCheckout, ReachesBack, WithHistory


class Commit(WithHistory):
    """One more revision (one file replaced, one added) on top of ``history`` revisions;
    with a history payload, the source's next real change on top of the replayed ones."""

    name = "commit"
    needs = frozenset({"create", "commit"})
    option_defaults: ClassVar[Mapping[str, str]] = {"history": "1"}
    summary = "one more revision, a file replaced and one added, on top of `history` revisions"

    def run(self, paths: RoundPaths) -> None:
        if self.history is not None and self.history.next is not None:
            self.backend.replay(paths.repo, self.history.next, paths.scratch)
            return
        self.backend.commit(paths.repo, self.change, COMMIT_MESSAGE + " 2", paths.scratch)

    def expected(self) -> Files:
        if self.history is not None and self.history.next is not None:
            return self.history.next_files()
        return {**self.history_files(), **self.change}

    def verify(self, paths: RoundPaths) -> list[str]:
        """With a history: the new revision's whole tree against the source's (kinds,
        contents, and nothing more), by the backend's tree reader."""
        if self.history is None or self.history.next is None:
            return super().verify(paths)
        want = self.history.next_tree
        try:
            got = self.backend.tree(paths.repo, self.history.revisions + 1)
        except Exception as exc:  # a reader that fails fails the round
            return [f"could not read the new revision: {type(exc).__name__}: {exc}"]
        return tree_differences(want, got)


class Checkout(ReachesBack, IntoCheckout):
    name = "checkout"
    stand_in = "clone"
    checks = "the directory's files against the revision's, nothing more or less"
    needs = frozenset({"create", "commit", "checkout"})
    summary = (
        "the newest revision into a new directory (git-cli: a work tree; svn-fs: an export); "
        "`back=K` on a history: the revision K before it"
    )

    def prepare(self, paths: RoundPaths) -> None:
        super().prepare(paths)
        if self.back:
            self.at = self.revision_id(paths.repo, self.old)

    def run(self, paths: RoundPaths) -> None:
        if self.back:
            self.backend.checkout_at(paths.repo, paths.checkout, paths.scratch, self.at)
        else:
            self.backend.checkout(paths.repo, paths.checkout, paths.scratch)

    def expected(self) -> Files:
        if self.back:
            return self.files_at(self.old)
        return dict(self.payload.files)


class Clone(IntoCheckout):
    name = "clone"
    stand_in = "checkout"
    checks = "the work tree's files, and the clone's newest revision by the verifier"
    needs = frozenset({"create", "commit", "clone"})
    summary = "a full clone with a work tree, from a local path"

    def run(self, paths: RoundPaths) -> None:
        self.backend.clone(paths.repo, paths.checkout, paths.scratch)

    def expected(self) -> Files:
        return dict(self.payload.files)

    def verify(self, paths: RoundPaths) -> list[str]:
        # The work tree, read as files; the clone's own newest revision, by the verifier.
        work_tree = tree_problems(
            paths.checkout, self.in_checkout(), self.backend.checkout_ignores()
        )
        history = [f"clone: {p}" for p in self.backend.verify(paths.checkout, self.expected())]
        return work_tree + history


class Update(ReachesBack, IntoCheckout):
    name = "update"
    checks = "the working copy's files against the new revision's"
    needs = frozenset({"create", "commit", "update"})
    summary = (
        "a working copy brought up to a new revision (`git pull --ff-only`; `svn update`); "
        "`back=K` on a history: from the revision K before the newest, holding nothing newer"
    )

    def prepare(self, paths: RoundPaths) -> None:
        super().prepare(paths)
        if not self.back:
            self.backend.working_copy(paths.repo, paths.checkout, paths.scratch)
            self.backend.commit(paths.repo, self.change, COMMIT_MESSAGE + " 2", paths.scratch)
            return
        at = self.revision_id(paths.repo, self.old)
        self.backend.working_copy_at(paths.repo, paths.checkout, paths.scratch, at)
        if not self._started:  # once: the working copy starts where it should
            self._started = True
            want = {**self.backend.created_files, **self.files_at(self.old)}
            problems = tree_problems(paths.checkout, want, self.backend.checkout_ignores())
            if problems:
                raise VcsbenchError(
                    f"{self.backend.label}: a working copy at revision {self.old} does not "
                    f"hold that revision: {'; '.join(problems[:3])}"
                )

    def run(self, paths: RoundPaths) -> None:
        self.backend.update(paths.checkout, paths.scratch)

    def expected(self) -> Files:
        if self.back:
            return dict(self.payload.files)
        return {**self.payload.files, **self.change}


class Publish(IntoCheckout):
    name = "publish"
    checks = "the repository's newest revision by the verifier"
    needs = frozenset({"create", "commit", "publish"})
    summary = (
        "one more revision (a file replaced, one added) made in a working copy and sent to "
        "the repository (`git commit` + `git push`; `svn commit`; `hg commit` + `hg push`)"
    )

    def prepare(self, paths: RoundPaths) -> None:
        super().prepare(paths)
        self.backend.receiving(paths.repo)
        self.backend.working_copy(paths.repo, paths.checkout, paths.scratch)

    def run(self, paths: RoundPaths) -> None:
        self.backend.publish(paths.checkout, self.change, COMMIT_MESSAGE + " 2", paths.scratch)

    def expected(self) -> Files:
        return {**self.payload.files, **self.change}

    def verify(self, paths: RoundPaths) -> list[str]:
        return self.backend.verify(paths.repo, self.expected())


class Status(IntoCheckout):
    name = "status"
    checks = "the answer against the one file changed and the one added"
    needs = frozenset({"create", "commit", "status"})
    summary = "status of a working copy with one file modified and one not under version control"

    def prepare(self, paths: RoundPaths) -> None:
        super().prepare(paths)
        self.backend.working_copy(paths.repo, paths.checkout, paths.scratch)
        # a file the working copy holds as a file (not a link), that the change rewrites
        # where it rewrites one (a history's next change may only add files)
        files = [
            rel for rel in sorted(self.payload.files) if not (paths.checkout / rel).is_symlink()
        ]
        rewritten = [rel for rel in files if rel in self.change]
        self.modified = (rewritten or files)[0]
        data = self.change.get(self.modified, b"modified by vcsbench\n")
        (paths.checkout / self.modified).write_bytes(data)
        (paths.checkout / UNTRACKED_FILE).write_bytes(b"not under version control\n")

    answers = True

    def run(self, paths: RoundPaths) -> None:
        self.keep_answer(paths, self.backend.status(paths.checkout))

    def expected(self) -> Files:
        return dict(self.payload.files)

    def verify(self, paths: RoundPaths) -> list[str]:
        want = {self.modified: "M", UNTRACKED_FILE: "?"}
        answer = self.answer(paths)
        if answer is None:
            return [NO_ANSWER]
        if answer != want:
            return [f"status said {answer!r}, the working copy has {want!r}"]
        return []


class Gc(WithHistory):
    name = "gc"
    checks = (
        "the newest revision by the verifier; no loose object left (git), every full shard "
        "packed (svn)"
    )
    needs = frozenset({"create", "commit", "gc"})
    option_defaults: ClassVar[Mapping[str, str]] = {"history": "1000"}
    summary = (
        "repack a repository of `history` revisions (`git gc`; `svnadmin pack`, which packs "
        "only full shards of 1,000 revisions)"
    )

    def run(self, paths: RoundPaths) -> None:
        self.backend.gc(paths.repo)

    def expected(self) -> Files:
        return self.history_files()

    def verify(self, paths: RoundPaths) -> list[str]:
        content = self.backend.verify(paths.repo, self.expected())
        return content + self.backend.storage_problems(paths.repo)
