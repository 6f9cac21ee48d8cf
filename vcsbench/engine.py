"""``vcsbench run``'s engine: the same pytest-benchmark suite ``pytest benchmarks`` runs.

One engine, two doors: this builds the pytest command line from the selection and
runs it in this process, so both doors write the same JSON.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from vcsbench.errors import VcsbenchError

SUITE = Path(__file__).resolve().parent.parent / "benchmarks" / "test_vcs.py"
COMPACT_COLUMNS = "min,median,iqr,ops,rounds"


def suite_path() -> Path:
    if not SUITE.is_file():
        raise VcsbenchError(
            f"the benchmark suite {SUITE} is missing; install vcsbench from its source tree "
            "(pip install -e .)"
        )
    return SUITE


def run_suite(
    options: Mapping[str, str | list[str] | None],
    json_out: Path,
    extra_args: Sequence[str] = (),
    command: Sequence[str] = (),
) -> int:
    """Run the suite with ``--vcs-<key> value`` for each option; return pytest's exit code."""
    argv = [
        str(suite_path()),
        "--benchmark-only",
        f"--benchmark-json={json_out}",
        f"--benchmark-columns={COMPACT_COLUMNS}",
        "-p",
        "no:cacheprovider",
        "-o",
        "filterwarnings=default",
        "-q",
    ]
    for key, value in options.items():
        if value is None:
            continue
        for item in value if isinstance(value, list) else [value]:
            argv += [f"--vcs-{key}", item]
    argv += list(extra_args)
    json_out.parent.mkdir(parents=True, exist_ok=True)
    previous = os.environ.get("VCSBENCH_COMMAND")
    os.environ["VCSBENCH_COMMAND"] = shlex.join(command) if command else ""
    try:
        return int(pytest.main(argv))
    finally:
        if previous is None:
            os.environ.pop("VCSBENCH_COMMAND", None)
        else:
            os.environ["VCSBENCH_COMMAND"] = previous
