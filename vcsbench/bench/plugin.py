"""The pytest plugin: ``--vcs-*`` options, the benchmark matrix, results in pytest-benchmark JSON.

``pytest benchmarks --benchmark-only`` and ``vcsbench run`` both come through here. The
plugin is installed for every pytest run in an environment that has vcsbench, so it does
nothing -- reads no file, parses nothing -- until vcsbench's options or its suite are used.

Its hooks only: the benchmarks of a session are run by :mod:`vcsbench.bench.session`
and the result file written by :mod:`vcsbench.bench.record`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vcsbench.backends import Variant
from vcsbench.bench import adapter
from vcsbench.bench.options import OPTIONS, add_options
from vcsbench.bench.record import (
    FAILED,
    RUN_ID,
    SELECTION,
    WRITER,
    carried,
    preset_of,
    result_path,
    run_facts,
    unwritten_line,
    write_results,
)
from vcsbench.bench.rules import rules_of
from vcsbench.bench.selection import Selection
from vcsbench.bench.session import COUNT, SESSION, VcsSession, closing_line
from vcsbench.errors import VcsbenchError
from vcsbench.results import layout, outlock
from vcsbench.sandbox import FsSpec

PREFIX = "vcs-"


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


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Check ``--vcs-*`` options up front when given: a bad value is one line, exit 4.
    Benchmarks under pytest-xdist are refused in vcsbench's words before pytest-benchmark
    refuses them in its own (xdist turns benchmarks off)."""
    workers = config.getoption("numprocesses", None) if hasattr(config.option, "dist") else None
    if workers and config.getoption("benchmark_only", False):
        raise pytest.UsageError(
            f"-n {workers}: benchmarks run in one process (its rounds are the machine's "
            "only work, and variants interleave in it); drop -n to run them"
        )
    config.addinivalue_line(
        "markers",
        "vcs(backends=[...], fs=[...], payload=..., repos=N): where and with what a "
        "vcsbench benchmark runs (default: the --vcs-* options)",
    )
    preset = preset_of(config)
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


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "vcs_session" not in metafunc.fixturenames:
        return
    selection = selection_of(metafunc.config)
    if "vcsbench" in metafunc.fixturenames:
        # A user's benchmark: a case per backend variant and filesystem, from its
        # @pytest.mark.vcs(backends=..., fs=...) or else from the --vcs-* options.
        from vcsbench.bench.fixture import cases_for

        try:
            pairs = cases_for(metafunc.definition.get_closest_marker("vcs"), selection)
        except VcsbenchError as exc:  # one line naming what is known, not a traceback
            raise pytest.Collector.CollectError(str(exc)) from None
        metafunc.parametrize(
            "vcs_backend,vcs_fs", pairs, ids=[f"{b.text}-{f.text}" for b, f in pairs]
        )
        return
    cases = selection.cases()
    if not cases:  # said in one line at the end of collection, not as an empty parameter set
        metafunc.config.stash[NOTHING] = selection.unsupported()
        return
    metafunc.parametrize(
        "backend,op,payload,fs",
        cases,
        ids=[case.id for case in cases],
    )


