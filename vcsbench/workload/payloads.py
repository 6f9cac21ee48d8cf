"""Payloads: what benchmarks commit, generated from their definitions in
``fixtures/payloads.toml`` and in the files ``$VCSBENCH_PAYLOADS`` names (a user's own,
in the same form; see ``fixtures/README.md``), or read from a directory (``tree:PATH``).

Content is generated from a seed, so every run commits the same bytes; results record
each payload's SHA-256. A definition file is data: it is parsed, never run, and one that
is not TOML, too large, or defines a name twice is one line naming the file.
"""

from __future__ import annotations

import errno
import hashlib
import os
import random
import stat
import sys
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from vcsbench.errors import VcsbenchError
from vcsbench.sandbox.mounts import mount_containing
from vcsbench.workload.attributes import converting_lines

DEFAULT_PAYLOADS = ("hello", "submission")
WORDS = (
    "def return self value result index count items node tree path name data "
    "if else for while in not and or import from class None True False print len "
    "range list dict append total student grade mark assignment submit test assert"
).split()


@dataclass(frozen=True)
class Payload:
    name: str
    description: str
    files: dict[str, bytes]
    seed: int | None

    @property
    def total_bytes(self) -> int:
        return sum(len(data) for data in self.files.values())

    @property
    def sha256(self) -> str:
        digest = hashlib.sha256()
        for rel in sorted(self.files):
            digest.update(rel.encode() + b"\0" + str(len(self.files[rel])).encode() + b"\0")
            digest.update(self.files[rel])
        return digest.hexdigest()

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "files": len(self.files),
            "bytes": self.total_bytes,
            "sha256": self.sha256,
            "seed": self.seed,
        }

    def root_names(self) -> frozenset[str]:
        """The names at the tree's root, in any revision the payload writes."""
        return frozenset(rel for rel in self.files if "/" not in rel)

    def converting(self) -> list[str]:
        """The lines of its ``.gitattributes`` files that make git write a file other than
        it is committed (:func:`converting_lines`), as ``PATH: LINE``."""
        return converting_lines(self.files)

    def change(self) -> dict[str, bytes]:
        """What the ``commit`` operation commits: one file replaced, one added."""
        first = sorted(self.files)[0]
        return {
            first: b"replaced by vcsbench\n" + self.files[first][::-1],
            "vcsbench-added.txt": b"added by vcsbench\n",
        }


def _text(rng: random.Random, size: int) -> bytes:
    lines: list[str] = []
    length = 0
    while length < size:
        line = "    " * rng.randrange(3) + " ".join(rng.choices(WORDS, k=rng.randrange(3, 12)))
        lines.append(line)
        length += len(line) + 1
    return ("\n".join(lines) + "\n").encode()[:size]


def _planned(name: str, spec: Mapping[str, Any]) -> tuple[int, int]:
    """The files and bytes a definition makes, checked before anything is generated: a
    wrong field is one line, and so is a payload too large to write in every round."""
    where = f"payload {name}"
    try:
        files = len(spec.get("literal", {}))
        size = sum(len(str(v)) for v in spec.get("literal", {}).values())
        for key, count, each in (
            ("text", "count", "max_bytes"),
            ("binary", "count", "bytes"),
        ):
            part = spec.get(key)
            if part:
                files += int(part[count])
                size += int(part[count]) * int(part[each])
        unique = spec.get("unique")
        if unique:
            n = int(unique["dirs"]) * int(unique["files_per_dir"])
            files, size = files + n, size + n * 24
        int(spec.get("seed", 0))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise VcsbenchError(
            f"{where}: its definition is not of the form fixtures/payloads.toml describes "
            f"({type(exc).__name__}: {exc})"
        ) from None
    if files > TREE_MAX_FILES or size > TREE_MAX_BYTES or files < 0 or size < 0:
        raise VcsbenchError(
            f"{where}: would make {files:,} files of {size:,} bytes, more than a payload "
            f"vcsbench writes in every round ({TREE_MAX_FILES:,} files, "
            f"{TREE_MAX_BYTES >> 30} GiB)"
        )
    return files, size


def _generate(name: str, spec: Mapping[str, Any]) -> Payload:
    _planned(name, spec)
    rng = random.Random(spec.get("seed", 0))
    dirs: list[str] = list(spec.get("dirs", []))
    if "dir_count" in spec:
        dirs = [f"dir{i:02d}" for i in range(int(spec["dir_count"]))]
    files: dict[str, bytes] = {k: v.encode() for k, v in spec.get("literal", {}).items()}
    slot = 0

    def place(stem: str) -> str:
        nonlocal slot
        where = dirs[slot % len(dirs)] + "/" if dirs else ""
        slot += 1
        return where + stem

    text = spec.get("text")
    if text:
        for i in range(int(text["count"])):
            size = rng.randint(int(text["min_bytes"]), int(text["max_bytes"]))
            files[place(f"file{i:04d}{text.get('suffix', '')}")] = _text(rng, size)
    binary = spec.get("binary")
    if binary:
        for i in range(int(binary["count"])):
            files[place(f"blob{i:02d}{binary.get('suffix', '')}")] = rng.randbytes(
                int(binary["bytes"])
            )
    unique = spec.get("unique")
    if unique:
        counter = 0
        for i in range(1, int(unique["dirs"]) + 1):
            for j in range(1, int(unique["files_per_dir"]) + 1):
                counter += 1
                files[f"files/dir{i}/file{j}.txt"] = f"{unique['stamp']}.{counter}\n".encode()
    return Payload(name, str(spec.get("description", "")), files, spec.get("seed"))


