"""vcsbench's own reader of a git repository's loose objects (zlib, each object's SHA-1
recomputed; no git code at all): the verifier of writes that leave objects loose, and
``head_oid``, which reads the ref files without a process."""

from __future__ import annotations

import hashlib
import os
import re
import zlib
from pathlib import Path

from vcsbench.backends.files import read_file


def git_dir_of(path: Path) -> Path:
    """The git directory of a bare repository or of a clone with a work tree."""
    dot_git = f"{path}/.git"
    return Path(dot_git) if os.path.isdir(dot_git) else path


class NotLoose(LookupError):
    """An object is not a loose file (it is packed): another reader must read it."""


def _loose(objects: Path, oid: str, kind: bytes) -> bytes:
    """The body of loose object ``oid``, its type and size checked and its SHA-1 recomputed
    from the file, so a garbled or misnamed object is noticed."""
    if not re.fullmatch(r"[0-9a-f]{40}", oid):
        raise ValueError(f"{oid[:60]!r} is not an object id")
    try:
        raw = zlib.decompress(read_file(f"{objects}/{oid[:2]}/{oid[2:]}"))
    except FileNotFoundError:
        raise NotLoose(oid) from None
    if hashlib.sha1(raw).hexdigest() != oid:
        raise ValueError(f"object {oid} does not hash to its name")
    header, _, body = raw.partition(b"\0")
    got, _, size = header.partition(b" ")
    if got != kind or int(size) != len(body):
        raise ValueError(
            f"object {oid} is a {got.decode()} of {size.decode()} bytes, not a {kind.decode()}"
        )
    return body


def _tree_entries(body: bytes) -> dict[bytes, tuple[bytes, str]]:
    """name -> (mode, object id) of a tree object's body."""
    entries: dict[bytes, tuple[bytes, str]] = {}
    pos = 0
    while pos < len(body):
        space = body.index(b" ", pos)
        nul = body.index(b"\0", space)
        entries[body[space + 1 : nul]] = (body[pos:space], body[nul + 1 : nul + 21].hex())
        pos = nul + 21
    return entries


def head_oid(git_dir: Path) -> str | None:
    """The commit HEAD names, through its branch (a loose ref or packed-refs); None while
    the branch has no commit."""
    head = read_file(f"{git_dir}/HEAD").decode()
    if not head.startswith("ref: "):
        return head.strip()
    ref = head[5:].strip()
    if not ref.startswith("refs/") or ".." in ref:
        raise ValueError(f"HEAD names {ref!r}, not a branch")
    try:
        return read_file(f"{git_dir}/{ref}").decode().strip()
    except FileNotFoundError:
        pass
    packed = git_dir / "packed-refs"
    if packed.exists():
        for line in packed.read_text().splitlines():
            oid, _, name = line.partition(" ")
            if name == ref:
                return oid
    return None


def read_loose_objects(repo: Path, paths: list[str]) -> dict[str, bytes | None]:
    """Contents of ``paths`` at HEAD, read by vcsbench itself from the loose object files
    (zlib, each one's SHA-1 recomputed): no git code at all. Raises :class:`NotLoose` where
    an object is packed."""
    git_dir = git_dir_of(repo)
    objects = git_dir / "objects"
    commit = head_oid(git_dir)
    if commit is None:
        return dict.fromkeys(paths)
    first_line = _loose(objects, commit, b"commit").split(b"\n", 1)[0]
    if not first_line.startswith(b"tree "):
        raise ValueError(f"commit {commit} names no tree")
    root = first_line[5:].decode()
    trees: dict[str, dict[bytes, tuple[bytes, str]]] = {}

    def tree(oid: str) -> dict[bytes, tuple[bytes, str]]:
        if oid not in trees:
            trees[oid] = _tree_entries(_loose(objects, oid, b"tree"))
        return trees[oid]

    contents: dict[str, bytes | None] = {}
    for rel in paths:
        node: tuple[bytes, str] | None = (b"40000", root)
        for part in rel.encode().split(b"/"):
            if node is None or node[0] != b"40000":
                node = None
                break
            node = tree(node[1]).get(part)
        if node is None or node[0] not in (b"100644", b"100755", b"120000"):  # a link: its target
            contents[rel] = None
        else:
            contents[rel] = _loose(objects, node[1], b"blob")
    return contents
