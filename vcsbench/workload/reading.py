"""Operations that read a history out of a repository built once per benchmark (a seed):
the log (with each revision's changed paths, ``verbose=true``), git's walks of its commit
graph and objects, and the diff between two revisions -- each answer kept as the VCS
printed it, read after the timing and checked against the history it came from."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from vcsbench.backends._git import reachable_with_pygit2
from vcsbench.backends._svn import changed_paths
from vcsbench.backends.files import Files
from vcsbench.errors import VcsbenchError
from vcsbench.workload.history import sample_revisions
from vcsbench.workload.operation import COMMIT_MESSAGE, NO_ANSWER, RoundPaths, parse_history
from vcsbench.workload.patches import patch_problems, revisions_patch_problems
from vcsbench.workload.seeded import ReachesBack, WithHistory


class Log(WithHistory):
    name = "log"
    checks = (
        "the messages against those the history was written with, in order (verbose: and "
        "three revisions' changed paths against `svnlook changed`)"
    )
    needs = frozenset({"create", "commit", "log"})
    option_defaults: ClassVar[Mapping[str, str]] = {"history": "100", "verbose": "false"}
    summary = (
        "every revision's message, newest first, from a repository of `history` revisions "
        "(`verbose=true`: and its changed paths, `svn log -v`)"
    )

    @classmethod
    def check_options(cls, given: Mapping[str, str]) -> dict[str, str]:
        options = super().check_options(given)
        if options["verbose"] not in ("true", "false"):
            raise VcsbenchError(
                f"operation option verbose={options['verbose']!r} is not true or false"
            )
        return options

    @classmethod
    def needs_with(cls, given: Mapping[str, str]) -> frozenset[str]:
        verbose = given.get("verbose") == "true"
        return cls.needs | {"log-verbose"} if verbose else cls.needs

    @property
    def verbose(self) -> bool:
        return self.options["verbose"] == "true"

    answers = True

    def run(self, paths: RoundPaths) -> None:
        read = self.backend.log_verbose if self.verbose else self.backend.log_output
        self.keep_answer(paths, read(paths.repo))  # as printed: read after the timing

    def expected(self) -> Files:
        return self.history_files()

    def verify(self, paths: RoundPaths) -> list[str]:
        problems: list[str] = []
        output = self.answer(paths)
        if output is None:
            return [NO_ANSWER]
        if not self.verbose:
            try:
                messages = self.backend.log_messages(output)
            except (SyntaxError, ValueError, TypeError) as exc:  # not the log the VCS prints
                return [f"the log could not be read: {type(exc).__name__}: {exc}"]
        else:
            try:
                entries = verbose_log(output)
            except (SyntaxError, ValueError) as exc:  # ElementTree's ParseError, a bad number
                return [f"the verbose log is not the XML svn prints: {exc}"]
            messages = [message for _revision, message, _paths in entries]
            changed = {revision: found for revision, _message, found in entries}
            for revision in sample_revisions(self.revisions):
                want = changed_paths(paths.repo, revision)
                if changed.get(revision) != want:
                    problems.append(
                        f"revision {revision}: the log names {len(changed.get(revision, ()))} "
                        f"changed paths, svnlook {len(want)}"
                    )
        return problems + self._messages_problems(messages)

    def _messages_problems(self, got: list[str]) -> list[str]:
        want = self.messages()
        if self.history is not None:  # each VCS keeps a message's trailing space its own way
            want, got = [m.strip() for m in want], [m.strip() for m in got]
        if got != want:
            first = next(
                (i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b),
                min(len(got), len(want)),
            )
            return [
                f"log gave {len(got)} messages, the repository has {len(want)}; "
                f"first difference at entry {first}"
            ]
        return []


def verbose_log(printed: bytes) -> list[tuple[int, str, set[str]]]:
    """``svn log -v --xml``: each entry's revision, message and changed paths (relative)."""
    from xml.etree import ElementTree

    entries = []
    for entry in ElementTree.fromstring(printed):
        found = {(p.text or "").lstrip("/") for p in entry.iter("path")}
        entries.append((int(entry.get("revision", "0")), entry.findtext("msg") or "", found))
    return entries


def title(message: str) -> str:
    """What ``git log --oneline`` prints of a message: its first paragraph on one line."""
    paragraph = message.strip().split("\n\n", 1)[0]
    return " ".join(line.strip() for line in paragraph.splitlines())


class _Walk(WithHistory):
    """One of git's walks of the whole history; what it printed is kept as it came, and
    read after the timing."""

    needs = frozenset({"create", "commit", "walk"})

    answers = True

    def run(self, paths: RoundPaths) -> None:
        self.keep_answer(paths, self.walk(paths.repo))

    def walk(self, repo: Path) -> bytes:
        raise NotImplementedError

    def lines(self, paths: RoundPaths) -> list[str] | None:
        """What round ``paths``' walk printed, a line each (None: it printed nothing here)."""
        answer = self.answer(paths)
        return None if answer is None else answer.decode(errors="replace").splitlines()

    def expected(self) -> Files:
        return self.history_files()


