"""What a load report says under each access path's tables, in sentences: its capacity,
how it was served and at what distance, the storage it ran on, who wrote to its device,
the Locust workers, what reading the repositories back found, and the closed loop's
caveat.

Reads :class:`~vcsbench.results.load.Load` from the result model only.
"""

from __future__ import annotations

from vcsbench.report.document import Line, Paragraph, code, strong
from vcsbench.report.format import (
    fmt_bytes,
    level_text,
    number,
    writers_text,
)
from vcsbench.results.load import Load, LoadPath


def path_notes(load: Load, entry: LoadPath) -> Paragraph:
    """The sentences under a path's tables."""
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
