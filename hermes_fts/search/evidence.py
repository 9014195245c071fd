"""Best match evidence: every match with the terms it holds, the exact top rows.

A best match (``query.best.best_match``) ranks the rows that hold every word
first, then by the weight of the query terms they hold (each term's BM25 IDF),
then BM25, then newest first
(``Evidence.row_key``).  ``gather`` reads the evidence from one FTS5 index,
``like_evidence`` from a LIKE scan.  ``best_row_ids`` picks the page among
the rows the filters keep, checking candidates best first, so the page is
the exact top of every match.  Sessions are ranked in ``search/sessions.py``.
"""

from __future__ import annotations

import heapq
import math
import re
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import reduce
from operator import or_
from typing import Any

from .._sqlite import sqlite_sort_key
from ..content import INDEXED_COLUMNS
from ..index.schema import MESSAGE_TEXT
from ..query.wordforms import unit_labels
from .request import MAX_ROWID, MIN_ROWID

__all__ = [
    "EVERY_ID",
    "HELD_MAX",
    "Apart",
    "Evidence",
    "IndexUnits",
    "Passing",
    "best_row_ids",
    "credit",
    "document_counts",
    "fts5_idf",
    "gather",
    "id_array",
    "label_rows",
    "like_evidence",
    "more_sessions",
    "passing_ids",
    "score_apart",
    "term_weights",
    "unit_counts",
    "units_held",
    "units_of",
    "weigh",
    "word_weights",
]


def id_array(ids: Iterable[int]) -> str:
    """Integer ids as a JSON array, for ``json_each`` (json.dumps, several times faster)."""
    return "[" + ",".join(map(str, ids)) + "]"


# ---------------------------------------------------------------------------
# Best match and session evidence: every match scored, the top found exactly


# Units hermes_fts_held() can report (one bit each in a 64-bit integer).
HELD_MAX = 62
# The rowid range that means "every row".
EVERY_ID = (MIN_ROWID, MAX_ROWID)
# Which of the given ids the search's filters keep, each with its session.
Passing = Callable[[Sequence[int]], Mapping[int, str]]
# A row the index has not taken (pending for it), as a LIKE test found it:
# ``(id, session_id, timestamp, units held, kept by the filters, BM25)``; the
# BM25 is the one the index will give it (``score_apart``), or 0 where that
# cannot be had.
Apart = tuple[int, str, Any, int, bool, float]


def term_weights(counts: Sequence[int], documents: int) -> list[float]:
    """BM25's IDF of each term from its match count: rarer terms weigh more."""
    n = max(documents, *counts, 1)
    return [math.log(1.0 + (n - df + 0.5) / (df + 0.5)) for df in counts]


def word_weights(
    weights: Sequence[float], counts: Sequence[int], groups: Sequence[int]
) -> list[float]:
    """Each word's weight (``groups[u]``: the word of unit ``u``): its heaviest form
    some row holds, which is the form as written when rows hold it, and 0 for a
    word no row holds (it then takes no share of the query's weight)."""
    out = [0.0] * (max(groups, default=-1) + 1)
    for weight, count, group in zip(weights, counts, groups):
        if count and weight > out[group]:
            out[group] = weight
    return out


def credit(bits: int, weights: Sequence[float], groups: Sequence[int]) -> tuple[float, int]:
    """What a row holding the units ``bits`` holds of the query: each word it holds
    once, at the weight of its heaviest form held, summed word by word; and the
    words it holds, a bit each."""
    best: dict[int, float] = {}
    for unit, (weight, group) in enumerate(zip(weights, groups)):
        if bits >> unit & 1 and weight > best.get(group, -1.0):
            best[group] = weight
    return sum(best[g] for g in sorted(best)), sum(1 << g for g in best)


# What a bounded form earns above its bound (``weigh``): the word as written then
# wins a tie with its stem alone (고양이 over 고양시 on the LIKE scan, no BM25).
_HAIR = 1e-6


