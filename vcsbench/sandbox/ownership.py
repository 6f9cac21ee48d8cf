"""Proofs of ownership: what cleanup must show before it removes or ends anything.

vcsbench runs as root on shared machines, where other runs (and people) use the same
names, so a state file is a claim, not an order. Each run has a random token (made once
per process, never written anywhere but its 0700 state files and what it makes), and
ownership is proved by it and by identities recorded as things were made:

- a directory (a ``dir:`` work directory, an image directory, a mount point, a clients'
  directory): the same device and inode as recorded, ours, 0700, and holding a marker
  file with the token;
- an image: a regular file of ours with the recorded device and inode, beside a marker
  file (``IMAGE.owner``) with the token;
- a loop device: backed by exactly that file (the kernel's record of its inode);
- a throttle rule: on the device number recorded, while that number is the loop device
  proven the run's;
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

import os
import secrets
import stat
from pathlib import Path

from vcsbench.process import proc_stat
from vcsbench.sandbox.mounts import loop_backings
from vcsbench.sandbox.spec import NAME_PREFIX
from vcsbench.sandbox.state import (
    MARKER,
    OWNER_ENV,
    Made,
    Process,
    State,
    process_starttime,
)
from vcsbench.sandbox.throttle import device_number


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
    if not secrets.compare_digest(_read_marker(image_marker(image.path)), state.token):
        return f"image {image.path} has no marker beside it with the run's token"
    return None


def image_marker(image: str | Path) -> str:
    """The file beside an image that holds the token of the run that made it."""
    return f"{image}.owner"


def remove_image_marker(image: str, token: str) -> None:
    """The marker beside an image removed, if it holds ``token`` (never another's)."""
    marker = image_marker(image)
    if secrets.compare_digest(_read_marker(marker), token):
        os.unlink(marker)


def _read_marker(path: str) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as handle:
            if os.fstat(handle.fileno()).st_uid != os.geteuid():
                return ""
            return handle.read(256).decode(errors="replace")
    except OSError:
        return ""


def prove_throttled_device(state: State) -> str | None:
    """Why the device the state's throttle rules are on is not provably this run's loop
    device (the one backed by its image, with the number recorded), or None."""
    devno, device, image = state.throttle_device, state.loop_device, state.image
    if device is None or image is None:
        return f"device {devno} has no loop device or image recorded"
    if os.path.lexists(image.path):
        why = prove_image(state)
        if why is not None:
            return why
    if loop_backings().get(device) != (image.dev, image.ino):
        return f"{device} is not backed by the image recorded (detached, or another file's)"
    try:
        number = device_number(device)
    except OSError as exc:
        return f"{device} cannot be looked at ({exc.strerror})"
    if number != devno:
        return f"{device} is not device {devno} any more"
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


def process_ended(pid: int) -> bool:
    """A process that has ended and waits to be reaped (a zombie): nothing to end."""
    fields = proc_stat(pid)
    return fields is None or fields[0] in ("Z", "X")


def carries_token(pid: int, token: str) -> bool:
    """Whether process ``pid`` was started with the run's token in its environment (a
    process the run started, or one of theirs: the environment is inherited)."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False
    return f"{OWNER_ENV}={token}".encode() in environ


def prove_process(entry: Process, token: str) -> str | None:
    """Why ``entry`` is not provably this run's process (or gone), or None."""
    if process_starttime(entry.pid) != entry.starttime or process_ended(entry.pid):
        return "gone"
    if carries_token(entry.pid, token):
        return None
    if entry.cgroup is not None and prove_cgroup(entry.cgroup, token) is None:
        try:
            members = Path(entry.cgroup.path, "cgroup.procs").read_text().split()
        except OSError:
            members = []
        if str(entry.pid) in members:
            return None
    return f"process {entry.pid} carries neither the run's token nor its cgroup"


def cgroup2_root() -> Path | None:
    """Where cgroup v2 is mounted (alone or beside v1), if this process may make groups."""
    try:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return None
    for line in mounts:
        fields = line.split()
        if len(fields) > 2 and fields[2] == "cgroup2":
            root = Path(fields[1])
            if os.access(root, os.W_OK) and (root / "cgroup.procs").exists():
                return root
    return None


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
