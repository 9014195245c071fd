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

__all__ = ["MAX_ROWID", "MIN_ROWID", "ROW_COLUMNS", "match_rows", "walk_threshold"]

MAX_ROWID, MIN_ROWID = 2**63 - 1, -(2**63)

# The columns every search row has (search.RESULT_FIELDS without context).
ROW_COLUMNS = (
    "m.id, m.session_id, m.role, {snippet} AS snippet, m.timestamp, m.tool_name, "
    "s.source, s.model, s.started_at AS session_started"
)


@functools.lru_cache(maxsize=512)
def _ranked_sql(table: str, snippet_sql: str, where: str, order: str, extra: str,
                tier_size: int) -> str:
    """One rank tier of ``match_rows``, built once per shape (the statement cache keys on it).

    The tier's lower rowid bound is a scalar subquery over the same MATCH
    (``?1``), computed once and returned as ``_tier`` on every row, so a
    tier costs one round trip, not two.  ``?3`` is the tier's top rowid.
    """
    columns = ROW_COLUMNS.format(snippet=snippet_sql)
    order_sql = order.replace("rank", f"{table}.rank")
    joins = (f"JOIN messages m ON m.id = {table}.rowid "
             f"JOIN sessions s ON s.id = m.session_id")
    bound = (f"SELECT rowid FROM {table} WHERE {table} MATCH ?1 AND rowid <= ?3 "
             f"ORDER BY rowid DESC LIMIT 1 OFFSET {tier_size - 1}")
    # CROSS JOIN: the one-row bound drives the join, so the MATCH sees both
    # rowid constraints; MIN_ROWID stands for "no bound" (all that is left).
    return (f"WITH tier(lo) AS (SELECT ({bound})) "
            f"SELECT {columns}, tier.lo AS _tier FROM tier CROSS JOIN {table} {joins} "
            f"WHERE {table} MATCH ?1 AND {table}.rowid <= ?3 "
            f"AND {table}.rowid >= coalesce(tier.lo, {MIN_ROWID}) "
            f"AND {where}{extra} ORDER BY {order_sql} LIMIT ?2")


@functools.lru_cache(maxsize=512)
def _time_sorted_sql(table: str, snippet_sql: str, where: str, order: str, extra: str,
                     walk: str | None) -> tuple[str, str]:
    """``match_rows`` for a time sort: the top ids, then the rows and snippets of those.

    In one SELECT, SQLite would build a snippet for every match that enters
    the sorter (all of them), not only the top ones.  Two plans give the
    same top ids (the same WHERE and ORDER BY, a total order):

    * sort: read every match's row and sort them (cost grows with matches);
    * ``walk`` (the time table, ``time_table.TABLE``: ``(id, ts)`` of every
      message, exact, with the index ``{walk}_ts`` on ``ts``): go through
      that index in the order asked and keep the ids that are matches; only
      those are joined to ``messages`` and ``sessions`` for the filters
      (cost grows with rows per match found).  ``ts`` holds the very value
      of ``m.timestamp``, so ``(t.ts, t.id)`` is the sort plan's order.

    The second statement reads the top rows in one pass over the matches
    between the lowest and highest top id: looking a rowid up under a MATCH
    one row at a time costs a walk of a common term's doclist per row (the
    ``+`` keeps SQLite from driving the MATCH with the id list that way).
    """
    if walk:
        walk_order = order.replace("m.timestamp", "t.ts").replace("m.id", "t.id")
        top = (f"SELECT t.id FROM {walk} t INDEXED BY {walk}_ts "
               f"CROSS JOIN messages m ON m.id = t.id "
               f"CROSS JOIN sessions s ON s.id = m.session_id "
               f"WHERE t.id IN (SELECT rowid FROM {table} WHERE {table} MATCH ?1) "
               f"AND {where}{extra} ORDER BY {walk_order} LIMIT ?")
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
    """Matches from which walking the time table is expected to beat sorting every match.

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

    ``where``/``extra`` use plain ``?`` parameters (``params`` then
    ``extra_params``); the MATCH text is ``?1``.  ``time_index``: the
    store's time table (complete) and about how many messages it holds, so a
    time sort on a very common term walks it (``_time_sorted_sql``).
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
    sql = _ranked_sql(table, snippet_sql, where, order, extra, tier_size)
    rows: list[dict[str, Any]] = []
    top = MAX_ROWID  # the tier takes matches with rowid <= top
    while len(rows) < limit:
        cur = conn.execute(sql, [expression, limit - len(rows), top, *params, *extra_params])
        tier = cur.fetchall()
        if tier:
            bound = tier[0][-1]
            names = [d[0] for d in cur.description[:-1]]  # zip leaves _tier out
            rows.extend(dict(zip(names, row)) for row in tier)
        else:  # no row of this tier passed the filters: the bound alone
            bound = _tier_bound(conn, table, expression, top, tier_size)
        if bound is None or bound <= MIN_ROWID:
            break
        top = int(bound) - 1
    return rows


def _tier_bound(conn: sqlite3.Connection, table: str, expression: str, top: int,
                tier_size: int) -> int | None:
    """The lowest rowid of the tier whose top is ``top`` (None: the last tier)."""
    row = conn.execute(
        f"SELECT rowid FROM {table} WHERE {table} MATCH ? AND rowid <= ? "
        f"ORDER BY rowid DESC LIMIT 1 OFFSET {tier_size - 1}", (expression, top)).fetchone()
    return None if row is None else int(row[0])
