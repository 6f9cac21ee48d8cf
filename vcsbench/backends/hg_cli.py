"""Mercurial through its command line: ``hg init``, ``hg commit --addremove`` in the
repository's own working directory.

Every call is a subprocess without a shell, with no hgrc read (``HGRCPATH`` empty) and
``HGPLAIN`` set, so a user's configuration and extensions cannot change what runs.
File arguments are given as ``path:`` patterns, so names are never read as globs.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import ClassVar

from vcsbench.backends._hg import (
    HgBackend,
    archive_tip,
    environment_hg,
    hg,
    read_with_hg_cli,
    tree_with_hg_archive,
)
from vcsbench.backends.base import COMMIT_TIME
from vcsbench.backends.changes import Change, DigestTree, apply_to_work_tree
from vcsbench.backends.files import Files, verify_with, write_tree
from vcsbench.backends.reach import REMOTE_OPTIONS
from vcsbench.backends.tools import Availability, tool_availability, tool_version

DATED = f"{COMMIT_TIME} 0"
"""Every commit's date (``hg commit -d``): the same in every run."""


def flips(change: Change) -> list[str]:
    """The deleted paths a written path passes through or lies under: a file or link
    that became a directory (``x`` → ``x/y``), or a directory's file whose directory
    became a file (``d/y`` → ``d``)."""
    written = set(change.writes)
    prefixes = {rel[:i] for rel in written for i, c in enumerate(rel) if c == "/"}
    return [
        rel
        for rel in change.deletes
        if rel in prefixes or any(rel[:i] in written for i, c in enumerate(rel) if c == "/")
    ]


class HgCli(HgBackend):
    name = "hg-cli"
    description = (
        "`hg init` / `hg commit --addremove` subprocesses in the repository's working directory"
    )
    verifier = (
        "Mercurial's Python API (in-process); for a `version=` variant the machine's "
        "`hg archive -r tip`"
    )
    pypi = "mercurial"
    option_defaults: ClassVar[dict[str, str]] = dict(REMOTE_OPTIONS)
    capabilities = HgBackend.capabilities | {"publish", "replay", "revisions"}
    remote_calls = frozenset({"clone", "update", "publish"})

    def check_options(self) -> None:
        # version=X: the hg of X's environment runs every command; the rounds are still
        # read back by the machine's Mercurial, as every other variant's are.
        self._own = environment_hg()
        self._tool = self._own or ("hg",)

    @classmethod
    def available(cls) -> Availability:
        return tool_availability("hg")

    def versions(self) -> dict[str, str]:
        found = {"hg": tool_version([*self._tool, "--version", "--quiet"])}
        if self._own:
            found["hg (verifier)"] = tool_version(["hg", "--version", "--quiet"])
        return found

    def _hg(self, *args: str | Path, cwd: Path | None = None, remote: bool = False) -> bytes:
        """An hg command; ``remote``: one that may reach the remote variant's server."""
        extra = self.client_env({}) if remote else None
        return hg(*args, cwd=cwd, tool=self._tool, extra=extra)

    def create(self, path: Path) -> None:
        self._hg("init", path)

    def commit(self, path: Path, files: Files, message: str, scratch: Path) -> None:
        write_tree(path, files)
        patterns = [f"path:{rel}" for rel in sorted(files)]
        self._hg("commit", "--addremove", "-d", DATED, "-m", message, "--", *patterns, cwd=path)

    def replay(self, path: Path, change: Change, scratch: Path) -> None:
        """The change written into the working directory; ``hg mv --after`` for each
        rename (Mercurial records the copy), ``hg add`` of each new file by name (one the
        tree's own ``.hgignore`` names too), then ``hg commit --addremove`` with the
        source's author and date (an empty change too: ``ui.allowemptycommit``). A path
        that turns from a file (or link) into a directory, or back, is first recorded
        removed (``hg remove --after``): the add would otherwise clash with it in the
        dirstate."""
        apply_to_work_tree(path, change)
        flipped = flips(change)
        if flipped:
            names = scratch / "vcsbench-hg-removed"
            names.write_bytes(b"".join(os.fsencode(rel) + b"\0" for rel in flipped))
            self._hg("remove", "--after", f"listfile0:{names}", cwd=path)
            names.unlink()
        for new, old in change.renames.items():
            self._hg("mv", "--after", "--", old, new, cwd=path)
        added = [rel for rel in change.writes if rel not in change.previous]
        if added:  # named, so a file the tree's own .hgignore names is added all the same
            names = scratch / "vcsbench-hg-added"
            names.write_bytes(b"".join(os.fsencode(rel) + b"\0" for rel in added))
            self._hg("add", f"listfile0:{names}", cwd=path)
            names.unlink()
        self._hg(
            "commit", "--addremove", "--config", "ui.allowemptycommit=True",
            "-u", change.author, "-d", f"{change.when} 0", "-m", change.message, cwd=path,
        )  # fmt: skip

    def tree(self, path: Path, revision: int) -> DigestTree:
        if self._own:
            return tree_with_hg_archive(path, revision)
        from vcsbench.backends._hg import tree_with_mercurial

        return tree_with_mercurial(path, revision)

    def verify(self, path: Path, files: Files) -> list[str]:
        if self._own:
            return verify_with(read_with_hg_cli, path, files)
        from vcsbench.backends._hg import read_with_mercurial

        return verify_with(read_with_mercurial, path, files)

    def checkout(self, path: Path, target: Path, scratch: Path) -> None:
        """``hg archive``: tip's files into a new directory, without a repository."""
        archive_tip(path, target, self._tool)

    def clone(self, path: Path, target: Path, scratch: Path) -> None:
        self._hg("clone", "-q", self.source(path), target, remote=True)

    def checkout_at(self, path: Path, target: Path, scratch: Path, revision: str) -> None:
        archive_tip(path, target, self._tool, rev=revision)

    def working_copy_at(self, path: Path, target: Path, scratch: Path, revision: str) -> None:
        """``hg clone -r REV``: the changesets up to it, pulled, not copied."""
        self._hg("clone", "-q", "-r", revision, self.source(path), target, remote=True)

    def diff_between(self, path: Path, old: str, new: str, scratch: Path) -> bytes:
        return self._hg("diff", "-R", path, "-r", old, "-r", new)

    def update(self, wc: Path, scratch: Path) -> None:
        self._hg("pull", "-q", "-u", cwd=wc, remote=True)

    def publish(self, wc: Path, files: Files, message: str, scratch: Path) -> None:
        write_tree(wc, files)
        patterns = [f"path:{rel}" for rel in sorted(files)]
        self._hg("commit", "--addremove", "-d", DATED, "-m", message, "--", *patterns, cwd=wc)
        self._hg("push", "-q", cwd=wc, remote=True)

    def log(self, path: Path) -> list[str]:
        return self.log_messages(self.log_output(path))

    def log_output(self, path: Path) -> bytes:
        return self._hg("log", "-R", path, "-T", "{desc}\\0")

    def log_messages(self, output: bytes) -> list[str]:
        return [entry.decode() for entry in output.split(b"\0") if entry]

    def status(self, wc: Path) -> dict[str, str]:
        codes = {"R": "D", "!": "D"}
        out = self._hg("status", cwd=wc).decode()
        return {line[2:]: codes.get(line[0], line[0]) for line in out.splitlines() if line}

    def diff(self, path: Path, scratch: Path) -> bytes:
        return self._hg("diff", "--git", "-R", path, "-c", "tip")