def weigh(
    sets: Iterable[int],
    counts: Sequence[int],
    documents: int,
    groups: Sequence[int] | None,
    caps: Sequence[int] | None = None,
) -> tuple[dict[int, tuple[float, int]], list[float]]:
    """What each set of units rows hold (a bit per unit) is worth (``credit``), each unit
    at no more than the unit ``caps`` names, and each word's weight
    (``word_weights``, unbounded), from each unit's document count; ``groups``
    and ``caps`` as ``IndexUnits``' (None: each unit its own word, unbounded)."""
    weights = term_weights(counts, documents)
    earned = weights
    if caps is not None:  # no more than the form that bounds it, and a hair to break a tie
        earned = [min(weight, weights[cap] + _HAIR) for weight, cap in zip(weights, caps)]
    groups = groups if groups is not None else range(len(counts))
    credits = {bits: credit(bits, earned, groups) for bits in sets}
    return credits, word_weights(weights, counts, groups)


@dataclass
class Evidence:
    """Every row matching any unit, with what it holds: ``rows[id] = [coverage, bm25,
    session_id, words, units]`` (``coverage``: the weight of the words it holds,
    ``credit``; ``words`` a bit per word, ``units`` per unit, which a one-unit row
    leaves out (``units_of``); ``session_id`` None when read from an index, which
    leaves sessions to the page), and each word's weight (``word_weights``)."""

    rows: dict[int, list[Any]]
    weights: list[float]
    # A time sort ("newest", "oldest"): rows with the most of the terms first,
    # each level in time order (``times``: each row's timestamp).
    order: str | None = None
    times: dict[int, Any] = field(default_factory=dict)

    def row_key(self, row_id: int) -> tuple[Any, ...]:
        """Best first: the rows with every word, then the weight of the terms held,
        then BM25 (or the time order), then newest."""
        coverage, score, _, words = self.rows[row_id][:4]
        # A rare form of one word (`stage` for staging) weighs more than two common
        # words: by weight alone it came before the rows that hold every word.
        partial = len(self.weights) > 1 and words != (1 << len(self.weights)) - 1
        if self.order is None:
            return (partial, -coverage, -score, -row_id)
        when = (sqlite_sort_key(self.times.get(row_id)), row_id)
        return (partial, -coverage, _Later(when) if self.order == "newest" else when)


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


@dataclass(frozen=True)
class IndexUnits:
    """A best match's units on one index, as ``gather`` and ``sessions.index_sessions``
    read them: ``units`` and their OR (``any_unit``), the word of each unit
    (``groups``) and the unit whose weight bounds what a row earns for it
    (``caps``, ``wordforms.unit_caps``; None: none), the rowids read
    (``envelope_ids``), conditions on ``m`` a row must meet to be answered by
    this index (``extra``, ``search._blind_spot``), the store's message count
    (``documents``), whether the connection has ``hermes_fts_held()``
    (``held_fn``), and the condition on the index's rowid
    that names the rows it holds in a state the messages no longer have
    (``lagging``: pending for it, their pending text counted instead)."""

    conn: sqlite3.Connection
    table: str
    units: Sequence[str]
    groups: Sequence[int]
    any_unit: str
    envelope_ids: tuple[int, int]
    extra: str
    documents: int
    held_fn: bool = False
    lagging: str = ""
    caps: Sequence[int] | None = None

    @property
    def every_match(self) -> bool:
        """Whether the matches read are every match the index holds."""
        return self.envelope_ids == EVERY_ID and not self.extra

    def in_pass(self) -> bool:
        """Whether one statement can report the units each row holds
        (``hermes_fts_held()``): ``any_unit`` is their OR, at most ``HELD_MAX``."""
        units = self.units
        return self.held_fn and len(units) <= HELD_MAX and self.any_unit == " OR ".join(units)

    def held(self) -> dict[int, int]:
        """Which units each row holds, each unit's doclist read alone (``units_held``)."""
        return units_held(self.conn, self.table, self.units, self.envelope_ids)

    def weigh(
        self, sets: Mapping[int, int], apart: Sequence[Apart] = ()
    ) -> tuple[dict[int, tuple[float, int]], list[float]]:
        """``weigh`` of the sets of units the rows read hold (``sets``: how many rows
        hold each), the units' document counts from them when they are every match;
        the rows ``apart`` (none of them in the index) count too, kept or not, and
        what the index holds of them (``lagging``) does not: the counts the index
        will have once it takes them."""
        if self.lagging:  # the rows it holds less those: one pass over each doclist
            counts = unit_counts(self.conn, self.table, self.units, excluding=self.lagging)
        else:
            counts = document_counts(self.conn, self.table, self.units, sets, self.every_match)
        counts = [n + sum(row[3] >> b & 1 for row in apart) for b, n in enumerate(counts)]
        return weigh(sets, counts, self.documents, self.groups, self.caps)


