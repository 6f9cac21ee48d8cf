"""``vcsbench doctor --spread``: this machine's run-to-run spread, measured.

The same benchmarks run K times, each time as a separate ``vcsbench run`` (a process of
its own, sandboxes made anew), one after another: an A/A across runs. Each run's figures
(:func:`~vcsbench.results.run_figures.run_figure`: the median time, over the canary and
over its writes, the CPU per repository) go into a
:class:`~vcsbench.results.spread.Spread` kept for this machine, which every later run
records and every comparison between runs reads. The result files of the K runs are
kept in ``--keep DIR`` if asked, else removed.
"""

from __future__ import annotations

import datetime
import shlex
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from vcsbench import process
from vcsbench.bench.progress import duration
from vcsbench.errors import VcsbenchError
from vcsbench.measure.machine import machine_info
from vcsbench.results import read
from vcsbench.results.calibration import fingerprint
from vcsbench.results.drifting import FIGURES
from vcsbench.results.run_figures import run_figure
from vcsbench.results.spread import Spread, SpreadCell, op_class

DEFAULT_RUNS = 8
DEFAULT_BACKENDS = "git-pygit2,svn-fs"
DEFAULT_OPS = "create+commit,commit"
DEFAULT_PAYLOADS = "submission"
DEFAULT_REPOS = 100


def measure_spread(
    runs: int,
    run_args: list[str],
    keep: Path | None = None,
    say: Callable[[str], None] = print,
) -> Spread:
    """``runs`` separate runs of ``vcsbench run RUN_ARGS``; their figures as a Spread."""
    if runs < 3:
        raise VcsbenchError(
            f"--runs {runs} is too few: the spread needs 3 runs or more (8 by default)"
        )
    cells: dict[tuple[str, str, str], dict[str, list[float]]] = {}
    rounds: dict[tuple[str, str, str], int] = {}
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="vcsbench-spread-") as scratch:
        where = keep or Path(scratch)
        where.mkdir(parents=True, exist_ok=True)
        for index in range(runs):
            out = where / f"spread-run-{index + 1}.json"
            argv = [sys.executable, "-m", "vcsbench.cli", "run", *run_args]
            argv += ["--progress", "none", "--out", str(out)]
            if keep is None:  # files deleted at the end: the store never indexes them
                argv += ["--store", "none"]
            done = process.run_child(argv, capture=True)
            if done.passed:  # the run kept and took down what it made; nothing is measured
                process.note_signal(done.passed[0])
                raise process.Interrupted(done.passed[0])
            if done.code != 0:
                tail = (done.err.strip() or done.out.strip()).splitlines()[-1:]
                raise VcsbenchError(
                    f"spread run {index + 1} of {runs} failed (exit {done.code}): "
                    f"{tail[0] if tail else 'no output'}; the command: {shlex.join(argv[1:])}"
                )
            for bench in read(out).benchmarks:
                if bench.errors:
                    raise VcsbenchError(
                        f"spread run {index + 1}: {bench.label} {bench.op} had {bench.errors} "
                        "failed rounds; a calibration needs clean runs"
                    )
                key = (bench.backend.name, op_class(bench.op), bench.filesystem.fstype)
                rounds[key] = bench.repos_ok
                figures = cells.setdefault(key, {name: [] for name in FIGURES})
                for name in FIGURES:
                    value = run_figure(bench, name)
                    if value is not None and value > 0:
                        figures[name].append(value)
            elapsed = time.monotonic() - started
            left = elapsed / (index + 1) * (runs - index - 1)
            say(
                f"spread: run {index + 1} of {runs} done, {duration(elapsed)} so far, "
                f"~{duration(left)} left"
            )
    digest, described = fingerprint(machine_info())
    return Spread(
        fingerprint=digest,
        machine=described,
        measured=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        command=shlex.join(["vcsbench", "run", *run_args]),
        runs=runs,
        cells=tuple(
            SpreadCell(*key, rounds=rounds[key], figures={k: tuple(v) for k, v in figs.items()})
            for key, figs in cells.items()
        ),
    )
