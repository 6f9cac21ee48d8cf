"""A Mercurial repository as the source of a ``history:`` payload.

SOURCE is a repository's root (with ``.hg``). The history is the first parents back from
``from=REV`` (default: ``tip``), each commit the change from its first parent's
manifest, a copy whose source it removes a rename, flags ``x`` and ``l`` the kinds. It
is read through Mercurial's own library with a ui that reads no configuration file and
with the repository's ``.hg/hgrc`` skipped (``HGRCSKIPREPO``): no extension, hook or
other setting the source names is loaded. ``from`` is a symbol (a hash, a number, a tag,
a bookmark, a branch), never a revset.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from vcsbench.backends.changes import Node
from vcsbench.errors import VcsbenchError
from vcsbench.workload.payloads import TREE_MAX_FILES
from vcsbench.workload.source import (
    DEFAULT_COMMITS,
    HistorySpec,
    RawChange,
    SourceHistory,
    check_length,
    pair_renames,
)
from vcsbench.workload.tree_bounds import check_shape, check_size

HG_KINDS = {b"": "file", b"x": "exec", b"l": "link"}


@dataclass
class HgHistory(SourceHistory):
    """A Mercurial source: first parents, read through Mercurial's library."""

    _repo: Any = None

    vcs = "hg"

    def read_tree(self, rid: str) -> dict[str, Node]:
        ctx = self._repo[rid.encode()]
        manifest = ctx.manifest()
        return {
            path.decode(): Node(HG_KINDS[manifest.flags(path)], ctx[path].data())
            for path in manifest
        }

    def raw_change(
        self, rid: str, parent: str | None, kinds: Mapping[str, str], contents: bool
    ) -> RawChange:
        ctx = self._repo[rid.encode()]
        where = f"{self.where}, commit {rid[:12]}"
        if parent is None:
            manifest = ctx.manifest()
            if len(manifest) > TREE_MAX_FILES:
                raise VcsbenchError(
                    f"{where}: holds {len(manifest):,} files, more than the "
                    f"{TREE_MAX_FILES:,} a replayed tree may"
                )
            entries = {path: (None, (b"n", flags)) for path, flags in _items(manifest)}
        else:
            entries = self._repo[parent.encode()].manifest().diff(ctx.manifest())
        if len(entries) > 2 * TREE_MAX_FILES:
            raise VcsbenchError(
                f"{where}: changes {len(entries):,} files, more than two trees of "
                f"{TREE_MAX_FILES:,} files hold"
            )
        writes: dict[str, Node] = {}
        sizes: dict[str, int] = {}
        deletes: list[str] = []
        copies: list[tuple[str, str]] = []
        for path, (_, (node, flags)) in sorted(entries.items()):
            rel = path.decode(errors="surrogateescape")
            if node is None:
                deletes.append(rel)
                continue
            if flags not in HG_KINDS:
                raise VcsbenchError(f"{where}: {rel} has flags {flags!r}, not a file's kind")
            fctx = ctx[path]
            kind = HG_KINDS[flags]
            check_shape(where, rel)
            sizes[rel] = _hg_size(fctx)
            check_size(where, rel, sizes[rel])
            writes[rel] = Node(kind, fctx.data() if contents or kind == "link" else b"")
            source = fctx.copysource() if parent is not None else None
            if source:
                copies.append((rel, source.decode(errors="surrogateescape")))
        renames = pair_renames(copies, deletes)
        seconds = ctx.date()[0]
        return RawChange(
            writes,
            deletes,
            renames,
            bytes(ctx.description()).decode(errors="replace"),
            bytes(ctx.user()).decode(errors="replace"),
            int(seconds),
            sizes,
        )


def _hg_size(fctx: Any) -> int:
    """A file's size from its filelog's index, never its data (Mercurial's own ``size()``
    reads a copied file's whole text); a copy's metadata header counts with it."""
    revlog = getattr(fctx.filelog(), "_revlog", None)
    if revlog is not None and hasattr(revlog, "rawsize"):
        return int(revlog.rawsize(fctx.filerev()))
    return int(fctx.size())


def _items(manifest: Any) -> Iterator[tuple[bytes, bytes]]:
    for path in manifest:
        yield path, manifest.flags(path)


def read_hg(spec: HistorySpec) -> HgHistory:
    where = f"payload {spec.name}"
    from vcsbench.backends._hg import hgapi

    error, hg, scmutil = hgapi("error"), hgapi("hg"), hgapi("scmutil")
    ui = hgapi("ui").ui()  # reads no configuration file
    ui.setconfig(b"ui", b"quiet", b"true", b"vcsbench")
    before = os.environb.get(b"HGRCSKIPREPO")
    os.environb[b"HGRCSKIPREPO"] = b"1"  # the source's .hg/hgrc is not read
    try:
        repo = hg.repository(ui, os.fsencode(spec.source))
    except error.Abort as exc:
        raise VcsbenchError(
            f"{where}: {spec.source} cannot be opened as a Mercurial repository "
            f"({bytes(exc.message).decode(errors='replace')})"
        ) from None
    finally:
        if before is None:
            os.environb.pop(b"HGRCSKIPREPO", None)
        else:
            os.environb[b"HGRCSKIPREPO"] = before
    start = b"tip" if spec.start == "HEAD" else spec.start.encode()
    try:
        ctx = scmutil.revsymbol(repo, start)
    except (error.RepoLookupError, error.Abort) as exc:
        raise VcsbenchError(
            f"{where}: from={spec.start!r} names no revision of {spec.source} "
            f"({bytes(getattr(exc, 'message', b'') or b'').decode(errors='replace') or exc}); "
            "give a hash, a revision number, a tag, a bookmark or a branch"
        ) from None
    wanted = (spec.commits or DEFAULT_COMMITS) + 1
    chain: list[str] = []
    while len(chain) < wanted and ctx.rev() >= 0:
        chain.append(ctx.hex().decode())
        ctx = ctx.p1()
    check_length(spec, len(chain), wanted, "commits on the first-parent line before the tip")
    ids = chain[::-1]
    return HgHistory(spec, ids[:-1], ids[-1], _repo=repo)
