"""Subversion through the pysvn client over ``file://``.

The repository is made by ``svnadmin create``; the first commit imports into the empty
repository, later ones check out (or update) a working copy in the scratch space, add
and modify files there and check in, as a desktop client would.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from vcsbench.backends._svn import SvnBackend, svn_tool_versions
from vcsbench.backends.files import Files, file_url, write_tree
from vcsbench.backends.tools import Availability, tool_availability


class SvnPysvn(SvnBackend):
    name = "svn-pysvn"
    libraries = ("pysvn",)
    apt_packages = ("python3-svn", "subversion")
    description = "`svnadmin create`; pysvn over `file://` (import, or checkout + add + checkin)"
    capabilities = frozenset({"create", "commit", "checkout", "update", "log", "status", "diff"})

    def check_options(self) -> None:
        super().check_options()
        self._client: Any = None

    def ready(self, temp_root: Path) -> None:
        super().ready(temp_root)
        self._client_for()

    def close(self) -> None:
        super().close()
        self._client = None

    @classmethod
    def available(cls) -> Availability:
        try:
            import pysvn
        except ImportError as exc:
            return Availability(
                False,
                f"pysvn cannot be imported ({exc}); apt install python3-svn and use a venv "
                "made from /usr/bin/python3 with --system-site-packages (the PyPI 'pysvn' "
                "is an unrelated package)",
            )
        if not hasattr(pysvn, "Client"):
            return Availability(False, "the imported 'pysvn' is not the Subversion client")
        return tool_availability("svnadmin")

    def versions(self) -> dict[str, str]:
        import pysvn

        return {
            "pysvn": ".".join(str(part) for part in pysvn.version[:3]),
            "libsvn (pysvn)": ".".join(str(part) for part in pysvn.svn_version[:3]),
            **svn_tool_versions(),
        }

    def _client_for(self) -> Any:
        import pysvn

        if self._client is None:
            self._client = pysvn.Client(self.config_dir())
        return self._client

    def commit(self, path: Path, files: Files, message: str, scratch: Path) -> None:
        import pysvn

        client = self._client_for()
        url = file_url(path)
        head = client.info2(url, recurse=False)[0][1].rev.number
        if head == 0:
            staging = scratch / "import"
            write_tree(staging, files)
            try:
                client.import_(str(staging), url, message)
            finally:
                shutil.rmtree(staging)
            return
        wc = scratch / "wc"
        if wc.exists():
            client.update(str(wc))
        else:
            client.checkout(url, str(wc))
        write_tree(wc, files)
        client.add(str(wc), depth=pysvn.depth.infinity, force=True)
        client.checkin([str(wc)], message)

    def checkout(self, path: Path, target: Path, scratch: Path) -> None:
        self._client_for().checkout(file_url(path), str(target))

    def update(self, wc: Path, scratch: Path) -> None:
        self._client_for().update(str(wc))

    def _head(self, url: str) -> int:
        return int(self._client_for().info2(url, recurse=False)[0][1].rev.number)

    def log(self, path: Path) -> list[str]:
        import pysvn

        first = pysvn.Revision(pysvn.opt_revision_kind.number, 1)
        entries = self._client_for().log(file_url(path), revision_end=first)
        return [entry.message for entry in entries]

    def status(self, wc: Path) -> dict[str, str]:
        import pysvn

        kinds = pysvn.wc_status_kind
        codes = {kinds.modified: "M", kinds.unversioned: "?", kinds.added: "A", kinds.deleted: "D"}
        changes: dict[str, str] = {}
        for entry in self._client_for().status(str(wc), get_all=False):
            rel = Path(entry.path).relative_to(wc).as_posix()
            changes[rel] = codes.get(entry.text_status, str(entry.text_status))
        return changes

    def diff(self, path: Path, scratch: Path) -> bytes:
        import pysvn

        url = file_url(path)
        head = self._head(url)
        number = pysvn.opt_revision_kind.number
        text = self._client_for().diff(
            str(scratch),
            url,
            revision1=pysvn.Revision(number, head - 1),
            url_or_path2=url,
            revision2=pysvn.Revision(number, head),
        )
        return text.encode("utf-8", "surrogateescape") if isinstance(text, str) else bytes(text)
