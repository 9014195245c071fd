"""The package's shape (docs/DESIGN.md §2): layers, no cycles, small functions
and modules, nothing pointing outside the repository.

Every module of ``hermes_fts`` is parsed (not imported) and every import in it
counts: module level and inside functions, absolute and relative.  A module
may import only modules of a lower layer and the leaf modules; inside one
package (``tool/``, ``cli/``) its modules may import each other, without
cycles.  ``hermes_fts/__init__.py`` is the facade: at module level it imports
only leaf modules, and the loader for type checkers; every public name on first
use (tests/test_start.py checks what ``import hermes_fts`` loads).
"""

from __future__ import annotations

import ast
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "hermes_fts"
PKG = "hermes_fts"

LEAF = 0
# The layer table of docs/DESIGN.md §2, bottom first.  A module may import
# modules of a lower layer and leaf modules (layer 0), never a higher or an
# equal one (except its own package's modules).  Listed modules that do not
# exist yet are fine; a module that exists but is not listed fails the test.
LAYERS: dict[str, int] = {
    # leaf: importable by every layer, they import no other package module
    "_version": LEAF,
    "_env": LEAF,
    "_cjk_ranges": LEAF,
    "content": LEAF,
    "_sqlite": LEAF,
    "_store_problems": LEAF,
    "_platform": LEAF,
    "_params": LEAF,
    "_index_text": LEAF,
    "_display": LEAF,
    "query.typed": LEAF,
    "query.tree": LEAF,
    "query.syntax": LEAF,
    "query.wordforms": LEAF,
    "query.cjk_forms": LEAF,
    "query.timewords": LEAF,
    "query.timeranges": LEAF,
    "query.timespans": LEAF,
    "query.question": LEAF,
    "_cjk_variants": LEAF,
    "hermes.config": LEAF,
    "hermes.agent": LEAF,
    "loader": 1,
    "_sharing": 1,
    "query.best": 1,
    "query.plan": 2,
    "search.request": 3,
    "search.like": 3,
    "index.schema": 3,
    "index.maintain": 4,
    "index.pending": 5,
    "search.evidence": 4,
    "search.route": 4,
    "index.rank_bounds": 4,
    "index.old_layout": 5,
    "index.health": 5,
    "index.space": 5,
    "index.removal": 5,
    "listing": 4,
    "transcript": 5,
    "writes": 5,
    "search.snippets": 5,
    "search.rows": 6,
    "search.sessions": 5,
    "search.topk": 6,
    "index.time_table": 5,
    "search.run": 7,
    "index.slowed": 4,
    "index.lifecycle": 6,
    "index.align": 7,
    "index.status": 6,
    "index.optimize": 7,
    "admin": 8,
    "store": 9,
    "bench": 10,
    "hermes.host": 10,
    "hermes.upkeep": 10,
    "hermes.serving": 10,
    "tool": 11,
    "tool.spec": 11,
    "tool.args": 11,
    "tool.profiles": 11,
    "tool.context": 11,
    "tool.discover": 11,
    "tool.sessions": 11,
    "tool.shape": 11,
    "tool.errors": 11,
    "cli": 12,
    "cli.__main__": 12,
    "cli.registry": 12,
    "cli.output": 12,
    "cli.progress": 12,
    "cli.admin": 12,
    "cli.history": 12,
    "cli.messages": 12,
    "cli.demo": 12,
    "cli.timing": 12,
    "cli.writing": 12,
    "cli.remove": 12,
    "cli.status_lines": 12,
    # The Hermes Agent plugin sits on top: it wires the tool and the CLI into
    # Hermes, and nothing in the package imports it.
    "hermes.commands": 13,
    "hermes.plugin": 14,
    # ``python -m hermes_fts``: the command line, run.
    "__main__": 13,
    # Package docstrings only: what each subsystem owns.
    "query": LEAF,
    "search": LEAF,
    "index": LEAF,
    "hermes": LEAF,
}
# Subsystem packages, bottom first: a module may import from its own package or
# an earlier one (leaf modules excepted), never a later one.  ``hermes/`` spans
# the stack (a leaf reading config.yaml, what the CLI reports of an install, the
# plugin on top), so the layers above place its modules.
PACKAGE_ORDER = ("query", "index", "search", "tool", "cli")
# Packages whose modules are peers, free to import each other (without cycles);
# inside the others the layers above hold too.
PEER_PACKAGES = ("tool", "cli")
FACADE = "__init__"
# The facade's module-level imports: leaf modules, and the loader's names for
# type checkers only (``import hermes_fts`` must stay cheap and must never
# import Hermes Agent).
FACADE_EAGER_MAX_LAYER = 1
# Layers that never touch a sqlite3 connection: they go through SessionStore.
NO_CONNECTION_LAYERS = (11, 12, 13, 14)
# Counted on the formatted tree (CI runs `ruff format --check`), so a module
# cannot meet them by density.  Split code by job, never to fit a count.
MAX_LINES = 800
MAX_FUNCTION_LINES = 70
GENERATED = {"_cjk_ranges", "_cjk_variants"}  # written by csrc/gen_cjk_*.py
# Only the top layer may import the facade: the facade imports modules on
# first use by name, which no parse sees, so below the top such an import
# could close a cycle that no test would find.
FACADE_IMPORTERS = {"hermes.plugin"}


