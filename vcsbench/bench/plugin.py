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
import re
import shlex
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest

from vcsbench import process
from vcsbench.backends import REGISTRY, Backend, split_variant
from vcsbench.bench.operations import Operation, make_operation
from vcsbench.bench.options import OPTIONS, Selection, add_options
from vcsbench.bench.payloads import load_payload
from vcsbench.bench.rounds import BenchmarkRun
from vcsbench.errors import VcsbenchError
from vcsbench.results.io import ResultWriter
from vcsbench.results.model import SCHEMA_VERSION, Benchmark
from vcsbench.sandbox import Sandbox, parse_fs_spec

PREFIX = "vcs-"
SELECTION = pytest.StashKey[Selection]()
FAILED = pytest.StashKey[list[Benchmark]]()
COUNT = pytest.StashKey[int]()
RUN_ID = pytest.StashKey[str]()


class Preset:
    """A selection parsed by ``vcsbench run``, handed to the pytest session as a plugin."""

    def __init__(
        self,
        selection: Selection,
        command: str,
        carry: dict[str, Any] | None = None,
        door: str = "vcsbench run",
    ) -> None:
        self.selection = selection
        self.command = command
        """The command line, for a person to read (never parsed again)."""
        self.door = door
        self.run_id = uuid.uuid4().hex
        self.carry: dict[str, Any] = carry or {"benchmarks": [], "failed_benchmarks": []}
        """Finished benchmarks of an earlier run that ``--resume`` keeps (raw entries)."""
        self.done: set[str] = {
            e["extra_info"]["vcsbench"]["name"] for e in self.carry["benchmarks"]
        } | {e["name"] for e in self.carry["failed_benchmarks"]}


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
    config.addinivalue_line(
        "markers",
        "vcs(backends=[...], fs=[...], payload=..., repos=N): where and with what a "
        "vcsbench benchmark runs (default: the --vcs-* options)",
    )
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
    selection = selection_of(metafunc.config)
    if "vcsbench" in metafunc.fixturenames:
        # A user's benchmark: a case per backend variant and filesystem, from its
        # @pytest.mark.vcs(backends=..., fs=...) or else from the --vcs-* options.
        from vcsbench.bench.fixture import cases_for

        pairs = cases_for(metafunc.definition.get_closest_marker("vcs"), selection)
        metafunc.parametrize("vcs_backend,vcs_fs", pairs, ids=["-".join(pair) for pair in pairs])
        return
    cases = selection.cases()
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

    def __init__(
        self,
        config: pytest.Config,
        mode: str,
        label: str,
        overall: tuple[int, int, float] = (1, 1, 0.0),
    ) -> None:
        """``overall``: (this benchmark's number, benchmarks in all, run start time)."""
        writer = config.get_terminal_writer()
        if mode == "auto":
            in_ci = os.environ.get("CI", "").lower() == "true"
            mode = "bar" if writer.hasmarkup and sys.stdout.isatty() and not in_ci else "lines"
        self.mode = mode
        self.writer = writer
        self.capture = config.pluginmanager.getplugin("capturemanager")
        self.label = label
        self.overall = overall
        self._last = 0.0
        self._drawn = False

    def __call__(self, done: int, total: int, elapsed: float, unit: str = "rounds") -> None:
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
        number, count, started = self.overall
        text = f"{self.label}: {done:,}/{total:,} {unit}, {rate:,.1f}/s, {left:.0f}s left"
        if count > 1 and unit == "rounds":
            # The run's time left, at the pace so far, for the benchmarks still to come.
            share = (number - 1 + done / total) / count
            run_elapsed = time.perf_counter() - started
            run_left = run_elapsed / share - run_elapsed if share > 0 else 0.0
            text = f"[{number}/{count}] {text}; run: {_duration(run_left)} left"
        with self._uncaptured():
            if self.writer.width_of_current_line and not self._drawn:
                # pytest's own output (a dot, a test id) is on this line: start a new one.
                self.writer.line()
            self._drawn = self.mode == "bar" and not final
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


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


