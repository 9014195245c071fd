"""The time table: every message's id and timestamp in a table of ours, in time order.

Time sorts on very common terms walk it instead of sorting every match
(``match_rows``, docs/DESIGN.md §5.6 and §6.4).  It replaces an index on
``messages(timestamp)``, for two reasons:

* Hermes Agent's own LIKE search orders ``messages`` by timestamp, and its
  planner walked such an index: faster on common terms, up to 1.5x slower on
  rare ones.  SQLite's planner never considers a table that the query does not
  name, so Hermes' plans stay exactly what they are without hermes-fts.
* ``CREATE INDEX`` is one statement that holds the write lock while it reads
  every row (1.3 s at 1,000,000 messages).  The table is filled in short
  chunks, each its own write transaction, paced like the backfills.

Three plain-SQL triggers on ``messages`` keep it exact in every process that
writes the store, Hermes Agent's included (they need no extension).  None of
the names starts with ``messages_fts`` (Hermes' schema repair deletes those)
or is one of the six trigger names Hermes counts.

``ts`` has no declared type, so it holds exactly the value ``messages``
holds (REAL, INTEGER, TEXT or NULL, unconverted): ordering by ``(ts, id)``
is then ordering by ``(timestamp, id)``, the sort plan's order, value for
value.  The index on ``ts`` also holds the rowid (``id``), so a walk reads
only the index until a row is a match.

Zones turn a time bound into rowid ranges (``spans``): for each block of
``ZONE_IDS`` consecutive ids, the lowest and highest timestamp (in SQLite's
order: numbers, then text) any row of the block ever had.  A trigger on the
time table widens a zone when a row comes in and nothing narrows it, so a
zone always covers its rows: a row inside ``[after, before)`` lies in a
zone whose ``[lo, hi]`` meets that window.  Only the searches' rowid ranges
come from zones; the time filter itself stays in the SQL, so a zone left
wide by a deleted or re-dated row costs reading, never a wrong row.
"""

from __future__ import annotations

import logging
import math
import sqlite3
import time
from collections.abc import Sequence
from typing import Any, Callable

from . import maintain as indexing

logger = logging.getLogger("hermes_fts.index.time_table")

__all__ = [
    "INDEX",
    "OLD_INDEX",
    "TABLE",
    "ZONES",
    "ZONE_IDS",
    "damage",
    "drive_fill",
    "fill_step",
    "has_null_timestamp",
    "install",
    "needs_work",
    "ready",
    "row_count",
    "spans",
    "spans_before_last",
    "state",
    "time_slices",
]

TABLE = "hermes_fts_time"
INDEX = f"{TABLE}_ts"  # match_rows' walk names it as f"{table}_ts"
# What optimize-storage created before the time table; dropped by ``install``.
OLD_INDEX = "hermes_fts_messages_time"

