"""The tool's arguments: coercion and validation, each rule written once.

Models send numbers as strings, lists as comma-separated text and links where
ids are expected, so every argument is coerced here.  The rules the search
layer shares (integers, sort orders, role lists) come from ``_params``; this
module adds what only the tool does: clamping to Hermes' ranges, defaults, and
errors a model can act on.  ``Call`` holds one
call's arguments; the search options are parsed only when the search form
runs (``Call.search_options``), so a read never fails on a search-only
argument, exactly as before the arguments had a type.
"""

from __future__ import annotations

import math
import re
import shlex
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from .. import _params
from .errors import BadValue, ToolError

SCROLL_WINDOW_DEFAULT = 5
SCROLL_WINDOW_MIN = 1
SCROLL_WINDOW_MAX = 20
LIMIT_DEFAULT = 3
LIMIT_MIN = 1
LIMIT_MAX = 10
DEFAULT_ROLES = ("user", "assistant")
ROLES = ("user", "assistant", "tool", "system")  # the roles Hermes stores
SORTS = _params.SORTS
DETAILS = ("adaptive", "full", "index")
LINK_PREFIX = "@session:"
_ROLE_HINT = "role_filter must be a comma-separated string such as 'user,assistant' or 'tool'"
_EXCLUDE_HINT = "exclude_session_ids must be a list of session ids (or links) to leave out"
# Relative bounds as newer Hermes advertises them (7d, 24h, 2w), plus minutes.
_RELATIVE_BOUND = re.compile(r"(\d+(?:\.\d+)?)\s*([mhdw])", re.IGNORECASE)
_RELATIVE_UNIT_SECONDS = {"m": 60, "h": 3600, "d": 86400, "w": 604800}


# --------------------------------------------------------------------------- single values


def clamped(value: Any, default: int, low: int, high: int, name: str) -> tuple[int, str | None]:
    """``value`` as an int in ``[low, high]`` (``default`` when it is not a number), and a
    note saying what was changed, None when the value was used as given.

    Hermes' tools clamp instead of refusing, so a model never loses a call to a
    range; the note tells it (``query_notes``) what it got instead.
    """
    if value is None:
        return default, None
    number: int | None = None
    whole = True
    text = value if isinstance(value, str) else ""  # "１０" and "1_0" are no numbers
    if not isinstance(value, bool) and _params.plain_number(text):
        try:
            number = int(value)
            whole = not isinstance(value, float) or value.is_integer()
        except (TypeError, ValueError, OverflowError):
            try:
                # "5.0" is as whole as 5.0: only a fraction is worth a note
                real = float(value)
                number, whole = int(real), real.is_integer()
            except (TypeError, ValueError, OverflowError):
                number = None
    if number is None:
        return default, f"{name} {value!r} is not a number; used the default {default}"
    used = max(low, min(high, number))
    if used != number:
        return used, f"{name} {value!r} is outside {low}-{high}; used {used}"
    if not whole:
        return used, f"{name} {value!r} is not a whole number; used {used}"
    return used, None


def clamp_int(value: Any, default: int, low: int, high: int) -> int:
    """``value`` as an int in ``[low, high]``; ``default`` when it is not a number."""
    return clamped(value, default, low, high, "value")[0]


def scroll_anchor(value: Any, session_id: str = "SESSION") -> int:
    """The ``around_message_id`` of a scroll, as a SQLite integer; raises ``ToolError``
    (``session_id``: the session the command line's words name)."""
    try:
        anchor = _params.as_int(value, "around_message_id")
    except (TypeError, ValueError):
        raise ToolError(
            f"scroll requires integer around_message_id{_params.digits_hint(value)} "
            f"(got {value!r}); pass a message "
            "id from a result's messages, or omit around_message_id to read the session"
        ) from None
    if not _params.SQLITE_INT_MIN <= anchor <= _params.SQLITE_INT_MAX:
        raise ToolError(
            f"around_message_id {anchor} is out of range; pass a message id from a "
            "result's messages, or omit around_message_id to read the session",
            person=f"message {anchor} is not in session {session_id} (no message id is that "
            f"large); `hermes-fts read {shlex.quote(session_id)}` shows its message ids",
        )
    return anchor


def scroll_window(value: Any) -> tuple[int, str | None]:
    """The scroll window and the note saying how it was clamped, if it was."""
    return clamped(value, SCROLL_WINDOW_DEFAULT, SCROLL_WINDOW_MIN, SCROLL_WINDOW_MAX, "window")


