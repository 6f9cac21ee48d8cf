"""A synthetic git history of small source files, of a chosen length, written by ``git
fast-import``: seeded, so every machine writes the same commits (the same ids), for what
needs a long history no registry serves (the git studies on histories, the replay's
throughput).

200 text files of 1-4 KiB in 10 directories at first; each commit changes one to three
files a little, and every 50th renames a file, every 70th deletes one, every 30th adds
one, every 100th rewrites a 16 KiB binary file, every 200th flips a script's executable
bit. ``history:synthetic:N`` is N such commits and one more (the next change), built once
into the corpus cache.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import tempfile
from pathlib import Path

from vcsbench.errors import VcsbenchError

MAX_SYNTHETIC = 100_000

WORDS = "def return self value result index count items node tree path name data".split()


def _text(rng: random.Random, size: int) -> bytes:
    lines, length = [], 0
    while length < size:
        line = " ".join(rng.choices(WORDS, k=rng.randrange(3, 10)))
        lines.append(line)
        length += len(line) + 1
    return ("\n".join(lines) + "\n").encode()


def stream(commits: int, seed: int = 1) -> bytes:
    rng = random.Random(seed)
    files: dict[str, bytes] = {
        f"dir{i % 10}/file{i:04d}.py": _text(rng, rng.randint(1024, 4096)) for i in range(200)
    }
    files["bin/blob.dat"] = rng.randbytes(16384)
    files["bin/run.sh"] = b"#!/bin/sh\necho run\n"
    executable = True
    out: list[bytes] = []
    next_id = 200
    for n in range(commits):
        changed: dict[str, bytes] = {}
        deleted: list[str] = []
        if n == 0:
            changed = dict(files)
        else:
            for _ in range(rng.randint(1, 3)):
                rel = rng.choice(sorted(k for k in files if k.endswith(".py")))
                lines = files[rel].split(b"\n")
                lines.insert(rng.randrange(len(lines)), _text(rng, 60).rstrip())
                changed[rel] = b"\n".join(lines)
            if n % 50 == 0:
                rel = rng.choice(sorted(k for k in files if k.endswith(".py") and k not in changed))
                new = f"dir{rng.randrange(12)}/moved{next_id:05d}.py"
                next_id += 1
                deleted.append(rel)
                changed[new] = files[rel]
            if n % 70 == 0:
                rel = rng.choice(sorted(k for k in files if k.endswith(".py") and k not in changed))
                deleted.append(rel)
            if n % 30 == 0:
                changed[f"dir{rng.randrange(12)}/new{next_id:05d}.py"] = _text(rng, 1500)
                next_id += 1
            if n % 100 == 0:
                changed["bin/blob.dat"] = rng.randbytes(16384)
            if n % 200 == 0:
                executable = not executable
                changed["bin/run.sh"] = files["bin/run.sh"]
        for rel in deleted:
            files.pop(rel, None)
        files.update(changed)
        message = f"commit {n}: {len(changed)} changed, {len(deleted)} deleted".encode()
        out.append(b"commit refs/heads/main\n")
        out.append(b"author Synthetic <synthetic@example.org> %d +0000\n" % (1.6e9 + n * 600))
        out.append(b"committer Synthetic <synthetic@example.org> %d +0000\n" % (1.6e9 + n * 600))
        out.append(b"data %d\n%s\n" % (len(message), message))
        for rel in deleted:
            out.append(b"D " + rel.encode() + b"\n")
        for rel, data in changed.items():
            mode = b"100755" if rel == "bin/run.sh" and executable else b"100644"
            out.append(b"M " + mode + b" inline " + rel.encode() + b"\n")
            out.append(b"data %d\n" % len(data) + data + b"\n")
    out.append(b"done\n")
    return b"".join(out)


def write_history(repo: Path, commits: int) -> None:
    """A new bare repository at ``repo`` holding ``commits`` synthetic commits."""
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(repo)], check=True, env=env)
    subprocess.run(
        ["git", "--git-dir", str(repo), "fast-import", "--quiet", "--done"],
        input=stream(commits),
        check=True,
        env=env,
    )


def synthetic_repo(replayed: int, cache: Path) -> Path:
    """The synthetic history of ``replayed`` commits and the next one, built into ``cache``
    on first use (aside, then renamed: never half of one)."""
    if not 1 <= replayed <= MAX_SYNTHETIC:
        raise VcsbenchError(
            f"history:synthetic:{replayed} -- give a whole number of commits from 1 to "
            f"{MAX_SYNTHETIC:,}"
        )
    repo = cache / f"synthetic-{replayed}.git"
    if repo.is_dir():
        return repo
    cache.mkdir(parents=True, exist_ok=True)
    aside = Path(tempfile.mkdtemp(prefix=f".synthetic-{replayed}-", dir=cache))
    try:
        write_history(aside / "repo.git", replayed + 1)
        os.rename(aside / "repo.git", repo)
    except OSError:
        if not repo.is_dir():  # not another process's build finished first
            raise
    finally:
        shutil.rmtree(aside, ignore_errors=True)
    return repo
