"""How a remote variant reaches its repositories (``remote=TRANSPORT``): where the server
the harness started serves them, as plain data a worker process receives as JSON, and
the options a backend that offers it lists."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Remote:
    """Where a remote variant's repositories are served (``remote=TRANSPORT``): a server
    the harness started over the directory ``root``, the URL of a repository below it,
    and what the client needs to reach and trust it. Plain data, so that a worker
    process receives it as JSON."""

    transport: str
    root: str
    url_base: str
    env: Mapping[str, str]
    """The client's environment additions (an ssh command, a certificate to trust)."""
    ca_file: str | None = None

    def url(self, path: Path) -> str:
        """The URL of the repository at ``path`` (below ``root``)."""
        from urllib.parse import quote

        rel = Path(os.path.abspath(path)).relative_to(self.root).as_posix()
        return f"{self.url_base}/{quote(rel)}"

    def to_json(self) -> dict[str, object]:
        return {
            "transport": self.transport,
            "root": self.root,
            "url_base": self.url_base,
            "env": dict(self.env),
            "ca_file": self.ca_file,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Remote:
        env = data["env"]
        assert isinstance(env, dict)
        return cls(
            str(data["transport"]),
            str(data["root"]),
            str(data["url_base"]),
            {str(k): str(v) for k, v in env.items()},
            None if data.get("ca_file") is None else str(data["ca_file"]),
        )


REMOTE_OPTIONS = {"remote": "", "rtt": ""}
"""The options of a backend that can reach its repositories through a server:
``remote=TRANSPORT`` (``git-ssh``, ``apache-svn-https``, ...: the harness starts it) and
``rtt=MS``, a round trip between the client and that server."""
