"""Every study ``vcsbench study`` runs: its fixed selection, its defaults and its tables.

A study is one command: operations and payloads fixed, backends, filesystems and N
defaulted (a user may change those three), and tables that set this run's figures beside
the published ones where they exist, with ratios as the comparable part and the sources
named.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from vcsbench.report.format import fmt_ms, fmt_num, fmt_ratio, render_rows
from vcsbench.report.study import (
    KIB,
    MARKUS2013,
    MARKUS2013_DEFAULT_BACKENDS,
    MARKUS2013_OPS,
    MARKUS2013_PAYLOAD,
    MARKUS2013_SOURCE,
    cpu_ms,
    markus2013_tables,
    ratio,
)
from vcsbench.results.model import Benchmark, Run

Tables = Callable[[list[Run]], dict[str, str]]


@dataclass(frozen=True)
class Study:
    name: str
    summary: str
    """One line for ``--help``: what is compared."""
    backends: str
    ops: str
    payloads: str
    fs: str
    repos: int
    tables: Tables
    vcs: tuple[str, ...]
    """What ``--backends all`` means for this study: every backend of these VCSs."""
    source: str = ""
    """Where the published figures come from; empty when none are published."""


def _groups(runs: list[Run]) -> dict[tuple[str, str, str], list[Benchmark]]:
    """Benchmarks by (filesystem, operation, payload), in the order the run made them."""
    groups: dict[tuple[str, str, str], list[Benchmark]] = {}
    for run in runs:
        for bench in run.benchmarks:
            groups.setdefault((bench.fs, bench.op, bench.payload.name), []).append(bench)
    return groups


def _fs_note(fs: str) -> str:
    if fs.startswith("tmpfs"):
        return (
            " On tmpfs there is no device and fsync returns at once: durability costs "
            "nothing here, so differences are CPU only; run on ext4, xfs or btrfs for them."
        )
    return ""


def variant_table(
    group: list[Benchmark],
    baseline: Mapping[str, Benchmark | None],
    published: Callable[[Benchmark], tuple[str, str]] | None = None,
    published_headers: tuple[str, str] = ("published", "published ratio"),
    durability: bool = True,
) -> str:
    """A row per variant: time, CPU, device writes, footprint and inodes per repository,
    each variant's time, device bytes and footprint as a ratio to its baseline (by label)."""
    headers = ["variant", *(["durability"] if durability else []), "N", "median ms", "time ratio"]
    if published is not None:
        headers += list(published_headers)
    headers += [
        "CPU ms",
        "device write requests",
        "device KiB written",
        "device bytes ratio",
        "allocated KiB",
        "allocated ratio",
        "inodes",
        "errors",
    ]
    rows = []
    for bench in group:
        base = baseline.get(bench.label)
        row = [
            bench.label,
            *([bench.backend.durability or "?"] if durability else []),
            f"{bench.repos_ok:,}",
            fmt_ms(bench.median_ms),
            _time_ratio(bench, base),
        ]
        if published is not None:
            row += list(published(bench))
        requests = bench.per_repo("io_write_requests_device")
        row += [
            fmt_num(cpu_ms(bench), digits=2),
            fmt_num(requests, digits=1),
            fmt_num(bench.per_repo("io_write_device"), KIB),
            _metric_ratio(bench, base, "io_write_device"),
            fmt_num(bench.per_repo("footprint_allocated"), KIB),
            _metric_ratio(bench, base, "footprint_allocated"),
            fmt_num(bench.per_repo("footprint_inodes"), digits=1),
            f"{bench.errors}",
        ]
        rows.append(row)
    return render_rows(headers, rows, text_columns=2 if durability else 1)


def _time_ratio(bench: Benchmark, base: Benchmark | None) -> str:
    return fmt_ratio(ratio(bench.median_ms, base.median_ms)) if base else "—"


def _metric_ratio(bench: Benchmark, base: Benchmark | None, name: str) -> str:
    if base is None:
        return "—"
    return fmt_ratio(ratio(bench.per_repo(name), base.per_repo(name)))


