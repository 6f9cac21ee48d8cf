"""The result file of a pytest session: what the run records about itself, and the
writer that keeps the file whole after every benchmark.

A result file is pytest-benchmark JSON (so pytest-benchmark's own ``compare`` reads it)
with vcsbench's part in it (see :mod:`vcsbench.results.model`); vcsbench writes it, not
pytest-benchmark, after each benchmark and at the session's end.
"""

from __future__ import annotations

import shlex
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from vcsbench.bench import adapter
from vcsbench.bench.selection import Selection
from vcsbench.errors import without_secrets
from vcsbench.results import layout
from vcsbench.results.io import ResultWriter
from vcsbench.results.layout import Carried
from vcsbench.results.migrate import SCHEMA_VERSION
from vcsbench.results.model import Benchmark

SELECTION = pytest.StashKey[Selection]()
FAILED = pytest.StashKey[list[Benchmark]]()
RUN_ID = pytest.StashKey[str]()


class Preset:
    """A selection parsed by ``vcsbench run``, handed to the pytest session as a plugin."""

    def __init__(
        self,
        selection: Selection,
        command: str,
        carry: Carried | None = None,
        door: str = "vcsbench run",
    ) -> None:
        self.selection = selection
        self.command = command
        """The command line, for a person to read (never parsed again)."""
        self.door = door
        self.run_id = uuid.uuid4().hex
        self.refusal = ""
        """Bad input the session found once a benchmark started, for the command to say."""
        self.carry = carry or Carried()
        """Finished benchmarks of an earlier run that ``--resume`` keeps (raw entries)."""
        self.done: set[str] = self.carry.names


def preset_of(config: pytest.Config) -> Preset | None:
    """The selection ``vcsbench run`` handed to this pytest session, if it did."""
    for plugin in config.pluginmanager.get_plugins():
        if isinstance(plugin, Preset):
            return plugin
    return None


def carried(config: pytest.Config) -> bool:
    preset = preset_of(config)
    return preset is not None and bool(preset.done)


FACTS = pytest.StashKey[tuple[dict[str, Any], dict[str, Any]]]()
WRITER = pytest.StashKey[ResultWriter]()
WRITTEN = pytest.StashKey[list[Any]]()
UNWRITTEN = pytest.StashKey[dict[str, str]]()
"""Finished benchmarks the last write of the result file could not hold (name -> why;
``""``: the file itself, when it could not be written at all)."""


def unwritten_line(config: pytest.Config) -> str | None:
    """One line, when the result file could not be written: why, and which finished
    benchmarks are not in it."""
    unwritten = config.stash.get(UNWRITTEN, {})
    path = result_path(config)
    if not unwritten or path is None:
        return None
    why = unwritten.get("") or next(iter(unwritten.values()))
    names = [name.removeprefix("test_vcs[").removesuffix("]") for name in unwritten if name]
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    lost = (
        f"{len(names)} finished benchmark(s) are not in it: {shown}"
        if names
        else ("the run's facts are not in it")
    )
    return (
        f"--out {path}: could not be written ({why}); {lost}; it holds what was written "
        "before. Free space there, or give another --out, and run them again"
    )


def result_path(config: pytest.Config) -> Path | None:
    """The result file (``--benchmark-json``), which vcsbench writes, not pytest-benchmark."""
    if WRITER in config.stash:
        return config.stash[WRITER].path
    bench_session = adapter.session_of(config)
    if bench_session is None or not bench_session.json:
        return None
    return Path(bench_session.json)


