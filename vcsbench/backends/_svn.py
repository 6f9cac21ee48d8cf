"""What the Subversion access paths share: repository options, tool versions, a reader."""

from __future__ import annotations

import collections
import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import ClassVar

from vcsbench.backends.base import Backend
from vcsbench.backends.changes import Change, DigestTree, Node, content_digest
from vcsbench.backends.files import Digest, Files, compare_files, verify_with
from vcsbench.backends.svn_verifier import VERIFIER, SvnVerifier, bindings_available
from vcsbench.backends.tools import run_tool, tool_version
from vcsbench.errors import VcsbenchError

READERS = 2
"""Reader processes :meth:`SvnBackend.verify_many` uses at most (one per core)."""
WINDOW = 32 << 10
"""Bytes of requests and answers owed to one reader at a time: below a pipe's 64 KiB, so
that a reader blocked writing answers never leaves the writer of requests blocked too."""

SVN_OPTION_DEFAULTS = {"fs-type": "fsfs", "compatible-version": "", "compression": ""}
FS_TYPES = ("fsfs", "fsx", "bdb")
COMPRESSIONS = ("none", "lz4", "zlib", *(f"zlib-{level}" for level in range(1, 10)))
"""``compression`` in ``db/fsfs.conf`` (Subversion 1.10+); unset: lz4 on format 8, else zlib."""


def check_svn_options(options: dict[str, str]) -> None:
    if options["fs-type"] not in FS_TYPES:
        raise VcsbenchError(
            f"option fs-type={options['fs-type']!r} is not known; use one of {', '.join(FS_TYPES)}"
        )
    version = options["compatible-version"]
    if version and not re.fullmatch(r"1\.\d+(\.\d+)?", version):
        raise VcsbenchError(
            f"option compatible-version={version!r} is not a Subversion version like 1.14"
        )
    compression = options["compression"]
    if compression and compression not in COMPRESSIONS:
        raise VcsbenchError(
            f"option compression={compression!r} is not known; use none, lz4, zlib or "
            "zlib-1 ... zlib-9"
        )
    if compression and options["fs-type"] != "fsfs":
        raise VcsbenchError(
            f"option compression={compression!r} applies to fs-type=fsfs only "
            f"(not {options['fs-type']}); leave it unset"
        )
    if compression == "lz4" and version and _older_than(version, (1, 10)):
        raise VcsbenchError(
            f"option compression=lz4 needs FSFS format 8 (Subversion 1.10+), not "
            f"compatible-version={version}; use zlib or none"
        )


def _older_than(version: str, than: tuple[int, int]) -> bool:
    major, minor = (int(part) for part in version.split(".")[:2])
    return (major, minor) < than


def configure(path: Path, options: dict[str, str]) -> None:
    """After create: what the options set in the repository's own configuration, as an
    administrator edits ``db/fsfs.conf`` (the ``[deltification]`` section's compression)."""
    if not options["compression"]:
        return
    conf = path / "db" / "fsfs.conf"
    text = conf.read_text()
    section = "[deltification]\n"
    if section not in text:
        raise VcsbenchError(f"{conf} has no {section.strip()} section to set compression in")
    conf.write_text(text.replace(section, f"{section}compression = {options['compression']}\n", 1))


def svnadmin_create_argv(
    path: Path, options: dict[str, str], svnadmin: str = "svnadmin"
) -> list[str]:
    argv = [svnadmin, "create", "--fs-type", options["fs-type"]]
    if options["compatible-version"]:
        argv += ["--compatible-version", options["compatible-version"]]
    return [*argv, str(path)]


def svn_tool_versions(svnadmin: str = "svnadmin", svn: str = "svn") -> dict[str, str]:
    return {
        "svnadmin": tool_version([svnadmin, "--version", "--quiet"]),
        "svn": tool_version([svn, "--version", "--quiet"]),
    }