def _choice_note(name: str, value: Any, choices: tuple[str, ...], fallback: str) -> str | None:
    """A note when ``value`` was given but is not one of ``choices`` (any case)."""
    if value is None or (isinstance(value, str) and value.strip().lower() in choices):
        return None
    return f"{name} {value!r} is not one of {', '.join(choices)}; used {fallback}"


def query_text(value: Any) -> tuple[str | None, str | None]:
    """The query to search (None: none given, so browse) and a note when it was not text.

    A model that sends ``404`` or ``["deploy", "docker"]`` asked a search:
    browsing instead would answer another question without saying so.
    """
    if value is None or isinstance(value, str):
        return (value or "").strip() or None, None
    if _is_number(value):
        return str(value), None
    if isinstance(value, (list, tuple)) and all(
        isinstance(item, str) or _is_number(item) for item in value
    ):
        words = " ".join(text for text in (str(item).strip() for item in value) if text)
        if not words:
            return None, None
        return words, f"query was a list; searched its items as words side by side: {words}"
    raise ToolError(
        f"query must be text (got {type(value).__name__}): the words to find, such as "
        "'deploy docker'; omit query to browse recent sessions"
    )


def _blank(value: Any) -> bool:
    return isinstance(value, str) and not value.strip()


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def parse_roles(role_filter: Any) -> list[str]:
    """Roles to search (``_params.parse_roles``); the conversation roles when none is given."""
    try:
        roles = _params.parse_roles(role_filter)
    except TypeError:
        raise ToolError(_ROLE_HINT) from None
    return roles or list(DEFAULT_ROLES)


def role_note(roles: list[str]) -> str | None:
    """A note naming the roles Hermes never stores (they match nothing), None when all are."""
    unknown = [role for role in roles if role not in ROLES]
    if not unknown:
        return None
    return (
        f"role_filter {', '.join(map(repr, unknown))} is not a Hermes role "
        f"({', '.join(ROLES)}) and matches no message"
    )


def parse_detail(detail: Any) -> str:
    """``full`` or ``index`` (any case); ``adaptive`` for anything else."""
    key = detail.strip().lower() if isinstance(detail, str) else ""
    return key if key in DETAILS else "adaptive"


def parse_time_bound(value: Any, name: str, now: float | None = None) -> float | None:
    """Epoch seconds from a number, a numeric string, an ISO date/datetime string or a
    duration back from ``now`` (default: the current time): ``30m``, ``24h``, ``7d``,
    ``2w``, so ``after="7d"`` is the last week and ``before="7d"`` older than a week.

    Naive ISO values are local time (the same clock as the ``when`` fields).
    """
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _unix_time(value, name)
    hint = (
        f"{name} must be epoch seconds, an ISO date/time such as 2026-03-15 or "
        f"2026-03-15T09:30, or a time back from now such as 30m, 24h, 7d or 2w"
        f"{_params.digits_hint(value)} (got {value!r})"
    )
    if not isinstance(value, str):
        raise BadValue(hint)
    text = value.strip()
    if not text:
        return None
    if not _params.plain_number(text):  # "²⁰²⁶" failed in int(), "１７００…" was read as seconds
        raise BadValue(hint)
    compact = _compact_date(text, name)
    if compact is not None:
        return _params.iso_seconds(compact)
    try:
        number = float(text)
    except ValueError:
        pass
    else:
        return _unix_time(number, name, text)
    relative = _RELATIVE_BOUND.fullmatch(text)
    if relative is not None and relative.group(2) == "M":
        # A capital M is a month as often as a minute: 6M read as 6 minutes kept
        # only the last minutes when six months were meant.
        raise BadValue(
            f"{name} {value!r}: M is minutes or months? write minutes as {relative.group(1)}m, "
            "and a stretch of months as a date such as 2026-03-15 or in weeks or days (26w, 180d)"
        )
    if relative is not None:
        back = float(relative.group(1)) * _RELATIVE_UNIT_SECONDS[relative.group(2).lower()]
        return _back_from(time.time() if now is None else now, back, name, value)
    iso = text[:-1] + "+00:00" if text[-1:] in ("Z", "z") else text
    try:
        return _params.iso_seconds(datetime.fromisoformat(iso))
    except (ValueError, OverflowError, OSError):
        raise BadValue(hint) from None


