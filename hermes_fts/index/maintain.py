"""Index content maintenance: chunked backfill, paced steps, resets, integrity, sizes.

Also the ``state_meta`` bookkeeping these steps share (stale flags, backfill
windows).  The optimize-storage sequence itself is ``SessionStore.optimize_storage``
(its repair phase is ``index_state.repair``); this module supplies its steps.

Every write here runs in its own ``BEGIN IMMEDIATE`` transaction so that a
``kill -9`` at any instant leaves either the whole step or none of it, and the
progress marker in ``state_meta`` always agrees with what the index holds.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Iterator, Sequence
from typing import Any, Callable

from .._sqlite import write_txn
from ..content import INDEXED_COLUMNS
from . import schema
from .schema import CJK, CJK_PENDING, DDL, TRIGRAM

logger = logging.getLogger("hermes_fts.index.maintain")

# Pacing of the backfill (see drive_backfill).  SQLite cannot tell us that
# another connection is waiting for the write lock, so the backfill bounds how
# long it holds the lock and lets go for long enough that any waiting writer
# gets it.  Hermes Agent 0.19.0's writer (hermes_state.SessionDB) opens with a
# 1 s busy timeout; while waiting, SQLite's busy handler retries at most
# every 100 ms, and after a timeout Hermes retries after a random 20-150 ms.
# A yield longer than both means a waiting writer is let in at each yield, so
# its worst wait is about one transaction plus one retry interval.
CHUNK_ROWS = 500  # the first chunk; later chunks are sized to TXN_TARGET_S
TXN_TARGET_S = 0.4  # the write transaction a chunk aims for
# A backfill chunk stops reading rows once this much has passed, whatever its
# size: a chunk made slow by other work on the machine still ends in time.
TXN_LIMIT_S = 0.45
SLICES = 8
MIN_PAUSE = 0.16  # the yield between chunks: > 150 ms, Hermes' longest retry interval
MAX_CHUNK_ROWS = 50_000
PENDING_BATCH_IDS = 500  # a sync's first batch; later batches are sized to TXN_TARGET_S
# FTS5's own defaults, which a build sets again with its last chunk.
AUTOMERGE = 4
CRISISMERGE = 16
# While a build fills an index, FTS5 merges its segments 16 at a time in small
# steps after each write, so rows are merged again less often than at 4 and
# never all at once.  With merging off, FTS5's crisis merge took a whole
# level's 16 segments in one chunk's transaction, and a writer waited seconds;
# its threshold goes past 16 so the small steps come first.
BUILD_AUTOMERGE = 16
BUILD_CRISISMERGE = 64

Sleep = Callable[[float], None]
Progress = Callable[[dict[str, Any]], None]


# --------------------------------------------------------------------------
# state_meta: flags and backfill windows


def get_meta(conn: sqlite3.Connection, key: str) -> str | None:
    try:
        row = conn.execute("SELECT value FROM state_meta WHERE key = ?", (key,)).fetchone()
    except sqlite3.OperationalError:
        return None  # no state_meta yet (read-only open of a foreign file)
    return None if row is None else row[0]


def set_meta(conn: sqlite3.Connection, key: str, value: object) -> None:
    conn.execute(
        "INSERT INTO state_meta(key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, str(value)),
    )


def delete_meta(conn: sqlite3.Connection, *keys: str) -> None:
    for key in keys:
        conn.execute("DELETE FROM state_meta WHERE key = ?", (key,))


def backfill_window(conn: sqlite3.Connection, index: str) -> tuple[int, int] | None:
    """``(high_water, progress)`` of a pending backfill of ``index``, else None.

    Ids ``progress < id <= high_water`` are not yet in the index; the
    triggers skip them (``schema.indexed_condition``) and the backfill fills them.
    """
    prefix = schema.MARKER_PREFIX[index]
    high = get_meta(conn, f"{prefix}_high_water")
    if high is None:
        return None
    try:
        high_i = int(high)
        prog_i = int(get_meta(conn, f"{prefix}_progress") or 0)
    except ValueError:
        return None
    if high_i <= 0:
        return None
    return high_i, prog_i


def open_backfill_window(conn: sqlite3.Connection, index: str, high_water: int) -> None:
    prefix = schema.MARKER_PREFIX[index]
    set_meta(conn, f"{prefix}_high_water", high_water)
    set_meta(conn, f"{prefix}_progress", 0)


def close_backfill_window(conn: sqlite3.Connection, index: str) -> None:
    prefix = schema.MARKER_PREFIX[index]
    delete_meta(conn, f"{prefix}_high_water", f"{prefix}_progress")


def _select_columns(index: str) -> str:
    return ", ".join(DDL[index].columns)


# --------------------------------------------------------------------------
# Backfill


def seed_full_backfill(conn: sqlite3.Connection, index: str) -> int | None:
    """Inside the caller's transaction: mark every existing row as not yet indexed."""
    row = conn.execute("SELECT MAX(id) FROM messages").fetchone()
    high = row[0] if row and row[0] is not None else 0
    if high <= 0:
        close_backfill_window(conn, index)
        return None
    open_backfill_window(conn, index, high)
    return int(high)


