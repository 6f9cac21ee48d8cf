"""Operations: what a round does, as a table of small classes.

Each operation is split into an untimed ``prepare``, the timed ``run`` and an untimed
``verify``, and says which paths are its result (``measured``: what footprint and floor
count). A backend declares the primitive calls it implements (``capabilities``); an
operation declares the ones it needs (``needs``), so the matrix holds only pairs that
can run. Adding an operation is one class here and one entry in ``OPERATIONS``.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from vcsbench.backends import Backend
from vcsbench.backends.base import Files, compare_files
from vcsbench.bench.payloads import Payload
from vcsbench.errors import VcsbenchError

COMMIT_MESSAGE = "vcsbench commit"


@dataclass(frozen=True)
class RoundPaths:
    """Where one round works: its repository, checkout target and scratch space."""

    repo: Path
    checkout: Path
    scratch: Path

    @classmethod
    def of(cls, workdir: Path, index: int) -> RoundPaths:
        name = f"r{index:07d}"
        return cls(
            workdir / "repos" / name, workdir / "checkouts" / name, workdir / "scratch" / name
        )


def read_tree(root: Path, ignore: frozenset[str] = frozenset()) -> dict[str, bytes]:
    """Every file below ``root`` as relative path -> content, skipping top-level ``ignore``."""
    files: dict[str, bytes] = {}
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if rel.parts[0] in ignore or not path.is_file():
            continue
        files[rel.as_posix()] = path.read_bytes()
    return files


class Operation(abc.ABC):
    """One kind of round, for one backend and payload."""

    name: ClassVar[str]
    needs: ClassVar[frozenset[str]]
    containers: ClassVar[tuple[str, ...]] = ("repos",)
    """Subdirectories of the benchmark's workdir whose entries are its result."""

    def __init__(self, backend: Backend, payload: Payload) -> None:
        self.backend = backend
        self.payload = payload
        self.change = payload.change()

    def prepare(self, paths: RoundPaths) -> None:
        """Untimed: what must exist before the timed part."""

    @abc.abstractmethod
    def run(self, paths: RoundPaths) -> None:
        """Timed: the VCS work only."""

    @abc.abstractmethod
    def expected(self) -> Files:
        """The newest revision's files after ``run``."""

    def verify(self, paths: RoundPaths) -> list[str]:
        """Untimed: differences between what ``run`` should have made and what it made."""
        return self.backend.verify(paths.repo, self.expected())

    def measured(self, paths: RoundPaths) -> list[Path]:
        """The paths that are this operation's result (the repository, a checkout)."""
        return [paths.repo]


class Create(Operation):
    name = "create"
    needs = frozenset({"create"})

    def run(self, paths: RoundPaths) -> None:
        self.backend.create(paths.repo)

    def expected(self) -> Files:
        return {}


class CreateCommit(Operation):
    name = "create+commit"
    needs = frozenset({"create", "commit"})

    def run(self, paths: RoundPaths) -> None:
        self.backend.create(paths.repo)
        self.backend.commit(paths.repo, self.payload.files, COMMIT_MESSAGE, paths.scratch)

    def expected(self) -> Files:
        return dict(self.payload.files)


class _WithFirstCommit(Operation):
    """Prepared with a repository holding the payload in its first revision."""

    def prepare(self, paths: RoundPaths) -> None:
        self.backend.create(paths.repo)
        self.backend.commit(paths.repo, self.payload.files, COMMIT_MESSAGE, paths.scratch)


class Commit(_WithFirstCommit):
    """One more revision: one file replaced, one added."""

    name = "commit"
    needs = frozenset({"create", "commit"})

    def run(self, paths: RoundPaths) -> None:
        self.backend.commit(paths.repo, self.change, COMMIT_MESSAGE + " 2", paths.scratch)

    def expected(self) -> Files:
        return {**self.payload.files, **self.change}


class Checkout(_WithFirstCommit):
    name = "checkout"
    needs = frozenset({"create", "commit", "checkout"})
    containers = ("repos", "checkouts")

    def run(self, paths: RoundPaths) -> None:
        self.backend.checkout(paths.repo, paths.checkout, paths.scratch)

    def expected(self) -> Files:
        return dict(self.payload.files)

    def verify(self, paths: RoundPaths) -> list[str]:
        actual = read_tree(paths.checkout, self.backend.checkout_ignores())
        problems = compare_files(self.payload.files, dict(actual))
        extra = sorted(set(actual) - set(self.payload.files))
        return problems + [f"{rel}: not in the revision" for rel in extra]

    def measured(self, paths: RoundPaths) -> list[Path]:
        return [paths.repo, paths.checkout]


OPERATIONS: dict[str, type[Operation]] = {
    cls.name: cls for cls in (Create, CreateCommit, Commit, Checkout)
}
OPS = tuple(OPERATIONS)


def supports(backend: type[Backend], op: str) -> bool:
    return OPERATIONS[op].needs <= backend.capabilities


def make_operation(name: str, backend: Backend, payload: Payload) -> Operation:
    try:
        cls = OPERATIONS[name]
    except KeyError:
        raise VcsbenchError(f"unknown operation {name!r}; known: {', '.join(OPERATIONS)}") from None
    return cls(backend, payload)
