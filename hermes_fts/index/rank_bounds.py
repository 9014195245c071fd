"""Rank bounds: for each frequent token, the most it can add to a row's score, per block of ids.

A best match or a search by sessions ranks every match exactly
(``search/evidence.py``).  For a word in a tenth of the store that means
scoring a tenth of the store.  Rank bounds let the search read the index
block by block, best bound first, and stop once no unread block can hold a
row (or a session) that beats the page: the page is still the exact top.

For each token of the word and CJK indexes held by at least ``FREQUENT``
rows, and each block of ``BLOCK_IDS`` consecutive ids up to the build's
last id: how many rows of the block hold it, and its peak BM25 saturation
there (``f * (k1 + 1) / (f + k1 * (1 - b + b * D / avgdl))``, the part of
BM25 that depends on the row), rounded up, at the average row length of
the build.  A longer average only raises a saturation by the ratio of the
averages, so the search scales the peaks when the store has grown
(``saturation_scale``).  Rarer tokens are read whole at search time.

Three plain-SQL triggers on ``messages`` keep the bounds honest in every
process that writes the store (Hermes Agent's included): a row deleted,
changed, or inserted at an id the bounds already cover marks its block
dirty, and a dirty block counts as unknown (read whole) until the next
build.  Rows after the build's last id are unknown too.  ``optimize-
storage`` builds them; ``needs_optimize`` says when they lag.
"""

from __future__ import annotations

import functools
import json
import math
import re
import sqlite3
import sys
import time
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .. import loader
from .._sqlite import is_index_corruption, write_txn
from . import schema

__all__ = [
    "BLOCK_IDS",
    "BUILT",
    "DIRTY",
    "FREQUENT",
    "TABLE",
    "Bounds",
    "TokenBounds",
    "build",
    "damage",
    "forget",
    "load",
    "trouble",
    "index_totals",
    "behind",
    "to_build",
    "lag",
    "ready_tables",
    "tokens_of",
]

TABLE = schema.RANK_BOUNDS  # (tbl, token) -> rows, counts, peaks
BUILT = schema.RANK_BOUNDS_BUILT  # tbl -> last id covered, average row length, ready
DIRTY = "hermes_fts_rank_bounds_dirty"  # blocks whose rows changed after a build
SHIFT = 9
BLOCK_IDS = 1 << SHIFT
# Rows a token must be in to get bounds (FREQUENT, or one row in FREQUENT_SHARE of
# the index if more); rarer ones cost little to read whole.
FREQUENT = 1000
FREQUENT_SHARE = 500
# Peaks are kept as ceil(saturation * PEAK_SCALE) in one byte (saturation < k1 + 1).
PEAK_SCALE = 100
MAX_SATURATION = 2.2  # k1 + 1: no row's saturation reaches it
INDEXES = (schema.BASE, schema.CJK)
# Tokens per index whose blocks status measures again (``damage``); repair measures all.
PROBED_TOKENS = 8

_TABLE_SQL = (
    f"CREATE TABLE IF NOT EXISTS {TABLE}(tbl TEXT NOT NULL, token TEXT NOT NULL, "
    "rows INTEGER NOT NULL, counts BLOB NOT NULL, peaks BLOB NOT NULL, "
    "PRIMARY KEY (tbl, token)) WITHOUT ROWID"
)
_BUILT_SQL = (
    f"CREATE TABLE IF NOT EXISTS {BUILT}(tbl TEXT PRIMARY KEY, last_id INTEGER NOT NULL, "
    "avgdl REAL NOT NULL, shift INTEGER NOT NULL, ready INTEGER NOT NULL) WITHOUT ROWID"
)
_DIRTY_SQL = f"CREATE TABLE IF NOT EXISTS {DIRTY}(block INTEGER PRIMARY KEY)"
_COVERED = f"(SELECT max(last_id) FROM {BUILT})"


def _mark(row: str) -> str:
    return f"INSERT OR IGNORE INTO {DIRTY}(block) VALUES ({row}.id >> {SHIFT});"


