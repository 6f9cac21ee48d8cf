"""``vcsbench bisect --by counts`` (the default): each version one run with counted
rounds, the good and the bad one together first (:mod:`vcsbench.judge.count_bisection`)."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from vcsbench.errors import VcsbenchError

if TYPE_CHECKING:
    from vcsbench.bench.selection import Selection
    from vcsbench.results.counted import Counted


class Stopped(Exception):
    """A stop signal during a step: the bisection ends there (128 + the signal)."""


def by_counts(
    args: argparse.Namespace,
    chain: list[str],
    spec_of: Callable[[int], str],
    out: Path,
    by: str,
    selection: Selection,
) -> int:
    """Bisect by a count: each version one run with counted rounds, the first two ends
    together (:mod:`vcsbench.judge.count_bisection`)."""
    from vcsbench.judge.count_bisection import bisect_counts
    from vcsbench.report.bisect_text import count_answer, count_header, count_step_line
    from vcsbench.results.io import own_directory, write_file

    own_directory(out, "--out")
    counted = selection.counted or COUNTED_ROUNDS
    figure = (
        f"{selection.ops[0].text} · payload {selection.payloads[0]} · fs {selection.fs[0].text}"
    )
    print(count_header(chain, figure, by, counted), flush=True)
    steps = CountRuns(args, spec_of, out, counted, by)
    try:
        outcome = bisect_counts(
            chain,
            steps.run,
            None if by == "counts" else by,
            say=lambda s: print(count_step_line(s, chain), flush=True),
        )
    except Stopped as stop:
        print(f"bisect stopped during run {steps.made}: the runs before it are above, each "
              f"run's results in {out}")  # fmt: skip
        return int(str(stop))
    text = count_answer(outcome, figure, out)
    write_file(out / "bisect.md", text, "the answer")
    print()
    print(text, end="")
    return 0 if outcome.first_bad is not None else 1


COUNTED_ROUNDS = 5
"""Counted rounds a version gets where --counted does not say: the fewest a steady
count's test reaches p < 0.01 with."""


class CountRuns:
    """The runs of a bisection by counts, numbered as they are made."""

    def __init__(
        self,
        args: argparse.Namespace,
        spec_of: Callable[[int], str],
        out: Path,
        counted: int,
        by: str,
    ) -> None:
        self.args, self.spec_of, self.out, self.counted = args, spec_of, out, counted
        self.by = by
        """What decides: ``counts`` (instructions first), or one count's name."""
        self.made = 0
        self.stopped = 0

    def run(self, indices: list[int]) -> dict[int, Counted]:
        """The versions at ``indices`` in one run, each with its counted rounds (a few
        timed ones too, as every run has): each one's counted rounds."""
        from vcsbench.bench.runner import run_suite
        from vcsbench.cli.common import interrupted, selection_of, this_run
        from vcsbench.judge.count_bisection import Unmeasured

        self.made += 1
        variants = [self.spec_of(i) for i in indices]
        print(f"running {self.made}: {', '.join(variants)} with {self.counted} counted rounds each",
              file=sys.stderr, flush=True)  # fmt: skip
        selection = selection_of(
            self.args, backends=",".join(variants), interleave="off", counted=str(self.counted)
        )
        # a bisection by a system call's count needs no instructions: no valgrind pass
        selection.counted_instructions = self.by in ("counts", "instructions")
        path = self.out / f"step-{self.made:02d}.json"
        command = ["vcsbench", *sys.argv[1:], f"(run {self.made}: {', '.join(variants)})"]
        try:
            with path.with_suffix(".log").open("w") as into, contextlib.redirect_stdout(into):
                code, run_id = run_suite(
                    selection, path, [], command=command, door="vcsbench bisect"
                )
        except VcsbenchError as why:
            raise Unmeasured(str(why)) from None
        run = this_run(path, run_id)
        self.stopped = interrupted(path, run)
        if self.stopped:
            raise Stopped(self.stopped)
        found = {b.label: b for b in run.benchmarks} if run is not None else {}
        kept = {}
        for index, text in zip(indices, variants, strict=True):
            bench = found.get(text)
            if bench is None or bench.counted is None:
                raise Unmeasured(
                    f"{text} did not run (exit {code}); see {path.with_suffix('.log')}"
                )
            kept[index] = bench.counted
        return kept