def _back_from(now: float, back: float, name: str, written: str) -> float:
    """``back`` seconds before ``now``; a span reaching past the year 1 is refused, as
    no date holds it (``99999999d`` read as 273,000 years ago, a typo kept silently)."""
    moment = now - _epoch_seconds(back, name)
    if moment < _FIRST_DAY_SECONDS:
        raise BadValue(
            f"{name} {written!r} goes back past the year 1; pass a date such as 2026-03-15 "
            "or a shorter time back such as 7d"
        )
    return moment


def _compact_date(text: str, name: str) -> datetime | None:
    """ISO 8601's basic date (``20260315``), else None.  As epoch seconds those
    eight digits would name a day in 1970, before any Hermes message, so eight
    such digits that are no day (``20260230``, a typo) are refused, not read so;
    so are a year alone (``2024``) and a year and month (``202403``), which as
    epoch seconds kept every message since 1970, silently."""
    if not text.isdigit() or len(text) not in (4, 6, 8) or int(text[:4]) < 1971:
        return None
    if len(text) == 4 or (len(text) == 6 and 1 <= int(text[4:]) <= 12):
        first = f"{text[:4]}-{text[4:] or '01'}-01"
        raise BadValue(
            f"{name} {text!r} is no date: as epoch seconds it would be a time in 1970; "
            f"write a year or a month as its first day, such as {first}"
        )
    if len(text) != 8:
        return None
    try:
        return datetime.strptime(text, "%Y%m%d")
    except ValueError:
        raise BadValue(
            f"{name} {text!r} is no date: a compact date is YYYYMMDD with a month and a "
            "day that exist, such as 20260315 (as epoch seconds it would be a day in 1970)"
        ) from None


def _epoch_seconds(number: float, name: str) -> float:
    """``number`` as epoch seconds; a clear error for NaN and what no float holds."""
    if number != number:
        raise BadValue(f"{name} must be epoch seconds, a number, not NaN")
    try:
        seconds = float(number)
    except OverflowError:  # an int past the largest float
        seconds = math.inf
    if math.isinf(seconds):
        raise BadValue(
            f"{name} is out of range: epoch seconds must be a finite number, at most "
            "about 1.8e308; pass a date such as 2026-03-15 or a time back such as 7d"
        )
    return seconds


# 0001-01-01 UTC, the first day datetime holds.
_FIRST_DAY_SECONDS = datetime(1, 1, 1, tzinfo=timezone.utc).timestamp()
# Epoch seconds past this are after the year 5000: a time in milliseconds (what
# JavaScript and many logs write) read as seconds, which silently found nothing.
_LATEST_SECONDS = 1e11
_FINER_UNITS = ((1e3, "milliseconds"), (1e6, "microseconds"), (1e9, "nanoseconds"))


def _unix_time(number: float, name: str, written: object = None) -> float:
    """``number`` as a moment in epoch seconds; one past the year 5000 is refused, with
    the unit it was most likely written in.  ``written``: the value as the caller wrote it."""
    seconds = _epoch_seconds(number, name)
    if seconds < _LATEST_SECONDS:
        return seconds
    shown = number if written is None else written
    scale, unit = next(
        ((s, u) for s, u in reversed(_FINER_UNITS) if seconds / s >= 1e8), _FINER_UNITS[0]
    )
    meant = seconds / scale
    if meant >= _LATEST_SECONDS:
        raise BadValue(
            f"{name} {shown!r} is past the year 5000 as epoch seconds; pass a date such as "
            "2026-03-15, epoch seconds, or a time back such as 7d"
        )
    day = datetime.fromtimestamp(meant, timezone.utc).date().isoformat()
    raise BadValue(
        f"{name} {shown!r} is past the year 5000 as epoch seconds; if it is epoch {unit}, "
        f"pass it in seconds: {meant:.0f} ({day})"
    )


# --------------------------------------------------------------------------- session references


def strip_link(ref: str) -> str:
    """``ref`` without surrounding blanks and the ``@session:`` prefix."""
    ref = ref.strip()
    if ref.startswith(LINK_PREFIX):
        ref = ref[len(LINK_PREFIX) :].strip()
    return ref


def parse_exclusions(value: Any) -> frozenset[str]:
    """Session ids to leave out, from ids, ``profile/id`` references or links."""
    if value is None:
        return frozenset()
    if isinstance(value, str):
        items: Iterable[Any] = _params.split_list_text(value)
    elif isinstance(value, (list, tuple, set, frozenset)):
        items = value
    else:
        raise ToolError(_EXCLUDE_HINT)
    ids = set()
    for item in items:
        if not isinstance(item, str):
            raise ToolError(_EXCLUDE_HINT)
        ref = strip_link(item)
        if "/" in ref:
            ref = ref.split("/", 1)[1].strip()
        if ref:
            ids.add(ref)
    return frozenset(ids)


