"""How much of a history source may be read, checked before it is read.

A source is data from anywhere: a few megabytes of git objects can name a 2 GiB file
(a sparse one compresses to almost nothing), a tree nested ten thousand deep, a tree whose
subtrees all name one subtree (a million files from a hundred objects), or a symlink whose
target leaves the tree once another link of the tree is followed. Every limit here is
checked from what names a file (a path, an object's header, a file's length), before its
bytes are read, and without recursion, so a refusal is one line whatever the source holds:

- a file at most ``MAX_FILE_BYTES``; every replayed tree at most ``TREE_MAX_FILES`` files
  and ``TREE_MAX_BYTES`` bytes (a ``tree:`` payload's limits) -- :class:`Tally`;
- a path at most ``MAX_DEPTH`` directories deep and ``MAX_PATH_BYTES`` long, each name
  in it at most ``MAX_NAME_BYTES`` -- :func:`check_shape`;
- every symlink's target inside the tree once the tree's own links are followed, as the
  kernel follows them -- :func:`check_links`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from vcsbench.errors import VcsbenchError
from vcsbench.workload.payloads import MAX_DEPTH, TREE_MAX_BYTES, TREE_MAX_FILES

MAX_FILE_BYTES = 256 << 20
MAX_PATH_BYTES = 4095
"""A path's length in bytes, relative to the repository: Linux's PATH_MAX less its NUL."""
MAX_NAME_BYTES = 255
"""One name's length in bytes (a path's component): NAME_MAX of every filesystem under
test; a longer one fails every write with ENAMETOOLONG."""
MAX_HOPS = 40
"""Links followed resolving one target: Linux's own limit (then ELOOP)."""


def check_size(where: str, rel: str, size: int) -> None:
    """Refuse a file too large to replay, before its bytes are read."""
    if size > MAX_FILE_BYTES:
        raise VcsbenchError(
            f"{where}: {rel} is {size:,} bytes, more than the {MAX_FILE_BYTES >> 20} MiB a "
            "replayed file may be"
        )


def check_shape(where: str, rel: str) -> None:
    """Refuse a path deeper or longer than any filesystem under test takes."""
    depth = rel.count("/")
    if depth > MAX_DEPTH:
        raise VcsbenchError(
            f"{where}: {rel[:60]}... lies {depth:,} directories deep, more than the "
            f"{MAX_DEPTH} a replayed path may"
        )
    for name in rel.split("/"):
        size = len(name.encode(errors="surrogateescape"))
        if size > MAX_NAME_BYTES:
            raise VcsbenchError(
                f"{where}: the name {name[:40]}... in {rel[:60]!r} is {size:,} bytes, more "
                f"than the {MAX_NAME_BYTES} a file name may be on the filesystems under test"
            )
    if len(rel.encode(errors="surrogateescape")) > MAX_PATH_BYTES:
        raise VcsbenchError(
            f"{where}: {rel[:60]}... is {len(rel.encode(errors='surrogateescape')):,} bytes "
            f"long, more than the {MAX_PATH_BYTES:,} a path may be"
        )


@dataclass
class Tally:
    """The files of the tree being replayed and their sizes, kept as each commit applies:
    a commit that makes the tree larger than a payload may be is refused before any of
    its bytes are read."""

    sizes: dict[str, int] = field(default_factory=dict)
    total: int = 0

    def apply(self, where: str, deletes: Iterable[str], sizes: Mapping[str, int]) -> None:
        for rel in deletes:
            self.total -= self.sizes.pop(rel, 0)
        for rel, size in sizes.items():
            check_size(where, rel, size)
            self.total += size - self.sizes.get(rel, 0)
            self.sizes[rel] = size
        if len(self.sizes) > TREE_MAX_FILES or self.total > TREE_MAX_BYTES:
            raise VcsbenchError(
                f"{where}: makes a tree of {len(self.sizes):,} files and {self.total:,} bytes, "
                f"more than a replayed tree may be ({TREE_MAX_FILES:,} files, "
                f"{TREE_MAX_BYTES >> 30} GiB); give a range before it (from=REV)"
            )


def _outside(where: str, rel: str, target: bytes, why: str) -> VcsbenchError:
    return VcsbenchError(
        f"{where}: symlink {rel} points outside the tree ({target.decode(errors='replace')!r}"
        f"{why}); vcsbench replays symlinks whose target stays inside the repository only"
    )


def resolve_link(rel: str, links: Mapping[str, bytes], where: str) -> None:
    """Follow link ``rel``'s target as the kernel would, through the tree's other links
    (``links``: path -> target), and refuse it when it leaves the tree or does not end
    within ``MAX_HOPS`` links. A component that is no link is taken as a directory (what
    the kernel would refuse is refused or let be, never let out)."""
    target = links[rel]
    if not target or target.startswith(b"/"):
        raise _outside(where, rel, target, "")
    here = rel.split("/")[:-1]
    todo = target.decode(errors="surrogateescape").split("/")
    todo.reverse()  # a stack: the next component last
    hops = 0
    while todo:
        part = todo.pop()
        if part in ("", "."):
            continue
        if part == "..":
            if not here:
                via = f", through {hops} other link(s) of the tree" if hops else ""
                raise _outside(where, rel, target, via)
            here.pop()
            continue
        path = "/".join([*here, part])
        through = links.get(path)
        if through is None:
            here.append(part)
            continue
        hops += 1
        if hops > MAX_HOPS or not through or through.startswith(b"/"):
            why = f", not resolved within {MAX_HOPS} links" if hops > MAX_HOPS else ""
            raise _outside(where, rel, target, why or f", through {path}")
        followed = through.decode(errors="surrogateescape").split("/")
        todo.extend(reversed(followed))  # resolved from the followed link's directory


def check_links(links: Mapping[str, bytes], where: str) -> None:
    """Every link of a tree resolved (:func:`resolve_link`)."""
    for rel in links:
        resolve_link(rel, links, where)
