"""A git source of a ``history:`` payload, read through libgit2 (pygit2): first parents
back from ``from=REV``, git's own rename detection, every tree's size and shape walked
from object headers before a file's bytes are read (:meth:`GitHistory.bound_change`)."""

from __future__ import annotations

import gc
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from vcsbench.backends.changes import GIT_KINDS, DigestTree, Node, content_digest
from vcsbench.errors import VcsbenchError
from vcsbench.workload.payloads import MAX_DEPTH, TREE_MAX_FILES
from vcsbench.workload.source import (
    DEFAULT_COMMITS,
    RELEASE_EVERY,
    HistorySpec,
    RawChange,
    SourceHistory,
    check_length,
)
from vcsbench.workload.tree_bounds import check_shape, check_size

GITLINK = 0o160000
MAX_TREE_OBJECT_BYTES = 64 << 20
"""A git tree object's size: a directory of ~1,000,000 entries, far past any tree's limit."""
MAX_COMMIT_OBJECT_BYTES = 16 << 20
"""A git commit object's size (its message, mostly): Linux's longest is a few KiB."""


def check_commit(repo: Any, oid: Any, where: str) -> None:
    """Refuse a commit object larger than a message can sanely be, from its header."""
    size = repo.odb.read_header(oid)[1]
    if size > MAX_COMMIT_OBJECT_BYTES:
        raise VcsbenchError(
            f"{where}: commit {str(oid)[:12]} is {size:,} bytes (its message), more than the "
            f"{MAX_COMMIT_OBJECT_BYTES >> 20} MiB vcsbench reads"
        )


