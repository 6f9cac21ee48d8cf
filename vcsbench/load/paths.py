"""Access paths: how a load's clients reach the repositories, each parsed once into an
:class:`AccessPath` that travels as an object (and as its JSON to the load engine)."""

from __future__ import annotations

from dataclasses import dataclass

from vcsbench.backends import backend_class
from vcsbench.errors import VcsbenchError
from vcsbench.load import servers


@dataclass(frozen=True)
class AccessPath:
    """How clients reach the repositories: a server vcsbench starts, or a backend in a
    process of each client's own (``local:BACKEND``)."""

    name: str
    vcs: str
    server: str = ""
    """The server that serves it (svnserve, git-daemon, apache); "" for a local path."""
    backend: str = ""
    """A local path's vcsbench backend."""
    url_path: str = ""
    """Apache: the location the path's repositories are served at (svn, git)."""

    @property
    def local(self) -> bool:
        return not self.server

    @property
    def served_as_apache(self) -> bool:
        return self.server == "apache"

    def to_json(self) -> dict[str, str]:
        return {
            "name": self.name,
            "vcs": self.vcs,
            "server": self.server,
            "backend": self.backend,
            "url_path": self.url_path,
        }

    @classmethod
    def from_json(cls, data: dict[str, str]) -> AccessPath:
        return cls(**data)


SERVER_PATHS = {
    path.name: path
    for path in (
        AccessPath("svnserve", "svn", server="svnserve"),
        AccessPath("git-daemon", "git", server="git-daemon"),
        AccessPath("apache-svn", "svn", server="apache", url_path="svn"),
        AccessPath("apache-git", "git", server="apache", url_path="git"),
    )
}
"""Access paths through a server vcsbench starts."""


def parse_path(text: str) -> AccessPath:
    """One access path, checked: its server installed, or its backend available."""
    if text in SERVER_PATHS:
        servers.require_binary(text)
        return SERVER_PATHS[text]
    if text.startswith("local:"):
        name = text.split(":", 1)[1]
        try:
            cls = backend_class(name)
        except VcsbenchError as exc:
            raise VcsbenchError(f"access path {text!r}: {exc}") from None
        if cls.vcs not in ("svn", "git"):
            raise VcsbenchError(f"access path {text!r}: only svn and git backends are offered")
        availability = cls.available()
        if not availability.ok:
            raise VcsbenchError(f"access path {text!r}: {availability.reason}")
        return AccessPath(text, cls.vcs, backend=name)
    raise VcsbenchError(
        f"access path {text!r} is not known; use {', '.join(SERVER_PATHS)} or local:BACKEND "
        "(local:svn-fs, local:git-pygit2)"
    )
