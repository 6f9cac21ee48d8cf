"""This machine's calibration, kept in the user's data directory (``$VCSBENCH_DATA``, else
``$XDG_DATA_HOME/vcsbench``, else ``~/.local/share/vcsbench``): one file per machine,
named by a fingerprint of what makes the machine this one -- host name, CPU model and
count, memory, kernel. A run records it (:func:`recorded_for`); ``vcsbench doctor
--spread`` measures it (:mod:`vcsbench.results.spread` is what it holds)."""

from __future__ import annotations

import hashlib
import os
import platform
from pathlib import Path
from typing import Any

from vcsbench.errors import VcsbenchError
from vcsbench.results.io import read_json_file, write_json_file
from vcsbench.results.schema import SchemaError
from vcsbench.results.spread import Spread


def fingerprint(machine: dict[str, Any], node: str | None = None) -> tuple[str, str]:
    """(a short digest, a description) of what makes this machine this one: its host
    name (``node``; default this host's), CPU model and count, memory (to the GiB: the
    kernel's reservations move it), kernel. ``machine``:
    :func:`vcsbench.measure.machine.machine_info`'s facts, or a result's."""
    gib = round(int(machine.get("memory_bytes") or 0) / (1 << 30))
    parts = [
        platform.node() if node is None else node,
        str(machine.get("cpu_model", "")),
        f"{machine.get('cpu_count', 0)} CPUs",
        f"{gib} GiB",
        f"kernel {machine.get('kernel', '')}",
    ]
    described = ", ".join(parts)
    return hashlib.sha256(described.encode()).hexdigest()[:16], described


def data_dir() -> Path:
    """Where vcsbench keeps what it learns of this machine."""
    given = os.environ.get("VCSBENCH_DATA")
    if given:
        return Path(given)
    xdg = os.environ.get("XDG_DATA_HOME")
    return (Path(xdg) if xdg else Path.home() / ".local" / "share") / "vcsbench"


def spread_path(digest: str) -> Path:
    return data_dir() / f"spread-{digest}.json"


def load_spread(digest: str) -> Spread | None:
    """This machine's calibration, if one was measured (None if none, or unreadable)."""
    path = spread_path(digest)
    if not path.is_file():
        return None
    document = read_json_file(path, limit=16 << 20)
    try:
        found = Spread.from_json(document, str(path))
    except SchemaError as exc:
        raise VcsbenchError(
            f"{path}: {exc}; measure the spread again (vcsbench doctor --spread) or remove it"
        ) from None
    return found if found.fingerprint == digest else None


def save_spread(spread: Spread) -> Path:
    path = spread_path(spread.fingerprint)
    path.parent.mkdir(parents=True, exist_ok=True)
    old = load_spread(spread.fingerprint)
    write_json_file(path, (old.merged(spread) if old else spread).to_json())
    return path


def recorded_for(machine: dict[str, Any]) -> dict[str, Any] | None:
    """What a run records of its machine's calibration (a few numbers a cell), or None
    where none was measured."""
    found = load_spread(fingerprint(machine)[0])
    return found.to_json() if found else None
