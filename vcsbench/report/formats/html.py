"""Documents as one HTML page: a table of contents, sortable tables, plots embedded.

Every piece of text is escaped (``html.escape``): names from a result file are shown, never
run. The page needs nothing from the network; the sort script is inline.
"""

from __future__ import annotations

import html

from vcsbench.report.document import (
    Block,
    Document,
    Figure,
    Heading,
    Inline,
    Items,
    Paragraph,
    Table,
)

esc = html.escape

HTML_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:1500px;margin:2em auto;padding:0 1em;"
    "color:#222;line-height:1.4}h1{margin-bottom:.2em}h2{border-bottom:1px solid #ddd;"
    "padding-bottom:.2em;margin-top:2em}h3{margin-top:1.5em}"
    "nav{background:#f6f8fa;border:1px solid #ddd;padding:.5em 1em;margin:1em 0}"
    "nav ul{margin:.3em 0;list-style:none;padding-left:1em}"
    "table{border-collapse:collapse;font-size:90%;margin:.5em 0}"
    "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
    "td.text,th.text{text-align:left}th{background:#f0f3f6;cursor:pointer}"
    "tr:nth-child(even) td{background:#fafbfc}dt{font-weight:bold}.warn{color:#a40}"
    "figure{margin:1em 0}figcaption{font-size:90%;color:#555}code{font-size:90%}"
)
SORT_SCRIPT = (
    "document.querySelectorAll('th').forEach(function(th){th.title='sort';"
    "th.addEventListener('click',function(){var t=th.closest('table'),"
    "b=t.tBodies[0],i=Array.prototype.indexOf.call(th.parentNode.children,th),"
    "d=th.dataset.d=th.dataset.d==='a'?'d':'a',r=Array.from(b.rows),"
    "n=function(x){var v=parseFloat(x.replace(/[^0-9.eE+-]/g,''));return isNaN(v)?x:v};"
    "r.sort(function(x,y){var p=n(x.cells[i].textContent),q=n(y.cells[i].textContent);"
    "var c=(typeof p==='number'&&typeof q==='number')?p-q:String(p).localeCompare(String(q));"
    "return d==='a'?c:-c});r.forEach(function(x){b.appendChild(x)})})});"
)


def _marked(text: str) -> str:
    """Plain text, its Markdown code spans (`like this`) set as code: the documents write
    them for the Markdown formats; an odd backtick is left as it is."""
    pieces = text.split("`")
    if len(pieces) % 2 == 0:
        return esc(text)
    return "".join(f"<code>{esc(p)}</code>" if i % 2 else esc(p) for i, p in enumerate(pieces))


def _span(part: Inline) -> str:
    if isinstance(part, str):
        return _marked(part)
    if part.style == "strong":
        return f"<strong>{esc(part.text)}</strong>"
    return f"<code>{esc(part.text)}</code>" if part.style == "code" else esc(part.text)


def _table(item: Table) -> str:
    def cls(i: int) -> str:
        return ' class="text"' if item.is_text(i) else ""

    head = "".join(f"<th{cls(i)}>{esc(h)}</th>" for i, h in enumerate(item.header))
    rows = "".join(
        "<tr>" + "".join(f"<td{cls(i)}>{esc(c)}</td>" for i, c in enumerate(row)) + "</tr>"
        for row in item.rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def block(item: Block, anchor: str = "") -> str:
    if isinstance(item, Heading):
        tag = f"h{item.level}"
        return (
            f'<{tag} id="{anchor}">{esc(item.text)}</{tag}>'
            if anchor
            else (f"<{tag}>{esc(item.text)}</{tag}>")
        )
    if isinstance(item, Paragraph):
        text = "<br>".join("".join(_span(p) for p in line) for line in item.lines)
        if item.tone == "note":
            return f"<p><em>{text}</em></p>"
        return f"<p class='warn'>{text}</p>" if item.tone == "warning" else f"<p>{text}</p>"
    if isinstance(item, Items):
        entries = "".join(
            f"<dt>{esc(label)}</dt><dd>"
            + (f"<code>{esc(value)}</code>" if label in item.code else esc(value))
            + "</dd>"
            for label, value in item.entries
        )
        return f"<dl>{entries}</dl>"
    if isinstance(item, Table):
        return _table(item)
    if isinstance(item, Figure):
        return (
            f'<figure><img alt="{esc(item.title)}" src="{esc(item.src)}" style="max-width:100%">'
            f"<figcaption>{esc(item.title)}</figcaption></figure>"
        )
    raise TypeError(f"not a block: {item!r}")


def page(documents: list[Document]) -> str:
    """The documents one after another on one page, with a table of contents of their
    sections (level-2 headings) and tables (level 3)."""
    toc: list[str] = []
    body: list[str] = []
    for d, doc in enumerate(documents):
        body.append(f"<h1>{esc(doc.title)}</h1>")
        for n, item in enumerate(doc.blocks):
            anchor = ""
            if isinstance(item, Heading):
                anchor = f"d{d}s{n}"
                indent = ' style="margin-left:1.5em"' if item.level > 2 else ""
                toc.append(f'<li{indent}><a href="#{anchor}">{esc(item.text)}</a></li>')
            body.append(block(item, anchor))
    title = esc(documents[0].title) if len(documents) == 1 else "vcsbench report"
    nav = f"<nav><strong>Contents</strong><ul>{''.join(toc)}</ul></nav>" if toc else ""
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<meta name='viewport' content='width=device-width'><title>{title}</title>"
        f"<style>{HTML_STYLE}</style></head><body>{nav}{''.join(body)}"
        f"<script>{SORT_SCRIPT}</script></body></html>\n"
    )
