"""The CJK index's pending table: the messages waiting for the index (written by a
process without the extension, or by ours when the index was busy), and applying
them in paced batches so that Hermes' writes get the lock between them (§5.3)."""

from __future__ import annotations

import logging
import sqlite3
import time
from typing import Callable

from ..content import INDEXED_COLUMNS, indexed_values
from . import maintain, schema
from .maintain import Phases, Progress, Sleep, get_meta, paced_steps, set_meta
from .schema import CJK, CJK_PENDING

__all__ = [
    "apply_pending",
    "apply_pending_batch",
    "pending_count",
    "pending_deletes",
    "pending_text",
    "replaced_message",
    "unlogged_message",
]

logger = logging.getLogger("hermes_fts.index.maintain")  # the log name of index upkeep
# A message's first pending row: the one whose old values the index holds.
_FIRST = f"p.seq = (SELECT MIN(seq) FROM {CJK_PENDING} q WHERE q.msg_id = p.msg_id)"


def pending_count(conn: sqlite3.Connection) -> int:
    try:
        return int(conn.execute(f"SELECT COUNT(*) FROM {CJK_PENDING}").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def pending_text(conn: sqlite3.Connection) -> tuple[int, int]:
    """The messages the pending table names and their stored bytes: what applying the
    backlog indexes (deleted ones add nothing); (0, 0) without a change log."""
    size = " + ".join(f"COALESCE(length(CAST({c} AS BLOB)), 0)" for c in INDEXED_COLUMNS)
    try:
        row = conn.execute(
            f"SELECT COUNT(*), SUM({size}) FROM main.messages "
            f"WHERE id IN (SELECT msg_id FROM {CJK_PENDING})"
        ).fetchone()
    except sqlite3.OperationalError:
        return 0, 0
    return int(row[0]), int(row[1] or 0)


def unlogged_message(conn: sqlite3.Connection) -> int | None:
    """The first message newer than every row the CJK index holds that its change log
    does not name either, else None.  Every such message waits in the log until
    applied; one that does not (the log edited by hand) the index never gets, so
    it misses the row without a sign.  A range read: as cheap as the log is short."""
    row = conn.execute(
        f"SELECT m.id FROM main.messages m WHERE m.id > COALESCE((SELECT max(id) "
        f"FROM {CJK}_docsize), -1) AND NOT EXISTS (SELECT 1 FROM {CJK_PENDING} p "
        "WHERE p.msg_id = m.id) ORDER BY m.id LIMIT 1"
    ).fetchone()
    return None if row is None else int(row[0])


def pending_deletes(conn: sqlite3.Connection) -> bool:
    """Whether a message the pending table names is gone (deleted, or its id changed)."""
    try:
        return (
            conn.execute(
                f"SELECT 1 FROM {CJK_PENDING} p WHERE NOT EXISTS "
                f"(SELECT 1 FROM messages m WHERE m.id = p.msg_id) LIMIT 1"
            ).fetchone()
            is not None
        )
    except sqlite3.OperationalError:
        return False


def apply_pending(
    conn: sqlite3.Connection,
    before_batch: Callable[[], None] | None = None,
    progress: Progress | None = None,
    *,
    sleep: Sleep = time.sleep,
) -> int:
    """Bring messages_fts_cjk up to date from the pending table; returns ids applied.

    Batches are ``paced_steps``: the first takes ``PENDING_BATCH_IDS`` ids, the
    next ones are sized to last about ``TXN_TARGET_S``, with ``MIN_PAUSE``
    between them for a writer waiting for the lock.  Without that, batches of
    long tool outputs held the lock back to back for longer than Hermes
    retries a write.  A batch deletes the pending rows it applied (and their
    old text) in its own transaction; with nothing pending no write lock is
    taken.  ``before_batch`` runs before each batch and may raise to stop
    there (the disk room check); batches done stay done.  ``progress`` gets
    a ``pending`` event (messages applied of those waiting) before the first
    batch and after each, when more than the first batch waits.
    """
    if schema.index_layout(schema.index_sql(conn, CJK)) != "external":
        # An earlier layout holds other text: a 'delete' of the indexed text
        # would corrupt it.  optimize-storage rebuilds it.
        return 0
    report = _pending_report(conn, maintain.PENDING_BATCH_IDS, progress)
    applied = 0

    def waiting() -> bool:
        return conn.execute(f"SELECT 1 FROM {CJK_PENDING} LIMIT 1").fetchone() is not None

    def batch(ids: int) -> int:
        return apply_pending_batch(conn, ids)

    for n in paced_steps(
        conn, batch, maintain.PENDING_BATCH_IDS, more=waiting, before=before_batch, sleep=sleep
    ):
        applied += n
        report(applied)
    return applied


def _pending_report(
    conn: sqlite3.Connection, batch_ids: int, progress: Progress | None
) -> Callable[[int], None]:
    """``report(applied)`` for ``apply_pending``: events only for a backlog of more
    than one batch; the total grows with rows other writers add meanwhile."""
    if progress is None:
        return lambda applied: None
    row = conn.execute(f"SELECT COUNT(DISTINCT msg_id) FROM {CJK_PENDING}").fetchone()
    total = [int(row[0])]
    if total[0] <= batch_ids:
        return lambda applied: None
    counted = Phases(progress).counted("pending")

    def report(applied: int) -> None:
        total[0] = max(total[0], applied)
        counted(applied, total[0])

    report(0)
    return report


def apply_pending_batch(conn: sqlite3.Connection, batch_ids: int | None = None) -> int:
    """Inside the caller's transaction: apply the pending rows of up to ``batch_ids`` ids.

    Batches are cut by message id, never by sequence number: all pending rows
    of one message are consumed together, because only the *first* row's old
    values are what the index holds (a later row's old values are a state the
    index never saw).  ``None`` takes everything.
    """
    indexed = schema.indexed_condition(CJK, "p.msg_id")
    if batch_ids is None:
        row = conn.execute(f"SELECT MAX(msg_id) FROM {CJK_PENDING}").fetchone()
    else:
        row = conn.execute(
            f"SELECT MAX(msg_id) FROM (SELECT DISTINCT msg_id FROM {CJK_PENDING} "
            "ORDER BY msg_id LIMIT ?)",
            (batch_ids,),
        ).fetchone()
    if row is None or row[0] is None:
        return 0
    bound = row[0]
    n = conn.execute(
        f"SELECT COUNT(DISTINCT msg_id) FROM {CJK_PENDING} WHERE msg_id <= ?", (bound,)
    ).fetchone()[0]
    stale = get_meta(conn, schema.META_CJK_STALE) is not None
    if not stale:
        replaced = replaced_message(conn, bound)
        if replaced is not None:
            # An INSERT OR REPLACE over an indexed message fires no delete trigger:
            # the text the index holds for it was never logged, so no 'delete'
            # can take it out.  Only a rebuild (optimize-storage) makes it right.
            logger.warning(
                "message %d was replaced without a delete; %s needs a rebuild", replaced, CJK
            )
            set_meta(conn, schema.META_CJK_STALE, 1)
            _replaced_in_word_indexes(conn, replaced)
            stale = True
    if stale:
        # Rebuilt from the messages anyway: the changes are not applied.
        conn.execute(f"DELETE FROM {CJK_PENDING} WHERE msg_id <= ?", (bound,))
        return int(n)
    held = f"EXISTS (SELECT 1 FROM {CJK}_docsize d WHERE d.id = p.msg_id)"
    # 1) remove what the index holds: the first pending row's old values,
    #    for rows that qualified then and lie in the indexed id range.
    # The pending table keeps stored values; the index holds their indexed
    # text (content.indexed_values), which the 'delete' must give exactly.
    # A row the index does not hold (a log edited by hand) has nothing to take
    # out: FTS5 would subtract its tokens anyway and corrupt the index.
    conn.execute(
        f"INSERT INTO {CJK}({CJK}, rowid, content, tool_name, tool_calls) "
        f"SELECT 'delete', p.msg_id, {indexed_values('p.old_')} "
        f"FROM {CJK_PENDING} p WHERE p.msg_id <= ? AND {_FIRST} AND p.op <> 'insert' "
        f"AND {indexed} AND {held}",
        (bound,),
    )
    # 2) add the final state: whatever the row is now, if it still qualifies.
    conn.execute(
        f"INSERT INTO {CJK}(rowid, content, tool_name, tool_calls) "
        f"SELECT v.id, v.content, v.tool_name, v.tool_calls FROM {schema.MESSAGE_TEXT} v "
        f"WHERE v.id IN (SELECT DISTINCT p.msg_id FROM {CJK_PENDING} p "
        f"WHERE p.msg_id <= ? AND {indexed})",
        (bound,),
    )
    # Ids inside a running backfill window are simply dropped: the backfill
    # will read their current state.
    conn.execute(f"DELETE FROM {CJK_PENDING} WHERE msg_id <= ?", (bound,))
    return int(n)


def replaced_message(conn: sqlite3.Connection, bound: int | None = None) -> int | None:
    """A pending message (up to id ``bound``) that an ``INSERT OR REPLACE`` wrote over one
    the CJK index holds: its change log begins with an insert of an id already held.
    No delete trigger fired for the row replaced, so no index knows its old text."""
    indexed = schema.indexed_condition(CJK, "p.msg_id")
    held = f"EXISTS (SELECT 1 FROM {CJK}_docsize d WHERE d.id = p.msg_id)"
    try:
        row = conn.execute(
            f"SELECT p.msg_id FROM {CJK_PENDING} p WHERE p.msg_id <= ? AND {_FIRST} "
            f"AND p.op = 'insert' AND {indexed} AND {held} LIMIT 1",
            (bound if bound is not None else 2**63 - 1,),
        ).fetchone()
    except sqlite3.OperationalError:  # no CJK index or change log
        return None
    return None if row is None else int(row[0])


def _replaced_in_word_indexes(conn: sqlite3.Connection, message_id: int) -> None:
    """The kept word and trigram indexes also hold the replaced message's old tokens:
    their insert trigger added the new text beside them (no delete trigger fired), so
    they found the replaced text in a message that no longer holds it.  Marked stale
    as the CJK index is: not served, rebuilt by optimize-storage."""
    if schema.index_sql(conn, schema.BASE) is not None:
        set_meta(conn, schema.META_FTS_STALE, 1)
        set_meta(
            conn, schema.META_FTS_STALE_REASON, f"message {message_id} replaced without a delete"
        )
    if schema.index_sql(conn, schema.TRIGRAM) is not None:
        set_meta(conn, schema.META_TRIGRAM_STALE, 1)
