"""``SessionStore``'s administration: backfill, optimize-storage and its estimate,
checks of the indexes, ``status``, sizes, and removing what hermes-fts made.

A mixin, as ``transcript.Views`` and ``writes.Writes`` are: every method works on
the store's connection and index state; the commands in ``cli/admin.py`` are
the layer over it.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from . import _env, _sqlite, loader
from ._params import check_callable
from ._sqlite import StoreError
from .index import lifecycle, removal, schema, space
from .index import maintain as indexing
from .index.schema import CJK
from .index.status import status_report

if TYPE_CHECKING:
    import sqlite3

__all__ = ["Admin"]


class Admin:
    """How ``SessionStore`` keeps, checks and reports its indexes."""

    _conn: sqlite3.Connection
    _path: Path
    _file: str | None  # the real path of the main file
    _seen: lifecycle.StateCache
    readonly: bool
    fts5_available: bool
    cjk_available: bool
    _align_base: Callable[[], None]
    sync: Callable[[], int]
    index_state: Callable[[], dict[str, Any]]
    rebuild_status: Callable[[], dict[str, Any] | None]

    if TYPE_CHECKING:  # SessionStore's properties

        @property
        def _caps(self) -> lifecycle.Capabilities: ...

        @property
        def path(self) -> str | None: ...

    def backfill(
        self,
        index: str | None = None,
        *,
        sleep: indexing.Sleep = time.sleep,
        chunk_rows: int = indexing.CHUNK_ROWS,
        min_pause: float = indexing.MIN_PAUSE,
        on_chunk: Callable[[], None] | None = None,
        txn_target: float | None = indexing.TXN_TARGET_S,
    ) -> None:
        """Drive pending backfills (all indexes this process can write) to completion.

        Pacing: ``indexing.drive_backfill``."""
        self._align_base()
        try:
            for name in lifecycle.backfill_targets(self._conn, self._caps, index):
                indexing.drive_backfill(
                    self._conn,
                    name,
                    sleep=sleep,
                    chunk_rows=chunk_rows,
                    min_pause=min_pause,
                    on_chunk=on_chunk,
                    txn_target=txn_target,
                )
        finally:
            self._seen.forget()

    def optimize_needed(self) -> bool:
        return lifecycle.optimize_needed(self._conn, self._caps)

    def optimize_has_work(self) -> bool:
        """Whether an ``optimize_storage`` run without VACUUM changes anything
        (``optimize.has_work``); reads only."""
        from .index import optimize  # a search never needs it

        return optimize.has_work(self._conn, self._caps)

    def damaged_indexes(self) -> dict[str, str]:
        """Served indexes that fail the lookup probe (``health.probe``), and a time table
        or rank bounds whose rows are wrong (their ``damage``), with why; reads only."""
        found = lifecycle.damaged(self._conn, self._caps, full=False)
        return {**found, **lifecycle.tables_damage(self._conn)}

    @property
    def _on_disk(self) -> str | Path:
        """Where the store's bytes are: the file a symlink names, beside which SQLite
        keeps the -wal and on whose disk the room is counted and held."""
        return self._file or self._path

    def optimize_room(self, vacuum: bool = True) -> dict[str, int]:
        """Free disk bytes an ``optimize_storage`` run needs at its peak, and has
        (``lifecycle.optimize_room``)."""
        return lifecycle.optimize_room(self._conn, self._caps, self._on_disk, vacuum)

    def vacuum_temp_shortfall(self, temp_need: int) -> str | None:
        """Why VACUUM's temporary copy (``optimize_room``'s ``temp_need``) would not fit
        in SQLite's temporary folder on another disk, else None (``space.temp_shortfall``)."""
        return space.temp_shortfall(self._on_disk, temp_need) if temp_need else None

    def optimize_estimate(self, vacuum: bool = True) -> dict[str, Any]:
        """What ``optimize_storage`` would add, build, drop and take, without running
        it (``optimize.estimate``); the file is not changed."""
        from .index import optimize  # a search never needs it

        return optimize.estimate(self._conn, self._caps, self._on_disk, vacuum)

    def optimize_storage(
        self,
        progress: indexing.Progress | None = None,
        vacuum: bool = True,
        *,
        sleep: indexing.Sleep = time.sleep,
        chunk_rows: int = indexing.CHUNK_ROWS,
        min_pause: float = indexing.MIN_PAUSE,
        txn_target: float | None = indexing.TXN_TARGET_S,
    ) -> dict[str, Any]:
        """Check, repair, upgrade and backfill every index, then VACUUM (DESIGN §5.6).

        Every step is its own transaction (see ``indexing``), so an
        interrupted run resumes where it stopped.  Returns ``ok``,
        ``vacuumed``, what was ``repaired`` (damaged indexes, with what was
        wrong), the tokens ``rank_bounds_measured`` per index (none when
        they were current), and the main file and ``-wal`` sizes before and
        after (``size_*``, ``wal_*``); or ``ok: False`` with a ``reason``.
        A disk too full to go on ends the run with the room given back
        (``space.give_back``), never with the disk full.
        """
        check_callable(progress, "progress")
        check_callable(sleep, "sleep", none=False)
        if self.readonly:
            return {"ok": False, "reason": "read_only", "vacuumed": None}
        if not self.fts5_available:
            return {"ok": False, "reason": "fts5_unavailable", "vacuumed": None}
        self._align_base()
        pacing = {
            "sleep": sleep,
            "chunk_rows": chunk_rows,
            "min_pause": min_pause,
            "txn_target": txn_target,
        }
        from .index import optimize

        hooks = optimize.Hooks(self.backfill, self.sync, self._seen.forget)
        return optimize.run(self._conn, self._caps, self._on_disk, hooks, progress, vacuum, pacing)

    def integrity_check(self) -> dict[str, str | None]:
        """FTS5 'integrity-check' per existing, usable index: None means it passed."""
        if self.readonly:  # FTS5 runs the check (which changes nothing) as a write
            raise PermissionError(
                f"{self._path} is open read-only and FTS5's integrity-check is a write "
                "statement (it changes nothing): check on a store opened with readonly=False"
            )
        return {
            index: indexing.integrity_check(self._conn, index)
            for index in lifecycle.usable_indexes(self._conn, self._caps)
        }

    def disk_bytes(self) -> int:
        """What the store takes on disk now: its main file plus its ``-wal`` file."""
        return _sqlite.file_bytes(self._on_disk)

    def file_sizes(self) -> tuple[int, int]:
        """Bytes on disk of the main file and of the ``-wal`` file, apart."""
        return space.file_sizes(self._on_disk)

    def search_objects(self) -> dict[str, Any]:
        """What ``remove_search_objects`` would drop: names and bytes, the same keys."""
        found = removal.objects(self._conn)
        kinds: dict[str, int] = {}
        for kind, _ in found:
            kinds[kind] = kinds.get(kind, 0) + 1
        names = [name for _, name in found]
        return {"removed": kinds, "names": names, "freed_bytes": removal.removed_bytes(self._conn)}

    def remove_search_objects(self) -> dict[str, Any]:
        """Drop every object hermes-fts made in this store (``index.removal``): their
        count by kind, their names, and the bytes they took (None without dbstat)."""
        if self.readonly:
            raise PermissionError(f"{self._path} is open read-only")
        if not self.cjk_available and schema.index_sql(self._conn, CJK) is not None:
            # FTS5 opens a table to drop it, with the table's tokenizer.
            raise StoreError(
                "the CJK index can be dropped only where the hermes-fts extension loads, "
                "and it did not load here (is HERMES_CJK_FTS=0 set?); nothing was removed"
            )
        found = self.search_objects()
        removal.remove(self._conn)
        self._seen.forget()
        return found

    def status(self, progress: indexing.Progress | None = None) -> dict[str, Any]:
        """Everything ``hermes-fts status`` reports (``index.status.status_report``)."""
        check_callable(progress, "progress")
        return status_report(
            self._conn,
            self.index_state(),
            indexing.backfill_progress(self._conn, messages=True),  # status' counts: messages
            self.path,
            self.disk_bytes(),
            extension={
                "loaded": self.cjk_available,
                "strategy": loader.load_strategy(),
                "disabled": _env.cjk_extension_disabled(),
                "error": None if self.cjk_available else getattr(self, "_load_error", None),
            },
            progress=progress,
            damage=self.damaged_indexes(),
        )