@dataclass(frozen=True)
class Import:
    target: str  # module name relative to the package ("tool.args", "__init__")
    line: int
    in_function: bool


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {
        _module_name(p): p for p in sorted(PACKAGE.rglob("*.py")) if "__pycache__" not in p.parts
    }


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _resolve(base: list[str], name: str, known: dict[str, Path]) -> str | None:
    """``base`` (package path parts inside hermes_fts) + ``name`` -> a module we know."""
    dotted = ".".join([*base, *([name] if name else [])])
    if dotted == "":
        return FACADE
    return dotted if dotted in known else None


class _Collector(ast.NodeVisitor):
    def __init__(self, module: str, path: Path, known: dict[str, Path]) -> None:
        self.module, self.path, self.known = module, path, known
        self.depth = 0
        self.imports: list[Import] = []
        self.unresolved: list[tuple[str, int]] = []
        package = module.split(".") if module != FACADE else []
        self.package = package if _is_package(path) else package[:-1]

    def _add(self, target: str | None, spelled: str, node: ast.AST) -> None:
        line = getattr(node, "lineno", 0)
        if target is None:
            self.unresolved.append((spelled, line))
        else:
            self.imports.append(Import(target, line, self.depth > 0))

    def _function(self, node: ast.AST) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            parts = alias.name.split(".")
            if parts[0] == PKG:
                self._add(_resolve(parts[1:], "", self.known), alias.name, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            up = node.level - 1
            if up > len(self.package):
                self._add(None, "." * node.level + (node.module or ""), node)
                return
            base = self.package[: len(self.package) - up]
        elif node.module and node.module.split(".")[0] == PKG:
            base = []
        else:
            return  # not our package
        parts = base + [p for p in (node.module or "").split(".") if p and p != PKG]
        for alias in node.names:
            # `from X import name`: the submodule X.name if there is one, else X itself.
            sub = _resolve(parts, alias.name, self.known)
            target = sub or _resolve(parts, "", self.known)
            self._add(
                target, "." * node.level + (node.module or "") + f" import {alias.name}", node
            )


def _graph() -> tuple[dict[str, Path], dict[str, list[Import]], list[str]]:
    known = _modules()
    known_with_facade = {**known, FACADE: PACKAGE / "__init__.py"}
    graph: dict[str, list[Import]] = {}
    problems: list[str] = []
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        collector = _Collector(name, path, known_with_facade)
        collector.visit(tree)
        graph[name] = [i for i in collector.imports if i.target != name]
        problems += [
            f"{name}:{line}: `{spelled}` names no module of hermes_fts"
            for spelled, line in collector.unresolved
        ]
    return known, graph, problems


def _unit(module: str) -> str:
    return module.split(".")[0]


def _file(module: str) -> str:
    path = PACKAGE / "__init__.py" if module == FACADE else _modules()[module]
    return path.relative_to(ROOT).as_posix()


def _where(module: str, imp: Import) -> str:
    return f"{_file(module)}:{imp.line}" + (" (inside a function)" if imp.in_function else "")


def test_every_module_has_a_layer():
    modules, _graph_, _ = _graph()
    unknown = sorted(m for m in modules if m != FACADE and m not in LAYERS)
    assert not unknown, (
        f"modules without a layer: {unknown}. Add each to LAYERS in tests/test_layering.py "
        "(and to the layer table in docs/DESIGN.md §2), in the layer whose modules it uses."
    )


def test_every_import_names_a_module_that_exists():
    _modules_, _graph_, problems = _graph()
    assert not problems, "\n".join(problems)


def test_no_module_imports_a_higher_or_equal_layer():
    _modules_, graph, _ = _graph()
    bad = []
    for module, imports in graph.items():
        if module == FACADE or module not in LAYERS:
            continue
        mine = LAYERS[module]
        for imp in imports:
            if imp.target == FACADE and module not in FACADE_IMPORTERS:
                bad.append(
                    f"{_where(module, imp)} imports the hermes_fts facade; "
                    "import the module that defines the name"
                )
                continue
            theirs = LAYERS.get(imp.target)
            if imp.target == FACADE or theirs is None:
                continue  # reported by test_every_module_has_a_layer
            if _unit(imp.target) == _unit(module) in PEER_PACKAGES:
                continue  # peers (cycles are checked separately)
            if mine != LEAF and theirs != LEAF and theirs >= mine:
                bad.append(
                    f"{_where(module, imp)}: {module} (layer {mine}) imports "
                    f"{imp.target} (layer {theirs})"
                )
    assert not bad, "\n".join(bad)


def test_subsystem_packages_import_only_earlier_ones():
    _modules_, graph, _ = _graph()
    rank = {package: i for i, package in enumerate(PACKAGE_ORDER)}
    bad = [
        f"{_where(module, imp)}: {module} imports {imp.target}, a later package"
        for module, imports in graph.items()
        if _unit(module) in rank
        for imp in imports
        if _unit(imp.target) in rank
        and LAYERS.get(imp.target) != LEAF
        and rank[_unit(imp.target)] > rank[_unit(module)]
    ]
    assert not bad, "\n".join(bad)


def test_leaf_modules_import_only_leaf_modules():
    _modules_, graph, _ = _graph()
    bad = [
        f"{_where(m, i)}: leaf module {m} imports {i.target}"
        for m, imports in graph.items()
        if LAYERS.get(m) == LEAF
        for i in imports
        if LAYERS.get(i.target) != LEAF
    ]
    assert not bad, "\n".join(bad)


def test_the_facade_imports_only_leaf_modules_and_the_loader_eagerly():
    _modules_, graph, _ = _graph()
    bad = []
    for imp in graph.get(FACADE, []):
        layer = LAYERS.get(imp.target)
        if imp.target == "hermes_plugin":
            bad.append(f"{_where(FACADE, imp)}: the facade must never import the Hermes plugin")
        elif not imp.in_function and (layer is None or layer > FACADE_EAGER_MAX_LAYER):
            bad.append(
                f"{_where(FACADE, imp)}: eager import of {imp.target}; import it on "
                "first use (see __getattr__)"
            )
    assert not bad, "\n".join(bad)


def _cycles(graph: dict[str, list[Import]]) -> Iterator[list[str]]:
    """Each strongly connected component with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    counter = [0]

    def visit(node: str) -> Iterator[list[str]]:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for imp in graph.get(node, []):
            if imp.target not in index:
                yield from visit(imp.target)
                low[node] = min(low[node], low[imp.target])
            elif imp.target in on_stack:
                low[node] = min(low[node], index[imp.target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                yield sorted(component)

    for node in sorted(graph):
        if node not in index:
            yield from visit(node)


def test_no_import_cycles_function_level_imports_included():
    _modules_, graph, _ = _graph()
    found = list(_cycles(graph))
    detail = []
    for component in found:
        members = set(component)
        edges = [
            f"  {_where(m, i)} -> {i.target}"
            for m in component
            for i in graph[m]
            if i.target in members
        ]
        detail.append(" <-> ".join(component) + "\n" + "\n".join(edges))
    assert not found, "import cycles:\n" + "\n".join(detail)


def test_the_cycle_finder_finds_a_mutual_import():
    # The checker itself must be able to fail.
    two = {"a": [Import("b", 1, True)], "b": [Import("a", 2, False)], "c": []}
    assert list(_cycles(two)) == [["a", "b"]]
    assert list(_cycles({"a": [Import("b", 1, False)], "b": []})) == []


def test_tool_and_cli_layers_never_touch_a_connection():
    modules, _graph_, _ = _graph()
    bad = []
    for module, path in modules.items():
        if LAYERS.get(module) not in NO_CONNECTION_LAYERS:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("conn", "_conn"):
                bad.append(f"{_file(module)}:{node.lineno}: .{node.attr}")
    assert not bad, (
        "the tool and CLI layers go through SessionStore methods, never its "
        "connection:\n" + "\n".join(bad)
    )


def test_the_query_package_holds_no_sql():
    """``query/`` is the language alone (docs/DESIGN.md §2): text in, a plan out,
    testable without a store; ``search/`` runs the plan."""
    modules, _graph_, _ = _graph()
    bad = []
    for module, path in modules.items():
        if not module.startswith("query."):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            bad += [f"{_file(module)}:{node.lineno}: {n}" for n in names if n == "sqlite3"]
    assert [m for m in modules if m.startswith("query.")], "no query package found"
    assert not bad, "query/ imports sqlite3:\n" + "\n".join(bad)


def test_no_module_is_longer_than_the_limit():
    modules, _graph_, _ = _graph()
    long = {
        m: n
        for m, p in modules.items()
        if m not in GENERATED and (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines (split them by job): {long}"


def _long_functions(source: str, limit: int) -> list[tuple[str, int]]:
    """(name, lines) of every function or method in ``source`` longer than ``limit``."""
    return [
        (node.name, node.end_lineno - node.lineno + 1)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > limit
    ]


def test_no_function_is_longer_than_the_limit():
    modules, _graph_, _ = _graph()
    long = {
        f"{m}.{name}": n
        for m, p in modules.items()
        if m not in GENERATED
        for name, n in _long_functions(p.read_text(encoding="utf-8"), MAX_FUNCTION_LINES)
    }
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines (split them by job): {long}"


def test_the_function_length_check_can_fail():
    body = "\n".join(f"    x = {i}" for i in range(5))
    assert _long_functions(f"def f():\n{body}\n", 5) == [("f", 6)]
    assert _long_functions(f"def f():\n{body}\n", 6) == []


# Built from pieces so this file does not match itself.
OUTSIDE_POINTERS = (
    "../" + "shared",
    "/work/" + "shared",
    "shared/" + "DESIGN.md",
    "shared/" + "spec",
    "spec " + "§",
    "DESIGN.md " + "decision",
)


def _tracked_files() -> list[Path]:
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60
        ).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"not a git checkout ({exc}); this check reads `git ls-files`")
    return [ROOT / name for name in out.decode().split("\0") if name]


def _text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
        return None


def test_nothing_in_the_repository_points_outside_it():
    bad = []
    for path in _tracked_files():
        text = _text(path)
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            for pointer in OUTSIDE_POINTERS:
                if pointer in line:
                    bad.append(f"{path.relative_to(ROOT)}:{number}: {pointer!r}: {line.strip()}")
    assert not bad, (
        "references that no user of the repository can open (cite "
        "docs/DESIGN.md §N instead):\n" + "\n".join(bad)
    )


def test_every_cited_design_section_exists():
    design = ROOT / "docs" / "DESIGN.md"
    assert design.is_file(), "docs/DESIGN.md is the design's home"
    sections = set(re.findall(r"^#+ (\d+(?:\.\d+)*)\.? ", design.read_text(encoding="utf-8"), re.M))
    bad = []
    for path in _tracked_files():
        text = _text(path)
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            for cited in re.findall(r"DESIGN\.md §(\d+(?:\.\d+)*)", line):
                if cited not in sections:
                    bad.append(f"{path.relative_to(ROOT)}:{number}: §{cited}")
    assert not bad, "citations of sections docs/DESIGN.md does not have:\n" + "\n".join(bad)
