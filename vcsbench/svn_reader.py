"""The Subversion reader process behind :mod:`vcsbench.backends.svn_verifier`.

Run as ``python -m vcsbench.svn_reader``; it imports nothing else of vcsbench, so it
starts in the time the bindings take. One JSON line each way: ``{"repo": PATH, "paths":
[...]}`` in, ``{"youngest": N, "files": {PATH: [SIZE, SHA256] or null}}`` or ``{"error":
TEXT}`` out (``{"ping": true}`` is answered ``{"pong": true}`` once it can read). Every
open gets a cache namespace of its own (copied repositories share their UUID), so
nothing read for one repository, or one earlier read, serves another; the in-memory
cache is small (:data:`CACHE_BYTES`), not off: Subversion 1.14's FSX cannot read without
one ("Item index ... exceeds l2p limit"). It ends when its input closes.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sys
import uuid
from typing import IO, Any

CACHE_BYTES = 1 << 20
"""libsvn's in-memory cache for the reader process (its default is 16 MiB)."""


def _read(repo: str, paths: list[str]) -> dict[str, Any]:
    import svn.core
    import svn.fs
    import svn.repos

    pool = svn.core.Pool()
    try:
        config = {svn.fs.CONFIG_FSFS_CACHE_NS: uuid.uuid4().hex}
        fs = svn.repos.fs(svn.repos.open2(repo, config, pool))
        youngest = svn.fs.youngest_rev(fs, pool)
        root = svn.fs.revision_root(fs, youngest, pool)
        svn.fs.dir_entries(root, "", pool)  # the root directory's representation, read
        files: dict[str, list[Any] | None] = {}
        for rel in paths:
            if svn.fs.check_path(root, rel, pool) != svn.core.svn_node_file:
                files[rel] = None
                continue
            data = svn.core.Stream(svn.fs.file_contents(root, rel, pool)).read()
            files[rel] = [len(data), hashlib.sha256(data).hexdigest()]
        return {"youngest": youngest, "files": files}
    finally:
        pool.destroy()


def serve(requests: IO[str], replies: IO[str]) -> None:
    import svn.core

    cache = svn.core.svn_cache_config_get()
    cache.cache_size = CACHE_BYTES
    svn.core.svn_cache_config_set(cache)
    for line in requests:
        request = json.loads(line)
        if "ping" in request:  # ready: the bindings a read needs are imported
            import svn.fs
            import svn.repos

            replies.write('{"pong": true}\n')
            replies.flush()
            continue
        try:
            reply = _read(request["repo"], request["paths"])
        except Exception as exc:  # every failure to read is the answer, not the end
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


def main() -> None:
    # Ctrl-C reaches the whole process group; the reader ends when its input closes.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        serve(sys.stdin, sys.stdout)
    except BrokenPipeError:  # whoever asked is gone: nobody is owed the answer
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


if __name__ == "__main__":
    main()
