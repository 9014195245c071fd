"""SQL for a LIKE scan, built from the SQL-free plan of ``query.like_plan``.

The fragment is written for ``LIKE_SOURCE m``: ``messages`` with each indexed
column's text as the indexes hold it (``content.indexed_text_sql``: JSON
escapes decoded), so a scan finds what an index finds.  ``NEAR`` is checked
in SQL by ``query.near_matches``, registered on the connection as
``hermes_fts_near``, and a term with a Latin word by ``query.words_match``
(``hermes_fts_words``) after its LIKE prefilter: the indexes' word boundaries.

With ``fold`` (the extension's ``cjk_fold()`` is on the connection) every
comparison is between folded texts: the column through ``cjk_fold()``, the
pattern through ``query.fold_text``, the same width and Han variant folds the
``variants 1`` CJK index applies, so 东京 finds 東京 here too.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ..content import INDEXED_COLUMNS, indexed_text_sql
from .plan import (
    LikeAny,
    LikeNear,
    LikeNode,
    LikeText,
    LikeWords,
    fold_text,
    near_matches,
    words_match,
)

__all__ = ["LIKE_COLUMNS", "LIKE_SOURCE", "like_where"]

# SQLite merges this subquery into the scan (the id and session conditions
# still use their indexes) and computes a column's text where a check reads
# it; a row without a JSON escape costs a few comparisons and one GLOB.
LIKE_SOURCE = (
    "(SELECT *, "
    + ", ".join(f"{indexed_text_sql(col)} AS _indexed_{col}" for col in INDEXED_COLUMNS)
    + " FROM messages)"
)
LIKE_COLUMNS = tuple(f"m._indexed_{col}" for col in INDEXED_COLUMNS)
NEAR_FUNCTION = "hermes_fts_near"  # query.near_matches, registered per connection
WORDS_FUNCTION = "hermes_fts_words"  # query.words_match, registered per connection


def like_where(
    conn: sqlite3.Connection, plan: LikeNode | None, fold: bool = False
) -> tuple[str, list[Any]]:
    """A WHERE fragment for ``plan`` over LIKE_COLUMNS; ``("0", [])`` for no plan.

    ``fold`` compares folded text (module docstring); it needs ``cjk_fold()``.

    ``COALESCE(col, '')`` keeps NULL columns from turning a NOT into NULL.
    """
    if plan is None:
        return "0", []
    for name, function in ((NEAR_FUNCTION, near_matches), (WORDS_FUNCTION, words_match)):
        try:
            conn.create_function(name, -1, function, deterministic=True)
        except sqlite3.OperationalError:
            pass  # already registered: SQLite refuses to redefine it while a statement runs
    params: list[Any] = []
    columns = tuple(f"cjk_fold({c})" if fold else c for c in LIKE_COLUMNS)
    return _like_sql(plan, params, columns, fold), params


def _like_sql(node: LikeNode, params: list[Any], columns: tuple[str, ...], fold: bool) -> str:
    if isinstance(node, LikeText):
        text = fold_text(node.text) if fold else node.text
        params.extend([f"%{_like_escape(text)}%"] * len(columns))
        return "(" + " OR ".join(f"COALESCE({col}, '') LIKE ? ESCAPE '\\'" for col in columns) + ")"
    if isinstance(node, LikeNear):
        parts = [_like_sql(LikeText(text), params, columns, fold) for text in node.required]
        # near_matches width-folds itself; the variant fold of spec and
        # columns makes it count the tokens the variants index counts.
        params.append(fold_text(node.spec) if fold else node.spec)
        parts.append(f"{NEAR_FUNCTION}(?, {', '.join(columns)})")
        return _balanced(parts, "AND")
    if isinstance(node, LikeWords):
        return _words_sql(node, params, columns, fold)
    if isinstance(node, LikeAny):
        return _balanced([_like_sql(o, params, columns, fold) for o in node.options], "OR")
    parts = [_like_sql(c, params, columns, fold) for c in node.include]
    parts += ["NOT " + _like_sql(c, params, columns, fold) for c in node.exclude]
    return _balanced(parts, "AND")


def _words_sql(node: LikeWords, params: list[Any], columns: tuple[str, ...], fold: bool) -> str:
    """A term with a Latin word: its parts as substrings, then either the term between
    spaces (whole words for sure, no Python) or ``words_match`` on the row."""
    parts = [_like_sql(LikeText(text), params, columns, fold) for text in node.required]
    text = _like_escape(fold_text(node.text) if fold else node.text)
    params.extend([f"% {text}{'' if node.prefix else ' '}%"] * len(columns))
    spaced = " OR ".join(f"(' ' || COALESCE({c}, '') || ' ') LIKE ? ESCAPE '\\'" for c in columns)
    params.append(fold_text(node.spec) if fold else node.spec)
    parts.append(f"({spaced} OR {WORDS_FUNCTION}(?, {', '.join(columns)}))")
    return _balanced(parts, "AND")


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _balanced(parts: list[str], op: str) -> str:
    """``parts`` joined with ``op`` as a balanced tree.

    SQLite parses ``a AND b AND c …`` left-deep and rejects depth > 1000, which
    a 2048-character query of one-letter words exceeds; balanced is log2(n) deep.
    """
    if not parts:  # an empty OR holds for no row, an empty AND for every row
        return "0" if op == "OR" else "1"
    if len(parts) == 1:
        return parts[0]
    mid = len(parts) // 2
    return f"({_balanced(parts[:mid], op)} {op} {_balanced(parts[mid:], op)})"
