"""optimize-storage's steps, in order (docs/DESIGN.md §5.6): check and repair every
index, backfill, fill the time table, apply the CJK queue, measure rank bounds,
then merge segments and VACUUM, with room held for Hermes while it runs and
given back when the disk fills.  ``SessionStore.optimize_storage`` checks that
it may write and calls ``run``; the store's own steps come in as ``Hooks``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import time
from dataclasses import dataclass
from typing import Any, Callable

from .. import _sharing, _sqlite, loader
from ..content import INDEXED_COLUMNS, indexed_text_sql
from . import lifecycle as index_state
from . import maintain as indexing
from . import old_layout, rank_bounds, schema, space, time_table

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
    ``SessionStore.optimize_storage``); one at a time per store."""
    with contextlib.ExitStack() as held:
        try:
            held.enter_context(_sharing.run_lock(path))
        except _sharing.RunBusy as exc:
            return {"ok": False, "reason": "another_run", "detail": str(exc), "vacuumed": None}
        # Other writers' pages still in the WAL go to the main file first, so
        # neither size counts them twice or as ours (DESIGN §5.6).
        _sqlite.shrink_wal(conn)
        before = space.file_sizes(path)
        try:
            with space.held_room(path):  # given back before the clean-up below
                phases = indexing.Phases(progress)
                result = _steps(conn, caps, path, hooks, phases, vacuum, pacing)
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
    if vacuum:  # until the VACUUM below, the store's compaction is left to do
        with indexing.write_txn(conn):
            indexing.set_meta(conn, schema.META_COMPACTION, int(time.time()))
    hooks.sync()  # a backlog an open left (the CLI's), now with the room held
    emit("repair")
    unchecked = checks_kept_waiting(conn, caps, path)
    repaired = index_state.repair(conn, caps, emit.counted("repair"), unchecked=unchecked)
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
    if caps.cjk and loader.has_row_evidence(conn, schema.CJK) and rank_bounds.to_build(conn):
        emit("rank_bounds")
        measured = rank_bounds.build(conn, emit.counted("rank_bounds"))
    hooks.forget()
    held = hermes_kept_waiting(conn, path) if vacuum else None
    if vacuum and held is None:
        emit("vacuum")
        _merge_and_vacuum(conn, caps, path)
    emit("done")
    logger.info("storage optimization complete")
    ok: dict[str, Any] = {"ok": True, "vacuumed": (held is None) if vacuum else None}
    ok["repaired"] = repaired
    if unchecked:  # the lookup probe and the row count checked them instead
        ok["check_left"] = (
            f"FTS5's integrity-check of {', '.join(sorted(unchecked))} would hold the store "
            f"for about {max(unchecked.values()):.0f} s, longer than Hermes waits to save a "
            f"message (about {HERMES_WRITE_PATIENCE_S:.0f} s), and another process has the "
            "store open; the lookup probe checked it instead. Run optimize-storage again "
            "while Hermes is stopped for the full check"
        )
        logger.warning("optimize-storage: %s", ok["check_left"])
    if held is not None:  # its compaction mark stays: status says it is left to do
        ok["vacuum_left"] = vacuum_left_text(held)
        logger.warning("optimize-storage: %s", ok["vacuum_left"])
    return {**ok, "rank_bounds_measured": measured}


def has_work(conn: sqlite3.Connection, caps: index_state.Capabilities) -> bool:
    """Whether a run, VACUUM apart, would change the store: a ``needs_optimize`` code,
    or a step status leaves out of them (a time table never made, rank bounds never
    measured on a store too small for ``rank_bounds.behind``), so ``--no-vacuum``
    never says "nothing to do" before a run that fills them."""
    if index_state.optimize_needed(conn, caps):
        return True
    if time_table.state(conn)["status"] == "absent":
        return True
    return bool(
        caps.cjk and loader.has_row_evidence(conn, schema.CJK) and rank_bounds.to_build(conn)
    )


# Hermes Agent 0.19.0 retries a locked write about 15 times, a second apart, and
# then loses the message; the merge and the VACUUM each hold the write lock for
# one statement, so a longer one while Hermes has the store open could cost one.
HERMES_WRITE_PATIENCE_S = 10.0


def vacuum_left_text(seconds: float) -> str:
    """Why a run leaves the merge and VACUUM (``hermes_kept_waiting``'s ``seconds``)."""
    return (
        f"the index merge and VACUUM would hold the store for about {seconds:.0f} s, longer "
        f"than Hermes waits to save a message (about {HERMES_WRITE_PATIENCE_S:.0f} s), and "
        "another process has the store open; run optimize-storage again while Hermes "
        "is stopped"
    )


