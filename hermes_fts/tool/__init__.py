"""The ``session_search`` agent tool: four call forms over a ``SessionStore``.

The call form is inferred from the arguments (spec §8.2), there is no mode
parameter:

* ``session_id`` + ``around_message_id`` → SCROLL a window of one session;
* ``session_id`` alone                   → READ a whole session (head + tail when long);
* ``query``                              → DISCOVERY: full-text search, one result per
                                           conversation lineage, with the messages around
                                           each hit;
* nothing                                → BROWSE the most recently active sessions.

Every answer is a JSON-ready dict; failures are ``{"success": False,
"error": "..."}`` with a message that says what to pass instead.  The tool
never raises for bad arguments.

Profiles: ``$HERMES_HOME/profiles/<name>/state.db`` (the default profile is
``$HERMES_HOME/state.db``).  A profile store is opened read-only for one call
and closed afterwards; a store passed in by the caller is never closed.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import sqlite3
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from . import views
from .store import SessionStore, hermes_home

__all__ = ["TOOL_SCHEMA", "session_search"]

log = logging.getLogger("hermes_fts.tool")

# --------------------------------------------------------------------------- constants

_HIDDEN_SESSION_SOURCES = ("kanban", "subagent", "tool")
_DEMOTED_SESSION_SOURCES = ("cron",)
_DISCOVER_SCAN_LIMIT = 300
_FILTERED_SCAN_PAGE = 1000
_FILTERED_SCAN_MAX_ROWS = 30_000
_DISCOVER_SEARCH_FIELDS = (
    "id",
    "session_id",
    "role",
    "snippet",
    "source",
    "model",
    "session_started",
)
_DEFAULT_ROLES = ("user", "assistant")
_COMPACTION_PREFIXES = ("[CONTEXT COMPACTION", "[CONTEXT SUMMARY]:")
_FRESH_RESET_END_REASONS = frozenset(
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
_DISCOVER_WINDOW = 5
_DISCOVER_BOOKEND = 3
_WINDOW_CONTENT_CAP = 4000
_BOOKEND_CONTENT_CAP = 1200
_TRUNCATION_MARK = "\u2026"
_READ_HEAD = 20
_READ_TAIL = 10
_SCROLL_WINDOW_DEFAULT = 5
_SCROLL_WINDOW_MIN = 1
_SCROLL_WINDOW_MAX = 20
_LIMIT_DEFAULT = 3
_LIMIT_MIN = 1
_LIMIT_MAX = 10
_BROWSE_EXTRA_ROWS = 15
_BROWSE_MAX_PAGES = 8
_TITLE_MAX_CHARS = 100
_ERROR_MAX_CHARS = 2048
_SQLITE_INT_MIN = -(2**63)  # message ids are SQLite INTEGERs (64-bit signed)
_SQLITE_INT_MAX = 2**63 - 1

_DEFAULT_PROFILE = "default"
_PROFILE_NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
_LINK_PREFIX = "@session:"
_ANSI_RE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_TS_FORMAT = "%B %d, %Y at %I:%M %p"


class _ToolError(Exception):
    """A problem with the call; becomes ``{"success": False, "error": str(exc)}``."""


class _NotHere(_ToolError):
    """The session is not in this store; other profiles may hold it."""


class _NoDefaultStore(_ToolError):
    """No store was passed and ``$HERMES_HOME/state.db`` does not exist."""


def _error(message: str) -> dict[str, Any]:
    if len(message) > _ERROR_MAX_CHARS:
        message = message[:_ERROR_MAX_CHARS] + "\u2026 [truncated]"
    return {"success": False, "error": message}


# --------------------------------------------------------------------------- argument helpers


def _clamp_int(value: Any, default: int, low: int, high: int) -> int:
    """``value`` as an int in ``[low, high]``; ``default`` when it is not a number."""
    if value is None or isinstance(value, bool):
        number = default
    else:
        try:
            number = int(value)
        except (TypeError, ValueError, OverflowError):
            try:
                number = int(float(value))
            except (TypeError, ValueError, OverflowError):
                number = default
    return max(low, min(high, number))


def _message_id(value: Any) -> int | None:
    """An integer message id from an int or a string of digits; None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value):
        return int(value)
    return None


def _parse_roles(role_filter: Any) -> list[str]:
    if role_filter is None:
        return list(_DEFAULT_ROLES)
    if isinstance(role_filter, str):
        parts: Iterable[Any] = role_filter.split(",")
    elif isinstance(role_filter, (list, tuple, set, frozenset)):
        parts = role_filter
    else:
        raise _ToolError(
            "role_filter must be a comma-separated string such as 'user,assistant' or 'tool'"
        )
    roles: list[str] = []
    for part in parts:
        if not isinstance(part, str):
            raise _ToolError(
                "role_filter must be a comma-separated string such as 'user,assistant' or 'tool'"
            )
        role = part.strip().lower()
        if role and role not in roles:
            roles.append(role)
    return roles or list(_DEFAULT_ROLES)


def _parse_sort(sort: Any) -> str | None:
    if isinstance(sort, str) and sort.strip().lower() in ("newest", "oldest"):
        return sort.strip().lower()
    return None


def _parse_detail(detail: Any) -> str:
    if isinstance(detail, str) and detail.strip().lower() in ("full", "index"):
        return detail.strip().lower()
    return "adaptive"


