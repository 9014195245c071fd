"""SessionStore: open a Hermes-compatible ``state.db``, align its indexes, write rows.

Opening as a writer aligns the schema (adds only what is missing), decides per
index whether it can be served, and applies pending CJK changes written by
processes without the extension.  Opening read-only does none of that and never
writes a byte; it only reports what the file already holds.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Callable

from . import _env, _sqlite, indexing, loader, schema, transcript
from .content import encode_value
from .schema import BASE, CJK, TRIGRAM

logger = logging.getLogger("hermes_fts.store")

_MESSAGE_FIELDS = (
    "session_id", "role", "content", "tool_call_id", "tool_calls", "tool_name", "timestamp",
    "reasoning", "reasoning_content", "reasoning_details", "active", "compacted", "display_kind",
)
_UPDATABLE_FIELDS = frozenset(_MESSAGE_FIELDS) - {"session_id"}
_SESSION_FIELDS = tuple(name for name, _decl in schema.SESSIONS_COLUMNS)


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


def default_db_path() -> Path:
    return _env.hermes_home() / "state.db"


def _check_store_file(path: Path, create: bool) -> bool:
    """Refuse anything but an existing Hermes store, looking without writing.

    Returns True when ``path`` is missing or empty and ``create`` allows making a store there.
    """
    kind, detail = _sqlite.file_kind(path)
    if kind in ("missing", "empty") and create:
        return True
    if kind == "missing":
        raise StoreError(f"no session store at {path}", wrong_path=True)
    if kind == "directory":
        raise StoreError(f"{path} is a directory, not a session store", wrong_path=True)
    if kind == "unreadable":
        raise StoreError(f"cannot read {path} ({detail})")
    if kind == "empty":
        raise StoreError(f"{path} is empty, not a session store", wrong_path=True)
    if kind == "not_sqlite":
        raise StoreError(f"{path} is not a SQLite database", wrong_path=True)
    try:
        conn = sqlite3.connect(_sqlite.readonly_uri(path), uri=True)
        try:
            names = {row[0] for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'"
                " AND name IN ('sessions', 'messages')")}
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise _open_failure(path, True, exc) from exc
    if names != {"sessions", "messages"}:
        raise StoreError(f"{path} is a SQLite database but not a Hermes session store "
                         "(no sessions and messages tables)", wrong_path=True)
    return False


def _open_failure(path: Path, readonly: bool, exc: BaseException) -> StoreError:
    """What went wrong when SQLite could not open ``path``, in words a user can act on."""
    text = str(exc).lower()
    refused = "readonly" in text or "read-only" in text or "unable to open" in text
    if not readonly and path.exists() and not os.access(path, os.W_OK):
        return StoreError(f"{path} is a read-only file ({exc}); make it writable or open "
                          "the store read-only")
    if (not readonly or refused) and not os.access(path.parent, os.W_OK):
        return StoreError(
            f"the folder {path.parent} is read-only, and SQLite must create its -wal and "
            f"-shm files next to {path.name} ({exc}); make the folder writable"
            + ("" if readonly else " or open the store read-only"))
    if "locked" in text or "busy" in text:
        return StoreError(f"{path} is locked by another process ({exc}); wait for it to "
                          "finish and try again")
    if "disk is full" in text or getattr(exc, "sqlite_errorcode", None) == _sqlite.SQLITE_FULL:
        return StoreError(f"the disk holding {path} is full ({exc}); free some space and "
                          "try again")
    if refused:
        return StoreError(f"{path} cannot be written ({exc}); make it and its folder "
                          "writable or open the store read-only")
    if "not a database" in text or "malformed" in text:
        return StoreError(f"cannot read {path} as SQLite ({exc})", wrong_path=True)
    return StoreError(f"cannot open {path} ({exc})")


def open_store(path: str | os.PathLike[str], *, readonly: bool,
               create: bool = False) -> SessionStore:
    """The one way the tool and the CLI open a store; raises StoreError.

    Refuses a directory, a file that is not SQLite and a SQLite file of
    another application (no ``sessions``/``messages`` tables) without
    touching them.  A read-write open of a file that cannot be written fails
    with the reason (read-only file, read-only folder, locked, disk full);
    it is never silently turned into a read-only open.  ``create=True``
    allows a missing (or empty) file to become a new store.
    """
    target = Path(path).expanduser()
    creating = _check_store_file(target, create and not readonly)
    if not readonly and not creating and not os.access(target, os.W_OK):
        raise StoreError(f"{target} is a read-only file; make it writable or open the "
                         "store read-only")
    try:
        return SessionStore(target, readonly=readonly)
    except (sqlite3.Error, OSError) as exc:
        raise _open_failure(target, readonly, exc) from exc


def file_has_session(path: str | os.PathLike[str], session_id: str) -> bool:
    """Whether the store at ``path`` holds ``session_id``; a read-only peek, False on any error."""
    try:
        conn = sqlite3.connect(_sqlite.readonly_uri(path), uri=True)
    except sqlite3.Error:
        return False
    try:
        row = conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return row is not None
    except sqlite3.Error:
        return False
    finally:
        conn.close()


class SessionStore:
    """A session store; see the module docstring."""

    def __init__(self, path: str | os.PathLike[str] | None = None,
                 readonly: bool = False) -> None:
        self._path = Path(path) if path is not None else default_db_path()
        self.readonly = readonly
        if not readonly:
            self._path.parent.mkdir(parents=True, exist_ok=True)
        elif not self._path.exists():
            raise FileNotFoundError(f"no session store at {self._path}")
        self.conn = self._open_connection()
        self.conn.row_factory = sqlite3.Row
        self._file = self._main_file()
        if readonly:
            schema.shadow_missing_columns(self.conn)
        self.cjk_available = self._cjk_capable()
        self.fts5_available = schema.probe_fts5(self.conn)
        self.trigram_available = self.fts5_available and schema.probe_trigram(self.conn)
        if not readonly:
            self.conn.execute("PRAGMA foreign_keys = ON")
            if self.conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                self.conn.execute("PRAGMA journal_mode = WAL")
            self._align()
            self.sync()

    # ------------------------------------------------------------------ open

    def _open_connection(self) -> sqlite3.Connection:
        kwargs: dict[str, Any] = {
            "timeout": _sqlite.BUSY_TIMEOUT_S, "isolation_level": None,
            "check_same_thread": False,
        }
        try:
            return loader.connect(str(self._path), readonly=self.readonly, **kwargs)
        except loader.ExtensionUnavailable as exc:
            # Fail open: everything but the CJK index works without it.
            log = logger.info if _env.cjk_extension_disabled() else logger.warning
            log("CJK search unavailable (%s); using the other indexes and LIKE", exc)
        if self.readonly:
            return sqlite3.connect(_sqlite.readonly_uri(self._path), uri=True, **kwargs)
        return sqlite3.connect(str(self._path), **kwargs)

    def _main_file(self) -> str | None:
        for _seq, name, file in self.conn.execute("PRAGMA database_list"):
            if name == "main":
                return os.path.realpath(file) if file else None
        return None

    @property
    def path(self) -> str | None:
        """Real path of the main database file (None for an in-memory store)."""
        return self._file

    def _cjk_capable(self) -> bool:
        # The auto-extension may reach every connection in this process, so the
        # off switch is honoured here too, not only by the loader.
        return not _env.cjk_extension_disabled() and loader.has_extension(self.conn)

    def _triggers_ok(self, index: str) -> bool:
        return not schema.missing_triggers(self.conn, index)

    def _align(self) -> None:
        """Schema alignment on open; adds only what is missing (spec §3)."""
        conn = self.conn
        with indexing.write_txn(conn):
            schema.ensure_base_schema(conn)
            self._align_fts(conn)

    def _align_fts(self, conn: sqlite3.Connection) -> None:
        if not self.fts5_available:
            # Triggers into FTS5 tables would make every message write fail.
            for index in (BASE, TRIGRAM):
                if schema.index_sql(conn, index) is not None and self._triggers_ok(index):
                    schema.set_meta(conn, schema.META_FTS_STALE, 1)
                    schema.set_meta(conn, schema.META_FTS_STALE_REASON, "fts5 unavailable")
                schema.drop_triggers(conn, index)
            logger.warning("SQLite FTS5 unavailable; message writes work, search uses LIKE")
            return
        stale = schema.get_meta(conn, schema.META_FTS_STALE) is not None
        has_rows = conn.execute("SELECT 1 FROM messages LIMIT 1").fetchone() is not None

        # Base word index.
        if stale:
            schema.drop_triggers(conn, BASE)
        elif schema.index_sql(conn, BASE) is None:
            schema.create_index_objects(conn, BASE)
            if has_rows:
                indexing.seed_full_backfill(conn, BASE)
            schema.create_triggers(conn, BASE)
        elif not self._triggers_ok(BASE):
            # Writes happened with no trigger: the index no longer matches.
            schema.set_meta(conn, schema.META_FTS_STALE, 1)
            schema.set_meta(conn, schema.META_FTS_STALE_REASON, "base triggers missing")
            schema.drop_triggers(conn, BASE)
            schema.drop_triggers(conn, TRIGRAM)
            stale = True
        elif schema.index_layout(schema.index_sql(conn, BASE)) == "external":
            conn.execute(schema.DDL[BASE].view_sql)
            schema.create_triggers(conn, BASE)

        # Trigram index.  Whenever it is not maintained, placeholders hold
        # its trigger names (see schema.TRIGRAM_PLACEHOLDERS) so that Hermes
        # Agent never rebuilds messages_fts with its own layout.
        trigram_sql = schema.index_sql(conn, TRIGRAM)
        if stale:
            schema.drop_triggers(conn, TRIGRAM)
        elif not _env.trigram_enabled() or not self.trigram_available:
            if trigram_sql is not None:
                schema.set_meta(conn, schema.META_TRIGRAM_STALE, 1)
            schema.install_trigram_placeholders(conn)
            if not self.trigram_available and _env.trigram_enabled():
                logger.info("SQLite trigram tokenizer unavailable (SQLite %s); "
                            "substring search falls back to LIKE", sqlite3.sqlite_version)
        elif trigram_sql is None:
            schema.create_index_objects(conn, TRIGRAM)
            if has_rows:
                indexing.seed_full_backfill(conn, TRIGRAM)
            schema.create_triggers(conn, TRIGRAM)
        elif schema.get_meta(conn, schema.META_TRIGRAM_STALE) is not None:
            # Quarantined until optimize-storage rebuilds it.
            schema.install_trigram_placeholders(conn)
        elif not self._triggers_ok(TRIGRAM):
            # Writes went past it: stale, and detached until rebuilt.
            schema.set_meta(conn, schema.META_TRIGRAM_STALE, 1)
            schema.install_trigram_placeholders(conn)
        elif schema.index_layout(trigram_sql) == "external":
            conn.execute(schema.DDL[TRIGRAM].view_sql)
            schema.create_triggers(conn, TRIGRAM)

        # CJK index: never written by a trigger, so its pending-log triggers
        # stay in place whether or not this process has the extension.
        cjk_exists = schema.index_sql(conn, CJK) is not None
        if cjk_exists:
            conn.execute(schema.PENDING_TABLE_SQL)
            conn.execute(schema.PENDING_INDEX_SQL)
            if not self._triggers_ok(CJK):
                # Changes went unlogged: only a rebuild can make it right.
                schema.set_meta(conn, schema.META_CJK_STALE, 1)
            schema.create_triggers(conn, CJK)
        elif self.cjk_available:
            schema.create_index_objects(conn, CJK)
            if conn.execute("SELECT 1 FROM messages WHERE role <> 'tool' LIMIT 1").fetchone():
                indexing.seed_full_backfill(conn, CJK)
            schema.create_triggers(conn, CJK)

    # ---------------------------------------------------------------- state

    def _meta(self, key: str) -> str | None:
        return schema.get_meta(self.conn, key)

    @property
    def fts_stale(self) -> bool:
        return self._meta(schema.META_FTS_STALE) is not None

    def index_state(self) -> dict[str, Any]:
        """Per index: exists, served, reason, layout, unindexed range; plus flags."""
        stale = self.fts_stale
        out: dict[str, Any] = {
            "fts_stale": stale,
            "fts_stale_reason": self._meta(schema.META_FTS_STALE_REASON) if stale else None,
            "fts5_available": self.fts5_available,
            "trigram_available": self.trigram_available,
            "cjk_available": self.cjk_available,
            "cjk_pending": indexing.pending_count(self.conn),
        }
        for index in schema.INDEXES:
            sql = schema.index_sql(self.conn, index)
            served, reason = self._served(index, sql, stale)
            out[index] = {
                "exists": sql is not None,
                "layout": schema.index_layout(sql),
                "served": served,
                "reason": reason,
                "unindexed_range": self.unindexed_range(index),
            }
        return out

    def _served(self, index: str, sql: str | None, stale: bool) -> tuple[bool, str]:
        if sql is None:
            return False, "not created"
        if not self.fts5_available:
            return False, "fts5 unavailable"
        if stale:
            return False, "fts_stale: index under repair, run `hermes-fts optimize-storage`"
        if index == TRIGRAM:
            if not _env.trigram_enabled():
                return False, "disabled by HERMES_TRIGRAM_FTS"
            if not self.trigram_available:
                return False, "trigram tokenizer unavailable"
            if self._meta(schema.META_TRIGRAM_STALE) is not None:
                return False, "stale: run `hermes-fts optimize-storage`"
            if schema.missing_triggers(self.conn, TRIGRAM):
                # Seen by a read-only open before any writer marked it stale.
                return False, "triggers missing: run `hermes-fts optimize-storage`"
        if index == CJK:
            if not self.cjk_available:
                return False, "cjk_unicode61 extension not loaded"
            if self._meta(schema.META_CJK_STALE) is not None:
                return False, "stale: run `hermes-fts optimize-storage`"
            if schema.markers(self.conn, CJK) is not None:
                # Reference behaviour: the CJK index is served once complete.
                return False, "backfill pending: run `hermes-fts optimize-storage`"
        if schema.markers(self.conn, index) is not None:
            return True, "backfill pending: add a LIKE scan over unindexed_range"
        return True, "ok"

    def unindexed_range(self, index: str) -> tuple[int, int] | None:
        """``(lo, hi)``: ids ``lo < id <= hi`` are not yet in ``index``; None when complete."""
        state = schema.markers(self.conn, index)
        if state is None:
            return None
        high, progress = state
        return (progress, high) if progress < high else None

    def rebuild_status(self) -> dict[str, Any] | None:
        return indexing.status(self.conn)

    def mark_fts_stale(self, reason: str) -> None:
        """Fail open after FTS-scoped corruption: serve LIKE until optimize rebuilds."""
        if self.readonly:
            logger.error("FTS index corrupt (%s); read-only store, serving LIKE", reason)
            return
        with indexing.write_txn(self.conn):
            schema.set_meta(self.conn, schema.META_FTS_STALE, 1)
            schema.set_meta(self.conn, schema.META_FTS_STALE_REASON, reason)
            # A corrupt index would make every message write fail through its
            # trigger; the data must keep flowing, so the triggers go.
            schema.drop_triggers(self.conn, BASE)
            schema.drop_triggers(self.conn, TRIGRAM)
        logger.error("FTS index corrupt (%s); search uses LIKE until "
                     "`hermes-fts optimize-storage` rebuilds the indexes", reason)

    # ----------------------------------------------------------------- sync

    def sync(self) -> int:
        """Apply CJK changes logged by any process; returns message ids applied."""
        if not self._cjk_writable():
            return 0
        try:
            return indexing.apply_pending(self.conn)
        except sqlite3.DatabaseError as exc:
            if self._is_index_corruption(exc):
                self.mark_fts_stale(f"{CJK}: {exc}")
                return 0
            raise

    # --------------------------------------------------------------- writers

    def _cjk_writable(self) -> bool:
        return (self.cjk_available and self.fts5_available and not self.readonly
                and schema.index_sql(self.conn, CJK) is not None
                and self._meta(schema.META_CJK_STALE) is None and not self.fts_stale)

    def _is_index_corruption(self, exc: BaseException) -> bool:
        return _sqlite.is_index_corruption(self.conn, exc)

    def _write(self, fn: Callable[[sqlite3.Connection], Any], replayable: bool = True) -> Any:
        if self.readonly:
            raise PermissionError(f"{self._path} is open read-only")
        try:
            return self._write_once(fn)
        except sqlite3.DatabaseError as exc:
            if not self._is_index_corruption(exc):
                raise
            # The corrupt index rejected the write through its trigger:
            # detach the indexes and write again, so no message is lost.
            self.mark_fts_stale(str(exc))
            if not replayable:
                raise RuntimeError(
                    "a corrupt search index rejected the bulk insert; nothing was written. "
                    "The indexes are now detached: pass the rows again and they will be "
                    "stored (run `hermes-fts optimize-storage` to rebuild the indexes)"
                ) from exc
            return self._write_once(fn)

    def _write_once(self, fn: Callable[[sqlite3.Connection], Any]) -> Any:
        cjk_error: sqlite3.DatabaseError | None = None
        with indexing.write_txn(self.conn) as conn:
            result = fn(conn)
            if self._cjk_writable():
                # Our own writes reach the CJK index in the same transaction,
                # so any reader sees them at once.  A failure here must not
                # cost the message: undo only the index part; the pending
                # rows stay for the next sync.
                conn.execute("SAVEPOINT cjk_apply")
                try:
                    indexing.apply_pending_batch(conn)
                except sqlite3.DatabaseError as exc:
                    conn.execute("ROLLBACK TO cjk_apply")
                    cjk_error = exc
                conn.execute("RELEASE cjk_apply")
        if cjk_error is not None:
            if self._is_index_corruption(cjk_error):
                self.mark_fts_stale(f"{CJK}: {cjk_error}")
            else:
                logger.warning("CJK index update deferred to the next sync: %s", cjk_error)
        return result

    def add_session(self, session_id: str | None = None, source: str = "cli", *,
                    started_at: float | None = None, **fields: Any) -> str:
        sid = session_id or fields.pop("id", None)
        fields.pop("id", None)
        if not sid:
            raise ValueError("add_session needs a session id")
        row: dict[str, Any] = {"id": sid, "source": source,
                               "started_at": time.time() if started_at is None else started_at}
        unknown = set(fields) - set(_SESSION_FIELDS)
        if unknown:
            raise ValueError(f"unknown session field(s): {', '.join(sorted(unknown))}")
        row.update({k: encode_value(v) for k, v in fields.items()})
        cols = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        self._write(lambda c: c.execute(
            f"INSERT INTO sessions({cols}) VALUES ({marks})", tuple(row.values())))
        return str(sid)

    def end_session(self, session_id: str, end_reason: str) -> None:
        # First writer wins, as in the reference.
        self._write(lambda c: c.execute(
            "UPDATE sessions SET ended_at = ?, end_reason = ? "
            "WHERE id = ? AND ended_at IS NULL", (time.time(), end_reason, session_id)))

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        row = self.conn.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return None if row is None else dict(row)

    @staticmethod
    def _message_row(msg: Mapping[str, Any]) -> tuple[Any, ...]:
        unknown = set(msg) - set(_MESSAGE_FIELDS)
        if unknown:
            raise ValueError(f"unknown message field(s): {', '.join(sorted(unknown))}")
        if not msg.get("session_id") or not msg.get("role"):
            raise ValueError("a message needs session_id and role")
        values = dict(msg)
        values.setdefault("timestamp", time.time())
        values.setdefault("active", 1)
        values.setdefault("compacted", 0)
        return tuple(encode_value(values.get(name)) for name in _MESSAGE_FIELDS)

    _INSERT_MESSAGE = (f"INSERT INTO messages({', '.join(_MESSAGE_FIELDS)}) "
                       f"VALUES ({', '.join('?' for _ in _MESSAGE_FIELDS)})")

    def add_message(self, session_id: str, role: str, content: str | None = None,
                    **fields: Any) -> int:
        row = self._message_row({"session_id": session_id, "role": role,
                                 "content": content, **fields})
        return int(self._write(lambda c: c.execute(self._INSERT_MESSAGE, row).lastrowid))

    def add_messages(self, messages: Iterable[Mapping[str, Any]]) -> list[int]:
        """Insert many messages in one transaction; returns their ids in order.

        An iterator is streamed (a million generated rows never sit in memory);
        a sequence may be replayed once if a corrupt index rejects the write.
        """
        def insert(c: sqlite3.Connection) -> list[int]:
            count = 0

            def rows() -> Iterator[tuple[Any, ...]]:
                nonlocal count
                for msg in messages:
                    count += 1
                    yield self._message_row(msg)

            c.executemany(self._INSERT_MESSAGE, rows())
            if count == 0:
                return []
            # Under BEGIN IMMEDIATE nobody else inserts, and each new id is
            # larger than every existing one: ours are the top `count` ids.
            top = int(c.execute("SELECT MAX(id) FROM messages").fetchone()[0])
            return list(range(top - count + 1, top + 1))

        return list(self._write(insert, replayable=isinstance(messages, Sequence)))

    def update_message(self, message_id: int, **fields: Any) -> None:
        unknown = set(fields) - _UPDATABLE_FIELDS
        if unknown:
            raise ValueError(f"cannot update message field(s): {', '.join(sorted(unknown))}")
        if not fields:
            return
        assigns = ", ".join(f"{k} = ?" for k in fields)
        values = tuple(encode_value(v) for v in fields.values())
        self._write(lambda c: c.execute(
            f"UPDATE messages SET {assigns} WHERE id = ?", (*values, message_id)))

    def set_message_flags(self, message_id: int, active: bool | None = None,
                          compacted: bool | None = None) -> None:
        fields: dict[str, Any] = {}
        if active is not None:
            fields["active"] = int(active)
        if compacted is not None:
            fields["compacted"] = int(compacted)
        self.update_message(message_id, **fields)

    def delete_message(self, message_id: int) -> None:
        self._write(lambda c: c.execute("DELETE FROM messages WHERE id = ?", (message_id,)))

    def get_messages(self, session_id: str) -> list[dict[str, Any]]:
        return [dict(r) for r in self.conn.execute(
            "SELECT * FROM messages WHERE session_id = ? ORDER BY id", (session_id,))]

    # -------------------------------------------------------- maintenance

    def backfill(self, index: str | None = None, *, sleep: indexing.Sleep = time.sleep,
                 chunk_rows: int = indexing.CHUNK_ROWS, min_pause: float = indexing.MIN_PAUSE,
                 on_chunk: Callable[[], None] | None = None) -> None:
        """Drive pending backfills (all indexes this process can write) to completion."""
        for name in (index,) if index else schema.INDEXES:
            if name == CJK and not self.cjk_available:
                continue
            if name == TRIGRAM and not (self.trigram_available and _env.trigram_enabled()):
                continue
            if schema.index_sql(self.conn, name) is None:
                continue
            indexing.drive_backfill(self.conn, name, sleep=sleep, chunk_rows=chunk_rows,
                                   min_pause=min_pause, on_chunk=on_chunk)

    def optimize_needed(self) -> bool:
        conn = self.conn
        if self.fts_stale or indexing.status(conn) is not None:
            return True
        for index in (BASE, TRIGRAM):
            if schema.index_layout(schema.index_sql(conn, index)) == "inline":
                return True
        if self._meta(schema.META_TRIGRAM_STALE) is not None:
            return True
        if self.cjk_available and self._meta(schema.META_CJK_STALE) is not None:
            return True
        return indexing.pending_count(conn) > 0 and self.cjk_available

    def optimize_storage(self, progress: indexing.Progress | None = None,
                         vacuum: bool = True, *, sleep: indexing.Sleep = time.sleep,
                         chunk_rows: int = indexing.CHUNK_ROWS,
                         min_pause: float = indexing.MIN_PAUSE) -> dict[str, Any]:
        """Repair, upgrade and backfill every index, then VACUUM (spec §4.3)."""
        if self.readonly:
            return {"ok": False, "reason": "read_only", "vacuumed": None}
        if not self.fts5_available:
            return {"ok": False, "reason": "fts5_unavailable", "vacuumed": None}
        conn = self.conn
        size_before = indexing.file_bytes(conn)

        def emit(phase: str) -> None:
            if progress is None:
                return
            st = indexing.status(conn)
            if st is None:
                st = {"percent": 100, "indexed": 0, "total": 0}
            progress({"phase": phase, "percent": st["percent"], "indexed": st["indexed"],
                      "total": st["total"]})

        emit("repair")
        stale = self.fts_stale
        for index in (BASE, TRIGRAM):
            sql = schema.index_sql(conn, index)
            if index == TRIGRAM and not (_env.trigram_enabled() and self.trigram_available):
                with indexing.write_txn(conn):
                    if sql is not None and not _env.trigram_enabled():
                        # Opt-out: the storage goes for good (its triggers too).
                        schema.drop_index_objects(conn, TRIGRAM)
                        schema.clear_markers(conn, TRIGRAM)
                        schema.delete_meta(conn, schema.META_TRIGRAM_STALE)
                    # Same transaction: Hermes Agent never sees the names missing.
                    schema.install_trigram_placeholders(conn)
                continue
            if (sql is None or stale or schema.index_layout(sql) == "inline"
                    or (index == TRIGRAM and self._meta(schema.META_TRIGRAM_STALE))):
                indexing.reset_index(conn, index)
        if stale:
            with indexing.write_txn(conn):
                if not self.cjk_available and schema.index_sql(conn, CJK) is not None:
                    # It may share the damage; rebuild it once the extension is back.
                    schema.set_meta(conn, schema.META_CJK_STALE, 1)
                schema.delete_meta(conn, schema.META_FTS_STALE, schema.META_FTS_STALE_REASON)
        if self.cjk_available and (stale or self._meta(schema.META_CJK_STALE) is not None
                                   or schema.index_sql(conn, CJK) is None):
            indexing.reset_index(conn, CJK)

        emit("backfill")
        self.backfill(sleep=sleep, chunk_rows=chunk_rows, min_pause=min_pause,
                      on_chunk=lambda: emit("backfill"))
        self.sync()
        remaining = indexing.status(conn)
        if remaining is not None:
            logger.warning("optimize-storage: backfill incomplete: %s", remaining)
            return {"ok": False, "reason": "backfill_incomplete", "vacuumed": None,
                    "size_before": size_before, "size_after": indexing.file_bytes(conn)}

        vacuumed: bool | None = None
        if vacuum:
            emit("vacuum")
            try:
                conn.execute("VACUUM")
                vacuumed = True
            except sqlite3.DatabaseError as exc:
                logger.warning("VACUUM failed (%s); indexes are complete anyway", exc)
                vacuumed = False
            try:
                # PASSIVE never waits for readers; TRUNCATE could stall them.
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
            except sqlite3.DatabaseError as exc:
                logger.debug("checkpoint after VACUUM skipped: %s", exc)
        emit("done")
        logger.info("storage optimization complete")
        return {"ok": True, "vacuumed": vacuumed, "size_before": size_before,
                "size_after": indexing.file_bytes(conn)}

    def integrity_check(self) -> dict[str, str | None]:
        """FTS5 'integrity-check' per existing, usable index: None means it passed."""
        out: dict[str, str | None] = {}
        for index in schema.INDEXES:
            if schema.index_sql(self.conn, index) is None:
                continue
            if index == CJK and not self.cjk_available:
                continue
            if index == TRIGRAM and not self.trigram_available:
                continue
            out[index] = indexing.integrity_check(self.conn, index)
        return out

    # ------------------------------------------------------ search and views

    def search_messages(self, query: Any, source_filter: Sequence[str] | None = None,
                        exclude_sources: Sequence[str] | None = None,
                        role_filter: Any = None, limit: int = 20, offset: int = 0,
                        sort: str | None = None, include_inactive: bool = False,
                        fields: Any = None) -> list[dict[str, Any]]:
        """Search visible messages; routes and semantics in hermes_fts.search."""
        from . import search

        return search.search_messages(self, query, source_filter, exclude_sources, role_filter,
                                      limit, offset, sort, include_inactive, fields)

    def describe_search_path(self, query: Any) -> str:
        """The route search_messages(query) takes: fts5, fts_cjk, trigram, like_scan, …"""
        from . import search

        return search.describe_search_path(self, query)

    def get_messages_around(self, session_id: str, around_message_id: int,
                            window: int = 5) -> dict[str, Any]:
        return transcript.get_messages_around(self.conn, session_id, around_message_id, window)

    def get_anchored_view(self, session_id: str, message_id: int, window: int = 5,
                          bookend: int = 3) -> dict[str, Any]:
        return transcript.get_anchored_view(self.conn, session_id, message_id, window, bookend)

    def get_anchor_summary(self, session_id: str, anchor_id: int,
                           window: int = 5) -> dict[str, Any]:
        """The anchor alone plus the neighbour counts ``get_anchored_view`` would report."""
        return transcript.get_anchor_summary(self.conn, session_id, anchor_id, window)

    def message_flags(self, message_id: int) -> tuple[str, int, int] | None:
        """``(session_id, active, compacted)`` of a message; None when it does not exist."""
        return transcript.message_flags(self.conn, message_id)

    def find_session_by_title(self, title: str) -> str | None:
        """Session id of the newest ``"<title> #N"`` continuation, else of the exact title."""
        return transcript.find_session_by_title(self.conn, title)

    def sessions_by_activity(self, hidden_sources: Sequence[str] = (), limit: int = 20,
                             offset: int = 0) -> list[dict[str, Any]]:
        """Session rows, most recently active first, leaving out ``hidden_sources``."""
        return transcript.sessions_by_activity(self.conn, hidden_sources, limit, offset)

    def count_messages(self, session_id: str) -> int:
        """Stored messages of a session, every kind included."""
        return transcript.count_messages(self.conn, session_id)

    def session_preview(self, session_id: str) -> str:
        """The session's first visible user message on one line, shortened."""
        return transcript.session_preview(self.conn, session_id)

    def first_message_id(self, session_id: str) -> int | None:
        """Id of the session's first visible message, None when it has none."""
        return transcript.first_message_id(self.conn, session_id)

    # -------------------------------------------------------------- status

    def status(self) -> dict[str, Any]:
        """Everything ``hermes-fts status`` reports; reads only (a full scan of the text).

        ``db_bytes`` is SQLite's page count times the page size, which
        includes pages still in the ``-wal`` file; ``text_bytes`` is the UTF-8
        size of content + tool_name + tool_calls, and each index's ``x_text``
        is its size as a multiple of that.
        """
        conn = self.conn
        state = self.index_state()
        text = indexing.text_bytes(conn)
        sizes = indexing.index_sizes(conn, text)
        indexes = {index: {**state[index], "bytes": None, "x_text": None, **sizes.get(index, {})}
                   for index in schema.INDEXES}
        return {
            "db": self.path,
            "messages": conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0],
            "sessions": conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0],
            "text_bytes": text,
            "db_bytes": _sqlite.db_bytes(conn),
            "indexes": indexes,
            "fts_stale": state["fts_stale"],
            "cjk_pending": state["cjk_pending"],
            "backfill": self.rebuild_status(),
            "sqlite_version": sqlite3.sqlite_version,
            "extension": {"loaded": self.cjk_available, "strategy": loader.load_strategy(),
                          "disabled": _env.cjk_extension_disabled()},
        }

    # ------------------------------------------------------------- closing

    def close(self) -> None:
        try:
            self.conn.close()
        except sqlite3.Error as exc:
            logger.debug("closing %s failed: %s", self._path, exc)

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
