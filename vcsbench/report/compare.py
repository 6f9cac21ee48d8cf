"""``vcsbench compare``: runs compared (:mod:`vcsbench.judge.comparison`), written for a
person: each run's median, the ratio with its interval and the verdict or why there is
none, the figures that do not drift, what differs between the environments, and how the
verdicts were reached."""

from __future__ import annotations

import math

from vcsbench.judge.comparison import (
    COMPARED_METRICS,
    ROUNDS_ALPHA,
    STEADY,
    Change,
    Pair,
)
from vcsbench.judge.count_changes import FLOOR
from vcsbench.judge.count_changes import STEADY as STEADY_COUNT
from vcsbench.judge.verdict import ALPHA, Between
from vcsbench.report.document import Document, lines_of, table
from vcsbench.report.environment import payload_digests
from vcsbench.report.format import fmt_metric, fmt_ms
from vcsbench.results.drifting import OTHERS_CPU, UNDER
from vcsbench.results.metrics import CALL_METRICS, DURABILITY_METRICS, METRICS
from vcsbench.results.model import Benchmark, Run
from vcsbench.results.spread import SpreadCell

MEMORY_TOLERANCE = 0.01
"""Memory sizes within 1% are the same machine: MemTotal moves with kernel reservations."""


def _describe_fs(bench: Benchmark) -> str:
    return f"{bench.filesystem.fstype} ({bench.filesystem.mount_options})"


def payload_content_differences(bases: list[Run], others: list[Run]) -> tuple[str, str] | None:
    """Payloads of one name whose content differs between the sides (another SHA-256 of
    their files): the same name, not the same work. None where every shared name agrees."""

    b, o = payload_digests(bases), payload_digests(others)
    differ = sorted(name for name in b.keys() & o.keys() if b[name] != o[name])
    if not differ:
        return None

    def text(side: dict[str, set[str]]) -> str:
        return "; ".join(
            f"{name} sha256 {', '.join(d[:12] for d in sorted(side[name]))}" for name in differ
        )

    return text(b), text(o) + " (the same name, other files)"


def environment_differences(base: Run, other: Run) -> dict[str, tuple[str, str]]:
    """What differs between the two runs' environments, by category."""
    diffs: dict[str, tuple[str, str]] = {}
    mb, mo = base.machine, other.machine
    for key in ("cpu_model", "cpu_count", "memory_bytes", "kernel", "distribution", "python"):
        b_value, o_value = getattr(mb, key), getattr(mo, key)
        if key == "memory_bytes" and abs(b_value - o_value) <= MEMORY_TOLERANCE * max(b_value, 1):
            continue  # the kernel's own reservations move MemTotal by a few KiB
        if b_value != o_value:
            diffs[key] = (str(b_value), str(o_value))
    b_repos = sorted({b.rounds_asked or b.repos for b in base.benchmarks})
    o_repos = sorted({b.rounds_asked or b.repos for b in other.benchmarks})
    if b_repos != o_repos:
        diffs["repositories per benchmark"] = (
            ", ".join(f"{n:,}" for n in b_repos),
            ", ".join(f"{n:,}" for n in o_repos),
        )

    content = payload_content_differences([base], [other])
    if content:
        diffs["payload content"] = content

    def collect(result: Run, what: str, label: bool = True) -> str:
        """One category's values over the run's benchmarks; ``label``: each backend's
        named as its variant (``git-pygit2[delay=900us]``), else by its name, so that a
        variant's label alone does not make its versions and options differ."""
        values: list[str] = []
        for bench in result.benchmarks:
            who = bench.label if label else bench.backend.name
            if what == "filesystem":
                values.append(_describe_fs(bench))
            elif what == "disk under the sandbox":
                values.append(bench.filesystem.disk or "?")
            elif what == "backend versions":
                versions = bench.backend.versions
                values.append(
                    f"{who}: " + ", ".join(f"{k} {v}" for k, v in sorted(versions.items()))
                )
            elif what == "backend options":
                options = bench.backend.options
                values.append(
                    f"{who}: " + ", ".join(f"{k}={v}" for k, v in sorted(options.items()) if v)
                )
            else:
                values.append(bench.cache)
        return "; ".join(dict.fromkeys(values))

    for what in (
        "filesystem",
        "disk under the sandbox",
        "backend versions",
        "backend options",
        "cache",
    ):
        if what == "disk under the sandbox" and "filesystem" in diffs:
            continue  # another filesystem kind brings another disk (tmpfs: memory)
        if collect(base, what, label=False) != collect(other, what, label=False):
            diffs[what] = (collect(base, what), collect(other, what))
    if not {"backend versions", "backend options"} & diffs.keys():
        # a variant whose only change the environment does not record (delay=, age=)
        b, o = (_labels(run) for run in (base, other))
        if b != o:
            diffs["backend variants"] = (b, o)
    return diffs


