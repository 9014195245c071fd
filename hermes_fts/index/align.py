"""Aligning the indexes when a writer opens a store.

``align`` adds only what is missing and decides, per index, whether this
process maintains it: an index whose triggers this process cannot run, or
whose triggers went missing while rows were written, is detached and marked
stale for optimize-storage to rebuild (docs/DESIGN.md §9.2).
"""

from __future__ import annotations

import logging
import sqlite3

from .. import _env
from . import maintain as indexing
from . import schema
from .lifecycle import Capabilities, trigram_policy, word_policy
from .schema import BASE, CJK, TRIGRAM

logger = logging.getLogger("hermes_fts.index.align")

__all__ = ["align", "has_messages"]


def _triggers_ok(conn: sqlite3.Connection, index: str) -> bool:
    return not schema.missing_triggers(conn, index)


def has_messages(conn: sqlite3.Connection) -> bool:
    """Whether the store holds any message (False for a new store without the table)."""
    try:
        return conn.execute("SELECT 1 FROM messages LIMIT 1").fetchone() is not None
    except sqlite3.OperationalError:
        return False


def align(
    conn: sqlite3.Connection, caps: Capabilities, *, create_cjk: bool = False, base: bool = True
) -> None:
    """Schema alignment on open, in one write transaction; adds only what is missing.

    Missing base tables and columns are added (unless ``base`` is False: the
    store defers that to its first write), then each index is created, kept
    or detached (stale) as this process can maintain it.
    """
    with indexing.write_txn(conn):
        if base:
            schema.ensure_base_schema(conn)
        _align_indexes(conn, caps, create_cjk)


def _detach(conn: sqlite3.Connection, index: str, meta: str, reason: str | None = None) -> None:
    """Drop ``index``'s triggers (they would fail or miss writes) and mark it stale."""
    if schema.index_sql(conn, index) is not None and _triggers_ok(conn, index):
        indexing.set_meta(conn, meta, 1)
        if reason is not None:
            indexing.set_meta(conn, schema.META_FTS_STALE_REASON, reason)
    schema.drop_triggers(conn, index)


def _align_indexes(conn: sqlite3.Connection, caps: Capabilities, create_cjk: bool) -> None:
    if not caps.fts5:
        # Triggers into FTS5 tables would make every message write fail.
        for index in (BASE, TRIGRAM):
            _detach(conn, index, schema.META_FTS_STALE, "fts5 unavailable")
        logger.warning("SQLite FTS5 unavailable; message writes work, search uses LIKE")
        return
    stale = indexing.get_meta(conn, schema.META_FTS_STALE) is not None
    has_rows = has_messages(conn)
    # Word and trigram index: only created here when the store has no
    # messages (nothing to build); over messages optimize-storage builds them.
    stale = _align_word(conn, stale, has_rows)
    _align_trigram(conn, caps, stale, has_rows)
    _align_cjk(conn, caps, create_cjk, has_rows)


def _align_word(conn: sqlite3.Connection, stale: bool, has_rows: bool) -> bool:
    """Keep, create or detach the word index; returns whether the store is now stale."""
    base_sql = schema.index_sql(conn, BASE)
    if stale:
        schema.drop_triggers(conn, BASE)
    elif base_sql is None:
        if not has_rows and not schema.building(conn, BASE) and word_policy()[0]:
            schema.create_index_objects(conn, BASE)
            schema.create_triggers(conn, BASE)
    elif not _triggers_ok(conn, BASE) and not schema.building(conn, BASE):
        # Writes happened with no trigger: the index no longer matches.  (While
        # a rebuild is under way the build takes the writes and replaces this
        # index when complete, so an interrupted rebuild resumes, not restarts.)
        indexing.set_meta(conn, schema.META_FTS_STALE, 1)
        indexing.set_meta(conn, schema.META_FTS_STALE_REASON, "base triggers missing")
        schema.drop_triggers(conn, BASE)
        return True
    elif schema.index_layout(base_sql) == "external":
        # Opted out (HERMES_WORD_FTS=0, or unset) too: kept complete until
        # optimize-storage drops it.
        conn.execute(schema.DDL[BASE].view_sql)
        schema.create_triggers(conn, BASE)
    return stale


def _align_trigram(
    conn: sqlite3.Connection, caps: Capabilities, stale: bool, has_rows: bool
) -> None:
    trigram_sql = schema.index_sql(conn, TRIGRAM)
    if stale or not caps.trigram:
        # Its triggers would make this process's writes fail (no tokenizer)
        # or it misses rows: rebuilt by the next optimize-storage.
        _detach(conn, TRIGRAM, schema.META_TRIGRAM_STALE)
        if not caps.trigram and _env.trigram_enabled():
            logger.info(
                "SQLite trigram tokenizer unavailable (SQLite %s); "
                "substring search falls back to LIKE",
                sqlite3.sqlite_version,
            )
    elif trigram_sql is None:
        if not has_rows and not schema.building(conn, TRIGRAM) and trigram_policy(conn, caps)[0]:
            schema.create_index_objects(conn, TRIGRAM)
            schema.create_triggers(conn, TRIGRAM)
    elif indexing.get_meta(conn, schema.META_TRIGRAM_STALE) is not None:
        schema.drop_triggers(conn, TRIGRAM)
    elif not _triggers_ok(conn, TRIGRAM):
        # Writes went past it: it misses rows.
        indexing.set_meta(conn, schema.META_TRIGRAM_STALE, 1)
        schema.drop_triggers(conn, TRIGRAM)
    elif schema.index_layout(trigram_sql) == "external":
        # Opted out (HERMES_TRIGRAM_FTS=0) too: kept complete until
        # optimize-storage drops it.
        conn.execute(schema.DDL[TRIGRAM].view_sql)
        schema.create_triggers(conn, TRIGRAM)


def _align_cjk(
    conn: sqlite3.Connection, caps: Capabilities, create_cjk: bool, has_rows: bool
) -> None:
    """Never written by a trigger, so its pending-log triggers stay in place
    whether or not this process has the extension."""
    cjk_sql = schema.index_sql(conn, CJK)
    if cjk_sql is not None and schema.index_layout(cjk_sql) == "outdated":
        # An earlier layout: not served until optimize-storage rebuilds it.
        indexing.set_meta(conn, schema.META_CJK_STALE, 1)
    elif cjk_sql is not None:
        if schema.CJK_PENDING in schema.cjk_parts_missing(conn):
            # Dropped by hand: the changes it held are lost to the index.
            indexing.set_meta(conn, schema.META_CJK_STALE, 1)
        conn.execute(schema.PENDING_TABLE_SQL)
        conn.execute(schema.PENDING_INDEX_SQL)
        if not _triggers_ok(conn, CJK):
            # Changes went unlogged: only a rebuild can make it right.
            indexing.set_meta(conn, schema.META_CJK_STALE, 1)
        schema.create_triggers(conn, CJK)
    elif caps.cjk and (create_cjk or not has_rows):
        # Over existing rows only when asked (sync, optimize-storage): an open
        # of an agent's store changes nothing in it (docs/DESIGN.md §9.2).
        schema.create_index_objects(conn, CJK)
        if has_rows:
            indexing.seed_full_backfill(conn, CJK)
        schema.create_triggers(conn, CJK)