def _first(group: list[Benchmark], test: Callable[[Benchmark], bool]) -> Benchmark | None:
    return next((b for b in group if test(b)), None)


PER_REPO_NOTE = (
    "Figures per repository (per round): median of the verified rounds; CPU, device write "
    "requests and KiB written are means; allocated KiB and inodes are what the repositories "
    "hold at the end, divided by N."
)


# --- git-fsync: git's t/perf/p0008-odb-fsync.sh ------------------------------------------

GIT_FSYNC_SOURCE = (
    "git commit c0f4752ed2 (core.fsyncmethod: batched disk flushes for loose-objects, "
    "Neeraj Singh, first in git 2.37): 'git add' of 500 files, Linux: Hyper-V VM, kernel "
    "5.11 (Ubuntu 20.04), fast SSD; the case is git's t/perf/p0008-odb-fsync.sh"
)
GIT_FSYNC_PUBLISHED = {"none": 0.06, "fsync": 1.88, "batch": 0.15}
"""Seconds for ``git add`` of 500 files on Linux, as published (Mac and Windows: below)."""
GIT_FSYNC_OTHERS = "Mac: none 0.35 s, fsync 11.18 s, batch 0.41 s; Windows: 0.61, 2.47, 1.53"
GIT_FSYNC_VARIANTS = ",".join(
    [
        "git-cli[core.fsync=none]",
        *(
            f"git-cli[core.fsync=loose-object,core.fsyncMethod={method}]"
            for method in ("fsync", "writeout-only", "batch")
        ),
    ]
)


def fsync_mode(bench: Benchmark) -> str:
    """``none``, or the ``core.fsyncMethod`` a variant syncs loose objects with."""
    options = bench.backend.options
    if options.get("core.fsync") == "none":
        return "none"
    return options.get("core.fsyncMethod") or "fsync"


def _flush_cost(group: list[Benchmark], none: Benchmark | None) -> str:
    """What one flushed object costs, here and as published: (fsync - none) / files."""
    fsync = _first(group, lambda b: fsync_mode(b) == "fsync")
    if fsync is None or none is None or fsync.median_ms is None or none.median_ms is None:
        return ""
    files = fsync.payload.files
    here = (fsync.median_ms - none.median_ms) / files
    published = (GIT_FSYNC_PUBLISHED["fsync"] - GIT_FSYNC_PUBLISHED["none"]) * 1000 / 500
    return (
        f"Each object flushed one by one costs (fsync - none) / {files} files = "
        f"{here:.2f} ms here, {published:.2f} ms in the published run; the ratios follow "
        "from that and from the add without flushes. "
    )


def git_fsync_tables(runs: list[Run]) -> dict[str, str]:
    out: dict[str, str] = {}
    for (fs, op, payload), group in _groups(runs).items():
        none = _first(group, lambda b: fsync_mode(b) == "none" and b.backend.name == "git-cli")

        def published(bench: Benchmark) -> tuple[str, str]:
            mode = fsync_mode(bench)
            if mode not in GIT_FSYNC_PUBLISHED:
                return "—", "—"
            seconds = GIT_FSYNC_PUBLISHED[mode]
            return f"{seconds:.2f}", fmt_ratio(seconds / GIT_FSYNC_PUBLISHED["none"])

        table = variant_table(
            group,
            dict.fromkeys((b.label for b in group), none),
            published,
            ("c0f4752ed2 Linux s", "c0f4752ed2 ratio"),
            durability=False,
        )
        notes = (
            f"{_flush_cost(group, none)}"
            f"`{op}` of `{payload}` into a repository with one commit, as p0008 does; ratios "
            "to `core.fsync=none` (p0008's first case). Device write requests are what batch "
            "mode saves: one flush for the whole add instead of one per object. "
            f"{PER_REPO_NOTE}{_fs_note(fs)} Published: {GIT_FSYNC_SOURCE}; "
            f"{GIT_FSYNC_OTHERS}."
        )
        out[f"{fs}/{op}/{payload}"] = f"### git-fsync on {fs}\n\n{table}\n\n_{notes}_\n"
    return out