def backfill_step(
    conn: sqlite3.Connection,
    index: str,
    chunk_rows: int = CHUNK_ROWS,
    deadline: float | None = None,
) -> bool:
    """Index one chunk of ``index``; True while work remains.

    The word and trigram indexes are filled under their build name and
    swapped in by the transaction of the last chunk (``schema.swap_in_build``);
    the CJK index, which Hermes Agent never reads, is filled in place.
    ``deadline`` (``time.monotonic()``): the chunk is read in ``SLICES`` parts
    and ends after the part that reaches it, so a slow chunk ends early.
    """
    with write_txn(conn):
        # Re-read the markers inside the write transaction: that is the claim,
        # so two processes driving the same backfill never index a chunk twice.
        state = backfill_window(conn, index)
        if state is None:
            return False
        target = schema.build_name(index) if schema.building(conn, index) else index
        high, progress = state
        if _holds_unreached(conn, target, progress, high):
            # Markers edited or rewound by hand: indexing those rows again would
            # add them twice (a corrupt index), so the build starts over.
            logger.warning("%s holds rows its backfill markers say it lacks; rebuilding", index)
            _start_over(conn, index)
            state = backfill_window(conn, index)
            if state is None:
                return False
            target = schema.build_name(index) if schema.building(conn, index) else index
            high, progress = state
        if progress == 0:
            _merge_settings(conn, target, BUILD_AUTOMERGE, BUILD_CRISISMERGE)
        end = id_after(conn, progress, chunk_rows, high)
        span = max(1, end - progress)
        part = -(-span // SLICES) if deadline is not None else span
        upper = progress
        while upper < end:
            _index_ids(conn, index, target, upper, min(upper + part, end))
            upper = min(upper + part, end)
            if deadline is not None and time.monotonic() >= deadline:
                break
        if upper >= high:
            _merge_settings(conn, target, AUTOMERGE, CRISISMERGE)
            close_backfill_window(conn, index)
            if target != index:
                schema.swap_in_build(conn, index)
            logger.info("backfill of %s complete (%d ids)", index, high)
            return False
        set_meta(conn, f"{schema.MARKER_PREFIX[index]}_progress", upper)
        return True


def id_after(conn: sqlite3.Connection, after: int, rows: int, high: int) -> int:
    """The id ``rows`` messages past ``after``, at most ``high``: a chunk's end.

    Chunks count messages, not ids: a store with far ids (an import's) had a
    gap of millions of empty chunks, each a transaction and a pause, so a
    backfill or fill over it never ended.
    """
    row = conn.execute(
        "SELECT id FROM main.messages WHERE id > ? ORDER BY id LIMIT 1 OFFSET ?",
        (after, max(1, rows) - 1),
    ).fetchone()
    return high if row is None else min(int(row[0]), high)


def _index_ids(conn: sqlite3.Connection, index: str, target: str, after: int, upto: int) -> None:
    """Index the messages ``after < id <= upto`` into ``target``."""
    cols = _select_columns(index)
    conn.execute(
        f"INSERT INTO {target}(rowid, {cols}) SELECT id, {cols} "
        f"FROM {schema.MESSAGE_TEXT} WHERE id > ? AND id <= ?",
        (after, upto),
    )
    if index == CJK:
        # The chunk indexed the rows' current state; older pending
        # entries for them would 'delete' values the index never held.
        conn.execute(f"DELETE FROM {CJK_PENDING} WHERE msg_id > ? AND msg_id <= ?", (after, upto))


def _merge_settings(conn: sqlite3.Connection, table: str, automerge: int, crisis: int) -> None:
    conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('automerge', {automerge})")
    conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('crisismerge', {crisis})")


def drive_backfill(
    conn: sqlite3.Connection,
    index: str,
    *,
    sleep: Sleep = time.sleep,
    chunk_rows: int = CHUNK_ROWS,
    min_pause: float = MIN_PAUSE,
    on_chunk: Callable[[], None] | None = None,
    txn_target: float | None = TXN_TARGET_S,
) -> None:
    """Run ``backfill_step`` until done, paced by ``drive_chunks``; with ``txn_target``
    each chunk also ends once ``TXN_LIMIT_S`` have passed."""

    def step(rows: int) -> bool:
        if txn_target is None:
            return backfill_step(conn, index, rows)
        return backfill_step(conn, index, rows, time.monotonic() + TXN_LIMIT_S)

    drive_chunks(
        step,
        index,
        sleep=sleep,
        chunk_rows=chunk_rows,
        min_pause=min_pause,
        on_chunk=on_chunk,
        txn_target=txn_target,
    )


def drive_chunks(
    step: Callable[[int], bool],
    label: str,
    *,
    sleep: Sleep = time.sleep,
    chunk_rows: int = CHUNK_ROWS,
    min_pause: float = MIN_PAUSE,
    on_chunk: Callable[[], None] | None = None,
    txn_target: float | None = TXN_TARGET_S,
) -> None:
    """Run ``step(rows)`` (one write transaction; True while work remains) until done,
    yielding the write lock between chunks.  Every chunked fill of optimize-storage
    (the backfills, the time table) goes through this one loop.

    Each chunk is one write transaction sized from the speed of the chunks
    before it so that it lasts about ``txn_target`` seconds (starting from
    ``chunk_rows`` rows, at most doubling per chunk, shrinking at once after
    a slow one), and ``min_pause`` seconds pass between chunks so that a
    writer waiting for the lock gets it (see MIN_PAUSE).  On an idle store
    the fill thus spends most of its time writing, not sleeping.
    ``txn_target=None`` keeps every chunk at ``chunk_rows`` rows.
    """
    rows = max(1, chunk_rows)
    while True:
        t0 = time.monotonic()
        try:
            more = step(rows)
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc).lower() and "busy" not in str(exc).lower():
                raise
            logger.debug("chunk of %s waited out lock contention: %s", label, exc)
            more = True
        else:
            if txn_target is not None:
                rows = next_chunk_rows(rows, time.monotonic() - t0, txn_target)
        if on_chunk is not None:
            on_chunk()
        if not more:
            return
        sleep(min_pause)


