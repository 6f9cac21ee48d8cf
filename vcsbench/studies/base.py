"""What every study shares: the :class:`Study` (a benchmark study) and :class:`LoadStudy`
records, published figures, and the tables that set a run's variants side by side.

A study is one command: operations and payloads fixed, backends, filesystems and N
defaulted (a user may change those three), and tables that set this run's figures beside
the published ones where they exist, with ratios as the comparable part and the sources
named. A new study is a module in this package and a line in its registry.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from vcsbench.errors import without_secrets
from vcsbench.load.plan import LoadPlan
from vcsbench.load.run import run_load
from vcsbench.report.disk import disk_answer
from vcsbench.report.document import Document
from vcsbench.report.format import counted as measured
from vcsbench.report.format import fmt_metric, fmt_ms, fmt_num, fmt_ratio, render_rows
from vcsbench.report.formats import write
from vcsbench.report.load import load_document
from vcsbench.report.ratios import time_ratio as timed_ratio
from vcsbench.results.io import beside, writable_target, write_file
from vcsbench.results.metrics import DURABILITY_METRICS, KEPT_FOOTPRINT, METRICS
from vcsbench.results.model import Benchmark, Run
from vcsbench.sandbox.spec import parse_fs_spec

Tables = Callable[[list[Run]], dict[str, str]]
ANSWER = "answer"
"""A study's tables may hold its answer under this key: a paragraph or two that the
study's output prints first, under its title, before what it ran and how."""
KIB = 1024.0


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
    interleave: str = "auto"
    """``--interleave`` unless the user gives one: blocks for studies whose answer is a
    ratio between backends that ``auto`` would run one after the other."""


@dataclass(frozen=True)
class LoadStudy:
    name: str
    summary: str
    paths: str
    fs: str
    students: int
    closed_steps: str
    open_steps: str
    step_seconds: float
    max_clients: int
    payload: str
    source: str
    tables: Callable[[LoadStudy, Run, Run | None], str]
    """The study's own tables, from its closed-loop and its open-loop run (None where
    the study has no open loop)."""
    throttled: Throttled | None = None
    """The steps on a throttled disk (a storage profile), where each session costs so
    much more device time that the study's own steps would take hours."""
    scenario: str = "deadline"
    history: int = 100
    """clone-storm: the revisions of the repository every client clones."""
    age: str = "0"
    """The repositories the server holds before the load (``--age`` of ``load``;
    ``{students}`` in it: the students the study runs with)."""
    plan: str = ""
    """The capacity plan its tables give (``--plan`` of ``load``)."""

    @property
    def shapes(self) -> tuple[str, ...]:
        return ("closed", "open") if self.open_steps else ("closed",)

    def what(self, students: int) -> str:
        """Who the load is, for the study's heading."""
        if self.scenario == "clone-storm":
            return "clients cloning one repository at once"
        return f"{students:,} students at the deadline"


@dataclass(frozen=True)
class Throttled:
    closed_steps: str
    open_steps: str
    step_seconds: float
    step_sessions: int
    """At most this many sessions start in a step (0: no bound)."""
    why: str


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


def ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def cpu_ms(bench: Benchmark) -> float | None:
    value = bench.per_repo("cpu")
    return value * 1000 if value is not None else None


def groups(runs: list[Run]) -> dict[tuple[str, str, str], list[Benchmark]]:
    """Benchmarks by (filesystem, operation, payload), in the order the run made them."""
    groups: dict[tuple[str, str, str], list[Benchmark]] = {}
    for run in runs:
        for bench in run.benchmarks:
            groups.setdefault((bench.fs, bench.op, bench.payload.name), []).append(bench)
    return groups


def fs_note(fs: str) -> str:
    if fs.startswith("tmpfs"):
        return (
            " On tmpfs there is no device and fsync returns at once: durability costs "
            "nothing here, so differences are CPU only; run on ext4, xfs or btrfs for them."
        )
    return ""


