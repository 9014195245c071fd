"""Sessions by last activity: the listing ``browse`` and the tool's recent sessions read.

A session's activity is the freshest of its ``last_activity_at``, its
``started_at`` and its newest message's timestamp.  A short listing reads
candidates only, so its cost follows its depth, not the size of the store.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from ._params import SQLITE_INT_MAX, as_count, as_sources
from ._sqlite import rows_as_dicts

__all__ = ["sessions_by_activity"]

_RECENT_MESSAGE_FLOOR = 500
_RECENT_MESSAGES_PER_SESSION = 40
_IN_CHUNK = 900
# A listing ranks every session once it wants this many rows and at least one
# in _RANK_ALL_SHARE of them: measured on the 1M store, it then costs less.
_RANK_ALL_FROM = 500
_RANK_ALL_SHARE = 5


def sessions_by_activity(
    conn: sqlite3.Connection,
    exclude_sources: Sequence[str] | str = (),
    limit: int = 20,
    offset: int = 0,
) -> list[dict[str, Any]]:
    """Session rows, most recently active first.

    Activity is the freshest of ``last_activity_at``, ``started_at`` and the
    newest message's timestamp; each row carries it as ``last_active``.
    A short listing reads candidates only: the sessions with the latest
    start/activity marks plus the owners of the most recently written messages
    (the highest ids), so its cost follows ``offset + limit``, not the size of
    the store.  Ids follow insertion order, not timestamps: there a session
    whose newest timestamp belongs to rows written long ago (a back-dated
    import) and whose own activity marks are older is found only once it is
    among the latest marks.  A listing that reaches deep (a share of all
    sessions), or whose last row wanted is no newer than the newest message left
    unread, ranks every session instead, which costs the same at any depth.
    """
    limit = as_count(limit, "limit")
    offset = as_count(offset, "offset")
    hidden = as_sources(exclude_sources, "hidden_sources")
    want = min(limit + offset, SQLITE_INT_MAX)
    if want == 0:
        return []
    not_hidden = ""
    params: list[Any] = []
    if hidden:
        not_hidden = "source NOT IN (" + ", ".join("?" * len(hidden)) + ")"
        params.extend(hidden)
    if _ranks_every_session(conn, want):
        return _ranked(_every_session(conn, not_hidden, params))[offset : offset + limit]
    candidates, unread = _activity_candidates(conn, not_hidden, params, want)
    rows = _ranked(_with_last_active(conn, candidates, not_hidden, params))
    # Ids follow time, so no message left unread is newer than the newest of them: a
    # session left out may outrank the last row wanted only if that row is no newer
    # (a long run, or hidden sessions' traffic, filled the messages read).
    if len(rows) >= want and not _time_key(rows[want - 1]["last_active"]) > unread:
        rows = _ranked(_every_session(conn, not_hidden, params))
    return rows[offset : offset + limit]


def _ranked(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` most recently active first: ties go to the later start, then the larger id."""
    rows.sort(
        key=lambda r: (_time_key(r["last_active"]), _time_key(r["started_at"]), r["id"]),
        reverse=True,
    )
    return rows


def _ranks_every_session(conn: sqlite3.Connection, want: int) -> bool:
    """Whether reading every session costs less than the candidates for ``want`` rows:
    those read 40 messages a row, so deep pages cost in proportion to their depth
    (1.1 s at offset 30,000 of the 1M store; every session read takes 0.2 s)."""
    if want < _RANK_ALL_FROM:
        return False
    row = conn.execute("SELECT count(*) FROM sessions").fetchone()
    return want * _RANK_ALL_SHARE >= int(row[0])


def _time_key(value: Any) -> float:
    # A time stored as text (SQLite's max() prefers it to any number) is no
    # time: comparing it with a number would fail the whole listing.
    return float(value) if isinstance(value, (int, float)) else 0.0


def _activity_candidates(
    conn: sqlite3.Connection, not_hidden: str, params: list[Any], want: int
) -> tuple[list[str], float]:
    """Sessions with the latest start/activity marks, plus the owners of the newest
    messages; and the time of the newest message left unread (-inf: none was)."""
    where = f"WHERE {not_hidden}" if not_hidden else ""
    candidates = {
        str(row[0])
        for row in conn.execute(
            f"SELECT id FROM sessions {where}"
            " ORDER BY COALESCE(last_activity_at, started_at) DESC LIMIT ?",
            (*params, want),
        )
    }
    recent_rows = max(
        _RECENT_MESSAGE_FLOOR, min(want * _RECENT_MESSAGES_PER_SESSION, SQLITE_INT_MAX)
    )
    oldest_read: int | None = None
    for session_id, first_id in conn.execute(
        "SELECT session_id, min(id) FROM"
        " (SELECT session_id, id FROM messages ORDER BY id DESC LIMIT ?) GROUP BY session_id",
        (recent_rows,),
    ):
        candidates.add(str(session_id))
        oldest_read = first_id if oldest_read is None else min(oldest_read, first_id)
    unread = None
    if oldest_read is not None:
        unread = conn.execute(
            "SELECT timestamp FROM messages WHERE id < ? ORDER BY id DESC LIMIT 1", (oldest_read,)
        ).fetchone()
    if unread is None:  # every message was read
        return sorted(candidates), float("-inf")
    # A time stored as text says nothing of the messages before it.
    time = unread[0]
    return sorted(candidates), float(time) if isinstance(time, (int, float)) else float("inf")


# `< ''`: the newest time that is a number (SQLite sorts text above every number,
# so max() would pick a time stored as text), read off the index.
_SESSION_WITH_NEWEST = (
    "SELECT s.*, (SELECT max(m.timestamp) FROM messages m WHERE m.session_id = s.id"
    " AND m.timestamp < '') AS _newest FROM sessions s"
)


def _with_last_active(
    conn: sqlite3.Connection, ids: list[str], not_hidden: str, params: list[Any]
) -> list[dict[str, Any]]:
    """The session rows of ``ids`` (those not hidden), each with its ``last_active``."""
    rows: list[dict[str, Any]] = []
    extra = f" AND s.{not_hidden}" if not_hidden else ""
    for start in range(0, len(ids), _IN_CHUNK):
        chunk = ids[start : start + _IN_CHUNK]
        marks = ", ".join("?" * len(chunk))
        cur = conn.execute(
            f"{_SESSION_WITH_NEWEST} WHERE s.id IN ({marks}){extra}", (*chunk, *params)
        )
        rows.extend(_last_active(cur))
    return rows


def _every_session(
    conn: sqlite3.Connection, not_hidden: str, params: list[Any]
) -> list[dict[str, Any]]:
    """Every session row not hidden, each with its ``last_active``."""
    where = f" WHERE s.{not_hidden}" if not_hidden else ""
    return _last_active(conn.execute(_SESSION_WITH_NEWEST + where, params))


def _last_active(cur: sqlite3.Cursor) -> list[dict[str, Any]]:
    """The rows of ``cur`` (sessions with ``_newest``), each with its ``last_active``."""
    rows = rows_as_dicts(cur)
    for row in rows:
        times = (row["last_activity_at"], row["started_at"], row.pop("_newest"))
        numbers = [t for t in times if isinstance(t, (int, float))]
        row["last_active"] = max(numbers) if numbers else row["started_at"]
    return rows
