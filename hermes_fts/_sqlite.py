"""SQLite plumbing shared by every layer: read-only URIs, row dicts, error codes, file checks.

A leaf module (it imports nothing from the package), so the loader, the store
and the tool all spell these rules the same way.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import quote

__all__ = [
    "BUSY_TIMEOUT_S",
    "SQLITE_CORRUPT",
    "SQLITE_CORRUPT_VTAB",
    "SQLITE_FULL",
    "StoreError",
    "SQLITE_HEADER",
    "db_bytes",
    "file_bytes",
    "shrink_wal",
    "file_kind",
    "FileProblem",
    "is_index_corruption",
    "open_problem",
    "nobody_writing",
    "readonly_uri",
    "row_dict",
    "sqlite_sort_key",
    "rows_as_dicts",
    "store_file_problem",
]

logger = logging.getLogger("hermes_fts.sqlite")

BUSY_TIMEOUT_S = 10.0
SQLITE_CORRUPT = 11
SQLITE_FULL = 13
SQLITE_CORRUPT_VTAB = 267  # SQLITE_CORRUPT | (1 << 8): a virtual table is damaged
SQLITE_HEADER = b"SQLite format 3\x00"


class StoreError(Exception):
    """A session store that cannot be opened; the message says what happened and what to do.

    ``wrong_path`` is True when the path itself is the problem (nothing there,
    a folder, not SQLite, another application's database), so a caller may
    suggest another path; it is False for a sound store that cannot be used
    right now (read-only, locked, disk full).
    """

    def __init__(self, message: str, *, wrong_path: bool = False) -> None:
        super().__init__(message)
        self.wrong_path = wrong_path


def readonly_uri(path: str | os.PathLike[str], *, immutable: bool = False) -> str:
    """A ``file:`` URI that opens ``path`` read-only (pass ``uri=True`` to connect).

    ``immutable=True`` also tells SQLite that nobody changes the file while it
    is open, so it takes no locks and needs no ``-shm`` file; only safe when no
    other process can be writing.
    """
    absolute = Path(os.path.abspath(os.fspath(path))).as_posix()
    return f"file:{quote(absolute)}?mode=ro" + ("&immutable=1" if immutable else "")


def nobody_writing(path: str | os.PathLike[str]) -> bool:
    """Whether a read-only open of ``path`` may be immutable: nobody can be writing it.

    True when this user cannot write the folder and there is no ``-wal`` or
    ``-journal`` file: SQLite could not create the ``-shm`` it needs, and any
    writer, whoever it is, would have left one of those next to the file.
    """
    target = os.path.abspath(os.fspath(path))
    folder = os.path.dirname(target) or "."
    return (os.path.isfile(target) and not os.access(folder, os.W_OK)
            and not os.path.exists(target + "-wal")
            and not os.path.exists(target + "-journal"))


def row_dict(cursor: sqlite3.Cursor, row: Sequence[Any]) -> dict[str, Any]:
    """One fetched row as ``{column name: value}``, whatever the row factory."""
    return {d[0]: v for d, v in zip(cursor.description, row)}


def rows_as_dicts(cursor: sqlite3.Cursor) -> list[dict[str, Any]]:
    """Every remaining row of ``cursor`` as a dict."""
    rows = cursor.fetchall()
    if not rows:
        return []
    names = [d[0] for d in cursor.description]  # read once, not per row
    return [dict(zip(names, row)) for row in rows]


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


def file_bytes(path: str | os.PathLike[str]) -> int:
    """What the store takes on disk: the main file plus its ``-wal`` file.

    Unlike ``db_bytes`` this counts a WAL that has been checkpointed but not
    yet truncated, so a before/after pair measured this way shows what the
    disk really gained or lost.
    """
    total = 0
    for name in (os.fspath(path), os.fspath(path) + "-wal"):
        try:
            total += os.stat(name).st_size
        except OSError:
            pass  # no WAL (or no file yet) takes no space
    return total


WAL_TRUNCATE_WAIT_MS = 200  # how long truncating the WAL after a VACUUM waits for readers


def shrink_wal(conn: sqlite3.Connection) -> None:
    """Checkpoint a VACUUM's pages and truncate the WAL, waiting only briefly for readers.

    VACUUM in WAL mode writes the whole database into the ``-wal`` file;
    until it is truncated the disk holds the store twice.  A busy reader
    only leaves the WAL for a later checkpoint; it never stalls this one.
    """
    try:
        busy, _log, _done = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        if not busy:
            conn.execute(f"PRAGMA busy_timeout = {WAL_TRUNCATE_WAIT_MS}")
            try:
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            finally:
                conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
    except sqlite3.DatabaseError as exc:
        logger.debug("checkpoint after VACUUM skipped: %s", exc)


# --------------------------------------------------------------------------
# Why a session store file cannot be used


class FileProblem(NamedTuple):
    """Why a store file cannot be used; ``wrong_path`` when the path itself is the problem."""

    message: str
    wrong_path: bool = False


def store_file_problem(path: Path, *, readonly: bool, may_create: bool) -> FileProblem | None:
    """Why ``path`` is not a usable Hermes session store, looking without writing; None if it is.

    Nothing there, a folder, an empty file, a file that is not SQLite and a
    SQLite file without the ``sessions``/``messages`` tables are wrong paths
    (``may_create`` accepts a missing or empty file).  For a read-write open,
    a file without write permission is named as such.
    """
    kind, detail = file_kind(path)
    if kind in ("missing", "empty") and may_create:
        return None
    wrong = {
        "missing": f"no session store at {path}",
        "directory": f"{path} is a directory, not a session store",
        "empty": f"{path} is empty, not a session store",
        "not_sqlite": f"{path} is not a SQLite database",
    }
    if kind in wrong:
        return FileProblem(wrong[kind], wrong_path=True)
    if kind == "unreadable":
        return FileProblem(f"cannot read {path} ({detail})")
    try:
        conn = sqlite3.connect(readonly_uri(path, immutable=nobody_writing(path)), uri=True)
        try:
            names = {row[0] for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'"
                " AND name IN ('sessions', 'messages')")}
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return open_problem(path, True, exc)
    if names != {"sessions", "messages"}:
        return FileProblem(f"{path} is a SQLite database but not a Hermes session store "
                           "(no sessions and messages tables)", wrong_path=True)
    if not readonly and not os.access(path, os.W_OK):
        return FileProblem(f"{path} is a read-only file; make it writable or open the "
                           "store read-only")
    return None


def open_problem(path: Path, readonly: bool, exc: BaseException) -> FileProblem:
    """What went wrong when SQLite could not open ``path``, in words a user can act on."""
    text = str(exc).lower()
    refused = "readonly" in text or "read-only" in text or "unable to open" in text
    if not readonly and path.exists() and not os.access(path, os.W_OK):
        return FileProblem(f"{path} is a read-only file ({exc}); make it writable or open "
                           "the store read-only")
    if (not readonly or refused) and not os.access(path.parent, os.W_OK):
        return FileProblem(
            f"the folder {path.parent} is read-only, and SQLite must create its -wal and "
            f"-shm files next to {path.name} ({exc}); make the folder writable"
            + ("" if readonly else " or open the store read-only"))
    if "locked" in text or "busy" in text:
        return FileProblem(f"{path} is locked by another process ({exc}); wait for it to "
                           "finish and try again")
    if "disk is full" in text or getattr(exc, "sqlite_errorcode", None) == SQLITE_FULL:
        return FileProblem(f"the disk holding {path} is full ({exc}); free some space and "
                           "try again")
    if refused:
        return FileProblem(f"{path} cannot be written ({exc}); make it and its folder "
                           "writable or open the store read-only")
    if "not a database" in text or "malformed" in text:
        return FileProblem(f"cannot read {path} as SQLite ({exc})", wrong_path=True)
    return FileProblem(f"cannot open {path} ({exc})")


def sqlite_sort_key(value: Any) -> tuple[int, Any]:
    """SQLite's ORDER BY across types: NULL, then numbers, then text, then blobs.

    A timestamp written as text by another program must sort where SQLite
    sorts it, not make the merge fail.
    """
    if value is None:
        return (0, 0)
    if isinstance(value, (int, float)):
        return (1, value)
    return (2, value) if isinstance(value, str) else (3, bytes(value))
