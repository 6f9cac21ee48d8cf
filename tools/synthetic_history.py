"""Write a git history of small source files, of a chosen length, by ``git fast-import``:
what the replay's throughput and memory are measured on (docs/histories.md).

    python tools/synthetic_history.py DIR --commits 10001

Seeded, so every run writes the same history: 200 text files of 1-4 KiB in 10 directories
at first; each commit changes one to three files a little, and every 50th renames a file,
every 70th deletes one, every 30th adds one, every 100th rewrites a 16 KiB binary file,
every 200th flips a script's executable bit.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
from pathlib import Path

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir", type=Path, help="where the repository is made (must not exist)")
    parser.add_argument("--commits", type=int, default=1001)
    args = parser.parse_args()
    if args.dir.exists():
        print(f"synthetic_history: {args.dir} exists; give a new directory", file=sys.stderr)
        return 2
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    subprocess.run(["git", "init", "-q", "-b", "main", str(args.dir)], check=True, env=env)
    subprocess.run(
        ["git", "-C", str(args.dir), "fast-import", "--quiet", "--done"],
        input=stream(args.commits),
        check=True,
        env=env,
    )
    subprocess.run(["git", "-C", str(args.dir), "reset", "-q", "--hard"], check=True, env=env)
    print(args.dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