@pytest.fixture
def vcsbench(
    benchmark: Any, vcs_session: VcsSession, vcs_backend: Variant, vcs_fs: FsSpec, request: Any
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
    """For vcsbench's benchmarks, --benchmark-compare-fail is vcsbench's gate
    (:mod:`vcsbench.bench.gate`: the runs the unit, failing closed), not pytest-benchmark's
    statistics; its verdict in lines and exit 1 on failure. Then vcsbench's closing line."""
    from pytest_benchmark.session import PerformanceRegression

    from vcsbench.bench.gate import judge

    try:
        result = yield
    except PerformanceRegression:
        if SELECTION not in config.stash:
            raise
        result = None  # vcsbench's gate below decides
    if SELECTION in config.stash:
        try:
            passed = judge(config, terminalreporter.write_line)
        except VcsbenchError as exc:
            terminalreporter.write_line(f"vcsbench: {exc}")
            passed = False
        if passed is False:
            adapter.fail_run(terminalreporter)
    unwritten = unwritten_line(config)
    if unwritten is not None:  # a full disk: said once, and the run fails
        terminalreporter.write_line(f"vcsbench: {unwritten}")
        adapter.fail_run(terminalreporter)
    closing_line(terminalreporter, config)
    return result


def backend_versions(backends: list[Variant]) -> dict[str, dict[str, str]]:
    """The library and tool versions (default options) of each backend the run selected
    (importing every registered library would cost seconds a run: Mercurial's alone ~1 s)."""
    versions: dict[str, dict[str, str]] = {}
    for variant in {v.name: v for v in backends}.values():
        if variant.availability.ok:
            with variant.cls() as backend:
                versions[variant.name] = backend.versions()
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
    layout.put_machine(machine_info, config.stash[MACHINE])


def pytest_benchmark_update_json(
    config: pytest.Config, benchmarks: list[Any], output_json: dict[str, Any]
) -> None:
    if SELECTION in config.stash:
        run_facts(config, output_json)


def _suite_by_default(config: pytest.Config) -> bool:
    """Whether the suite was collected only through ``testpaths`` without --benchmark-only."""
    from_testpaths = config.args_source == pytest.Config.ArgsSource.TESTPATHS
    return from_testpaths and not config.getoption("benchmark_only", False)


NOTHING = pytest.StashKey[list[str]]()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With ``--resume``, leave out the benchmarks the earlier run finished. A selection
    of nothing that can run is a usage error naming why."""
    nothing = config.stash.get(NOTHING, None)
    if nothing is not None and not _suite_by_default(config):
        why = "; ".join(nothing) or "the selection is empty"
        raise pytest.UsageError(f"nothing to run: {why}")
    suite = [item for item in items if "vcs_session" in getattr(item, "fixturenames", ())]
    if suite and _suite_by_default(config):
        # `pytest` in the source tree: testpaths hold the tests and the suite; the suite
        # runs when asked for (--benchmark-only, or its path given), not with the tests.
        config.hook.pytest_deselected(items=suite)
        items[:] = [item for item in items if item not in suite]
    preset = preset_of(config)
    if preset is not None and preset.done:
        keep = [item for item in items if item.name not in preset.done]
        gone = [item for item in items if item.name in preset.done]
        if gone:
            config.hook.pytest_deselected(items=gone)
            items[:] = keep
    config.stash[COUNT] = sum(
        1 for item in items if "vcs_session" in getattr(item, "fixturenames", ())
    )
    if config.stash[COUNT]:
        rules_of(config)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Say which (backend, operation) pairs of the selection are skipped, and why."""
    config = session.config
    if config.stash.get(COUNT, 0) and SELECTION in config.stash:
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        for line in config.stash[SELECTION].unsupported():
            if reporter is not None:
                reporter.write_line(f"vcsbench: {line}")


def pytest_sessionstart(session: pytest.Session) -> None:
    """The result file held for this run (``pytest --benchmark-json``; ``vcsbench run``
    holds it already): another run writing it is refused before a benchmark starts."""
    config = session.config
    path = result_path(config)
    if path is not None:
        try:
            outlock.acquire(path, "--benchmark-json")
        except VcsbenchError as exc:
            raise pytest.UsageError(str(exc)) from None
        config.stash[HELD] = path


def pytest_unconfigure(config: pytest.Config) -> None:
    if HELD in config.stash:
        outlock.release(config.stash[HELD])


HELD = pytest.StashKey[Path]()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The result file's last write (the run's facts as they end), and its first when no
    benchmark had samples: the failed benchmarks and their errors are results too."""
    config = session.config
    if SELECTION not in config.stash or result_path(config) is None:
        return
    if WRITER in config.stash or config.stash.get(FAILED, []) or carried(config):
        write_results(config)
    # Else this run wrote nothing, and a file already there is an earlier run's: untouched.
