"""Load studies: a published account of load, run again over the real servers.

``markus2011``: MarkUs's course server at a submission deadline in 2011 became IO-bound
when hundreds of students submitted at once (response times of 20 s, 30-50 % iowait,
the ext4 journal the top writer). The study storms ext4 with 800 students over each
access path, closed loop from 1 to 128 clients at once, and sends the tsung pair of
open-loop runs (an arrival every 500 ms, "stable", and every 50 ms, "overload").
"""

from __future__ import annotations

from collections.abc import Callable

from vcsbench.load.figures import capacity_rule
from vcsbench.report.disk import capacity_bracket, per_session
from vcsbench.report.format import cell, errors_text, fmt_bytes, writers_text
from vcsbench.results import Run
from vcsbench.results.load import Load, LoadPath
from vcsbench.results.load_step import LoadStep
from vcsbench.results.writers import Writers
from vcsbench.studies.base import LoadStudy, Throttled


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f}"


def _load(run: Run) -> Load:
    assert run.load is not None
    return run.load


def study_tables(study: LoadStudy, closed: Run, open_: Run | None) -> str:
    """The study's two tables: per access path the closed-loop capacity, p95 at each step,
    device bytes per submission and the share no process wrote; then the open-loop pair."""
    assert open_ is not None  # the study has its open-loop pair
    loads = _load(closed).paths
    levels = [f"{row.level:g}" for row in loads[0].steps] if loads else []
    opened = _load(open_).paths
    arrivals = [row.level for row in opened[0].steps if row.level > 0] if opened else []
    lines = [
        f"### Closed loop: 1 to {levels[-1] if levels else '?'} students submitting at once",
        "",
        "| access path | device write requests per submission | device flushes per "
        "submission | device KiB per submission | capacity | p95 ms at "
        + " / ".join(levels)
        + " clients | errors past capacity | of the KiB, written by no server process "
        "| iowait % at the top step | top writers at the top step |",
        "|---|---:|---:|---:|---|---|---|---:|---:|---|",
    ]
    for entry in loads:
        steps = entry.steps
        level = entry.capacity.level
        p95 = " / ".join(_ms(row.p95_ms) for row in steps)
        past = [row for row in steps if level is None or row.level > level]
        errors: dict[str, int] = {}
        for row in past:
            for kind, count in row.errors.items():
                errors[kind] = errors.get(kind, 0) + count
        devices = [row.device for row in steps if row.device is not None and row.ok]
        written = sum(device.write_bytes for device in devices)
        counted = all(device.server_process_write_bytes is not None for device in devices)
        process = sum(device.server_process_write_bytes or 0 for device in devices)
        share = f"{max(0.0, 1 - process / written):.0%}" if written and counted else "—"
        per = per_session(entry)
        device_cells = " | ".join(
            "—" if value is None else f"{value:,.1f}"
            for value in (
                (per.write_requests, per.flushes, per.write_bytes / 1024) if per else (None,) * 3
            )
        )
        top = steps[-1].system.get("iowait_pct_mean") if steps else None
        cap_text = capacity_bracket(_load(closed), entry)
        found = steps[-1].writers if steps else None
        writers = "—" if found is None else cell(writers_text(found, limit=2))
        lines.append(
            f"| {cell(entry.label)} | {device_cells} | {cap_text} | {p95} | {errors_text(errors)} "
            f"| {share} "
            f"| {'—' if top is None else f'{top:.0f}'} | {writers} |"
        )
    lines += [
        "",
        f"Capacity: {capacity_rule(2.0)}. Written by no server process: the device's "
        "bytes beyond what the server's "
        "processes were charged with in /proc (the journal, metadata); 0% where they were "
        "charged with more (files rewritten or removed before writeback), — where they "
        "cannot be seen (Apache's CGI processes for git are reaped unseen).",
        "",
        *account(loads),
        "",
        "### Open loop (tsung's): "
        + " and ".join(f"a session every {1000 / level:,.0f} ms" for level in arrivals),
        "",
        "| access path | arrivals/s | p50 ms | p95 ms | p99 ms | max ms | errors "
        "| generator lag p99 ms |",
        "|---|---:|---:|---:|---:|---:|---|---:|",
    ]
    for entry in _load(open_).paths:
        for row in entry.steps:
            lat = row.latency_ms
            generator = row.generator
            lag = "—" if generator is None else f"{generator.lag_ms_p99:,.1f}"
            flag = " (behind)" if generator is not None and generator.behind else ""
            lines.append(
                f"| {cell(entry.label)} | {row.level:g} | {_ms(lat['p50'])} | {_ms(lat['p95'])} "
                f"| {_ms(lat['p99'])} | {_ms(lat['max'])} | {errors_text(row.errors)} "
                f"| {lag}{flag} |"
            )
    lines += ["", f"_Published: {study.source}._"]
    return "\n".join(lines) + "\n"


