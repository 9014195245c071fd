"""The exact top of a one-term search, read block by block, best bound first.

``evidence.gather`` scores every match of a search by sessions or a ranked
one-term search.  For a word in a tenth of the store that is a tenth of the
store.  With rank bounds (``index/rank_bounds.py``) the same page comes from
far fewer rows: each block of ids has a bound on the term's BM25 in any of
its rows (FTS5's IDF times the block's peak saturation), blocks are read
best bound first, and reading stops once the page's worst entry beats the
next block's bound:

* ranked rows: the ``want``-th best row's BM25 is above it;
* sessions: with one term a session's score is its best message's, so the
  ``want``-th session's best BM25 above the next bound leaves every unread
  row below the page, and no session on it has a better row unread.

Rows are scored by ``hermes_fts_bm25()`` with the index's own statistics,
FTS5's ``rank`` to the bit, and the page is picked by the functions the
full pass uses (``evidence.best_row_ids``, ``evidence.top_sessions``), so
both give the same page.  A term without bounds (a rare one, a prefix, one
the Python side cannot tokenize as the index does) is left to the full
pass, which is cheap for rare terms.  Blocks changed or added since the
bounds' build count as holding the term at the highest saturation there is.
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..index import rank_bounds
from ..index.rank_bounds import MAX_SATURATION, SHIFT
from .evidence import EVERY_ID, SESSION_WEIGHTS, Evidence, best_row_ids, top_sessions

__all__ = ["bounded_page", "one_phrase"]

FIRST_BLOCKS = 4  # blocks read in the first round; each round reads at most twice as many
# A unit that is one FTS5 phrase: one quoted string.
_ONE_PHRASE = re.compile(r'"(?:[^"]|"")*"')
# Stopping needs the page's worst entry strictly above the next bound; this much
# more covers the rounding of turning a session's score back into a BM25.
_MARGIN = 1e-9


def one_phrase(units: Sequence[tuple[str, str]]) -> bool:
    """Whether ``evidence_units`` are one unit that is one FTS5 phrase (no prefix)."""
    return len(units) == 1 and _ONE_PHRASE.fullmatch(units[0][1]) is not None


def bounded_page(
    conn: sqlite3.Connection,
    table: str,
    unit: str,
    envelope_ids: tuple[int, int],
    extra: str,
    want: int,
    passing: Callable[[Sequence[int]], set[int]],
    by_sessions: bool,
) -> tuple[list[int], dict[int, int]] | None:
    """``evidence.pick_ids`` of the one-phrase query ``unit`` (ranked rows, or sessions),
    from the blocks that can hold the page; None when its tokens have no ready
    rank bounds on ``table`` (the caller scores every match instead)."""
    tokens = rank_bounds.tokens_of(conn, table, unit)
    if not tokens:
        return None
    bounds = rank_bounds.load(conn, table, sorted(set(tokens)))
    if bounds is None or any(t not in bounds.tokens for t in tokens):
        return None
    n_rows, n_tokens = rank_bounds.index_totals(conn, table)
    avgdl = n_tokens / n_rows if n_rows else 1.0
    df, peaks = _term(conn, table, unit, [bounds.tokens[t] for t in tokens], bounds, avgdl)
    idf = _fts5_idf(n_rows, df)
    top_id = int(conn.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()[0])
    low, high = envelope_ids
    first, last = max(low, 0) >> SHIFT, min(high, top_id) >> SHIFT
    unknown = {b for b in bounds.dirty if first <= b <= last}
    if top_id > bounds.last_id:  # rows the bounds do not cover
        unknown.update(range(max(first, (bounds.last_id + 1) >> SHIFT), last + 1))
    order = [(MAX_SATURATION * idf, b) for b in sorted(unknown)]
    best_first = sorted(
        (-peak, b) for b, peak in peaks.items() if first <= b <= last and b not in unknown
    )
    order += [(-peak * idf, b) for peak, b in best_first]
    reader = _Reader(conn, table, unit, idf, avgdl, envelope_ids, extra)
    evidence = Evidence(reader.rows, [1.0])
    kept = _Memo(passing)
    if by_sessions:
        return _sessions(reader, evidence, order, want, kept)
    return _rows(reader, evidence, order, want, kept)


def _fts5_idf(n_rows: int, df: int) -> float:
    """The IDF FTS5's bm25() gives a phrase held by ``df`` of ``n_rows`` rows."""
    idf = math.log((n_rows - df + 0.5) / (df + 0.5)) if n_rows else 0.0
    return idf if idf > 0.0 else 1e-6


def _term(
    conn: sqlite3.Connection,
    table: str,
    unit: str,
    known: Sequence[tuple[int, Any, bytes]],
    bounds: rank_bounds.Bounds,
    avgdl: float,
) -> tuple[int, dict[int, float]]:
    """The term's rows counted, and its peak saturation per covered, unchanged block
    where all its tokens are (a phrase saturates no more than its least
    saturated token)."""
    scale = bounds.saturation_scale(avgdl)
    dirty = bounds.dirty
    if len(known) == 1:  # the common case, kept to one pass over the blocks
        ((_, held, stored),) = known
        peaks = {
            b: min(MAX_SATURATION, stored[b] * scale)
            for b, n in enumerate(held)
            if n and b not in dirty
        }
    else:
        peaks = {}
        for block, counts in enumerate(zip(*(k[1] for k in known))):
            if all(counts) and block not in dirty:
                peaks[block] = min(MAX_SATURATION, min(k[2][block] for k in known) * scale)
    return _count(conn, table, unit, known, bounds), peaks


