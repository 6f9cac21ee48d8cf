"""What both Mercurial access paths share: the command line run plainly (no hgrc read,
``HGPLAIN``), the readers each uses to verify the other's work (the command line's
archive, Mercurial's API in-process), and the backend base."""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import os
import sys
import tempfile
import warnings
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

from vcsbench.backends.base import Backend
from vcsbench.backends.tools import run_tool
from vcsbench.backends.versions import ENV_BARE


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


def hg(
    *args: str | Path,
    cwd: Path | None = None,
    tool: tuple[str, ...] = ("hg",),
    extra: Mapping[str, str] | None = None,
) -> bytes:
    """``tool``: another hg than the PATH's -- a release's environment's, which starts as a
    plain environment's would (without vcsbench's installation: ``ENV_BARE``); ``extra``:
    more of the environment (a remote's configuration, ``HGRCPATH``)."""
    env = hg_env() if tool == ("hg",) else {**hg_env(), ENV_BARE: "1"}
    return run_tool([*tool, *(str(a) for a in args)], cwd=cwd, env={**env, **(extra or {})})


def environment_hg() -> tuple[str, ...] | None:
    """The ``hg`` of a Mercurial installed into this interpreter's own environment (a
    ``version=`` variant's; or one pip put into the virtualenv vcsbench runs in, which
    hg-lib imports too), run by this interpreter (the script's own first line names the
    directory the environment was built in, before it was renamed into place); None where
    Mercurial comes from elsewhere (the system's, as the README's install has it)."""
    try:
        where = Path(str(importlib.metadata.distribution("mercurial").locate_file(""))).resolve()
    except importlib.metadata.PackageNotFoundError:
        return None
    script = Path(sys.prefix) / "bin" / "hg"
    inside = sys.prefix != sys.base_prefix and where.is_relative_to(Path(sys.prefix).resolve())
    return (sys.executable, str(script)) if inside and script.is_file() else None


def archive_tip(
    path: Path, target: Path, tool: tuple[str, ...] = ("hg",), rev: str = "tip"
) -> None:
    """``hg archive``: tip's files (or ``rev``'s) into new directory ``target``, without a
    repository and without the ``.hg_archival.txt`` it would add."""
    hg(
        "archive",
        "-R",
        path,
        "-r",
        rev,
        "-t",
        "files",
        "--config",
        "ui.archivemeta=false",
        target,
        tool=tool,
    )


def read_with_hg_cli(path: Path, paths: list[str]) -> dict[str, bytes | None]:
    """Contents of ``paths`` at tip, from one ``hg archive -r tip`` into a temporary
    directory (outside the sandbox; removed afterwards)."""
    if not paths:
        return {}
    with tempfile.TemporaryDirectory(prefix="vcsbench-hg-verify-") as tmp:
        out = Path(tmp) / "tip"
        archive_tip(path, out)
        return {rel: _content(out / rel) for rel in paths}


def _content(path: Path) -> bytes | None:
    """A file's bytes, a symlink's target (never followed), None when there is neither."""
    if path.is_symlink():
        return os.fsencode(os.readlink(path))
    return path.read_bytes() if path.is_file() else None


def tree_with_hg_archive(path: Path, revision: int) -> dict[str, tuple[str, str]]:
    """Revision ``revision`` (1: the first, Mercurial's 0) from ``hg archive`` into a
    temporary directory: each file's kind (a symlink, the executable bit) and SHA-256."""
    with tempfile.TemporaryDirectory(prefix="vcsbench-hg-tree-") as tmp:
        out = Path(tmp) / "rev"
        archive_tip(path, out, rev=str(revision - 1))
        tree: dict[str, tuple[str, str]] = {}
        for directory, subdirs, names in os.walk(out):
            # a symlink to a directory is listed with the directories, never followed
            links = [d for d in subdirs if os.path.islink(os.path.join(directory, d))]
            for name in [*names, *links]:
                local = Path(directory, name)
                rel = local.relative_to(out).as_posix()
                if local.is_symlink():
                    data, kind = os.fsencode(os.readlink(local)), "link"
                else:
                    data = local.read_bytes()
                    kind = "exec" if local.stat().st_mode & 0o100 else "file"
                tree[rel] = (kind, hashlib.sha256(data).hexdigest())
        return tree


class HgBackend(Backend):
    """What both Mercurial access paths share."""

    vcs = "hg"
    apt_packages = ("mercurial",)
    acts_on: ClassVar[Mapping[str, str]] = {
        ".hgsub": "Mercurial reads it as subrepositories and fetches them"
    }
    capabilities = frozenset(
        {"create", "commit", "checkout", "clone", "update", "log", "status", "diff"}
    )
    option_defaults: ClassVar[dict[str, str]] = {}

    def durability(self) -> str:
        return "no fsync (Mercurial never calls fsync)"

    def kept_by(self) -> str:
        return "as written: Mercurial has no maintenance that rewrites its revlogs"

    def head_file(self, path: Path) -> Path:
        return path / ".hg" / "store" / "00changelog.i"

    @staticmethod
    def checkout_ignores() -> frozenset[str]:
        return frozenset({".hg"})

    def revision_id(self, path: Path, revision: int) -> str:
        return str(revision - 1)  # Mercurial counts from 0


USER = b"vcsbench <vcsbench@localhost>"
MODULES = ("hg", "ui", "context", "node", "patch", "mdiff", "exchange", "util")


def hgapi(name: str) -> Any:
    """``mercurial.<name>``, imported once with Mercurial's own DeprecationWarning (its
    use of ``imp`` on Python 3.11) silenced, so that no timed call imports anything."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        module: ModuleType = importlib.import_module(f"mercurial.{name}")
    return module


def _ui() -> Any:
    """A ui that reads no hgrc (ui.ui(), not ui.load()), with a fixed user."""
    ui = hgapi("ui").ui()
    ui.setconfig(b"ui", b"username", USER, b"vcsbench")
    ui.setconfig(b"ui", b"quiet", b"true", b"vcsbench")
    return ui


def _repo(path: Path) -> Any:
    return hgapi("hg").repository(_ui(), os.fsencode(path))


def read_with_mercurial(path: Path, paths: list[str]) -> dict[str, bytes | None]:
    """Contents of ``paths`` at tip, read by Mercurial's API in-process."""
    if not paths:
        return {}
    tip = _repo(path)[b"tip"]
    contents: dict[str, bytes | None] = {}
    for rel in paths:
        name = os.fsencode(rel)
        contents[rel] = tip[name].data() if name in tip else None
    return contents


def tree_with_mercurial(path: Path, revision: int) -> dict[str, tuple[str, str]]:
    """Revision ``revision`` (1: the first, Mercurial's 0) read by Mercurial's API
    in-process: each file's kind (its manifest flag) and SHA-256."""
    ctx = _repo(path)[revision - 1]
    tree: dict[str, tuple[str, str]] = {}
    for name in ctx.manifest():
        fctx = ctx[name]
        flags = fctx.flags()
        kind = "link" if b"l" in flags else "exec" if b"x" in flags else "file"
        tree[os.fsdecode(name)] = (kind, hashlib.sha256(fctx.data()).hexdigest())
    return tree


def changesets(path: Path) -> int:
    """How many changesets the repository holds, read by Mercurial's API in-process."""
    return len(_repo(path))
