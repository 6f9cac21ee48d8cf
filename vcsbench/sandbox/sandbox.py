"""Sandboxes: the filesystems benchmarks run in, made and thrown away by vcsbench.

A ``dir:`` sandbox sits on a filesystem others use: its block device counts their IO
too, so device metrics are left out there unless the user opts in with
``device=shared``, and the results then say that the device was shared.

A managed sandbox (tmpfs, or a fresh sparse image loop-mounted) is torn down by unmount,
loop detach and image removal: constant time however many repositories it holds. Every
step is written to a state file first (:mod:`vcsbench.sandbox.state`), so that a run
killed with SIGKILL leaves a record the next run (or ``vcsbench cleanup``) uses to
remove exactly what that run made, once it has proved it is that run's.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from vcsbench import process
from vcsbench.errors import VcsbenchError
from vcsbench.process import signals_held
from vcsbench.sandbox import throttle
from vcsbench.sandbox.cleanup import clean_stale, report_problems, teardown
from vcsbench.sandbox.mounts import block_device_stat, disk_model, mount_containing, mount_entry
from vcsbench.sandbox.ownership import image_marker, tmpfs_source
from vcsbench.sandbox.spec import (
    BASE_MKFS_ARGS,
    DEFAULT_IMAGE_SIZE,
    MKFS_PACKAGE,
    NAME_PREFIX,
    SHARED_DEVICE_NOTE,
    FsSpec,
    check_image_dir,
    parse_fs_spec,
    require_root,
)
from vcsbench.sandbox.state import (
    Made,
    Process,
    State,
    boot_id,
    checked_state_dir,
    make_dir,
    process_starttime,
    run_token,
)


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
    """Why there are no device counters, where there are none."""
    disk: str = ""
    """The disk that holds the image (loop kinds) or the directory (dir:); "memory" for tmpfs."""
    throttle: dict[str, Any] | None = None
    """A storage profile's limits on the device, how they were set and what the device
    delivered under them (:func:`vcsbench.sandbox.throttle.measure`); None: unthrottled."""

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

    counted = True
    """Whether an interrupted run's closing line counts it among the sandboxes torn down
    (not the directory where a run keeps its seeds)."""

    def __init__(self, spec: FsSpec, image_dir: Path | None = None) -> None:
        self.spec = spec
        self.image_dir = image_dir
        self.root: Path = Path()
        self.info: SandboxInfo | None = None
        self._state: State | None = None
        self._state_path: Path | None = None
        self.teardown_s: float | None = None
        """How long removing it took (unmount, detach, delete), once it is closed."""

    @property
    def what(self) -> str:
        return self.spec.text

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

    # -- what the run makes beside the sandbox, recorded like the sandbox --------------

    def record_process(self, pid: int, cgroup: Path | None = None) -> None:
        """Record a process started into the sandbox (the leader of its own session,
        carrying the run's token in its environment), so that a run killed before it
        ends it leaves a record that cleanup acts on."""
        assert self._state is not None
        group = Made.of(cgroup) if cgroup is not None else None
        self._state.processes.append(Process(pid, process_starttime(pid) or "", group))
        self._save(f"process {pid}")

    def forget_process(self, pid: int) -> None:
        """The process ended: drop its record."""
        if self._state is None:
            return
        self._state.processes = [p for p in self._state.processes if p.pid != pid]
        self._save(f"process {pid} ended")

    def make_dir(self, prefix: str, parent: Path | None = None) -> Path:
        """A directory outside the sandbox for this run (a load client's home), removed
        with the sandbox and by cleanup after a SIGKILL."""
        assert self._state is not None
        with signals_held():
            made = make_dir(parent, prefix, self._state.token)
            self._state.dirs.append(made)
            self._save(f"directory {made.path}")
        return Path(made.path)

    def _save(self, step: str) -> None:
        assert self._state is not None and self._state_path is not None
        self._state.steps.append(step)
        tmp = self._state_path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(self._state.to_json())
        tmp.replace(self._state_path)

    @contextlib.contextmanager
    def _recorded(self, step: str) -> Iterator[None]:
        """Make something with the stop signals held, then record it as ``step``: a
        signal lands after the state file says it exists."""
        with signals_held():
            yield
            self._save(step)

    # -- set-up: every kernel object is made and recorded with termination held -------

    def _setup(self) -> None:
        spec = self.spec
        pid = os.getpid()
        directory = checked_state_dir(create=True)
        assert directory is not None
        token = run_token()
        with self._recorded("state"):
            self._state = State(
                token=token,
                pid=pid,
                starttime=process_starttime(pid) or "",
                boot_id=boot_id(),
                kind=spec.kind,
                uid=os.geteuid(),
                temp_root=os.path.normpath(tempfile.gettempdir()),
            )
            # the file is made under a name cleanup does not read and renamed whole: a
            # state file is never seen empty (a cleanup beside it would report it)
            fd, name = tempfile.mkstemp(prefix=f"{pid}-", suffix=".tmp", dir=directory)
            os.close(fd)
            self._state_path = Path(name).with_suffix(".json")
            process.register(self)
        if spec.kind == "dir":
            assert spec.path is not None
            with self._recorded("workdir"):
                self._state.workdir = make_dir(spec.path, NAME_PREFIX, token)
            self.root = Path(self._state.workdir.path)
            self._describe(mount_containing(self.root), None, None)
            return
        with self._recorded("mountpoint"):
            self._state.mountpoint = make_dir(None, f"{NAME_PREFIX}{spec.kind}-", token)
        mountpoint = self._state.mountpoint.path
        if spec.kind == "tmpfs":
            options = ",".join(
                o
                for o in (f"size={spec.size_bytes}" if spec.size_bytes else "", spec.mount_options)
                if o
            )
            argv = ["mount", "-t", "tmpfs", *(["-o", options] if options else [])]
            with self._recorded("mounted"):
                _run([*argv, tmpfs_source(token), mountpoint], f"--fs {spec.text}")
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
        why = throttle.unavailable() if spec.limits else None
        if why is not None:
            raise VcsbenchError(f"{where}: {why}")
        if self.image_dir is None:
            with self._recorded("image_dir"):
                self._state.image_dir = make_dir(None, f"{NAME_PREFIX}images-", self._state.token)
            image_dir = Path(self._state.image_dir.path)
        else:
            check_image_dir(self.image_dir, f"--image-dir {self.image_dir}")
            self._state.user_image_dir = os.path.normpath(self.image_dir.resolve())
            image_dir = Path(self._state.user_image_dir)
        image = image_dir / f"{NAME_PREFIX}{spec.kind}-{os.getpid()}-{Path(mountpoint).name}.img"
        size = spec.size_bytes or DEFAULT_IMAGE_SIZE
        with self._recorded("image"):
            marker = os.open(
                image_marker(image), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600
            )  # first: an image is only ever removed beside its token
            try:
                os.write(marker, self._state.token.encode())
            finally:
                os.close(marker)
            fd = os.open(image, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            try:
                os.ftruncate(fd, size)
            finally:
                os.close(fd)
            self._state.image = Made.of(image)
        _run([mkfs, *BASE_MKFS_ARGS[spec.kind], *spec.mkfs_args, str(image)], where)
        with self._recorded("loop"):
            device = _run(["losetup", "--find", "--show", str(image)], where).strip()
            self._state.loop_device = device
        devno = throttle.device_number(device)
        foreign = throttle.rules_on(devno)
        if foreign:
            raise VcsbenchError(
                f"{where}: the loop device {device} ({devno}) already carries block throttle "
                f"rules this run did not set ({throttle.describe_limits(foreign)}), which "
                "would slow every figure taken on it; they are left as they are: if they are "
                f"a leftover, remove them (echo '{devno} 0' > {throttle.BLKIO}/"
                "blkio.throttle.<rule>_device) and run again"
            )
        mount_argv = ["mount", "-t", spec.kind]
        if spec.mount_options:
            mount_argv += ["-o", spec.mount_options]
        with self._recorded("mounted"):
            _run([*mount_argv, device, mountpoint], where)
        self._describe(mount_entry(mountpoint), str(image), size)
        if spec.limits:
            self._throttle(device, devno, Path(mountpoint))

    def _throttle(self, device: str, devno: str, root: Path) -> None:
        """Set the spec's limits on the loop device (recorded first), then measure what
        the device delivers under them."""
        spec = self.spec
        assert self._state is not None and self.info is not None
        limits = dict(spec.limits)
        with self._recorded(f"throttle {devno}"):
            self._state.throttle_device = devno
            self._state.throttle = limits
        for key, value in limits.items():
            throttle.set_rule(devno, key, value)
        self._save("throttled")
        profile = throttle.PROFILES.get(spec.profile)
        measured = throttle.measure(root, limits, self.info.device_stat_path)
        problems, notes = throttle.judge(measured)
        self.info.throttle = {
            "profile": spec.profile,
            "source": profile.source if profile else "",
            "limits": limits,
            "described": throttle.describe_limits(limits),
            "mechanism": f"cgroup v1 blkio.throttle.*_device on {device} ({devno}), root group",
            "measured": measured,
            "problems": problems,
            "notes": notes,
        }
        for problem in problems:
            print(
                f"vcsbench: warning: --fs {spec.text}: profile not honoured: {problem}",
                file=sys.stderr,
            )

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
        The stop signals are held until the sandbox is known gone (or known left), so the
        closing line of an interrupt never names one that is down as up.
        """
        with signals_held():
            if self._state is None:
                return []
            start = time.perf_counter()
            failures = teardown(self._state)
            self.teardown_s = time.perf_counter() - start
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
            self._state = None
            process.closed(self, failures)
        return failures


def open_sandbox(spec: FsSpec | str, image_dir: Path | None = None) -> Sandbox:
    """A sandbox for ``spec``, not yet set up: use it in a ``with`` block."""
    return Sandbox(parse_fs_spec(spec) if isinstance(spec, str) else spec, image_dir)
