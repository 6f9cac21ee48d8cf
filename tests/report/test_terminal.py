"""Markdown for a terminal: every line within its width, nothing left out."""

from __future__ import annotations

from vcsbench.report.format import render_rows
from vcsbench.report.terminal import for_terminal


def test_a_wide_table_and_a_long_note_fit_the_terminal_with_every_cell_kept() -> None:
    header = ["operation", "backend", *(f"figure number {i}" for i in range(12))]
    figures = [f"{i * 1234.5:,.1f}" for i in range(12)]
    rows = [
        ["commit to an existing repository", "svn-pysvn", *figures],
        ["create", "git-cli", *("—" for _ in range(12))],
    ]
    note = "_" + "a long note " * 40 + "_"
    text = f"# title\n\n{render_rows(header, rows, text_columns=2)}\n\n{note}\n"
    assert max(len(line) for line in text.splitlines()) > 300
    shown = for_terminal(text, 100)
    assert max(len(line) for line in shown.splitlines()) <= 100
    words = " ".join(shown.split())
    # Every figure, every header word and the whole note are there; the names repeat
    # in each block of columns.
    for i in range(12):
        assert f"{i * 1234.5:,.1f}" in words
    assert words.count("svn-pysvn") >= 2 and words.count("figure") == 12
    assert " ".join(note.split()) in words
    assert "commit to an existing repository" not in shown  # wrapped at 20
    # A table that fits is left whole (plain columns, no Markdown pipes).
    small = render_rows(["a", "b"], [["x", "1"]])
    assert "|" not in for_terminal(small, 100) and "x" in for_terminal(small, 100)


def test_a_long_list_item_hangs_under_its_text() -> None:
    item = "- commit sent: " + "; ".join(f"path {i} 8.0{i} [7.9{i}–8.2{i}]" for i in range(8))
    shown = for_terminal(item, 60).splitlines()
    assert shown[0].startswith("- commit sent: ") and len(shown) > 2
    assert all(line.startswith("  ") and len(line) <= 60 for line in shown[1:])
    assert " ".join(line.strip() for line in shown) == item
