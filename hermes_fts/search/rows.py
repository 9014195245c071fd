"""The rows a search reads: the SQL its filters and sort become, the rows the LIKE
scan finds with them, and the rows one FTS5 index matches, in order: by
relevance, exact over every match, or by time (``sort="newest"``/``"oldest"``),
where two plans give the same rows and time slices spare both from reading
every match (docs/DESIGN.md "Life of a search", steps 5 and 7, and §6.4b).

``run`` decides what to ask (route, filters, supplements); this module turns
one MATCH over one index, or the LIKE scan, with the WHERE and ORDER BY built
here, into rows.  Each index plan here replaced a slower one that returned the
same rows (``tests/test_search_plans.py`` compares them).
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .._sqlite import row_dict, rows_as_dicts, sqlite_sort_key
from ..query.plan import Query, snippet_terms
from ..transcript import visible_sql
from .evidence import id_array
from .like import LIKE_SOURCE, like_plan, like_where
from .request import (
    MAX_ROWID,
    MIN_ROWID,
    RANKED_ORDER,
    ROW_COLUMNS,
    ROW_NAMES,
    Filters,
    SearchRequest,
    envelope,
)
from .snippets import like_snippet

__all__ = [
    "Ranked",
    "like_rows",
    "match_rows",
    "order_sql",
    "time_sort_key",
    "walk_threshold",
    "where_sql",
]


def where_sql(request: SearchRequest) -> Filters:
    """The request's ``Filters``."""
    parts = [visible(request.include_inactive)]
    params: list[Any] = []
    reads_session = False
    for values, op in ((request.source_filter, "IN"), (request.exclude_sources, "NOT IN")):
        if values is not None:  # a list of sources (``_params.as_sources``)
            parts.append(f"s.source {op} ({', '.join('?' for _ in values)})")
            params.extend(values)
            reads_session = True
    if request.roles:
        parts.append(f"m.role IN ({', '.join('?' for _ in request.roles)})")
        params.extend(request.roles)
    if request.after is not None or request.before is not None:
        # Text or NULL timestamps compare oddly with numbers in SQLite: out.
        parts.append("typeof(m.timestamp) IN ('integer', 'real')")
        if request.after is not None:
            parts.append("m.timestamp >= ?")
            params.append(request.after)
        if request.before is not None:
            parts.append("m.timestamp < ?")
            params.append(request.before)
    if request.windows:  # a time preference's windows (request.search_preferring): any of them
        parts.append(
            "(" + " OR ".join(["m.timestamp >= ? AND m.timestamp < ?"] * len(request.windows)) + ")"
        )
        params.extend(bound for window in request.windows for bound in window)
    if request.exclude_session_ids:
        # One JSON parameter, however many ids (no bound-variable limit).
        parts.append("m.session_id NOT IN (SELECT value FROM json_each(?))")
        params.append(json.dumps(list(request.exclude_session_ids)))
    if request.archived_only_session_ids:
        # Rewound rows (active = 0, compacted = 0) are left out by ``visible`` already.
        parts.append("(m.active = 0 OR m.session_id NOT IN (SELECT value FROM json_each(?)))")
        params.append(json.dumps(list(request.archived_only_session_ids)))
    return Filters(" AND ".join(parts), params, reads_session)


@functools.lru_cache(maxsize=2)
def visible(include_inactive: bool) -> str:
    return visible_sql("m", include_rewound=include_inactive)


def order_sql(sort: str | None, ranked: bool) -> str:
    if sort == "newest":
        return "m.timestamp DESC, m.id DESC"
    if sort == "oldest":
        return "m.timestamp ASC, m.id ASC"
    return RANKED_ORDER if ranked else "m.timestamp DESC, m.id DESC"


def time_sort_key(sort: str | None) -> Callable[[dict[str, Any]], tuple[Any, Any]] | None:
    """The key of ``_order``'s time sorts in Python, for "oldest" (reverse it for "newest")."""
    if sort in ("oldest", "newest"):
        return lambda r: (sqlite_sort_key(r["timestamp"]), r["id"])
    return None


