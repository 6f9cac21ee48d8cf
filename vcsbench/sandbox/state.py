"""Sandbox state files: what a sandbox made, recorded before each step, and the cleanup
that reads them -- which removes only what it can prove vcsbench made.

vcsbench runs as root on shared machines, so a state file is a claim, not an order:

- the state directory is the user's own (created 0700); one that another user owns or
  that others can write is refused, since anyone who can write there could plant a
  claim;
- a state file another user owns, or one that does not parse, is reported and left;
- every recorded path must carry vcsbench's name (``vcsbench-<kind>-...``) and sit in
  the directory it was made in (the temp directory of this user, or the recorded image
  directory), must not be a symlink, and a mount must come from ``vcsbench-tmpfs`` or from
  a loop device backed by the recorded image. What fails a check is reported, not
  removed.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from vcsbench.errors import VcsbenchError
from vcsbench.sandbox.mounts import loop_backing_file, mount_entry

STATE_DIR_ENV = "VCSBENCH_STATE_DIR"
NAME_PREFIX = "vcsbench-"
TMPFS_SOURCE = "vcsbench-tmpfs"
TERMINATING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
MAX_STATE_BYTES = 1 << 20


class StateError(ValueError):
    """A state file that is not one vcsbench wrote; one line."""


@dataclass
class State:
    """Everything a sandbox made, in the order it made it; saved before each step."""

    pid: int
    starttime: str
    boot_id: str
    kind: str
    uid: int = -1
    temp_root: str = ""
    """The temp directory the mount point and image directory were made in."""
    mountpoint: str | None = None
    image: str | None = None
    image_dir: str | None = None
    """An image directory vcsbench made (removed with the sandbox)."""
    user_image_dir: str | None = None
    """An image directory the user gave (kept)."""
    loop_device: str | None = None
    workdir: str | None = None
    workdir_parent: str | None = None
    processes: list[dict[str, Any]] = field(default_factory=list)
    """Processes started into the sandbox (a server, a load engine), each the leader of
    its own session: ``pid``, ``starttime`` (its proof of identity) and the ``cgroup`` it
    was put in, or ""."""
    steps: list[str] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(asdict(self))


_TYPES: dict[str, tuple[type, ...]] = {
    "pid": (int,),
    "starttime": (str,),
    "boot_id": (str,),
    "kind": (str,),
    "uid": (int,),
    "temp_root": (str,),
    "steps": (list,),
    "processes": (list,),
}


def load_state(path: Path) -> State:
    """Parse a state file; anything but what vcsbench writes is a :class:`StateError`."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_STATE_BYTES + 1)
    except OSError as exc:
        raise StateError(f"cannot be read ({exc.strerror})") from None
    if len(raw) > MAX_STATE_BYTES:
        raise StateError(f"is larger than {MAX_STATE_BYTES:,} bytes, which no state file is")
    try:
        data: Any = json.loads(raw.decode())
    except RecursionError:
        raise StateError("is nested too deeply to be a state file") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise StateError(f"cannot be read as JSON ({exc})") from None
    if not isinstance(data, dict):
        raise StateError("is not a JSON object")
    known = {f.name for f in fields(State)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise StateError(f"has unknown fields {unknown}")
    for name in ("pid", "starttime", "boot_id", "kind"):
        if name not in data:
            raise StateError(f"lacks {name!r}")
    for name, value in data.items():
        kinds = _TYPES.get(name, (str, type(None)))
        if isinstance(value, bool) or not isinstance(value, kinds):
            raise StateError(f"field {name!r} is {type(value).__name__}, not {kinds[0].__name__}")
    if not all(isinstance(step, str) for step in data.get("steps", [])):
        raise StateError("field 'steps' holds something other than strings")
    for entry in data.get("processes", []):
        if not (
            isinstance(entry, dict)
            and set(entry) == {"pid", "starttime", "cgroup"}
            and isinstance(entry["pid"], int)
            and not isinstance(entry["pid"], bool)
            and isinstance(entry["starttime"], str)
            and isinstance(entry["cgroup"], str)
        ):
            raise StateError("field 'processes' holds something other than process records")
    return State(**data)


def state_dir() -> Path:
    """``$VCSBENCH_STATE_DIR``; else /var/lib/vcsbench/sandboxes for root, else the user's
    ``$XDG_STATE_HOME/vcsbench/sandboxes``."""
    if os.environ.get(STATE_DIR_ENV):
        return Path(os.environ[STATE_DIR_ENV])
    if os.geteuid() == 0:
        return Path("/var/lib/vcsbench/sandboxes")
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "vcsbench" / "sandboxes"


def checked_state_dir(create: bool) -> Path | None:
    """The state directory, made 0700 if missing (``create``); one that is not the user's
    own is refused in one line. None if it does not exist and is not to be made."""
    directory = state_dir()
    if not os.path.lexists(directory):
        if not create:
            return None
        try:
            directory.parent.mkdir(parents=True, exist_ok=True)
            directory.mkdir(mode=0o700)
        except FileExistsError:
            pass
        except OSError as exc:
            raise VcsbenchError(
                f"cannot make the state directory {directory} ({exc.strerror}); set "
                f"{STATE_DIR_ENV} to a directory of your own"
            ) from None
    st = os.lstat(directory)
    why = ""
    if stat.S_ISLNK(st.st_mode):
        why = "is a symlink"
    elif not stat.S_ISDIR(st.st_mode):
        why = "is not a directory"
    elif st.st_uid != os.geteuid():
        why = f"belongs to uid {st.st_uid}, not to you (uid {os.geteuid()})"
    elif st.st_mode & 0o022:
        why = f"can be written by others (mode {stat.S_IMODE(st.st_mode):o})"
    if why:
        raise VcsbenchError(
            f"state directory {directory} {why}; vcsbench acts on the state files there "
            f"as root, so it must be yours alone: chmod 700 it, or set {STATE_DIR_ENV} to a "
            "directory of your own"
        )
    return directory


def process_starttime(pid: int) -> str | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()[19]


def boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def owner_alive(state: State) -> bool:
    return state.boot_id == boot_id() and process_starttime(state.pid) == state.starttime


# -- proof of ownership ------------------------------------------------------------------


def _named(path: str, prefix: str, parent: str | None, what: str) -> str | None:
    """Why ``path`` is not provably a vcsbench-made ``what`` under ``parent``, or None."""
    if not os.path.isabs(path) or os.path.normpath(path) != path:
        return f"{what} {path!r} is not a plain absolute path"
    name = os.path.basename(path)
    if not name.startswith(prefix):
        return f"{what} {path} does not carry vcsbench's name ({prefix}...)"
    if parent is None or os.path.dirname(path) != os.path.normpath(parent):
        return f"{what} {path} is not in the directory it was made in ({parent})"
    if os.path.islink(path):
        return f"{what} {path} is a symlink"
    return None


def prove_own(state: State) -> list[str]:
    """Every reason the recorded paths cannot be proven vcsbench's (empty: all proven)."""
    reasons: list[str] = []
    temp_root = os.path.normpath(tempfile.gettempdir())
    if state.uid != os.geteuid():
        reasons.append(f"recorded for uid {state.uid}, not yours")
    if (state.mountpoint or state.image_dir) and state.temp_root != temp_root:
        reasons.append(f"made under temp directory {state.temp_root!r}, not {temp_root}")
    if state.mountpoint:
        why = _named(
            state.mountpoint, f"{NAME_PREFIX}{state.kind}-", state.temp_root, "mount point"
        )
        if why is None:
            entry = mount_entry(state.mountpoint)
            if entry is not None:
                source = entry["source"]
                if state.kind == "tmpfs" and source != TMPFS_SOURCE:
                    why = f"{state.mountpoint} is mounted from {source}, not {TMPFS_SOURCE}"
                elif state.kind != "tmpfs" and (
                    state.image is None or loop_backing_file(source) != state.image
                ):
                    why = (
                        f"{state.mountpoint} is mounted from {source}, not from the recorded image"
                    )
        if why:
            reasons.append(why)
    if state.image_dir:
        why = _named(state.image_dir, f"{NAME_PREFIX}images-", state.temp_root, "image directory")
        if why:
            reasons.append(why)
    if state.image:
        parent = state.image_dir or state.user_image_dir
        prefix = f"{NAME_PREFIX}{state.kind}-{state.pid}-"
        why = _named(state.image, prefix, parent, "image")
        if why is None and not state.image.endswith(".img"):
            why = f"image {state.image} does not end in .img"
        is_file = not os.path.lexists(state.image) or stat.S_ISREG(os.lstat(state.image).st_mode)
        if why is None and not is_file:
            why = f"image {state.image} is not a regular file"
        if why:
            reasons.append(why)
    if state.loop_device and state.image:
        backing = loop_backing_file(state.loop_device)
        if backing is not None and backing.removesuffix(" (deleted)") != state.image:
            reasons.append(f"{state.loop_device} is backed by {backing}, not the recorded image")
    for entry in state.processes:
        group = entry["cgroup"]
        if group:
            why = _named(group, NAME_PREFIX, os.path.dirname(group), "cgroup")
            if why is None and not group.startswith("/sys/fs/cgroup/"):
                why = f"cgroup {group} is not below /sys/fs/cgroup"
            if why:
                reasons.append(why)
    if state.workdir:
        why = _named(state.workdir, NAME_PREFIX, state.workdir_parent, "work directory")
        if why is None and os.path.lexists(state.workdir):
            st = os.lstat(state.workdir)
            if st.st_uid != os.geteuid() or stat.S_IMODE(st.st_mode) != 0o700:
                why = f"work directory {state.workdir} is not a 0700 directory of yours"
        if why:
            reasons.append(why)
    return reasons


# -- teardown ----------------------------------------------------------------------------


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Hold SIGINT, SIGTERM and SIGHUP while a kernel object is made (or removed) and
    recorded: a signal then lands after the state file says what exists."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, TERMINATING)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _step(argv: list[str]) -> str | None:
    """Run one teardown command; its failure as text, or None."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    except OSError as exc:
        return f"{' '.join(argv)}: {exc}"
    if proc.returncode != 0:
        return f"{' '.join(argv)}: {(proc.stderr or proc.stdout).strip() or proc.returncode}"
    return None


def loops_of(image: str, recorded: str | None) -> list[str]:
    """Loop devices backed by ``image`` (also one attached before the state was saved)."""
    devices = {recorded} if recorded else set()
    proc = subprocess.run(["losetup", "-j", image], capture_output=True, text=True, check=False)
    for line in proc.stdout.splitlines():
        devices.add(line.split(":", 1)[0])
    return sorted(d for d in devices if d and loop_backing_file(d) in (image, f"{image} (deleted)"))


def end_processes(state: State) -> list[str]:
    """End the recorded processes that are still the ones recorded (same boot, same start
    time, still leading their session), with their sessions and cgroups; remove the
    cgroups. A pid that now names another process is left alone."""
    failures: list[str] = []
    same_boot = state.boot_id == boot_id()
    for entry in state.processes:
        pid = entry["pid"]
        if same_boot and process_starttime(pid) == entry["starttime"]:
            with contextlib.suppress(ProcessLookupError):
                if os.getpgid(pid) == pid:
                    os.killpg(pid, signal.SIGKILL)
        group = entry["cgroup"]
        if group and os.path.isdir(group):
            with contextlib.suppress(OSError):
                Path(group, "cgroup.kill").write_text("1")
            deadline = time.monotonic() + 5
            while True:
                try:
                    os.rmdir(group)
                    break
                except OSError as exc:
                    if time.monotonic() > deadline:
                        failures.append(f"remove cgroup {group}: {exc.strerror}")
                        break
                    time.sleep(0.02)
    # What was killed must be gone before the filesystem it used is unmounted.
    deadline = time.monotonic() + 5
    for entry in state.processes:
        while process_starttime(entry["pid"]) == entry["starttime"] and (
            time.monotonic() < deadline
        ):
            with contextlib.suppress(ChildProcessError):
                os.waitpid(entry["pid"], os.WNOHANG)
            time.sleep(0.02)
    return failures


def teardown(state: State) -> list[str]:
    """Undo what ``state`` records, newest first; never touch anything else.

    Returns the steps that failed (empty: everything recorded is gone).
    """
    failures: list[str] = []
    with signals_held():
        failures += end_processes(state)
        if state.mountpoint and mount_entry(state.mountpoint) is not None:
            failed = _step(["umount", state.mountpoint])
            if failed is not None and _step(["umount", "-l", state.mountpoint]) is not None:
                failures.append(f"unmount {failed}")
        if state.image:
            for device in loops_of(state.image, state.loop_device):
                failed = _step(["losetup", "-d", device])
                if failed is not None:
                    failures.append(f"loop detach {failed}")
            try:
                Path(state.image).unlink(missing_ok=True)
            except OSError as exc:
                failures.append(f"remove image {state.image}: {exc.strerror}")
        for directory in (state.image_dir, state.mountpoint):
            if directory and os.path.lexists(directory):
                try:
                    os.rmdir(directory)
                except OSError as exc:
                    failures.append(f"remove directory {directory}: {exc.strerror}")
        if state.workdir and os.path.lexists(state.workdir):
            errors: list[str] = []
            if os.path.islink(state.workdir):
                errors.append("is a symlink")
            else:
                # rmtree does not follow symlinks inside the tree.
                shutil.rmtree(state.workdir, onerror=lambda _f, p, e: errors.append(f"{p}: {e[1]}"))
            if errors:
                failures.append(f"remove {state.workdir}: {errors[0]}")
    return failures


_REPORTED: set[str] = set()


def clean_stale(quiet_known: bool = False) -> tuple[list[str], list[str]]:
    """Tear down what killed runs left, where it is provably vcsbench's.

    Returns (what was removed, one line for each state file left for a person).
    ``quiet_known`` leaves out lines already returned in this process.
    """
    directory = checked_state_dir(create=False)
    cleaned: list[str] = []
    problems: list[str] = []
    if directory is None:
        return cleaned, problems
    for path in sorted(directory.glob("*.json")):
        why = ""
        state: State | None = None
        try:
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode):
                why = "is not a regular file"
            elif st.st_uid != os.geteuid():
                why = f"belongs to uid {st.st_uid}, not to you"
            else:
                state = load_state(path)
        except (OSError, StateError) as exc:
            why = str(exc)
        if state is not None:
            if owner_alive(state):
                continue
            reasons = prove_own(state)
            if reasons:
                why = f"records what cannot be proven vcsbench's: {reasons[0]}"
            else:
                failures = teardown(state)
                what = state.mountpoint or state.workdir or path.name
                if failures:
                    why = f"teardown of {what} failed: {failures[0]}"
                else:
                    path.unlink(missing_ok=True)
                    cleaned.append(what)
                    continue
        line = f"state file {path} {why}; left as it is for a person to look at"
        if not (quiet_known and line in _REPORTED):
            problems.append(line)
        _REPORTED.add(line)
    return cleaned, problems


def report_problems(problems: list[str]) -> None:
    for line in problems:
        print(f"vcsbench: {line}", file=sys.stderr)
