"""Sandboxes: the filesystems benchmarks run in, made and thrown away by vcsbench.

A spec names one (``tmpfs[:size=2G]``, ``ext4:size=8G,mkfs=-N 2000000,mount=noatime``,
``xfs``, ``btrfs``, ``dir:PATH[,device=shared]``); :func:`parse_fs_spec` is the one place
specs are read.

A ``dir:`` sandbox sits on a filesystem others use: its block device counts their IO
too, so device metrics are left out there unless the user opts in with
``device=shared``, and the results then say that the device was shared.

A managed sandbox (tmpfs, or a fresh sparse image loop-mounted) is torn down by unmount,
loop detach and image removal: constant time however many repositories it holds. Every
step is written to a state file first, so that a run killed with SIGKILL leaves a record
the next run (or ``vcsbench cleanup``) uses to remove exactly what that run made.
"""

from __future__ import annotations

import atexit
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from vcsbench.errors import VcsbenchError
from vcsbench.sandbox.mounts import (
    block_device_stat,
    disk_model,
    mount_containing,
    mount_entry,
)
from vcsbench.sandbox.state import (
    NAME_PREFIX,
    TERMINATING,
    TMPFS_SOURCE,
    State,
    boot_id,
    checked_state_dir,
    clean_stale,
    process_starttime,
    report_problems,
    signals_held,
    teardown,
)

KINDS = ("tmpfs", "ext4", "xfs", "btrfs", "dir")
LOOP_KINDS = ("ext4", "xfs", "btrfs")
SPEC_KEYS = {"tmpfs": ("size", "mount"), "ext4": ("size", "mkfs", "mount")}
SPEC_KEYS["xfs"] = SPEC_KEYS["btrfs"] = SPEC_KEYS["ext4"]

DEFAULT_IMAGE_SIZE = 8 << 30
# mkfs options that keep the measurements about the benchmark: ext4's lazy inode-table
# and journal initialisation would otherwise write in the background after mount,
# into the device counters of whatever runs first.
BASE_MKFS_ARGS = {
    "ext4": ["-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0"],
    "xfs": ["-q", "-f"],
    "btrfs": ["-q", "-f"],
}
MKFS_PACKAGE = {"ext4": "e2fsprogs", "xfs": "xfsprogs", "btrfs": "btrfs-progs"}
SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
DIR_DEVICE_OPTION = ",device=shared"
SHARED_DEVICE_NOTE = (
    "a dir: sandbox shares its block device with everything else on it; device IO is "
    "left out (add ,device=shared to the spec to count it anyway)"
)


@dataclass(frozen=True)
class FsSpec:
    """A parsed ``--fs`` spec."""

    text: str
    kind: str
    size_bytes: int | None = None
    mkfs_args: tuple[str, ...] = ()
    mount_options: str = ""
    path: Path | None = None
    device_shared: bool = False

    @property
    def managed(self) -> bool:
        return self.kind != "dir"


def parse_size(text: str, where: str) -> int:
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([KMGT]?)i?B?", text.strip(), re.IGNORECASE)
    if not match:
        raise VcsbenchError(f"{where}: size {text!r} is not a size like 512M or 8G")
    return int(float(match.group(1)) * SIZE_UNITS[match.group(2).upper()])


