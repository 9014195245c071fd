"""SQL for a LIKE scan, built from the SQL-free plan of ``query.like_plan``.

The fragment is written for ``messages m``: every check looks at ``m.content``,
``m.tool_name`` and ``m.tool_calls``.  ``NEAR`` is checked in SQL by
``query.near_matches``, registered on the connection as ``hermes_fts_near``.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from .query import LikeAny, LikeNear, LikeNode, LikeText, near_matches

__all__ = ["LIKE_COLUMNS", "like_where"]

LIKE_COLUMNS = ("m.content", "m.tool_name", "m.tool_calls")
NEAR_FUNCTION = "hermes_fts_near"  # query.near_matches, registered per connection


def like_where(conn: sqlite3.Connection, plan: LikeNode | None) -> tuple[str, list[Any]]:
    """A WHERE fragment for ``plan`` over LIKE_COLUMNS; ``("0", [])`` for no plan.

    ``COALESCE(col, '')`` keeps NULL columns from turning a NOT into NULL.
    """
    if plan is None:
        return "0", []
    try:
        conn.create_function(NEAR_FUNCTION, -1, near_matches, deterministic=True)
    except sqlite3.OperationalError:
        pass  # already registered: SQLite refuses to redefine it while a statement runs
    params: list[Any] = []
    return _like_sql(plan, params), params


def _like_sql(node: LikeNode, params: list[Any]) -> str:
    if isinstance(node, LikeText):
        params.extend([f"%{_like_escape(node.text)}%"] * len(LIKE_COLUMNS))
        return "(" + " OR ".join(
            f"COALESCE({col}, '') LIKE ? ESCAPE '\\'" for col in LIKE_COLUMNS) + ")"
    if isinstance(node, LikeNear):
        parts = [_like_sql(LikeText(text), params) for text in node.required]
        params.append(node.spec)
        parts.append(f"{NEAR_FUNCTION}(?, {', '.join(LIKE_COLUMNS)})")
        return _balanced(parts, "AND")
    if isinstance(node, LikeAny):
        return _balanced([_like_sql(o, params) for o in node.options], "OR")
    parts = [_like_sql(c, params) for c in node.include]
    parts += ["NOT " + _like_sql(c, params) for c in node.exclude]
    return _balanced(parts, "AND")


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _balanced(parts: list[str], op: str) -> str:
    """``parts`` joined with ``op`` as a balanced tree.

    SQLite parses ``a AND b AND c …`` left-deep and rejects depth > 1000, which
    a 2048-character query of one-letter words exceeds; balanced is log2(n) deep.
    """
    if len(parts) == 1:
        return parts[0]
    mid = len(parts) // 2
    return f"({_balanced(parts[:mid], op)} {op} {_balanced(parts[mid:], op)})"