def like_rows(
    conn: sqlite3.Connection,
    parsed: Query,
    where: str,
    params: list[Any],
    sort: str | None,
    limit: int,
    extra: str = "",
    extra_params: Sequence[Any] = (),
    *,
    fold: bool,
    snippets: bool,
    letters: bool = False,
) -> list[dict[str, Any]]:
    """Rows the LIKE scan finds, with snippets cut from their text when ``snippets``;
    ``fold`` and ``letters`` as ``like.like_where``'s."""
    like_sql, like_params = like_where(conn, like_plan(parsed), fold, letters)
    # `+`: a scan in file order, as before optimize-storage added the time
    # index; walking that index reads rows in random order, which for a rare
    # term (every row read, few kept) costs several times the plain scan.
    order = order_sql(sort, ranked=False).replace("m.timestamp", "+m.timestamp")
    columns = ", m.content AS _content, m.tool_name AS _tool_name, m.tool_calls AS _tool_calls"
    sql = (
        f"SELECT {ROW_COLUMNS.format(snippet='NULL')}{columns if snippets else ''} "
        f"FROM {LIKE_SOURCE} m JOIN sessions s ON s.id = m.session_id "
        f"WHERE {like_sql} AND {where}{extra} ORDER BY {order} LIMIT ?"
    )
    cur = conn.execute(sql, [*like_params, *params, *extra_params, limit])
    rows = [row_dict(cur, raw) for raw in cur]
    if snippets:  # not asked for (`fields`): a long row's text is never read into Python
        terms = snippet_terms(parsed)
        for row in rows:
            texts = [row.pop("_content"), row.pop("_tool_name"), row.pop("_tool_calls")]
            row["snippet"] = like_snippet(texts, terms, fold=conn if fold else None)
    return rows


# ---------------------------------------------------------------------------
# One index's rows in order


@functools.lru_cache(maxsize=512)
def _rows_of_sql(where: str, count: int) -> str:
    """The rows of ``count`` ids (the last parameters) that pass the filters, snippets
    left NULL: for candidates whose snippets are built already.  A list of
    ``?`` rather than one JSON array: a rare phrase's few rows are read a
    third faster without the ``json_each`` table."""
    ids = ", ".join("?" * count)
    return (
        f"SELECT {ROW_COLUMNS.format(snippet='NULL')} FROM messages m "
        f"JOIN sessions s ON s.id = m.session_id WHERE {where} AND m.id IN ({ids})"
    )


@functools.lru_cache(maxsize=512)
def _kept_rows_sql(table: str, snippet_sql: str, where: str, extra: str) -> str:
    """The rows, snippets included, of the candidate ids ``?4`` (a JSON array) that pass
    the filters, at most as many as there are ids (the last parameter).  The
    MATCH re-reads only the candidates' span of the doclist (``BETWEEN ?2 AND
    ?3``); the ``+`` keeps SQLite from seeking each id, which walks a common
    term's doclist once per id.  FTS5 looks for a phrase's next match before
    it compares the rowid with the span's end, so the LIMIT ends the statement
    at the last id: a rare phrase of common words would otherwise be walked
    to its next match, or to the end of its tokens' doclists."""
    return (
        f"SELECT {ROW_COLUMNS.format(snippet=snippet_sql)} FROM {table} "
        f"JOIN messages m ON m.id = {table}.rowid JOIN sessions s ON s.id = m.session_id "
        f"WHERE {table} MATCH ?1 AND {table}.rowid BETWEEN ?2 AND ?3 "
        f"AND +{table}.rowid IN (SELECT value FROM json_each(?4)) AND {where}{extra} LIMIT ?"
    )


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
    time_index: tuple[str, int] | None = None,
    spans: Sequence[tuple[int, int]] | None = None,
    time_slices: Callable[[int], tuple[list[tuple[int, int]], Any] | None] | None = None,
    few_snippet_sql: str | None = None,
) -> list[dict[str, Any]]:
    """Matching rows in ``order``: ranked exactly over every match, or by a time sort.

    ``order`` is ``RANKED_ORDER`` or a time sort.  ``where``/``extra`` use
    plain ``?`` parameters (``params`` then ``extra_params``); the MATCH text
    is ``?1``.  ``time_index``: the complete time table and about how many
    messages it holds (a time sort on a common term walks it).  ``spans``:
    rowid ranges, newest first, outside which no row passes the filters.
    ``time_slices(ids)``: see ``_sliced_top``.  ``few_snippet_sql``: a rare
    phrase is ranked, and its snippets built, in one pass.
    """
    spans = list(spans) if spans is not None else [(MIN_ROWID, MAX_ROWID)]
    if not spans:
        return []
    all_params = [*params, *extra_params]
    query = (conn, table, expression, snippet_sql, where)
    if "rank" not in order:
        return time_sorted_rows(
            *query, order, extra, all_params, limit, spans, time_index, time_slices
        )
    if order != RANKED_ORDER:
        raise ValueError(f"ranked order must be {RANKED_ORDER!r}, not {order!r}")
    return Ranked(*query, extra, all_params).top(spans, limit, few_snippet_sql)


