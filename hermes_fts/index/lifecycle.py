"""The state of each search index: what it is, whether it can be served, and repair.

``index_state`` reads what the file holds (exists, layout, served or why not,
the id range a backfill has not reached) without writing.  ``repair`` is
optimize-storage's first phase: it resets every index that is damaged, in
Hermes Agent's inline layout, missing, or stale, so the backfill can rebuild
it.  Aligning the indexes on open is ``align.py``'s.

Both take the ``Capabilities`` of this process's SQLite: whether FTS5, the
trigram tokenizer and cjk_unicode61 are available here.  ``trigram_policy``
and ``word_policy`` say whether the store keeps the opt-in trigram and word
indexes at all.
"""

from __future__ import annotations

import functools
import logging
import os
import sqlite3
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from .. import _env, loader
from . import maintain as indexing
from . import old_layout, pending, rank_bounds, schema, time_table
from .schema import BASE, CJK, TRIGRAM

logger = logging.getLogger("hermes_fts.index.lifecycle")

__all__ = [
    "Capabilities",
    "StateCache",
    "backfill_targets",
    "backlog",
    "damaged",
    "rebuild_shares",
    "index_state",
    "merge_segments",
    "optimize_needed",
    "optimize_room",
    "optimize_reasons",
    "repair",
    "trigram_policy",
    "unindexed_range",
    "usable_indexes",
    "word_policy",
]

NOT_KEPT = (
    "opt-in (HERMES_TRIGRAM_FTS=1); its queries take the CJK index or a LIKE scan, "
    "with the same rows"
)

# What answers a trigram index's queries where it is not kept (same rows).
TRIGRAM_INSTEAD = "fts_cjk where the CJK index is served and can answer, else like_scan (same rows)"

WORD_NOT_KEPT = (
    "opt-in (HERMES_WORD_FTS=1); the CJK index reads Latin words as unicode61 does, "
    "so its queries take the CJK index or a LIKE scan, with the same rows"
)
# What answers a word index's queries where it is not kept (same rows).
WORD_INSTEAD = (
    "fts_cjk where the CJK index is served (rows a process without the extension "
    "wrote are read by a LIKE scan until a hermes-fts write applies them), "
    "else like_scan (same rows)"
)


@dataclass(frozen=True)
class Capabilities:
    """What this process's SQLite can do: FTS5, the trigram tokenizer, cjk_unicode61.

    ``fold``: the loaded library has ``cjk_fold()``, so LIKE compares folded text.
    """

    fts5: bool
    trigram: bool
    cjk: bool
    fold: bool = False


class StateCache:
    """What one connection last read of the file, and when (``token``).

    ``token()`` changes whenever the file may differ from what was read:
    ``PRAGMA data_version`` changes when any other connection (another
    process, another store in this one, the sqlite3 shell, a plain sqlite3
    connection without the extension) commits, and ``total_changes`` counts
    every row this connection wrote itself, triggers included.  This
    connection's own schema work without row changes calls ``forget()``.
    ``synced`` is the token at the last pending-log sync (None: sync again).
    """

    def __init__(self, conn: sqlite3.Connection, caps: Capabilities) -> None:
        self.conn = conn
        self.caps = caps
        self.synced: tuple[int, int] | None = None
        self._read: tuple[tuple[Any, ...], dict[str, Any]] | None = None

    def token(self) -> tuple[int, int]:
        version = self.conn.execute("PRAGMA data_version").fetchone()[0]
        return int(version), self.conn.total_changes

    def state(self, token: tuple[int, int]) -> dict[str, Any]:
        """``index_state``, read again only when the file or the environment changed."""
        switches = (_env.trigram_enabled(), _env.trigram_forced())
        key = (*token, *switches, _env.word_enabled(), _env.word_forced())
        if self._read is not None and self._read[0] == key:
            return self._read[1]
        state = index_state(self.conn, self.caps)
        self._read = (key, state)
        return state

    def forget(self) -> None:
        """After this connection's own schema or maintenance work: read and sync again."""
        self._read = None
        self.synced = None


# --------------------------------------------------------------------------
# Reading the state


