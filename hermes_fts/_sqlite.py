"""SQLite plumbing shared by every layer: read-only URIs, row dicts, error codes, file checks.

A leaf module (it imports nothing from the package), so the loader, the store
and the tool all spell these rules the same way.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any
from urllib.parse import quote

__all__ = [
    "BUSY_TIMEOUT_S",
    "SHORT_WAIT_S",
    "busy_timeout",
    "cannot_write_now",
    "connect_readonly",
    "disk_full",
    "effective_uid",
    "SQLITE_CORRUPT",
    "SQLITE_CORRUPT_VTAB",
    "SQLITE_FULL",
    "StoreError",
    "db_bytes",
    "file_bytes",
    "shrink_wal",
    "is_corruption",
    "is_index_corruption",
    "nobody_writing",
    "readonly_uri",
    "row_dict",
    "sqlite_sort_key",
    "temp_dir",
    "rows_as_dicts",
]

logger = logging.getLogger("hermes_fts.sqlite")

BUSY_TIMEOUT_S = 10.0
# How long work nobody asked for (applying the pending table before a search)
# waits for another process' write lock: longer than an agent's write, far
# shorter than a user would wait.  Skipped work costs no result (§5.3).
SHORT_WAIT_S = 0.2
SQLITE_CORRUPT = 11
SQLITE_NOTADB = 26
SQLITE_FULL = 13
SQLITE_NOTADB = 26
SQLITE_INTERRUPT = 9  # Connection.interrupt() stopped the statement
SQLITE_IOERR_SHMSIZE = 4874  # the -shm file could not be grown (a full disk)
SQLITE_READONLY_ROLLBACK = 776  # a hot journal a read-only connection cannot roll back
SHM_BYTES = 32768  # the first -shm region every WAL connection needs
# Primary result codes of a store that is sound but cannot take a write now:
# BUSY, LOCKED, READONLY, IOERR, FULL, CANTOPEN.
_CANNOT_WRITE_CODES = frozenset({5, 6, 8, 10, 13, 14})
_CANNOT_WRITE_WORDS = (
    "locked",
    "busy",
    "readonly",
    "read-only",
    "disk is full",
    "disk i/o error",
    "unable to open",
)
SQLITE_CORRUPT_VTAB = 267  # SQLITE_CORRUPT | (1 << 8): a virtual table is damaged


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
    # The name's own bytes: a name that is not UTF-8 (caf\xe9.db) is not text to quote.
    return f"file:{quote(os.fsencode(absolute))}?mode=ro" + ("&immutable=1" if immutable else "")


def nobody_writing(path: str | os.PathLike[str]) -> bool:
    """Whether a read-only open of ``path`` may be immutable: nobody can be writing it.

    True when this user cannot write the folder and there is no ``-wal`` or
    ``-journal`` file: SQLite could not create the ``-shm`` it needs, and any
    writer, whoever it is, would have left one of those next to the file.  An
    empty ``-wal`` with no ``-shm`` (left by a crash or a copy) counts as none:
    every connection in WAL mode keeps the ``-shm``, and the WAL holds nothing.
    """
    target = os.path.abspath(os.fspath(path))
    folder = os.path.dirname(target) or "."
    wal_idle = not os.path.exists(target + "-wal") or (
        _wal_empty(target) and not os.path.exists(target + "-shm")
    )
    return (
        os.path.isfile(target)
        and not os.access(folder, os.W_OK)
        and wal_idle
        and not os.path.exists(target + "-journal")
        and _wal_mode(target)  # a rollback-journal store is read with locks, no -shm
    )


def temp_dir() -> str:
    """The folder SQLite writes its temporary files to (VACUUM's copy, a sort that
    outgrows memory), found as its unix VFS finds it: the first writable folder of
    SQLITE_TMPDIR, TMPDIR, /var/tmp, /usr/tmp, /tmp and the current one.  Python's
    ``tempfile`` reads no SQLITE_TMPDIR and tries /tmp before /var/tmp, so on a system
    with /tmp in memory it named the wrong disk."""
    if os.name != "posix":
        return tempfile.gettempdir()
    names = (os.environ.get("SQLITE_TMPDIR"), os.environ.get("TMPDIR"))
    for folder in (*names, "/var/tmp", "/usr/tmp", "/tmp", "."):
        if folder and os.path.isdir(folder) and os.access(folder, os.W_OK | os.X_OK):
            return folder
    return "."


def disk_full(path: str | os.PathLike[str]) -> bool:
    """Whether the file system holding ``path`` has no room for even a -shm file."""
    import shutil  # only where an open failed

    folder = os.path.dirname(os.path.abspath(os.fspath(path))) or "."
    try:
        return shutil.disk_usage(folder).free < 2 * SHM_BYTES
    except OSError:
        return False


def _wal_mode(path: str) -> bool:
    """Whether the store is in WAL mode: only then does reading need a -shm.  Immutable,
    a rollback-journal store Hermes writes in place was read torn and stale.  Asked
    of SQLite, never read with ``open()`` (``_sqlite_header``); an open that fails
    for want of the -shm is a WAL store."""
    try:
        conn = sqlite3.connect(readonly_uri(path), uri=True, timeout=0)
    except sqlite3.Error:
        return True
    try:
        return bool(conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal")
    except sqlite3.Error:
        return True
    finally:
        conn.close()


def _wal_empty(path: str) -> bool:
    try:
        return os.stat(path + "-wal").st_size == 0
    except FileNotFoundError:
        return True
    except OSError:
        return False


def _shm_failed(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return bool(code == SQLITE_IOERR_SHMSIZE)
    return "disk i/o error" in str(exc).lower()  # Python < 3.11 hides the code


def connect_readonly(path: str | os.PathLike[str], **kwargs: Any) -> sqlite3.Connection:
    """A read-only connection to ``path``, which writes nothing, even on a full disk.

    Immutable when nobody can be writing (``nobody_writing``).  On a full
    disk SQLite cannot create the 32 KB ``-shm`` file every WAL connection
    needs, so no process can use the store in WAL mode; with no ``-wal``
    content to read either, the file alone is the whole store, and it is
    opened immutable.  A full disk with a ``-wal`` that holds changes raises.
    """
    # SQLite keeps the side files next to the file a symlink names: look there.
    target = os.path.realpath(os.fspath(path))
    conn = sqlite3.connect(
        readonly_uri(target, immutable=nobody_writing(target)), uri=True, **kwargs
    )
    try:
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()  # opens the WAL index
    except sqlite3.Error as exc:
        conn.close()
        if not (
            isinstance(exc, sqlite3.OperationalError)
            and _shm_failed(exc)
            and disk_full(target)
            and _wal_empty(target)
        ):
            raise
        logger.info("%s: disk full, no -wal content: reading the file immutable", target)
        conn = sqlite3.connect(readonly_uri(target, immutable=True), uri=True, **kwargs)
    share_side_files(target)
    return conn


def effective_uid() -> int:
    return os.geteuid() if hasattr(os, "geteuid") else -1  # no user ids on Windows


def share_side_files(path: str | os.PathLike[str]) -> None:
    """Let whoever may write the store write its ``-shm`` and ``-wal`` too.

    SQLite makes them with the database file's mode, so a reader of a 0444
    file (root included) leaves a 0444 ``-shm`` that every later writer,
    Hermes included, fails on ("attempt to write a readonly database") once
    the file is writable again.  Only bits are added: the owner's write bit
    when the side file is the database owner's, and the database's group
    write bit when it shares the group (taken where this user may); to one
    another user's reader made, the folder's (the owner could not write it,
    and whoever they let write could replace it anyway)."""
    target = os.fspath(path)
    try:
        db = os.stat(target)
        folder = os.stat(os.path.dirname(os.path.abspath(target)))
    except OSError:
        return
    for side in (target + "-shm", target + "-wal"):
        try:
            st = os.stat(side)
            if effective_uid() not in (0, st.st_uid):
                continue  # another user's file: not ours to change
            if st.st_gid != db.st_gid and st.st_uid == effective_uid():
                with suppress(OSError):  # fails unless this user is in that group
                    os.chown(side, -1, db.st_gid)
                    st = os.stat(side)
            wanted = st.st_mode & 0o777
            if st.st_uid == db.st_uid:
                wanted |= 0o200
            if st.st_gid == db.st_gid:
                wanted |= db.st_mode & 0o020
            if st.st_uid != db.st_uid:
                wanted |= folder.st_mode & 0o022
            if wanted != st.st_mode & 0o777:
                os.chmod(side, wanted)
        except OSError as exc:
            logger.debug("%s: left as it is (%s)", side, exc)


@contextmanager
def busy_timeout(conn: sqlite3.Connection, seconds: float) -> Iterator[None]:
    """Wait at most ``seconds`` for another process' lock inside the block, then as before."""
    before = int(conn.execute("PRAGMA busy_timeout").fetchone()[0])
    conn.execute(f"PRAGMA busy_timeout = {int(seconds * 1000)}")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA busy_timeout = {before}")


