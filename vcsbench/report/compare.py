"""``vcsbench compare BASE OTHER``: what changed between two runs, and is it real.

Reads result files only. Time is compared on per-round samples with a two-sided
Mann-Whitney U test (``report.stats``); a change that is not significant at ``ALPHA``
is shown as ``~``, never as a regression. Metrics come from the registry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from vcsbench.errors import VcsbenchError
from vcsbench.report.format import fmt_metric, fmt_ms, render_rows
from vcsbench.report.stats import mann_whitney_p
from vcsbench.results.metrics import METRICS
from vcsbench.results.model import Benchmark, Run

ALPHA = 0.05
MEMORY_TOLERANCE = 0.01
"""Memory sizes within 1% are the same machine: MemTotal moves with kernel reservations."""
STEADY = 0.01
"""Metrics without per-round samples (footprint) count as changed beyond this ratio."""
COMPARED_METRICS = (
    "cpu",
    "io_write_logical",
    "io_write_device",
    "footprint_allocated",
    "footprint_inodes",
)
GATE_NAMES = ("time", *COMPARED_METRICS)


@dataclass
class Change:
    name: str
    base: float | None
    other: float | None
    p: float | None

    @property
    def ratio(self) -> float | None:
        if self.base is None or self.other is None or self.base == 0:
            return None
        return self.other / self.base

    @property
    def significant(self) -> bool:
        if self.ratio is None:
            return False
        return abs(self.ratio - 1) > STEADY if self.p is None else self.p < ALPHA

    def text(self) -> str:
        ratio = self.ratio
        if ratio is None:
            return "n/a"
        if not self.significant:
            return (
                f"~ ({ratio:.2f}x, p={self.p:.2f})" if self.p is not None else f"~ ({ratio:.2f}x)"
            )
        word = "slower" if ratio > 1 else "faster"
        if self.name != "time":
            word = "more" if ratio > 1 else "less"
        factor = ratio if ratio >= 1 else 1 / ratio
        p = "" if self.p is None else (", p<0.001" if self.p < 0.001 else f", p={self.p:.3f}")
        return f"{factor:.2f}x {word} ({100 * (ratio - 1):+.1f}%{p})"


@dataclass
class Pair:
    label: str
    base: Benchmark
    other: Benchmark
    changes: dict[str, Change]


def _metric_change(name: str, base: Benchmark, other: Benchmark) -> Change:
    key = METRICS[name].round_key
    p = None
    if key is not None:
        sb, so = base.rounds.series(key), other.rounds.series(key)
        p = mann_whitney_p(sb, so) if sb and so else None
    return Change(name, base.per_repo(name), other.per_repo(name), p)


def match(base: list[Benchmark], other: list[Benchmark]) -> list[tuple[Benchmark, Benchmark]]:
    """Pairs of the same benchmark: same (op, payload, fs, variant), or the same but for fs."""
    pairs = []
    by_key = {b.key: b for b in other}
    loose: dict[tuple[str, str, str], list[Benchmark]] = {}
    for bench in other:
        loose.setdefault((bench.op, bench.payload.name, bench.label), []).append(bench)
    for bench in base:
        if bench.key in by_key:
            pairs.append((bench, by_key[bench.key]))
            continue
        candidates = loose.get((bench.op, bench.payload.name, bench.label), [])
        if len(candidates) == 1:
            pairs.append((bench, candidates[0]))
    return pairs


def compare(base: Run, other: Run) -> list[Pair]:
    pairs = []
    for b, o in match(base.benchmarks, other.benchmarks):
        label = f"{b.label} {b.op} {b.payload.name} {b.fs}" + (f" → {o.fs}" if o.fs != b.fs else "")
        if b.partial or o.partial:
            which = "both" if b.partial and o.partial else ("base" if b.partial else "other")
            label += f" [partial: {which}]"
        changes = {
            "time": Change(
                "time", b.median_ms, o.median_ms, mann_whitney_p(b.samples_s, o.samples_s)
            )
        }
        for name in COMPARED_METRICS:
            changes[name] = _metric_change(name, b, o)
        pairs.append(Pair(label, b, o, changes))
    if not pairs:
        raise VcsbenchError(f"no benchmark of {other.path} matches one of {base.path}")
    return pairs


def _describe_fs(bench: Benchmark) -> str:
    return f"{bench.filesystem.fstype} ({bench.filesystem.mount_options})"


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

    def collect(result: Run, what: str) -> str:
        values: list[str] = []
        for bench in result.benchmarks:
            if what == "filesystem":
                values.append(_describe_fs(bench))
            elif what == "disk under the sandbox":
                values.append(bench.filesystem.disk or "?")
            elif what == "backend versions":
                versions = bench.backend.versions
                values.append(
                    f"{bench.label}: " + ", ".join(f"{k} {v}" for k, v in sorted(versions.items()))
                )
            elif what == "backend options":
                options = bench.backend.options
                values.append(
                    f"{bench.label}: "
                    + ", ".join(f"{k}={v}" for k, v in sorted(options.items()) if v)
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
        b, o = collect(base, what), collect(other, what)
        if what == "disk under the sandbox" and "filesystem" in diffs:
            continue  # another filesystem kind brings another disk (tmpfs: memory)
        if b != o:
            diffs[what] = (b, o)
    return diffs


def parse_gate(text: str) -> dict[str, float]:
    """``time:10%,io_write_device:5%`` -> {"time": 0.10, "io_write_device": 0.05}."""
    gate: dict[str, float] = {}
    for item in text.split(","):
        match_ = re.fullmatch(r"\s*([\w]+):(\d+(?:\.\d+)?)%\s*", item)
        if not match_ or match_.group(1) not in GATE_NAMES:
            raise VcsbenchError(
                f"--fail-on {item.strip()!r} is not NAME:N% with NAME one of "
                + ", ".join(GATE_NAMES)
            )
        gate[match_.group(1)] = float(match_.group(2)) / 100
    return gate


def regressions(pairs: list[Pair], gate: dict[str, float]) -> list[str]:
    """What the gate fails on: significant changes beyond its limits, and operations that
    fail in OTHER where none failed in BASE (a run whose operations fail is no faster)."""
    found = []
    for pair in pairs:
        if pair.other.errors and not pair.base.errors:
            found.append(
                f"{pair.label}: {pair.other.errors} of {pair.other.repos} operations failed "
                "in other, none in base"
            )
        for name, limit in gate.items():
            change = pair.changes[name]
            ratio = change.ratio
            if ratio is not None and change.significant and ratio > 1 + limit:
                found.append(f"{pair.label}: {name} {change.text()} exceeds +{limit * 100:g}%")
    return found


def unmatched(base: Run, other: Run, pairs: list[Pair]) -> list[str]:
    """Lines naming the benchmarks found in one file only."""
    paired_base = {id(p.base) for p in pairs}
    paired_other = {id(p.other) for p in pairs}
    lines = []
    for run, paired, where in ((base, paired_base, "base"), (other, paired_other, "other")):
        for bench in run.benchmarks:
            if id(bench) not in paired:
                lines.append(
                    f"only in {where}: {bench.label} {bench.op} {bench.payload.name} {bench.fs}"
                )
    return lines


def render(base: Run, other: Run, pairs: list[Pair], fmt: str = "md") -> str:
    lines = [f"base:  {base.path} ({base.datetime})", f"other: {other.path} ({other.datetime})", ""]
    diffs = environment_differences(base, other)
    if diffs:
        lines.append("What differs between the two environments:")
        for what, (b, o) in diffs.items():
            lines.append(f"  {what}: {b}  →  {o}")
        if len(diffs) > 1:
            lines.append(
                f"warning: {len(diffs)} things changed at once ({', '.join(diffs)}); "
                "a difference below cannot be put down to one of them alone"
            )
    else:
        lines.append("The two environments do not differ in what results record.")
    partial = [pair.label for pair in pairs if pair.base.partial or pair.other.partial]
    if partial:
        lines.append(
            f"warning: {len(partial)} benchmark(s) were cut short by an interrupt "
            "([partial] below): their rounds are fewer than asked and may not span the same "
            "repository counts; 'vcsbench run --resume' completes them"
        )
    lines.append("")
    time_rows = []
    for pair in pairs:
        change = pair.changes["time"]
        time_rows.append(
            [
                pair.label,
                fmt_ms(change.base),
                fmt_ms(change.other),
                change.text(),
                f"{pair.base.errors}/{pair.other.errors}",
            ]
        )
    lines.append(
        render_rows(
            ["benchmark", "base median ms", "other median ms", "change (Mann-Whitney U)", "errors"],
            time_rows,
            fmt,
        )
    )
    lines.append("")
    metric_rows: list[list[Any]] = []
    for pair in pairs:
        row = [pair.label]
        for name in COMPARED_METRICS:
            change = pair.changes[name]
            row.append(
                f"{fmt_metric(name, change.base)} → {fmt_metric(name, change.other)}"
                + (
                    f" ({change.ratio:.2f}x{'' if change.significant else ' ~'})"
                    if change.ratio is not None
                    else ""
                )
            )
        metric_rows.append(row)
    lines.append(
        render_rows(
            ["per repository", *(METRICS[name].label for name in COMPARED_METRICS)],
            metric_rows,
            fmt,
        )
    )
    lines.append("")
    lines.append(
        f"~ : not significant (p >= {ALPHA}; without per-round samples: within "
        f"{STEADY:.0%}); ratios are other / base."
    )
    timed = [pair for pair in pairs if pair.changes["time"].significant]
    if timed:
        lines.append(
            "The two files are separate runs: the Mann-Whitney test takes each run's rounds "
            "as independent samples, so the machine's drift between the runs reads as a "
            "significant change in time too; it cannot tell drift from change. Bytes, "
            "footprint and inodes do not drift. To tell a time change, run the variants "
            "interleaved in one run (--interleave; docs/compare-versions.md), or a variant "
            "against a copy of itself (NAME[copy=2]) to see the drift."
        )
    alone = unmatched(base, other, pairs)
    if alone:
        lines.append("")
        lines.extend(alone)
    return "\n".join(lines) + "\n"
