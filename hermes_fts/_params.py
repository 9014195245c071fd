"""Argument rules shared by the search, the transcript readers and the tool.

Integers, sort orders and role lists reach the package from Python callers,
from the CLI and from an agent's JSON tool call; each is read by one rule
here, so the same value means the same thing on every path.

A leaf module: it imports nothing from the package.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["SORTS", "as_int", "parse_roles", "parse_sort"]

SORTS = ("newest", "oldest")
_ROLES_HINT = ("a role filter is a comma-separated string such as 'user,assistant' "
               "or a list of role names")


def as_int(value: Any, name: str) -> int:
    """``value`` as an integer (``5``, ``"5"``, ``5.0``) or a clear error naming ``name``.

    A bool, a fractional number or text that is not an integer is refused
    rather than silently truncated.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise TypeError(f"{name} must be an integer, not {type(value).__name__}")
    try:
        number = int(value) if isinstance(value, str) else value
        if number != int(number):
            raise ValueError
        return int(number)
    except (ValueError, OverflowError):
        raise ValueError(f"{name} must be an integer, got {value!r}") from None


def parse_sort(sort: Any) -> str | None:
    """``"newest"`` or ``"oldest"`` (any case, blanks ignored); else None (relevance)."""
    key = sort.strip().lower() if isinstance(sort, str) else ""
    return key if key in SORTS else None


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
        parts = role_filter.split(",")
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