def count_why(one: Benchmark, other: Benchmark) -> str:
    """Why ``one`` costs what it does beside ``other``, in their counted rounds' counts
    (instructions, fsync-family and write calls per operation); "" where either has none."""
    a, b = one.counted, other.counted
    if a is None or b is None or not a.rounds or not b.rounds:
        return ""
    parts = []
    ia, ib = a.figure("instructions"), b.figure("instructions")
    if ia is not None and ib:
        parts.append(f"{ia / ib:.2f}x the instructions ({ia / 1e6:.2f} M against {ib / 1e6:.2f} M)")
    for name, what in (("sync_calls", "fsync-family calls"), ("write_calls", "write calls")):
        va, vb = a.figure(name), b.figure(name)
        if va is not None and vb is not None:
            parts.append(f"{va:,.0f} {what} against {vb:,.0f}")
    return f" — in counts: {', '.join(parts)}" if parts else ""


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
    counted = measured(group, DURABILITY_METRICS)
    kept = measured(group, (KEPT_FOOTPRINT,))  # like with like: the ratio on the footprint as kept
    footprint = KEPT_FOOTPRINT if kept else "footprint_allocated"
    if published is not None:
        headers += list(published_headers)
    headers += [
        "CPU ms",
        "device write requests",
        *(METRICS[m].label for m in counted),
        "device KiB written",
        "device bytes ratio",
        "allocated KiB",
        *(["kept KiB", "kept ratio"] if kept else ["allocated ratio"]),
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
            time_ratio(bench, base),
        ]
        if published is not None:
            row += list(published(bench))
        requests = bench.per_repo("io_write_requests_device")
        row += [
            fmt_num(cpu_ms(bench), digits=2),
            fmt_num(requests, digits=1),
            *(fmt_metric(m, bench.per_repo(m)) for m in counted),
            fmt_num(bench.per_repo("io_write_device"), KIB),
            metric_ratio(bench, base, "io_write_device"),
            fmt_num(bench.per_repo("footprint_allocated"), KIB),
            *([fmt_num(bench.per_repo(KEPT_FOOTPRINT), KIB)] if kept else []),
            metric_ratio(bench, base, footprint),
            fmt_num(bench.per_repo("footprint_inodes"), digits=1),
            f"{bench.errors}",
        ]
        rows.append(row)
    return render_rows(headers, rows, text_columns=2 if durability else 1)


def time_ratio(bench: Benchmark, base: Benchmark | None) -> str:
    """``bench``'s time over ``base``'s with the interval that holds for how they ran
    (:mod:`vcsbench.report.ratios`; † where there is none)."""
    if base is None:
        return "—"
    if bench is base:
        return "1.00x"
    found = timed_ratio(bench, base)
    return found.text() if found else "—"


def metric_ratio(bench: Benchmark, base: Benchmark | None, name: str) -> str:
    if base is None:
        return "—"
    return fmt_ratio(ratio(bench.per_repo(name), base.per_repo(name)))


def footprint_metric(*benches: Benchmark | None) -> str:
    """The footprint to compare ``benches`` on: as kept where each of them has it (like
    with like, as a server holds them), else as written."""
    if all(b is not None and b.per_repo(KEPT_FOOTPRINT) is not None for b in benches):
        return KEPT_FOOTPRINT
    return "footprint_allocated"


def first(group: list[Benchmark], test: Callable[[Benchmark], bool]) -> Benchmark | None:
    return next((b for b in group if test(b)), None)


PER_REPO_NOTE = (
    "Figures per repository (per round): median of the verified rounds; CPU, device write "
    "requests and KiB written are means; allocated KiB and inodes are what the repositories "
    "hold at the end, divided by N; kept KiB (where shown) what they hold after each VCS's "
    "own maintenance (git gc, svnadmin pack; Mercurial as written), and the footprint ratio "
    "is of it. Time ratios carry an interval by block where the "
    "variants ran interleaved, else from the machine's run-to-run spread where the results "
    "record it, else none (†)."
)


