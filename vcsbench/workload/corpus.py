"""A reference corpus of real histories, obtained from a package registry the install
already uses and identified by checksums: ``history:corpus:NAME`` once ``make corpus`` (or
``python -m vcsbench.workload.corpus NAME``) has built it.

A corpus is a project's release series on PyPI (``fixtures/corpus/NAME.toml``: every
source release's file name, SHA-256, size and upload time, oldest first). Each file is
fetched by its name from the index's JSON listing, kept only if its SHA-256 is the pinned
one, and the releases become a git history, one commit per release (its whole tree, dated
by its upload), written by ``git fast-import`` into the cache (``$VCSBENCH_CORPUS``, else
``~/.cache/vcsbench/corpus``), never into this repository. The archives are read as data:
member names checked as a payload's, nothing extracted to disk, nothing run.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
import urllib.parse
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from vcsbench.backends._git import fast_import_path
from vcsbench.backends.changes import GIT_MODES, Node
from vcsbench.errors import VcsbenchError
from vcsbench.workload.payloads import FIXTURES, check_names

CORPUS_ENV = "VCSBENCH_CORPUS"
INDEX = "https://pypi.org/pypi/{project}/json"
MAX_MANIFEST_BYTES = 1 << 20
MAX_ARCHIVE_BYTES = 64 << 20


@dataclass(frozen=True)
class Release:
    version: str
    file: str
    sha256: str
    bytes: int
    time: int


@dataclass(frozen=True)
class Manifest:
    name: str
    project: str
    tip: str
    releases: tuple[Release, ...]

    @property
    def total_bytes(self) -> int:
        return sum(r.bytes for r in self.releases)


def corpus_dir() -> Path:
    return Path(os.environ.get(CORPUS_ENV) or Path.home() / ".cache" / "vcsbench" / "corpus")


def names() -> list[str]:
    return sorted(p.stem for p in (FIXTURES / "corpus").glob("*.toml"))


def load_manifest(name: str) -> Manifest:
    path = FIXTURES / "corpus" / f"{name}.toml"
    if not name.isidentifier() or not path.is_file():
        raise VcsbenchError(f"no corpus {name!r}; known: {', '.join(names())}")
    raw = path.read_bytes()[: MAX_MANIFEST_BYTES + 1]
    if len(raw) > MAX_MANIFEST_BYTES:
        raise VcsbenchError(f"{path}: larger than {MAX_MANIFEST_BYTES:,} bytes")
    try:
        data = tomllib.loads(raw.decode())
        releases = tuple(
            Release(str(r["version"]), str(r["file"]), str(r["sha256"]), int(r["bytes"]),
                    int(r["time"]))
            for r in data["release"]
        )  # fmt: skip
        return Manifest(name, str(data["project"]), str(data.get("tip", "")), releases)
    except (KeyError, TypeError, ValueError, tomllib.TOMLDecodeError) as exc:
        why = f"{type(exc).__name__}: {exc}"
        raise VcsbenchError(f"{path}: not a corpus manifest ({why})") from None


def corpus_repo(name: str) -> Path:
    """Where corpus ``name``'s history is, once built; one line saying how to build it."""
    manifest = load_manifest(name)
    repo = corpus_dir() / f"{name}.git"
    if not (repo / "HEAD").is_file():
        raise VcsbenchError(
            f"corpus {name} is not built here ({repo}); `make corpus` builds it "
            f"({len(manifest.releases)} releases of {manifest.project}, "
            f"{manifest.total_bytes / 1e6:.1f} MB from PyPI)"
        )
    return repo


def _download(url: str, limit: int) -> bytes:
    with urllib.request.urlopen(url, timeout=60) as response:  # https, the index
        data: bytes = response.read(limit + 1)
    if len(data) > limit:
        raise VcsbenchError(f"{url}: larger than the {limit:,} bytes expected")
    return data


def fetch(manifest: Manifest, log: TextIO = sys.stderr) -> Path:
    """Every release's archive in the cache, each checked against its pinned SHA-256."""
    dist = corpus_dir() / manifest.name / "dist"
    dist.mkdir(parents=True, exist_ok=True)
    missing = [r for r in manifest.releases if not _cached(dist / r.file, r.sha256)]
    if not missing:
        return dist
    index_url = INDEX.format(project=urllib.parse.quote(manifest.project))
    listing = json.loads(_download(index_url, 32 << 20))
    urls = {
        f["filename"]: urllib.parse.urljoin(index_url, f["url"])
        for files in listing.get("releases", {}).values()
        for f in files
    }
    for done, release in enumerate(missing, 1):
        if release.file not in urls:
            raise VcsbenchError(f"{index_url} lists no {release.file}; the index has changed")
        data = _download(urls[release.file], min(release.bytes, MAX_ARCHIVE_BYTES))
        if hashlib.sha256(data).hexdigest() != release.sha256:
            raise VcsbenchError(
                f"{release.file}: its SHA-256 is not the one fixtures/corpus/"
                f"{manifest.name}.toml pins; not kept"
            )
        partial = dist / (release.file + ".part")
        partial.write_bytes(data)
        os.replace(partial, dist / release.file)
        print(f"  [{done}/{len(missing)}] {release.file}", file=log)
    return dist


