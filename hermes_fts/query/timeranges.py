"""Time words read together: two a range joins as one time.

:func:`find_time_words` reads the time expressions of a stretch of query text
(``timewords.find_time_expressions``, each alone) and joins those a range
makes (``3月到5月``, "March 8-10", ``上周一到周三``) into one
:class:`~.timewords.TimeWords` from the first's first day to the second's
last.  What the search does with them is docs/QUERY.md's "Time words" and
docs/DESIGN.md §6.4c.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date

from .timewords import ASCII_WIDTH, NUM, YEAR, TimeWords, find_time_expressions, number

__all__ = ["find_time_words"]

_FLAGS = re.IGNORECASE


def find_time_words(text: str) -> list[tuple[int, int, TimeWords]]:
    """The time words in ``text`` as ``(start, end, TimeWords)``, in text order: its
    time expressions, two a range joins read as one."""
    return _as_ranges(find_time_expressions(text), text)


# A range: two times a word or a dash joins (March 10 to May 20, 3月到5月, 上周一到周三,
# 3月8日から10日まで, 3월 8일부터 10일까지), or a day alone after a date (3月8号到10号,
# March 8-10): from the first's first day to the second's last.  Read apart, the
# days between them were no time, and 10号 a word.
_RANGE_JOIN = r"\s*(?:[-–—~〜]|到|至|から|부터|\b(?:to|through|thru|until|till)\b)\s*"
_BETWEEN = re.compile(r"\bbetween\s+$", _FLAGS)  # between March 8 and March 10
_AND = re.compile(r"\s+and\s+", _FLAGS)
_RANGE_DAY = re.compile(
    rf"{_RANGE_JOIN}(?P<said>(?P<d>{NUM})\s*(?:[日号號](?![楼樓线線])|일)"
    rf"|(?P<n>\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(?P<y>{YEAR})\b|(?=\s*(?:$|[?!.,;:)]))))",
    _FLAGS,
)
_JOIN = re.compile(_RANGE_JOIN, _FLAGS)
_RANGE_CLOSE = re.compile(r"\s*(?:まで|까지|为止|為止)")


def _as_ranges(
    found: list[tuple[int, int, TimeWords]], text: str
) -> list[tuple[int, int, TimeWords]]:
    """Two time words a range joins as one (``_RANGE_JOIN``), the second's days
    in the first's year or week where it names none (上周一到周三, 去年3月到5月)."""
    plain = text.translate(ASCII_WIDTH)
    out: list[tuple[int, int, TimeWords]] = []
    for start, end, words in found:
        if out and out[-1][2].through is None and _joined(plain, out[-1][0], out[-1][1], start):
            first_start, _, first = out[-1]
            end = _closed(plain, end)
            last = replace(_like(first, words), text=text[start:end])
            out[-1] = (first_start, end, replace(first, text=text[first_start:end], through=last))
        else:
            out.append(_to_a_day(start, end, words, text, plain))
    return out


def _to_a_day(
    start: int, end: int, words: TimeWords, text: str, plain: str
) -> tuple[int, int, TimeWords]:
    """A date and the day alone after it that ends a range (3月8号到10号, March 8-10)."""
    day = _RANGE_DAY.match(plain, end) if words.unit == "day" and words.day else None
    said = number(day["d"] or day["n"]) if day else None
    if day is None or said is None or said <= (words.day or 0):
        return start, end, words
    dated = words  # March 8 to 10, 2024: both days in 2024
    if day["y"] and words.year is None and words.back is None:
        dated = replace(words, year=int(day["y"]))
    if not _a_day(dated, said) or not _a_day(dated, words.day or 1):
        return start, end, words
    stop = _closed(plain, day.end())
    last = replace(dated, text=text[day.start("said") : stop], day=said)
    return start, stop, replace(dated, text=text[start:stop], through=last)


def _closed(text: str, end: int) -> int:
    """Where a range ends: after its closing word (まで, 까지, 为止) if one follows."""
    close = _RANGE_CLOSE.match(text, end)
    return close.end() if close else end


def _joined(text: str, start: int, end: int, at: int) -> bool:
    """Whether the time word at ``text[start:end]`` and the one at ``at`` make a range."""
    if _JOIN.fullmatch(text, end, at):
        return True
    between = _BETWEEN.search(text, max(0, start - 12), start)
    return between is not None and _AND.fullmatch(text, end, at) is not None


def _like(first: TimeWords, last: TimeWords) -> TimeWords:
    """A range's end in its start's year or week where it names none (上周一到周三:
    last week's Wednesday; 上周五到周一, the Monday after it)."""
    week = first.back if first.weekday is not None and first.back is not None else -1
    if last.weekday is not None and last.back is None and week >= 0:
        back = week if last.weekday >= (first.weekday or 0) else week - 1
        return replace(last, back=back) if back >= 0 else last
    year = first.year is not None or first.month is not None and (first.back or 0) >= 0
    if last.month is not None and last.year is None and last.back is None and year:
        return replace(last, year=first.year, back=first.back)
    return last


def _a_day(words: TimeWords, day: int) -> bool:
    """Whether ``words``' month holds a ``day`` (of any year where it names none)."""
    try:
        date(words.year or 2000, words.month or 1, day)
    except ValueError:
        return False
    return True
