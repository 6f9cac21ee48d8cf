"""A fake backend and operation that do known work, so tests can prove vcsbench's figures.

``KnownWrite`` writes exactly ``FILES`` files of ``FILE_BYTES`` each in ``DIRS``
directories below its repository, and ``SCRATCH_BYTES`` into its scratch space; nothing
else. Every figure vcsbench reports for it is known in advance.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import ClassVar

from vcsbench.backends.base import Backend
from vcsbench.backends.files import Files
from vcsbench.backends.tools import Availability
from vcsbench.bench.plan import RoundPlan
from vcsbench.bench.rounds import BenchmarkRun
from vcsbench.results.model import Benchmark
from vcsbench.sandbox import Sandbox, parse_fs_spec
from vcsbench.workload.operation import Operation, RoundPaths
from vcsbench.workload.payloads import Payload

DIRS = 3
FILES = 12
FILE_BYTES = 2 * 4096
SCRATCH_BYTES = 3 * 4096
CONTENT = bytes(range(256)) * (FILE_BYTES // 256)


def layout() -> dict[str, bytes]:
    return {f"d{i % DIRS}/f{i:02d}.bin": CONTENT for i in range(FILES)}


def write_plainly(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


class FakeBackend(Backend):
    """Writes files plainly: a "repository" is a directory of the committed files."""

    name = "fake"
    vcs = "fake"
    option_defaults: ClassVar[dict[str, str]] = {"corrupt": "false"}
    description = "plain files, for tests"
    verifier = "reading the files back"

    @classmethod
    def available(cls) -> Availability:
        return Availability(True)

    def versions(self) -> dict[str, str]:
        return {"fake": "1"}

    def create(self, path: Path) -> None:
        path.mkdir()

    def commit(self, path: Path, files: Files, message: str, scratch: Path) -> None:
        write_plainly(scratch / "staged", b"s" * SCRATCH_BYTES)
        for rel, data in files.items():
            target = path / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            write_plainly(target, b"x" * len(data) if self.options["corrupt"] == "true" else data)

    def verify(self, path: Path, files: Files) -> list[str]:
        return [
            f"{rel}: content differs"
            for rel, data in files.items()
            if (path / rel).read_bytes() != data
        ]

    def checkout(self, path: Path, target: Path, scratch: Path) -> None:
        raise NotImplementedError


class KnownWrite(Operation):
    name = "known-write"
    needs = frozenset({"create", "commit"})

    def __init__(self, backend: Backend, fail_rounds: frozenset[int] = frozenset()) -> None:
        super().__init__(backend, Payload("known", "known bytes", layout(), None))
        self.fail_rounds = fail_rounds
        self.calls = 0

    def run(self, paths: RoundPaths) -> None:
        self.calls += 1
        if self.calls - 1 in self.fail_rounds:
            raise RuntimeError("planted failure")
        self.backend.create(paths.repo)
        self.backend.commit(paths.repo, self.payload.files, "m", paths.scratch)

    def expected(self) -> Files:
        return dict(self.payload.files)


class KnownClock:
    """A clock that moves only when an operation says it took ``ns``: every time vcsbench
    reports is then known in advance."""

    def __init__(self) -> None:
        self.now = 0

    def __call__(self) -> int:
        return self.now


class KnownDelay(Operation):
    """An operation that takes a known time on a :class:`KnownClock`: round ``i`` takes
    ``delays_ns[i]``, and writes nothing."""

    name = "known-delay"
    needs = frozenset({"create"})

    def __init__(self, backend: Backend, clock: KnownClock, delays_ns: list[int]) -> None:
        super().__init__(backend, Payload("known", "known bytes", layout(), None))
        self.clock, self.delays_ns, self.calls = clock, delays_ns, 0

    def prepare(self, paths: RoundPaths) -> None:
        self.backend.create(paths.repo)

    def run(self, paths: RoundPaths) -> None:
        self.clock.now += self.delays_ns[self.calls]
        self.calls += 1

    def expected(self) -> Files:
        return {}


KNOWN_ROUNDS = 6


@contextmanager
def sandbox_for(spec: str, tmp_path: Path) -> Iterator[Sandbox]:
    """A sandbox of ``spec``, its loop image (if any) in ``tmp_path``."""
    with Sandbox(parse_fs_spec(spec), image_dir=tmp_path) as sandbox:
        yield sandbox


def run_known(sandbox: Sandbox, rounds: int = KNOWN_ROUNDS, **kwargs: object) -> Benchmark:
    """A benchmark of :class:`KnownWrite` in ``sandbox``, run and finished."""
    assert sandbox.info is not None
    backend = FakeBackend()
    run = BenchmarkRun(
        operation=KnownWrite(backend, **kwargs),  # type: ignore[arg-type]
        sandbox=sandbox.info,
        workdir=sandbox.root / "bench",
        plan=RoundPlan(rounds),
    )
    run.run_all()
    return run.finish(backend.describe())
