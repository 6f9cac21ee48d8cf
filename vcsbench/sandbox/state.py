"""Sandbox state files: what a sandbox made, recorded before each step, and the teardown
that reads them -- which removes only what it proves vcsbench made, never by a name.

vcsbench runs as root on shared machines, where other runs (and people) use the same
names, so a state file is a claim, not an order. Each run has a random token (made once
per process, never written anywhere but its 0700 state files and what it makes), and
ownership is proved by it and by identities recorded as things were made:

- a directory (a ``dir:`` work directory, an image directory, a mount point, a clients'
  directory): the same device and inode as recorded, ours, 0700, and holding a marker
  file with the token;
- an image: a regular file of ours with the recorded device and inode;
- a loop device: backed by exactly that file (the kernel's record of its inode);
- a tmpfs mount: its source names the token; a loop mount: its device is proven;
- a process: the same boot and start time as recorded, and the token in its
  environment (``VCSBENCH_OWNER``, which every process a run starts inherits) or
  membership of a cgroup whose name holds the token and whose inode is the recorded one.

What cannot be proven is reported and left, never removed or killed; a tree is removed
without crossing a mount point (:mod:`vcsbench.sandbox.removal`). The state directory is
the user's own (created 0700); one that another user owns or others can write is
refused, since anyone who can write there could plant a claim.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vcsbench.errors import VcsbenchError
from vcsbench.process import signals_held
from vcsbench.sandbox.mounts import loop_backings, mount_entry, mounts_below
from vcsbench.sandbox.removal import remove_tree
from vcsbench.sandbox.spec import NAME_PREFIX

STATE_DIR_ENV = "VCSBENCH_STATE_DIR"
OWNER_ENV = "VCSBENCH_OWNER"
MARKER = ".vcsbench-owner"
STATE_FORMAT = 2
MAX_STATE_BYTES = 1 << 20


class StateError(ValueError):
    """A state file that is not one this vcsbench wrote; one line."""


_TOKEN: list[str] = []


def run_token() -> str:
    """This run's token: random, made once per process, carried by every process it
    starts (``$VCSBENCH_OWNER``) and by what it makes."""
    if not _TOKEN:
        _TOKEN.append(secrets.token_hex(16))
        os.environ[OWNER_ENV] = _TOKEN[0]
    return _TOKEN[0]


@dataclass(frozen=True)
class Made:
    """Something made at ``path``, with the identity it had then."""

    path: str
    dev: int
    ino: int

    @classmethod
    def of(cls, path: str | Path) -> Made:
        st = os.lstat(path)
        return cls(str(path), st.st_dev, st.st_ino)

    @classmethod
    def from_json(cls, data: object, where: str) -> Made:
        if not (
            isinstance(data, dict)
            and set(data) == {"path", "dev", "ino"}
            and isinstance(data["path"], str)
            and all(_whole(data[k]) for k in ("dev", "ino"))
        ):
            raise StateError(f"field {where!r} is not a record of a path and its identity")
        return cls(data["path"], data["dev"], data["ino"])


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


@dataclass
class Process:
    """A process started into the sandbox, the leader of its own session."""

    pid: int
    starttime: str
    cgroup: Made | None = None


@dataclass
class State:
    """Everything a sandbox made, in the order it made it; saved before each step."""

    token: str
    pid: int
    starttime: str
    boot_id: str
    kind: str
    uid: int
    temp_root: str = ""
    """The temp directory the mount point and image directory were made in."""
    mountpoint: Made | None = None
    """The mount point's directory, as it was before anything was mounted on it."""
    image: Made | None = None
    image_dir: Made | None = None
    """An image directory vcsbench made (removed with the sandbox)."""
    user_image_dir: str | None = None
    """An image directory the user gave (kept)."""
    loop_device: str | None = None
    workdir: Made | None = None
    dirs: list[Made] = field(default_factory=list)
    """Directories made outside the sandbox for the run (the load clients')."""
    processes: list[Process] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)
    format: int = STATE_FORMAT

    def to_json(self) -> str:
        return json.dumps(asdict(self))


_MADE_FIELDS = ("mountpoint", "image", "image_dir", "workdir")
_TEXT_FIELDS = ("token", "starttime", "boot_id", "kind", "temp_root")


