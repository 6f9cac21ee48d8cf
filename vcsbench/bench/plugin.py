"""The pytest plugin: ``--vcs-*`` options, the benchmark matrix, results in pytest-benchmark JSON.

``pytest benchmarks --benchmark-only`` and ``vcsbench run`` both come through here. The
plugin is installed for every pytest run in an environment that has vcsbench, so it does
nothing -- reads no file, parses nothing -- until vcsbench's options or its suite are used.

Timing: vcsbench runs its own round loop (``rounds.BenchmarkRun``) and then hands the
successful rounds' wall times to pytest-benchmark, so that pytest-benchmark's statistics,
``--benchmark-compare`` and ``--benchmark-save`` see exactly vcsbench's one clock, and no
failed round. pytest-benchmark has no public call for that; :func:`feed_pytest_benchmark`
does what its own ``pedantic`` does with the samples, and a test pins it.
"""

from __future__ import annotations

import os
import shlex
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest

from vcsbench.backends import REGISTRY, split_variant
from vcsbench.bench.operations import make_operation
from vcsbench.bench.options import OPTIONS, Selection, add_options
from vcsbench.bench.payloads import load_payload
from vcsbench.bench.rounds import BenchmarkRun
from vcsbench.errors import VcsbenchError
from vcsbench.results.io import compact, write_document
from vcsbench.results.model import SCHEMA_VERSION, Benchmark
from vcsbench.sandbox import Sandbox

PREFIX = "vcs-"
SELECTION = pytest.StashKey[Selection]()
FAILED = pytest.StashKey[list[Benchmark]]()
RUNNING: list[str] = []
"""The benchmark being run (with its rounds done), for the closing line of an interrupt."""
RUN_ID = pytest.StashKey[str]()


class Preset:
    """A selection parsed by ``vcsbench run``, handed to the pytest session as a plugin."""

    def __init__(self, selection: Selection, command: str) -> None:
        self.selection = selection
        self.command = command
        self.run_id = uuid.uuid4().hex


def _preset(config: pytest.Config) -> Preset | None:
    for plugin in config.pluginmanager.get_plugins():
        if isinstance(plugin, Preset):
            return plugin
    return None


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("vcsbench", "vcsbench: version-control backend benchmarks")
    add_options(group.addoption, PREFIX)


def _explicit(config: pytest.Config) -> bool:
    """Whether any ``--vcs-*`` option was given (then it is checked up front)."""
    for option in OPTIONS:
        value = config.getoption(f"vcs_{option.dest}")
        if value != ([] if option.repeat else option.default):
            return True
    return False


def pytest_configure(config: pytest.Config) -> None:
    """Check ``--vcs-*`` options up front when given: a bad value is one line, exit 4."""
    preset = _preset(config)
    if preset is not None:
        config.stash[SELECTION] = preset.selection
        config.stash[RUN_ID] = preset.run_id
    elif _explicit(config):
        config.stash[SELECTION] = _parse(config)


def _parse(config: pytest.Config) -> Selection:
    try:
        return Selection.from_getter(lambda dest: config.getoption(f"vcs_{dest}"))
    except VcsbenchError as exc:
        raise pytest.UsageError(str(exc)) from None


def selection_of(config: pytest.Config) -> Selection:
    """The session's selection, parsed on first use."""
    if SELECTION not in config.stash:
        config.stash[SELECTION] = _parse(config)
    return config.stash[SELECTION]


def _check_timer(config: pytest.Config) -> None:
    timer = config.getoption("benchmark_timer", None)
    name = str(timer) if timer is not None else "time.perf_counter"
    if name not in ("time.perf_counter", "perf_counter"):
        raise pytest.UsageError(
            f"--benchmark-timer={name} is not used by vcsbench: it times each operation with "
            "perf_counter_ns around the call alone (one clock for every figure); drop the flag"
        )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "vcs_session" not in metafunc.fixturenames:
        return
    _check_timer(metafunc.config)
    cases = selection_of(metafunc.config).cases()
    metafunc.parametrize("backend,op,payload,fs", cases, ids=["-".join(case) for case in cases])


