"""A document's tables as CSV, for any command's report (``--format csv``): each table
under a row that names it (the document's title and the section it is in), a blank row
between two; cells as the document has them. ``report`` gives its own figures as plain
numbers instead (:mod:`vcsbench.report.formats.csv`)."""

from __future__ import annotations

import csv
import io

from vcsbench.report.document import Document, Heading, Table


def tables(documents: list[Document]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    first = True
    for doc in documents:
        section = doc.title
        for block in doc.blocks:
            if isinstance(block, Heading):
                section = f"{doc.title}: {block.text}" if doc.title else block.text
                continue
            if not isinstance(block, Table):
                continue
            if not first:
                writer.writerow([])
            first = False
            if section:
                writer.writerow([section])
            writer.writerow(block.header)
            writer.writerows(block.rows)
    return buffer.getvalue()
