"""What ``hermes-fts status`` reports: the store's counts and sizes, and each index's
state (``lifecycle.index_state``) with its size and any damage found."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from .. import _sharing, _sqlite, _store_problems
from . import maintain as indexing
from . import schema, space, time_table

__all__ = ["status_report"]


def status_report(
    conn: sqlite3.Connection,
    state: dict[str, Any],
    backfill: dict[str, Any] | None,
    path: str | None,
    disk_bytes: int,
    extension: dict[str, Any],
    progress: indexing.Progress | None = None,
    damage: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Everything ``hermes-fts status`` reports; reads only (a full scan of the text,
    and of each index, which ``progress`` reports as ``text`` and ``sizes``).
    ``damage``: the served indexes found damaged (``damaged``), with what is wrong.

    ``db_bytes`` is SQLite's page count times the page size, which includes
    pages still in the ``-wal`` file; ``disk_bytes`` what the files take on
    disk; ``text_bytes`` is the UTF-8 size of content + tool_name +
    tool_calls, and each index's ``x_text`` is its size as a multiple of that.
    """
    emit = indexing.Phases(progress)
    text = indexing.text_bytes(conn, emit.counted("text") if progress else None)
    emit("sizes")
    sizes = indexing.index_sizes(conn, text)
    indexes = {
        index: {**state[index], "bytes": None, "x_text": None, **sizes.get(index, {})}
        for index in schema.INDEXES
    }
    # An index not served is already reported with why; its damage follows from that.
    damage = {i: p for i, p in (damage or {}).items() if i not in state or state[i]["served"]}
    for index, problem in damage.items():
        if index not in indexes:
            continue  # the time table: said in its own entry
        # Still read by searches (they fall back when they meet the damage, and
        # may miss rows where they do not): only a rebuild repairs it.
        indexes[index]["reason"] = f"damaged ({problem}): run `hermes-fts optimize-storage`"
    return {
        "db": path,
        # where no command that writes can run: status must not send the user to one
        "read_only_mount": path is not None and _store_problems.read_only_mount(Path(path).parent),
        # what it says is left is what that run is doing: not "it stopped"
        "run_under_way": _sharing.run_under_way(path) if path is not None else None,
        "messages": conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0],
        "sessions": conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0],
        "text_bytes": text,
        "db_bytes": _sqlite.db_bytes(conn),
        "disk_bytes": disk_bytes,
        **_left_behind(path),
        "indexes": indexes,
        "fts_stale": state["fts_stale"],
        "needs_optimize": [*state["needs_optimize"], *(["damaged"] if damage else [])],
        "damaged": damage,
        "blocked_writes": (
            schema.dangling_triggers(conn) if "writes_blocked" in state["needs_optimize"] else {}
        ),
        "not_kept": state["not_kept"],
        "cjk_pending": state["cjk_pending"],
        "time_table": {
            **state["time_table"],
            "rows": time_table.row_count(conn),
            "damaged": damage.get(time_table.TABLE),
            # ``filled`` is an id: ids need not be dense (a store's first sessions deleted)
            "filled_messages": _messages_upto(conn, state["time_table"]["filled"]),
        },
        "backfill": backfill,
        "sqlite_version": sqlite3.sqlite_version,
        "extension": extension,
    }


def _left_behind(path: str | None) -> dict[str, Any]:
    """What takes disk room beside the store: ``wal_bytes``, the ``-wal`` file's size
    (one a killed writer, a VACUUM, left is the store's size again while another
    process keeps it open), and ``left_room``, the file and bytes a run killed
    outright still holds for nobody (None when there is none)."""
    left = space.left_room(path)
    return {
        "wal_bytes": space.file_sizes(path)[1] if path else 0,
        "left_room": {"file": f"{path}{space.ROOM_SUFFIX}", "bytes": left} if left else None,
    }


def _messages_upto(conn: sqlite3.Connection, last_id: int | None) -> int | None:
    """The messages whose id is at most ``last_id``; None for None."""
    if last_id is None:
        return None
    row = conn.execute("SELECT count(*) FROM main.messages WHERE id <= ?", (last_id,)).fetchone()
    return int(row[0])
