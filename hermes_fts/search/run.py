"""Plans and runs one search over a connection and an index state.

The store passes one ``SearchRequest`` and the state ``SessionStore.index_state()``
reports; this module never calls the store.  On index damage the store marks
the indexes stale and asks again with a state that says so.  The plan
(``search.route.plan_search``) names the route; a miss on a route is the
answer, never a reason to scan; supplements add only what a route cannot see
(docs/DESIGN.md §6.2, §6.3).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import sqlite3
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from .. import _env, loader
from ..index import schema, time_table
from ..index.slowed import switched_off_notes
from ..query.plan import (
    Query,
    QueryError,
    evidence_units,
    glue_look,
    match_expression,
    route_can_represent,
    snippet_terms,
)
from ..query.tree import Term
from ..query.wordforms import unit_caps, unit_words
from ..transcript import attach_context
from .evidence import IndexUnits, id_array, label_rows, more_sessions, passing_ids
from .like import (
    CHECKED_ROUTE,
    LIKE_SOURCE,
    check_like_alternatives,
    like_plan,
    like_where,
    proposed,
)
from .request import (
    RESULT_FIELDS,
    ROUTE_ORDER,
    SESSIONS_SORT,
    Filters,
    SearchRequest,
    envelope,
    search_reading,
)
from .route import INDEX_ROUTES, Plan, plan_search
from .rows import Ranked, like_rows, order_sql, time_sort_key, where_sql
from .rows import match_rows as _match_rows
from .sessions import index_page, like_page, rows_apart
from .snippets import (
    MARKS,
    few_snippet_sql,
    recut_unreadable_snippets,
    single_char_narrowing,
    snippet_sql,
    with_marks,
)
from .topk import bounded_page, one_phrase

__all__ = [
    "RESULT_FIELDS",
    "ROUTE_ORDER",
    "Plan",
    "SearchRequest",
    "SearchResult",
    "plan_search",
    "run",
]

logger = logging.getLogger("hermes_fts.search.run")

GAP_SCAN_LIMIT = 200  # bound on rows added from a not-yet-indexed id range
MAX_ROWS = 2**62  # bound on limit + offset, within SQLite's 64-bit LIMIT
_ROW_FIELDS = tuple(f for f in RESULT_FIELDS if f != "context")  # what a SELECT gives


# ---------------------------------------------------------------------------
# Running a plan


@dataclass
class _Run:
    """One plan being executed: the connection, the filters and the rows wanted."""

    conn: sqlite3.Connection
    state: dict[str, Any]
    plan: Plan
    where: str
    params: list[Any]
    reads_session: bool  # ``where`` reads a column of the session (``s``)
    sort: str | None
    want: int  # limit + offset: rows needed before the page is cut
    # Rowid ranges outside which a time bound keeps no row (time_table.spans).
    spans: list[tuple[int, int]] | None = None
    bounds: tuple[float | None, float | None] = (None, None)  # the request's after, before
    snippets: bool = True  # the request's fields include the snippet

    @property
    def time_index(self) -> tuple[str, int] | None:
        """The time table (complete, kept exact) and about how many rows it has, if any."""
        name = self.state.get("time_index")
        return (name, int(self.state.get("message_id_max") or 0)) if name else None

    @property
    def fold(self) -> bool:
        """LIKE compares folded text: the connection has the extension's cjk_fold()."""
        return bool(self.state.get("cjk_fold"))


@dataclass(frozen=True)
class _IndexQuery:
    """What a plan needs on one index route, worked out once per plan (``_index_query``)."""

    table: str
    expression: str  # the MATCH text
    snippet: str  # the snippet SQL
    few_snippet: str | None  # the snippet SQL of a rare phrase's ranking pass, if any
    narrow: Callable[[str], str] | None  # one-character hits inside bigrams (fts_cjk)
    terms: tuple[Term, ...]  # positive terms, for snippets cut again from the text


@functools.lru_cache(maxsize=256)
def _index_query(plan: Plan, route: str, cjk_helpers: bool, few: bool = False) -> _IndexQuery:
    """``_IndexQuery`` of ``plan`` on ``route``; pure in its arguments, so cached."""
    table = INDEX_ROUTES[route]
    return _IndexQuery(
        table=table,
        expression=match_expression(plan.query, route),
        snippet=snippet_sql(table, cjk_helpers),
        few_snippet=few_snippet_sql(table) if cjk_helpers and few else None,
        narrow=single_char_narrowing(plan.query) if route == "fts_cjk" else None,
        terms=tuple(snippet_terms(plan.query)),
    )