class TopoLog(_Walk):
    name = "topo-log"
    checks = "the titles against the newest `limit` messages the history was written with"
    option_defaults: ClassVar[Mapping[str, str]] = {"history": "100", "limit": "1000"}
    summary = (
        "`git log --oneline --topo-order -LIMIT` on a repository of `history` revisions (what "
        "git's commit-graph was measured on)"
    )

    def walk(self, repo: Path) -> bytes:
        return self.backend.topo_log(repo, parse_history(self.options["limit"], "limit"))

    def verify(self, paths: RoundPaths) -> list[str]:
        printed = self.lines(paths)
        if printed is None:
            return [NO_ANSWER]
        want = [title(m) for m in self.messages()[: int(self.options["limit"])]]
        got = [line.partition(" ")[2] for line in printed]
        if got != want:
            pairs = enumerate(zip(got, want, strict=False))
            first = next((i for i, (a, b) in pairs if a != b), None)
            return [
                f"log gave {len(got)} titles, the history's newest {len(want)} differ"
                + (f" first at entry {first}" if first is not None else "")
            ]
        return []


class RevList(_Walk):
    name = "rev-list"
    checks = "every commit id against those libgit2 reaches from the refs, no more, no less"
    summary = (
        "`git rev-list --all` on a repository of `history` revisions: every commit reachable "
        "(what git's commit-graph was measured on)"
    )

    def walk(self, repo: Path) -> bytes:
        return self.backend.rev_list(repo)

    def verify(self, paths: RoundPaths) -> list[str]:
        got = self.lines(paths)
        if got is None:
            return [NO_ANSWER]
        commits, _ = reachable_with_pygit2(paths.repo)
        if len(got) != self.revisions or set(got) != commits:
            return [
                f"rev-list gave {len(got)} commits ({len(set(got) - commits)} unknown), the "
                f"repository has {len(commits)} reachable, the history {self.revisions}"
            ]
        return []


class Objects(_Walk):
    name = "objects"
    checks = "every object id against those libgit2 finds in the repository, each once"
    summary = (
        "`git rev-list --objects --all --use-bitmap-index` on a repository of `history` "
        "revisions: every object a full pack holds (what git's reachability bitmaps were "
        "measured on)"
    )

    def walk(self, repo: Path) -> bytes:
        return self.backend.objects(repo)

    def verify(self, paths: RoundPaths) -> list[str]:
        printed = self.lines(paths)
        if printed is None:
            return [NO_ANSWER]
        _, stored = reachable_with_pygit2(paths.repo)
        got = [line.partition(" ")[0] for line in printed]
        if len(got) != len(set(got)) or set(got) != stored:
            return [
                f"the walk listed {len(got)} objects ({len(set(got))} distinct), the "
                f"repository holds {len(stored)} ({len(stored - set(got))} not listed)"
            ]
        return []


class Diff(ReachesBack):
    name = "diff"
    checks = "the diff, applied to the parent's files, gives the new revision's"
    needs = frozenset({"create", "commit", "diff"})
    summary = (
        "unified diff of the newest revision (a file replaced, one added) against its parent; "
        "`back=K` on a history: against the revision K before it, renames as delete + add"
    )

    def prepare(self, paths: RoundPaths) -> None:
        super().prepare(paths)
        if self.back:
            assert self.history is not None
            newest = self.history.revisions
            self.pair = (
                self.revision_id(paths.repo, self.old),
                self.revision_id(paths.repo, newest),
            )
        else:
            self.backend.commit(paths.repo, self.change, COMMIT_MESSAGE + " 2", paths.scratch)

    answers = True

    def run(self, paths: RoundPaths) -> None:
        if self.back:
            self.keep_answer(
                paths, self.backend.diff_between(paths.repo, *self.pair, paths.scratch)
            )
        else:
            self.keep_answer(paths, self.backend.diff(paths.repo, paths.scratch))

    def expected(self) -> Files:
        if self.back:
            return dict(self.payload.files)
        return {**self.payload.files, **self.change}

    def verify(self, paths: RoundPaths) -> list[str]:
        """The diff, applied to the parent's files (with ``back=K``, the old revision's
        text files), must give the newest revision's."""
        answer = self.answer(paths)
        if answer is None:
            return [NO_ANSWER]
        if self.back:
            assert self.history is not None
            old, new = self.nodes_at(self.old), self.nodes_at(self.history.revisions)
            return revisions_patch_problems(answer, old, new)
        return patch_problems(answer, self.payload.files, self.change)
