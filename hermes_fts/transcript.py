"""Reading transcripts: windows, bookends, previews, title lookup, message flags.

Plain read-only functions over a ``sqlite3`` connection holding the Hermes
``sessions`` and ``messages`` tables.  ``SessionStore`` exposes them as
methods; the tool and the CLI reach them only through the store.  This module
owns the visibility rule (``visible_sql``) that search uses too.

Transcript order is the message id (monotonic), never the timestamp.  Row
visibility follows the ``active``/``compacted``/``display_kind`` markers:

* rewound rows (``active = 0 AND compacted = 0``, "the user took it back")
  never fill a window or a bookend, except when the caller anchors on one;
* compaction archives (``active = 0 AND compacted = 1``) stay visible;
* ``display_kind = 'hidden'`` rows (model-facing scaffolding) are dropped
  from anchored views before any limit is applied.
"""

from __future__ import annotations

import itertools
import logging
import os
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ._display import whole_prefix
from ._params import (
    SQLITE_INT_MAX,
    as_count,
    as_message_id,
    check_session_id,
    check_text,
)
from ._sqlite import connect_readonly, row_dict
from .content import as_text, decode_content, parse_tool_calls
from .index.schema import MESSAGES
from .listing import sessions_by_activity

__all__ = [
    "Views",
    "attach_context",
    "count_messages",
    "each_message",
    "find_session_by_title",
    "first_message_id",
    "get_anchor_summary",
    "get_anchored_view",
    "get_messages_around",
    "get_messages_beyond",
    "hydrate_message",
    "message_flags",
    "session_ends",
    "session_messages",
    "session_preview",
    "visible_sql",
]

logger = logging.getLogger("hermes_fts.transcript")

CONTEXT_CHARS = 200  # characters of each message in a search hit's context

# The model's private reasoning stays out of transcripts read back to a user
# or an agent; every other message column is shown.
_MODEL_ONLY = frozenset({"reasoning", "reasoning_content", "reasoning_details"})
_MESSAGE_COLUMNS = ("id", *(name for name in MESSAGES.names if name not in _MODEL_ONLY))
_SELECT = "SELECT " + ", ".join(_MESSAGE_COLUMNS) + " FROM messages"


def visible_sql(
    alias: str = "", *, include_rewound: bool = False, include_hidden: bool = False
) -> str:
    """The SQL condition for messages a reader sees (see the module docstring).

    ``alias`` qualifies the columns (``"m"`` gives ``m.active`` …).  Rewound
    rows (``active = 0 AND compacted = 0``) are left out unless
    ``include_rewound``; ``display_kind = 'hidden'`` rows unless ``include_hidden``.
    """
    col = f"{alias}." if alias else ""
    parts = []
    if not include_rewound:
        parts.append(f"({col}active = 1 OR {col}compacted = 1)")
    if not include_hidden:
        parts.append(f"COALESCE({col}display_kind, '') <> 'hidden'")
    return " AND ".join(parts) if parts else "1"


# --------------------------------------------------------------------------- hydration


def hydrate_message(row: Sequence[Any]) -> dict[str, Any]:
    """A message row (in ``_MESSAGE_COLUMNS`` order) as a dict for callers."""
    return _hydrated(dict(zip(_MESSAGE_COLUMNS, row)))


def _hydrated(msg: dict[str, Any]) -> dict[str, Any]:
    """``msg``, a stored row, as every reader gets it, converted once here: bytes
    stored where text belongs read as text, the content decoded, the tool calls
    parsed (as Hermes' own ``get_messages`` gives them)."""
    for key, value in msg.items():
        if isinstance(value, bytes):
            msg[key] = as_text(value)
    if "content" in msg:
        msg["content"] = decode_content(msg["content"])
    if "tool_calls" in msg:
        msg["tool_calls"] = parse_tool_calls(msg["tool_calls"])
    return msg


def session_messages(
    conn: sqlite3.Connection, session_id: str, *, readable: bool = False
) -> list[dict[str, Any]]:
    """Every message of a session in the order written, every column, hydrated;
    ``readable``: only those a window shows (rewound ones left out)."""
    return list(each_message(conn, session_id, readable=readable))


