"""SQLite plumbing shared by every layer: read-only URIs, row dicts, error codes, file checks.

A leaf module (it imports nothing from the package), so the loader, the store
and the tool all spell these rules the same way.
"""

from __future__ import annotations

import errno
import logging
import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import quote

__all__ = [
    "BUSY_TIMEOUT_S",
    "SHORT_WAIT_S",
    "busy_timeout",
    "cannot_write_now",
    "connect_readonly",
    "disk_full",
    "failure_cause",
    "store_error",
    "SQLITE_CORRUPT",
    "SQLITE_CORRUPT_VTAB",
    "SQLITE_FULL",
    "StoreError",
    "db_bytes",
    "file_bytes",
    "shrink_wal",
    "file_kind",
    "FileProblem",
    "is_corruption",
    "is_index_corruption",
    "open_problem",
    "nobody_writing",
    "readonly_uri",
    "read_only_mount",
    "row_dict",
    "sqlite_sort_key",
    "rows_as_dicts",
    "prepare_store_path",
    "store_file_problem",
    "tables_problem",
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
            if _euid() not in (0, st.st_uid):
                continue  # another user's file: not ours to change
            if st.st_gid != db.st_gid and st.st_uid == _euid():
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


def file_kind(path: str | os.PathLike[str]) -> tuple[str, str]:
    """What ``path`` is, looking without writing it.

    ``(kind, detail)``; kind is one of ``missing``, ``directory``,
    ``special`` (detail: a pipe, a device or a socket), ``unreadable``
    (detail: the system's reason), ``empty``, ``not_sqlite`` and ``sqlite``
    (SQLite reads it as a database, ``_sqlite_header``).
    """
    target = Path(path)
    try:
        if not target.exists():
            return "missing", ""
        if target.is_dir():
            return "directory", ""
        st = target.stat()
        special = _special_kind(st.st_mode)
        if special:  # opening a pipe no one writes waits forever; reading one consumes it
            return "special", special
        if not os.access(target, os.R_OK):
            return "unreadable", os.strerror(errno.EACCES)
    except OSError as exc:
        return "unreadable", exc.strerror or str(exc)
    if st.st_size == 0:
        return "empty", ""
    return ("sqlite" if _sqlite_header(target) else "not_sqlite"), ""


def _sqlite_header(target: Path) -> bool:
    """Whether SQLite reads ``target`` as a database, asked of SQLite itself.

    Never read with Python's ``open()``: closing that file drops every POSIX lock
    this process holds on the store, Hermes' own connection's included, so another
    Hermes process could delete the WAL under it and the messages saved meanwhile
    were lost (sqlite.org/howtocorrupt.html §2.2).  SQLite keeps its descriptor
    open while the process holds locks.
    """
    try:
        conn = sqlite3.connect(readonly_uri(target), uri=True, timeout=0)
    except sqlite3.Error:
        return True  # the open that follows names what is wrong
    try:
        conn.execute("PRAGMA schema_version").fetchone()
    except sqlite3.DatabaseError as exc:
        code = getattr(exc, "sqlite_errorcode", None)
        return (code != SQLITE_NOTADB) if code is not None else "not a database" not in str(exc)
    finally:
        conn.close()
    return True


def _special_kind(mode: int) -> str:
    """What a file that is not a regular file is, in words; '' for a regular file."""
    import stat

    if stat.S_ISREG(mode):
        return ""
    if stat.S_ISFIFO(mode):
        return "a pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device"


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


# --------------------------------------------------------------------------
# Why a session store file cannot be used


class FileProblem(NamedTuple):
    """Why a store file cannot be used; ``wrong_path`` when the path itself is the problem."""

    message: str
    wrong_path: bool = False


def prepare_store_path(path: Path, *, default: bool, readonly: bool) -> None:
    """Refuse what cannot become a store before SQLite tries (FileNotFoundError or
    StoreError); a store opened for writing gets its folder."""
    if default and not path.exists():
        # Only a path someone wrote may become a new store: a wrong HERMES_HOME
        # must not leave an empty store where Hermes keeps its history.
        inside_file = f", and {path.parent} is a file" if os.path.isfile(path.parent) else ""
        raise FileNotFoundError(
            f"no session store at {path} ($HERMES_HOME/state.db{inside_file}); set "
            "HERMES_HOME to the folder holding state.db, or pass a path "
            f"(SessionStore('{path}') creates a new store there)"
        )
    if path.is_dir():  # SQLite would only say "disk I/O error"
        raise StoreError(f"{path} is a directory, not a session store", wrong_path=True)
    if not readonly:
        path.parent.mkdir(parents=True, exist_ok=True)
    elif not path.exists():
        raise FileNotFoundError(f"no session store at {path}")


def store_file_problem(
    path: Path, *, readonly: bool, may_create: bool, tables: bool = True
) -> FileProblem | None:
    """Why ``path`` is not a usable Hermes session store, looking without writing; None if it is.

    Nothing there, a folder, an empty file, a file that is not SQLite and a
    SQLite file without the ``sessions``/``messages`` tables are wrong paths
    (``may_create`` accepts a missing or empty file).  For a read-write open,
    a file or folder this user cannot write is named as such: the check runs
    before anything is written.  ``tables=False`` leaves the tables to the
    caller's own connection (``tables_problem``), which saves opening one here.
    """
    kind, detail = file_kind(path)
    if kind in ("missing", "empty") and may_create:
        return None if readonly else _write_problem(path)
    # HERMES_HOME naming state.db itself, not its folder: say which is the file.
    inside_file = f" ({path.parent} is a file, not a folder)" if os.path.isfile(path.parent) else ""
    wrong = {
        "missing": f"no session store at {path}{inside_file}",
        "directory": f"{path} is a directory, not a session store",
        "empty": f"{path} is empty, not a session store",
        "not_sqlite": f"{path} is not a SQLite database",
        # `--db <(ssh host cat state.db)`: SQLite needs a file it can read at any offset.
        "special": f"{path} is {detail}, not a file (SQLite reads a store only from a file)",
    }
    if kind in wrong:
        return FileProblem(wrong[kind], wrong_path=True)
    if kind == "unreadable":
        return FileProblem(
            f"{path} cannot be read by this user ({detail}); give this user "
            "read permission on it and the folders above it, or run as the "
            "store's owner"
        )
    if tables:
        try:
            # A writer's preflight waits for a lock as its own open would; a look
            # after a reader's open (``readonly``), which has waited, names it at once.
            conn = connect_readonly(path, timeout=0 if readonly else BUSY_TIMEOUT_S)
            try:
                problem = tables_problem(conn, path)
            finally:
                conn.close()
        except sqlite3.Error as exc:
            return open_problem(path, True, exc)
        if problem is not None:
            return problem
    return None if readonly else _write_problem(path)


def content_column_problem(conn: sqlite3.Connection, path: Path) -> str | None:
    """What is wrong when ``messages`` exists without its ``content`` column (renamed or
    dropped by hand), else None.  Every Hermes layout has it: read as a missing
    optional column (NULL), every message would show no text and match nothing."""
    columns = {row[1] for row in conn.execute("PRAGMA main.table_info(messages)")}
    if not columns or "content" in columns:
        return None
    return (
        f"{path}: the messages table has no content column (renamed or dropped by hand?), "
        "so no message can be read or searched; give it back its name "
        "(ALTER TABLE messages RENAME COLUMN <its name> TO content) or restore a backup"
    )


def key_columns_problem(conn: sqlite3.Connection, path: Path) -> str | None:
    """What is wrong when ``messages`` or ``sessions`` exists without the keys every
    Hermes layout has, else None: a message is found by its integer ``id`` (the
    indexes' rowid) and belongs to a session by ``session_id``; added as empty
    columns, every search and read would fail on them."""
    wrong: list[str] = []
    messages = list(conn.execute("PRAGMA main.table_info(messages)"))
    if messages:
        keys = [row for row in messages if row[5]]  # pk: the primary key's columns
        if [(row[1], str(row[2]).upper()) for row in keys] != [("id", "INTEGER")]:
            wrong.append("messages.id is not its INTEGER PRIMARY KEY")
        if "session_id" not in {row[1] for row in messages}:
            wrong.append("messages has no session_id column")
    sessions = {row[1] for row in conn.execute("PRAGMA main.table_info(sessions)")}
    if sessions and "id" not in sessions:
        wrong.append("sessions has no id column")
    if not wrong:
        return None
    return (
        f"{path} is not in a layout of Hermes Agent's session store ({'; '.join(wrong)}), "
        "so its messages cannot be searched or read"
    )


def tables_problem(conn: sqlite3.Connection, path: Path) -> FileProblem | None:
    """A wrong path when the database ``conn`` reads lacks Hermes' ``sessions`` or
    ``messages`` table; None when it has both."""
    names = {
        row[0]
        for row in conn.execute(
            "SELECT name FROM main.sqlite_master WHERE type = 'table'"
            " AND name IN ('sessions', 'messages')"
        )
    }
    if names != {"sessions", "messages"}:
        return FileProblem(
            f"{path} is a SQLite database but not a Hermes session store "
            "(no sessions and messages tables)",
            wrong_path=True,
        )
    return None


_WRITES = "this command writes to the store"


def _write_problem(path: Path) -> FileProblem | None:
    """Why this user cannot write ``path`` (or create it), looking only; None if it can."""
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent  # a missing folder is created in the nearest existing one
    if read_only_mount(folder):  # no chmod or user can write there
        return FileProblem(
            f"{path} is on a file system mounted read-only and {_WRITES}; remount it "
            "read-write, or copy the store to a disk that can be written"
        )
    if path.exists() and not os.access(path, os.W_OK):
        info = path.stat()
        if info.st_mode & 0o200 and info.st_uid != _euid():
            # Its owner may write it: another user's store, which chmod u+w cannot change.
            owner = _user_name(info.st_uid)
            return FileProblem(
                f"{path} belongs to {owner}, who may write it, and this user "
                f"({_user_name(_euid())}) may not; {_WRITES}: run it as {owner} "
                "(the user Hermes Agent runs as), or have them give this user write "
                "permission on the file and its folder"
            )
        return FileProblem(
            f"{path} is a read-only file and {_WRITES}; make it writable "
            f"(chmod u+w as its owner) or run as a user who may write it"
        )
    if not os.access(folder, os.W_OK):
        return FileProblem(
            f"the folder {folder} is read-only for this user and {_WRITES}: "
            f"SQLite creates its -wal and -shm files next to {path.name}; "
            "make the folder writable"
        )
    return _side_file_problem(path)


def _side_file_problem(path: Path) -> FileProblem | None:
    """Why this user cannot write the ``-wal`` or ``-shm`` beside ``path``, else None:
    SQLite opens such a file read-only, and every write fails as a "readonly
    database" whatever the store's mode (``share_side_files`` helps only its owner)."""
    for side in (Path(f"{path}-wal"), Path(f"{path}-shm")):
        try:
            info = side.stat()
        except OSError:
            continue  # none: SQLite makes it, in a folder checked writable
        if os.access(side, os.W_OK):
            continue
        if info.st_uid != _euid():
            owner = _user_name(info.st_uid)
            return FileProblem(
                f"{side} belongs to {owner}, and this user ({_user_name(_euid())}) may "
                f"not write it; SQLite writes it with every change to {path.name}, and "
                f"{_WRITES}: run it as {owner}, or have them give this user write "
                "permission on it"
            )
        return FileProblem(
            f"{side} is read-only, and SQLite writes it with every change to {path.name}; "
            f"{_WRITES}: make it writable (chmod u+w {side})"
        )
    return None


def read_only_mount(folder: Path) -> bool:
    """Whether ``folder`` is on a file system mounted read-only."""
    statvfs = getattr(os, "statvfs", None)  # none on Windows
    try:
        return statvfs is not None and bool(statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _euid() -> int:
    return os.geteuid() if hasattr(os, "geteuid") else -1  # no user ids on Windows


def _user_name(uid: int) -> str:
    """The login name of ``uid``, else the id as a number."""
    try:
        import pwd  # POSIX only

        return pwd.getpwuid(uid).pw_name
    except (ImportError, KeyError):
        return f"user {uid}"


def open_problem(path: Path, readonly: bool, exc: BaseException) -> FileProblem:
    """What went wrong when SQLite could not open or use ``path``, in words a user can act on.

    ``readonly`` says whether only reading was attempted.  Only a file that
    is not SQLite at all is reported as a wrong path.
    """
    text = str(exc).lower()
    code = getattr(exc, "sqlite_errorcode", None)
    refused = "readonly" in text or "read-only" in text or "unable to open" in text
    if not readonly:
        problem = _write_problem(path)
        if problem is not None:
            return FileProblem(f"{problem.message} ({exc})")
    if readonly and refused and _hot_journal(path, code):
        return FileProblem(
            f"{path.name}-journal next to {path} holds a write a process left unfinished "
            f"when it stopped ({exc}); a read-only command cannot roll it back: run "
            "`hermes-fts sync` once, as a user who may write the store, then try again"
        )
    if readonly and refused and read_only_mount(path.parent):  # no writer, no chmod there
        return FileProblem(
            f"{path} is on a file system mounted read-only, and the changes in the "
            f"{path.name}-wal file next to it can only be read with a -shm file, which "
            f"cannot be made there ({exc}); remount it read-write, or copy the store "
            "and its -wal file to a disk that can be written and read the copy"
        )
    if readonly and refused and not os.access(path.parent, os.W_OK):
        return FileProblem(
            f"the folder {path.parent} is read-only for this user and a {path.name}-wal file "
            f"next to the store shows it may be being written: reading it safely needs a "
            f"-shm file there ({exc}); make the folder writable, or read a copy of the "
            "store and its -wal file"
        )
    if "locked" in text or "busy" in text:
        return FileProblem(
            f"{path} is locked by another process ({exc}); wait for it to "
            "finish (Hermes Agent or another hermes-fts command) and try again"
        )
    if (
        "disk is full" in text
        or (code is not None and code & 0xFF == SQLITE_FULL)
        or (("disk i/o error" in text or refused) and disk_full(path))
    ):
        return FileProblem(
            f"the disk holding {path} is full ({exc}); free some space and try again"
        )
    if refused:
        return FileProblem(
            f"{path} cannot be written ({exc}); make it and its folder writable for this user"
        )
    if "not a database" in text:
        return FileProblem(f"{path} is not a SQLite database ({exc})", wrong_path=True)
    if "malformed" in text or "corrupt" in text:
        return FileProblem(
            f"{path} is damaged ({exc}); restore it from a backup, or "
            f"recover what is left with `sqlite3 {path} .recover`"
        )
    return FileProblem(f"cannot use {path} ({exc})")


def _hot_journal(path: Path, code: int | None) -> bool:
    """Whether a read-only open was refused for a rollback journal a crashed writer
    left (SQLite's own code from Python 3.11, else a non-empty ``-journal``)."""
    if code is not None:
        return code == SQLITE_READONLY_ROLLBACK
    try:
        return os.path.getsize(f"{path}-journal") > 0
    except OSError:
        return False


def interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite's answer to ``Connection.interrupt()``."""
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(exc, sqlite3.OperationalError) and (
        code == SQLITE_INTERRUPT if code is not None else str(exc) == "interrupted"
    )


def failure_cause(exc: BaseException) -> str | None:
    """Why a store that opened fine failed while in use, in words a user can act on.

    None when ``exc`` is not a SQLite error of a known cause (a bug of ours,
    not the store's state).
    """
    if not isinstance(exc, sqlite3.Error):
        return None
    text = str(exc).lower()
    code = getattr(exc, "sqlite_errorcode", None)
    if "locked" in text or "busy" in text:
        return (
            f"the store is locked by another process ({exc}); wait for it to finish "
            "(Hermes Agent or another hermes-fts command) and try again"
        )
    if "disk is full" in text or (code is not None and code & 0xFF == SQLITE_FULL):
        return f"the disk holding the store is full ({exc}); free some space and try again"
    if "readonly" in text or "read-only" in text:
        return (
            f"the store cannot be written by this user ({exc}); make it and its folder "
            "writable, or read it with a read-only command"
        )
    if "malformed" in text or "corrupt" in text or "not a database" in text:
        return (
            f"the store is damaged ({exc}); run `hermes-fts optimize-storage` to rebuild "
            "its indexes, or restore it from a backup"
        )
    return None


def store_error(
    path: str | os.PathLike[str], exc: BaseException, *, readonly: bool | None = None
) -> StoreError:
    """``exc``, raised while opening or using the store at ``path``, as a StoreError.

    ``readonly`` None: whether only reading was attempted is read from the
    error (SQLite names a refused write).
    """
    if readonly is None:
        text = str(exc).lower()
        readonly = not ("readonly" in text or "read-only" in text or "disk is full" in text)
    problem = open_problem(Path(path), readonly, exc)
    return StoreError(problem.message, wrong_path=problem.wrong_path)


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
