"""Reading a unified diff back: hunks parsed and applied to the old files, so a ``diff``
operation's output is checked against the change it was asked to show."""

from __future__ import annotations

import re
from collections.abc import Mapping

from vcsbench.backends.changes import Node
from vcsbench.backends.files import Files

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_BINARY = re.compile(rb"^Binary files (?:a/)?(.+?) and (?:b/)?(.+?) differ$")


def parse_unified(diff: bytes) -> dict[str, list[tuple[int, list[tuple[bytes, bytes]]]]]:
    """Path -> hunks (old start, [(kind, line)]) of a git or Subversion unified diff.

    Hunk bodies are read by the counts in their ``@@`` headers, so content that looks
    like a header is never taken for one. A binary file is a path with no hunks.
    """
    lines = diff.splitlines(keepends=True)
    files: dict[str, list[tuple[int, list[tuple[bytes, bytes]]]]] = {}
    current: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if line.startswith(b"+++ "):
            path = line[4:].rstrip(b"\r\n").split(b"\t")[0].strip()
            previous = lines[i - 2] if i >= 2 else b""
            if path == b"/dev/null" and previous.startswith(b"--- "):  # a deletion
                path = previous[4:].rstrip(b"\r\n").split(b"\t")[0].strip()
                if path.startswith(b"a/"):
                    path = path[2:]
            elif path.startswith(b"b/") and previous.startswith((b"--- a/", b"--- /dev/null")):
                path = path[2:]
            current = path.decode(errors="surrogateescape")
            files[current] = []
            continue
        binary = _BINARY.match(line.rstrip(b"\r\n"))
        if binary:
            named = binary.group(2) if binary.group(2) != b"/dev/null" else binary.group(1)
            files[named.decode(errors="surrogateescape")] = []
            continue
        match = _HUNK.match(line)
        if match is None or current is None:
            continue
        old_left = int(match.group(2) or 1)
        new_left = int(match.group(4) or 1)
        body: list[tuple[bytes, bytes]] = []
        while (old_left > 0 or new_left > 0) and i < len(lines):
            line = lines[i]
            i += 1
            kind, text = line[:1], line[1:]
            if kind == b"\\":  # "\ No newline at end of file": the line before has none
                if body:
                    body[-1] = (body[-1][0], body[-1][1].rstrip(b"\n"))
                continue
            body.append((kind, text))
            old_left -= kind in (b" ", b"-")
            new_left -= kind in (b" ", b"+")
        if i < len(lines) and lines[i].startswith(b"\\") and body:
            body[-1] = (body[-1][0], body[-1][1].rstrip(b"\n"))
            i += 1
        files[current].append((int(match.group(1)), body))
    return files


def apply_hunks(old: bytes, hunks: list[tuple[int, list[tuple[bytes, bytes]]]]) -> bytes | None:
    """``old`` with the hunks applied; None where a context or removed line does not match."""
    source = old.splitlines(keepends=True)
    out: list[bytes] = []
    pos = 0
    for start, body in hunks:
        begin = start - 1 if any(kind in (b" ", b"-") for kind, _ in body) else start
        out.extend(source[pos:begin])
        pos = begin
        for kind, text in body:
            if kind == b"+":
                out.append(text)
                continue
            if pos >= len(source) or source[pos] != text:
                return None
            if kind == b" ":
                out.append(text)
            pos += 1
    out.extend(source[pos:])
    return b"".join(out)


def patch_problems(diff: bytes, old: Files, change: Files) -> list[str]:
    """Whether ``diff`` turns the ``old`` files into ``old`` with ``change`` applied."""
    files = parse_unified(diff)
    problems = []
    if set(files) != set(change):
        problems.append(f"the diff names {sorted(files)}, the revision changed {sorted(change)}")
    for rel, new in change.items():
        hunks = files.get(rel)
        if hunks is None:
            continue
        if not hunks:
            if b"\0" not in new:
                problems.append(f"{rel}: the diff has no hunks for a text file")
            continue
        if apply_hunks(old.get(rel, b""), hunks) != new:
            problems.append(f"{rel}: the diff applied to the parent does not give the new content")
    return problems


def revisions_patch_problems(
    diff: bytes, old: Mapping[str, Node], new: Mapping[str, Node]
) -> list[str]:
    """Whether ``diff`` is the difference between two whole trees: it names every text
    file whose contents differ (added, deleted, or changed), and the hunks of every file it
    names turn the old contents (none: empty) into the new ones -- a file replaced by an
    equal one may be shown deleted and added whole (svn does, for a node replaced by a
    copy), never changed. Symlinks and binary files (a NUL byte) need not be named: each
    VCS shows them its own way (or, like ``hg diff`` and ``svn diff`` on an executable bit,
    as no hunks)."""
    files = parse_unified(diff)
    changed = {rel for rel in set(old) | set(new) if old.get(rel) != new.get(rel)}
    problems = []
    for rel in sorted(changed | set(files)):
        before, after = old.get(rel), new.get(rel)
        if any(n is not None and (n.kind == "link" or b"\0" in n.data) for n in (before, after)):
            continue
        want_old = before.data if before is not None else b""
        want_new = after.data if after is not None else b""
        hunks = files.get(rel)
        if hunks is None:
            if want_old != want_new:  # not a mode change alone, nor an empty file come or gone
                problems.append(f"{rel}: changed, not in the diff")
        elif not hunks:
            if want_old != want_new:
                problems.append(f"{rel}: in the diff without its changes")
        elif apply_hunks(want_old, hunks) != want_new:
            problems.append(f"{rel}: the diff applied to the old revision does not give the new")
    return problems