def _parse_time_bound(value: Any, name: str) -> float | None:
    """Epoch seconds from a number, a numeric string or an ISO date/datetime string.

    Naive ISO values are local time (the same clock as the ``when`` fields).
    """
    if value is None:
        return None
    hint = (
        f"{name} must be epoch seconds or an ISO date/time such as 2026-03-15 or "
        f"2026-03-15T09:30 (got {value!r})"
    )
    if isinstance(value, bool):
        raise _ToolError(hint)
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            raise _ToolError(hint)
        return float(value)
    if not isinstance(value, str):
        raise _ToolError(hint)
    text = value.strip()
    if not text:
        return None
    try:
        number = float(text)
    except ValueError:
        pass
    else:
        if not math.isfinite(number):
            raise _ToolError(hint)
        return number
    iso = text[:-1] + "+00:00" if text[-1:] in ("Z", "z") else text
    try:
        return datetime.fromisoformat(iso).timestamp()
    except (ValueError, OverflowError, OSError):
        raise _ToolError(hint) from None


def _strip_link(ref: str) -> str:
    ref = ref.strip()
    if ref.startswith(_LINK_PREFIX):
        ref = ref[len(_LINK_PREFIX) :].strip()
    return ref


def _parse_exclusions(value: Any) -> frozenset[str]:
    if value is None:
        return frozenset()
    hint = "exclude_session_ids must be a list of session ids (or links) to leave out"
    if isinstance(value, str):
        items: Iterable[Any] = value.split(",")
    elif isinstance(value, (list, tuple, set, frozenset)):
        items = value
    else:
        raise _ToolError(hint)
    ids = set()
    for item in items:
        if not isinstance(item, str):
            raise _ToolError(hint)
        ref = _strip_link(item)
        if "/" in ref:
            ref = ref.split("/", 1)[1].strip()
        if ref:
            ids.add(ref)
    return frozenset(ids)


def _format_ts(ts: Any) -> str:
    if ts is None:
        return "unknown"
    if isinstance(ts, str):
        try:
            number = float(ts)
        except ValueError:
            return ts
    elif isinstance(ts, (int, float)) and not isinstance(ts, bool):
        number = float(ts)
    else:
        return str(ts)
    try:
        return datetime.fromtimestamp(number).strftime(_TS_FORMAT)
    except (ValueError, OverflowError, OSError):
        return str(ts)


# --------------------------------------------------------------------------- profiles


def _validate_profile(name: Any) -> str:
    if not isinstance(name, str):
        raise _ToolError("profile must be a profile name such as 'work' (letters, digits, _ or -)")
    if "\x00" in name:
        raise _ToolError("profile name contains a NUL character; pass a plain name such as 'work'")
    canon = name.strip()
    if not canon:
        raise _ToolError("profile name is empty; pass a profile name such as 'work' or omit it")
    if not _PROFILE_NAME_RE.fullmatch(canon):
        raise _ToolError(
            f"invalid profile name {name!r}: use 1-64 letters, digits, '_' or '-' "
            "(no paths, no '/', no '..'); pass a profile name such as 'work' or omit profile"
        )
    return canon


def _inside(path: Path, home: Path) -> bool:
    try:
        real = Path(os.path.realpath(path))
        real_home = Path(os.path.realpath(home))
    except (OSError, ValueError):
        return False
    return real == real_home or real_home in real.parents


def _available_profiles(home: Path) -> list[str]:
    names = []
    if (home / "state.db").is_file():
        names.append(_DEFAULT_PROFILE)
    root = home / "profiles"
    try:
        entries = sorted(root.iterdir()) if root.is_dir() else []
    except OSError:
        entries = []
    for entry in entries:
        if (
            _PROFILE_NAME_RE.fullmatch(entry.name)
            and entry.name != _DEFAULT_PROFILE
            and (entry / "state.db").is_file()
            and _inside(entry / "state.db", home)
        ):
            names.append(entry.name)
    return names


def profile_db_path(name: str) -> Path:
    """The ``state.db`` of a validated profile; raises ``_ToolError`` when unusable."""
    canon = _validate_profile(name)
    home = hermes_home()
    if canon == _DEFAULT_PROFILE:
        path = home / "state.db"
    else:
        path = home / "profiles" / canon / "state.db"
    if not _inside(path, home):
        raise _ToolError(
            f"profile {canon!r} resolves outside {home}; pass a profile that lives in "
            "$HERMES_HOME/profiles"
        )
    if not path.is_file():
        known = ", ".join(_available_profiles(home)) or "none"
        raise _ToolError(
            f"profile {canon!r} does not exist (no state.db at {path}); "
            f"pass one of the existing profiles ({known}) or omit profile"
        )
    return path


def _store_file(store: Any) -> str | None:
    try:
        for _seq, name, file in store.conn.execute("PRAGMA database_list"):
            if name == "main":
                return os.path.realpath(file) if file else None
    except Exception:  # noqa: BLE001 - diagnostics only
        log.debug("cannot read the store's database path", exc_info=True)
    return None


def _profile_of_file(path: str | None) -> str | None:
    if not path:
        return None
    home = os.path.realpath(hermes_home())
    if path == os.path.join(home, "state.db"):
        return _DEFAULT_PROFILE
    parent = os.path.dirname(path)
    if (
        os.path.basename(path) == "state.db"
        and os.path.dirname(parent) == os.path.join(home, "profiles")
        and _PROFILE_NAME_RE.fullmatch(os.path.basename(parent))
    ):
        return os.path.basename(parent)
    return None


def _open_store(path: Path, readonly: bool) -> Any:
    return SessionStore(str(path), readonly=readonly)


def _file_has_session(path: Path, session_id: str) -> bool:
    try:
        conn = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
    except sqlite3.Error:
        return False
    try:
        row = conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return row is not None
    except sqlite3.Error:
        return False
    finally:
        conn.close()


def _locate_profile(session_id: str, skip_file: str | None) -> tuple[str, Path] | None:
    """First profile (default first, then by name) whose store holds ``session_id``."""
    home = hermes_home()
    seen = {skip_file} if skip_file else set()
    for name in _available_profiles(home):
        path = (
            home / "state.db" if name == _DEFAULT_PROFILE else home / "profiles" / name / "state.db"
        )
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        if _file_has_session(path, session_id):
            return name, path
    return None