_TABLE_SQL = f"CREATE TABLE {TABLE}(id INTEGER PRIMARY KEY, ts)"
_INDEX_SQL = f"CREATE INDEX {INDEX} ON {TABLE}(ts)"
ZONES = f"{TABLE}_zones"
_ZONE_BITS = 10
ZONE_IDS = 1 << _ZONE_BITS  # ids per zone: about 1,000 zones per million messages
_ZONES_SQL = f"CREATE TABLE {ZONES}(zone INTEGER PRIMARY KEY, lo, hi)"
# Every timestamp but NULL (min() and max() of one would be NULL).  Text
# sorts after every number, in comparisons as in ORDER BY, so a zone with
# a text timestamp reaches past every numeric bound, and one of text alone
# starts after them all: a time bound, numeric, still leaves it out.
_ZONE_TRIGGER = (
    f"{TABLE}_zone",
    f"CREATE TRIGGER {TABLE}_zone AFTER INSERT ON {TABLE} "
    f"WHEN new.ts IS NOT NULL BEGIN "
    f"INSERT INTO {ZONES}(zone, lo, hi) VALUES (new.id >> {_ZONE_BITS}, new.ts, new.ts) "
    f"ON CONFLICT(zone) DO UPDATE SET lo = min(lo, excluded.lo), hi = max(hi, excluded.hi); "
    f"END",
)
# Most spans a search is given; more are joined across their smallest gaps
# (the zones of a store whose ids follow time make one or two).
_MAX_SPANS = 16
# OR REPLACE: an outer INSERT OR REPLACE on messages deletes the row it
# replaces without firing the delete trigger (recursive triggers are off).
_UPSERT = f"INSERT OR REPLACE INTO {TABLE}(id, ts) VALUES (new.id, new.timestamp);"
_TRIGGERS: tuple[tuple[str, str], ...] = (
    (
        f"{TABLE}_insert",
        f"CREATE TRIGGER {TABLE}_insert AFTER INSERT ON messages BEGIN {_UPSERT} END",
    ),
    (
        f"{TABLE}_delete",
        f"CREATE TRIGGER {TABLE}_delete AFTER DELETE ON messages BEGIN "
        f"DELETE FROM {TABLE} WHERE id = old.id; END",
    ),
    # Delete, then insert: the old id may not be filled yet, the new one may be.
    (
        f"{TABLE}_update",
        f"CREATE TRIGGER {TABLE}_update AFTER UPDATE OF id, timestamp ON messages BEGIN "
        f"DELETE FROM {TABLE} WHERE id = old.id; {_UPSERT} END",
    ),
)
_OBJECTS = {
    TABLE: _TABLE_SQL,
    INDEX: _INDEX_SQL,
    ZONES: _ZONES_SQL,
    **dict(_TRIGGERS),
    _ZONE_TRIGGER[0]: _ZONE_TRIGGER[1],
}

# state_meta: the fill's window (ids progress < id <= high_water still to
# copy) while it runs, and the mark that it completed.
META_HIGH = "hermes_fts_time_high_water"
META_PROGRESS = "hermes_fts_time_progress"
META_COMPLETE = "hermes_fts_time_complete"


def _norm(sql: str | None) -> str:
    return " ".join(str(sql or "").split())


def _live(conn: sqlite3.Connection) -> dict[str, str]:
    """Our objects (and the old index) as the file holds them: name -> normalized SQL."""
    names = (*_OBJECTS, OLD_INDEX)
    return {
        str(r[0]): _norm(r[1])
        for r in conn.execute(
            f"SELECT name, sql FROM main.sqlite_master WHERE name IN "
            f"({', '.join('?' for _ in names)})",
            names,
        )
    }


def _objects_exact(live: dict[str, str]) -> bool:
    return all(live.get(name) == _norm(sql) for name, sql in _OBJECTS.items())


def _window(conn: sqlite3.Connection) -> tuple[int, int] | None:
    high = indexing.get_meta(conn, META_HIGH)
    if high is None:
        return None
    try:
        return int(high), int(indexing.get_meta(conn, META_PROGRESS) or 0)
    except ValueError:
        # Markers edited by hand: no fill to trust, so not complete either
        # (``install`` opens a new window and refills it).
        return None


def state(conn: sqlite3.Connection) -> dict[str, Any]:
    """What the file holds: ``ready`` (complete and kept exact: the walk may use it),
    ``status`` (absent, filling, complete, triggers missing), fill progress, old index."""
    live = _live(conn)
    window = _window(conn)
    exact = _objects_exact(live)
    complete = exact and window is None and indexing.get_meta(conn, META_COMPLETE) is not None
    if not any(name in live for name in _OBJECTS):
        status = "absent"
    elif not exact:
        # Writes may have gone past it: only a refill can make it right.
        status = "triggers missing"
    elif window is not None:
        status = "filling"
    else:
        status = "complete" if complete else "incomplete"
    return {
        "ready": complete,
        "status": status,
        "filled": None if window is None else min(window[1], window[0]),
        "total": None if window is None else window[0],
        "old_index": OLD_INDEX in live,
    }


def ready(conn: sqlite3.Connection) -> bool:
    """Whether time sorts may walk the table: complete, and its triggers in place."""
    return bool(state(conn)["ready"])