def session_text(value: Any, name: str) -> tuple[str | None, str | None]:
    """A session id argument as text (None: not given) and a note when it was a number.

    A model that sends ``5`` means the session named "5", as a query of ``404``
    means its digits; dropping it would browse or search instead, or keep the
    current conversation in the answer, without a word.  Other types are refused.
    """
    if value is None or isinstance(value, str):
        return value, None
    if _is_number(value):
        text = str(value)
        return text, f"{name} was a number; read it as the session id '{text}'"
    what = (
        "one session id or link from a search or browse result, such as "
        "'@session:20260305_091500_ab12'; omit session_id to search or browse"
        if name == "session_id"
        else "the id of the session this call is made from, or omit it"
    )
    raise ToolError(f"{name} must be text (got {type(value).__name__}): {what}")


def split_session_ref(session_id: Any, profile: Any) -> tuple[str | None, Any, bool]:
    """(session id, profile, whether the id named its profile) from the caller's args.

    An explicit ``profile`` wins over the one a ``profile/id`` reference names.
    A blank profile, given or in the reference (``/id``), is none, as Hermes reads
    it: models fill optional arguments with "".
    """
    if isinstance(profile, str) and not profile.strip():
        profile = None
    if not isinstance(session_id, str):
        return None, profile, False
    ref = strip_link(session_id)
    if "/" in ref:
        left, right = ref.split("/", 1)
        if right.strip():
            if not left.strip():
                return right.strip(), profile, profile is not None
            if profile is None:
                return right.strip(), left.strip(), True
            return right.strip(), profile, True
    return (ref or None), profile, False


# --------------------------------------------------------------------------- one call


@dataclass(frozen=True)
class SearchOptions:
    """The parsed arguments of the search form."""

    query: str
    limit: int
    roles: list[str]
    sort: str | None
    detail: str
    after: float | None
    before: float | None
    excluded: frozenset[str]
    notes: tuple[str, ...] = ()  # what was clamped or ignored, for ``query_notes``
    offset: int | None = None  # paged (the command line): results to skip
    now: float | None = None  # where relative times count from (None: the current time)
    budgeted: bool = True  # kept under the model's payload budget (not the command line's)
    marks: tuple[str, str] | None = None  # around a snippet's matches (None: >>> <<<)

    @property
    def wanted(self) -> int:
        """Lineages to collect: the page, what it skips, and one to tell if more follow."""
        return self.limit if self.offset is None else self.offset + self.limit + 1

    @property
    def filtered(self) -> bool:
        """Whether time bounds or session exclusions narrow the search."""
        return self.after is not None or self.before is not None or bool(self.excluded)


# What only a search uses: given with session_id, it is named in a note.
_SEARCH_ONLY = ("query", "sort", "role_filter", "after", "before", "exclude_session_ids")


