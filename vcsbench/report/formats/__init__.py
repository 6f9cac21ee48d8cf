"""Writers of a :class:`~vcsbench.report.document.Document`: one module per format.

``markup`` writes Markdown (md, github), reStructuredText and LaTeX; ``html`` one page with
a table of contents and sortable tables; ``sheet`` a document's tables as CSV (``report``'s
csv is not a document but the figures themselves, a row per benchmark or load step:
``csv``). A new format is a module here and a line in
:data:`FORMATS`.
"""

from __future__ import annotations

from vcsbench.errors import VcsbenchError
from vcsbench.report.document import Document
from vcsbench.report.formats import html, markup, sheet

FORMATS = ("md", "github", "rst", "html", "latex", "csv")
SUFFIX = {"md": "md", "github": "md", "rst": "rst", "html": "html", "latex": "tex", "csv": "csv"}


def write(documents: list[Document], fmt: str) -> str:
    """The documents in ``fmt`` (one page for html)."""
    if fmt == "html":
        return html.page(documents)
    if fmt in markup.MARKUPS:
        return "\n".join(markup.render(doc, fmt) for doc in documents)
    if fmt == "csv":
        return sheet.tables(documents)
    raise VcsbenchError(f"format {fmt!r} is not one of {', '.join(FORMATS)}")
