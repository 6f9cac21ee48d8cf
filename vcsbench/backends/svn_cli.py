"""Subversion through its command line: ``svnadmin create``, commits by ``svnmucc``.

A commit lists HEAD's tree with ``svnlook tree`` to know which directories exist, then
makes one revision with a single ``svnmucc`` of ``mkdir`` and ``put`` actions. The files
``put`` reads are staged beside the repository and removed afterwards.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from vcsbench.backends._svn import (
    SVN_OPTION_DEFAULTS,
    ClientConfigDir,
    check_svn_options,
    parents_of,
    read_with_svnadmin_dump,
    svn_tool_versions,
    svnadmin_create_argv,
)
from vcsbench.backends.base import (
    Availability,
    Backend,
    Files,
    file_url,
    run_tool,
    tool_availability,
    tool_version,
    verify_with,
    write_tree,
)


class SvnCli(Backend):
    name = "svn-cli"
    vcs = "svn"
    option_defaults: ClassVar[Mapping[str, str]] = dict(SVN_OPTION_DEFAULTS)

    def check_options(self) -> None:
        check_svn_options(self.options)
        self._config: ClientConfigDir | None = None

    def close(self) -> None:
        if self._config is not None:
            self._config.close()
            self._config = None

    @classmethod
    def available(cls) -> Availability:
        return tool_availability("svnadmin", "svnlook", "svnmucc", "svn")

    def versions(self) -> dict[str, str]:
        return {
            **svn_tool_versions(),
            "svnmucc": tool_version(["svnmucc", "--version"]),
        }

    def _client_args(self) -> list[str]:
        if self._config is None:
            self._config = ClientConfigDir()
        return ["--non-interactive", "--config-dir", self._config.path]

    def create(self, path: Path) -> None:
        run_tool(svnadmin_create_argv(path, self.options))

    def commit(self, path: Path, files: Files, message: str) -> None:
        listing = run_tool(["svnlook", "tree", "--full-paths", str(path)]).decode()
        existing = {line.rstrip("/") for line in listing.splitlines()}
        actions: list[str] = []
        for directory in parents_of(list(files)):
            if directory not in existing:
                actions += ["mkdir", directory]
        staging = path.with_name(path.name + ".stage")
        names = sorted(files)
        write_tree(staging, files)
        try:
            for rel in names:
                actions += ["put", str(staging / rel), rel]
            run_tool(
                ["svnmucc", *self._client_args(), "-m", message, "-U", file_url(path), *actions]
            )
        finally:
            shutil.rmtree(staging)

    def verify(self, path: Path, files: Files) -> list[str]:
        return verify_with(read_with_svnadmin_dump, path, files)

    def checkout(self, path: Path, target: Path) -> None:
        run_tool(["svn", "checkout", "-q", *self._client_args(), file_url(path), str(target)])
