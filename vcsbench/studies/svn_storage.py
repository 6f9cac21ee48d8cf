"""svn-storage: Subversion's storage choices side by side (FSFS against FSX, compression,
an older repository format)."""

from __future__ import annotations

from vcsbench.studies.base import Study, storage_tables

SVN_STORAGE_VARIANTS = ",".join(
    [
        "svn-fs",
        "svn-fs[fs-type=fsx]",
        "svn-fs[compression=none]",
        "svn-fs[compression=zlib]",
        "svn-fs[compatible-version=1.8]",
    ]
)
SVN_STORAGE_ABOUT = (
    "Subversion 1.14's defaults: FSFS format 8, lz4 compression; `fs-type=fsx` is the "
    "experimental FSX back end; `compression=none|zlib` is set in `db/fsfs.conf`; "
    "`compatible-version=1.8` makes an FSFS format 6 repository (zlib)."
)


STUDY = Study(
    "svn-storage",
    "Subversion's storage choices: FSFS against FSX, FSFS compression none/zlib/lz4, "
    "an older repository format; create+commit and commit of submission and "
    "many-files",
    SVN_STORAGE_VARIANTS,
    "create+commit,commit",
    "submission,many-files",
    "ext4",
    30,
    storage_tables("svn-storage", SVN_STORAGE_ABOUT),
    ("svn",),
)
