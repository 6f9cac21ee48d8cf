"""The pytest plugin: ``--vcs-*`` options, the benchmark matrix, results in pytest-benchmark JSON.

``pytest benchmarks --benchmark-only`` and ``vcsbench run`` both come through here.
"""

from __future__ import annotations

import os
import shlex
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from vcsbench.backends import REGISTRY, Backend, make_backend
from vcsbench.backends.base import parse_options
from vcsbench.errors import VcsbenchError
from vcsbench.filesystems import FsSpec, Sandbox, parse_fs_list, require_root
from vcsbench.runner import CACHE_STATES, BenchmarkRun, VerifyPolicy
from vcsbench.workloads import DEFAULT_PAYLOADS, OPS, Operation, load_payload, payload_names

FS_SCOPES = ("benchmark", "session")
PROGRESS_MODES = ("auto", "bar", "lines", "none")
DEFAULT_REPOS = 100


def default_fs() -> str:
    """tmpfs as root; otherwise a directory under the temp dir (sandboxes need root)."""
    return "tmpfs" if os.geteuid() == 0 else f"dir:{tempfile.gettempdir()}"


def _names(text: str, known: list[str] | tuple[str, ...], what: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if names == ["all"]:
        return list(known)
    for name in names:
        if name not in known:
            raise VcsbenchError(f"unknown {what} {name!r}; known: {', '.join(known)} (or all)")
    if not names:
        raise VcsbenchError(f"no {what} given; known: {', '.join(known)}")
    return names


@dataclass
class Selection:
    """What to run, parsed and checked once, for both doors (pytest and ``vcsbench run``)."""

    backends: list[str]
    ops: list[str]
    payloads: list[str]
    fs: list[FsSpec]
    repos: int
    cache: str = "warm"
    image_dir: Path | None = None
    verify: VerifyPolicy = field(default_factory=VerifyPolicy)
    fs_scope: str = "benchmark"
    backend_options: dict[str, dict[str, str]] = field(default_factory=dict)

    @classmethod
    def parse(
        cls,
        *,
        backends: str = "all",
        ops: str = "all",
        payloads: str = ",".join(DEFAULT_PAYLOADS),
        fs: str | None = None,
        repos: str | int = DEFAULT_REPOS,
        cache: str = "warm",
        image_dir: str | None = None,
        verify: str = "all",
        fs_scope: str = "benchmark",
        backend_options: list[str] | None = None,
    ) -> Selection:
        try:
            repo_count = int(repos)
        except ValueError:
            raise VcsbenchError(f"repos {repos!r} is not a whole number >= 1") from None
        if repo_count < 1:
            raise VcsbenchError(f"repos {repos!r} is not a whole number >= 1")
        if cache not in CACHE_STATES:
            raise VcsbenchError(f"cache {cache!r} is not one of {', '.join(CACHE_STATES)}")
        if cache == "cold" and os.geteuid() != 0:
            raise VcsbenchError("cache cold drops the page cache, which needs root; use warm")
        if fs_scope not in FS_SCOPES:
            raise VcsbenchError(f"fs scope {fs_scope!r} is not one of {', '.join(FS_SCOPES)}")
        image = Path(image_dir) if image_dir else None
        if image is not None and not image.is_dir():
            raise VcsbenchError(f"image dir {image_dir!r} is not an existing directory")
        specs = parse_fs_list(fs or default_fs())
        for spec in specs:
            require_root(spec)
        selection = cls(
            backends=_names(backends, list(REGISTRY), "backend"),
            ops=_names(ops, OPS, "operation"),
            payloads=_names(payloads, payload_names(), "payload"),
            fs=specs,
            repos=repo_count,
            cache=cache,
            image_dir=image,
            verify=VerifyPolicy.parse(verify),
            fs_scope=fs_scope,
        )
        for item in backend_options or []:
            name, sep, pair = item.partition(":")
            if not sep or name not in REGISTRY:
                raise VcsbenchError(
                    f"backend option {item!r} is not BACKEND:key=value with BACKEND one of "
                    + ", ".join(REGISTRY)
                )
            selection.backend_options.setdefault(name, {}).update(parse_options([pair]))
        for name, options in selection.backend_options.items():
            make_backend(name, options)
        return selection

    def cases(self) -> list[tuple[str, str, str, str]]:
        return [
            (backend, op, payload, spec.text)
            for spec in self.fs
            for payload in self.payloads
            for op in self.ops
            for backend in self.backends
        ]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("vcsbench", "vcsbench: version-control backend benchmarks")
    group.addoption(
        "--vcs-backends",
        default="all",
        help=f"comma-separated backends: {', '.join(REGISTRY)} (default: all)",
    )
    group.addoption(
        "--vcs-ops",
        default="all",
        help=f"comma-separated operations: {', '.join(OPS)} (default: all)",
    )
    group.addoption(
        "--vcs-payloads",
        default=",".join(DEFAULT_PAYLOADS),
        help="comma-separated payloads from fixtures/payloads.toml "
        f"(default: {','.join(DEFAULT_PAYLOADS)}; many-files and large on request)",
    )
    group.addoption(
        "--vcs-fs",
        default=None,
        help="sandbox specs, comma-separated: tmpfs[:size=2G], "
        "ext4|xfs|btrfs[:size=8G,mkfs=...,mount=...], dir:PATH "
        "(default: tmpfs as root, else dir:$TMPDIR)",
    )
    group.addoption(
        "--vcs-fs-scope",
        default="benchmark",
        choices=FS_SCOPES,
        help="a fresh sandbox per benchmark (default) or one per session",
    )
    group.addoption(
        "--vcs-repos",
        default=str(DEFAULT_REPOS),
        help=f"rounds per benchmark, one fresh repository each (default {DEFAULT_REPOS})",
    )
    group.addoption(
        "--vcs-cache",
        default="warm",
        help="warm (default) or cold: sync + drop_caches before each round (root)",
    )
    group.addoption(
        "--vcs-image-dir",
        default=None,
        help="directory for loop-mounted images (default: a temp directory)",
    )
    group.addoption(
        "--vcs-backend-option",
        action="append",
        default=[],
        metavar="BACKEND:KEY=VALUE",
        help="backend option, repeatable, e.g. git-cli:core.fsync=all",
    )
    group.addoption(
        "--vcs-verify",
        default="all",
        help="verify every repository (all, default) or K evenly spaced (sample:K)",
    )
    group.addoption(
        "--vcs-progress",
        default="auto",
        choices=PROGRESS_MODES,
        help="progress per benchmark: a bar on a terminal, plain lines otherwise",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Check every ``--vcs-*`` option once, up front: a bad value is one line, exit 4."""
    try:
        config.stash[SELECTION] = _parse_selection(config)
    except VcsbenchError as exc:
        raise pytest.UsageError(str(exc)) from None


SELECTION = pytest.StashKey[Selection]()


def _parse_selection(config: pytest.Config) -> Selection:
    opt = config.getoption
    return Selection.parse(
        backends=opt("--vcs-backends"),
        ops=opt("--vcs-ops"),
        payloads=opt("--vcs-payloads"),
        fs=opt("--vcs-fs"),
        repos=opt("--vcs-repos"),
        cache=opt("--vcs-cache"),
        image_dir=opt("--vcs-image-dir"),
        verify=opt("--vcs-verify"),
        fs_scope=opt("--vcs-fs-scope"),
        backend_options=opt("--vcs-backend-option"),
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "vcs_session" not in metafunc.fixturenames:
        return
    cases = metafunc.config.stash[SELECTION].cases()
    metafunc.parametrize("backend,op,payload,fs", cases, ids=["-".join(case) for case in cases])


class ProgressDisplay:
    """Rounds done, rate and time left for the running benchmark."""

    def __init__(self, config: pytest.Config, label: str) -> None:
        mode = config.getoption("--vcs-progress")
        writer = config.get_terminal_writer()
        if mode == "auto":
            mode = "bar" if writer.hasmarkup and sys.stdout.isatty() else "lines"
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

    def backend(self, name: str) -> Backend:
        return make_backend(name, self.selection.backend_options.get(name))

    def run(self, benchmark: Any, backend: str, op: str, payload: str, fs: str) -> None:
        selection = self.selection
        availability = REGISTRY[backend].available()
        if not availability.ok:
            pytest.skip(f"backend {backend} unavailable: {availability.reason}")
        self._serial += 1
        label = f"{backend} {op} {payload} {fs}"
        benchmark.group = f"{op} {payload} {fs}"
        try:
            with self.sandbox(fs) as sandbox, self.backend(backend) as vcs:
                assert sandbox.info is not None
                workdir = sandbox.root / f"{self._serial:03d}-{backend}-{op}-{payload}".replace(
                    "+", "_"
                )
                run = BenchmarkRun(
                    operation=Operation(op, vcs, load_payload(payload)),
                    sandbox=sandbox.info,
                    workdir=workdir,
                    rounds=selection.repos,
                    cache=selection.cache,
                    verify=selection.verify,
                    progress=ProgressDisplay(self.config, label),
                )
                try:
                    benchmark.pedantic(
                        run.target,
                        setup=run.setup,
                        teardown=run.teardown,
                        rounds=selection.repos,
                        iterations=1,
                        warmup_rounds=0,
                    )
                except BaseException:
                    # An interrupted benchmark is unfinished: keep it out of the results,
                    # which keep every benchmark that did finish.
                    benchmark.has_error = True
                    raise
                info = run.finish()
        except VcsbenchError as exc:
            pytest.fail(str(exc), pytrace=False)
        benchmark.extra_info["vcsbench"] = info
        failed = run.failed_rounds
        samples = benchmark.stats.stats.data
        if failed and len(failed) < len(samples):
            # A failed operation is an error, never a fast sample.
            for index in reversed(failed):
                del samples[index]
        if failed:
            first = info["error_samples"][0]
            pytest.fail(
                f"{len(failed)} of {selection.repos} operations failed "
                f"(first, round {first['round']}: {first['error']})",
                pytrace=False,
            )


@pytest.fixture(scope="session")
def vcs_session(request: pytest.FixtureRequest) -> Iterator[VcsSession]:
    session = VcsSession(request.config, request.config.stash[SELECTION])
    yield session
    session.close()


def pytest_benchmark_update_machine_info(
    config: pytest.Config, machine_info: dict[str, Any]
) -> None:
    from vcsbench.environment import machine_info as vcs_machine_info

    machine_info["vcsbench"] = vcs_machine_info()


def pytest_benchmark_update_json(
    config: pytest.Config, benchmarks: list[Any], output_json: dict[str, Any]
) -> None:
    from vcsbench import __version__

    output_json["vcsbench"] = {
        "version": __version__,
        "command": os.environ.get("VCSBENCH_COMMAND") or _pytest_command(),
    }


def _pytest_command() -> str:
    """The command line that ran pytest, as a person would type it again."""
    program = sys.argv[0]
    if Path(program).name in ("pytest", "py.test", "__main__.py"):
        program = "pytest"
    return shlex.join([program, *sys.argv[1:]])
