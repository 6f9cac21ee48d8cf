"""One local client's process: a vcsbench backend that creates and commits on request.

``python -m vcsbench.load.client_process BACKEND SCRATCH``; ``{"ready": true}`` once its backend
is loaded and warm (one repository made and committed to beside SCRATCH), then one JSON
line each way:
``{"repo", "create", "files" (latin-1 text), "message"}`` (a session) or ``{"repo",
"clone": TARGET}`` in, ``{}`` or ``{"kind", "error"}`` out. It ends when its input closes.
"""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path


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
        for line in sys.stdin:
            request = json.loads(line)
            repo = Path(request["repo"])
            kind = "create"
            reply: dict[str, object] = {}
            try:
                if "clone" in request:  # a clone where the backend has one, else a checkout
                    kind = "clone"
                    target = Path(request["clone"])
                    if "clone" in backend.capabilities:
                        backend.clone(repo, target, scratch)
                    else:
                        backend.checkout(repo, target, scratch)
                    sys.stdout.write(json.dumps(reply) + "\n")
                    sys.stdout.flush()
                    continue
                files = {rel: text.encode("latin-1") for rel, text in request["files"].items()}
                if request["create"]:
                    backend.create(repo)
                kind = "commit"
                # shared: another client's commit may land first (libgit2: the tip moved
                # or the ref is locked); a client commits again, up to "retry" times.
                for attempt in range(int(request.get("retry", 0)) + 1):
                    try:
                        backend.commit(repo, files, request["message"], scratch)
                        reply = {"retries": attempt} if attempt else {}
                        break
                    except Exception:
                        if attempt == int(request.get("retry", 0)):
                            raise
            except Exception as exc:  # a failed session is the answer, not the end
                reply = {"kind": kind, "error": f"{type(exc).__name__}: {exc}"}
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
