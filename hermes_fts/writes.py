"""How ``SessionStore`` writes sessions and messages in Hermes' columns: each write
checks its fields, then runs through the store's ``_write`` (one transaction
that also brings our index up to date, and keeps the message if a damaged
index refuses it)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Callable

from ._params import as_time_bound, check_session_id, check_str, check_text
from .content import encode_value
from .index import schema

__all__ = ["Writes"]

_MESSAGE_FIELDS = schema.MESSAGES.names
_UPDATABLE_FIELDS = frozenset(_MESSAGE_FIELDS) - {"session_id"}
_SESSION_FIELDS = schema.SESSIONS.names
# Unix seconds: bound as given, text ('yesterday', a datetime's ISO form) was stored
# in the REAL column, sorted after every number and fell out of after/before.
_TIME_FIELDS = ("timestamp", "started_at", "ended_at", "last_activity_at")
# Columns a None cannot go into: SQLite's "NOT NULL constraint failed" named no call.
_MESSAGE_REQUIRED = frozenset(c.name for c in schema.MESSAGES.columns if "NOT NULL" in c.decl)


class Writes:
    """``SessionStore``'s writes of rows, on its connection (``_conn``) and ``_write``."""

    _conn: sqlite3.Connection
    _write: Callable[..., Any]  # (fn, replayable=True): runs fn in one write transaction

    def add_session(
        self,
        session_id: str | None = None,
        source: str = "cli",
        *,
        started_at: float | None = None,
        **fields: Any,
    ) -> str:
        sid = session_id or fields.pop("id", None)
        fields.pop("id", None)
        if not sid:
            raise ValueError("add_session needs a session id")
        if not source:
            raise ValueError("add_session needs a source")
        row: dict[str, Any] = {
            "id": sid,
            "source": source,
            "started_at": time.time() if started_at is None else started_at,
        }
        unknown = set(fields) - set(_SESSION_FIELDS)
        if unknown:
            raise ValueError(f"unknown session field(s): {', '.join(sorted(unknown))}")
        # None is "not given", as for a message: a flag keeps its default, not a NULL
        # that the NOT NULL columns (archived, pinned, hidden) would refuse.
        row.update({k: encode_value(v) for k, v in fields.items() if v is not None})
        _check_times(row)
        cols = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        with _named_failure(self._conn, lambda: row):
            self._write(
                lambda c: c.execute(
                    f"INSERT INTO sessions({cols}) VALUES ({marks})", tuple(row.values())
                )
            )
        return str(sid)

    def end_session(self, session_id: str, end_reason: str) -> None:
        check_session_id(session_id)  # bytes or a number ended no session, silently
        check_str(end_reason, "end_reason")  # 5 or b"x" was stored as the reason
        # First writer wins, as in the reference.
        with _named_failure(
            self._conn, lambda: {"session_id": session_id, "end_reason": end_reason}
        ):
            self._write(
                lambda c: c.execute(
                    "UPDATE sessions SET ended_at = ?, end_reason = ? "
                    "WHERE id = ? AND ended_at IS NULL",
                    (time.time(), end_reason, session_id),
                )
            )

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        check_session_id(session_id)  # a lone surrogate: named, not SQLite's encode error
        row = self._conn.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return None if row is None else dict(row)

    @staticmethod
    def _message_row(msg: Mapping[str, Any]) -> tuple[Any, ...]:
        unknown = set(msg) - set(_MESSAGE_FIELDS)
        if unknown:
            raise ValueError(f"unknown message field(s): {', '.join(sorted(unknown))}")
        if not msg.get("session_id") or not msg.get("role"):
            raise ValueError("a message needs session_id and role")
        # None is "not given" (as for a session's started_at), not a NULL that
        # the NOT NULL columns would refuse.
        values = {k: v for k, v in msg.items() if v is not None}
        values.setdefault("timestamp", time.time())
        values.setdefault("active", 1)
        values.setdefault("compacted", 0)
        _check_times(values)
        return tuple(encode_value(values.get(name)) for name in _MESSAGE_FIELDS)

    _INSERT_MESSAGE = (
        f"INSERT INTO messages({', '.join(_MESSAGE_FIELDS)}) "
        f"VALUES ({', '.join('?' for _ in _MESSAGE_FIELDS)})"
    )

    def add_message(
        self, session_id: str, role: str, content: str | None = None, **fields: Any
    ) -> int:
        row = self._message_row(
            {"session_id": session_id, "role": role, "content": content, **fields}
        )

        def insert(c: sqlite3.Connection) -> int:
            added = int(c.execute(self._INSERT_MESSAGE, row).lastrowid or 0)
            _count_added(c, added)
            return added

        with _named_failure(self._conn, lambda: dict(zip(_MESSAGE_FIELDS, row))):
            return int(self._write(insert))

    def add_messages(self, messages: Iterable[Mapping[str, Any]]) -> list[int]:
        """Insert many messages in one transaction; returns their ids in order.

        An iterator is streamed (a million generated rows never sit in memory);
        a sequence may be replayed once if a corrupt index rejects the write.
        """

        last: tuple[Any, ...] = ()  # the row SQLite binds now: a failed bind's row

        def insert(c: sqlite3.Connection) -> list[int]:
            count = 0

            def rows() -> Iterator[tuple[Any, ...]]:
                nonlocal count, last
                for msg in messages:
                    count += 1
                    last = self._message_row(msg)
                    yield last

            c.executemany(self._INSERT_MESSAGE, rows())
            if count == 0:
                return []
            # Under BEGIN IMMEDIATE nobody else inserts, and each new id is
            # larger than every existing one: ours are the top `count` ids.
            top = int(c.execute("SELECT MAX(id) FROM messages").fetchone()[0])
            _count_added(c, top - count + 1)
            return list(range(top - count + 1, top + 1))

        with _named_failure(self._conn, lambda: dict(zip(_MESSAGE_FIELDS, last))):
            return list(self._write(insert, replayable=isinstance(messages, Sequence)))

    def update_message(self, message_id: int, **fields: Any) -> None:
        unknown = set(fields) - _UPDATABLE_FIELDS
        if unknown:
            raise ValueError(f"cannot update message field(s): {', '.join(sorted(unknown))}")
        if not fields:
            return
        cleared = sorted(k for k, v in fields.items() if v is None and k in _MESSAGE_REQUIRED)
        if cleared:
            raise ValueError(f"{', '.join(cleared)} cannot be None: every message has one")
        assigns = ", ".join(f"{k} = ?" for k in fields)
        encoded = {k: encode_value(v) for k, v in fields.items()}
        _check_times(encoded)
        values = tuple(encoded.values())

        def update(c: sqlite3.Connection) -> None:
            changed = c.execute(
                f"UPDATE messages SET {assigns} WHERE id = ?", (*values, message_id)
            )
            # A wrong id changed nothing and said nothing; Hermes' rewind_to_message refuses one.
            if changed.rowcount == 0:
                raise ValueError(f"message {message_id!r} not found")

        with _named_failure(self._conn, lambda: encoded):
            self._write(update)

    def set_message_flags(
        self, message_id: int, active: bool | None = None, compacted: bool | None = None
    ) -> None:
        fields: dict[str, Any] = {}
        if active is not None:
            fields["active"] = int(active)
        if compacted is not None:
            fields["compacted"] = int(compacted)
        self.update_message(message_id, **fields)

    def delete_message(self, message_id: int) -> None:
        def delete(c: sqlite3.Connection) -> None:
            c.execute(_UNCOUNT_DELETED, (message_id,))
            # A wrong id deleted nothing and said nothing, where update_message refuses it.
            if c.execute("DELETE FROM messages WHERE id = ?", (message_id,)).rowcount == 0:
                raise ValueError(f"message {message_id!r} not found")

        self._write(delete)


