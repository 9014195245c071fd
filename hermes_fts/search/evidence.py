"""Best match and session evidence: every match scored, the exact top found.

A best match (``query.best_match``) ranks rows by the weight of the query
terms they hold (each term's BM25 IDF), then BM25, then newest first
(``Evidence.row_key``).  A search by sessions ranks each session by all its
matching messages (``session_score``).  ``gather`` reads the evidence from
one FTS5 index; the search layer builds it from a LIKE scan the same way.
Both pick the page among the rows the filters keep, checking candidates best
first, so the page is the exact top of every match.
"""

from __future__ import annotations

import functools
import heapq
import math
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._sqlite import sqlite_sort_key
from .like import LIKE_SOURCE, like_where
from .plan import Query, like_plan

__all__ = [
    "OTHERS",
    "SESSION_WEIGHTS",
    "Evidence",
    "SessionWeights",
    "best_row_ids",
    "best_session_ids",
    "gather",
    "id_array",
    "index_page",
    "like_page",
    "passing_ids",
    "pick_ids",
    "session_score",
    "term_weights",
]


def id_array(ids: Iterable[int]) -> str:
    """Integer ids as a JSON array, for ``json_each`` (json.dumps, several times faster)."""
    return "[" + ",".join(map(str, ids)) + "]"


# ---------------------------------------------------------------------------
# Best match and session evidence: every match scored, the top found exactly


@dataclass(frozen=True)
class SessionWeights:
    """How a session's matching messages add up to its score (``session_score``).

    ``damping``: weight of the other messages, the j-th best counting
    ``damping / (j + 1)``, so a session that repeats one word gains little
    from each repeat.  ``coverage``: weight of the query terms the session
    holds, in any of its messages.  ``bm25``: weight of a message's BM25 score
    beside the share of query terms it holds.
    """

    # Measured on benchmarks/session_recall.py (benchmarks/README.md, "Session recall").
    damping: float = 0.1
    coverage: float = 0.3
    bm25: float = 0.05


SESSION_WEIGHTS = SessionWeights()
# Messages after a session's best that add to its score.
OTHERS = 8


def term_weights(counts: Sequence[int], documents: int) -> list[float]:
    """BM25's IDF of each term from its match count: rarer terms weigh more."""
    n = max(documents, *counts, 1)
    return [math.log(1.0 + (n - df + 0.5) / (df + 0.5)) for df in counts]


@dataclass
class Evidence:
    """Every row matching any unit, with what it holds: ``rows[id] = [coverage, bm25,
    session_id, terms]`` (``terms`` a bit per unit), and each unit's weight."""

    rows: dict[int, list[Any]]
    weights: list[float]
    # A time sort ("newest", "oldest"): rows with the most of the terms first,
    # each level in time order (``times``: each row's timestamp).
    order: str | None = None
    times: dict[int, Any] = field(default_factory=dict)

    def row_key(self, row_id: int) -> tuple[Any, ...]:
        """Best first: the weight of the terms held, then BM25 (or the time order),
        then newest."""
        coverage, score, _, _ = self.rows[row_id]
        if self.order is None:
            return (-coverage, -score, -row_id)
        when = (sqlite_sort_key(self.times.get(row_id)), row_id)
        return (-coverage, _Later(when) if self.order == "newest" else when)


