"""VCS access paths, all behind :class:`vcsbench.backends.base.Backend`.

``REGISTRY`` is the one place a backend is registered; everything else -- the suite,
the tests, ``vcsbench doctor``, the bootstrap and the README's table -- reads it.
A *variant* is a backend with options, named ``NAME[key=value,...]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from vcsbench.backends.base import Availability, Backend, Files, ToolError, split_variant
from vcsbench.backends.git_cli import GitCli
from vcsbench.backends.git_markus import GitMarkus
from vcsbench.backends.git_pygit2 import GitPygit2
from vcsbench.backends.hg_cli import HgCli
from vcsbench.backends.hg_lib import HgLib
from vcsbench.backends.svn_cli import SvnCli
from vcsbench.backends.svn_fs import SvnFs
from vcsbench.backends.svn_pysvn import SvnPysvn
from vcsbench.errors import VcsbenchError

REGISTRY: dict[str, type[Backend]] = {
    cls.name: cls for cls in (GitPygit2, GitCli, GitMarkus, SvnFs, SvnPysvn, SvnCli, HgLib, HgCli)
}


def backend_class(name: str) -> type[Backend]:
    try:
        return REGISTRY[name]
    except KeyError:
        raise VcsbenchError(f"unknown backend {name!r}; known: {', '.join(REGISTRY)}") from None


def make_backend(name: str, options: Mapping[str, str] | None = None) -> Backend:
    """An instance of backend or variant ``name`` (plus ``options``), or a one-line error."""
    return Variant.parse(name).make(options)


@dataclass(frozen=True)
class Variant:
    """A backend variant, named once (``svn-fs[fs-type=fsx]``) and carried as this object
    from the selection to the benchmark: its class and options are parsed here, and its
    availability is asked once (a backend's check may run a command)."""

    text: str
    cls: type[Backend]
    options: tuple[tuple[str, str], ...] = ()

    @classmethod
    def parse(cls, text: str) -> Variant:
        """One line naming the known backends if ``text`` names none."""
        base, options = split_variant(text)
        if base not in REGISTRY:
            raise VcsbenchError(
                f"unknown backend {base!r}; known: {', '.join(REGISTRY)} (or all); a "
                "variant is NAME[key=value,...]"
            )
        return cls(text.strip(), REGISTRY[base], tuple(options.items()))

    @property
    def name(self) -> str:
        """The backend's name, without options."""
        return self.cls.name

    @cached_property
    def availability(self) -> Availability:
        return self.cls.available()

    def make(self, options: Mapping[str, str] | None = None) -> Backend:
        """An instance, with ``options`` (``--backend-option``) over the variant's own."""
        availability = self.availability
        if not availability.ok:
            raise VcsbenchError(f"backend {self.name} is not available here: {availability.reason}")
        return self.cls({**dict(self.options), **(options or {})})

    def __str__(self) -> str:
        return self.text


def apt_packages() -> list[str]:
    """Every Debian package a registered backend needs, once each."""
    return sorted({pkg for cls in REGISTRY.values() for pkg in cls.apt_packages})


def markdown_table() -> str:
    """The README's backend table, from the registry."""
    lines = ["| name | VCS | access path | verified by |", "|---|---|---|---|"]
    for cls in REGISTRY.values():
        lines.append(f"| `{cls.name}` | {cls.vcs} | {cls.description} | {cls.verifier} |")
    return "\n".join(lines)


__all__ = [
    "REGISTRY",
    "Availability",
    "Backend",
    "Files",
    "ToolError",
    "Variant",
    "apt_packages",
    "backend_class",
    "make_backend",
    "markdown_table",
    "split_variant",
]
