"""``vcsbench compare --base-runs A1 A2 ... --other-runs B1 B2 ...``: each side run several
times, and the runs the unit.

Two single runs cannot tell a change from the machine's drift between them: the rounds of
one run are not independent samples of the other's conditions. With repeats, each run's
figure for a benchmark (its median time, its bytes per repository) is one value, and a
change must stand out of how much the runs of one side differ among themselves -- drift
between runs included. The test is Welch's t on the logarithms of the runs' figures
(:func:`~vcsbench.report.stats.welch_log_ratio`): the ratio of the two sides' geometric
means, its 95% interval and a two-sided p-value. Reads result files only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vcsbench.errors import VcsbenchError
from vcsbench.report.compare import ALPHA, COMPARED_METRICS, environment_differences, match
from vcsbench.report.format import fmt_metric, fmt_ms, render_rows
from vcsbench.report.stats import welch_log_ratio
from vcsbench.results.metrics import METRICS
from vcsbench.results.model import Benchmark, Run

LEVEL = 0.95


@dataclass
class RepeatChange:
    name: str
    base: list[float]
    other: list[float]
    found: tuple[float, float, float, float] | None
    """(ratio, low, high, p), None where a side has a run without the figure or a zero."""

    @property
    def ratio(self) -> float | None:
        return self.found[0] if self.found else None

    @property
    def significant(self) -> bool:
        return self.found is not None and self.found[3] < ALPHA

    def text(self) -> str:
        if self.found is None:
            return "n/a"
        ratio, low, high, p = self.found
        interval = f"{LEVEL:.0%} {low:.2f}-{high:.2f}x"
        if not self.significant:
            return f"~ ({ratio:.2f}x, {interval}, p={p:.2f})"
        word = ("slower" if ratio > 1 else "faster") if self.name == "time" else None
        word = word or ("more" if ratio > 1 else "less")
        factor = ratio if ratio >= 1 else 1 / ratio
        shown = "p<0.001" if p < 0.001 else f"p={p:.3f}"
        return f"{factor:.2f}x {word} ({100 * (ratio - 1):+.1f}%, {interval}, {shown})"


@dataclass
class RepeatPair:
    label: str
    base: list[Benchmark]
    other: list[Benchmark]
    changes: dict[str, RepeatChange]


def _figure(bench: Benchmark, name: str) -> float | None:
    return bench.median_ms if name == "time" else bench.per_repo(name)


def _change(name: str, base: list[Benchmark], other: list[Benchmark]) -> RepeatChange:
    b = [_figure(bench, name) for bench in base]
    o = [_figure(bench, name) for bench in other]
    usable = all(v is not None and v > 0 for v in (*b, *o))
    bv = [v for v in b if v is not None]
    ov = [v for v in o if v is not None]
    return RepeatChange(name, bv, ov, welch_log_ratio(bv, ov, LEVEL) if usable else None)


def compare_repeats(bases: list[Run], others: list[Run]) -> tuple[list[RepeatPair], list[str]]:
    """The benchmarks of the first base run found in every run of both sides, with their
    changes; and a line for each found in only some of the runs."""
    if len(bases) < 2 or len(others) < 2:
        raise VcsbenchError(
            f"--base-runs and --other-runs need at least two result files each (given "
            f"{len(bases)} and {len(others)}): the spread between one side's runs is what a "
            "change must stand out of"
        )
    first = bases[0]
    pairs: list[RepeatPair] = []
    left: list[str] = []
    for bench in first.benchmarks:
        found: list[Benchmark] = []
        for run in (*bases[1:], *others):
            matched = [o for b, o in match([bench], run.benchmarks)]
            if not matched:
                break
            found.append(matched[0])
        label = f"{bench.label} {bench.op} {bench.payload.name} {bench.fs}"
        if len(found) != len(bases) + len(others) - 1:
            left.append(f"not in every run, left out: {label}")
            continue
        base = [bench, *found[: len(bases) - 1]]
        other = found[len(bases) - 1 :]
        if other[0].fs != bench.fs:  # matched across filesystems, as compare does
            label += f" → {other[0].fs}"
        changes = {name: _change(name, base, other) for name in ("time", *COMPARED_METRICS)}
        pairs.append(RepeatPair(label, base, other, changes))
    if not pairs:
        raise VcsbenchError(
            f"no benchmark of {first.path} is in every one of the {len(bases) + len(others)} "
            "result files"
        )
    return pairs, left


def repeat_regressions(pairs: list[RepeatPair], gate: dict[str, float]) -> list[str]:
    """What the gate fails on: a significant change beyond its limit (runs as the unit),
    and operations that fail in the other side's runs where none failed in the base's."""
    found = []
    for pair in pairs:
        failed_other = sum(b.errors for b in pair.other)
        if failed_other and not any(b.errors for b in pair.base):
            found.append(f"{pair.label}: {failed_other} operations failed in other, none in base")
        for name, limit in gate.items():
            change = pair.changes[name]
            if change.ratio is not None and change.significant and change.ratio > 1 + limit:
                found.append(f"{pair.label}: {name} {change.text()} exceeds +{limit * 100:g}%")
    return found


def render_repeats(
    bases: list[Run], others: list[Run], pairs: list[RepeatPair], left: list[str], fmt: str = "md"
) -> str:
    lines = [
        f"base:  {len(bases)} runs ({', '.join(str(r.path) for r in bases)})",
        f"other: {len(others)} runs ({', '.join(str(r.path) for r in others)})",
        "",
    ]
    diffs = environment_differences(bases[0], others[0])
    if diffs:
        lines.append("What differs between the two sides' environments (their first runs):")
        lines.extend(f"  {what}: {b}  →  {o}" for what, (b, o) in diffs.items())
    else:
        lines.append("The two sides' environments do not differ in what results record.")
    lines.append("")
    time_rows = [
        [
            pair.label,
            " ".join(fmt_ms(v) for v in pair.changes["time"].base),
            " ".join(fmt_ms(v) for v in pair.changes["time"].other),
            pair.changes["time"].text(),
            f"{sum(b.errors for b in pair.base)}/{sum(b.errors for b in pair.other)}",
        ]
        for pair in pairs
    ]
    lines.append(
        render_rows(
            [
                "benchmark",
                "base medians ms (each run)",
                "other medians ms",
                "change (runs as the unit)",
                "errors",
            ],
            time_rows,
            fmt,
        )
    )
    lines.append("")
    metric_rows: list[list[Any]] = []
    for pair in pairs:
        row: list[Any] = [pair.label]
        for name in COMPARED_METRICS:
            change = pair.changes[name]
            mean_b = sum(change.base) / len(change.base) if change.base else None
            mean_o = sum(change.other) / len(change.other) if change.other else None
            ratio = change.ratio
            row.append(
                f"{fmt_metric(name, mean_b)} → {fmt_metric(name, mean_o)}"
                + (f" ({ratio:.2f}x{'' if change.significant else ' ~'})" if ratio else "")
            )
        metric_rows.append(row)
    lines.append(
        render_rows(
            ["per repository (mean of runs)", *(METRICS[n].label for n in COMPARED_METRICS)],
            metric_rows,
            fmt,
        )
    )
    lines.append("")
    lines.append(
        f"Runs as the unit: each run's figure is one value; Welch's t on their logarithms "
        f"gives the ratio of the sides' geometric means (other / base), its {LEVEL:.0%} "
        f"interval and p; ~ : not significant (p >= {ALPHA}). The spread between one side's "
        "runs, the machine's drift between them included, is what a change stands out of."
    )
    lines.extend(left)
    return "\n".join(lines) + "\n"
