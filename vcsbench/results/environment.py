"""Where a benchmark was taken, as results record it: the backend (versions, options), the
payload, the filesystem, the machine. Part of the result model (``model.py``)."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import PurePosixPath
from typing import Any

from vcsbench.results.schema import (
    SchemaError,
    count,
    expect,
    not_negative,
    number,
    optional,
    optional_count,
    required,
    str_map,
)

THROTTLE_LIMITS = ("read_iops", "write_iops", "read_bps", "write_bps")


@dataclass(frozen=True)
class Throttle:
    """A storage profile on the sandbox's device: its limits, how they were set, and
    what the device delivered under them when the sandbox was made."""

    profile: str
    source: str
    described: str
    mechanism: str
    limits: dict[str, int]
    measured: dict[str, float]
    """Per limit, the rate measured (IO/s or bytes/s)."""
    expected: dict[str, float]
    """Per limit, the rate expected (a lower IOPS limit may bind first)."""
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, data: object, where: str) -> Throttle:
        d = expect(data, dict, where)
        maps = {}
        for key in ("limits", "measured", "expected"):
            values = expect(d.get(key, {}), dict, f"{where}.{key}")
            if not set(values) <= set(THROTTLE_LIMITS):
                raise SchemaError(
                    f"{where}.{key} names limits other than {', '.join(THROTTLE_LIMITS)}"
                )
            maps[key] = {k: number(values, k, f"{where}.{key}") for k in values}
        texts = {}
        for key in ("problems", "notes"):
            items = expect(d.get(key, []), list, f"{where}.{key}")
            texts[key] = tuple(expect(item, str, f"{where}.{key}[]") for item in items)
        return cls(
            profile=optional(d, "profile", str, where, ""),
            source=optional(d, "source", str, where, ""),
            described=optional(d, "described", str, where, ""),
            mechanism=optional(d, "mechanism", str, where, ""),
            limits={k: int(v) for k, v in maps["limits"].items()},
            measured=maps["measured"],
            expected=maps["expected"],
            problems=texts["problems"],
            notes=texts["notes"],
        )

    @classmethod
    def of_sandbox(cls, record: dict[str, Any]) -> Throttle:
        """From the sandbox's record (per limit: measured, expected, and how)."""
        checks = record["measured"]
        return cls(
            profile=record["profile"],
            source=record["source"],
            described=record["described"],
            mechanism=record["mechanism"],
            limits=dict(record["limits"]),
            measured={k: float(v["measured"]) for k, v in checks.items()},
            expected={k: float(v["expected"]) for k, v in checks.items()},
            problems=tuple(record["problems"]),
            notes=tuple(record["notes"]),
        )


@dataclass(frozen=True)
class BackendInfo:
    name: str
    vcs: str
    options: dict[str, str]
    versions: dict[str, str]
    variant: str = ""
    """The label rows carry: the name, with the options that differ from the defaults."""
    durability: str = ""
    """What the variant does to make a commit survive a crash (fsync or not)."""

    @property
    def label(self) -> str:
        return self.variant or self.name

    @classmethod
    def from_json(cls, data: object, where: str) -> BackendInfo:
        d = expect(data, dict, where)
        return cls(
            name=required(d, "name", str, where),
            vcs=optional(d, "vcs", str, where, ""),
            options=str_map(d.get("options") or {}, f"{where}.options"),
            versions=str_map(d.get("versions") or {}, f"{where}.versions"),
            variant=optional(d, "variant", str, where, ""),
            durability=optional(d, "durability", str, where, ""),
        )


_HISTORY_PATH = re.compile(r"(?<=history:)/[^,\s\]]*")
"""An absolute path in a history payload's name (up to its options)."""


def history_by_name(text: str) -> str:
    """``text`` with each history named by a path named by the path's last part."""
    return _HISTORY_PATH.sub(lambda m: PurePosixPath(m.group(0)).name or "/", text)