class _Later:
    """A sort key that orders its value descending (newest first)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __lt__(self, other: _Later) -> bool:
        return bool(other.value < self.value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Later) and other.value == self.value

    __hash__ = None  # type: ignore[assignment]


def gather(
    conn: sqlite3.Connection,
    table: str,
    units: Sequence[str],
    any_unit: str,
    envelope_ids: tuple[int, int],
    extra: str,
    extra_params: Sequence[Any],
    documents: int,
    order: str | None = None,
) -> Evidence:
    """Every match of ``any_unit`` (the OR of ``units``, or the one unit), with its
    session and the units it holds, from the index and each row's session id.

    ``extra``: conditions on ``m`` a row must meet to be answered by this
    index (``search._blind_spot``).  A row's BM25 is FTS5's rank of
    ``any_unit``: for an OR, the sum over the units the row holds, which is
    the rank of any query of those units.  Each unit's doclist is then read
    alone (rowids only) for which units a row holds.
    """
    low, high = envelope_ids
    sql = (
        f"SELECT {table}.rowid, {table}.rank, m.session_id"
        f"{', m.timestamp' if order else ', NULL'} FROM {table} "
        f"JOIN messages m ON m.id = {table}.rowid WHERE {table} MATCH ? "
        f"AND {table}.rowid BETWEEN ? AND ?{extra}"
    )
    one = len(units) == 1  # a strict query: the whole of it is the one unit
    rows: dict[int, list[Any]] = {}
    times: dict[int, Any] = {}
    for rid, rank, sid, ts in conn.execute(sql, [any_unit, low, high, *extra_params]):
        rows[rid] = [1.0 if one else 0.0, -rank, sid, 1 if one else 0]
        times[rid] = ts
    if one:
        return Evidence(rows, [1.0], order, times)
    hits: list[list[int]] = []
    for unit in units:
        hits.append(
            [
                rid
                for (rid,) in conn.execute(
                    f"SELECT rowid FROM {table} WHERE {table} MATCH ? AND rowid BETWEEN ? AND ?",
                    (unit, low, high),
                )
                if rid in rows
            ]
        )
    weights = term_weights([len(h) for h in hits], documents)
    for bit, (found, weight) in enumerate(zip(hits, weights)):
        for rid in found:
            row = rows[rid]
            row[0] += weight
            row[3] |= 1 << bit
    return Evidence(rows, weights, order, times)


def session_score(
    evidence: Evidence, ids: Sequence[int], total_weight: float, w: SessionWeights | None = None
) -> float:
    """A session's score from its matching messages ``ids``: its best message, the
    ``OTHERS`` next best damped by their place, and the weight of the terms
    the session holds.  Removing a message never raises it, so a score over all matches
    bounds the score over those a filter keeps."""
    if not ids:
        return 0.0
    w = w or SESSION_WEIGHTS
    rows = evidence.rows
    values = sorted((rows[i][0] / total_weight + w.bm25 * rows[i][1] for i in ids), reverse=True)
    held = 0
    for i in ids:
        held |= rows[i][3]
    coverage = sum(wt for bit, wt in enumerate(evidence.weights) if held >> bit & 1)
    others = values[1 : OTHERS + 1]
    return (
        values[0]
        + w.damping * sum(v / (j + 1) for j, v in enumerate(others, 1))
        + w.coverage * coverage / total_weight
    )


def _damped_sums() -> list[float]:
    """``[n - 1]``: 1/2 + ... + 1/n, what ``n - 1`` other messages worth 1 add at most."""
    sums = [0.0]
    for j in range(2, OTHERS + 2):
        sums.append(sums[-1] + 1.0 / j)
    return sums


def passing_ids(
    conn: sqlite3.Connection, where: str, params: Sequence[Any]
) -> Callable[[Sequence[int]], set[int]]:
    """A test of which ids' messages pass the filters ``where``, one statement per call."""
    sql = (
        f"SELECT m.id FROM messages m JOIN sessions s ON s.id = m.session_id "
        f"WHERE m.id IN (SELECT value FROM json_each(?)) AND {where}"
    )
    return lambda ids: {int(r[0]) for r in conn.execute(sql, [id_array(ids), *params])}


