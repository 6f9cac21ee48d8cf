"""What replaying a history costs one backend: commits per second and the process's peak
memory, in a process of its own (docs/histories.md).

    python tools/replay_cost.py history:REPO,commits=1000 git-pygit2 --dir /dev/shm

The repository is made below --dir (a new directory, removed afterwards); the replay is
checked against its source as a benchmark's seed is.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

from vcsbench.backends import REGISTRY
from vcsbench.workload.payloads import load_payload


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("payload", help="history:REPO[,commits=N]")
    parser.add_argument("backend", choices=sorted(REGISTRY))
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()))
    args = parser.parse_args()
    started = time.perf_counter()
    payload = load_payload(args.payload)
    loaded = time.perf_counter() - started
    rss_loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    work = Path(tempfile.mkdtemp(prefix="vcsbench-replay-", dir=args.dir))
    backend = REGISTRY[args.backend]()
    try:
        backend.ready(work)
        (work / "scratch").mkdir()
        cost = payload.replay_into(backend, work / "repo", work / "scratch")  # type: ignore[attr-defined]
    finally:
        backend.close()
        shutil.rmtree(work)
    print(
        json.dumps(
            {
                "backend": args.backend,
                "payload": args.payload,
                "load_s": round(loaded, 3),
                **{k: round(v, 3) for k, v in cost.items()},
                "rss_after_load_kib": rss_loaded,
                "rss_peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
