"""markus2013: a 2013 blog study timed creating 10,000 svn and git repositories, and
creating each with one commit of ``test.txt`` ("hello world"), on a laptop (svn 1.7 via
Ruby bindings, git via grit). Its figures are quoted below as published.
"""

from __future__ import annotations

from vcsbench.report.format import (
    counted,
    fmt_metric,
    fmt_ms,
    fmt_num,
    fmt_ratio,
    render_rows,
    without_empty,
)
from vcsbench.report.ratios import EXPLAINED, NS, time_ratio
from vcsbench.results.metrics import DURABILITY_METRICS, KEPT_FOOTPRINT, METRICS
from vcsbench.results.model import Benchmark, Run
from vcsbench.studies.base import (
    ANSWER,
    KIB,
    Published,
    Study,
    count_why,
    cpu_ms,
    footprint_metric,
    ratio,
)

MARKUS2013 = [
    Published("create svn repos", "create", "svn", 119_184, 10_000),
    Published("create git repos", "create", "git", 120_582, 10_000),
    Published("create + commit test.txt, svn", "create+commit", "svn", 285_041, 10_000),
    Published("create + commit test.txt, git", "create+commit", "git", 223_160, 10_000),
]
MARKUS2013_DISK_MB = {"svn": 594.0, "git": 278.0}  # 20,000 repos each, half with the commit
MARKUS2013_REPOS = 10_000
MARKUS2013_SOURCE = (
    "the MarkUs project's 2013 blog study of svn vs git repository creation (laptop, "
    "svn 1.7 through Ruby bindings, git through grit); figures quoted as published"
)
MARKUS2013_DEFAULT_BACKENDS = "git-pygit2,git-pygit2[fsync=true],svn-fs"
MARKUS2013_OPS = "create,create+commit,commit"
MARKUS2013_PAYLOAD = "hello"
OP_LABELS = {
    "create": "create",
    "create+commit": "create + commit test.txt",
    "commit": "commit to an existing repository",
}
COUNTERPART = {"svn-fs": "git-pygit2", "svn-pysvn": "git-pygit2", "svn-cli": "git-cli"}


def _published(op: str, vcs: str) -> Published | None:
    return next((p for p in MARKUS2013 if p.op == op and p.vcs == vcs), None)


def _pairs(group: list[Benchmark]) -> list[tuple[str, str]]:
    """(svn, git) variant pairs to put in ratio: each svn variant with every variant of its
    git counterpart (git-pygit2 both with and without fsync), else with every git one."""
    labels = list(dict.fromkeys(b.label for b in group))
    name_of = {b.label: b.backend.name for b in group}
    vcs_of = {b.label: b.backend.vcs for b in group}
    svn = [label for label in labels if vcs_of[label] == "svn"]
    git = [label for label in labels if vcs_of[label] == "git"]
    pairs = []
    for s in svn:
        matching = [g for g in git if name_of[g] == COUNTERPART.get(name_of[s])]
        pairs += [(s, g) for g in (matching or git)]
    return pairs


def _time_ratio(svn: Benchmark, git: Benchmark) -> str:
    found = time_ratio(svn, git)
    return found.cell() if found else "—"


def _per_repo_kib(bench: Benchmark, name: str) -> str:
    value = bench.per_repo(name)
    return fmt_num(value, KIB) if value is not None else "n/a"


def durability_counted(group: list[Benchmark]) -> str:
    """What each row's durability measured as, in a sentence: fsync-family calls and device
    flushes per repository, for the commit rows ("" where nothing was counted)."""
    op = next((o for o in ("commit", "create+commit") if any(b.op == o for b in group)), None)
    rows = [b for b in group if b.op == op and b.per_repo("sync_calls") is not None]
    if not rows:
        return ""
    parts = []
    for bench in rows:
        text = f"{bench.label} {fmt_metric('sync_calls', bench.per_repo('sync_calls'))}"
        flushes = bench.per_repo("io_flush_requests_device")
        if flushes is not None:
            text += f" ({fmt_metric('io_flush_requests_device', flushes)} device flushes)"
        parts.append(text)
    return (
        f"Durability counted, per repository in `{OP_LABELS.get(op or '', op)}`: "
        f"fsync-family calls {'; '.join(parts)}. "
    )


