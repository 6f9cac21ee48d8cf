"""Studies: published comparisons re-run in one command, their figures printed beside ours.

``markus2013``: a 2013 blog study timed creating 10,000 svn and git repositories, and
creating each with one commit of ``test.txt`` ("hello world"), on a laptop (svn 1.7 via
Ruby bindings, git via grit). Its figures are quoted below as published.
"""

from __future__ import annotations

from dataclasses import dataclass

from vcsbench.report.format import fmt_ms, fmt_num, fmt_ratio, render_rows
from vcsbench.results.model import Benchmark, Run

MB = 1e6


@dataclass(frozen=True)
class Published:
    label: str
    op: str
    vcs: str
    total_ms: float
    repos: int

    @property
    def per_repo_ms(self) -> float:
        return self.total_ms / self.repos


MARKUS2013 = [
    Published("create svn repos", "create", "svn", 119_184, 10_000),
    Published("create git repos", "create", "git", 120_582, 10_000),
    Published("create + commit test.txt, svn", "create+commit", "svn", 285_041, 10_000),
    Published("create + commit test.txt, git", "create+commit", "git", 223_160, 10_000),
]
MARKUS2013_DISK_MB = {"svn": 594.0, "git": 278.0}  # 20,000 repos each, half with the commit
MARKUS2013_DEFAULT_BACKENDS = "git-pygit2,svn-fs"
MARKUS2013_OPS = "create,create+commit"
MARKUS2013_PAYLOAD = "hello"


def _total_ms(bench: Benchmark) -> float | None:
    return bench.total_ms


def _pairs(backends: list[str], vcs_of: dict[str, str]) -> list[tuple[str, str]]:
    """(svn, git) backend pairs to put in ratio: like with like where both are present."""
    svn = [b for b in backends if vcs_of[b] == "svn"]
    git = [b for b in backends if vcs_of[b] == "git"]
    pairs = []
    for s in svn:
        kind = s.split("-", 1)[1]
        match = next((g for g in git if g.split("-", 1)[1] == kind), None)
        counterpart = {"fs": "git-pygit2", "cli": "git-cli", "pysvn": "git-pygit2"}.get(kind)
        chosen = match or (counterpart if counterpart in git else (git[0] if git else None))
        if chosen:
            pairs.append((s, chosen))
    return pairs


def markus2013_tables(files: list[Run]) -> dict[str, str]:
    """Markdown per filesystem: the blog's table with ours beside it, and svn/git ratios."""
    benches = [b for f in files for b in f.benchmarks]
    by_fs: dict[str, list[Benchmark]] = {}
    for bench in benches:
        by_fs.setdefault(bench.fs, []).append(bench)
    out: dict[str, str] = {}
    for fs, group in by_fs.items():
        vcs_of = {b.label: b.backend.vcs for b in group}
        index = {(b.label, b.op): b for b in group}
        backends = list(dict.fromkeys(b.label for b in group))
        rows = []
        for published in MARKUS2013:
            for backend in backends:
                found = index.get((backend, published.op))
                if found is None or vcs_of[backend] != published.vcs:
                    continue
                bench = found
                total = _total_ms(bench)
                rows.append(
                    [
                        published.label,
                        backend,
                        f"{bench.repos_ok:,}",
                        fmt_ms(total),
                        fmt_ms(total / bench.repos_ok if total is not None else None),
                        fmt_ms(bench.median_ms),
                        f"{published.total_ms:,.0f}",
                        f"{published.per_repo_ms:.1f}",
                        f"{bench.errors}",
                    ]
                )
        table = render_rows(
            [
                "operation",
                "backend",
                "N",
                "total ms for N",
                "ms/repo (mean)",
                "median ms",
                "2013 total ms (N=10,000)",
                "2013 ms/repo",
                "errors",
            ],
            rows,
        )
        ratio_rows = []
        for svn, git in _pairs(backends, vcs_of):
            for op, label in (("create", "create"), ("create+commit", "create + commit")):
                s, g = index.get((svn, op)), index.get((git, op))
                if s is None or g is None or s.median_ms is None or g.median_ms is None:
                    continue
                st, gt = _total_ms(s), _total_ms(g)
                published_s = next(p for p in MARKUS2013 if p.op == op and p.vcs == "svn")
                published_g = next(p for p in MARKUS2013 if p.op == op and p.vcs == "git")
                ratio_rows.append(
                    [
                        f"{label} time, {svn} / {git}",
                        fmt_ratio(st / gt if st and gt else None),
                        fmt_ratio(published_s.total_ms / published_g.total_ms),
                    ]
                )
            disk: dict[str, float] = {}
            for backend in (svn, git):
                parts = [index.get((backend, op)) for op in ("create", "create+commit")]
                totals = [p.metric("footprint_allocated").total for p in parts if p]
                if len(totals) == 2 and None not in totals:
                    disk[backend] = float(sum(t for t in totals if t is not None))
            if svn in disk and git in disk:
                n = sum(index[(svn, op)].repos for op in ("create", "create+commit"))
                ratio_rows.append(
                    [
                        f"disk allocated for {n:,} repos (N created + N with a commit), "
                        f"{svn} / {git}",
                        f"{fmt_num(disk[svn], MB)} MB / {fmt_num(disk[git], MB)} MB = "
                        f"{fmt_ratio(disk[svn] / disk[git])}",
                        f"594 MB / 278 MB = {fmt_ratio(594 / 278)} (20,000 repos)",
                    ]
                )
        ratios = render_rows(["svn / git", "this run", "2013"], ratio_rows)
        out[fs] = f"### markus2013 on {fs}\n\n{table}\n\n{ratios}\n"
    return out