def _by_blocks(req: _Run, route: str) -> bool:
    """Whether the page may come from rank bounds (``topk.bounded_page``): one term,
    ranked or by sessions.  Bounds prune one term's matches well; for several
    terms they add up to about every block, where one pass over every match
    is cheaper."""
    return (
        bool(req.state.get("row_evidence"))
        and INDEX_ROUTES[route] in req.state.get("rank_bounds", ())
        and req.sort in (None, SESSIONS_SORT)
        and one_phrase(evidence_units(req.plan.query, route))
    )


def _bounded(req: _Run, iq: _IndexQuery, route: str, extra: str) -> list[dict[str, Any]] | None:
    """The page of a one-term search from rank bounds (``topk.bounded_page``), or None
    when there are none to use."""
    if not _by_blocks(req, route):
        return None
    ((_label, unit),) = evidence_units(req.plan.query, route)
    found = bounded_page(
        req.conn,
        iq.table,
        unit,
        envelope(req.spans),
        extra,
        req.want,
        passing_ids(req.conn, req.where, req.params),
        req.sort == SESSIONS_SORT,
    )
    return None if found is None else _page_rows(req, iq, extra, *found)


def _best(
    req: _Run, iq: _IndexQuery, route: str, extra: str, only_apart: bool = False
) -> list[dict[str, Any]] | None:
    """A best match or a search by sessions: every match scored (or read by rank
    bounds), the exact top kept.  Rows the index has not taken yet are scored
    with them, with the BM25 the index will give them (``sessions.rows_apart``),
    never only after them.  ``only_apart`` (a strict query by relevance): None
    when no such row matches, which the index's own ranking then answers."""
    blind = _blind_spot(req, iq.table)
    units = IndexUnits(
        req.conn,
        iq.table,
        [u for _, u in evidence_units(req.plan.query, route)],
        unit_words(req.plan.query),
        iq.expression,
        envelope(req.spans),
        extra,
        int(req.state.get("message_id_max") or 0),
        bool(req.state.get("row_evidence")),
        # What the index holds of its pending rows is counted as their pending text.
        f"rowid IN (SELECT msg_id FROM {schema.CJK_PENDING})" if blind else "",
        unit_caps(req.plan.query),
    )
    q = req.plan.query
    apart = rows_apart(units, q, req.fold, blind, req.where, req.params) if blind else []
    kept = any(row[4] for row in apart)
    if only_apart and not kept:
        return None
    # One term: every row holds the whole query, so rows left out weigh nothing.
    rows = None if kept else _bounded(req, iq, route, extra)
    if rows is not None:
        return rows
    filters = Filters(req.where, req.params, req.reads_session)
    ids, held = index_page(units, filters, req.want, req.sort, apart)
    return _page_rows(req, iq, extra, ids, held, {a[0] for a in apart})


def _page_rows(
    req: _Run,
    iq: _IndexQuery,
    extra: str,
    ids: list[int],
    held: dict[int, int],
    apart: Collection[int] = (),
) -> list[dict[str, Any]]:
    """The rows of a page's ``ids`` with snippets, labelled with the terms they hold;
    those of ``apart`` (not in the index) read by the LIKE scan."""
    ranked = Ranked(req.conn, iq.table, iq.expression, iq.snippet, req.where, extra, req.params)
    found = ranked.kept([i for i in ids if i not in apart])
    found += _rows_by_id(req, [i for i in ids if i in apart], True)
    return label_rows(_in_order(found, ids), req.plan.query, held)


def _like(
    req: _Run,
    limit: int,
    extra: str = "",
    params: Sequence[Any] = (),
    *,
    letters: bool = False,
    ordered: bool = True,
) -> list[dict[str, Any]]:
    """``rows.like_rows`` for this run: the LIKE scan's first ``limit`` rows that also
    meet ``extra``, in the run's order (``ordered``) or none."""
    sort = req.sort if ordered else None
    q = req.plan.query
    return like_rows(req.conn, q, req.where, req.params, sort, limit, extra, list(params),
                     fold=req.fold, snippets=req.snippets, letters=letters)  # fmt: skip


