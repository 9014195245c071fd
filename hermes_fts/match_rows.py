"""The rows one FTS5 index matches, in order: rank tiers and the two time-sort plans.

``search`` decides what to ask (route, filters, supplements); this module
turns one MATCH over one index, with the WHERE and ORDER BY it is given, into
rows.  Each plan here replaced a slower one that returned the same rows
(``tests/test_search_plans.py`` compares them).
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from ._sqlite import rows_as_dicts

__all__ = ["MAX_ROWID", "MIN_ROWID", "RANKED_ORDER", "ROW_COLUMNS", "match_rows",
           "walk_threshold"]

MAX_ROWID, MIN_ROWID = 2**63 - 1, -(2**63)
# Relevance order.  Equal ranks (identical texts) go by id, newest first, so
# a filtered search keeps exactly the unfiltered order of the rows it keeps.
RANKED_ORDER = "rank, m.id DESC"

# The columns every search row has (search.RESULT_FIELDS without context).
ROW_COLUMNS = (
    "m.id, m.session_id, m.role, {snippet} AS snippet, m.timestamp, m.tool_name, "
    "s.source, s.model, s.started_at AS session_started"
)


@functools.lru_cache(maxsize=512)
def _kept_rows_sql(table: str, snippet_sql: str, where: str, extra: str) -> str:
    """The rows, snippets included, of the candidate ids ``?4`` (a JSON array) that pass
    the filters.  The MATCH re-reads only the candidates' span of the doclist
    (``BETWEEN ?2 AND ?3``); the ``+`` keeps SQLite from seeking each id,
    which walks a common term's doclist once per id."""
    return (f"SELECT {ROW_COLUMNS.format(snippet=snippet_sql)} FROM {table} "
            f"JOIN messages m ON m.id = {table}.rowid JOIN sessions s ON s.id = m.session_id "
            f"WHERE {table} MATCH ?1 AND {table}.rowid BETWEEN ?2 AND ?3 "
            f"AND +{table}.rowid IN (SELECT value FROM json_each(?4)) AND {where}{extra}")


@functools.lru_cache(maxsize=512)
def _time_sorted_sql(table: str, snippet_sql: str, where: str, order: str, extra: str,
                     walk: str | None) -> tuple[str, str]:
    """``match_rows`` for a time sort: the top ids, then the rows and snippets of those.

    In one SELECT, SQLite would build a snippet for every match that enters
    the sorter (all of them), not only the top ones.  Two plans give the
    same top ids (the same WHERE and ORDER BY, a total order):

    * sort: read every match's row and sort them (cost grows with matches);
    * ``walk`` (the name of the index on ``messages(timestamp)``,
      ``index_state.TIME_INDEX``): go through it in the order asked and keep
      the rows whose id is a match (cost grows with rows per match found).

    The second statement reads the top rows in one pass over the matches
    between the lowest and highest top id: looking a rowid up under a MATCH
    one row at a time costs a walk of a common term's doclist per row (the
    ``+`` keeps SQLite from driving the MATCH with the id list that way).
    """
    if walk:
        top = (f"SELECT m.id FROM messages m INDEXED BY {walk} "
               f"CROSS JOIN sessions s ON s.id = m.session_id "
               f"WHERE m.id IN (SELECT rowid FROM {table} WHERE {table} MATCH ?1) "
               f"AND {where}{extra} ORDER BY {order} LIMIT ?")
    else:
        top = (f"SELECT m.id FROM {table} JOIN messages m ON m.id = {table}.rowid "
               f"JOIN sessions s ON s.id = m.session_id "
               f"WHERE {table} MATCH ?1 AND {where}{extra} ORDER BY {order} LIMIT ?")
    rows = (
        f"SELECT {ROW_COLUMNS.format(snippet=snippet_sql)} FROM {table} "
        f"JOIN messages m ON m.id = {table}.rowid JOIN sessions s ON s.id = m.session_id "
        f"WHERE {table} MATCH ?1 AND {table}.rowid BETWEEN ?2 AND ?3 "
        f"AND +{table}.rowid IN (SELECT value FROM json_each(?4)) ORDER BY {order}"
    )
    return top, rows


# Cost model of the two time-sort plans, in microseconds (measured at 200k
# messages): reading and sorting one match, one index step of the walk, and
# each row the walk keeps.
_SORT_PER_MATCH_US = 5.0
_WALK_PER_STEP_US = 0.3
_WALK_PER_ROW_US = 20.0


def walk_threshold(limit: int, rows: int) -> int:
    """Matches from which walking the time index is expected to beat sorting every match.

    Sorting costs about ``M * s``; the walk about ``limit * rows / M * w``
    index steps (matches spread evenly) plus ``limit * r``.  The positive
    root of ``s*M**2 - r*limit*M - w*limit*rows = 0``.
    """
    s, w, r = _SORT_PER_MATCH_US, _WALK_PER_STEP_US, _WALK_PER_ROW_US
    b = r * limit
    return int((b + (b * b + 4 * s * w * limit * rows) ** 0.5) / (2 * s)) + 1