# --- markus-today: how MarkUs creates a student repository now ---------------------------

MARKUS_TODAY_SOURCE = (
    "MarkUs's app/lib/git_repository.rb (GitRepository.create: Rugged bare init, "
    "core.logAllRefUpdates=true, gc.reflogExpire=never, clone_at, .required.json committed "
    "and pushed, server hooks linked); 2013 figures: " + MARKUS2013_SOURCE
)


def markus_today_tables(runs: list[Run]) -> dict[str, str]:
    out: dict[str, str] = {}
    by_fs: dict[str, list[Benchmark]] = {}
    for (fs, _op, _payload), group in _groups(runs).items():
        by_fs.setdefault(fs, []).extend(group)
    published_2013 = {p.op: p.per_repo_ms for p in MARKUS2013 if p.vcs == "git"}
    for fs, group in by_fs.items():
        index = {(b.backend.name, b.op): b for b in group}
        the_2013_way = index.get(("git-pygit2", "create+commit"))
        rows = []
        for bench in group:
            is_markus = bench.backend.name == "git-markus"
            base = the_2013_way if is_markus else None
            what = (
                "MarkUs: create (its own first commit and push)"
                if is_markus and bench.op == "create"
                else f"{'MarkUs' if is_markus else '2013 study'}: {bench.op}"
            )
            rows.append(
                [
                    what,
                    bench.label,
                    f"{bench.repos_ok:,}",
                    fmt_ms(bench.median_ms),
                    f"{published_2013[bench.op]:.1f}"
                    if not is_markus and bench.op in published_2013
                    else "—",
                    fmt_num(cpu_ms(bench), digits=2),
                    fmt_num(bench.per_repo("io_write_device"), KIB),
                    fmt_num(bench.per_repo("footprint_allocated"), KIB),
                    fmt_num(bench.per_repo("footprint_inodes"), digits=1),
                    _time_ratio(bench, base),
                    _metric_ratio(bench, base, "io_write_device"),
                    _metric_ratio(bench, base, "footprint_allocated"),
                    _metric_ratio(bench, base, "footprint_inodes"),
                    f"{bench.errors}",
                ]
            )
        table = render_rows(
            [
                "per student",
                "backend",
                "N",
                "median ms",
                "2013 ms/repo",
                "CPU ms",
                "device KiB written",
                "allocated KiB",
                "inodes",
                "time vs 2013 way",
                "device bytes vs 2013 way",
                "allocated vs 2013 way",
                "inodes vs 2013 way",
                "errors",
            ],
            rows,
            text_columns=2,
        )
        notes = (
            "The 2013 way: a bare repository and one commit of test.txt through libgit2 "
            "(`git-pygit2` create+commit). MarkUs today: the bare repository, its clone kept "
            "on the server, `.required.json` committed in the clone and pushed, a hook "
            "linked (`git-markus`); its create+commit adds the student's test.txt, committed "
            "and pushed. Ratios set each MarkUs row against the 2013 way's create+commit. "
            f"{PER_REPO_NOTE}{_fs_note(fs)} Sources: {MARKUS_TODAY_SOURCE}."
        )
        out[fs] = f"### markus-today on {fs}\n\n{table}\n\n_{notes}_\n"
    return out


# --- svn-storage and git-storage: a VCS's own storage choices ----------------------------

SVN_STORAGE_VARIANTS = ",".join(
    [
        "svn-fs",
        "svn-fs[fs-type=fsx]",
        "svn-fs[compression=none]",
        "svn-fs[compression=zlib]",
        "svn-fs[compatible-version=1.8]",
    ]
)
GIT_STORAGE_VARIANTS = ",".join(
    [
        "git-cli",
        "git-cli[objects=packed]",
        "git-cli[core.fsync=none]",
        "git-cli[core.fsync=all]",
        "git-cli[template=empty]",
        "git-pygit2",
        "git-pygit2[fsync=true]",
        "git-pygit2[template=empty]",
    ]
)


