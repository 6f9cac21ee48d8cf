"""Payloads: what benchmarks commit, generated from ``payloads.toml`` (shipped in the package).

Content is generated from a seed, so every run commits the same bytes; results record
each payload's SHA-256.
"""

from __future__ import annotations

import hashlib
import os
import random
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from vcsbench.errors import VcsbenchError

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


def _generate(name: str, spec: Mapping[str, Any]) -> Payload:
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


@cache
def _definitions() -> dict[str, Any]:
    text = resources.files("vcsbench.bench").joinpath("payloads.toml").read_text()
    return tomllib.loads(text)


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


def read_user_tree(root: Path, where: str) -> dict[str, bytes]:
    """The regular files below ``root`` (a user's own tree), relative path -> content."""
    files: dict[str, bytes] = {}
    for directory, subdirs, names in os.walk(root, followlinks=False):
        for name in sorted(names) + sorted(subdirs):
            path = Path(directory) / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                raise VcsbenchError(
                    f"{where}: {rel} is a symlink; vcsbench's backends commit regular files "
                    "only: replace it by the file, or leave it out"
                )
            if name in names and not path.is_file():
                raise VcsbenchError(f"{where}: {rel} is not a regular file")
            if name in names:
                files[rel] = path.read_bytes()
        subdirs[:] = [d for d in subdirs if d.lower() not in RESERVED_PARTS]
    if not files:
        raise VcsbenchError(f"{where}: holds no files to commit")
    return files


def _tree_payload(name: str) -> Payload:
    where = f"payload {name}"
    root = Path(name[len(TREE_PREFIX) :]).expanduser()
    if not root.is_dir() or root.is_symlink():
        raise VcsbenchError(f"{where}: {root} is not a directory (tree:PATH takes one)")
    files = read_user_tree(root, where)
    check_names(files, where)
    return Payload(name, f"the user's tree at {root.resolve()}", files, None)


def is_payload_name(name: str) -> bool:
    return name in _definitions() or name.startswith(TREE_PREFIX)


@cache
def load_payload(name: str) -> Payload:
    if name.startswith(TREE_PREFIX):
        return _tree_payload(name)
    definitions = _definitions()
    if name not in definitions:
        raise VcsbenchError(
            f"unknown payload {name!r}; known: {', '.join(definitions)}, or tree:PATH "
            "(a directory of your own)"
        )
    payload = _generate(name, definitions[name])
    check_names(payload.files, f"payload {name}")
    return payload