def _first_index_has(conn: sqlite3.Connection, check: Callable[[Any, str], bool]) -> bool:
    """An auxiliary-function check of ``loader`` on the first index that exists (none: False)."""
    table = next((i for i in schema.INDEXES if schema.index_sql(conn, i) is not None), None)
    return table is not None and check(conn, table)


# The CJK index's tokenizer options a state reports: (key, option, value that is on).
_CJK_OPTIONS = (
    ("variants", "variants", "1"),
    ("glue", "glue", "1"),
    ("kana", "kana", "1"),
    ("symbols", "symbols", "1"),
    ("diacritics", "remove_diacritics", "2"),
    ("compose", "compose", "1"),
    ("letters", "letters", "1"),
    ("selectors", "selectors", "1"),
)


def index_state(conn: sqlite3.Connection, caps: Capabilities) -> dict[str, Any]:
    """Per index: exists, served, reason, layout, unindexed range; plus flags."""
    stale = indexing.get_meta(conn, schema.META_FTS_STALE) is not None
    stale_reason = indexing.get_meta(conn, schema.META_FTS_STALE_REASON) if stale else None
    timing = time_table.state(conn)
    out: dict[str, Any] = {
        "fts_stale": stale,
        "fts_stale_reason": stale_reason,
        "fts5_available": caps.fts5,
        "trigram_available": caps.trigram,
        "cjk_available": caps.cjk,
        "cjk_fold": caps.cjk and caps.fold,
        "cjk_few_snippet": caps.cjk and _first_index_has(conn, loader.has_few_snippet),
        # hermes_fts_held() and hermes_fts_bm25(): which terms a row holds, in the
        # ranking pass; reading by blocks with rank bounds (search/topk.py).
        "row_evidence": caps.cjk and _first_index_has(conn, loader.has_row_evidence),
        "rank_bounds": rank_bounds.ready_tables(conn),
        "cjk_pending": pending.pending_count(conn),
        # The time table (time_table.TABLE) time sorts may walk, or None: only
        # once complete with its triggers in place.  The walk joins
        # `messages`, and a TEMP view in front of it has no index.
        "time_index": time_table.TABLE
        if timing["ready"]
        and conn.execute("SELECT 1 FROM temp.sqlite_master WHERE name = 'messages'").fetchone()
        is None
        else None,
        "time_table": timing,
        "message_id_max": conn.execute("SELECT max(id) FROM main.messages").fetchone()[0] or 0,
    }
    # Seen by a read-only open before a writer marks them stale (pending.py).  Only
    # the word and trigram indexes need it, and the scan is as long as the backlog.
    replaced = (
        pending.replaced_message(conn)
        if any(schema.index_sql(conn, i) is not None for i in (BASE, TRIGRAM))
        else None
    )
    # Asked by serving and by needs_optimize, and as long as the backlog: read once.
    by_hand = functools.cache(lambda: _cjk_edited_by_hand(conn))
    for index in schema.INDEXES:
        sql = schema.index_sql(conn, index)
        served, reason = _served(conn, caps, index, sql, stale, replaced, by_hand)
        out[index] = {
            "exists": sql is not None,
            "layout": schema.index_layout(sql),
            "served": served,
            "reason": reason,
            "unindexed_range": unindexed_range(conn, index),
            "rebuilding": schema.building(conn, index),
        }
    out["not_kept"] = {}
    for index, (kept, why), instead in (
        (BASE, word_policy(), WORD_INSTEAD),
        (TRIGRAM, trigram_policy(conn, caps), TRIGRAM_INSTEAD),
    ):
        if not kept:
            out["not_kept"][index] = {
                "why": why,
                "instead": instead,
                "exists": out[index]["exists"],
            }
    out["needs_optimize"] = optimize_reasons(conn, caps, by_hand)
    cjk_sql = schema.index_sql(conn, CJK)
    for key, option, value in _CJK_OPTIONS:
        out[CJK][key] = schema.cjk_option_on(cjk_sql, option, value)
    return out