TRIGGERS: tuple[tuple[str, str], ...] = (
    (
        f"{TABLE}_insert",
        f"CREATE TRIGGER IF NOT EXISTS {TABLE}_insert AFTER INSERT ON messages "
        f"WHEN new.id <= {_COVERED} BEGIN {_mark('new')} END",
    ),
    (
        f"{TABLE}_delete",
        f"CREATE TRIGGER IF NOT EXISTS {TABLE}_delete AFTER DELETE ON messages "
        f"WHEN old.id <= {_COVERED} BEGIN {_mark('old')} END",
    ),
    (
        f"{TABLE}_update",
        f"CREATE TRIGGER IF NOT EXISTS {TABLE}_update AFTER UPDATE OF "
        f"id, content, tool_name, tool_calls ON messages "
        f"WHEN old.id <= {_COVERED} OR new.id <= {_COVERED} "
        f"BEGIN {_mark('old')} {_mark('new')} END",
    ),
)


def index_totals(conn: sqlite3.Connection, table: str) -> tuple[int, int]:
    """The FTS5 index's row count and token count, from its averages record (what
    bm25() reads): ``(0, 0)`` for an empty index."""
    row = conn.execute(f"SELECT block FROM {table}_data WHERE id = 1").fetchone()
    values = _varints(bytes(row[0])) if row and row[0] else []
    return (values[0], sum(values[1:])) if values else (0, 0)


def _varints(data: bytes) -> list[int]:
    """SQLite's big-endian varints, one after another."""
    out, i = [], 0
    while i < len(data):
        value = 0
        for k in range(9):
            byte = data[i]
            i += 1
            if k == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        out.append(value)
    return out


def tokens_of(conn: sqlite3.Connection, table: str, unit: str) -> list[str] | None:
    """The tokens a unit's MATCH text (``"word"``, ``"two words"``) is on ``table``,
    in order, or None (a prefix, or text this cannot tell)."""
    if len(unit) < 3 or unit[0] != '"' or unit[-1] != '"' or '"' in unit[1:-1]:
        return None
    text = unit[1:-1]
    if table == schema.BASE:
        # unicode61 folds ASCII case and splits at anything not a letter or digit.
        return _ASCII_TOKEN.findall(text.lower()) or None if text.isascii() else None
    if table == schema.CJK:
        options = schema.CJK_TOKENIZE.split()[1:]
        marks = ", ".join("?" * len(options))
        raw = conn.execute(f"SELECT cjk_tokens_query(?, {marks})", (text, *options)).fetchone()
        tokens = json.loads(raw[0])
        if tokens and not any(t.get("colocated") for t in tokens):
            return [str(t["token"]) for t in tokens]
    return None


_ASCII_TOKEN = re.compile(r"[a-z0-9]+")


def _little_endian(counts: array) -> array:
    """Counts are stored little-endian, so a store reads the same on any machine."""
    if sys.byteorder == "big":
        counts.byteswap()
    return counts


# ---------------------------------------------------------------------------
# Build


def install(conn: sqlite3.Connection) -> None:
    """The tables and triggers (idempotent; inside the caller's transaction)."""
    for sql in (_TABLE_SQL, _BUILT_SQL, _DIRTY_SQL):
        conn.execute(sql)
    for _name, sql in TRIGGERS:
        conn.execute(sql)


def trouble(conn: sqlite3.Connection) -> str | None:
    """Why the bounds cannot be trusted, else None; reads only (every bound: before a
    write transaction, which would hold Hermes' writes meanwhile).

    A table of ours dropped by hand while our triggers still write it fails
    every write to ``messages``; the changes marked meanwhile are lost with
    it.  Bounds edited by hand (``damage``) would have a search skip the
    blocks holding its best rows.  ``forget`` is the repair of both."""
    return damage(conn, full=True)


def _tables_dropped(conn: sqlite3.Connection) -> str | None:
    """Which of our tables are gone while our triggers are there (dropped by hand);
    None when every one is there, or when the bounds were never built."""
    names = (TABLE, BUILT, DIRTY, *(name for name, _sql in TRIGGERS))
    held = {
        str(r[0])
        for r in conn.execute(
            f"SELECT name FROM main.sqlite_master WHERE name IN ({', '.join('?' * len(names))})",
            names,
        )
    }
    if not held & {name for name, _sql in TRIGGERS}:
        return None  # never built
    missing = sorted({TABLE, BUILT, DIRTY} - held)
    return f"{', '.join(missing)} dropped" if missing else None


def forget(conn: sqlite3.Connection) -> None:
    """Inside the caller's transaction: every table back, every bound forgotten, so
    optimize-storage measures them again."""
    install(conn)
    conn.execute(f"DELETE FROM {BUILT}")


