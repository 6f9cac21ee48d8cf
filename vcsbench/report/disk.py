"""The disk answer of a load: per access path what the sandbox's block device did per
successful session (write requests, flushes, bytes) and where its capacity lies between
the measured steps; the pairs of paths side by side; with a deadline, the capacity plan.

Reads :class:`~vcsbench.results.load.Load` from the result model only.
"""

from __future__ import annotations

from vcsbench.report.document import Block, Heading, lines_of, paragraph, table
from vcsbench.report.format import level_text, number
from vcsbench.results.deadline import Deadline, PerSession, need
from vcsbench.results.load import Load, LoadPath


def per_session(entry: LoadPath) -> PerSession | None:
    """The device's writes and flushes per successful session over every step they were
    counted in (None: no step had the device and a successful session)."""
    seen = [row for row in entry.steps if row.device is not None and row.ok]
    ok = sum(row.ok for row in seen)
    if not ok:
        return None
    devices = [row.device for row in seen if row.device is not None]
    flushes = [d.flush_requests for d in devices]
    return PerSession(
        sessions=ok,
        write_requests=sum(d.write_requests for d in devices) / ok,
        write_bytes=sum(d.write_bytes for d in devices) / ok,
        flushes=None if None in flushes else sum(f or 0 for f in flushes) / ok,
    )


def capacity_bracket(load: Load, entry: LoadPath) -> str:
    """Where the capacity lies between the measured steps: never one step's figure as if
    it were the limit."""
    levels = sorted({row.level for row in entry.steps})
    cap = entry.capacity.level
    if not levels:
        return "not measured"
    if cap is None:
        return f"below {level_text(load, levels[0])} (the first step)"
    above = [level for level in levels if level > cap]
    if not above:
        return f"not reached: {level_text(load, cap)} (the last step) held"
    return f"between {cap:g} and {level_text(load, above[0])}"


def _ratio(a: float | None, b: float | None) -> str:
    """``a`` over ``b``; none where ``b`` shows as 0.0 (a ratio to a figure that rounds
    to nothing says nothing a reader can use)."""
    return f"{a / b:,.2f}x" if a is not None and b is not None and round(b, 1) else "—"


def pair_lines(load: Load) -> list[str]:
    """A line per pair of access paths of different VCSs (of any two, where the run has
    one VCS) at the same distance, in the run's order: what the device did per session
    on each (counts: they do not drift), and where each one's capacity lies."""
    entries = [entry for entry in load.paths if entry.steps]
    cross = {entry.vcs for entry in entries}
    lines = []
    for i, a in enumerate(entries):
        for b in entries[i + 1 :]:
            apart = (a.distance.label if a.distance else "") != (
                b.distance.label if b.distance else ""
            )
            if (len(cross) > 1 and a.vcs == b.vcs) or apart:
                continue
            pa, pb = per_session(a), per_session(b)
            parts = []
            if pa is not None and pb is not None:
                requests = _ratio(pa.write_requests, pb.write_requests)
                parts.append(
                    f"per session, device write requests {requests} "
                    f"({pa.write_requests:,.1f} / {pb.write_requests:,.1f})"
                )
                if pa.flushes is not None and pb.flushes is not None:
                    parts.append(
                        f"flushes {_ratio(pa.flushes, pb.flushes)} "
                        f"({pa.flushes:,.1f} / {pb.flushes:,.1f})"
                    )
                parts.append(
                    f"KiB written {_ratio(pa.write_bytes, pb.write_bytes)} "
                    f"({pa.write_bytes / 1024:,.1f} / {pb.write_bytes / 1024:,.1f})"
                )
            parts.append(f"capacity {capacity_bracket(load, a)} / {capacity_bracket(load, b)}")
            lines.append(f"{a.label} / {b.label}: " + "; ".join(parts) + ".")
    return lines


