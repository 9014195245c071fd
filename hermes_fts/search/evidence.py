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

import heapq
import json
import math
import sqlite3
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._sqlite import sqlite_sort_key
from .like import LIKE_SOURCE, like_where
from .plan import Query, like_plan
from .wordforms import term_labels

__all__ = [
    "EVERY_ID",
    "HELD_MAX",
    "SESSION_WEIGHTS",
    "Evidence",
    "Members",
    "Passing",
    "SessionWeights",
    "best_row_ids",
    "best_session_ids",
    "gather",
    "id_array",
    "index_page",
    "like_page",
    "more_sessions",
    "page_of",
    "passing_ids",
    "row_value",
    "pick_ids",
    "session_members",
    "session_score",
    "term_weights",
    "unit_counts",
    "top_sessions",
]


def id_array(ids: Iterable[int]) -> str:
    """Integer ids as a JSON array, for ``json_each`` (json.dumps, several times faster)."""
    return "[" + ",".join(map(str, ids)) + "]"


# ---------------------------------------------------------------------------
# Best match and session evidence: every match scored, the top found exactly


@dataclass(frozen=True)
class SessionWeights:
    """How a session's matching messages add up to its score (``session_score``).

    ``coverage``: weight of the query terms the session holds, each term by how
    many of its messages hold it, saturating as BM25 saturates a term's
    frequency (``k1``): a topic the conversation comes back to counts more than
    a word said once.  ``bm25``: weight of a message's BM25 score beside the
    share of query terms it holds.
    """

    # Measured on benchmarks/real_histories.py and session_recall.py
    # (benchmarks/README.md, "Session score with recurrence").
    coverage: float = 2.0
    bm25: float = 0.05
    k1: float = 1.2


SESSION_WEIGHTS = SessionWeights()
# Units hermes_fts_held() can report (one bit each in a 64-bit integer).
HELD_MAX = 62
# The rowid range that means "every row": SQLite's whole rowid range.
EVERY_ID = (-(2**63), 2**63 - 1)
# Which of the given ids the search's filters keep, each with its session.
Passing = Callable[[Sequence[int]], Mapping[int, str]]
# The ids of each given session among an evidence's rows.
Members = Callable[[Collection[str]], Mapping[str, list[int]]]


def term_weights(counts: Sequence[int], documents: int) -> list[float]:
    """BM25's IDF of each term from its match count: rarer terms weigh more."""
    n = max(documents, *counts, 1)
    return [math.log(1.0 + (n - df + 0.5) / (df + 0.5)) for df in counts]


@dataclass
class Evidence:
    """Every row matching any unit, with what it holds: ``rows[id] = [coverage, bm25,
    session_id, terms]`` (``terms`` a bit per unit; ``session_id`` None when read
    from an index, which leaves sessions to the page), and each unit's weight."""

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
    held_fn: bool = False,
) -> Evidence:
    """Every match of ``any_unit`` (the OR of ``units``, or the one unit), with the
    units it holds, from the index.  Sessions are left out (``rows[id][2]`` is
    None): a page looks up the few it needs (``passing_ids``,
    ``session_members``).

    ``extra``: conditions on ``m`` a row must meet to be answered by this
    index (``search._blind_spot``).  A row's BM25 is FTS5's rank of
    ``any_unit``: for an OR, the sum over the units the row holds, which is
    the rank of any query of those units.  Which units a row holds comes from
    the same pass (``held_fn``: the connection has ``hermes_fts_held()``, and
    each unit is one phrase of the OR), else from each unit's doclist read
    alone (rowids only).
    """
    low, high = envelope_ids
    one = len(units) == 1  # a strict query: the whole of it is the one unit
    in_pass = held_fn and not one and len(units) <= HELD_MAX and any_unit == " OR ".join(units)
    # The message row only when a time order or ``extra`` needs it.
    join = f" JOIN messages m ON m.id = {table}.rowid" if order or extra else ""
    sql = (
        f"SELECT {table}.rowid, {table}.rank"
        f"{', m.timestamp' if order else ', NULL'}"
        f"{f', hermes_fts_held({table})' if in_pass else ', 0'} FROM {table}{join} "
        f"WHERE {table} MATCH ? AND {table}.rowid BETWEEN ? AND ?{extra}"
    )
    rows: dict[int, list[Any]] = {}
    times: dict[int, Any] = {}
    for rid, rank, ts, bits in conn.execute(sql, [any_unit, low, high, *extra_params]):
        rows[rid] = [1.0 if one else 0.0, -rank, None, 1 if one else bits]
        if order:
            times[rid] = ts
    if one:
        return Evidence(rows, [1.0], order, times)
    if not in_pass:
        for bit, unit in enumerate(units):
            for (rid,) in conn.execute(
                f"SELECT rowid FROM {table} WHERE {table} MATCH ? AND rowid BETWEEN ? AND ?",
                (unit, low, high),
            ):
                row = rows.get(rid)
                if row is not None:
                    row[3] |= 1 << bit
    # Rows hold few distinct sets of units: count and weigh each set once.
    sets = Counter(row[3] for row in rows.values())
    if (low, high) == EVERY_ID and not extra:
        counts = [sum(n for bits, n in sets.items() if bits >> b & 1) for b in range(len(units))]
    else:  # a term's weight is the same whatever part of the store is read
        counts = unit_counts(conn, table, units)
    weights = term_weights(counts, documents)
    set_weight = {bits: sum(w for bit, w in enumerate(weights) if bits >> bit & 1) for bits in sets}
    for row in rows.values():
        row[0] = set_weight[row[3]]
    return Evidence(rows, weights, order, times)


