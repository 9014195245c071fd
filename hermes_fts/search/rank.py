"""The rows one FTS5 index matches, in order: ranked over every match (or in rank
tiers); a time sort is ``search/timesort.py``'s.

``search`` decides what to ask (route, filters, supplements); this module
turns one MATCH over one index, with the WHERE and ORDER BY it is given, into
rows.  Each plan here replaced a slower one that returned the same rows
(``tests/test_search_plans.py`` compares them).
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .._sqlite import rows_as_dicts
from .evidence import id_array
from .request import MAX_ROWID, MIN_ROWID, RANKED_ORDER, ROW_COLUMNS, ROW_NAMES, envelope
from .timesort import time_sorted_rows

__all__ = ["match_rows", "rows_of_ids"]


def _bound_sql(table: str, tier_size: int, top: str) -> str:
    """The lowest rowid of the tier of ``tier_size`` matches under rowid ``top`` (a
    parameter); no row: it is the last tier."""
    return (
        f"SELECT rowid FROM {table} WHERE {table} MATCH ?1 AND rowid <= {top} "
        f"ORDER BY rowid DESC LIMIT 1 OFFSET {tier_size - 1}"
    )


@functools.lru_cache(maxsize=64)
def _tier_sql(table: str, tier_size: int) -> str:
    """A tier's candidates: the ``tier_size`` newest matches up to rowid ``?2``, best first
    (``RANKED_ORDER``; ``m.id`` is the rowid), ranked from the index alone."""
    return (
        f"SELECT id FROM (SELECT rowid AS id, rank AS r FROM {table} "
        f"WHERE {table} MATCH ?1 AND rowid <= ?2 ORDER BY rowid DESC "
        f"LIMIT {tier_size}) ORDER BY r, id DESC"
    )


@functools.lru_cache(maxsize=64)
def _first_tier_sql(table: str, few_snippet_sql: str, tier_size: int) -> str:
    """``_tier_sql`` that also builds the snippets, in the same pass, of a query that is
    one phrase in at most ``?3`` rows (``snippets.few_snippet_sql``): the tier
    is then every match, and every one is wanted.  Otherwise the snippet
    column is NULL."""
    return (
        f"SELECT id, s FROM (SELECT rowid AS id, rank AS r, {few_snippet_sql} AS s "
        f"FROM {table} WHERE {table} MATCH ?1 AND rowid <= ?2 ORDER BY rowid DESC "
        f"LIMIT {tier_size}) ORDER BY r, id DESC"
    )


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


@functools.lru_cache(maxsize=512)
def _filtered_tier_sql(table: str, snippet_sql: str, where: str, extra: str, tier_size: int) -> str:
    """A whole tier in one statement, filters inside: the best ``?2`` rows of the
    ``tier_size`` newest matches up to rowid ``?3``, and the tier's lowest rowid as
    ``_tier`` on every row.  Only rows with rowid in ``[?4, ?5]`` (the spans'
    envelope) can pass the filters; the tier is still counted over every match.

    For filters that drop most matches (a time bound far from the newest
    rows, a rare role): every match must be read to be tested anyway, and
    few rows reach the top-N sorter, so few snippets are built on the way.
    The bound is an uncorrelated scalar subquery, which SQLite runs once and
    hands to FTS5 as a rowid constraint (a CTE joined in front of the MATCH
    made FTS5 compute every rank twice).
    """
    bound = f"({_bound_sql(table, tier_size, '?3')})"
    return (
        f"SELECT {ROW_COLUMNS.format(snippet=snippet_sql)}, {bound} AS _tier "
        f"FROM {table} JOIN messages m ON m.id = {table}.rowid "
        f"JOIN sessions s ON s.id = m.session_id WHERE {table} MATCH ?1 "
        f"AND {table}.rowid <= ?3 AND {table}.rowid >= coalesce({bound}, {MIN_ROWID}) "
        f"AND {table}.rowid BETWEEN ?4 AND ?5 "
        f"AND {where}{extra} ORDER BY {table}.rank, m.id DESC LIMIT ?2"
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
    tier_size: int | None = 256,
    time_index: tuple[str, int] | None = None,
    spans: Sequence[tuple[int, int]] | None = None,
    time_slices: Callable[[int], tuple[list[tuple[int, int]], Any] | None] | None = None,
    few_snippet_sql: str | None = None,
) -> list[dict[str, Any]]:
    """Matching rows in ``order``: ranked exactly over every match (``tier_size``
    None, the search's default), tier by tier (newest ``tier_size`` rowids
    first, kept for the plan tests), or by a time sort, which is never tiered.

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
    if tier_size is None:
        return _ranked_exact(*query, extra, all_params, spans, limit, few_snippet_sql)
    tiers = _Tiers(*query, extra, tier_size, all_params, spans, few_snippet_sql)
    return _tiered_rows(tiers, spans, limit)