def feed_pytest_benchmark(benchmark: Any, wall_s: list[float]) -> None:
    """Give pytest-benchmark these samples as its statistics, as its ``pedantic`` would.

    pytest-benchmark (5.x) keeps a benchmark's samples in the ``Metadata`` that
    ``_make_stats`` registers with its session, and marks the fixture used by ``_mode``.
    """
    benchmark._mode = "vcsbench (its own round loop)"
    stats = benchmark._make_stats(1)
    for value in wall_s:
        stats.update(value)


class ProgressDisplay:
    """Rounds done, rate and time left for the running benchmark."""

    def __init__(self, config: pytest.Config, mode: str, label: str) -> None:
        writer = config.get_terminal_writer()
        if mode == "auto":
            in_ci = os.environ.get("CI", "").lower() == "true"
            mode = "bar" if writer.hasmarkup and sys.stdout.isatty() and not in_ci else "lines"
        self.mode = mode
        self.writer = writer
        self.capture = config.pluginmanager.getplugin("capturemanager")
        self.label = label
        self._last = 0.0

    def __call__(self, done: int, total: int, elapsed: float) -> None:
        if self.mode == "none":
            return
        now = time.monotonic()
        final = done == total
        interval = 0.2 if self.mode == "bar" else 5.0
        if not final and now - self._last < interval:
            return
        self._last = now
        rate = done / elapsed if elapsed > 0 else 0.0
        left = (total - done) / rate if rate > 0 else 0.0
        text = f"{self.label}: {done}/{total} rounds, {rate:.1f}/s, {left:.0f}s left"
        with self._uncaptured():
            if self.mode == "bar":
                width = 24
                filled = int(width * done / total)
                bar = "#" * filled + "." * (width - filled)
                self.writer.write(f"\r[{bar}] {text}\x1b[K" + ("\n" if final else ""))
            else:
                self.writer.line(text)
            self.writer.flush()

    @contextmanager
    def _uncaptured(self) -> Iterator[None]:
        if self.capture is None:
            yield
        else:
            with self.capture.global_and_fixture_disabled():
                yield


class VcsSession:
    """Runs the benchmarks of one pytest session."""

    def __init__(self, config: pytest.Config, selection: Selection) -> None:
        self.config = config
        self.selection = selection
        self._session_sandboxes: dict[str, Sandbox] = {}
        self._stack = ExitStack()
        self._serial = 0

    def close(self) -> None:
        self._stack.close()

    @contextmanager
    def sandbox(self, spec_text: str) -> Iterator[Sandbox]:
        spec = next(s for s in self.selection.fs if s.text == spec_text)
        if self.selection.fs_scope == "session":
            if spec_text not in self._session_sandboxes:
                self._session_sandboxes[spec_text] = self._stack.enter_context(
                    Sandbox(spec, self.selection.image_dir)
                )
            yield self._session_sandboxes[spec_text]
            return
        with Sandbox(spec, self.selection.image_dir) as sandbox:
            yield sandbox

    def run(self, benchmark: Any, backend: str, op: str, payload: str, fs: str) -> None:
        selection = self.selection
        base, _ = split_variant(backend)
        availability = REGISTRY[base].available()
        if not availability.ok:
            pytest.skip(f"backend {base} unavailable: {availability.reason}")
        self._serial += 1
        label = f"{backend} {op} {payload} {fs}"
        benchmark.group = f"{op} {payload} {fs}"
        # pytest-benchmark's --benchmark-disable: run once, as a check that it works.
        rounds = 1 if benchmark.disabled else selection.repos
        RUNNING[:] = [label]
        try:
            with self.sandbox(fs) as sandbox, selection.make_backend(backend) as vcs:
                assert sandbox.info is not None
                vcs.ready(sandbox.root)  # removed with the sandbox, recorded or mounted
                slug = f"{self._serial:03d}-{vcs.name}-{op}-{payload}".replace("+", "_")
                run = BenchmarkRun(
                    operation=make_operation(op, vcs, load_payload(payload)),
                    sandbox=sandbox.info,
                    workdir=sandbox.root / slug,
                    rounds=rounds,
                    cache=selection.cache,
                    verify=selection.verify,
                    progress=ProgressDisplay(self.config, selection.progress, label),
                    name=benchmark.name,
                )
                try:
                    run.run_all()
                except KeyboardInterrupt:
                    RUNNING[:] = [f"{label}, round {len(run.log.rounds) + 1} of {rounds}"]
                    raise
                result = run.finish(vcs.describe())
                RUNNING.clear()
        except VcsbenchError as exc:
            pytest.fail(str(exc), pytrace=False)
        if not benchmark.disabled:
            benchmark.extra_info["vcsbench"] = result.to_json()
            ok_walls = result.samples_s
            if ok_walls:
                feed_pytest_benchmark(benchmark, ok_walls)
            else:
                # No sample to give pytest-benchmark; the benchmark and its errors are
                # kept in vcsbench's own part of the file.
                benchmark._mode = "vcsbench (every round failed)"
                self.config.stash.setdefault(FAILED, []).append(result)
        if result.errors:
            first = result.error_samples[0]
            pytest.fail(
                f"{result.errors} of {result.repos} operations failed "
                f"(first, round {first.round}: {first.error})",
                pytrace=False,
            )


