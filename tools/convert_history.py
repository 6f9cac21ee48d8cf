"""Replay a history into a new repository of another VCS and keep it: a Subversion or
Mercurial source to try ``history:`` on (docs/histories.md).

    python tools/convert_history.py history:synthetic:1000 svn-fs /tmp/h/svn

The replay is checked against its source as a benchmark's seed is; the next change is
replayed after it, so the new repository holds the range and its next change.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from vcsbench.backends import REGISTRY
from vcsbench.workload.history import HistoryPayload
from vcsbench.workload.payloads import load_payload


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("payload", help="history:REPO[,commits=N]")
    parser.add_argument(
        "backend", choices=sorted(n for n, c in REGISTRY.items() if "replay" in c.capabilities)
    )
    parser.add_argument("dest", type=Path, help="the new repository (must not exist)")
    args = parser.parse_args()
    if args.dest.exists():
        parser.error(f"{args.dest} exists; give a path that does not")
    payload = load_payload(args.payload)
    if not isinstance(payload, HistoryPayload):
        parser.error(f"{args.payload} is not a history: payload")
    backend = REGISTRY[args.backend]()
    scratch = Path(tempfile.mkdtemp(prefix="vcsbench-convert-"))
    try:
        backend.ready(scratch)
        cost = payload.replay_into(backend, args.dest, scratch)
        if payload.next is not None:
            backend.replay(args.dest, payload.next, scratch)
    finally:
        backend.close()
        shutil.rmtree(scratch)
    print(f"{args.dest}: {cost['commits'] + (payload.next is not None)} commits ({args.backend})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
