"""The rows one FTS5 index matches in time order (``sort="newest"``/``"oldest"``):
the two plans that give the same rows, and the time slices that spare both
from reading every match (docs/DESIGN.md §6.4b).

``rank.match_rows`` hands a time sort here.  Each plan here replaced a slower
one that returned the same rows (``tests/test_search_plans.py`` compares
them).
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable
from typing import Any

from .._sqlite import rows_as_dicts
from .evidence import id_array
from .request import ROW_COLUMNS, envelope

__all__ = ["time_sorted_rows", "walk_threshold"]


@functools.lru_cache(maxsize=512)
def _time_sorted_sql(
    table: str,
    snippet_sql: str,
    where: str,
    order: str,
    extra: str,
    walk: str | None,
    sliced: bool = False,
) -> tuple[str, str]:
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

    The matches are those with rowid in ``[?2, ?3]``: the walk's ``IN``
    builds a table of all of them first.  ``sliced`` adds a last parameter
    before the limit, a timestamp the rows must reach (``>= ?`` newest
    first, ``<=`` oldest first; see ``_sliced_top``).
    """
    stop = (
        (" AND m.timestamp >= ?" if "DESC" in order else " AND m.timestamp <= ?") if sliced else ""
    )
    if walk:
        walk_order = order.replace("m.timestamp", "t.ts").replace("m.id", "t.id")
        # A time bound on t.ts (the same value) starts and ends the walk at the bound.
        walk_where = where.replace("m.timestamp", "t.ts")
        top = (
            f"SELECT t.id FROM {walk} t INDEXED BY {walk}_ts "
            f"CROSS JOIN messages m ON m.id = t.id "
            f"CROSS JOIN sessions s ON s.id = m.session_id WHERE t.id IN "
            f"(SELECT rowid FROM {table} WHERE {table} MATCH ?1 AND rowid BETWEEN ?2 AND ?3) "
            f"AND {walk_where}{extra}{stop.replace('m.timestamp', 't.ts')} "
            f"ORDER BY {walk_order} LIMIT ?"
        )
    else:
        top = (
            f"SELECT m.id FROM {table} JOIN messages m ON m.id = {table}.rowid "
            f"JOIN sessions s ON s.id = m.session_id "
            f"WHERE {table} MATCH ?1 AND {table}.rowid BETWEEN ?2 AND ?3 "
            f"AND {where}{extra}{stop} ORDER BY {order} LIMIT ?"
        )
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


def _matches_upto(conn: sqlite3.Connection, table: str, expression: str, cap: int) -> int:
    """The term's matches, counted up to ``cap`` and no further."""
    return int(
        conn.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {table} MATCH ? LIMIT ?)",
            (expression, cap),
        ).fetchone()[0]
    )


# The first time slice: about the newest (or oldest) 16,000 messages.
_FIRST_SLICE_IDS = 16 * 1024
# Cutting a slice reads every time zone, twice (about 0.8 µs per 1,000
# messages, measured at 1M).
_SLICE_US_PER_MESSAGE = 0.0008


def _first_slice(limit: int, rows: int, matches: int, walk: bool) -> int | None:
    """Message ids the first time slice should span, or None: slicing would not pay.

    A walk starts small (it stops at the page anyway).  Sorting reads every
    match in the slice, so it starts where about ``2 * limit`` matches are
    expected (matches spread evenly).  It does not slice where sorting every
    match costs less than two slices (a rare term) or where the page needs
    most of the store.
    """
    if walk:
        return _FIRST_SLICE_IDS
    if matches < limit or matches * _SORT_PER_MATCH_US < 2 * _SLICE_US_PER_MESSAGE * rows:
        return None
    ids = max(_FIRST_SLICE_IDS, 2 * limit * rows // max(matches, 1))
    return ids if ids < rows else None


def time_sorted_rows(
    conn: sqlite3.Connection,
    table: str,
    expression: str,
    snippet_sql: str,
    where: str,
    order: str,
    extra: str,
    params: list[Any],
    limit: int,
    spans: list[tuple[int, int]],
    time_index: tuple[str, int] | None,
    time_slices: Callable[[int], tuple[list[tuple[int, int]], Any] | None] | None,
) -> list[dict[str, Any]]:
    """``match_rows`` under a time sort: the top ids by one of two plans, then their rows."""
    walk, first = None, None
    if time_index is not None:
        need = walk_threshold(limit, time_index[1])
        matches = _matches_upto(conn, table, expression, need)
        walk = time_index[0] if need <= time_index[1] and matches >= need else None
        first = _first_slice(limit, time_index[1], matches, walk is not None)
    top_sql, rows_sql = _time_sorted_sql(table, snippet_sql, where, order, extra, walk)
    reach = envelope(spans)
    ids = None
    if first is not None and time_slices is not None:
        sliced_sql = _time_sorted_sql(table, snippet_sql, where, order, extra, walk, True)[0]
        ids = _sliced_top(conn, sliced_sql, time_slices, reach, limit, first, [expression], params)
    if ids is None:
        ids = [int(r[0]) for r in conn.execute(top_sql, [expression, *reach, *params, limit])]
    if not ids:
        return []
    return rows_as_dicts(conn.execute(rows_sql, [expression, min(ids), max(ids), id_array(ids)]))


def _sliced_top(
    conn: sqlite3.Connection,
    sql: str,
    time_slices: Callable[[int], tuple[list[tuple[int, int]], Any] | None],
    reach: tuple[int, int],
    limit: int,
    ids: int,
    head: list[Any],
    params: list[Any],
) -> list[int] | None:
    """A time sort's top ids from the newest (or oldest) time zones only, about ``ids``
    message ids of them at first, widened eightfold until ``limit`` rows are
    found; None: that would need every zone.

    The walk's ``IN`` builds a table of every match first, and sorting reads
    every match, while the page sits in the newest few thousand ids.  The
    slice holds every row whose timestamp reaches ``edge`` (zones cover their
    rows), and the statement keeps only those: once it finds ``limit`` rows,
    the rows outside lie past ``edge`` and cannot come first.
    """
    while (cut := time_slices(ids)) is not None:
        slice_spans, edge = cut
        cut_lo, cut_hi = envelope(slice_spans)
        lo, hi = max(reach[0], cut_lo), min(reach[1], cut_hi)
        found = [int(r[0]) for r in conn.execute(sql, [*head, lo, hi, *params, edge, limit])]
        if len(found) >= limit:
            return found
        ids *= 8
    return None