def next_chunk_rows(rows: int, elapsed: float, target: float) -> int:
    """Rows for the next chunk after ``rows`` took ``elapsed`` seconds; aims at ``target``.

    Growth is at most 2x per chunk (one fast chunk on a warm cache must not
    make the next transaction long); a chunk over the target shrinks the
    next one in proportion at once.
    """
    if elapsed <= 0:
        return min(MAX_CHUNK_ROWS, rows * 2)
    ideal = int(rows * target / elapsed)
    return max(1, min(MAX_CHUNK_ROWS, rows * 2, ideal))


def backfill_progress(
    conn: sqlite3.Connection, indexes: tuple[str, ...] = schema.INDEXES, messages: bool = False
) -> dict[str, Any] | None:
    """Aggregate ``{pending, total, indexed, percent, indexes}`` or None: in ids of
    each window, or in ``messages`` (a scan of the window's rows).  Ids need not be
    dense: a store whose first sessions were deleted was said to be 96 % indexed
    when two thirds of its messages were."""
    per: dict[str, dict[str, int]] = {}
    for index in indexes:
        state = backfill_window(conn, index)
        if state is not None:
            high, progress = state
            per[index] = {"total": high, "indexed": min(progress, high)}
            if messages:
                total, done = conn.execute(
                    "SELECT count(*), coalesce(sum(id <= ?), 0) FROM main.messages WHERE id <= ?",
                    (progress, high),
                ).fetchone()
                per[index] = {"total": int(total), "indexed": int(done)}
    if not per:
        return None
    total = sum(v["total"] for v in per.values())
    indexed = sum(v["indexed"] for v in per.values())
    return {
        "pending": True,
        "total": total,
        "indexed": indexed,
        "percent": min(100, int(100 * indexed / total)) if total else 100,
        "indexes": per,
    }


