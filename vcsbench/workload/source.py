"""A history source, read: what the git, Subversion and Mercurial readers share.

``history:SOURCE[,commits=N,from=REV]`` names the source (:class:`HistorySpec`); every
reader walks the source's first-parent (or path-changing) revisions and gives each as the
change every VCS records (:class:`~vcsbench.backends.changes.Change`), through the
bookkeeping of :class:`SourceHistory` (directories made and emptied, the kinds before,
names and links checked as data from anywhere, sizes bounded). The git reader is here
(libgit2 through pygit2); Subversion's and Mercurial's are in
:mod:`vcsbench.workload.sources`. The payload that replays a history:
:mod:`vcsbench.workload.history`.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vcsbench.backends.changes import GIT_KINDS, Change, Node
from vcsbench.errors import VcsbenchError
from vcsbench.workload.payloads import check_names

HISTORY_PREFIX = "history:"
DEFAULT_COMMITS = 1000
MAX_COMMITS = 100_000
MAX_FILE_BYTES = 256 << 20
EMPTY_MESSAGE = "(no message)"
"""What an empty commit message is replayed as: Mercurial refuses an empty one."""
OPTIONS = ("commits", "from")

GITLINK = 0o160000


@dataclass(frozen=True)
class HistorySpec:
    source: Path
    commits: int | None
    start: str

    @property
    def name(self) -> str:
        parts = [f"{HISTORY_PREFIX}{self.source}"]
        if self.commits is not None:
            parts.append(f"commits={self.commits}")
        if self.start != "HEAD":
            parts.append(f"from={self.start}")
        return ",".join(parts)


def is_history(name: str) -> bool:
    return name.startswith(HISTORY_PREFIX)


def parse_history_name(name: str) -> HistorySpec:
    """``history:SOURCE[,commits=N][,from=REV]`` (or the options in brackets)."""
    where = f"payload {name}"
    body = name[len(HISTORY_PREFIX) :]
    if body.endswith("]") and "[" in body:
        body = body[:-1].replace("[", ",", 1)
    source, *pairs = body.split(",")
    options: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or key.strip() not in OPTIONS:
            raise VcsbenchError(
                f"{where}: {pair!r} is not an option of history:; accepted: commits=N, from=REV"
            )
        options[key.strip()] = value.strip()
    if source.startswith("file://"):
        source = source[len("file://") :]
    if not source:
        raise VcsbenchError(
            f"{where}: no SOURCE; write history:PATH (a git, Subversion or Mercurial repository)"
        )
    commits: int | None = None
    if "commits" in options:
        value = options["commits"]
        if not value.isdigit() or not 1 <= int(value) <= MAX_COMMITS:
            raise VcsbenchError(
                f"{where}: commits={value!r} is not a whole number from 1 to {MAX_COMMITS:,}"
            )
        commits = int(value)
    if source.startswith("corpus:"):  # a reference corpus, once `make corpus` built it
        from vcsbench.workload.corpus import corpus_repo

        source = str(corpus_repo(source[len("corpus:") :]))
    elif source.startswith("synthetic:"):  # N commits of small files, written on first use
        from vcsbench.workload.corpus import corpus_dir
        from vcsbench.workload.synthetic import synthetic_repo

        count = source[len("synthetic:") :]
        if not count.isdigit():
            raise VcsbenchError(f"{where}: synthetic:{count} -- give a number of commits")
        source = str(synthetic_repo(int(count), corpus_dir()))
        commits = commits or int(count)
    start = options.get("from", "HEAD") or "HEAD"
    if start.startswith("-") or any(c.isspace() for c in start):
        raise VcsbenchError(f"{where}: from={start!r} is not a revision (a commit id, a branch)")
    return HistorySpec(Path(source).expanduser(), commits, start)


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


def _check_link(rel: str, target: bytes, where: str) -> None:
    text = target.decode(errors="replace")
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(rel), text))
    if not target or target.startswith(b"/") or joined == ".." or joined.startswith("../"):
        raise VcsbenchError(
            f"{where}: symlink {rel} points outside the tree ({text!r}); vcsbench replays "
            "symlinks whose target stays inside the repository only"
        )


def check_size(where: str, rel: str, size: int) -> None:
    """Refuse a file too large to replay, before its bytes are read."""
    if size > MAX_FILE_BYTES:
        raise VcsbenchError(
            f"{where}: {rel} is {size:,} bytes, more than the {MAX_FILE_BYTES >> 20} MiB a "
            "replayed file may be"
        )


def check_length(spec: HistorySpec, found: int, wanted: int, what: str) -> None:
    """Refuse a source line of ``found`` commits (the next change among them) shorter than
    two, or than the ``commits=`` asked for; ``what``: what was counted, and where."""
    if found < 2 or (spec.commits is not None and found < wanted):
        have = found - 1
        raise VcsbenchError(
            f"payload {spec.name}: {spec.source} has {max(have, 0)} {what}; give "
            f"commits={max(have, 1)} or fewer (the last is held out as the next change)"
        )


def pair_renames(copies: Iterable[tuple[str, str]], deletes: Iterable[str]) -> dict[str, str]:
    """New path -> old path for each copy (new, old) whose source the same commit deletes,
    each old path taken once: a rename, as the Change records one."""
    gone = set(deletes)
    renames: dict[str, str] = {}
    for new, old in copies:
        if old in gone and old not in renames.values():
            renames[new] = old
    return renames


RELEASE_EVERY = 256
"""Commits read before the source's caches are released: libgit2 keeps what it reads
(objects, pack indexes) in the repository object, so a history read through one would
grow with its length (60 MiB more at 10,000 commits than at 1,000, measured)."""


@dataclass(frozen=True)
class RawChange:
    """What one source commit changes, as its VCS reads it, before the checks and the
    directory bookkeeping every source shares (:meth:`SourceHistory.changes`)."""

    writes: dict[str, Node]
    deletes: list[str]
    renames: dict[str, str]
    message: str
    author: str
    when: int


@dataclass
class SourceHistory:
    """The source's commits to replay (ids, oldest first), the next change, and what
    describes them; a VCS's reader supplies :meth:`read_tree`, :meth:`raw_change` and
    :meth:`message`."""

    spec: HistorySpec
    replayed: list[str]
    """The ids of the commits replayed, oldest first."""
    next_commit: str | None
    left_out: int = 0
    """Entries of the source that are not content (git's submodule links)."""
    _trees: dict[int, dict[str, Node]] = field(default_factory=dict)

    vcs = ""
    line = "first parents"
    """Which commits of the source are its history (a description's words)."""
    scope = ""
    """What makes the ids unique beyond this source (Subversion's: its UUID and path)."""

    @property
    def where(self) -> str:
        return f"payload {self.spec.name}"

    def identity(self) -> dict[str, Any]:
        """What names the source besides its ids (a repository's UUID, a path inside it)."""
        return {}

    def read_tree(self, rid: str) -> dict[str, Node]:
        raise NotImplementedError

    def raw_change(
        self, rid: str, parent: str | None, kinds: Mapping[str, str], contents: bool
    ) -> RawChange:
        """Commit ``rid`` against ``parent`` (None: its whole tree); ``kinds``: the files
        before it. Without ``contents`` a file's data may be left empty (not a link's)."""
        raise NotImplementedError

    def tree(self, index: int) -> dict[str, Node]:
        """The source's tree at replayed commit ``index`` (0-based), every file's node."""
        if index not in self._trees:
            self._trees.clear()  # one at a time: a tree's bytes can be large
            self._trees[index] = self.read_tree(self.replayed[index])
        return self._trees[index]

    def changes(self, contents: bool = True) -> Iterator[Change]:
        """Each replayed commit as a change to the one before (the first: its whole tree);
        without ``contents``, a file's data is left empty (a symlink's target is read):
        what checking every path and link of a history needs."""
        kinds: dict[str, str] = {}
        dir_files: dict[str, int] = {}
        parent = None
        for rid in self.replayed:
            yield self._change(rid, parent, kinds, dir_files, contents)
            parent = rid

    def next_change(self) -> Change | None:
        """The commit after the replayed range, as a change to the last replayed one."""
        if self.next_commit is None:
            return None
        kinds = {rel: node.kind for rel, node in self.tree(len(self.replayed) - 1).items()}
        dir_files: dict[str, int] = {}
        for rel in kinds:
            for d in _dirs(rel):
                dir_files[d] = dir_files.get(d, 0) + 1
        return self._change(self.next_commit, self.replayed[-1], kinds, dir_files)

    def _change(
        self,
        rid: str,
        parent: str | None,
        kinds: dict[str, str],
        dir_files: dict[str, int],
        contents: bool = True,
    ) -> Change:
        raw = self.raw_change(rid, parent, kinds, contents)
        writes, deletes, renames = raw.writes, raw.deletes, raw.renames
        where = f"{self.where}, commit {rid[:12]}"
        check_names(dict.fromkeys([*writes, *deletes], b""), where)
        for rel, node in writes.items():
            if node.kind == "link":
                _check_link(rel, node.data, where)
        previous = {rel: kinds[rel] for rel in writes if rel in kinds}
        for new_path, old_path in renames.items():  # a copy keeps its source's kind
            if old_path in kinds:
                previous[new_path] = kinds[old_path]
        touched: dict[str, int] = {}
        for rel in deletes:
            if kinds.pop(rel, None) is not None:
                for d in _dirs(rel):
                    touched.setdefault(d, dir_files.get(d, 0))
                    dir_files[d] -= 1
        for rel, node in writes.items():
            if rel not in kinds:
                for d in _dirs(rel):
                    touched.setdefault(d, dir_files.get(d, 0))
                    dir_files[d] = dir_files.get(d, 0) + 1
            kinds[rel] = node.kind
        new_dirs = sorted(
            (d for d, before in touched.items() if before == 0 and dir_files.get(d, 0) > 0),
            key=lambda d: (d.count("/"), d),
        )
        gone = {d for d, before in touched.items() if before > 0 and dir_files.get(d, 0) == 0}
        for d in gone:
            dir_files.pop(d, None)
        gone_top = sorted(d for d in gone if not any(d.startswith(g + "/") for g in gone))
        return Change(
            writes=writes,
            deletes=tuple(deletes),
            renames=renames,
            message=raw.message.strip() or EMPTY_MESSAGE,
            author=raw.author,
            when=raw.when,
            source_id=rid,
            previous=previous,
            new_dirs=tuple(new_dirs),
            gone_dirs=tuple(gone_top),
        )


@dataclass
class GitHistory(SourceHistory):
    """A git source, read through libgit2: first parents, git's own rename detection."""

    _repo: Any = None
    _reads: int = 0

    vcs = "git"

    def identity(self) -> dict[str, Any]:
        return {"gitlinks_left_out": self.left_out}

    @property
    def repo(self) -> Any:
        self._reads += 1
        if self._reads % RELEASE_EVERY == 0:
            self._repo.free()  # libgit2's caches released; the handle stays usable
        return self._repo

    def read_tree(self, rid: str) -> dict[str, Node]:
        """Commit ``rid``'s whole tree, every file's node."""
        repo = self.repo
        root = repo[rid].tree
        found: dict[str, Node] = {}

        def walk(node: Any, prefix: str) -> None:
            for entry in node:
                rel = prefix + entry.name
                if entry.filemode == 0o040000:
                    walk(repo[entry.id], rel + "/")
                elif entry.filemode in GIT_KINDS:
                    found[rel] = Node(GIT_KINDS[entry.filemode], repo[entry.id].data)

        walk(root, "")
        return found

    def raw_change(
        self, rid: str, parent: str | None, kinds: Mapping[str, str], contents: bool
    ) -> RawChange:
        repo = self.repo
        commit = repo[rid]
        where = f"{self.where}, commit {rid[:12]}"
        if parent is None:
            diff = commit.tree.diff_to_tree(swap=True)
        else:
            diff = repo.diff(repo[parent].tree, commit.tree)
            diff.find_similar()
        writes: dict[str, Node] = {}
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
                size = repo[new.id].size if contents or kind == "link" else new.size
                check_size(where, new.path, size)
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
        )


def _dirs(rel: str) -> list[str]:
    parts = rel.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def _read_git(spec: HistorySpec) -> GitHistory:
    import pygit2

    where = f"payload {spec.name}"
    repo = _open_git(spec, where)
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