def load_state(path: Path) -> State:
    """Parse a state file; anything but what this vcsbench writes is a :class:`StateError`."""
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
    except (UnicodeDecodeError, ValueError) as exc:
        raise StateError(f"cannot be read as JSON ({exc})") from None
    if not isinstance(data, dict):
        raise StateError("is not a JSON object")
    if data.get("format") != STATE_FORMAT:
        raise StateError(
            f"is of state format {data.get('format', 1)!r}, not {STATE_FORMAT} (written by "
            "another vcsbench, which recorded no ownership token): remove what it lists by "
            "hand"
        )
    known = {"token", "pid", "starttime", "boot_id", "kind", "uid", "temp_root", "format"}
    known |= {*_MADE_FIELDS, "user_image_dir", "loop_device", "dirs", "processes", "steps"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise StateError(f"has unknown fields {unknown}")
    for name in _TEXT_FIELDS:
        if not isinstance(data.get(name), str):
            raise StateError(f"field {name!r} is missing or not text")
    if not _whole(data.get("pid")) or not _whole(data.get("uid")):
        raise StateError("field 'pid' or 'uid' is missing or not a whole number")
    for name in ("user_image_dir", "loop_device"):
        if data.get(name) is not None and not isinstance(data[name], str):
            raise StateError(f"field {name!r} is not text")
    made = {
        name: None if data.get(name) is None else Made.from_json(data[name], name)
        for name in _MADE_FIELDS
    }
    dirs = data.get("dirs", [])
    steps = data.get("steps", [])
    processes = data.get("processes", [])
    if not (isinstance(dirs, list) and isinstance(steps, list) and isinstance(processes, list)):
        raise StateError("field 'dirs', 'steps' or 'processes' is not a list")
    if not all(isinstance(step, str) for step in steps):
        raise StateError("field 'steps' holds something other than strings")
    records = []
    for entry in processes:
        if not (
            isinstance(entry, dict)
            and set(entry) == {"pid", "starttime", "cgroup"}
            and _whole(entry["pid"])
            and isinstance(entry["starttime"], str)
        ):
            raise StateError("field 'processes' holds something other than process records")
        group = None if entry["cgroup"] is None else Made.from_json(entry["cgroup"], "cgroup")
        records.append(Process(entry["pid"], entry["starttime"], group))
    return State(
        token=data["token"],
        pid=data["pid"],
        starttime=data["starttime"],
        boot_id=data["boot_id"],
        kind=data["kind"],
        uid=data["uid"],
        temp_root=data["temp_root"],
        user_image_dir=data.get("user_image_dir"),
        loop_device=data.get("loop_device"),
        dirs=[Made.from_json(d, "dirs") for d in dirs],
        processes=records,
        steps=list(steps),
        mountpoint=made["mountpoint"],
        image=made["image"],
        image_dir=made["image_dir"],
        workdir=made["workdir"],
    )


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


# -- making what is then proved ------------------------------------------------------------


def make_dir(parent: str | Path | None, prefix: str, token: str) -> Made:
    """A new 0700 directory ``<parent>/<prefix>XXXXXXXX`` holding the ownership marker."""
    path = tempfile.mkdtemp(prefix=prefix, dir=parent)
    fd = os.open(
        os.path.join(path, MARKER), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600
    )
    try:
        os.write(fd, token.encode())
    finally:
        os.close(fd)
    return Made.of(path)


# -- proof of ownership ------------------------------------------------------------------


def _same(made: Made, st: os.stat_result) -> bool:
    return (st.st_dev, st.st_ino) == (made.dev, made.ino)


def prove_dir(made: Made, token: str, what: str) -> str | None:
    """Why ``made`` is not provably a directory this run made, or None. A directory
    that is gone proves nothing and needs nothing: the caller checks it exists."""
    try:
        st = os.lstat(made.path)
    except OSError as exc:
        return f"{what} {made.path} cannot be looked at ({exc.strerror})"
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        return f"{what} {made.path} is not a directory (a symlink or a file now)"
    if not _same(made, st):
        return f"{what} {made.path} is not the directory recorded (another inode)"
    if st.st_uid != os.geteuid() or stat.S_IMODE(st.st_mode) != 0o700:
        return f"{what} {made.path} is not a 0700 directory of yours"
    try:
        fd = os.open(os.path.join(made.path, MARKER), os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as handle:
            marked = handle.read(256).decode(errors="replace")
    except OSError:
        marked = ""
    if not secrets.compare_digest(marked, token):
        return f"{what} {made.path} does not hold the run's ownership marker"
    return None


def prove_image(state: State) -> str | None:
    assert state.image is not None
    image = state.image
    parent = os.path.dirname(image.path)
    expected = state.image_dir.path if state.image_dir else state.user_image_dir
    name = os.path.basename(image.path)
    if expected is None or parent != os.path.normpath(expected):
        return f"image {image.path} is not in the image directory recorded"
    if not (name.startswith(f"{NAME_PREFIX}{state.kind}-") and name.endswith(".img")):
        return f"image {image.path} does not carry vcsbench's image name"
    try:
        st = os.lstat(image.path)
    except OSError as exc:
        return f"image {image.path} cannot be looked at ({exc.strerror})"
    if not stat.S_ISREG(st.st_mode) or not _same(image, st) or st.st_uid != os.geteuid():
        return f"image {image.path} is not the regular file of yours recorded (another inode)"
    return None


def prove_mount(state: State, entry: dict[str, str]) -> str | None:
    """Why what is mounted on the mount point is not this run's, or None."""
    assert state.mountpoint is not None
    point = state.mountpoint.path
    if state.kind == "tmpfs":
        if entry["fstype"] != "tmpfs" or entry["source"] != tmpfs_source(state.token):
            return f"{point} is mounted from {entry['source']}, not from the run's tmpfs"
        return None
    if state.image is None or loop_backings().get(entry["source"]) != (
        state.image.dev,
        state.image.ino,
    ):
        return f"{point} is mounted from {entry['source']}, not from the recorded image"
    return None


def tmpfs_source(token: str) -> str:
    """A tmpfs sandbox's mount source: it names the run's token."""
    return f"{NAME_PREFIX}tmpfs-{token}"


def _ended(pid: int) -> bool:
    """A process that has ended and waits to be reaped (a zombie): nothing to end."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")


def prove_process(entry: Process, token: str) -> str | None:
    """Why ``entry`` is not provably this run's process (or gone), or None."""
    if process_starttime(entry.pid) != entry.starttime or _ended(entry.pid):
        return "gone"
    try:
        environ = Path(f"/proc/{entry.pid}/environ").read_bytes().split(b"\0")
    except OSError:
        environ = []
    if f"{OWNER_ENV}={token}".encode() in environ:
        return None
    if entry.cgroup is not None and prove_cgroup(entry.cgroup, token) is None:
        try:
            members = Path(entry.cgroup.path, "cgroup.procs").read_text().split()
        except OSError:
            members = []
        if str(entry.pid) in members:
            return None
    return f"process {entry.pid} carries neither the run's token nor its cgroup"


def prove_cgroup(made: Made, token: str) -> str | None:
    name = os.path.basename(made.path)
    if not made.path.startswith("/sys/fs/cgroup/") or token not in name:
        return f"cgroup {made.path} does not carry the run's token"
    try:
        st = os.lstat(made.path)
    except OSError:
        return "gone"
    if not _same(made, st):
        return f"cgroup {made.path} is not the one recorded (another inode)"
    return None


# -- teardown ----------------------------------------------------------------------------


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
    cgroups; a pid that now names another process is left alone, and said."""
    failures: list[str] = []
    same_boot = state.boot_id == boot_id()
    ended: list[Process] = []
    for entry in state.processes:
        why = prove_process(entry, state.token) if same_boot else "gone"
        if why is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                if os.getpgid(entry.pid) == entry.pid:
                    os.killpg(entry.pid, signal.SIGKILL)
                else:
                    os.kill(entry.pid, signal.SIGKILL)
            ended.append(entry)
        elif why != "gone":
            failures.append(f"{why}: left running")
        group = entry.cgroup
        if group is None or not os.path.lexists(group.path):
            continue
        why = prove_cgroup(group, state.token)
        if why is not None:
            if why != "gone":
                failures.append(f"{why}: left as it is")
            continue
        with contextlib.suppress(OSError):
            Path(group.path, "cgroup.kill").write_text("1")
        deadline = time.monotonic() + 5
        while True:
            try:
                os.rmdir(group.path)
                break
            except OSError as exc:
                if time.monotonic() > deadline:
                    failures.append(f"remove cgroup {group.path}: {exc.strerror}")
                    break
                time.sleep(0.02)
    # What was killed must be gone before the filesystem it used is unmounted.
    deadline = time.monotonic() + 5
    for entry in ended:
        while (
            process_starttime(entry.pid) == entry.starttime
            and not _ended(entry.pid)
            and time.monotonic() < deadline
        ):
            with contextlib.suppress(ChildProcessError):
                os.waitpid(entry.pid, os.WNOHANG)
            time.sleep(0.02)
    return failures


def _remove_marked_dir(made: Made, token: str, what: str, failures: list[str]) -> None:
    """rmdir a proven directory that must be empty but for its marker."""
    if not os.path.lexists(made.path):
        return
    why = prove_dir(made, token, what)
    if why is not None:
        failures.append(f"{why}: left as it is")
        return
    try:
        os.unlink(os.path.join(made.path, MARKER))
        os.rmdir(made.path)
    except OSError as exc:
        failures.append(f"remove {what} {made.path}: {exc.strerror}")


def _remove_marked_tree(made: Made, token: str, what: str, failures: list[str]) -> None:
    """Remove a proven directory and its contents, never across a mount point."""
    if not os.path.lexists(made.path):
        return
    why = prove_dir(made, token, what)
    if why is not None:
        failures.append(f"{why}: left as it is")
        return
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


def teardown(state: State) -> list[str]:
    """Undo what ``state`` records, newest first, each thing only once it is proven this
    run's. Returns the steps that failed or were refused (empty: everything is gone)."""
    failures: list[str] = []
    with signals_held():
        failures += end_processes(state)
        if state.mountpoint:
            _unmount(state, failures)
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
                failures = teardown(state)
                if not failures:
                    path.unlink(missing_ok=True)
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