def _served(
    conn: sqlite3.Connection,
    caps: Capabilities,
    index: str,
    sql: str | None,
    stale: bool,
    replaced: int | None,
    by_hand: Callable[[], tuple[str, str] | None],
) -> tuple[bool, str]:
    if sql is None:
        if index in (BASE, TRIGRAM):
            kept, why = word_policy() if index == BASE else trigram_policy(conn, caps)
            return False, (
                "not built: run `hermes-fts optimize-storage` to build it"
                if kept
                else f"not kept: {why}"
            )
        return False, "not created"
    if schema.index_layout(sql) == "outdated":
        return False, "earlier layout: run `hermes-fts optimize-storage` to rebuild it"
    if not caps.fts5:
        return False, "fts5 unavailable"
    if stale:
        return False, "fts_stale: index under repair, run `hermes-fts optimize-storage`"
    if index == BASE and not _env.word_enabled():
        return False, "disabled by HERMES_WORD_FTS"
    if index in (BASE, TRIGRAM) and replaced is not None:
        # Their triggers added the new text beside the replaced row's old tokens.
        return False, (
            f"message {replaced} replaced without a delete: run `hermes-fts optimize-storage`"
        )
    if index == TRIGRAM:
        if not _env.trigram_enabled():
            return False, "disabled by HERMES_TRIGRAM_FTS"
        if not caps.trigram:
            return False, "trigram tokenizer unavailable"
        if indexing.get_meta(conn, schema.META_TRIGRAM_STALE) is not None:
            return False, "stale: run `hermes-fts optimize-storage`"
        if schema.missing_triggers(conn, TRIGRAM):
            # Seen by a read-only open before any writer marked it stale.
            return False, "triggers missing: run `hermes-fts optimize-storage`"
    if index == CJK:
        if not caps.cjk:
            return False, "cjk_unicode61 extension not loaded"
        if indexing.get_meta(conn, schema.META_CJK_STALE) is not None:
            return False, "stale: run `hermes-fts optimize-storage`"
        edited = by_hand()
        if edited is not None:
            # Seen by a read-only open, which cannot repair: the index misses
            # changes or cannot be read.
            return False, f"{edited[1]}: run `hermes-fts optimize-storage`"
        if indexing.backfill_window(conn, CJK) is not None:
            # Reference behaviour: the CJK index is served once complete.
            return False, "backfill pending: run `hermes-fts optimize-storage`"
    if indexing.backfill_window(conn, index) is not None:
        return True, "backfill pending: add a LIKE scan over unindexed_range"
    return True, "ok"


def _cjk_edited_by_hand(conn: sqlite3.Connection) -> tuple[str, str] | None:
    """What the sqlite3 shell did to the CJK index that it cannot be served past, as
    ``(needs_optimize code, words)``: a part of it dropped (``cjk_broken``: a
    trigger, its change log, its view, a shadow table), or rows deleted from its
    change log (``cjk_unlogged``: a message neither indexed nor logged)."""
    missing = schema.cjk_parts_missing(conn)
    if missing:
        return "cjk_broken", f"{', '.join(missing)} missing"
    if indexing.backfill_window(conn, CJK) is None:
        lost = pending.unlogged_message(conn)
        if lost is not None:
            return "cjk_unlogged", (
                f"message {lost} is neither indexed nor in the change log (edited by hand?)"
            )
    return None


def trigram_policy(conn: sqlite3.Connection, caps: Capabilities) -> tuple[bool, str]:
    """(whether the store keeps a complete trigram index for this process, why not).

    Opt-in (docs/DESIGN.md §9.2 item 4): only ``HERMES_TRIGRAM_FTS=1`` keeps
    it, where this process's SQLite has the tokenizer.  Searches read it only
    while the CJK index is not served, and there a LIKE scan returns the same
    rows (§6.2), so by default it does not earn its bytes (~2.9x the text).
    """
    if not caps.trigram:
        return False, "trigram tokenizer unavailable"
    if not _env.trigram_forced():
        return False, NOT_KEPT
    return True, "kept"


def word_policy() -> tuple[bool, str]:
    """(whether the store keeps a word index, why not).

    Opt-in (docs/DESIGN.md §5.2, §9.2 item 6): only ``HERMES_WORD_FTS=1``
    keeps it.  The CJK index tokenizes Latin text with unicode61's rules and
    splits it off CJK, so it answers every Latin query exactly; a second
    index of the same words does not earn its bytes by default.
    """
    if not _env.word_forced():
        return False, WORD_NOT_KEPT
    return True, "kept"


