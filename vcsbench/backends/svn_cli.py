"""Subversion through its command line: ``svnadmin create``, commits by ``svnmucc``.

A commit lists HEAD's tree with ``svnlook tree`` to know which directories exist, then
makes one revision with a single ``svnmucc`` of ``mkdir`` and ``put`` actions. The files
``put`` reads are staged in the scratch space and removed afterwards.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar
from urllib.parse import quote
from xml.etree import ElementTree

from vcsbench.backends._svn import (
    SVN_OPTION_DEFAULTS,
    SvnBackend,
    parents_of,
    prop_edits,
    svn_text,
    svn_tool_versions,
)
from vcsbench.backends.changes import Change
from vcsbench.backends.files import Files, file_url, write_tree
from vcsbench.backends.reach import REMOTE_OPTIONS, Remote
from vcsbench.backends.tools import (
    Availability,
    run_tool,
    tool_availability,
    tool_version,
    tools_in,
)
from vcsbench.errors import VcsbenchError

TOOLS = ("svnadmin", "svnlook", "svnmucc", "svn")


def _relative_url(rel: str) -> str:
    """A path below svnmucc's root URL, percent-encoded: '%', '#', '@' (a peg revision to
    svn), spaces and non-ASCII names reach the repository as they are."""
    return quote(rel, safe="/")


class SvnCli(SvnBackend):
    name = "svn-cli"
    apt_packages = ("subversion",)
    description = "`svnadmin create`; `svnlook tree` + one `svnmucc` of mkdir/put actions"
    capabilities = frozenset(
        {
            "create", "commit", "checkout", "update", "log", "status", "diff", "gc", "publish",
            "replay", "revisions", "log-verbose",
        }
    )  # fmt: skip
    remote_calls = frozenset({"checkout", "update", "publish"})
    place_options: ClassVar[frozenset[str]] = frozenset({"bin"})
    option_defaults: ClassVar[Mapping[str, str]] = {
        **SVN_OPTION_DEFAULTS,
        "bin": "",
        "seed-pack": "",
        **REMOTE_OPTIONS,
    }

    def check_options(self) -> None:
        super().check_options()
        # bin=DIR: another release's tools (or a build's) make and change the repositories;
        # the verifier still reads them with the machine's Subversion.
        self._tool = tools_in(self.options["bin"], TOOLS, "an install's bin/")
        self.svnadmin = self._tool["svnadmin"]
        if self.options["seed-pack"] not in ("", "full"):
            raise VcsbenchError(
                f"option seed-pack={self.options['seed-pack']!r} is not known; use full "
                "(svnadmin pack on the repository rounds start from) or leave it out"
            )

    def seeded(self, path: Path) -> None:
        """``seed-pack=full``: every full shard of the repository rounds start from packed
        (``svnadmin pack``)."""
        if self.options["seed-pack"] == "full":
            run_tool([self._tool["svnadmin"], "pack", "-q", str(path)])

    @classmethod
    def available(cls) -> Availability:
        return tool_availability(*TOOLS)

    def versions(self) -> dict[str, str]:
        return {
            **svn_tool_versions(self._tool["svnadmin"], self._tool["svn"]),
            "svnmucc": tool_version([self._tool["svnmucc"], "--version"]),
            **({"svn from": self.options["bin"]} if self.options["bin"] else {}),
        }

    def _client_args(self) -> list[str]:
        return ["--non-interactive", "--config-dir", self.config_dir()]

    def commit(self, path: Path, files: Files, message: str, scratch: Path) -> None:
        listing = run_tool([self._tool["svnlook"], "tree", "--full-paths", str(path)]).decode()
        existing = {line.rstrip("/") for line in listing.splitlines()}
        actions: list[str] = []
        for directory in parents_of(list(files)):
            if directory not in existing:
                actions += ["mkdir", _relative_url(directory)]
        staging = scratch / "stage"
        write_tree(staging, files)
        try:
            for rel in sorted(files):
                actions += ["put", str(staging / rel), _relative_url(rel)]
            # "--" ends the options, so a name starting with "-" is not read as one.
            run_tool(
                [
                    self._tool["svnmucc"],
                    *self._client_args(),
                    "-m",
                    message,
                    "-U",
                    file_url(path),
                    "--",
                    *actions,
                ]
            )
        finally:
            shutil.rmtree(staging)

    def replay(self, path: Path, change: Change, scratch: Path) -> None:
        """One ``svnmucc``: ``rm`` of gone directories and deleted files, ``mkdir`` of new
        directories, ``cp`` from the parent revision for a rename (Subversion's record of
        a move), ``put`` of every written file, ``propset``/``propdel`` of svn:executable
        and svn:special as each file's kind is; the source's author as ``--username``."""
        actions: list[str] = []
        for rel in [*change.gone_dirs, *change.deletes_outside_gone_dirs()]:
            actions += ["rm", _relative_url(rel)]
        for directory in change.new_dirs:
            actions += ["mkdir", _relative_url(directory)]
        for new, old in change.renames.items():
            actions += ["cp", "HEAD", _relative_url(old), _relative_url(new)]
        staging = scratch / "stage"
        staging.mkdir(parents=True, exist_ok=True)
        try:
            for index, (rel, node) in enumerate(change.writes.items()):
                staged = staging / str(index)
                staged.write_bytes(svn_text(node))
                actions += ["put", str(staged), _relative_url(rel)]
                for name, value in prop_edits(change, rel):
                    if value is None:
                        actions += ["propdel", name, _relative_url(rel)]
                    else:
                        actions += ["propset", name, value.decode(), _relative_url(rel)]
            if not actions:  # svnmucc makes no revision of nothing: a property of the root
                actions = ["propset", "vcsbench:empty", "", ""]
            run_tool(
                [
                    self._tool["svnmucc"], *self._client_args(),
                    "--username", change.author_name, "-m", change.message,
                    "-U", file_url(path), "--", *actions,
                ]
            )  # fmt: skip
        finally:
            shutil.rmtree(staging)

    def source(self, path: Path) -> str:
        return self.remote.url(path) if self.remote is not None else file_url(path)

    def reach(self, remote: Remote) -> None:
        super().reach(remote)
        if remote.ca_file is not None:  # the client's configuration: that certificate alone
            Path(self.config_dir(), "servers").write_text(
                f"[global]\nssl-authority-files = {remote.ca_file}\nssl-trust-default-ca = no\n"
            )

    def checkout(self, path: Path, target: Path, scratch: Path) -> None:
        run_tool(
            [self._tool["svn"], "checkout", "-q", *self._client_args(), self.source(path),
             str(target)],
            env=self.client_env(os.environ),
        )  # fmt: skip

    def revision_id(self, path: Path, revision: int) -> str:
        return str(revision)  # r0 is the empty one before the first

    def checkout_at(self, path: Path, target: Path, scratch: Path, revision: str) -> None:
        run_tool(
            [self._tool["svn"], "checkout", "-q", "-r", revision, *self._client_args(),
             self.source(path), str(target)],
            env=self.client_env(os.environ),
        )  # fmt: skip

    def working_copy_at(self, path: Path, target: Path, scratch: Path, revision: str) -> None:
        self.checkout_at(path, target, scratch, revision)

    def diff_between(self, path: Path, old: str, new: str, scratch: Path) -> bytes:
        """``svn diff -r OLD:NEW URL``, a copied file shown whole (as an addition), not
        against its source."""
        return run_tool(
            [self._tool["svn"], "diff", "--show-copies-as-adds", "-r", f"{old}:{new}",
             *self._client_args(), self.source(path)],
            env=self.client_env(os.environ),
        )  # fmt: skip

    def update(self, wc: Path, scratch: Path) -> None:
        run_tool(
            [self._tool["svn"], "update", "-q", *self._client_args(), str(wc)],
            env=self.client_env(os.environ),
        )

    def publish(self, wc: Path, files: Files, message: str, scratch: Path) -> None:
        new = [rel for rel in files if not (wc / rel).exists()]
        write_tree(wc, files)
        svn = self._tool["svn"]
        if new:  # their new directories with them (--parents)
            run_tool([svn, "add", "-q", "--parents", *self._client_args(), "--", *new], cwd=wc)
        run_tool(
            [svn, "commit", "-q", *self._client_args(), "-m", message],
            cwd=wc,
            env=self.client_env(os.environ),
        )

    def log(self, path: Path) -> list[str]:
        return self.log_messages(self.log_output(path))

    def log_output(self, path: Path) -> bytes:
        argv = [self._tool["svn"], "log", "--xml", "-r", "HEAD:1", *self._client_args(),
                file_url(path)]  # fmt: skip
        return run_tool(argv)

    def log_messages(self, output: bytes) -> list[str]:
        return [entry.findtext("msg") or "" for entry in ElementTree.fromstring(output)]

    def log_verbose(self, path: Path) -> bytes:
        return run_tool(
            [self._tool["svn"], "log", "-v", "--xml", "-r", "HEAD:1", *self._client_args(),
             file_url(path)]
        )  # fmt: skip

    def status(self, wc: Path) -> dict[str, str]:
        # Relative paths when run inside the working copy; the path starts in column 8.
        out = run_tool([self._tool["svn"], "status", *self._client_args()], cwd=wc).decode()
        return {line[8:]: line[0] for line in out.splitlines() if line[:1].strip()}

    def diff(self, path: Path, scratch: Path) -> bytes:
        """``svnlook diff``: the newest revision against its parent, read on the server
        (``svn diff -c`` needs the revision number, which would cost a second process)."""
        return run_tool([self._tool["svnlook"], "diff", str(path)])

    def gc(self, path: Path) -> None:
        run_tool([self._tool["svnadmin"], "pack", "-q", str(path)])
