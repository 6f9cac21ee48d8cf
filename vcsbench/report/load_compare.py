"""``vcsbench compare`` of two load runs: each access path's steps set side by side, a
verdict on latency only where a step had enough sessions on both sides and the change is
beyond what two identical load runs differ by here (``RUN_DRIFT``), and errors that
differ named."""

from __future__ import annotations

from vcsbench.errors import VcsbenchError
from vcsbench.report.document import Document, Heading, paragraph, table
from vcsbench.report.format import level_text, number
from vcsbench.report.load import load_of
from vcsbench.results.load import Load, LoadPath
from vcsbench.results.load_step import LoadStep
from vcsbench.results.model import Run
from vcsbench.results.stats import mann_whitney_p

MIN_SESSIONS = 20
"""Successful sessions a step needs on each side before a difference there is a verdict."""
ALPHA = 0.05
RUN_DRIFT = 1.25
"""Two identical load runs 25 s apart on this project's machine type differed by up to
1.19x in a step's p95 with p < 1e-9 (git-daemon, 1-4 clients, 4 s steps): the rounds of
one run are not independent of the time it ran at. A verdict needs a p95 ratio beyond
this as well as a significant test."""


def _step_latencies(entry: LoadPath) -> dict[int, list[float]]:
    """Each step's successful sessions' latencies (s), by step index."""
    out: dict[int, list[float]] = {}
    raw = entry.raw
    for step, latency, error in zip(raw["step"], raw["latency_s"], raw["error"], strict=True):
        if error is None:
            out.setdefault(int(step), []).append(float(latency))
    return out


def _errors_differ(a: LoadStep, b: LoadStep) -> bool:
    """Whether the error shares of two steps differ beyond noise (two-proportion z > 3)."""
    if a.sessions < MIN_SESSIONS or b.sessions < MIN_SESSIONS:
        return False
    pa, pb = a.error_count / a.sessions, b.error_count / b.sessions
    pooled = (a.error_count + b.error_count) / (a.sessions + b.sessions)
    se = (pooled * (1 - pooled) * (1 / a.sessions + 1 / b.sessions)) ** 0.5
    return bool(se > 0 and abs(pa - pb) / se > 3)


def _verdict(
    load: Load, titles: tuple[str, str], caps: tuple[float | None, float | None], evidence: str
) -> str:
    """Which saturates later, only where the step that tells them apart differs beyond
    noise (``evidence``: empty when it does not, else what it shows)."""
    cap_a, cap_b = caps
    if (cap_a or 0) == (cap_b or 0):
        return "both saturate at the same step"
    later = titles[1] if (cap_b or 0) > (cap_a or 0) else titles[0]
    if evidence.startswith("beyond noise"):
        return f"**{later} saturates later** ({evidence})"
    return (
        f"{later} passed one more step, but {evidence}: not a verdict; rerun with longer "
        "steps (--step-seconds) on an idle machine"
    )


