"""VCS access paths, all behind :class:`vcsbench.backends.base.Backend`.

``REGISTRY`` is the one place a backend is registered; everything else -- the suite,
the tests, ``vcsbench doctor``, the bootstrap and the README's table -- reads it.
A *variant* is a backend with options, named ``NAME[key=value,...]``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from vcsbench.backends.base import Backend
from vcsbench.backends.files import Files
from vcsbench.backends.git_cli import GitCli
from vcsbench.backends.git_markus import GitMarkus
from vcsbench.backends.git_pygit2 import GitPygit2
from vcsbench.backends.hg_cli import HgCli
from vcsbench.backends.hg_lib import HgLib
from vcsbench.backends.svn_cli import SvnCli
from vcsbench.backends.svn_fs import SvnFs
from vcsbench.backends.svn_pysvn import SvnPysvn
from vcsbench.backends.tools import Availability, ToolError, split_variant
from vcsbench.backends.versions import check_version
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


VARIANT_KEYS = ("version", "copy", "delay", "age", "work", "syncs")
"""Keys of a variant that are vcsbench's, not the backend's options."""


PLAIN_VALUES = ("", "empty")
"""Values of a place option that name no place (``template=empty``: no sample hooks)."""


def split_list(text: str) -> list[str]:
    """Split on commas outside brackets: ``a,b[x=1,y=2]`` -> ["a", "b[x=1,y=2]"]."""
    items: list[str] = []
    depth = 0
    current = ""
    for char in text:
        if char == "," and depth == 0:
            items.append(current)
            current = ""
            continue
        depth += {"[": 1, "]": -1}.get(char, 0)
        current += char
    items.append(current)
    return [item.strip() for item in items if item.strip()]


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
        found = REGISTRY[base]
        version = options.get("version")
        if version is not None:
            if found.pypi is None:
                offered = ", ".join(
                    f"{c.name} ({c.pypi})" for c in REGISTRY.values() if c.pypi is not None
                )
                raise VcsbenchError(
                    f"{text.strip()}: {base} has no library release to choose; version= "
                    f"applies to {offered}"
                )
            check_version(found.pypi, version)
        copy = options.get("copy")
        if copy is not None and not (copy.isdigit() and int(copy) >= 2):
            raise VcsbenchError(
                f"{text.strip()}: copy={copy!r} is not a whole number >= 2 (the same variant "
                "again under another name, for an A/A test)"
            )
        delay = options.get("delay")
        if delay is not None:
            parse_delay(text.strip(), delay)
        for key, (what, most) in PLANTED.items():
            value = options.get(key)
            if value is not None and not (value.isdigit() and 0 < int(value) <= most):
                raise VcsbenchError(
                    f"{text.strip()}: {key}={value!r} is not a whole number from 1 to "
                    f"{most:,} ({what}, planted inside every timed call)"
                )
        age = options.get("age")
        if age is not None and not age.isdigit():
            raise VcsbenchError(
                f"{text.strip()}: age={age!r} is not a whole number >= 0 (this variant's "
                "sandbox filled with that many repositories instead of --age)"
            )
        return cls(text.strip(), found, tuple(options.items()))

    @property
    def name(self) -> str:
        """The backend's name, without options."""
        return self.cls.name

    @property
    def version(self) -> str | None:
        """The library release the variant runs on (``version=``), None: this one's."""
        return dict(self.options).get("version")

    @property
    def copy(self) -> str | None:
        """``copy=N``: the same variant once more under its own name (an A/A test)."""
        return dict(self.options).get("copy")

    @property
    def delay_ns(self) -> int:
        """``delay=88us``: a known wait added inside every timed call (a change of known
        size, to see what a comparison detects: a power check, as ``copy=`` is the A/A)."""
        text = dict(self.options).get("delay")
        return 0 if text is None else parse_delay(self.text, text)

    @property
    def planted(self) -> tuple[int, int]:
        """``work=N``, ``syncs=K``: known work planted in every timed call (a change of
        known size in counts: N thousand turns of a loop of 2 instructions, K fsyncs)."""
        found = dict(self.options)
        return int(found.get("work", 0)), int(found.get("syncs", 0))

    @property
    def age(self) -> int | None:
        """``age=N``: this variant's rounds among N repositories instead of the run's
        ``--age`` (``age=0`` beside a filled variant: an empty and a filled sandbox,
        interleaved); None: the run's."""
        text = dict(self.options).get("age")
        return None if text is None else int(text)

    @property
    def names_its_own(self) -> bool:
        """Whether the variant sets one of vcsbench's keys (``version=``, ``copy=``,
        ``delay=``, ``age=``): it says more than the backend's options do."""
        return any(key in VARIANT_KEYS for key, _ in self.options)

    @property
    def places(self) -> list[str]:
        """The options that name a program, a place of this machine or a release to install
        (``bin=DIR``, ``template=DIR``, ``version=``), as ``key=value``: what a result
        file's recorded selection never supplies (:meth:`Selection.from_recorded`)."""
        return [
            f"{key}={value}"
            for key, value in self.options
            if key == "version" or (key in self.cls.place_options and value not in PLAIN_VALUES)
        ]

    @property
    def backend_options(self) -> dict[str, str]:
        """The backend's own options (all but ``version`` and ``copy``)."""
        return {k: v for k, v in self.options if k not in VARIANT_KEYS}

    @property
    def plain(self) -> Variant:
        """The same variant without ``version=``: what its environment's process makes."""
        kept = ",".join(f"{k}={v}" for k, v in self.backend_options.items())
        return Variant(
            f"{self.name}[{kept}]" if kept else self.name,
            self.cls,
            tuple((k, v) for k, v in self.options if k != "version"),
        )

    @cached_property
    def availability(self) -> Availability:
        return self.cls.available()

    def make(self, options: Mapping[str, str] | None = None) -> Backend:
        """An instance, with ``options`` (``--backend-option``) over the variant's own. A
        ``version=`` variant's instance here runs on this interpreter's library: it
        prepares and names things; its measured calls run in its environment."""
        availability = self.availability
        if not availability.ok:
            raise VcsbenchError(f"backend {self.name} is not available here: {availability.reason}")
        return self.cls({**self.backend_options, **(options or {})})

    def __str__(self) -> str:
        return self.text


PLANTED = {
    "work": ("thousands of turns of a loop of 2 instructions", 100_000),
    "syncs": ("fsync calls of a scratch file", 1_000),
}
"""Variant keys that plant known work (:mod:`vcsbench.bench.planted`), and the most each may
plant: 200 million instructions (a tenth of a second a call, seconds under valgrind) and a
thousand fsyncs (seconds on a disk) -- far beyond any change worth planting, short of a run
a result file's recorded selection could make endless."""

DELAY_UNITS = {"us": 1_000, "ms": 1_000_000}


def parse_delay(variant: str, text: str) -> int:
    """``88us`` or ``0.5ms`` in nanoseconds; one line for anything else."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(us|ms)", text.strip())
    if match is None or float(match.group(1)) <= 0:
        raise VcsbenchError(
            f"{variant}: delay={text!r} is not a positive time; write it in us or ms "
            "(delay=88us, delay=0.5ms)"
        )
    return round(float(match.group(1)) * DELAY_UNITS[match.group(2)])


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