def _answer(group: list[Benchmark], index: dict[tuple[str, str], Benchmark]) -> str:
    """The study's answer in one sentence: svn's time over git's per operation, with
    its interval and the blog's figure, for the first svn / git pair (like with like
    where the run has a git that flushes); "" where there is none."""
    pairs = _pairs(group)
    flushing = [
        (svn, git) for svn, git in pairs if index_durability(index, git).startswith("fsync")
    ]
    if not pairs:
        return ""
    svn, git = (flushing or pairs)[0]
    parts = []
    for op, label in OP_LABELS.items():
        s, g = index.get((svn, op)), index.get((git, op))
        if s is None or g is None or (found := time_ratio(s, g)) is None:
            continue
        ps, pg = _published(op, "svn"), _published(op, "git")
        then = f"2013: {fmt_ratio(ps.per_repo_ms / pg.per_repo_ms)}" if ps and pg else ""
        parts.append(f"{label}: {found.in_words(aside=then)}{count_why(s, g)}")
    if not parts:
        return ""
    like = " (both flush: like with like)" if flushing else ""
    return f"**{svn} / {git}, time per repository{like}**: {'; '.join(parts)}."


def index_durability(index: dict[tuple[str, str], Benchmark], label: str) -> str:
    found = next((b for (name, _), b in index.items() if name == label), None)
    return found.backend.durability if found is not None else ""


