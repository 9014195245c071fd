"""SessionStore: a Hermes-compatible ``state.db``, its indexes, its rows.

Opening an agent's store changes nothing in it: our objects are created by
the first write, ``sync()`` or ``optimize_storage()`` (docs/DESIGN.md §9.2).
A read-only open never writes a byte; it reports what the file holds.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable

from . import _env, _sharing, _sqlite, _store_problems, admin, loader, transcript, writes
from ._env import default_db_path
from ._params import as_flag, check_callable
from ._sharing import write_lock_held
from ._sqlite import BUSY_TIMEOUT_S, StoreError
from ._store_problems import failure_cause, store_error
from .index import align, pending, schema, space
from .index import lifecycle as index_state
from .index import maintain as indexing
from .index.schema import BASE, CJK, TRIGRAM

# Re-exported: why searches are slower or miss rows, for the tool and the CLI.
from .index.slowed import fix_command, missed_until_rebuilt, search_slowed_by, slowed_why
from .index.space import (
    NoRoom,  # re-exported: sync stops on a nearly full disk
    give_back_left_room,  # re-exported: the CLI's run, before its checks
)
from .query.best import parts_held as _parts_held
from .query.best import words_held as _words_held
from .query.plan import parse_query, reads_as_sentence
from .query.syntax import QueryError
from .query.tree import Query
from .search import request as search_request
from .search import route as search_route
from .search import run as search
from .search.like import QueryTooBroad  # re-exported: the tool and CLI see queries through us
from .search.request import THEN_FIRST  # re-exported: the tool checks its time note
from .search.run import SearchResult
from .transcript import file_has_session  # re-exported: the tool's profile lookup

__all__ = [  # the store, and what the tool and the CLI reach through it
    "BUSY_TIMEOUT_S",
    "QueryError",
    "QueryTooBroad",
    "SessionStore",
    "StoreError",
    "THEN_FIRST",
    "default_db_path",
    "failure_cause",
    "file_has_session",
    "give_back_left_room",
    "fix_command",
    "open_store",
    "missed_until_rebuilt",
    "search_slowed_by",
    "slowed_why",
    "store_error",
    "write_lock_held",
]

logger = logging.getLogger("hermes_fts.store")

_text_or_replacement = functools.partial(str, encoding="utf-8", errors="replace")
_REPAIR = "run `hermes-fts optimize-storage` to rebuild it"
# The index whose lookups each index route's answer comes from.
_ANSWERING_INDEX = {**search_route.INDEX_ROUTES, search.CHECKED_ROUTE: CJK}


def open_store(
    path: str | os.PathLike[str],
    *,
    readonly: bool,
    create: bool = False,
    check_writable: bool = False,
    progress: indexing.Progress | None = None,
    pause: indexing.Sleep = time.sleep,
    apply_pending: bool = True,
) -> SessionStore:
    """The one way the tool and the CLI open a store; raises StoreError.

    Refuses a directory, a file that is not SQLite and a SQLite file of
    another application (no ``sessions``/``messages`` tables) without
    touching them.  A read-write open of a file that cannot be written fails
    with the reason (read-only file, read-only folder, locked, disk full);
    it is never silently turned into a read-only open.  ``create=True``
    allows a missing (or empty) file to become a new store.  ``check_writable``
    makes a read-only open refuse what a read-write one would (a preflight);
    ``progress``, ``pause`` and ``apply_pending`` as ``SessionStore``'s."""
    target = Path(path).expanduser()
    # A writer is refused before its first write; a reader asks its own
    # connection for Hermes' tables, rather than open one more to ask.
    reading = readonly and not check_writable
    problem = _store_problems.store_file_problem(
        target,
        readonly=reading,
        may_create=create and not readonly,
        tables=not reading,
    )
    if problem is not None:
        raise StoreError(problem.message, wrong_path=problem.wrong_path)
    try:
        store = SessionStore(target, readonly, progress, pause, apply_pending=apply_pending)
    except (sqlite3.Error, OSError) as exc:
        # Another application's database fails on our first read: say so.
        problem = (
            _store_problems.store_file_problem(target, readonly=True, may_create=False)
            if reading
            else None
        )
        if problem is not None and problem.wrong_path:
            raise StoreError(problem.message, wrong_path=True) from exc
        raise _store_problems.store_error(target, exc, readonly=readonly) from exc
    return store  # a read-only one has Hermes' tables: SessionStore checked them


