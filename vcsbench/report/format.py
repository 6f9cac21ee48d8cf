"""How numbers are written for people: one place for every report, compare and study."""

from __future__ import annotations

from typing import Any

from tabulate import tabulate

from vcsbench.results.metrics import METRICS

TABULATE_FORMAT = {
    "md": "pipe",
    "github": "github",
    "rst": "rst",
    "latex": "latex",
    "html": "unsafehtml",
}


def fmt_ms(value: float | None) -> str:
    if value is None:
        return "—"
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}" if value >= 1 else f"{value:.3f}"


def fmt_num(value: float | None, scale: float = 1.0, digits: int = 1) -> str:
    if value is None:
        return "n/a"
    scaled = value / scale
    return f"{scaled:,.0f}" if abs(scaled) >= 1000 else f"{scaled:,.{digits}f}"


def fmt_metric(name: str, value: float | None) -> str:
    """A value in a registry metric's unit, shown in its display unit."""
    d = METRICS[name]
    return fmt_num(value, d.scale, d.digits)


def fmt_ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}x"


def render_rows(
    header: list[str], rows: list[list[Any]], fmt: str = "md", text_columns: int = 1
) -> str:
    """A table: the first ``text_columns`` columns on the left, the figures on the right."""
    align = ["left"] * text_columns + ["right"] * (len(header) - text_columns)
    return tabulate(
        rows,
        headers=header,
        tablefmt=TABULATE_FORMAT.get(fmt, "pipe"),
        disable_numparse=True,
        colalign=align,
    )
