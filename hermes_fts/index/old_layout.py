"""Giving Hermes Agent's names back: the objects older hermes-fts releases made under them.

Releases before the ``hermes_fts_*`` namespace kept the CJK index as
``messages_fts_cjk`` (tokenizer ``cjk_unicode61``), rebuilt Hermes' own
``messages_fts`` and ``messages_fts_trigram`` as external-content tables over
views of their own, held the trigram name with a stub view and placeholder
triggers, and kept their markers under Hermes' ``state_meta`` keys.  Newer
Hermes builds own every one of those names (docs/DESIGN.md §9), so
``optimize-storage`` removes ours in one transaction, and Hermes recreates
its own indexes on its next open.  Only what an older hermes-fts made is
touched: a table is ours when it reads one of our views, the stub and the
placeholders carry our mark.
"""

from __future__ import annotations

import logging
import re
import sqlite3

from .. import loader
from . import maintain as indexing

logger = logging.getLogger("hermes_fts.index.old_layout")

__all__ = ["find", "give_back"]

WORD = "messages_fts"
TRIGRAM = "messages_fts_trigram"
CJK = "messages_fts_cjk"
PLACEHOLDER_MARK = "hermes_fts placeholder"
# Views an older hermes-fts read its indexes from (escapes decoded, escapes raw).  Not
# ``_src``: newer Hermes reads its own indexes from ``messages_fts*_src`` views.
_VIEW_SUFFIXES = ("_text", "_rows")
# A B-tree index an older hermes-fts named like Hermes' own (no Hermes build has it).
_OLD_INDEXES = ("idx_sessions_title",)
# state_meta keys an older hermes-fts kept per index; newer Hermes uses the
# word and CJK ones for its own indexes, so they go only with our index.
_META = {
    WORD: ("fts_rebuild_high_water", "fts_rebuild_progress", "fts_stale", "fts_stale_reason"),
    TRIGRAM: (
        "fts_trigram_rebuild_high_water",
        "fts_trigram_rebuild_progress",
        "fts_trigram_stale",
    ),
    CJK: ("fts_cjk_rebuild_high_water", "fts_cjk_rebuild_progress", "fts_cjk_stale"),
}
_TIME_META = ("time_table_high_water", "time_table_progress", "time_table_complete")


def _objects(conn: sqlite3.Connection) -> dict[str, tuple[str, str]]:
    return {
        name: (kind, sql or "")
        for kind, name, sql in conn.execute(
            "SELECT type, name, sql FROM main.sqlite_master WHERE name LIKE 'messages\\_fts%' "
            f"ESCAPE '\\' OR (type = 'index' AND name IN ({', '.join('?' * len(_OLD_INDEXES))}))",
            _OLD_INDEXES,
        )
    }


def _ours(index: str, kind: str, sql: str) -> bool:
    """An index table reading one of our views, or the trigram stub view."""
    if kind == "view":
        return PLACEHOLDER_MARK in sql
    flat = sql.replace(" ", "").replace('"', "'").lower()
    return kind == "table" and any(f"content='{index}{s}'" in flat for s in _VIEW_SUFFIXES)


def find(conn: sqlite3.Connection) -> list[str]:
    """Names of the objects an older hermes-fts made under Hermes Agent's names."""
    objects = _objects(conn)
    found: set[str] = set()
    for index in (WORD, TRIGRAM, CJK):
        kind, sql = objects.get(index, ("", ""))
        if _ours(index, kind, sql):
            found |= {index, *_dependents(index, objects)}
    found |= {name for name in objects if name.endswith("_next") or "_next_" in name}
    found |= {name for name, (_kind, sql) in objects.items() if PLACEHOLDER_MARK in sql}
    found |= {name for name in objects if name.startswith(f"{CJK}_pending")}
    found |= {
        f"{index}{s}"
        for index in (WORD, TRIGRAM, CJK)
        for s in _VIEW_SUFFIXES
        if objects.get(f"{index}{s}", ("",))[0] == "view"
    }
    found |= {name for name in _OLD_INDEXES if name in objects}
    return sorted(found & set(objects))


def _dependents(index: str, objects: dict[str, tuple[str, str]]) -> set[str]:
    """Triggers that write into ``index``: once it is gone they would fail every write."""
    writes = re.compile(rf"\b{re.escape(index)}\s*\(", re.IGNORECASE)
    return {
        name
        for name, (kind, sql) in objects.items()
        if kind == "trigger"
        and (
            writes.search(sql)
            or re.fullmatch(
                rf"{re.escape(index)}_(insert|delete|update|stub_\w+|session_\w+)", name
            )
        )
    }


def give_back(conn: sqlite3.Connection) -> list[str]:
    """Drop what ``find`` names and our old ``state_meta`` keys, in one transaction.

    Returns the names dropped.  A store without any is left untouched."""
    names = find(conn)
    if CJK in names and loader.has_extension(conn):
        # Ours was written with our tokenizer under its public name; the name
        # is free here, since that table holds Hermes' CJK name.
        loader.claim_public_name(conn)
    if CJK in names and not _opens(conn, CJK):
        # Dropping a virtual table needs its tokenizer; kept until a process has it.
        names = [n for n in names if not n.startswith(CJK)]
    stale_time_keys = (
        conn.execute(
            f"SELECT 1 FROM state_meta WHERE key IN ({', '.join('?' * len(_TIME_META))})",
            _TIME_META,
        ).fetchone()
        if _has_state_meta(conn)
        else None
    )
    if not names and stale_time_keys is None:
        return []
    objects = _objects(conn)
    with indexing.write_txn(conn):
        for kind in ("trigger", "table", "view", "index"):
            for name in names:
                if objects[name][0] == kind and _still_there(conn, name):
                    conn.execute(f'DROP {kind.upper()} IF EXISTS "{name}"')
        keys = [key for index in (WORD, TRIGRAM, CJK) if index in names for key in _META[index]]
        if _has_state_meta(conn):
            indexing.delete_meta(conn, *keys, *_TIME_META)
    if names:
        logger.info("gave Hermes Agent's names back: dropped %s", ", ".join(names))
    return names


def _opens(conn: sqlite3.Connection, table: str) -> bool:
    try:
        conn.execute(f'SELECT 1 FROM "{table}" LIMIT 0').fetchall()
    except sqlite3.Error as exc:
        logger.warning("cannot give back %s yet: %s", table, exc)
        return False
    return True


def _still_there(conn: sqlite3.Connection, name: str) -> bool:
    # Dropping a table drops its shadow tables and an index on a table goes with it.
    return (
        conn.execute("SELECT 1 FROM main.sqlite_master WHERE name = ?", (name,)).fetchone()
        is not None
    )


def _has_state_meta(conn: sqlite3.Connection) -> bool:
    return (
        conn.execute(
            "SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = 'state_meta'"
        ).fetchone()
        is not None
    )