def hermes_kept_waiting(conn: sqlite3.Connection, path: str | os.PathLike[str]) -> float | None:
    """The seconds the merge and VACUUM would hold the write lock, when that is longer
    than Hermes waits and another process has the store open; else None.  Where
    that cannot be told (not Linux), they run as before."""
    seconds = _sqlite.db_bytes(conn) / VACUUM_BYTES_PER_S
    if seconds <= HERMES_WRITE_PATIENCE_S or _sharing.open_elsewhere(path) is not True:
        return None
    return seconds


# FTS5's integrity-check (rank = 1) reads every block of an index and tokenizes its
# messages again in one statement, which holds the write lock throughout: about
# 65 MB of index a second measured here, half of that assumed for slower machines.
INTEGRITY_BYTES_PER_S = 32 * 1024 * 1024


def checks_kept_waiting(
    conn: sqlite3.Connection, caps: index_state.Capabilities, path: str | os.PathLike[str]
) -> dict[str, float]:
    """The indexes whose integrity-check would hold the write lock longer than Hermes
    waits, with its seconds, when another process has the store open; else none.
    Where that cannot be told (not Linux), every check runs as before."""
    if _sharing.open_elsewhere(path) is not True:
        return {}
    seconds = {
        index: (indexing.index_bytes(conn, index) or 0) / INTEGRITY_BYTES_PER_S
        for index in index_state.usable_indexes(conn, caps)
    }
    return {index: s for index, s in seconds.items() if s > HERMES_WRITE_PATIENCE_S}


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
    with indexing.write_txn(conn):
        indexing.delete_meta(conn, schema.META_COMPACTION)


# --------------------------------------------------------------------------
# --dry-run: what a run will add and how long it will take, before it starts

# An index's size as a multiple of the text once merged and VACUUMed
# (benchmarks/README.md, "Storage"); without the VACUUM the pages it
# frees stay in the file and a build's chunks are larger (space.BUILD_X_TEXT).
FINAL_X_TEXT = {schema.BASE: 0.71, schema.TRIGRAM: 3.1, schema.CJK: 1.25}
_TOKENIZE = {
    schema.BASE: schema.WORD_TOKENIZE,
    schema.TRIGRAM: "trigram",
    schema.CJK: schema.CJK_TOKENIZE,
}
SAMPLE_ROWS = 2000
# A run's chunked build and merge against the sample's one insert: about
# even at 100k messages (benchmarks/README.md, "Storage").
BUILD_OVERHEAD = 1.0
VACUUM_BYTES_PER_S = 100 * 1024 * 1024
_FREE_PRAGMAS = ("freelist_count", "page_size")


def estimate(
    conn: sqlite3.Connection,
    caps: index_state.Capabilities,
    path: str | os.PathLike[str],
    vacuum: bool,
) -> dict[str, Any]:
    """What a run would do, read without writing the store: the indexes it builds
    and drops, the bytes it adds to the file (negative: gives back), its
    seconds (a sample of the messages tokenized in memory, scaled up), and
    the peak free space it needs (``optimize_room``'s, from the measures taken here:
    the damage probe and the text and index sizes are full scans on a large store)."""
    shares = index_state.rebuild_shares(conn, caps, index_state.damaged(conn, caps, full=False))
    builds = list(shares)
    text = indexing.text_bytes(conn)
    sizes = {k: v["bytes"] for k, v in indexing.index_sizes(conn, text).items()}
    dropped = _dropped(conn, caps, sizes)
    drops = list(dropped)
    # A fill an interrupted run left counts only its rows still to copy, as a backfill does.
    time_rows = time_table.rows_to_fill(conn)
    # The changes other writers left, which a run applies before anything else.
    waiting, pending = index_state.backlog(conn, caps, builds)
    # With Hermes holding the store open, a run leaves a merge and VACUUM longer than
    # Hermes waits: none of their bytes nor time, said instead of "gives back".
    held = hermes_kept_waiting(conn, path) if vacuum else None
    compacts = vacuum and held is None
    if compacts:  # the whole index once merged, less what it holds now (below)
        added = sum(int(FINAL_X_TEXT[i] * text) for i in builds)
    else:  # the chunks still to add
        added = sum(int(space.BUILD_X_TEXT[i] * text * shares[i]) for i in builds)
    added += space.TIME_ROW_BYTES * time_rows
    added += int((FINAL_X_TEXT if compacts else space.BUILD_X_TEXT)[schema.CJK] * pending)
    if compacts:  # what the rebuilt and dropped indexes held goes with the VACUUM
        added -= sum(sizes.get(i, 0) for i in builds) + sum(dropped.values())
        # and so do the pages the file holds free already (deleted sessions, a
        # dropped index): without them a store that shrinks was said to grow.
        free_pages, page = (conn.execute(f"PRAGMA {p}").fetchone()[0] for p in _FREE_PRAGMAS)
        added -= free_pages * page
    work = {i: text * shares[i] for i in builds} | ({schema.CJK: pending} if pending else {})
    seconds = sum(size * _seconds_per_byte(conn, i) for i, size in work.items()) * BUILD_OVERHEAD
    if compacts:
        seconds += (_sqlite.db_bytes(conn) + max(added, 0)) / VACUUM_BYTES_PER_S
    need = space.need(
        conn,
        path,
        shares,
        vacuum=vacuum,
        time_rows=time_rows,
        text=text,
        sizes=sizes,
        pending=pending,
    )
    free = space.run_free_bytes(conn, path)
    temp_short = space.temp_shortfall(path, need.temp) if need.temp else None
    return {
        "builds": builds,
        "fills": _fills(conn, caps, builds),
        "applies": waiting,
        "drops": drops,
        "text_bytes": text,
        "adds_bytes": added,
        "seconds": round(seconds, 3),
        "peak_free_bytes": need.total,
        "free_bytes": free,
        "fits": free >= need.total and temp_short is None,
        "temp_room": temp_short,
        "vacuum": vacuum,
        "vacuum_left": None if held is None else vacuum_left_text(held),
    }


