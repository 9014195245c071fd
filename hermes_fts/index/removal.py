"""Taking hermes-fts out of a store (``hermes-fts remove``): every object it made.

Our triggers on ``messages`` keep writing the pending table, the time table
and the rank bounds' dirty blocks after hermes-fts is uninstalled, in every
process that writes the store, Hermes Agent's included: the pending table
then grows with every message and keeps deleted text, since no hermes-fts
write ever applies it.  Removing drops every object named ``hermes_fts_*``
(triggers first, then our FTS5 tables with their shadow tables, then the
rest) and our ``state_meta`` keys, in one transaction.  Hermes' tables,
indexes and rows are not touched; the columns an older Hermes lacked and a
hermes-fts open added stay, as Hermes' own layout has them.
"""

from __future__ import annotations

import sqlite3

from . import maintain as indexing
from . import schema

__all__ = ["objects", "remove", "removed_bytes"]

# Our names, as a LIKE pattern: ``_`` is a wildcard there.
_OURS = schema.NAMESPACE.replace("_", "\\_") + "%"


def objects(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """``(type, name)`` of every object of ours in the main schema, FTS5's shadow
    tables included, triggers first."""
    rows = conn.execute(
        "SELECT type, name FROM main.sqlite_master WHERE name LIKE ? ESCAPE '\\' "
        "ORDER BY type <> 'trigger', type, name",
        (_OURS,),
    ).fetchall()
    return [(str(kind), str(name)) for kind, name in rows]


def removed_bytes(conn: sqlite3.Connection) -> int | None:
    """The bytes our tables and indexes take in the file (dbstat), None without dbstat."""
    try:
        (total,) = conn.execute(
            "SELECT coalesce(sum(pgsize), 0) FROM dbstat('main') WHERE name LIKE ? ESCAPE '\\'",
            (_OURS,),
        ).fetchone()
    except sqlite3.OperationalError:  # a SQLite built without dbstat
        return None
    return int(total)


def remove(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """Drop every object of ours and our ``state_meta`` keys in one transaction; the
    objects dropped (``objects`` before)."""
    found = objects(conn)
    with indexing.write_txn(conn):
        for kind, name in found:
            if kind == "trigger":
                conn.execute(f'DROP TRIGGER IF EXISTS main."{name}"')
        for index in schema.INDEXES + tuple(schema.build_name(i) for i in schema.SWAPPED):
            # FTS5 opens a table to drop it, and drops its shadow tables with it.
            schema.drop_fts_table(conn, index)
        for kind, name in objects(conn):
            if kind == "view":
                conn.execute(f'DROP VIEW IF EXISTS main."{name}"')
        for kind, name in objects(conn):
            if kind == "table":
                conn.execute(f'DROP TABLE IF EXISTS main."{name}"')
        for kind, name in objects(conn):
            if kind == "index":
                conn.execute(f'DROP INDEX IF EXISTS main."{name}"')
        if conn.execute(
            "SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = 'state_meta'"
        ).fetchone():
            conn.execute("DELETE FROM main.state_meta WHERE key LIKE ? ESCAPE '\\'", (_OURS,))
    return found
