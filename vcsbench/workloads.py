"""Payloads (what is committed) and operations (what is timed).

Knows backends and payloads; nothing about measuring. Each operation is split into an
untimed ``prepare``, the timed ``run``, and an untimed ``verify``.
"""

from __future__ import annotations

import hashlib
import random
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from vcsbench.backends import Backend
from vcsbench.backends.base import compare_files
from vcsbench.errors import VcsbenchError

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
PAYLOAD_FILE = FIXTURES / "payloads.toml"
OPS = ("create", "create+commit", "commit", "checkout")
DEFAULT_PAYLOADS = ("hello", "submission")
COMMIT_MESSAGE = "vcsbench commit"
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
    return Payload(name, str(spec.get("description", "")), files, spec.get("seed"))


@cache
def _definitions() -> dict[str, Any]:
    with open(PAYLOAD_FILE, "rb") as handle:
        return tomllib.load(handle)


def payload_names() -> list[str]:
    return list(_definitions())


@cache
def load_payload(name: str) -> Payload:
    definitions = _definitions()
    if name not in definitions:
        raise VcsbenchError(f"unknown payload {name!r}; known: {', '.join(definitions)}")
    return _generate(name, definitions[name])


def read_tree(root: Path, ignore: frozenset[str] = frozenset()) -> dict[str, bytes]:
    """Every file below ``root`` as relative path -> content, skipping top-level ``ignore``."""
    files: dict[str, bytes] = {}
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if rel.parts[0] in ignore or not path.is_file():
            continue
        files[rel.as_posix()] = path.read_bytes()
    return files


class Operation:
    """One of ``OPS`` for one backend and payload."""

    def __init__(self, name: str, backend: Backend, payload: Payload) -> None:
        if name not in OPS:
            raise VcsbenchError(f"unknown operation {name!r}; known: {', '.join(OPS)}")
        self.name = name
        self.backend = backend
        self.payload = payload
        self.change = payload.change()

    def paths(self, workdir: Path, index: int) -> tuple[Path, Path]:
        """Repository and checkout target of round ``index``; siblings in ``workdir``."""
        repo = workdir / f"r{index:06d}"
        return repo, repo.with_name(repo.name + ".co")

    def prepare(self, repo: Path) -> None:
        """Untimed: what must exist before the timed part."""
        if self.name in ("commit", "checkout"):
            self.backend.create(repo)
            self.backend.commit(repo, self.payload.files, COMMIT_MESSAGE)

    def run(self, repo: Path, target: Path) -> None:
        """Timed: the VCS work only."""
        name, backend = self.name, self.backend
        if name == "create":
            backend.create(repo)
        elif name == "create+commit":
            backend.create(repo)
            backend.commit(repo, self.payload.files, COMMIT_MESSAGE)
        elif name == "commit":
            backend.commit(repo, self.change, COMMIT_MESSAGE + " 2")
        else:
            backend.checkout(repo, target)

    def expected(self) -> dict[str, bytes]:
        """The newest revision's files after ``run``."""
        if self.name == "create":
            return {}
        if self.name == "commit":
            return {**self.payload.files, **self.change}
        return dict(self.payload.files)

    def verify(self, repo: Path, target: Path) -> list[str]:
        """Untimed: differences between what ``run`` should have made and what it made."""
        if self.name != "checkout":
            return self.backend.verify(repo, self.expected())
        actual = read_tree(target, self.backend.checkout_ignores())
        problems = compare_files(self.payload.files, dict(actual))
        extra = sorted(set(actual) - set(self.payload.files))
        return problems + [f"{rel}: not in the revision" for rel in extra]
