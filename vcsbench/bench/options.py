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
from pathlib import Path
from typing import Any

from vcsbench.backends import REGISTRY, Variant, split_list, split_variant
from vcsbench.bench.policy import DEFAULT_KEPT
from vcsbench.errors import VcsbenchError
from vcsbench.sandbox import FsSpec
from vcsbench.sandbox.spec import DEFAULT_IMAGE_SIZE, LOOP_KINDS
from vcsbench.workload.operations import DEFAULT_OPS, OPS, OperationSpec
from vcsbench.workload.option import OptionDef
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


OPTIONS: tuple[OptionDef, ...] = (
    OptionDef(
        "backends",
        "all",
        "comma-separated backends or variants, e.g. git-pygit2,svn-fs[fs-type=fsx]; "
        "another release of a library: git-pygit2[version=1.15.1] "
        f"({', '.join(REGISTRY)}; default: all)",
        "LIST",
    ),
    OptionDef(
        "ops",
        ",".join(DEFAULT_OPS),
        f"comma-separated operations: {', '.join(OPS)}, or all; cmd[run=COMMAND] (your "
        "command: see vcsbench time); options as NAME[key=value], "
        f"e.g. log[history=1000] (default: {','.join(DEFAULT_OPS)})",
        "LIST",
    ),
    OptionDef(
        "payloads",
        ",".join(DEFAULT_PAYLOADS),
        f"comma-separated payloads: {names_for_help()}, tree:PATH "
        "(a directory of your own), or history:REPO[,commits=N,from=REV] (a git "
        "repository's last N commits before REV, replayed into each backend) "
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
    OptionDef(
        "kept",
        DEFAULT_KEPT,
        "after the last round, the footprint as a server keeps the repositories: each "
        "through its VCS's own maintenance (git gc, svnadmin pack), untimed, verified "
        "again and scanned: all, none, or K evenly spaced (sample:K; default sample:100)",
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
        "measured rounds, untimed (default 0): what the next one costs when N exist; or a "
        "population that differs as a course's repositories do: "
        "term:students=S,assignments=A,commits=LO-HI[,seed=N][,content=PAYLOAD]",
        "N|term:...",
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
        "counted",
        "0",
        "counted rounds after each benchmark's timed ones, outside them: N rounds of the "
        "operation counted whole -- instructions in user space under valgrind's callgrind, "
        "every kind of system call -- for compare, the gate and bisect to judge at one run "
        "a side (0, the default: none; 5 or more for a verdict; each pass starts an "
        "interpreter under valgrind, about 5-15 s)",
        "N",
    ),
    OptionDef(
        "perturbation",
        "once",
        "once (default), on or off: time the harness against a bare loop of the same calls "
        "in interleaved blocks, beside the first benchmark of each backend (once, about a "
        "second) or every benchmark (on, 6 blocks of up to 50 rounds each way); recorded in "
        "the result; reports warn beyond 1.05x",
    ),
    OptionDef(
        "interleave",
        "auto",
        "auto (default: where a variant names a library release), off, or B: the "
        "variants of each benchmark (and the commands of vcsbench time) run in B "
        "alternating blocks of rounds (by default 30, of 10 rounds at least, and never "
        "fewer than the 6 a verdict needs while there are rounds for them) "
        "in one sandbox, in an order drawn anew each block, so drift falls on all alike; "
        "reports compare them block by block",
        "B",
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


def check_image_room(
    specs: list[FsSpec], image_dir: Path | None, fs_scope: str, at_once: bool = False
) -> None:
    """Refuse loop images that the disk under them has no room for, before anything runs.

    Images are sparse, but a benchmark may fill them: each needs its size free. One at a
    time with a sandbox per benchmark; all at once with one per session, or with the
    filesystems interleaved (``at_once``).
    """
    sizes = [s.size_bytes or DEFAULT_IMAGE_SIZE for s in specs if s.kind in LOOP_KINDS]
    if not sizes:
        return
    needed = sum(sizes) if fs_scope == "session" or at_once else max(sizes)
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


def parse_operations(text: str) -> list[OperationSpec]:
    """The operations named (``log[history=10]``), each parsed once, its options checked;
    ``all``: every operation."""
    names = split_list(text)
    if names == ["all"]:
        names = list(OPS)
    if not names:
        raise VcsbenchError(f"no operation given; known: {', '.join(OPS)}")
    specs = [OperationSpec.parse(name) for name in names]
    labels = [spec.text for spec in specs]
    if len(set(labels)) != len(labels):
        raise VcsbenchError(f"operations {text!r} name one operation twice")
    return specs


def parse_payloads(text: str) -> list[str]:
    names: list[str] = []
    for item in split_list(text):  # history:REPO,commits=N: its options stay with it
        if names and names[-1].startswith("history:") and "=" in item and ":" not in item:
            names[-1] += "," + item
        else:
            names.append(item)
    if names == ["all"]:
        return payload_names()
    if not names:
        raise VcsbenchError(f"no payload given; known: {', '.join(payload_names())}")
    for name in names:
        load_payload(name)  # an unknown name or a bad tree is one line, before anything runs
    return names


def _versions(name: str) -> list[str]:
    """A variant naming a range of releases (``version=1.14..1.21``) as one variant per
    minor release, its last patch; any other variant as it is."""
    from vcsbench.bench.envs import RANGE, expand_range

    base, options = split_variant(name)
    version = options.get("version", "")
    if not RANGE.match(version) or base not in REGISTRY or REGISTRY[base].pypi is None:
        return [name]
    library = REGISTRY[base].pypi
    assert library is not None
    out = []
    for release in expand_range(library, version):
        pairs = ",".join(f"{k}={release if k == 'version' else v}" for k, v in options.items())
        out.append(f"{base}[{pairs}]")
    return out


def parse_variants(text: str) -> list[Variant]:
    """The backends of ``--backends``, each parsed once; ``all``: every registered one."""
    names = split_list(text)
    if names == ["all"]:
        return [Variant.parse(name) for name in REGISTRY]
    if not names:
        raise VcsbenchError(f"no backend given; known: {', '.join(REGISTRY)}")
    variants = [Variant.parse(one) for name in names for one in _versions(name)]
    if len({v.text for v in variants}) != len(variants):
        raise VcsbenchError(f"backends {text!r} name a variant twice")
    return variants