def unindexed_range(conn: sqlite3.Connection, index: str) -> tuple[int, int] | None:
    """``(lo, hi)``: ids ``lo < id <= hi`` are not yet in ``index``; None when complete.

    A rebuild under the build name leaves the live index complete, so its
    window is the build's, not the live index's.
    """
    if schema.building(conn, index):
        return None
    state = indexing.backfill_window(conn, index)
    if state is None:
        return None
    high, progress = state
    return (progress, high) if progress < high else None


def usable_indexes(conn: sqlite3.Connection, caps: Capabilities) -> list[str]:
    """The indexes that exist as FTS5 tables this process can open."""
    return [
        index
        for index in schema.INDEXES
        if schema.index_sql(conn, index) is not None
        and not (index == CJK and not caps.cjk)
        and not (index == TRIGRAM and not caps.trigram)
    ]


def merge_segments(
    conn: sqlite3.Connection, caps: Capabilities, only: tuple[str, ...] = schema.INDEXES
) -> None:
    """FTS5 'optimize' on every usable index, each in its own transaction.

    One segment per index is left, without the tokens of deleted rows, which
    otherwise stay in older segments until FTS5 happens to merge them; with
    ``secure_delete`` on, the pages they held are overwritten.  Hermes
    Agent's ``vacuum()`` does the same for its two indexes, never for ours.
    """
    for index in usable_indexes(conn, caps):
        if index in only:
            with indexing.write_txn(conn):
                conn.execute(f"INSERT INTO {index}({index}) VALUES('optimize')")


def backfill_targets(
    conn: sqlite3.Connection, caps: Capabilities, index: str | None = None
) -> list[str]:
    """The indexes (``index`` alone, or all) that exist or are being built and this
    process can write: the CJK index needs the extension, trigram its tokenizer
    and ``HERMES_TRIGRAM_FTS`` on, the word index ``HERMES_WORD_FTS`` on."""
    names = (index,) if index else schema.INDEXES
    return [
        name
        for name in names
        if not (name == CJK and not caps.cjk)
        and not (name == TRIGRAM and not (caps.trigram and _env.trigram_enabled()))
        and not (name == BASE and not _env.word_enabled())
        and (schema.index_sql(conn, name) is not None or schema.building(conn, name))
    ]


# --------------------------------------------------------------------------
# optimize-storage's repair phase