def paced_steps(
    conn: sqlite3.Connection,
    step: Callable[[int], int],
    size: int,
    *,
    more: Callable[[], bool],
    before: Callable[[], None] | None,
    sleep: Sleep,
) -> Iterator[int]:
    """``step(size)`` in its own write transaction while ``more()`` and each call
    does work (returns above 0), yielding what each did: paced as ``drive_chunks``
    paces a fill, but a locked store raises rather than being waited out (a
    search's apply gives up at once).  ``before`` may raise to stop."""
    first = True
    while more():
        if not first:
            sleep(MIN_PAUSE)
        first = False
        if before is not None:
            before()
        started = time.monotonic()
        with write_txn(conn):
            done = step(size)
        if done <= 0:
            return
        yield done
        size = next_chunk_rows(size, time.monotonic() - started, TXN_TARGET_S)


# The first step of a paced merge, in leaf pages; later ones are sized to TXN_TARGET_S.
MERGE_FIRST_PAGES = 256


def merge_paced(
    conn: sqlite3.Connection,
    index: str,
    before_step: Callable[[], None] | None = None,
    *,
    sleep: Sleep = time.sleep,
) -> int:
    """Merge every segment of ``index`` into one, as FTS5's ``'optimize'`` does, in
    ``paced_steps``; returns the steps that merged.
    ``before_step`` runs before each step and may raise to stop there, as
    ``apply_pending``'s ``before_batch`` (a merge writes its new segment first).

    One ``'optimize'`` is one transaction: on a large word index it held the
    write lock for seconds, and a Hermes write waiting behind it may give up.
    FTS5's ``'merge'`` with a negative page count merges segments of every
    level, at most that many pages a call; a call that changed fewer than two
    rows found one segment left (FTS5's documented test for "no work done").
    Writers adding segments meanwhile could keep it going: it stops once it has
    written twice the pages the index had, a whole merge's worth and more."""
    (held,) = conn.execute(f"SELECT count(*) FROM {index}_data").fetchone()
    budget = 2 * int(held) + MERGE_FIRST_PAGES

    def merge(pages: int) -> int:
        before = conn.total_changes
        conn.execute(f"INSERT INTO {index}({index}, rank) VALUES('merge', ?)", (-pages,))
        return pages if conn.total_changes - before >= 2 else 0

    steps = written = 0

    def unfinished() -> bool:
        return written < budget

    for pages in paced_steps(
        conn, merge, MERGE_FIRST_PAGES, more=unfinished, before=before_step, sleep=sleep
    ):
        steps, written = steps + 1, written + pages
    return steps


# --------------------------------------------------------------------------
# Reset / integrity


def reset_index(conn: sqlite3.Connection, index: str) -> None:
    """Start rebuilding ``index`` from scratch; one transaction.

    The word and trigram indexes are rebuilt under their build name while
    the live one keeps serving; the last backfill chunk swaps the build in.
    With no rows there is nothing to build and the new index goes live at once.
    The CJK index is dropped and recreated in place: only
    we read it, and only once its backfill is complete.
    """
    with write_txn(conn):
        _start_over(conn, index)
    logger.info("%s reset; a chunked backfill will rebuild it", index)


