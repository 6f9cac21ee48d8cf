"""Sandbox state files: what a sandbox made, recorded before each step, with the
identity each thing had when it was made (device and inode, pid and start time) and the
run's token; read back by cleanup (:mod:`vcsbench.sandbox.cleanup`), which removes only
what it proves (:mod:`vcsbench.sandbox.ownership`) the run made.

The state directory is the user's own (created 0700); one that another user owns or
that others can write is refused, since anyone who can write there could plant a claim.
"""

from __future__ import annotations

import json
import os
import secrets
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vcsbench.errors import VcsbenchError
from vcsbench.owned import not_mine_alone
from vcsbench.process import proc_stat

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


def adopt_run_token() -> None:
    """In another interpreter a run started to help it (its worker): the run's token,
    inherited in ``$VCSBENCH_OWNER``, is this process's too, so that what it makes (a
    command's cgroup) and starts are proven the run's."""
    inherited = os.environ.get(OWNER_ENV, "")
    if not _TOKEN and len(inherited) == 32 and all(c in "0123456789abcdef" for c in inherited):
        _TOKEN.append(inherited)


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
    throttle_device: str | None = None
    """The loop device's MAJ:MIN, recorded before any throttle rule is set on it."""
    throttle: dict[str, int] = field(default_factory=dict)
    """The rules set (or about to be) on it: {"write_iops": 80, ...}."""
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
    known |= {"throttle_device", "throttle"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise StateError(f"has unknown fields {unknown}")
    for name in _TEXT_FIELDS:
        if not isinstance(data.get(name), str):
            raise StateError(f"field {name!r} is missing or not text")
    if not _whole(data.get("pid")) or not _whole(data.get("uid")):
        raise StateError("field 'pid' or 'uid' is missing or not a whole number")
    for name in ("user_image_dir", "loop_device", "throttle_device"):
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
    rules = data.get("throttle", {})
    if not (
        isinstance(rules, dict)
        and all(isinstance(k, str) and _whole(v) for k, v in rules.items())
        and len(rules) <= 4
    ):
        raise StateError("field 'throttle' is not a record of up to 4 limits")
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
        throttle_device=data.get("throttle_device"),
        throttle=dict(rules),
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
    why = not_mine_alone(directory)
    if why:
        raise VcsbenchError(
            f"state directory {directory} {why}; vcsbench acts on the state files there "
            f"as root, so it must be yours alone: chmod 700 it, or set {STATE_DIR_ENV} to a "
            "directory of your own"
        )
    return directory


def process_starttime(pid: int) -> str | None:
    fields = proc_stat(pid)
    return None if fields is None else fields[19]


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