def each_message(
    conn: sqlite3.Connection, session_id: str, *, readable: bool = False
) -> Iterator[dict[str, Any]]:
    """``session_messages`` one at a time: a caller shapes a long session as it is read."""
    cur = conn.execute(
        f"SELECT * FROM messages WHERE {_shown(readable)} ORDER BY id", {"s": session_id}
    )
    for raw in cur:
        yield _hydrated(row_dict(cur, raw))


def counted_messages(
    conn: sqlite3.Connection, session_id: str, *, readable: bool = False
) -> tuple[int, Iterator[dict[str, Any]]]:
    """How many messages ``each_message`` gives, and those messages, of one moment (one
    statement): counted apart, a message Hermes wrote between the count and the read
    made the count one short of the messages read."""
    shown = _shown(readable)
    cur = conn.execute(
        f"SELECT *, (SELECT count(*) FROM messages WHERE {shown}) AS _total"
        f" FROM messages WHERE {shown} ORDER BY id",
        {"s": session_id},
    )
    first = cur.fetchone()
    if first is None:
        return 0, iter(())

    def rows() -> Iterator[dict[str, Any]]:
        for raw in itertools.chain([first], cur):
            row = row_dict(cur, raw)
            del row["_total"]
            yield _hydrated(row)

    return int(first[-1]), rows()


# What a read of a session shows, as a scroll's window does: rewound rows (the user
# took them back) are no part of the conversation any more.
_READABLE = visible_sql(include_hidden=True)


def _shown(readable: bool) -> str:
    """The condition for the messages of session ``:s`` a read gives."""
    return f"session_id = :s AND {_READABLE}" if readable else "session_id = :s"


def session_ends(
    conn: sqlite3.Connection, session_id: str, head: int, tail: int
) -> tuple[int, list[dict[str, Any]]]:
    """How many messages a session shows (rewound ones left out, as a scroll leaves
    them out), and its first ``head`` and last ``tail`` of them (all of them when
    they are no more), in the order written, hydrated.

    One statement, so the count and the rows are of the same moment; a session
    of 150,000 messages is not read whole (and held in memory) to show 30.
    """
    shown = _shown(readable=True)
    # A negative head was SQLite's LIMIT -1: every message, not the first none.
    head, tail = as_count(head, "head"), as_count(tail, "tail")
    cur = conn.execute(
        f"SELECT *, (SELECT count(*) FROM messages WHERE {shown}) AS _total"
        f" FROM messages WHERE session_id = :s AND (id IN (SELECT id FROM messages"
        f" WHERE {shown} ORDER BY id LIMIT :head) OR id IN (SELECT id FROM"
        f" messages WHERE {shown} ORDER BY id DESC LIMIT :tail)) ORDER BY id",
        {"s": session_id, "head": head, "tail": tail},
    )
    rows = [row_dict(cur, raw) for raw in cur]
    if not rows and not (head or tail):  # no row carries the count: it is asked alone
        alone = conn.execute(f"SELECT count(*) FROM messages WHERE {shown}", {"s": session_id})
        return int(alone.fetchone()[0]), []
    total = int(rows[0]["_total"]) if rows else 0
    for row in rows:
        del row["_total"]
    return total, [_hydrated(row) for row in rows]


def _fetch(conn: sqlite3.Connection, sql: str, params: Sequence[Any]) -> list[dict[str, Any]]:
    return [hydrate_message(tuple(row)) for row in conn.execute(sql, params)]


# --------------------------------------------------------------------------- windows


def _window(
    conn: sqlite3.Connection,
    session_id: str,
    around_message_id: int,
    window: int,
    include_hidden: bool,
) -> tuple[dict[str, Any] | None, list[dict[str, Any]], list[dict[str, Any]]]:
    anchor_rows = _fetch(
        conn, _SELECT + " WHERE id = ? AND session_id = ?", (around_message_id, session_id)
    )
    if not anchor_rows:
        return None, [], []
    anchor = anchor_rows[0]
    if not include_hidden and anchor.get("display_kind") == "hidden":
        return None, [], []
    if window <= 0:
        return anchor, [], []
    before = _beyond(conn, session_id, around_message_id, window, False, include_hidden)
    after = _beyond(conn, session_id, around_message_id, window, True, include_hidden)
    return anchor, before, after