def optimize_reasons(
    conn: sqlite3.Connection,
    caps: Capabilities,
    by_hand: Callable[[], tuple[str, str] | None] | None = None,
) -> list[str]:
    """Why ``optimize-storage`` has work to do on this store, for this process (codes).
    ``by_hand``: ``_cjk_edited_by_hand`` already asked by the caller."""
    by_hand = by_hand or (lambda: _cjk_edited_by_hand(conn))
    reasons: list[str] = []
    if schema.dangling_triggers(conn):
        reasons.append("writes_blocked")  # a table of ours dropped by hand, its triggers kept
    if indexing.get_meta(conn, schema.META_FTS_STALE) is not None:
        reasons.append("fts_stale")
    # A replacement built under its build name serves no search until the swap.
    served = tuple(name for name in schema.INDEXES if not schema.building(conn, name))
    if indexing.backfill_progress(conn, served) is not None:
        reasons.append("backfill")
    if old_layout.find(conn):
        reasons.append("old_layout")  # objects an older hermes-fts made under Hermes' names
    base_sql = schema.index_sql(conn, BASE)
    # Kept: an open builds none over existing rows.  Not kept: an older version's, one
    # opted out since, or a build cut short after the opt-out (the next run drops it).
    if word_policy()[0] and base_sql is None:
        reasons.append("word_missing")
    elif not word_policy()[0] and (base_sql is not None or schema.building(conn, BASE)):
        reasons.append("word_to_drop")
    elif base_sql is not None and schema.index_layout(base_sql) != "external":
        reasons.append("word_outdated")
    trigram_sql = schema.index_sql(conn, TRIGRAM)
    trigram_kept = trigram_policy(conn, caps)[0]
    if trigram_kept and trigram_sql is None:
        reasons.append("trigram_to_build")
    elif not trigram_kept and (trigram_sql is not None or schema.building(conn, TRIGRAM)):
        reasons.append("trigram_to_drop")
    elif trigram_sql is not None and schema.index_layout(trigram_sql) != "external":
        reasons.append("trigram_outdated")
    if indexing.get_meta(conn, schema.META_TRIGRAM_STALE) is not None:
        reasons.append("trigram_stale")
    if time_table.needs_work(conn):
        reasons.append("time_table")  # the old time index to drop, or the fill to finish
    if caps.cjk:
        cjk_sql = schema.index_sql(conn, CJK)
        if cjk_sql is None:
            reasons.append("cjk_missing")
        elif indexing.get_meta(conn, schema.META_CJK_STALE) is not None:
            reasons.append("cjk_stale")
        elif (edited := by_hand()) is not None:
            reasons.append(edited[0])
        elif not schema.cjk_tokenize_current(cjk_sql):
            reasons.append("cjk_outdated")  # older tokenizer options: rebuilt
        if pending.pending_count(conn) > 0:
            reasons.append("cjk_pending")
        if rank_bounds.behind(conn):
            reasons.append("rank_bounds")  # common words read more of the index than needed
    if schema.missing_read_indexes(conn):
        reasons.append("read_indexes")  # a B-tree index of ours dropped, or never made
    if indexing.get_meta(conn, schema.META_COMPACTION) is not None:
        reasons.append("compaction")  # a run ended before its VACUUM
    return reasons


def optimize_needed(conn: sqlite3.Connection, caps: Capabilities) -> bool:
    """Whether ``optimize-storage`` has work to do on this store, for this process."""
    return bool(optimize_reasons(conn, caps))


def damaged(
    conn: sqlite3.Connection,
    caps: Capabilities,
    *,
    full: bool,
    progress: Callable[[int, int], None] | None = None,
    only: str | None = None,
    lookups_only: bool = False,
    unchecked: Collection[str] = (),
) -> dict[str, str]:
    """The complete, served indexes of ours that are damaged, with what is wrong
    (``health.damage``; ``full`` adds FTS5's integrity-check, which needs a
    writer, except for the indexes in ``unchecked``).  ``progress(done, total)``
    counts the indexes checked; ``only`` checks that one index alone;
    ``lookups_only`` leaves out the row counts, which read every row
    (``health.probe``)."""
    from . import health  # not on a search's path

    if indexing.get_meta(conn, schema.META_FTS_STALE) is not None:
        return {}  # every index is rebuilt anyway
    checked = [
        index
        for index in usable_indexes(conn, caps)
        if only in (None, index)
        and schema.index_layout(schema.index_sql(conn, index)) == "external"
        and indexing.backfill_window(conn, index) is None
    ]
    found = {}
    for done, index in enumerate(checked, 1):
        problem = health.damage(
            conn, index, full=full and index not in unchecked, counts=not lookups_only
        )
        if problem is not None:
            found[index] = problem
        if progress is not None:
            progress(done, len(checked))
    return found


def rebuild_shares(
    conn: sqlite3.Connection, caps: Capabilities, broken: dict[str, str]
) -> dict[str, float]:
    """The indexes ``repair`` and the backfill after it will build (all or part of),
    read without writing, each with the share of the messages it has left to take:
    1 for a build from the start, less for a backfill an interrupted run left, which
    the next run resumes (its room and time are that share's, not a whole build's)."""
    stale = indexing.get_meta(conn, schema.META_FTS_STALE) is not None
    kept = (
        ([BASE] if word_policy()[0] else [])
        + ([TRIGRAM] if trigram_policy(conn, caps)[0] else [])
        + ([CJK] if caps.cjk else [])
    )
    flags = {TRIGRAM: schema.META_TRIGRAM_STALE, CJK: schema.META_CJK_STALE}
    out = {}
    for index in kept:
        sql = schema.index_sql(conn, index)
        window = indexing.backfill_window(conn, index)
        if (
            stale
            or index in broken
            or schema.index_layout(sql) != "external"
            or (index in flags and indexing.get_meta(conn, flags[index]) is not None)
            or (index == CJK and not schema.cjk_tokenize_current(sql))
        ):
            out[index] = 1.0
        elif window is not None:  # by rows, not ids: ids need not start at 1
            left, whole = conn.execute(
                "SELECT coalesce(sum(id > ?), 0), count(*) FROM messages WHERE id <= ?",
                (window[1], window[0]),
            ).fetchone()
            out[index] = left / whole if whole else 0.0
    return out


