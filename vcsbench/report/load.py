"""Load runs in reports and comparisons: per access path a row per step and the capacity;
two runs compared by where each saturates.

Reads :class:`~vcsbench.results.load.Load` from the result model only.
"""

from __future__ import annotations

from vcsbench.errors import VcsbenchError
from vcsbench.report.disk import disk_answer
from vcsbench.report.document import (
    Document,
    Heading,
    Items,
    code,
    paragraph,
    strong,
    table,
)
from vcsbench.report.format import (
    errors_text,
    number,
    storage_text,
)
from vcsbench.report.load_notes import path_notes, server_lines
from vcsbench.results.deadline import Deadline
from vcsbench.results.load import Load, LoadPath
from vcsbench.results.load_step import LoadStep
from vcsbench.results.model import Run


def load_of(run: Run) -> Load:
    if run.load is None:
        raise VcsbenchError(f"{run.path}: not a load result (written by 'vcsbench load')")
    return run.load


def _session_text(load: Load) -> str:
    if load.session:  # in words, by the scenario that ran
        return load.session
    # Result files written before the scenarios said it themselves.
    if load.scenario == "shared":
        return (
            "a commit into one shared repository, each client rewriting a file of its own; "
            "a commit refused because another landed first (git: not a fast-forward, svn: "
            "out of date) is updated and tried again, and counted as a retry"
        )
    if load.scenario == "clone-storm":
        return (
            f"a clone (svn: a checkout) of one repository of {load.history} revisions "
            f"(the `{load.payload}` payload, then one small file rewritten per revision), "
            "checked file by file afterwards, untimed"
        )
    return (
        "a commit" if load.precreate else "a first visit creates the repository, then a commit"
    ) + f" of the `{load.payload}` payload and a line that changes"


def _step_cells(load: Load, row: LoadStep) -> list[str]:
    lat = row.latency_ms
    device = row.device
    cells = [f"{row.level:g}"]
    if load.shape == "open":
        lag = row.generator.lag_ms_p99 if row.generator else None
        cells += [number(row.offered_per_s), number(lag)]
    return [
        *cells,
        f"{row.sessions:,}",
        number(row.ops_per_s),
        *(number(lat[k]) for k in ("p50", "p90", "p95", "p99", "max")),
        errors_text(row.errors),
        f"{row.retries:,}",
        number(device.write_bytes_per_session / 1024) if device else "—",
        number(device.write_requests_per_session) if device else "—",
        number(device.write_bytes / row.duration_s / 1e6) if device and row.duration_s else "—",
        number(device.write_requests / row.duration_s) if device and row.duration_s else "—",
        number(row.server_cpu_s * 1000 / (row.ok or 1)),
        number(row.system.get("iowait_pct_mean")),
        number(row.system.get("io_pressure_some_pct")),
    ]


def _kind_rows(load: Load, entry: LoadPath) -> list[list[str]]:
    """A mixed run's steps by kind: each kind's sessions, its share, its percentiles."""
    return [
        [
            f"{row.level:g}",
            kind,
            f"{found.sessions:,}",
            f"{100 * found.sessions / (row.sessions or 1):.0f}%",
            *(number(found.latency_ms[k]) for k in ("p50", "p95", "p99", "max")),
            errors_text(found.errors),
        ]
        for row in entry.steps
        for kind, found in sorted(row.kinds.items(), key=lambda item: _order(load, item[0]))
    ]


def _order(load: Load, kind: str) -> int:
    """A kind's place: as ``--mix`` listed it (a step lists its kinds as they came)."""
    kinds = list(load.mix)
    return kinds.index(kind) if kind in kinds else len(kinds)


KIND_HEADER = ["kind", "sessions", "share", "p50 ms", "p95 ms", "p99 ms", "max ms", "errors"]


