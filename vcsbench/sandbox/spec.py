"""Filesystem specs: what ``--fs`` names, parsed in one place.

A spec names a sandbox: ``tmpfs[:size=2G]``, ``ext4:size=8G,mkfs=-N 2000000,mount=noatime``,
``xfs:profile=hdd``, ``btrfs:write-iops=100,write-bw=20M`` (a throttled device: sizes per
second, K/M/G binary as everywhere here), ``dir:PATH[,device=shared]``;
:func:`parse_fs_spec` reads one, and :func:`parse_fs_list` a comma-separated list of them.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from vcsbench.errors import VcsbenchError
from vcsbench.sandbox import throttle

NAME_PREFIX = "vcsbench-"
KINDS = ("tmpfs", "ext4", "xfs", "btrfs", "dir")
LOOP_KINDS = ("ext4", "xfs", "btrfs")
THROTTLE_KEYS = ("profile", *throttle.SPEC_KEYS)
SPEC_KEYS = {"tmpfs": ("size", "mount"), "ext4": ("size", "mkfs", "mount", *THROTTLE_KEYS)}
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
    profile: str = ""
    """A named storage profile (:mod:`vcsbench.sandbox.throttle`), or ""."""
    limits: tuple[tuple[str, int], ...] = ()
    """The device's limits (the profile's, and explicit ones): (read_iops, 80), ..."""

    @property
    def managed(self) -> bool:
        return self.kind != "dir"

    @property
    def places(self) -> list[str]:
        """``mkfs=`` and ``mount=`` as given: arguments to programs run as root, which a
        result file's recorded selection never supplies."""
        return [
            *([f"mkfs={shlex.join(self.mkfs_args)}"] if self.mkfs_args else []),
            *([f"mount={self.mount_options}"] if self.mount_options else []),
        ]


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
        if any(f",{key}=" in rest for key in THROTTLE_KEYS):
            raise VcsbenchError(
                f"{where}: a dir: sandbox's device is shared with everything else on it, so "
                "vcsbench never throttles it; a storage profile goes with ext4, xfs or btrfs"
            )
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
        elif eq and kind == "tmpfs" and key in THROTTLE_KEYS:
            raise VcsbenchError(
                f"{where}: {key}= limits a block device, and tmpfs has none; use it with "
                "ext4, xfs or btrfs (e.g. ext4:profile=hdd)"
            )
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
    check_mkfs_args(kind, mkfs_args, where)
    check_mount_options(values.get("mount", ""), where)
    profile, limits = parse_limits(values, where)
    return FsSpec(
        text=text,
        kind=kind,
        size_bytes=size,
        mkfs_args=mkfs_args,
        mount_options=values.get("mount", ""),
        profile=profile,
        limits=tuple((key, limits[key]) for key in throttle.LIMITS if key in limits),
    )


def parse_limits(values: dict[str, str], where: str) -> tuple[str, dict[str, int]]:
    """The profile named (or "") and the limits of ``profile=`` and the explicit
    ``read-iops=``, ``write-iops=``, ``read-bw=``, ``write-bw=`` options (which win)."""
    name = values.get("profile", "")
    limits: dict[str, int] = {}
    if name:
        if name not in throttle.PROFILES:
            raise VcsbenchError(
                f"{where}: unknown storage profile {name!r}; use one of "
                f"{', '.join(throttle.PROFILES)} or limits like write-iops=100,write-bw=20M"
            )
        limits.update(throttle.PROFILES[name].limits)
    for option, key in throttle.SPEC_KEYS.items():
        if option not in values:
            continue
        text = values[option]
        if key.endswith("_iops"):
            if not text.isdigit() or int(text) <= 0:
                raise VcsbenchError(
                    f"{where}: {option}={text} is not a whole number of IOs per second "
                    "above 0 (e.g. 100)"
                )
            limits[key] = int(text)
        else:
            size = parse_size(text, where)
            if size <= 0:
                raise VcsbenchError(f"{where}: {option}={text} must be more than 0 bytes/s")
            limits[key] = size
    return name, limits


MKFS_OPTIONS = {
    "ext4": ("cDjnqvFSVK", "bCgGiIJNmoOrELMtTUe", ()),
    "xfs": ("fqNK", "bmdilnrsL", ()),
    "btrfs": (
        "MKfqvV",
        "bdmnsLORU",
        ("--mixed", "--nodiscard", "--shrink", "--force", "--quiet", "--verbose", "--version"),
    ),
}
"""What ``mkfs=`` passes on, per kind: (short options without a value, short options with
one, long options without a value). Any other option is refused: those left out name a
file or directory mkfs reads or writes (ext4's -d, -l, -z; xfs's -p, -c; btrfs's -r)."""
MKFS_LONG_VALUED = {
    "btrfs": ("--byte-count", "--csum", "--checksum", "--data", "--metadata", "--nodesize",
              "--sectorsize", "--label", "--features", "--runtime-features", "--uuid",
              "--device-uuid"),
}  # fmt: skip
FILE_SUBOPTIONS = frozenset(
    {"device", "logdev", "rtdev", "name", "file", "options", "journal_path", "journal_dev",
     "usrjquota", "grpjquota"}
)  # fmt: skip
"""``key=value`` parts (of an mkfs option's value or of mount options) naming a device or
a file: an external journal or log, a data file, a configuration or quota file."""
MOUNT_REFUSED = {
    "ro": "a sandbox is written to, so it is never mounted read-only",
    "bind": "a sandbox is mounted from its own image, never bound from elsewhere",
    "rbind": "a sandbox is mounted from its own image, never bound from elsewhere",
    "move": "a sandbox's mount is its own, never moved",
    "remount": "a sandbox is mounted once, from its own image",
    "loop": "vcsbench sets up the sandbox's loop device itself",
}
MKFS_ACCEPTED = (
    "options alone, e.g. mkfs=-N 2000000 or mkfs=-O ^has_journal (the options of mkfs "
    "that name no device, file or directory, with their values)"
)


