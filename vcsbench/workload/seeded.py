"""Operations on an existing repository: each round starts from a copy of a repository the
backend under test built once per benchmark (a seed), made untimed."""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from vcsbench.backends._git import reachable_with_pygit2
from vcsbench.backends._svn import changed_paths
from vcsbench.backends.base import (
    Backend,
    Files,
)
from vcsbench.backends.changes import Node, tree_differences
from vcsbench.errors import VcsbenchError
from vcsbench.workload.history import HistoryPayload, sample_revisions, seed_key
from vcsbench.workload.operation import (
    COMMIT_MESSAGE,
    HISTORY_FILE,
    UNTRACKED_FILE,
    Operation,
    RoundPaths,
    parse_history,
    tree_problems,
)
from vcsbench.workload.patches import patch_problems, revisions_patch_problems
from vcsbench.workload.payloads import Payload
from vcsbench.workload.seeds import Seed

REPLAY_FILE = "replay.json"
SHARED_SEEDS = "VCSBENCH_SHARED_SEEDS"
"""The environment variable naming where a run keeps the seeds its benchmarks built, for
its later benchmarks of the same backend variant: a directory of the run's own (a marked
sandbox the session makes, removes at its end, and ``cleanup`` removes after a SIGKILL),
set by the session, which replaces any value it finds, and inherited by the workers that
run rounds."""


REPLAY_PROGRESS: list[Callable[[int, int, float, str], None]] = []
"""The running benchmark's progress display (done, total, seconds, unit), where the session
set one: a replay of thousands of commits takes minutes before the first round."""


def shared_seed(backend: Backend, payload: Payload, name: str) -> Path | None:
    """Where the run keeps seed ``name`` of ``payload`` built by ``backend`` (its label,
    options and library versions), if the run keeps seeds."""
    where = os.environ.get(SHARED_SEEDS)
    if not where:
        return None
    key = json.dumps([backend.label, backend.versions(), payload.name, name], sort_keys=True)
    return Path(where) / f"{name}-{hashlib.sha256(key.encode()).hexdigest()[:16]}"


def _publish(seed: Path, shared: Path) -> None:
    """Copy a seed just built (repository and replay figures) where the run keeps seeds:
    written aside and renamed, so a reader never meets half of one; the first of two
    builders to finish is kept."""
    aside = shared.with_name(f".{shared.name}-{os.getpid()}")
    Seed.read(seed / "building").copy_to(aside / "repo")
    if (seed / REPLAY_FILE).exists():
        (aside / REPLAY_FILE).write_bytes((seed / REPLAY_FILE).read_bytes())
    try:
        os.rename(aside, shared)
    except OSError:  # another process of the run published it first
        shutil.rmtree(aside, ignore_errors=True)


