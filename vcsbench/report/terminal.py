"""Markdown for a terminal: tables and paragraphs that fit its width.

A study's table is written to its ``.md`` file as Markdown (for an RFC); on the terminal
the same text is shown with each table as plain columns whose text cells wrap, and each
long paragraph wrapped, so no line runs past the terminal (a 326-character table row and
a 451-character note were the first thing a new user saw). Nothing is left out: wrapped,
not cut.
"""

from __future__ import annotations

import re
import shutil
import textwrap

from tabulate import tabulate

KEY_MAX = 20
"""The widest a row's name (operation, backend) is shown; longer ones wrap."""
MIN_COLUMN = 6
GAP = 2
_CELL_SPLIT = re.compile(r"(?<!\\)\|")


def width() -> int:
    """The terminal's width (100 where there is none: a pipe, a file, CI), 60 at least."""
    return max(60, shutil.get_terminal_size((100, 24)).columns)


def _cells(line: str) -> list[str]:
    parts = _CELL_SPLIT.split(line.strip())
    return [part.strip().replace("\\|", "|") for part in parts[1:-1]]


def _wrap(text: str, cap: int) -> str:
    return "\n".join(textwrap.wrap(text, cap) or [""]) if len(text) > cap else text


def _table(lines: list[str], limit: int) -> str:
    """A Markdown table as plain columns within ``limit``: its leading text columns (the
    row's names) wrapped to at most ``KEY_MAX`` characters, and its figure columns in as
    many blocks as it takes, each repeating the names (as pandas wraps a wide frame)."""
    header, rule, *body = (_cells(line) for line in lines)
    right = [c.endswith(":") and not c.startswith(":") for c in rule]
    rows = [row + [""] * (len(header) - len(row)) for row in body]
    keys = next((i for i, r in enumerate(right) if r), len(header)) or 1
    columns = list(zip(header, *rows, strict=True))
    caps = []
    for i, column in enumerate(columns):
        cells = max(len(c) for c in column[1:]) if rows else 0
        if i < keys:
            caps.append(min(max(cells, len(column[0])), KEY_MAX))
        else:  # a figure column: as wide as its figures, its header wrapped to that
            caps.append(max(cells, MIN_COLUMN, *(len(w) for w in column[0].split()), 1))
    groups: list[list[int]] = []
    used = sum(caps[:keys]) + GAP * keys
    for i in range(keys, len(header)):
        if not groups or used + caps[i] > limit:
            groups.append([])
            used = sum(caps[:keys]) + GAP * keys
        groups[-1].append(i)
        used += caps[i] + GAP
    blocks = []
    for group in groups or [[]]:
        chosen = [*range(keys), *group]
        blocks.append(
            tabulate(
                [[_wrap(row[i], caps[i]) for i in chosen] for row in rows],
                headers=[_wrap(header[i], caps[i]) for i in chosen],
                tablefmt="simple",
                disable_numparse=True,
                colalign=["right" if right[i] else "left" for i in chosen],
            )
        )
    return "\n\n".join(blocks)


def for_terminal(markdown: str, limit: int | None = None) -> str:
    """``markdown`` with its tables as wrapped plain columns and its long lines wrapped to
    ``limit`` characters (the terminal's width by default)."""
    limit = limit or width()
    out: list[str] = []
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("|"):
            block = []
            while i < len(lines) and lines[i].startswith("|"):
                block.append(lines[i])
                i += 1
            out.append(_table(block, limit) if len(block) >= 2 else "\n".join(block))
            continue
        # a path or a command is a word: never broken at its hyphens; a list item's
        # lines hang under its text
        hang = "  " if line.startswith(("- ", "* ")) else ""
        wrapped = textwrap.fill(
            line, limit, break_on_hyphens=False, break_long_words=False, subsequent_indent=hang
        )
        out.append(wrapped if len(line) > limit else line)
        i += 1
    return "\n".join(out)