@contextmanager
def _one_snapshot(conn: sqlite3.Connection) -> Iterator[None]:
    """The block's statements read one state of the file (a read transaction; inside
    one already, that one).  Read one by one, a sync another process commits between
    the read of an index and that of its pending log hides the rows it moved."""
    if conn.in_transaction:
        yield
        return
    conn.execute("BEGIN")
    conn.execute("SELECT 1 FROM main.sqlite_master LIMIT 1").fetchall()  # the snapshot starts
    try:
        yield
    except BaseException:
        if conn.in_transaction:  # SQLite ends it by itself after an interrupt
            conn.execute("ROLLBACK")
        raise
    if conn.in_transaction:
        conn.execute("COMMIT")  # keeps what the block made in TEMP, as autocommit would


class SessionStore(transcript.Views, writes.Writes, admin.Admin):
    """A session store; ``progress`` gets a long pending apply's events (open, sync),
    and ``pause`` takes the pause between its batches (§5.3).  ``apply_pending=False``:
    a write open that leaves the backlog (``remove`` drops the index it would fill)."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        readonly: bool = False,
        progress: indexing.Progress | None = None,
        pause: indexing.Sleep = time.sleep,
        *,
        apply_pending: bool = True,
    ) -> None:
        self._lock = threading.RLock()  # one thread at a time on the connection
        # readonly="no" opened read-only, and None for writing, a store meant to be read
        readonly = as_flag(readonly, "readonly")
        check_callable(progress, "progress")
        check_callable(pause, "pause", none=False)
        if not (path is None or isinstance(path, (str, os.PathLike))):
            # pathlib's own error names no argument, and for a number says bytes would do
            raise TypeError(f"path must be text or a path, not {type(path).__name__}")
        self._path = Path(path) if path is not None else default_db_path()
        self.readonly, self._progress, self._pause = readonly, progress, pause
        _store_problems.prepare_store_path(self._path, default=path is None, readonly=readonly)
        self._conn = self._open_store_file()
        self._conn.row_factory = sqlite3.Row
        # Bytes that are not UTF-8 (another tool's TEXT) read as U+FFFD: the
        # default decode would fail every read of their row, search included.
        self._conn.text_factory = _text_or_replacement
        self._file = self._main_file()
        # An existing store's missing columns come from TEMP views until our
        # first write: an open changes nothing in it (docs/DESIGN.md §9.2).
        self._base_deferred = not readonly and align.has_messages(self._conn)
        if readonly:
            schema.shadow_missing_columns(self._conn)
        self.cjk_available = self._cjk_capable()
        # Checked once: HERMES_FTS_LIBRARY may name a library without cjk_fold().
        self.cjk_fold_available = self.cjk_available and loader.has_fold(self._conn)
        self.fts5_available = schema.probe_fts5(self._conn)
        self.trigram_available = self.fts5_available and schema.probe_trigram(self._conn)
        self._seen = index_state.StateCache(self._conn, self._caps)
        self._applied_unreported = 0  # by the open, until sync() reports them
        # The last empty answer's index probe: (file token, index), what is wrong.
        self._probed: tuple[tuple[tuple[int, int], str], str | None] | None = None
        if not readonly:
            try:  # a store whose open raised (``progress`` may stop it) is closed here
                # Deleted text is overwritten (§5.3.1), whatever the build's default.
                self._conn.executescript("PRAGMA secure_delete = ON; PRAGMA foreign_keys = ON;")
                # Only a file we create gets WAL: an existing store keeps the journal
                # mode its owner chose (Hermes 0.20+ keeps it out of WAL on a SQLite with
                # the WAL-reset bug or under `database.journal_mode: delete`, and never
                # switches a WAL file back).
                if self._conn.execute("PRAGMA page_count").fetchone()[0] == 0:
                    self._conn.execute("PRAGMA journal_mode = WAL")
                align.align(self._conn, self._caps, base=not self._base_deferred)
                index_state.unblock_writes(self._conn)
                if self._base_deferred:  # after align: a trigger must name main.messages
                    schema.shadow_missing_columns(self._conn)
                space.give_back_left_room(self._file)  # before applying counts free room
                self._applied_unreported = self._apply_pending() if apply_pending else 0
            except BaseException:
                self._conn.close()
                raise

    # ------------------------------------------------------------------ open

    def _open_store_file(self) -> sqlite3.Connection:
        """The connection, or StoreError for what is no Hermes store to open: a file
        that is not SQLite, or what ``_store_problems.layout_problem`` names."""
        conn = None
        try:
            conn = self._open_connection()
            problem = _store_problems.layout_problem(conn, self._path, readonly=self.readonly)
        except sqlite3.DatabaseError as exc:  # "file is not a database", on the first read
            if conn is not None:
                conn.close()
            look = _store_problems.store_file_problem(self._path, readonly=True, may_create=False)
            if look is None or not look.wrong_path:
                raise
            raise StoreError(look.message, wrong_path=True) from exc
        if problem is not None:
            conn.close()
            raise StoreError(problem.message, wrong_path=problem.wrong_path)
        return conn

    def _align_base(self) -> None:
        """Before our first write: replace the TEMP views by the real columns."""
        if not self._base_deferred:
            return
        self._conn.execute('DROP VIEW IF EXISTS temp."sessions"')
        self._conn.execute('DROP VIEW IF EXISTS temp."messages"')
        self._conn.execute(f'DROP TABLE IF EXISTS temp."{schema.STATE_META.name}"')
        with indexing.write_txn(self._conn):
            schema.ensure_base_schema(self._conn)
        self._base_deferred = False

    def _open_connection(self) -> sqlite3.Connection:
        kwargs: dict[str, Any] = {
            "timeout": _sqlite.BUSY_TIMEOUT_S,
            "isolation_level": None,
            "check_same_thread": False,
        }
        try:
            return loader.connect(
                str(self._path), readonly=self.readonly, public_name=False, **kwargs
            )
        except loader.ExtensionUnavailable as exc:
            # Fail open: everything but the CJK index works without it.
            self._load_error = str(exc)  # status says why, not only this log line
            log = logger.info if _env.cjk_extension_disabled() else logger.warning
            log("CJK search unavailable (%s); using the other indexes and LIKE", exc)
        if self.readonly:
            return _sqlite.connect_readonly(self._path, **kwargs)
        return sqlite3.connect(str(self._path), **kwargs)

    def _main_file(self) -> str | None:
        # The name's bytes, decoded as the OS decodes paths: as text, a UTF-8 name
        # cannot be encoded back under a non-UTF-8 locale (LC_ALL=C, PYTHONUTF8=0).
        row = self._conn.execute(
            "SELECT CAST(file AS BLOB) FROM pragma_database_list WHERE name = 'main'"
        ).fetchone()
        file = os.fsdecode(row[0]) if row and row[0] else None
        return os.path.realpath(file) if file else None

    @property
    def path(self) -> str | None:
        """Real path of the main database file (None for an in-memory store)."""
        return self._file

    def _cjk_capable(self) -> bool:
        # The auto-extension may reach every connection in this process, so the
        # off switch is honoured here too, not only by the loader.
        return not _env.cjk_extension_disabled() and loader.has_extension(self._conn)

    @property
    def _caps(self) -> index_state.Capabilities:
        return index_state.Capabilities(
            self.fts5_available, self.trigram_available, self.cjk_available, self.cjk_fold_available
        )

    # ---------------------------------------------------------------- state

    def _meta(self, key: str) -> str | None:
        return indexing.get_meta(self._conn, key)

    @property
    def fts_stale(self) -> bool:
        return self._meta(schema.META_FTS_STALE) is not None

    def index_state(self) -> dict[str, Any]:
        """Per index: exists, served, reason, layout, unindexed range; plus flags."""
        return copy.deepcopy(self._seen.state(self._seen.token()))

    def unindexed_range(self, index: str) -> tuple[int, int] | None:
        """``(lo, hi)``: ids ``lo < id <= hi`` are not yet in ``index``; None when complete."""
        return index_state.unindexed_range(self._conn, index)

    def rebuild_status(self) -> dict[str, Any] | None:
        """The backfill's progress in messages (ids need not be dense), None when done."""
        return indexing.backfill_progress(self._conn, messages=True)

    def slowed_by(self) -> list[str]:
        """Why searches here take slower exact routes until ``optimize-storage``: the
        index state's ``needs_optimize`` codes that change a route (``SEARCH_SLOWED``)."""
        return search_slowed_by(self._seen.state(self._seen.token()))

    def _mark_fts_stale(self, reason: str) -> None:
        """Fail open after FTS-scoped corruption: serve LIKE until optimize rebuilds."""
        if self.readonly:
            logger.error("FTS index corrupt (%s); read-only store, serving LIKE", reason)
            return
        self._align_base()
        with indexing.write_txn(self._conn):
            indexing.set_meta(self._conn, schema.META_FTS_STALE, 1)
            indexing.set_meta(self._conn, schema.META_FTS_STALE_REASON, reason)
            # A corrupt index would make every message write fail through its
            # trigger; the data must keep flowing, so the triggers go.
            schema.drop_triggers(self._conn, BASE)
            schema.drop_triggers(self._conn, TRIGRAM)
        self._seen.forget()
        logger.error(
            "FTS index corrupt (%s); search uses LIKE until "
            "`hermes-fts optimize-storage` rebuilds the indexes",
            reason,
        )

    # ----------------------------------------------------------------- sync

    def sync(self) -> int:
        """Apply CJK changes logged by any process; returns message ids applied,
        those the open applied included (the first sync reports them).

        Creates the CJK index first when the store has none (only opened so far)."""
        self._seen.synced = None
        if (
            not self.readonly
            and self.cjk_available
            and self.fts5_available
            and schema.index_sql(self._conn, CJK) is None
        ):
            self._align_base()
            align.align(self._conn, self._caps, create_cjk=True)
        applied = self._apply_pending(room_errors=True) + self._applied_unreported
        self._applied_unreported = 0
        return applied

    def _apply_pending(self, *, asked: bool = True, room_errors: bool = False) -> int:
        """Apply the pending table; unless ``asked``, only if the lock comes at once.

        Before a search nobody asked for the write: a lock held by another
        process, a read-only file or a full disk then leaves the rows pending,
        and the search answers them by the exact fallback (§5.3).  When asked
        (an open for writing, ``sync``) and messages were deleted, the word and
        trigram indexes are merged too, in paced steps
        (``indexing.merge_paced``): Hermes' own maintenance never reaches them,
        and unicode61 keeps a CJK run as one token, so an older segment would
        otherwise hold deleted text itself.

        Batches stop while the disk has less than optimize-storage's room for
        Hermes free (``space.keep_reserve``): the rest stays pending and the
        WAL is truncated.  ``room_errors`` (``sync``) raises ``space.NoRoom``
        then; an open or a search goes on without the rows applied.
        """
        if not self._cjk_writable():
            # Nothing this store may apply until the file changes.
            self._seen.synced = self._seen.token()
            return 0
        wait = _sqlite.BUSY_TIMEOUT_S if asked else _sqlite.SHORT_WAIT_S
        wal = space.file_sizes(self._file)[1] if asked and self._file else None
        try:
            with _sqlite.busy_timeout(self._conn, wait):
                deleted = asked and pending.pending_deletes(self._conn)
                # Hermes' writes need the disk more than our index does.
                room = functools.partial(space.keep_reserve, self._file) if self._file else None
                with space.room_while_applying(self._conn, self._file if asked else None):
                    applied = pending.apply_pending(
                        self._conn, before_batch=room, progress=self._progress, sleep=self._pause
                    )
                if deleted:
                    self._merge_deleted(room)
            if wal is not None and self._file and space.file_sizes(self._file)[1] > wal:
                # The batches grew the WAL, which Hermes' open connection keeps at
                # that size until it closes: the disk it takes is given back now.
                _sqlite.shrink_wal(self._conn)
        except (sqlite3.DatabaseError, space.NoRoom) as exc:
            if space.out_of_room(exc):
                # A failed batch's pages stay in the WAL until truncated: give them back.
                _sqlite.shrink_wal(self._conn)
                if room_errors:
                    raise NoRoom(str(exc)) from exc
                logger.info("pending CJK changes left for later, the disk is full: %s", exc)
                return 0
            if self._is_index_corruption(exc):
                self._mark_fts_stale(f"{CJK}: {exc}")
                return 0
            if asked or not _sqlite.cannot_write_now(exc):
                raise
            logger.info("pending CJK changes left for later (%s); search reads them by LIKE", exc)
            return 0
        self._seen.synced = self._seen.token()
        return applied

    def _merge_deleted(self, room: Callable[[], None] | None) -> None:
        """The word and trigram indexes merged after deletes (``_apply_pending``), only
        where the disk keeps Hermes' room through it (``space.check_merge_room``, and
        before each step): a merge writes its new segments before it frees the old
        ones, and unchecked it took the disk's last bytes."""
        try:
            for index in index_state.usable_indexes(self._conn, self._caps):
                if index in (BASE, TRIGRAM):
                    if self._file is not None:
                        _sqlite.shrink_wal(self._conn)  # the batches' pages, counted once
                        space.check_merge_room(self._conn, self._file, index)
                    indexing.merge_paced(self._conn, index, room, sleep=self._pause)
        except (sqlite3.DatabaseError, space.NoRoom) as exc:
            if not space.out_of_room(exc):
                raise
            # The changes are applied; optimize-storage's merge takes the deleted words.
            _sqlite.shrink_wal(self._conn)
            logger.info("merge of the word and trigram indexes left for later: %s", exc)

    def _sync_if_written(self, fresh: tuple[int, int]) -> tuple[int, int]:
        """``sync()`` unless nothing was committed since the last one; the new token.

        Other processes' rows reach the pending log in commits that change
        ``data_version``; our own writes apply theirs in the same transaction.
        """
        if self.readonly or fresh == self._seen.synced:
            return fresh
        self._apply_pending(asked=False)  # never creates an index (docs/DESIGN.md §9.2)
        return self._seen.token()

    # --------------------------------------------------------------- writers

    def _cjk_writable(self) -> bool:
        return (
            self.cjk_available
            and self.fts5_available
            and not self.readonly
            and schema.index_sql(self._conn, CJK) is not None
            and self._meta(schema.META_CJK_STALE) is None
            and not self.fts_stale
        )

    def _is_index_corruption(self, exc: BaseException) -> bool:
        return _sqlite.is_index_corruption(self._conn, exc)

    def file_damaged(self, exc: BaseException) -> bool:
        """Whether ``exc`` is damage to the store's own pages (messages, sessions),
        which no index rebuild repairs, rather than to one of our indexes."""
        return _sqlite.is_corruption(exc) and not self._is_index_corruption(exc)

    def _write(self, fn: Callable[[sqlite3.Connection], Any], replayable: bool = True) -> Any:
        if self.readonly:
            raise PermissionError(f"{self._path} is open read-only")
        self._align_base()
        try:
            return self._write_once(fn)
        except sqlite3.DatabaseError as exc:
            if not self._is_index_corruption(exc):
                raise
            # The corrupt index rejected the write through its trigger:
            # detach the indexes and write again, so no message is lost.
            self._mark_fts_stale(str(exc))
            if not replayable:
                raise RuntimeError(
                    "a corrupt search index rejected the bulk insert; nothing was written. "
                    "The indexes are now detached: pass the rows again and they will be "
                    "stored (run `hermes-fts optimize-storage` to rebuild the indexes)"
                ) from exc
            return self._write_once(fn)

    def _write_once(self, fn: Callable[[sqlite3.Connection], Any]) -> Any:
        cjk_error: sqlite3.DatabaseError | None = None
        with indexing.write_txn(self._conn) as conn:
            result = fn(conn)
            if self._cjk_writable():
                # Our own writes reach the CJK index in the same transaction,
                # so any reader sees them at once.  A failure here must not
                # cost the message: undo only the index part; the pending
                # rows stay for the next sync.
                conn.execute("SAVEPOINT cjk_apply")
                try:
                    pending.apply_pending_batch(conn)
                except sqlite3.DatabaseError as exc:
                    conn.execute("ROLLBACK TO cjk_apply")
                    cjk_error = exc
                conn.execute("RELEASE cjk_apply")
        if cjk_error is not None:
            if self._is_index_corruption(cjk_error):
                self._mark_fts_stale(f"{CJK}: {cjk_error}")
            else:
                logger.warning("CJK index update deferred to the next sync: %s", cjk_error)
        return result

    # ------------------------------------------------------ search and views

    def search(
        self,
        query: Any,
        source_filter: Sequence[str] | None = None,
        exclude_sources: Sequence[str] | None = None,
        role_filter: Any = None,
        limit: int = 20,
        offset: int = 0,
        sort: str | None = None,
        include_inactive: bool = False,
        fields: Any = None,
        *,
        route: str | None = None,
        after: float | None = None,
        before: float | None = None,
        exclude_session_ids: Sequence[str] | None = None,
        archived_only_session_ids: Sequence[str] | None = None,
        now: float | str | None = None,
        marks: tuple[str, str] | None = None,
    ) -> search.SearchResult:
        """Search visible messages: the rows, the route that answered, the query's notes.

        Routes in ``hermes_fts.search.run``; the filters are SQL conditions
        (``search.SearchRequest``).  ``route`` (``fts5``, ``fts_cjk``, ``trigram`` or
        ``like_scan``) runs the search as if that route's index were the only one, plus
        the LIKE scan (``hermes-fts bench``).  A damaged index found on the way is
        detached and the search answered by the route that then answers
        (``like_scan_fts_stale``).  Time words ("last week") rank matches from then first,
        counted from ``now`` (Unix seconds or ISO).  ``marks`` go around matches.
        """
        request = search.SearchRequest(
            query,
            source_filter=source_filter,
            exclude_sources=exclude_sources,
            role_filter=role_filter,
            limit=limit,
            offset=offset,
            sort=sort,
            include_inactive=include_inactive,
            fields=fields,
            route=route,
            after=after,
            before=before,
            exclude_session_ids=exclude_session_ids,
            archived_only_session_ids=archived_only_session_ids,
            now=now,
            marks=marks,
        )
        # Rows written by processes without the extension reach the index first.
        self._sync_if_written(self._seen.token())
        try:
            with _one_snapshot(self._conn):  # the index and its pending log agree
                fresh = self._seen.token()
                found = search.run(self._conn, self._seen.state(fresh), request)
                problem = self._damage_behind_empty(found, fresh)
        except sqlite3.DatabaseError as exc:
            if _sqlite.interrupted(exc):  # Ctrl-C inside a SQL function of ours
                raise KeyboardInterrupt from exc
            if not self._is_index_corruption(exc):
                raise
            problem = str(exc)
        if problem is None:
            return found
        self._mark_fts_stale(problem)
        # A read-only store cannot record it; the search is told directly.
        damaged = {**self._seen.state(self._seen.token()), "fts_stale": True}
        found = search.run(self._conn, damaged, request)
        # Said with the answer: a read-only caller (the plugin) has no other sign.
        said = f"a search index is damaged ({problem}), so an exact scan answered; {_REPAIR}"
        return dataclasses.replace(found, notes=(*found.notes, said))

    def _damage_behind_empty(self, found: SearchResult, token: tuple[int, int]) -> str | None:
        """What is wrong with the index that answered nothing, else None.

        Pages zeroed by hand read as no match rather than an error, so an empty
        answer from an index is checked by its lookups (``health.probe`` without the
        row counts, which read every row), once per change of the file."""
        index = _ANSWERING_INDEX.get(found.route)
        if found.rows or index is None:
            return None
        if self._probed is None or self._probed[0] != (token, index):
            broken = index_state.damaged(
                self._conn, self._caps, full=False, only=index, lookups_only=True
            )
            self._probed = ((token, index), broken.get(index))
        return self._probed[1]

    def search_messages(
        self,
        query: Any,
        source_filter: Sequence[str] | None = None,
        exclude_sources: Sequence[str] | None = None,
        role_filter: Any = None,
        limit: int = 20,
        offset: int = 0,
        sort: str | None = None,
        include_inactive: bool = False,
        fields: Any = None,
        *,
        route: str | None = None,
        after: float | None = None,
        before: float | None = None,
        exclude_session_ids: Sequence[str] | None = None,
        archived_only_session_ids: Sequence[str] | None = None,
        now: float | str | None = None,
        marks: tuple[str, str] | None = None,
    ) -> list[dict[str, Any]]:
        """The rows of ``search`` (same arguments), for callers that need only those."""
        return self.search(
            query, source_filter, exclude_sources, role_filter, limit, offset, sort,
            include_inactive, fields, route=route, after=after, before=before,
            exclude_session_ids=exclude_session_ids,
            archived_only_session_ids=archived_only_session_ids, now=now, marks=marks,
        ).rows  # fmt: skip

    @staticmethod
    def query_notes(query: Any) -> list[str]:
        """What searching for ``query`` changes in it and why (and a refusal's reason)."""
        return search_request.query_notes(query)

    @staticmethod
    def time_windows(query: Any, now: Any = None) -> tuple[tuple[float, float], ...]:
        """The spans (Unix seconds, ``[lo, hi)``) the time words of ``query`` name,
        counted from ``now``, whose rows a search puts first; empty without any."""
        return search_request.time_windows(query, now)

    @staticmethod
    def words_held(query: str, matched: Sequence[str]) -> tuple[list[str], list[str], list[str]]:
        """The words of ``query`` as written that a row with ``matched_terms`` holds
        whole, in part, or not at all (``query.best.words_held``)."""
        return _words_held(SessionStore._held_reading(query, matched), matched)

    @staticmethod
    def parts_held(query: str, matched: Sequence[str]) -> list[tuple[str, list[str]]]:
        """The words of ``query`` a row with ``matched_terms`` holds in part, each with
        the runs of it as written that the row holds (``query.best.parts_held``)."""
        return _parts_held(SessionStore._held_reading(query, matched), matched)

    @staticmethod
    def _held_reading(query: str, matched: Sequence[str]) -> Query:
        """The reading of ``query`` a row with ``matched_terms`` answers."""
        search_request.check_query(query)  # 5 failed on str methods inside; None finds nothing
        query = query or ""
        # Only a partial row asks, so a short CJK word alone was read as a sentence.
        parsed = parse_query(query, sentence=reads_as_sentence(query))
        held = _words_held(parsed, matched)
        other = None if held[0] or held[1] else search_request.other_words(query)
        # the row is an answer to that reading: name its words
        return parse_query(other) if other is not None else parsed

    def describe_search_path(self, query: Any) -> str:
        """The route a search for ``query`` would take now (fts5, fts_cjk, trigram,
        like_scan, …), without running it; ``search(...).route`` is the one that answered."""
        return search_route.describe_search_path(self._seen.state(self._seen.token()), query)

    # ---------------------------------------------------------------- closing

    def close(self) -> None:
        try:
            self._conn.close()
        except sqlite3.Error as exc:
            logger.debug("closing %s failed: %s", self._path, exc)

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_sharing.one_thread_at_a_time(SessionStore, also=("_write",))