class VcsSession:
    """Runs the benchmarks of one pytest session."""

    def __init__(self, config: pytest.Config, selection: Selection) -> None:
        self.config = config
        self.selection = selection
        self._session_sandboxes: dict[str, Sandbox] = {}
        self._stack = ExitStack()
        self._serial = 0
        self.started = time.perf_counter()
        self.count = config.stash.get(COUNT, 0) or len(selection.cases())
        self.ops_wall_s = 0.0

    def close(self) -> None:
        self._stack.close()

    @contextmanager
    def sandbox(self, spec_text: str) -> Iterator[Sandbox]:
        known = [s for s in self.selection.fs if s.text == spec_text]
        spec = known[0] if known else parse_fs_spec(spec_text)
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
        """One built-in operation of the matrix."""
        self.run_operation(
            benchmark,
            backend,
            fs,
            op,
            payload,
            lambda vcs: make_operation(op, vcs, load_payload(payload)),
        )

    def run_operation(
        self,
        benchmark: Any,
        backend: str,
        fs: str,
        op: str,
        payload: str,
        make: Callable[[Backend], Operation],
        repos: int | None = None,
    ) -> Benchmark | None:
        """Run, record and keep one benchmark of ``make(backend)``'s operation; the
        result (None with --benchmark-disable)."""
        selection = self.selection
        base, _ = split_variant(backend)
        availability = REGISTRY[base].available()
        if not availability.ok:
            pytest.skip(f"backend {base} unavailable: {availability.reason}")
        self._serial += 1
        label = f"{backend} {op} {payload} {fs}"
        benchmark.group = f"{op} {payload} {fs}"
        # pytest-benchmark's --benchmark-disable: run once, as a check that it works.
        rounds = 1 if benchmark.disabled else (repos or selection.repos)
        process.doing(label)
        try:
            with self.sandbox(fs) as sandbox, selection.make_backend(backend) as vcs:
                assert sandbox.info is not None
                vcs.ready(sandbox.root)  # removed with the sandbox, recorded or mounted
                slug = re.sub(
                    r"[^A-Za-z0-9_.-]+", "_", f"{self._serial:03d}-{vcs.name}-{op}-{payload}"
                )
                run = BenchmarkRun(
                    operation=make(vcs),
                    sandbox=sandbox.info,
                    workdir=sandbox.root / slug,
                    rounds=rounds,
                    cache=selection.cache,
                    verify=selection.verify,
                    progress=ProgressDisplay(
                        self.config,
                        selection.progress,
                        label,
                        (self._serial, self.count, self.started),
                    ),
                    name=benchmark.name,
                    age=selection.age,
                    layout=selection.layout,
                    recycle=selection.recycle,
                )
                interrupted: KeyboardInterrupt | None = None
                try:
                    run.run_all()
                except KeyboardInterrupt as exc:
                    # Keep what finished: the rounds done so far are a partial benchmark.
                    interrupted = exc
                    process.doing(f"{label}, round {len(run.log) + 1} of {rounds}")
                    if not len(run.log):
                        raise
                # Measured and written before the sandbox comes down, with the stop
                # signals held: one that arrives now waits until the benchmark is kept.
                with process.signals_held():
                    result = run.finish(vcs.describe())
                    result.harness["teardown_s"] = None
                    result.harness["teardown_note"] = (
                        "one sandbox for the session, torn down at its end"
                        if selection.fs_scope == "session"
                        else "the benchmark was interrupted; its sandbox came down after"
                    )
                    if not benchmark.disabled:
                        self._keep(benchmark, result)
        except VcsbenchError as exc:
            failure = str(exc)
        else:
            failure = ""
        if failure:
            pytest.fail(failure, pytrace=False)
        if sandbox.teardown_s is not None and interrupted is None:
            result.harness["teardown_s"] = sandbox.teardown_s
            result.harness.pop("teardown_note")
            if not benchmark.disabled:
                self._amend(benchmark, result)
        if interrupted is not None:
            raise interrupted
        process.doing("")
        if result.errors:
            first = result.error_samples[0]
            cause = result.diagnosis or f"first, round {first.round}: {first.error}"
            pytest.fail(
                f"{result.errors} of {result.repos} operations failed ({cause})",
                pytrace=False,
            )
        return None if benchmark.disabled else result

    def _amend(self, benchmark: Any, result: Benchmark) -> None:
        """Write a kept benchmark again with what was learnt after it was kept (how long
        its sandbox took to come down)."""
        if benchmark.stats is not None and "vcsbench" in benchmark.extra_info:
            benchmark.extra_info["vcsbench"]["harness"] = result.harness
            write_results(self.config, amend=benchmark.stats)
        else:  # every round failed: it is in the run's facts, written again
            write_results(self.config)

    def _keep(self, benchmark: Any, result: Benchmark) -> None:
        """Put the benchmark in the results and write the result file at once."""
        self.ops_wall_s += float(result.harness.get("ops_wall_s") or 0.0)
        benchmark.extra_info["vcsbench"] = result.to_json()
        ok_walls = result.samples_s
        if ok_walls:
            feed_pytest_benchmark(benchmark, ok_walls)
        else:
            # No sample to give pytest-benchmark; the benchmark and its errors are
            # kept in vcsbench's own part of the file.
            benchmark._mode = "vcsbench (every round failed)"
            self.config.stash.setdefault(FAILED, []).append(result)
        write_results(self.config)