def gather(u: IndexUnits, order: str | None = None, apart: Sequence[Apart] = ()) -> Evidence:
    """Every match of ``u.any_unit`` (the OR of the units, or the one unit), with the
    words it holds, from the index.  Sessions are left out (``rows[id][2]`` is
    None): a page looks up the few it needs (``passing_ids``).

    A row's BM25 is FTS5's rank of ``any_unit``: for an OR, the sum over the
    units the row holds, which is the rank of any query of those units.
    Which units a row holds comes from the same pass (``IndexUnits.in_pass``),
    else from each unit's doclist read alone (rowids only).  The rows ``apart``
    are weighed with them, so a row the index has not taken yet ranks by the
    words it holds like any other.
    """
    table, extra = u.table, u.extra
    low, high = u.envelope_ids
    one = len(u.units) == 1  # a strict query: the whole of it is the one unit
    in_pass = not one and u.in_pass()
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
    for rid, rank, ts, bits in u.conn.execute(sql, [u.any_unit, low, high]):
        rows[rid] = [1.0 if one else 0.0, -rank, None, 1 if one else bits]
        if order:
            times[rid] = ts
    if not (one or in_pass):
        held = u.held()
        for rid, row in rows.items():
            row[3] = held.get(rid, 0)
    for rid, sid, ts, bits, kept, bm25 in apart:
        if not kept:  # in the words' weights below, never on a page
            continue
        rows[rid] = [1.0 if one else 0.0, bm25, sid, 1 if one else bits]
        if order:
            times[rid] = ts
    if one:
        return Evidence(rows, [1.0], order, times)
    # Rows hold few distinct sets of units: count and weigh each set once.
    credits, words = u.weigh(Counter(row[3] for row in rows.values()), apart)
    for row in rows.values():
        row.append(row[3])
        row[0], row[3] = credits[row[3]]
    return Evidence(rows, words, order, times)


def units_of(row: Sequence[Any]) -> int:
    """The units an ``Evidence`` row holds, a bit each (a one-unit row: its word)."""
    return int(row[-1])


def units_held(
    conn: sqlite3.Connection, table: str, units: Sequence[str], envelope_ids: tuple[int, int]
) -> dict[int, int]:
    """Which units each row holds (a bit per unit), each unit's doclist read alone
    (rowids only): for a connection without ``hermes_fts_held()``, or units that
    are not one phrase each."""
    held: dict[int, int] = {}
    for bit, unit in enumerate(units):
        for (rid,) in conn.execute(
            f"SELECT rowid FROM {table} WHERE {table} MATCH ? AND rowid BETWEEN ? AND ?",
            (unit, *envelope_ids),
        ):
            held[rid] = held.get(rid, 0) | 1 << bit
    return held


def document_counts(
    conn: sqlite3.Connection,
    table: str,
    units: Sequence[str],
    sets: Mapping[int, int],
    every_match: bool,
) -> list[int]:
    """How many rows hold each unit: from the sets of units the rows read hold
    (``sets``, how many rows hold each) when they are ``every_match``; else
    asked of the whole index, since a term's weight is the same whatever part
    of the store is read."""
    if every_match:
        return [sum(n for bits, n in sets.items() if bits >> b & 1) for b in range(len(units))]
    return unit_counts(conn, table, units)


def fts5_idf(n_rows: int, df: int) -> float:
    """The IDF FTS5's bm25() gives a phrase held by ``df`` of ``n_rows`` rows."""
    # Separate statements read the two counts: a sync in another process between
    # them can make ``df`` exceed ``n_rows``, a word every row holds (FTS5: 1e-6).
    ratio = (n_rows - df + 0.5) / (df + 0.5)
    idf = math.log(ratio) if n_rows and ratio > 0.0 else 0.0
    return idf if idf > 0.0 else 1e-6