def _count(
    conn: sqlite3.Connection,
    table: str,
    unit: str,
    known: Sequence[tuple[int, Any, bytes]],
    bounds: rank_bounds.Bounds,
) -> int:
    """The term's document frequency: a phrase's from the index; one token's from
    the unchanged blocks' counts, and the index for the rest."""
    if len(known) > 1:
        found = conn.execute(f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", (unit,))
        return int(found.fetchone()[0])
    df = sum(n for block, n in enumerate(known[0][1]) if block not in bounds.dirty)
    ranges = [(bounds.last_id + 1, EVERY_ID[1])]
    ranges += [
        (b << SHIFT, min(((b + 1) << SHIFT) - 1, bounds.last_id))
        for b in bounds.dirty
        if b <= bounds.last_id >> SHIFT
    ]
    for lo, hi in ranges:
        df += conn.execute(
            f"SELECT count(*) FROM {table} WHERE {table} MATCH ? AND rowid BETWEEN ? AND ?",
            (unit, lo, hi),
        ).fetchone()[0]
    return int(df)


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
    """Reads id ranges of the index into ``rows`` (``Evidence.rows``' shape)."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        table: str,
        unit: str,
        idf: float,
        avgdl: float,
        envelope_ids: tuple[int, int],
        extra: str,
    ) -> None:
        self.conn = conn
        self.low, self.high = envelope_ids
        self.read: set[int] = set()  # blocks read whole
        self.rows: dict[int, list[Any]] = {}
        self.sql = (
            f"SELECT {table}.rowid, hermes_fts_bm25({table}, ?, ?), m.session_id "
            f"FROM {table} JOIN messages m ON m.id = {table}.rowid "
            f"WHERE {table} MATCH ? AND {table}.rowid BETWEEN ? AND ?{extra}"
        )
        self.head = [avgdl, idf, unit]

    def blocks(self, blocks: Iterable[int]) -> None:
        """Read the blocks not read whole yet."""
        todo = sorted(set(blocks) - self.read)
        self.read.update(todo)
        for lo, hi in _runs(todo):
            self.ids(lo << SHIFT, ((hi + 1) << SHIFT) - 1)

    def ids(self, first: int, last: int) -> None:
        """Read the rows of ids ``first`` to ``last``, inside the envelope."""
        first, last = max(self.low, first), min(self.high, last)
        if first > last:
            return
        rows = self.rows
        for rid, bm25, sid in self.conn.execute(self.sql, [*self.head, first, last]):
            rows[rid] = [1.0, bm25, sid, 1]


def _runs(blocks: Sequence[int]) -> list[tuple[int, int]]:
    """Sorted block numbers as runs of consecutive ones, ``(first, last)``."""
    runs: list[tuple[int, int]] = []
    for b in blocks:
        if runs and runs[-1][1] == b - 1:
            runs[-1] = (runs[-1][0], b)
        else:
            runs.append((b, b))
    return runs


def _next_end(order: Sequence[tuple[float, int]], start: int, size: int, floor: float) -> int:
    """Where the next round of reading stops: at most ``size`` more blocks, and only
    those whose bound reaches ``floor`` (at least one)."""
    end = min(len(order), start + size)
    stop = start + 1
    while stop < end and order[stop][0] >= floor:
        stop += 1
    return stop


def _read_until(
    reader: _Reader, order: Sequence[tuple[float, int]], worst: Callable[[], float | None]
) -> None:
    """Read blocks in ``order``, best bound first, until ``worst()`` (the page's worst
    entry as a BM25, None while the page is short) is above the next bound."""
    start, size, floor = 0, FIRST_BLOCKS, -math.inf
    while start < len(order):
        end = _next_end(order, start, size, floor)
        reader.blocks(b for _, b in order[start:end])
        start, size = end, 2 * size
        page_floor = worst()
        if page_floor is not None:
            floor = page_floor
            if start < len(order) and floor > order[start][0] + _MARGIN:
                return


def _rows(
    reader: _Reader,
    evidence: Evidence,
    order: Sequence[tuple[float, int]],
    want: int,
    kept: _Memo,
) -> tuple[list[int], dict[int, int]]:
    ids: list[int] = []

    def worst() -> float | None:
        nonlocal ids
        ids = best_row_ids(evidence, want, kept)
        return evidence.rows[ids[want - 1]][1] if len(ids) >= want else None

    _read_until(reader, order, worst)
    return ids, {i: 1 for i in ids}


def _sessions(
    reader: _Reader,
    evidence: Evidence,
    order: Sequence[tuple[float, int]],
    want: int,
    kept: _Memo,
) -> tuple[list[int], dict[int, int]]:
    """Sessions of one term: every matching message holds all of it, so a session's
    score is its best message's (``1 + bm25 weight × BM25 + coverage weight``),
    ties going to the newer best message.  Once the ``want``-th session's best
    BM25 beats every unread block, an unread row can neither enter the page
    nor change a session on it: no session needs its other rows read."""
    w = SESSION_WEIGHTS
    top: list[tuple[float, int, str, list[int]]] = []

    def worst() -> float | None:
        nonlocal top
        top = top_sessions(evidence, want, kept)
        if len(top) < want:
            return None
        return (top[want - 1][0] - 1.0 - w.coverage) / w.bm25  # the score as a BM25

    _read_until(reader, order, worst)
    return [best for _, best, _, _ in top], {best: 1 for _, best, _, _ in top}