def best_row_ids(
    evidence: Evidence, want: int, passing: Callable[[Sequence[int]], set[int]]
) -> list[int]:
    """The top ``want`` ids by ``Evidence.row_key`` among those ``passing`` keeps.

    Candidates are tested best first, as many more each round as the keep
    rate so far predicts: the page is the exact top of every match.
    """
    out: list[int] = []
    # Only the head is sorted: a page of a common word needs few of its matches.
    size = max(4 * want, 64)
    ranked = heapq.nsmallest(size, evidence.rows, key=evidence.row_key)
    start, batch = 0, want
    while len(out) < want:
        if start >= len(ranked):
            if len(ranked) < size:
                break  # every match tested
            size *= 4
            ranked = heapq.nsmallest(size, evidence.rows, key=evidence.row_key)
            continue
        chunk = ranked[start : start + batch]
        kept = passing(chunk)
        out += [i for i in chunk if i in kept][: want - len(out)]
        start += len(chunk)
        # As many more as the keep rate so far predicts; twice as many when none passed.
        batch = (-(-(want - len(out)) * start // len(out)) + 1) if out else 2 * batch
    return out


def best_session_ids(
    evidence: Evidence, want: int, passing: Callable[[Sequence[int]], set[int]]
) -> list[tuple[int, int]]:
    """The best message of each of the top ``want`` sessions (``session_score``), sessions
    best first, among the messages ``passing`` keeps; with each the terms
    (bits) the session's kept messages hold.

    A bound of each session's score over every match, from one pass (its best
    message, its count, the terms it holds), is at least its score over the
    kept ones; sessions are checked in the order of their bounds until the
    ``want``-th best checked score reaches the next bound: the exact top.
    """
    w = SESSION_WEIGHTS
    total = sum(evidence.weights) or 1.0
    by_session: dict[str, list[int]] = {}
    best: dict[str, float] = {}
    held: dict[str, int] = {}
    for rid, (weight, score, sid, bits) in evidence.rows.items():
        by_session.setdefault(sid, []).append(rid)
        value = weight / total + w.bm25 * score
        if value > best.get(sid, -1.0):
            best[sid] = value
        held[sid] = held.get(sid, 0) | bits
    weights = list(enumerate(evidence.weights))
    harmonic = _damped_sums()

    @functools.cache
    def share(bits: int) -> float:
        return sum(wt for bit, wt in weights if bits >> bit & 1) / total

    def ceiling(sid: str) -> float:
        # Every other message is worth at most the best: the damped sum is at
        # most best * (H(n) - 1).
        others = harmonic[min(len(by_session[sid]), OTHERS + 1) - 1]
        return best[sid] * (1.0 + w.damping * others) + w.coverage * share(held[sid])

    bound = sorted(((ceiling(sid), sid) for sid in by_session), key=lambda p: (-p[0], p[1]))
    exact: list[tuple[float, int, str, list[int]]] = []
    start = 0
    batch = max(want, 8)
    while start < len(bound):
        if len(exact) >= want:
            exact.sort(reverse=True)
            if exact[want - 1][0] >= bound[start][0]:
                break
        chunk = bound[start : start + batch]
        kept = passing([i for _, sid in chunk for i in by_session[sid]])
        for _, sid in chunk:
            mine = [i for i in by_session[sid] if i in kept]
            if mine:
                exact.append((session_score(evidence, mine, total), max(mine), sid, mine))
        start += batch
        batch *= 2
    exact.sort(reverse=True)
    rows = evidence.rows
    return [
        (
            min(mine, key=evidence.row_key),
            functools.reduce(lambda held, i: held | rows[i][3], mine, 0),
        )
        for _, _, _, mine in exact[:want]
    ]


def index_page(
    conn: sqlite3.Connection,
    table: str,
    units: Sequence[str],
    any_unit: str,
    envelope_ids: tuple[int, int],
    extra: str,
    documents: int,
    want: int,
    passing: Callable[[Sequence[int]], set[int]],
    sort: str | None,
) -> tuple[list[int], dict[int, int]]:
    """``pick_ids`` over one index, from every match (``gather``), for ``sort`` (None,
    ``"sessions"``, or a time sort)."""
    found = gather(
        conn, table, units, any_unit, envelope_ids, extra, (), documents, _time_order(sort)
    )
    return pick_ids(found, want, passing, sort == "sessions")


def _time_order(sort: str | None) -> str | None:
    return sort if sort in ("newest", "oldest") else None


def pick_ids(
    evidence: Evidence, want: int, passing: Callable[[Sequence[int]], set[int]], by_sessions: bool
) -> tuple[list[int], dict[int, int]]:
    """The ids of the page (the best rows, or each top session's best row) and the
    terms (bits) each holds, or its session holds."""
    if by_sessions:
        picked = best_session_ids(evidence, want, passing)
        return [i for i, _ in picked], dict(picked)
    ids = best_row_ids(evidence, want, passing)
    return ids, {i: evidence.rows[i][3] for i in ids}


def label_rows(
    rows: list[dict[str, Any]], query: Any, held: dict[int, int]
) -> list[dict[str, Any]]:
    """``matched_terms`` and ``missing_terms`` on each row of a best match (``query``
    loose): the words it, or its session, holds and those it does not."""
    if query.loose:
        labels = [t.text for t in query.terms]
        for row in rows:
            bits = held.get(row["id"], 0)
            row["matched_terms"] = [t for bit, t in enumerate(labels) if bits >> bit & 1]
            row["missing_terms"] = [t for bit, t in enumerate(labels) if not bits >> bit & 1]
    return rows


def like_page(
    conn: sqlite3.Connection,
    query: Query,
    fold: bool,
    where: str,
    params: Sequence[Any],
    documents: int,
    want: int,
    sort: str | None,
) -> tuple[list[int], dict[int, int]]:
    """``pick_ids`` on the LIKE scan: one pass tests every term on every row the filters
    ``where`` keep; a row's score is the weight of the terms it holds (no BM25
    here)."""
    whole, whole_params = like_where(conn, like_plan(query), fold)
    tests, test_params = [], []
    for unit in [Query(t) for t in query.terms] if query.loose else [query]:
        sql, unit_params = like_where(conn, like_plan(unit), fold)
        tests.append(sql)
        test_params += unit_params
    cur = conn.execute(
        f"SELECT m.id, m.session_id, m.timestamp, {', '.join(tests)} FROM {LIKE_SOURCE} m "
        f"JOIN sessions s ON s.id = m.session_id WHERE {whole} AND {where}",
        [*test_params, *whole_params, *params],
    )
    found = like_evidence(cur, len(tests), documents, sort)
    return pick_ids(found, want, set, sort == "sessions")


def like_evidence(
    found: Iterable[Sequence[Any]], units: int, documents: int, order: str | None = None
) -> Evidence:
    """Evidence from a LIKE scan's ``(id, session_id, timestamp, holds unit 1, …)``
    rows: the terms' weights from how many rows hold each (one unit: a strict
    query); ``order``: the search's sort (a time sort orders each level)."""
    rows: dict[int, list[Any]] = {}
    times: dict[int, Any] = {}
    counts = [0] * units
    for rid, sid, ts, *hits in found:
        bits = sum(1 << k for k, hit in enumerate(hits) if hit)
        for k, hit in enumerate(hits):
            counts[k] += bool(hit)
        rows[int(rid)] = [0.0, 0.0, sid, bits]
        times[int(rid)] = ts
    weights = term_weights(counts, documents) if units > 1 else [1.0]
    for row in rows.values():
        row[0] = sum(w for k, w in enumerate(weights) if row[3] >> k & 1)
    return Evidence(rows, weights, _time_order(order), times)