@dataclass(frozen=True)
class Call:
    """One call's arguments: the session reference resolved, the rest as given.

    ``profile`` and ``qualified`` come from ``split_session_ref``; the search
    and scroll values stay raw until their form runs.
    """

    session_id: str | None
    profile: Any
    qualified: bool
    current_session_id: str | None
    query: Any = None
    around_message_id: Any = None
    window: Any = None
    limit: Any = None
    sort: Any = None
    detail: Any = None
    role_filter: Any = None
    after: Any = None
    before: Any = None
    exclude_session_ids: Any = None
    now: Any = None  # tests and callers that fix "now" for relative time words
    # The command line's own caps and paging (the model's calls keep the defaults):
    # a person lists a whole history page by page and reads a message whole.
    offset: int | None = None
    limit_max: int = LIMIT_MAX
    full: bool = False
    beyond: Any = None  # a scroll's page after or before its message, not around it
    # The command line's own snippet marks: it tells them from a stored ``>>>``.
    marks: tuple[str, str] | None = None
    # The command line's progress of a long ``read --full``: ``(done, total)`` messages.
    progress: Callable[[int, int], None] | None = None
    # The command line's writer of a ``read --full``: given the payload before its
    # messages, what takes each message as it is read (they are then not kept).
    sink: Callable[[dict[str, Any]], Callable[[dict[str, Any]], None]] | None = None
    # What parsing changed (a session id sent as a number), for every form's query_notes.
    notes: tuple[str, ...] = ()

    @classmethod
    def parse(cls, session_id: Any, profile: Any, current_session_id: Any, **rest: Any) -> Call:
        """The call, every text argument checked for lone surrogates (``ToolError``)."""
        named = {
            "session_id": session_id,
            "profile": profile,
            "current_session_id": current_session_id,
        }
        try:
            for name, value in {**named, **rest}.items():
                _params.check_text(value, name)
        except ValueError as exc:
            raise ToolError(str(exc)) from None
        # A blank argument is none given, as Hermes reads its optional ones: models
        # fill every argument, "" for those they do not mean (a blank around_message_id
        # made a search an error).  A blank query still says it browses (browse_note).
        rest = {
            name: None if name != "query" and _blank(value) else value
            for name, value in rest.items()
        }
        session_id, sid_note = session_text(session_id, "session_id")
        current_session_id, current_note = session_text(current_session_id, "current_session_id")
        sid, profile, qualified = split_session_ref(session_id, profile)
        current = (current_session_id or "").strip() or None
        notes = tuple(note for note in (sid_note, current_note) if note)
        return cls(sid, profile, qualified, current, **rest, notes=notes)

    @property
    def pinned(self) -> bool:
        """Whether the caller named the profile (so other profiles are not tried)."""
        return self.profile is not None or self.qualified

    @property
    def count(self) -> tuple[int, str | None]:
        """How many conversations search and browse return, and the clamp note."""
        return clamped(self.limit, LIMIT_DEFAULT, LIMIT_MIN, self.limit_max, "limit")

    def search_arguments_note(self, form: str) -> str | None:
        """The note naming the search's own arguments a call with ``session_id`` gave
        (``form``: what it does instead, "reads"), or None: a query read past
        without a word would look like a search that found this session."""
        given = [name for name in _SEARCH_ONLY if getattr(self, name) not in (None, "", [], ())]
        if not given:
            return None
        return (
            f"{', '.join(given)} not used: session_id {form} that session; "
            "leave session_id out to search"
        )

    def window_note(self) -> str | None:
        """The note of a ``window`` given to a call that does not scroll, or None: it
        sizes a scroll alone, and a call read past it would look as if it were used."""
        if self.window is None:
            return None
        return (
            "window not used: it sizes a scroll (session_id with around_message_id); "
            "search, browse and read show their own number of messages"
        )

    def browse_note(self) -> str | None:
        """The note of a call that browses while it names a search (a query of spaces,
        ``after`` with no query), or None: a listing of the latest sessions read as
        the search asked for would answer another question without a word."""
        blank = self.query not in (None, "", [], ()) and query_text(self.query)[0] is None
        given = [n for n in _SEARCH_ONLY[1:] if getattr(self, n) not in (None, "", [], ())]
        if not (blank or given):
            return None
        what = ["query holds no words"] if blank else []
        what += [f"{', '.join(given)} not used"] if given else []
        return (
            f"{' and '.join(what)}: with no query this lists the most recently active "
            "sessions; pass words in query to search"
        )

    @property
    def search_query(self) -> str | None:
        """The query text when this is the search form, else None; raises ``ToolError``."""
        return query_text(self.query)[0]

    def search_options(self) -> SearchOptions:
        """The search form's options; raises ``ToolError`` for a bad one."""
        query, query_note = query_text(self.query)
        if query is None:
            raise ToolError("search requires a query; pass words to find")
        limit, limit_note = self.count
        sort = _params.parse_sort(self.sort)
        detail = parse_detail(self.detail)
        roles = parse_roles(self.role_filter)
        now = parse_time_bound(self.now, "now")
        notes = (
            query_note,
            limit_note,
            _choice_note("sort", self.sort, SORTS, "best match first"),
            _choice_note("detail", self.detail, DETAILS, detail),
            role_note(roles),
        )
        options = SearchOptions(
            query=query,
            limit=limit,
            roles=roles,
            sort=sort,
            detail=detail,
            after=parse_time_bound(self.after, "after", now),
            before=parse_time_bound(self.before, "before", now),
            excluded=parse_exclusions(self.exclude_session_ids),
            notes=tuple(note for note in notes if note),
            offset=self.offset,
            now=now,
            budgeted=not self.full,
            marks=self.marks,
        )
        if options.after is not None and options.before is not None:
            if options.after >= options.before:
                raise BadValue("after must be earlier than before; pass a wider time range")
        return options
