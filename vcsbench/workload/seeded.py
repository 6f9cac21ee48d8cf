"""Operations on an existing repository: each round starts from a copy of a repository the
backend under test built once per benchmark (a seed), made untimed. Here, what they share
(:class:`FromSeed`, reaching back into a history, a work tree beside the repository); the
operations themselves are :mod:`vcsbench.workload.seeded_ops`."""

from __future__ import annotations

import json
import math
import os
import shutil
import time
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from vcsbench.backends.base import Backend
from vcsbench.backends.changes import Node
from vcsbench.backends.files import Files
from vcsbench.errors import VcsbenchError
from vcsbench.workload.history import HistoryPayload, seed_key
from vcsbench.workload.operation import (
    COMMIT_MESSAGE,
    HISTORY_FILE,
    Operation,
    RoundPaths,
    tree_problems,
)
from vcsbench.workload.payloads import Payload
from vcsbench.workload.seeds import REPLAY_FILE, REPLAY_PROGRESS, Seed, publish, shared_seed


class FromSeed(Operation):
    """Prepared with a copy of a repository (by default the payload in its first
    revision) the backend under test built once per benchmark (in ``seeds/``, not
    measured): each round's repository is written by mkdir/write
    (:mod:`vcsbench.workload.seeds`) and the backend told where it is, so that preparing a
    round costs a few system calls per file, not the VCS calls that built it.

    With a history payload (``history:REPO``) the seed is that history, replayed through
    the backend under test and checked against its source."""

    _seed: Seed | None = None
    builds_seed = True

    @property
    def history(self) -> HistoryPayload | None:
        return self.payload if isinstance(self.payload, HistoryPayload) else None

    def seed_name(self) -> str:
        if self.history is not None:
            return seed_key(self.history)
        return "history-1"

    def build(self, repo: Path, scratch: Path) -> None:
        """Through the backend under test: the repository every round starts from."""
        if self.history is not None:
            show, started = REPLAY_PROGRESS[-1:], time.perf_counter()

            def progress(done: int, count: int) -> None:
                for display in show:
                    display(done, count, time.perf_counter() - started, "commits replayed")

            replay = self.history.replay_into(self.backend, repo, scratch, progress)
            (scratch.parent / REPLAY_FILE).write_text(json.dumps(replay))
            return
        self.backend.create(repo)
        self.backend.commit(repo, self.payload.files, COMMIT_MESSAGE, scratch)

    def seed_info(self, seeds: Path) -> dict[str, float] | None:
        """What replaying the history cost (commits, seconds, commits/s), as the process
        that built the seed wrote it; None without a history."""
        if self.history is None:
            return None
        try:
            data = json.loads((seeds / self.seed_name() / REPLAY_FILE).read_text()[:4096])
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict):
            return None
        return {
            k: float(v)
            for k, v in data.items()
            if k in ("commits", "seconds", "commits_per_s", "reused", "unthrottled")
            and isinstance(v, int | float)
            and math.isfinite(v)
            and v >= 0
        }

    def prepare(self, paths: RoundPaths) -> None:
        if self._seed is None:  # once per process: built by the first, read by later ones
            seed = paths.seeds / self.seed_name()
            if not (seed / "repo").exists():
                shutil.rmtree(seed, ignore_errors=True)
                (seed / "scratch").mkdir(parents=True)
                shared = shared_seed(self.backend, self.payload, self.seed_name())
                built = False
                if shared is not None and self.seeds_unthrottled and not shared.exists():
                    self._build_where_seeds_are_kept(shared)  # off the throttled device
                    built = True
                if shared is not None and (shared / "repo").is_dir():
                    # copied in; built by an earlier benchmark of the run: said in the figures
                    Seed.read(shared / "repo").copy_to(seed / "building")
                    if (shared / REPLAY_FILE).exists():
                        figures = json.loads((shared / REPLAY_FILE).read_text()[:4096])
                        figures = figures if built else {**figures, "reused": 1}
                        (seed / REPLAY_FILE).write_text(json.dumps(figures))
                else:
                    # Built aside and renamed: a build cut short is never taken for a seed.
                    self.build(seed / "building", seed / "scratch")
                    self.backend.seeded(seed / "building")
                    if shared is not None:
                        publish(seed, shared)
                os.rename(seed / "building", seed / "repo")
            self._seed = Seed.read(seed / "repo")
        self._seed.copy_to(paths.repo)
        self.backend.moved(paths.repo)

    def _build_where_seeds_are_kept(self, shared: Path) -> None:
        """Build the seed beside ``shared`` (where the run keeps seeds) and publish it
        there, its replay figures saying so."""
        where = shared.with_name(f".{shared.name}-build-{os.getpid()}")
        (where / "scratch").mkdir(parents=True)
        self.build(where / "building", where / "scratch")
        self.backend.seeded(where / "building")
        if (where / REPLAY_FILE).exists():  # said in the figures of every copy
            figures = json.loads((where / REPLAY_FILE).read_text()[:4096])
            (where / REPLAY_FILE).write_text(json.dumps({**figures, "unthrottled": 1}))
        publish(where, shared)
        shutil.rmtree(where)


