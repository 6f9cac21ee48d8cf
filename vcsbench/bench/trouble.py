"""A sandbox in trouble, said in words: read-only, out of inodes, out of space. When every
round of a batch failed, this is what stops the benchmark early, its rounds kept."""

from __future__ import annotations

import os
import traceback
from pathlib import Path

FULL_FREE_BYTES = 1 << 20


def sandbox_trouble(path: Path, spec: str, index: int, error: str = "") -> str:
    """What is wrong with the sandbox holding ``path`` when round ``index`` failed there
    with ``error`` (it turned read-only, it ran out of inodes or of space), in words; ""
    when nothing is. A round that failed for want of space (ENOSPC) may have freed what
    it took, so a sandbox that is nearly out counts as out then."""
    try:
        st = os.statvfs(path)
    except OSError as exc:
        return f"the sandbox {spec} cannot be read at round {index} ({exc.strerror})"
    if st.f_flag & os.ST_RDONLY:
        return (
            f"the sandbox {spec} turned read-only at round {index} (the kernel does that "
            "after an I/O error, or when its journal fails); the rounds before are kept"
        )
    free, inodes = st.f_bfree * st.f_frsize, st.f_ffree
    no_space = "No space left on device" in error
    if st.f_files and (inodes == 0 or (no_space and inodes < max(64, st.f_files // 100))):
        return (
            f"the sandbox {spec} ran out of inodes at round {index} ({free:,} bytes still "
            "free); give it more inodes with mkfs=-N ..., or run fewer repositories"
        )
    if free < max(FULL_FREE_BYTES, st.f_blocks * st.f_frsize // (50 if no_space else 200)):
        return (
            f"the sandbox {spec} filled up at round {index} ({free:,} bytes, {inodes:,} "
            "inodes free); give it more room with size=..., or run fewer repositories"
        )
    if no_space:
        return (
            f"the sandbox {spec} had no space left at round {index} ({free:,} bytes, "
            f"{inodes:,} inodes free); give it more room with size=... or mkfs=-N ..."
        )
    return ""


class SandboxFailed(Exception):
    """Every round of a batch failed, and the sandbox says why (read-only, full): the
    rounds to come would fail the same way, so the benchmark stops, its rounds kept."""


def describe(exc: BaseException) -> str:
    """An exception in one line: its kind, its words, where it was raised."""
    text = str(exc).strip().replace("\n", " ")
    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    origin = f" [{Path(where.filename).name}:{where.lineno}]" if where else ""
    return f"{type(exc).__name__}: {text}{origin}"
