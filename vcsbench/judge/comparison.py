"""Runs compared: the benchmarks matched between the runs of two sides, each figure's
change, whether drift could have made it, and a gate that fails closed.

Time and CPU time drift between runs, so they are compared with the runs as the unit and
this machine's measured run-to-run spread (:mod:`vcsbench.judge.verdict`): with one run
a side, a change is a verdict only beyond that spread, and none is given where the
machine was busy (processes other than the run's used CPU) or a run was too short for
its median to be its level. Bytes, footprint and inodes do not drift: they are compared
on the rounds (a two-sided Mann-Whitney U test where there are per-round values, else
beyond ``STEADY``).

The gate fails what it cannot judge: a benchmark missing from a run, a run without
rounds, an error rate that rises, a gated figure not measured, a withheld verdict, or
samples too few to detect the limit asked. A file that names a benchmark twice, or whose
error count disagrees with its rounds' flags, is refused. ``vcsbench compare`` and the
pytest door's ``--benchmark-compare-fail`` both judge here; ``report.compare`` writes it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from vcsbench.errors import VcsbenchError
from vcsbench.judge.count_changes import CountChange, count_moves, judge_counted
from vcsbench.judge.drift import calibrated_cell, machine_moved, time_figure
from vcsbench.judge.verdict import MIN_ROUNDS, Between, between
from vcsbench.results.drifting import DRIFTING
from vcsbench.results.metrics import CALL_METRICS, DURABILITY_METRICS, METRICS
from vcsbench.results.model import Benchmark, Run
from vcsbench.results.run_figures import busy, run_figure
from vcsbench.results.spread import Seen, SpreadCell
from vcsbench.results.stats import mann_whitney_p

ROUNDS_ALPHA = 0.05
"""Bytes, footprint and inodes: a change on the rounds below this p."""
STEADY = 0.01
"""Metrics without per-round samples (footprint) count as changed beyond this ratio."""
COMPARED_METRICS = (
    "cpu",
    "io_write_logical",
    "io_write_device",
    "footprint_allocated",
    "footprint_inodes",
)


@dataclass(frozen=True)
class Change:
    """A figure that does not drift (bytes, footprint, inodes), base against other."""

    name: str
    base: float | None
    other: float | None
    p: float | None
    reachable: bool = True
    """Whether the rounds were enough for the test to reach significance at all."""
    exact: bool = False
    """A count every round of each side made the same of: the two figures are what each
    side does, and any difference between them is a change (no test needed)."""
    moves: str = ""
    """Why a count has no verdict: it moves between rounds beyond the steady band (with
    what each round's objects hash to: git's fan-out directories), and its rounds are
    not independent draws (rounds in the same second hash alike)."""

    @property
    def ratio(self) -> float | None:
        if self.base is None or self.other is None or self.base == 0:
            return None
        return self.other / self.base

    @property
    def significant(self) -> bool:
        if self.exact:
            return self.base != self.other
        if self.moves:
            return False
        if self.ratio is None:
            return False
        return abs(self.ratio - 1) > STEADY if self.p is None else self.p < ROUNDS_ALPHA

    def text(self) -> str:
        ratio = self.ratio
        if ratio is None:
            return "n/a"
        if not self.significant:
            return f"~ ({ratio:.2f}x)"
        word = "more" if ratio > 1 else "less"
        factor = ratio if ratio >= 1 else 1 / ratio
        return f"{factor:.2f}x {word}"


Figure = Change | Between


@dataclass
class Pair:
    """One benchmark in every run of both sides."""

    label: str
    base: list[Benchmark]
    other: list[Benchmark]
    changes: dict[str, Figure]
    cell: SpreadCell | None = None
    counted: dict[str, CountChange] = field(default_factory=dict)
    """The counted rounds' counts, judged (:mod:`vcsbench.judge.count_changes`)."""

    def in_round(self, name: str) -> bool:
        """Whether the timed rounds of both sides counted ``name`` (on tmpfs they do not:
        the counted rounds' count stands for it)."""
        change = self.changes.get(name)
        return isinstance(change, Change) and None not in (change.base, change.other)

    @property
    def errors(self) -> tuple[int, int]:
        return sum(b.errors for b in self.base), sum(b.errors for b in self.other)

    @property
    def rounds(self) -> tuple[int, int]:
        return sum(b.repos for b in self.base), sum(b.repos for b in self.other)


def _metric_change(name: str, base: Benchmark, other: Benchmark) -> Change:
    key = METRICS[name].round_key
    p = None
    reachable = True
    exact = False
    moves = ""
    if key is not None:
        sb, so = base.rounds.series(key), other.rounds.series(key)
        p = mann_whitney_p(sb, so) if sb and so else None
        reachable = bool(sb and so) and 2 / math.comb(len(sb) + len(so), len(sb)) < ROUNDS_ALPHA
        exact = name in CALL_METRICS and bool(sb and so) and len({*sb}) == len({*so}) == 1
        if name in CALL_METRICS and sb and so and not exact:
            moves = count_moves(sb, so)
    return Change(name, base.per_repo(name), other.per_repo(name), p, reachable, exact, moves)