@dataclass(frozen=True)
class PayloadInfo:
    name: str
    description: str
    files: int
    bytes: int
    sha256: str
    seed: int | None = None
    history: dict[str, str | int] | None = None
    """A real history's identity: its source, first, last and next commit (text), and its
    counts (commits, files, renames: numbers; text in files of earlier vcsbench versions)."""

    @property
    def shown(self) -> str:
        """The name as a report shows it: a history named by a path is named by the
        path's last part (``history:/srv/h/course,commits=1000`` shows as
        ``history:course,commits=1000``); what it is, :meth:`history_text` says."""
        return history_by_name(self.name)

    def history_text(self) -> str:
        """A real history by what it is: its VCS and source's name, the commits replayed,
        the files at the last of them, renames and deletions ("" for other payloads)."""
        h = self.history
        if not h:
            return ""

        def n(key: str) -> str:
            value = str(h.get(key, ""))
            return f"{int(value):,}" if value.isdigit() else "?"

        source = PurePosixPath(str(h.get("source", ""))).name or "?"
        first, last = str(h.get("first", ""))[:12], str(h.get("last", ""))[:12]
        span = f" ({first}..{last})" if first and last else ""
        return (
            f"{h.get('vcs', '?')} history of {source}: {n('commits')} commits replayed{span}, "
            f"{n('tip_files')} files at the last, {n('renames')} renames, "
            f"{n('deletions')} deletions"
        )

    @classmethod
    def from_json(cls, data: object, where: str) -> PayloadInfo:
        d = expect(data, dict, where)
        history = d.get("history")
        return cls(
            name=required(d, "name", str, where),
            description=optional(d, "description", str, where, ""),
            files=count(d, "files", where, 0),
            bytes=count(d, "bytes", where, 0),
            sha256=optional(d, "sha256", str, where, ""),
            seed=optional(d, "seed", int, where, None),
            history=None if history is None else _identity(history, f"{where}.history"),
        )


def _identity(value: object, where: str) -> dict[str, str | int]:
    """A history's identity: text, and counts as whole numbers 0 or more."""
    found: dict[str, str | int] = {}
    for key, item in expect(value, dict, where).items():
        if isinstance(item, int) and not isinstance(item, bool):
            found[str(key)] = int(not_negative(item, f"{where}.{key}"))
        else:
            found[str(key)] = str(expect(item, str, f"{where}.{key}"))
    return found


@dataclass(frozen=True)
class FilesystemInfo:
    spec: str
    kind: str
    fstype: str
    mount_options: str = ""
    mountpoint: str = ""
    device: str | None = None
    device_stat_path: str | None = None
    image_path: str | None = None
    image_size_bytes: int | None = None
    kernel: str = ""
    device_shared: bool = False
    """dir: sandboxes only: device counters were taken from a device others also use."""
    disk: str = ""
    """The disk under the image or directory ("memory" for tmpfs)."""
    throttle: Throttle | None = None
    """A storage profile's limits on the device, or None (the device as it is)."""

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        if self.throttle is None:
            del data["throttle"]  # unthrottled: as files were before profiles
        else:  # as JSON has them, for a reader given this dict itself
            data["throttle"].update(
                problems=list(self.throttle.problems), notes=list(self.throttle.notes)
            )
        return data

    @classmethod
    def from_json(cls, data: object, where: str) -> FilesystemInfo:
        d = expect(data, dict, where)
        return cls(
            spec=required(d, "spec", str, where),
            kind=optional(d, "kind", str, where, ""),
            fstype=optional(d, "fstype", str, where, ""),
            mount_options=optional(d, "mount_options", str, where, ""),
            mountpoint=optional(d, "mountpoint", str, where, ""),
            device=optional(d, "device", str, where, None),
            device_stat_path=optional(d, "device_stat_path", str, where, None),
            image_path=optional(d, "image_path", str, where, None),
            image_size_bytes=optional_count(d, "image_size_bytes", where),
            kernel=optional(d, "kernel", str, where, ""),
            device_shared=optional(d, "device_shared", bool, where, False),
            disk=optional(d, "disk", str, where, ""),
            throttle=None
            if d.get("throttle") is None
            else Throttle.from_json(d["throttle"], f"{where}.throttle"),
        )


@dataclass(frozen=True)
class Machine:
    cpu_model: str = ""
    cpu_count: int = 0
    memory_bytes: int = 0
    kernel: str = ""
    distribution: str = ""
    python: str = ""
    is_root: bool = False
    backend_versions: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def description(self) -> str:
        gib = self.memory_bytes / (1 << 30)
        return f"{self.cpu_model or '?'}, {self.cpu_count} CPUs, {gib:,.1f} GiB memory"

    @classmethod
    def from_json(cls, data: object, where: str) -> Machine:
        d = expect(data if data is not None else {}, dict, where)
        versions = optional(d, "backend_versions", dict, where, {})
        return cls(
            cpu_model=optional(d, "cpu_model", str, where, ""),
            cpu_count=count(d, "cpu_count", where, 0),
            memory_bytes=count(d, "memory_bytes", where, 0),
            kernel=optional(d, "kernel", str, where, ""),
            distribution=optional(d, "distribution", str, where, ""),
            python=optional(d, "python", str, where, ""),
            is_root=optional(d, "is_root", bool, where, False),
            backend_versions={
                str(k): str_map(v, f"{where}.backend_versions") for k, v in versions.items()
            },
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)