class ClientConfigDir:
    """An empty ``--config-dir``, so a user's ~/.subversion cannot change what runs."""

    def __init__(self, temp_root: Path | None = None) -> None:
        self.path = tempfile.mkdtemp(prefix="vcsbench-svn-config-", dir=temp_root)

    def close(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def _read_headers(data: bytes, pos: int) -> tuple[dict[bytes, bytes], int]:
    headers: dict[bytes, bytes] = {}
    while pos < len(data):
        end = data.index(b"\n", pos)
        line = data[pos:end]
        pos = end + 1
        if not line:
            if headers:
                break
            continue
        key, _, value = line.partition(b": ")
        headers[key] = value
    return headers, pos


def dump_files(repo: Path, revision: str) -> Iterator[tuple[str, bytes, bytes]]:
    """Each file of ``revision`` as (path, property block, text), from a full-text
    ``svnadmin dump -r REV``: a non-incremental dump of one revision holds that revision's
    whole tree, so one process reads every file back, through none of the code that
    wrote them."""
    dump = run_tool(["svnadmin", "dump", "--quiet", "-r", revision, str(repo)])
    pos = 0
    while pos < len(dump):
        headers, pos = _read_headers(dump, pos)
        length = int(headers.get(b"Content-length", b"0"))
        body = dump[pos : pos + length]
        pos += length
        if headers.get(b"Node-kind") == b"file":
            split = int(headers.get(b"Prop-content-length", b"0"))
            yield headers[b"Node-path"].decode(), body[:split], body[split:]


def read_with_svnadmin_dump(repo: Path, paths: list[str]) -> dict[str, bytes | None]:
    """Contents of ``paths`` at HEAD, from a dump of it (:func:`dump_files`)."""
    tree = {rel: text for rel, _props, text in dump_files(repo, "HEAD")}
    return {rel: tree.get(rel) for rel in paths}


def unpacked_shards(repo: Path) -> list[str]:
    """Full FSFS shards that are not packed, read from ``db/format`` and ``db/current``.

    ``svnadmin pack`` packs only full shards (``layout sharded N``: N revisions each);
    a repository with fewer than N + 1 revisions has nothing to pack.
    """
    db = repo / "db"
    lines = (db / "format").read_text().splitlines()
    layout = [line for line in lines if line.startswith("layout")]
    if not layout or layout[0].split()[1] != "sharded":
        return [f"{db / 'format'} has no sharded layout, so nothing can be packed"]
    shard_size = int(layout[0].split()[2])
    youngest = int((db / "current").read_text().split()[0])
    problems = []
    for shard in range((youngest + 1) // shard_size):
        revs = db / "revs"
        if not (revs / f"{shard}.pack" / "pack").is_file() or (revs / str(shard)).exists():
            first, last = shard * shard_size, (shard + 1) * shard_size - 1
            problems.append(f"shard {shard} (r{first}-r{last}) is not packed")
    return problems


def parents_of(files: list[str]) -> list[str]:
    """Every directory that must exist for ``files``, parents before children."""
    dirs: set[str] = set()
    for rel in files:
        parts = rel.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            dirs.add("/".join(parts[:depth]))
    return sorted(dirs, key=lambda d: (d.count("/"), d))


class SvnBackend(Backend):
    """What every Subversion access path shares: options, svnadmin create, the verifier.

    ``create`` defaults to ``svnadmin create``; ``verify`` reads HEAD back in a reader
    process of its own (:mod:`vcsbench.backends.svn_verifier`), or where the bindings are
    missing from a full-text ``svnadmin dump`` of it.
    """

    vcs = "svn"
    verifier = VERIFIER
    option_defaults: ClassVar[Mapping[str, str]] = SVN_OPTION_DEFAULTS
    svnadmin = "svnadmin"
    """The svnadmin that creates (the verifier's dump always runs the PATH's)."""

    def check_options(self) -> None:
        check_svn_options(self.options)
        self._config: ClientConfigDir | None = None
        self._reader = SvnVerifier() if bindings_available() else None
        self._readers: list[SvnVerifier] = []
        """More readers for :meth:`verify_many`."""

    def config_dir(self) -> str:
        """An empty client configuration directory, made on first use."""
        if self._config is None:
            self._config = ClientConfigDir(self.temp_root)
        return self._config.path

    def ready(self, temp_root: Path) -> None:
        super().ready(temp_root)
        self.config_dir()

    def lend_helpers(self) -> Callable[[], None]:
        if self._reader is None:
            return lambda: None
        while len(self._readers) < min(READERS, os.cpu_count() or 1) - 1:
            self._readers.append(SvnVerifier())
        readers = (self._reader, *self._readers)
        for reader in readers:
            reader.lend()

        def end() -> None:
            for reader in readers:
                reader.close()

        return end

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
        for reader in self._readers:
            reader.close()
        if self._config is not None:
            self._config.close()
            self._config = None

    def durability(self) -> str:
        return f"fsync (Subversion's {self.options['fs-type']} flushes every commit to disk)"

    def kept_by(self) -> str:
        return "svnadmin pack (every full shard of revisions in one pack file)"

    def keep(self, path: Path) -> None:
        run_tool(["svnadmin", "pack", "-q", str(path)])

    def moved(self, path: Path) -> None:
        """A copy is a repository of its own: a new UUID and instance ID in ``db/uuid``
        (FSFS's layout: one per line), as ``svnadmin create`` gives every repository.
        Copies that share them share FSFS's per-repository state in a server's process:
        mod_dav_svn refused concurrent commits into two such copies (E160044, "a previous
        representation is currently being written by this process")."""
        ids = path / "db" / "uuid"
        lines = ids.read_text().splitlines()
        fresh = path / "db" / "uuid.vcsbench-new"
        fresh.write_text("".join(f"{uuid.uuid4()}\n" for _ in lines))
        os.chmod(fresh, os.stat(ids).st_mode & 0o7777)
        os.replace(fresh, ids)

    def create(self, path: Path) -> None:
        run_tool(svnadmin_create_argv(path, self.options, self.svnadmin))
        configure(path, self.options)

    def verify(self, path: Path, files: Files) -> list[str]:
        if self._reader is None:
            return verify_with(read_with_svnadmin_dump, path, files)
        return verify_with(self._read_back, path, files)

    def verify_many(self, items: list[tuple[Path, Files]]) -> list[list[str]]:
        """Verified by up to ``READERS`` reader processes at once (one per core), each
        sent several repositories before its first answer is read (up to ``WINDOW``
        bytes of requests and answers owed, so that neither pipe fills)."""
        if self._reader is None or len(items) < 2:
            return super().verify_many(items)
        count = min(READERS, os.cpu_count() or 1)
        while len(self._readers) < count - 1:
            self._readers.append(SvnVerifier())
        readers = [self._reader, *self._readers]
        owed: list[collections.deque[tuple[int, int]]] = [collections.deque() for _ in readers]
        load = [0] * len(readers)
        results: list[list[str]] = [[] for _ in items]

        def settle(k: int) -> None:
            index, cost = owed[k].popleft()
            load[k] -= cost
            files = items[index][1]
            try:
                actual = readers[k].receive()[1]
            except Exception as exc:  # a reader that failed fails this repository
                results[index] = [
                    f"could not read the newest revision: {type(exc).__name__}: {exc}"
                ]
                return
            results[index] = compare_files(files, actual)

        for index, (path, files) in enumerate(items):
            k = index % len(readers)
            paths = sorted(files)
            cost = 200 + len(str(path)) + sum(len(p) + 100 for p in paths)
            while owed[k] and load[k] + cost > WINDOW:
                settle(k)
            readers[k].send(path, paths)
            owed[k].append((index, cost))
            load[k] += cost
        for k in range(len(readers)):
            while owed[k]:
                settle(k)
        return results

    def _read_back(self, path: Path, paths: list[str]) -> dict[str, Digest | None]:
        assert self._reader is not None
        return self._reader.read(path, paths)[1]

    def storage_problems(self, path: Path) -> list[str]:
        return unpacked_shards(path)

    def tree(self, path: Path, revision: int) -> DigestTree:
        return tree_with_svnadmin_dump(path, revision)

    def head_file(self, path: Path) -> Path:
        return path / "db" / "current"


KIND_PROPS = {"exec": "svn:executable", "link": "svn:special"}
"""The property by which Subversion records a kind (a symlink's text is ``link TARGET``)."""


def svn_text(node: Node) -> bytes:
    return b"link " + node.data if node.kind == "link" else node.data


def prop_edits(change: Change, rel: str) -> list[tuple[str, bytes | None]]:
    """The property changes that give written path ``rel`` its kind: the property of the
    kind it had removed, that of the kind it gets set (``*``)."""
    node = change.writes[rel]
    before = change.kind_before(rel)
    if before == node.kind:
        return []
    edits: list[tuple[str, bytes | None]] = []
    if before in KIND_PROPS:
        edits.append((KIND_PROPS[before], None))
    if node.kind in KIND_PROPS:
        edits.append((KIND_PROPS[node.kind], b"*"))
    return edits


def _props(block: bytes) -> dict[bytes, bytes]:
    """A dump's property block (``K n`` / key / ``V n`` / value ... ``PROPS-END``)."""
    props: dict[bytes, bytes] = {}
    pos = 0
    while pos < len(block) and not block.startswith(b"PROPS-END", pos):
        end = block.index(b"\n", pos)
        klen = int(block[pos + 2 : end])
        key = block[end + 1 : end + 1 + klen]
        pos = end + 1 + klen + 1
        end = block.index(b"\n", pos)
        vlen = int(block[pos + 2 : end])
        props[key] = block[end + 1 : end + 1 + vlen]
        pos = end + 1 + vlen + 1
    return props


def tree_with_svnadmin_dump(repo: Path, revision: int) -> dict[str, tuple[str, str]]:
    """Revision ``revision``'s whole tree from a dump of it (:func:`dump_files`): each
    file's kind (from svn:executable and svn:special) and SHA-256 (a symlink's: of its
    target)."""
    tree: dict[str, tuple[str, str]] = {}
    for rel, block, text in dump_files(repo, str(revision)):
        props = _props(block)
        kind = "file"
        if b"svn:special" in props and text.startswith(b"link "):
            kind, text = "link", text[5:]
        elif b"svn:executable" in props:
            kind = "exec"
        tree[rel] = (kind, content_digest(text))
    return tree


def changed_paths(repo: Path, revision: int) -> set[str]:
    """The paths revision ``revision`` changed, as ``svnlook changed`` reads them from the
    repository itself (no client, no RA layer): relative, directories without their slash."""
    out = run_tool(["svnlook", "changed", "-r", str(revision), str(repo)])
    return {line[4:].rstrip("/") for line in out.decode().splitlines() if len(line) > 4}
