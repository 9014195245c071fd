"""What one search asks for: ``SearchRequest``, checked, the rows it returns, the
time its question's words name, and a query in no message read again another way.

Every caller (the store, the tool, the CLI) builds a ``SearchRequest``, so a
bad limit, role list, time bound, route or field name gets the same clear
error everywhere, before any SQL runs (a sort other than newest, oldest or
sessions means relevance, as in Hermes' own ``search_messages``; the tool
says so in a note and the CLI refuses one).  The fields of a result row are
named here, with the columns that give them.

A question's time words become a preference (``search_preferring``). "What did
we decide last week?" names a time, and a message's time is its timestamp,
never its text. The best match leaves the time words out of the words it
searches (``query/question.py``, ``query/timewords.py``); here they become
windows of local time and the search runs twice: inside the windows, then
without them, and the rows the first found are not repeated. So the time is
never a filter: a question about last week whose answer was said earlier still
finds it, after last week's matches (docs/DESIGN.md §6.4c). Pages stay exact
and cheap: each pass reads ``limit + offset`` rows, and when the windows hold
fewer, they hold no more than the first pass found, so the second pass's first
``limit + offset`` rows hold the rest of the page. Explicit
``after``/``before`` bounds win: the time words are still left out of the
words, and a note says the bounds decide.

Three to five CJK characters alone are searched as written, as a word
(``数据库迁移``); when no visible message holds them so, ``search_reading``
runs the search again with them read as a sentence typed without spaces
(``昨天的部署``), and says so (docs/DESIGN.md §6.4a).  A possessive alone
(``Anna's``) is read again the same way, as its name, and words a colon, ``+``,
``^`` or a brace joins (``docker:staging``) as words apart.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple, TypeVar

from .._params import (
    SORTS,
    as_flag,
    as_int,
    as_session_ids,
    as_sources,
    as_time_bound,
    check_text,
    iso_seconds,
    parse_roles,
    parse_sort,
)
from ..query.best import best_match
from ..query.plan import ROUTES
from ..query.question import STOP_WORDS, lone_possessive, time_words
from ..query.syntax import QueryError, parse_query, reads_as_sentence
from ..query.timeranges import find_time_words
from ..query.timespans import describe, missing_day, windows
from ..query.timewords import TimeWords

__all__ = [
    "THEN_FIRST",
    "MAX_ROWID",
    "MIN_ROWID",
    "OPTIONAL_FIELDS",
    "RANKED_ORDER",
    "RESULT_FIELDS",
    "ROUTE_ORDER",
    "ROW_COLUMNS",
    "ROW_NAMES",
    "SESSIONS_SORT",
    "SearchRequest",
    "check_query",
    "check_route",
    "envelope",
    "query_notes",
    "query_refusal",
    "search_preferring",
    "search_reading",
    "time_note",
    "time_windows",
]

# How the time note ends when the matches from its windows head the page.
THEN_FIRST = "matches from then come first, then the rest"

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
# The rowid range that means "every row": SQLite's whole rowid range.
MIN_ROWID, MAX_ROWID = -(2**63), 2**63 - 1
# Relevance order.  Equal ranks (identical texts) go by id, newest first, so
# a filtered search keeps exactly the unfiltered order of the rows it keeps.
RANKED_ORDER = "rank, m.id DESC"

# The columns every search row has (search.RESULT_FIELDS without context).
# A tool name another program stored as a BLOB reads as text (NULL stays NULL).
ROW_COLUMNS = (
    "m.id, m.session_id, m.role, {snippet} AS snippet, m.timestamp, "
    "CAST(m.tool_name AS TEXT) AS tool_name, "
    "s.source, s.model, s.started_at AS session_started"
)
# Their names, what a cursor's description would give (read once, not per query).
ROW_NAMES = tuple(c.split(" AS ")[-1].split(".")[-1] for c in ROW_COLUMNS.split(", "))


def envelope(spans: Sequence[tuple[int, int]] | None) -> tuple[int, int]:
    """The lowest and highest rowid of ``spans`` (None: every rowid)."""
    if spans is None:
        return MIN_ROWID, MAX_ROWID
    if len(spans) == 1:  # the usual case: no time bound, or one span
        ((lo, hi),) = spans
        return lo, hi
    return min(lo for lo, _ in spans), max(hi for _, hi in spans)


class Filters(NamedTuple):
    """A request's filters as one SQL condition on ``m`` (messages) and ``s``
    (sessions), its parameters, and whether it reads a column of ``s``
    (``rows.where_sql``)."""

    where: str
    params: list[Any]
    reads_session: bool


@dataclass
class SearchRequest:
    """One search, as ``SessionStore.search_messages`` takes it; checked on creation.

    ``limit``/``offset`` become non-negative integers (a clear error for
    anything else), ``sort`` becomes ``"newest"``, ``"oldest"`` or None
    (relevance; another name is refused), ``role_filter`` a list of roles or
    None, and ``fields`` the result keys to keep (None: all of
    ``RESULT_FIELDS``).  ``route`` runs the
    search as if that route's index were the only one (plus the LIKE scan):
    for benchmarks and for comparing routes; a query the index cannot
    represent exactly still goes to ``like_scan``.

    A query that is not text (a number, a list) is refused with TypeError; None
    or blank text is an empty search.  Text holding a lone UTF-16 surrogate is
    refused (``_params.check_text``).

    ``sort="sessions"`` (``SESSIONS_SORT``) returns the best message of each
    matching session, sessions ranked by all their matching messages
    (``match_rows.session_score``); ``limit`` then counts sessions.

    ``after``/``before`` keep messages with ``after <= timestamp < before``
    (Unix seconds; a message without a numeric timestamp is left out once
    either bound is given) and ``exclude_session_ids`` leaves out those
    sessions' messages; ``archived_only_session_ids`` leaves out those sessions'
    live messages, keeping their compaction archives (``active = 0``: the
    rows a compaction took out of the agent's context).  All are conditions of
    the SQL, so they cost no extra rows, and a result is exactly the
    unfiltered result with the left-out rows removed (same order; see
    ``_match_rows``).

    ``now`` (Unix seconds or an ISO date/time, naive is local; None: the
    current time) is where a question's relative time words ("last week")
    count from (``search_preferring``).  ``windows``: ``(start, end)`` ranges
    of Unix seconds a message's timestamp must fall in, one of them; set by
    the time preference, not by callers.  ``sentence``: a short CJK word alone
    is read as a sentence (``syntax.parse_query``); set by ``run`` once it is
    in no message as written, not by callers.  ``marks``: the text put before and
    after each match in a snippet (None: ``>>>`` and ``<<<``).
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
    archived_only_session_ids: Any = None
    now: Any = None
    windows: Any = ()
    sentence: bool = False
    marks: tuple[str, str] | None = None
    roles: list[str] | None = field(init=False)
    projection: tuple[str, ...] | None = field(init=False)

    def __post_init__(self) -> None:
        check_query(self.query)
        for name in ("source_filter", "exclude_sources", "role_filter"):
            check_text(getattr(self, name), f"search {name}")
        check_text(self.exclude_session_ids, "search exclude_session_ids")
        check_text(self.archived_only_session_ids, "search archived_only_session_ids")
        self.source_filter = as_sources(self.source_filter, "search source_filter")
        self.exclude_sources = as_sources(self.exclude_sources, "search exclude_sources")
        # "no" was true: rewound rows shown
        self.include_inactive = as_flag(self.include_inactive, "search include_inactive")
        self.projection = _check_fields(self.fields)
        self.limit = max(0, as_int(self.limit, "search limit"))
        self.offset = max(0, as_int(self.offset, "search offset"))
        self.sort = _check_sort(self.sort)
        self.roles = parse_roles(self.role_filter)
        check_route(self.route)
        self.after = as_time_bound(self.after, "search after")
        self.before = as_time_bound(self.before, "search before")
        if self.after is not None and self.before is not None and self.after >= self.before:
            # no message is in an empty window: an answer of nothing would say nothing of why
            raise ValueError(
                f"search after ({self.after}) must be earlier than before ({self.before})"
            )
        self.exclude_session_ids = as_session_ids(self.exclude_session_ids)
        self.archived_only_session_ids = as_session_ids(
            self.archived_only_session_ids, "archived_only_session_ids"
        )
        self.now = _as_now(self.now)
        self.marks = _check_marks(self.marks)
        self.windows = tuple((float(lo), float(hi)) for lo, hi in self.windows)


def _as_now(value: Any) -> float | None:
    """``now`` in Unix seconds: a number, or an ISO date/time (naive: local time)."""
    if isinstance(value, str):
        text = value.strip()
        try:
            return iso_seconds(
                datetime.fromisoformat(text[:-1] + "+00:00" if text[-1:] in "Zz" else text)
            )
        except (ValueError, OverflowError, OSError):
            raise ValueError(
                f"search now must be Unix seconds or an ISO date/time such as 2026-03-15T09:30, "
                f"got {value!r}"
            ) from None
    return as_time_bound(value, "search now")


def _check_marks(marks: Any) -> tuple[str, str] | None:
    """``marks`` as an (open, close) pair of texts, or None (the default ``>>>`` ``<<<``);
    anything else failed on the first snippet with an IndexError or a TypeError of
    ``str.replace`` that named no argument (a string was read as its first two letters)."""
    if marks is None:
        return None
    pair = tuple(marks) if isinstance(marks, (tuple, list)) else ()
    if len(pair) != 2 or not all(isinstance(mark, str) for mark in pair):
        raise TypeError(
            f"search marks must be a pair of texts (open, close) such as ('[', ']'), not {marks!r}"
        )
    check_text(list(pair), "search marks")
    return (pair[0], pair[1])


def _check_sort(sort: Any) -> str | None:
    """``"newest"``, ``"oldest"``, ``"sessions"`` (any case, blanks ignored) or None
    (relevance, also for blank text); anything else is refused, since a misspelt
    sort read as relevance answered in another order than asked, without a word."""
    key = sort.strip().lower() if isinstance(sort, str) else sort
    if key == SESSIONS_SORT:
        return SESSIONS_SORT
    if key in (None, "") or parse_sort(key) is not None:
        return parse_sort(key)
    raise ValueError(
        f"unknown sort {sort!r}; one of {', '.join((*SORTS, SESSIONS_SORT))}, "
        "or None for best match first"
    )


def check_query(query: Any) -> None:
    """Refuse what a search cannot take as its query: TypeError for what is not text
    (None is an empty search), ValueError for text with a lone surrogate."""
    if query is not None and not isinstance(query, str):
        # A number or a list would otherwise find nothing, and say nothing.
        raise TypeError(f"search query must be text, not {type(query).__name__}")
    check_text(query, "search query")


def query_refusal(query: Any) -> str | None:
    """Why a search refuses ``query`` as ``check_query`` says it, else None."""
    try:
        check_query(query)
    except (TypeError, ValueError) as exc:
        return str(exc)
    return None


def check_route(route: str | None) -> None:
    if route is not None and route not in ROUTE_ORDER:
        raise ValueError(f"unknown route {route!r}; one of {', '.join(ROUTE_ORDER)}")


def _check_fields(fields: Any) -> tuple[str, ...] | None:
    if fields is None:
        return None
    if isinstance(fields, (str, bytes)):
        raise TypeError("search fields must be a collection of field names, not a string")
    if not isinstance(fields, Iterable):  # 5 failed as "'int' object is not iterable"
        raise TypeError(f"search fields must be a collection of field names, not {fields!r}")
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


# ---------------------------------------------------------------------------
# A question's time words as a preference

P = TypeVar("P")
_LEFT_OUT = "left out of the words"
_SEARCHED_TOO = "searched as words too, the question has no other"
Rows = list[dict[str, Any]]


def _found(query: Any, sentence: bool = False) -> tuple[TimeWords, ...]:
    return _time_words(query, sentence)[0] if isinstance(query, str) else ()


@functools.lru_cache(maxsize=256)  # asked on every search, a pure function of the text
def _time_words(query: str, sentence: bool = False) -> tuple[tuple[TimeWords, ...], bool]:
    """The question's time words, and whether the best match searches them too: it has
    no other word but common ones, so they are what there is to find (``best.best_match``)."""
    parsed = parse_query(query, sentence=sentence)
    found = time_words(parsed)
    words = {t.text.lower() for t in best_match(parsed).terms} if found else set()
    searched = any(w.text.lower() in words or _parts_searched(w.text, words) for w in found)
    return found, searched


def _parts_searched(text: str, words: set[str]) -> bool:
    """Whether each word of a time word but the common ones is searched: "last" in
    "the last build last week" is searched as the other "last", not the time."""
    parts = {part for part in text.lower().split() if part not in STOP_WORDS}
    return bool(parts) and parts <= words


def _windows(found: tuple[TimeWords, ...], now: float) -> tuple[tuple[float, float], ...]:
    """The union of the windows, merged and in time order."""
    merged: list[tuple[float, float]] = []
    for lo, hi in sorted(w for words in found for w in windows(words, now)):
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    return tuple(merged)


def _note(
    query: str,
    found: tuple[TimeWords, ...],
    now: float,
    bounded: bool,
    sentence: bool = False,
    none_then: bool = False,
    none_at_all: bool = False,
) -> str:
    what = _SEARCHED_TOO if _time_words(query, sentence)[1] else _LEFT_OUT
    # A time word written twice is named once.
    if bounded or not any(windows(w, now) for w in found):
        said = ", ".join(dict.fromkeys(f"'{w.text}'" for w in found))
        lacks = dict.fromkeys(m for w in found if (m := missing_day(w, now)))
        why = "no message has that time" if not lacks else "; ".join(lacks)
        why = "the after/before given set the time" if bounded else why
        return f"time words {said} {what}: {why}"
    said = ", ".join(dict.fromkeys(f"'{w.text}' ({describe(w, now)}, local time)" for w in found))
    if none_at_all:  # "these are from other times" named results there were none of
        return f"time words {said} {what}: no message matches, from then or from other times"
    if none_then:
        return f"time words {said} {what}: no match is from then; these are from other times"
    return f"time words {said} {what}: {THEN_FIRST}"


def time_note(query: Any, now: float | None = None, bounded: bool = False) -> str | None:
    """What a search for ``query`` does with its time words, None when it has none.

    ``now`` (default: the current time) is where relative words count from;
    ``bounded``: the search has explicit ``after``/``before`` bounds.
    """
    found = _found(query)
    return _note(query, found, time.time() if now is None else now, bounded) if found else None


def time_windows(query: Any, now: Any = None) -> tuple[tuple[float, float], ...]:
    """The spans of time a question's time words name, merged and in time order (a
    search prefers rows from them); empty when it has none."""
    found = _found(query)
    when = _as_now(now)
    return _windows(found, time.time() if when is None else when) if found else ()


Windows = tuple[tuple[float, float], ...]


def search_preferring(
    request: SearchRequest, search: Callable[[SearchRequest], tuple[P, Rows]]
) -> tuple[P, Rows, tuple[str, ...], Windows]:
    """``search(request)``, with rows from the time its words name first, the note,
    and the windows whose rows came first (none without a preference).

    ``search`` runs one request and returns ``(plan, rows)``.
    """
    found = _found(request.query, request.sentence)
    if not found:
        return (*search(request), (), ())
    now = time.time() if request.now is None else request.now
    bounded = request.after is not None or request.before is not None
    note = (_note(request.query, found, now, bounded, request.sentence),)
    spans = () if bounded else _windows(found, now)
    if not spans or request.limit == 0:
        return (*search(request), note, spans)
    want = request.limit + request.offset
    key = "session_id" if request.sort == SESSIONS_SORT else "id"
    fields = request.projection
    if fields is not None:  # the passes are merged by id: read it, drop it after
        fields = (*fields, *{"id", key} - set(fields))
    whole = dataclasses.replace(request, limit=want, offset=0, fields=fields)
    inside = dataclasses.replace(
        whole, after=spans[0][0], before=spans[-1][1], windows=spans if len(spans) > 1 else ()
    )
    plan, rows = search(inside)
    if not rows:  # the note must not say that what comes first is from then
        note = (_note(request.query, found, now, bounded, request.sentence, none_then=True),)
    if len(rows) < want:  # every match from then is read: the rest follow
        seen = {row[key] for row in rows}
        rows += [row for row in search(whole)[1] if row[key] not in seen]
        if not rows:
            note = (_note(request.query, found, now, bounded, request.sentence, none_at_all=True),)
    rows = rows[request.offset : want]
    if fields != request.projection:
        rows = [{k: row[k] for k in request.projection or ()} for row in rows]
    return plan, rows, note, spans


def search_reading(
    request: SearchRequest, search: Callable[[SearchRequest], tuple[P, Rows]]
) -> tuple[P, Rows, tuple[str, ...], tuple[str, ...], Windows]:
    """``search_preferring``, and when a query that has another reading is in no
    message as written, the same again read that way (``_other_reading``): the
    plan, the rows, the note on that reading, the time words' note and their
    windows, of the reading searched (``昨天的部署`` as written has no time word).

    Not when the filters or the page left its messages out: that empty answer
    is right."""
    plan, rows, time_note, spans = search_preferring(request, search)
    other = None if rows or request.limit == 0 else _other_reading(request)
    if other is None:
        return plan, rows, (), time_note, spans
    anywhere = SearchRequest(
        request.query,
        include_inactive=request.include_inactive,
        limit=1,
        fields=("id",),
        route=request.route,
    )
    if search(anywhere)[1]:
        return plan, rows, (), time_note, spans
    again, how = other
    read_as = (
        f"{_by_its_start(request.query.strip())!r} is in no message as written: "
        f"searched as {_by_its_start(how)}"
    )
    try:
        found = search_preferring(again, search)
    except QueryError:  # the other reading is only a try: the empty answer stands
        return plan, rows, (), time_note, spans
    return found[0], found[1], (read_as,), found[2], found[3]


def _other_reading(request: SearchRequest) -> tuple[SearchRequest, str] | None:
    """The request read another way, and that way in words: a short CJK word alone
    (``昨天的部署``) as a sentence typed without spaces, a possessive alone
    (``Anna's``) as its name, words a colon or ``+`` joins (``docker:staging``) as
    words apart; None when the query has no other reading."""
    text = request.query
    if not isinstance(text, str):
        return None
    if reads_as_sentence(text) and _parts_differ(text):
        return dataclasses.replace(request, sentence=True), "a sentence, by its words"
    name = other_words(text)
    return None if name is None else (dataclasses.replace(request, query=name), name)


def _parts_differ(text: str) -> bool:
    """Whether the sentence reading searches other words (or time words) than ``text``
    as written: a Korean word has no two-character parts, and searched again as
    itself it was said to be searched "by its words"."""
    written, parts = (best_match(parse_query(text, sentence=s)).terms for s in (False, True))
    changed = [t.text for t in written] != [t.text for t in parts]
    return changed or _found(text) != _found(text, sentence=True)


def other_words(text: str) -> str | None:
    """The words a query is searched as when no message holds it as written: a
    possessive alone as its name (``Anna's``), words a colon or ``+`` joins as words
    apart (``docker:staging``); None when it has no such reading."""
    return lone_possessive(text) or _joined_words(text)


# A query named in a note: a paste of many KB would make the note as long.
_NOTE_QUERY_MAX_CHARS = 200


def _by_its_start(text: str) -> str:
    cut = _NOTE_QUERY_MAX_CHARS
    return text if len(text) <= cut else text[: cut - 1] + "…"


# Words joined by what Hermes 0.19.0's search strips as FTS5 syntax
# (not parentheses: ours group with them, and NEAR( opens a group).  Only from
# a word's start: from inside a long run each try rescans it, quadratic in a paste.
_JOINED = re.compile(r"(?<!\w)\w+(?:[:+^{}]+\w+)+")
_JOINERS = re.compile(r"[:+^{}]+")
_QUOTED = re.compile(r'("[^"]*")')


def _joined_words(text: str) -> str | None:
    """``docker:staging`` as ``docker staging``: Hermes' search reads ``:``, ``+``, ``^``
    and braces as spaces, so a query where they join words, in no message as
    written, is searched with spaces there (quoted phrases stay as written).  The
    parts stay words: ``NOT:docker`` is ``not docker``, never an operator."""
    # a clock time a date reads (3/8 10:00) is a time word, no words a colon joins
    times = [(a, b) for a, b, _ in find_time_words(text)]
    pieces, at = [], 0
    for n, piece in enumerate(_QUOTED.split(text)):
        pieces.append(piece if n % 2 else _JOINED.sub(functools.partial(_apart, at, times), piece))
        at += len(piece)
    spaced = "".join(pieces).strip()
    return spaced if spaced != text.strip() else None


def _apart(at: int, times: Sequence[tuple[int, int]], joined: re.Match[str]) -> str:
    start, end = at + joined.start(), at + joined.end()
    if any(a <= start and end <= b for a, b in times):
        return joined.group()
    words = _JOINERS.split(joined.group())
    return " ".join(w.lower() if w in ("AND", "OR", "NOT", "NEAR") else w for w in words)


def query_notes(query: Any) -> list[str]:
    """What the parser changed in ``query`` and why, then the refusal reason if any.

    The same notes as ``run.plan_search(...).notes``; for the tool's and CLI's output.
    A query a search refuses for what it is (``check_query``) has that reason alone.
    """
    refused = query_refusal(query)
    if refused is not None:  # a lone surrogate was noted as a control character read as space
        return [refused]
    parsed = best_match(parse_query(query))
    when = time_note(query)  # counted from the current time
    return [*parsed.notes, *([when] if when else []), *([parsed.error] if parsed.error else [])]
