"""Candidates from the CJK index for a query it cannot answer exactly.

A term with a lone CJK character beside other tokens (``Anna의``, ``2024年``,
``Pythonで``, ``第3版``) is not exact on ``fts_cjk``: the character is a
colocated unigram there, so the phrase ``"의 anna"`` also matches "의사Anna".
It is a superset, though: a row holding ``의Anna`` holds the phrase, since a
run's first character is colocated with its first bigram and its last with
its last bigram (``unigrams 1``, docs/DESIGN.md §3.5).  So the LIKE test,
which is exact, needs to read only the rows such a superset expression
matches (route ``fts_cjk_checked``), not the whole store.
"""

from __future__ import annotations

import functools
from typing import Any

from .._index_text import segments
from .plan import folds_apply
from .syntax import AllOf, AnyOf, Near, Node, Query, Term, render

__all__ = ["CHECKED_ROUTE", "candidates_expression", "proposed", "proposes"]

# The route of a search whose rows the CJK index proposes and the LIKE test decides.
CHECKED_ROUTE = "fts_cjk_checked"


def proposes(q: Query, folds_alike: bool) -> bool:
    """Whether the served CJK index can propose every row of ``q``, a query it cannot
    answer exactly.  ``folds_alike``: it folds Han variants as the LIKE test does;
    one built without ``variants 1`` would miss rows the test finds (东京, 東京)."""
    return candidates_expression(q) is not None and (folds_alike or not folds_apply(q))


def proposed(q: Query, table: str, also: str) -> tuple[str, list[Any]]:
    """The SQL condition (`` AND …`` on ``m.id``) for the rows the CJK index ``table``
    proposes for ``q``, or that satisfy ``also`` when given, with its parameters."""
    ids = f"m.id IN (SELECT rowid FROM {table} WHERE {table} MATCH ?)"
    return f" AND ({ids}{f' OR {also}' if also else ''})", [candidates_expression(q)]


@functools.lru_cache(maxsize=256)
def candidates_expression(q: Query) -> str | None:
    """A MATCH text for the CJK index (``unigrams 1``) that every row ``q`` matches
    matches too, or None when there is none (a term the index holds nothing of)."""
    if q.expr is None:
        return None
    node = _superset(q.expr)
    return None if node is None else render(node)


def _superset(node: Node) -> Node | None:
    if isinstance(node, Term):
        # A symbol alone (🚀) leaves no token: nothing to look up.
        return node if segments(node.text) else None
    if isinstance(node, Near):  # every term occurs; the distance is the LIKE test's
        return _superset(AllOf(tuple(node.terms)))
    if isinstance(node, AnyOf):
        options = tuple(o for o in (_superset(o) for o in node.options) if o is not None)
        return AnyOf(options) if len(options) == len(node.options) else None
    # An AND holds where all its parts do, so any of them is a superset; a NOT
    # (excluding rows) is left to the LIKE test.
    parts = tuple(p for p in (_superset(c) for c in node.include) if p is not None)
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else AllOf(parts)