SESSION = pytest.StashKey[VcsSession]()


@pytest.fixture
def vcsbench(
    benchmark: Any, vcs_session: VcsSession, vcs_backend: str, vcs_fs: str, request: Any
) -> Any:
    """Time your own VCS operation with vcsbench's sandboxes, verification and metrics.

    ``vcsbench(run, prepare=..., verify=...)``; see :mod:`vcsbench.bench.fixture`.
    """
    from vcsbench.bench.fixture import VcsBench

    return VcsBench(benchmark, vcs_session, vcs_backend, vcs_fs, request)


@pytest.fixture(scope="session")
def vcs_session(request: pytest.FixtureRequest) -> Iterator[VcsSession]:
    session = VcsSession(request.config, selection_of(request.config))
    request.config.stash[SESSION] = session
    yield session
    session.close()


@pytest.hookimpl(wrapper=True)
def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> Any:
    """pytest-benchmark's --benchmark-compare-fail regression as one line and exit 1 (not a
    traceback that loses the rest of the run's output); then vcsbench's closing line."""
    from pytest_benchmark.session import PerformanceRegression

    try:
        result = yield
    except PerformanceRegression as exc:
        if SELECTION not in config.stash:
            raise
        text = " ".join(str(exc).split())
        terminalreporter.write_line(f"vcsbench: regression beyond --benchmark-compare-fail: {text}")
        terminalreporter._session.exitstatus = pytest.ExitCode.TESTS_FAILED
        result = None
    closing_line(terminalreporter, config)
    return result


def closing_line(terminalreporter: Any, config: pytest.Config) -> None:
    """The closing line: wall time, and how much of it the timed operations were."""
    session = config.stash.get(SESSION, None)
    if session is None or not session._serial:
        return
    wall = time.perf_counter() - session.started
    share = 100 * session.ops_wall_s / wall if wall > 0 else 0.0
    terminalreporter.write_line(
        f"vcsbench: {session._serial} benchmark(s) in {_duration(wall)} ({wall:,.1f} s); "
        f"timed operations {session.ops_wall_s:,.1f} s ({share:.0f}%), the rest set-up, "
        "probes, verification and teardown"
    )


def backend_versions(backends: list[str]) -> dict[str, dict[str, str]]:
    """The library and tool versions (default options) of each backend the run selected
    (importing every registered library would cost seconds a run: Mercurial's alone ~1 s)."""
    versions: dict[str, dict[str, str]] = {}
    names = dict.fromkeys(split_variant(spec)[0] for spec in backends)
    for name in names:
        cls = REGISTRY[name]
        if cls.available().ok:
            with cls() as backend:
                versions[name] = backend.versions()
    return versions


MACHINE = pytest.StashKey[dict[str, Any]]()


