"""The environment section of a report: where the figures were taken -- machine, system,
filesystems and storage, backends and their versions, cache, the harness check, the
command that reproduces the run, the result files."""

from __future__ import annotations

from pathlib import Path

from vcsbench.report.format import harness_text, storage_text
from vcsbench.results.metrics import KEPT_FOOTPRINT
from vcsbench.results.model import Benchmark, Run


def kept_text(bench: Benchmark) -> str:
    """How a benchmark's footprint as kept was had: by which maintenance, of how many of
    its repositories, at what cost (a result file is data: odd values read as "?")."""
    kept = bench.harness.kept
    if not kept:
        figure = bench.metrics.get(KEPT_FOOTPRINT)  # None: an older result
        return f"{bench.case}: as written only ({figure.reason})" if figure else ""

    def count(key: str) -> str:
        value = kept.get(key)
        return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else "?"

    seconds = kept.get("maintenance_s_per_repo")
    cost = f", {seconds:.2f} s each" if isinstance(seconds, (int, float)) and seconds else ""
    by = str(kept.get("by", "?"))[:120]
    after = by if by.startswith("as written") else f"as written, and as kept after {by}"
    return f"{bench.case}: {after} ({count('repositories')} of {count('of')} repositories{cost})"


def payload_digests(runs: list[Run]) -> dict[str, set[str]]:
    """Each payload name (as shown) -> the SHA-256s of its files among ``runs``: more than
    one is the same name over other work."""
    found: dict[str, set[str]] = {}
    for run in runs:
        for bench in run.benchmarks:
            if bench.payload.sha256:
                found.setdefault(bench.payload.shown, set()).add(bench.payload.sha256)
    return found


def environment(files: list[Run]) -> list[tuple[str, str]]:
    """(label, value) lines describing where and how the results were obtained."""
    lines: list[tuple[str, str]] = []

    def add(label: str, value: str) -> None:
        if value and (label, value) not in lines:
            lines.append((label, value))

    for result in files:
        machine = result.machine
        add("machine", machine.description)
        add(
            "system",
            f"{machine.distribution or '?'}, kernel {machine.kernel or '?'}, "
            f"Python {machine.python or '?'}",
        )
        for bench in result.benchmarks:
            fs = bench.filesystem
            device = fs.device or "no device counters"
            if fs.device_shared:
                device += " (shared with everything else on it)"
            add("filesystem", f"{fs.spec}: {fs.fstype} ({fs.mount_options}) on {device}")
            if fs.throttle is not None:
                add("storage", f"{fs.spec}: {storage_text(fs.throttle)}")
            backend = bench.backend
            versions = ", ".join(f"{k} {v}" for k, v in backend.versions.items())
            options = ", ".join(f"{k}={v}" for k, v in backend.options.items() if v)
            durability = f"; durability: {backend.durability}" if backend.durability else ""
            add(
                "backend",
                f"{bench.label}: {versions}"
                + (f"; options {options}" if options else "")
                + durability,
            )
            history = bench.payload.history_text()
            if history:
                add("payload", f"{bench.payload.shown}: {history}")
            add("footprint", kept_text(bench))
            add("cache", f"{bench.cache}; verify {bench.verify}")
            add("harness", harness_text(bench.harness.perturbation) or "")
        if result.command:
            add("command", result.command)
        add("results", f"{Path(result.path).name} ({result.datetime})")
    for name, found in sorted(payload_digests(files).items()):
        if len(found) > 1:
            add(
                "payload",
                f"{name}: {len(found)} different contents under this one name (sha256 "
                f"{', '.join(d[:12] for d in sorted(found))}): its rows are not the same work",
            )
    order = [
        "machine", "system", "filesystem", "storage", "backend", "payload", "footprint", "cache",
        "harness",
        "command", "results",
    ]  # fmt: skip
    return sorted(lines, key=lambda line: order.index(line[0]))
