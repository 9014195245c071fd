"""The exact top of every match, read block by block, best bound first.

``evidence.gather`` scores every match of a best match or a search by
sessions.  With rank bounds (``index/rank_bounds.py``) the same page comes
from far fewer rows: each block of ids gets a bound on what any of its rows
can score (the terms that may be in it, at their peak saturation there),
blocks are read best bound first, and reading stops once the page's worst
entry beats every unread block's bound:

* rows: the ``want``-th best row's (terms' weight, BM25) is above the next
  block's bound;
* sessions: a session is scored once one of its rows is in a block read in
  bound order, from every match of its id range (``session_score``); a
  session not yet scored has all its rows in unread blocks, so its score is
  at most the next block's bound plus the weight of the terms left in any
  unread block.

Rows are scored by ``hermes_fts_bm25()`` with FTS5's own statistics, to
the bit the ``rank`` the full pass reads, and the page is picked by the same
functions (``evidence.best_row_ids``, ``evidence.top_sessions``), so both
paths give the same page.  Terms without bounds (rare ones, phrases,
prefixes) are read whole up front; blocks after the bounds' build or
changed since count as holding every term at its highest saturation.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..index import rank_bounds
from ..index.rank_bounds import MAX_SATURATION, SHIFT
from .evidence import (
    HELD_MAX,
    SESSION_WEIGHTS,
    Evidence,
    best_row_ids,
    term_weights,
    top_sessions,
)

__all__ = ["bounded_page", "one_phrase"]

FIRST_BLOCKS = 4  # blocks read in the first round; each round reads twice as many
# A unit that is one FTS5 phrase: one quoted string, maybe a prefix.
_ONE_PHRASE = re.compile(r'"(?:[^"]|"")*"\*?')


@dataclass
class _Unit:
    """One term: its weight, FTS5's IDF of it, and per block its peak saturation."""

    weight: float
    idf: float
    peaks: dict[int, float]  # block -> highest saturation of a row of it (known blocks)
    whole: bool  # read whole: known in every block (else unknown ones may hold it)
    top: float = MAX_SATURATION  # its highest saturation in any block


def bounded_page(
    conn: sqlite3.Connection,
    table: str,
    units: Sequence[str],
    envelope_ids: tuple[int, int],
    extra: str,
    documents: int,
    want: int,
    passing: Callable[[Sequence[int]], set[int]],
    by_sessions: bool,
) -> tuple[list[int], dict[int, int]] | None:
    """``evidence.pick_ids`` of a best match or a search by sessions without a time
    sort, from the blocks that can hold the page; None when ``table`` has no
    ready rank bounds or the query does not fit them (the caller scores every
    match instead)."""
    if not 1 <= len(units) <= HELD_MAX or not all(_ONE_PHRASE.fullmatch(u) for u in units):
        return None
    tokens = [rank_bounds.tokens_of(conn, table, u) for u in units]
    bounds = rank_bounds.load(conn, table, sorted({t for ts in tokens if ts for t in ts}))
    if bounds is None:
        return None
    n_rows, n_tokens = rank_bounds.index_totals(conn, table)
    avgdl = n_tokens / n_rows if n_rows else 1.0
    low, high = envelope_ids
    unknown_from = (bounds.last_id + 1) >> SHIFT  # blocks holding ids the bounds do not cover
    scale = bounds.saturation_scale(avgdl)
    counts, peaks, whole = [], [], []
    for unit, unit_tokens in zip(units, tokens):
        known = [bounds.tokens[t] for t in unit_tokens or () if t in bounds.tokens]
        read_whole = not unit_tokens or len(known) < len(unit_tokens)
        if read_whole:
            count, unit_peaks = _read_whole(conn, table, unit, avgdl)
        else:
            count, unit_peaks = _from_bounds(conn, table, unit, known, bounds, scale)
        counts.append(count)
        peaks.append(unit_peaks)
        whole.append(read_whole)
    one = len(units) == 1
    weights = [1.0] if one else term_weights(counts, documents)
    terms = [
        _Unit(w, _fts5_idf(n_rows, df), p, is_whole)
        for w, df, p, is_whole in zip(weights, counts, peaks, whole)
    ]
    top_id = conn.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()[0]
    first, last = max(low, 0) >> SHIFT, min(high, top_id) >> SHIFT
    unknown = {b for b in bounds.dirty if b < unknown_from}
    if top_id > bounds.last_id:  # rows the bounds do not cover
        unknown.update(range(max(first, unknown_from), last + 1))
    for term in terms:
        highest = max(term.peaks.values(), default=0.0)
        term.top = highest if term.whole or not unknown else MAX_SATURATION
    order = _block_order(terms, unknown, first, last, by_sessions)
    reader = _Reader(conn, table, units, terms, avgdl, envelope_ids, extra)
    evidence = Evidence(reader.rows, weights)
    kept = _Memo(passing)
    if by_sessions:
        return _sessions(reader, evidence, order, terms, want, kept)
    return _rows(reader, evidence, order, terms, want, kept)


