"""The session score, and the page of a search by sessions (docs/DESIGN.md §6.4a).

A session is ranked by all its kept matching messages:

* its **best message's value**: the share of the query's weight the message
  holds, plus ``bm25`` times its BM25 (``row_value``);
* plus ``coverage`` times the **recurrence** of the query's terms: each term's
  share of the weight times ``n / (n + k1)``, ``n`` the number of the
  session's kept messages holding it.  A conversation that keeps coming back
  to a name or a topic beats one stray message holding two of the words, and
  each term saturates below its share, so repeating one word never beats
  holding the answer.

Equal scores go to the session whose best message is newer.  With one term
every match holds all of the query, so a session is worth its best message
(``n / (n + 0)``): the page is the sessions of the best rows, in order
(``first_sessions``), which is what lets rank bounds prune (§6.4b).

With several terms every match is read once, with its session and whether
the filters keep it, and the sessions are added up in one pass
(``index_sessions``).  A walk that looked sessions up as it met them read
nearly every match's session anyway once recurrence counted, one lookup at a
time.
"""

from __future__ import annotations

import heapq
import json
import sqlite3
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import reduce
from itertools import compress, groupby
from operator import itemgetter, or_
from typing import Any

from ..index.rank_bounds import index_totals
from ..query.plan import Query
from .evidence import (
    Apart,
    Evidence,
    IndexUnits,
    Passing,
    best_row_ids,
    gather,
    like_evidence,
    passing_ids,
    score_apart,
    units_of,
)
from .like import LIKE_SOURCE, like_plan, like_where
from .request import Filters

__all__ = [
    "SESSION_WEIGHTS",
    "Page",
    "SessionWeights",
    "first_sessions",
    "index_page",
    "index_sessions",
    "like_page",
    "pick_ids",
    "row_value",
    "rows_apart",
    "top_sessions",
]

# ``(score, best message id, session id, units its matches hold)``, best first.
Page = list[tuple[float, int, str, int]]


@dataclass(frozen=True)
class SessionWeights:
    """How a session's matching messages add up to its score.

    ``coverage``: weight of the terms' recurrence beside the best message;
    ``k1``: how fast a term's recurrence saturates (as BM25 saturates a term's
    frequency); ``bm25``: weight of a message's BM25 beside the share of the
    query's weight it holds.
    """

    # Measured on benchmarks/real_histories.py and session_recall.py
    # (benchmarks/README.md, "Session score with recurrence").
    coverage: float = 2.0
    bm25: float = 0.05
    k1: float = 1.2


SESSION_WEIGHTS = SessionWeights()


def row_value(
    row: Sequence[Any], total_weight: float, w: SessionWeights = SESSION_WEIGHTS
) -> float:
    """What one message (an ``Evidence`` row) is worth to its session: the share of
    the query's weight it holds plus ``bm25`` times its BM25."""
    return float(row[0]) / total_weight + w.bm25 * float(row[1])


