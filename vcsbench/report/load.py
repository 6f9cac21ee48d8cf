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
    Line,
    Paragraph,
    code,
    paragraph,
    strong,
    table,
)
from vcsbench.report.format import (
    errors_text,
    fmt_bytes,
    level_text,
    number,
    storage_text,
    writers_text,
)
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


def _path_notes(load: Load, entry: LoadPath) -> Paragraph:
    cap = entry.capacity
    lines: list[Line] = []
    if cap.level is None:
        lines.append((f"Capacity: none ({cap.reason}).",))
    else:
        lines.append(
            (
                "Capacity: ",
                strong(level_text(load, cap.level)),
                f" ({number(cap.ops_per_s)} ok/s, p95 {number(cap.p95_ms)} ms): {cap.rule}"
                + (
                    f"; ended by {cap.stopped}."
                    if cap.stopped
                    else "; the last step was still within it: more may fit."
                ),
            )
        )
    for row in entry.steps:
        if row.generator is not None and row.generator.behind:
            lines.append(
                (
                    strong("Warning"),
                    f": at {row.level:g} arrivals/s the load generator fell behind its "
                    f"schedule (p99 lag {row.generator.lag_ms_p99:,.1f} ms, over "
                    f"{row.generator.limit_ms:,.1f} ms): that step measures the generator "
                    "as much as the server; run fewer arrivals, or workers on more machines.",
                )
            )
    counted = [row.device for row in entry.steps if row.device is not None]
    ios = sum(d.throttle_write_ios or 0 for d in counted)
    requests = sum(d.write_requests for d in counted)
    if any(d.throttle_write_ios is not None for d in counted) and requests:
        lines.append(
            (
                f"The storage profile's limits counted {ios:,} write IOs for the device's "
                f"{requests:,} write requests ({ios / requests:,.1f} per request): it counts "
                "IOs as they are submitted, before the block layer merges adjacent ones into "
                "requests, and a disk seeks per request; above 1, the profile slows this "
                "path more than the disk it describes would.",
            )
        )
    written = [row for row in entry.steps if row.writers is not None]
    if written:
        lines.append(
            (
                "Who wrote to the device, per step (the top tasks by what the kernel charged "
                "them with, /proc/PID/io: "
                + (
                    "the servers' processes, others only where they held a file on the "
                    "device (another's writes elsewhere are no writer of it), "
                    if any(
                        row.writers is not None and row.writers.elsewhere_bytes is not None
                        for row in written
                    )
                    else "processes on any device, "
                )
                + "kernel threads named for this one; the rest of the device's writes "
                "charged to no task): "
                + "; ".join(
                    f"{level_text(load, row.level)}: {writers_text(row.writers)}"
                    for row in written
                    if row.writers is not None
                )
                + ".",
            )
        )
    if entry.locust_workers:
        lost = entry.workers_lost
        lines.append(
            (
                f"Locust: a master and {entry.locust_workers} worker processes"
                + (
                    f"; {len(lost)} worker(s) lost during the run ({', '.join(lost)}): the "
                    "steps after it ran on the rest."
                    if lost
                    else "."
                ),
            )
        )
    lines.append(_verification(load, entry))
    if load.shape == "closed":
        lines.append((CLOSED_LOOP_NOTE,))
    return Paragraph(tuple(lines))


def _verification(load: Load, entry: LoadPath) -> Line:
    """What reading back found: the scenario's own sentence, or for a file from before
    the scenarios wrote one, the sentence its scenario then had."""
    if entry.verification:
        return (entry.verification,)
    failures = entry.verify_failure_count
    if load.scenario == "shared":
        return (
            "Read the shared repository back afterwards: "
            + (
                "; ".join(entry.verify_failures[:3]) + " (counted as errors)."
                if failures
                else "one revision per successful commit, every committer's file as its "
                "last commit left it."
            ),
        )
    if load.scenario == "clone-storm":
        return (
            f"Checked {entry.verified_repositories:,} clones file by file; a wrong one "
            "counts as a ",
            code("verify"),
            " error.",
        )
    return (
        f"Verified {entry.verified_repositories:,} repositories, each after the step "
        "that wrote it"
        + (f"; {failures} failed (counted as errors)." if failures else ", all as committed."),
    )


CLOSED_LOOP_NOTE = (
    "A closed loop hides a stalled server from the percentiles: its clients wait for it and "
    "send less meanwhile, so a stall shows only in the max and in fewer sessions per "
    "second. The open loop (`--shape open`) times each session from its scheduled arrival, "
    "so a stall shows in p95 and p99."
)


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
                " makes them; each student's deadline repository is its own.",
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
        doc.add(_path_notes(load, entry))
    return doc


def server_lines(entry: LoadPath) -> list[str]:
    """What served the path (its transport, the credentials made for it) and the distance
    put before it, asked and measured."""
    lines = []
    server = entry.server or {}
    if server.get("summary"):
        made = [
            f"{what} {server[key][field]}"
            for key, what, field in (
                ("tls", "TLS with a certificate made for the run, sha256", "sha256"),
                ("ssh", "ssh with keys made for the run, host key", "host_key"),
            )
            if isinstance(server.get(key), dict) and field in server[key]
        ]
        forced = (server.get("ssh") or {}).get("forced_command")
        lines.append(
            f"Server: {server['summary']}"
            + (f"; {'; '.join(made)}" if made else "")
            + (f"; the key's one command: `{forced}`" if forced else "")
            + "."
        )
    present = entry.harness.get("present")
    if isinstance(present, dict):  # a result file is data: what is not a figure is "?"
        population = present.get("population")
        allocated = population.get("allocated_bytes") if isinstance(population, dict) else None
        total = allocated.get("total") if isinstance(allocated, dict) else None
        count, seconds = present.get("repositories"), present.get("fill_s")
        lines.append(
            f"Before the load: {count:,} repositories"
            if isinstance(count, int)
            else "Before the load: ? repositories"
        )
        lines[-1] += f" made by {str(present.get('built_by', '?'))[:40]}"
        if isinstance(seconds, (int, float)):
            lines[-1] += f" in {seconds:,.1f} s"
        if isinstance(total, int):
            lines[-1] += f", {fmt_bytes(total)} allocated"
        lines[-1] += "."
    distance = entry.distance
    if distance is not None:
        text = f"Distance: {distance.label} asked"
        if distance.measured_rtt_ms is not None:
            text += f", {distance.measured_rtt_ms:.2f} ms measured ({distance.method})"
        if distance.measured_bandwidth_kbit is not None:
            text += f", {distance.measured_bandwidth_kbit:,.0f} kbit/s measured"
        if distance.within_tolerance is False:
            text += "; **missed by more than 10%**: the figures are at the measured distance"
        lines.append(text + ".")
    return lines