def parse_fs_spec(text: str) -> FsSpec:
    """Parse one spec; raise a one-line :class:`VcsbenchError` naming what is wrong."""
    text = text.strip()
    kind, sep, rest = text.partition(":")
    where = f"--fs {text!r}"
    if kind not in KINDS:
        raise VcsbenchError(
            f"{where}: unknown filesystem kind {kind!r}; use one of tmpfs, ext4, xfs, btrfs "
            "(with options, e.g. ext4:size=8G,mount=noatime) or dir:PATH"
        )
    if kind == "dir":
        shared = rest.endswith(DIR_DEVICE_OPTION)
        if shared:
            rest = rest[: -len(DIR_DEVICE_OPTION)]
        if not rest:
            raise VcsbenchError(f"{where}: dir needs a path, e.g. dir:/srv/bench")
        path = Path(rest).expanduser()
        if not path.is_dir():
            raise VcsbenchError(f"{where}: {rest} is not an existing directory")
        why = unsafe_dir(path.resolve())
        if why:
            raise VcsbenchError(
                f"{where}: {why}; give a directory of your own, e.g. dir:/srv/bench"
            )
        return FsSpec(text=text, kind=kind, path=path.resolve(), device_shared=shared)
    if sep and not rest:
        raise VcsbenchError(f"{where}: nothing after ':'; give options like size=2G or none")
    values: dict[str, str] = {}
    last: str | None = None
    allowed = SPEC_KEYS[kind]
    for token in rest.split(",") if rest else []:
        key, eq, value = token.partition("=")
        if eq and key in allowed:
            if key in values:
                raise VcsbenchError(f"{where}: {key} is given twice")
            values[key] = value
            last = key
        elif last in ("mkfs", "mount"):
            # Mount and mkfs options contain commas themselves: data=journal,noatime.
            values[last] += "," + token
        else:
            raise VcsbenchError(
                f"{where}: unknown option {token!r} for {kind}; accepted: "
                + ", ".join(f"{k}=..." for k in allowed)
            )
    size = parse_size(values["size"], where) if "size" in values else None
    if size is not None and size <= 0:
        raise VcsbenchError(f"{where}: size must be more than 0")
    try:
        mkfs_args = tuple(shlex.split(values.get("mkfs", "")))
    except ValueError as exc:
        raise VcsbenchError(f"{where}: mkfs options cannot be split: {exc}") from None
    return FsSpec(
        text=text,
        kind=kind,
        size_bytes=size,
        mkfs_args=mkfs_args,
        mount_options=values.get("mount", ""),
    )


SYSTEM_DIRS = ("/", "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/boot", "/var", "/root")
PSEUDO_FS_ROOTS = ("/proc", "/sys", "/dev", "/run")


def unsafe_dir(path: Path) -> str:
    """Why ``path`` (resolved) must not hold a dir: sandbox, or "" where it may."""
    text = str(path)
    if text in SYSTEM_DIRS:
        return f"{text} is a system directory"
    for root in PSEUDO_FS_ROOTS:
        if text == root or text.startswith(root + "/"):
            return f"{text} is on {root}, not a place for repositories"
    if any(part.startswith(NAME_PREFIX) for part in path.parts):
        return f"{text} is inside a vcsbench sandbox, which is removed when its run ends"
    if not os.access(path, os.W_OK | os.X_OK):
        return f"{text} is not writable"
    return ""


def require_root(spec: FsSpec) -> None:
    """A managed sandbox needs root; say so in one line that names the way out."""
    if spec.managed and os.geteuid() != 0:
        raise VcsbenchError(
            f"--fs {spec.text}: a {spec.kind} sandbox needs root (mount, losetup); "
            "run as root, or use dir:PATH to benchmark in an existing directory"
        )


def parse_fs_list(text: str) -> list[FsSpec]:
    """Parse a comma-separated list of specs: ``tmpfs,ext4:size=4G,mount=noatime,xfs``.

    A comma starts a new spec only where a filesystem kind follows it, so options with
    commas inside one spec stay together.
    """
    pieces: list[str] = []
    for token in text.split(","):
        head = token.partition(":")[0].strip()
        if head in KINDS or not pieces:
            pieces.append(token)
        else:
            pieces[-1] += "," + token
    specs = [parse_fs_spec(piece) for piece in pieces if piece.strip()]
    if not specs:
        raise VcsbenchError("--fs: no filesystem given; use e.g. tmpfs or ext4,xfs")
    return specs


