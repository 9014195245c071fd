"""Argument rules shared by the search, the transcript readers and the tool.

Integers, sort orders and role lists reach the package from Python callers,
from the CLI and from an agent's JSON tool call; each is read by one rule
here, so the same value means the same thing on every path.

A leaf module: it imports nothing from the package.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from datetime import datetime
from typing import Any

__all__ = [
    "SORTS",
    "SQLITE_INT_MAX",
    "SQLITE_INT_MIN",
    "as_count",
    "as_flag",
    "as_int",
    "as_message_id",
    "as_session_ids",
    "as_sources",
    "as_time_bound",
    "check_callable",
    "check_session_id",
    "check_str",
    "check_text",
    "digits_hint",
    "parse_roles",
    "parse_sort",
    "plain_number",
]

SORTS = ("newest", "oldest")
# Message ids, counts and limits are SQLite INTEGERs (64-bit signed).
SQLITE_INT_MIN, SQLITE_INT_MAX = -(2**63), 2**63 - 1
_ROLES_HINT = (
    "a role filter is a comma-separated string such as 'user,assistant' or a list of role names"
)


def plain_number(text: str) -> bool:
    """Whether ``text`` may be read by ``int()``/``float()``: ASCII alone, no ``_``.
    Python reads ``1_000``, full-width ``１０００`` and other scripts' digits as
    numbers too, which nobody types on purpose as one."""
    return text.isascii() and "_" not in text


def digits_hint(value: Any) -> str:
    """What an error about a number adds when ``value`` is text ``plain_number`` refuses."""
    return (
        "" if not isinstance(value, str) or plain_number(value) else ", written with the digits 0-9"
    )


def as_int(value: Any, name: str) -> int:
    """``value`` as an integer (``5``, ``"5"``, ``5.0``) or a clear error naming ``name``.

    A bool, a fractional number or text that is not an integer is refused
    rather than silently truncated; so is text with digits other than 0-9.
    """
    if type(value) is int:  # the usual case (a bool is refused below)
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise TypeError(f"{name} must be an integer, not {type(value).__name__}")
    try:
        if isinstance(value, str) and not plain_number(value):
            raise ValueError
        number = int(value) if isinstance(value, str) else value
        if number != int(number):
            raise ValueError
        return int(number)
    except (ValueError, OverflowError):
        raise ValueError(f"{name} must be an integer{digits_hint(value)}, got {value!r}") from None


def as_flag(value: Any, name: str) -> bool:
    """``value`` as True or False (``1`` and ``0`` too), else a TypeError naming ``name``:
    text such as "no" or "false" is true to Python, and None false."""
    if not (isinstance(value, int) and value in (0, 1)):
        raise TypeError(f"{name} must be True or False, not {value!r}")
    return bool(value)


def as_count(value: Any, name: str) -> int:
    """A number of rows (``as_int``): below 0 is 0, and one past SQLite's integers
    is their largest, which holds every row as well (SQLite's binding raised
    OverflowError on it)."""
    return min(max(as_int(value, name), 0), SQLITE_INT_MAX)


def as_message_id(value: Any, name: str) -> int:
    """A message id (``as_int``); one past SQLite's integers, which no message can
    have, is a ValueError saying so rather than SQLite's OverflowError."""
    number = as_int(value, name)
    if not SQLITE_INT_MIN <= number <= SQLITE_INT_MAX:
        raise ValueError(f"{name} {number} is out of range: no message id is that large")
    return number


def parse_sort(sort: Any) -> str | None:
    """``"newest"`` or ``"oldest"`` (any case, blanks ignored); else None (relevance)."""
    key = sort.strip().lower() if isinstance(sort, str) else ""
    return key if key in SORTS else None


_LIST_SEPARATORS = re.compile(r"[\s,\[\]\"']+")


def split_list_text(text: str) -> list[str]:
    """The items of a list written as text: commas or blanks between them, and the
    brackets and quotes of a JSON array around them, as models send a list
    argument ('["a", "b"]' was read as the items '["a"' and '"b"]', which name
    nothing, so the ids to leave out were silently kept)."""
    return [item for item in _LIST_SEPARATORS.split(text) if item]