def _beyond(
    conn: sqlite3.Connection,
    session_id: str,
    message_id: int,
    count: int,
    forward: bool,
    include_hidden: bool = True,
) -> list[dict[str, Any]]:
    """Up to ``count`` visible messages right after (``forward``) or before
    ``message_id``, in the order written."""
    op, order = (">", "ASC") if forward else ("<", "DESC")
    rows = _fetch(
        conn,
        f"{_SELECT} WHERE session_id = ? AND id {op} ? AND "
        f"{visible_sql(include_hidden=include_hidden)} ORDER BY id {order} LIMIT ?",
        (session_id, message_id, count),
    )
    return rows if forward else rows[::-1]


def get_messages_beyond(
    conn: sqlite3.Connection, session_id: str, message_id: int, count: int, *, forward: bool
) -> dict[str, Any] | None:
    """Up to ``count`` messages right after (``forward``) or before ``message_id``,
    skipping rewound ones as ``get_messages_around`` does: the page that follows
    (precedes) one a reader was shown.  ``{"window": [...], "at_start": bool,
    "at_end": bool}``, the edges saying that no message of the session lies
    before (after) the page; None when the message is one of another session.
    A message that no longer exists (Hermes' /retry and /undo rewrite a session's
    rows) still marks its place: the page a reader was following goes on from there."""
    # "2" failed on count + 1, and a negative count (LIMIT -1) read the whole session.
    message_id, count = as_message_id(message_id, "message_id"), as_count(count, "count")
    owner = conn.execute("SELECT session_id FROM messages WHERE id = ?", (message_id,)).fetchone()
    if owner is not None and owner[0] != session_id:
        return None
    rows = _beyond(conn, session_id, message_id, min(count + 1, SQLITE_INT_MAX), forward)
    last = len(rows) <= count  # nothing beyond the page on its far side
    rows = rows[:count] if forward else rows[-count:] if count else []
    return {"window": rows, "at_start": not forward and last, "at_end": forward and last}


def get_messages_around(
    conn: sqlite3.Connection,
    session_id: str,
    around_message_id: int,
    window: int = 5,
    *,
    include_hidden: bool = True,
) -> dict[str, Any]:
    """Up to ``window`` messages before and after ``around_message_id``.

    Returns ``{"window": [...], "messages_before": n, "messages_after": n}``;
    the counts are the neighbours found (fewer than ``window`` means the
    session starts or ends there).  An anchor that is not a message of
    ``session_id`` gives an empty window.  Rewound neighbours are skipped
    (the window fills from the remaining rows); a rewound anchor is still
    returned.  ``include_hidden=False`` also skips ``display_kind='hidden'``
    rows and returns an empty window for a hidden anchor.
    """
    window = as_count(window, "window")
    anchor, before, after = _window(
        conn, session_id, as_message_id(around_message_id, "around_message_id"), window,
        include_hidden,
    )  # fmt: skip
    if anchor is None:
        return {"window": [], "messages_before": 0, "messages_after": 0}
    return {
        "window": [*before, anchor, *after],
        "messages_before": len(before),
        "messages_after": len(after),
    }