# One FTS5 phrase, its last token a prefix or not: a best match's unit.
_PHRASE = re.compile(r'"(?:[^"]|"")*"\*?')
_APART_TABLE = "hermes_fts_apart"  # in temp: a read-only store writes nothing
_TOKENIZE = re.compile(r"tokenize\s*=\s*'((?:[^']|'')*)'")


def score_apart(u: IndexUnits, apart: Sequence[Apart], totals: tuple[int, int]) -> list[Apart]:
    """``apart`` with the BM25 each row will have once the index takes it, so that a
    message Hermes wrote a moment ago ranks among the indexed matches, not
    after every one of them: its text tokenized into a TEMP table with the
    index's own tokenizer, scored by ``hermes_fts_bm25()`` with the statistics
    FTS5 scores the indexed rows by (``totals``: its rows and tokens,
    ``rank_bounds.index_totals``; each phrase's rows in it), so both are on one
    scale, for every phrase of the MATCH text in the order FTS5 numbers them.
    Counting the pending matches but not the rest of the backlog gave them a
    lower IDF than the indexed rows, and the best of them ranked last.
    Unchanged (no BM25) where the connection lacks the function or the text
    has more phrases than it counts."""
    phrases = _PHRASE.findall(u.any_unit)
    if not (apart and u.held_fn and 0 < len(phrases) <= HELD_MAX):
        return list(apart)
    _fill_apart_table(u.conn, u.table, [row[0] for row in apart])
    n_rows, n_tokens = totals
    # The IDF the indexed rows' rank has.  A phrase no row here holds adds
    # nothing to their scores, so it needs no count: one pass says which they hold.
    bits = u.conn.execute(
        f"SELECT hermes_fts_held({_APART_TABLE}) FROM temp.{_APART_TABLE} "
        f"WHERE {_APART_TABLE} MATCH ?",
        (u.any_unit,),
    )
    held_any = reduce(or_, (b for (b,) in bits), 0)
    held = [bool(held_any >> i & 1) for i in range(len(phrases))]
    dfs = iter(unit_counts(u.conn, u.table, [x for x, h in zip(phrases, held) if h]))
    idfs = [fts5_idf(n_rows, next(dfs)) if h else 0.0 for h in held]
    avgdl = n_tokens / n_rows if n_rows else 1.0
    scores = dict(
        u.conn.execute(
            f"SELECT rowid, hermes_fts_bm25({_APART_TABLE}, ?{', ?' * len(idfs)}) "
            f"FROM temp.{_APART_TABLE} WHERE {_APART_TABLE} MATCH ?",
            [avgdl, *idfs, u.any_unit],
        ).fetchall()
    )
    return [(*row[:5], float(scores.get(row[0], 0.0))) for row in apart]


def _fill_apart_table(conn: sqlite3.Connection, table: str, ids: Sequence[int]) -> None:
    """The TEMP table of ``score_apart``, holding the indexed text of ``ids`` alone,
    made (again) with ``table``'s tokenizer when it has another or none."""
    (sql,) = conn.execute("SELECT sql FROM main.sqlite_master WHERE name = ?", (table,)).fetchone()
    tokenize = _TOKENIZE.search(sql)
    # As sqlite_master keeps it: without the schema, so that a table made for the
    # same tokenizer is reused (compared with "temp." it was made again every search).
    create = (
        f"CREATE VIRTUAL TABLE {_APART_TABLE} USING fts5({', '.join(INDEXED_COLUMNS)}, "
        f"tokenize='{tokenize.group(1) if tokenize else ''}')"
    )
    made = conn.execute(
        "SELECT sql FROM temp.sqlite_master WHERE name = ?", (_APART_TABLE,)
    ).fetchone()
    if made is None or made[0] != create:
        conn.execute(f"DROP TABLE IF EXISTS temp.{_APART_TABLE}")
        conn.execute(create.replace(" TABLE ", " TABLE temp.", 1))
    conn.execute(f"DELETE FROM temp.{_APART_TABLE}")
    columns = ", ".join(INDEXED_COLUMNS)
    conn.execute(
        f"INSERT INTO temp.{_APART_TABLE}(rowid, {columns}) SELECT id, {columns} "
        f"FROM {MESSAGE_TEXT} WHERE id IN (SELECT value FROM json_each(?))",
        (id_array(ids),),
    )


