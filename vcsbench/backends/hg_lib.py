"""Mercurial through its own Python API in-process: ``memctx`` commits, no working copy.

This is how Mercurial servers and hosting products write (Kallithea, RhodeCode's
vcsserver, Heptapod import ``mercurial`` and commit in memory): the changeset is built
from file contents and written to the store; the working directory stays at the null
revision. python-hglib, the other Python route, drives an ``hg`` command server in a
child process: the command line by another door, which ``hg-cli`` already measures.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from vcsbench.backends._hg import (
    MODULES,
    USER,
    HgBackend,
    _repo,
    _ui,
    hgapi,
    read_with_hg_cli,
    tree_with_hg_archive,
)
from vcsbench.backends.base import COMMIT_TIME
from vcsbench.backends.changes import Change, DigestTree
from vcsbench.backends.files import Files, verify_with
from vcsbench.backends.tools import Availability, tool_version


class HgLib(HgBackend):
    name = "hg-lib"
    description = "Mercurial's Python API in-process: `memctx` commits, no working copy"
    verifier = "`hg archive -r tip` (the command line)"
    pypi = "mercurial"
    capabilities = HgBackend.capabilities | {"replay", "revisions"}

    def check_options(self) -> None:
        for name in MODULES:
            hgapi(name)

    @classmethod
    def available(cls) -> Availability:
        try:
            hgapi("hg")
        except ImportError as exc:
            return Availability(
                False,
                f"mercurial cannot be imported ({exc}); apt install mercurial and use a venv "
                "made from /usr/bin/python3 with --system-site-packages",
            )
        return Availability(True)

    def versions(self) -> dict[str, str]:
        return {
            "mercurial (API)": hgapi("util").version().decode(),
            "hg (verifier)": tool_version(["hg", "--version", "--quiet"]),
        }

    def create(self, path: Path) -> None:
        hgapi("hg").repository(_ui(), os.fsencode(path), create=True)

    def commit(self, path: Path, files: Files, message: str, scratch: Path) -> None:
        context = hgapi("context")
        repo = _repo(path)
        contents = {os.fsencode(rel): data for rel, data in files.items()}

        def filectx(repo: Any, memctx: Any, name: bytes) -> Any:
            return context.memfilectx(repo, memctx, name, contents[name])

        parents = (repo[b"tip"].node(), hgapi("node").nullid)
        ctx = context.memctx(
            repo, parents, message.encode(), sorted(contents), filectx, user=USER,
            date=f"{COMMIT_TIME} 0".encode(),
        )  # fmt: skip
        ctx.commit()

    def verify(self, path: Path, files: Files) -> list[str]:
        return verify_with(read_with_hg_cli, path, files)

    def replay(self, path: Path, change: Change, scratch: Path) -> None:
        """One ``memctx``: written files with their link and exec flags, a rename's new
        file with its copy source, deleted files as removed; the source's author and
        date."""
        context = hgapi("context")
        repo = _repo(path)
        writes = {os.fsencode(rel): node for rel, node in change.writes.items()}
        sources = {os.fsencode(new): os.fsencode(old) for new, old in change.renames.items()}

        def filectx(repo: Any, memctx: Any, name: bytes) -> Any:
            node = writes.get(name)
            if node is None:
                return None  # removed
            return context.memfilectx(
                repo, memctx, name, node.data, islink=node.kind == "link",
                isexec=node.kind == "exec", copysource=sources.get(name),
            )  # fmt: skip

        names = sorted(set(writes) | {os.fsencode(rel) for rel in change.deletes})
        parents = (repo[b"tip"].node(), hgapi("node").nullid)
        ctx = context.memctx(
            repo, parents, change.message.encode(), names, filectx,
            user=change.author.encode(), date=f"{change.when} 0".encode(),
        )  # fmt: skip
        ctx.commit()

    def tree(self, path: Path, revision: int) -> DigestTree:
        return tree_with_hg_archive(path, revision)

    def checkout(self, path: Path, target: Path, scratch: Path) -> None:
        """Export tip's files through the API (the repository has no working copy)."""
        self.checkout_at(path, target, scratch, "tip")

    def checkout_at(self, path: Path, target: Path, scratch: Path, revision: str) -> None:
        """Export ``revision``'s files through the API, each file's contents as stored (a
        symlink as a file holding its target, no executable bit)."""
        ctx = _repo(path)[int(revision) if revision.isdigit() else os.fsencode(revision)]
        target.mkdir()
        for name in ctx.manifest():
            local = target / os.fsdecode(name)
            local.parent.mkdir(parents=True, exist_ok=True)
            local.write_bytes(ctx[name].data())

    def clone(self, path: Path, target: Path, scratch: Path) -> None:
        hgapi("hg").clone(_ui(), {}, os.fsencode(path), os.fsencode(target))

    def working_copy_at(self, path: Path, target: Path, scratch: Path, revision: str) -> None:
        """A clone of the changesets up to ``revision`` (pulled, not copied)."""
        revs = [os.fsencode(revision)]
        hgapi("hg").clone(_ui(), {}, os.fsencode(path), os.fsencode(target), revs=revs)

    def update(self, wc: Path, scratch: Path) -> None:
        """Pull from the clone's default path, then update (``hg pull -u``)."""
        hg = hgapi("hg")
        repo = _repo(wc)
        source = repo.ui.config(b"paths", b"default")
        hgapi("exchange").pull(repo, hg.peer(repo.ui, {}, source))
        hg.update(repo, repo[b"tip"].node())

    def log(self, path: Path) -> list[str]:
        repo = _repo(path)
        return [repo[rev].description().decode() for rev in range(len(repo) - 1, -1, -1)]

    def status(self, wc: Path) -> dict[str, str]:
        st = _repo(wc).status(unknown=True)
        changes: dict[str, str] = {}
        for names, code in (
            (st.modified, "M"),
            (st.added, "A"),
            (st.removed, "D"),
            (st.deleted, "D"),
            (st.unknown, "?"),
        ):
            changes.update({os.fsdecode(name): code for name in names})
        return changes

    def diff(self, path: Path, scratch: Path) -> bytes:
        repo = _repo(path)
        tip = repo[b"tip"]
        opts = hgapi("mdiff").diffopts(git=True)
        chunks = hgapi("patch").diff(repo, tip.p1().node(), tip.node(), opts=opts)
        return b"".join(chunks)

    def diff_between(self, path: Path, old: str, new: str, scratch: Path) -> bytes:
        """As ``hg diff -r OLD -r NEW`` (no git format: no renames), through the API."""
        repo = _repo(path)
        opts = hgapi("mdiff").diffopts()
        nodes = repo[int(old)].node(), repo[int(new)].node()
        return b"".join(hgapi("patch").diff(repo, *nodes, opts=opts))