@dataclass
class SandboxInfo:
    """What results record about where a benchmark ran."""

    spec: str
    kind: str
    fstype: str
    mount_options: str
    mountpoint: str
    device: str | None
    device_stat_path: str | None
    image_path: str | None
    image_size_bytes: int | None
    kernel: str
    device_shared: bool = False
    device_note: str = ""
    disk: str = ""
    """The disk that holds the image (loop kinds) or the directory (dir:); "memory" for tmpfs."""
    """Why there are no device counters, where there are none."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _run(argv: list[str], what: str) -> str:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise VcsbenchError(f"{what}: {argv[0]} not found") from None
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().replace("\n", "; ")
        raise VcsbenchError(f"{what}: {' '.join(argv)} failed: {detail}")
    return proc.stdout


class Sandbox:
    """A filesystem to benchmark in. Use as a context manager; ``root`` is where to work."""

    def __init__(self, spec: FsSpec, image_dir: Path | None = None) -> None:
        self.spec = spec
        self.image_dir = image_dir
        self.root: Path = Path()
        self.info: SandboxInfo | None = None
        self._state: State | None = None
        self._state_path: Path | None = None
        self.teardown_s: float | None = None
        """How long removing it took (unmount, detach, delete), once it is closed."""

    def __enter__(self) -> Sandbox:
        require_root(self.spec)
        _, problems = clean_stale(quiet_known=True)
        report_problems(problems)
        try:
            self._setup()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- set-up: every kernel object is made and recorded with termination held -------

    def record_process(self, pid: int, cgroup: str = "") -> None:
        """Record a process started into the sandbox (the leader of its own session), so
        that a run killed before it ends it leaves a record that cleanup acts on."""
        assert self._state is not None
        self._state.processes.append(
            {"pid": pid, "starttime": process_starttime(pid) or "", "cgroup": cgroup}
        )
        self._save(f"process {pid}")

    def forget_process(self, pid: int) -> None:
        """The process ended: drop its record."""
        if self._state is None:
            return
        self._state.processes = [p for p in self._state.processes if p["pid"] != pid]
        self._save(f"process {pid} ended")

    def _save(self, step: str) -> None:
        assert self._state is not None and self._state_path is not None
        self._state.steps.append(step)
        tmp = self._state_path.with_suffix(".tmp")
        tmp.write_text(self._state.to_json())
        tmp.replace(self._state_path)

    def _setup(self) -> None:
        spec = self.spec
        require_root(spec)
        pid = os.getpid()
        directory = checked_state_dir(create=True)
        assert directory is not None
        install_signal_handlers()
        with signals_held():
            self._state = State(
                pid,
                process_starttime(pid) or "",
                boot_id(),
                spec.kind,
                uid=os.geteuid(),
                temp_root=os.path.normpath(tempfile.gettempdir()),
            )
            fd, name = tempfile.mkstemp(prefix=f"{pid}-", suffix=".json", dir=directory)
            os.close(fd)
            self._state_path = Path(name)
            _ACTIVE.add(self)
            self._save("state")
        if spec.kind == "dir":
            assert spec.path is not None
            with signals_held():
                self._state.workdir_parent = str(spec.path)
                self._state.workdir = tempfile.mkdtemp(prefix=NAME_PREFIX, dir=spec.path)
                self._save("workdir")
            self.root = Path(self._state.workdir)
            self._describe(mount_containing(self.root), None, None)
            return
        with signals_held():
            mountpoint = tempfile.mkdtemp(prefix=f"{NAME_PREFIX}{spec.kind}-")
            self._state.mountpoint = mountpoint
            self._save("mountpoint")
        if spec.kind == "tmpfs":
            options = ",".join(
                o
                for o in (f"size={spec.size_bytes}" if spec.size_bytes else "", spec.mount_options)
                if o
            )
            argv = ["mount", "-t", "tmpfs", *(["-o", options] if options else [])]
            with signals_held():
                _run([*argv, TMPFS_SOURCE, mountpoint], f"--fs {spec.text}")
                self._save("mounted")
            self._describe(mount_entry(mountpoint), None, None)
        else:
            self._setup_loop(mountpoint)
        self.root = Path(mountpoint)

    def _setup_loop(self, mountpoint: str) -> None:
        spec = self.spec
        assert self._state is not None
        where = f"--fs {spec.text}"
        mkfs = f"mkfs.{spec.kind}"
        if shutil.which(mkfs) is None:
            raise VcsbenchError(f"{where}: {mkfs} not found; apt install {MKFS_PACKAGE[spec.kind]}")
        if self.image_dir is None:
            with signals_held():
                self._state.image_dir = tempfile.mkdtemp(prefix=f"{NAME_PREFIX}images-")
                self._save("image_dir")
            image_dir = Path(self._state.image_dir)
        else:
            image_dir = self.image_dir
            if not image_dir.is_dir():
                raise VcsbenchError(f"--image-dir {image_dir}: not an existing directory")
            self._state.user_image_dir = os.path.normpath(image_dir.resolve())
            image_dir = Path(self._state.user_image_dir)
        image = image_dir / f"{NAME_PREFIX}{spec.kind}-{os.getpid()}-{Path(mountpoint).name}.img"
        size = spec.size_bytes or DEFAULT_IMAGE_SIZE
        with signals_held():
            self._state.image = str(image)
            self._save("image")
            with open(image, "xb") as handle:
                handle.truncate(size)
        _run([mkfs, *BASE_MKFS_ARGS[spec.kind], *spec.mkfs_args, str(image)], where)
        with signals_held():
            device = _run(["losetup", "--find", "--show", str(image)], where).strip()
            self._state.loop_device = device
            self._save("loop")
        mount_argv = ["mount", "-t", spec.kind]
        if spec.mount_options:
            mount_argv += ["-o", spec.mount_options]
        with signals_held():
            _run([*mount_argv, device, mountpoint], where)
            self._save("mounted")
        self._describe(mount_entry(mountpoint), str(image), size)

    def _describe(self, entry: dict[str, str] | None, image: str | None, size: int | None) -> None:
        if entry is None:
            raise VcsbenchError(f"--fs {self.spec.text}: the sandbox is not mounted")
        device, stat = block_device_stat(entry["source"])
        note = "" if stat else "no block device under this filesystem"
        if self.spec.kind == "dir" and not self.spec.device_shared:
            device, stat, note = None, None, SHARED_DEVICE_NOTE
        self.info = SandboxInfo(
            spec=self.spec.text,
            kind=self.spec.kind,
            fstype=entry["fstype"],
            mount_options=entry["options"],
            mountpoint=entry["mountpoint"],
            device=device,
            device_stat_path=stat,
            image_path=image,
            image_size_bytes=size,
            kernel=os.uname().release,
            device_shared=self.spec.device_shared,
            device_note=note,
            disk="memory"
            if self.spec.kind == "tmpfs"
            else disk_model(Path(image).parent if image else self.root),
        )

    # -- teardown ---------------------------------------------------------------------

    def close(self) -> list[str]:
        """Remove everything this sandbox made; return the steps that failed.

        Safe to call more than once. When a step fails, the state file stays, so that
        ``vcsbench cleanup`` can finish the job, and one line on stderr says which step.
        """
        failures: list[str] = []
        if self._state is not None:
            start = time.perf_counter()
            failures = teardown(self._state)
            self.teardown_s = time.perf_counter() - start
            what = self._state.mountpoint or self._state.workdir or self.spec.text
            if self._state_path is not None:
                if failures:
                    print(
                        f"vcsbench: teardown of {self.spec.text} sandbox failed: "
                        f"{failures[0]}; its state is kept in {self._state_path}, "
                        "run 'vcsbench cleanup' to finish",
                        file=sys.stderr,
                    )
                else:
                    self._state_path.unlink(missing_ok=True)
                    self._state_path.with_suffix(".tmp").unlink(missing_ok=True)
            if not failures:
                TORN_DOWN.append(f"{self.spec.kind} {what}")
            self._state = None
        _ACTIVE.discard(self)
        return failures


_ACTIVE: set[Sandbox] = set()
_handlers_installed = threading.Event()
SIGNALS: list[int] = []
"""Termination signals this process received, in order."""
TORN_DOWN: list[str] = []
"""Sandboxes this process removed, for the closing line of an interrupted run."""


class Interrupted(KeyboardInterrupt):
    """A termination signal, turned into an exception so every sandbox is torn down."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.signum = signum