def _start_over(conn: sqlite3.Connection, index: str) -> None:
    """``reset_index`` inside the caller's transaction."""
    has_rows = conn.execute("SELECT 1 FROM messages LIMIT 1").fetchone() is not None
    if index in schema.SWAPPED and has_rows:
        schema.create_build_objects(conn, index)
        seed_full_backfill(conn, index)
    elif index in schema.SWAPPED:
        close_backfill_window(conn, index)
        schema.drop_build_objects(conn, index)
        schema.drop_index_objects(conn, index)
        schema.create_index_objects(conn, index)
        schema.create_triggers(conn, index)
    else:
        schema.drop_index_objects(conn, index)
        schema.create_index_objects(conn, index)
        seed_full_backfill(conn, index)
        schema.create_triggers(conn, index)
    if index == TRIGRAM:
        delete_meta(conn, schema.META_TRIGRAM_STALE)
    if index == CJK:
        delete_meta(conn, schema.META_CJK_STALE)


def _holds_unreached(conn: sqlite3.Connection, table: str, progress: int, high: int) -> bool:
    """Whether ``table`` holds a row in the window its backfill has not reached
    (``progress < id <= high``): never so unless the markers were edited.  A range
    read of its ``%_docsize``."""
    try:
        row = conn.execute(
            f"SELECT 1 FROM {table}_docsize WHERE id > ? AND id <= ? LIMIT 1", (progress, high)
        ).fetchone()
    except sqlite3.OperationalError:
        return False  # no such table: the chunk's own statements say what is wrong
    return row is not None


def integrity_check(conn: sqlite3.Connection, index: str) -> str | None:
    """None when FTS5 'integrity-check' passes, else the error text.

    The ``rank = 1`` form also compares the index with its content view; the
    plain form only checks the index against itself, so an index holding
    the wrong text for its view would pass.
    """
    try:
        with write_txn(conn):
            conn.execute(f"INSERT INTO {index}({index}, rank) VALUES('integrity-check', 1)")
    except sqlite3.DatabaseError as exc:
        return str(exc)
    return None


def index_bytes(conn: sqlite3.Connection, index: str) -> int | None:
    """The index's ``%_data`` blocks plus, for an inline table, the copy in ``%_content``.

    Hermes Agent creates ``messages_fts`` inline, so its ``_content`` table
    holds a second copy of the text: left out, the index looks ten times
    smaller than the space it takes.
    """
    try:
        row = conn.execute(f"SELECT SUM(length(block)) FROM {index}_data").fetchone()
    except sqlite3.OperationalError:
        return None
    return int(row[0] or 0) + _content_bytes(conn, index)


def _content_bytes(conn: sqlite3.Connection, index: str) -> int:
    """The bytes of the text columns of ``{index}_content``; 0 when there is none."""
    columns = [
        row[1] for row in conn.execute(f"PRAGMA table_info({index}_content)") if row[1] != "id"
    ]
    if not columns:
        return 0
    row = conn.execute(f"SELECT {_bytes_sum(columns)} FROM {index}_content").fetchone()
    return int(row[0] or 0)


def _bytes_sum(columns: Sequence[str]) -> str:
    """SQL: the sum of the stored bytes of ``columns`` over the rows read."""
    return "SUM(" + " + ".join(f'COALESCE(length(CAST("{c}" AS BLOB)), 0)' for c in columns) + ")"


TEXT_CHUNK_IDS = 50_000  # ids summed per statement, so that progress can be shown


def text_bytes(conn: sqlite3.Connection, report: Callable[[int, int], None] | None = None) -> int:
    """The UTF-8 bytes of content + tool_name + tool_calls of every message (a
    full scan, chunk by chunk); ``report(done, total)`` in ids after each chunk."""
    low, high = conn.execute("SELECT min(id), max(id) FROM messages").fetchone()
    if low is None:
        return 0
    # Chunks of rows, not of ids: one message with a far id (an import's) made a
    # range of ids millions of empty chunks long, and status never ended.
    columns = ", ".join(INDEXED_COLUMNS)
    sql = (
        f"SELECT max(id), {_bytes_sum(INDEXED_COLUMNS)} FROM (SELECT id, {columns} "
        "FROM messages WHERE id >= ? ORDER BY id LIMIT ?)"
    )
    total, done, start = high - low + 1, 0, low
    while start <= high:
        end, size = conn.execute(sql, (start, TEXT_CHUNK_IDS)).fetchone()
        if end is None:
            break
        done += int(size or 0)
        if report is not None:
            report(end - low + 1, total)
        start = end + 1
    return done


