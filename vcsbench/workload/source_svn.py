"""A Subversion repository as the source of a ``history:`` payload.

SOURCE is a repository's directory, or a path inside its tree written after it
(``history:/srv/svn/course/trunk``). The history is the revisions that change that path
(``svn log PATH``'s), newest ``from=REV`` (default: the youngest); each is read from the
repository itself through the SWIG bindings (``svn.fs``: the changed paths, then each
touched node's text and properties) -- no client, no working copy, no hook: reading runs
none. A copy whose source the same revision deletes is a rename (the path inside the
tree as the target VCS records one); svn:executable is the executable bit, svn:special
with a ``link TARGET`` text a symlink; the author is ``NAME <NAME@UUID>`` (as git-svn
writes it, spaces in the e-mail part as ``_``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vcsbench.backends.changes import Node
from vcsbench.errors import VcsbenchError
from vcsbench.workload.payloads import MAX_DEPTH, TREE_MAX_FILES
from vcsbench.workload.source import (
    DEFAULT_COMMITS,
    HistorySpec,
    RawChange,
    SourceHistory,
    check_length,
    pair_renames,
)
from vcsbench.workload.tree_bounds import check_shape, check_size

SVN_MODIFY, SVN_ADD, SVN_DELETE, SVN_REPLACE = 0, 1, 2, 3
"""``svn_fs_path_change_kind_t``."""


def svn_root(path: Path) -> tuple[Path, str] | None:
    """The Subversion repository ``path`` is, or lies inside (as a path in its tree), and
    that path (``""``: the whole tree); None when it is not one."""
    rel: list[str] = []
    here = path
    while True:
        if (here / "format").is_file() and (here / "db").is_dir() and (here / "hooks").is_dir():
            return here, "/".join(reversed(rel))
        if here.exists() or here.parent == here:
            return None  # an existing directory that is not a repository ends the search
        rel.append(here.name)
        here = here.parent


def _under(path: str, rel: str) -> bool:
    return not rel or path == rel or path.startswith(rel + "/")


def _text(path: bytes | str) -> str:
    """A path as the bindings hand it over (bytes, or str in some builds), as text."""
    return path.decode() if isinstance(path, bytes) else path


def _svn_kind(props: Mapping[bytes, bytes], data: bytes) -> Node:
    if b"svn:special" in props and data.startswith(b"link "):
        return Node("link", data[5:])
    return Node("exec" if b"svn:executable" in props else "file", data)


@dataclass
class SvnHistory(SourceHistory):
    """A Subversion source: its revisions that change ``inner`` (a path in its tree)."""

    _fs: Any = None
    _pool: Any = None
    inner: str = ""
    uuid: str = ""

    vcs = "svn"
    line = "the revisions that change it"

    @property
    def scope(self) -> str:  # type: ignore[override]
        return f"{self.uuid}/{self.inner}@"

    def identity(self) -> dict[str, Any]:
        return {"uuid": self.uuid, "path": "/" + self.inner}

    def _props(self, rev: int) -> dict[bytes, bytes]:
        """Revision ``rev``'s properties, read in a pool of their own (what is allocated
        in the history's pool stays until the end: memory would grow with the history)."""
        import svn.core
        import svn.fs

        pool = svn.core.Pool(self._pool)
        try:
            return dict(svn.fs.revision_proplist(self._fs, rev, pool))
        finally:
            pool.destroy()

    def _full(self, rel: str) -> str:
        return "/".join(p for p in (self.inner, rel) if p)

    def _files(self, root: Any, rel: str, pool: Any) -> Iterator[str]:
        """Every file at or below ``rel`` (relative to the history's path) in ``root``,
        walked without recursion; a tree deeper or larger than a replay takes refused."""
        import svn.core
        import svn.fs

        kind = svn.fs.check_path(root, self._full(rel), pool)
        if kind == svn.core.svn_node_file:
            yield rel
            return
        todo = [rel] if kind == svn.core.svn_node_dir else []
        found = 0
        while todo:
            here = todo.pop()
            entries = svn.fs.dir_entries(root, self._full(here), pool)
            for name, entry in sorted(entries.items(), reverse=True):
                child = f"{here}/{name.decode()}" if here else name.decode()
                if entry.kind == svn.core.svn_node_dir:
                    if child.count("/") >= MAX_DEPTH:
                        check_shape(self.where, child + "/...")
                    todo.append(child)
                    continue
                found += 1
                if found > TREE_MAX_FILES:
                    raise VcsbenchError(
                        f"{self.where}: /{self._full(rel)} holds more than "
                        f"{TREE_MAX_FILES:,} files, more than a replayed tree may"
                    )
                yield child

    def _node(self, root: Any, rel: str, pool: Any, contents: bool = True) -> tuple[Node, int]:
        """A file's node and its length (read before its text, which is read only when
        ``contents`` asks or the node is a link)."""
        import svn.core
        import svn.fs

        full = self._full(rel)
        props = svn.fs.node_proplist(root, full, pool)
        size = svn.fs.file_length(root, full, pool)
        check_size(self.where, rel, size)
        if not contents and b"svn:special" not in props:
            return _svn_kind(props, b""), size
        text = svn.core.Stream(svn.fs.file_contents(root, full, pool)).read()
        return _svn_kind(props, text), size

    def read_tree(self, rid: str) -> dict[str, Node]:
        import svn.core
        import svn.fs

        pool = svn.core.Pool(self._pool)
        try:
            root = svn.fs.revision_root(self._fs, int(rid), pool)
            return {rel: self._node(root, rel, pool)[0] for rel in self._files(root, "", pool)}
        finally:
            pool.destroy()

    def _inside(self, path: str) -> str | None:
        """A changed path's place in the history's tree: relative, ``""`` for the path
        itself (or for an ancestor of it that was added, replaced or deleted), None outside."""
        path = path.strip("/")
        if not self.inner:
            return path
        if path == self.inner:
            return ""
        if path.startswith(self.inner + "/"):
            return path[len(self.inner) + 1 :]
        return None

    def _touches(self, path: str, action: int) -> bool:
        """Whether a changed path changes the history's tree: a path in it, or an
        ancestor of it added, replaced or deleted."""
        if self._inside(path) is not None:
            return True
        above = self.inner.startswith(path.strip("/") + "/") or path == "/"
        return above and action != SVN_MODIFY

    def raw_change(
        self, rid: str, parent: str | None, kinds: Mapping[str, str], contents: bool
    ) -> RawChange:
        import svn.core
        import svn.fs

        rev = int(rid)
        pool = svn.core.Pool(self._pool)
        try:
            root = svn.fs.revision_root(self._fs, rev, pool)
            writes: dict[str, Node] = {}
            sizes: dict[str, int] = {}
            removed: set[str] = set()
            copies: list[tuple[str, str]] = []
            if parent is None:
                for rel in self._files(root, "", pool):
                    writes[rel], sizes[rel] = self._node(root, rel, pool, contents)
            else:
                changed = svn.fs.paths_changed2(root, pool)
                for path, change in sorted(changed.items()):
                    action = change.change_kind
                    if not self._touches(_text(path), action):
                        continue
                    inside = self._inside(_text(path))
                    if inside is None:  # an ancestor's node: the tree anew
                        inside, action = "", SVN_REPLACE
                    rel = inside
                    if action in (SVN_DELETE, SVN_REPLACE):
                        removed |= {f for f in kinds if _under(f, rel)}
                    if action == SVN_DELETE:
                        continue
                    below = list(self._files(root, rel, pool))
                    if action == SVN_MODIFY and below != [rel]:
                        continue  # a directory's own properties: nothing a replay carries
                    unchanged = action == SVN_MODIFY and not change.text_mod
                    for f in below:
                        node, size = self._node(root, f, pool, contents)
                        if unchanged and kinds.get(f) == node.kind:
                            continue  # a property other than a kind's changed
                        writes[f], sizes[f] = node, size
                    source = change.copyfrom_path if change.copyfrom_known else None
                    old = self._inside(_text(source)) if source else None
                    if old:
                        copies.append((rel, old))
            deletes = sorted(removed - set(writes))
            renames = pair_renames(  # a file's copy, or each file below a copied directory
                (
                    (f, old + f[len(new) :])
                    for new, old in copies
                    for f in writes
                    if f == new or f.startswith(new + "/")
                ),
                deletes,
            )
            props = self._props(rev)
            author = props.get(b"svn:author", b"").decode(errors="replace")
            author = re.sub(r"[<>\s]+", " ", author).strip() or "unknown"
            email = author.replace(" ", "_")
            date = props.get(b"svn:date")
            when = svn.core.svn_time_from_cstring(date) // 1_000_000 if date else 0
            return RawChange(
                writes,
                deletes,
                renames,
                props.get(b"svn:log", b"").decode(errors="replace"),
                f"{author} <{email}@{self.uuid}>",
                int(when),
                sizes,
            )
        finally:
            pool.destroy()