def _labels(result: Run) -> str:
    return "; ".join(dict.fromkeys(bench.label for bench in result.benchmarks))


def _figure_text(name: str, values: tuple[float, ...] | list[float]) -> str:
    return " ".join(fmt_ms(v) if name == "time" else fmt_metric(name, v) for v in values)


def compare_document(
    bases: list[Run], others: list[Run], pairs: list[Pair], left: list[str]
) -> Document:
    """The comparison as a document (untitled: it opens with the two sides), for any
    format."""
    several = len(bases) > 1 or len(others) > 1
    doc = Document("")
    if several:
        sides = (
            f"base:  {len(bases)} runs ({', '.join(r.path for r in bases)})",
            f"other: {len(others)} runs ({', '.join(r.path for r in others)})",
        )
    else:
        sides = (
            f"base:  {bases[0].path} ({bases[0].datetime})",
            f"other: {others[0].path} ({others[0].datetime})",
        )
    doc.add(lines_of(*sides))
    lines: list[str] = []
    diffs = environment_differences(bases[0], others[0])
    if diffs:
        lines.append(
            "What differs between the two environments"
            + (" (each side's first run):" if several else ":")
        )
        for what, (b, o) in diffs.items():
            lines.append(f"  {what}: {b}  →  {o}")
        if len(diffs) > 1:
            lines.append(
                f"warning: {len(diffs)} things changed at once ({', '.join(diffs)}); "
                "a difference below cannot be put down to one of them alone"
            )
    else:
        lines.append("The two environments do not differ in what results record.")
    partial = [pair.label for pair in pairs if "[partial" in pair.label]
    if partial:
        lines.append(
            f"warning: {len(partial)} benchmark(s) were cut short by an interrupt "
            "([partial] below): their rounds are fewer than asked and may not span the same "
            "repository counts; 'vcsbench run --resume' completes them"
        )
    doc.add(lines_of(*lines))
    time_rows = []
    for pair in pairs:
        change = pair.changes["time"]
        assert isinstance(change, Between)
        errors_b, errors_o = pair.errors
        time_rows.append(
            [
                pair.label,
                _figure_text("time", [m for b in pair.base if (m := b.median_ms) is not None]),
                _figure_text("time", [m for b in pair.other if (m := b.median_ms) is not None]),
                change.text(),
                f"{errors_b}/{errors_o}",
            ]
        )
    each = " (each run)" if several else ""
    doc.add(
        table(
            [
                "benchmark",
                f"base median ms{each}",
                f"other median ms{each}",
                "other / base [99% interval] (runs as the unit)",
                "errors",
            ],
            time_rows,
        )
    )
    metric_rows: list[list[str]] = []
    shown_metrics = [
        *COMPARED_METRICS,
        *(
            name
            for name in DURABILITY_METRICS
            if any(
                isinstance(c, Change) and (c.base is not None or c.other is not None)
                for c in (p.changes[name] for p in pairs)
            )
        ),
    ]
    for pair in pairs:
        row = [pair.label]
        for name in shown_metrics:
            change = pair.changes[name]
            if isinstance(change, Between):
                ends = (_geomean(change.base), _geomean(change.other))
            else:
                ends = (change.base, change.other)
            shown = f"{fmt_metric(name, ends[0])} → {fmt_metric(name, ends[1])}"
            if change.ratio is not None:
                shown += f" ({change.ratio:.2f}x{'' if change.significant else ' ~'})"
            row.append(shown)
        metric_rows.append(row)
    labels = [METRICS[name].label for name in shown_metrics]
    doc.add(table(["per repository", *labels], metric_rows))
    counted = [(pair.label, found) for pair in pairs if (found := count_changes(pair))]
    if counted:
        doc.add(
            lines_of(
                "Counts that changed, per operation (at one run a side):",
                *(f"- {label}: {', '.join(found)}" for label, found in counted),
            )
        )
    unjudged = [(pair.label, found) for pair in pairs if (found := unjudged_counts(pair))]
    if unjudged:
        doc.add(
            lines_of(
                "Counts with no verdict:",
                *(f"- {label}: {'; '.join(found)}" for label, found in unjudged),
            )
        )
    doc.add(lines_of(*_method(pairs, len(bases), len(others))))
    if left:
        doc.add(lines_of(*left))
    return doc


def count_changes(pair: Pair) -> list[str]:
    """The system-call counts that differ between the sides, each as a person says it
    (``+1 fsync-family call (7 → 8)``), exact ones first; [] where none does."""
    found = []
    for name in CALL_METRICS:
        change = pair.changes.get(name)
        if not isinstance(change, Change) or change.base is None or change.other is None:
            continue
        if not change.significant:
            continue
        label = METRICS[name].label
        step = change.other - change.base
        how = "in every round" if change.exact else f"rounds differ, p={change.p:.3g}"
        found.append(f"{step:+,.3g} {label} ({change.base:,.3g} → {change.other:,.3g}, {how})")
    judged = {n for n in CALL_METRICS if pair.in_round(n)}
    found.extend(c.text() for name, c in pair.counted.items() if c.changed and name not in judged)
    return found