def _file_part(value: str) -> str:
    """The part of an option's value that names a device or file, or ""."""
    if "/" in value:
        return value
    for part in value.split(","):
        key, eq, _ = part.partition("=")
        if eq and key.strip().lower() in FILE_SUBOPTIONS:
            return part
    return ""


def check_mkfs_args(kind: str, args: tuple[str, ...], where: str) -> None:
    """``mkfs=`` takes options alone (:data:`MKFS_OPTIONS`), read as mkfs's getopt reads
    them, each value naming no device or file: the image is vcsbench's, given last."""
    flags, valued, long_flags = MKFS_OPTIONS.get(kind, ("", "", ()))
    words = list(args)
    while words:
        word = words.pop(0)
        if not word.startswith("-") or word in ("-", "--"):
            raise VcsbenchError(f"{where}: mkfs= takes {MKFS_ACCEPTED}; {word!r} is an argument")
        if word.startswith("--"):
            name, eq, value = word.partition("=")
            if name in long_flags and not eq:
                continue
            if name not in MKFS_LONG_VALUED.get(kind, ()):
                raise VcsbenchError(
                    f"{where}: mkfs option {name} is not one vcsbench passes on; mkfs= "
                    f"takes {MKFS_ACCEPTED}"
                )
            if not eq:
                value = _value_of(name, words, where)
            _check_value(name, value, where)
            continue
        for index, letter in enumerate(word[1:], start=1):
            if letter in flags:
                continue
            if letter not in valued:
                raise VcsbenchError(
                    f"{where}: mkfs option -{letter} is not one vcsbench passes on for "
                    f"{kind}; mkfs= takes {MKFS_ACCEPTED}"
                )
            value = word[index + 1 :] or _value_of(f"-{letter}", words, where)
            _check_value(f"-{letter}", value, where)
            break


def _value_of(name: str, words: list[str], where: str) -> str:
    if not words or words[0].startswith("-"):
        raise VcsbenchError(f"{where}: mkfs option {name} needs a value")
    return words.pop(0)


def _check_value(name: str, value: str, where: str) -> None:
    named = _file_part(value)
    if named:
        raise VcsbenchError(
            f"{where}: mkfs option {name} {value!r} names a device or file ({named}); mkfs= "
            f"takes {MKFS_ACCEPTED}"
        )


def check_mount_options(options: str, where: str) -> None:
    """``mount=`` takes mount options alone (``-o``'s list), none naming a device or
    file, none that would make the sandbox something other than its own image, mounted
    read-write."""
    for option in options.split(",") if options else []:
        key = option.partition("=")[0].strip().lower()
        if key in MOUNT_REFUSED:
            raise VcsbenchError(f"{where}: mount option {option!r}: {MOUNT_REFUSED[key]}")
        if key.startswith("x-"):
            raise VcsbenchError(
                f"{where}: mount option {option!r} is an instruction to mount(8) itself; "
                "mount= takes the filesystem's options (e.g. noatime,data=journal)"
            )
        named = _file_part(option)
        if named:
            raise VcsbenchError(
                f"{where}: mount option {option!r} names a device or file; mount= takes the "
                "filesystem's options alone (e.g. noatime,data=journal)"
            )


def check_image_dir(path: Path, where: str) -> Path:
    """``--image-dir``: an existing directory of the user's, not one ``dir:`` refuses."""
    if not path.is_dir():
        raise VcsbenchError(f"{where}: not an existing directory")
    why = unsafe_dir(path.resolve())
    if why:
        raise VcsbenchError(f"{where}: {why}; give a directory of your own, e.g. /srv/images")
    return path


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
    specs = [parse_fs_spec(piece) for piece in _pieces(text)]
    if not specs:
        raise VcsbenchError("--fs: no filesystem given; use e.g. tmpfs or ext4,xfs")
    texts = [spec.text for spec in specs]
    twice = next((t for t in texts if texts.count(t) > 1), None)
    if twice is not None:
        raise VcsbenchError(
            f"--fs {text!r} names {twice} twice: its rows could not be told apart; give each "
            "filesystem once (to see a filesystem's run-to-run spread: vcsbench doctor --spread)"
        )
    return specs


def _pieces(text: str) -> list[str]:
    """The specs of a comma-separated list, as text (see :func:`parse_fs_list`)."""
    pieces: list[str] = []
    for token in text.split(","):
        head = token.partition(":")[0].strip()
        if head in KINDS or not pieces:
            pieces.append(token)
        else:
            pieces[-1] += "," + token
    return [piece for piece in pieces if piece.strip()]


def with_option(text: str, option: str) -> str:
    """Each spec of a list with ``option`` (``profile=hdd``) added: ``ext4:size=8G`` ->
    ``ext4:size=8G,profile=hdd``; ``xfs`` -> ``xfs:profile=hdd``."""
    return ",".join(f"{piece}{',' if ':' in piece else ':'}{option}" for piece in _pieces(text))