def _on_signal(signum: int, frame: FrameType | None) -> None:
    SIGNALS.append(signum)
    if len(SIGNALS) > 1:
        live = ", ".join(s.spec.text for s in _ACTIVE) or "none"
        print(
            f"vcsbench: second signal ({signal.Signals(signum).name}): abandoning the "
            f"teardown of the sandboxes still up ({live}); run 'vcsbench cleanup' to "
            "remove what is left",
            file=sys.stderr,
        )
    raise Interrupted(signum)


def install_signal_handlers() -> None:
    """Make SIGINT, SIGTERM and SIGHUP unwind, so teardown runs on them and the exit
    status can say which signal it was."""
    if _handlers_installed.is_set() or threading.current_thread() is not threading.main_thread():
        return
    for signum in TERMINATING:
        if signal.getsignal(signum) in (signal.SIG_DFL, signal.default_int_handler, None):
            signal.signal(signum, _on_signal)
    atexit.register(_close_all)
    _handlers_installed.set()


def default_signal_handlers() -> None:
    """In a process forked to help (a spawner, a walker, a filler): SIGINT, SIGTERM and
    SIGHUP end it, as by default; the handlers above are for the process that forked it."""
    for signum in TERMINATING:
        signal.signal(signum, signal.SIG_DFL)


def _close_all() -> None:
    for sandbox in list(_ACTIVE):
        sandbox.close()


def open_sandbox(spec: FsSpec | str, image_dir: Path | None = None) -> Sandbox:
    """A sandbox for ``spec``, not yet set up: use it in a ``with`` block."""
    return Sandbox(parse_fs_spec(spec) if isinstance(spec, str) else spec, image_dir)
