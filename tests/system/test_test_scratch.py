"""make test's scratch space (tools/tmpfs-tests.sh): a tmpfs the command sees as its
TMPDIR, which nothing outside sees mounted, and which is gone when the command ends --
at its end, and when it is stopped."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from helpers import REPO

SCRIPT = REPO / "tools" / "tmpfs-tests.sh"


def mounted_on(path: str) -> bool:
    return any(
        line.split()[4] == path for line in Path("/proc/self/mountinfo").read_text().splitlines()
    )


def test_the_command_runs_on_a_tmpfs_of_its_own_and_it_is_gone_after(root: None) -> None:
    seen = subprocess.run(
        [str(SCRIPT), "sh", "-c", 'echo "$TMPDIR"; stat -f -c %T "$TMPDIR"; exit 3'],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert 3 == seen.returncode, seen.stderr  # the command's own exit status
    where, kind = seen.stdout.split()
    assert "tmpfs" == kind
    assert not mounted_on(where)  # never seen mounted out here
    assert not os.path.exists(where)  # and its directory removed


def test_a_stopped_command_leaves_neither_mount_nor_directory(root: None) -> None:
    proc = subprocess.Popen(
        [str(SCRIPT), "sh", "-c", 'echo "$TMPDIR"; exec sleep 60'],
        stdout=subprocess.PIPE, text=True, start_new_session=True,
        # a run started from cron or nohup inherits SIGTERM as set here: the default
        preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL),
    )  # fmt: skip
    assert proc.stdout is not None
    where = proc.stdout.readline().strip()
    assert os.path.isdir(where)
    os.killpg(proc.pid, signal.SIGTERM)
    proc.communicate(timeout=30)
    deadline = time.monotonic() + 10
    while os.path.exists(where) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(where)
    assert not mounted_on(where)


def test_without_root_the_command_runs_as_it_is() -> None:
    """Without root there is no mount: the command runs with the TMPDIR it was given (as
    root, a copy of the script, where any user may run it, is run as nobody)."""
    place = Path(tempfile.mkdtemp(prefix="vcsbench-test-", dir="/var/tmp"))
    try:
        place.chmod(0o755)
        script = place / SCRIPT.name
        shutil.copy2(SCRIPT, script)
        drop = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        seen = subprocess.run(
            [*(drop if os.geteuid() == 0 else []), str(script), "sh", "-c", 'echo "$TMPDIR"'],
            capture_output=True, text=True, check=False, cwd="/",
            env={**os.environ, "TMPDIR": "/var/tmp"},
        )  # fmt: skip
    finally:
        shutil.rmtree(place)
    assert 0 == seen.returncode, seen.stderr
    assert "/var/tmp" == seen.stdout.strip()
