"""A report as data: headings, paragraphs, lists, tables and figures, in reading order.

Every report (benchmark tables, load steps) builds a :class:`Document`; the modules in
``report/formats/`` write one out as Markdown, reStructuredText, LaTeX or an HTML page. So
a report is written once and every format gets all of it, and escaping lives in the
writers: text here is plain, as it came from the results (names from a result file come
from anywhere; each writer makes them inert for its format).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Style = Literal["", "strong", "code"]


@dataclass(frozen=True)
class Span:
    """A piece of a line written in a style: ``strong`` or ``code``."""

    text: str
    style: Style = ""


Inline = str | Span
Line = tuple[Inline, ...]


def strong(text: object) -> Span:
    return Span(str(text), "strong")


def code(text: object) -> Span:
    return Span(str(text), "code")


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2
    """2: a section; 3: a table's title within one."""


@dataclass(frozen=True)
class Paragraph:
    """Lines that read as one paragraph; ``note``: a legend, set apart (in italics)."""

    lines: tuple[Line, ...]
    tone: Literal["", "note", "warning"] = ""


def paragraph(*parts: Inline, tone: Literal["", "note", "warning"] = "") -> Paragraph:
    """A paragraph of one line."""
    return Paragraph((tuple(parts),), tone)


def lines_of(*texts: str) -> Paragraph:
    """A paragraph of lines kept as lines, one text each (sentences, counts, commands)."""
    return Paragraph(tuple((text,) for text in texts))


@dataclass(frozen=True)
class Items:
    """A list of ``label: value`` entries; values of the labels in ``code`` are literal
    (a command line, a file name)."""

    entries: tuple[tuple[str, str], ...]
    code: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Table:
    """A table of formatted cells; the first ``text_columns`` columns, and any column
    named in ``text_names``, are text (left-aligned), the rest figures (right-aligned)."""

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    text_columns: int = 1
    text_names: frozenset[str] = frozenset()

    def is_text(self, column: int) -> bool:
        return column < self.text_columns or self.header[column] in self.text_names


def table(
    header: list[str],
    rows: list[list[str]],
    text_columns: int = 1,
    text_names: frozenset[str] = frozenset(),
) -> Table:
    return Table(
        tuple(header), tuple(tuple(str(c) for c in row) for row in rows), text_columns, text_names
    )


@dataclass(frozen=True)
class Figure:
    title: str
    src: str
    """A path relative to the report, or a data: URI (html)."""


Block = Heading | Paragraph | Items | Table | Figure


@dataclass
class Document:
    title: str
    blocks: list[Block] = field(default_factory=list)

    def add(self, *blocks: Block) -> Document:
        self.blocks.extend(blocks)
        return self
