"""The tool and CLI packages keep their layer: no SQL, no connection, no upward import.

Read from the source with ``ast`` (function-level imports included), so a
shortcut added anywhere in ``hermes_fts/tool`` or ``hermes_fts/cli`` fails here.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "hermes_fts"
TOOL = PACKAGE / "tool"
CLI = PACKAGE / "cli"

# The order inside each package, bottom first: a module may import only modules
# listed before it.  Modules on one line are peers and must not import each other.
TOOL_LAYERS = [
    {"errors"},
    {"args"},
    {"spec", "shape"},
    {"profiles"},
    {"context"},
    {"discover", "sessions"},
    {"__init__"},
]
CLI_LAYERS = [
    {"output"},
    {"progress", "registry", "messages", "status_lines"},
    {"writing"},
    {"admin", "history", "demo", "timing", "remove"},
    {"__init__"},
    {"__main__"},
]
# What the tool may use from the rest of the package: the store and leaf helpers.
TOOL_MAY_IMPORT = {
    "hermes_fts.store",
    "hermes_fts._env",
    "hermes_fts._params",
    "hermes_fts.content",
    "hermes_fts._display",  # whole_prefix: a message cut where a character ends
}
CLI_MAY_IMPORT = {
    "hermes_fts._env",
    "hermes_fts._version",
    "hermes_fts._params",
    "hermes_fts.content",
    "hermes_fts.store",
    "hermes_fts.tool",
    "hermes_fts.tool.args",
    "hermes_fts.tool.errors",
    "hermes_fts.tool.profiles",
    "hermes_fts.search.snippets",  # readable_text: stored text as people read it
    "hermes_fts._display",  # terminal columns of wide characters
    "hermes_fts.loader",
    "hermes_fts._sqlite",
    "hermes_fts._store_problems",  # a file check
    "hermes_fts._sharing",  # pause_when_shared, the run lock: the command's own pacing
    "hermes_fts.index.slowed",  # needs_optimize's codes in words, as status says them
    "hermes_fts.bench",
    "hermes_fts.hermes.host",
    "hermes_fts.hermes",  # where `from ..hermes import host` finds it
}
# Attribute names that mean a connection is being used.
CONNECTION_ATTRIBUTES = {"conn", "_conn", "execute", "executemany", "executescript", "cursor"}


def _modules(folder: Path) -> dict[str, ast.Module]:
    return {p.stem: ast.parse(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.py"))}


def _imports(tree: ast.Module, package: str) -> set[str]:
    """Absolute names of every module ``tree`` imports (relative imports resolved)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            if node.module:
                found.add(stem)
            else:  # ``from . import x`` and ``from .. import x`` import modules
                found.update(f"{stem}.{alias.name}" for alias in node.names)
    return found


def _internal(names: set[str]) -> set[str]:
    return {n for n in names if n == "hermes_fts" or n.startswith("hermes_fts.")}


@pytest.mark.parametrize(
    ("folder", "package", "layers"),
    [(TOOL, "hermes_fts.tool", TOOL_LAYERS), (CLI, "hermes_fts.cli", CLI_LAYERS)],
    ids=["tool", "cli"],
)
def test_each_module_imports_only_modules_below_it(folder, package, layers):
    modules = _modules(folder)
    assert set(modules) == set().union(*layers), "a module is missing from the layer list"
    rank = {name: depth for depth, group in enumerate(layers) for name in group}
    for name, tree in modules.items():
        for target in _internal(_imports(tree, package)):
            if not target.startswith(package + ".") and target != package:
                continue
            inner = target[len(package) + 1 :].split(".")[0] if target != package else "__init__"
            if inner not in modules:  # ``from . import name``: a name of the package itself
                inner = "__init__"
            assert rank[inner] < rank[name], f"{package}.{name} imports {target} (not below it)"


@pytest.mark.parametrize(
    ("folder", "package", "allowed"),
    [(TOOL, "hermes_fts.tool", TOOL_MAY_IMPORT), (CLI, "hermes_fts.cli", CLI_MAY_IMPORT)],
    ids=["tool", "cli"],
)
def test_only_the_store_and_leaf_helpers_are_used_from_below(folder, package, allowed):
    for name, tree in _modules(folder).items():
        for target in _internal(_imports(tree, package)):
            if target == package or target.startswith(package + "."):
                continue
            assert target in allowed, f"{package}.{name} imports {target}"


@pytest.mark.parametrize("folder", [TOOL, CLI], ids=["tool", "cli"])
def test_no_sql_and_no_connection(folder):
    for name, tree in _modules(folder).items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                assert node.attr not in CONNECTION_ATTRIBUTES, (
                    f"{folder.name}/{name}.py line {node.lineno} uses .{node.attr}"
                )
                if isinstance(node.value, ast.Name) and node.value.id == "sqlite3":
                    # exception classes only: sqlite3.Error, sqlite3.DatabaseError
                    assert node.attr.endswith("Error"), (
                        f"{folder.name}/{name}.py: sqlite3.{node.attr}"
                    )
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value.upper()
                assert not ("SELECT " in text and " FROM " in text), (
                    f"{folder.name}/{name}.py line {node.lineno} holds SQL"
                )


def test_the_tool_never_imports_sqlite3():
    for name, tree in _modules(TOOL).items():
        assert "sqlite3" not in _imports(tree, "hermes_fts.tool"), name


@pytest.mark.parametrize("folder", [TOOL, CLI], ids=["tool", "cli"])
def test_modules_stay_small(folder):
    for path in folder.glob("*.py"):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        assert lines <= 600, f"{path.name} has {lines} lines"


def test_public_names_unchanged():
    import hermes_fts
    from hermes_fts.cli import main
    from hermes_fts.tool import TOOL_SCHEMA, session_search

    assert hermes_fts.session_search is session_search
    assert hermes_fts.TOOL_SCHEMA is TOOL_SCHEMA
    assert callable(main)
    assert sys.modules["hermes_fts.tool"].__all__ == ["TOOL_SCHEMA", "session_search"]
