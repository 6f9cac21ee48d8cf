"""Load results for ``vcsbench report`` and ``vcsbench compare``: read, render, compare.

A load result file holds one object, ``vcsbench_load``: the run's plan and command, the
machine, and per access path its steps' figures, capacity and raw session records.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from vcsbench.errors import VcsbenchError
from vcsbench.load.run import SCHEMA, level_text, number


def read_json(path: Path) -> Any:
    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rt") as handle:
            return json.load(handle)
    except FileNotFoundError:
        raise VcsbenchError(f"{path}: no such file") from None
    except (OSError, ValueError) as exc:
        raise VcsbenchError(f"{path}: not a JSON result file ({exc})") from None


def is_load(document: Any) -> bool:
    return isinstance(document, dict) and "vcsbench_load" in document


def load_document(path: Path) -> dict[str, Any]:
    document = read_json(path)
    if not is_load(document):
        raise VcsbenchError(f"{path}: not a load result (written by 'vcsbench load')")
    version = document["vcsbench_load"].get("schema_version")
    if version != SCHEMA:
        raise VcsbenchError(
            f"{path}: load result schema {version!r}; this vcsbench reads schema {SCHEMA}"
        )
    result: dict[str, Any] = document
    return result


def compare_loads(base: dict[str, Any], other: dict[str, Any], names: tuple[str, str]) -> str:
    """Which run saturates later, per access path both ran (or the one each ran): the
    capacities, and p95 and ok/s at every step level both have."""
    a, b = base["vcsbench_load"], other["vcsbench_load"]
    if a["shape"] != b["shape"] or a["scenario"] != b["scenario"]:
        raise VcsbenchError(
            f"{names[1]} is a {b['scenario']} {b['shape']}-loop run and {names[0]} a "
            f"{a['scenario']} {a['shape']}-loop one; compare runs of one scenario and shape"
        )
    by_path = {e["path"]: e for e in b["loads"]}
    pairs = [(e, by_path[e["path"]]) for e in a["loads"] if e["path"] in by_path]
    if not pairs and len(a["loads"]) == len(b["loads"]) == 1:
        pairs = [(a["loads"][0], b["loads"][0])]
    if not pairs:
        raise VcsbenchError(f"{names[0]} and {names[1]} share no access path to compare")
    lines = [f"# Load: {names[1]} against {names[0]} ({a['scenario']}, {a['shape']} loop)", ""]
    for left, right in pairs:
        title_a = f"{left['path']} on {left['filesystem']['spec']}"
        title_b = f"{right['path']} on {right['filesystem']['spec']}"
        cap_a, cap_b = left["capacity"].get("level"), right["capacity"].get("level")
        if (cap_b or 0) > (cap_a or 0):
            verdict = f"**{title_b} saturates later**"
        elif (cap_a or 0) > (cap_b or 0):
            verdict = f"**{title_a} saturates later**"
        else:
            verdict = "both saturate at the same step"
        lines += [
            f"## {title_a} → {title_b}",
            "",
            f"Capacity: {level_text(cap_a, a['shape'])} → {level_text(cap_b, a['shape'])}: "
            f"{verdict}.",
            "",
            "| level | p95 ms | p95 ms (other) | ratio | ok/s | ok/s (other) | errors | errors "
            "(other) |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        right_steps = {row["level"]: row for row in right["steps"]}
        for row in left["steps"]:
            other_row = right_steps.get(row["level"])
            if other_row is None:
                continue
            p95, p95_b = row["latency_ms"]["p95"], other_row["latency_ms"]["p95"]
            ratio = f"{p95_b / p95:.2f}x" if p95 and p95_b else "—"
            lines.append(
                f"| {row['level']:g} | {number(p95)} | {number(p95_b)} | {ratio} "
                f"| {number(row['ops_per_s'])} | {number(other_row['ops_per_s'])} "
                f"| {sum(row['errors'].values())} | {sum(other_row['errors'].values())} |"
            )
        lines.append("")
    return "\n".join(lines)
