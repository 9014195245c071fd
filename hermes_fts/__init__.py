"""hermes-fts: full-text search for self-hosted agent histories in SQLite, CJK included.

The extension part (``load``, ``connect`` …) is imported eagerly; the store,
query and tool layers are imported on first use so ``import hermes_fts`` stays
cheap for callers that only need the tokenizer.
"""

from importlib import import_module
from typing import Any

from ._version import __version__ as __version__
from .loader import (
    ExtensionUnavailable,
    Token,
    connect,
    extension_path,
    install,
    load,
    tokenize,
)

_LAZY = {
    "sanitize_fts5_query": "search.plan",
    "SessionStore": "store",
    "session_search": "tool",
    "TOOL_SCHEMA": "tool",
    # The errors a caller catches, and what a search takes.
    "QueryError": "search.syntax",
    "StoreError": "_sqlite",
    "SearchRequest": "search.request",
}

__all__ = [
    "ExtensionUnavailable",
    "Token",
    "connect",
    "extension_path",
    "install",
    "load",
    "tokenize",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hermes_fts' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
