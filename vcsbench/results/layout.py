"""Where vcsbench's part of a result file lives, written and read here and nowhere else.

A result file is pytest-benchmark JSON (so pytest-benchmark's own ``compare`` reads it);
vcsbench keeps its part under its own name in three places:

- ``document["vcsbench"]``: the run's facts (version, schema, run id, command, the door it
  came in by, the selection, the machine's spread) and the benchmarks pytest-benchmark
  cannot hold (every round failed: it has no sample), ``failed_benchmarks``;
- ``benchmarks[i]["extra_info"]["vcsbench"]``: one benchmark
  (:class:`~vcsbench.results.model.Benchmark`'s JSON);
- ``machine_info["vcsbench"]``: the machine's facts; pytest-benchmark's host name beside
  them, ``machine_info["node"]``.

The engine writes through :func:`put_benchmark`, :func:`put_run` and :func:`put_machine`;
the reader (:mod:`vcsbench.results.io`) and ``--resume`` read through the others. A
document read from a file is data: every reader here takes what is not the shape it
expects as absent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

OURS = "vcsbench"
"""The name vcsbench's part goes by in each of the three places."""


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _dicts(value: object) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def run_facts(document: object) -> dict[str, Any]:
    """The run's facts, or {} where there are none."""
    return _dict(_dict(document).get(OURS))


def machine_facts(document: object) -> tuple[object, str]:
    """(the machine's facts as written, None where there are none; the host name, "")."""
    info = _dict(_dict(document).get("machine_info"))
    return info.get(OURS), str(info.get("node") or "")


def machine_part(document: dict[str, Any]) -> dict[str, Any]:
    """The machine's facts as written (a test's edit reaches the file); KeyError where
    there are none."""
    part: dict[str, Any] = document["machine_info"][OURS]
    return part


def benchmark_entries(document: object) -> list[tuple[str, object]]:
    """Each benchmark's part, with where it is (for an error to name): the kept ones, then
    those every round of which failed."""
    found: list[tuple[str, object]] = []
    entries = _dict(document).get("benchmarks")
    for i, entry in enumerate(entries if isinstance(entries, list) else []):
        info = _dict(entry.get("extra_info")).get(OURS) if isinstance(entry, dict) else None
        if info is not None:
            found.append((f"benchmarks[{i}].extra_info.{OURS}", info))
    failed = run_facts(document).get("failed_benchmarks")
    for i, info in enumerate(failed if isinstance(failed, list) else []):
        found.append((f"{OURS}.failed_benchmarks[{i}]", info))
    return found


@dataclass
class Carried:
    """The finished benchmarks of an earlier run that ``--resume`` keeps, as its file held
    them (pytest-benchmark's entries, and vcsbench's failed ones), for the new file."""

    entries: list[dict[str, Any]] = field(default_factory=list)
    failed: list[dict[str, Any]] = field(default_factory=list)

    @property
    def names(self) -> set[str]:
        """Their names (a benchmark's pytest id, ``test_vcs[...]``)."""
        kept = {str(_dict(_dict(e.get("extra_info")).get(OURS)).get("name")) for e in self.entries}
        return kept | {str(e.get("name")) for e in self.failed}

    def __len__(self) -> int:
        return len(self.entries) + len(self.failed)


def finished(document: object) -> Carried:
    """What of a run is finished: every benchmark but those an interrupt cut short."""
    entries = _dicts(_dict(document).get("benchmarks"))
    return Carried(
        [e for e in entries if not _dict(_dict(e.get("extra_info")).get(OURS)).get("partial")],
        [e for e in _dicts(run_facts(document).get("failed_benchmarks")) if not e.get("partial")],
    )


def benchmark_part(entry: dict[str, Any]) -> dict[str, Any]:
    """A kept benchmark's part, from pytest-benchmark's entry for it, as written (a test's
    edit reaches the file); KeyError where it has none."""
    part: dict[str, Any] = entry["extra_info"][OURS]
    return part


def put_benchmark(extra_info: dict[str, Any], info: dict[str, Any]) -> None:
    """A kept benchmark's part, into pytest-benchmark's entry for it."""
    extra_info[OURS] = info


def amend_benchmark(extra_info: dict[str, Any], key: str, value: object) -> bool:
    """One field of a kept benchmark's part written again; False where it has none."""
    if OURS not in extra_info:
        return False
    extra_info[OURS][key] = value
    return True


def written_to(extra_info: dict[str, Any], path: str) -> None:
    """A benchmark's part, once in the file, replaced in pytest-benchmark's own copy by
    where it was written."""
    extra_info[OURS] = {"written": path}


def put_run(
    output_json: dict[str, Any],
    facts: dict[str, Any],
    carried: Carried,
    failed: list[dict[str, Any]],
) -> None:
    """The run's facts, the benchmarks every round of which failed, and what ``--resume``
    carried from the run before, into the document."""
    output_json["benchmarks"] = [*carried.entries, *output_json.get("benchmarks", [])]
    output_json[OURS] = {**facts, "failed_benchmarks": [*carried.failed, *failed]}


def put_machine(machine_info: dict[str, Any], facts: dict[str, Any]) -> None:
    machine_info[OURS] = facts
