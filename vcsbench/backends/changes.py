"""A revision as a change to a tree, for replaying a real history into a backend
(``Backend.replay``): files added or modified (regular, executable, or a symlink), files
deleted, files renamed, and the directories that appear and disappear with them, with the
commit's own message and author.

A tree here is what every VCS records alike: a file's path, its kind and its bytes (a
symlink's bytes are its target). Directories are not content: they exist where files are
(git and Mercurial record no directory; a Subversion backend makes and removes them as a
change's ``new_dirs`` and ``gone_dirs`` say).
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

KINDS = ("file", "exec", "link")
"""A regular file, an executable one, a symlink (its data the target)."""

GIT_MODES = {"file": 0o100644, "exec": 0o100755, "link": 0o120000}
"""The git tree entry mode of each kind."""
GIT_KINDS = {mode: kind for kind, mode in GIT_MODES.items()}
"""A git tree entry's mode -> its kind (a gitlink, 160000, is none: not content)."""


def content_digest(data: bytes) -> str:
    """A file's content as a :data:`DigestTree` holds it: its SHA-256, in hex."""
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Node:
    kind: str
    data: bytes

    def __post_init__(self) -> None:
        assert self.kind in KINDS, self.kind

    @property
    def sha256(self) -> str:
        return content_digest(self.data)


Tree = Mapping[str, Node]
"""Relative POSIX path -> what is there (files only; see the module's text)."""

DigestTree = Mapping[str, tuple[str, str]]
"""Relative POSIX path -> (kind, SHA-256 of the data): a tree as the verifiers compare it."""


@dataclass(frozen=True)
class Change:
    """What one revision changes, applied to the tree before it: ``deletes`` removed
    first, then ``writes`` written (a rename's new path among them, with its content)."""

    writes: Mapping[str, Node]
    deletes: tuple[str, ...]
    renames: Mapping[str, str]
    """New path -> old path: the old path is in ``deletes``, the new one in ``writes``."""
    message: str
    author: str
    """``Name <email>``."""
    when: int
    """The author's time, seconds since the epoch."""
    source_id: str
    """The revision this change was read from (a git commit id)."""
    previous: Mapping[str, str] = field(default_factory=dict)
    """The kind each written path had before (absent: it is new), for the backends that
    record a kind as a property that must be removed (Subversion's svn:executable)."""
    new_dirs: tuple[str, ...] = ()
    """Directories the change brings into being, parents first."""
    gone_dirs: tuple[str, ...] = ()
    """The topmost directories that hold no file after the change."""

    @property
    def author_name(self) -> str:
        return self.author.partition(" <")[0].strip() or "unknown"

    @property
    def author_email(self) -> str:
        _, _, rest = self.author.partition("<")
        return rest.rstrip(">").strip()

    def deletes_outside_gone_dirs(self) -> list[str]:
        """The deleted files that a removal of a gone directory does not remove already."""
        return [
            rel for rel in self.deletes if not any(rel.startswith(d + "/") for d in self.gone_dirs)
        ]

    def kind_before(self, rel: str) -> str | None:
        """The kind the node at written path ``rel`` has before its content is written:
        a rename's source's (a copy keeps it), None for a path deleted first or new."""
        if rel in self.renames:
            return self.previous.get(rel)
        if rel in self.deletes:
            return None
        return self.previous.get(rel)


def digest_tree(tree: Tree) -> dict[str, tuple[str, str]]:
    return {rel: (node.kind, node.sha256) for rel, node in tree.items()}


def tree_differences(expected: DigestTree, actual: DigestTree, limit: int = 5) -> list[str]:
    """Each path whose kind or content differs, and each file one tree has and the other
    does not (at most ``limit`` named, then a count)."""
    problems: list[str] = []
    for rel in sorted(set(expected) | set(actual)):
        want, got = expected.get(rel), actual.get(rel)
        if got is None:
            problems.append(f"{rel}: missing")
        elif want is None:
            problems.append(f"{rel}: not in the source's tree")
        elif want[0] != got[0]:
            problems.append(f"{rel}: a {got[0]}, the source has a {want[0]}")
        elif want[1] != got[1]:
            problems.append(f"{rel}: content differs")
    if len(problems) > limit:
        return [*problems[:limit], f"... and {len(problems) - limit} more"]
    return problems


def _real_dir(root: str, rel_dir: str) -> str:
    """``root/rel_dir``, made as needed, never through a symlink: a replayed history's
    symlink is written as a link and nothing is ever written through one."""
    path = root
    for part in rel_dir.split("/") if rel_dir else []:
        path = os.path.join(path, part)
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            os.mkdir(path)
            continue
        if not stat.S_ISDIR(st.st_mode):
            raise OSError(f"{path} is not a directory (the change would write through it)")
    return path


def apply_to_work_tree(root: Path, change: Change) -> None:
    """Write ``change`` into the work tree at ``root``: deleted files removed (and the
    directories they leave empty), written files made with their kind's mode, symlinks as
    links."""
    base = str(root)
    for rel in change.deletes:
        path = os.path.join(base, rel)
        if os.path.lexists(path):
            os.unlink(path)
        parent = os.path.dirname(rel)
        while parent:
            try:
                os.rmdir(os.path.join(base, parent))
            except OSError:
                break
            parent = os.path.dirname(parent)
    for rel, node in change.writes.items():
        directory, _, name = rel.rpartition("/")
        path = os.path.join(_real_dir(base, directory), name)
        if os.path.lexists(path):
            os.unlink(path)
        if node.kind == "link":
            os.symlink(node.data, path)
            continue
        mode = 0o755 if node.kind == "exec" else 0o644
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
        try:
            view = memoryview(node.data)
            while view:
                view = view[os.write(fd, view) :]
            os.fchmod(fd, mode)  # whatever the umask
        finally:
            os.close(fd)
