"""Write a git history of small source files, of a chosen length, by ``git fast-import``:
what the replay's throughput and memory are measured on (docs/histories.md). The history
is vcsbench's own synthetic one (``vcsbench.workload.synthetic``; as a payload,
``history:synthetic:N``).

    python tools/synthetic_history.py DIR --commits 10001
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from vcsbench.workload.synthetic import stream


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
