"""The package's layers import in one direction only; checked on every `make test`.

backends -> sandbox, measure -> bench -> results -> report -> load -> cli: a layer imports only
the layers named in ``ALLOWED`` for it (and ``vcsbench.errors`` / the package root).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from helpers import REPO

PACKAGE = REPO / "vcsbench"
ALLOWED: dict[str, set[str]] = {
    "backends": set(),
    "sandbox": set(),
    "measure": {"sandbox"},
    "results": set(),
    "bench": {"backends", "sandbox", "measure", "results"},
    "report": {"results"},
    "load": {"backends", "sandbox", "measure", "results", "bench", "report"},
    "cli": {"backends", "sandbox", "measure", "results", "bench", "report", "load"},
}
ALWAYS = {"errors", "process", "__init__"}


def layer_of(path: Path) -> str:
    return path.relative_to(PACKAGE).parts[0].removesuffix(".py")


def imported_layers(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            parts = name.split(".")
            if parts[0] == "vcsbench":
                found.add(parts[1] if len(parts) > 1 else "__init__")
    return found


MODULES = sorted(p for p in PACKAGE.rglob("*.py") if len(p.relative_to(PACKAGE).parts) > 1)


def test_every_module_belongs_to_a_known_layer() -> None:
    assert {layer_of(p) for p in MODULES} == set(ALLOWED)


@pytest.mark.parametrize("module", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_module_imports_only_the_layers_below_it(module: Path) -> None:
    layer = layer_of(module)
    wrong = imported_layers(module) - ALLOWED[layer] - ALWAYS - {layer}
    assert set() == wrong, f"{module.relative_to(REPO)} ({layer}) imports {sorted(wrong)}"


def test_the_check_catches_a_report_that_imports_measurement(tmp_path: Path) -> None:
    planted = tmp_path / "bad.py"
    planted.write_text("from vcsbench.measure.probes import footprint\n")
    assert {"measure"} == imported_layers(planted) - ALLOWED["report"] - ALWAYS