def unit_counts(conn: sqlite3.Connection, table: str, units: Sequence[str]) -> list[int]:
    """How many rows of the index hold each unit (its document frequency)."""
    return [
        int(conn.execute(f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", (u,)).fetchone()[0])
        for u in units
    ]


def session_score(
    evidence: Evidence, ids: Sequence[int], total_weight: float, w: SessionWeights | None = None
) -> float:
    """A session's score from its matching messages ``ids``: its best message's value
    (``row_value``) plus the weight of the terms the session holds, each term by
    how many of its messages hold it (``_score``).  Removing a message never
    raises it, so a score over all matches bounds the score over those a
    filter keeps."""
    if not ids:
        return 0.0
    w = w or SESSION_WEIGHTS
    rows = evidence.rows
    counts = _term_counts(rows[i][3] for i in ids)
    best = max(row_value(rows[i], total_weight, w) for i in ids)
    return _score(best, counts, evidence.weights, total_weight, w)


def _term_counts(bits: Iterable[int]) -> Counter[int]:
    """How many of the given rows (their term bits) hold each term, by bit."""
    counts: Counter[int] = Counter()
    for held in bits:
        while held:
            low = held & -held
            counts[low.bit_length() - 1] += 1
            held ^= low
    return counts


def _score(
    best: float,
    counts: Mapping[int, int],
    weights: Sequence[float],
    total_weight: float,
    w: SessionWeights,
) -> float:
    """``session_score`` from its best message's value and how many messages hold
    each term (by bit): each term adds its share of the query's weight times
    ``n / (n + k1)``, below 1 however often it recurs, so the coverage weight
    bounds what a session's other messages add.  With one term every session
    holds it whole: counting it would leave no bound on a block of rows from
    its best row alone (§6.4b), and BM25 already counts it in the message."""
    k1 = w.k1 if len(weights) > 1 else 0.0
    coverage = sum(weights[bit] * n / (n + k1) for bit, n in counts.items())
    return best + w.coverage * coverage / total_weight


def _bits(counts: Mapping[int, int]) -> int:
    """The terms (bits) held by at least one message."""
    return sum(1 << bit for bit, n in counts.items() if n)


def row_value(row: Sequence[Any], total_weight: float, w: SessionWeights | None = None) -> float:
    """What one message is worth to its session: the share of the query's weight it
    holds plus ``bm25`` times its BM25."""
    w = w or SESSION_WEIGHTS
    return float(row[0]) / total_weight + w.bm25 * float(row[1])


def passing_ids(
    conn: sqlite3.Connection, where: str, params: Sequence[Any]
) -> Callable[[Sequence[int]], dict[int, str]]:
    """A test of which ids' messages pass the filters ``where``, one statement per call:
    the kept ids, each with its session."""
    sql = (
        f"SELECT m.id, m.session_id FROM messages m JOIN sessions s ON s.id = m.session_id "
        f"WHERE m.id IN (SELECT value FROM json_each(?)) AND {where}"
    )
    return lambda ids: {int(r[0]): r[1] for r in conn.execute(sql, [id_array(ids), *params])}


def best_row_ids(evidence: Evidence, want: int, passing: Passing) -> list[int]:
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


def session_members(conn: sqlite3.Connection, rows: Mapping[int, Any]) -> Members:
    """The ids of each given session among ``rows`` (an evidence's, which may grow),
    from the store's index of messages by session."""
    sql = "SELECT session_id, id FROM messages WHERE session_id IN (SELECT value FROM json_each(?))"

    def members(sessions: Collection[str]) -> dict[str, list[int]]:
        found: dict[str, list[int]] = {s: [] for s in sessions}
        for sid, rid in conn.execute(sql, [json.dumps(list(sessions))]):
            if rid in rows:
                found[sid].append(rid)
        return found

    return members


def _known_sessions(sessions: Mapping[int, str]) -> tuple[Passing, Members]:
    """``Passing`` and ``Members`` when the session of every kept row is known
    already (``sessions``: kept id -> session; the rows not in it are filtered
    out)."""
    by_session: dict[str, list[int]] = {}
    for rid, sid in sessions.items():
        by_session.setdefault(sid, []).append(rid)
    return (
        lambda ids: {i: sessions[i] for i in ids if i in sessions},
        lambda wanted: {s: by_session[s] for s in wanted},
    )


def top_sessions(
    evidence: Evidence, want: int, passing: Passing, members: Members
) -> list[tuple[float, int, str, int]]:
    """The top ``want`` sessions by ``session_score`` over the messages ``passing``
    keeps, best first, equal scores the one with the newer best message first:
    ``(score, best message id, session id, terms held)``.  A session's best
    message is its kept one of highest ``row_value``, then newest.

    Rows are walked by value, best first, so the first kept row met of a
    session is its best.  How many of its kept matches hold each term comes
    from all of them (``members``).  A session not met yet has no row above
    the next one, so its score is at most that row's value plus the coverage
    weight: the walk stops once the ``want``-th score beats it.
    """
    w = SESSION_WEIGHTS
    rows, weights = evidence.rows, evidence.weights
    total = sum(weights) or 1.0
    exact: dict[str, tuple[float, int, str, int]] = {}
    page: list[tuple[float, int, str, int]] = []
    unwalked = _Unwalked(rows, weights, total, w)
    for chunk in _chunks(_best_first(_values(evidence, total)), 2 * want):
        if len(page) >= want:
            # Rows whose session cannot reach the page (an equal score may still
            # win on recency), and every row after them, are left alone.
            last, most = page[want - 1][0], unwalked.most()
            chunk = [pair for pair in chunk if not last > pair[0] + most]
            if not chunk:
                break
        unwalked.walk(i for _, i in chunk)
        kept = passing([i for _, i in chunk])
        met: dict[str, tuple[float, int]] = {}  # session -> its best row's (value, id)
        for value, i in chunk:
            sid = kept.get(i)
            if sid is not None and sid not in exact and sid not in met:
                met[sid] = (value, i)
        if not met:
            continue
        counts = _held(rows, list(met), passing, members)
        for sid, (value, i) in met.items():
            held = counts[sid]
            exact[sid] = (_score(value, held, weights, total, w), i, sid, _bits(held))
        page = sorted(exact.values(), reverse=True)
    return page[:want]


class _Unwalked:
    """How many of the rows not walked yet hold each term: a session not met yet
    has no more messages holding a term, which bounds its coverage."""

    def __init__(
        self,
        rows: Mapping[int, list[Any]],
        weights: Sequence[float],
        total: float,
        w: SessionWeights,
    ) -> None:
        self.rows, self.weights, self.total, self.w = rows, weights, total, w
        self.left = self._counts(Counter(row[3] for row in rows.values()))

    @staticmethod
    def _counts(sets: Counter[int]) -> Counter[int]:
        counts: Counter[int] = Counter()
        for bits, n in sets.items():
            for bit in _term_counts((bits,)):
                counts[bit] += n
        return counts

    def walk(self, ids: Iterable[int]) -> None:
        rows = self.rows
        self.left -= self._counts(Counter(rows[i][3] for i in ids))

    def most(self) -> float:
        """The most coverage a session not met yet can add (``_score``)."""
        return _score(0.0, self.left, self.weights, self.total, self.w)


def _held(
    rows: Mapping[int, list[Any]], sessions: Sequence[str], passing: Passing, members: Members
) -> dict[str, Counter[int]]:
    """How many of each session's kept matches hold each term (by bit)."""
    found = members(sessions)
    kept = passing([i for ids in found.values() for i in ids])
    return {sid: _term_counts(rows[i][3] for i in ids if i in kept) for sid, ids in found.items()}


def _values(evidence: Evidence, total: float) -> list[tuple[float, int]]:
    """Each row's ``(row_value, id)``."""
    bm25 = SESSION_WEIGHTS.bm25  # row_value's arithmetic (rows hold floats), inlined
    return [(row[0] / total + bm25 * row[1], i) for i, row in evidence.rows.items()]


def _best_first(pairs: Sequence[tuple[float, int]]) -> Iterator[tuple[float, int]]:
    """``(value, id)`` pairs, best value first, then newest; only the head is sorted
    until more is read."""
    size, done = 64, 0
    while True:
        head = heapq.nlargest(size, pairs)
        yield from head[done:]
        if len(head) < size:
            return
        done, size = len(head), 4 * size


def _chunks(pairs: Iterable[tuple[float, int]], size: int) -> Iterator[list[tuple[float, int]]]:
    """``pairs`` in lists of ``size``, then twice as many each time."""
    chunk: list[tuple[float, int]] = []
    for pair in pairs:
        chunk.append(pair)
        if len(chunk) == size:
            yield chunk
            chunk, size = [], 2 * size
    if chunk:
        yield chunk


def more_sessions(
    found: Sequence[dict[str, Any]],
    want: int,
    more: Callable[[list[Any], list[str]], list[dict[str, Any]]],
) -> list[dict[str, Any]]:
    """What a supplement adds to a page of sessions ``found``: sessions not on it yet,
    each once with its first row, until ``want`` are listed.

    ``more(listed, met)`` gives the supplement's best rows, ranked, of sessions
    not in ``met``, as many as ``want`` less ``listed`` asks.  A supplement
    ranks rows, not sessions: several of its rows can share a session, so it
    is asked again without the sessions met until it runs dry.
    """
    listed = list(found)
    met = {row["session_id"] for row in listed}
    while (missing := want - len(listed)) > 0:
        rows = more(listed, sorted(met))
        new = [row for row in rows if row["session_id"] not in met]
        for row in new:
            if row["session_id"] not in met:  # its first row is its best
                met.add(row["session_id"])
                listed.append(row)
        if len(rows) < missing or not new:  # run dry
            break
    return listed[len(found) :]


def best_session_ids(
    evidence: Evidence, want: int, passing: Passing, members: Members
) -> list[tuple[int, int]]:
    """The best message of each of the top ``want`` sessions (``top_sessions``),
    sessions best first, with the terms (bits) the session's kept messages hold."""
    return [(best, held) for _, best, _, held in top_sessions(evidence, want, passing, members)]


def index_page(
    conn: sqlite3.Connection,
    table: str,
    units: Sequence[str],
    any_unit: str,
    envelope_ids: tuple[int, int],
    extra: str,
    documents: int,
    want: int,
    passing: Passing,
    sort: str | None,
    held_fn: bool = False,
) -> tuple[list[int], dict[int, int]]:
    """``pick_ids`` over one index, from every match (``gather``), for ``sort`` (None,
    ``"sessions"``, or a time sort)."""
    found = gather(
        conn,
        table,
        units,
        any_unit,
        envelope_ids,
        extra,
        (),
        documents,
        _time_order(sort),
        held_fn,
    )
    return page_of(conn, found, want, passing, sort == "sessions")


def page_of(
    conn: sqlite3.Connection, evidence: Evidence, want: int, passing: Passing, by_sessions: bool
) -> tuple[list[int], dict[int, int]]:
    """``pick_ids`` of every match read from an index (``evidence``), sessions looked up
    the way that costs least for their number."""
    return pick_ids(evidence, want, *_sessions_of(conn, evidence, passing), by_sessions)


# Up to this many matches, one statement reads the session of each (the filters
# applied) faster than looking sessions up as the page needs them.
EAGER_ROWS = 1024


def _sessions_of(
    conn: sqlite3.Connection, evidence: Evidence, passing: Passing
) -> tuple[Passing, Members]:
    """How a page of ``evidence`` learns sessions: all at once for a few matches,
    else for the rows it walks (``passing``) and its sessions' other matches
    (``session_members``)."""
    if len(evidence.rows) > EAGER_ROWS:
        return passing, session_members(conn, evidence.rows)
    return _known_sessions(passing(list(evidence.rows)))


def _time_order(sort: str | None) -> str | None:
    return sort if sort in ("newest", "oldest") else None


def pick_ids(
    evidence: Evidence, want: int, passing: Passing, members: Members, by_sessions: bool
) -> tuple[list[int], dict[int, int]]:
    """The ids of the page (the best rows, or each top session's best row) and the
    terms (bits) each holds, or its session holds."""
    if by_sessions:
        picked = best_session_ids(evidence, want, passing, members)
        return [i for i, _ in picked], dict(picked)
    ids = best_row_ids(evidence, want, passing)
    return ids, {i: evidence.rows[i][3] for i in ids}


def label_rows(
    rows: list[dict[str, Any]], query: Any, held: dict[int, int]
) -> list[dict[str, Any]]:
    """``matched_terms`` and ``missing_terms`` on each row of a best match (``query``
    loose): the words it, or its session, holds and those it does not."""
    if query.loose:
        labels = term_labels(query)  # fix* as "fixed", written
        for row in rows:
            bits = held.get(row["id"], 0)
            # A word and its forms (fixed, fix*) share a label: held if either is.
            has = dict.fromkeys(t for bit, t in enumerate(labels) if bits >> bit & 1)
            row["matched_terms"] = list(has)
            row["missing_terms"] = [t for t in dict.fromkeys(labels) if t not in has]
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
    # The scan applied the filters and read each row's session.
    sessions = {rid: row[2] for rid, row in found.rows.items()}
    return pick_ids(found, want, *_known_sessions(sessions), sort == "sessions")


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