def _fills(
    conn: sqlite3.Connection, caps: index_state.Capabilities, builds: list[str]
) -> list[str]:
    """Not indexes, but steps that add to the file: named, so "build: nothing" is
    not all a run that adds a time table and rank bounds says."""
    return ([] if time_table.ready(conn) else ["time_table"]) + (
        ["rank_bounds"]
        if caps.cjk
        and _measures_words(conn)
        # a build forgets its index's bounds: the word index's too, measured with the CJK's
        and (any(i in builds for i in rank_bounds.INDEXES) or rank_bounds.to_build(conn))
        else []
    )


def _dropped(
    conn: sqlite3.Connection, caps: index_state.Capabilities, sizes: dict[str, int]
) -> dict[str, int]:
    """The indexes a run drops, with the bytes they hold (``sizes``: the live tables'):
    a word or trigram index not kept, a build of one (``_next``) included (cut
    short after the opt-out it is no live table, yet the run drops it as well)."""
    kept = {
        schema.BASE: index_state.word_policy()[0],
        schema.TRIGRAM: index_state.trigram_policy(conn, caps)[0],
    }
    dropped = {}
    for index in (i for i, keep in kept.items() if not keep):
        half = indexing.index_bytes(conn, schema.build_name(index))
        if index in sizes or half is not None:
            dropped[index] = sizes.get(index, 0) + (half or 0)
    # And the indexes an older hermes-fts kept under Hermes' names, which the run
    # gives back first (``old_layout.give_back``; its CJK one where the tokenizer is).
    for name in old_layout.find(conn):
        if name.startswith(old_layout.CJK) and not loader.has_extension(conn):
            continue
        held = indexing.index_bytes(conn, name)
        if held is not None:
            dropped[name] = held
    return dropped


def _measures_words(conn: sqlite3.Connection) -> bool:
    """Whether the library can measure rank bounds (``loader.has_row_evidence``); a
    store whose CJK index the run builds first is asked through a TEMP table, where
    it said the run would measure none."""
    if schema.index_sql(conn, schema.CJK) is not None:
        return loader.has_row_evidence(conn, schema.CJK)
    probe = "hermes_fts_dry_probe"
    conn.execute(
        f"CREATE VIRTUAL TABLE temp.{probe} USING fts5(x, tokenize='{_TOKENIZE[schema.CJK]}')"
    )
    try:
        return loader.has_row_evidence(conn, probe)
    finally:
        conn.execute(f"DROP TABLE temp.{probe}")


def _seconds_per_byte(conn: sqlite3.Connection, index: str) -> float:
    """Seconds to index one byte of text into ``index``: a sample of messages from
    a third of the way in, tokenized into an in-memory table that is then dropped."""
    table = f"temp.hermes_fts_dry_{index}"
    columns = ", ".join(INDEXED_COLUMNS)
    values = ", ".join(indexed_text_sql(c) for c in INDEXED_COLUMNS)
    rows = conn.execute(
        f"SELECT {values} FROM main.messages WHERE id >= "
        "(SELECT min(id) + (max(id) - min(id)) / 3 FROM main.messages) "
        f"ORDER BY id LIMIT {SAMPLE_ROWS}"
    ).fetchall()
    sample = sum(len(str(v or "").encode()) for row in rows for v in row)
    if not sample:
        return 0.0
    conn.execute(
        f"CREATE VIRTUAL TABLE {table} USING fts5({columns}, tokenize='{_TOKENIZE[index]}')"
    )
    try:
        start = time.perf_counter()
        conn.executemany(
            f"INSERT INTO {table}({columns}) VALUES ({', '.join('?' * len(INDEXED_COLUMNS))})", rows
        )
        return (time.perf_counter() - start) / sample
    finally:
        conn.execute(f"DROP TABLE {table}")