def pytest_benchmark_update_machine_info(
    config: pytest.Config, machine_info: dict[str, Any]
) -> None:
    if SELECTION not in config.stash:
        return
    from vcsbench.measure.machine import machine_info as vcs_machine_info

    if MACHINE not in config.stash:
        config.stash[MACHINE] = {
            **vcs_machine_info(),
            "backend_versions": backend_versions(config.stash[SELECTION].backends),
        }
    machine_info["vcsbench"] = config.stash[MACHINE]


FACTS = pytest.StashKey[tuple[dict[str, Any], dict[str, Any]]]()
WRITER = pytest.StashKey[ResultWriter]()
WRITTEN = pytest.StashKey[list[Any]]()


def _result_path(config: pytest.Config) -> Path | None:
    """The result file (``--benchmark-json``), which vcsbench writes, not pytest-benchmark."""
    if WRITER in config.stash:
        return config.stash[WRITER].path
    bench_session = getattr(config, "_benchmarksession", None)
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
    path = _result_path(config)
    bench_session = getattr(config, "_benchmarksession", None)
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
    if amend is not None:
        values = [amend.as_dict(include_data=True)]
    else:
        done = {id(b) for b in written}
        new = [b for b in bench_session.benchmarks if not b.has_error and id(b) not in done]
        values = [*(carried if first else []), *(b.as_dict(include_data=True) for b in new)]
        written += new
    config.stash[WRITER].write(values, output_json, amend=amend is not None)
    if not (bench_session.save or bench_session.autosave):  # pytest-benchmark's own copy
        for bench in written[:-1]:  # the last may be amended yet
            bench.extra_info["vcsbench"] = {"written": str(path)}


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
    carry = preset.carry if preset is not None else {"benchmarks": [], "failed_benchmarks": []}
    output_json["benchmarks"] = [*carry["benchmarks"], *output_json.get("benchmarks", [])]
    output_json["vcsbench"] = {
        "version": __version__,
        "schema_version": SCHEMA_VERSION,
        "run_id": config.stash[RUN_ID],
        "command": command,
        "door": preset.door if preset is not None else "pytest",
        "selection": config.stash[SELECTION].given,
        "failed_benchmarks": [
            *carry["failed_benchmarks"],
            *(b.to_json() for b in config.stash.get(FAILED, [])),
        ],
    }


def _suite_by_default(config: pytest.Config) -> bool:
    """Whether the suite was collected only through ``testpaths`` without --benchmark-only."""
    from_testpaths = config.args_source == pytest.Config.ArgsSource.TESTPATHS
    return from_testpaths and not config.getoption("benchmark_only", False)


def carried(config: pytest.Config) -> bool:
    preset = _preset(config)
    return preset is not None and bool(preset.done)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With ``--resume``, leave out the benchmarks the earlier run finished."""
    suite = [item for item in items if "vcs_session" in getattr(item, "fixturenames", ())]
    if suite and _suite_by_default(config):
        # `pytest` in the source tree: testpaths hold the tests and the suite; the suite
        # runs when asked for (--benchmark-only, or its path given), not with the tests.
        config.hook.pytest_deselected(items=suite)
        items[:] = [item for item in items if item not in suite]
    preset = _preset(config)
    if preset is not None and preset.done:
        keep = [item for item in items if item.name not in preset.done]
        gone = [item for item in items if item.name in preset.done]
        if gone:
            config.hook.pytest_deselected(items=gone)
            items[:] = keep
    config.stash[COUNT] = sum(
        1 for item in items if "vcs_session" in getattr(item, "fixturenames", ())
    )


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The result file's last write (the run's facts as they end), and its first when no
    benchmark had samples: the failed benchmarks and their errors are results too."""
    config = session.config
    if SELECTION not in config.stash or _result_path(config) is None:
        return
    if WRITER in config.stash or config.stash.get(FAILED, []) or carried(config):
        write_results(config)
    # Else this run wrote nothing, and a file already there is an earlier run's: untouched.


def _pytest_command() -> str:
    """The command line that ran pytest, as a person would type it again."""
    program = sys.argv[0]
    if Path(program).name in ("pytest", "py.test", "__main__.py"):
        program = "pytest"
    return shlex.join([program, *sys.argv[1:]])
