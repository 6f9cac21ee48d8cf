"""Where a report's rows come from, where its inputs differ in that: a label per machine
("A", "B", ...) and per result file holding a benchmark another file holds too."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from vcsbench.results.io import result_stem
from vcsbench.results.model import Benchmark


def run_labels(benches: Iterable[Benchmark]) -> dict[str, str]:
    """A run label per result file, where two files hold the same benchmark (variant, op,
    payload, fs): rows must then say which run they are."""
    seen: dict[tuple[str, str, str, str, str], set[str]] = {}
    for bench in benches:  # the same benchmark on the same machine in several files
        seen.setdefault((*bench.key, bench.machine), set()).add(bench.source)
    if all(len(sources) < 2 for sources in seen.values()):
        return {}
    sources = list(dict.fromkeys(b.source for b in benches))
    stems = [result_stem(src) for src in sources]
    if len(set(stems)) < len(stems):
        stems = [str(src) for src in sources]
    return dict(zip(sources, stems, strict=True))


def machine_labels(benches: Iterable[Benchmark]) -> dict[str, str]:
    """A short label per machine ("A", "B", ...) when the results come from several."""
    machines = list(dict.fromkeys(b.machine for b in benches))
    if len(machines) < 2:
        return {}
    return {m: chr(ord("A") + i) if i < 26 else str(i) for i, m in enumerate(machines)}


def origin_of(machines: dict[str, str], runs: dict[str, str]) -> Callable[[Benchmark], str] | None:
    """Where a row came from (machine, run), when the inputs differ in that."""
    if not machines and not runs:
        return None

    def origin(bench: Benchmark) -> str:
        parts = []
        if machines:
            parts.append(f"machine {machines[bench.machine]}")
        if runs:
            parts.append(f"run {runs[bench.source]}")
        return ", ".join(parts)

    return origin


def release_of(benches: Iterable[Benchmark]) -> Callable[[Benchmark], str]:
    """The release a row names, where the report holds one backend in several: its
    library versions that differ from another row's of the same backend (``pygit2 1.21.0,
    libgit2 1.9.0``), else "" (one release throughout: the environment section says it)."""
    by_name: dict[str, list[dict[str, str]]] = {}
    for bench in benches:
        by_name.setdefault(bench.backend.name, []).append(bench.backend.versions)
    differing = {
        name: [
            k
            for k in dict.fromkeys(k for v in found for k in v)
            if len({v.get(k) for v in found}) > 1
        ]
        for name, found in by_name.items()
    }

    def release(bench: Benchmark) -> str:
        versions = bench.backend.versions
        keys = differing.get(bench.backend.name, [])
        return ", ".join(f"{k} {versions[k]}" for k in keys if k in versions)

    return release


def named_release(label: str, release: str) -> str:
    """A row's label with its release, where it has one to name."""
    return f"{label} ({release})" if release else label
