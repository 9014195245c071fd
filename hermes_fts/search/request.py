"""What one search asks for, checked: ``SearchRequest`` and the names it is checked against.

Every caller (the store, the tool, the CLI) builds a ``SearchRequest``, so a
bad limit, sort, role list, time bound, route or field name gets the same
clear error everywhere, before any SQL runs.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .._params import as_int, as_session_ids, as_time_bound, check_text, parse_roles, parse_sort
from .plan import ROUTES

__all__ = [
    "OPTIONAL_FIELDS",
    "RESULT_FIELDS",
    "ROUTE_ORDER",
    "SESSIONS_SORT",
    "SearchRequest",
    "check_route",
]

RESULT_FIELDS = (
    "id",
    "session_id",
    "role",
    "snippet",
    "timestamp",
    "tool_name",
    "source",
    "model",
    "session_started",
    "context",
)
ROUTE_ORDER = (*ROUTES, "like_scan")  # the index routes in query.choose_route's order
# Asked for by name only, never part of the default rows: the terms of a best
# match a row (or its session, with sort="sessions") holds, and those it does
# not; None for a strict query.
OPTIONAL_FIELDS = ("matched_terms", "missing_terms")
# Relevance, one row per session: each session's best message, sessions
# ranked by the evidence of all their matching messages.
SESSIONS_SORT = "sessions"


@dataclass
class SearchRequest:
    """One search, as ``SessionStore.search_messages`` takes it; checked on creation.

    ``limit``/``offset`` become non-negative integers (a clear error for
    anything else), ``sort`` becomes ``"newest"``, ``"oldest"`` or None
    (relevance), ``role_filter`` a list of roles or None, and ``fields`` the
    result keys to keep (None: all of ``RESULT_FIELDS``).  ``route`` runs the
    search as if that route's index were the only one (plus the LIKE scan):
    for benchmarks and for comparing routes; a query the index cannot
    represent exactly still goes to ``like_scan``.

    Text holding a lone UTF-16 surrogate is refused (``_params.check_text``).

    ``sort="sessions"`` (``SESSIONS_SORT``) returns the best message of each
    matching session, sessions ranked by all their matching messages
    (``match_rows.session_score``); ``limit`` then counts sessions.

    ``after``/``before`` keep messages with ``after <= timestamp < before``
    (Unix seconds; a message without a numeric timestamp is left out once
    either bound is given) and ``exclude_session_ids`` leaves out those
    sessions' messages.  Both are conditions of the SQL, so they cost no
    extra rows, and a result is exactly the unfiltered result with the
    left-out rows removed (same order; see ``_match_rows``).

    ``now`` (Unix seconds or an ISO date/time, naive is local; None: the
    current time) is where a question's relative time words ("last week")
    count from (``search/prefer.py``).  ``windows``: ``(start, end)`` ranges
    of Unix seconds a message's timestamp must fall in, one of them; set by
    the time preference, not by callers.
    """

    query: Any
    source_filter: Sequence[str] | str | None = None
    exclude_sources: Sequence[str] | str | None = None
    role_filter: Any = None
    limit: Any = 20
    offset: Any = 0
    sort: Any = None
    include_inactive: bool = False
    fields: Any = None
    route: str | None = None
    after: Any = None
    before: Any = None
    exclude_session_ids: Any = None
    now: Any = None
    windows: Any = ()
    roles: list[str] | None = field(init=False)
    projection: tuple[str, ...] | None = field(init=False)

    def __post_init__(self) -> None:
        for name in ("query", "source_filter", "exclude_sources", "role_filter"):
            check_text(getattr(self, name), f"search {name}")
        check_text(self.exclude_session_ids, "search exclude_session_ids")
        self.projection = _check_fields(self.fields)
        self.limit = max(0, as_int(self.limit, "search limit"))
        self.offset = max(0, as_int(self.offset, "search offset"))
        self.sort = (
            SESSIONS_SORT
            if isinstance(self.sort, str) and self.sort.strip().lower() == SESSIONS_SORT
            else parse_sort(self.sort)
        )
        self.roles = parse_roles(self.role_filter)
        check_route(self.route)
        self.after = as_time_bound(self.after, "search after")
        self.before = as_time_bound(self.before, "search before")
        self.exclude_session_ids = as_session_ids(self.exclude_session_ids)
        self.now = _as_now(self.now)
        self.windows = tuple((float(lo), float(hi)) for lo, hi in self.windows)


def _as_now(value: Any) -> float | None:
    """``now`` in Unix seconds: a number, or an ISO date/time (naive: local time)."""
    if isinstance(value, str):
        text = value.strip()
        try:
            return datetime.fromisoformat(
                text[:-1] + "+00:00" if text[-1:] in "Zz" else text
            ).timestamp()
        except (ValueError, OverflowError, OSError):
            raise ValueError(
                f"search now must be Unix seconds or an ISO date/time such as 2026-03-15T09:30, "
                f"got {value!r}"
            ) from None
    return as_time_bound(value, "search now")


def check_route(route: str | None) -> None:
    if route is not None and route not in ROUTE_ORDER:
        raise ValueError(f"unknown route {route!r}; one of {', '.join(ROUTE_ORDER)}")


def _check_fields(fields: Any) -> tuple[str, ...] | None:
    if fields is None:
        return None
    if isinstance(fields, (str, bytes)):
        raise TypeError("search fields must be a collection of field names, not a string")
    names = tuple(fields)
    try:
        return _projection(names)
    except TypeError:  # an unhashable name: checked, and refused, the long way
        return _projection.__wrapped__(names)


@functools.lru_cache(maxsize=64)
def _projection(names: tuple[Any, ...]) -> tuple[str, ...]:
    """The result keys ``names`` asks for, in RESULT_FIELDS order (asked once per list)."""
    unknown = sorted({str(f) for f in names} - set(RESULT_FIELDS) - set(OPTIONAL_FIELDS))
    if unknown:
        raise ValueError(f"unknown search result field(s): {', '.join(unknown)}")
    return tuple(f for f in (*RESULT_FIELDS, *OPTIONAL_FIELDS) if f in names)