def top_sessions(
    rows: Sequence[tuple[int, str, float, Any]],
    credit: Callable[[Any], float],
    words_of: Callable[[Any], int],
    weights: Sequence[float],
    want: int,
    w: SessionWeights = SESSION_WEIGHTS,
    held_units: Callable[[Any], int] = int,
) -> Page:
    """The ``want`` best sessions of the kept matches ``rows``, each ``(id, session,
    BM25, held, ...)``; ``credit(held)`` is its share of the weight and
    ``words_of(held)`` the words it holds, a bit each, as ``evidence.credit``
    gives them, and ``held_units(held)`` the units (by default ``held`` is them).
    A page's session comes with the units its matches hold, for its labels.

    A session scores at most the highest credit and the highest BM25 of its rows
    plus the coverage weight times the share of the words it holds (each word's
    recurrence stays below its share).  Sessions are scored in the order of that
    bound, and only until the page's last score beats the next one's bound, so
    most sessions are only grouped, a few calls each, never row by row.
    """
    by_session: dict[str, list[Any]] = {}
    for sid, run in groupby(rows, _SESSION):  # a session's matches mostly come in runs
        group = by_session.get(sid)
        if group is None:
            by_session[sid] = list(run)
        else:
            group.extend(run)
    total = sum(weights) or 1.0
    share: dict[int, float] = {}  # words held -> the sum of their weights
    bounds = []
    for sid, group in by_session.items():
        helds = list(map(_HELD, group))
        words = reduce(or_, map(words_of, helds))
        if words not in share:
            share[words] = sum(weights[b] for b in range(len(weights)) if words >> b & 1)
        top = max(map(credit, helds)) / total + w.bm25 * max(map(_BM25, group))
        bound = (top + w.coverage * share[words] / total) * _MARGIN
        bounds.append((-bound, -max(map(_ID, group)), sid, words))
    heapq.heapify(bounds)
    page: Page = []
    while bounds and (len(page) < want or page[0][:2] <= (-bounds[0][0], -bounds[0][1])):
        _, _, sid, words = heapq.heappop(bounds)
        group = by_session[sid]
        value, rid = max((credit(r[3]) / total + w.bm25 * r[2], r[0]) for r in group)
        each = Counter(map(words_of, map(_HELD, group)))
        units = reduce(or_, (held_units(r[3]) for r in group))
        entry = (_score(value, each, weights, total, w), rid, sid, units)
        if len(page) < want:
            heapq.heappush(page, entry)
        elif entry > page[0]:
            heapq.heapreplace(page, entry)
    return sorted(page, reverse=True)


_ID, _SESSION, _BM25, _HELD, _KEPT = (itemgetter(i) for i in range(5))
# A bound a hair above the sum, so that rounding can never put it below the
# score it bounds (the two add the same parts in different orders).
_MARGIN = 1.0 + 1e-9


def _score(
    value: float, sets: Counter[int], weights: Sequence[float], total: float, w: SessionWeights
) -> float:
    """A session's score from its best message's value and how many of its messages
    hold each set of words: each word's share times n / (n + k1), summed word by
    word in the query's order (the same float every time)."""
    held = [0] * len(weights)
    for bits, n in sets.items():
        while bits:
            low = bits & -bits
            held[low.bit_length() - 1] += n
            bits ^= low
    k1 = w.k1 if len(weights) > 1 else 0.0
    recurrence = sum(weights[b] * n / (n + k1) for b, n in enumerate(held) if n)
    return value + w.coverage * recurrence / total


def first_sessions(evidence: Evidence, want: int, passing: Passing) -> Page:
    """The top ``want`` sessions of a one-term ``evidence``: every match holds the
    whole query, so the sessions of its best rows, in order, each with the first
    one met (rows best first, then newest; ``passing`` tells the kept ones)."""
    size = max(4 * want, 64)
    # A head that one long session fills is ranked again, four times longer, at
    # most twice and only while it is much shorter than every match: then one
    # pass over them all (a 400,000-message session held every match of a
    # common word, and six rankings of them all took seconds).
    for _ in range(2):
        if size * 16 >= len(evidence.rows):
            break
        ranked = best_row_ids(evidence, size, passing)
        page = _sessions_met(evidence, ranked, passing(ranked), want)
        if len(page) == want or len(ranked) < size:  # full, or every kept match read
            return page
        size *= 4
    return _each_sessions_best(evidence, want, passing)


def _sessions_met(
    evidence: Evidence, ranked: Sequence[int], kept: Mapping[int, str], want: int
) -> Page:
    """The first ``want`` sessions met in ``ranked`` rows, each with its first row."""
    page: Page = []
    met: set[str] = set()
    for rid in ranked:
        sid = kept[rid]
        if sid not in met:
            met.add(sid)
            page.append((_one_term(evidence.rows[rid]), rid, sid, units_of(evidence.rows[rid])))
            if len(page) == want:
                break
    return page


def _each_sessions_best(evidence: Evidence, want: int, passing: Passing) -> Page:
    """``first_sessions`` in one pass: each session's best kept row, the best ``want``."""
    key = evidence.row_key
    best: dict[str, tuple[Any, int]] = {}
    for rid, sid in passing(list(evidence.rows)).items():
        mine = (key(rid), rid)
        if sid not in best or mine < best[sid]:
            best[sid] = mine
    # Keys are unique (they end with the row id), so the session is never compared.
    top = heapq.nsmallest(want, ((mine, sid) for sid, mine in best.items()))
    rows = evidence.rows
    return [(_one_term(rows[rid]), rid, sid, units_of(rows[rid])) for (_, rid), sid in top]