def cannot_write_now(exc: BaseException) -> bool:
    """True for a write refused by the circumstances, not by the data: locked, read-only, full."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in _CANNOT_WRITE_CODES
    text = str(exc).lower()
    return any(word in text for word in _CANNOT_WRITE_WORDS)


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


def _names_an_index(text: str) -> bool:
    return (
        ("fts5" in text and ("corrupt" in text or "malformed" in text or "hermes_fts_" in text))
        or "vtable constructor failed: hermes_fts_" in text
        # Its version row gone from %_config (edited by hand): FTS5 names no table.
        or "invalid fts5 file format" in text
    )


def is_corruption(exc: BaseException) -> bool:
    """Whether ``exc`` says the file is damaged (SQLITE_CORRUPT or SQLITE_NOTADB,
    by code or, on Pythons that hide it, by message), wherever the damage is."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (SQLITE_CORRUPT, SQLITE_NOTADB)
    text = str(exc).lower()
    return "malformed" in text or "corrupt" in text or "not a database" in text


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


WAL_TRUNCATE_WAIT_S = 0.2  # how long truncating the WAL after a VACUUM waits for readers


def shrink_wal(conn: sqlite3.Connection) -> None:
    """Checkpoint a VACUUM's pages and truncate the WAL, waiting only briefly for readers.

    VACUUM in WAL mode writes the whole database into the ``-wal`` file;
    until it is truncated the disk holds the store twice.  A busy reader
    only leaves the WAL for a later checkpoint; it never stalls this one.
    """
    try:
        busy, _log, _done = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        if not busy:
            with busy_timeout(conn, WAL_TRUNCATE_WAIT_S):
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    except sqlite3.DatabaseError as exc:
        logger.debug("checkpoint after VACUUM skipped: %s", exc)


def interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite's answer to ``Connection.interrupt()``."""
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(exc, sqlite3.OperationalError) and (
        code == SQLITE_INTERRUPT if code is not None else str(exc) == "interrupted"
    )


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


@contextmanager
def write_txn(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE … COMMIT; rolls back on any exception, Ctrl-C included."""
    # IMMEDIATE takes the write lock up front: a deferred transaction that
    # upgrades later gets SQLITE_BUSY_SNAPSHOT in WAL mode, which the busy
    # handler cannot wait out.
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        # SQLite already rolled back by itself after some errors (corruption,
        # out of disk); a second ROLLBACK would mask the real exception.
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
