"""A tree's own ``.gitattributes`` read for what makes git write a work tree other than
it is committed: the pairs whose check compares committed bytes are skipped for it."""

from __future__ import annotations

import re
from collections.abc import Mapping

CONVERTING = re.compile(r"(?:^|\s)(eol=crlf|ident|working-tree-encoding=\S+)(?=\s|$)")
"""Attributes that make git's checkout write other bytes than the blob's: line ends turned
to CRLF, ``$Id$`` expanded, another encoding (a filter needs a driver vcsbench's git has
none of; ``text`` alone writes LF on Linux, as committed)."""


def converting_lines(files: Mapping[str, bytes]) -> list[str]:
    """``PATH: LINE`` for each line of each ``.gitattributes`` among ``files`` that sets
    an attribute of :data:`CONVERTING` (a macro's definition included)."""
    found = []
    for rel in sorted(files):
        if rel.rpartition("/")[2] != ".gitattributes":
            continue
        for line in files[rel].decode(errors="replace").splitlines():
            text = line.strip()
            if text and not text.startswith("#") and CONVERTING.search(text):
                found.append(f"{rel}: {text[:80]}")
    return found