class _FromSeed(Operation):
    """Prepared with a copy of a repository (by default the payload in its first
    revision) the backend under test built once per benchmark (in ``seeds/``, not
    measured): each round's repository is written by mkdir/write
    (:mod:`vcsbench.workload.seeds`) and the backend told where it is, so that preparing a
    round costs a few system calls per file, not the VCS calls that built it.

    With a history payload (``history:REPO``) the seed is that history, replayed through
    the backend under test and checked against its source."""

    _seed: Seed | None = None
    builds_seed = True

    @property
    def history(self) -> HistoryPayload | None:
        return self.payload if isinstance(self.payload, HistoryPayload) else None

    def seed_name(self) -> str:
        if self.history is not None:
            return seed_key(self.history)
        return "history-1"

    def build(self, repo: Path, scratch: Path) -> None:
        """Through the backend under test: the repository every round starts from."""
        if self.history is not None:
            show, started = REPLAY_PROGRESS[-1:], time.perf_counter()

            def progress(done: int, count: int) -> None:
                for display in show:
                    display(done, count, time.perf_counter() - started, "commits replayed")

            replay = self.history.replay_into(self.backend, repo, scratch, progress)
            (scratch.parent / REPLAY_FILE).write_text(json.dumps(replay))
            return
        self.backend.create(repo)
        self.backend.commit(repo, self.payload.files, COMMIT_MESSAGE, scratch)

    def seed_info(self, seeds: Path) -> dict[str, float] | None:
        """What replaying the history cost (commits, seconds, commits/s), as the process
        that built the seed wrote it; None without a history."""
        if self.history is None:
            return None
        try:
            data = json.loads((seeds / self.seed_name() / REPLAY_FILE).read_text()[:4096])
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict):
            return None
        return {
            k: float(v)
            for k, v in data.items()
            if k in ("commits", "seconds", "commits_per_s", "reused", "unthrottled")
            and isinstance(v, int | float)
            and math.isfinite(v)
            and v >= 0
        }

    def prepare(self, paths: RoundPaths) -> None:
        if self._seed is None:  # once per process: built by the first, read by later ones
            seed = paths.seeds / self.seed_name()
            if not (seed / "repo").exists():
                shutil.rmtree(seed, ignore_errors=True)
                (seed / "scratch").mkdir(parents=True)
                shared = shared_seed(self.backend, self.payload, self.seed_name())
                built = False
                if shared is not None and self.seeds_unthrottled and not shared.exists():
                    self._build_where_seeds_are_kept(shared)  # off the throttled device
                    built = True
                if shared is not None and (shared / "repo").is_dir():
                    # copied in; built by an earlier benchmark of the run: said in the figures
                    Seed.read(shared / "repo").copy_to(seed / "building")
                    if (shared / REPLAY_FILE).exists():
                        figures = json.loads((shared / REPLAY_FILE).read_text()[:4096])
                        figures = figures if built else {**figures, "reused": 1}
                        (seed / REPLAY_FILE).write_text(json.dumps(figures))
                else:
                    # Built aside and renamed: a build cut short is never taken for a seed.
                    self.build(seed / "building", seed / "scratch")
                    self.backend.seeded(seed / "building")
                    if shared is not None:
                        _publish(seed, shared)
                os.rename(seed / "building", seed / "repo")
            self._seed = Seed.read(seed / "repo")
        self._seed.copy_to(paths.repo)
        self.backend.moved(paths.repo)

    def _build_where_seeds_are_kept(self, shared: Path) -> None:
        """Build the seed beside ``shared`` (where the run keeps seeds) and publish it
        there, its replay figures saying so."""
        where = shared.with_name(f".{shared.name}-build-{os.getpid()}")
        (where / "scratch").mkdir(parents=True)
        self.build(where / "building", where / "scratch")
        self.backend.seeded(where / "building")
        if (where / REPLAY_FILE).exists():  # said in the figures of every copy
            figures = json.loads((where / REPLAY_FILE).read_text()[:4096])
            (where / REPLAY_FILE).write_text(json.dumps({**figures, "unthrottled": 1}))
        _publish(where, shared)
        shutil.rmtree(where)


