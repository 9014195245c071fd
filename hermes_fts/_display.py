"""Text as a reader sees it: where it may be cut without breaking a character, and
how many terminal columns it takes.

A character here is what a reader sees as one: a letter with its combining
marks, an emoji with its joiners, modifiers and variation selectors, a flag's
two regional indicators, a Hangul syllable written as jamo.  Cutting stored
text for a snippet, a capped message or a preview ends at such a character's
edge, and never inside a JSON escape (``\\u6842``), which tool output is full of.

A leaf module: it imports nothing from the package.
"""

from __future__ import annotations

import unicodedata

__all__ = ["char_end", "char_start", "columns", "fit_columns", "whole_prefix"]

_JOINERS = {"\u200d", "\ufe0e", "\ufe0f"}  # zero-width joiner, variation selectors
_ESCAPE_LENGTH = 6  # \uXXXX


def _joins_previous(ch: str) -> bool:
    """Whether ``ch`` belongs to the character before it (combining mark, joiner, modifier)."""
    return (
        bool(unicodedata.combining(ch))
        or ch in _JOINERS
        or "\U0001f3fb" <= ch <= "\U0001f3ff"  # skin-tone modifiers
        or "\u1160" <= ch <= "\u11ff"  # a Hangul vowel or final jamo: one syllable
        or unicodedata.category(ch) == "Mn"
    )


def _regional(ch: str) -> bool:
    return "\U0001f1e6" <= ch <= "\U0001f1ff"


def _inside(text: str, i: int) -> bool:
    """Whether position ``i`` falls inside a character (0 < i < len(text))."""
    if _joins_previous(text[i]) or text[i - 1] == "\u200d":
        return True
    if _regional(text[i]) and _regional(text[i - 1]):
        # Flags pair regional indicators from the start of their run.
        run = 0
        while i - run > 0 and _regional(text[i - run - 1]):
            run += 1
        return run % 2 == 1
    return False


def char_start(text: str, i: int) -> int:
    """``i`` moved back to the start of the character it falls inside."""
    while 0 < i < len(text) and _inside(text, i):
        i -= 1
    return i


def char_end(text: str, i: int) -> int:
    """``i`` moved forward past the rest of the character before it."""
    while 0 < i < len(text) and _inside(text, i):
        i += 1
    return i


def _escape_start(text: str, i: int) -> int:
    """``i`` moved back to the start of a JSON escape it would cut, else ``i``."""
    at = text.rfind("\\", max(0, i - _ESCAPE_LENGTH), i)
    if at < 0:
        return i
    run = 0  # backslashes right before the last one: an odd run makes it an escaped one
    while at - run > 0 and text[at - run - 1] == "\\":
        run += 1
    if run % 2:
        return i
    length = _ESCAPE_LENGTH if text[at + 1 : at + 2] == "u" else 2
    if at + length > i:
        return at
    if length == _ESCAPE_LENGTH and at + length == i and _high_surrogate(text, at):
        return at  # the pair's second half lies past the cut
    return i


def _high_surrogate(text: str, at: int) -> bool:
    """Whether the escape at ``at`` is ``\\ud800``-``\\udbff``, the first half of a pair."""
    digits = text[at + 2 : at + 6].lower()
    return digits[:2] == "d8" or digits[:2] in ("d9", "da", "db")


def whole_prefix(text: str, limit: int) -> str:
    """At most ``limit`` characters of ``text`` from its start, ending where a character
    and a JSON escape end (shorter than ``limit`` when the limit falls inside one)."""
    if len(text) <= limit:
        return text
    end = char_start(text, _escape_start(text, max(limit, 0)))
    return text[:end]


def _width(ch: str) -> int:
    """Terminal columns of one code point: 2 for wide (CJK, most emoji), 0 for marks,
    joiners and other characters drawn with the one before."""
    if unicodedata.east_asian_width(ch) in ("W", "F") or _regional(ch):
        return 2  # a regional indicator starts a flag, drawn two columns wide
    if _joins_previous(ch) or unicodedata.category(ch) in ("Cf", "Me"):
        return 0
    return 1


def columns(text: str) -> int:
    """The terminal columns ``text`` takes (an emoji sequence as its first character)."""
    if text.isascii():
        return len(text)
    total, i = 0, 0
    while i < len(text):
        end = char_end(text, i + 1)
        total += _width(text[i])
        i = end
    return total


def fit_columns(text: str, width: int, mark: str = "\u2026") -> str:
    """``text`` cut to at most ``width`` terminal columns, ending with ``mark`` when cut,
    at a character's edge."""
    if columns(text) <= width:
        return text
    room = width - columns(mark)
    used, i = 0, 0
    while i < len(text):
        end = char_end(text, i + 1)
        step = _width(text[i])
        if used + step > room:
            break
        used += step
        i = end
    return text[:i] + mark