def damage(conn: sqlite3.Connection, full: bool = False) -> str | None:
    """What is wrong with the ready bounds, else None: a trigger of ours gone (the rows
    changed since were never marked dirty), or a token whose stored row is not one
    a build writes (``_sound``), or a block not marked dirty whose bounds differ
    from the index (``_unmarked``).  Reads every row of ``TABLE``, and the matches
    of every bounded token (``full``, as a build does) or of the most frequent
    ones, which a changed row most likely holds (``PROBED_TOKENS``), and a table of
    ours dropped by hand, which the reads below took for bounds never built."""
    dropped = _tables_dropped(conn)
    if dropped is not None:
        return dropped
    try:
        lost = _triggers_lost(conn)
        if lost and conn.execute(f"SELECT 1 FROM {BUILT} WHERE ready = 1").fetchone():
            return f"trigger {', '.join(lost)} dropped: rows changed since are not marked"
        built = {}
        for table, last, avgdl in conn.execute(
            f"SELECT tbl, last_id, avgdl FROM {BUILT} WHERE ready = 1"
        ):
            if not _built_sound(last, avgdl):
                return f"the build record of {table} does not add up"
            built[table] = (last, avgdl)
        for table, token, rows, counts, peaks in conn.execute(
            f"SELECT tbl, token, rows, counts, peaks FROM {TABLE}"
        ):
            if table in built and not _row_sound(built[table][0], rows, counts, peaks):
                return f"the bounds of {token!r} on {table} do not add up"
        return _unmarked(conn, built, None if full else PROBED_TOKENS)
    except sqlite3.OperationalError:
        return None  # never built, or an index this process cannot read
    return None


def _unmarked(
    conn: sqlite3.Connection, built: dict[str, tuple[int, float]], most: int | None
) -> str | None:
    """A block outside the dirty table whose stored counts or peaks are not what a
    build measures from the index now, else None; of every token, or of the
    ``most`` frequent ones of each index.  The triggers mark every changed row's
    block, so only a dirty table emptied or edited by hand (or changes its
    triggers never saw) leaves one; a search would skip its rows."""
    dirty = {int(r[0]) for r in conn.execute(f"SELECT block FROM {DIRTY}")}
    for table, (last, avgdl) in built.items():
        if schema.index_sql(conn, table) is None:
            continue
        sizes = _row_sizes(conn, table, last)
        blocks = (last >> SHIFT) + 1
        for token, counts, peaks in conn.execute(
            f"SELECT token, counts, peaks FROM {TABLE} WHERE tbl = ? ORDER BY rows DESC LIMIT ?",
            (table, -1 if most is None else most),
        ).fetchall():
            try:
                now = _read_token(conn, table, token, last, avgdl, sizes)
            except sqlite3.DatabaseError as exc:
                if not is_index_corruption(conn, exc):
                    raise
                # Pages of the index itself damaged where the probe's few lookups
                # did not reach: status says so, not a traceback; a run rebuilds it.
                return f"{table} cannot be read ({token!r}: {exc})"
            now_counts, now_peaks = (now[2], now[3]) if now else (bytes(2 * blocks), bytes(blocks))
            if (now_counts, now_peaks) == (counts, peaks):
                continue
            for block in range(blocks):
                unchanged = (
                    counts[2 * block : 2 * block + 2] == now_counts[2 * block : 2 * block + 2]
                    and peaks[block] == now_peaks[block]
                )
                if not unchanged and block not in dirty:
                    return (
                        f"block {block} changed without being marked dirty "
                        f"({token!r} on {table}; {DIRTY} edited by hand?)"
                    )
    return None


def _triggers_lost(conn: sqlite3.Connection) -> list[str]:
    """Our triggers on ``messages`` that are not in the store (dropped by hand)."""
    names = [name for name, _sql in TRIGGERS]
    held = {
        str(r[0])
        for r in conn.execute(
            "SELECT name FROM main.sqlite_master WHERE type = 'trigger' AND name IN "
            f"({', '.join('?' * len(names))})",
            names,
        )
    }
    return [name for name in names if name not in held]


def _built_sound(last_id: object, avgdl: object) -> bool:
    """Whether a ``BUILT`` row's values are ones a build writes: an id, and a positive
    average row length (a zero or text one failed every search of a frequent word)."""
    return (
        isinstance(last_id, int)
        and last_id >= 0
        and isinstance(avgdl, (int, float))
        and math.isfinite(avgdl)
        and avgdl > 0
    )