class _ReachesBack(_FromSeed):
    """``back=K``, with a history payload: the operation works on the revision K before the
    newest replayed one (a checkout of it; a working copy at it, updated; the diff from it
    to the newest), found by number in the round's repository, untimed."""

    option_defaults: ClassVar[Mapping[str, str]] = {"back": ""}

    def __init__(
        self, backend: Backend, payload: Payload, options: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(backend, payload, options)
        self.back = int(self.options["back"] or 0)
        self._ids: dict[int, str] = {}
        self._nodes: dict[int, dict[str, Node]] = {}
        self._started = False
        if not self.back:
            return
        if self.history is None:
            raise VcsbenchError(
                f"operation {self.label} reaches back into a replayed history, and payload "
                f"{payload.name!r} is not one; use a history:REPO payload or drop back="
            )
        if self.back >= self.history.revisions:
            raise VcsbenchError(
                f"operation {self.label}: payload {payload.name} replays "
                f"{self.history.revisions} revisions, so back= must be below that"
            )

    @property
    def old(self) -> int:
        """The revision reached back to (1: the first replayed)."""
        assert self.history is not None
        return self.history.revisions - self.back

    def revision_id(self, repo: Path, revision: int) -> str:
        """The backend's name for ``revision``, read once: every round's repository is a
        copy of one seed."""
        if revision not in self._ids:
            self._ids[revision] = self.backend.revision_id(repo, revision)
        return self._ids[revision]

    def nodes_at(self, revision: int) -> dict[str, Node]:
        """The source's tree at replayed revision ``revision``: every file's kind and data."""
        assert self.history is not None
        if revision not in self._nodes:
            self._nodes[revision] = self.history.source().tree(revision - 1)
        return self._nodes[revision]

    def files_at(self, revision: int) -> Files:
        return {rel: node.data for rel, node in self.nodes_at(revision).items()}


class _IntoCheckout(_FromSeed):
    """Works on a directory beside the repository (a checkout, clone or working copy),
    which counts in the footprint; by default verified by its files."""

    containers = ("repos", "checkouts")

    def in_checkout(self) -> Files:
        """What the directory must hold: the revision's files, the backend's own
        (``created_files``) among them."""
        return {**self.backend.created_files, **self.expected()}

    def verify(self, paths: RoundPaths) -> list[str]:
        return tree_problems(paths.checkout, self.in_checkout(), self.backend.checkout_ignores())

    def measured(self, paths: RoundPaths) -> list[Path]:
        return [paths.repo, paths.checkout]


class _WithHistory(_FromSeed):
    """Prepared with a repository of ``history`` revisions: the payload first, then
    ``history - 1`` commits that each rewrite one small file (the seed, copied into each
    round's repository)."""

    option_defaults: ClassVar[Mapping[str, str]] = {"history": "100"}

    @property
    def revisions(self) -> int:
        """Revisions in the prepared repository (a history payload's: its replayed ones)."""
        if self.history is not None:
            return self.history.revisions
        return int(self.options["history"])

    def messages(self) -> list[str]:
        """The log the prepared repository has, newest first."""
        if self.history is not None:
            return list(reversed(self.history.messages))
        later = [f"vcsbench history {i}" for i in range(self.revisions - 1, 0, -1)]
        return [*later, COMMIT_MESSAGE]

    def history_files(self) -> Files:
        """The newest revision's files in the prepared repository."""
        files = dict(self.payload.files)
        if self.history is None and self.revisions > 1:
            files[HISTORY_FILE] = f"history {self.revisions - 1}\n".encode()
        return files

    def seed_name(self) -> str:
        if self.history is not None:
            return super().seed_name()
        return f"history-{self.revisions}"

    def build(self, repo: Path, scratch: Path) -> None:
        super().build(repo, scratch)
        if self.history is not None:
            return
        for i in range(1, self.revisions):
            self.backend.commit(
                repo, {HISTORY_FILE: f"history {i}\n".encode()}, f"vcsbench history {i}", scratch
            )


class Commit(_WithHistory):
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


class Checkout(_ReachesBack, _IntoCheckout):
    name = "checkout"
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


class Clone(_IntoCheckout):
    name = "clone"
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


class Update(_ReachesBack, _IntoCheckout):
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


class Publish(_IntoCheckout):
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


class Status(_IntoCheckout):
    name = "status"
    checks = "the answer against the one file changed and the one added"
    needs = frozenset({"create", "commit", "status"})
    summary = "status of a working copy with one file modified and one not under version control"

    def prepare(self, paths: RoundPaths) -> None:
        super().prepare(paths)
        self.backend.working_copy(paths.repo, paths.checkout, paths.scratch)
        self.modified = sorted(self.payload.files)[0]
        (paths.checkout / self.modified).write_bytes(self.change[self.modified])
        (paths.checkout / UNTRACKED_FILE).write_bytes(b"not under version control\n")
        self.answer: dict[str, str] | None = None

    def run(self, paths: RoundPaths) -> None:
        self.answer = self.backend.status(paths.checkout)

    def expected(self) -> Files:
        return dict(self.payload.files)

    def verify(self, paths: RoundPaths) -> list[str]:
        want = {self.modified: "M", UNTRACKED_FILE: "?"}
        if self.answer != want:
            return [f"status said {self.answer!r}, the working copy has {want!r}"]
        return []


class Log(_WithHistory):
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

    def prepare(self, paths: RoundPaths) -> None:
        super().prepare(paths)
        self.answer: list[str] | None = None
        self.output: Any = None

    def run(self, paths: RoundPaths) -> None:
        read = self.backend.log_verbose if self.verbose else self.backend.log_output
        self.output = read(paths.repo)  # as printed: read after the timing

    def expected(self) -> Files:
        return self.history_files()

    def verify(self, paths: RoundPaths) -> list[str]:
        problems: list[str] = []
        if not self.verbose:
            try:
                self.answer = self.backend.log_messages(self.output)
            except (SyntaxError, ValueError, TypeError) as exc:  # not the log the VCS prints
                return [f"the log could not be read: {type(exc).__name__}: {exc}"]
        else:
            try:
                entries = verbose_log(self.output)
            except (SyntaxError, ValueError) as exc:  # ElementTree's ParseError, a bad number
                return [f"the verbose log is not the XML svn prints: {exc}"]
            self.answer = [message for _revision, message, _paths in entries]
            changed = {revision: found for revision, _message, found in entries}
            for revision in sample_revisions(self.revisions):
                want = changed_paths(paths.repo, revision)
                if changed.get(revision) != want:
                    problems.append(
                        f"revision {revision}: the log names {len(changed.get(revision, ()))} "
                        f"changed paths, svnlook {len(want)}"
                    )
        return problems + self._messages_problems()

    def _messages_problems(self) -> list[str]:
        want = self.messages()
        got = self.answer or []
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


class _Walk(_WithHistory):
    """One of git's walks of the whole history; what it printed is kept as it came, and
    read after the timing."""

    needs = frozenset({"create", "commit", "walk"})

    def prepare(self, paths: RoundPaths) -> None:
        super().prepare(paths)
        self.answer = b""

    def run(self, paths: RoundPaths) -> None:
        self.answer = self.walk(paths.repo)

    def walk(self, repo: Path) -> bytes:
        raise NotImplementedError

    def lines(self) -> list[str]:
        return self.answer.decode(errors="replace").splitlines()

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
        want = [title(m) for m in self.messages()[: int(self.options["limit"])]]
        got = [line.partition(" ")[2] for line in self.lines()]
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
        commits, _ = reachable_with_pygit2(paths.repo)
        got = self.lines()
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
        _, stored = reachable_with_pygit2(paths.repo)
        got = [line.partition(" ")[0] for line in self.lines()]
        if len(got) != len(set(got)) or set(got) != stored:
            return [
                f"the walk listed {len(got)} objects ({len(set(got))} distinct), the "
                f"repository holds {len(stored)} ({len(stored - set(got))} not listed)"
            ]
        return []


class Diff(_ReachesBack):
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
        self.answer: bytes | None = None

    def run(self, paths: RoundPaths) -> None:
        if self.back:
            self.answer = self.backend.diff_between(paths.repo, *self.pair, paths.scratch)
        else:
            self.answer = self.backend.diff(paths.repo, paths.scratch)

    def expected(self) -> Files:
        if self.back:
            return dict(self.payload.files)
        return {**self.payload.files, **self.change}

    def verify(self, paths: RoundPaths) -> list[str]:
        """The diff, applied to the parent's files (with ``back=K``, the old revision's
        text files), must give the newest revision's."""
        if self.back:
            assert self.history is not None
            old, new = self.nodes_at(self.old), self.nodes_at(self.history.revisions)
            return revisions_patch_problems(self.answer or b"", old, new)
        return patch_problems(self.answer or b"", self.payload.files, self.change)


class Gc(_WithHistory):
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


# --- unified diffs, read without any VCS ---------------------------------------------
