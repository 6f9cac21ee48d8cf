"""Operations: what a round does, as a table of small classes.

Each operation is split into an untimed ``prepare``, the timed ``run`` and an untimed
``verify``, and says which paths are its result (``measured``: what footprint and floor
count). A backend declares the primitive calls it implements (``capabilities``); an
operation declares the ones it needs (``needs``), so the matrix holds only pairs that
can run. Adding an operation is one class here and one entry in ``OPERATIONS``.

An operation may take options, written like a backend variant: ``log[history=1000]``.
Operations on an existing repository build it once per benchmark (a seed, through the
backend under test) and copy it into each round's repository, untimed.

Every verification reads what the operation made or returned against what the
operation itself knows it should be -- the files it committed, the messages it wrote,
the change it made -- never against the backend's own answer.
"""

from __future__ import annotations

import abc
import hashlib
import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from vcsbench.backends import Backend
from vcsbench.backends.base import (
    Files,
    compare_files,
    split_variant,
    variant_label,
    verify_with,
    write_tree,
)
from vcsbench.errors import VcsbenchError
from vcsbench.workload.payloads import Payload
from vcsbench.workload.seeds import Seed

COMMIT_MESSAGE = "vcsbench commit"
HISTORY_FILE = "vcsbench-history.txt"
UNTRACKED_FILE = "vcsbench-untracked.txt"


@dataclass(frozen=True)
class RoundPaths:
    """Where one round works: its repository, checkout target and scratch space."""

    repo: Path
    checkout: Path
    scratch: Path

    @classmethod
    def of(cls, workdir: Path, index: int, layout: str = "flat") -> RoundPaths:
        """Round ``index``'s paths. ``flat``: every repository in one directory;
        ``hashed``: ``repos/@hashed/ab/cd/<sha256 of the name>``, as large hosts spread
        them (checkouts and scratch stay flat: they are the round's, not the server's)."""
        name = f"r{index:07d}"
        base = str(workdir)  # one Path each, not a join per part: this runs every round
        if layout == "hashed":
            digest = hashlib.sha256(name.encode()).hexdigest()
            repo = Path(f"{base}/repos/@hashed/{digest[:2]}/{digest[2:4]}/{digest}")
        else:
            repo = Path(f"{base}/repos/{name}")
        return cls(repo, Path(f"{base}/checkouts/{name}"), Path(f"{base}/scratch/{name}"))

    @property
    def seeds(self) -> Path:
        """Where an operation keeps what it builds once per benchmark (not measured)."""
        return self.scratch.parent.parent / "seeds"


def read_tree(root: Path, ignore: frozenset[str] = frozenset()) -> dict[str, bytes]:
    """Every file below ``root`` as relative path -> content, skipping top-level ``ignore``."""
    files: dict[str, bytes] = {}
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if rel.parts[0] in ignore or not path.is_file():
            continue
        files[rel.as_posix()] = path.read_bytes()
    return files