def _bookends(
    conn: sqlite3.Connection,
    session_id: str,
    first_id: int,
    last_id: int,
    bookend: int,
    keep_roles: tuple[str, ...] | None,
    include_hidden: bool,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    if bookend <= 0:
        return [], []
    where = [
        "session_id = ?",
        visible_sql(include_hidden=include_hidden),
        "content IS NOT NULL",
        "length(content) > 0",
    ]
    params: list[Any] = [session_id]
    if keep_roles is not None:
        if not keep_roles:
            return [], []
        where.append("role IN (" + ", ".join("?" * len(keep_roles)) + ")")
        params.extend(keep_roles)
    base = " AND ".join(where)
    start = _fetch(
        conn,
        f"{_SELECT} WHERE {base} AND id < ? ORDER BY id ASC LIMIT ?",
        (*params, first_id, bookend),
    )
    end = _fetch(
        conn,
        f"{_SELECT} WHERE {base} AND id > ? ORDER BY id DESC LIMIT ?",
        (*params, last_id, bookend),
    )
    end.reverse()
    return start, end


def get_anchored_view(
    conn: sqlite3.Connection,
    session_id: str,
    message_id: int,
    window: int = 5,
    bookend: int = 3,
    keep_roles: Iterable[str] | None = ("user", "assistant"),
    *,
    include_hidden: bool = False,
) -> dict[str, Any]:
    """A window around ``message_id`` plus the conversation's first and last turns.

    Keys: ``window`` (filtered to ``keep_roles``, the anchor always kept),
    ``messages_before``/``messages_after`` (neighbour counts before role
    filtering), ``bookend_start`` (the first ``bookend`` messages strictly
    before the window) and ``bookend_end`` (the last ``bookend`` strictly
    after it, ascending).  Bookends hold only non-empty, non-rewound messages
    whose role is in ``keep_roles`` (any role when it is ``None``).  Hidden
    rows are left out before the limits apply unless ``include_hidden``.
    """
    roles = None if keep_roles is None else tuple(keep_roles)
    anchor_id = as_message_id(message_id, "message_id")
    window = as_count(window, "window")
    bookend = as_count(bookend, "bookend")
    anchor, before, after = _window(conn, session_id, anchor_id, window, include_hidden)
    if anchor is None:
        return {
            "window": [],
            "messages_before": 0,
            "messages_after": 0,
            "bookend_start": [],
            "bookend_end": [],
        }
    full = [*before, anchor, *after]
    if roles is None:
        kept = full
    else:
        kept = [m for m in full if m is anchor or m.get("role") in roles]
    start, end = _bookends(
        conn, session_id, full[0]["id"], full[-1]["id"], bookend, roles, include_hidden
    )
    return {
        "window": kept,
        "messages_before": len(before),
        "messages_after": len(after),
        "bookend_start": start,
        "bookend_end": end,
    }


# --------------------------------------------------------------------------- sessions


def first_message_id(conn: sqlite3.Connection, session_id: str) -> int | None:
    """Id of the first visible (not rewound, not hidden) message of a session."""
    row = conn.execute(
        f"SELECT id FROM messages WHERE session_id = ? AND {visible_sql()} ORDER BY id ASC LIMIT 1",
        (session_id,),
    ).fetchone()
    return None if row is None else int(row[0])


PREVIEW_CHARS = 60


def session_preview(conn: sqlite3.Connection, session_id: str) -> str:
    """The session's first user message on one line, at most 60 characters + ``...``."""
    row = conn.execute(
        f"SELECT content FROM messages WHERE session_id = ? AND role = 'user'"
        f" AND {visible_sql()} AND content IS NOT NULL AND length(content) > 0"
        " ORDER BY id ASC LIMIT 1",
        (session_id,),
    ).fetchone()
    if row is None:
        return ""
    text = decode_content(row[0])
    if not isinstance(text, str):
        return ""
    text = " ".join(text.split())
    if len(text) > PREVIEW_CHARS:
        return whole_prefix(text, PREVIEW_CHARS) + "..."
    return text


def count_messages(conn: sqlite3.Connection, session_id: str, readable: bool = False) -> int:
    only = f" AND {_READABLE}" if readable else ""
    row = conn.execute(
        f"SELECT count(*) FROM messages WHERE session_id = ?{only}", (session_id,)
    ).fetchone()
    return int(row[0]) if row else 0


def get_anchor_summary(
    conn: sqlite3.Connection,
    session_id: str,
    message_id: int,
    window: int = 5,
    *,
    include_hidden: bool = False,
) -> dict[str, Any]:
    """The anchor alone plus the neighbour counts ``get_anchored_view`` would report.

    Same visibility rules as the anchored view, without loading neighbours or
    bookends: ``{"window": [anchor] or [], "messages_before", "messages_after"}``.
    """
    window = as_count(window, "window")
    anchor_id = as_message_id(message_id, "message_id")
    rows = _fetch(conn, _SELECT + " WHERE id = ? AND session_id = ?", (anchor_id, session_id))
    if not rows or (not include_hidden and rows[0].get("display_kind") == "hidden"):
        return {"window": [], "messages_before": 0, "messages_after": 0}
    visible = visible_sql(include_hidden=include_hidden)
    counts = []
    for op, order in (("<", "DESC"), (">", "ASC")):
        row = conn.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM messages WHERE session_id = ? AND id {op} ?"
            f" AND {visible} ORDER BY id {order} LIMIT ?)",
            (session_id, anchor_id, window),
        ).fetchone()
        counts.append(int(row[0]))
    return {"window": rows, "messages_before": counts[0], "messages_after": counts[1]}