def spans(
    conn: sqlite3.Connection,
    after: float | None,
    before: float | None,
    windows: Sequence[tuple[float, float]] = (),
) -> list[tuple[int, int]]:
    """Rowid ranges, newest first, that hold every message whose timestamp lies in
    ``[after, before)``, in SQLite's order (text after every number), and in one
    of ``windows`` (``[start, end)`` ranges) when there are any.  The table
    must be ``ready``.  Empty: no message can.

    The ranges are whole zones, so they may hold rows outside the window:
    the caller keeps its time filter and only narrows where it reads.
    """
    where, params = [], []
    if after is not None:
        where.append("hi >= ?")
        params.append(after)
    if before is not None:
        where.append("lo < ?")
        params.append(before)
    if windows:  # a time preference's days in every year (search.request.search_preferring)
        where.append("(" + " OR ".join(["(hi >= ? AND lo < ?)"] * len(windows)) + ")")
        params.extend(bound for window in windows for bound in window)
    condition = " AND ".join(where) or "1"
    first, last, count = conn.execute(
        f"SELECT min(zone), max(zone), count(*) FROM main.{ZONES} WHERE {condition}", params
    ).fetchone()
    if not count:
        return []
    if count == last - first + 1:
        # The zones lie side by side, as they do where time follows ids: one
        # span, without reading every zone (489 of them for half of 1M rows).
        return [(int(first) << _ZONE_BITS, ((int(last) + 1) << _ZONE_BITS) - 1)]
    out: list[tuple[int, int]] = []
    for (zone,) in conn.execute(
        f"SELECT zone FROM main.{ZONES} WHERE {condition} ORDER BY zone DESC", params
    ):
        lo, hi = int(zone) << _ZONE_BITS, ((int(zone) + 1) << _ZONE_BITS) - 1
        if out and out[-1][0] == hi + 1:
            out[-1] = (lo, out[-1][1])  # joins the newer zone next to it
        else:
            out.append((lo, hi))
    if len(out) > _MAX_SPANS:  # join across the smallest gaps until few enough are left
        gaps = sorted(range(1, len(out)), key=lambda i: out[i - 1][0] - out[i][1])
        joined = set(gaps[: len(out) - _MAX_SPANS])
        merged = [out[0]]
        for i in range(1, len(out)):
            if i in joined:
                merged[-1] = (out[i][0], merged[-1][1])
            else:
                merged.append(out[i])
        out = merged
    return out


def spans_before_last(
    conn: sqlite3.Connection, newest: bool, last: Any, after: float | None, before: float | None
) -> list[tuple[int, int]] | None:
    """Spans holding every row that sorts before a page's last row (timestamp ``last``)
    in a time sort, within ``[after, before)``; None: no narrowing.

    Rows after that row cannot make the page, whatever they are, so zones
    that end before it (newest first) or start after it (oldest first) are
    skipped.  Zones see every timestamp but NULL, which sorts first in
    oldest-first order: a table holding one means no narrowing there.
    """
    if not isinstance(last, (int, float)):
        return None
    if newest:
        return spans(conn, last if after is None else max(after, last), before)
    if has_null_timestamp(conn):
        return None
    # lo < before must keep a zone whose lowest timestamp is `last` itself.
    after_last = math.nextafter(float(last), math.inf)
    return spans(conn, after, after_last if before is None else min(before, after_last))


Slices = Callable[[int], "tuple[list[tuple[int, int]], Any] | None"]