def unit_counts(
    conn: sqlite3.Connection, table: str, units: Sequence[str], excluding: str = ""
) -> list[int]:
    """How many rows of the index hold each unit (its document frequency); without
    the rows that meet ``excluding``, a condition on the index's rowid."""
    where = f" AND NOT ({table}.{excluding})" if excluding else ""
    sql = f"SELECT count(*) FROM {table} WHERE {table} MATCH ?{where}"
    return [int(conn.execute(sql, (u,)).fetchone()[0]) for u in units]


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
    ranked = _ranked_head(evidence, size, 0)
    start, batch, rounds = 0, want, 1
    while len(out) < want:
        if start >= len(ranked):
            if len(ranked) == len(evidence.rows):
                break  # every match tested
            size *= 4
            ranked = _ranked_head(evidence, size, rounds)
            rounds += 1
            continue
        chunk = ranked[start : start + batch]
        kept = passing(chunk)
        out += [i for i in chunk if i in kept][: want - len(out)]
        start += len(chunk)
        # As many more as the keep rate so far predicts; twice as many when none passed.
        batch = (-(-(want - len(out)) * start // len(out)) + 1) if out else 2 * batch
    return out


def _ranked_head(evidence: Evidence, size: int, rounds: int) -> list[int]:
    """The ``size`` best ids, after ``rounds`` heads that were too short; every id,
    sorted once, past two or when ``size`` is not much less than their number.
    Each head ranks every match: filters that kept few of a session's 400,000
    (``--exclude``) had them ranked six times over, and the search took seconds."""
    if rounds < 2 and size * 16 < len(evidence.rows):
        return heapq.nsmallest(size, evidence.rows, key=evidence.row_key)
    return sorted(evidence.rows, key=evidence.row_key)


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


def label_rows(
    rows: list[dict[str, Any]], query: Any, held: dict[int, int]
) -> list[dict[str, Any]]:
    """``matched_terms`` and ``missing_terms`` on each row of a best match (``query``
    loose): the words it, or its session, holds and those it does not; ``held``:
    the units (a bit each) of each row, or of its session."""
    if query.loose:
        labels = unit_labels(query)  # a word and its forms (fixed, fix*) as "fixed"
        for row in rows:
            bits = held.get(row["id"], 0)
            has = dict.fromkeys(t for bit, t in enumerate(labels) if bits >> bit & 1)
            row["matched_terms"] = list(has)
            row["missing_terms"] = [t for t in dict.fromkeys(labels) if t not in has]
    return rows


def _time_order(sort: str | None) -> str | None:
    return sort if sort in ("newest", "oldest") else None


def like_evidence(
    found: Iterable[Sequence[Any]],
    units: int,
    documents: int,
    order: str | None = None,
    groups: Sequence[int] | None = None,
    caps: Sequence[int] | None = None,
) -> Evidence:
    """Evidence from a LIKE scan's ``(id, session_id, timestamp, holds unit 1, …)``
    rows: the words' weights from how many rows hold each unit (one unit: a strict
    query; ``groups`` and ``caps`` as ``IndexUnits``'); ``order``: the search's sort (a
    time sort orders each level)."""
    rows: dict[int, list[Any]] = {}
    times: dict[int, Any] = {}
    counts = [0] * units
    for rid, sid, ts, *hits in found:
        bits = sum(1 << k for k, hit in enumerate(hits) if hit)
        for k, hit in enumerate(hits):
            counts[k] += bool(hit)
        rows[int(rid)] = [0.0, 0.0, sid, bits]
        times[int(rid)] = ts
    if units == 1:
        for row in rows.values():
            row[0] = 1.0
        return Evidence(rows, [1.0], _time_order(order), times)
    credits, words = weigh({row[3] for row in rows.values()}, counts, documents, groups, caps)
    for row in rows.values():
        row.append(row[3])
        row[0], row[3] = credits[row[3]]
    return Evidence(rows, words, _time_order(order), times)
