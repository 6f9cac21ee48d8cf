"""The selection options, defined once for both doors.

``pytest --vcs-backends ...`` and ``vcsbench run --backends ...`` are the same option:
:data:`OPTIONS` is the one table, :func:`add_options` adds it to pytest's parser (with
the ``--vcs-`` prefix) or to an argparse parser (without), and :meth:`Selection.parse`
reads either into one checked :class:`Selection`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Container
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vcsbench.backends import REGISTRY, make_backend, split_variant
from vcsbench.backends.base import parse_options
from vcsbench.bench.rounds import CACHE_STATES, VerifyPolicy
from vcsbench.errors import VcsbenchError
from vcsbench.sandbox import FsSpec, parse_fs_list, require_root
from vcsbench.sandbox.spec import DEFAULT_IMAGE_SIZE, LOOP_KINDS
from vcsbench.workload.operations import DEFAULT_OPS, LAYOUTS, OPS, operation_label, supports
from vcsbench.workload.payloads import (
    DEFAULT_PAYLOADS,
    load_payload,
    names_for_help,
    payload_names,
)

FS_SCOPES = ("benchmark", "session")
BYTES_PER_ROUND = 700
"""Memory a run holds per round of its largest benchmark at its peak: every round is
kept, and the closing summary reads the result file back (measured with do-nothing
rounds, 300,000 of them: 123 B a round while they run, 513 through finishing and
writing the benchmark, 688 reading the file back)."""
MEMORY_SHARE = 0.8


def check_memory(rounds: int) -> None:
    """Refuse, before anything runs, a benchmark whose rounds would not fit in memory
    (a filesystem without an inode count, btrfs, sets no other limit on --repos)."""
    import psutil

    needed = rounds * BYTES_PER_ROUND
    available = psutil.virtual_memory().available
    if needed > MEMORY_SHARE * available:
        raise VcsbenchError(
            f"--repos {rounds:,} would hold about {needed / 2**30:,.1f} GiB in memory "
            f"(every round is kept: about {BYTES_PER_ROUND} bytes each at the run's peak), "
            f"and this machine has {available / 2**30:,.1f} GiB available; run at most "
            f"{int(MEMORY_SHARE * available / BYTES_PER_ROUND):,} rounds per benchmark "
            "(several runs make one report: vcsbench report A.json B.json)"
        )


PROGRESS_MODES = ("auto", "bar", "lines", "none")
DEFAULT_REPOS = 100
AUTO_RECYCLE = 1000


@dataclass(frozen=True)
class OptionDef:
    name: str
    """Without prefix: ``backends`` is ``--backends`` and ``--vcs-backends``."""
    default: str | None
    help: str
    metavar: str | None = None
    repeat: bool = False

    @property
    def dest(self) -> str:
        return self.name.replace("-", "_")


OPTIONS: tuple[OptionDef, ...] = (
    OptionDef(
        "backends",
        "all",
        "comma-separated backends or variants, e.g. git-pygit2,svn-fs[fs-type=fsx] "
        f"({', '.join(REGISTRY)}; default: all)",
        "LIST",
    ),
    OptionDef(
        "ops",
        ",".join(DEFAULT_OPS),
        f"comma-separated operations: {', '.join(OPS)}, or all; options as NAME[key=value], "
        f"e.g. log[history=1000] (default: {','.join(DEFAULT_OPS)})",
        "LIST",
    ),
    OptionDef(
        "payloads",
        ",".join(DEFAULT_PAYLOADS),
        f"comma-separated payloads: {names_for_help()}, or tree:PATH "
        "(a directory of your own) "
        f"(default: {','.join(DEFAULT_PAYLOADS)})",
        "LIST",
    ),
    OptionDef(
        "fs",
        None,
        "sandboxes, comma-separated: tmpfs[:size=2G], ext4|xfs|btrfs[:size=8G,mkfs=...,"
        "mount=...], dir:PATH[,device=shared] (default: tmpfs as root, else dir:$TMPDIR)",
        "SPECS",
    ),
    OptionDef(
        "repos",
        str(DEFAULT_REPOS),
        f"rounds per benchmark, a fresh repository each (default {DEFAULT_REPOS})",
        "N",
    ),
    OptionDef(
        "cache", "warm", "warm (default) or cold: sync + drop_caches before each round (root)"
    ),
    OptionDef(
        "verify", "all", "verify every repository (all, default) or K evenly spaced (sample:K)"
    ),
    OptionDef("image-dir", None, "where loop images go (default: a temporary directory)", "DIR"),
    OptionDef(
        "fs-scope",
        "benchmark",
        "benchmark (a fresh sandbox each, default) or session (one per filesystem)",
    ),
    OptionDef(
        "backend-option",
        None,
        "option for every variant of a backend, repeatable, e.g. git-cli:core.fsync=all",
        "BACKEND:KEY=VALUE",
        repeat=True,
    ),
    OptionDef(
        "age",
        "0",
        "fill each sandbox with N repositories of the backend under test before the "
        "measured rounds, untimed (default 0): what the next one costs when N exist",
        "N",
    ),
    OptionDef(
        "layout",
        "flat",
        "where repositories go: flat (one directory, default) or hashed "
        "(repos/@hashed/ab/cd/<sha256>, as large hosts spread them)",
    ),
    OptionDef(
        "recycle",
        "auto",
        "rounds per worker process: each K rounds run in a fresh forked process, the one "
        "measured, so memory a library keeps cannot pile up; 0: every round in one process; "
        f"auto (default): {AUTO_RECYCLE:,} when a benchmark has more rounds than that, else 0",
        "K",
    ),
    OptionDef(
        "progress",
        "auto",
        "auto (a bar on a terminal, plain lines otherwise), bar, lines or none",
    ),
)


def add_options(
    add: Callable[..., Any],
    prefix: str = "",
    *,
    defaults: dict[str, str | None] | None = None,
    exclude: Container[str] = (),
) -> None:
    """Add every selection option through ``add`` (pytest's ``addoption`` or argparse's
    ``add_argument``), named ``--{prefix}{name}``."""
    for option in OPTIONS:
        if option.name in exclude:
            continue
        default = (defaults or {}).get(option.name, option.default)
        help_text = option.help
        if defaults and option.name in defaults:
            shown = "each study's, listed below" if default is None else default
            help_text = f"{help_text.split(' (default')[0]} (default here: {shown})"
        kwargs: dict[str, Any] = {"dest": f"{prefix.replace('-', '_')}{option.dest}"}
        if option.repeat:
            kwargs.update(action="append", default=[])
        else:
            kwargs["default"] = default
        if option.metavar:
            kwargs["metavar"] = option.metavar
        add(f"--{prefix}{option.name}", help=help_text.replace("%", "%%"), **kwargs)


def check_image_room(specs: list[FsSpec], image_dir: Path | None, fs_scope: str) -> None:
    """Refuse loop images that the disk under them has no room for, before anything runs.

    Images are sparse, but a benchmark may fill them: each needs its size free. One at a
    time with a sandbox per benchmark; all at once with one per session.
    """
    sizes = [s.size_bytes or DEFAULT_IMAGE_SIZE for s in specs if s.kind in LOOP_KINDS]
    if not sizes:
        return
    needed = sum(sizes) if fs_scope == "session" else max(sizes)
    where = image_dir or Path(tempfile.gettempdir())
    free = shutil.disk_usage(where).free
    if needed > free:
        raise VcsbenchError(
            f"the loop images need up to {needed / 2**30:,.1f} GiB and {where} has "
            f"{free / 2**30:,.1f} GiB free; give --image-dir on a disk with room, or a "
            "smaller size=... in --fs"
        )


def default_fs() -> str:
    """tmpfs as root; otherwise a directory under the temp dir (sandboxes need root)."""
    return "tmpfs" if os.geteuid() == 0 else f"dir:{tempfile.gettempdir()}"


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


def _operations(text: str) -> list[str]:
    """Operation labels, options checked (``log[history=10]``); ``all``: every operation."""
    names = split_list(text)
    if names == ["all"]:
        return list(OPS)
    if not names:
        raise VcsbenchError(f"no operation given; known: {', '.join(OPS)}")
    labels = [operation_label(name) for name in names]
    if len(set(labels)) != len(labels):
        raise VcsbenchError(f"operations {text!r} name one operation twice")
    return labels


def _payloads(text: str) -> list[str]:
    names = split_list(text)
    if names == ["all"]:
        return payload_names()
    if not names:
        raise VcsbenchError(f"no payload given; known: {', '.join(payload_names())}")
    for name in names:
        load_payload(name)  # an unknown name or a bad tree is one line, before anything runs
    return names


def _variants(text: str) -> list[str]:
    names = split_list(text)
    if names == ["all"]:
        return list(REGISTRY)
    if not names:
        raise VcsbenchError(f"no backend given; known: {', '.join(REGISTRY)}")
    for name in names:
        base, _ = split_variant(name)
        if base not in REGISTRY:
            raise VcsbenchError(
                f"unknown backend {base!r}; known: {', '.join(REGISTRY)} (or all); "
                "a variant is NAME[key=value,...]"
            )
    if len(set(names)) != len(names):
        raise VcsbenchError(f"backends {text!r} name a variant twice")
    return names


@dataclass
class Selection:
    """What to run, parsed and checked once, for both doors (pytest and ``vcsbench run``)."""

    backends: list[str]
    """Backends and variants as given: ``svn-fs``, ``svn-fs[fs-type=fsx]``."""
    ops: list[str]
    payloads: list[str]
    fs: list[FsSpec]
    repos: int
    cache: str = "warm"
    image_dir: Path | None = None
    verify: VerifyPolicy = field(default_factory=VerifyPolicy)
    fs_scope: str = "benchmark"
    backend_options: dict[str, dict[str, str]] = field(default_factory=dict)
    progress: str = "auto"
    age: int = 0
    layout: str = "flat"
    recycle: int = 0
    given: dict[str, str | list[str]] = field(default_factory=dict)
    """The option values it was parsed from, by ``dest`` (as text): what a result file
    records, and all that ``--resume`` takes from one (:meth:`from_recorded`)."""

    @classmethod
    def parse(
        cls,
        *,
        backends: str = "all",
        ops: str = ",".join(DEFAULT_OPS),
        payloads: str = ",".join(DEFAULT_PAYLOADS),
        fs: str | None = None,
        repos: str | int = DEFAULT_REPOS,
        cache: str = "warm",
        image_dir: str | Path | None = None,
        verify: str = "all",
        fs_scope: str = "benchmark",
        backend_option: list[str] | None = None,
        progress: str = "auto",
        age: str | int = 0,
        layout: str = "flat",
        recycle: str | int = "auto",
    ) -> Selection:
        raw = {
            "backends": backends,
            "ops": ops,
            "payloads": payloads,
            "fs": fs,
            "repos": repos,
            "cache": cache,
            "image_dir": image_dir,
            "verify": verify,
            "fs_scope": fs_scope,
            "backend_option": backend_option or [],
            "progress": progress,
            "age": age,
            "layout": layout,
            "recycle": recycle,
        }
        given: dict[str, str | list[str]] = {
            dest: [str(v) for v in value] if isinstance(value, list) else str(value)
            for dest, value in raw.items()
            if value is not None
        }
        try:
            repo_count = int(repos)
        except ValueError:
            raise VcsbenchError(f"repos {repos!r} is not a whole number >= 1") from None
        if repo_count < 1:
            raise VcsbenchError(f"repos {repos!r} is not a whole number >= 1")
        check_memory(repo_count)
        if cache not in CACHE_STATES:
            raise VcsbenchError(f"cache {cache!r} is not one of {', '.join(CACHE_STATES)}")
        if cache == "cold" and os.geteuid() != 0:
            raise VcsbenchError("cache cold drops the page cache, which needs root; use warm")
        if fs_scope not in FS_SCOPES:
            raise VcsbenchError(f"fs scope {fs_scope!r} is not one of {', '.join(FS_SCOPES)}")
        if not str(age).isdigit():
            raise VcsbenchError(f"age {age!r} is not a whole number >= 0")
        if recycle == "auto":  # benchmarks of fewer rounds run in one process anyway
            recycle = AUTO_RECYCLE
        if not str(recycle).isdigit():
            raise VcsbenchError(f"recycle {recycle!r} is not auto or a whole number >= 0")
        if layout not in LAYOUTS:
            raise VcsbenchError(f"layout {layout!r} is not one of {', '.join(LAYOUTS)}")
        if progress not in PROGRESS_MODES:
            raise VcsbenchError(f"progress {progress!r} is not one of {', '.join(PROGRESS_MODES)}")
        image = Path(image_dir) if image_dir else None
        if image is not None and not image.is_dir():
            raise VcsbenchError(f"image dir {str(image_dir)!r} is not an existing directory")
        specs = parse_fs_list(fs or default_fs())
        given["fs"] = ",".join(spec.text for spec in specs)
        for spec in specs:
            require_root(spec)
        check_image_room(specs, image, fs_scope)
        selection = cls(
            backends=_variants(backends),
            ops=_operations(ops),
            payloads=_payloads(payloads),
            fs=specs,
            repos=repo_count,
            cache=cache,
            image_dir=image,
            verify=VerifyPolicy.parse(verify),
            fs_scope=fs_scope,
            progress=progress,
            age=int(age),
            layout=layout,
            recycle=int(recycle),
        )
        for item in backend_option or []:
            name, sep, pair = item.partition(":")
            if not sep or name not in REGISTRY:
                raise VcsbenchError(
                    f"backend option {item!r} is not BACKEND:key=value with BACKEND one of "
                    + ", ".join(REGISTRY)
                )
            selection.backend_options.setdefault(name, {}).update(parse_options([pair]))
        selection.given = given
        labels: dict[str, str] = {}
        explicit = split_list(backends) != ["all"]
        for variant in selection.backends:
            # Every option of every variant is checked here, before anything runs. A
            # backend named and unavailable is refused with what to install; with "all"
            # it is skipped when its benchmarks come, with the reason.
            backend_cls = REGISTRY[split_variant(variant)[0]]
            availability = backend_cls.available()
            if not availability.ok:
                if explicit:
                    packages = " ".join(backend_cls.apt_packages)
                    raise VcsbenchError(
                        f"backend {backend_cls.name} is not available here: "
                        f"{availability.reason}; as root: apt-get install -y {packages}"
                    )
                continue
            with selection.make_backend(variant) as backend:
                if backend.label in labels:
                    raise VcsbenchError(
                        f"backends {labels[backend.label]!r} and {variant!r} are the same "
                        f"variant ({backend.label})"
                    )
                labels[backend.label] = variant
        return selection

    @classmethod
    def from_getter(cls, get: Callable[[str], Any]) -> Selection:
        """Parse from ``get(dest)`` (pytest's ``getoption`` or an argparse namespace)."""
        return cls.parse(**{o.dest: get(o.dest) for o in OPTIONS})

    @classmethod
    def from_recorded(cls, recorded: object, where: str) -> Selection:
        """The selection a result file recorded (:attr:`given`), every value checked as
        on the command line. Only vcsbench's own options are taken, each as text: nothing
        recorded reaches pytest, a shell or a path that is removed."""
        if not isinstance(recorded, dict) or not recorded:
            raise VcsbenchError(
                f"{where}: records no selection (written by another vcsbench or by pytest "
                "directly); start a new run"
            )
        options = {o.dest: o for o in OPTIONS}
        values: dict[str, Any] = {}
        for dest, value in recorded.items():
            option = options.get(dest)
            if option is None:
                raise VcsbenchError(
                    f"{where}: its recorded selection has {str(dest)[:40]!r}, which is not a "
                    f"vcsbench option ({', '.join(options)})"
                )
            if option.repeat:
                ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
            else:
                ok = isinstance(value, str)
            if not ok:
                raise VcsbenchError(
                    f"{where}: its recorded {dest} is not "
                    + ("a list of text values" if option.repeat else "a text value")
                )
            values[dest] = value
        return cls.parse(**values)

    def command_line(self) -> list[str]:
        """The ``vcsbench run`` options that give this selection, for a person to read."""
        argv: list[str] = []
        for option in OPTIONS:
            value = self.given.get(option.dest)
            if value is None or value == option.default:
                continue
            for item in value if isinstance(value, list) else [value]:
                argv += [f"--{option.name}", item]
        return argv

    def make_backend(self, variant: str) -> Any:
        base, _ = split_variant(variant)
        return make_backend(variant, self.backend_options.get(base))

    def cases(self) -> list[tuple[str, str, str, str]]:
        """(backend variant, op, payload, fs) for every benchmark the backend can run."""
        return [
            (backend, op, payload, spec.text)
            for spec in self.fs
            for payload in self.payloads
            for op in self.ops
            for backend in self.backends
            if supports(REGISTRY[split_variant(backend)[0]], op)
        ]
