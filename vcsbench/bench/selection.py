"""What to run, parsed and checked once for both doors: a :class:`Selection` from the
options of :data:`~vcsbench.bench.options.OPTIONS` (pytest's or ``vcsbench run``'s), or
from the selection a result file recorded (``--resume``)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vcsbench.backends import REGISTRY, Backend, Variant, split_list
from vcsbench.backends.tools import parse_options
from vcsbench.bench.cases import Case, check_back, runnable, skipped
from vcsbench.bench.envs import environment_of
from vcsbench.bench.options import (
    AUTO_RECYCLE,
    DEFAULT_REPOS,
    FS_SCOPES,
    OPTIONS,
    PROGRESS_MODES,
    check_image_room,
    check_memory,
    default_fs,
    parse_operations,
    parse_payloads,
    parse_variants,
)
from vcsbench.bench.policy import CACHE_STATES, DEFAULT_KEPT, KeptPolicy, VerifyPolicy
from vcsbench.bench.recorded import places_stated_again
from vcsbench.bench.remote import remote_of
from vcsbench.errors import VcsbenchError
from vcsbench.results.counted import MAX_COUNTED
from vcsbench.sandbox import FsSpec, parse_fs_list, require_root
from vcsbench.sandbox.spec import check_image_dir
from vcsbench.workload.operations import DEFAULT_OPS, LAYOUTS, OperationSpec
from vcsbench.workload.payloads import (
    DEFAULT_PAYLOADS,
)
from vcsbench.workload.population import Population, parse_age


@dataclass
class Selection:
    """What to run, parsed and checked once, for both doors (pytest and ``vcsbench run``)."""

    backends: list[Variant]
    """Backends and variants, each parsed once: ``svn-fs``, ``svn-fs[fs-type=fsx]``."""
    ops: list[OperationSpec]
    payloads: list[str]
    fs: list[FsSpec]
    repos: int
    cache: str = "warm"
    image_dir: Path | None = None
    verify: VerifyPolicy = field(default_factory=VerifyPolicy)
    kept: KeptPolicy = field(default_factory=KeptPolicy)
    fs_scope: str = "benchmark"
    backend_options: dict[str, dict[str, str]] = field(default_factory=dict)
    progress: str = "auto"
    age: int = 0
    population: Population | None = None
    """``--age term:...``: what the ``age`` repositories are (None: alike, as created)."""
    layout: str = "flat"
    recycle: int = 0
    perturbation: str = "once"
    """When the harness is timed against a bare loop of the same calls: before each
    benchmark (on), before the first benchmark of each backend variant (once), never
    (off)."""
    counted: int = 0
    """Counted rounds after each benchmark's timed ones (``--counted``)."""
    counted_instructions: bool = True
    """Whether they count instructions too (not an option: bisect by a system call's
    count sets it False, its runs needing no valgrind)."""
    interleave: int | None = None
    """Blocks the variants of one benchmark alternate in: None (auto) where a variant
    names a library release, 0 never."""
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
        kept: str = DEFAULT_KEPT,
        fs_scope: str = "benchmark",
        backend_option: list[str] | None = None,
        progress: str = "auto",
        age: str | int = 0,
        layout: str = "flat",
        recycle: str | int = "auto",
        perturbation: str = "once",
        interleave: str | int = "auto",
        counted: str | int = 0,
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
            "kept": kept,
            "fs_scope": fs_scope,
            "backend_option": backend_option or [],
            "progress": progress,
            "age": age,
            "layout": layout,
            "recycle": recycle,
            "perturbation": perturbation,
            "interleave": interleave,
            "counted": counted,
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
        present, population = parse_age(str(age))
        if recycle == "auto":  # benchmarks of fewer rounds run in one process anyway
            recycle = AUTO_RECYCLE
        if not str(recycle).isdigit():
            raise VcsbenchError(f"recycle {recycle!r} is not auto or a whole number >= 0")
        if layout not in LAYOUTS:
            raise VcsbenchError(f"layout {layout!r} is not one of {', '.join(LAYOUTS)}")
        if progress not in PROGRESS_MODES:
            raise VcsbenchError(f"progress {progress!r} is not one of {', '.join(PROGRESS_MODES)}")
        image = Path(image_dir) if image_dir else None
        if image is not None:
            check_image_dir(image, f"--image-dir {str(image_dir)!r}")
        specs = parse_fs_list(fs or default_fs())
        given["fs"] = ",".join(spec.text for spec in specs)
        for spec in specs:
            require_root(spec)
        interleaved = _interleave(str(interleave))
        if not str(counted).isdigit() or int(counted) > MAX_COUNTED:
            raise VcsbenchError(
                f"counted {counted!r} is not a whole number from 0 to {MAX_COUNTED:,} (counted "
                "rounds after each benchmark's timed ones; 0: none)"
            )
        check_image_room(specs, image, fs_scope, at_once=interleaved != 0)
        selection = cls(
            backends=parse_variants(backends),
            ops=parse_operations(ops),
            payloads=parse_payloads(payloads),
            fs=specs,
            repos=repo_count,
            cache=cache,
            image_dir=image,
            verify=VerifyPolicy.parse(verify),
            kept=KeptPolicy.parse(kept),
            fs_scope=fs_scope,
            progress=progress,
            age=present,
            population=population,
            layout=layout,
            recycle=int(recycle),
            perturbation=_perturbation(perturbation),
            interleave=interleaved,
            counted=int(counted),
        )
        check_back(selection.ops, selection.payloads)
        for item in backend_option or []:
            name, sep, pair = item.partition(":")
            if not sep or name not in REGISTRY:
                raise VcsbenchError(
                    f"backend option {item!r} is not BACKEND:key=value with BACKEND one of "
                    + ", ".join(REGISTRY)
                )
            selection.backend_options.setdefault(name, {}).update(parse_options([pair]))
        selected = {variant.name for variant in selection.backends}
        for name, pairs in selection.backend_options.items():
            if name not in selected:
                given_pairs = ",".join(f"{k}={v}" for k, v in pairs.items())
                raise VcsbenchError(
                    f"backend option {name}:{given_pairs} is for {name}, which this run does "
                    f"not select (backends: {', '.join(sorted(selected))}); add {name} to "
                    "the backends or drop the option"
                )
        selection.given = given
        labels: dict[str, str] = {}
        explicit = split_list(backends) != ["all"]
        for variant in selection.backends:
            # Every option of every variant is checked here, before anything runs. A
            # backend named and unavailable is refused with what to install; with "all"
            # it is skipped when its benchmarks come, with the reason.
            backend_cls = variant.cls
            availability = variant.availability
            if not availability.ok:
                if explicit:
                    packages = " ".join(backend_cls.apt_packages)
                    raise VcsbenchError(
                        f"backend {backend_cls.name} is not available here: "
                        f"{availability.reason}; as root: apt-get install -y {packages}"
                    )
                continue
            with selection.make_backend(variant) as backend:
                same = (
                    backend.label
                    + (f" at {variant.version}" if variant.version else "")
                    + (f" copy {variant.copy}" if variant.copy else "")
                    + (f" delayed {variant.delay_ns} ns" if variant.delay_ns else "")
                    + (f" among {variant.age}" if variant.age is not None else "")
                    + (" planted {}, {}".format(*variant.planted) if any(variant.planted) else "")
                )
                if same in labels:
                    raise VcsbenchError(
                        f"backends {labels[same]!r} and {variant.text!r} are the same "
                        f"variant ({same})"
                    )
                labels[same] = variant.text
            remote_of(variant)  # remote= and rtt= checked now, the server installed
            if variant.version is not None:
                if selection.age_of(variant)["age"]:
                    raise VcsbenchError(
                        f"{variant.text}: --age (or age=) fills the sandbox in this process, "
                        "with this library; drop it or the version="
                    )
                environment_of(variant)  # built (or found) now: a bad release is refused here
        return selection

    @classmethod
    def from_getter(cls, get: Callable[[str], Any]) -> Selection:
        """Parse from ``get(dest)`` (pytest's ``getoption`` or an argparse namespace)."""
        return cls.parse(**{o.dest: get(o.dest) for o in OPTIONS})

    @classmethod
    def from_recorded(
        cls, recorded: object, where: str, stated: dict[str, Any] | None = None
    ) -> Selection:
        """The selection a result file recorded (:attr:`given`), every value checked as
        on the command line. Only vcsbench's own options are taken, each as text: nothing
        recorded reaches pytest, a shell or a path that is removed. An option naming a
        program, a place or a release to install (:func:`places_in`) is taken only where
        the command line states it again (``stated``: the options given there, by dest)."""
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
        if any(op.partition("[")[0].strip() == "cmd" for op in split_list(values.get("ops", ""))):
            raise VcsbenchError(
                f"{where}: its recorded operations include a command (cmd[...]); a command "
                "is never run from a result file: give it again on the command line"
            )
        places_stated_again(values, stated or {}, where)
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

    def make_backend(self, variant: Variant) -> Backend:
        """An instance of ``variant`` with this run's ``--backend-option`` values for it."""
        return variant.make(self.backend_options.get(variant.name))

    def age_of(self, variant: Variant) -> dict[str, Any]:
        """The repositories a variant's rounds run among: its own ``age=`` (alike, as
        created), else the run's ``--age`` (a number or a population)."""
        if variant.age is not None:
            return {"age": variant.age, "population": None}
        return {"age": self.age, "population": self.population}

    def interleaves(self, group: list[Variant]) -> bool:
        """Whether these variants of one benchmark run in alternating blocks."""
        if self.interleave is None:
            return any(
                v.names_its_own or "bin" in v.backend_options or "remote" in v.backend_options
                for v in group
            )
        return self.interleave > 0

    def interleaves_commands(self) -> bool:
        """Whether several commands (``vcsbench time A B``) run in alternating blocks, each
        against the others on each backend: unless --interleave off."""
        return sum(op.cls.user_command for op in self.ops) > 1 and self.interleave != 0

    def interleaves_filesystems(self) -> bool:
        """Whether the benchmarks of several filesystems run in alternating blocks, each
        filesystem's sandbox up for the whole group: unless --interleave off."""
        return len(self.fs) > 1 and self.interleave != 0

    def blocks_for(self, rounds: int) -> int:
        """Blocks for an interleaved benchmark of ``rounds`` rounds a variant."""
        from vcsbench.bench.interleave import DEFAULT_BLOCKS, MIN_BLOCK_ROUNDS
        from vcsbench.judge.paired import MIN_BLOCKS

        if self.interleave:
            return max(1, min(self.interleave, rounds))
        # at least the blocks a verdict needs, shorter ones where the rounds are few
        return max(1, min(rounds, DEFAULT_BLOCKS, max(MIN_BLOCKS, rounds // MIN_BLOCK_ROUNDS)))

    def case_ids(self) -> list[str]:
        """The pytest id of each case of :meth:`cases` whose backend can run here."""
        return [case.id for case in self.cases() if case.variant.availability.ok]

    def cases(self) -> list[Case]:
        """(backend variant, op, payload, fs) for every benchmark the backend can run."""
        return runnable(self.backends, self.ops, self.payloads, self.fs)

    def unsupported(self) -> list[str]:
        """One line per (backend variant, operation) pair of the selection that cannot
        run, saying why (what the operation needs that the backend lacks)."""
        return skipped(self.backends, self.ops, self.payloads)


def _perturbation(value: str) -> str:
    if value not in PERTURBATION_CHOICES:
        raise VcsbenchError(
            f"perturbation {value!r} is not one of " + ", ".join(PERTURBATION_CHOICES)
        )
    return value


PERTURBATION_CHOICES = ("once", "on", "off")


def _interleave(value: str) -> int | None:
    if value == "auto":
        return None
    if value == "off":
        return 0
    if value.isdigit() and int(value) >= 2:
        return int(value)
    raise VcsbenchError(f"interleave {value!r} is not auto, off or a number of blocks (2 or more)")
