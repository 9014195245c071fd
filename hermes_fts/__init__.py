"""hermes-fts: full-text search for self-hosted agent histories in SQLite, CJK included.

Every public name is imported on first use, the extension part (``load``,
``connect`` …) included, so ``import hermes_fts`` (and every ``hermes-fts``
command, which imports this package first) loads no SQLite, store or query
module until it needs one (docs/DESIGN.md §2).
"""

from __future__ import annotations

from ._version import __version__ as __version__

# typing.TYPE_CHECKING without importing typing at run time; type checkers
# read the block as true and see the extension part's real types.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .loader import (
        ExtensionUnavailable,
        Token,
        connect,
        extension_path,
        install,
        load,
        tokenize,
    )

__all__ = [
    "ExtensionUnavailable",
    "Token",
    "connect",
    "extension_path",
    "install",
    "load",
    "tokenize",
    "sanitize_fts5_query",
    "SessionStore",
    "session_search",
    "TOOL_SCHEMA",
    "QueryError",
    "StoreError",
    "SearchRequest",
]

# Where each public name lives, imported on first use.
_LAZY = {
    # The extension part.
    "ExtensionUnavailable": "loader",
    "Token": "loader",
    "connect": "loader",
    "extension_path": "loader",
    "install": "loader",
    "load": "loader",
    "tokenize": "loader",
    # The store, the query language and the tool.
    "sanitize_fts5_query": "query.plan",
    "SessionStore": "store",
    "session_search": "tool",
    "TOOL_SCHEMA": "tool",
    # The errors a caller catches, and what a search takes.
    "QueryError": "query.syntax",
    "StoreError": "_sqlite",
    "SearchRequest": "search.request",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hermes_fts' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