PAYLOADS_ENV = "VCSBENCH_PAYLOADS"
MAX_DEFINITIONS_BYTES = 1 << 20
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
"""The project's fixtures: payload definitions and their data (in the source tree; an
installed copy has them under ``<prefix>/share/vcsbench/fixtures``)."""


def definition_files() -> list[Path]:
    """The built-in definitions, then each file of ``$VCSBENCH_PAYLOADS`` (os.pathsep
    between them)."""
    built_in = FIXTURES / "payloads.toml"
    if not built_in.exists():
        built_in = Path(sys.prefix) / "share" / "vcsbench" / "fixtures" / "payloads.toml"
    extra = os.environ.get(PAYLOADS_ENV, "")
    return [built_in, *(Path(p) for p in extra.split(os.pathsep) if p)]


def _read_definitions(path: Path) -> dict[str, Any]:
    where = f"payload definitions {path}"
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_DEFINITIONS_BYTES + 1)
    except OSError as exc:
        raise VcsbenchError(
            f"{where}: cannot be read ({exc.strerror}); check {PAYLOADS_ENV}"
        ) from None
    if len(raw) > MAX_DEFINITIONS_BYTES:
        raise VcsbenchError(f"{where}: larger than {MAX_DEFINITIONS_BYTES:,} bytes")
    try:
        data = tomllib.loads(raw.decode())
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise VcsbenchError(f"{where}: is not TOML ({exc})") from None
    for name, spec in data.items():
        if not isinstance(spec, dict):
            raise VcsbenchError(f"{where}: {name!r} is not a table of a payload's fields")
    return data


@cache
def _definitions() -> dict[str, Any]:
    definitions: dict[str, Any] = {}
    for path in definition_files():
        for name, spec in _read_definitions(path).items():
            if name in definitions or name.startswith(TREE_PREFIX):
                raise VcsbenchError(
                    f"payload definitions {path}: {name!r} is defined already (or is a "
                    "tree: name); give it another name"
                )
            definitions[name] = spec
    return definitions


def names_for_help() -> str:
    """The payload names for ``--help``: never an error there (a bad definition file is
    said when a payload is chosen)."""
    try:
        return ", ".join(payload_names())
    except VcsbenchError:
        return f"those of fixtures/payloads.toml and ${PAYLOADS_ENV}"


def payload_names() -> list[str]:
    return list(_definitions())


TREE_PREFIX = "tree:"
RESERVED_PARTS = (".git", ".svn", ".hg")


def check_names(files: Mapping[str, bytes], where: str) -> None:
    """Every path relative, inside the repository, and no VCS metadata directory."""
    for rel in files:
        parts = rel.split("/")
        why = ""
        if not rel or rel.startswith("/"):
            why = "is not a relative path"
        elif any(part in ("", ".", "..") for part in parts):
            why = "has an empty, '.' or '..' component"
        elif any(part.lower() in RESERVED_PARTS for part in parts):
            why = f"has a VCS metadata component ({', '.join(RESERVED_PARTS)})"
        elif "\0" in rel or "\n" in rel:
            why = "holds a NUL or newline"
        if why:
            raise VcsbenchError(f"{where}: file name {rel!r} {why}; rename it or leave it out")


TREE_MAX_FILES = 200_000
TREE_MAX_BYTES = 2 << 30
MAX_DEPTH = 256
"""Directories a payload's path may lie below (a real repository's deepest is a few dozen)."""
PSEUDO_FSTYPES = frozenset(
    "proc sysfs devtmpfs devpts debugfs tracefs securityfs cgroup cgroup2 pstore bpf "
    "configfs fusectl mqueue hugetlbfs binfmt_misc efivarfs autofs rpc_pipefs nsfs".split()
)
"""Filesystems of the kernel's own whose files are not content (reading some blocks)."""


def _pseudo_filesystem(path: Path) -> str:
    """The fstype of ``path``'s filesystem where it is one of the kernel's own, else ""."""
    try:
        fstype = mount_containing(path)["fstype"]
    except VcsbenchError:
        return ""
    return fstype if fstype in PSEUDO_FSTYPES else ""