class ReachesBack(FromSeed):
    """``back=K``, with a history payload: the operation works on the revision K before the
    newest replayed one (a checkout of it; a working copy at it, updated; the diff from it
    to the newest), found by number in the round's repository, untimed."""

    option_defaults: ClassVar[Mapping[str, str]] = {"back": ""}

    def __init__(
        self, backend: Backend, payload: Payload, options: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(backend, payload, options)
        self.back = int(self.options["back"] or 0)
        self._ids: dict[int, str] = {}
        self._nodes: dict[int, dict[str, Node]] = {}
        self._started = False
        if not self.back:
            return
        if self.history is None:
            raise VcsbenchError(
                f"operation {self.label} reaches back into a replayed history, and payload "
                f"{payload.name!r} is not one; use a history:REPO payload or drop back="
            )
        if self.back >= self.history.revisions:
            raise VcsbenchError(
                f"operation {self.label}: payload {payload.name} replays "
                f"{self.history.revisions} revisions, so back= must be below that"
            )

    @property
    def old(self) -> int:
        """The revision reached back to (1: the first replayed)."""
        assert self.history is not None
        return self.history.revisions - self.back

    def revision_id(self, repo: Path, revision: int) -> str:
        """The backend's name for ``revision``, read once: every round's repository is a
        copy of one seed."""
        if revision not in self._ids:
            self._ids[revision] = self.backend.revision_id(repo, revision)
        return self._ids[revision]

    def nodes_at(self, revision: int) -> dict[str, Node]:
        """The source's tree at replayed revision ``revision``: every file's kind and data."""
        assert self.history is not None
        if revision not in self._nodes:
            with self.history.source() as source:
                self._nodes[revision] = source.tree(revision - 1)
        return self._nodes[revision]

    def files_at(self, revision: int) -> Files:
        return {rel: node.data for rel, node in self.nodes_at(revision).items()}


class IntoCheckout(FromSeed):
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


class WithHistory(FromSeed):
    """Prepared with a repository of ``history`` revisions: the payload first, then
    ``history - 1`` commits that each rewrite one small file (the seed, copied into each
    round's repository)."""

    option_defaults: ClassVar[Mapping[str, str]] = {"history": "100"}

    @property
    def revisions(self) -> int:
        """Revisions in the prepared repository (a history payload's: its replayed ones)."""
        if self.history is not None:
            return self.history.revisions
        return int(self.options["history"])

    def messages(self) -> list[str]:
        """The log the prepared repository has, newest first."""
        if self.history is not None:
            return list(reversed(self.history.messages))
        later = [f"vcsbench history {i}" for i in range(self.revisions - 1, 0, -1)]
        return [*later, COMMIT_MESSAGE]

    def history_files(self) -> Files:
        """The newest revision's files in the prepared repository."""
        files = dict(self.payload.files)
        if self.history is None and self.revisions > 1:
            files[HISTORY_FILE] = f"history {self.revisions - 1}\n".encode()
        return files

    def seed_name(self) -> str:
        if self.history is not None:
            return super().seed_name()
        return f"history-{self.revisions}"

    def build(self, repo: Path, scratch: Path) -> None:
        super().build(repo, scratch)
        if self.history is not None:
            return
        for i in range(1, self.revisions):
            self.backend.commit(
                repo, {HISTORY_FILE: f"history {i}\n".encode()}, f"vcsbench history {i}", scratch
            )