def markus2013_tables(files: list[Run]) -> dict[str, str]:
    """Markdown per filesystem: this run beside the blog's figures, per repository, with
    each row's durability and IO, then svn/git ratios like with like."""
    benches = [b for f in files for b in f.benchmarks]
    by_fs: dict[str, list[Benchmark]] = {}
    for bench in benches:
        by_fs.setdefault(bench.fs, []).append(bench)
    out: dict[str, str] = {}
    answers: dict[str, str] = {}
    for fs, group in by_fs.items():
        index = {(b.label, b.op): b for b in group}
        order = {op: i for i, op in enumerate(OP_LABELS)}
        rows = []
        shown = counted(group, DURABILITY_METRICS)
        kept = counted(group, (KEPT_FOOTPRINT,))
        for bench in sorted(group, key=lambda b: (order.get(b.op, 9), b.backend.vcs, b.label)):
            published = _published(bench.op, bench.backend.vcs)
            n = bench.repos_ok
            total = bench.total_ms
            equal_n = published is not None and n == published.repos
            rows.append(
                [
                    OP_LABELS.get(bench.op, bench.op),
                    bench.label,
                    bench.backend.durability or "?",
                    f"{n:,}",
                    fmt_ms(bench.median_ms),
                    fmt_ms(total / n if total is not None and n else None),
                    f"{published.per_repo_ms:.1f}" if published else "—",
                    fmt_ms(total),
                    f"{published.total_ms:,.0f}" if published and equal_n else "—",
                    fmt_num(cpu_ms(bench), digits=2),
                    _per_repo_kib(bench, "io_write_logical"),
                    _per_repo_kib(bench, "io_write_device"),
                    *(fmt_metric(m, bench.per_repo(m)) for m in shown),
                    _per_repo_kib(bench, "footprint_allocated"),
                    *([_per_repo_kib(bench, KEPT_FOOTPRINT)] if kept else []),
                    f"{bench.errors}",
                ]
            )
        header = [
            "operation",
            "backend",
            "durability",
            "N",
            "median ms",
            "ms/repo (mean)",
            "2013 ms/repo",
            "total ms for N",
            "2013 total ms (same N only)",
            "CPU ms/repo",
            "logical KiB written/repo",
            "device KiB written/repo",
            *(f"{METRICS[m].label}/repo" for m in shown),
            "allocated KiB/repo",
            *(["kept KiB/repo"] if kept else []),
            "errors",
        ]
        header, rows, dropped = without_empty(header, rows, text_columns=3)
        table = render_rows(header, rows, text_columns=3)
        ratio_rows = []
        for svn, git in _pairs(group):
            for op in OP_LABELS:
                s, g = index.get((svn, op)), index.get((git, op))
                if s is None or g is None:
                    continue
                ps, pg = _published(op, "svn"), _published(op, "git")
                ratio_rows.append(
                    [
                        f"{svn} / {git}",
                        OP_LABELS[op],
                        _time_ratio(s, g),
                        fmt_ratio(ps.per_repo_ms / pg.per_repo_ms) if ps and pg else "—",
                        fmt_ratio(
                            ratio(s.per_repo("io_write_device"), g.per_repo("io_write_device"))
                        ),
                        fmt_ratio(
                            ratio(s.per_repo("io_write_logical"), g.per_repo("io_write_logical"))
                        ),
                        fmt_ratio(
                            ratio(
                                s.per_repo(footprint_metric(s, g)),
                                g.per_repo(footprint_metric(s, g)),
                            )
                        ),
                    ]
                )
            disk = {}
            for label in (svn, git):
                # as written: as 2013 measured its fresh repositories
                parts = [index.get((label, op)) for op in ("create", "create+commit")]
                per_repo = [p.per_repo("footprint_allocated") for p in parts if p]
                if len(per_repo) == 2 and None not in per_repo:
                    disk[label] = sum(v for v in per_repo if v is not None) / 2
            if svn in disk and git in disk:
                disk_2013 = MARKUS2013_DISK_MB["svn"] / MARKUS2013_DISK_MB["git"]
                ratio_rows.append(
                    [
                        f"{svn} / {git}",
                        "disk as written: half created, half with the commit",
                        "—",
                        "—",
                        "—",
                        "—",
                        f"{fmt_ratio(disk[svn] / disk[git])} vs 2013 {fmt_ratio(disk_2013)}",
                    ]
                )
        ratio_header, ratio_rows, dropped_ratios = without_empty(
            [
                "svn / git",
                "operation",
                "time (median)",
                "2013 time",
                "device bytes",
                "logical bytes",
                "allocated (as kept where both were)",
            ],
            ratio_rows,
            text_columns=2,
        )
        ratios = render_rows(ratio_header, ratio_rows, text_columns=2)
        dropped += [f"{name} (svn / git)" for name in dropped_ratios]
        flushing = any(
            b.backend.vcs == "git" and b.backend.durability.startswith("fsync") for b in group
        )
        like_with_like = (
            "compare svn with the fsync rows for like with like"
            if flushing
            else "this run has no git row that flushes; add `git-pygit2[fsync=true]` to "
            "--backends to compare like with like"
        )
        notes = (
            "Durability differs between rows: Subversion flushes every commit to disk; "
            f"libgit2 does not unless asked (`git-pygit2[fsync=true]`): {like_with_like}. "
            f"{durability_counted(group)}"
            "The allocated ratios per operation are of the repositories as a server keeps "
            "them (after git gc and svnadmin pack) where both sides were kept; the disk line "
            "is as written, as 2013 measured its fresh repositories. "
            "Per-repository figures compare across N; "
            f"totals are set beside the 2013 ones only at its N ({MARKUS2013_REPOS:,}). "
            f"2013: {MARKUS2013_SOURCE}. Time ratios: {EXPLAINED} {NS}"
        )
        if dropped:
            notes += (
                " Left out, no row having a figure at this N and on this filesystem: "
                f"{', '.join(dropped)}."
            )
        answers[fs] = _answer(group, index)
        out[fs] = f"### markus2013 on {fs}\n\n{ratios}\n\n{table}\n\n_{notes}_\n"
    several = len(answers) > 1
    found = [f"On {fs}: {text}" if several else text for fs, text in answers.items() if text]
    return ({ANSWER: "\n\n".join(found) + "\n"} if found else {}) | out


STUDY = Study(
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
    # its answer is svn/git ratios: the backends alternate in blocks, so each ratio has
    # an interval drift cannot make
    interleave="30",
)