def _read_regular(path: Path, rel: str, where: str, room: int = TREE_MAX_BYTES) -> bytes:
    """A regular file's bytes; anything else (a FIFO, a device, a symlink) is refused
    before it is read, so nothing can block the run, and so is a file larger than the
    ``room`` left in the tree (from its size, before its bytes are read)."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise VcsbenchError(
                f"{where}: {rel} is a symlink; vcsbench's backends commit regular files "
                "only: replace it by the file, or leave it out"
            ) from None
        raise VcsbenchError(f"{where}: {rel} cannot be read ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise VcsbenchError(f"{where}: {rel} is not a regular file")
        if st.st_size > room:
            raise VcsbenchError(
                f"{where}: {rel} is {st.st_size:,} bytes, more than the "
                f"{TREE_MAX_BYTES >> 30} GiB a payload's files may be together"
            )
        return handle.read(room + 1)


def read_user_tree(root: Path, where: str) -> dict[str, bytes]:
    """The regular files below ``root`` (a user's own tree), relative path -> content; at
    most ``TREE_MAX_FILES`` files and ``TREE_MAX_BYTES`` bytes, names UTF-8."""
    files: dict[str, bytes] = {}
    total = 0
    root_dev = os.stat(root).st_dev
    todo = [root]  # walked without recursion: a tree of any depth is one line, not a crash
    while todo:
        here = todo.pop()
        if os.stat(here).st_dev != root_dev and _pseudo_filesystem(here):
            raise VcsbenchError(
                f"{where}: {here} is on a {_pseudo_filesystem(here)} filesystem, whose files "
                "are the kernel's, not content; give a directory of your own files"
            )
        with os.scandir(here) as listing:
            entries = sorted(listing, key=lambda e: e.name)
        subdirs = [e.name for e in entries if e.is_dir(follow_symlinks=False)]
        names = [e.name for e in entries if not e.is_dir(follow_symlinks=False)]
        links = {e.name for e in entries if e.is_symlink()}
        for name in names + subdirs:
            path = here / name
            rel = path.relative_to(root).as_posix()
            try:
                rel.encode()
            except UnicodeEncodeError:
                shown = os.fsencode(rel).decode(errors="backslashreplace")
                raise VcsbenchError(
                    f"{where}: file name {shown!r} is not UTF-8, which the backends' "
                    "repositories record names in; rename it or leave it out"
                ) from None
            if name in links and path.is_dir():
                raise VcsbenchError(
                    f"{where}: {rel} is a symlink; vcsbench's backends commit regular files "
                    "only: replace it by the file, or leave it out"
                )
            if rel.count("/") >= MAX_DEPTH:
                raise VcsbenchError(
                    f"{where}: {rel[:60]}... lies more than {MAX_DEPTH} directories deep, "
                    "deeper than a payload's path may; give a shallower tree"
                )
            if name not in names:
                continue
            files[rel] = _read_regular(path, rel, where, TREE_MAX_BYTES - total)
            total += len(files[rel])
            if len(files) > TREE_MAX_FILES or total > TREE_MAX_BYTES:
                raise VcsbenchError(
                    f"{where}: holds more than {TREE_MAX_FILES:,} files or "
                    f"{TREE_MAX_BYTES >> 30} GiB, more than a payload vcsbench writes in every "
                    "round; give a smaller tree"
                )
        todo.extend(
            here / d
            for d in reversed(subdirs)
            if d.lower() not in RESERVED_PARTS and d not in links
        )
    if not files:
        raise VcsbenchError(f"{where}: holds no files to commit")
    return files


def _tree_payload(name: str) -> Payload:
    where = f"payload {name}"
    root = Path(name[len(TREE_PREFIX) :]).expanduser()
    if not root.is_dir() or root.is_symlink():
        raise VcsbenchError(f"{where}: {root} is not a directory (tree:PATH takes one)")
    pseudo = _pseudo_filesystem(root)
    if pseudo:
        raise VcsbenchError(
            f"{where}: {root} is on a {pseudo} filesystem, whose files are the kernel's, not "
            "content; give a directory of your own files"
        )
    files = read_user_tree(root, where)
    check_names(files, where)
    return Payload(name, f"the user's tree at {root.resolve()}", files, None)


_KINDS: list[tuple[Callable[[str], bool], Callable[[str], Payload]]] = []
"""Payloads of other kinds, each registered by its own module: (its names, its loader)."""


def register_kind(names: Callable[[str], bool], loader: Callable[[str], Payload]) -> None:
    """A kind of payload with names of its own (``history:``), loaded by its module."""
    _KINDS.append((names, loader))


@cache
def load_payload(name: str) -> Payload:
    if name.startswith(TREE_PREFIX):
        return _tree_payload(name)
    for names, loader in _KINDS:
        if names(name):
            return loader(name)
    definitions = _definitions()
    if name not in definitions:
        raise VcsbenchError(
            f"unknown payload {name!r}; known: {', '.join(definitions)}, tree:PATH "
            "(a directory of your own) or history:REPO (a git repository's history)"
        )
    payload = _generate(name, definitions[name])
    check_names(payload.files, f"payload {name}")
    return payload