def _step_header(load: Load) -> list[str]:
    first = ["clients"] if load.shape == "closed" else [
        "arrivals/s", "offered/s", "generator lag p99 ms",
    ]  # fmt: skip
    return [
        *first,
        "sessions",
        "ok/s",
        "p50 ms",
        "p90 ms",
        "p95 ms",
        "p99 ms",
        "max ms",
        "errors",
        "retries",
        "device KiB/session",
        "device writes/session",
        "device MB/s written",
        "device writes/s",
        "server CPU ms/session",
        "iowait %",
        "IO stall % (some)",
    ]


def load_document(run: Run, deadline: Deadline | None = None) -> Document:
    """The disk answer first (with a capacity plan for ``deadline``), then per access
    path a row per step and the capacity; for pasting into an RFC (any report format;
    ``formats.csv.loads`` gives the figures as CSV)."""
    load = load_of(run)
    if load.shape == "closed":
        pause = load.think_s
        loop = (
            "closed loop: each step's clients submit back to back"
            if not pause
            else (
                "closed loop: each step's clients submit, each pausing "
                + (f"{pause[0]:g} s" if pause[0] == pause[1] else f"{pause[0]:g}-{pause[1]:g} s")
                + " between its sessions (untimed; drawn evenly, seeded per client)"
            )
        )
    else:
        schedule = (
            f"at Poisson times (exponential gaps at the step's rate, seed {load.arrivals.seed})"
            if load.arrivals.kind == "poisson"
            else "on a fixed schedule"
        )
        loop = (
            f"open loop: sessions arrive {schedule}, up to {load.max_clients} clients busy at once"
        )
    mix = ", ".join(f"{kind} {weight}" for kind, weight in load.mix.items())
    doc = Document(
        f"Load: {load.scenario}"
        + (f" ({mix})" if mix else "")
        + f", {load.shape} loop"
        + (f", {load.students:,} students" if load.scenario in ("deadline", "mixed") else "")
    )
    doc.add(
        paragraph(
            f"Each session: {_session_text(load)}; {loop}; {load.step_seconds:g} s per step. "
            f"Latency: {load.latency}; percentiles over the step's successful sessions."
        ),
        Items((("results", run.path), ("command", run.command)), frozenset({"results", "command"})),
    )
    if load.age:
        what = (
            (" (", code(load.population), ", with their histories)")
            if load.population
            else (" (as created, empty)",)
        )
        doc.add(
            paragraph(
                f"The server held {load.age:,} repositories before the load",
                *what,
                ", made as ",
                code("vcsbench run --age"),
                " makes them"
                + (
                    f" and packed as a server keeps them; each of the {load.students:,} "
                    "students committed into its own repository of the term."
                    if load.into_term
                    else "; each student's deadline repository was a new one, beside them."
                ),
            )
        )
    if load.interrupted:
        doc.add(paragraph(strong("Interrupted"), f": {load.interrupted}."))
    doc.add(*disk_answer(load, deadline))
    for entry in load.paths:
        doc.add(Heading(f"{entry.label} ({entry.vcs}) on {entry.fs}"))
        for line in server_lines(entry):
            doc.add(paragraph(line))
        throttle = entry.filesystem.throttle if entry.filesystem is not None else None
        if throttle is not None:
            doc.add(paragraph(f"Storage: {storage_text(throttle)}."))
            for problem in throttle.problems:
                doc.add(
                    paragraph(
                        strong("Warning"), f": the storage profile was not honoured: {problem}."
                    )
                )
        if entry.steps:
            rows = [_step_cells(load, row) for row in entry.steps]
            doc.add(table(_step_header(load), rows, text_columns=0))
        by_kind = _kind_rows(load, entry)
        if by_kind:
            first = "clients" if load.shape == "closed" else "arrivals/s"
            doc.add(
                paragraph(
                    "By kind of session (weights "
                    + mix
                    + "; each process takes kinds in turn by weight, an update only for a "
                    "student whose commit succeeded before):"
                ),
                table([first, *KIND_HEADER], by_kind, text_columns=2),
            )
        if entry.failure:
            doc.add(paragraph(strong("Could not be run"), f": {entry.failure}."))
            if not entry.steps:
                continue
        doc.add(path_notes(load, entry))
    return doc