def parse_roles(role_filter: Any) -> list[str] | None:
    """A role filter as a list: ``"user, Tool"`` and ``["user", "tool"]`` both mean two roles.

    Roles are trimmed and lowercased, empty ones dropped and repeats removed
    (first occurrence kept).  ``None``, or nothing left, means no filter.
    Anything but text or a list, tuple or set of texts raises TypeError.
    """
    if role_filter is None:
        return None
    parts: Iterable[Any]
    if isinstance(role_filter, str):
        parts = split_list_text(role_filter)
    elif isinstance(role_filter, (list, tuple, set, frozenset)):
        parts = role_filter
    else:
        raise TypeError(_ROLES_HINT)
    roles: list[str] = []
    for part in parts:
        if not isinstance(part, str):
            raise TypeError(_ROLES_HINT)
        role = part.strip().lower()
        if role and role not in roles:
            roles.append(role)
    return roles or None


def as_time_bound(value: Any, name: str) -> float | None:
    """A time bound in Unix seconds (None: no bound); a clear error for anything else."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(
            f"{name} must be a Unix time in seconds (a number), not {type(value).__name__}"
        )
    if value != value:  # NaN would silently match nothing
        raise ValueError(f"{name} must be a number, got NaN")
    try:
        seconds = float(value)
    except OverflowError:  # an int past the largest float (about 1.8e308)
        seconds = math.inf
    if math.isinf(seconds):  # after=inf matched nothing, before=inf everything, silently
        raise ValueError(
            f"{name} is out of range: a Unix time in seconds must be a finite float, at "
            "most about 1.8e308 in size"
        )
    return seconds


def as_sources(value: Any, name: str) -> list[str] | None:
    """Session sources as a list: ``"cli,cron"`` and ``["cli", "cron"]`` both mean two
    sources; None is no filter.  Anything else is a TypeError naming ``name``: a
    string iterated as a list was its letters, and a source that is not text
    (``5``, ``None``) matched no session, so either filter kept the wrong rows."""
    if value is None:
        return None
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    try:
        sources = list(value) if not isinstance(value, (bytes, bytearray)) else None
    except TypeError:
        sources = None
    if sources is None or not all(isinstance(s, str) for s in sources):
        raise TypeError(
            f"{name} must be a comma-separated string such as 'cli,telegram' or a list "
            "of source names"
        )
    return sources


def as_session_ids(value: Any, name: str = "exclude_session_ids") -> tuple[str, ...]:
    """Session ids (the argument ``name``), as a tuple; a string or a non-string id is refused."""
    if value is None:
        return ()
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be a collection of session ids, not a string")
    if not isinstance(value, Iterable):  # 5 failed as "'int' object is not iterable"
        raise TypeError(f"{name} must be a collection of session ids, not {value!r}")
    ids = tuple(value)
    if not all(isinstance(i, str) for i in ids):
        raise TypeError(f"{name} must hold session ids (strings)")
    return ids


def check_text(value: Any, name: str) -> None:
    """Refuse text holding a lone UTF-16 surrogate, in ``value`` or in a list of values.

    A JSON escape such as ``\\ud800`` without its pair decodes to one (so do
    undecodable bytes on a command line); it is not text, SQLite cannot be
    given it and no answer could echo it, so the error names where it is.
    """
    if isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            check_text(item, name)
        return
    if not isinstance(value, str) or value.isascii():
        return
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"{name} holds a lone UTF-16 surrogate (\\u{ord(value[exc.start]):04x} at "
            f"character {exc.start + 1}): a JSON escape without its pair, or bytes that are "
            "not UTF-8, is not text; pass the text without it"
        ) from None


def check_str(value: Any, name: str) -> None:
    """Refuse a value that is not text (``check_text`` too), naming ``name``."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be text, not {type(value).__name__}")
    check_text(value, name)


def check_session_id(value: Any, name: str = "session_id") -> None:
    """Refuse a session id that is not text (``check_str``): bytes, a number or
    None matched no session and read as one without messages, a list failed in
    SQLite's binding naming no argument."""
    check_str(value, name)


def check_callable(value: Any, name: str, *, none: bool = True) -> None:
    """Refuse a callback that cannot be called (None too when ``none`` is False): it
    failed only once called, deep inside a run, as "'int' object is not callable"."""
    if not (callable(value) or (none and value is None)):
        either = "a function or None" if none else "a function"
        raise TypeError(f"{name} must be {either}, not {type(value).__name__}")


def iso_seconds(moment: datetime) -> float:
    """Epoch seconds of an ISO date/time, naive ones in local time.

    ``timestamp()`` asks the C library for the local offset, which refuses the
    first and last days ``datetime`` holds (0001-01-01, 9999-12-31 east of
    UTC); those take the offset of the same date a year inside the range.
    """
    try:
        return moment.timestamp()
    except (ValueError, OverflowError, OSError):
        inside = moment.replace(year=2 if moment.year < 2 else 9998)
        return inside.timestamp() + (moment - inside).total_seconds()