def _storage_tables(title: str, about: str) -> Tables:
    def tables(runs: list[Run]) -> dict[str, str]:
        out: dict[str, str] = {}
        for (fs, op, payload), group in _groups(runs).items():
            # Each variant against its backend with every option at its default.
            labels = {b.label: b for b in group}
            table = variant_table(group, {b.label: labels.get(b.backend.name) for b in group})
            notes = (
                f"`{op}` of `{payload}`. {about} Ratios: each variant against its backend "
                f"with default options. {PER_REPO_NOTE}{_fs_note(fs)} No figures for "
                "these choices are published to set beside this run's."
            )
            heading = f"### {title} on {fs}: {op}, {payload}"
            out[f"{fs}/{op}/{payload}"] = f"{heading}\n\n{table}\n\n_{notes}_\n"
        return out

    return tables


SVN_STORAGE_ABOUT = (
    "Subversion 1.14's defaults: FSFS format 8, lz4 compression; `fs-type=fsx` is the "
    "experimental FSX back end; `compression=none|zlib` is set in `db/fsfs.conf`; "
    "`compatible-version=1.8` makes an FSFS format 6 repository (zlib)."
)
GIT_STORAGE_ABOUT = (
    "`objects=packed`: the commit written by `git fast-import` as one pack instead of loose "
    "objects; `core.fsync=none|all`: nothing or everything flushed (git's default flushes "
    "packs but not loose objects); libgit2 flushes only with `fsync=true` "
    "(ENABLE_FSYNC_GITDIR); `template=empty`: no sample hooks copied into each repository."
)


STUDIES: dict[str, Study] = {
    s.name: s
    for s in (
        Study(
            "markus2013",
            "create N svn and git repositories, and N each with one commit of test.txt; the "
            "2013 blog's table with this run's figures beside it",
            MARKUS2013_DEFAULT_BACKENDS,
            MARKUS2013_OPS,
            MARKUS2013_PAYLOAD,
            "tmpfs",
            10_000,
            markus2013_tables,
            ("git", "svn"),
            MARKUS2013_SOURCE,
        ),
        Study(
            "git-fsync",
            "git's t/perf p0008: `git add` of 500 files with core.fsync off and each "
            "core.fsyncMethod (fsync, writeout-only, batch), beside git's published figures",
            GIT_FSYNC_VARIANTS,
            "add",
            "p0008",
            "ext4,xfs,btrfs",
            20,
            git_fsync_tables,
            ("git",),
            GIT_FSYNC_SOURCE,
        ),
        Study(
            "markus-today",
            "a student repository as MarkUs creates it now (bare + clone + pushed first "
            "commit + hooks, through libgit2) against the 2013 study's create+commit",
            "git-pygit2,git-markus",
            "create,create+commit",
            MARKUS2013_PAYLOAD,
            "ext4",
            1_000,
            markus_today_tables,
            ("git",),
            MARKUS_TODAY_SOURCE,
        ),
        Study(
            "svn-storage",
            "Subversion's storage choices: FSFS against FSX, FSFS compression none/zlib/lz4, "
            "an older repository format; create+commit and commit of submission and "
            "many-files",
            SVN_STORAGE_VARIANTS,
            "create+commit,commit",
            "submission,many-files",
            "ext4",
            30,
            _storage_tables("svn-storage", SVN_STORAGE_ABOUT),
            ("svn",),
        ),
        Study(
            "git-storage",
            "git's storage choices: loose objects against a packed commit, fsync on and off "
            "(CLI and libgit2), the default template against an empty one",
            GIT_STORAGE_VARIANTS,
            "create+commit,commit",
            "submission,many-files",
            "ext4",
            30,
            _storage_tables("git-storage", GIT_STORAGE_ABOUT),
            ("git",),
        ),
    )
}