def _tiered_rows(tiers: _Tiers, spans: list[tuple[int, int]], limit: int) -> list[dict[str, Any]]:
    """``match_rows`` tier by tier: ``limit`` rows, newest tiers first."""
    rows: list[dict[str, Any]] = []
    top: int | None = MAX_ROWID  # the next tier takes matches with rowid <= top
    for lo, hi in spans:
        if top is not None and top > hi:
            top = tiers.skip_to(top, hi)
        while top is not None and top >= lo and len(rows) < limit:
            found, top = tiers.read(top, limit - len(rows))
            rows += found
        if top is None or len(rows) >= limit:
            break
    return rows


_FEW_MAX = 255  # rows cjk_few_snippet is asked to build at most (a former tier, less one)


@functools.lru_cache(maxsize=512)
def _exact_sql(table: str, snippet_sql: str, where: str, extra: str) -> tuple[str, str]:
    """``_ranked_exact``'s statements: the next ``?4`` candidates by rank from ``?5`` on,
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


def _ranked_exact(
    conn: sqlite3.Connection,
    table: str,
    expression: str,
    snippet_sql: str,
    where: str,
    extra: str,
    params: list[Any],
    spans: Sequence[tuple[int, int]],
    limit: int,
    few_snippet_sql: str | None = None,
) -> list[dict[str, Any]]:
    """The top ``limit`` rows by ``RANKED_ORDER`` over every match: exact at any count.

    FTS5 scores every match in C and SQLite's sorter keeps the best few, so a
    common word costs one pass over its doclist, with no row read.  The best
    candidates are then tested against the filters, a batch four times
    larger each round.  Filters that drop most of them (a rare role) are
    answered by one statement with the filters inside, exact as well.

    With ``few_snippet_sql`` (no time bound, no ``extra``) the first batch
    also builds the snippets of a rare phrase (``_first_tier_sql``): when it
    holds every match, at most ``limit``, and each has its snippet, the rows
    are read by id with no second MATCH.
    """
    candidates_sql, filtered_sql = _exact_sql(table, snippet_sql, where, extra)
    low, high = envelope(spans)
    tiers = _Tiers(
        conn, table, expression, snippet_sql, where, extra, 1, params, [(MIN_ROWID, MAX_ROWID)]
    )
    rows: list[dict[str, Any]] = []
    batch, offset = max(limit, 8), 0
    first = None
    if few_snippet_sql and not extra and (low, high) == (MIN_ROWID, MAX_ROWID):
        few = min(limit, _FEW_MAX)
        first = conn.execute(
            f"SELECT rowid, {few_snippet_sql} FROM {table} WHERE {table} MATCH ?1 "
            f"AND rowid <= ?2 ORDER BY rank, rowid DESC LIMIT ?4",
            (expression, high, few, batch),
        ).fetchall()
        # Fewer rows than asked for are every match: the count decides, not the function.
        if (
            first
            and len(first) < batch
            and len(first) <= few
            and all(snip is not None for _, snip in first)
        ):
            return tiers._rows_of(where, first)
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
        kept = tiers._kept(ids)
        if 2 * len(kept) < len(ids) and len(ids) == batch:  # most dropped: filter inside
            return rows_as_dicts(
                conn.execute(filtered_sql, [expression, low, high, *params, limit])
            )
        rows += kept[: limit - len(rows)]
        if len(ids) < batch:
            break
        offset += batch
        batch *= 4
    return rows


# Ids closer than this are read in one span of the doclist (``_kept``).
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


@functools.lru_cache(maxsize=512)
def _tier_statements(
    table: str,
    snippet_sql: str,
    where: str,
    extra: str,
    tier_size: int,
    few_snippet_sql: str | None,
) -> tuple[str, str, str, tuple[str, str] | None]:
    """``_Tiers``' statements, built once per query shape: candidates, kept rows,
    filtered tier, and the one-pass first tier with the filters its rows are
    then read by id with (``_rows_of_sql``).  None without ``few_snippet_sql``
    or with conditions on the index (``extra``): rows read by id have no MATCH
    to test them."""
    one_pass = (
        (_first_tier_sql(table, few_snippet_sql, tier_size), where)
        if few_snippet_sql and not extra
        else None
    )
    return (
        _tier_sql(table, tier_size),
        _kept_rows_sql(table, snippet_sql, where, extra),
        _filtered_tier_sql(table, snippet_sql, where, extra, tier_size),
        one_pass,
    )


class _Tiers:
    """The tiers of one ranked ``match_rows`` call, read one by one, newest first.

    Two ways to read a tier give the same rows.  By candidates: rank the
    tier from the index alone, then read rows and snippets for the best
    candidates only.  The filters read each message's row, and Hermes keeps
    its ``active``/``compacted``/``display_kind`` columns after the content,
    so testing a long message costs as much as reading it; and one
    ``ORDER BY rank LIMIT n`` builds a snippet for every row that enters
    SQLite's top-N sorter on the way (about ``n * (1 + ln(tier / n))``), a
    CJK snippet tokenizing the whole message.  Filtered: one statement with
    the filters inside, for filters that drop most matches, where testing
    candidate after candidate would read the whole tier in many rounds.
    Each tier's first candidates show which kind the filters are there: a
    time bound drops every row of the tier that reaches past it and none of
    the tiers inside it.
    """

    def __init__(
        self,
        conn: sqlite3.Connection,
        table: str,
        expression: str,
        snippet_sql: str,
        where: str,
        extra: str,
        tier_size: int,
        params: list[Any],
        spans: list[tuple[int, int]],
        few_snippet_sql: str | None = None,
    ) -> None:
        self.conn, self.table, self.expression = conn, table, expression
        self.tier_size, self.params = tier_size, params
        self.spans = spans  # no row outside them passes the filters
        self.envelope = envelope(spans)
        self.narrowed = self.envelope != (MIN_ROWID, MAX_ROWID) or len(spans) > 1
        (self.candidates_sql, self.kept_sql, self.filtered_sql, one_pass) = _tier_statements(
            table, snippet_sql, where, extra, tier_size, few_snippet_sql
        )
        self.one_pass = None if self.narrowed else one_pass

    def read(self, top: int, want: int) -> tuple[list[dict[str, Any]], int | None]:
        """The best ``want`` rows of the tier under ``top``, and the next tier's top
        (None: no matches are left)."""
        if self.narrowed:
            ranked, following = self._ranked_in_spans(top)
        elif self.one_pass is not None and top == MAX_ROWID:
            # Fewer rows than the tier holds are every match, and at most `want`
            # are all wanted.  The function's judgement only decides whether it
            # builds their snippets (for more rows it would build them in vain).
            few = min(want, self.tier_size - 1)
            tier = self.conn.execute(self.one_pass[0], (self.expression, top, few)).fetchall()
            if tier and len(tier) <= few and all(snippet is not None for _, snippet in tier):
                return self._rows_of(self.one_pass[1], tier), None
            ranked = [int(r[0]) for r in tier]
            if not ranked:
                return [], None
            following = min(ranked) - 1 if len(ranked) == self.tier_size else None
        else:
            ranked = [
                int(r[0]) for r in self.conn.execute(self.candidates_sql, (self.expression, top))
            ]
            if not ranked:
                return [], None
            following = min(ranked) - 1 if len(ranked) == self.tier_size else None
        if not ranked:
            return [], following
        rows = self._kept(ranked[:want])
        if len(ranked) > want and 2 * len(rows) < want:  # most dropped, many left to test
            if not self.narrowed:  # one statement with the filters inside
                return self._read_filtered(top, want)
            # Under spans the candidates are ranked already, and ranking the tier
            # again would walk the term's whole doclist for its IDF once more:
            # the rest are tested in one statement.
            return rows + self._kept(ranked[want:])[: want - len(rows)], following
        start = want
        while len(rows) < want and start < len(ranked):
            # As many more as the filters' keep rate so far predicts (+1).
            batch = -(-(want - len(rows)) * start // max(len(rows), 1)) + 1
            rows += self._kept(ranked[start : start + batch])[: want - len(rows)]
            start += batch
        return rows, following

    def _ranked_in_spans(self, top: int) -> tuple[list[int], int | None]:
        """A tier's candidates when time spans narrow the search: its bound first, then
        only the matches inside the spans ranked (the tier that reaches past a
        span holds mostly matches outside it), and the next tier's top."""
        low = self._bound(top)
        clip_lo = max(self.envelope[0], MIN_ROWID if low is None else low)
        clip_hi = min(self.envelope[1], top)
        ranked = [
            int(r[0])
            for r in self.conn.execute(
                f"SELECT rowid FROM {self.table} WHERE {self.table} MATCH ?1 "
                f"AND rowid BETWEEN ?2 AND ?3 ORDER BY rank, rowid DESC",
                (self.expression, clip_lo, clip_hi),
            )
        ]
        # A tier may reach into several spans; outside them nothing passes: not read.
        ranked = [i for i in ranked if any(lo <= i <= hi for lo, hi in self.spans)]
        return ranked, (None if low is None else low - 1)

    def _rows_of(self, where: str, tier: list[Any]) -> list[dict[str, Any]]:
        """The rows of ranked ``(id, snippet)`` pairs that pass the filters, in that order."""
        snippets = dict(tier)
        rows = _in_order(
            self.conn.execute(_rows_of_sql(where, len(tier)), [*self.params, *snippets]),
            list(snippets),
        )
        for row in rows:
            row["snippet"] = snippets[row["id"]]
        return rows

    def _kept(self, ids: list[int]) -> list[dict[str, Any]]:
        """The rows of ``ids`` that pass the filters, in the order of ``ids``.

        Ids far apart are read in separate spans: one span from the lowest to
        the highest would walk a common term's doclist over the whole store.
        """
        found: list[Any] = []
        for part in _clusters(sorted(ids)):
            found += self.conn.execute(
                self.kept_sql,
                [self.expression, part[0], part[-1], id_array(part), *self.params, len(part)],
            )
        return _in_order(found, ids)

    def _read_filtered(self, top: int, want: int) -> tuple[list[dict[str, Any]], int | None]:
        cur = self.conn.execute(
            self.filtered_sql, [self.expression, want, top, *self.envelope, *self.params]
        )
        tier = cur.fetchall()
        if tier:
            bound = tier[0][-1]
            names = [d[0] for d in cur.description[:-1]]  # zip leaves _tier out
            rows = [dict(zip(names, row)) for row in tier]
        else:  # no row of this tier passed the filters: the bound alone
            rows, bound = [], self._bound(top)
        return rows, (None if bound is None else int(bound) - 1)

    def skip_to(self, top: int, hi: int) -> int:
        """The top of the tier that holds the newest match at or below ``hi``, the tiers
        above it skipped unread.

        Tiers stay those of the whole doclist (``tier_size`` matches each,
        counted from ``top``), so a bounded search ranks exactly the rows an
        unbounded one would and only leaves out the rest.  Counting reads the
        doclist alone, no rank and no row.
        """
        above = int(
            self.conn.execute(
                f"SELECT count(*) FROM {self.table} WHERE {self.table} MATCH ? "
                f"AND rowid <= ? AND rowid > ?",
                (self.expression, top, hi),
            ).fetchone()[0]
        )
        if above < self.tier_size:
            return top
        into = above % self.tier_size  # matches above hi in the tier that reaches it
        if not into:
            return hi  # that tier starts at the newest match at or below hi
        # Its top is the `into`-th match above hi, counted upwards from hi: a
        # walk of fewer than tier_size entries.
        row = self.conn.execute(
            f"SELECT rowid FROM {self.table} WHERE {self.table} MATCH ? AND rowid > ? "
            f"AND rowid <= ? ORDER BY rowid ASC LIMIT 1 OFFSET ?",
            (self.expression, hi, top, into - 1),
        ).fetchone()
        return int(row[0])

    def _bound(self, top: int) -> int | None:
        """The lowest rowid of the tier under ``top``; None: it is the last tier."""
        row = self.conn.execute(
            _bound_sql(self.table, self.tier_size, "?2"), (self.expression, top)
        ).fetchone()
        return None if row is None else int(row[0])


# ---------------------------------------------------------------------------
# Best match and sessions (the rows of ids ``evidence`` chose)


def rows_of_ids(
    conn: sqlite3.Connection,
    table: str,
    expression: str,
    snippet_sql: str,
    where: str,
    extra: str,
    params: list[Any],
    ids: list[int],
) -> list[dict[str, Any]]:
    """The rows of ``ids`` that pass the filters, snippets built by the index, in that order."""
    if not ids:
        return []
    tiers = _Tiers(
        conn, table, expression, snippet_sql, where, extra, 1, params, [(MIN_ROWID, MAX_ROWID)]
    )
    return tiers._kept(ids)