def index_sizes(conn: sqlite3.Connection, text: int | None = None) -> dict[str, dict[str, Any]]:
    """Each existing index: ``bytes`` (its %_data blocks) and ``x_text``, a multiple
    of the UTF-8 text of content + tool_name + tool_calls (``text``, a full scan,
    when the caller has not measured it already)."""
    text = text_bytes(conn) if text is None else text
    sizes: dict[str, dict[str, Any]] = {}
    for index in schema.INDEXES:
        size = index_bytes(conn, index)
        if size is not None:
            sizes[index] = {"bytes": size, "x_text": round(size / text, 3) if text else None}
    return sizes


class BackfillJob:
    """One optimize-storage backfill as progress in messages, over every index it fills.

    Each index's window is counted in messages (ids need not be dense: a store
    whose first sessions were deleted jumped to 96 % at its second chunk), once
    when the job starts and then chunk by chunk, the ids each chunk covered.  A
    finished index counts as complete, and the job reports the fraction of all
    the windows' messages indexed, as a share of the messages to index, so one
    bar runs from where a resumed run stands to 100 %.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        # index -> [high, progress reached, messages up to high, messages up to progress]
        self._windows: dict[str, list[int]] = {}
        for index, st in ((backfill_progress(conn) or {}).get("indexes", {})).items():
            self._join(index, st)
        top = max((w[0] for w in self._windows.values()), default=0)
        self.messages = self._count(0, top) if top else 0

    def _count(self, after: int, upto: int) -> int:
        row = self._conn.execute(
            "SELECT count(*) FROM main.messages WHERE id > ? AND id <= ?", (after, upto)
        ).fetchone()
        return int(row[0])

    def _join(self, index: str, st: dict[str, int]) -> None:
        high, progress = st["total"], st["indexed"]
        self._windows[index] = [high, progress, self._count(0, high), self._count(0, progress)]

    def progress(self) -> dict[str, Any]:
        """``percent``, ``indexed`` and ``total`` (messages) of the whole job so far."""
        now = (backfill_progress(self._conn) or {}).get("indexes", {})
        for index, st in now.items():
            window = self._windows.get(index)
            if window is None or st["total"] != window[0] or st["indexed"] < window[1]:
                self._join(index, st)  # a window opened mid-job (an index reset) joins it
            elif st["indexed"] > window[1]:  # the ids the chunks since have covered
                window[3] += self._count(window[1], st["indexed"])
                window[1] = st["indexed"]
        span = sum(w[2] for w in self._windows.values())
        if not span:
            return {"percent": 100, "indexed": self.messages, "total": self.messages}
        done = sum(w[3] if index in now else w[2] for index, w in self._windows.items())
        fraction = min(1.0, done / span)
        return {
            "percent": min(100, int(100 * fraction)),
            "indexed": round(fraction * self.messages),
            "total": self.messages,
        }


class Phases:
    """optimize-storage's progress events: the phase, with the backfill's counts once
    the backfill job exists (``job``)."""

    def __init__(self, progress: Progress | None) -> None:
        self.progress = progress
        self.job: BackfillJob | None = None

    def __call__(self, phase: str) -> None:
        if self.progress is None:
            return
        event: dict[str, Any] = {"phase": phase, "percent": 100, "indexed": 0, "total": 0}
        if self.job is not None and phase == "backfill":  # no other step counts messages
            event.update(self.job.progress())
        self.progress(event)

    def counted(self, phase: str) -> Callable[[int, int], None]:
        """Events of a phase that counts its own work (``done`` of ``total``)."""

        def report(done: int, total: int) -> None:
            if self.progress is not None:
                percent = 100 * done // total if total else 100
                self.progress({"phase": phase, "percent": percent, "indexed": done, "total": total})

        return report
