"""markus-today: a student repository as MarkUs creates it now (bare + clone + pushed first
commit + hooks, through libgit2), against the 2013 study's create+commit."""

from __future__ import annotations

from vcsbench.report.format import fmt_ms, fmt_num, render_rows
from vcsbench.results.model import Benchmark, Run
from vcsbench.studies.base import (
    KIB,
    PER_REPO_NOTE,
    Study,
    cpu_ms,
    fs_note,
    groups,
    metric_ratio,
    time_ratio,
)
from vcsbench.studies.markus2013 import MARKUS2013, MARKUS2013_PAYLOAD, MARKUS2013_SOURCE

MARKUS_TODAY_SOURCE = (
    "MarkUs's app/lib/git_repository.rb (GitRepository.create: Rugged bare init, "
    "core.logAllRefUpdates=true, gc.reflogExpire=never, clone_at, .required.json committed "
    "and pushed, server hooks linked); 2013 figures: " + MARKUS2013_SOURCE
)


def markus_today_tables(runs: list[Run]) -> dict[str, str]:
    out: dict[str, str] = {}
    by_fs: dict[str, list[Benchmark]] = {}
    for (fs, _op, _payload), group in groups(runs).items():
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
                    time_ratio(bench, base),
                    metric_ratio(bench, base, "io_write_device"),
                    metric_ratio(bench, base, "footprint_allocated"),
                    metric_ratio(bench, base, "footprint_inodes"),
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
            f"{PER_REPO_NOTE}{fs_note(fs)} Sources: {MARKUS_TODAY_SOURCE}."
        )
        out[fs] = f"### markus-today on {fs}\n\n{table}\n\n_{notes}_\n"
    return out


STUDY = Study(
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
)
