"""Result files of earlier formats read in the current one (see ``model.py``'s format
history): each migration takes one schema's shape to the next."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vcsbench.results.metrics import metric

SCHEMA_VERSION = 2
"""The format results are written in; its history is in ``model.py``."""
READABLE_SCHEMAS = (1, 2)


def migrate_benchmark(old: Mapping[str, Any]) -> dict[str, Any]:
    """A schema-1 benchmark in schema 2's shape; what 1 did not record is marked missing."""
    new = dict(old)
    rounds = dict(old.get("rounds") or {})
    values: dict[str, Any] = {}
    for old_key, new_key in (
        ("cpu_s", "cpu"),
        ("io_write_logical", "io_write_logical"),
        ("io_write_device", "io_write_device"),
    ):
        if old_key in rounds:
            values[new_key] = rounds.pop(old_key)
    rounds["values"] = values
    new["rounds"] = rounds
    metrics = dict(old.get("metrics") or {})
    user, sys_ = metrics.get("cpu_user") or {}, metrics.get("cpu_sys") or {}
    if user.get("total") is not None and sys_.get("total") is not None:
        repos = int(old.get("repos") or 0)
        total = float(user["total"]) + float(sys_["total"])
        metrics["cpu"] = {"unit": "s", "total": total, "per_repo": total / repos if repos else None}
    not_in_1 = "not recorded by schema 1 (apparent bytes then mixed content and directories)"
    for name in ("footprint_content", "footprint_dirs", "scratch_allocated", "scratch_inodes"):
        metrics[name] = {"unit": metric(name).unit, "total": None, "per_repo": None}
        metrics[name]["reason"] = not_in_1
    new["metrics"] = metrics
    new["schema_version"] = SCHEMA_VERSION
    return new