def message_flags(conn: sqlite3.Connection, message_id: int) -> tuple[str, int, int] | None:
    """``(session_id, active, compacted)`` of a message; None when it does not exist."""
    row = conn.execute(
        "SELECT session_id, active, compacted FROM messages WHERE id = ?",
        (as_message_id(message_id, "message_id"),),
    ).fetchone()
    if row is None:
        return None
    return str(row[0]), int(row[1] or 0), int(row[2] or 0)


def find_session_by_title(conn: sqlite3.Connection, title: str) -> str | None:
    """The newest ``"<title> #N"`` continuation when one exists, else the exact title's session.

    Continuations are found with a range scan on the title (an index on
    ``sessions(title)`` serves it); wildcard characters in the title are
    literal, so ``test_project`` never matches ``testXproject #2``.  "Newest"
    is the latest ``started_at`` (ties broken by the larger id).
    """
    prefix = title + " #"
    best: tuple[float, str] | None = None
    exact: str | None = None
    for sid, candidate, started in conn.execute(
        "SELECT id, title, started_at FROM sessions WHERE title = ? OR (title >= ? AND title < ?)",
        (title, prefix, title + " $"),
    ):
        if candidate == title:
            exact = exact or str(sid)
            continue
        suffix = str(candidate)[len(prefix) :]
        if suffix.isascii() and suffix.isdigit():
            key = (float(started or 0.0), str(sid))
            if best is None or key > best:
                best = key
    return best[1] if best is not None else exact


def attach_context(
    conn: sqlite3.Connection, rows: list[dict[str, Any]], include_inactive: bool
) -> None:
    """The previous message, the match and the next message of the same session."""
    visible = " AND " + visible_sql("n", include_rewound=include_inactive)
    neighbour = (
        "(SELECT n.id FROM messages n WHERE n.session_id = m.session_id{vis} "
        "AND (n.timestamp, n.id) {op} (m.timestamp, m.id) "
        "ORDER BY n.timestamp {dir}, n.id {dir} LIMIT 1)"
    )
    prev_sql = neighbour.format(vis=visible, op="<", dir="DESC")
    next_sql = neighbour.format(vis=visible, op=">", dir="ASC")
    for row in rows:
        row["context"] = []
    by_id = {r["id"]: r for r in rows}
    ids = list(by_id)
    try:
        for start in range(0, len(ids), 500):
            batch = ids[start : start + 500]
            marks = ", ".join("?" for _ in batch)
            triples = conn.execute(
                f"SELECT m.id, {prev_sql}, {next_sql} FROM messages m WHERE m.id IN ({marks})",
                batch,
            ).fetchall()
            wanted = {i for t in triples for i in t if i is not None}
            bodies = {}
            wanted_list = list(wanted)
            for s in range(0, len(wanted_list), 500):
                chunk = wanted_list[s : s + 500]
                q = ", ".join("?" for _ in chunk)
                for mid, role, content in conn.execute(
                    f"SELECT id, role, content FROM messages WHERE id IN ({q})", chunk
                ):
                    text = decode_content(content)
                    text = whole_prefix(text, CONTEXT_CHARS) if isinstance(text, str) else text
                    bodies[mid] = {"role": role, "content": text}
            for mid, prev_id, next_id in triples:
                by_id[mid]["context"] = [bodies[i] for i in (prev_id, mid, next_id) if i in bodies]
    except sqlite3.Error:
        logger.debug("context lookup failed; results keep empty contexts", exc_info=True)


def file_has_session(path: str | os.PathLike[str], session_id: str) -> bool:
    """Whether the store at ``path`` holds ``session_id``; a read-only peek, False on any error."""
    try:
        conn = connect_readonly(path)  # also in a read-only folder and on a full disk
    except sqlite3.Error:
        return False
    try:
        row = conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return row is not None
    except sqlite3.Error:
        return False
    finally:
        conn.close()