_FEW_MAX = 255  # rows cjk_few_snippet is asked to build at most


@functools.lru_cache(maxsize=512)
def _exact_sql(table: str, snippet_sql: str, where: str, extra: str) -> tuple[str, str]:
    """``Ranked.top``'s statements: the next ``?4`` candidates by rank from ``?5`` on,
    from the index alone; and the top rows (the last parameter) with the filters inside."""
    candidates = (
        f"SELECT rowid FROM {table} WHERE {table} MATCH ?1 AND rowid BETWEEN ?2 "
        f"AND ?3 ORDER BY rank, rowid DESC LIMIT ?4 OFFSET ?5"
    )
    filtered = (
        f"SELECT {ROW_COLUMNS.format(snippet=snippet_sql)} FROM {table} "
        f"JOIN messages m ON m.id = {table}.rowid JOIN sessions s ON s.id = m.session_id "
        f"WHERE {table} MATCH ?1 AND {table}.rowid BETWEEN ?2 AND ?3 AND {where}{extra} "
        f"ORDER BY {table}.rank, m.id DESC LIMIT ?"
    )
    return candidates, filtered


# Ids closer than this are read in one span of the doclist (``Ranked.kept``).
CLUSTER_GAP = 2048


def _clusters(ids: Sequence[int]) -> list[list[int]]:
    """Sorted ``ids`` cut where two neighbours are ``CLUSTER_GAP`` or more apart."""
    parts: list[list[int]] = []
    for i in ids:
        if parts and i - parts[-1][-1] < CLUSTER_GAP:
            parts[-1].append(i)
        else:
            parts.append([i])
    return parts


def _in_order(cursor: Iterable[Any], ids: list[int]) -> list[dict[str, Any]]:
    """The rows of ``cursor`` (``ROW_COLUMNS``) in the order of ``ids``."""
    found = {row[0]: row for row in cursor}
    return [dict(zip(ROW_NAMES, found[i])) for i in ids if i in found]


