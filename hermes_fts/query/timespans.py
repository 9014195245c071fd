"""The calendar of time words: the days a :class:`~.timewords.TimeWords` names.

:func:`windows` turns one into ``[start, end)`` ranges of Unix seconds,
counted from a given ``now`` in the local time zone (the zone naive ISO
bounds are read in, ``tool/args.py``); :func:`describe` says those days for
a note.  A date without a year is that day in every year up to ``now``'s.
This module knows the calendar, not SQL.
"""

from __future__ import annotations

import functools
from calendar import isleap, monthrange
from dataclasses import replace
from datetime import date, datetime, timedelta

from .timewords import FIRST_YEAR, MONTH_NAMES, TimeWords

__all__ = ["describe", "missing_day", "windows"]

_ABOUT_DAYS = 14  # about this time (this time last year): two weeks either side


def _shift_month(year: int, month: int, back: int) -> tuple[int, int]:
    index = year * 12 + month - 1 - back
    return index // 12, index % 12 + 1


def _span(unit: str, year: int, month: int, day: int) -> tuple[date, date]:
    """The ``unit`` that starts on the given day, as [first day, day after)."""
    first = date(year, month, day)
    if unit == "day":
        return first, first + timedelta(days=1)
    if unit == "week":
        return first, first + timedelta(days=7)
    if unit == "month":
        y, m = _shift_month(year, month, -1)
        return first, date(y, m, 1)
    return first, date(year + 1, 1, 1)


def _weekdays(words: TimeWords, today: date) -> list[date]:
    """The days a weekday names (``TimeWords``), counted from ``today``."""
    day = words.weekday or 0
    monday = today - timedelta(days=today.weekday())
    if words.back is None:  # the last one, today included
        return [today - timedelta(days=(today.weekday() - day) % 7)]
    if words.back >= 0:
        return [monday + timedelta(days=day - 7 * words.back)]
    before = today - timedelta(days=(today.weekday() - day - 1) % 7 + 1)
    return sorted({before, monday + timedelta(days=day - 7)})


def _within(words: TimeWords, today: date) -> date:
    """The first day of "the past ``back`` ``unit``\\ s" up to ``today``."""
    n = words.back or 0
    if words.unit in ("day", "week"):
        return today - timedelta(days=n * (7 if words.unit == "week" else 1))
    year, month = _shift_month(today.year, today.month, n * (12 if words.unit == "year" else 1))
    # the same day then, or the month's last where it has none (31 May: 30 April)
    return date(year, month, min(today.day, monthrange(year, month)[1]))


def _range(words: TimeWords, today: date) -> list[tuple[date, date]]:
    """A range's days: each of its end's days from the latest of its start's before it
    (3月到5月: March to May of each year); its two ends apart where none is."""
    firsts = _days(replace(words, through=None), today)
    lasts = _days(words.through, today) if words.through else []
    spans: list[tuple[date, date]] = []
    for _, after in lasts:
        starts = [first for first, _ in firsts if first < after]
        if starts and (not spans or max(starts) >= spans[-1][1]):
            spans.append((max(starts), after))
    return spans or sorted(firsts + lasts)


def _days(words: TimeWords, today: date) -> list[tuple[date, date]]:
    if words.through is not None:
        return _range(words, today)
    if words.this_day:  # 去年的今天; 29 February in a year without one is the 28th
        year = words.year if words.year is not None else today.year - (words.back or 0)
        day = today.day if (today.month, today.day) != (2, 29) or isleap(year) else 28
        if words.unit == "week":  # about this time: a day said loosely
            then = date(year, today.month, day)
            return [(then - timedelta(days=_ABOUT_DAYS), then + timedelta(days=_ABOUT_DAYS + 1))]
        return [_span("day", year, today.month, day)]
    if words.weekday is not None:
        return [_span("day", d.year, d.month, d.day) for d in _weekdays(words, today)]
    if words.within:
        return [(_within(words, today), today + timedelta(days=1))]
    if words.back == -1 and words.month is not None:  # last March: the last before today
        gone = (words.month, words.day or 0) < (today.month, today.day if words.day else 0)
        year = today.year - (0 if gone else 1)
        while words.day == 29 and words.month == 2 and not isleap(year):  # last February 29
            year -= 1
        return [_span(words.unit, year, words.month, words.day or 1)]
    if words.back is not None and words.month is not None:  # 去年12月: in a year back
        return [_span(words.unit, today.year - words.back, words.month, words.day or 1)]
    if words.back is not None and words.day is not None:  # 上个月8号: in a month back
        return [_span("day", *_shift_month(today.year, today.month, words.back), words.day)]
    if words.back is not None:
        if words.unit == "day":
            return [_span("day", *(today - timedelta(days=words.back)).timetuple()[:3])]
        if words.unit == "week":
            monday = today - timedelta(days=today.weekday() + 7 * words.back)
            return [_span("week", monday.year, monday.month, monday.day)]
        if words.unit == "month":
            return [_span("month", *_shift_month(today.year, today.month, words.back), 1)]
        return [_span("year", today.year - words.back, 1, 1)]
    if words.month is None and words.day is not None:  # "on the 3rd": the last one
        return [_span("day", *_last_monthly(words.day, today))]
    years = [words.year] if words.year is not None else range(FIRST_YEAR, today.year + 1)
    spans = []
    for year in years:
        try:
            spans.append(_span(words.unit, year, words.month or 1, words.day or 1))
        except ValueError:  # 29 February in a year without one
            continue
    return spans


