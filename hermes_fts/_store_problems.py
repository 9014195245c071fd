"""Why a store's file cannot be used, in words a user can act on.

What a path is (missing, a folder, a pipe, not SQLite), what stops a command
from writing it (permissions, another user's side files, a read-only mount, a
full disk, a hot journal), whether its tables are Hermes' own, and what a
SQLite error met while opening or using it means.  A leaf beside ``_sqlite``,
whose plumbing it uses.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path
from typing import NamedTuple

from ._sqlite import (
    BUSY_TIMEOUT_S,
    SQLITE_FULL,
    SQLITE_NOTADB,
    SQLITE_READONLY_ROLLBACK,
    StoreError,
    connect_readonly,
    disk_full,
    effective_uid,
    readonly_uri,
    temp_dir,
)


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


def layout_problem(conn: sqlite3.Connection, path: Path, *, readonly: bool) -> FileProblem | None:
    """What makes the database ``conn`` reads no store to open, else None: a messages
    table without its content column or its keys; no Hermes tables for a read-only
    open (which adds nothing), which every search and read failed on later; and for
    a read-write open, tables of another application without Hermes' own, to which
    the open added Hermes' tables and our indexes without a word."""
    renamed = content_column_problem(conn, path)
    if renamed:
        return FileProblem(renamed)
    alien = key_columns_problem(conn, path)
    if alien:
        return FileProblem(alien, wrong_path=True)
    # Only a database without any table becomes a new store.
    holds_tables = conn.execute(
        "SELECT 1 FROM main.sqlite_master WHERE type = 'table' LIMIT 1"
    ).fetchone()
    missing = tables_problem(conn, path) if readonly or holds_tables else None
    if missing is not None:  # an empty file is named as one, not as a database without tables
        return store_file_problem(path, readonly=True, may_create=False) or missing
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
        if info.st_mode & 0o200 and info.st_uid != effective_uid():
            # Its owner may write it: another user's store, which chmod u+w cannot change.
            owner = _user_name(info.st_uid)
            return FileProblem(
                f"{path} belongs to {owner}, who may write it, and this user "
                f"({_user_name(effective_uid())}) may not; {_WRITES}: run it as {owner} "
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
        if info.st_uid != effective_uid():
            owner = _user_name(info.st_uid)
            return FileProblem(
                f"{side} belongs to {owner}, and this user ({_user_name(effective_uid())}) may "
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
        if readonly and not disk_full(path):
            # A reader writes nothing on the store's disk: SQLite's own temporary
            # files filled their folder (a sort or a read that outgrew memory).
            return FileProblem(
                f"SQLite's temporary folder {temp_dir()} is full ({exc}); the store's "
                "disk has room. Free some space there, or point SQLITE_TMPDIR at a "
                "folder with room, and try again"
            )
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


def failure_cause(exc: BaseException) -> str | None:
    """Why a store that opened fine failed while in use, in words a user can act on.

    None when ``exc`` is not a SQLite error of a known cause (a bug of ours,
    not the store's state).
    """
    if not isinstance(exc, sqlite3.Error):
        return None
    text = str(exc).lower()
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(exc, sqlite3.ProgrammingError) and "closed database" in text:
        # other words or a retry cannot help: the caller closed the store it passed
        return f"the store was closed ({exc}); open it again and pass the open store"
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
            # Which part is damaged is not known here: optimize-storage checks, rebuilds
            # an index of ours, and names the recovery where Hermes' own tables are hit.
            f"the store is damaged ({exc}); run `hermes-fts optimize-storage`: it rebuilds "
            "a damaged index of ours, or says how to recover the store if Hermes' own "
            "tables are damaged"
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