def _row_sound(last_id: int, rows: object, counts: object, peaks: object) -> bool:
    """``_sound`` for a stored row whose values may have any type (edited by hand)."""
    return (
        isinstance(rows, int)
        and isinstance(counts, bytes)
        and isinstance(peaks, bytes)
        and _sound(last_id, rows, counts, peaks)
    )


@functools.lru_cache(maxsize=1024)  # as _token_bounds: each stored row checked once
def _sound(last_id: int, rows: int, counts: bytes, peaks: bytes) -> bool:
    """Whether a stored row is one a build up to ``last_id`` can write: a count and a
    peak per block, the counts adding up to ``rows``, a peak wherever a count is.
    A row edited by hand is not trusted: a search reads every match instead."""
    blocks = (last_id >> SHIFT) + 1
    if len(counts) != 2 * blocks or len(peaks) != blocks:
        return False
    held = _little_endian(array("H", counts))
    return sum(held) == rows and all(
        (n > 0) == (p > 0) and n <= BLOCK_IDS for n, p in zip(held, peaks)
    )


def build(
    conn: sqlite3.Connection,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, int]:
    """Bounds for every frequent token of the word and CJK indexes; returns the
    tokens bounded per index.  ``progress(done, total)`` after each token.

    Short transactions: mark the build under way (dirty blocks cleared,
    triggers live from then on, searches ignore the bounds); read every
    frequent token's blocks, saving them as they come; mark each index's
    bounds ready.  A change while it reads is marked dirty by the triggers, so
    nothing is lost, and a build cut short (Ctrl-C, SIGTERM) resumes after
    the tokens it saved (``_resumed``).  Rows the CJK index still waits for
    (its pending table) are dirty.
    """
    tables = [t for t in INDEXES if schema.index_sql(conn, t) is not None]
    last = _resumed(conn, tables)
    if last is None:
        last = _start(conn, tables, _dense_ids(conn))
    plan = []
    for table in tables:
        avgdl = conn.execute(f"SELECT avgdl FROM {BUILT} WHERE tbl = ?", (table,)).fetchone()[0]
        saved = {
            str(r[0]) for r in conn.execute(f"SELECT token FROM {TABLE} WHERE tbl = ?", (table,))
        }
        tokens = _frequent(conn, table)
        plan.append((table, float(avgdl), [t for t in tokens if t not in saved], len(tokens)))
    total = sum(whole for *_, whole in plan)
    counted = total - sum(len(tokens) for _, _, tokens, _ in plan)
    done: dict[str, int] = {}
    for table, avgdl, tokens, _whole in plan:
        found: list[tuple[str, int, bytes, bytes]] = []
        saved_at = time.monotonic()
        sizes = _row_sizes(conn, table, last) if tokens else None
        for token in tokens:
            entry = _read_token(conn, table, token, last, avgdl, sizes)
            if entry is not None:
                found.append(entry)
            counted += 1
            if progress is not None:
                progress(counted, total)
            if time.monotonic() - saved_at >= SAVE_EVERY_S:
                _write(conn, table, found, ready=False)
                found, saved_at = [], time.monotonic()
        _write(conn, table, found, ready=True)
        done[table] = conn.execute(
            f"SELECT count(*) FROM {TABLE} WHERE tbl = ?", (table,)
        ).fetchone()[0]
    return done


# A build saves the tokens it has read this often, so one cut short loses no more.
SAVE_EVERY_S = 1.0


def _resumed(conn: sqlite3.Connection, tables: Sequence[str]) -> int | None:
    """The last id of a build of ``tables`` cut short, to go on with, else None (start
    afresh).  Its saved tokens stay right while the triggers mark what changes
    (dirty blocks, kept since it started); not when an index was rebuilt since
    (its record is gone), a trigger is missing, or a tenth of the rows changed."""
    try:
        built = conn.execute(f"SELECT tbl, last_id, avgdl, shift, ready FROM {BUILT}").fetchall()
        conn.execute(f"SELECT 1 FROM {DIRTY} LIMIT 1").fetchall()
    except sqlite3.OperationalError:
        return None  # never built
    records = {str(r[0]): r for r in built}
    lasts = {records[t][1] for t in tables if t in records}
    if (
        not tables
        or set(records) != set(tables)
        or len(lasts) != 1
        or any(r[3] != SHIFT or r[4] != 0 or not _built_sound(r[1], r[2]) for r in built)
        or _triggers_lost(conn)
    ):
        return None
    state = lag(conn)
    top = int(conn.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()[0])
    if (
        state is None
        or state["newer_rows"] + state["dirty_blocks"] * BLOCK_IDS > BEHIND_SHARE * top
    ):
        return None
    return int(lasts.pop())


