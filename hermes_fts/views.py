"""Read-only views of one conversation around a message (spec §7.10).

Plain functions over a ``sqlite3`` connection holding the Hermes ``messages``
table.  ``SessionStore`` exposes them as methods; the tool and the CLI use
them to show the stored messages around a search hit.

Transcript order is the message id (monotonic), never the timestamp.  Row
visibility follows the ``active``/``compacted``/``display_kind`` markers:

* rewound rows (``active = 0 AND compacted = 0``, "the user took it back")
  never fill a window or a bookend, except when the caller anchors on one;
* compaction archives (``active = 0 AND compacted = 1``) stay visible;
* ``display_kind = 'hidden'`` rows (model-facing scaffolding) are dropped
  from anchored views before any limit is applied.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = [
    "JSON_CONTENT_PREFIX",
    "count_messages",
    "decode_content",
    "first_message_id",
    "get_anchor_summary",
    "get_anchored_view",
    "get_messages_around",
    "hydrate_message",
    "session_preview",
    "sessions_by_activity",
]

log = logging.getLogger("hermes_fts.views")

JSON_CONTENT_PREFIX = "\x00json:"
MULTIMODAL_PLACEHOLDER = "[multimodal content]"

_MESSAGE_COLUMNS = (
    "id",
    "session_id",
    "role",
    "content",
    "tool_call_id",
    "tool_calls",
    "tool_name",
    "timestamp",
    "active",
    "compacted",
    "display_kind",
)
_SELECT = "SELECT " + ", ".join(_MESSAGE_COLUMNS) + " FROM messages"
_NOT_REWOUND = "(active = 1 OR compacted = 1)"
_NOT_HIDDEN = "COALESCE(display_kind, '') <> 'hidden'"


# --------------------------------------------------------------------------- hydration


def _flatten_parts(parts: Iterable[Any]) -> str:
    texts: list[str] = []
    for part in parts:
        if isinstance(part, str):
            if part:
                texts.append(part)
        elif isinstance(part, dict):
            text = part.get("text")
            if isinstance(text, str) and text:
                texts.append(text)
    return " ".join(texts) if texts else MULTIMODAL_PLACEHOLDER


def decode_content(content: Any) -> Any:
    """Return displayable text for a stored ``content`` value.

    Structured content is stored as ``"\\x00json:" + JSON``; a list of parts
    (multimodal) is flattened to its text parts joined by a space, or
    ``"[multimodal content]"`` when it has none.  Anything that cannot be
    decoded is returned without the prefix.  ``None`` stays ``None``.
    """
    if not isinstance(content, str) or not content.startswith(JSON_CONTENT_PREFIX):
        return content
    payload = content[len(JSON_CONTENT_PREFIX) :]
    try:
        value = json.loads(payload)
    except ValueError:
        log.debug("undecodable structured content (%d chars)", len(payload))
        return payload
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return _flatten_parts(value)
    if isinstance(value, dict):
        return _flatten_parts([value])
    return json.dumps(value, ensure_ascii=False)


def _parse_tool_calls(raw: Any) -> Any:
    if not isinstance(raw, str):
        return raw
    if not raw.strip():
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def hydrate_message(row: Sequence[Any]) -> dict[str, Any]:
    """A message row (in ``_MESSAGE_COLUMNS`` order) as a dict for callers."""
    msg = dict(zip(_MESSAGE_COLUMNS, row))
    msg["content"] = decode_content(msg["content"])
    msg["tool_calls"] = _parse_tool_calls(msg["tool_calls"])
    return msg


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
    neighbour_filter = _NOT_REWOUND if include_hidden else f"{_NOT_REWOUND} AND {_NOT_HIDDEN}"
    before = _fetch(
        conn,
        f"{_SELECT} WHERE session_id = ? AND id < ? AND {neighbour_filter}"
        " ORDER BY id DESC LIMIT ?",
        (session_id, around_message_id, window),
    )
    before.reverse()
    after = _fetch(
        conn,
        f"{_SELECT} WHERE session_id = ? AND id > ? AND {neighbour_filter} ORDER BY id ASC LIMIT ?",
        (session_id, around_message_id, window),
    )
    return anchor, before, after


def _as_int(value: Any, name: str) -> int:
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an integer, not a bool")
    return int(value)


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
    window = max(_as_int(window, "window"), 0)
    anchor, before, after = _window(
        conn, session_id, _as_int(around_message_id, "around_message_id"), window, include_hidden
    )
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
        _NOT_REWOUND,
        "content IS NOT NULL",
        "length(content) > 0",
    ]
    params: list[Any] = [session_id]
    if not include_hidden:
        where.append(_NOT_HIDDEN)
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
    anchor_id = _as_int(message_id, "message_id")
    window = max(_as_int(window, "window"), 0)
    bookend = max(_as_int(bookend, "bookend"), 0)
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
        f"SELECT id FROM messages WHERE session_id = ? AND {_NOT_REWOUND} AND {_NOT_HIDDEN}"
        " ORDER BY id ASC LIMIT 1",
        (session_id,),
    ).fetchone()
    return None if row is None else int(row[0])


PREVIEW_CHARS = 60
_RECENT_MESSAGE_FLOOR = 500
_RECENT_MESSAGES_PER_SESSION = 40
_IN_CHUNK = 900


def session_preview(conn: sqlite3.Connection, session_id: str) -> str:
    """The session's first user message on one line, at most 60 characters + ``...``."""
    row = conn.execute(
        f"SELECT content FROM messages WHERE session_id = ? AND role = 'user'"
        f" AND {_NOT_REWOUND} AND {_NOT_HIDDEN} AND content IS NOT NULL AND length(content) > 0"
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
        return text[:PREVIEW_CHARS] + "..."
    return text


def count_messages(conn: sqlite3.Connection, session_id: str) -> int:
    row = conn.execute(
        "SELECT count(*) FROM messages WHERE session_id = ?", (session_id,)
    ).fetchone()
    return int(row[0]) if row else 0


def sessions_by_activity(
    conn: sqlite3.Connection,
    exclude_sources: Sequence[str] = (),
    limit: int = 20,
    offset: int = 0,
) -> list[dict[str, Any]]:
    """Session rows, most recently active first (bounded: never scans every session).

    Activity is the freshest of ``last_activity_at``, ``started_at`` and the
    newest message's timestamp; each row carries it as ``last_active``.
    Candidates are the sessions with the latest start/activity marks plus the
    owners of the newest messages (message ids grow with time), so the cost
    follows ``offset + limit``, not the size of the store.
    """
    want = max(int(limit), 0) + max(int(offset), 0)
    if want == 0:
        return []
    not_hidden = ""
    params: list[Any] = []
    if exclude_sources:
        not_hidden = "source NOT IN (" + ", ".join("?" * len(exclude_sources)) + ")"
        params.extend(exclude_sources)
    where = f"WHERE {not_hidden}" if not_hidden else ""
    candidates = {
        str(row[0])
        for row in conn.execute(
            f"SELECT id FROM sessions {where}"
            " ORDER BY COALESCE(last_activity_at, started_at) DESC LIMIT ?",
            (*params, want),
        )
    }
    recent_rows = max(_RECENT_MESSAGE_FLOOR, want * _RECENT_MESSAGES_PER_SESSION)
    candidates.update(
        str(row[0])
        for row in conn.execute(
            "SELECT DISTINCT session_id FROM"
            " (SELECT session_id FROM messages ORDER BY id DESC LIMIT ?)",
            (recent_rows,),
        )
    )
    rows: list[dict[str, Any]] = []
    ids = sorted(candidates)
    for start in range(0, len(ids), _IN_CHUNK):
        chunk = ids[start : start + _IN_CHUNK]
        marks = ", ".join("?" * len(chunk))
        extra = f" AND s.{not_hidden}" if not_hidden else ""
        cur = conn.execute(
            "SELECT s.*, max(COALESCE(s.last_activity_at, s.started_at), s.started_at,"
            " COALESCE((SELECT max(m.timestamp) FROM messages m WHERE m.session_id = s.id),"
            f" s.started_at)) AS last_active FROM sessions s WHERE s.id IN ({marks}){extra}",
            (*chunk, *params),
        )
        names = [d[0] for d in cur.description]
        rows.extend(dict(zip(names, row)) for row in cur)
    rows.sort(
        key=lambda r: (r["last_active"] or 0, r.get("started_at") or 0, r["id"]), reverse=True
    )
    return rows[offset : offset + limit]


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
    window = max(_as_int(window, "window"), 0)
    anchor_id = _as_int(message_id, "message_id")
    rows = _fetch(conn, _SELECT + " WHERE id = ? AND session_id = ?", (anchor_id, session_id))
    if not rows or (not include_hidden and rows[0].get("display_kind") == "hidden"):
        return {"window": [], "messages_before": 0, "messages_after": 0}
    visible = _NOT_REWOUND if include_hidden else f"{_NOT_REWOUND} AND {_NOT_HIDDEN}"
    counts = []
    for op, order in (("<", "DESC"), (">", "ASC")):
        row = conn.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM messages WHERE session_id = ? AND id {op} ?"
            f" AND {visible} ORDER BY id {order} LIMIT ?)",
            (session_id, anchor_id, window),
        ).fetchone()
        counts.append(int(row[0]))
    return {"window": rows, "messages_before": counts[0], "messages_after": counts[1]}