# Hermes' counters on a session, kept as its append_message keeps them: its session
# list (and our browse) read message_count, which our writes left at 0 or short.
_TOOL_CALLS = (
    "CASE WHEN m.tool_calls IS NULL THEN 0 WHEN json_valid(m.tool_calls) "
    "AND json_type(m.tool_calls) = 'array' THEN json_array_length(m.tool_calls) ELSE 1 END"
)
_COUNT_ADDED = f"""
UPDATE sessions SET
  message_count = COALESCE(message_count, 0)
    + (SELECT COUNT(*) FROM messages m WHERE m.session_id = sessions.id AND m.id >= :first),
  tool_call_count = COALESCE(tool_call_count, 0)
    + (SELECT COALESCE(SUM({_TOOL_CALLS}), 0) FROM messages m
       WHERE m.session_id = sessions.id AND m.id >= :first)
WHERE id IN (SELECT session_id FROM messages WHERE id >= :first)
"""
_UNCOUNT_DELETED = f"""
UPDATE sessions SET
  message_count = MAX(COALESCE(message_count, 0) - 1, 0),
  tool_call_count = MAX(COALESCE(tool_call_count, 0)
    - (SELECT {_TOOL_CALLS} FROM messages m WHERE m.id = ?1), 0)
WHERE id = (SELECT session_id FROM messages WHERE id = ?1)
"""


def _count_added(conn: sqlite3.Connection, first: int) -> None:
    """Add the messages from id ``first`` on to their sessions' counters."""
    conn.execute(_COUNT_ADDED, {"first": first})


def _check_times(row: dict[str, Any]) -> None:
    """The time columns of ``row`` as floats; anything but a number is refused by name."""
    for name in _TIME_FIELDS:
        if row.get(name) is not None:
            row[name] = as_time_bound(row[name], name)


@contextmanager
def _named_failure(
    conn: sqlite3.Connection, row: Callable[[], Mapping[str, Any]]
) -> Iterator[None]:
    """A write SQLite refuses, named by the column of ``row()`` at fault: a value holding
    a lone surrogate (its binding fails with a UnicodeEncodeError that names none), a
    session id already in use or one no session has (a bare IntegrityError).  The
    transaction is rolled back; ``row()`` is asked only then, so a write does not
    encode every value a second time to look for a surrogate."""
    try:
        yield
    except UnicodeEncodeError:
        for name, value in row().items():
            check_text(value, name)
        raise
    except sqlite3.IntegrityError as exc:
        problem = _conflict(conn, row(), str(exc))
        if problem is None:
            raise
        raise ValueError(problem) from exc


def _conflict(conn: sqlite3.Connection, row: Mapping[str, Any], error: str) -> str | None:
    """What SQLite's ``error`` for writing ``row`` means, naming the session (or None)."""
    if error.startswith("UNIQUE constraint failed: sessions.id"):
        return f"session {row.get('id')!r} already exists"
    if not error.startswith("FOREIGN KEY constraint failed"):
        return None
    for name in ("session_id", "parent_session_id"):
        sid = row.get(name)
        found = conn.execute("SELECT 1 FROM sessions WHERE id = ?", (sid,)).fetchone()
        if sid is not None and found is None:
            return f"{name} {sid!r} names no session in this store (add_session it first)"
    return None
