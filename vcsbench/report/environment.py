"""The environment section of a report: where the figures were taken -- machine, system,
filesystems and storage, backends and their versions, cache, the harness check, the
command that reproduces the run, the result files."""

from __future__ import annotations

from pathlib import Path

from vcsbench.report.format import harness_text, storage_text
from vcsbench.results.model import Run


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
            add("cache", f"{bench.cache}; verify {bench.verify}")
            add("harness", harness_text(bench.harness.perturbation) or "")
        if result.command:
            add("command", result.command)
        add("results", f"{Path(result.path).name} ({result.datetime})")
    order = [
        "machine", "system", "filesystem", "storage", "backend", "payload", "cache", "harness",
        "command", "results",
    ]  # fmt: skip
    return sorted(lines, key=lambda line: order.index(line[0]))