def one_phrase(units: Sequence[tuple[str, str]]) -> bool:
    """Whether ``evidence_units`` are one unit that is one FTS5 phrase."""
    return len(units) == 1 and _ONE_PHRASE.fullmatch(units[0][1]) is not None


def _fts5_idf(n_rows: int, df: int) -> float:
    """The IDF FTS5's bm25() gives a phrase held by ``df`` of ``n_rows`` rows."""
    idf = math.log((n_rows - df + 0.5) / (df + 0.5)) if n_rows else 0.0
    return idf if idf > 0.0 else 1e-6


def _read_whole(
    conn: sqlite3.Connection, table: str, unit: str, avgdl: float
) -> tuple[int, dict[int, float]]:
    """A term without bounds: its rows counted and its peak saturation per block."""
    peaks: dict[int, float] = {}
    count = 0
    for rid, saturation in conn.execute(
        f"SELECT rowid, hermes_fts_bm25({table}, ?) FROM {table} WHERE {table} MATCH ?",
        (avgdl, unit),
    ):
        count += 1
        block = rid >> SHIFT
        if saturation > peaks.get(block, -1.0):
            peaks[block] = saturation
    return count, peaks


def _from_bounds(
    conn: sqlite3.Connection,
    table: str,
    unit: str,
    known: Sequence[tuple[int, Any, bytes]],
    bounds: rank_bounds.Bounds,
    scale: float,
) -> tuple[int, dict[int, float]]:
    """A term whose every token has bounds: its peak per covered block where all its
    tokens are (a phrase saturates no more than its least saturated token), and
    its rows counted: from the blocks' counts for one token, by the index for a
    phrase.  Other blocks are unknown."""
    peaks: dict[int, float] = {}
    count = 0
    dirty = bounds.dirty
    if len(known) == 1:
        ((_rows, counts, stored),) = known
        for block, n in enumerate(counts):
            if n and block not in dirty:
                count += n
                peaks[block] = min(MAX_SATURATION, stored[block] * scale)
        ranges = [(bounds.last_id + 1, 2**63 - 1)]
        ranges += [
            (b << SHIFT, min(((b + 1) << SHIFT) - 1, bounds.last_id))
            for b in dirty
            if b <= bounds.last_id >> SHIFT
        ]
        for lo, hi in ranges:
            count += conn.execute(
                f"SELECT count(*) FROM {table} WHERE {table} MATCH ? AND rowid BETWEEN ? AND ?",
                (unit, lo, hi),
            ).fetchone()[0]
        return count, peaks
    for block, ns in enumerate(zip(*(k[1] for k in known))):
        if all(ns) and block not in dirty:
            peaks[block] = min(MAX_SATURATION, min(k[2][block] for k in known) * scale)
    found = conn.execute(f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", (unit,))
    return int(found.fetchone()[0]), peaks


@dataclass
class _Block:
    block: int
    coverage: float  # the weight of the terms any row of it may hold
    bm25: float  # the most BM25 any row of it may have
    bits: int  # the terms any row of it may hold
    value: float  # the most one of its rows can be worth to a session (``row_value``)
    # What the reading order compares with the page's worst entry: a row's weight of
    # terms, or a session's score.
    score: float


def _block_order(
    terms: Sequence[_Unit], unknown: set[int], first: int, last: int, by_sessions: bool
) -> list[_Block]:
    """Every block inside ``[first, last]`` that may hold a match, best bound first.

    In an ``unknown`` block (changed or added since the bounds' build) a term
    with bounds may be anywhere, at the highest saturation there is.
    """
    coverage: dict[int, float] = {}
    bm25: dict[int, float] = {}
    bits: dict[int, int] = {}
    for bit, term in enumerate(terms):
        places = [
            (block, peak)
            for block, peak in term.peaks.items()
            if first <= block <= last and (term.whole or block not in unknown)
        ]
        if not term.whole:  # in an unknown block, at the highest saturation there is
            places += [(block, MAX_SATURATION) for block in unknown]
        weight, idf, mark = term.weight, term.idf, 1 << bit
        for block, peak in places:
            coverage[block] = coverage.get(block, 0.0) + weight
            bm25[block] = bm25.get(block, 0.0) + idf * peak
            bits[block] = bits.get(block, 0) | mark
    total = sum(t.weight for t in terms) or 1.0
    w = SESSION_WEIGHTS
    blocks: list[_Block] = []
    for block, cov in coverage.items():
        value = cov / total + w.bm25 * bm25[block]
        score = value + w.coverage if by_sessions else cov
        blocks.append(_Block(block, cov, bm25[block], bits[block], value, score))
    if by_sessions:
        blocks.sort(key=lambda b: (-b.value, b.block))
    else:
        blocks.sort(key=lambda b: (-b.coverage, -b.bm25, b.block))
    return blocks


class _Memo:
    """``passing`` that asks about each id once."""

    def __init__(self, passing: Callable[[Sequence[int]], set[int]]) -> None:
        self.passing = passing
        self.known: dict[int, bool] = {}

    def __call__(self, ids: Sequence[int]) -> set[int]:
        ask = [i for i in ids if i not in self.known]
        if ask:
            kept = self.passing(ask)
            for i in ask:
                self.known[i] = i in kept
        return {i for i in ids if self.known[i]}


class _Reader:
    """Reads blocks of the index into ``rows`` (``Evidence.rows``' shape), each once."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        table: str,
        units: Sequence[str],
        terms: Sequence[_Unit],
        avgdl: float,
        envelope_ids: tuple[int, int],
        extra: str,
    ) -> None:
        self.conn = conn
        self.low, self.high = envelope_ids
        self.read: set[int] = set()
        self.rows: dict[int, list[Any]] = {}
        self.by_block: dict[int, list[int]] = {}
        self.weights = [t.weight for t in terms]
        self.coverage: dict[int, float] = {}
        one = len(units) == 1
        held = "1" if one else f"hermes_fts_held({table})"
        idf_marks = ", ".join("?" * len(terms))
        self.sql = (
            f"SELECT {table}.rowid, hermes_fts_bm25({table}, ?, {idf_marks}), {held}, "
            f"m.session_id FROM {table} JOIN messages m ON m.id = {table}.rowid "
            f"WHERE {table} MATCH ? AND {table}.rowid BETWEEN ? AND ?{extra}"
        )
        self.head = [avgdl, *(t.idf for t in terms), " OR ".join(units)]

    def blocks(self, blocks: Iterable[int]) -> None:
        """Read the blocks not read yet."""
        todo = sorted(set(blocks) - self.read)
        self.read.update(todo)
        for lo, hi in _runs(todo):
            first = max(self.low, lo << SHIFT)
            last = min(self.high, ((hi + 1) << SHIFT) - 1)
            if first > last:
                continue
            for rid, bm25, bits, sid in self.conn.execute(self.sql, [*self.head, first, last]):
                coverage = self.coverage.get(bits)
                if coverage is None:
                    coverage = self.coverage[bits] = sum(
                        w for bit, w in enumerate(self.weights) if bits >> bit & 1
                    )
                self.rows[rid] = [coverage, bm25, sid, bits]
                self.by_block.setdefault(rid >> SHIFT, []).append(rid)


def _runs(blocks: Sequence[int]) -> list[tuple[int, int]]:
    """Sorted block numbers as runs of consecutive ones, ``(first, last)``."""
    runs: list[tuple[int, int]] = []
    for b in blocks:
        if runs and runs[-1][1] == b - 1:
            runs[-1] = (runs[-1][0], b)
        else:
            runs.append((b, b))
    return runs


def _next_end(order: Sequence[_Block], start: int, size: int, floor: float | None) -> int:
    """Where the next round of reading stops: ``size`` more blocks, or, once the page
    has its worst entry ``floor``, only the blocks whose bound reaches it (at
    most ``size``)."""
    end = min(len(order), start + size)
    if floor is None:
        return end
    stop = start
    while stop < end and order[stop].score >= floor:
        stop += 1
    return max(stop, start + 1)


def _cheap_terms(costs: Sequence[float], floor: float) -> int:
    """The terms (bits) that cannot lift an entry to ``floor`` even all together: the
    cheapest ones whose ``costs`` add up to less.  Blocks only they may be in
    need no reading (MaxScore's non-essential terms)."""
    mask, spent = 0, 0.0
    for k in sorted(range(len(costs)), key=lambda k: costs[k]):
        if spent + costs[k] >= floor:
            break
        spent += costs[k]
        mask |= 1 << k
    return mask


def _rows(
    reader: _Reader,
    evidence: Evidence,
    order: list[_Block],
    terms: Sequence[_Unit],
    want: int,
    kept: _Memo,
) -> tuple[list[int], dict[int, int]]:
    ids: list[int] = []
    start, size, floor = 0, FIRST_BLOCKS, None
    while start < len(order):
        end = _next_end(order, start, size, floor)
        reader.blocks(b.block for b in order[start:end])
        start, size = end, 2 * size
        ids = best_row_ids(evidence, want, kept)
        if start < len(order) and len(ids) >= want:
            worst = evidence.rows[ids[want - 1]]
            floor = worst[0]
            # A row holding only cheap terms has less weight than the worst on the page.
            cheap = _cheap_terms([t.weight for t in terms], floor)
            order[start:] = [b for b in order[start:] if b.bits & ~cheap]
            if start >= len(order):
                break
            nxt = order[start]
            if (worst[0], worst[1]) > (nxt.coverage, nxt.bm25):
                break
    return ids, {i: evidence.rows[i][3] for i in ids}


def _sessions(
    reader: _Reader,
    evidence: Evidence,
    order: list[_Block],
    terms: Sequence[_Unit],
    want: int,
    kept: _Memo,
) -> tuple[list[int], dict[int, int]]:
    w = SESSION_WEIGHTS
    total = sum(t.weight for t in terms) or 1.0
    # The most one term adds to a row's value, and to a session's score.
    row_most = [t.weight / total + w.bm25 * t.idf * t.top for t in terms]
    session_most = [r + w.coverage * t.weight / total for r, t in zip(row_most, terms)]

    def share(bits: int) -> float:
        return sum(t.weight for k, t in enumerate(terms) if bits >> k & 1) / total

    seen: set[str] = set()
    top: list[tuple[float, int, str, list[int]]] = []
    start, size, floor = 0, FIRST_BLOCKS, None
    rows = evidence.rows
    while start < len(order):
        end = _next_end(order, start, size, floor)
        in_order = [b.block for b in order[start:end]]
        reader.blocks(in_order)
        start, size = end, 2 * size
        # Every session of a block read in order is scored from all its rows.
        fresh = {rows[i][2] for b in in_order for i in reader.by_block.get(b, ())} - seen
        seen |= fresh
        reader.blocks(_session_blocks(reader.conn, fresh))
        top = top_sessions(evidence, want, kept)
        if start < len(order) and len(top) >= want:
            floor = top[want - 1][0]
            cheap = _cheap_terms(session_most, floor)
            order[start:] = [b for b in order[start:] if b.bits & ~cheap]
            if start >= len(order):
                break
            # An unscored session: its best row is in an unread block or holds only
            # cheap terms; it holds terms of unread blocks and cheap ones.
            left = cheap
            for b in order[start:]:
                left |= b.bits
            best = max(order[start].value, sum(r for k, r in enumerate(row_most) if cheap >> k & 1))
            if floor > best + w.coverage * share(left):
                break
    picked = []
    for _, _, _, mine in top:
        held = 0
        for i in mine:
            held |= rows[i][3]
        picked.append((min(mine, key=evidence.row_key), held))
    return [i for i, _ in picked], dict(picked)


def _session_blocks(conn: sqlite3.Connection, sessions: set[str]) -> list[int]:
    """The blocks of every message of ``sessions``."""
    if not sessions:
        return []
    blocks: list[int] = []
    for lo, hi in conn.execute(
        "SELECT min(id), max(id) FROM messages "
        "WHERE session_id IN (SELECT value FROM json_each(?)) GROUP BY session_id",
        (_json_strings(sessions),),
    ):
        blocks.extend(range(lo >> SHIFT, (hi >> SHIFT) + 1))
    return blocks


def _json_strings(values: Iterable[str]) -> str:
    return json.dumps(list(values))
