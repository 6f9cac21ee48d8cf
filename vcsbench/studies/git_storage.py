"""git-storage: git's storage choices side by side (loose objects against a pack, fsync
on and off, the default template against an empty one)."""

from __future__ import annotations

from vcsbench.studies.base import Study, storage_tables

GIT_STORAGE_VARIANTS = ",".join(
    [
        "git-cli",
        "git-cli[objects=packed]",
        "git-cli[core.fsync=none]",
        "git-cli[core.fsync=all]",
        "git-cli[template=empty]",
        "git-pygit2",
        "git-pygit2[fsync=true]",
        "git-pygit2[template=empty]",
    ]
)
GIT_STORAGE_ABOUT = (
    "`objects=packed`: the commit written by `git fast-import` as one pack instead of loose "
    "objects; `core.fsync=none|all`: nothing or everything flushed (git's default flushes "
    "packs but not loose objects); libgit2 flushes only with `fsync=true` "
    "(ENABLE_FSYNC_GITDIR); `template=empty`: no sample hooks copied into each repository."
)


STUDY = Study(
    "git-storage",
    "git's storage choices: loose objects against a packed commit, fsync on and off "
    "(CLI and libgit2), the default template against an empty one",
    GIT_STORAGE_VARIANTS,
    "create+commit,commit",
    "submission,many-files",
    "ext4",
    30,
    storage_tables("git-storage", GIT_STORAGE_ABOUT),
    ("git",),
)