def read_svn(spec: HistorySpec, repo: Path, inner: str) -> SvnHistory:
    import svn.core
    import svn.fs
    import svn.repos

    where = f"payload {spec.name}"
    pool = svn.core.Pool()
    try:
        fs = svn.repos.fs(svn.repos.open(str(repo), pool))
    except svn.core.SubversionException as exc:
        pool.destroy()
        raise VcsbenchError(
            f"{where}: {repo} cannot be opened as a Subversion repository ({exc})"
        ) from None
    youngest = svn.fs.youngest_rev(fs, pool)
    if spec.start == "HEAD":
        start = youngest
    elif spec.start.isdigit() and int(spec.start) <= youngest:
        start = int(spec.start)
    else:
        pool.destroy()
        raise VcsbenchError(
            f"{where}: from={spec.start!r} is not a revision of {repo}; give a number from 1 "
            f"to {youngest} (or leave from= out for the youngest)"
        )
    history = SvnHistory(spec, [], None, _fs=fs, _pool=pool, inner=inner)
    history.uuid = svn.fs.get_uuid(fs, pool).decode()
    tip = svn.fs.revision_root(fs, start, pool)
    if svn.fs.check_path(tip, inner, pool) == svn.core.svn_node_none:
        pool.destroy()
        raise VcsbenchError(
            f"{where}: /{inner} is not in r{start} of {repo}; give a path of its tree"
        )
    wanted = (spec.commits or DEFAULT_COMMITS) + 1
    chain: list[str] = []
    rev = start
    while len(chain) < wanted and rev > 0:
        sub = svn.core.Pool(pool)
        changed = svn.fs.paths_changed2(svn.fs.revision_root(fs, rev, sub), sub)
        if any(history._touches(_text(path), c.change_kind) for path, c in changed.items()):
            chain.append(str(rev))
        sub.destroy()
        rev -= 1
    check_length(
        spec, len(chain), wanted, f"revisions of /{inner} up to r{start} before the newest"
    )
    ids = chain[::-1]
    history.replayed, history.next_commit = ids[:-1], ids[-1]
    return history