def _open_git(spec: HistorySpec, where: str) -> Any:
    import pygit2

    path = spec.source
    if not path.is_dir():
        raise VcsbenchError(
            f"{where}: {path} is not a directory; give a git, Subversion or Mercurial repository"
        )
    try:
        return pygit2.Repository(str(path), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
    except (pygit2.GitError, KeyError, AttributeError):
        try:
            return pygit2.Repository(str(path))
        except pygit2.GitError as exc:
            raise VcsbenchError(
                f"{where}: {path} is not a git, Subversion or Mercurial repository ({exc}); "
                "give one's path"
            ) from None


@dataclass
class GitHistory(SourceHistory):
    """A git source, read through libgit2: first parents, git's own rename detection."""

    _repo: Any = None
    _reads: int = 0

    vcs = "git"

    def identity(self) -> dict[str, Any]:
        return {"gitlinks_left_out": self.left_out}

    def close(self) -> None:
        """A pygit2 Repository is a reference cycle (its branches, references and remotes
        hold it), freed only by the cycle collector: until then libgit2 keeps the source's
        packs mapped, and the next reader of the same source maps them again (419 MiB
        resident for a 309 MiB pack of 100,000 commits, against 125 MiB collected)."""
        if self._repo is not None:
            self._repo.free()
            self._repo = None
            gc.collect()

    @property
    def repo(self) -> Any:
        self._reads += 1
        if self._reads % RELEASE_EVERY == 0:
            self._repo.free()  # libgit2's caches released; the handle stays usable
        return self._repo

    def _files(self, rid: str) -> Iterator[tuple[str, str, Any]]:
        """Commit ``rid``'s files (path, kind, blob id), walked without recursion."""
        repo = self.repo
        todo = [(repo[rid].tree.id, "")]
        while todo:
            tree_id, prefix = todo.pop()
            for entry in repo[tree_id]:
                rel = prefix + entry.name
                if entry.filemode == 0o040000:
                    todo.append((entry.id, rel + "/"))
                elif entry.filemode in GIT_KINDS:
                    yield rel, GIT_KINDS[entry.filemode], entry.id

    def read_tree(self, rid: str) -> dict[str, Node]:
        """Commit ``rid``'s whole tree, every file's node."""
        tree = {rel: Node(kind, self._repo[oid].data) for rel, kind, oid in self._files(rid)}
        self._repo.free()  # the pack windows and delta bases a whole tree's read mapped
        return tree

    def tree_digests(self, rid: str) -> DigestTree:
        """Each file's kind and SHA-256, one blob read at a time."""
        digests = {
            rel: (kind, content_digest(self._repo[oid].data)) for rel, kind, oid in self._files(rid)
        }
        self._repo.free()
        return digests

    def _entries(self, tree_id: Any, prefix: str, where: str) -> dict[str, tuple[int, Any]]:
        if tree_id is None:
            return {}
        size = self._repo.odb.read_header(tree_id)[1]
        if size > MAX_TREE_OBJECT_BYTES:
            raise VcsbenchError(
                f"{where}: directory {prefix or '/'} is a tree object of {size:,} bytes, more "
                f"than the {MAX_TREE_OBJECT_BYTES >> 20} MiB vcsbench reads"
            )
        return {entry.name: (entry.filemode, entry.id) for entry in self._repo[tree_id]}

    def bound_change(self, old_tree: Any, new_tree: Any, before: int, where: str) -> None:
        """Walk what differs between two trees (``old_tree`` None: all of the new one)
        without recursion and without reading a file, before libgit2 diffs them: refuse
        a path too deep, or a commit whose changed files or directories outnumber the
        ``before`` files of the tree before it and a whole tree's limit (a tree whose
        subtrees name one subtree again and again is millions of files in a few objects)."""
        todo = [(old_tree, new_tree, "")]
        limit = before + TREE_MAX_FILES
        changed = {False: 0, True: 0}  # files, directories
        while todo:
            old_id, new_id, prefix = todo.pop()
            old = self._entries(old_id, prefix, where)
            new = self._entries(new_id, prefix, where)
            for name in old.keys() | new.keys():
                was, now = old.get(name), new.get(name)
                if was == now:
                    continue
                subtrees = [e[1] if e and e[0] == 0o040000 else None for e in (was, now)]
                directory = any(subtrees)
                changed[directory] += 1
                if changed[directory] > limit:
                    what = "directories" if directory else "files"
                    raise VcsbenchError(
                        f"{where}: changes more than {limit:,} {what} "
                        f"of a tree of {before:,}: it would hold more than {TREE_MAX_FILES:,} "
                        "files, more than a replayed tree may"
                    )
                if directory:
                    rel = prefix + name
                    if rel.count("/") >= MAX_DEPTH:
                        check_shape(where, rel + "/...")
                    todo.append((subtrees[0], subtrees[1], rel + "/"))

    def raw_change(
        self, rid: str, parent: str | None, kinds: Mapping[str, str], contents: bool
    ) -> RawChange:
        repo = self.repo
        check_commit(repo, rid, self.where)
        commit = repo[rid]
        where = f"{self.where}, commit {rid[:12]}"
        before = repo[parent].tree if parent is not None else None
        self.bound_change(
            before.id if before is not None else None, commit.tree.id, len(kinds), where
        )
        if before is None:
            diff = commit.tree.diff_to_tree(swap=True)
        else:
            diff = repo.diff(before, commit.tree)
            diff.find_similar()
        writes: dict[str, Node] = {}
        sizes: dict[str, int] = {}
        deletes: list[str] = []
        renames: dict[str, str] = {}
        for delta in diff.deltas:
            old, new = delta.old_file, delta.new_file
            status = delta.status_char()
            removed = status in ("D", "R") or new.mode not in GIT_KINDS
            if status in ("D", "R", "M", "T") and old.mode in GIT_KINDS and removed:
                deletes.append(old.path)
            if status in ("A", "M", "T", "R", "C") and new.mode in GIT_KINDS:
                kind = GIT_KINDS[new.mode]
                sizes[new.path] = repo.odb.read_header(new.id)[1]
                check_size(where, new.path, sizes[new.path])
                data = repo[new.id].data if contents or kind == "link" else b""
                writes[new.path] = Node(kind, data)
                if status == "R" and old.mode in GIT_KINDS:
                    renames[new.path] = old.path
            elif GITLINK in (old.mode, new.mode):
                self.left_out += 1
        return RawChange(
            writes,
            deletes,
            renames,
            commit.message,
            f"{commit.author.name} <{commit.author.email}>",
            int(commit.author.time),
            sizes,
        )


def read_git(spec: HistorySpec) -> GitHistory:
    import pygit2

    where = f"payload {spec.name}"
    repo = _open_git(spec, where)
    try:  # a reference's target sized before it is read (revparse reads the object)
        named = repo.lookup_reference_dwim(spec.start).resolve().target
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        named = None
    if named is not None:
        check_commit(repo, named, where)
    try:
        tip = repo.revparse_single(spec.start).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError) as exc:
        raise VcsbenchError(
            f"{where}: from={spec.start!r} names no commit in {spec.source} ({exc})"
        ) from None
    wanted = (spec.commits or DEFAULT_COMMITS) + 1
    chain = [str(tip.id)]
    commit = tip
    while len(chain) < wanted and commit.parent_ids:
        check_commit(repo, commit.parent_ids[0], where)
        commit = repo[commit.parent_ids[0]]
        chain.append(str(commit.id))
        if len(chain) % RELEASE_EVERY == 0:
            repo.free()
    check_length(
        spec, len(chain), wanted, f"commit(s) before {spec.start} on its first-parent line"
    )
    del tip, commit
    repo.free()  # and libgit2's cache of what the walk read
    ids = chain[::-1]
    return GitHistory(spec, ids[:-1], ids[-1], _repo=repo)
