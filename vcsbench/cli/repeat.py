"""``vcsbench run --repeat N``: the same run N times, each in a process and a file of its
own, then what the runs say together.

Between runs the run is the unit (docs/figures.md): how far this machine's runs fall apart
is seen only over several, and "is xfs better than ext4?" is answered by the row over the
runs of ``report --baseline``. Each run is a child ``vcsbench run`` in a process group of
its own, so that a stop signal reaches it once, from this process, and it keeps what it
finished and takes down what it made as any run does; the runs after it are not started.
A child is told it is run k of the series (``SERIES_RUN`` in its environment), and ends
with its warnings and its file, not its tables: the answer is the series', printed first
once the last run ends.
"""

from __future__ import annotations

import math
import signal
import statistics
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from vcsbench.process import run_child

if TYPE_CHECKING:
    from vcsbench.bench.selection import Selection
    from vcsbench.report.document import Document

MAX_REPEAT = 100
SERIES_RUN = "VCSBENCH_SERIES_RUN"
"""Set for a run of a series: ``k/N``."""


def repeat_count(text: str) -> int:
    """``--repeat``'s value: a whole number of runs, 1 to :data:`MAX_REPEAT`."""
    import argparse

    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_REPEAT:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a number of runs; give a whole number from 1 to {MAX_REPEAT}"
        )
    return value


def run_paths(out: Path, count: int) -> list[Path]:
    """Run k's file: ``NAME-k.json`` (``.json.gz``) beside where one run's ``NAME.json``
    would go."""
    name = out.name
    kind = next((s for s in (".json.gz", ".json") if name.endswith(s) and name != s), "")
    stem = name[: len(name) - len(kind)]
    return [out.with_name(f"{stem}-{k}{kind}") for k in range(1, count + 1)]


def child_command(
    selection: Selection, out: Path, store: str | None, extra: list[str]
) -> list[str]:
    """One run of the series as a command: this selection's own options (as ``--resume``
    rebuilds them), its file, the store, and the pytest arguments after ``--``."""
    return [
        sys.executable, "-m", "vcsbench.cli", "run", *selection.command_line(),
        "--out", str(out), *(["--store", store] if store else []),
        *(["--", *extra] if extra else []),
    ]  # fmt: skip


def repeated(selection: Selection, paths: list[Path], store: str | None, extra: list[str]) -> int:
    """The series, a run into each of ``paths`` (:func:`run_paths`): run after run while
    each ends well; then the runs together."""
    from vcsbench.bench.progress import duration

    count = len(paths)
    began = time.monotonic()
    for k, path in enumerate(paths, 1):
        spent = time.monotonic() - began
        eta = f", about {duration(spent / (k - 1) * (count - k + 1))} left" if k > 1 else ""
        print(f"\n== run {k} of {count}: {path}{eta}", flush=True)
        child = run_child(
            child_command(selection, path, store, extra),
            env={SERIES_RUN: f"{k}/{count}"},
            capture="stdout",
        )
        _said(child.out, whole=child.code != 0 or bool(child.passed))
        code, passed = child.code, child.passed
        if passed or code != 0:
            kept = ", ".join(str(p) for p in paths[: k - 1]) or "none"
            why = f"stopped by {signal.Signals(passed[0]).name}" if passed else f"exited {code}"
            print(
                f"vcsbench: run {k} of {count} {why}; the runs after it were not started; "
                f"finished runs kept: {kept} (run {k}'s own line above says what it kept)",
                file=sys.stderr,
            )
            return 128 + passed[0] if passed else code
    print("\n" + together(paths))
    return 0


SAID = ("vcsbench:", "stored:", "warning:", "results:")
"""What a run of the series says that the series says on (its pace is on standard error,
pytest's dots and its count of passed tests are not the series' to repeat)."""


def _said(out: str, whole: bool) -> None:
    """A run's standard output as the series passes it on: all of it where the run did
    not end well, else its lines that begin with :data:`SAID`."""
    lines = out.splitlines()
    shown = lines if whole else [line for line in lines if line.startswith(SAID)]
    if shown:
        print("\n".join(shown), flush=True)


def together(paths: list[Path]) -> str:
    """:func:`together_document` for the terminal: its tables as plain columns, wrapped
    to the terminal's width; then the commands that close it, whole (to be copied)."""
    from vcsbench.report.formats import write
    from vcsbench.report.terminal import for_terminal

    text = for_terminal(write([together_document(paths, commands=False)], "md"))
    return text.rstrip("\n") + "\n\n" + "\n".join(_commands(paths))


def together_document(paths: list[Path], commands: bool = True) -> Document:
    """What the runs say together: each benchmark's median in each run and how far the
    runs fall apart; with several filesystems, each against the first, run by run and
    over the runs; and (``commands``) how to set the series against another (a document:
    any format)."""
    from vcsbench.report.axis import FS, axis_baseline, filesystems
    from vcsbench.report.document import Document, Heading, lines_of, paragraph, table
    from vcsbench.report.origins import run_labels
    from vcsbench.results.io import read_many

    runs = read_many(paths)
    benches = [b for run in runs for b in run.benchmarks]
    medians: dict[tuple[str, str, str, str], list[float | None]] = {}
    for k, run in enumerate(runs):
        for b in run.benchmarks:
            row = (b.label, b.op, b.payload.shown, b.fs)
            medians.setdefault(row, [None] * len(runs))[k] = b.median_ms
    rows = [[*row, " ".join(map(_ms, m)), _apart(m)] for row, m in medians.items()]
    doc = Document("")
    spread = filesystems(benches)
    if len(spread) > 1:  # the answer first
        doc.add(Heading(f"{', '.join(spread[1:])} against {spread[0]}, over the runs"))
        doc.add(*axis_baseline(benches, FS, spread[0], run_labels(benches)))
        doc.add(Heading("Each run", 3))
    doc.add(
        paragraph(f"{len(runs)} runs, each a process of its own: {', '.join(map(str, paths))}"),
        table(
            ["backend", "op", "payload", "fs", "median ms, run by run", "runs apart (sd)"],
            rows,
            text_columns=4,
        ),
        paragraph(
            "runs apart: the standard deviation of the runs' medians (on the log scale, as a "
            "%): this machine's run-to-run spread for that benchmark, which a verdict between "
            "runs must exceed."
        ),
    )
    return doc.add(lines_of(*_commands(paths))) if commands else doc


def _commands(paths: list[Path]) -> list[str]:
    """What to run next with the series: the whole of it, and it against another."""
    shown = " ".join(str(p) for p in paths)
    return [
        f"the series in full (each run, and rows over the runs): vcsbench report {shown}",
        "against another series (another machine, build or week): vcsbench compare "
        f"--base-runs {shown} --other-runs ...",
    ]


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.3g}"


def _apart(figures: list[float | None]) -> str:
    logs = [math.log(m) for m in figures if m]
    if len(logs) < 2:
        return "—"
    return f"±{100 * statistics.stdev(logs):.1f}%"
