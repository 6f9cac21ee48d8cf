"""``vcsbench run``'s engine: the same pytest-benchmark suite ``pytest benchmarks`` runs.

One engine, two doors: the selection the command line parsed is handed to the pytest
session as a plugin (no strings, no environment variables), and pytest runs the suite
shipped in the package, in this process, so both doors write the same JSON.
"""

from __future__ import annotations

import contextlib
import os
import shlex
from collections.abc import Sequence
from pathlib import Path

import pytest

from vcsbench.bench import suite
from vcsbench.bench.record import Preset
from vcsbench.bench.selection import Selection
from vcsbench.errors import VcsbenchError
from vcsbench.results.layout import Carried
from vcsbench.results.outlock import owned

COMPACT_COLUMNS = "median,iqr,rounds"
"""pytest-benchmark's table where it is asked for: the median and its spread (vcsbench's
own table follows, with every figure); its long test names leave room for three columns."""
DISPLAY = (
    "--benchmark-histogram",
    "--benchmark-columns",
    "--benchmark-sort",
    "--benchmark-group-by",
    "--benchmark-name",
    "--benchmark-cprofile",
    "--benchmark-verbose",
)
"""pytest-benchmark's options that ask for its display (its histogram is drawn by it)."""


def run_suite(
    selection: Selection,
    json_out: Path,
    extra_args: Sequence[str] = (),
    command: Sequence[str] = (),
    carry: Carried | None = None,
    door: str = "vcsbench run",
) -> tuple[int, str]:
    """Run the suite for ``selection``, writing ``json_out``.

    Returns pytest's exit code and this run's id: the file holds this run's results
    only if its run id is that one (a failed run leaves an older file as it was). Bad
    input found once a benchmark started (a sandbox too small for the repositories
    asked) is raised as the one line it is; benchmarks finished before it stay kept.
    ``carry``: finished benchmarks of an earlier run (``--resume``), kept in the file and
    not run again. ``command`` is recorded for people to read; ``door`` says which
    command wrote the file (``--resume`` takes files of ``vcsbench run`` only).
    """
    argv = [
        str(Path(suite.__file__)),
        "--benchmark-only",
        f"--benchmark-json={json_out}",
        f"--benchmark-columns={COMPACT_COLUMNS}",
        # vcsbench's own summary follows with every figure: pytest-benchmark's µs tables
        # before it repeated its medians (the pytest door, `pytest benchmarks`, keeps
        # them, and so does a run whose arguments after -- ask for its display)
        *([] if any(a.startswith(DISPLAY) for a in extra_args) else ["--benchmark-quiet"]),
        "-p",
        "no:cacheprovider",
        "-o",
        "filterwarnings=default",
        # An interrupt before the first benchmark finished is said in vcsbench's own line.
        "-W",
        "ignore:Not saving anything",
        "-o",
        "python_files=*.py",
        # python_files=*.py would have pytest rewrite the asserts of every module imported
        # (Mercurial's, pygit2's): seconds a run, and the suite asserts nothing itself.
        "--assert=plain",
        "--rootdir",
        str(Path(suite.__file__).parent),
        "-q",
        *extra_args,
    ]
    json_out.parent.mkdir(parents=True, exist_ok=True)
    preset = Preset(selection, shlex.join(command), carry, door)
    # pytest-benchmark makes its own storage directory (./.benchmarks) whether or not it
    # saves anything there: one it made and left empty goes.
    storage = Path(".benchmarks")
    made = not os.path.lexists(storage)
    with owned(json_out):  # a second run on the same --out is refused before it starts
        try:
            code = int(pytest.main(argv, plugins=[preset]))
        finally:
            if made:
                with contextlib.suppress(OSError):
                    storage.rmdir()
    if preset.refusal:
        print(flush=True)  # after pytest's progress dots, the refusal on a line of its own
        raise VcsbenchError(preset.refusal)
    return code, preset.run_id