def _cached(path: Path, sha256: str) -> bool:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() == sha256
    except OSError:
        return False


def release_tree(archive: bytes, where: str) -> dict[str, Node]:
    """An sdist's files, its top directory stripped; read from the archive in memory,
    nothing extracted."""
    tree: dict[str, Node] = {}
    if archive.startswith(b"PK"):  # a zip sdist (old releases)
        with zipfile.ZipFile(io.BytesIO(archive)) as zipped:
            for info in zipped.infolist():
                _top, _, rel = info.filename.lstrip("./").partition("/")
                if not rel or info.is_dir():
                    continue
                unix = info.external_attr >> 16
                tree[rel] = Node("exec" if unix & 0o100 else "file", zipped.read(info))
        check_names(dict.fromkeys(tree, b""), where)
        return tree
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:*") as tar:
        for member in tar:
            _top, _, rel = member.name.lstrip("./").partition("/")
            if not rel or not (member.isfile() or member.issym()):
                continue
            if member.issym():
                tree[rel] = Node("link", member.linkname.encode())
                continue
            handle = tar.extractfile(member)
            assert handle is not None
            tree[rel] = Node("exec" if member.mode & 0o100 else "file", handle.read())
    check_names(dict.fromkeys(tree, b""), where)
    return tree


def build(manifest: Manifest, dist: Path) -> Path:
    """The releases as a git history (one commit each, its whole tree) in the cache;
    checked against the manifest's ``tip`` where it names one."""
    repo = corpus_dir() / f"{manifest.name}.git"
    building = corpus_dir() / f"{manifest.name}.git.building"
    shutil.rmtree(building, ignore_errors=True)
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(building)], check=True,
                   env=env)  # fmt: skip
    importer = subprocess.Popen(
        ["git", "--git-dir", str(building), "fast-import", "--quiet", "--done"],
        stdin=subprocess.PIPE,
        env=env,
    )
    assert importer.stdin is not None
    who = f"{manifest.project} releases <releases@pypi.invalid>".encode()
    failed = True
    try:
        for release in manifest.releases:
            tree = release_tree((dist / release.file).read_bytes(), release.file)
            message = f"{manifest.project} {release.version}".encode()
            out = [b"commit refs/heads/main\n"]
            out.append(b"author " + who + b" %d +0000\n" % release.time)
            out.append(b"committer " + who + b" %d +0000\n" % release.time)
            out.append(b"data %d\n%s\ndeleteall\n" % (len(message), message))
            for rel in sorted(tree):
                node = tree[rel]
                mode = b"%o" % GIT_MODES[node.kind]
                out.append(b"M " + mode + b" inline " + fast_import_path(rel) + b"\n")
                out.append(b"data %d\n" % len(node.data) + node.data + b"\n")
            importer.stdin.write(b"".join(out))
        importer.stdin.write(b"done\n")
        failed = False
    finally:
        importer.stdin.close()
        if failed:
            importer.kill()
        if importer.wait() != 0 and not failed:
            raise VcsbenchError(f"git fast-import failed building corpus {manifest.name}")
        if failed:
            shutil.rmtree(building, ignore_errors=True)
    tip = subprocess.run(
        ["git", "--git-dir", str(building), "rev-parse", "main"],
        check=True, capture_output=True, text=True, env=env,
    ).stdout.strip()  # fmt: skip
    if manifest.tip and tip != manifest.tip:
        raise VcsbenchError(
            f"corpus {manifest.name}: the history built ends in {tip}, not in the "
            f"{manifest.tip} the manifest pins; not kept"
        )
    shutil.rmtree(repo, ignore_errors=True)
    os.rename(building, repo)
    return repo


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in names():
        print(f"usage: python -m vcsbench.workload.corpus NAME ({', '.join(names())})",
              file=sys.stderr)  # fmt: skip
        return 2
    try:
        manifest = load_manifest(argv[0])
        size = f"{manifest.total_bytes / 1e6:.1f} MB"
        print(f"corpus {manifest.name}: {len(manifest.releases)} releases of "
              f"{manifest.project} ({size})", file=sys.stderr)  # fmt: skip
        repo = build(manifest, fetch(manifest))
    except (VcsbenchError, OSError, ValueError, tarfile.TarError, zipfile.BadZipFile) as exc:
        print(f"corpus: error: {exc}", file=sys.stderr)
        return 1
    print(f"history:corpus:{manifest.name} -> {repo}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