def unjudged_counts(pair: Pair) -> list[str]:
    """The counts with no verdict, each with why (it moves between rounds; too few
    rounds): the timed rounds' first, then the counted rounds'."""
    found = [
        f"{METRICS[name].label}: {change.moves}"
        for name in CALL_METRICS
        if isinstance(change := pair.changes.get(name), Change) and change.moves
    ]
    judged = {n for n in CALL_METRICS if pair.in_round(n)}
    return found + [
        f"{c.label}: {c.why}"
        for name, c in pair.counted.items()
        if c.why and c.kind != "missing" and not c.changed and name not in judged
    ]


def _geomean(values: tuple[float, ...]) -> float | None:
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def _method(pairs: list[Pair], n_base: int, n_other: int) -> list[str]:
    """How the verdicts above were reached, and from what spread."""
    # Each cell with the figure its pairs' time was judged on (the medians across
    # filesystems, whatever the calibration chose), as the comparison recorded it.
    cells: dict[tuple[int, str], tuple[SpreadCell, str]] = {}
    for p in pairs:
        time = p.changes.get("time")
        used = (time.figure if isinstance(time, Between) else "") or "time"
        if p.cell is not None:
            cells[(id(p.cell), used)] = (p.cell, used)
    lines = [
        f"Time and CPU: the runs are the unit ({n_base} base, {n_other} other): each run's "
        "median is one value; the change must stand out of this machine's run-to-run spread "
        "(Student's t on the logarithms, pooling the spread between each side's runs with "
        "the calibration the files record, or with the spread between this benchmark's "
        "earlier runs on this machine in the results store where that is wider; a verdict "
        f"at p < {ALPHA}, the interval at "
        f"{1 - ALPHA:.0%}). ~ : no verdict, and the cell says why: within the spread, one "
        f"run a side with no spread measured, a busy machine (other processes used over "
        f"{OTHERS_CPU:g} CPUs), too few rounds for a run's median to be its level, or the "
        "machine moved (each run times a canary, fixed filesystem work between its rounds; "
        'it moved between the runs beyond its own spread). "against the canary" (or "the '
        "canary's writes\", up to its fsync): the ratio and verdict are of each run's rounds "
        "over its canary (each round's time over the canary's timed right after it, the "
        "median of those), used where this machine's calibration found that figure moves "
        "less between runs than the median alone; the medians shown are the runs' own."
    ]
    if cells:
        spread = ", ".join(
            f"{c.backend} {c.op} {c.fstype} ±{100 * (c.sd_log() or 0):.1f}%"
            + (
                f" (against the {UNDER[used]} ±{100 * (c.sd_log(used) or 0):.1f}%)"
                if used != "time"
                else ""
            )
            + (
                f" from the store's {seen.runs} earlier runs"
                if (seen := c.store_spread(used)) is not None
                else ""
            )
            for c, used in list(cells.values())[:4]
        )
        lines.append(
            f"This machine's run-to-run spread (one standard deviation between runs, from "
            f"vcsbench doctor --spread or the store): {spread}"
            + (f" and {len(cells) - 4} more" if len(cells) > 4 else "")
            + "."
        )
    else:
        lines.append(
            "The files record no run-to-run spread of their machine: with one run a side "
            "there is no time verdict. Measure it once (vcsbench doctor --spread), or run "
            "each side several times (--base-runs, --other-runs), or run what you compare "
            "interleaved in one run (docs/compare-versions.md)."
        )
    lines.append(
        f"Bytes, footprint and inodes do not drift: compared on the rounds (Mann-Whitney U, "
        f"p < {ROUNDS_ALPHA}; without per-round values: beyond {STEADY:.0%}); ~ : not "
        "significant. Ratios are other / base."
    )
    if any(p.base[0].per_repo(name) is not None for p in pairs for name in CALL_METRICS):
        lines.append(
            "System calls, counted by the kernel: where every round of each side made the "
            "same count, any difference is a change, said at one run a side; otherwise "
            "compared on the rounds as bytes are."
        )
    if any(p.counted for p in pairs):
        lines.append(
            "Counted rounds (--counted; each round counted whole outside the timed ones: "
            "instructions under callgrind, every kind of system call): a count the same in "
            f"every counted round of each side is exact, any difference a change; one that "
            f"moves under {STEADY_COUNT:.0%} between rounds (instructions) is compared round by "
            f"round, paired by index: a change where the median ratio is beyond {FLOOR:.0%} and "
            f"every pair moved by more than {FLOOR / 2:.1%} the same way; one that moves more "
            "is not judged at one run a side."
        )
    return lines
