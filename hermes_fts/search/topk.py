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
FTS5's ``rank`` to the bit, read without their session: a session is looked
up only for the rows, best first, that can still change the page.  Ranked
rows are picked by the function the full pass uses
(``evidence.best_row_ids``); sessions by the same score and tie-break
(``sessions.first_sessions``), so both paths give the same page.  A term
without bounds (a rare one, a prefix, one the Python side cannot tokenize
as the index does) is left to the full pass, which is cheap for rare
terms.  Blocks changed or added since the bounds' build count as holding
the term at the highest saturation there is.

Between rounds only the page's rows are kept, and a row read below the
page's worst is dropped by SQLite, never handed to Python: each round ranks
the page and what can still enter it, not every row read so far.

A phrase of several tokens is bounded in each block by the lowest of its
tokens' peaks: it occurs no more often in a row than any of its tokens.
That bound holds wherever its tokens both are, for common words nearly
every block, while the phrase itself may be rare, and a rare phrase read
block by block took a statement per run of blocks.  So the phrase's rows
are counted first in the last few blocks that hold all its tokens: a phrase
that makes up enough of those rows to be in thousands (``という``, ``set
up``) is read by blocks, with its document frequency
counted whole for its IDF; any other is read by one statement that scores
every match, their number being the phrase's document frequency, and the
page is picked from them as the full pass picks it.  Past
``STATEMENT_BUDGET`` statements (blocks far apart, each a statement of its
own) a search reads the rest of the index in one.
"""

from __future__ import annotations

import math
import re
import sqlite3
from array import array
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..index import rank_bounds
from ..index.rank_bounds import MAX_SATURATION, SHIFT, TokenBounds
from .evidence import EVERY_ID, Evidence, Passing, best_row_ids, fts5_idf
from .sessions import first_sessions, pick_ids

__all__ = ["bounded_page", "one_phrase"]

FIRST_BLOCKS = 2  # blocks read in the first round; each round reads at most twice as many
# A phrase whose rows in a sample of SAMPLE_BLOCKS blocks (COMMON_PHRASE_ROWS at
# least) put it in COMMON_PHRASE_DF rows or more is read by blocks.
COMMON_PHRASE_ROWS = 8
COMMON_PHRASE_DF = 2000
SAMPLE_BLOCKS = 4
# Past this many statements reading blocks, the rest of the index is read in one.
STATEMENT_BUDGET = 32
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
    passing: Passing,
    by_sessions: bool,
) -> tuple[list[int], dict[int, int]] | None:
    """``sessions.pick_ids`` of the one-phrase query ``unit`` (ranked rows, or sessions),
    from the blocks that can hold the page; None when its tokens have no ready
    rank bounds on ``table`` (the caller scores every match instead).
    ``passing``: the ids the filters keep, each with its session."""
    tokens = rank_bounds.tokens_of(conn, table, unit)
    if not tokens:
        return None
    bounds = rank_bounds.load(conn, table, sorted(set(tokens)))
    if bounds is None or any(t not in bounds.tokens for t in tokens):
        return None
    n_rows, n_tokens = rank_bounds.index_totals(conn, table)
    avgdl = n_tokens / n_rows if n_rows else 1.0
    if len(tokens) > 1:
        known = _phrase_bounds([bounds.tokens[t] for t in dict.fromkeys(tokens)])
        if not _common_phrase(conn, table, unit, known):
            found = _whole_phrase(conn, table, unit, n_rows, avgdl, envelope_ids, extra)
            return pick_ids(found, want, passing, by_sessions)
        df = _phrase_count(conn, table, unit)
    else:
        known = bounds.tokens[tokens[0]]
        df = _count(conn, table, unit, known, bounds)
    if df > n_rows:
        return None  # bounds that no longer agree with the index: every match is read
    idf = fts5_idf(n_rows, df)
    top_id = int(conn.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()[0])
    newer = _newer_blocks(conn, bounds.last_id, envelope_ids, top_id)
    scale = bounds.saturation_scale(avgdl)
    order = _Order(known, bounds, envelope_ids, top_id, newer, idf, scale)
    reader = _Reader(conn, table, unit, idf, avgdl, envelope_ids, extra)
    kept = _Memo(passing)
    if by_sessions:
        return _sessions(reader, order, want, kept)
    return _rows(reader, order, want, kept)


def _whole_phrase(
    conn: sqlite3.Connection,
    table: str,
    unit: str,
    n_rows: int,
    avgdl: float,
    envelope_ids: tuple[int, int],
    extra: str,
) -> Evidence:
    """Every match of the phrase ``unit`` inside the envelope (and ``extra``), scored,
    from one statement over the whole index: the rows it returns are the
    phrase's document frequency, so its IDF, and ``idf * saturation`` is what
    ``hermes_fts_bm25()`` gives with that IDF, to the bit."""
    low, high = envelope_ids
    join = f" LEFT JOIN messages m ON m.id = {table}.rowid" if extra else ""
    cur = conn.execute(
        f"SELECT {table}.rowid, hermes_fts_bm25({table}, ?), "
        f"({table}.rowid BETWEEN ? AND ?{extra}) FROM {table}{join} WHERE {table} MATCH ?",
        (avgdl, low, high, unit),
    )
    matches = cur.fetchall()
    idf = fts5_idf(n_rows, len(matches))
    rows = {rid: [1.0, idf * saturation, None, 1] for rid, saturation, inside in matches if inside}
    return Evidence(rows, [1.0])


def _phrase_bounds(each: Sequence[TokenBounds]) -> TokenBounds:
    """A phrase's bounds from its distinct tokens': per block the fewest rows and the
    lowest peak, and only the blocks holding every token."""
    if len(each) == 1:  # one token repeated (哈哈哈): in no more rows, no more often
        return each[0]
    counts = array("H", map(min, *(t.counts for t in each)))
    peaks = bytes(map(min, *(t.peaks for t in each)))
    best_first = sorted((b for b, n in enumerate(counts) if n), key=lambda b: (-peaks[b], b))
    return TokenBounds(min(t.rows for t in each), counts, peaks, tuple(best_first))


def _common_phrase(conn: sqlite3.Connection, table: str, unit: str, known: TokenBounds) -> bool:
    """Whether the phrase is in about ``COMMON_PHRASE_DF`` rows or more: its share of
    the rows holding every token in the last ``SAMPLE_BLOCKS`` blocks that hold
    them (``COMMON_PHRASE_ROWS`` rows at least), times the rows holding them
    all.  Scoring each match then costs more than reading blocks.  FTS5 looks
    for a phrase's next match before it compares the rowid with the end of the
    span asked for; after the last blocks holding every token that walk is short."""
    sample = [b for b, n in enumerate(known.counts) if n][-SAMPLE_BLOCKS:]
    found = 0
    for lo, hi in _runs(sample):
        found += conn.execute(
            f"SELECT count(*) FROM {table} WHERE {table} MATCH ? AND rowid BETWEEN ? AND ?",
            (unit, lo << SHIFT, ((hi + 1) << SHIFT) - 1),
        ).fetchone()[0]
    held = sum(known.counts[b] for b in sample)
    return found >= COMMON_PHRASE_ROWS and found * known.rows >= COMMON_PHRASE_DF * held


def _phrase_count(conn: sqlite3.Connection, table: str, unit: str) -> int:
    """The phrase's document frequency: FTS5 counts its matches without scoring them."""
    return int(
        conn.execute(f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", (unit,)).fetchone()[0]
    )


# Blocks after the bounds' last id listed as a range up to this many; past it (far
# ids, an import's) only the blocks holding a row, read from messages.
_NEWER_BLOCKS_LISTED = 1 << 16


def _newer_blocks(
    conn: sqlite3.Connection, last_id: int, envelope_ids: tuple[int, int], top_id: int
) -> Iterable[int]:
    """The blocks of the envelope after the bounds' ``last_id``, which the bounds do not
    know.  A range of every block id held billions where one message had a far id,
    and listing it took all the memory there was."""
    first = max(envelope_ids[0], last_id + 1, 0)
    last = min(envelope_ids[1], top_id)
    if first > last:
        return ()
    if (last >> SHIFT) - (first >> SHIFT) <= _NEWER_BLOCKS_LISTED:
        return range(first >> SHIFT, (last >> SHIFT) + 1)
    return [
        int(r[0])
        for r in conn.execute(
            "SELECT DISTINCT id >> ? FROM messages WHERE id BETWEEN ? AND ?", (SHIFT, first, last)
        )
    ]


class _Order:
    """The blocks that can hold the token, best bound first: those the bounds do not
    know (dirty, or after the build: ``newer``) at the highest saturation there
    is, then the measured ones by their peak."""

    def __init__(
        self,
        known: TokenBounds,
        bounds: rank_bounds.Bounds,
        envelope_ids: tuple[int, int],
        top_id: int,
        newer: Iterable[int],
        idf: float,
        scale: float,
    ) -> None:
        first = max(envelope_ids[0], 0) >> SHIFT
        last = min(envelope_ids[1], top_id) >> SHIFT
        unknown = {b for b in bounds.dirty if first <= b <= last}
        unknown.update(newer)
        self.peaks: Sequence[int] = known.peaks
        measured: Sequence[int] = known.best_first
        if unknown or first > 0 or last < len(self.peaks) - 1:
            measured = [b for b in measured if first <= b <= last and b not in unknown]
        self.unknown = sorted(unknown)
        self.measured = measured
        self.idf, self.scale = idf, scale

    def __len__(self) -> int:
        return len(self.unknown) + len(self.measured)

    def block(self, i: int) -> int:
        n = len(self.unknown)
        return self.unknown[i] if i < n else self.measured[i - n]

    def bound(self, i: int) -> float:
        """The most any row of the ``i``-th block can score (FTS5's BM25)."""
        if i < len(self.unknown):
            return MAX_SATURATION * self.idf
        peak = self.peaks[self.measured[i - len(self.unknown)]]
        return min(MAX_SATURATION, peak * self.scale) * self.idf


def _count(
    conn: sqlite3.Connection,
    table: str,
    unit: str,
    known: TokenBounds,
    bounds: rank_bounds.Bounds,
) -> int:
    """The token's document frequency: the unchanged blocks' counts, and the index for
    the rest."""
    counts = known.counts
    df = known.rows - sum(counts[b] for b in bounds.dirty if b < len(counts))
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
    """``passing`` that asks about each id once: the kept ids with their sessions."""

    def __init__(self, passing: Passing) -> None:
        self.passing = passing
        self.known: dict[int, str | None] = {}

    def __call__(self, ids: Sequence[int]) -> dict[int, str]:
        known = self.known
        ask = [i for i in ids if i not in known]
        if ask:
            kept = self.passing(ask)
            for i in ask:
                known[i] = kept.get(i)
        return {i: sid for i in ids if (sid := known[i]) is not None}


class _Reader:
    """Reads id ranges of the index into ``rows`` (``Evidence.rows``' shape, the
    session left out: the page looks up the few it needs), only the rows that
    score at least ``floor`` (the page's worst, once it is full)."""

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
        self.statements = 0
        self.whole = False  # every row of the envelope read
        self.rows: dict[int, list[Any]] = {}
        self.floor = -math.inf
        # ``extra`` is a condition on the message row ``m``.
        join = f" JOIN messages m ON m.id = {table}.rowid" if extra else ""
        # Rows below the floor are dropped in SQLite, not handed to Python; the
        # inner LIMIT keeps the score from being computed twice.
        self.sql = (
            f"SELECT * FROM (SELECT {table}.rowid AS id, hermes_fts_bm25({table}, ?, ?) AS s "
            f"FROM {table}{join} WHERE {table} MATCH ? AND {table}.rowid BETWEEN ? AND ?{extra} "
            f"LIMIT -1) WHERE s >= ?"
        )
        self.head = [avgdl, idf, unit]

    def blocks(self, blocks: Iterable[int]) -> None:
        """Read the blocks not read whole yet."""
        todo = sorted(set(blocks) - self.read)
        self.read.update(todo)
        for lo, hi in _runs(todo):
            if self.statements >= STATEMENT_BUDGET:
                # Blocks far apart (a phrase common in the newest rows only)
                # take a statement each: the rest is read at once.
                self.ids(self.low, self.high)
                self.whole = True
                return
            self.ids(lo << SHIFT, ((hi + 1) << SHIFT) - 1)

    def ids(self, first: int, last: int) -> None:
        """Read the rows of ids ``first`` to ``last``, inside the envelope."""
        first, last = max(self.low, first), min(self.high, last)
        if first > last:
            return
        rows = self.rows
        self.statements += 1
        # At the floor, equal may still win on recency.
        for rid, bm25 in self.conn.execute(self.sql, [*self.head, first, last, self.floor]):
            rows[rid] = [1.0, bm25, None, 1]

    def keep(self, ids: Iterable[int], floor: float) -> None:
        """Keep only the rows ``ids`` (the page), and from now on rows from ``floor``."""
        self.rows = {i: self.rows[i] for i in ids}
        self.floor = floor


def _runs(blocks: Sequence[int]) -> list[tuple[int, int]]:
    """Sorted block numbers as runs of consecutive ones, ``(first, last)``."""
    runs: list[tuple[int, int]] = []
    for b in blocks:
        if runs and runs[-1][1] == b - 1:
            runs[-1] = (runs[-1][0], b)
        else:
            runs.append((b, b))
    return runs


def _next_end(order: _Order, start: int, size: int, floor: float) -> int:
    """Where the next round of reading stops: at most ``size`` more blocks, and only
    those whose bound reaches ``floor`` (at least one)."""
    end = min(len(order), start + size)
    stop = start + 1
    while stop < end and order.bound(stop) >= floor:
        stop += 1
    return stop


def _read_until(reader: _Reader, order: _Order, page: Callable[[Evidence], list[int]]) -> None:
    """Read blocks in ``order``, best bound first, until the page's worst entry is
    above the next bound.  ``page``: the page's ids among the rows read (its
    worst entry has the lowest BM25); once it is full, only it is kept."""
    start, size, floor = 0, FIRST_BLOCKS, -math.inf
    while start < len(order):
        end = _next_end(order, start, size, floor)
        reader.blocks(order.block(i) for i in range(start, end))
        start, size = end, 2 * size
        ids = page(Evidence(reader.rows, [1.0]))
        if reader.whole:
            return
        if ids:
            floor = min(reader.rows[i][1] for i in ids)
            reader.keep(ids, floor)
            if start < len(order) and floor > order.bound(start) + _MARGIN:
                return


def _rows(
    reader: _Reader, order: _Order, want: int, kept: _Memo
) -> tuple[list[int], dict[int, int]]:
    """The ``want`` best rows: the page of the rows read so far is the page of its
    last round's rows and every row read later."""
    ids: list[int] = []

    def page(evidence: Evidence) -> list[int]:
        nonlocal ids
        ids = best_row_ids(evidence, want, kept)
        return ids if len(ids) >= want else []

    _read_until(reader, order, page)
    return ids, {i: 1 for i in ids}


def _sessions(
    reader: _Reader, order: _Order, want: int, kept: _Memo
) -> tuple[list[int], dict[int, int]]:
    """Sessions of one term: every matching message holds all of it, so a session's
    score is its best message's (``sessions.first_sessions`` reads no other).
    Once the page's lowest best BM25 beats every unread block, an unread row
    can neither enter the page nor change a session on it; a session off the
    page stays off, as the page's sessions only gain."""
    best: list[int] = []

    def page(evidence: Evidence) -> list[int]:
        nonlocal best
        best = [i for _, i, _, _ in first_sessions(evidence, want, kept)]
        return best if len(best) >= want else []

    _read_until(reader, order, page)
    return best, {i: 1 for i in best}
