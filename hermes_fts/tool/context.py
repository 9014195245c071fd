"""One call's view of a store: which store, which profile, the current session.

``open_context`` picks the store a call reads (the caller's, or read-only the
default ``$HERMES_HOME/state.db`` or a profile's) and records the stores it
opened so the entry point closes them; a store passed in by the caller is never
closed.  ``CallContext`` caches the session rows one call looks at and answers
the lineage questions discovery, scroll and browse ask.  Every lookup is a
``SessionStore`` method: this layer runs no SQL.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from ..store import SessionStore, StoreError, default_db_path, open_store
from .args import LINK_PREFIX, Call
from .errors import NoDefaultStore, NoStore, NotHere
from .profiles import (
    locate_profile,
    nothing_there,
    profile_db_path,
    profile_of_file,
    validate_profile,
)
from .shape import format_ts

log = logging.getLogger(__name__)

HIDDEN_SESSION_SOURCES = ("kanban", "subagent", "tool")
# Sessions that end this way leave the agent's live context: their messages
# are no longer in front of the model, so search may show them again.
FRESH_RESET_END_REASONS = frozenset(
    {
        "session_reset",
        "session_switch",
        "idle",
        "daily",
        "suspended",
        "resume_pending_expired",
        "new_session",
    }
)
DISCOVER_WINDOW = 5
DISCOVER_BOOKEND = 3


class CallContext:
    """One call's view of a store: profile for links, current session, lookups cached."""

    def __init__(self, store: SessionStore, profile: str | None, current_session_id: str | None):
        self.store = store
        self.profile = profile
        self.current_session_id = current_session_id or None
        self.found_elsewhere = False  # a bare id resolved in another profile's store
        self._sessions: dict[str, dict[str, Any] | None] = {}
        self._roots: dict[str, tuple[str, bool]] = {}

    # links ------------------------------------------------------------
    def link(self, session_id: str) -> str:
        if self.profile:
            return f"{LINK_PREFIX}{self.profile}/{session_id}"
        return f"{LINK_PREFIX}{session_id}"

    # sessions ---------------------------------------------------------
    def session(self, session_id: str | None) -> dict[str, Any] | None:
        """The session's row (cached for the call), None when it does not exist."""
        if not session_id:
            return None
        if session_id not in self._sessions:
            self._sessions[session_id] = self.store.get_session(session_id)
        return self._sessions[session_id]

    def remember(self, rows: Iterable[dict[str, Any]]) -> None:
        """Cache session rows read in bulk (a listing), so lineage walks reuse them."""
        for row in rows:
            self._sessions.setdefault(str(row["id"]), row)

    def end_reason(self, session_id: str) -> str | None:
        row = self.session(session_id)
        return None if row is None else row.get("end_reason")

    def left_live_context(self, session_id: str) -> bool:
        reason = self.end_reason(session_id)
        return reason == "compression" or reason in FRESH_RESET_END_REASONS

    def lineage(self, session_id: str) -> tuple[str, bool]:
        """(lineage root, whether any session on the way ended by compression).

        Walks ``parent_session_id`` with a visited set; a parent id that names a
        missing session is the root; a cycle's root is its smallest id so every
        member agrees.
        """
        cached = self._roots.get(session_id)
        if cached is not None:
            return cached
        path: list[str] = []
        seen: set[str] = set()
        hop = False
        cur = session_id
        root = session_id
        while True:
            if cur in seen:
                root = min(path[path.index(cur) :])
                break
            seen.add(cur)
            path.append(cur)
            row = self.session(cur)
            if row is None:
                root = cur
                break
            if row.get("end_reason") == "compression":
                hop = True
            parent = row.get("parent_session_id")
            if not parent:
                root = cur
                break
            cur = parent
        self._roots[session_id] = (root, hop)
        return root, hop

    def live_ancestry(self, current: str | None) -> set[str]:
        """``current`` and its ancestors up to the first that left live context: the
        sessions whose live messages the model holds (Hermes' compaction keeps the
        session id, so the current session's own past is in its compaction archives)."""
        live: set[str] = set()
        sid = current
        while sid is not None and sid not in live:
            if sid != current and self.left_live_context(sid):
                break
            live.add(sid)
            sid = (self.session(sid) or {}).get("parent_session_id") or None
        return live

    def message_flags(self, message_id: int) -> tuple[str, int, int] | None:
        """(session_id, active, compacted) of a message, None when it does not exist."""
        return self.store.message_flags(message_id)

    def is_compacted(self, message_id: int) -> bool:
        flags = self.message_flags(message_id)
        return flags is not None and flags[1] == 0 and flags[2] == 1

    def meta(self, session_id: str) -> dict[str, Any]:
        row = self.session(session_id) or {}
        return {
            "when": format_ts(row.get("started_at")),
            "source": row.get("source") or "unknown",
            "model": row.get("model") or "unknown",
            "title": row.get("title") or None,
        }

    # views ------------------------------------------------------------
    def around(self, session_id: str, message_id: int, window: int) -> dict[str, Any]:
        return self.store.get_messages_around(session_id, message_id, window=window)

    def beyond(
        self, session_id: str, message_id: int, count: int, forward: bool
    ) -> dict[str, Any] | None:
        return self.store.get_messages_beyond(session_id, message_id, count, forward=forward)

    def anchored(self, session_id: str, message_id: int) -> dict[str, Any]:
        return self.store.get_anchored_view(
            session_id, message_id, window=DISCOVER_WINDOW, bookend=DISCOVER_BOOKEND
        )

    def anchor_summary(self, session_id: str, message_id: int) -> dict[str, Any]:
        return self.store.get_anchor_summary(session_id, message_id, DISCOVER_WINDOW)

    def sessions_by_activity(self, limit: int, offset: int) -> list[dict[str, Any]]:
        """Listable sessions, most recently active first (hidden sources left out)."""
        rows = self.store.sessions_by_activity(HIDDEN_SESSION_SOURCES, limit=limit, offset=offset)
        self.remember(rows)
        return rows


