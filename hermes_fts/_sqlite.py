"""SQLite plumbing shared by every layer: read-only URIs, row dicts, error codes, file checks.

A leaf module (it imports nothing from the package), so the loader, the store
and the tool all spell these rules the same way.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

__all__ = [
    "BUSY_TIMEOUT_S",
    "SQLITE_CORRUPT",
    "SQLITE_CORRUPT_VTAB",
    "SQLITE_FULL",
    "SQLITE_HEADER",
    "db_bytes",
    "file_kind",
    "is_index_corruption",
    "readonly_uri",
    "row_dict",
    "rows_as_dicts",
]

BUSY_TIMEOUT_S = 10.0
SQLITE_CORRUPT = 11
SQLITE_FULL = 13
SQLITE_CORRUPT_VTAB = 267  # SQLITE_CORRUPT | (1 << 8): a virtual table is damaged
SQLITE_HEADER = b"SQLite format 3\x00"


def readonly_uri(path: str | os.PathLike[str], *, immutable: bool = False) -> str:
    """A ``file:`` URI that opens ``path`` read-only (pass ``uri=True`` to connect).

    ``immutable=True`` also tells SQLite that nobody changes the file while it
    is open, so it takes no locks and needs no ``-shm`` file; only safe when no
    other process can be writing.
    """
    absolute = Path(os.path.abspath(os.fspath(path))).as_posix()
    return f"file:{quote(absolute)}?mode=ro" + ("&immutable=1" if immutable else "")


def row_dict(cursor: sqlite3.Cursor, row: Sequence[Any]) -> dict[str, Any]:
    """One fetched row as ``{column name: value}``, whatever the row factory."""
    return {d[0]: v for d, v in zip(cursor.description, row)}


def rows_as_dicts(cursor: sqlite3.Cursor) -> list[dict[str, Any]]:
    """Every remaining row of ``cursor`` as a dict."""
    return [row_dict(cursor, row) for row in cursor]


def file_kind(path: str | os.PathLike[str]) -> tuple[str, str]:
    """What ``path`` is, looking without writing or opening it as a database.

    ``(kind, detail)``; kind is one of ``missing``, ``directory``,
    ``unreadable`` (detail: the system's reason), ``empty``, ``not_sqlite``
    and ``sqlite`` (the file starts with SQLite's header).
    """
    target = Path(path)
    if not target.exists():
        return "missing", ""
    if target.is_dir():
        return "directory", ""
    try:
        with target.open("rb") as fh:
            header = fh.read(len(SQLITE_HEADER))
    except OSError as exc:
        return "unreadable", exc.strerror or str(exc)
    if not header:
        return "empty", ""
    return ("sqlite" if header == SQLITE_HEADER else "not_sqlite"), ""


def _names_an_index(text: str) -> bool:
    return ("fts5" in text and ("corrupt" in text or "malformed" in text
                                or "messages_fts" in text)) \
        or "vtable constructor failed: messages_fts" in text


def is_index_corruption(conn: sqlite3.Connection, exc: BaseException) -> bool:
    """True when a search index, not the message data, is damaged.

    An error that names FTS5 or one of our index tables, or carries the
    extended code SQLITE_CORRUPT_VTAB, is index damage.  FTS5 damage reached
    through a trigger or a join often surfaces as a bare SQLITE_CORRUPT
    ("database disk image is malformed") naming no table, and Python < 3.11
    hides the extended code; then the message tables are checked (a cost paid
    only after an error): when they are sound, the damage must be in an
    index, and failing open to LIKE loses nothing.
    """
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    text = str(exc).lower()
    if code == SQLITE_CORRUPT_VTAB or _names_an_index(text):
        return True
    primary = None if code is None else code & 0xFF
    if primary is None:
        if "malformed" not in text and "corrupt" not in text:
            return False
    elif primary != SQLITE_CORRUPT:
        return False
    try:
        return all(
            conn.execute(f"PRAGMA quick_check({table})").fetchone()[0] == "ok"
            for table in ("messages", "sessions")
        )
    except sqlite3.DatabaseError:
        return False


def db_bytes(conn: sqlite3.Connection) -> int:
    """The database's size as SQLite sees it: every page, WAL pages included.

    Pages committed to the ``-wal`` file but not yet checkpointed count, so
    right after a VACUUM this is the compacted size even while the main file
    on disk still has its old length.
    """
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    return int(pages * size)