def _one_term(row: Sequence[Any], w: SessionWeights = SESSION_WEIGHTS) -> float:
    """A one-term session's score from its best row: the term is held whole."""
    return row_value(row, 1.0, w) + w.coverage


def pick_ids(
    evidence: Evidence, want: int, passing: Passing, by_sessions: bool
) -> tuple[list[int], dict[int, int]]:
    """The ids of the page (the best rows, or each top session's best row) and the
    terms (bits) each holds, or its session holds."""
    if not by_sessions:
        ids = best_row_ids(evidence, want, passing)
        return ids, {i: units_of(evidence.rows[i]) for i in ids}
    if len(evidence.weights) == 1:
        page = first_sessions(evidence, want, passing)
    else:
        rows = evidence.rows
        kept = passing(list(rows))
        # A row already holds its credit, words and units: they are what it holds.
        found = [(i, sid, rows[i][1], (rows[i][0], rows[i][3], units_of(rows[i])))
                 for i, sid in sorted(kept.items())]  # fmt: skip
        holds = (itemgetter(0), itemgetter(1), evidence.weights, want)
        page = top_sessions(found, *holds, held_units=itemgetter(2))
    return [best for _, best, _, _ in page], {best: bits for _, best, _, bits in page}


def index_sessions(
    u: IndexUnits, filters: Filters, want: int, apart: Sequence[Apart] = ()
) -> tuple[list[int], dict[int, int]]:
    """``pick_ids`` by sessions of every match of ``u.any_unit`` on one index: one
    statement reads each match with its BM25, the units it holds, its session
    and whether ``filters`` keep it.  The weights count every match
    the index holds, kept or not, as ``evidence.gather`` counts them, and the
    rows ``apart`` (``rows_apart``), kept or not."""
    table = u.table
    low, high = u.envelope_ids
    in_pass = u.in_pass()
    # A match counts only where its session has a row.  Without a filter on the
    # session's columns, that is asked of the page's sessions alone, not per match.
    where, params, joined = filters
    sql = (
        f"SELECT {table}.rowid, m.session_id, -{table}.rank, "
        f"{f'hermes_fts_held({table})' if in_pass else '0'}, "
        f"{'s.id IS NOT NULL AND ' if joined else ''}({where}) FROM {table} "
        f"JOIN messages m ON m.id = {table}.rowid "
        f"{'LEFT JOIN sessions s ON s.id = m.session_id ' if joined else ''}"
        f"WHERE {table} MATCH ? AND {table}.rowid BETWEEN ? AND ?{u.extra}"
    )
    found = u.conn.execute(sql, [*params, u.any_unit, low, high]).fetchall()
    if not in_pass:
        held_by = u.held()
        found = [(rid, sid, score, held_by.get(rid, 0), kept) for rid, sid, score, _, kept in found]
    found += [(rid, sid, bm25, bits, kept) for rid, sid, _, bits, kept, bm25 in apart]
    credits, words = u.weigh(Counter(map(_HELD, found)), apart)
    credit = {held: c for held, (c, _) in credits.items()}.__getitem__
    words_of = {held: bits for held, (_, bits) in credits.items()}.__getitem__
    kept = list(compress(found, map(_KEPT, found)))
    page = top_sessions(kept, credit, words_of, words, want)
    while not joined and (gone := _without_row(u.conn, [sid for _, _, sid, _ in page])):
        kept = [row for row in kept if row[1] not in gone]
        page = top_sessions(kept, credit, words_of, words, want)
    return [best for _, best, _, _ in page], {best: held for _, best, _, held in page}


def _without_row(conn: sqlite3.Connection, session_ids: list[str]) -> set[str]:
    """The sessions of ``session_ids`` that have no row in ``sessions``."""
    there = conn.execute(
        "SELECT id FROM sessions WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(session_ids),),
    )
    return set(session_ids).difference(sid for (sid,) in there)


