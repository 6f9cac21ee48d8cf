"""Reading result files: pytest-benchmark JSON carrying ``extra_info["vcsbench"]``.

Report and compare code read results only through here; nothing here knows how the
numbers were taken. Format history: schema_version 1 is the first.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vcsbench.errors import VcsbenchError

SUPPORTED_SCHEMAS = (1,)


@dataclass
class BenchResult:
    """One benchmark of one result file."""

    source: str
    name: str
    backend: str
    op: str
    payload: str
    fs: str
    repos: int
    errors: int
    samples_s: list[float]
    info: dict[str, Any] = field(repr=False)
    machine: dict[str, Any] = field(repr=False, default_factory=dict)

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.op, self.payload, self.fs, self.backend)

    @property
    def failed(self) -> bool:
        return self.errors >= self.repos

    def quantile_ms(self, q: float) -> float | None:
        if self.failed or not self.samples_s:
            return None
        ordered = sorted(self.samples_s)
        if len(ordered) == 1:
            return ordered[0] * 1000
        position = q * (len(ordered) - 1)
        low = int(position)
        high = min(low + 1, len(ordered) - 1)
        return (ordered[low] + (ordered[high] - ordered[low]) * (position - low)) * 1000

    @property
    def median_ms(self) -> float | None:
        if self.failed or not self.samples_s:
            return None
        return statistics.median(self.samples_s) * 1000

    @property
    def iqr_ms(self) -> float | None:
        q1, q3 = self.quantile_ms(0.25), self.quantile_ms(0.75)
        return None if q1 is None or q3 is None else q3 - q1

    def metric(self, name: str) -> dict[str, Any]:
        metrics: dict[str, Any] = self.info.get("metrics", {})
        return metrics.get(name) or {
            "unit": "",
            "total": None,
            "per_repo": None,
            "reason": "not recorded",
        }

    def per_repo(self, name: str) -> float | None:
        value = self.metric(name).get("per_repo")
        return float(value) if value is not None else None

    @property
    def fs_info(self) -> dict[str, Any]:
        info: dict[str, Any] = self.info.get("filesystem", {})
        return info

    @property
    def backend_info(self) -> dict[str, Any]:
        info: dict[str, Any] = self.info.get("backend", {})
        return info


@dataclass
class ResultFile:
    path: str
    benchmarks: list[BenchResult]
    machine: dict[str, Any]
    command: str
    datetime: str


def _fail(path: Path, why: str) -> VcsbenchError:
    return VcsbenchError(f"{path}: {why}")


def load(path: Path | str) -> ResultFile:
    """Read one result file; a malformed, truncated or foreign file is one clear error."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise _fail(path, f"cannot be read ({exc.strerror})") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _fail(
            path,
            f"is not valid JSON (truncated or damaged? {exc.msg} at line "
            f"{exc.lineno}); expected a vcsbench/pytest-benchmark result file",
        ) from None
    if not isinstance(document, dict) or not isinstance(document.get("benchmarks"), list):
        raise _fail(path, "is not a pytest-benchmark result file (no 'benchmarks' list)")
    machine = document.get("machine_info") or {}
    benchmarks: list[BenchResult] = []
    for entry in document["benchmarks"]:
        info = (entry.get("extra_info") or {}).get("vcsbench")
        if info is None:
            continue
        if info.get("schema_version") not in SUPPORTED_SCHEMAS:
            raise _fail(
                path,
                f"vcsbench schema {info.get('schema_version')!r} is not one this "
                f"version reads ({', '.join(map(str, SUPPORTED_SCHEMAS))})",
            )
        try:
            stats = entry["stats"]
            samples = [float(x) for x in stats.get("data") or []]
            benchmarks.append(
                BenchResult(
                    source=str(path),
                    name=entry["name"],
                    backend=info["backend"]["name"],
                    op=info["op"],
                    payload=info["payload"]["name"],
                    fs=info["filesystem"]["spec"],
                    repos=int(info["repos"]),
                    errors=int(info["errors"]),
                    samples_s=samples,
                    info=info,
                    machine=machine,
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise _fail(path, f"benchmark {entry.get('name', '?')!r} lacks field {exc}") from None
    if not benchmarks:
        raise _fail(
            path,
            "holds no vcsbench benchmarks (was it written by vcsbench or "
            "'pytest benchmarks --benchmark-json'?)",
        )
    return ResultFile(
        path=str(path),
        benchmarks=benchmarks,
        machine=machine,
        command=(document.get("vcsbench") or {}).get("command", ""),
        datetime=str(document.get("datetime", "")),
    )


def load_many(paths: list[str] | list[Path]) -> list[ResultFile]:
    return [load(p) for p in paths]