def backlog(
    conn: sqlite3.Connection, caps: Capabilities, builds: Collection[str]
) -> tuple[int, int]:
    """The messages waiting for the CJK index and their bytes, which a run applies
    first (``pending.pending_text``); none where it builds that index anew."""
    return (0, 0) if not caps.cjk or CJK in builds else pending.pending_text(conn)


def optimize_room(
    conn: sqlite3.Connection, caps: Capabilities, path: str | os.PathLike[str], vacuum: bool
) -> dict[str, int]:
    """Free disk bytes an optimize-storage run needs at its peak (``need``: ``build``,
    the indexes and time table it adds, ``vacuum``, the merge and VACUUM, and the
    ``reserve`` it leaves for Hermes) and has (``free``); ``temp_need`` in VACUUM's
    temporary folder when it lies on another disk (``space.temp_shortfall``).  Reads only."""
    from . import space  # not on a search's path

    builds = rebuild_shares(conn, caps, damaged(conn, caps, full=False))
    need = space.need(
        conn,
        path,
        builds,
        vacuum=vacuum,
        time_rows=time_table.rows_to_fill(conn),
        pending=backlog(conn, caps, builds)[1],
    )
    return {"need": need.total, "build": need.build, "vacuum": need.vacuum} | {
        "reserve": need.reserve,
        "free": space.run_free_bytes(conn, path),
        "temp_need": need.temp,
    }


def repair(
    conn: sqlite3.Connection,
    caps: Capabilities,
    progress: Callable[[int, int], None] | None = None,
    unchecked: Collection[str] = (),
) -> dict[str, str]:
    """Start a rebuild of every index that needs one; the backfill that follows does it.
    Returns the indexes found damaged (``damaged``, which reports to
    ``progress``; ``unchecked``: those checked without FTS5's integrity-check),
    with what was wrong.

    A damaged index is dropped at once (searches read LIKE, never a broken
    index, until its rebuild is complete).  A stale store rebuilds all of
    them; otherwise an index is
    rebuilt when it is missing, in an earlier layout of ours or marked stale;
    the CJK index also when its tokenizer options are not
    ``schema.CJK_TOKENIZE``.  A rebuild already under way resumes.  A word or
    trigram index this process must not keep is dropped.  First of all, what an older
    hermes-fts made under Hermes Agent's names is given back (``old_layout``).
    Last, rank bounds that cannot be trusted (a table dropped by hand, rows
    edited) are forgotten and measured again (``rank_bounds.trouble``), and
    ``time_table.install``: the time table's triggers and the window
    its fill (a later step of optimize-storage) copies, also over a complete
    table found damaged (reported with the indexes); the index on
    ``messages(timestamp)`` that earlier versions created is dropped.
    """
    old_layout.give_back(conn)
    broken = damaged(conn, caps, full=True, progress=progress, unchecked=unchecked)
    for index in broken:
        logger.warning("%s is damaged (%s); rebuilding it", index, broken[index])
        with indexing.write_txn(conn):
            schema.drop_index_objects(conn, index)  # a build under way goes on
        indexing.reset_index(conn, index)
    stale = indexing.get_meta(conn, schema.META_FTS_STALE) is not None
    keep = {BASE: word_policy()[0], TRIGRAM: trigram_policy(conn, caps)[0]}
    for index in (BASE, TRIGRAM):
        sql = schema.index_sql(conn, index)
        if not keep[index]:
            _drop_not_kept(conn, caps, index, sql)
            continue
        if (
            not stale
            and schema.building(conn, index)
            and indexing.backfill_window(conn, index) is not None
        ):
            continue  # an interrupted rebuild resumes where it stopped
        if (
            sql is None
            or stale
            or schema.index_layout(sql) in ("inline", "outdated")
            or (index == TRIGRAM and indexing.get_meta(conn, schema.META_TRIGRAM_STALE))
        ):
            indexing.reset_index(conn, index)
    if stale:
        with indexing.write_txn(conn):
            if not caps.cjk and schema.index_sql(conn, CJK) is not None:
                # It may share the damage; rebuild it once the extension is back.
                indexing.set_meta(conn, schema.META_CJK_STALE, 1)
            indexing.delete_meta(conn, schema.META_FTS_STALE, schema.META_FTS_STALE_REASON)
    if caps.cjk and (
        stale
        or indexing.get_meta(conn, schema.META_CJK_STALE) is not None
        or not schema.cjk_tokenize_current(schema.index_sql(conn, CJK))
    ):
        # Missing, or built with other tokenizer options (an older hermes-fts
        # without `variants 1`): rebuilt empty, served again once complete.
        indexing.reset_index(conn, CJK)
    return {**broken, **_repair_tables(conn)}


