"""The package's layers: each module imports only lower layers, and no two import each other.

Every import counts, including those inside functions, since a function-level
import is still a dependency (it only moves the failure to run time).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "hermes_fts"

# Lowest first.  A module may import modules of a lower layer and leaves.
LEAVES = {"_version", "_env", "_cjk_ranges", "content", "_sqlite", "_params"}
LAYERS = [
    {"loader"},
    {"query"},
    {"schema", "snippets"},
    {"indexing"},
    {"index_state"},
    {"transcript"},
    {"search"},
    {"store"},
    {"bench"},
    {"tool", "demo_data"},
    {"cli_tool"},
    {"cli", "hermes_plugin"},
]


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"] or ["__init__"]
    return parts[0]  # a subpackage (tool/, cli/) is one module of its layer


def _imports(source: str, inside_package: bool = False) -> set[str]:
    """Package modules ``source`` imports (relative or absolute), at any depth in the file.

    ``inside_package``: the file lives in a subpackage, whose ``from . import``
    names its own siblings.
    """
    tree = ast.parse(source)
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                if node.level == 1 and inside_package:
                    continue  # within the same subpackage
                if node.module:
                    found.add(node.module.split(".")[0])
                else:
                    found.update(alias.name for alias in node.names)
            elif node.module and node.module.startswith("hermes_fts."):
                found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("hermes_fts."):
                    found.add(alias.name.split(".")[1])
    return found


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        name = _module_name(path)
        if name == "__init__":
            continue  # the facade imports lazily, by name
        imports = _imports(path.read_text(encoding="utf-8"), path.parent != PACKAGE)
        graph.setdefault(name, set()).update(imports - {name})
    return graph


def _layer(name: str) -> int:
    if name in LEAVES:
        return -1
    for number, members in enumerate(LAYERS):
        if name in members:
            return number
    raise AssertionError(f"hermes_fts.{name} is in no layer: add it to LAYERS in this test")


def test_every_module_has_a_layer() -> None:
    for name in _graph():
        _layer(name)


def test_leaves_import_nothing_from_the_package() -> None:
    graph = _graph()
    for leaf in LEAVES & set(graph):
        assert graph[leaf] == set(), (leaf, graph[leaf])


def test_modules_import_only_lower_layers() -> None:
    graph = _graph()
    wrong = sorted((name, dep) for name, deps in graph.items() for dep in deps
                   if dep in graph and _layer(dep) >= _layer(name) and dep not in LEAVES)
    assert wrong == [], wrong


def test_no_import_cycles() -> None:
    graph = _graph()
    state: dict[str, int] = {}

    def visit(name: str, trail: list[str]) -> None:
        state[name] = 1
        for dep in sorted(graph.get(name, ())):
            if state.get(dep) == 1:
                pytest.fail("import cycle: " + " -> ".join([*trail, name, dep]))
            if dep in graph and not state.get(dep):
                visit(dep, [*trail, name])
        state[name] = 2

    for name in sorted(graph):
        if not state.get(name):
            visit(name, [])


def test_the_checker_sees_function_level_and_absolute_imports() -> None:
    nested = "def f():\n    from . import store\n    from .tool import y\n"
    assert _imports(nested) == {"store", "tool"}
    assert _imports("import hermes_fts.search\nfrom hermes_fts.query import x\n") == {
        "search", "query"}
    assert _imports("from . import sibling\nfrom .. import store\n", True) == {"store"}
