"""Disk room for optimize-storage: what a run needs at its peak, and giving room back.

A run that fills the disk leaves Hermes Agent unable to save a message
("database or disk is full"), so optimize-storage refuses before it starts
when its peak does not fit, holds room for Hermes while it runs and stops a step
before the disk is full (``reserve``), and after any failure gives back what it can: the
half-built ``_next`` tables' pages go to the free list (Hermes' next writes
reuse them) and the ``-wal`` file is truncated (DESIGN §5.6).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from .. import _sharing, _sqlite
from . import maintain as indexing
from . import schema

logger = logging.getLogger("hermes_fts.index.space")

__all__ = [
    "RESERVE",
    "reserve",
    "Need",
    "NoRoom",
    "file_sizes",
    "free_bytes",
    "run_free_bytes",
    "give_back",
    "vacuum_need",
    "vacuum_need_now",
    "check_vacuum_room",
    "check_merge_room",
    "temp_elsewhere",
    "temp_shortfall",
    "need",
    "keep_reserve",
    "give_back_left_room",
    "left_room",
    "held_room",
    "room_while_applying",
    "out_of_room",
]

# Held for Hermes' own writes (its WAL, its -shm) and our clean-up while a run
# lasts, as a file next to the store (``held_room``), freed first on a failure:
# a quarter of the main file, within these bounds (``reserve``).
RESERVE = 8 * 1024 * 1024
RESERVE_MIN = 256 * 1024
ROOM_SUFFIX = "-hermes-fts-room"
# Upper bounds of an index's size as a multiple of the text it indexes, when
# built chunk by chunk (before the merge and VACUUM make it smaller): about
# 1.4 times what benchmarks/README.md measures on compacted stores.
BUILD_X_TEXT = {schema.BASE: 1.0, schema.TRIGRAM: 4.5, schema.CJK: 1.75}
TIME_ROW_BYTES = 64  # a time-table row and its index entry


class NoRoom(Exception):
    """The disk has not enough room for the next step; nothing was left half done."""


@dataclass(frozen=True)
class Need:
    """Bytes a run needs free at its peak: ``build`` (the indexes and the time
    table it adds) and ``vacuum`` (the merge and VACUUM after it, 0 without) on
    the store's disk, and ``temp`` in VACUUM's temporary folder when that lies
    on another disk (``_sqlite.temp_dir``; not in ``total``)."""

    build: int
    vacuum: int
    reserve: int
    temp: int = 0

    @property
    def total(self) -> int:
        return self.build + self.vacuum + self.reserve


def file_sizes(path: str | os.PathLike[str]) -> tuple[int, int]:
    """``(main file, -wal file)`` bytes on disk; a missing file is 0."""
    sizes = []
    for name in (os.fspath(path), os.fspath(path) + "-wal"):
        try:
            sizes.append(os.stat(name).st_size)
        except OSError:
            sizes.append(0)
    return sizes[0], sizes[1]


def reserve(path: str | os.PathLike[str]) -> int:
    """Room held for Hermes while a run lasts: what its writes and our clean-up
    (a checkpoint of what the WAL holds) may need, scaled to the store."""
    return min(RESERVE, max(RESERVE_MIN, file_sizes(path)[0] // 4))


def free_bytes(path: str | os.PathLike[str]) -> int:
    return shutil.disk_usage(os.path.dirname(os.path.abspath(os.fspath(path))) or ".").free


def run_free_bytes(conn: sqlite3.Connection, path: str | os.PathLike[str]) -> int:
    """``free_bytes`` as a run will find it: its first checkpoint truncates the -wal
    file (a VACUUM killed outright leaves the store's size there), which gives
    back its bytes less the pages it adds to the main file.  A reader that keeps
    the WAL from being truncated leaves the run to stop at ``keep_reserve``."""
    main, wal = file_sizes(path)
    pages, size = (conn.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_count", "page_size"))
    # The room a killed run left is given back before the run's own check.
    return free_bytes(path) + max(0, wal - max(0, pages * size - main)) + left_room(path)


def temp_elsewhere(path: str | os.PathLike[str]) -> str | None:
    """VACUUM's temporary folder when it lies on another disk than the store's, else None."""
    try:
        here = os.stat(os.path.dirname(os.path.abspath(os.fspath(path)))).st_dev
        folder = _sqlite.temp_dir()
        return None if os.stat(folder).st_dev == here else folder
    except OSError:
        return None  # assume the worse: the copy is counted on the store's disk


def _temp_on_same_disk(path: str | os.PathLike[str]) -> bool:
    """Whether VACUUM's temporary copy lands on the store's file system."""
    return temp_elsewhere(path) is None


def temp_shortfall(path: str | os.PathLike[str], live: int) -> str | None:
    """Why VACUUM's temporary copy of ``live`` bytes does not fit in its folder on
    another disk, else None: it failed there after a whole run's build, said to be
    the store's disk filling up."""
    folder = temp_elsewhere(path)
    if folder is None:
        return None
    free = shutil.disk_usage(folder).free
    if free >= live:
        return None
    return (
        f"VACUUM's temporary copy needs about {live:,} bytes in {os.path.abspath(folder)} "
        f"(SQLite's temporary folder, on another disk than the store), which has {free:,} "
        "free; point SQLITE_TMPDIR at a folder with room"
    )


def vacuum_need(path: str | os.PathLike[str], live: int, biggest_index: int) -> int:
    """Free bytes the merge and VACUUM of a store of ``live`` bytes in use need.

    The merge writes the largest index anew (new pages, and the same in the
    WAL); VACUUM writes every page in use into the WAL, and its temporary
    copy too when the temporary folder is on this disk.
    """
    copies = 2 if _temp_on_same_disk(path) else 1
    return max(2 * biggest_index, copies * live)


def vacuum_need_now(conn: sqlite3.Connection, path: str | os.PathLike[str]) -> int:
    """``vacuum_need`` of the store as it is now (its pages in use, its largest index)."""
    sizes = (indexing.index_bytes(conn, index) or 0 for index in schema.INDEXES)
    return vacuum_need(path, _live_bytes(conn), max(sizes))


def _live_bytes(conn: sqlite3.Connection) -> int:
    """The store's pages in use: what VACUUM copies."""
    pages, free, size = (
        conn.execute(f"PRAGMA {name}").fetchone()[0]
        for name in ("page_count", "freelist_count", "page_size")
    )
    return int((pages - free) * size)


def check_vacuum_room(conn: sqlite3.Connection, path: str | os.PathLike[str]) -> None:
    """Raise NoRoom when the merge and VACUUM would not fit now, beside the room held,
    or VACUUM's temporary copy would not fit in its folder on another disk."""
    need, free = vacuum_need_now(conn, path), free_bytes(path)
    if free < need:
        raise NoRoom(f"the merge and VACUUM need about {need:,} bytes free, the disk has {free:,}")
    short = temp_shortfall(path, _live_bytes(conn))
    if short is not None:
        raise NoRoom(short)


def check_merge_room(conn: sqlite3.Connection, path: str | os.PathLike[str], index: str) -> None:
    """Raise NoRoom unless merging ``index`` leaves half the ``reserve`` free: a merge
    writes the index anew (new pages, and the same in the WAL) before the old go."""
    need = 2 * (indexing.index_bytes(conn, index) or 0) + reserve(path) // 2
    free = free_bytes(path)
    if free < need:
        raise NoRoom(f"merging {index} needs about {need:,} bytes free, the disk has {free:,}")


def need(
    conn: sqlite3.Connection,
    path: str | os.PathLike[str],
    rebuilds: dict[str, float],
    *,
    vacuum: bool,
    time_rows: int,
    text: int | None = None,
    sizes: dict[str, int] | None = None,
    pending: int = 0,
) -> Need:
    """The peak a run that builds ``rebuilds`` (each with the share of the text it
    has left to take, ``lifecycle.rebuild_shares``; the ``time_rows`` it adds
    to the time table, ``time_table.rows_to_fill``; and the ``pending`` bytes of
    text it applies to the CJK index, ``lifecycle.backlog``) needs; ``text`` and
    the index ``sizes`` are measured (full scans) unless given."""
    text = indexing.text_bytes(conn) if text is None else text
    built = {index: int(BUILD_X_TEXT[index] * text * share) for index, share in rebuilds.items()}
    applied = int(BUILD_X_TEXT[schema.CJK] * pending)
    growth = sum(built.values()) + applied + TIME_ROW_BYTES * time_rows
    if not vacuum:
        return Need(growth, 0, reserve(path))
    if sizes is None:
        sizes = {k: v["bytes"] for k, v in indexing.index_sizes(conn, text).items()}
    # A resumed backfill adds to what its index holds; a build from the start replaces it.
    sizes = sizes | {i: built[i] + (sizes.get(i, 0) if rebuilds[i] < 1 else 0) for i in built}
    if applied:
        sizes[schema.CJK] = sizes.get(schema.CJK, 0) + applied
    live = _sqlite.db_bytes(conn) + growth
    biggest = max(sizes.values(), default=0)
    temp = live if temp_elsewhere(path) is not None else 0
    return Need(growth, vacuum_need(path, live, biggest), reserve(path), temp)


def keep_reserve(path: str | os.PathLike[str]) -> None:
    """Between two steps: raise NoRoom once the disk has less than half the
    ``reserve`` free beside the room held."""
    _keep_half_free(path, holding=False)


def _keep_half_free(path: str | os.PathLike[str], *, holding: bool) -> None:
    """``keep_reserve``; ``holding``: before the room is taken, counting it as taken."""
    free, kept = free_bytes(path), reserve(path)
    if free - (kept if holding else 0) < kept // 2:
        # Not "before it is full": another program may have filled it already.
        first = f"only {free:,} bytes free on the disk"
        raise NoRoom(
            f"{first}: holding the {kept:,} kept for Hermes' own writes would leave under "
            "half of them beside; stopped to leave them that room"
            if holding
            else f"{first}, under half the {kept:,} kept for Hermes' own writes; stopped "
            "to leave them that room"
        )


@contextmanager
def held_room(path: str | os.PathLike[str]) -> Iterator[None]:
    """Hold ``reserve`` bytes of the disk in a file beside the store while the block
    runs; the file goes when the block ends, however it ends.  NoRoom, holding
    nothing, where half of them would not stay free beside (``keep_reserve``).

    Whatever else fills the disk meanwhile (another program, an estimate
    too low), the clean-up after a failure then has room to checkpoint the
    WAL into the main file, and Hermes has room to write.  A run killed
    outright leaves the file; the next write open gives it back
    (``give_back_left_room``).
    """
    room, size = os.fspath(path) + ROOM_SUFFIX, reserve(path)
    # One a killed run left may be another user's (root's): replaced, not rewritten.
    _remove(room)
    # Taken where half of it would not stay free beside, it left Hermes next to no
    # room until the first step's check (the same floor) gave it back.
    _keep_half_free(path, holding=True)
    try:
        with open(room, "wb") as out:  # written, so the blocks are taken (not sparse)
            for start in range(0, size, 1 << 16):
                out.write(bytes(min(1 << 16, size - start)))
    except OSError as exc:
        _remove(room)
        raise NoRoom(f"cannot hold {size:,} bytes for Hermes: {exc}") from exc
    try:
        yield
    finally:
        _remove(room)


@contextmanager
def room_while_applying(conn: sqlite3.Connection, path: str | None) -> Iterator[None]:
    """Hold the reserve (``held_room``) while a write open or ``sync`` applies a pending
    backlog of more than one batch: a disk another program fills between two batches
    then still has room to checkpoint the batches applied, which the WAL kept
    otherwise.  Held under the run lock, so a run's check and clean-up of the room
    file see it as live; inside a run (this thread holds the lock) the run's room
    serves, and beside another process' run or sync the batches go on without."""
    batch = indexing.PENDING_BATCH_IDS
    several = (
        path is not None
        and conn.execute(
            f"SELECT count(*) > ? FROM (SELECT DISTINCT msg_id FROM {schema.CJK_PENDING} LIMIT ?)",
            (batch, batch + 1),
        ).fetchone()[0]
    )
    if path is None or not several or _sharing.run_held(path):
        yield
        return
    with contextlib.ExitStack() as held:
        try:
            held.enter_context(_sharing.run_lock(path, "sync"))
        except _sharing.RunBusy:
            pass  # that run or sync holds the room file; keep_reserve still stops a batch
        else:
            held.enter_context(held_room(path))
        yield


def left_room(path: str | os.PathLike[str] | None) -> int:
    """Bytes of the room a run killed outright left beside ``path`` (``held_room``),
    which the next write open or run gives back; 0 when there is none or a live run
    holds it.  Reads only, so ``status`` and ``--dry-run`` can count it."""
    if path is None:
        return 0
    path = os.path.realpath(os.fspath(path))  # beside the file a symlink names
    try:
        size = os.stat(path + ROOM_SUFFIX).st_size
    except OSError:
        return 0
    return 0 if _sharing.run_alive(path) else size


def give_back_left_room(path: str | os.PathLike[str] | None) -> None:
    """Remove the room a run killed outright left beside ``path``, unless a run
    is alive (it holds the run lock), so Hermes has that room back."""
    if path is None:
        return
    path = os.path.realpath(os.fspath(path))  # beside the file a symlink names
    if not os.path.exists(path + ROOM_SUFFIX):
        return
    if os.name != "posix":  # no flock: a live run cannot be told from a dead one
        return
    try:
        # Held while removing: a run taking the lock meanwhile makes its room after.
        with _sharing.run_lock(path):
            _remove(os.fspath(path) + ROOM_SUFFIX)
    except _sharing.RunBusy:
        pass  # a live run's room, given back when it ends


def _remove(file: str) -> None:
    try:
        os.remove(file)
    except FileNotFoundError:
        pass
    except OSError as exc:  # the write that follows says what is wrong
        logger.debug("cannot remove %s: %s", file, exc)


def give_back(conn: sqlite3.Connection) -> None:
    """After a failed run: drop the half-built ``_next`` tables and truncate the WAL.

    Their pages join the free list, which the next writes (Hermes' too)
    reuse, and the WAL goes back to zero bytes.  ``secure_delete`` is off for
    the drop: it would write every freed page again, and the pages hold
    tokens of messages that exist, not deleted text.
    """
    if conn.in_transaction:
        conn.execute("ROLLBACK")
    _sqlite.shrink_wal(conn)
    conn.execute("PRAGMA secure_delete = OFF")
    try:
        with indexing.write_txn(conn):
            for index in schema.SWAPPED:
                if schema.building(conn, index):
                    schema.drop_build_objects(conn, index)
                    indexing.close_backfill_window(conn, index)
    except sqlite3.DatabaseError as exc:
        logger.warning("could not drop the half-built indexes: %s", exc)
    finally:
        conn.execute("PRAGMA secure_delete = ON")
    _sqlite.shrink_wal(conn)


def out_of_room(exc: BaseException) -> bool:
    """Whether ``exc`` says the disk is full (ours, or SQLite's "database or disk is full")."""
    if isinstance(exc, NoRoom):
        return True
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (_sqlite.SQLITE_FULL, SQLITE_IOERR)
    text = str(exc).lower()
    return "disk is full" in text or "disk i/o error" in text


SQLITE_IOERR = 10  # a write the file system refused; ENOSPC on some paths
