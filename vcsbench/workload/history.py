"""A real history as a payload: ``history:SOURCE[,commits=N,from=REV]``.

SOURCE is a git repository (a path or a ``file://`` URL; Subversion and Mercurial
sources: :mod:`vcsbench.workload.source_svn`, :mod:`vcsbench.workload.source_hg`).
vcsbench walks its first-parent line back from REV (default: HEAD): REV itself is held
out as *the next real change* (what the ``commit`` operation commits), and the N commits
before it are replayed, oldest first, into every backend under test -- the first of them
as its whole tree, each later one as the change from its first parent (adds,
modifications, deletions, renames as git's own rename detection finds them, executable
bits, symlinks), with its message and author.

The source is data. It is read through libgit2 (pygit2), which runs nothing a repository
names (no hooks, filters, diff drivers); nothing of it is passed to a shell; every path
is checked as a payload's are (relative, no ``..``, no VCS metadata directory) and every
symlink's target must stay inside the tree. A submodule entry (a gitlink) is not content
and is left out, counted in the payload's description.

A replayed repository is verified whole: the tree of its last replayed revision, and of
a sample of earlier ones, must equal the source's tree at the same commit, file by file
(kind and bytes), read back by the backend's independent reader (``Backend.tree``).
"""

from __future__ import annotations

import gc
import hashlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from vcsbench.backends.base import Backend
from vcsbench.backends.changes import Change, tree_differences
from vcsbench.errors import VcsbenchError
from vcsbench.workload.attributes import converting_lines
from vcsbench.workload.payloads import Payload, register_kind
from vcsbench.workload.source import (
    RELEASE_EVERY,
    HistorySpec,
    SourceHistory,
    is_history,
    parse_history_name,
)
from vcsbench.workload.source_git import read_git
from vcsbench.workload.source_hg import read_hg
from vcsbench.workload.source_svn import read_svn, svn_root

SAMPLES = 3
"""Earlier revisions verified besides the last (evenly spaced)."""


def read_history(spec: HistorySpec) -> SourceHistory:
    """The source's history, read by its VCS's reader: a Subversion repository (or a path
    inside one), a Mercurial repository, else git."""
    found = svn_root(spec.source)
    if found is not None:
        return read_svn(spec, *found)
    if (spec.source / ".hg").is_dir():
        return read_hg(spec)
    return read_git(spec)


@dataclass(frozen=True)
class HistoryPayload(Payload):
    """A real history: ``files`` is the tree of its last replayed commit (a symlink as a
    file holding its target, for the operations that commit one tree); the history itself
    is read from the source when a seed is built (:meth:`replay_into`)."""

    spec: HistorySpec = HistorySpec(Path("."), None, "HEAD")  # noqa: RUF009 (frozen: shared safely)
    identity: Mapping[str, Any] = field(default_factory=dict)
    messages: tuple[str, ...] = ()
    """The replayed commits' messages, oldest first."""
    next: Change | None = None
    next_tree: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    """The next change's tree (kind and SHA-256 of every file), as the source has it."""
    roots: frozenset[str] = frozenset()
    """Every name written at the tree's root, in any replayed commit or the next."""

    def root_names(self) -> frozenset[str]:
        return self.roots

    def converting(self) -> list[str]:
        """:meth:`Payload.converting` of its tip, and of the next change's writes."""
        ahead = {rel: node.data for rel, node in (self.next.writes if self.next else {}).items()}
        return sorted({*super().converting(), *converting_lines(ahead)})

    def next_files(self) -> dict[str, bytes]:
        """The files after the next change (a symlink as its target)."""
        assert self.next is not None
        files = {k: v for k, v in self.files.items() if k not in self.next.deletes}
        files.update({rel: node.data for rel, node in self.next.writes.items()})
        return files

    def source(self) -> SourceHistory:
        return read_history(self.spec)

    def describe(self) -> dict[str, Any]:
        # counts as numbers (commits, renames, gitlinks_left_out), the rest as text
        history = {
            k: v if isinstance(v, int) and not isinstance(v, bool) else str(v)
            for k, v in self.identity.items()
            if v is not None
        }
        return {**super().describe(), "history": history}

    def change(self) -> dict[str, bytes]:
        """The operations that write files (not a history): the next change's files."""
        if self.next is None or not self.next.writes:
            return super().change()
        return {rel: node.data for rel, node in self.next.writes.items()}

    @property
    def revisions(self) -> int:
        return len(self.messages)

    def replay_into(
        self,
        backend: Backend,
        repo: Path,
        scratch: Path,
        progress: Callable[[int, int], None] | None = None,
    ) -> dict[str, Any]:
        """Create ``repo`` and replay every commit into it through ``backend``; then check
        the last replayed revision's tree and ``SAMPLES`` earlier ones against the source.
        Returns what the replay cost (commits, seconds, commits/s)."""
        with self.source() as history:
            backend.create(repo)
            count = len(history.replayed)
            started = time.perf_counter()
            for done, change in enumerate(history.changes(), 1):
                backend.replay(repo, change, scratch)
                if done % RELEASE_EVERY == 0:
                    gc.collect()  # what the backend's calls left in cycles (repositories)
                if progress is not None:
                    progress(done, count)
            seconds = time.perf_counter() - started
            problems = replay_problems(backend, repo, history)
        if problems:
            raise VcsbenchError(
                f"{backend.label}: the replay of {self.spec.name} does not match its source: "
                + "; ".join(problems)
            )
        return {"commits": count, "seconds": seconds, "commits_per_s": count / seconds}


