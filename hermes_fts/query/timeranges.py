"""Time words read together: two a range joins as one time, a list's each alone.

:func:`find_time_words` reads the time expressions of a stretch of query text
(``timewords.find_time_expressions``, each alone) and joins those a range
makes (``3月到5月``, "March 8-10", ``上周一到周三``) into one
:class:`~.timewords.TimeWords` from the first's first day to the second's
last; the times of a list ("on Monday or Tuesday", ``3月8号和9号``) are each
a time of its own, in the earlier's week or year where they name none.  What
the search does with them is docs/QUERY.md's "Time words" and docs/DESIGN.md
§6.4c.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date

from .timewords import (
    ASCII_WIDTH,
    MONTH_NAMES,
    NUM,
    WEEKDAY_NAMES,
    YEAR,
    TimeWords,
    find_time_expressions,
    number,
)

__all__ = ["find_time_words"]

_FLAGS = re.IGNORECASE


def find_time_words(text: str) -> list[tuple[int, int, TimeWords]]:
    """The time words in ``text`` as ``(start, end, TimeWords)``, in text order: its
    time expressions, two a range joins read as one, a list's each of its own."""
    return _as_lists(_as_ranges(find_time_expressions(text), text), text)


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


# A list: times a list word joins (on Monday or Tuesday, 3月8号和9号, 3월 8일이나 9일,
# 3月8日と9日, in March or April), each a time of its own; a day, weekday, month or
# year alone after one is another of its kind (9号: March 9).  Read alone, 9号 and
# Tuesday were words, and 上周一和周三 preferred this week's Wednesday.
_LIST_WORD = (
    r"\s*(?:,?\s*\b(?:and|or)\b|[,&，、]|以及|或者|还是|還是|[和与與及或跟]|または|及び|[とやか]"
    r"|이나|하고|이랑|또는|그리고|및|[과와나랑])\s*"
)
# or a space alone: a question is read without its commas (on Monday, Tuesday or
# Friday); not before a month's name, which is as often a name or a verb (May, March).
_LIST_JOIN = rf"(?:{_LIST_WORD}|\s+)"
_LIST = re.compile(_LIST_JOIN, _FLAGS)
_GOES_ON = r"(?=\s*(?:$|[?!.,;:)]|(?:and|or)\b))"  # a number alone ends a clause or the list
_LIST_DAY = re.compile(
    rf"{_LIST_JOIN}(?P<said>(?P<d>{NUM})\s*(?:[日号號](?![楼樓线線])|일)"
    rf"|(?P<n>\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(?P<y>{YEAR})\b|{_GOES_ON}))",
    _FLAGS,
)
_LIST_WEEKDAY = re.compile(rf"{_LIST_JOIN}(?P<said>{'|'.join(WEEKDAY_NAMES)})\b(?!s)", _FLAGS)
_NOT_MAY = "|".join(m for m in MONTH_NAMES if m != "May")  # may alone is the verb
_LIST_MONTH = re.compile(rf"{_LIST_WORD}(?P<said>{_NOT_MAY}|(?-i:May))\b", _FLAGS)
_LIST_YEAR = re.compile(rf"{_LIST_JOIN}(?P<said>(?P<y>{YEAR})\b{_GOES_ON})", _FLAGS)


def _as_lists(
    found: list[tuple[int, int, TimeWords]], text: str
) -> list[tuple[int, int, TimeWords]]:
    """The times of a list (``_LIST_JOIN``) each of its own, a later one in the
    earlier's year or week where it names none (上周一和周三, 去年3月和5月); the list
    words are the list's, no word to search (号和 of 3月8号和3月9号)."""
    plain = text.translate(ASCII_WIDTH)
    out: list[tuple[int, int, TimeWords]] = []
    first = 0  # where the list the last time word ends starts in ``out``
    for n, (start, end, words) in enumerate(found):
        if out and _LIST.fullmatch(plain, out[-1][1], start):
            out[-1] = (out[-1][0], start, out[-1][2])
            before = out[-1][2].through or out[-1][2]
            words = words if words.through else _like(before, words)
        else:
            first = len(out)
        out.append((start, end, words))
        limit = found[n + 1][0] if n + 1 < len(found) else len(plain)
        while (more := _next_alone(out[-1][2], plain, out[-1][1], limit)) is not None:
            said, stop, alone, year = more
            out[-1] = (out[-1][0], said, out[-1][2])
            out[first:] = [(a, b, _in_year(w, year)) for a, b, w in out[first:]]
            out.append((said, stop, replace(alone, text=text[said:stop])))
    return out


def _in_year(words: TimeWords, year: int | None) -> TimeWords:
    """A date of no year in the ``year`` a list ends with (March 8 or 9, 2024)."""
    undated = words.month is not None and words.year is None and words.back is None
    return replace(words, year=year) if year is not None and undated else words


def _next_alone(
    words: TimeWords, plain: str, end: int, limit: int
) -> tuple[int, int, TimeWords, int | None] | None:
    """The time alone that a list word joins to ``words`` ending at ``end`` (before
    ``limit``): its span, what it names and the year it says."""
    m, alone, year = _alone(words.through or words, plain, end)
    if m is None or alone is None or m.end() > limit:
        return None
    return m.start("said"), m.end(), replace(alone, through=None), year


def _alone(
    last: TimeWords, plain: str, end: int
) -> tuple[re.Match[str] | None, TimeWords | None, int | None]:
    """What follows ``last`` at ``end`` as another time of its kind: a weekday's
    weekday, a date's day (of its month), a month's month, a year's year."""
    if last.weekday is not None:
        m = _LIST_WEEKDAY.match(plain, end)
        weekday = WEEKDAY_NAMES.index(m["said"].lower()) if m else None
        return m, replace(last, weekday=weekday) if m else None, None
    if last.unit == "day" and last.day and not last.this_day:
        m = _LIST_DAY.match(plain, end)
        day = number(m["d"] or m["n"]) if m else None
        said = int(m["y"]) if m and m["y"] and last.year is None and last.back is None else None
        alone = replace(last, day=day, year=said or last.year) if day else None
        return m, alone if alone and _a_day(alone, alone.day or 0) else None, said
    if last.unit == "month" and last.month and not last.day:
        m = _LIST_MONTH.match(plain, end)
        month = MONTH_NAMES.index(m["said"].title()) + 1 if m else None
        return m, replace(last, month=month) if m else None, None
    if last.unit == "year" and last.year and last.month is None:
        m = _LIST_YEAR.match(plain, end)
        return m, replace(last, year=int(m["y"])) if m else None, None
    return None, None, None


def _a_day(words: TimeWords, day: int) -> bool:
    """Whether ``words``' month holds a ``day`` (of any year where it names none)."""
    try:
        date(words.year or 2000, words.month or 1, day)
    except ValueError:
        return False
    return True