class Ranked:
    """One ranked MATCH over one index with its filters: its exact top rows (``top``),
    and the rows of chosen ids the filters keep, snippets built by the index
    (``kept``) or already (``rows_of``).

    The filters read each message's row, and Hermes keeps its
    ``active``/``compacted``/``display_kind`` columns after the content, so
    testing a long message costs as much as reading it: only the candidates
    a page may need are read.
    """

    def __init__(
        self,
        conn: sqlite3.Connection,
        table: str,
        expression: str,
        snippet_sql: str,
        where: str,
        extra: str,
        params: list[Any],
    ) -> None:
        self.conn, self.table, self.expression = conn, table, expression
        self.snippet_sql, self.where, self.extra, self.params = snippet_sql, where, extra, params
        self.kept_sql = _kept_rows_sql(table, snippet_sql, where, extra)
        self.tested = self.passed = 0  # candidates ``fill`` read, and those the filters kept

    def top(
        self, spans: Sequence[tuple[int, int]], limit: int, few_snippet_sql: str | None = None
    ) -> list[dict[str, Any]]:
        """The top ``limit`` rows by ``RANKED_ORDER`` over every match: exact at any count.

        FTS5 scores every match in C and SQLite's sorter keeps the best few, so a
        common word costs one pass over its doclist, with no row read.  The best
        candidates are then tested against the filters, a batch four times
        larger each round, read as far as the page needs.  Filters that drop
        most of them (a rare role) are answered by one statement with the
        filters inside, exact as well.

        With ``few_snippet_sql`` (no time bound, no ``extra``) the first batch
        also builds the snippets of a rare phrase: when it holds every match, at
        most ``limit``, and each has its snippet, the rows are read by id with no
        second MATCH.
        """
        conn, table, expression, params = self.conn, self.table, self.expression, self.params
        candidates_sql, filtered_sql = _exact_sql(table, self.snippet_sql, self.where, self.extra)
        low, high = envelope(spans)
        rows: list[dict[str, Any]] = []
        batch, offset = max(limit, 8), 0
        first = None
        if few_snippet_sql and not self.extra and (low, high) == (MIN_ROWID, MAX_ROWID):
            few = min(limit, _FEW_MAX)
            first = conn.execute(
                f"SELECT rowid, {few_snippet_sql} FROM {table} WHERE {table} MATCH ?1 "
                f"AND rowid <= ?2 ORDER BY rank, rowid DESC LIMIT ?4",
                (expression, high, few, batch),
            ).fetchall()
            # Fewer rows than asked for are every match: the count decides, not the function.
            if first and len(first) < batch and len(first) <= few and all(s for _, s in first):
                return self.rows_of(first)
        while len(rows) < limit:
            if first is not None:
                ids, first = [int(r[0]) for r in first], None
            else:
                ids = [
                    int(r[0])
                    for r in conn.execute(candidates_sql, (expression, low, high, batch, offset))
                ]
            if not ids:
                break
            self.fill(rows, ids, limit)
            if len(rows) < limit and 2 * self.passed < self.tested and len(ids) == batch:
                # Most dropped (a rare role): one statement with the filters inside.
                return rows_as_dicts(
                    conn.execute(filtered_sql, [expression, low, high, *params, limit])
                )
            if len(ids) < batch:
                break
            offset += batch
            batch *= 4
        return rows

    def fill(self, rows: list[dict[str, Any]], ids: list[int], limit: int) -> None:
        """Adds to ``rows`` the kept rows of the ranked ``ids`` until it holds ``limit``.
        Each candidate is read with its snippet, so only as many at a time as
        the filters' keep rate so far predicts, not every id."""
        start = 0
        while len(rows) < limit and start < len(ids):
            need = limit - len(rows)
            keep_rate_says = -(-need * self.tested // max(self.passed, 1)) + 1
            part = ids[start : start + (need if self.passed == self.tested else keep_rate_says)]
            found = self.kept(part)
            self.tested, self.passed = self.tested + len(part), self.passed + len(found)
            start += len(part)
            rows += found[:need]

    def rows_of(self, ranked: list[Any]) -> list[dict[str, Any]]:
        """The rows of ranked ``(id, snippet)`` pairs that pass the filters, in that order."""
        snippets = dict(ranked)
        rows = _in_order(
            self.conn.execute(_rows_of_sql(self.where, len(ranked)), [*self.params, *snippets]),
            list(snippets),
        )
        for row in rows:
            row["snippet"] = snippets[row["id"]]
        return rows

    def kept(self, ids: list[int]) -> list[dict[str, Any]]:
        """The rows of ``ids`` that pass the filters, in the order of ``ids``.

        Ids far apart are read in separate spans: one span from the lowest to
        the highest would walk a common term's doclist over the whole store.
        Not with a prefix phrase (``"peopl"*``, a word's forms): FTS5 merges
        the doclists of every token it covers anew in each statement, which
        costs more than walking the merged list over the whole span once.
        """
        found: list[Any] = []
        ordered = sorted(ids)
        for part in [ordered] if ids and '"*' in self.expression else _clusters(ordered):
            found += self.conn.execute(
                self.kept_sql,
                [self.expression, part[0], part[-1], id_array(part), *self.params, len(part)],
            )
        return _in_order(found, ids)


# ---------------------------------------------------------------------------
# Time sorts


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
