"""Teardown: what a state file records, undone newest first, each thing only once it is
proven the run's (:mod:`vcsbench.sandbox.ownership`); and ``vcsbench cleanup``, which
does that for every run that is gone. A tree is removed without crossing a mount point
(:mod:`vcsbench.sandbox.removal`); what cannot be proven, or removed, is one line for a
person, never removed or killed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

from vcsbench.process import group_members, signals_held
from vcsbench.sandbox.mounts import loop_backings, mount_entry, mounts_below
from vcsbench.sandbox.ownership import (
    carries_token,
    cgroup2_root,
    process_ended,
    prove_cgroup,
    prove_dir,
    prove_image,
    prove_mount,
    prove_process,
    prove_throttled_device,
    remove_image_marker,
)
from vcsbench.sandbox.removal import remove_tree
from vcsbench.sandbox.spec import NAME_PREFIX
from vcsbench.sandbox.state import (
    MARKER,
    Made,
    State,
    StateError,
    boot_id,
    checked_state_dir,
    load_state,
    owner_alive,
    process_starttime,
)
from vcsbench.sandbox.throttle import clear_rules, describe_limits, rules_on


def _step(argv: list[str]) -> str | None:
    """Run one teardown command; its failure as text, or None."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    except OSError as exc:
        return f"{' '.join(argv)}: {exc}"
    if proc.returncode != 0:
        return f"{' '.join(argv)}: {(proc.stderr or proc.stdout).strip() or proc.returncode}"
    return None


def end_processes(state: State) -> list[str]:
    """End the recorded processes proven this run's, with their process groups and
    cgroups, and wait until they are gone; a pid that now names another process is left
    alone, and said. A group member left after its leader ended (a client command the
    load engine started) is ended when it carries the run's token."""
    failures: list[str] = []
    same_boot = state.boot_id == boot_id()
    ended: list[tuple[int, str | None]] = []
    for entry in state.processes:
        why = prove_process(entry, state.token) if same_boot else "gone"
        if why is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                if os.getpgid(entry.pid) == entry.pid:
                    os.killpg(entry.pid, signal.SIGKILL)
                else:
                    os.kill(entry.pid, signal.SIGKILL)
            ended.append((entry.pid, entry.starttime))
        elif why != "gone":
            failures.append(f"{why}: left running")
        if same_boot and why in (None, "gone"):
            _end_members(entry.pid, state.token, why is None, ended)
        group = entry.cgroup
        if group is None or not os.path.lexists(group.path):
            continue
        why = prove_cgroup(group, state.token)
        if why is not None:
            if why != "gone":
                failures.append(f"{why}: left as it is")
            continue
        _end_cgroup(Path(group.path), failures)
    # What was killed must be gone before the filesystem it used is unmounted: a member
    # blocked in a write to a throttled device dies seconds after its leader.
    deadline = time.monotonic() + 10
    for pid, start in ended:
        while (
            process_starttime(pid) == start
            and not process_ended(pid)
            and time.monotonic() < deadline
        ):
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
            time.sleep(0.02)
    return failures


def _end_cgroup(group: Path, failures: list[str]) -> None:
    """End every process in ``group`` (proven the run's) and remove it."""
    with contextlib.suppress(OSError):
        (group / "cgroup.kill").write_text("1")
    deadline = time.monotonic() + 5
    while True:
        try:
            os.rmdir(group)
            return
        except OSError as exc:
            if time.monotonic() > deadline:
                failures.append(f"remove cgroup {group}: {exc.strerror}")
                return
            time.sleep(0.02)


def end_unrecorded(token: str) -> list[str]:
    """What a killed run started that no state file records, found by its token: a
    cgroup whose name holds it (the one a user's command runs in: ``vcsbench time``),
    and any process started with it in its environment (a daemon the command forked, out
    of any group). Only for a run proven dead: a live run's processes carry it too."""
    failures: list[str] = []
    root = cgroup2_root()
    if root is not None:
        for group in sorted(root.glob(f"{NAME_PREFIX}*")):
            if group.name.endswith(token) or f"-{token}-" in group.name:
                _end_cgroup(group, failures)
    killed = []
    for entry in os.scandir("/proc"):
        pid = int(entry.name) if entry.name.isdigit() else os.getpid()
        if pid != os.getpid() and carries_token(pid, token):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
    deadline = time.monotonic() + 10  # gone before the filesystem they used is unmounted
    while any(not process_ended(pid) for pid in killed) and time.monotonic() < deadline:
        time.sleep(0.02)
    return failures


def _end_members(
    leader: int, token: str, signalled: bool, ended: list[tuple[int, str | None]]
) -> None:
    """End the members of ``leader``'s process group that carry the run's token (the
    leader may be gone: a group outlives it), and add them to ``ended`` to be waited for,
    with every member of a proven leader's group (``signalled`` with it). A member of a
    gone leader's group without the token is not provably the run's: its number may have
    been given to another process group since."""
    for pid in group_members(leader):
        if pid == leader:
            continue
        start = process_starttime(pid)
        if carries_token(pid, token):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        elif not signalled:
            continue
        ended.append((pid, start))


def _proven(made: Made, token: str, what: str, failures: list[str]) -> bool:
    """Whether ``made`` is there and proven this run's (a refusal goes to ``failures``)."""
    if not os.path.lexists(made.path):
        return False
    why = prove_dir(made, token, what)
    if why is not None:
        failures.append(f"{why}: left as it is")
    return why is None


