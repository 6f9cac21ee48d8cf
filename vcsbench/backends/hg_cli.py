"""Mercurial through its command line: ``hg init``, ``hg commit --addremove`` in the
repository's own working directory.

Every call is a subprocess without a shell, with no hgrc read (``HGRCPATH`` empty) and
``HGPLAIN`` set, so a user's configuration and extensions cannot change what runs.
File arguments are given as ``path:`` patterns, so names are never read as globs.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import ClassVar

from vcsbench.backends.base import (
    Availability,
    Backend,
    Files,
    run_tool,
    tool_availability,
    tool_version,
    verify_with,
    write_tree,
)


def hg_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "HGRCPATH": "",
            "HGPLAIN": "1",
            "HGUSER": "vcsbench <vcsbench@localhost>",
            "HGENCODING": "utf-8",
            "LC_ALL": "C",
        }
    )
    return env


def hg(*args: str | Path, cwd: Path | None = None) -> bytes:
    return run_tool(["hg", *(str(a) for a in args)], cwd=cwd, env=hg_env())


def archive_tip(path: Path, target: Path) -> None:
    """``hg archive``: tip's files into new directory ``target``, without a repository
    and without the ``.hg_archival.txt`` it would add."""
    hg(
        "archive",
        "-R",
        path,
        "-r",
        "tip",
        "-t",
        "files",
        "--config",
        "ui.archivemeta=false",
        target,
    )


def read_with_hg_cli(path: Path, paths: list[str]) -> dict[str, bytes | None]:
    """Contents of ``paths`` at tip, from one ``hg archive -r tip`` into a temporary
    directory (outside the sandbox; removed afterwards)."""
    if not paths:
        return {}
    with tempfile.TemporaryDirectory(prefix="vcsbench-hg-verify-") as tmp:
        out = Path(tmp) / "tip"
        archive_tip(path, out)
        return {rel: (out / rel).read_bytes() if (out / rel).is_file() else None for rel in paths}


class HgBackend(Backend):
    """What both Mercurial access paths share."""

    vcs = "hg"
    apt_packages = ("mercurial",)
    capabilities = frozenset(
        {"create", "commit", "checkout", "clone", "update", "log", "status", "diff"}
    )
    option_defaults: ClassVar[dict[str, str]] = {}

    def durability(self) -> str:
        return "no fsync (Mercurial never calls fsync)"

    def head_file(self, path: Path) -> Path:
        return path / ".hg" / "store" / "00changelog.i"

    @staticmethod
    def checkout_ignores() -> frozenset[str]:
        return frozenset({".hg"})


class HgCli(HgBackend):
    name = "hg-cli"
    description = (
        "`hg init` / `hg commit --addremove` subprocesses in the repository's working directory"
    )
    verifier = "Mercurial's Python API (in-process)"

    @classmethod
    def available(cls) -> Availability:
        return tool_availability("hg")

    def versions(self) -> dict[str, str]:
        return {"hg": tool_version(["hg", "--version", "--quiet"])}

    def create(self, path: Path) -> None:
        hg("init", path)

    def commit(self, path: Path, files: Files, message: str, scratch: Path) -> None:
        write_tree(path, files)
        patterns = [f"path:{rel}" for rel in sorted(files)]
        hg("commit", "--addremove", "-m", message, "--", *patterns, cwd=path)

    def verify(self, path: Path, files: Files) -> list[str]:
        from vcsbench.backends.hg_lib import read_with_mercurial

        return verify_with(read_with_mercurial, path, files)

    def checkout(self, path: Path, target: Path, scratch: Path) -> None:
        """``hg archive``: tip's files into a new directory, without a repository."""
        archive_tip(path, target)

    def clone(self, path: Path, target: Path, scratch: Path) -> None:
        hg("clone", "-q", path, target)

    def update(self, wc: Path, scratch: Path) -> None:
        hg("pull", "-q", "-u", cwd=wc)

    def log(self, path: Path) -> list[str]:
        out = hg("log", "-R", path, "-T", "{desc}\\0")
        return [entry.decode() for entry in out.split(b"\0") if entry]

    def status(self, wc: Path) -> dict[str, str]:
        codes = {"R": "D", "!": "D"}
        out = hg("status", cwd=wc).decode()
        return {line[2:]: codes.get(line[0], line[0]) for line in out.splitlines() if line}

    def diff(self, path: Path, scratch: Path) -> bytes:
        return hg("diff", "--git", "-R", path, "-c", "tip")