def compare_loads(base: Run, other: Run) -> Document:
    """Which run saturates later, per access path both ran (or the one each ran): the
    capacities, and at every step level both have p95, ok/s and device KiB written per
    session, with whether the latencies differ beyond noise (Mann-Whitney U over the
    step's successful sessions). A verdict is given only where the step that tells the
    two apart differs beyond noise."""
    a, b = load_of(base), load_of(other)
    if a.shape != b.shape or a.scenario != b.scenario:
        raise VcsbenchError(
            f"{other.path} is a {b.scenario} {b.shape}-loop run and {base.path} a "
            f"{a.scenario} {a.shape}-loop one; compare runs of one scenario and shape"
        )
    by_path = {e.label: e for e in b.paths}
    pairs = [(e, by_path[e.label]) for e in a.paths if e.label in by_path]
    if not pairs and len(a.paths) == len(b.paths) == 1:
        pairs = [(a.paths[0], b.paths[0])]
    if not pairs:
        raise VcsbenchError(f"{base.path} and {other.path} share no access path to compare")
    doc = Document(f"Load: {other.path} against {base.path} ({a.scenario}, {a.shape} loop)")
    for left, right in pairs:
        title_a = f"{left.label} on {left.fs}"
        title_b = f"{right.label} on {right.fs}"
        cap_a, cap_b = left.capacity.level, right.capacity.level
        lat_a, lat_b = _step_latencies(left), _step_latencies(right)
        right_steps = {row.level: (i, row) for i, row in enumerate(right.steps)}
        rows = []
        evidence = "no step both ran tells them apart"
        decisive = min(
            (
                row.level
                for row in left.steps
                if row.level in right_steps and row.level > min(cap_a or 0, cap_b or 0)
            ),
            default=None,
        )
        for index, row in enumerate(left.steps):
            if row.level not in right_steps:
                continue
            other_index, other_row = right_steps[row.level]
            xs, ys = lat_a.get(index, []), lat_b.get(other_index, [])
            enough = min(len(xs), len(ys)) >= MIN_SESSIONS
            p = mann_whitney_p(xs, ys) if xs and ys else None
            p95, p95_b = row.p95_ms, other_row.p95_ms
            shift = max(p95 / p95_b, p95_b / p95) if p95 and p95_b else 1.0
            beyond = enough and p is not None and p < ALPHA and shift > RUN_DRIFT
            if row.level == decisive:
                errors = _errors_differ(row, other_row)
                if beyond or errors:
                    evidence = (
                        "beyond noise at "
                        + level_text(a, row.level)
                        + (
                            f": p95 {number(row.p95_ms)} → {number(other_row.p95_ms)} ms, p={p:.3g}"
                            if beyond and p is not None
                            else ": error shares differ"
                        )
                    )
                elif enough and p is not None and p < ALPHA:
                    evidence = (
                        f"at {level_text(a, row.level)} the p95s differ by {shift:.2f}x, within "
                        f"what two identical runs differ by ({RUN_DRIFT:g}x)"
                    )
                elif not enough:
                    evidence = (
                        f"at {level_text(a, row.level)} only {min(len(xs), len(ys)):,} "
                        f"successful sessions on one side (a verdict needs {MIN_SESSIONS})"
                    )
                else:
                    evidence = (
                        f"at {level_text(a, row.level)} the latencies do not differ beyond "
                        f"noise (p={p:.2f}) nor the error shares"
                    )
            dev_a, dev_b = row.device, other_row.device
            rows.append(
                [
                    f"{row.level:g}",
                    number(p95),
                    number(p95_b),
                    f"{p95_b / p95:.2f}x" if p95 and p95_b else "—",
                    "—" if p is None else f"{p:.3g}" + ("" if enough else " (few)"),
                    number(row.ops_per_s),
                    number(other_row.ops_per_s),
                    number(dev_a.write_bytes_per_session / 1024) if dev_a else "—",
                    number(dev_b.write_bytes_per_session / 1024) if dev_b else "—",
                    f"{row.error_count:,}",
                    f"{other_row.error_count:,}",
                ]
            )
        if cap_a is None and cap_b is None:
            reasons = dict.fromkeys(c.reason for c in (left.capacity, right.capacity) if c.reason)
            verdict = "neither run has a capacity, so none is compared" + (
                f" ({'; '.join(reasons)})" if reasons else ""
            )
        else:
            verdict = _verdict(a, (title_a, title_b), (cap_a, cap_b), evidence)
        doc.add(
            Heading(f"{title_a} → {title_b}"),
            paragraph(f"Capacity: {level_text(a, cap_a)} → {level_text(a, cap_b)}: {verdict}."),
        )
        header = [
            "level", "p95 ms", "p95 ms (other)", "ratio", "p (latency)", "ok/s",
            "ok/s (other)", "device KiB/session", "device KiB/session (other)", "errors",
            "errors (other)",
        ]  # fmt: skip
        doc.add(table(header, rows, text_columns=0))
    doc.add(
        paragraph(
            f"p (latency): Mann-Whitney U over each step's successful sessions, two-sided; "
            f"(few): under {MIN_SESSIONS} sessions on a side, no verdict. A verdict also needs "
            f"the p95s {RUN_DRIFT:g}x apart: two runs are apart in time, and identical runs "
            "25 s apart have differed by 1.19x. Device KiB/session: "
            "the sandbox's device writes over the step per successful session (— where the "
            "device is shared or absent).",
            tone="note",
        )
    )
    return doc
