"""Documents as Markdown (``md``: pipe tables; ``github``), reStructuredText and LaTeX.

Text from results passes through :func:`~vcsbench.report.format.inline` (Markdown: no raw
HTML), table cells through :func:`~vcsbench.report.format.table`, and LaTeX text through
:func:`latex_escape`, so no name in a result file changes the document's structure.
"""

from __future__ import annotations

from vcsbench.report.document import (
    Block,
    Document,
    Figure,
    Heading,
    Inline,
    Items,
    Paragraph,
    Span,
)
from vcsbench.report.document import Table as TableBlock
from vcsbench.report.format import MARKDOWN, code, inline, table

MARKUPS = ("md", "github", "rst", "latex")
RST_UNDERLINE = {1: "=", 2: "-", 3: "~"}
LATEX_HEADING = {1: "section", 2: "subsection", 3: "subsubsection"}
LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: object) -> str:
    return "".join(LATEX_SPECIAL.get(c, c) for c in inline(text, "latex"))


def _span(part: Inline, fmt: str) -> str:
    text, style = (part, "") if isinstance(part, str) else (part.text, part.style)
    if fmt == "latex":
        body = latex_escape(text)
        return {"": body, "strong": f"\\textbf{{{body}}}", "code": f"\\texttt{{{body}}}"}[style]
    if style == "code":
        return code(text) if fmt in MARKDOWN else f"``{inline(text, fmt)}``"
    body = inline(text, fmt)
    return f"**{body}**" if style == "strong" else body


def _item(label: str, value: str, literal: bool, fmt: str) -> str:
    if fmt == "latex":
        shown = f"\\texttt{{{latex_escape(value)}}}" if literal else latex_escape(value)
        return f"\\item \\textbf{{{latex_escape(label)}}}: {shown}"
    shown = _span(Span(value, "code" if literal else ""), fmt)
    return f"- **{inline(label, fmt)}**: {shown}"


def block(item: Block, fmt: str) -> str:
    """One block of a document in ``fmt``."""
    if isinstance(item, Heading):
        if fmt == "latex":
            return f"\\{LATEX_HEADING[item.level]}*{{{latex_escape(item.text)}}}"
        text = inline(item.text, fmt)
        if fmt == "rst":
            return f"{text}\n{RST_UNDERLINE[item.level] * len(text)}"
        return f"{'#' * item.level} {text}"
    if isinstance(item, Paragraph):
        text = "\n".join("".join(_span(part, fmt) for part in line) for line in item.lines)
        if item.tone != "note":
            return text
        if fmt == "latex":
            return f"\\emph{{{text}}}"
        return f"*{text}*" if fmt == "rst" else f"_{text}_"
    if isinstance(item, Items):
        lines = [_item(label, value, label in item.code, fmt) for label, value in item.entries]
        if fmt == "latex":
            return "\\begin{itemize}\n" + "\n".join(lines) + "\n\\end{itemize}"
        return "\n".join(lines)
    if isinstance(item, TableBlock):
        align = ["left" if item.is_text(i) else "right" for i in range(len(item.header))]
        return table(list(item.header), [list(r) for r in item.rows], fmt, align)
    if isinstance(item, Figure):
        if fmt == "latex":
            return (
                f"\\begin{{figure}}[h]\\includegraphics[width=\\linewidth]{{{item.src}}}"
                f"\\caption{{{latex_escape(item.title)}}}\\end{{figure}}"
            )
        if fmt == "rst":
            return f".. image:: {item.src}\n   :alt: {inline(item.title, fmt)}"
        return f"![{inline(item.title, fmt).replace(']', ' ')}]({item.src.replace(' ', '%20')})"
    raise TypeError(f"not a block: {item!r}")


def render(doc: Document, fmt: str) -> str:
    """The document: its title (where it has one), then every block, a blank line
    between two."""
    parts = [block(Heading(doc.title, 1), fmt)] if doc.title else []
    parts.extend(block(item, fmt) for item in doc.blocks)
    return "\n\n".join(part for part in parts if part) + "\n"