@pytest.fixture(scope="session")
def vcs_session(request: pytest.FixtureRequest) -> Iterator[VcsSession]:
    session = VcsSession(request.config, selection_of(request.config))
    yield session
    session.close()


def backend_versions() -> dict[str, dict[str, str]]:
    """Each available backend's library and tool versions (default options)."""
    versions: dict[str, dict[str, str]] = {}
    for name, cls in REGISTRY.items():
        if cls.available().ok:
            with cls() as backend:
                versions[name] = backend.versions()
    return versions


def pytest_benchmark_update_machine_info(
    config: pytest.Config, machine_info: dict[str, Any]
) -> None:
    if SELECTION not in config.stash:
        return
    from vcsbench.measure.machine import machine_info as vcs_machine_info

    machine_info["vcsbench"] = {**vcs_machine_info(), "backend_versions": backend_versions()}


def pytest_benchmark_update_json(
    config: pytest.Config, benchmarks: list[Any], output_json: dict[str, Any]
) -> None:
    if SELECTION not in config.stash:
        return
    from vcsbench import __version__

    preset = _preset(config)
    command = preset.command if preset is not None else _pytest_command()
    if RUN_ID not in config.stash:
        config.stash[RUN_ID] = uuid.uuid4().hex
    output_json["vcsbench"] = {
        "version": __version__,
        "schema_version": SCHEMA_VERSION,
        "run_id": config.stash[RUN_ID],
        "command": command,
        "failed_benchmarks": [b.to_json() for b in config.stash.get(FAILED, [])],
    }


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Leave the result file compact (gzip'd for a ``.gz`` name), and write it when every
    benchmark failed in every round.

    pytest-benchmark writes indented JSON, and nothing when it holds no benchmark with
    samples; the failed benchmarks and their errors are results all the same.
    """
    config = session.config
    bench_session = getattr(config, "_benchmarksession", None)
    if SELECTION not in config.stash or bench_session is None or not bench_session.json:
        return
    path = Path(bench_session.json)
    if bench_session.benchmarks or not config.stash.get(FAILED, []):
        if path.exists():
            compact(path)
        return
    machine_info = bench_session.get_machine_info()
    commit_info = config.hook.pytest_benchmark_generate_commit_info(config=config)
    output_json = config.hook.pytest_benchmark_generate_json(
        config=config,
        benchmarks=[],
        include_data=True,
        machine_info=machine_info,
        commit_info=commit_info,
    )
    config.hook.pytest_benchmark_update_json(config=config, benchmarks=[], output_json=output_json)
    write_document(output_json, path)


def _pytest_command() -> str:
    """The command line that ran pytest, as a person would type it again."""
    program = sys.argv[0]
    if Path(program).name in ("pytest", "py.test", "__main__.py"):
        program = "pytest"
    return shlex.join([program, *sys.argv[1:]])