def _journal_rank(found: Writers | None) -> str:
    """Where the ext4 journal's thread stands among a step's top writers."""
    if found is None:
        return "—"
    for rank, writer in enumerate(found.top, 1):
        if writer.kernel_thread and writer.name.startswith("jbd2/"):
            return f"{_ORDINALS.get(rank, f'{rank}th')} ({fmt_bytes(writer.write_bytes)})"
    return f"not among the top {len(found.top)}"


_ORDINALS = {1: "1st", 2: "2nd", 3: "3rd"}


def account(loads: tuple[LoadPath, ...] | list[LoadPath]) -> list[str]:
    """The 2011 account beside this run's top step, point by point, per access path."""
    if not loads:
        return []
    tops = [entry.steps[-1] if entry.steps else None for entry in loads]

    def row(what: str, published: str, shown: Callable[[LoadStep], str]) -> str:
        cells = [shown(step) if step is not None else "—" for step in tops]
        return f"| {what} | {published} | " + " | ".join(cells) + " |"

    def iowait(step: LoadStep) -> str:
        value = step.system.get("iowait_pct_mean")
        return "—" if value is None else f"{value:.0f} %"

    def p95(step: LoadStep) -> str:
        return "—" if step.p95_ms is None else f"{step.p95_ms / 1000:,.1f} s"

    return [
        "### The 2011 account beside this run's top step",
        "",
        "| | 2011 | " + " | ".join(cell(entry.label) for entry in loads) + " |",
        "|---|---|" + "---:|" * len(loads),
        row("iowait", "30-50 %", iowait),
        row("response time (p95)", "20 s", p95),
        row(
            "the ext4 journal (jbd2) among the writers",
            "the top writer in iotop",
            lambda s: _journal_rank(s.writers),
        ),
    ]


STUDY = LoadStudy(
    "markus2011",
    "the submission deadline storm on ext4 over svn (bindings, svnserve, mod_dav_svn) and "
    "git (libgit2, smart HTTP), 1 to 128 clients at once, and the tsung open-loop pair",
    "local:svn-fs,svnserve,apache-svn,local:git-pygit2,apache-git",
    "ext4:size=8G",
    800,
    "1,2,4,8,16,32,64,128",
    "2,20",
    8.0,
    32,
    "submission",
    "2011: MarkUs's course server at a submission deadline (Subversion through its Ruby "
    "bindings on ext4): response times of 20 s, 30-50 % iowait, the ext4 journal the top "
    "writer; the tsung runs sent a session every 500 ms (stable) and every 50 ms (overload)",
    study_tables,
    Throttled(
        "1,4,16",
        "2",
        5.0,
        16,
        "at the profile's IO rates a submission over svn costs seconds of the device's "
        "time (32 clients at once made a 165 s step on hdd here), so the study's 1 to 128 "
        "clients and the 20/s overload would take about an hour; the bound on sessions "
        "keeps a step of git, which writes without fsync, from piling up what the device "
        "then writes for minutes",
    ),
    age="term:students={students},assignments=2,commits=1-12",
    plan="students=10000,window=60m",
)