def storage_tables(title: str, about: str) -> Tables:
    def tables(runs: list[Run]) -> dict[str, str]:
        out: dict[str, str] = {}
        for (fs, op, payload), group in groups(runs).items():
            # Each variant against its backend with every option at its default.
            labels = {b.label: b for b in group}
            table = variant_table(group, {b.label: labels.get(b.backend.name) for b in group})
            notes = (
                f"`{op}` of `{payload}`. {about} Ratios: each variant against its backend "
                f"with default options. {PER_REPO_NOTE}{fs_note(fs)} No figures for "
                "these choices are published to set beside this run's."
            )
            heading = f"### {title} on {fs}: {op}, {payload}"
            out[f"{fs}/{op}/{payload}"] = f"{heading}\n\n{table}\n\n_{notes}_\n"
        return out

    return tables


def _plan(
    study: LoadStudy, shape: str, paths: str, fs: str, seconds: float, students: int
) -> LoadPlan:
    steps = {"closed": study.closed_steps, "open": study.open_steps}[shape]
    sessions = 0
    if study.throttled is not None and parse_fs_spec(fs).limits:
        throttled = study.throttled
        steps = {"closed": throttled.closed_steps, "open": throttled.open_steps}[shape]
        sessions = throttled.step_sessions
    return LoadPlan.parse(
        scenario=study.scenario,
        history=study.history,
        paths=paths,
        fs=fs,
        students=students,
        steps=steps,
        step_seconds=seconds,
        step_ops=sessions,
        payload=study.payload,
        precreate=False,
        capacity_factor=2.0,
        shape=shape,
        max_clients=study.max_clients,
        age=study.age.format(students=students),
        plan=study.plan,
    )


def run_load_study(
    study: LoadStudy,
    out: Path,
    paths: str | None,
    fs: str | None,
    seconds: float | None,
    students: int | None = None,
) -> str:
    """Run the study's closed and open loops; write both result files and the Markdown."""
    paths = paths or study.paths
    fs = fs or study.fs
    students = students or study.students
    throttled = study.throttled if parse_fs_spec(fs).limits else None
    seconds = seconds or (throttled.step_seconds if throttled else study.step_seconds)
    command = ["vcsbench", *sys.argv[1:]]
    open_out = beside(out, "-open.json" + (".gz" if out.name.endswith(".gz") else ""))
    if "open" in study.shapes:
        writable_target(open_out, "the open-loop results beside --out,")
    plans = [_plan(study, shape, paths, fs, seconds, students) for shape in study.shapes]
    closed = run_load(plans[0], out, command)
    open_ = run_load(plans[1], open_out, command) if len(plans) > 1 else None
    steps = ""
    if throttled is not None:
        steps = (
            f"On this throttled disk the study runs {throttled.closed_steps} clients and "
            f"{throttled.open_steps} arrivals/s, at most {throttled.step_sessions} sessions "
            f"a step: {throttled.why}. "
        )
    results = f"`{out}` (closed loop)" + (f", `{open_out}` (open loop)" if open_ else "")
    deadline = plans[0].deadline
    # the answer first: what the device did per submission on each path, and what the
    # deadline asks of it (the same blocks as the report's)
    answer = write([Document("", disk_answer(closed.load, deadline))], "md") if closed.load else ""
    header = (
        f"# {study.name}: {study.what(students)} on {fs}\n\n"
        + (f"{answer}\n" if answer.strip() else "")
        + f"{study.summary[0].upper()}{study.summary[1:]}. Ran here: "
        f"{', '.join(p.name for p in plans[0].paths)}. {steps}{seconds:g} s per step; "
        f"latency is each session's wall time (open loop: from its scheduled arrival); "
        f"{closed.load.session if closed.load else ''}.\n\n"
        f"Results: {results}; command: `{without_secrets(shlex.join(command))}`\n\n"
    )
    text = header + study.tables(study, closed, open_)
    detail = write(
        [load_document(run, deadline) for run in (closed, open_) if run is not None], "md"
    )
    write_file(beside(out, ".md"), text + "\n" + detail, "the table")
    return text