# --------------------------------------------------------------------------- session context


class _Ctx:
    """One call's view of a store: profile for links, current session, lookups cached."""

    def __init__(self, store: Any, profile: str | None, current_session_id: str | None):
        self.store = store
        self.conn: sqlite3.Connection = store.conn
        self.profile = profile
        self.current_session_id = current_session_id or None
        self.found_elsewhere = False  # a bare id resolved in another profile's store
        self._sessions: dict[str, dict[str, Any] | None] = {}
        self._roots: dict[str, tuple[str, bool]] = {}

    # links ------------------------------------------------------------
    def link(self, session_id: str) -> str:
        if self.profile:
            return f"{_LINK_PREFIX}{self.profile}/{session_id}"
        return f"{_LINK_PREFIX}{session_id}"

    # sessions ---------------------------------------------------------
    def session(self, session_id: str | None) -> dict[str, Any] | None:
        if not session_id:
            return None
        if session_id not in self._sessions:
            try:
                cur = self.conn.execute("SELECT * FROM sessions WHERE id = ?", (session_id,))
                row = cur.fetchone()
                names = [d[0] for d in cur.description]
                self._sessions[session_id] = None if row is None else dict(zip(names, row))
            except sqlite3.Error:
                log.debug("session lookup failed for %s", session_id, exc_info=True)
                self._sessions[session_id] = None
        return self._sessions[session_id]

    def end_reason(self, session_id: str) -> str | None:
        row = self.session(session_id)
        return None if row is None else row.get("end_reason")

    def left_live_context(self, session_id: str) -> bool:
        reason = self.end_reason(session_id)
        return reason == "compression" or reason in _FRESH_RESET_END_REASONS

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

    def message_flags(self, message_id: int) -> tuple[str, int, int] | None:
        """(session_id, active, compacted) of a message, None when it does not exist."""
        try:
            row = self.conn.execute(
                "SELECT session_id, active, compacted FROM messages WHERE id = ?", (message_id,)
            ).fetchone()
        except sqlite3.Error:
            log.debug("message lookup failed for %s", message_id, exc_info=True)
            return None
        if row is None:
            return None
        return str(row[0]), int(row[1] or 0), int(row[2] or 0)

    def is_compacted(self, message_id: int) -> bool:
        flags = self.message_flags(message_id)
        return flags is not None and flags[1] == 0 and flags[2] == 1

    def meta(self, session_id: str) -> dict[str, Any]:
        row = self.session(session_id) or {}
        return {
            "when": _format_ts(row.get("started_at")),
            "source": row.get("source") or "unknown",
            "model": row.get("model") or "unknown",
            "title": row.get("title") or None,
        }

    # views ------------------------------------------------------------
    def around(self, session_id: str, message_id: int, window: int) -> dict[str, Any]:
        method = getattr(self.store, "get_messages_around", None)
        if callable(method):
            return method(session_id, message_id, window=window)
        return views.get_messages_around(self.conn, session_id, message_id, window=window)

    def anchored(self, session_id: str, message_id: int) -> dict[str, Any]:
        method = getattr(self.store, "get_anchored_view", None)
        if callable(method):
            return method(
                session_id, message_id, window=_DISCOVER_WINDOW, bookend=_DISCOVER_BOOKEND
            )
        return views.get_anchored_view(
            self.conn, session_id, message_id, window=_DISCOVER_WINDOW, bookend=_DISCOVER_BOOKEND
        )


# --------------------------------------------------------------------------- shaping


def _is_compaction_summary(content: Any) -> bool:
    return isinstance(content, str) and content.lstrip().startswith(_COMPACTION_PREFIXES)


def _shape_message(
    msg: dict[str, Any], anchor_id: int | None = None, cap: int | None = None
) -> dict[str, Any]:
    content = views.decode_content(msg.get("content"))
    if isinstance(content, str) and "\x1b" in content:
        content = _ANSI_RE.sub("", content)
    out: dict[str, Any] = {
        "id": msg.get("id"),
        "role": msg.get("role"),
        "content": content,
        "timestamp": msg.get("timestamp"),
    }
    for key in ("tool_name", "tool_calls", "tool_call_id"):
        value = msg.get(key)
        if key == "tool_calls" and isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                pass
        if value:
            out[key] = value
    if anchor_id is not None and msg.get("id") == anchor_id:
        out["anchor"] = True
    if cap is not None and isinstance(content, str) and len(content) > cap:
        out["content"] = content[:cap] + _TRUNCATION_MARK
        out["content_truncated"] = True
        out["original_content_chars"] = len(content)
    return {k: v for k, v in out.items() if v is not None or k == "content"}


def _bookend_messages(messages: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        _shape_message(m, cap=_BOOKEND_CONTENT_CAP)
        for m in messages
        if not _is_compaction_summary(views.decode_content(m.get("content")))
    ]


def _rebuild_note(store: Any) -> dict[str, Any] | None:
    status_fn = getattr(store, "rebuild_status", None)
    if not callable(status_fn):
        return None
    try:
        status = status_fn()
        if not status:
            return None
        total = int(status.get("total") or 0)
        indexed = int(status.get("indexed") or 0)
        percent = status.get("percent")
        if percent is None:
            percent = round(100.0 * indexed / total, 1) if total else 0.0
        return {
            "percent": percent,
            "note": (
                f"Search index backfill in progress: {percent}% ({indexed:,} of {total:,} "
                "messages indexed). Hits from older messages can be missing until it completes."
            ),
        }
    except Exception:  # noqa: BLE001 - an annotation must never break a search
        log.debug("rebuild status unavailable", exc_info=True)
        return None


# --------------------------------------------------------------------------- discovery