def disk_answer(load: Load, deadline: Deadline | None = None) -> list[Block]:
    """The disk question first: per access path what the device did per successful
    session and where its capacity lies; with a deadline, what that many submissions in
    that window ask of the disk, beside what the sandbox's storage profile delivered."""
    entries = [entry for entry in load.paths if entry.steps]
    if not entries:
        return []
    if all(per_session(entry) is None for entry in entries):
        kinds = ", ".join(dict.fromkeys(entry.fs for entry in entries))
        return [
            Heading("The disk answer"),
            paragraph(
                f"None here: {kinds} gave no block device of the sandbox's own to count "
                "(a tmpfs is memory; a directory shares the machine's disk), so no write "
                "requests, flushes or bytes a session, and no capacity plan. Run with --fs "
                "ext4 (or xfs, btrfs: a loop device of the run's own) for the disk answer."
            ),
        ]
    header = [
        "access path", "fs", "sessions counted", "device write requests/session",
        "device flushes/session", "device KiB written/session", "capacity",
    ]  # fmt: skip
    if deadline is not None:
        header += ["write IOPS needed", "flushes/s needed", "MB/s needed", "storage delivers"]
    rows = []
    for entry in entries:
        per = per_session(entry)
        row = [
            entry.label,
            entry.fs,
            f"{per.sessions:,}" if per else "—",
            number(per.write_requests) if per else "—",
            number(per.flushes) if per else "—",
            number(per.write_bytes / 1024) if per else "—",
            capacity_bracket(load, entry),
        ]
        if deadline is not None:
            wanted = need(deadline, per) if per else None
            row += [
                number(wanted.write_iops) if wanted else "—",
                number(wanted.flushes_per_s) if wanted else "—",
                number(wanted.write_bytes_per_s / 1e6) if wanted else "—",
                delivers(entry),
            ]
        rows.append(row)
    out: list[Block] = [
        Heading("The disk answer"),
        paragraph(
            "Per successful session, over every step: what the sandbox's block device did "
            "(write requests, completed cache flushes with the harness's own syncfs left "
            "out, KiB written); counts, which do not drift between runs. Capacity: between "
            "the last step within the rule and the next one measured."
        ),
        table(header, rows, text_columns=2),
    ]
    durability = durability_line(entries)
    if durability:
        out.append(paragraph(durability, tone="warning"))
    if deadline is not None:
        out.append(
            paragraph(
                f"Capacity plan: {deadline.students:,} submissions in "
                f"{deadline.window_text()} are {deadline.sessions_per_s:,.2f} sessions/s if "
                "spread evenly; each figure needed is that rate times the measured figure "
                "per session. A deadline's last minutes are steeper than even: size for "
                "the peak you expect as a multiple of these. "
                + " ".join(within_capacity(load, entry, deadline) for entry in entries)
            )
        )
    pairs = pair_lines(load)
    if pairs:
        out += [
            Heading("Between access paths", 3),
            lines_of(*pairs),
            paragraph(
                "The paths' steps ran one after the other: the device's counts do not "
                "drift, a throughput between them would, so none is set against another.",
                tone="note",
            ),
        ]
    return out


FLUSHED = 1.0
"""Device flushes a session at which every commit reached the device before it was
acknowledged (at least one each); fewer: commits the device was not told to keep."""


def durability_line(entries: list[LoadPath]) -> str:
    """Where the paths differ in durability (each session's commit flushed to the device,
    or not), one sentence that says so, with each path's flushes a session: the rows
    then set durable commits against ones a crash may lose. "" where they do not differ
    (or no device counted flushes)."""
    flushed: dict[bool, list[tuple[LoadPath, float]]] = {True: [], False: []}
    for entry in entries:
        per = per_session(entry)
        if per is not None and per.flushes is not None:
            flushed[per.flushes >= FLUSHED].append((entry, per.flushes))
    if not flushed[True] or not flushed[False]:
        return ""
    durable, not_durable = (
        ", ".join(f"{e.label} {f:,.1f}" for e, f in flushed[side]) for side in (True, False)
    )
    missing = sorted({e.vcs for e, _ in flushed[False]} - {e.vcs for e, _ in flushed[True]})
    advice = (
        f" For like with like, run a durable {' and '.join(missing)} path beside"
        + (" (git: local:git-pygit2[fsync=true])" if "git" in missing else "")
        + "."
        if missing
        else ""
    )
    return (
        f"Durability differs between these paths: {durable} device flushes a session (each "
        f"commit on the device before it is acknowledged) against {not_durable} (commits "
        "acknowledged before the device keeps them: a crash may lose them); their figures "
        "set durable commits against ones that are not." + advice
    )


def delivers(entry: LoadPath) -> str:
    """What the sandbox's storage profile delivered when it was made (measured)."""
    throttle = entry.filesystem.throttle if entry.filesystem is not None else None
    if throttle is None:
        return "no storage profile"
    parts = []
    if "write_iops" in throttle.measured:
        parts.append(f"{throttle.measured['write_iops']:,.0f} write IOPS")
    if "write_bps" in throttle.measured:
        parts.append(f"{throttle.measured['write_bps'] / 1e6:,.1f} MB/s")
    return f"{throttle.profile}: " + (", ".join(parts) or "no write limit") + " (measured)"


def within_capacity(load: Load, entry: LoadPath, deadline: Deadline) -> str:
    """Whether the deadline's even rate is within the successful sessions per second
    measured at the path's capacity."""
    cap = entry.capacity
    rate = deadline.sessions_per_s
    if cap.ops_per_s is None:
        return f"{entry.label}: no capacity was measured."
    where = f"{cap.ops_per_s:,.1f} ok/s at {level_text(load, cap.level)}"
    if rate <= cap.ops_per_s:
        return f"{entry.label}: within what was measured ({where})."
    return f"{entry.label}: **beyond** what was measured ({where})."
