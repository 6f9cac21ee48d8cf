"""The interface every VCS access path implements.

A backend knows one way of writing to one VCS and nothing about measuring. To add one,
write a module in this package with a subclass of :class:`Backend` and add it to
``REGISTRY`` in ``vcsbench/backends/__init__.py``::

    class HgCli(Backend):
        name = "hg-cli"
        vcs = "hg"
        option_defaults = {}

        @classmethod
        def available(cls) -> Availability:
            return tool_availability("hg")

        def versions(self) -> dict[str, str]:
            return {"hg": tool_version(["hg", "--version"])}

        def create(self, path: Path) -> None:
            run_tool(["hg", "init", str(path)])
        ...

Nothing else changes: the suite, the tests, ``vcsbench doctor``, the bootstrap (through
``apt_packages``) and the README's backend table all read ``REGISTRY``.

Scratch space: anything a backend writes that is not the repository (a staged tree, a
working copy, an import directory) goes below the ``scratch`` directory the caller
passes; the caller measures the repository and the scratch space apart.
"""

from __future__ import annotations

import abc
import importlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from vcsbench.backends.changes import Change, DigestTree
from vcsbench.backends.files import Files
from vcsbench.backends.reach import Remote
from vcsbench.backends.tools import Availability, variant_label
from vcsbench.errors import VcsbenchError

COMMIT_TIME = 1_700_000_000
"""When every commit vcsbench makes is dated (2023-11-14 22:13:20 UTC), rather than now:
the same content makes the same objects in every run -- the same hashes, fan-out
directories and bytes -- so what a commit costs in counts repeats between runs. Dated
now, a git-pygit2 commit's mkdirs (2 or 3) and failed lookups (18 or 19) changed with
the second it ran in, the same in every round of a run and not between runs. A
replayed history keeps its own dates."""

CAPABILITIES = (
    "create",
    "commit",
    "checkout",
    "clone",
    "update",
    "log",
    "status",
    "diff",
    "gc",
    "add",
    "publish",
    "replay",
)
"""Every primitive call a backend can implement; each is a method of :class:`Backend`."""


