"""VCS access paths, all behind :class:`vcsbench.backends.base.Backend`.

``REGISTRY`` is the one place a backend is registered.
"""

from __future__ import annotations

from collections.abc import Mapping

from vcsbench.backends.base import Availability, Backend, Files, ToolError
from vcsbench.backends.git_cli import GitCli
from vcsbench.backends.git_pygit2 import GitPygit2
from vcsbench.backends.svn_cli import SvnCli
from vcsbench.backends.svn_fs import SvnFs
from vcsbench.backends.svn_pysvn import SvnPysvn
from vcsbench.errors import VcsbenchError

REGISTRY: dict[str, type[Backend]] = {
    cls.name: cls for cls in (GitPygit2, GitCli, SvnFs, SvnPysvn, SvnCli)
}


def backend_class(name: str) -> type[Backend]:
    try:
        return REGISTRY[name]
    except KeyError:
        raise VcsbenchError(f"unknown backend {name!r}; known: {', '.join(REGISTRY)}") from None


def make_backend(name: str, options: Mapping[str, str] | None = None) -> Backend:
    """An instance of backend ``name`` with ``options``, or a one-line error."""
    cls = backend_class(name)
    availability = cls.available()
    if not availability.ok:
        raise VcsbenchError(f"backend {name} is not available here: {availability.reason}")
    return cls(options)


__all__ = [
    "REGISTRY",
    "Availability",
    "Backend",
    "Files",
    "ToolError",
    "backend_class",
    "make_backend",
]