def _rows_by_id(req: _Run, ids: Collection[int], letters: bool) -> list[dict[str, Any]]:
    """The rows ``ids`` read by the LIKE scan, with its snippets (``letters`` as ``like_rows``')."""
    if not ids:
        return []
    by_id = " AND m.id IN (SELECT value FROM json_each(?))"
    return _like(req, len(ids), by_id, [id_array(ids)], letters=letters, ordered=False)


def _in_order(rows: list[dict[str, Any]], ids: list[int]) -> list[dict[str, Any]]:
    """``rows`` in the order of their ``ids``."""
    position = dict(zip(ids, range(len(ids))))
    return sorted(rows, key=lambda r: position[r["id"]])


def _best_like(req: _Run, extra: str, extra_params: list[Any]) -> list[dict[str, Any]]:
    """``_best`` on the LIKE scan (``sessions.like_page``), rows and snippets read by id."""
    ids, held = like_page(
        req.conn,
        req.plan.query,
        req.fold,
        f"{req.where}{extra}",
        [*req.params, *extra_params],
        int(req.state.get("message_id_max") or 0),
        req.want,
        req.sort,
        unit_words(req.plan.query),
        unit_caps(req.plan.query),
    )
    return label_rows(_in_order(_rows_by_id(req, ids, False), ids), req.plan.query, held)


def _run_index(req: _Run, iq: _IndexQuery, route: str) -> list[dict[str, Any]]:
    table = iq.table
    expression = iq.expression
    blind = _blind_spot(req, table)
    extra = f" AND NOT ({blind})" if blind else ""
    slices = (
        time_table.time_slices(req.conn, req.sort == "newest")
        if req.time_index and time_sort_key(req.sort)
        else None
    )
    # _best scores every match (or reads rank bounds) with the rows pending for the
    # index, by the BM25 it will give them: listed after, they went off a short page.
    best = req.sort == SESSIONS_SORT or req.plan.query.loose
    strict_apart = bool(blind) and req.sort is None and not best
    found = _best(req, iq, route, extra, only_apart=strict_apart) if best or strict_apart else None
    if found is not None:
        rows = found
    elif (found := _bounded(req, iq, route, extra)) is not None:
        rows = found
    else:
        rows = _match_rows(
            req.conn,
            table,
            expression,
            iq.snippet,
            req.where,
            req.params,
            order_sql(req.sort, ranked=True),
            req.want,
            extra,
            time_index=req.time_index,
            spans=req.spans,
            time_slices=slices,
            few_snippet_sql=iq.few_snippet,
        )
    if route == "fts5":
        rows += _supplement(req, rows, lambda r, found: _glued_latin(r, expression, found))
        rows += _supplement(req, rows, _glued_pending)
    if blind and not (best or strict_apart):  # _best has them, or none match
        rows += _supplement(req, rows, lambda r, found: _left_out(r, found, blind))
    rows += _supplement(req, rows, lambda r, found: _unindexed_gap(r, table, found))
    return rows


_Supplement = Callable[[_Run, list[dict[str, Any]]], list[dict[str, Any]]]


def _supplement(req: _Run, found: list[dict[str, Any]], more: _Supplement) -> list[dict[str, Any]]:
    """The rows a supplement adds to ``found``; by sessions, new sessions only
    (``evidence.more_sessions``), the supplement asked without those listed."""
    if req.sort != SESSIONS_SORT:
        return more(req, found)
    without = f"{req.where} AND m.session_id NOT IN (SELECT value FROM json_each(?))"
    return more_sessions(
        found,
        req.want,
        lambda listed, met: more(
            dataclasses.replace(req, where=without, params=[*req.params, json.dumps(met)]), listed
        ),
    )


def _blind_spot(req: _Run, table: str) -> str:
    """SQL condition for the rows ``table`` cannot answer exactly, or "".

    Every index covers every row, whole (docs/DESIGN.md §9).  Only the CJK
    index lags behind rows in the pending table when the store could not
    apply it (read-only): those may be missing or indexed with their old
    text.  Such rows are left out of the MATCH and answered by LIKE instead
    (``_left_out``).
    """
    if table == schema.CJK and req.state["cjk_pending"]:
        return f"m.id IN (SELECT msg_id FROM {schema.CJK_PENDING})"
    return ""