def _repair_tables(conn: sqlite3.Connection) -> dict[str, str]:
    """``repair``'s last step: the rank bounds and the time table, put back or made
    to be measured and filled again; what was wrong with either."""
    found = {}
    forgotten = rank_bounds.trouble(conn)
    if forgotten is not None:
        # A table dropped by hand fails every write to messages until it is back.
        with indexing.write_txn(conn):
            rank_bounds.forget(conn)
        logger.warning("%s: %s; measuring them again", rank_bounds.TABLE, forgotten)
        found[rank_bounds.TABLE] = forgotten
    refilled = time_table.install(conn)
    if refilled is not None:
        logger.warning("%s is damaged (%s); refilling it", time_table.TABLE, refilled)
        found[time_table.TABLE] = refilled
    return found


def unblock_writes(conn: sqlite3.Connection) -> dict[str, list[str]]:
    """Our triggers that write a table dropped by hand, with what they name; they made
    every write to ``messages`` fail (Hermes' too) until optimize-storage.  So a write
    open puts the time table and rank bounds back (filled and measured again by the
    next run) and drops a trigger still left writing nothing (an index dropped by
    hand, which optimize-storage rebuilds whole)."""
    dangling = schema.dangling_triggers(conn)
    if not dangling:
        return {}
    logger.warning(
        "triggers of ours write tables that are gone (%s), so every message write "
        "failed; putting them back",
        ", ".join(sorted({t for names in dangling.values() for t in names})),
    )
    _repair_tables(conn)
    left = schema.dangling_triggers(conn)
    if left:
        with indexing.write_txn(conn):
            for name in left:
                conn.execute(f'DROP TRIGGER IF EXISTS main."{name}"')
    return dangling


def tables_damage(conn: sqlite3.Connection) -> dict[str, str]:
    """The time table and rank bounds whose rows are wrong (their ``damage``), with
    why: reads of both, which no search makes."""
    found = {}
    for table, check in ((time_table.TABLE, time_table), (rank_bounds.TABLE, rank_bounds)):
        problem = check.damage(conn)
        if problem is not None:
            found[table] = problem
    return found


def _drop_not_kept(
    conn: sqlite3.Connection, caps: Capabilities, index: str, sql: str | None
) -> None:
    """Drop the word or trigram index (and a build of it) the store does not keep."""
    if index == TRIGRAM and not caps.trigram and sql is not None:
        return  # dropping the table needs its tokenizer
    with indexing.write_txn(conn):
        schema.drop_build_objects(conn, index)
        schema.drop_index_objects(conn, index)
        # A build's view outlives its table (the next build takes it over).
        for view in (schema.content_view(index), schema.content_view(schema.build_name(index))):
            conn.execute(f"DROP VIEW IF EXISTS {view}")
        indexing.close_backfill_window(conn, index)
        if index == TRIGRAM:
            indexing.delete_meta(conn, schema.META_TRIGRAM_STALE)