def time_slices(conn: sqlite3.Connection, newest: bool) -> Slices:
    """For a time sort (``match_rows``): ``cut(ids)`` gives the spans of the zones,
    about ``ids`` message ids of them, that reach furthest that way and the
    ``edge`` timestamp they all reach (every row at or past ``edge`` lies in
    them), or None once that would be every zone, or when zones cannot slice
    this order (a NULL timestamp, which they leave out, sorts first
    oldest-first).  Nothing is read until a time sort asks: a rare term's
    does not."""
    order = "hi DESC" if newest else "lo ASC"

    def cut(ids: int) -> tuple[list[tuple[int, int]], Any] | None:
        zones = max(1, -(-ids // ZONE_IDS))
        if not newest and has_null_timestamp(conn):
            return None
        row = conn.execute(
            f"SELECT {order.split()[0]} FROM main.{ZONES} ORDER BY {order} LIMIT 1 OFFSET ?",
            (zones - 1,),
        ).fetchone()
        if row is None:
            return None
        edge = row[0]
        if newest:
            return spans(conn, edge, None), edge
        if not isinstance(edge, (int, float)):
            return None
        return spans(conn, None, math.nextafter(float(edge), math.inf)), edge

    return cut


def has_null_timestamp(conn: sqlite3.Connection) -> bool:
    """Whether a message has a NULL timestamp (Hermes' schema forbids it): zones
    leave those out.  One step of the index on ``ts``, where NULLs come first."""
    return (
        conn.execute(f"SELECT 1 FROM main.{TABLE} WHERE ts IS NULL LIMIT 1").fetchone() is not None
    )


def row_count(conn: sqlite3.Connection) -> int | None:
    """Rows the table holds (None: no table)."""
    try:
        return int(conn.execute(f"SELECT count(*) FROM main.{TABLE}").fetchone()[0])
    except sqlite3.OperationalError:
        return None


def damage(conn: sqlite3.Connection) -> str | None:
    """What is wrong with a ``ready`` table, else None (also when not ready).

    Rows edited, deleted or added by hand, or zones narrowed, raise no error:
    time sorts and time bounds would silently miss rows.  So its rows are
    compared with every message's ``(id, timestamp)`` and each zone with the
    rows of its block: reads of both tables, for ``status`` and the repair of
    ``optimize-storage``, never for a search.
    """
    if not ready(conn):
        return None
    # One statement, one snapshot: a write between two counts is no damage.
    held, rows = conn.execute(
        f"SELECT (SELECT count(*) FROM main.{TABLE}), (SELECT count(*) FROM main.messages)"
    ).fetchone()
    if held != rows:
        return f"holds {held:,} rows, the messages are {rows:,}"
    row = conn.execute(
        f"SELECT m.id FROM main.messages m LEFT JOIN main.{TABLE} t ON t.id = m.id "
        "WHERE t.id IS NULL OR t.ts IS NOT m.timestamp LIMIT 1"
    ).fetchone()
    if row is not None:
        return f"message {row[0]} is missing or has another time"
    # A bound set to NULL compares as NULL, never true: named apart, or a zone
    # whose lo or hi was emptied passed while every bounded search skipped it.
    row = conn.execute(
        f"SELECT t.id FROM main.{TABLE} t LEFT JOIN main.{ZONES} z "
        f"ON z.zone = t.id >> {_ZONE_BITS} WHERE t.ts IS NOT NULL "
        "AND (z.lo IS NULL OR z.hi IS NULL OR t.ts < z.lo OR t.ts > z.hi) LIMIT 1"
    ).fetchone()
    if row is not None:
        return f"the zone of message {row[0]} does not cover its time"
    return None


def rows_to_fill(conn: sqlite3.Connection) -> int:
    """The messages a run adds to the table: none once it is ready, those past the
    window of a fill cut short (each chunk keeps the id range it filled), else all."""
    st = state(conn)
    if st["ready"]:
        return 0
    since = st["filled"] if st["status"] == "filling" else None
    return int(
        conn.execute("SELECT count(*) FROM main.messages WHERE id > ?", (since or 0,)).fetchone()[0]
    )


def needs_work(conn: sqlite3.Connection) -> bool:
    """An optimize-storage step is due: the old index to drop, or a fill to finish."""
    st = state(conn)
    return bool(st["old_index"] or st["status"] in ("filling", "incomplete", "triggers missing"))


def install(conn: sqlite3.Connection) -> str | None:
    """optimize-storage's repair step: triggers first, then open the fill's window;
    returns what was wrong with a complete table (``damage``) it refills.

    One write transaction, short at any size (the check reads before it): it
    drops the old index on ``messages(timestamp)`` (migration; from then on
    the walk never uses it), and unless the table is being filled, or
    complete and sound, with its triggers in place, (re)creates the table,
    its index and its triggers and opens a window over every message id.
    Rows the table already holds are fixed by the fill (each chunk replaces
    its id range), so nothing is rebuilt here.
    """
    # Read before the write transaction: it scans every message, and Hermes'
    # writes would wait meanwhile.  A write since goes through the triggers.
    broken = damage(conn)
    with indexing.write_txn(conn):
        live = _live(conn)
        if OLD_INDEX in live:
            conn.execute(f"DROP INDEX main.{OLD_INDEX}")
        st = state(conn)
        if st["status"] == "filling" or (st["status"] == "complete" and broken is None):
            return None
        for name, _sql in (*_TRIGGERS, _ZONE_TRIGGER):
            conn.execute(f"DROP TRIGGER IF EXISTS main.{name}")
        if live.get(TABLE) != _norm(_TABLE_SQL):
            conn.execute(f"DROP TABLE IF EXISTS main.{TABLE}")  # ours by name, other shape
        elif live.get(INDEX) != _norm(_INDEX_SQL):
            conn.execute(f"DROP INDEX IF EXISTS main.{INDEX}")
        # Zones are only ever widened: the refill starts them afresh.
        conn.execute(f"DROP TABLE IF EXISTS main.{ZONES}")
        conn.execute(_TABLE_SQL.replace("TABLE ", "TABLE IF NOT EXISTS main.", 1))
        conn.execute(_INDEX_SQL.replace("INDEX ", "INDEX IF NOT EXISTS main.", 1))
        conn.execute(_ZONES_SQL.replace("TABLE ", "TABLE main.", 1))
        for _name, sql in (*_TRIGGERS, _ZONE_TRIGGER):
            conn.execute(sql.replace("TRIGGER ", "TRIGGER main.", 1))
        indexing.delete_meta(conn, META_COMPLETE)
        high = int(conn.execute("SELECT max(id) FROM main.messages").fetchone()[0] or 0)
        indexing.set_meta(conn, META_HIGH, high)
        indexing.set_meta(conn, META_PROGRESS, 0)
    return broken


def fill_step(conn: sqlite3.Connection, rows: int) -> bool:
    """Copy one id range of ``messages`` into the table; True while work remains.

    The range's rows are replaced by the current ``(id, timestamp)`` of
    ``messages`` in the same transaction, so the range is exact afterwards
    whatever it held; the triggers keep it so.  The last chunk has no upper
    bound: it also clears any row left above the window by an earlier,
    untrusted table.
    """
    with indexing.write_txn(conn):
        window = _window(conn)  # re-read inside the transaction: that is the claim
        if window is None or not _objects_exact(_live(conn)):
            return False  # nothing to fill, or not kept exact: ``install`` starts over
        high, progress = window
        upper = indexing.id_after(conn, progress, rows, high)
        last = upper >= high
        bound, params = ("", (progress,)) if last else (" AND id <= ?", (progress, upper))
        conn.execute(f"DELETE FROM main.{TABLE} WHERE id > ?{bound}", params)
        conn.execute(
            f"INSERT INTO main.{TABLE}(id, ts) SELECT id, timestamp "
            f"FROM main.messages WHERE id > ?{bound}",
            params,
        )
        if last:
            indexing.delete_meta(conn, META_HIGH, META_PROGRESS)
            indexing.set_meta(conn, META_COMPLETE, 1)
            logger.info("time table complete (%d ids)", high)
            return False
        indexing.set_meta(conn, META_PROGRESS, upper)
        return True


def drive_fill(
    conn: sqlite3.Connection,
    *,
    sleep: indexing.Sleep = time.sleep,
    chunk_rows: int = indexing.CHUNK_ROWS,
    min_pause: float = indexing.MIN_PAUSE,
    on_chunk: Callable[[], None] | None = None,
    txn_target: float | None = indexing.TXN_TARGET_S,
) -> None:
    """``fill_step`` until the table is complete, paced like the backfills
    (``indexing.drive_chunks``: short transactions, a yield between them)."""
    indexing.drive_chunks(
        lambda rows: fill_step(conn, rows),
        TABLE,
        sleep=sleep,
        chunk_rows=chunk_rows,
        min_pause=min_pause,
        on_chunk=on_chunk,
        txn_target=txn_target,
    )