def _dense_ids(conn: sqlite3.Connection) -> int:
    """The last id the bounds may cover: every array of a build holds one entry per
    id or block up to it, so ids far past the rows (an import's) asked for
    terabytes (MemoryError).  Rows after it are read whole, as newer rows are."""
    top = int(conn.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()[0])
    if top < _DENSE_IDS_FREE:
        return top
    rows = int(conn.execute("SELECT count(*) FROM messages").fetchone()[0])
    return max(_DENSE_IDS_FREE, _SPARSE_IDS * rows)


_DENSE_IDS_FREE = 1 << 22  # ids below this cost 16 MB at most, however sparse
_SPARSE_IDS = 4  # ids covered per row at most past that


def _start(conn: sqlite3.Connection, tables: Sequence[str], dense: int) -> int:
    """Mark a build of ``tables`` under way; returns the last id it covers (at most
    ``dense``)."""
    with write_txn(conn):
        install(conn)
        conn.execute(f"DELETE FROM {DIRTY}")
        last = int(
            conn.execute(
                "SELECT coalesce(max(id), 0) FROM messages WHERE id <= ?", (dense,)
            ).fetchone()[0]
        )
        for table in tables:
            rows, tokens = index_totals(conn, table)
            # While a build is under way its table holds the tokens it has saved.
            conn.execute(f"DELETE FROM {TABLE} WHERE tbl = ?", (table,))
            conn.execute(
                f"INSERT OR REPLACE INTO {BUILT}(tbl, last_id, avgdl, shift, ready) "
                "VALUES (?, ?, ?, ?, 0)",
                (table, last, tokens / rows if rows else 1.0, SHIFT),
            )
        if schema.index_sql(conn, schema.CJK_PENDING) is not None:
            conn.execute(
                f"INSERT OR IGNORE INTO {DIRTY}(block) "
                f"SELECT msg_id >> {SHIFT} FROM {schema.CJK_PENDING}"
            )
    return last


