"""optimize-storage's steps, in order (docs/DESIGN.md §5.6): check and repair every
index, backfill, fill the time table, apply the CJK queue, measure rank bounds,
then merge segments and VACUUM, with room held for Hermes while it runs and
given back when the disk fills.  ``SessionStore.optimize_storage`` checks that
it may write and calls ``run``; the store's own steps come in as ``Hooks``.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from dataclasses import dataclass
from typing import Any, Callable

from .. import _sqlite, loader
from . import lifecycle as index_state
from . import maintain as indexing
from . import rank_bounds, schema, space, time_table

logger = logging.getLogger("hermes_fts.store")


@dataclass(frozen=True)
class Hooks:
    """What only the store can do: drive its backfills (``SessionStore.backfill``),
    apply the CJK queue (``sync``), and drop its cached index state (``forget``)."""

    backfill: Callable[..., None]
    sync: Callable[[], int]
    forget: Callable[[], None]


def run(
    conn: sqlite3.Connection,
    caps: index_state.Capabilities,
    path: str | os.PathLike[str],
    hooks: Hooks,
    progress: indexing.Progress | None,
    vacuum: bool,
    pacing: dict[str, Any],
) -> dict[str, Any]:
    """One optimize-storage run over a store opened for writing (the result:
    ``SessionStore.optimize_storage``)."""
    # Other writers' pages still in the WAL go to the main file first, so
    # neither size counts them twice or as ours (DESIGN §5.6).
    _sqlite.shrink_wal(conn)
    before = space.file_sizes(path)
    try:
        with space.held_room(path):  # given back before the clean-up below
            result = _steps(conn, caps, path, hooks, indexing.Phases(progress), vacuum, pacing)
    except Exception as exc:
        if not space.out_of_room(exc):
            raise
        logger.warning("optimize-storage stopped, the disk is full: %s", exc)
        space.give_back(conn)
        result = {"ok": False, "reason": "disk_full", "detail": str(exc), "vacuumed": False}
    finally:
        hooks.forget()
        _sqlite.shrink_wal(conn)
    after = space.file_sizes(path)
    sizes = zip(("size_before", "wal_before", "size_after", "wal_after"), (*before, *after))
    return {**result, **dict(sizes)}


def _steps(
    conn: sqlite3.Connection,
    caps: index_state.Capabilities,
    path: str | os.PathLike[str],
    hooks: Hooks,
    emit: indexing.Phases,
    vacuum: bool,
    pacing: dict[str, Any],
) -> dict[str, Any]:
    """The steps, in order; raises NoRoom before the disk is full."""
    emit("repair")
    repaired = index_state.repair(conn, caps, emit.counted("repair"))
    hooks.forget()
    emit.job = indexing.BackfillJob(conn)
    emit("backfill")

    def chunk_done() -> None:
        space.keep_reserve(path)
        emit("backfill")

    remaining = _build(conn, path, hooks, chunk_done, emit, **pacing)
    if remaining is not None:
        logger.warning("optimize-storage: backfill incomplete: %s", remaining)
        return {"ok": False, "reason": "backfill_incomplete", "vacuumed": None}
    measured: dict[str, int] = {}
    if caps.cjk and loader.has_row_evidence(conn, schema.BASE) and rank_bounds.to_build(conn):
        emit("rank_bounds")
        measured = rank_bounds.build(conn, emit.counted("rank_bounds"))
    hooks.forget()
    if vacuum:
        emit("vacuum")
        _merge_and_vacuum(conn, caps, path)
    emit("done")
    logger.info("storage optimization complete")
    ok = {"ok": True, "vacuumed": True if vacuum else None, "repaired": repaired}
    return {**ok, "rank_bounds_measured": measured}


def _build(
    conn: sqlite3.Connection,
    path: str | os.PathLike[str],
    hooks: Hooks,
    on_chunk: Callable[[], None],
    emit: indexing.Phases,
    *,
    sleep: indexing.Sleep,
    chunk_rows: int,
    min_pause: float,
    txn_target: float | None,
) -> Any:
    """Backfill every index, fill the time table, apply the CJK queue; what is left."""
    pacing: dict[str, Any] = {"sleep": sleep, "chunk_rows": chunk_rows, "min_pause": min_pause}
    hooks.backfill(on_chunk=on_chunk, txn_target=txn_target, **pacing)
    # The time table: its triggers came with repair, the rows now.
    filled, ids = emit.counted("time"), [0]

    def time_chunk() -> None:
        space.keep_reserve(path)
        window = time_table.state(conn)
        ids[0] = window["total"] or ids[0]  # the last chunk closes the window
        if ids[0]:
            filled((window["filled"] or 0) if window["total"] else ids[0], ids[0])

    if time_table.needs_work(conn):
        emit("time")
        time_chunk()
    time_table.drive_fill(conn, on_chunk=time_chunk, txn_target=txn_target, **pacing)
    hooks.sync()
    return indexing.backfill_progress(conn)


def _merge_and_vacuum(
    conn: sqlite3.Connection, caps: index_state.Capabilities, path: str | os.PathLike[str]
) -> None:
    """Deleted rows' tokens go with the merge, their pages with VACUUM; raises
    NoRoom, before either starts, when the disk cannot hold their peak."""
    _sqlite.shrink_wal(conn)
    space.check_vacuum_room(conn, path)
    index_state.merge_segments(conn, caps)
    _sqlite.shrink_wal(conn)  # the merge's pages, before VACUUM writes its copy
    conn.execute("VACUUM")