def _last_monthly(day: int, today: date) -> tuple[int, int, int]:
    """The last ``day`` of a month up to ``today`` (the 31st: of the last month with one)."""
    year, month = today.year, today.month
    back = 0 if day <= today.day else 1
    while True:
        y, m = _shift_month(year, month, back)
        try:
            return date(y, m, day).timetuple()[:3]
        except ValueError:
            back += 1


def _seconds(day: date) -> float:
    return datetime(day.year, day.month, day.day).timestamp()  # local midnight


def _today(now: float) -> date | None:
    """``now``'s local date; None where no date holds it (a ``now`` of 1e300)."""
    try:
        return datetime.fromtimestamp(now).date()
    except (ValueError, OverflowError, OSError):
        return None


def _calendar_days(words: TimeWords, today: date) -> list[tuple[date, date]]:
    """``_days``, none where they would pass the calendar's ends ("today" on
    9999-12-31, "last year" in year 1): a ``now`` a caller chose, not a failed search."""
    try:
        return _days(words, today)
    except (ValueError, OverflowError):
        return []


def windows(words: TimeWords, now: float) -> tuple[tuple[float, float], ...]:
    """``words`` as ``[start, end)`` Unix-second ranges of local time, counted from ``now``."""
    today = _today(now)
    return () if today is None else _windows(words, today)


@functools.lru_cache(maxsize=256)  # a day in every year is 57 windows; each search asks
def _windows(words: TimeWords, today: date) -> tuple[tuple[float, float], ...]:
    # A stretch that starts before FIRST_YEAR ("the past 100 years") holds every
    # message from then on: cut there, not dropped as a time no message has.
    first = date(FIRST_YEAR, 1, 1)
    try:
        return tuple(
            (_seconds(max(a, first)), _seconds(b))
            for a, b in _calendar_days(words, today)
            if b > first
        )
    except (ValueError, OverflowError, OSError):  # local midnight of 9999-12-31 east of UTC
        return ()


def _every_year(words: TimeWords) -> bool:
    return words.month is not None and words.back is None and words.year is None


def _month_day(words: TimeWords) -> str:
    month = MONTH_NAMES[(words.month or 1) - 1]
    return f"{month} {words.day}" if words.day else month


def describe(words: TimeWords, now: float) -> str:
    """The days ``words`` names, for a note: ``2026-11-23 – 2026-11-29``, or a
    date in every year (``March 8 of every year``)."""
    read = f", read as {words.order}" if words.order else ""
    if _every_year(words) and (words.through is None or _every_year(words.through)):
        ends = " – ".join(_month_day(w) for w in (words, words.through) if w is not None)
        return f"{ends} of every year{read}"
    today = _today(now)
    spans = [] if today is None else _calendar_days(words, today)
    if not spans:
        return missing_day(words, now) or "no day the calendar holds"
    said = []
    for first, after in spans:  # one span, or the two days of "last Tuesday"
        last = after - timedelta(days=1)
        said.append(first.isoformat() if first == last else f"{first} – {last}")
    return " or ".join(said) + read


def missing_day(words: TimeWords, now: float) -> str | None:
    """What the calendar lacks where ``words`` name a day their month has not then
    (上个月31号 after a November of 30 days, this February 29 in 2026): "November
    2026 has no day 31"; None where they name no such day."""
    today = _today(now)
    if today is None or not words.day or _calendar_days(words, today):
        return None
    month = _calendar_days(replace(words, day=1), today)
    if not month:
        return None
    first = month[0][0]
    return f"{MONTH_NAMES[first.month - 1]} {first.year} has no day {words.day}"