def _frequent(conn: sqlite3.Connection, table: str) -> list[str]:
    """The tokens of ``table`` in enough rows to get bounds."""
    vocab = f"temp.hermes_fts_vocab_{table}"
    conn.execute(f"DROP TABLE IF EXISTS {vocab}")
    conn.execute(f"CREATE VIRTUAL TABLE {vocab} USING fts5vocab(main, {table}, row)")
    least = max(FREQUENT, index_totals(conn, table)[0] // FREQUENT_SHARE)
    cursor = conn.execute(f"SELECT term FROM {vocab} WHERE doc >= ?", (least,))
    try:
        return [str(r[0]) for r in cursor]
    finally:
        # Closed first: a read cut short (SIGTERM, Ctrl-C) holds the table, whose DROP
        # would fail with "database table is locked" in place of the interrupt.
        cursor.close()
        conn.execute(f"DROP TABLE IF EXISTS {vocab}")


def _row_sizes(conn: sqlite3.Connection, table: str, last: int) -> bytes | None:
    """Every row's token count up to id ``last`` (little-endian uint32 by rowid), read
    in one pass of ``%_docsize``, for ``hermes_fts_saturation``; None where the
    library lacks that function."""
    if not loader.has_saturation(conn, table):
        return None
    sizes = array("I", bytes(4 * (last + 1)))
    for rowid, blob in conn.execute(
        f"SELECT id, sz FROM {table}_docsize WHERE id BETWEEN 0 AND ?", (last,)
    ):
        data = bytes(blob or b"")
        # One varint per column; each below 128 is its byte (the usual case).
        sizes[rowid] = sum(data) if not data or max(data) < 0x80 else sum(_varints(data))
    return _little_endian(sizes).tobytes()


def _read_token(
    conn: sqlite3.Connection,
    table: str,
    token: str,
    last: int,
    avgdl: float,
    sizes: bytes | None = None,
) -> tuple[str, int, bytes, bytes] | None:
    """One token's rows and peak saturation per block, up to id ``last``; None when
    the quoted token matches nothing (it does not re-tokenize to itself).
    ``sizes``: ``_row_sizes``, so no row's size is looked up in the index."""
    blocks = (last >> SHIFT) + 1
    quoted = '"' + token.replace('"', '""') + '"'
    if sizes is not None:
        return _read_token_blocks(conn, table, token, quoted, last, avgdl, sizes)
    counts = array("H", bytes(2 * blocks))
    peaks = bytearray(blocks)
    total = 0
    for block, count, peak in conn.execute(
        # FTS5 runs auxiliary functions only on its own rows: the grouping is
        # outside a subquery that LIMIT keeps from being merged into it.
        f"SELECT block, count(*), max(s) FROM (SELECT rowid >> {SHIFT} AS block, "
        f"hermes_fts_bm25({table}, ?) AS s FROM {table} WHERE {table} MATCH ? "
        f"AND rowid <= ? LIMIT -1) GROUP BY block",
        (avgdl, quoted, last),
    ):
        counts[block] = count
        peaks[block] = min(255, math.ceil(float(peak) * PEAK_SCALE + 1e-9))
        total += count
    if not total:
        return None
    return token, total, _little_endian(counts).tobytes(), bytes(peaks)


def _read_token_blocks(
    conn: sqlite3.Connection,
    table: str,
    token: str,
    quoted: str,
    last: int,
    avgdl: float,
    sizes: bytes,
) -> tuple[str, int, bytes, bytes] | None:
    """``_read_token`` in one statement: row sizes from ``sizes``, the blocks'
    counts and peaks gathered by ``hermes_fts_block_peaks`` (no sort of the rows)."""
    blocks = (last >> SHIFT) + 1
    (found,) = conn.execute(
        f"SELECT hermes_fts_block_peaks(block, s, ?, ?) FROM (SELECT rowid >> {SHIFT} "
        f"AS block, hermes_fts_saturation({table}, ?, ?) AS s FROM {table} "
        f"WHERE {table} MATCH ? AND rowid <= ? LIMIT -1)",
        (blocks, PEAK_SCALE, avgdl, sizes, quoted, last),
    ).fetchone()
    if found is None:
        return None
    data = bytes(found)
    counts = _little_endian(array("H", data[: 2 * blocks]))  # stored little-endian
    return token, sum(counts), data[: 2 * blocks], data[2 * blocks :]


def _write(
    conn: sqlite3.Connection,
    table: str,
    found: Sequence[tuple[str, int, bytes, bytes]],
    *,
    ready: bool,
) -> None:
    """Save ``found`` among ``table``'s bounds (a token read again replaces its row);
    ``ready``: the build is complete, searches may use them."""
    with write_txn(conn):
        conn.executemany(
            f"INSERT OR REPLACE INTO {TABLE}(tbl, token, rows, counts, peaks) "
            "VALUES (?, ?, ?, ?, ?)",
            [(table, token, rows, counts, peaks) for token, rows, counts, peaks in found],
        )
        if ready:
            conn.execute(f"UPDATE {BUILT} SET ready = 1 WHERE tbl = ?", (table,))


# ---------------------------------------------------------------------------
# Search side


@dataclass(frozen=True)
class TokenBounds:
    """One token's bounds: ``rows`` holding it up to the build's last id, per block
    ``counts`` of them and ``peaks`` (``ceil(saturation * PEAK_SCALE)``), and the
    blocks holding it, highest peak first (lower block first on a tie)."""

    rows: int
    counts: array
    peaks: bytes
    best_first: tuple[int, ...]


@functools.lru_cache(maxsize=1024)
def _token_bounds(rows: int, counts: bytes, peaks: bytes) -> TokenBounds:
    """A stored row of ``TABLE`` read for searching; the same bytes give the same
    answer, so each is read once per process."""
    held = _little_endian(array("H", counts))
    best_first = sorted((b for b, n in enumerate(held) if n), key=lambda b: (-peaks[b], b))
    return TokenBounds(rows, held, peaks, tuple(best_first))


@dataclass(frozen=True)
class Bounds:
    """One index's bounds as a search reads them (``load``)."""

    last_id: int  # ids above it are unknown
    avgdl: float  # the average row length the peaks were measured at
    dirty: frozenset[int]  # blocks whose rows changed since
    tokens: dict[str, TokenBounds]

    def saturation_scale(self, avgdl_now: float) -> float:
        """What the stored peaks are multiplied by for the index's average now."""
        return max(1.0, avgdl_now / self.avgdl) / PEAK_SCALE


def load(conn: sqlite3.Connection, table: str, tokens: Sequence[str]) -> Bounds | None:
    """The ready bounds of ``tokens`` on ``table`` (those it has), or None when the
    index has none ready."""
    try:
        built = conn.execute(
            f"SELECT last_id, avgdl, shift FROM {BUILT} WHERE tbl = ? AND ready = 1", (table,)
        ).fetchone()
    except sqlite3.OperationalError:
        return None  # never built
    if built is None or built[2] != SHIFT or not _built_sound(built[0], built[1]):
        return None  # not built, or its record edited by hand: every match is read
    try:
        dirty = frozenset(r[0] for r in conn.execute(f"SELECT block FROM {DIRTY}"))
    except sqlite3.OperationalError:
        return None  # dropped by hand: which rows changed since is not known
    found: dict[str, TokenBounds] = {}
    if tokens:
        marks = ", ".join("?" * len(tokens))
        for token, rows, counts, peaks in conn.execute(
            f"SELECT token, rows, counts, peaks FROM {TABLE} WHERE tbl = ? AND token IN ({marks})",
            (table, *tokens),
        ):
            if _row_sound(built[0], rows, counts, peaks):
                found[token] = _token_bounds(rows, counts, peaks)
    return Bounds(int(built[0]), float(built[1]), dirty, found)


def ready_tables(conn: sqlite3.Connection) -> list[str]:
    """The indexes whose bounds are ready and hold at least one token; none while a
    trigger of ours is gone, since the rows changed since are not marked dirty."""
    if _triggers_lost(conn):
        return []
    try:
        return [
            str(r[0])
            for r in conn.execute(
                f"SELECT tbl FROM {BUILT} WHERE ready = 1 AND shift = ? AND EXISTS "
                f"(SELECT 1 FROM {TABLE} WHERE {TABLE}.tbl = {BUILT}.tbl) ORDER BY tbl",
                (SHIFT,),
            )
        ]
    except sqlite3.OperationalError:
        return []  # never built


# Stores this small read every match fast enough: no bounds are asked for.
WORTH_IT = 50_000
# Bounds are behind once this share of the rows is newer than them or changed since.
BEHIND_SHARE = 0.1


def behind(conn: sqlite3.Connection) -> bool:
    """Whether ``status`` says the bounds lag: a store of at least ``WORTH_IT``
    messages whose bounds ``to_build`` would measure again."""
    top = int(conn.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()[0])
    return top >= WORTH_IT and to_build(conn)


def to_build(conn: sqlite3.Connection) -> bool:
    """Whether ``optimize-storage`` measures the bounds again: an index of ``INDEXES``
    has none ready (never built, or forgotten by a rebuild of the index), or a
    tenth of the rows are newer or changed since they were built.  An unchanged
    store is never measured twice."""
    tables = {t for t in INDEXES if schema.index_sql(conn, t) is not None}
    try:
        ready = {
            str(r[0])
            for r in conn.execute(
                f"SELECT tbl FROM {BUILT} WHERE ready = 1 AND shift = ?", (SHIFT,)
            )
        }
    except sqlite3.OperationalError:
        return bool(tables)  # never built
    state = lag(conn)
    if not tables <= ready or state is None:
        return True
    top = int(conn.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()[0])
    changed = state["newer_rows"] + state["dirty_blocks"] * BLOCK_IDS
    return changed > BEHIND_SHARE * top


def lag(conn: sqlite3.Connection) -> dict[str, int] | None:
    """How far the bounds lag: rows after the build and dirty blocks; None: never built."""
    try:
        built = conn.execute(f"SELECT min(last_id), min(ready) FROM {BUILT}").fetchone()
    except sqlite3.OperationalError:
        return None
    if built is None or built[0] is None:
        return None
    newer = conn.execute("SELECT count(*) FROM messages WHERE id > ?", (built[0],)).fetchone()
    try:
        dirty = conn.execute(f"SELECT count(*) FROM {DIRTY}").fetchone()
    except sqlite3.OperationalError:
        return None  # dropped by hand: as if never built
    return {"newer_rows": int(newer[0]), "dirty_blocks": int(dirty[0]), "ready": int(built[1])}
