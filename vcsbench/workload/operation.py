"""What an operation is: a round's paths, and the base class every operation is built on
(an untimed ``prepare``, the timed ``run``, an untimed ``verify``); the operations
themselves are in ``operations.py`` (on a fresh repository) and ``seeded_ops.py`` (on a copy
of a repository built once per benchmark)."""

from __future__ import annotations

import abc
import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from vcsbench.backends import Backend
from vcsbench.backends.files import Files, compare_files
from vcsbench.backends.tools import variant_label
from vcsbench.errors import VcsbenchError
from vcsbench.workload.payloads import Payload

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
    """Every file below ``root`` as relative path -> content, skipping top-level ``ignore``;
    a symlink as its target (what a replayed history's payload holds for it), never
    followed."""
    files: dict[str, bytes] = {}
    for directory, subdirs, names in os.walk(root):
        here = Path(directory)
        if here == root:
            subdirs[:] = [d for d in subdirs if d not in ignore]
            names = [n for n in names if n not in ignore]
        for name in [*names, *(d for d in subdirs if (here / d).is_symlink())]:
            path = here / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                files[rel] = os.fsencode(os.readlink(path))
            elif path.is_file():
                files[rel] = path.read_bytes()
    return files


def parse_history(value: str, key: str = "history") -> int:
    if not value.isdigit() or int(value) < 1:
        raise VcsbenchError(f"operation option {key}={value!r} is not a whole number >= 1")
    return int(value)


def parse_back(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise VcsbenchError(
            f"operation option back={value!r} is not a whole number >= 1 (revisions back "
            "from the newest replayed one)"
        )
    return int(value)


NO_ANSWER = "its timed call gave no answer in this process to check"
ANSWERS_KEPT = 256
"""Rounds whose answer an answering operation keeps until it is verified (the round loop
verifies in batches of 64)."""


class Operation(abc.ABC):
    """One kind of round, for one backend and payload."""

    name: ClassVar[str]
    needs: ClassVar[frozenset[str]]
    containers: ClassVar[tuple[str, ...]] = ("repos",)
    """Subdirectories of the benchmark's workdir whose entries are its result."""
    footprint_by_round: ClassVar[bool] = False
    """Whether the footprint is of each round's :meth:`measured` paths (which may lie
    anywhere) rather than of the ``containers``."""
    option_defaults: ClassVar[Mapping[str, str]] = {}
    """Every option the operation accepts, with its default."""
    summary: ClassVar[str] = ""
    """One line for ``--help`` and the README: what the timed part does."""
    checks: ClassVar[str] = "the newest revision read back by the backend's verifier"
    """One line for the README: how a round is verified."""
    takes_payload: ClassVar[bool] = True
    """Whether the payload changes what is timed (``create`` makes an empty repository
    whatever the payload: it runs once, with the first payload named)."""
    user_command: ClassVar[bool] = False
    """It runs a command the user gave (``cmd``): ``--ops all`` leaves it out, and a
    selection read back from a result file that holds it is refused (a command is never
    run from a file)."""
    builds_seed: ClassVar[bool] = False
    """Whether each round starts from a repository built once per benchmark (a seed: with
    a history payload, that history replayed)."""
    stand_in: ClassVar[str] = ""
    """The operation that gives what this one does on a backend without it (a clone and a
    checkout: a working copy from the repository). A selection of both runs whichever
    each backend has, and says nothing of the other there."""
    answers: ClassVar[bool] = False
    """Its timed call answers something (a log, a status, a diff) that :meth:`verify`
    checks: each round's answer is kept by its round (:meth:`keep_answer`), so a batch of
    rounds verified together checks each its own, and a round it was not given in (an
    interleaved member's rounds run in a worker) is never read as another's."""
    seeds_unthrottled: bool = False
    """Build the seed where the run keeps seeds (a temporary directory of its own, off the
    sandbox) and copy it in: set on a sandbox whose device is throttled, where replaying
    a history of thousands of commits would take hours of untimed set-up."""

    def __init__(
        self, backend: Backend, payload: Payload, options: Mapping[str, str] | None = None
    ) -> None:
        self.backend = backend
        self.payload = payload
        self.change = payload.change() if payload.files else {}
        self.options = self.check_options(options or {})
        self._answers: dict[Path, Any] = {}
        """What each round's timed call answered, by its repository (:meth:`keep_answer`)."""

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
        for key in ("history", "limit"):
            if key in options:
                parse_history(options[key], key)
        if options.get("back"):
            parse_back(options["back"])
        return options

    @classmethod
    def needs_with(cls, given: Mapping[str, str]) -> frozenset[str]:
        """What the operation needs of a backend with these options: reaching back into a
        replayed history (``back=K``) takes revisions by number."""
        return cls.needs | {"revisions"} if given.get("back") else cls.needs

    @classmethod
    def supports(cls, backend: type[Backend], given: Mapping[str, str]) -> bool:
        """Whether ``backend`` can run it with these options."""
        return cls.needs_with(given) <= backend.capabilities

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

    def keep_answer(self, paths: RoundPaths, answer: Any) -> None:
        """In the timed call: what it answered for round ``paths``, read after the timing
        by :meth:`answer`; the oldest dropped beyond ``ANSWERS_KEPT`` (rounds not chosen
        for verification are never read)."""
        kept = self._answers  # two dictionary operations in the timed region, no more
        kept[paths.repo] = answer
        if len(kept) > ANSWERS_KEPT:
            del kept[next(iter(kept))]

    def answer(self, paths: RoundPaths) -> Any:
        """What the timed call answered for round ``paths`` (None: it gave none here)."""
        return self._answers.pop(paths.repo, None)

    def verify_kept(self, batch: list[RoundPaths]) -> list[list[str]]:
        """After the VCS's own maintenance (``--kept``), untimed: whether each round's
        repository still holds what the round left. An operation that answers is checked
        by its repository's newest revision (its answer was checked when given)."""
        if self.answers:
            return self.backend.verify_many([(paths.repo, self.expected()) for paths in batch])
        return self.verify_many(batch)

    def verify_many(self, batch: list[RoundPaths]) -> list[list[str]]:
        """:meth:`verify` of several rounds, in order: where it is the backend's own
        reader, the backend takes them together (several reader processes at once)."""
        if type(self).verify is Operation.verify:
            return self.backend.verify_many([(paths.repo, self.expected()) for paths in batch])
        return [self.verify(paths) for paths in batch]

    def measured(self, paths: RoundPaths) -> list[Path]:
        """The paths that are this operation's result (the repository, a checkout)."""
        return [paths.repo]


def tree_problems(
    root: Path, expected: Files, ignore: frozenset[str], *, exact: bool = True
) -> list[str]:
    """Differences between the files below ``root`` (VCS metadata ignored) and ``expected``
    (not ``exact``: files beyond them allowed)."""
    actual = read_tree(root, ignore)
    problems = compare_files(expected, dict(actual))
    extra = sorted(set(actual) - set(expected)) if exact else []
    return problems + [f"{rel}: not in the revision" for rel in extra]
