"""One local client's process: a vcsbench backend that does a client's verbs on request.

``python -m vcsbench.load.client_process BACKEND SCRATCH``; ``{"ready": true}`` once its backend
is loaded and warm (one repository made and committed to beside SCRATCH), then one typed
request a line in and one reply a line out (:mod:`vcsbench.load.requests`). It ends when its
input closes.
"""

from __future__ import annotations

import json
import random
import signal
import sys
import time
from pathlib import Path
from typing import Any

from vcsbench.load.requests import Clone, Commit, Create, Stage, Update, decode


class GaveUp(Exception):
    """A shared commit refused every time it was tried."""


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the run stops it by closing its input
    from vcsbench.backends import make_backend

    spec, scratch = sys.argv[1], Path(sys.argv[2])
    with make_backend(spec) as backend:
        backend.ready(scratch)
        # Warm: the library's first repository (modules loaded, caches made) is not a
        # student's. A failure here shows again, counted, in the sessions.
        warm = Path(f"{scratch}-warm-up")
        try:
            backend.create(warm)
            backend.commit(warm, {"warm-up.txt": b"warm-up\n"}, "warm-up", scratch)
        except Exception:
            pass
        sys.stdout.write(json.dumps({"ready": True}) + "\n")
        sys.stdout.flush()
        staged: dict[str, bytes] = {}
        for line in sys.stdin:
            request = decode(line)
            kind = request.kind
            reply: dict[str, object] = {}
            try:
                if isinstance(request, Stage):
                    staged = {rel: text.encode("latin-1") for rel, text in request.files.items()}
                elif isinstance(request, Create):
                    backend.create(Path(request.repo))
                elif isinstance(request, Commit):
                    if request.create:
                        kind = "create"
                        backend.create(Path(request.repo))
                    kind = request.kind
                    reply = _commit(backend, request, staged, scratch)
                elif isinstance(request, Clone):
                    backend.working_copy(Path(request.repo), Path(request.target), scratch)
                elif isinstance(request, Update):
                    backend.update(Path(request.target), scratch)
            except GaveUp as exc:
                reply = {"kind": kind, "error": str(exc)}
            except Exception as exc:  # a failed session is the answer, not the end
                reply = {"kind": kind, "error": f"{type(exc).__name__}: {exc}"}
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


def _commit(
    backend: Any, request: Commit, files: dict[str, bytes], scratch: Path
) -> dict[str, object]:
    """One commit; shared: another client's commit may land first (libgit2: the tip moved
    or the ref is locked), and the client commits again, up to "retry" times, after a
    short random wait that grows with the tries (as a client that looks at the
    repository again before it retries; without it, three committers on a tmpfs ended
    a session in this error in 1 run of 28, none in 25 with it). The wait is in the
    session's time."""
    retry = request.retry
    for attempt in range(retry + 1):
        try:
            backend.commit(Path(request.repo), files, request.message, scratch)
            return {"retries": attempt} if attempt else {}
        except Exception as exc:
            if attempt == retry:
                if not retry:
                    raise
                why = f"{type(exc).__name__}: {exc} (given up after {retry} retries)"
                raise GaveUp(why) from exc
            time.sleep(random.uniform(0, 0.002) * min(attempt + 1, 5))
    return {}


if __name__ == "__main__":
    main()