def _resolve_title(ctx: _Ctx, title: str) -> str | None:
    """Exact title, or the newest ``"<title> #N"`` continuation when one exists.

    Continuations are found with a range scan on the title (an index on
    ``sessions(title)`` serves it); wildcard characters in the title are
    literal, so ``test_project`` never matches ``testXproject #2``.
    """
    resolver = getattr(ctx.store, "resolve_session_by_title", None)
    if callable(resolver):
        found = resolver(title)
        return str(found) if found else None
    prefix = title + " #"
    best: tuple[float, str] | None = None
    exact: str | None = None
    for sid, candidate, started in ctx.conn.execute(
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


def _in_bounds(ts: Any, after: float | None, before: float | None) -> bool:
    if after is None and before is None:
        return True
    try:
        value = float(ts)
    except (TypeError, ValueError):
        return False
    if after is not None and value < after:
        return False
    return not (before is not None and value >= before)


class _Discovery:
    def __init__(
        self,
        ctx: _Ctx,
        query: str,
        limit: int,
        roles: list[str],
        sort: str | None,
        detail: str,
        after: float | None,
        before: float | None,
        excluded: frozenset[str],
    ) -> None:
        self.ctx = ctx
        self.query = query
        self.limit = limit
        self.roles = roles
        self.sort = sort
        self.detail = detail
        self.after = after
        self.before = before
        self.excluded = excluded
        if after is not None and before is not None and after >= before:
            raise _ToolError("after must be earlier than before; pass a wider time range")
        self.current = ctx.current_session_id
        self.current_root = ctx.lineage(self.current)[0] if self.current else None

    # title ------------------------------------------------------------
    def title_match(self) -> dict[str, Any] | None:
        title = self.query.strip().strip("`\"'\u201c\u201d\u2018\u2019").strip()
        if not title or len(title) > _TITLE_MAX_CHARS:
            return None
        try:
            sid = _resolve_title(self.ctx, title)
            if not sid or sid in self.excluded:
                return None
            row = self.ctx.session(sid)
            if row is None:
                return None
            root = self.ctx.lineage(sid)[0]
            if (
                self.current_root is not None
                and root == self.current_root
                and not self.ctx.left_live_context(sid)
            ):
                return None
            root_row = self.ctx.session(root) or row
            if (
                root_row.get("source") in _HIDDEN_SESSION_SOURCES
                or row.get("source") in _HIDDEN_SESSION_SOURCES
            ):
                return None
            if not _in_bounds(row.get("started_at"), self.after, self.before):
                return None
            return {"session_id": sid, "root": root, "title": row.get("title") or title}
        except Exception:  # noqa: BLE001 - a title lookup must not break discovery
            log.debug("title match failed for %r", self.query, exc_info=True)
            return None

    # raw scan ---------------------------------------------------------
    def scan(self) -> list[dict[str, Any]]:
        filtered = bool(self.after is not None or self.before is not None or self.excluded)
        fields = _DISCOVER_SEARCH_FIELDS + (("timestamp",) if filtered else ())
        kwargs = {
            "exclude_sources": _HIDDEN_SESSION_SOURCES,
            "role_filter": self.roles,
            "sort": self.sort,
            "fields": fields,
        }
        if not filtered:
            return list(
                self.ctx.store.search_messages(
                    self.query, limit=_DISCOVER_SCAN_LIMIT, offset=0, **kwargs
                )
            )
        kept: list[dict[str, Any]] = []
        offset = 0
        while len(kept) < _DISCOVER_SCAN_LIMIT and offset < _FILTERED_SCAN_MAX_ROWS:
            page = list(
                self.ctx.store.search_messages(
                    self.query, limit=_FILTERED_SCAN_PAGE, offset=offset, **kwargs
                )
            )
            for row in page:
                if row.get("session_id") in self.excluded:
                    continue
                if not _in_bounds(row.get("timestamp"), self.after, self.before):
                    continue
                kept.append(row)
            if len(page) < _FILTERED_SCAN_PAGE:
                break
            offset += _FILTERED_SCAN_PAGE
        return kept[:_DISCOVER_SCAN_LIMIT]

    # main -------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        title = self.title_match()
        try:
            rows = self.scan()
        except Exception as exc:  # noqa: BLE001 - reported to the caller
            log.error("full-text search failed for %r", self.query, exc_info=True)
            raise _ToolError(
                f"Search failed: {exc}; retry with plain words (drop operators and "
                "punctuation) or browse with no arguments"
            ) from exc
        rows.sort(key=lambda r: 1 if r.get("source") in _DEMOTED_SESSION_SOURCES else 0)

        payload: dict[str, Any] = {
            "success": True,
            "mode": "discover",
            "query": self.query,
            "detail": self.detail,
        }
        filters: dict[str, Any] = {}
        if self.after is not None:
            filters["after"] = self.after
        if self.before is not None:
            filters["before"] = self.before
        if self.excluded:
            filters["exclude_session_ids"] = sorted(self.excluded)
        if filters:
            payload["filters"] = filters

        slots: dict[str, dict[str, Any]] = {}
        if title is not None:
            slots[title["root"]] = {"title_match": title}
        for row in rows:
            if len(slots) >= self.limit:
                break
            sid = row.get("session_id")
            if not sid:
                continue
            root = self.ctx.lineage(sid)[0]
            if root in slots:
                continue
            if self.current is not None and (root == self.current_root or sid == self.current):
                compacted_hit = self.ctx.is_compacted(int(row["id"]))
                if root == self.current_root and not (
                    compacted_hit or self.ctx.left_live_context(sid)
                ):
                    continue
                if sid == self.current and not compacted_hit:
                    continue
            slots[root] = {"hit": row}

        results: list[dict[str, Any]] = []
        for root, slot in slots.items():
            if "title_match" in slot:
                entry = self._title_entry(root, slot["title_match"], first=not results)
            else:
                entry = self._hit_entry(root, slot["hit"], first=not results)
            if entry is not None:
                entry["link"] = self.ctx.link(entry["session_id"])
                results.append(entry)

        payload["results"] = results
        payload["count"] = len(results)
        payload["sessions_searched"] = len(slots)
        if not results:
            payload["message"] = (
                "No matching sessions found. Try fewer or different words, join "
                "alternatives with OR, use a prefix such as deploy*, or drop the time "
                "filters; this searches past conversations only."
            )
        note = _rebuild_note(self.ctx.store)
        if note is not None:
            payload["index_rebuild"] = note
        return payload

    def _entry_detail(self, first: bool) -> str:
        if self.detail == "index":
            return "index"
        if self.detail == "full" or first:
            return "full"
        return "compact"

    def _attach_view(
        self, entry: dict[str, Any], session_id: str, anchor_id: int, detail: str
    ) -> bool:
        try:
            if detail == "full":
                view = self.ctx.anchored(session_id, anchor_id)
            else:  # compact: the anchor and the neighbour counts are all it shows
                view = views.get_anchor_summary(
                    self.ctx.conn, session_id, anchor_id, _DISCOVER_WINDOW
                )
        except Exception:  # noqa: BLE001 - one broken hit must not sink the others
            log.warning("anchored view failed for %s/%s", session_id, anchor_id, exc_info=True)
            return False
        window = view.get("window") or []
        if detail == "full":
            entry["bookend_start"] = _bookend_messages(view.get("bookend_start") or [])
            entry["messages"] = [_shape_message(m, anchor_id, _WINDOW_CONTENT_CAP) for m in window]
            entry["bookend_end"] = _bookend_messages(view.get("bookend_end") or [])
        else:
            entry["messages"] = [
                _shape_message(m, anchor_id, _WINDOW_CONTENT_CAP)
                for m in window
                if m.get("id") == anchor_id
            ]
        entry["messages_before"] = int(view.get("messages_before") or 0)
        entry["messages_after"] = int(view.get("messages_after") or 0)
        return True

    def _hit_entry(self, root: str, hit: dict[str, Any], first: bool) -> dict[str, Any] | None:
        sid = str(hit["session_id"])
        hit_id = int(hit["id"])
        root_row = self.ctx.session(root) or {}
        detail = self._entry_detail(first)
        entry: dict[str, Any] = {
            "session_id": sid,
            "when": _format_ts(root_row.get("started_at") or hit.get("session_started")),
            "source": root_row.get("source") or hit.get("source") or "unknown",
            "model": root_row.get("model") or hit.get("model") or "unknown",
            "title": root_row.get("title") or None,
            "matched_role": hit.get("role"),
            "match_message_id": hit_id,
            "snippet": hit.get("snippet") or "",
            "detail": detail,
        }
        if root != sid:
            entry["parent_session_id"] = root
        if detail != "index" and not self._attach_view(entry, sid, hit_id, detail):
            return None
        return entry

    def _title_entry(self, root: str, match: dict[str, Any], first: bool) -> dict[str, Any] | None:
        sid = match["session_id"]
        row = self.ctx.session(sid) or {}
        root_row = self.ctx.session(root) or row
        anchor_id = views.first_message_id(self.ctx.conn, sid)
        detail = "index" if self.detail == "index" else "full"
        entry: dict[str, Any] = {
            "session_id": sid,
            "when": _format_ts(root_row.get("started_at") or row.get("started_at")),
            "source": root_row.get("source") or row.get("source") or "unknown",
            "model": root_row.get("model") or row.get("model") or "unknown",
            "title": match["title"],
            "matched_role": "session_title",
            "match_message_id": anchor_id,
            "snippet": f"Session title matched: {match['title']}",
            "detail": detail,
        }
        if root != sid:
            entry["parent_session_id"] = root
        if detail == "index":
            return entry
        if anchor_id is None:
            entry.update(
                bookend_start=[], messages=[], bookend_end=[], messages_before=0, messages_after=0
            )
            return entry
        if not self._attach_view(entry, sid, anchor_id, "full"):
            return None
        return entry


# --------------------------------------------------------------------------- scroll / read


def _not_found(session_id: str) -> str:
    return (
        f"session_id not found: {session_id}; pass a session_id (or link) from a search or "
        "browse result, or call with no arguments to list recent sessions"
    )


def _scroll(ctx: _Ctx, session_id: str, around: Any, window: Any) -> dict[str, Any]:
    anchor_id = _message_id(around)
    if anchor_id is None:
        raise _ToolError(
            f"scroll requires integer around_message_id (got {around!r}); pass a message "
            "id from a result's messages, or omit around_message_id to read the session"
        )
    if not _SQLITE_INT_MIN <= anchor_id <= _SQLITE_INT_MAX:
        raise _ToolError(
            f"around_message_id {anchor_id} is out of range; pass a message id from a "
            "result's messages, or omit around_message_id to read the session"
        )
    size = _clamp_int(window, _SCROLL_WINDOW_DEFAULT, _SCROLL_WINDOW_MIN, _SCROLL_WINDOW_MAX)
    flags = ctx.message_flags(anchor_id)
    owner = flags[0] if flags is not None else None

    if ctx.current_session_id is not None:
        anchor_session = owner or session_id
        current_root = ctx.lineage(ctx.current_session_id)[0]
        if ctx.lineage(anchor_session)[0] == current_root:
            archived = flags is not None and flags[1] == 0 and flags[2] == 1
            rewound = flags is not None and flags[1] == 0 and flags[2] == 0
            if not (archived or (not rewound and ctx.left_live_context(anchor_session))):
                raise _ToolError(
                    "scroll rejected: anchor lives in the current session lineage (already in "
                    "your active context); scroll a session from another search result instead"
                )

    if ctx.session(session_id) is None:
        raise _NotHere(_not_found(session_id))
    try:
        view = ctx.around(session_id, anchor_id, size)
    except Exception as exc:  # noqa: BLE001 - reported to the caller
        log.error("failed to load messages around %s in %s", anchor_id, session_id, exc_info=True)
        raise _ToolError(f"failed to load messages: {exc}") from exc
    payload_extra: dict[str, Any] = {}
    if (
        not view.get("window")
        and owner is not None
        and owner != session_id
        and ctx.lineage(owner)[0] == ctx.lineage(session_id)[0]
    ):
        given = session_id
        session_id = owner
        view = ctx.around(session_id, anchor_id, size)
        payload_extra["warning"] = (
            f"around_message_id {anchor_id} lives in {owner} (same conversation lineage as "
            f"{given}); switched to that session"
        )
    if not view.get("window"):
        raise _ToolError(
            f"around_message_id {anchor_id} not in session_id {session_id}; pass a message id "
            "from that session (read it with session_id alone to see its ids)"
        )
    messages = [_shape_message(m, anchor_id) for m in view["window"]]
    payload = {
        "success": True,
        "mode": "scroll",
        "session_id": session_id,
        "link": ctx.link(session_id),
        "around_message_id": anchor_id,
        "session_meta": ctx.meta(session_id),
        "window": size,
        "messages": messages,
        "messages_before": int(view.get("messages_before") or 0),
        "messages_after": int(view.get("messages_after") or 0),
    }
    payload.update(payload_extra)
    return payload


def _read(ctx: _Ctx, session_id: str) -> dict[str, Any]:
    if ctx.session(session_id) is None:
        raise _NotHere(_not_found(session_id))
    try:
        raw = list(ctx.store.get_messages(session_id))
    except Exception as exc:  # noqa: BLE001 - reported to the caller
        log.error("failed to load session %s", session_id, exc_info=True)
        raise _ToolError(f"failed to load session: {exc}") from exc
    total = len(raw)
    truncated = total > _READ_HEAD + _READ_TAIL
    chosen = raw[:_READ_HEAD] + raw[-_READ_TAIL:] if truncated else raw
    payload: dict[str, Any] = {
        "success": True,
        "mode": "read",
        "session_id": session_id,
        "link": ctx.link(session_id),
        "session_meta": ctx.meta(session_id),
        "message_count": total,
        "truncated": truncated,
        "messages": [_shape_message(m) for m in chosen],
    }
    if truncated:
        payload["message"] = (
            f"Session has {total} messages; showing the first {_READ_HEAD} and the last "
            f"{_READ_TAIL}. To see the middle, pass around_message_id (any message id shown "
            "here) with this session_id."
        )
    return payload


# --------------------------------------------------------------------------- browse


def _listable(ctx: _Ctx, row: dict[str, Any]) -> str | None:
    """The id of the conversation this session belongs to in a listing, or None.

    Roots, ``/branch`` children and ``/new`` reset children are conversations of
    their own; compression continuations belong to the conversation they
    continue; delegation children are never listed.
    """
    seen: set[str] = set()
    cur = row
    while True:
        sid = str(cur["id"])
        if sid in seen:
            return min(seen)
        seen.add(sid)
        config = _model_config(cur)
        if config.get("_delegate_from"):
            return None
        parent_id = cur.get("parent_session_id")
        if not parent_id:
            return sid
        if parent_id in seen:  # a parent cycle: the loop is one conversation
            return min(seen)
        if config.get("_branched_from") or config.get("_reset_from"):
            return sid
        parent = ctx.session(parent_id)
        if parent is None:
            return sid
        reason = parent.get("end_reason")
        if reason == "branched":
            return sid
        if reason in _FRESH_RESET_END_REASONS:
            key = cur.get("session_key")
            if key and key == parent.get("session_key"):
                return sid
            return None
        if reason == "compression":
            cur = parent
            continue
        return None


def _model_config(row: dict[str, Any]) -> dict[str, Any]:
    raw = row.get("model_config")
    if not raw:
        return {}
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _browse(ctx: _Ctx, limit: int) -> dict[str, Any]:
    current = ctx.current_session_id
    # The conversation the caller is in (a compressed chain lists as one entry):
    # already in context, so it is left out; other conversations of the same
    # lineage (/new resets, branches) stay listed.
    skip_conversation: str | None = None
    if current is not None:
        current_row = ctx.session(current)
        if current_row is not None:
            skip_conversation = _listable(ctx, current_row)
    page = limit + _BROWSE_EXTRA_ROWS
    results: list[dict[str, Any]] = []
    shown: set[str] = set()
    try:
        for number in range(_BROWSE_MAX_PAGES):
            rows = views.sessions_by_activity(
                ctx.conn, _HIDDEN_SESSION_SOURCES, limit=page, offset=number * page
            )
            for row in rows:
                sid = str(row["id"])
                ctx._sessions.setdefault(sid, row)
                if sid == current:
                    continue
                conversation = _listable(ctx, row)
                if conversation is None or conversation in shown:
                    continue
                if conversation == skip_conversation:
                    continue
                shown.add(conversation)
                results.append(_browse_entry(ctx, row, conversation))
                if len(results) >= limit:
                    break
            if len(results) >= limit or len(rows) < page:
                break
    except sqlite3.Error as exc:
        log.error("listing recent sessions failed", exc_info=True)
        raise _ToolError(f"Failed to list recent sessions: {exc}") from exc
    return {
        "success": True,
        "mode": "browse",
        "results": results,
        "count": len(results),
        "message": (
            f"Showing the {len(results)} most recently active sessions. Pass query to "
            "search, session_id to read one, or session_id with around_message_id to scroll."
        ),
    }


def _browse_entry(ctx: _Ctx, row: dict[str, Any], conversation: str) -> dict[str, Any]:
    sid = str(row["id"])
    count = row.get("message_count")
    if not count:
        count = views.count_messages(ctx.conn, sid)
    entry: dict[str, Any] = {
        "session_id": sid,
        "link": ctx.link(sid),
        "title": row.get("title") or None,
        "source": row.get("source") or "unknown",
        "started_at": _format_ts(row.get("started_at")),
        "last_active": _format_ts(row.get("last_active")),
        "message_count": int(count),
        "preview": views.session_preview(ctx.conn, sid),
    }
    if conversation != sid:
        entry["lineage_root_id"] = conversation
    return entry


# --------------------------------------------------------------------------- entry point


def _split_session_ref(session_id: Any, profile: Any) -> tuple[str | None, Any, bool]:
    """(session id, profile, whether the id named its profile) from the caller's args."""
    if not isinstance(session_id, str):
        return None, profile, False
    ref = _strip_link(session_id)
    if "/" in ref:
        left, right = ref.split("/", 1)
        if right.strip():
            if profile is None:
                return right.strip(), left.strip(), True
            return right.strip(), profile, True
    return (ref or None), profile, False


def session_search(
    store: Any = None,
    query: str | None = None,
    session_id: str | None = None,
    around_message_id: Any = None,
    window: Any = None,
    limit: Any = None,
    sort: str | None = None,
    detail: str | None = None,
    role_filter: Any = None,
    profile: str | None = None,
    current_session_id: str | None = None,
    *,
    after: Any = None,
    before: Any = None,
    exclude_session_ids: Any = None,
) -> dict[str, Any]:
    """Search, read, scroll or browse past conversations; returns a JSON-ready dict.

    The call form follows from the arguments: ``session_id`` with
    ``around_message_id`` scrolls, ``session_id`` alone reads, ``query``
    searches, nothing browses.  ``store`` is a ``SessionStore`` (``None`` opens
    ``$HERMES_HOME/state.db``); ``profile`` (or a ``@session:<profile>/<id>``
    link) reads another profile's store read-only.  Errors come back as
    ``{"success": False, "error": "..."}``.
    """
    owned: list[Any] = []
    try:
        return _session_search(
            owned,
            store,
            query,
            session_id,
            around_message_id,
            window,
            limit,
            sort,
            detail,
            role_filter,
            profile,
            current_session_id,
            after,
            before,
            exclude_session_ids,
        )
    except _ToolError as exc:
        return _error(str(exc))
    except Exception as exc:  # noqa: BLE001 - the tool answers, it never raises
        log.exception("session_search failed")
        return _error(f"session_search failed: {exc}; retry with simpler arguments")
    finally:
        for opened in owned:
            try:
                opened.close()
            except Exception:  # noqa: BLE001
                log.debug("closing a profile store failed", exc_info=True)


def _session_search(
    owned: list[Any],
    store: Any,
    query: Any,
    session_id: Any,
    around_message_id: Any,
    window: Any,
    limit: Any,
    sort: Any,
    detail: Any,
    role_filter: Any,
    profile: Any,
    current_session_id: Any,
    after: Any,
    before: Any,
    exclude_session_ids: Any,
) -> dict[str, Any]:
    sid, profile, qualified = _split_session_ref(session_id, profile)
    if isinstance(current_session_id, str):
        current_session_id = current_session_id.strip() or None
    else:
        current_session_id = None

    try:
        ctx = _context(owned, store, profile, current_session_id)
    except _NoDefaultStore:
        found = _locate_profile(sid, None) if sid is not None and profile is None else None
        if found is None:
            raise
        profile, qualified = found[0], True
        ctx = _context(owned, None, profile, None)
        ctx.found_elsewhere = True

    if sid is not None and around_message_id is not None:
        return _with_profile_fallback(
            owned,
            ctx,
            sid,
            profile is not None or qualified,
            lambda c: _scroll(c, sid, around_message_id, window),
        )
    if sid is not None:
        return _with_profile_fallback(
            owned, ctx, sid, profile is not None or qualified, lambda c: _read(c, sid)
        )
    if around_message_id is not None:
        raise _ToolError(
            "scroll requires session_id; pass the session_id (or link) of the result that "
            "holds around_message_id"
        )

    count = _clamp_int(limit, _LIMIT_DEFAULT, _LIMIT_MIN, _LIMIT_MAX)
    if not isinstance(query, str) or not query.strip():
        return _browse(ctx, count)

    return _Discovery(
        ctx,
        query.strip(),
        count,
        _parse_roles(role_filter),
        _parse_sort(sort),
        _parse_detail(detail),
        _parse_time_bound(after, "after"),
        _parse_time_bound(before, "before"),
        _parse_exclusions(exclude_session_ids),
    ).run()


def _context(owned: list[Any], store: Any, profile: Any, current: str | None) -> _Ctx:
    if profile is not None:
        name = _validate_profile(profile)
        path = profile_db_path(name)
        if store is not None and _store_file(store) == os.path.realpath(path):
            return _Ctx(store, name, current)
        opened = _open_readonly(path, name)
        owned.append(opened)
        return _Ctx(opened, name, None)
    if store is None:
        path = hermes_home() / "state.db"
        if not path.is_file():
            raise _NoDefaultStore(
                f"no session store at {path}; pass a store, set HERMES_HOME to the folder "
                "holding state.db, or pass profile"
            )
        try:
            store = _open_store(path, readonly=False)
        except Exception as exc:  # noqa: BLE001 - reported to the caller
            raise _ToolError(f"session store unavailable at {path}: {exc}") from exc
        owned.append(store)
    return _Ctx(store, _profile_of_file(_store_file(store)), current)


def _open_readonly(path: Path, name: str) -> Any:
    try:
        return _open_store(path, readonly=True)
    except Exception as exc:  # noqa: BLE001 - reported to the caller
        log.warning("cannot open profile %s at %s", name, path, exc_info=True)
        raise _ToolError(
            f"profile {name!r} cannot be opened ({exc}); pass another profile or omit it"
        ) from exc


def _with_profile_fallback(
    owned: list[Any], ctx: _Ctx, session_id: str, pinned: bool, action: Any
) -> dict[str, Any]:
    try:
        payload = action(ctx)
        if ctx.found_elsewhere:
            payload["profile"] = ctx.profile
        return payload
    except _NotHere:
        if pinned:
            raise
        found = _locate_profile(session_id, _store_file(ctx.store))
        if found is None:
            raise
        name, path = found
        opened = _open_readonly(path, name)
        owned.append(opened)
        payload = action(_Ctx(opened, name, None))
        payload["profile"] = name
        return payload


# --------------------------------------------------------------------------- schema

_DESCRIPTION = """\
Look through this user's past conversations with you (the stored session history) \
and bring back the real messages, never a summary. Use it when the user refers to \
earlier work: "what did we decide about X", "where did we leave Y", "find the chat \
where we fixed Z", "what was I doing last week".

The call form follows from the arguments you pass:
1. Search: query="..." returns one result per conversation (best hit first), each \
with match_message_id, a snippet with the match between >>> and <<<, and the messages \
around the hit. With the default detail="adaptive" only the first result carries its \
full surroundings (opening and closing turns plus the window); the others show just \
the matching message, so scroll one of them if it looks more promising. \
detail="full" expands every result; detail="index" returns snippets only (cheapest, \
good for a first look). Narrow with after/before (epoch seconds or ISO dates such \
as 2026-03-15) and exclude_session_ids (sessions you have already looked at).
2. Scroll: session_id plus around_message_id returns window messages on each side \
of that message. To move forward pass the last message id you got, to move back the \
first one; that boundary message repeats. Fewer than window messages on one side \
means you reached the start or end of the session.
3. Read: session_id alone returns the whole session, or its first 20 and last 10 \
messages when it has more than 30 (scroll to see the middle).
4. Browse: no arguments lists the most recently active sessions with title and \
preview.

Query syntax: words are combined with AND automatically; put OR between alternatives \
for broader recall (deploy OR release OR rollout); "double quotes" match an exact \
phrase; a trailing * matches a prefix (migrat*); NOT excludes a word. Chinese, \
Japanese and Korean work as typed, no spaces needed. If nothing comes back, try \
fewer words, synonyms joined by OR, or a prefix.

This tool only sees past conversations. It is never evidence about the current \
state of anything outside them: when the user points at a source (a URL, file, \
repository, mailbox, contact, account or running system) inspect that source \
first if you can and use this tool only as background. An empty result does not \
mean there was no prior contact or that something does not exist; say what you \
checked instead of drawing that conclusion.

Every result has a link such as @session:default/20260315_092437_c9a6ff. To point \
the user at a session, write that link exactly as given, inside your sentence where \
a noun would go ("we settled this in @session:default/20260315_092437_c9a6ff last \
week"). The interface shows it as the session title, so do not wrap it in markdown \
or backticks, do not put it on a line by itself, and do not repeat the title, id or \
date next to it. A link (or its id) can be passed back as session_id."""

TOOL_SCHEMA: dict[str, Any] = {
    "name": "session_search",
    "description": _DESCRIPTION,
    "parameters": {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": (
                    "Words to find in past conversations (search form). Omit to read, "
                    "scroll or browse."
                ),
            },
            "session_id": {
                "type": "string",
                "description": (
                    "A session id or link from an earlier result "
                    "(@session:<profile>/<id>, <profile>/<id> or <id>). Alone it reads the "
                    "session; with around_message_id it scrolls."
                ),
            },
            "around_message_id": {
                "type": "integer",
                "description": "Message id to centre a scroll window on (needs session_id).",
            },
            "window": {
                "type": "integer",
                "minimum": _SCROLL_WINDOW_MIN,
                "maximum": _SCROLL_WINDOW_MAX,
                "description": "Messages on each side of around_message_id; default 5, 1 to 20.",
            },
            "limit": {
                "type": "integer",
                "minimum": _LIMIT_MIN,
                "maximum": _LIMIT_MAX,
                "description": (
                    "How many conversations to return (search and browse); default 3, "
                    "at most 10. Use 5-10 when the topic spans many sessions."
                ),
            },
            "sort": {
                "type": "string",
                "enum": ["newest", "oldest"],
                "description": (
                    "Omit for best match first. newest favours recent hits ('where did we "
                    "leave X'); oldest favours early ones ('how did X start')."
                ),
            },
            "detail": {
                "type": "string",
                "enum": ["adaptive", "full", "index"],
                "description": (
                    "adaptive (default): first result in full, others compact; full: all "
                    "results in full; index: snippets only."
                ),
            },
            "role_filter": {
                "type": "string",
                "description": (
                    "Comma-separated roles to search; default 'user,assistant'. Use "
                    "'user,assistant,tool' or 'tool' to search tool output."
                ),
            },
            "profile": {
                "type": "string",
                "description": (
                    "Another profile's history to read (read-only), e.g. 'work'. Taken from "
                    "a link's <profile>/ part automatically."
                ),
            },
            "after": {
                "type": "string",
                "description": "Only hits at or after this time: epoch seconds or ISO date.",
            },
            "before": {
                "type": "string",
                "description": "Only hits before this time: epoch seconds or ISO date.",
            },
            "exclude_session_ids": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Session ids or links to leave out of search results.",
            },
        },
        "required": [],
        "additionalProperties": False,
    },
}
