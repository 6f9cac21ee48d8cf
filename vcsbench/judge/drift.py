"""What drift allows a time comparison between runs: the figure it uses (the median alone,
or the rounds over the canary timed beside them, or the canary's writes, whichever this
machine's calibration found steadiest: :mod:`vcsbench.results.canary`), whether the
machine itself moved between the runs, and the calibrated cell it is judged by."""

from __future__ import annotations

from collections.abc import Callable

from vcsbench.judge.verdict import between
from vcsbench.results.model import Benchmark, Run
from vcsbench.results.run_figures import run_figure
from vcsbench.results.spread import Seen, SpreadCell, op_class


def time_figure(cell: SpreadCell | None, benches: list[Benchmark]) -> str:
    """The figure a time comparison uses: over each run's canary (or its writes) where
    every run has it and this machine's calibration found it moves least between runs;
    else the median itself (""). Never across filesystems: each run's canary runs on its
    own filesystem and moves with it."""
    if cell is None or (chosen := cell.time_figure()) == "time" or _filesystems(benches) > 1:
        return ""
    return chosen if all(run_figure(b, chosen) for b in benches) else ""


def machine_moved(cell: SpreadCell | None, base: list[Benchmark], other: list[Benchmark]) -> str:
    """Why a time or CPU verdict on the runs' own figures is withheld because the
    machine moved between them (their canaries, whole or their writes, differ beyond
    that figure's calibrated spread), or "". Runs of two filesystems: their canaries move
    with the filesystem, so one run a side gets no verdict (:func:`_apart`) where a
    calibration would otherwise allow one; several a side, their own spread judges."""
    if cell is not None and _filesystems([*base, *other]) > 1:
        return _apart(base[0].fs, other[0].fs) if len(base) == len(other) == 1 else ""
    for name, said in (("canary", "canary"), ("writes", "canary's writes")):
        if cell is None or cell.sd_log(name) is None:
            continue
        moved = between(
            name, [run_figure(b, name) for b in base], [run_figure(b, name) for b in other], cell
        )
        if moved.significant and moved.ratio is not None:
            return f"no verdict: the machine moved between the runs (its {said} {moved.ratio:.2f}x)"
    return ""


def _filesystems(benches: list[Benchmark]) -> int:
    return len({b.fs for b in benches})


def _apart(base_fs: str, other_fs: str) -> str:
    """Why one run on each of two filesystems gets no time or CPU verdict: the canary, timed
    on each run's own filesystem, moves with it, so nothing in the runs tells the machine's
    drift from the filesystems' difference (calibrated spread alone let drift through)."""
    return (
        f"no verdict: {base_fs} and {other_fs} in separate runs, one each, and a canary on "
        f"each cannot tell drift from the filesystem; run both in one (--fs {base_fs},{other_fs})"
    )


def calibrated_cell(
    runs: list[Run],
    bench: Benchmark,
    seen: Callable[[Benchmark, list[Run]], dict[str, Seen]] | None = None,
) -> SpreadCell | None:
    """The machine's spread for ``bench`` as the runs' files record it (the widest of
    theirs), widened by ``seen`` -- the spread between its earlier runs in the results
    store -- where that is wider."""
    cells = [
        cell
        for run in runs
        if run.spread is not None
        and (cell := run.spread.cell(bench.backend.name, bench.op, bench.filesystem.fstype))
        is not None
    ]
    cell = max(cells, key=lambda c: c.sd_log() or 0.0, default=None)
    earlier = seen(bench, runs) if seen is not None else {}
    if not earlier:
        return cell
    fs = bench.filesystem.fstype
    empty = SpreadCell(bench.backend.name, op_class(bench.op), fs, 0, {})
    return (cell or empty).with_seen(earlier)