def parse_history(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise VcsbenchError(f"operation option history={value!r} is not a whole number >= 1")
    return int(value)


class Operation(abc.ABC):
    """One kind of round, for one backend and payload."""

    name: ClassVar[str]
    needs: ClassVar[frozenset[str]]
    containers: ClassVar[tuple[str, ...]] = ("repos",)
    """Subdirectories of the benchmark's workdir whose entries are its result."""
    option_defaults: ClassVar[Mapping[str, str]] = {}
    """Every option the operation accepts, with its default."""
    summary: ClassVar[str] = ""
    """One line for ``--help`` and the README: what the timed part does."""
    checks: ClassVar[str] = "the newest revision read back by the backend's verifier"
    """One line for the README: how a round is verified."""

    def __init__(
        self, backend: Backend, payload: Payload, options: Mapping[str, str] | None = None
    ) -> None:
        self.backend = backend
        self.payload = payload
        self.change = payload.change()
        self.options = self.check_options(options or {})

    @classmethod
    def check_options(cls, given: Mapping[str, str]) -> dict[str, str]:
        """The options with defaults filled in; one line naming a bad key or value."""
        unknown = sorted(set(given) - set(cls.option_defaults))
        if unknown:
            accepted = ", ".join(sorted(cls.option_defaults)) or "none"
            raise VcsbenchError(
                f"unknown option {unknown[0]!r} for operation {cls.name}; accepted: {accepted}"
            )
        options = {**cls.option_defaults, **given}
        if "history" in options:
            parse_history(options["history"])
        return options

    @property
    def label(self) -> str:
        """``log[history=1000]``; the plain name with default options."""
        return variant_label(self.name, self.options, self.option_defaults)

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

    def verify_many(self, batch: list[RoundPaths]) -> list[list[str]]:
        """:meth:`verify` of several rounds, in order: where it is the backend's own
        reader, the backend takes them together (several reader processes at once)."""
        if type(self).verify is Operation.verify:
            return self.backend.verify_many([(paths.repo, self.expected()) for paths in batch])
        return [self.verify(paths) for paths in batch]

    def measured(self, paths: RoundPaths) -> list[Path]:
        """The paths that are this operation's result (the repository, a checkout)."""
        return [paths.repo]


class Create(Operation):
    name = "create"
    needs = frozenset({"create"})
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
        self.backend.create(paths.repo)
        self.backend.commit(paths.repo, self.payload.files, COMMIT_MESSAGE, paths.scratch)

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


class _FromSeed(Operation):
    """Prepared with a copy of a repository (by default the payload in its first
    revision) the backend under test built once per benchmark (in ``seeds/``, not
    measured): each round's repository is written by mkdir/write
    (:mod:`vcsbench.workload.seeds`) and the backend told where it is, so that preparing a
    round costs a few system calls per file, not the VCS calls that built it."""

    _seed: Seed | None = None

    def seed_name(self) -> str:
        return "history-1"

    def build(self, repo: Path, scratch: Path) -> None:
        """Through the backend under test: the repository every round starts from."""
        self.backend.create(repo)
        self.backend.commit(repo, self.payload.files, COMMIT_MESSAGE, scratch)

    def prepare(self, paths: RoundPaths) -> None:
        if self._seed is None:  # once per process: built by the first, read by later ones
            seed = paths.seeds / self.seed_name()
            if not (seed / "repo").exists():
                shutil.rmtree(seed, ignore_errors=True)
                (seed / "scratch").mkdir(parents=True)
                # Built aside and renamed: a build cut short is never taken for a seed.
                self.build(seed / "building", seed / "scratch")
                os.rename(seed / "building", seed / "repo")
            self._seed = Seed.read(seed / "repo")
        self._seed.copy_to(paths.repo)
        self.backend.moved(paths.repo)


class _IntoCheckout(_FromSeed):
    """Works on a directory beside the repository (a checkout, clone or working copy),
    which counts in the footprint; by default verified by its files."""

    containers = ("repos", "checkouts")

    def in_checkout(self) -> Files:
        """What the directory must hold: the revision's files, the backend's own
        (``created_files``) among them."""
        return {**self.backend.created_files, **self.expected()}

    def verify(self, paths: RoundPaths) -> list[str]:
        return tree_problems(paths.checkout, self.in_checkout(), self.backend.checkout_ignores())

    def measured(self, paths: RoundPaths) -> list[Path]:
        return [paths.repo, paths.checkout]


class _WithHistory(_FromSeed):
    """Prepared with a repository of ``history`` revisions: the payload first, then
    ``history - 1`` commits that each rewrite one small file (the seed, copied into each
    round's repository)."""

    option_defaults: ClassVar[Mapping[str, str]] = {"history": "100"}

    @property
    def history(self) -> int:
        return int(self.options["history"])

    def messages(self) -> list[str]:
        """The log the prepared repository has, newest first."""
        later = [f"vcsbench history {i}" for i in range(self.history - 1, 0, -1)]
        return [*later, COMMIT_MESSAGE]

    def history_files(self) -> Files:
        """The newest revision's files in the prepared repository."""
        files = dict(self.payload.files)
        if self.history > 1:
            files[HISTORY_FILE] = f"history {self.history - 1}\n".encode()
        return files

    def seed_name(self) -> str:
        return f"history-{self.history}"

    def build(self, repo: Path, scratch: Path) -> None:
        super().build(repo, scratch)
        for i in range(1, self.history):
            self.backend.commit(
                repo, {HISTORY_FILE: f"history {i}\n".encode()}, f"vcsbench history {i}", scratch
            )


class Commit(_WithHistory):
    """One more revision (one file replaced, one added) on top of ``history`` revisions."""

    name = "commit"
    needs = frozenset({"create", "commit"})
    option_defaults: ClassVar[Mapping[str, str]] = {"history": "1"}
    summary = "one more revision, a file replaced and one added, on top of `history` revisions"

    def run(self, paths: RoundPaths) -> None:
        self.backend.commit(paths.repo, self.change, COMMIT_MESSAGE + " 2", paths.scratch)

    def expected(self) -> Files:
        return {**self.history_files(), **self.change}


class Checkout(_IntoCheckout):
    name = "checkout"
    checks = "the directory's files against the revision's, nothing more or less"
    needs = frozenset({"create", "commit", "checkout"})
    summary = "the newest revision into a new directory (git-cli: a work tree; svn-fs: an export)"

    def run(self, paths: RoundPaths) -> None:
        self.backend.checkout(paths.repo, paths.checkout, paths.scratch)

    def expected(self) -> Files:
        return dict(self.payload.files)


def tree_problems(root: Path, expected: Files, ignore: frozenset[str]) -> list[str]:
    """Differences between the files below ``root`` (VCS metadata ignored) and ``expected``."""
    actual = read_tree(root, ignore)
    problems = compare_files(expected, dict(actual))
    extra = sorted(set(actual) - set(expected))
    return problems + [f"{rel}: not in the revision" for rel in extra]


class Clone(_IntoCheckout):
    name = "clone"
    checks = "the work tree's files, and the clone's newest revision by the verifier"
    needs = frozenset({"create", "commit", "clone"})
    summary = "a full clone with a work tree, from a local path"

    def run(self, paths: RoundPaths) -> None:
        self.backend.clone(paths.repo, paths.checkout, paths.scratch)

    def expected(self) -> Files:
        return dict(self.payload.files)

    def verify(self, paths: RoundPaths) -> list[str]:
        # The work tree, read as files; the clone's own newest revision, by the verifier.
        work_tree = tree_problems(
            paths.checkout, self.in_checkout(), self.backend.checkout_ignores()
        )
        history = [f"clone: {p}" for p in self.backend.verify(paths.checkout, self.expected())]
        return work_tree + history


class Update(_IntoCheckout):
    name = "update"
    checks = "the working copy's files against the new revision's"
    needs = frozenset({"create", "commit", "update"})
    summary = "a working copy brought up to a new revision (`git pull --ff-only`; `svn update`)"

    def prepare(self, paths: RoundPaths) -> None:
        super().prepare(paths)
        self.backend.working_copy(paths.repo, paths.checkout, paths.scratch)
        self.backend.commit(paths.repo, self.change, COMMIT_MESSAGE + " 2", paths.scratch)

    def run(self, paths: RoundPaths) -> None:
        self.backend.update(paths.checkout, paths.scratch)

    def expected(self) -> Files:
        return {**self.payload.files, **self.change}


class Status(_IntoCheckout):
    name = "status"
    checks = "the answer against the one file changed and the one added"
    needs = frozenset({"create", "commit", "status"})
    summary = "status of a working copy with one file modified and one not under version control"

    def prepare(self, paths: RoundPaths) -> None:
        super().prepare(paths)
        self.backend.working_copy(paths.repo, paths.checkout, paths.scratch)
        self.modified = sorted(self.payload.files)[0]
        (paths.checkout / self.modified).write_bytes(self.change[self.modified])
        (paths.checkout / UNTRACKED_FILE).write_bytes(b"not under version control\n")
        self.answer: dict[str, str] | None = None

    def run(self, paths: RoundPaths) -> None:
        self.answer = self.backend.status(paths.checkout)

    def expected(self) -> Files:
        return dict(self.payload.files)

    def verify(self, paths: RoundPaths) -> list[str]:
        want = {self.modified: "M", UNTRACKED_FILE: "?"}
        if self.answer != want:
            return [f"status said {self.answer!r}, the working copy has {want!r}"]
        return []


class Log(_WithHistory):
    name = "log"
    checks = "the messages against those the history was written with, in order"
    needs = frozenset({"create", "commit", "log"})
    summary = "every revision's message, newest first, from a repository of `history` revisions"

    def prepare(self, paths: RoundPaths) -> None:
        super().prepare(paths)
        self.answer: list[str] | None = None

    def run(self, paths: RoundPaths) -> None:
        self.answer = self.backend.log(paths.repo)

    def expected(self) -> Files:
        return self.history_files()

    def verify(self, paths: RoundPaths) -> list[str]:
        want = self.messages()
        if self.answer != want:
            got = self.answer or []
            first = next(
                (i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b),
                min(len(got), len(want)),
            )
            return [
                f"log gave {len(got)} messages, the repository has {len(want)}; "
                f"first difference at entry {first}"
            ]
        return []


class Diff(_FromSeed):
    name = "diff"
    checks = "the diff, applied to the parent's files, gives the new revision's"
    needs = frozenset({"create", "commit", "diff"})
    summary = "unified diff of the newest revision (a file replaced, one added) against its parent"

    def prepare(self, paths: RoundPaths) -> None:
        super().prepare(paths)
        self.backend.commit(paths.repo, self.change, COMMIT_MESSAGE + " 2", paths.scratch)
        self.answer: bytes | None = None

    def run(self, paths: RoundPaths) -> None:
        self.answer = self.backend.diff(paths.repo, paths.scratch)

    def expected(self) -> Files:
        return {**self.payload.files, **self.change}

    def verify(self, paths: RoundPaths) -> list[str]:
        """The diff, applied to the parent's files, must give the newest revision's."""
        return patch_problems(self.answer or b"", self.payload.files, self.change)


class Gc(_WithHistory):
    name = "gc"
    checks = (
        "the newest revision by the verifier; no loose object left (git), every full shard "
        "packed (svn)"
    )
    needs = frozenset({"create", "commit", "gc"})
    option_defaults: ClassVar[Mapping[str, str]] = {"history": "1000"}
    summary = (
        "repack a repository of `history` revisions (`git gc`; `svnadmin pack`, which packs "
        "only full shards of 1,000 revisions)"
    )

    def run(self, paths: RoundPaths) -> None:
        self.backend.gc(paths.repo)

    def expected(self) -> Files:
        return self.history_files()

    def verify(self, paths: RoundPaths) -> list[str]:
        content = self.backend.verify(paths.repo, self.expected())
        return content + self.backend.storage_problems(paths.repo)


# --- unified diffs, read without any VCS ---------------------------------------------

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_BINARY = re.compile(rb"^Binary files (?:a/)?(.+?) and (?:b/)?(.+?) differ$")


def parse_unified(diff: bytes) -> dict[str, list[tuple[int, list[tuple[bytes, bytes]]]]]:
    """Path -> hunks (old start, [(kind, line)]) of a git or Subversion unified diff.

    Hunk bodies are read by the counts in their ``@@`` headers, so content that looks
    like a header is never taken for one. A binary file is a path with no hunks.
    """
    lines = diff.splitlines(keepends=True)
    files: dict[str, list[tuple[int, list[tuple[bytes, bytes]]]]] = {}
    current: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if line.startswith(b"+++ "):
            path = line[4:].rstrip(b"\r\n").split(b"\t")[0].strip()
            previous = lines[i - 2] if i >= 2 else b""
            if path.startswith(b"b/") and (previous.startswith((b"--- a/", b"--- /dev/null"))):
                path = path[2:]
            current = path.decode(errors="surrogateescape")
            files[current] = []
            continue
        binary = _BINARY.match(line.rstrip(b"\r\n"))
        if binary:
            files[binary.group(2).decode(errors="surrogateescape")] = []
            continue
        match = _HUNK.match(line)
        if match is None or current is None:
            continue
        old_left = int(match.group(2) or 1)
        new_left = int(match.group(4) or 1)
        body: list[tuple[bytes, bytes]] = []
        while (old_left > 0 or new_left > 0) and i < len(lines):
            line = lines[i]
            i += 1
            kind, text = line[:1], line[1:]
            if kind == b"\\":  # "\ No newline at end of file": the line before has none
                if body:
                    body[-1] = (body[-1][0], body[-1][1].rstrip(b"\n"))
                continue
            body.append((kind, text))
            old_left -= kind in (b" ", b"-")
            new_left -= kind in (b" ", b"+")
        if i < len(lines) and lines[i].startswith(b"\\") and body:
            body[-1] = (body[-1][0], body[-1][1].rstrip(b"\n"))
            i += 1
        files[current].append((int(match.group(1)), body))
    return files


def apply_hunks(old: bytes, hunks: list[tuple[int, list[tuple[bytes, bytes]]]]) -> bytes | None:
    """``old`` with the hunks applied; None where a context or removed line does not match."""
    source = old.splitlines(keepends=True)
    out: list[bytes] = []
    pos = 0
    for start, body in hunks:
        begin = start - 1 if any(kind in (b" ", b"-") for kind, _ in body) else start
        out.extend(source[pos:begin])
        pos = begin
        for kind, text in body:
            if kind == b"+":
                out.append(text)
                continue
            if pos >= len(source) or source[pos] != text:
                return None
            if kind == b" ":
                out.append(text)
            pos += 1
    out.extend(source[pos:])
    return b"".join(out)


def patch_problems(diff: bytes, old: Files, change: Files) -> list[str]:
    """Whether ``diff`` turns the ``old`` files into ``old`` with ``change`` applied."""
    files = parse_unified(diff)
    problems = []
    if set(files) != set(change):
        problems.append(f"the diff names {sorted(files)}, the revision changed {sorted(change)}")
    for rel, new in change.items():
        hunks = files.get(rel)
        if hunks is None:
            continue
        if not hunks:
            if b"\0" not in new:
                problems.append(f"{rel}: the diff has no hunks for a text file")
            continue
        if apply_hunks(old.get(rel, b""), hunks) != new:
            problems.append(f"{rel}: the diff applied to the parent does not give the new content")
    return problems


OPERATIONS: dict[str, type[Operation]] = {
    cls.name: cls
    for cls in (Create, CreateCommit, Commit, Checkout, Clone, Update, Status, Log, Diff, Gc, Add)
}
OPS = tuple(OPERATIONS)
LAYOUTS = ("flat", "hashed")
DEFAULT_OPS = ("create", "create+commit", "commit", "checkout")
"""What ``--ops`` runs unless told: the 2013 study's operations and a checkout."""


def operation_class(spec: str) -> type[Operation]:
    """The class of ``log`` or ``log[history=10]``, its options checked; one line if bad."""
    name, options = split_variant(spec)
    try:
        cls = OPERATIONS[name]
    except KeyError:
        raise VcsbenchError(
            f"unknown operation {name!r}; known: {', '.join(OPERATIONS)} (or all); "
            "options as NAME[key=value], e.g. log[history=1000]"
        ) from None
    cls.check_options(options)
    return cls


def markdown_table() -> str:
    """The README's operation table, from ``OPERATIONS`` and the backends' capabilities."""
    from vcsbench.backends import REGISTRY

    lines = [
        "| operation | timed | backends | verified by |",
        "|---|---|---|---|",
    ]
    for name, cls in OPERATIONS.items():
        options = ", ".join(f"{k}={v}" for k, v in cls.option_defaults.items())
        label = f"`{name}[{options}]`" if options else f"`{name}`"
        backends = ", ".join(b for b, bc in REGISTRY.items() if cls.needs <= bc.capabilities)
        lines.append(f"| {label} | {cls.summary} | {backends} | {cls.checks} |")
    return "\n".join(lines)


def operation_label(spec: str) -> str:
    """The name results use for ``spec``: options at their default are left out."""
    cls = operation_class(spec)
    options = cls.check_options(split_variant(spec)[1])
    return variant_label(cls.name, options, cls.option_defaults)


def supports(backend: type[Backend], op: str) -> bool:
    return operation_class(op).needs <= backend.capabilities


def make_operation(spec: str, backend: Backend, payload: Payload) -> Operation:
    return operation_class(spec)(backend, payload, split_variant(spec)[1])