def like_page(
    conn: sqlite3.Connection,
    query: Query,
    fold: bool,
    where: str,
    params: Sequence[Any],
    documents: int,
    want: int,
    sort: str | None,
    groups: Sequence[int] | None = None,
    caps: Sequence[int] | None = None,
) -> tuple[list[int], dict[int, int]]:
    """``pick_ids`` on the LIKE scan: one pass tests every term on every row the filters
    ``where`` keep; a row's score is the weight of the words it holds (no BM25
    here; ``groups`` and ``caps`` as ``IndexUnits``')."""
    units = [Query(t) for t in query.terms] if query.loose else [query]
    cur = _like_units(conn, query, units, fold, False, where, params)
    found = like_evidence(cur, len(units), documents, sort, groups, caps)
    # The scan applied the filters and read each row's session.
    sessions = {rid: row[2] for rid, row in found.rows.items()}
    return pick_ids(
        found, want, lambda ids: {i: sessions[i] for i in ids if i in sessions}, sort == "sessions"
    )


def _like_units(
    conn: sqlite3.Connection,
    query: Query,
    units: Sequence[Query],
    fold: bool,
    letters: bool,
    where: str,
    params: Sequence[Any],
    scan: str | None = None,
) -> sqlite3.Cursor:
    """Every row matching ``query`` that ``where`` keeps, as ``(id, session_id,
    timestamp, holds unit 1, …)``; ``fold`` and ``letters`` as ``like_where``'s.
    With ``scan`` (a condition on ``m``): every row matching ``query`` that it
    allows, as ``(id, session_id, timestamp, kept by where, holds unit 1, …)``."""
    whole, whole_params = like_where(conn, like_plan(query), fold, letters)
    tests, test_params = [], []
    for unit in units:
        sql, unit_params = like_where(conn, like_plan(unit), fold, letters)
        tests.append(sql)
        test_params += unit_params
    # Without ``scan`` the filters choose the rows; with it, each row says if they keep it.
    kept = f"s.id IS NOT NULL AND ({where})"
    column, column_params = (f", {kept}", params) if scan else ("", [])
    condition, condition_params = (scan, []) if scan else (kept, params)
    return conn.execute(
        f"SELECT m.id, m.session_id, m.timestamp{column}, {', '.join(tests)} FROM {LIKE_SOURCE} m "
        f"{'LEFT JOIN' if scan else 'JOIN'} sessions s ON s.id = m.session_id "
        f"WHERE {whole} AND {condition}",
        [*column_params, *test_params, *whole_params, *condition_params],
    )


def rows_apart(
    u: IndexUnits, query: Query, fold: bool, blind: str, where: str, params: Sequence[Any]
) -> list[Apart]:
    """The rows ``u``'s index has not taken (``blind``, a condition on ``m``) that match
    ``query``, with the units they hold (``plan.evidence_units``), whether the
    filters ``where`` keep them, tested by LIKE as the index folds (case and
    diacritics too), and the BM25 the index will give them
    (``evidence.score_apart``).  Rows the filters leave out count in the words'
    weights, as the index's own matches do, never on a page."""
    units = [Query(t) for t in query.terms] if query.loose else [query]
    cur = _like_units(u.conn, query, units, fold, True, where, params, blind)
    apart = [(int(rid), sid, ts, sum(1 << k for k, hit in enumerate(hits) if hit), bool(kept),
              0.0) for rid, sid, ts, kept, *hits in cur]  # fmt: skip
    return score_apart(u, apart, index_totals(u.conn, u.table)) if apart else apart


def index_page(
    u: IndexUnits, filters: Filters, want: int, sort: str | None, apart: Sequence[Apart] = ()
) -> tuple[list[int], dict[int, int]]:
    """``pick_ids`` over one index, from every match of ``u`` and the rows ``apart``
    (``rows_apart``), for ``sort`` (None, ``"sessions"`` or a time sort);
    ``filters``: what a row must meet."""
    if sort == "sessions" and len(u.units) > 1:
        return index_sessions(u, filters, want, apart)
    found = gather(u, sort if sort in ("newest", "oldest") else None, apart)
    return pick_ids(
        found, want, passing_ids(u.conn, filters.where, filters.params), sort == "sessions"
    )
