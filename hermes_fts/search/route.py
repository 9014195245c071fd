"""Which route a search takes: the plan of one query over an index state.

``plan_search`` takes the first route that represents the query exactly
(``plan.choose_route``; what each route promises is ``query/plan.py``'s
docstring): the CJK index (``fts_cjk``, every query by default), the opt-in
word index (``fts5``, Latin) or trigram index, else ``like_scan``, the last
resort (``like_scan_fts_stale`` while the indexes are under repair); ``empty``
when nothing in the query is searchable, ``refused`` when the language
refuses it (``QueryError`` says how to write it).  ``search.run`` runs the plan.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from typing import Any

from ..index import schema
from ..query.best import best_match
from ..query.plan import (
    Query,
    choose_route,
    folds_apply,
    folds_into,
    kana_applies,
    match_expression,
    parse_query,
)
from .like import CHECKED_ROUTE, proposes
from .request import check_route, query_refusal

__all__ = ["INDEX_ROUTES", "Plan", "describe_search_path", "plan_search"]

logger = logging.getLogger("hermes_fts.search.route")

INDEX_ROUTES = {"fts5": schema.BASE, "fts_cjk": schema.CJK, "trigram": schema.TRIGRAM}


@dataclass(frozen=True)
class Plan:
    """The route a search takes and the parsed query it runs."""

    route: str
    query: Query
    sanitized: str

    @property
    def notes(self) -> tuple[str, ...]:
        """What the parser changed in the query as written, and why (query.parse_query)."""
        return self.query.notes


def plan_search(
    state: dict[str, Any],
    query: Any,
    route: str | None = None,
    sentence: bool = False,
) -> Plan:
    """Choose the route for ``query`` given the index ``state``.

    ``route`` restricts the indexes to that one (plus LIKE), as if it were
    the only index available (see ``SearchRequest``).  ``sentence``: a short
    CJK word alone is read as a sentence (``syntax.parse_query``).
    """
    if not isinstance(query, str) or not query.strip():
        return Plan("empty", Query(), "")
    check_route(route)
    served = tuple(
        state[index]["served"] and route in (None, name) for name, index in INDEX_ROUTES.items()
    )
    return _plan(
        query,
        bool(state["fts_stale"]),
        served,
        bool(state.get("cjk_fold")),
        bool(state[INDEX_ROUTES["fts_cjk"]].get("kana", True)),
        sentence,
        state[INDEX_ROUTES["fts_cjk"]].get("variants") is not False,
    )


@functools.lru_cache(maxsize=256)
def _plan(
    query: str,
    fts_stale: bool,
    served: tuple[bool, bool, bool],
    fold: bool,
    kana: bool,
    sentence: bool,
    variants: bool = True,
) -> Plan:
    """``plan_search`` on plain values, so a repeated query is planned once.

    Parsing and routing are pure functions of these values and a Plan is
    immutable, so a cached one is the same answer.
    """
    parsed = best_match(parse_query(query, sentence=sentence))
    if parsed.error:  # search_messages raises QueryError with the reason
        return Plan("refused", parsed, "")
    sanitized = match_expression(parsed, "fts5")  # = sanitize_fts5_query(query)
    if parsed.is_empty:
        return Plan("empty", parsed, sanitized)
    if fts_stale:
        return Plan("like_scan_fts_stale", parsed, sanitized)
    fts5, cjk, trigram = served
    # The trigram index compares raw text; where LIKE folds (the extension's
    # cjk_fold), a query folding changes, or one stored text may hold in another
    # spelling (ＷＩＤＴＨ for width), goes to LIKE so every route folds alike.
    trigram = trigram and not (fold and (folds_apply(parsed) or folds_into(parsed)))
    # A CJK index built before `kana 1` tells ら from ラ: kana goes to LIKE, which folds.
    cjk = cjk and (kana or not kana_applies(parsed))
    chosen = choose_route(parsed, fts5_index=fts5, cjk_index=cjk, trigram_index=trigram)
    if chosen == "like_scan" and cjk and proposes(parsed, variants or not fold):
        chosen = CHECKED_ROUTE  # the CJK index proposes the rows, the LIKE test decides
    return Plan(chosen, parsed, sanitized)


def describe_search_path(state: dict[str, Any], query: Any) -> str:
    """The route a search for ``query`` takes, ``refused`` for one it refuses; never raises."""
    if query_refusal(query) is not None:  # not text, or a lone surrogate: search raises
        return "refused"
    try:
        return plan_search(state, query).route
    except Exception:  # a description must never break the caller
        logger.debug("describe_search_path failed", exc_info=True)
        return "unknown"
