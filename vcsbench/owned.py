"""Whether a directory is this user's alone: one vcsbench acts on as root (its state
files) or writes into as root (plots, server logs) must be, or anyone who can write
there could plant what vcsbench then follows."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def not_mine_alone(path: Path) -> str:
    """Why ``path`` is not a real directory of this user's that nobody else can write, or
    "" when it is."""
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        return "is a symlink"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a directory"
    if st.st_uid != os.geteuid():
        return f"belongs to uid {st.st_uid}, not to you (uid {os.geteuid()})"
    if st.st_mode & 0o022:
        return f"can be written by others (mode {stat.S_IMODE(st.st_mode):o})"
    return ""