def _walk_pays(conn: sqlite3.Connection, table: str, expression: str, limit: int,
               rows: int) -> bool:
    """Whether the term has at least ``walk_threshold`` matches (counted up to it, no more)."""
    need = walk_threshold(limit, rows)
    if need > rows:
        return False
    count = conn.execute(f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {table} MATCH ? "
                         f"LIMIT ?)", (expression, need)).fetchone()[0]
    return int(count) >= need


def match_rows(
    conn: sqlite3.Connection,
    table: str,
    expression: str,
    snippet_sql: str,
    where: str,
    params: list[Any],
    order: str,
    limit: int,
    extra: str = "",
    extra_params: Sequence[Any] = (),
    *,
    tier_size: int = 256,
    time_index: tuple[str, int] | None = None,
) -> list[dict[str, Any]]:
    """Matching rows in ``order``, ranked tier by tier.

    Ranking or sorting every match costs microseconds per match, which for a
    very common term (tens of thousands of matches) would approach the LIKE
    scan the index replaces.  So matches are taken in tiers of ``tier_size`` by
    rowid (newest first) and ranked inside each tier; a term with at most
    ``tier_size`` matches is ranked exactly.  Time sorts are not tiered: rowids
    need not follow timestamps (imported or back-dated rows), so only one
    ordered query is exact there.

    ``order`` is ``RANKED_ORDER`` or a time sort without ``rank``.
    ``where``/``extra`` use plain ``?`` parameters (``params`` then
    ``extra_params``); the MATCH text is ``?1``.  ``time_index``: the
    store's index on ``messages(timestamp)`` and about how many messages it
    holds, so a time sort on a very common term walks it (``_time_sorted_sql``).
    """
    if "rank" not in order:
        walk = None
        if time_index is not None and _walk_pays(conn, table, expression, limit, time_index[1]):
            walk = time_index[0]
        top_sql, rows_sql = _time_sorted_sql(table, snippet_sql, where, order, extra, walk)
        ids = [int(r[0]) for r in conn.execute(
            top_sql, [expression, *params, *extra_params, limit])]
        if not ids:
            return []
        return rows_as_dicts(conn.execute(
            rows_sql, [expression, min(ids), max(ids), json.dumps(ids)]))
    if order != RANKED_ORDER:
        raise ValueError(f"ranked order must be {RANKED_ORDER!r}, not {order!r}")
    # A tier: the tier_size newest matches, best first (RANKED_ORDER: m.id is the rowid).
    tier_sql = (f"SELECT id FROM (SELECT rowid AS id, rank AS r FROM {table} "
                f"WHERE {table} MATCH ? AND rowid <= ? ORDER BY rowid DESC "
                f"LIMIT {tier_size}) ORDER BY r, id DESC")
    kept_sql = _kept_rows_sql(table, snippet_sql, where, extra)
    rows: list[dict[str, Any]] = []
    top = MAX_ROWID  # the tier takes matches with rowid <= top
    while len(rows) < limit:
        ranked = [int(r[0]) for r in conn.execute(tier_sql, (expression, top))]
        if not ranked:
            break
        rows += _kept_in_order(conn, kept_sql, expression, ranked, limit - len(rows),
                               [*params, *extra_params])
        if len(ranked) < tier_size:  # that was every match left
            break
        top = min(ranked) - 1
    return rows


def _kept_in_order(conn: sqlite3.Connection, kept_sql: str, expression: str,
                   ranked: list[int], want: int, params: list[Any]) -> list[dict[str, Any]]:
    """The first ``want`` of the ``ranked`` ids that pass the filters, as rows.

    The filters read each message's row, and a snippet tokenizes it, so they
    run on the best candidates only: first as many as are wanted (filters
    usually keep them all), then as many more as the rate they kept so far
    predicts (a role filter may keep one match in a hundred).
    """
    out: list[dict[str, Any]] = []
    start, batch = 0, want
    while start < len(ranked) and len(out) < want:
        ids = ranked[start:start + batch]
        start += len(ids)
        found = {int(r["id"]): r for r in rows_as_dicts(conn.execute(
            kept_sql, [expression, min(ids), max(ids), json.dumps(ids), *params]))}
        out += [found[i] for i in ids if i in found][:want - len(out)]
        # Next, what the filters' keep rate so far predicts is needed (+1);
        # while they kept nothing, four times as many.
        batch = (-(-(want - len(out)) * start // len(out)) + 1) if out else batch * 4
    return out