def _still_wanted(req: _Run, found: list[dict[str, Any]]) -> int:
    """Rows a disjoint supplement must add to the rows already ``found``.

    Relevance keeps the ranked hits first, so only the shortfall is needed.
    A time sort merges every source by timestamp afterwards: a supplement row
    may belong before any found row, so each source gives its own first ``want``.
    """
    if time_sort_key(req.sort) is not None:
        return req.want
    return req.want - len(found)


def _glued_latin(req: _Run, fts5_expr: str, found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows where a Latin term is glued to CJK, which unicode61 cannot see."""
    missing = _still_wanted(req, found)
    cjk = req.state[schema.CJK]
    if missing <= 0 or not cjk["served"]:
        return []
    if not route_can_represent(req.plan.query, "fts_cjk"):
        return []
    iq = _index_query(req.plan, "fts_cjk", True)
    # On the CJK table's rowid, not m.id: SQLite tests it as each match comes
    # out of the index, before reading the message row (a common word has
    # thousands of matches there that are no glued rows).
    spans = _beyond_cutoff(req, found)
    if spans is not None and not spans:
        return []
    # Both doclists are read only inside the spans' envelope (every rowid when none).
    low, high = envelope(spans)
    word_matches = (
        f"SELECT rowid FROM {schema.BASE} WHERE {schema.BASE} MATCH ? AND rowid BETWEEN ? AND ?"
    )
    # Most terms have no glued rows: one short look says so before any is ranked.
    # A CJK match that is none of the rows found may be one.  The rows found
    # are word matches, so "none" is exact; hidden word matches can only make
    # it say "maybe", and the supplement below then tells.  On an index with
    # glue marks only the marked rows can be glued ones: the look reads their
    # rare tokens instead of walking the term's doclist.
    look = (_glue_look(req.plan.query) if cjk.get("glue") else None) or iq.expression
    if (
        req.conn.execute(
            f"SELECT 1 FROM {schema.CJK} WHERE {schema.CJK} MATCH ? AND rowid "
            f"BETWEEN ? AND ? AND rowid NOT IN (SELECT value FROM json_each(?))"
            f" LIMIT 1",
            (look, low, high, id_array(r["id"] for r in found)),
        ).fetchone()
        is None
    ):
        return []
    extra = f" AND {schema.CJK}.rowid NOT IN ({word_matches})"
    blind = _blind_spot(req, schema.CJK)
    if blind:  # a stale CJK entry must not add a row
        extra += f" AND NOT ({blind})"
    return _match_rows(
        req.conn,
        schema.CJK,
        iq.expression,
        iq.snippet,
        req.where,
        req.params,
        order_sql(req.sort, ranked=True),
        missing,
        extra,
        [fts5_expr, low, high],
        spans=spans,
        # No walk: the matches left once the NOT IN drops the word index's
        # are few, and the walk would step through every message to find them.
    )


def _glued_pending(req: _Run, found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows still pending for the CJK index (a store that could not apply them):
    ``_glued_latin`` cannot see a Latin term glued to CJK there, so a LIKE scan of
    only those rows does."""
    blind = _blind_spot(req, schema.CJK)
    if not blind:
        return []
    # The rows found are left out in the scan, not after it: its LIMIT is the rows
    # the page lacks, and pending rows the word index found filled it with repeats.
    unseen = f"{blind} AND m.id NOT IN (SELECT value FROM json_each(?))"
    return _left_out(req, found, unseen, [id_array(r["id"] for r in found)])


@functools.lru_cache(maxsize=256)
def _glue_look(q: Query) -> str | None:
    """``query.glue_look`` with the loaded tokenizer's words; pure per query."""
    return glue_look(q, lambda text: [(t.start, t.end) for t in loader.tokenize(text, query=True)])


def _beyond_cutoff(req: _Run, found: list[dict[str, Any]]) -> list[tuple[int, int]] | None:
    """The spans a time-sorted supplement reads: rows that could still enter the page
    (``time_table.spans_before_last``), within the request's own bound.  None: all."""
    key = time_sort_key(req.sort)
    if key is None or len(found) < req.want or not req.state.get("time_index"):
        return req.spans
    last = sorted(found, key=key, reverse=req.sort == "newest")[req.want - 1]["timestamp"]
    narrowed = time_table.spans_before_last(req.conn, req.sort == "newest", last, *req.bounds)
    return req.spans if narrowed is None else narrowed


def _left_out(
    req: _Run, found: list[dict[str, Any]], condition: str, params: Sequence[Any] = ()
) -> list[dict[str, Any]]:
    """Rows an index cannot answer (``condition``), found by a LIKE scan of only them."""
    missing = _still_wanted(req, found)
    if missing <= 0:
        return []
    # letters: answered for the index, with its case and diacritic fold
    return _like(req, missing, f" AND ({condition})", params, letters=True)


def _unindexed_gap(req: _Run, table: str, found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """During a backfill, rows not yet indexed are found by a bounded LIKE scan."""
    gap = req.state[table]["unindexed_range"]
    if not gap:
        return []
    seen = {r["id"] for r in found}
    rows = _like(req, min(GAP_SCAN_LIMIT, req.want), " AND m.id > ? AND m.id <= ?", gap)
    return [r for r in rows if r["id"] not in seen]


def _glue_decides(req: _Run) -> bool:
    """Whether a best match (or a search by sessions) on ``fts5`` must be scored on
    the CJK index: a row there holds a word unicode61 does not see (glued to CJK,
    in full width), which the word index would score as missing."""
    cjk = req.state[schema.CJK]
    q = req.plan.query
    if not (q.loose or req.sort == SESSIONS_SORT) or not cjk["served"]:
        return False
    if not route_can_represent(q, "fts_cjk"):
        return False
    look = _glue_look(q) if cjk.get("glue") else None
    if look is None:  # no marks to read: the CJK index answers as it always can
        return True
    low, high = envelope(req.spans)
    return (
        req.conn.execute(
            f"SELECT 1 FROM {schema.CJK} WHERE {schema.CJK} MATCH ? AND rowid BETWEEN ? AND ?"
            " LIMIT 1",
            (look, low, high),
        ).fetchone()
        is not None
    ) or _glued_pending_held(req, low, high)


def _glued_pending_held(req: _Run, low: int, high: int) -> bool:
    """Whether a row pending for the CJK index holds a term the word index does not see
    there (glued to CJK, in full width): the look reads the index alone, and such a
    row Hermes had just written fell off a page scored on the word index."""
    blind = _blind_spot(req, schema.CJK)
    if not blind:
        return False
    q = req.plan.query
    for unit in [Query(t) for t in q.terms] if q.loose else [q]:
        like, params = like_where(req.conn, like_plan(unit), req.fold, letters=True)
        sql = (
            f"SELECT 1 FROM {LIKE_SOURCE} m WHERE {blind} AND m.id BETWEEN ? AND ? AND {like} "
            f"AND m.id NOT IN (SELECT rowid FROM {schema.BASE} WHERE {schema.BASE} MATCH ?) "
            "LIMIT 1"
        )
        word_match = match_expression(unit, "fts5")
        if req.conn.execute(sql, [low, high, *params, word_match]).fetchone() is not None:
            return True
    return False


def _execute(req: _Run) -> list[dict[str, Any]]:
    route = req.plan.route
    if route == "fts5" and _glue_decides(req):
        route = "fts_cjk"
    if route in INDEX_ROUTES:
        iq = _index_query(
            req.plan,
            route,
            bool(req.state["cjk_available"]),
            bool(req.state.get("cjk_few_snippet")),
        )
        rows = _run_index(req, iq, route)
        narrow = iq.narrow
        if narrow is not None:
            for row in rows:
                if isinstance(row.get("snippet"), str):
                    row["snippet"] = narrow(row["snippet"])
        recut_unreadable_snippets(req.conn, rows, iq.terms)
    else:
        check_like_alternatives(req.plan.query)  # a full scan: its work is bounded up front
        # On CHECKED_ROUTE only the rows the CJK index proposes, and its pending ones.
        blind = _blind_spot(req, schema.CJK)
        checked = route == CHECKED_ROUTE
        extra, extra_params = proposed(req.plan.query, schema.CJK, blind) if checked else ("", [])
        if req.spans:  # a time bound: scan only the ids that can hold its rows
            extra += " AND m.id BETWEEN ? AND ?"
            extra_params += envelope(req.spans)
        if req.sort == SESSIONS_SORT or req.plan.query.loose:  # every match scored (_best)
            rows = _best_like(req, extra, extra_params)
        else:
            rows = _like(req, req.want, extra, extra_params)
    key = time_sort_key(req.sort)
    if key is not None and not req.plan.query.loose:  # a best match keeps its levels
        rows.sort(key=key, reverse=req.sort == "newest")
    return rows


# ---------------------------------------------------------------------------
# Entry point


@dataclass(frozen=True)
class SearchResult:
    """What one search found, the route that answered it, and what the parser
    changed in the query as written (``Plan.notes``)."""

    rows: list[dict[str, Any]]
    route: str
    notes: tuple[str, ...] = ()
    # the time words' windows whose matches came first (``request.search_preferring``)
    windows: tuple[tuple[float, float], ...] = ()


def run(conn: sqlite3.Connection, state: dict[str, Any], request: SearchRequest) -> SearchResult:
    """Run ``request`` over ``conn`` with the indexes ``state`` describes.

    Raises ``sqlite3.DatabaseError`` when an index turns out to be damaged;
    the caller decides what that means for the store (see the module docstring).
    """
    started = time.perf_counter()
    route = "unknown"
    rows: list[dict[str, Any]] | None = None
    try:
        # Time words first, a short CJK word read again as a sentence (request.search_reading).
        plan, rows, read_as, time_notes, spans = search_reading(
            request, lambda r: _search(conn, state, r)
        )
        route = plan.route
        marks = request.marks or MARKS
        for row in rows:
            if isinstance(row.get("snippet"), str):
                row["snippet"] = with_marks(row["snippet"], marks)
        notes = (*read_as, *plan.notes, *time_notes, *switched_off_notes(state))
        return SearchResult(rows, route, notes, spans)
    finally:
        _log_search(route, started, rows, request.query)


def _log_search(route: str, started: float, rows: list[Any] | None, query: Any) -> None:
    elapsed_ms = (time.perf_counter() - started) * 1000.0
    if elapsed_ms < _env.search_slow_ms():
        return
    text = query if isinstance(query, str) else ""
    line = (
        f"session search: path={route} elapsed={elapsed_ms:.1f}ms "
        f"rows={len(rows) if rows is not None else 'err'} chars={len(text)}"
    )
    if _env.log_search_query():
        line += f" query={text[:200]!r}"
    logger.info(line)


def _search(
    conn: sqlite3.Connection, state: dict[str, Any], request: SearchRequest
) -> tuple[Plan, list[dict[str, Any]]]:
    plan = plan_search(state, request.query, request.route, request.sentence)
    if plan.route == "refused":
        raise QueryError(plan.query.error)
    if plan.route == "empty" or request.limit == 0:
        return plan, []
    spans = None
    if state.get("time_index") and (request.after is not None or request.before is not None):
        spans = time_table.spans(conn, request.after, request.before, request.windows)
        if not spans:  # no message has a timestamp in the window
            return plan, []
    # SQLite binds 64-bit integers; a larger "no limit" means every row anyway.
    want = min(request.limit + request.offset, MAX_ROWS)
    rows = _execute(
        _Run(
            conn,
            state,
            plan,
            *where_sql(request),  # the WHERE, its parameters, whether it reads ``s``
            request.sort,
            want,
            spans,
            (request.after, request.before),
            request.projection is None or "snippet" in request.projection,
        )
    )
    rows = rows[request.offset : request.offset + request.limit]
    projection = request.projection
    if projection is None or "context" in projection:
        attach_context(conn, rows, request.include_inactive)
    if projection is None:
        for row in rows:  # asked for by name only (request.OPTIONAL_FIELDS)
            row.pop("matched_terms", None), row.pop("missing_terms", None)
    elif projection != _ROW_FIELDS:
        # Both row producers give exactly _ROW_FIELDS; only a narrower
        # projection needs new dicts.
        rows = [{k: r.get(k) for k in projection} for r in rows]
    return plan, rows