# --------------------------------------------------------------------------- opening stores


def _open_profile(path: Path, name: str) -> SessionStore:
    """Another profile's store, read-only (a call never writes to another profile)."""
    try:
        return open_store(path, readonly=True)
    except StoreError as exc:
        # The error names the cause to the caller; a traceback on the log (stderr at
        # the command line) would only repeat it.
        log.debug("cannot open profile %s at %s", name, path, exc_info=True)
        raise NoStore(
            f"profile {name!r} cannot be opened ({exc}); pass another profile or omit it",
            person=f"profile {name!r} cannot be opened ({exc}); pass another --profile",
        ) from exc


def _context(
    owned: list[Any], store: SessionStore | None, profile: Any, current: str | None
) -> CallContext:
    """Where a call reads: the named profile's store, else the caller's, else the default.

    The caller's store serves a profile when it is that profile's file; a store
    opened here is appended to ``owned``.
    """
    if profile is not None:
        name = validate_profile(profile)
        path = profile_db_path(name)
        if store is not None and store.path == os.path.realpath(path):
            return CallContext(store, name, current)
        opened = _open_profile(path, name)
        owned.append(opened)
        return CallContext(opened, name, None)
    if store is None:
        path = default_db_path()
        if nothing_there(path):
            # HERMES_HOME naming state.db itself, not its folder (os.path: never raises).
            in_file = os.path.isfile(path.parent)
            there = f"{path}" + (f" ({path.parent} is a file)" if in_file else "")
            raise NoDefaultStore(
                f"no session store at {there}; pass a store, set HERMES_HOME to the folder "
                "holding state.db, or pass profile",
                person=f"no session store at {there}; pass the Hermes state.db as --db PATH, "
                "or set HERMES_HOME to the folder holding it",
            )
        try:
            # A call only reads: read-only, so a read-only file, a full disk or
            # another process' write lock cannot stop it; rows the agent wrote
            # since the last hermes-fts write are read by the exact fallback.
            store = open_store(path, readonly=True)
        except StoreError as exc:
            raise NoStore(f"session store unavailable at {path}: {exc}") from exc
        owned.append(store)
    return CallContext(store, profile_of_file(store.path), current)


def open_context(
    owned: list[Any], store: SessionStore | None, call: Call
) -> tuple[CallContext, Call]:
    """The context ``call`` runs in; stores opened for it are appended to ``owned``.

    With no store and no default store, a session id is looked up in the
    profiles; the returned call then names the profile that holds it.
    """
    try:
        return _context(owned, store, call.profile, call.current_session_id), call
    except NoDefaultStore:
        if call.session_id is None or call.profile is not None:
            raise
        found = locate_profile(call.session_id, None)
        if found is None:
            raise
    located = replace(call, profile=found[0], qualified=True, current_session_id=None)
    ctx = _context(owned, None, located.profile, None)
    ctx.found_elsewhere = True
    return ctx, located


def with_profile_fallback(
    owned: list[Any],
    ctx: CallContext,
    call: Call,
    action: Callable[[CallContext], dict[str, Any]],
) -> dict[str, Any]:
    """``action(ctx)``; when the session is not there, the first other profile holding it.

    A call that named its profile is not redirected.
    """
    try:
        payload = action(ctx)
        if ctx.found_elsewhere:
            payload["profile"] = ctx.profile
        return payload
    except NotHere:
        if call.pinned or call.session_id is None:
            raise
        found = locate_profile(call.session_id, ctx.store.path)
        if found is None:
            raise
        name, path = found
        opened = _open_profile(path, name)
        owned.append(opened)
        elsewhere = CallContext(opened, name, None)
        elsewhere.found_elsewhere = True
        payload = action(elsewhere)
        payload["profile"] = name
        return payload