def write_results(config: pytest.Config, amend: Any = None) -> None:
    """Write the result file as it stands (atomically), so that a run killed later keeps
    every benchmark that finished before; ``amend``: a benchmark written last, again.

    Written after every benchmark, so its cost must not grow with the benchmarks before,
    nor its memory: the machine and commit facts are read once (pytest-benchmark's take a
    process each), the benchmarks written before are copied from the file, and their
    figures leave memory (pytest-benchmark keeps its samples, 32 bytes a round). vcsbench
    is the file's only writer: pytest-benchmark's own write at the end is turned off."""
    path = result_path(config)
    bench_session = adapter.session_of(config)
    if path is None or bench_session is None:
        return
    if FACTS not in config.stash:
        config.stash[FACTS] = (
            bench_session.get_machine_info(),
            config.hook.pytest_benchmark_generate_commit_info(config=config),
        )
    machine_info, commit_info = config.stash[FACTS]
    output_json = config.hook.pytest_benchmark_generate_json(
        config=config,
        benchmarks=[],
        include_data=True,
        machine_info=machine_info,
        commit_info=commit_info,
    )
    config.hook.pytest_benchmark_update_json(
        config=config, benchmarks=bench_session.benchmarks, output_json=output_json
    )
    carried = output_json.pop("benchmarks", [])  # an earlier run's (--resume)
    first = WRITER not in config.stash
    if first:
        path.parent.mkdir(parents=True, exist_ok=True)
        config.stash[WRITER] = ResultWriter(path)
        bench_session.json = None  # the file is written here, whole, after each benchmark
    written = config.stash.setdefault(WRITTEN, [])
    new = []
    if amend is not None:
        values = [amend.as_dict(include_data=True)]
    else:
        done = {id(b) for b in written}
        new = [b for b in bench_session.benchmarks if not b.has_error and id(b) not in done]
        values = [*(carried if first else []), *(b.as_dict(include_data=True) for b in new)]
    try:
        config.stash[WRITER].write(values, output_json, amend=amend is not None)
    except OSError as exc:  # a full disk: the run goes on; what is not written is said
        unwritten = config.stash.setdefault(UNWRITTEN, {})
        unwritten.update({str(b.name): exc.strerror or str(exc) for b in new})
        unwritten.setdefault("", exc.strerror or str(exc))
        return
    written += new
    for bench in new:
        config.stash.get(UNWRITTEN, {}).pop(str(bench.name), None)
    config.stash.get(UNWRITTEN, {}).pop("", None)
    if not (bench_session.save or bench_session.autosave):  # pytest-benchmark's own copy
        for bench in written[:-1]:  # the last may be amended yet
            layout.written_to(bench.extra_info, str(path))


def run_facts(config: pytest.Config, output_json: dict[str, Any]) -> None:
    """vcsbench's part of the file: the run's version, id, command, selection, and the
    benchmarks every round of which failed (pytest-benchmark keeps no entry for them)."""
    from vcsbench import __version__

    preset = preset_of(config)
    command = preset.command if preset is not None else _pytest_command()
    if RUN_ID not in config.stash:
        config.stash[RUN_ID] = uuid.uuid4().hex
    facts = {
        "version": __version__,
        "schema_version": SCHEMA_VERSION,
        "run_id": config.stash[RUN_ID],
        "command": without_secrets(command),
        "door": preset.door if preset is not None else "pytest",
        "selection": config.stash[SELECTION].given,
        "spread": _spread(config),
    }
    carried = preset.carry if preset is not None else Carried()
    failed = [b.to_json() for b in config.stash.get(FAILED, [])]
    layout.put_run(output_json, facts, carried, failed)


SPREAD = pytest.StashKey[dict[str, Any] | None]()


def _spread(config: pytest.Config) -> dict[str, Any] | None:
    """This machine's run-to-run spread, as last measured (``vcsbench doctor --spread``),
    read once a run."""
    if SPREAD not in config.stash:
        from vcsbench.measure.machine import machine_info
        from vcsbench.results.calibration import recorded_for

        config.stash[SPREAD] = recorded_for(machine_info())
    return config.stash[SPREAD]


def _pytest_command() -> str:
    """The command line that ran pytest, as a person would type it again."""
    program = sys.argv[0]
    if Path(program).name in ("pytest", "py.test", "__main__.py"):
        program = "pytest"
    return shlex.join([program, *sys.argv[1:]])