# --------------------------------------------------------------------------- the store's reads


def _text(value: Any, name: str) -> Any:
    """``value``, refused with a ValueError naming ``name`` when it is not text SQLite
    can be given (``_params.check_text``): a lone surrogate failed in SQLite's binding
    with a UnicodeEncodeError that named no argument."""
    check_text(value, name)
    return value


def _session(session_id: Any) -> Any:
    check_session_id(session_id)
    return session_id


class Views:
    """How ``SessionStore`` reads conversations: each function above, on the store's
    connection (``_conn``)."""

    _conn: sqlite3.Connection

    def get_messages(self, session_id: str, *, readable: bool = False) -> list[dict[str, Any]]:
        """Every message of a session; ``readable``: rewound ones left out, as a read shows it."""
        return session_messages(self._conn, _session(session_id), readable=readable)

    def get_message_ends(
        self, session_id: str, head: int, tail: int
    ) -> tuple[int, list[dict[str, Any]]]:
        """The session's message count, and its first ``head`` and last ``tail`` messages."""
        return session_ends(self._conn, _session(session_id), head, tail)

    def get_messages_around(
        self, session_id: str, around_message_id: int, window: int = 5
    ) -> dict[str, Any]:
        return get_messages_around(self._conn, _session(session_id), around_message_id, window)

    def get_messages_beyond(
        self, session_id: str, message_id: int, count: int, *, forward: bool
    ) -> dict[str, Any] | None:
        """The page of ``count`` messages after (``forward``) or before a message."""
        return get_messages_beyond(
            self._conn, _session(session_id), message_id, count, forward=forward
        )

    def get_anchored_view(
        self, session_id: str, message_id: int, window: int = 5, bookend: int = 3
    ) -> dict[str, Any]:
        return get_anchored_view(self._conn, _session(session_id), message_id, window, bookend)

    def get_anchor_summary(
        self, session_id: str, anchor_id: int, window: int = 5
    ) -> dict[str, Any]:
        """The anchor alone plus the neighbour counts ``get_anchored_view`` would report."""
        return get_anchor_summary(self._conn, _session(session_id), anchor_id, window)

    def message_flags(self, message_id: int) -> tuple[str, int, int] | None:
        """``(session_id, active, compacted)`` of a message; None when it does not exist."""
        return message_flags(self._conn, message_id)

    def find_session_by_title(self, title: str) -> str | None:
        """Session id of the newest ``"<title> #N"`` continuation, else of the exact title."""
        if not isinstance(title, str):  # None failed on `title + " #"` deep inside
            raise TypeError(f"title must be text, not {type(title).__name__}")
        return find_session_by_title(self._conn, _text(title, "title"))

    def sessions_by_activity(
        self, hidden_sources: Sequence[str] | str = (), limit: int = 20, offset: int = 0
    ) -> list[dict[str, Any]]:
        """Session rows, most recently active first, leaving out ``hidden_sources``."""
        return sessions_by_activity(
            self._conn, _text(hidden_sources, "hidden_sources"), limit, offset
        )

    def count_messages(self, session_id: str, *, readable: bool = False) -> int:
        """Stored messages of a session, every kind included; ``readable``: as a read shows."""
        return count_messages(self._conn, _session(session_id), readable)

    def each_message(self, session_id: str, *, readable: bool = False) -> Iterator[dict[str, Any]]:
        """``get_messages`` one at a time, read as they are asked for."""
        return each_message(self._conn, _session(session_id), readable=readable)

    def counted_messages(
        self, session_id: str, *, readable: bool = False
    ) -> tuple[int, Iterator[dict[str, Any]]]:
        """``count_messages`` and ``each_message`` of one moment, however Hermes writes."""
        return counted_messages(self._conn, _session(session_id), readable=readable)

    def session_preview(self, session_id: str) -> str:
        """The session's first visible user message on one line, shortened."""
        return session_preview(self._conn, _session(session_id))

    def first_message_id(self, session_id: str) -> int | None:
        """Id of the session's first visible message, None when it has none."""
        return first_message_id(self._conn, _session(session_id))