def match(base: list[Benchmark], other: list[Benchmark]) -> list[tuple[Benchmark, Benchmark]]:
    """Pairs of the same benchmark: same (op, payload, fs, variant); else the one other
    benchmark that differs in the filesystem only, or in the variant of the same backend
    only (``git-pygit2`` against ``git-pygit2[version=1.15.1]`` in another run)."""
    pairs = []
    by_key = {b.key: b for b in other}
    by_fs: dict[tuple[str, str, str], list[Benchmark]] = {}
    by_variant: dict[tuple[str, str, str, str], list[Benchmark]] = {}
    for bench in other:
        by_fs.setdefault((bench.op, bench.payload.name, bench.label), []).append(bench)
        key = (bench.op, bench.payload.name, bench.fs, bench.backend.name)
        by_variant.setdefault(key, []).append(bench)
    for bench in base:
        if bench.key in by_key:
            pairs.append((bench, by_key[bench.key]))
            continue
        for candidates in (
            by_fs.get((bench.op, bench.payload.name, bench.label), []),
            by_variant.get((bench.op, bench.payload.name, bench.fs, bench.backend.name), []),
        ):
            if len(candidates) == 1:
                pairs.append((bench, candidates[0]))
                break
    return pairs


def check_consistent(run: Run) -> None:
    """Refuse, in one line, a file compare cannot read one way only: a benchmark named
    twice, or an error count its rounds' flags disagree with."""
    seen: set[tuple[str, str, str, str]] = set()
    for bench in run.benchmarks:
        if bench.key in seen:
            raise VcsbenchError(
                f"{run.path}: benchmark {bench.key.text} appears twice; compare "
                "cannot tell which copy to judge: keep one (or run them as variants)"
            )
        seen.add(bench.key)
        failed = bench.repos - bench.repos_ok
        if bench.errors != failed:
            raise VcsbenchError(
                f"{run.path}: benchmark {bench.label} {bench.op} {bench.payload.name} "
                f"{bench.fs} counts {bench.errors} error(s) but {failed} of its "
                f"{bench.repos} rounds are not ok; the file is inconsistent"
            )


def _withheld(pair_runs: list[tuple[str, Run, Benchmark]], cell: SpreadCell | None) -> str:
    """Why drift may have made a verdict on these runs whatever the test says, or ""."""
    for side, run, bench in pair_runs:
        found = busy(bench, run.machine.cpu_count)
        if found:
            return f"no verdict: busy machine in the {side} run ({found})"
    for side, _, bench in pair_runs:
        least = max(MIN_ROUNDS, (cell.rounds // 10) if cell is not None else 0)
        if bench.repos_ok < least:
            return (
                f"no verdict: {bench.repos_ok} successful rounds in the {side} run, under {least}"
            )
    return ""


def compare_runs(
    bases: list[Run],
    others: list[Run],
    seen: Callable[[Benchmark, list[Run]], dict[str, Seen]] | None = None,
) -> tuple[list[Pair], list[str]]:
    """The benchmarks of the first base run found in every run of both sides, with their
    changes; and a line for each benchmark found in some runs only. ``seen``: the spread
    of a benchmark's earlier runs (the results store's), used where wider than the
    calibration's."""
    for run in (*bases, *others):
        check_consistent(run)
    first = bases[0]
    pairs: list[Pair] = []
    paired: set[int] = set()
    for bench in first.benchmarks:
        found: list[Benchmark] = []
        for run in (*bases[1:], *others):
            matched = [o for _, o in match([bench], run.benchmarks)]
            if not matched:
                break
            found.append(matched[0])
        if len(found) != len(bases) + len(others) - 1:
            continue
        paired.update(id(b) for b in (bench, *found))
        base = [bench, *found[: len(bases) - 1]]
        other = found[len(bases) - 1 :]
        label = bench.case
        if other[0].fs != bench.fs:  # matched across filesystems
            label += f" → {other[0].fs}"
        elif other[0].label != bench.label:  # across variants of the backend
            label = f"{bench.label} → {other[0].label} {bench.op} {bench.payload.shown} {bench.fs}"
        partial = [
            side
            for side, group in (("base", base), ("other", other))
            if any(b.partial for b in group)
        ]
        if partial:
            label += f" [partial: {'both' if len(partial) == 2 else partial[0]}]"
        cell = calibrated_cell([*bases, *others], bench, seen)
        withheld = _withheld(
            [("base", r, b) for r, b in zip(bases, base, strict=True)]
            + [("other", r, b) for r, b in zip(others, other, strict=True)],
            cell,
        )
        relative = time_figure(cell, [*base, *other])
        moved = withheld or machine_moved(cell, base, other)
        changes: dict[str, Figure] = {
            name: between(
                name,
                [run_figure(b, figure or name) for b in base],
                [run_figure(b, figure or name) for b in other],
                cell,
                withheld if figure else moved,
                figure,
            )
            for name, figure in (("time", relative), ("cpu", ""))
        }
        for name in (*COMPARED_METRICS, *DURABILITY_METRICS, *CALL_METRICS):
            if name not in DRIFTING and name not in changes:
                changes[name] = _metric_change(name, base[0], other[0])
        pairs.append(Pair(label, base, other, changes, cell, judge_counted(base, other)))
    if not pairs:
        raise VcsbenchError(
            f"no benchmark of {first.path} is in every one of the "
            f"{len(bases) + len(others)} result files"
        )
    left = []
    for runs, where in ((bases, "base"), (others, "other")):
        for run in runs:
            for bench in run.benchmarks:
                if id(bench) not in paired:
                    name = bench.case
                    left.append(f"only in {where} ({run.name}): {name}")
    return pairs, left
