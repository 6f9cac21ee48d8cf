"""A history source, read: what the git, Subversion and Mercurial readers share.

``history:SOURCE[,commits=N,from=REV]`` names the source (:class:`HistorySpec`); every
reader walks the source's first-parent (or path-changing) revisions and gives each as
the change every VCS records (:class:`~vcsbench.backends.changes.Change`), through the
bookkeeping of :class:`SourceHistory` (directories made and emptied, the kinds before,
names and links checked as data from anywhere, sizes bounded:
:mod:`vcsbench.workload.tree_bounds`). The readers: git's in
:mod:`vcsbench.workload.source_git`, Subversion's in
:mod:`vcsbench.workload.source_svn`, Mercurial's in :mod:`vcsbench.workload.source_hg`.
The payload that replays a history: :mod:`vcsbench.workload.history`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vcsbench.backends.changes import Change, DigestTree, Node, digest_tree
from vcsbench.errors import VcsbenchError
from vcsbench.workload.payloads import check_names
from vcsbench.workload.tree_bounds import Tally, check_links, check_shape

HISTORY_PREFIX = "history:"
DEFAULT_COMMITS = 1000
MAX_COMMITS = 100_000
EMPTY_MESSAGE = "(no message)"
"""What an empty commit message is replayed as: Mercurial refuses an empty one."""
OPTIONS = ("commits", "from")


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
    sizes: dict[str, int]
    """Each written file's size, read from what names it (not its bytes)."""


@dataclass
class TreeState:
    """What a history's reader keeps of the tree as each commit applies: every file's
    kind, how many files each directory holds, the symlinks' targets, the sizes."""

    kinds: dict[str, str] = field(default_factory=dict)
    dir_files: dict[str, int] = field(default_factory=dict)
    links: dict[str, bytes] = field(default_factory=dict)
    tally: Tally = field(default_factory=Tally)

    @classmethod
    def of(cls, tree: Mapping[str, Node]) -> TreeState:
        state = cls()
        for rel, node in tree.items():
            state.kinds[rel] = node.kind
            for d in _dirs(rel):
                state.dir_files[d] = state.dir_files.get(d, 0) + 1
            if node.kind == "link":
                state.links[rel] = node.data
        state.tally.apply("", (), {rel: len(node.data) for rel, node in tree.items()})
        return state


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

    def close(self) -> None:
        """Let the source go now (a reader may hold a repository's packs mapped)."""

    def __enter__(self) -> SourceHistory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def read_tree(self, rid: str) -> dict[str, Node]:
        raise NotImplementedError

    def tree_digests(self, rid: str) -> DigestTree:
        """Commit ``rid``'s tree as each file's kind and SHA-256 (what verification
        compares), not kept: a reader may give it without holding every file's bytes."""
        return digest_tree(self.read_tree(rid))

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
        state = TreeState()
        parent = None
        for rid in self.replayed:
            yield self._change(rid, parent, state, contents)
            parent = rid

    def next_change(self) -> Change | None:
        """The commit after the replayed range, as a change to the last replayed one."""
        if self.next_commit is None:
            return None
        state = TreeState.of(self.tree(len(self.replayed) - 1))
        return self._change(self.next_commit, self.replayed[-1], state)

    def _change(
        self, rid: str, parent: str | None, state: TreeState, contents: bool = True
    ) -> Change:
        """Commit ``rid`` read and checked (names, shapes, sizes, links) against the tree
        ``state`` holds, which it then updates."""
        kinds, dir_files = state.kinds, state.dir_files
        raw = self.raw_change(rid, parent, kinds, contents)
        writes, deletes, renames = raw.writes, raw.deletes, raw.renames
        where = f"{self.where}, commit {rid[:12]}"
        check_names(dict.fromkeys([*writes, *deletes], b""), where)
        for rel in writes:
            check_shape(where, rel)
        state.tally.apply(where, deletes, raw.sizes)
        for rel in deletes:
            state.links.pop(rel, None)
        for rel, node in writes.items():
            if node.kind == "link":
                state.links[rel] = node.data
            else:
                state.links.pop(rel, None)
        if any(node.kind == "link" for node in writes.values()):
            check_links(state.links, where)  # a new link, or one another now runs through
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


def _dirs(rel: str) -> list[str]:
    parts = rel.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]
