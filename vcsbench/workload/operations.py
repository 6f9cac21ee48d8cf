"""Operations: what a round does, as a table of small classes.

Each operation is split into an untimed ``prepare``, the timed ``run`` and an untimed
``verify``, and says which paths are its result (``measured``: what footprint and floor
count). A backend declares the primitive calls it implements (``capabilities``); an
operation declares the ones it needs (``needs``), so the matrix holds only pairs that
can run. Adding an operation is one class (here, or in ``seeded_ops.py`` when it starts from a
repository built once per benchmark) and one entry in ``OPERATIONS``.

An operation may take options, written like a backend variant: ``log[history=1000]``.
Operations on an existing repository build it once per benchmark (a seed, through the
backend under test) and copy it into each round's repository, untimed.

Every verification reads what the operation made or returned against what the
operation itself knows it should be -- the files it committed, the messages it wrote,
the change it made -- never against the backend's own answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from vcsbench.backends import Backend
from vcsbench.backends.files import Files, verify_with, write_tree
from vcsbench.backends.tools import split_variant, variant_label
from vcsbench.errors import VcsbenchError
from vcsbench.workload.command import Command
from vcsbench.workload.operation import (
    COMMIT_MESSAGE,
    Operation,
    RoundPaths,
)
from vcsbench.workload.payloads import Payload
from vcsbench.workload.reading import Diff, Log, Objects, RevList, TopoLog
from vcsbench.workload.seeded_ops import (
    Checkout,
    Clone,
    Commit,
    Gc,
    Publish,
    Status,
    Update,
)


class Create(Operation):
    name = "create"
    needs = frozenset({"create"})
    takes_payload = False
    summary = "a new, empty repository"

    def run(self, paths: RoundPaths) -> None:
        self.backend.create(paths.repo)

    def expected(self) -> Files:
        return {}


class CreateCommit(Operation):
    name = "create+commit"
    needs = frozenset({"create", "commit"})
    summary = "a new repository and its first revision (the payload)"

    def run(self, paths: RoundPaths) -> None:
        self.backend.create_commit(paths.repo, self.payload.files, COMMIT_MESSAGE, paths.scratch)

    def expected(self) -> Files:
        return dict(self.payload.files)


class Add(Operation):
    name = "add"
    needs = frozenset({"create", "commit", "add"})
    summary = (
        "`git add` of the payload's files, already written in the work tree of a repository "
        "with one commit: objects and index written, no revision (git's t/perf p0008)"
    )
    checks = "every file's index entry and object, read by the independent reader"
    FIRST: ClassVar[Files] = {"first.t": b"first\n"}

    def prepare(self, paths: RoundPaths) -> None:
        # As p0008's setup: a repository with one commit, then the files to add.
        self.backend.create(paths.repo)
        self.backend.commit(paths.repo, self.FIRST, "first", paths.scratch)
        write_tree(paths.repo, self.payload.files)

    def run(self, paths: RoundPaths) -> None:
        self.backend.add(paths.repo, sorted(self.payload.files))

    def expected(self) -> Files:
        return dict(self.payload.files)

    def verify(self, paths: RoundPaths) -> list[str]:
        return verify_with(self.backend.staged, paths.repo, self.expected())


OPERATIONS: dict[str, type[Operation]] = {
    cls.name: cls
    for cls in (
        Create,
        CreateCommit,
        Commit,
        Checkout,
        Clone,
        Update,
        Publish,
        Status,
        Log,
        Diff,
        Gc,
        Add,
        TopoLog,
        RevList,
        Objects,
        Command,
    )
}
OPS = tuple(name for name, cls in OPERATIONS.items() if not cls.user_command)
"""What ``--ops all`` runs: every operation but ``cmd`` (your command: ``vcsbench time``)."""
LAYOUTS = ("flat", "hashed")
DEFAULT_OPS = ("create", "create+commit", "commit", "checkout")
"""What ``--ops`` runs unless told: the 2013 study's operations and a checkout."""


@dataclass(frozen=True)
class OperationSpec:
    """An operation as named (``log``, ``commit[history=100]``), parsed once where it is
    named -- its class found, its options checked -- and carried as this object: what
    it needs of a backend, whether it builds a seed or reaches back into a history, and
    the operation itself, made for a backend and a payload."""

    cls: type[Operation]
    options: Mapping[str, str]

    @classmethod
    def parse(cls, text: str) -> OperationSpec:
        """The operation ``text`` names, its options checked; one line if bad."""
        name, given = split_variant(text)
        try:
            found = OPERATIONS[name]
        except KeyError:
            raise VcsbenchError(
                f"unknown operation {name!r}; known: {', '.join(OPERATIONS)} (or all); "
                "options as NAME[key=value], e.g. log[history=1000]"
            ) from None
        found.check_options(given)
        return cls(found, dict(given))

    @property
    def text(self) -> str:
        """The name results use: options at their default left out."""
        options = self.cls.check_options(self.options)
        return variant_label(self.cls.name, options, self.cls.option_defaults)

    def __str__(self) -> str:
        return self.text

    @property
    def needs(self) -> frozenset[str]:
        """What it needs of a backend (``diff[back=10]`` more than ``diff``)."""
        return self.cls.needs_with(self.options)

    @property
    def builds_seed(self) -> bool:
        return self.cls.builds_seed

    @property
    def takes_payload(self) -> bool:
        return self.cls.takes_payload

    @property
    def back(self) -> int | None:
        """``back=K``: how many revisions of a replayed history it reaches back."""
        value = self.options.get("back")
        return int(value) if value else None

    def supported_by(self, backend: type[Backend]) -> bool:
        return self.cls.supports(backend, self.options)

    def make(self, backend: Backend, payload: Payload) -> Operation:
        return self.cls(backend, payload, dict(self.options))


def markdown_table() -> str:
    """The README's operation table, from ``OPERATIONS`` and the backends' capabilities."""
    from vcsbench.backends import REGISTRY

    lines = [
        "| operation | timed | backends | verified by |",
        "|---|---|---|---|",
    ]
    for name, cls in OPERATIONS.items():
        options = ", ".join(f"{k}={v or 'K'}" for k, v in cls.option_defaults.items())
        label = f"`{name}[{options}]`" if options else f"`{name}`"
        backends = ", ".join(b for b, bc in REGISTRY.items() if cls.needs <= bc.capabilities)
        lines.append(f"| {label} | {cls.summary} | {backends} | {cls.checks} |")
    return "\n".join(lines)


def operation_label(spec: str) -> str:
    """The name results use for ``spec``: options at their default are left out."""
    return OperationSpec.parse(spec).text


def make_operation(spec: str, backend: Backend, payload: Payload) -> Operation:
    return OperationSpec.parse(spec).make(backend, payload)
