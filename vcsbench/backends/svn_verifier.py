"""Subversion repositories read back by a process of their own, for verification.

``svnadmin dump`` proves a round but costs a process start and a full dump (about 5 ms
a round here). The reader (:mod:`vcsbench.svn_reader`) is one long-lived process per
benchmark process: it opens each repository afresh through libsvn_fs (the SWIG
bindings), reads the newest revision's files to the end (FSFS checks every
representation's MD5 there) and answers with each file's size and SHA-256. It shares
nothing with the process that wrote the repository, and nothing between repositories.
This module is the client side.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vcsbench.backends.files import Digest

VERIFIER = (
    "libsvn_fs in a reader process of vcsbench's own (the repository opened afresh, with a "
    "cache namespace of its own; `svnadmin dump -r HEAD` without the bindings)"
)
"""What the svn backends name as their verifier."""


def bindings_available() -> bool:
    try:
        import svn.fs
        import svn.repos  # noqa: F401
    except ImportError:
        return False
    return True


class VerifierLost(RuntimeError):
    """The reader process ended without answering (it is started again on the next call)."""


class SvnVerifier:
    """The client side: starts the reader on first use, in the process that uses it."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[str] | None = None
        self._owner = 0
        self._lent = False
        """Started to be used by the processes this one forks, one at a time
        (:meth:`lend`)."""
        self._outstanding = 0
        self._finalizer: weakref.finalize[[subprocess.Popen[str], int], SvnVerifier] | None = None

    def _usable(self) -> bool:
        """Whether this process may talk to the reader: it started it, or its parent
        started it to lend it (a forked process must not share pipes it was not lent)."""
        return self._owner == os.getpid() or (self._lent and self._owner == os.getppid())

    def _alive(self) -> bool:
        """Whether the reader runs (one lent by the parent cannot be polled here: only
        its parent can reap it; one that died unseen fails its next answer, and a new
        one is started)."""
        if self._proc is None:
            return False
        if self._owner == os.getpid():
            return self._proc.poll() is None
        try:
            os.kill(self._proc.pid, 0)
        except ProcessLookupError:
            return False
        return True

    def lend(self) -> None:
        """Start the reader here for the processes this one forks next, one at a time,
        each of which leaves no answer owed (a worker process of the rounds): they use it
        instead of each starting a reader of its own (a Python with the bindings, about
        80 ms). A reader this process lent before is ended first: a new one owes no
        answers to a worker that did not end cleanly."""
        if self._proc is not None and self._owner == os.getpid():
            self._end()
        proc = self._process()
        assert proc.stdin is not None and proc.stdout is not None
        # Ready before it is lent: its start (the bindings imported) is not to run beside
        # a worker's first timed rounds.
        proc.stdin.write('{"ping": true}\n')
        proc.stdin.flush()
        proc.stdout.readline()
        self._lent = True

    def _process(self) -> subprocess.Popen[str]:
        # A forked worker must not share its parent's pipes unless they were lent to it:
        # it starts a reader of its own.
        if self._proc is None or not self._usable() or not self._alive():
            if self._proc is not None and self._owner == os.getpid():
                self._end()
            self._lent = False
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "vcsbench.svn_reader"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                bufsize=1,
            )
            self._owner = os.getpid()
            # A backend never closed (a test's, an interrupted run's) still ends its reader.
            self._finalizer = weakref.finalize(self, _shut, self._proc, self._owner)
        return self._proc

    def read(self, repo: Path, paths: list[str]) -> tuple[int, dict[str, Digest | None]]:
        """The newest revision number and each path's digest (None: not a file there)."""
        self.send(repo, paths)
        return self.receive()

    def send(self, repo: Path, paths: list[str]) -> None:
        """Ask for one repository; the answers come back in the order asked
        (:meth:`receive`), so several may be asked before the first is read."""
        if self._outstanding and not self._alive():
            # The reader died with answers owed: this one is lost with them, not sent to
            # a new reader whose answers would be taken for theirs.
            self._outstanding += 1
            return
        proc = self._process()
        assert proc.stdin is not None
        self._outstanding += 1
        try:
            proc.stdin.write(json.dumps({"repo": str(repo), "paths": paths}) + "\n")
            proc.stdin.flush()
        except (OSError, ValueError):  # the pipe broke: receive() says the reader is gone
            pass

    def receive(self) -> tuple[int, dict[str, Digest | None]]:
        """The answer to the oldest request not yet received."""
        self._outstanding = max(0, self._outstanding - 1)
        proc = self._proc
        line = ""
        if proc is not None and proc.stdout is not None and self._usable():
            try:
                line = proc.stdout.readline()
            except (OSError, ValueError):  # the pipe broke or was closed: the reader is gone
                line = ""
        if not line:
            self._end()
            raise VerifierLost("the Subversion reader process ended while reading this repository")
        reply = json.loads(line)
        if "error" in reply:
            raise RuntimeError(reply["error"])
        files: Mapping[str, list[Any] | None] = reply["files"]
        return reply["youngest"], {
            rel: None if got is None else (int(got[0]), str(got[1])) for rel, got in files.items()
        }

    def _end(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            if self._finalizer is not None:
                self._finalizer.detach()
            _shut(proc, self._owner)

    def close(self) -> None:
        if self._proc is not None and self._owner == os.getpid():
            self._end()
        self._proc = None


def _shut(proc: subprocess.Popen[str], owner: int) -> None:
    """Close the reader's input (it ends on that) and reap it, in the process that
    started it only."""
    if os.getpid() != owner:
        return
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            stream.close()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
