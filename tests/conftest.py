"""Fixtures: root-only tests, every registered backend, isolated sandbox state."""

from __future__ import annotations

import os
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import BASETEMP, require_backend, skip_or_fail

from vcsbench.backends import REGISTRY

# The tests run in two pytest-xdist workers (the Makefile's `-n 2`). The runs they start are
# pytest sessions of their own; pytest-benchmark takes an inherited PYTEST_XDIST_WORKER for
# "xdist is on" and disables itself, so the worker's marks are not passed down.
for _name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
    os.environ.pop(_name, None)


def pytest_configure(config: pytest.Config) -> None:
    """The project's own tests fail on a warning; a user's `pytest benchmarks` sees one as
    a warning (pytest-benchmark warns of a saved run it cannot find, for one)."""
    config.addinivalue_line("filterwarnings", "error")
    # Mercurial 6.3 drops a revlog's file objects unclosed when it splits an inline revlog
    # (a file over 128 KiB); CPython closes them at once. Its bug, not this project's.
    config.addinivalue_line(
        "filterwarnings",
        "ignore:Exception ignored in. <_io.FileIO name=b'[^']*/[.]hg/store/"
        ":pytest.PytestUnraisableExceptionWarning",
    )


# Started in the background (cron, nohup, `make test &`), this process inherits SIGINT
# ignored, and every child it starts would inherit that: a test that interrupts a run it
# started would wait for it forever. A handler here makes each child start with the
# default (exec resets handled signals); the tests' children are what they signal.
for _signum in (signal.SIGINT, signal.SIGTERM):
    if signal.getsignal(_signum) == signal.SIG_IGN:
        signal.signal(
            _signum,
            signal.default_int_handler if _signum == signal.SIGINT else signal.SIG_DFL,
        )


@pytest.fixture
def root() -> None:
    if os.geteuid() != 0:
        skip_or_fail("needs root (mount, losetup)")


@pytest.fixture(params=list(REGISTRY))
def backend_name(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    require_backend(name)
    return name


@pytest.fixture(autouse=True)
def isolated_state(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Sandbox state files of the tests go to a directory of their own; after the test,
    what a run of it left there is cleaned up as `vcsbench cleanup` would. A run a test
    killed (a subprocess timeout kills its child with SIGKILL; so does an interrupted
    session) otherwise left its servers running once its state directory was gone with
    pytest's old temp directories: nothing could prove them the run's any more."""
    state = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("VCSBENCH_STATE_DIR", str(state))
    # what vcsbench keeps of a machine (its run-to-run spread): the test's own, none yet
    monkeypatch.setenv("VCSBENCH_DATA", str(tmp_path_factory.mktemp("data")))
    yield state
    if any(state.glob("*.json")):
        from vcsbench.sandbox.cleanup import clean_stale

        clean_stale()


@pytest.fixture(autouse=True, scope="session")
def isolated_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The temp directory of this test session and of every run it starts: mount points
    and loop images land there, so a leak check looks at this session's own only
    (another test run on the machine has its own; see helpers.own_dirs). Others may
    enter it (0711), as Apache's user must reach a sandbox below it. One per session,
    not per test: Subversion's library keeps the first temp directory it is given."""
    BASETEMP[:] = [tmp_path_factory.getbasetemp()]
    # /tmp, which others may enter, or the tmpfs make test gives the run (tools/tmpfs-tests.sh)
    own = Path(tempfile.mkdtemp(prefix="vt-", dir=os.environ.get("VCSBENCH_TEST_TMP", "/tmp")))
    os.chmod(own, 0o711)
    before = (os.environ.get("TMPDIR"), tempfile.tempdir)
    os.environ["TMPDIR"] = str(own)
    tempfile.tempdir = str(own)
    yield own
    if before[0] is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = before[0]
    tempfile.tempdir = before[1]
    from vcsbench.sandbox.removal import remove_tree

    remove_tree(own)  # never across a mount point: a leak stays for the check to see