def sample_revisions(count: int) -> list[int]:
    """The 1-based revisions checked: ``SAMPLES`` spread over the history, and the last."""
    picks = {max(1, round(count * k / (SAMPLES + 1))) for k in range(1, SAMPLES + 1)}
    return sorted(picks | {count})


def replay_problems(backend: Backend, repo: Path, history: SourceHistory) -> list[str]:
    """Each sampled revision's tree, read back by the backend's reader, against the
    source's tree at the same commit (kind and content, every file, nothing more)."""
    problems: list[str] = []
    for revision in sample_revisions(len(history.replayed)):
        want = history.tree_digests(history.replayed[revision - 1])
        try:
            got = backend.tree(repo, revision)
        except Exception as exc:  # a reader that fails fails the replay
            problems.append(f"revision {revision}: could not be read ({type(exc).__name__}: {exc})")
            continue
        problems += [f"revision {revision}: {p}" for p in tree_differences(want, got)]
    return problems


@cache
def load_history_payload(name: str) -> HistoryPayload:
    spec = parse_history_name(name)
    with read_history(spec) as history:
        return _history_payload(spec, history)


def _history_payload(spec: HistorySpec, history: SourceHistory) -> HistoryPayload:
    renames = deletes = no_email = history.left_out = 0
    roots: set[str] = set()
    messages: list[str] = []
    # every path, link, size and tree's extent checked first, no file's bytes read
    for change in history.changes(contents=False):
        roots.update(rel for rel in change.writes if "/" not in rel)
        no_email += not change.author_email
        renames += len(change.renames)
        # a deletion: a path gone, not renamed away nor written again (a type change)
        moved = set(change.renames.values())
        deletes += sum(1 for d in change.deletes if d not in moved and d not in change.writes)
        messages.append(change.message)
    tip = history.tree(len(history.replayed) - 1)
    total = sum(len(node.data) for node in tip.values())
    files = {rel: node.data for rel, node in tip.items()}
    if not files:
        raise VcsbenchError(f"payload {spec.name}: its last replayed commit has no files")
    next_change = history.next_change()
    next_tree = history.tree_digests(history.next_commit) if history.next_commit is not None else {}
    identity = {
        "source": str(spec.source.resolve()),
        "vcs": history.vcs,
        "from": spec.start,
        "first": history.replayed[0],
        "last": history.replayed[-1],
        "next": history.next_commit,
        "commits": len(history.replayed),
        "tip_files": len(files),
        "tip_bytes": total,
        "renames": renames,
        "deletions": deletes,
        **({"authors_without_email": no_email} if no_email else {}),
        **history.identity(),
    }
    span = f"{history.scope}{identity['first']}..{identity['last']}"
    digest = hashlib.sha256(span.encode()).hexdigest()[:12]
    description = (
        f"{len(history.replayed)} commits of {spec.source} ({history.line}, "
        f"{history.replayed[0][:12]}..{history.replayed[-1][:12]}), replayed"
    )
    return HistoryPayload(
        spec.name,
        description,
        files,
        None,
        spec=spec,
        identity={**identity, "range_id": digest},
        messages=tuple(messages),
        next=next_change,
        next_tree=next_tree,
        roots=frozenset(
            roots | {rel for rel in (next_change.writes if next_change else {}) if "/" not in rel}
        ),
    )


def seed_key(payload: HistoryPayload) -> str:
    """A seed directory's name for this history: its range's identity."""
    return f"replay-{payload.identity['range_id']}"


register_kind(is_history, load_history_payload)
