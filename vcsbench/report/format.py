"""How numbers and names are written for people: one place for every report, compare and
study.

Names come from result files, which come from anywhere: every table cell passes through
:func:`cell` and every name in running text through :func:`inline`, so that no name can
break a Markdown table or run as HTML (the html format escapes it; Markdown gets ``|``
and ``<`` escaped, since Markdown renderers pass HTML through)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from tabulate import tabulate

from vcsbench.results.environment import Throttle, history_by_name
from vcsbench.results.metrics import METRICS
from vcsbench.results.writers import Writers

if TYPE_CHECKING:
    from vcsbench.results.load import Load
    from vcsbench.results.model import Benchmark

TABULATE_FORMAT = {
    "md": "pipe",
    "github": "github",
    "rst": "rst",
    "latex": "latex",
    "html": "html",
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


def counted(rows: Iterable[Benchmark], names: Iterable[str]) -> list[str]:
    """Of ``names``, the metrics some of ``rows`` has a figure for: the columns a table
    shows only where they were measured."""
    rows = list(rows)
    return [n for n in names if any(b.per_repo(n) is not None for b in rows)]


def fmt_bytes(value: int) -> str:
    """Bytes in the largest binary unit they fill: ``3.5 MiB``, ``76.0 KiB``, ``512 B``."""
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if value >= scale:
            return f"{value / scale:,.1f} {unit}"
    return f"{value:,} B"


def fmt_ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}x"


MARKDOWN = ("md", "github", "pipe")
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")


def inline(text: object, fmt: str = "md") -> str:
    """``text`` in a line of ``fmt``: one line, and in Markdown no raw HTML."""
    line = " ".join(str(text).splitlines())
    if fmt in MARKDOWN:  # only a "<" before these can start HTML in Markdown
        line = _TAG_START.sub("&lt;", line)
    return line


def cell(text: object, fmt: str = "md") -> str:
    """``text`` in a table cell of ``fmt`` (html is escaped by the table writer)."""
    value = inline(text, fmt)
    return value.replace("|", "\\|") if fmt in MARKDOWN else value


def code(text: str) -> str:
    """``text`` as a Markdown code span, whatever backticks it holds."""
    line = " ".join(text.splitlines())
    ticks = max((len(run) for run in re.findall("`+", line)), default=0)
    fence = "`" * (ticks + 1)
    pad = " " if line.startswith("`") or line.endswith("`") else ""
    return f"{fence}{pad}{line}{pad}{fence}"


def table(
    header: list[str], rows: list[list[Any]], fmt: str = "md", align: list[str] | None = None
) -> str:
    """A table in ``fmt``, every cell escaped for it."""
    return tabulate(
        [[cell(value, fmt) for value in row] for row in rows],
        headers=[cell(h, fmt) for h in header],
        tablefmt=TABULATE_FORMAT.get(fmt, fmt),
        disable_numparse=True,
        colalign=align,
    )


EMPTY_CELLS = ("—", "n/a", "")
"""What a cell without a figure shows."""


def without_empty(
    header: list[str], rows: list[list[Any]], text_columns: int = 1
) -> tuple[list[str], list[list[Any]], list[str]]:
    """The table without the figure columns that no row has a figure in, and their
    names (a column of "—" or "n/a" in every row tells a reader nothing: the 2013 totals
    at another N, device bytes on tmpfs)."""
    keep = [
        i
        for i in range(len(header))
        if i < text_columns or any(str(row[i]).strip() not in EMPTY_CELLS for row in rows)
    ]
    dropped = [name for i, name in enumerate(header) if i not in keep]
    return [header[i] for i in keep], [[row[i] for i in keep] for row in rows], dropped


def render_rows(
    header: list[str], rows: list[list[Any]], fmt: str = "md", text_columns: int = 1
) -> str:
    """A table: the first ``text_columns`` columns on the left, the figures on the right."""
    align = ["left"] * text_columns + ["right"] * (len(header) - text_columns)
    return table(header, rows, fmt, align)


def writers_text(found: Writers, limit: int = 3) -> str:
    """The top writers to a device and the share charged to no task, in one phrase."""
    shown = [
        f"{w.name}{' (kernel)' if w.kernel_thread else ''} {fmt_bytes(w.write_bytes)}"
        for w in found.top[:limit]
    ]
    share = found.unattributed_share
    text = ", ".join(shown or ["no task"]) + (
        f", {share:.0%} to no task" if share is not None else ""
    )
    if found.elsewhere_bytes:  # other tenants' processes: they wrote to other devices
        others = fmt_bytes(found.elsewhere_bytes)
        text += f" (apart, other processes holding no file on it: {others})"
    if found.own:  # a load's own processes: they load the server, they are not its writers
        mine = ", ".join(f"{w.name} {fmt_bytes(w.write_bytes)}" for w in found.own[:limit])
        text += f" (apart, vcsbench's own processes: {mine})"
    return text


def storage_text(throttle: Throttle) -> str:
    """A storage profile as a report's header gives it: the limits, where they come
    from, what the device delivered, and what it could not."""
    name = f"profile {throttle.profile}: " if throttle.profile else "limits: "
    source = f" ({throttle.source})" if throttle.source else ""
    delivered = []
    for key, rate in throttle.measured.items():
        direction, unit = key.split("_")
        shown = f"{rate:,.0f} {direction} IO/s" if unit == "iops" else f"{rate / 1e6:,.1f} MB/s"
        delivered.append(shown if unit == "iops" else f"{shown} {direction}")
    text = f"{name}{throttle.described}{source}; the device delivered {', '.join(delivered)}"
    return "; ".join([text, *throttle.notes, *(f"NOT HONOURED: {p}" for p in throttle.problems)])


def _number(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def harness_text(found: object) -> str | None:
    """The harness against a bare loop of the same calls, as a result records it
    (``harness.perturbation``): ``None`` where it was not measured or is malformed.
    Results before the check ran in blocks record pairs of rounds."""
    if not isinstance(found, dict):
        return None
    ratio = _number(found.get("ratio"))
    interval = found.get("interval")
    confidence = _number(found.get("confidence"))
    blocks, rounds, pairs = (_number(found.get(k)) for k in ("blocks", "rounds", "pairs"))
    if ratio is None or not isinstance(interval, list) or len(interval) != 2:
        return None
    low, high = (_number(v) for v in interval)
    if low is None or high is None or confidence is None:
        return None
    if blocks and rounds is not None:
        how = f"{blocks:,.0f} pairs of blocks, {rounds:,.0f} rounds a side"
    elif pairs is not None:
        how = f"{pairs:,.0f} alternating pairs of rounds"
    else:
        return None
    return (
        f"{history_by_name(str(found.get('label', ''))[:200])}: {ratio:.3f}x a bare loop of "
        "the same calls "
        f"({100 * confidence:.0f}% interval {low:.3f}-{high:.3f}x, {how})"
    )


def number(value: float | None) -> str:
    return "—" if value is None else f"{value:,.1f}"


def errors_text(errors: dict[str, int]) -> str:
    return ", ".join(f"{k} {v:,}" for k, v in sorted(errors.items())) or "0"


def level_text(load: Load, value: float | None) -> str:
    """A step's level as words: ``8 clients`` (closed loop), ``20 arrivals/s`` (open)."""
    if value is None:
        return "none"
    if load.shape == "closed":
        return f"{value:g} client" + ("" if value == 1 else "s")
    return f"{value:g} arrivals/s"
