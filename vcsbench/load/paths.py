"""Access paths: how a load's clients reach the repositories, each parsed once into an
:class:`AccessPath` that travels as an object (and as its JSON to the load engine)."""

from __future__ import annotations

from dataclasses import dataclass

from vcsbench.backends import VARIANT_KEYS, Variant
from vcsbench.errors import VcsbenchError
from vcsbench.servers.transports import TRANSPORTS, Transport

LOCAL_VCS = ("svn", "git")
"""The VCSs whose backends a ``local:`` path runs in a client process of its own."""


@dataclass(frozen=True)
class AccessPath:
    """How clients reach the repositories: a server vcsbench starts (a transport, by its
    name), or a backend in a process of each client's own (``local:BACKEND``)."""

    name: str
    vcs: str
    backend: str = ""
    """A local path's vcsbench backend; "" for a server's."""

    @property
    def local(self) -> bool:
        return bool(self.backend)

    @property
    def transport(self) -> Transport | None:
        """The server's transport; None for a local path."""
        return None if self.local else TRANSPORTS[self.name]

    @property
    def served_as_apache(self) -> bool:
        return self.transport is not None and self.transport.server == "apache"

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "vcs": self.vcs, "backend": self.backend}

    @classmethod
    def from_json(cls, data: dict[str, str]) -> AccessPath:
        return cls(**data)


def parse_path(text: str) -> AccessPath:
    """One access path, checked: its server installed, or its backend available."""
    if text in TRANSPORTS:
        found = TRANSPORTS[text]
        found.require()
        return AccessPath(text, found.vcs)
    if text.startswith("local:"):
        name = text.split(":", 1)[1]
        try:
            variant = Variant.parse(name)
        except VcsbenchError as exc:
            raise VcsbenchError(f"access path {text!r}: {exc}") from None
        cls = variant.cls
        if cls.vcs not in LOCAL_VCS:
            raise VcsbenchError(f"access path {text!r}: only svn and git backends are offered")
        theirs = sorted(key for key, _ in variant.options if key in VARIANT_KEYS)
        if theirs:
            raise VcsbenchError(
                f"access path {text!r}: {theirs[0]}= is a benchmark's variant key; a load's "
                "local path takes the backend's own options (e.g. local:git-pygit2[fsync=true])"
            )
        availability = cls.available()
        if not availability.ok:
            raise VcsbenchError(f"access path {text!r}: {availability.reason}")
        try:
            variant.make()  # its options checked here, not in each client's process
        except VcsbenchError as exc:
            raise VcsbenchError(f"access path {text!r}: {exc}") from None
        return AccessPath(text, cls.vcs, backend=variant.text)
    raise VcsbenchError(
        f"access path {text!r} is not known; use {', '.join(TRANSPORTS)} or local:BACKEND "
        "(local:svn-fs, local:git-pygit2)"
    )
