"""The package's layers import in one direction only; checked on every `make test`.

The layers form a plain chain (``CHAIN``): a layer imports only layers before it, with
one narrower rule -- the report reads results and nothing about how numbers were taken.
``vcsbench.errors`` and ``vcsbench.process`` (stop signals, what is up) are below every
layer. ``docs/architecture.md`` lists the same chain; a test holds them together.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from helpers import REPO

PACKAGE = REPO / "vcsbench"
CHAIN = (
    "backends",
    "sandbox",
    "results",
    "judge",
    "store",
    "measure",
    "servers",
    "workload",
    "bench",
    "report",
    "load",
    "studies",
    "cli",
)
NARROWER = {
    "report": {"results", "judge", "store"},
    "backends": set(),
    "sandbox": set(),
    "results": set(),
    "judge": {"results"},
    "store": {"results"},
    "load": set(CHAIN[: CHAIN.index("load")]) - {"bench"},
}
"""Layers that may import fewer than everything before them: the two engines stand side by
side, the load engine knowing nothing of the benchmark engine."""
ALLOWED: dict[str, set[str]] = {
    layer: NARROWER.get(layer, set(CHAIN[:i])) for i, layer in enumerate(CHAIN)
}
ALWAYS = {"errors", "process", "owned", "__init__"}


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


def test_the_architecture_page_lists_the_chain() -> None:
    page = (REPO / "docs" / "architecture.md").read_text()
    listed = re.findall(r"^\d+\. `([a-z]+)/`", page, re.M)
    assert list(CHAIN) == listed, "docs/architecture.md lists the layers of CHAIN, in order"


TESTS = REPO / "tests"
APART = {"data": "result files the tests read", "system": "whole commands, run as a user runs them"}


def test_the_tests_are_in_folders_that_mirror_the_layers() -> None:
    """tests/LAYER/ holds the tests of that layer (a test may run whole commands to prove
    it); tests/system/ the behaviours of a whole run (signals, cleanup, resume, install)."""
    folders = {p.name for p in TESTS.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))}
    assert set() == folders - set(CHAIN) - set(APART), "a folder of tests/ that is no layer"
    loose = sorted(p.name for p in TESTS.glob("test_*.py"))
    assert ["test_layers.py"] == loose, "a test file outside the layers' folders"


MAX_LINES = 450
"""No module longer: a module that outgrows it holds two things."""


TOOLS = REPO / "tools"
"""The project's scripts (the bare loop, history converters): above every layer, held to the
same limit."""


def test_no_module_is_longer_than_the_limit() -> None:
    long = {
        str(p.relative_to(REPO)): n
        for p in [*PACKAGE.rglob("*.py"), *TOOLS.glob("*.py")]
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert {} == long, f"modules over {MAX_LINES} lines: split them"


def module_name(path: Path, root: Path = PACKAGE) -> str:
    """A module's dotted name; a package's ``__init__.py`` is the package."""
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(("vcsbench", *parts[: -1 if parts[-1] == "__init__" else None]))


def module_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the modules of the package it imports, packages' ``__init__.py`` included
    (as the package). ``from vcsbench.p import m`` where ``m`` is a module of ``p`` imports
    ``m``; any other name taken from ``p`` is ``p``'s own, so a module of ``p`` that takes
    one while ``p`` imports that module is a circle through ``p``."""
    names = {module_name(p, root): p for p in root.rglob("*.py")}
    return {name: _imports(path, set(names)) - {name} for name, path in names.items()}


def _imports(path: Path, names: set[str]) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in names)
        elif isinstance(node, ast.ImportFrom) and node.module in names and node.level == 0:
            for alias in node.names:
                module = f"{node.module}.{alias.name}"
                found.add(module if module in names else node.module)
    return found


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_modules_import_each_other_in_a_circle() -> None:
    assert [] == circles(module_graph())


def test_the_circle_check_finds_a_planted_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert [["a", "b", "c"]] == circles(graph)


def test_the_circle_check_sees_a_circle_through_a_package(tmp_path: Path) -> None:
    """A package that imports its module, whose module takes a name the package offers:
    a circle through ``__init__.py`` (importing the module alone fails half-made)."""
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "__init__.py").write_text("from vcsbench.p.a import A\nB = 1\n")
    (tmp_path / "p" / "a.py").write_text("from vcsbench.p import B\nA = B\n")
    (tmp_path / "p" / "c.py").write_text("from vcsbench.p import a\n")
    graph = module_graph(tmp_path)
    assert [["vcsbench.p", "vcsbench.p.a"]] == circles(graph)
    assert {"vcsbench.p.a"} == graph["vcsbench.p.c"], "a module named from its package"


def test_the_yardsticks_work_imports_no_vcsbench_code() -> None:
    """tools/barecalls.py is what the bare loop times: the yardstick, not the instrument."""
    assert set() == imported_layers(TOOLS / "barecalls.py")


def test_the_check_catches_the_load_engine_importing_the_benchmark_engine(
    tmp_path: Path,
) -> None:
    planted = tmp_path / "bad.py"
    planted.write_text("from vcsbench.bench.options import OPTIONS\n")
    assert {"bench"} == imported_layers(planted) - ALLOWED["load"] - ALWAYS