def _remove_marked_dir(made: Made, token: str, what: str, failures: list[str]) -> None:
    """rmdir a proven directory that must be empty but for its marker."""
    if not _proven(made, token, what, failures):
        return
    try:
        os.unlink(os.path.join(made.path, MARKER))
        os.rmdir(made.path)
    except OSError as exc:
        failures.append(f"remove {what} {made.path}: {exc.strerror}")


def _remove_marked_tree(made: Made, token: str, what: str, failures: list[str]) -> None:
    """Remove a proven directory and its contents, never across a mount point."""
    if not _proven(made, token, what, failures):
        return
    left = remove_tree(made.path, last=MARKER)
    for _ in range(2):  # a process being ended may still have been writing there: once more
        if not left or not os.path.lexists(os.path.join(made.path, MARKER)):
            break
        time.sleep(0.2)
        left = remove_tree(made.path, last=MARKER)
    if left:
        more = f" (and {len(left) - 1} more)" if len(left) > 1 else ""
        failures.append(f"remove {what} {made.path}: {left[0]}{more}")


def _unmount(state: State, failures: list[str]) -> None:
    assert state.mountpoint is not None
    point = state.mountpoint.path
    entry = mount_entry(point)
    if entry is None:
        return
    why = prove_mount(state, entry)
    if why is not None:
        failures.append(f"{why}: left mounted")
        return
    inner = [p for p in mounts_below(point) if p != point]
    if inner:
        failures.append(f"{inner[0]} is mounted inside the sandbox {point}: left mounted")
        return
    failed = _step(["umount", point])
    if failed is not None and _step(["umount", "-l", point]) is not None:
        failures.append(f"unmount {failed}")


def _unthrottle(state: State, failures: list[str]) -> None:
    """Remove the throttle rules on the run's loop device, before it is detached (a rule
    follows the device number to whoever attaches it next). Rules on a number that is
    not provably the run's device any more are someone else's now: said, left."""
    devno = state.throttle_device
    if devno is None:
        return
    rules = rules_on(devno)
    if not rules:
        return
    why = prove_throttled_device(state)
    if why is not None:
        shown = describe_limits(rules)
        failures.append(f"throttle rules on {devno} ({shown}): {why}: left as they are")
        return
    failures += clear_rules(devno)


def teardown(state: State) -> list[str]:
    """Undo what ``state`` records, newest first, each thing only once it is proven this
    run's. Returns the steps that failed or were refused (empty: everything is gone)."""
    failures: list[str] = []
    with signals_held():
        failures += end_processes(state)
        if state.mountpoint:
            _unmount(state, failures)
        _unthrottle(state, failures)
        if state.image is not None:
            why = prove_image(state) if os.path.lexists(state.image.path) else None
            if why is not None:
                failures.append(f"{why}: left as it is (with any loop device on it)")
            else:
                for device, backing in loop_backings().items():
                    if backing == (state.image.dev, state.image.ino):
                        failed = _step(["losetup", "-d", device])
                        if failed is not None:
                            failures.append(f"loop detach {failed}")
                try:
                    Path(state.image.path).unlink(missing_ok=True)
                    remove_image_marker(state.image.path, state.token)
                except OSError as exc:
                    failures.append(f"remove image {state.image.path}: {exc.strerror}")
        if state.image_dir is not None:
            _remove_marked_dir(state.image_dir, state.token, "image directory", failures)
        if state.mountpoint is not None and mount_entry(state.mountpoint.path) is None:
            _remove_marked_dir(state.mountpoint, state.token, "mount point", failures)
        if state.workdir is not None:
            _remove_marked_tree(state.workdir, state.token, "work directory", failures)
        for made in reversed(state.dirs):
            _remove_marked_tree(made, state.token, "directory", failures)
    return failures


_REPORTED: set[str] = set()


def clean_stale(quiet_known: bool = False) -> tuple[list[str], list[str]]:
    """Tear down what killed runs left, where it is provably theirs.

    Returns (what was removed, one line for each state file left for a person).
    ``quiet_known`` leaves out lines already returned in this process.
    """
    directory = checked_state_dir(create=False)
    cleaned: list[str] = []
    problems: list[str] = []
    if directory is None:
        return cleaned, problems
    for path in sorted(directory.glob("*.json")):
        why: list[str] = []
        state: State | None = None
        try:
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode):
                why = ["is not a regular file"]
            elif st.st_uid != os.geteuid():
                why = [f"belongs to uid {st.st_uid}, not to you"]
            else:
                state = load_state(path)
        except (OSError, StateError) as exc:
            why = [str(exc)]
        if state is not None:
            if owner_alive(state):
                continue
            if state.uid != os.geteuid():
                why = [f"records a run of uid {state.uid}, not yours"]
            else:
                failures = end_unrecorded(state.token) + teardown(state)
                if not failures:
                    path.unlink(missing_ok=True)
                    path.with_suffix(".tmp").unlink(missing_ok=True)
                    cleaned.append(_what(state) or path.name)
                    continue
                why = [f"(teardown): {failure}" for failure in failures]
        for reason in why:  # one line each: everything refused is named
            line = f"state file {path} {reason}; left for a person to look at"
            if not (quiet_known and line in _REPORTED):
                problems.append(line)
            _REPORTED.add(line)
    return cleaned, problems


def _what(state: State) -> str:
    for made in (state.mountpoint, state.workdir):
        if made is not None:
            return made.path
    return ""


def report_problems(problems: list[str]) -> None:
    for line in problems:
        print(f"vcsbench: {line}", file=sys.stderr)