class Backend(abc.ABC):
    """One access path to one VCS.

    ``create`` and ``commit`` are what benchmarks time; ``verify`` reads the newest
    revision back through a path independent of the one that wrote it.
    """

    name: ClassVar[str]
    vcs: ClassVar[str]
    option_defaults: ClassVar[Mapping[str, str]] = {}
    """Every option this backend accepts, with its default ("" = tool default)."""
    place_options: ClassVar[frozenset[str]] = frozenset()
    """The options whose value names a program or a place of this machine (``bin=DIR``,
    ``template=DIR``): a result file's recorded selection never supplies them."""
    libraries: ClassVar[tuple[str, ...]] = ()
    pypi: ClassVar[str | None] = None
    """The PyPI distribution of the backend's library, where a variant may name another
    release of it (``version=``) to run in an environment of its own."""
    """Python modules imported when the backend is made, so no timed call imports them."""
    apt_packages: ClassVar[tuple[str, ...]] = ()
    """Debian packages this access path needs (the bootstrap installs them)."""
    capabilities: ClassVar[frozenset[str]] = frozenset({"create", "commit", "checkout"})
    """Which of the primitive calls below this backend implements (of ``CAPABILITIES``)."""
    remote_calls: ClassVar[frozenset[str]] = frozenset()
    """The calls that go through a server for a remote variant (``remote=``; a backend
    that offers it lists :data:`REMOTE_OPTIONS` among its options)."""
    description: ClassVar[str] = ""
    """One line for the README's table: how this path writes."""
    acts_on: ClassVar[Mapping[str, str]] = {}
    """Files at a tree's root that this VCS acts on rather than keeps (name -> what it
    does): a payload holding one is skipped for this backend, said in one line."""
    converts_on: ClassVar[frozenset[str]] = frozenset()
    """The calls in which the VCS writes a work tree through the tree's own attributes
    (git's ``.gitattributes``: CRLF line ends, ``$Id$``): a file then differs from the
    bytes committed, which their verification compares."""
    verifier: ClassVar[str] = ""
    """One line: the independent path that reads its repositories back."""
    created_files: ClassVar[Mapping[str, bytes]] = {}
    """Files every repository holds from ``create`` on (MarkUs commits its
    ``.required.json`` first): a checkout of any revision has them too."""

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        given = dict(options or {})
        unknown = sorted(set(given) - set(self.option_defaults))
        if unknown:
            accepted = ", ".join(sorted(self.option_defaults)) or "none"
            raise VcsbenchError(
                f"unknown option {unknown[0]!r} for backend {self.name}; accepted: {accepted}"
            )
        self.options: dict[str, str] = {**self.option_defaults, **given}
        self.temp_root: Path | None = None
        """Where the backend makes its own temporary directories (client configuration,
        an empty template); the caller points it into a sandbox it will remove."""
        self.remote: Remote | None = None
        """With ``remote=``: the server the harness started (set before any round);
        clone, checkout and update then go through it."""
        for module in self.libraries:
            importlib.import_module(module)
        self.check_options()

    def check_options(self) -> None:
        """Raise :class:`VcsbenchError` for an option value this backend cannot use."""

    def ready(self, temp_root: Path) -> None:
        """Make, below ``temp_root``, what the backend's calls will need (an empty template,
        a client configuration), so that no timed call makes it."""
        self.temp_root = temp_root

    def lend_helpers(self) -> Callable[[], None]:
        """Start, in this process, the helper processes verification uses (a reader of
        its own), for the processes it forks next to use one at a time (the rounds'
        worker processes) instead of each starting its own; what ends them. Most
        backends have none."""
        return lambda: None

    def close(self) -> None:
        """Release what the backend holds (temporary config or template directories)."""

    def __enter__(self) -> Backend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @classmethod
    @abc.abstractmethod
    def available(cls) -> Availability:
        """Whether this access path can run here, and if not, why."""

    @abc.abstractmethod
    def versions(self) -> dict[str, str]:
        """Library and tool versions this access path runs on."""

    @property
    def label(self) -> str:
        """The variant's name: ``svn-fs[fs-type=fsx]``; the plain name with default options."""
        return variant_label(self.name, self.options, self.option_defaults)

    def durability(self) -> str:
        """What this variant does to make a commit survive a crash (fsync or not), one line."""
        return "not stated"

    def kept_by(self) -> str:
        """How a server keeps this VCS's repositories (its own maintenance), one line;
        what :meth:`keep` runs."""
        return "as written: no maintenance"

    def keep(self, path: Path) -> None:
        """Untimed, after the rounds: the repository at ``path`` as a server keeps it,
        by its VCS's own maintenance tool whatever access path wrote it (the footprint
        as kept). Nothing by default."""

    def describe(self) -> dict[str, object]:
        """What results record about this backend: name, variant, VCS, options, versions."""
        return {
            "name": self.name,
            "variant": self.label,
            "vcs": self.vcs,
            "options": dict(self.options),
            "versions": self.versions(),
            "durability": self.durability(),
        }

    @abc.abstractmethod
    def create(self, path: Path) -> None:
        """Make a new, empty repository at ``path`` (which must not exist)."""

    @abc.abstractmethod
    def commit(self, path: Path, files: Files, message: str, scratch: Path) -> None:
        """Make one new revision in which ``files`` are added or replaced.

        ``scratch`` is an existing directory of this repository's own for anything that
        is not the repository (staging, a working copy); it may hold what an earlier
        call left there.
        """

    def create_commit(self, path: Path, files: Files, message: str, scratch: Path) -> None:
        """A new repository at ``path`` and its first revision (``files``), as one request
        makes them: a backend whose library hands back the repository it made commits
        into that (a server creating a repository with its first revision does not open
        it again); otherwise :meth:`create`, then :meth:`commit`."""
        self.create(path)
        self.commit(path, files, message, scratch)

    def _creates_and_commits_as(self, cls: type[Backend]) -> bool:
        """Whether this backend's create and commit are ``cls``'s own: a subclass that
        changes either (a user's backend, git-markus) makes its first revision through
        them, not through ``cls``'s one-request shortcut, which would pass them by."""
        kind = type(self)
        return kind.create is cls.create and kind.commit is cls.commit

    @abc.abstractmethod
    def verify(self, path: Path, files: Files) -> list[str]:
        """Differences between the newest revision and ``files`` (empty: all match)."""

    def verify_many(self, items: list[tuple[Path, Files]]) -> list[list[str]]:
        """:meth:`verify` of several repositories, in order; a backend whose reader can
        take several at once (several processes, answers pipelined) does so."""
        return [self.verify(path, files) for path, files in items]

    def head_file(self, path: Path) -> Path:
        """The file that names the repository's newest revision: what the tests garble to
        show that ``verify`` notices a corrupted repository."""
        raise NotImplementedError(f"{self.name} does not name its head file")

    @abc.abstractmethod
    def checkout(self, path: Path, target: Path, scratch: Path) -> None:
        """Materialise the newest revision of the repository into new directory ``target``."""

    def moved(self, path: Path) -> None:
        """Untimed, after a repository was copied to ``path`` from elsewhere (a history
        seed, an aged sandbox's): make it work at its new place as a repository of its own
        (its path, its identity). Most repositories hold neither."""

    def reach(self, remote: Remote) -> None:
        """A remote variant's server, started by the harness before any round."""
        self.remote = remote

    def source(self, path: Path) -> str:
        """Where clone, checkout and update read the repository at ``path`` from: its URL
        on the remote variant's server, else the local path (``file://`` for svn)."""
        return self.remote.url(path) if self.remote is not None else str(path)

    def client_env(self, env: Mapping[str, str]) -> dict[str, str]:
        """``env`` with what the remote variant's client needs (its ssh command, the
        certificate it trusts)."""
        return {**env, **(self.remote.env if self.remote is not None else {})}

    # The calls below are optional: a backend implements those it lists in
    # ``capabilities``; an operation that needs one runs only on backends that have it.

    def clone(self, path: Path, target: Path, scratch: Path) -> None:
        """A full copy of the repository with a work tree at new directory ``target``."""
        raise NotImplementedError(f"{self.name} has no clone")

    def working_copy(self, path: Path, target: Path, scratch: Path) -> None:
        """What ``update`` and ``status`` work on: a clone where the VCS has one (git),
        otherwise a checkout (svn)."""
        if "clone" in self.capabilities:
            self.clone(path, target, scratch)
        else:
            self.checkout(path, target, scratch)

    def update(self, wc: Path, scratch: Path) -> None:
        """Bring the working copy ``wc`` to the repository's newest revision."""
        raise NotImplementedError(f"{self.name} has no update")

    def log(self, path: Path) -> list[str]:
        """Every revision's log message, newest first (Subversion's r0 has none)."""
        raise NotImplementedError(f"{self.name} has no log")

    def log_output(self, path: Path) -> Any:
        """What the timed ``log`` operation calls: the log as the VCS hands it over, read
        into messages by :meth:`log_messages` after the timing (a command-line backend's
        printed bytes; a library's answer is its messages already)."""
        return self.log(path)

    def log_messages(self, output: Any) -> list[str]:
        """The messages in what :meth:`log_output` returned, newest first."""
        return list(output)

    def status(self, wc: Path) -> dict[str, str]:
        """What changed in working copy ``wc``: relative path -> ``M`` (modified), ``?``
        (not under version control), ``A`` (added), ``D`` (deleted)."""
        raise NotImplementedError(f"{self.name} has no status")

    def diff(self, path: Path, scratch: Path) -> bytes:
        """The newest revision against its parent, as a unified diff."""
        raise NotImplementedError(f"{self.name} has no diff")

    def receiving(self, path: Path) -> None:
        """Untimed, before a publish: make the repository at ``path`` take one (git: a
        push may move its checked-out branch, as a server's bare repository takes it)."""

    def publish(self, wc: Path, files: Files, message: str, scratch: Path) -> None:
        """One more revision in which ``files`` are added or replaced, made in the working
        copy ``wc`` and sent to the repository it came from (git, hg: commit and push;
        svn: commit)."""
        raise NotImplementedError(f"{self.name} has no publish")

    def gc(self, path: Path) -> None:
        """Repack the repository's storage (``git gc``, ``svnadmin pack``)."""
        raise NotImplementedError(f"{self.name} has no gc")

    def add(self, wc: Path, paths: list[str]) -> None:
        """Put ``paths``, already written in the work tree of repository ``wc``, into the
        index (``git add``): their objects are written, no revision is made."""
        raise NotImplementedError(f"{self.name} has no add")

    def staged(self, wc: Path, paths: list[str]) -> dict[str, bytes | None]:
        """What the index of ``wc`` holds for ``paths``, read by the independent reader."""
        raise NotImplementedError(f"{self.name} has no add")

    def replay(self, path: Path, change: Change, scratch: Path) -> None:
        """One revision of a real history (:class:`~vcsbench.backends.changes.Change`):
        files added, modified, deleted and renamed as the VCS records them, executable
        bits and symlinks kept, the commit's message and author where the VCS takes them."""
        raise NotImplementedError(f"{self.name} does not replay histories")

    def tree(self, path: Path, revision: int) -> DigestTree:
        """The whole tree of the repository's ``revision``-th revision (1: the first one
        made), every file's kind and SHA-256, read by the backend's independent reader."""
        raise NotImplementedError(f"{self.name} has no tree reader")

    # Revisions by number, for the operations on a replayed history that reach back
    # (capability "revisions"): ``revision`` counts from 1, the first revision made (first
    # parents in git); the VCS's own name for it is found untimed by ``revision_id``.

    def revision_id(self, path: Path, revision: int) -> str:
        """Untimed: the VCS's own name for the ``revision``-th revision (git: its commit
        id; Subversion: its number; Mercurial: its local number)."""
        raise NotImplementedError(f"{self.name} has no revisions by number")

    def checkout_at(self, path: Path, target: Path, scratch: Path, revision: str) -> None:
        """As :meth:`checkout`, of ``revision`` (a :meth:`revision_id`)."""
        raise NotImplementedError(f"{self.name} has no revisions by number")

    def working_copy_at(self, path: Path, target: Path, scratch: Path, revision: str) -> None:
        """As :meth:`working_copy`, left at ``revision``, holding nothing newer, so that
        :meth:`update` brings every later revision over."""
        raise NotImplementedError(f"{self.name} has no revisions by number")

    def diff_between(self, path: Path, old: str, new: str, scratch: Path) -> bytes:
        """Revision ``new`` against revision ``old`` as one unified diff, without rename
        detection (a renamed file is a deletion and an addition)."""
        raise NotImplementedError(f"{self.name} has no revisions by number")

    def seeded(self, path: Path) -> None:
        """Untimed, once the repository every round starts from is built (a seed): what
        the variant does to it before it is copied (git-cli's ``seed-graph``,
        ``seed-pack``). Most variants leave it as built."""

    def log_verbose(self, path: Path) -> bytes:
        """Every revision's message and changed paths, newest first, as the VCS prints them
        (``svn log -v --xml``), read by the operation after the timing."""
        raise NotImplementedError(f"{self.name} has no verbose log")

    # Walks of the whole history (capability "walk", git's own commands): what git's
    # commit-graph and reachability bitmaps were made to speed up.

    # What they print is returned as it came (read by the operation after the timing).

    def topo_log(self, path: Path, limit: int) -> bytes:
        """``git log --oneline --topo-order -LIMIT``: the newest ``limit`` commits, a line
        each (abbreviated id, title)."""
        raise NotImplementedError(f"{self.name} has no walk")

    def rev_list(self, path: Path) -> bytes:
        """``git rev-list --all``: the id of every commit reachable from a ref, a line each."""
        raise NotImplementedError(f"{self.name} has no walk")

    def objects(self, path: Path) -> bytes:
        """``git rev-list --objects --all``: every object reachable from a ref, a line each
        (id, and a path for a blob or tree; bitmaps used where the repository has them)."""
        raise NotImplementedError(f"{self.name} has no walk")

    def storage_problems(self, path: Path) -> list[str]:
        """After ``gc``: what is left unpacked, read from the files themselves."""
        return []

    @staticmethod
    def checkout_ignores() -> frozenset[str]:
        """Top-level names in a checkout that are VCS metadata, not content."""
        return frozenset({".git", ".svn"})
