"""A question's time words as a preference: matches from that time first, then the rest.

"What did we decide last week?" names a time, and a message's time is its
timestamp, never its text.  The best match leaves the time words out of
the words it searches (``search/question.py``); here they become windows of
local time (``search/question.py``) and the search runs twice: inside the
windows, then without them, and the rows the first found are not repeated.
So the time is never a filter: a question about last week whose answer was
said earlier still finds it, after last week's matches (docs/DESIGN.md §6.4c).

Pages stay exact and cheap: each pass reads ``limit + offset`` rows, and
when the windows hold fewer, they hold no more than the first pass found,
so the second pass's first ``limit + offset`` rows hold the rest of the
page.  Explicit ``after``/``before`` bounds win: the time words are still
left out of the words, and a note says the bounds decide.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable
from typing import Any, TypeVar

from .plan import best_match
from .question import TimeWords, describe, time_words, windows
from .request import SESSIONS_SORT, SearchRequest
from .syntax import parse_query

__all__ = ["search_preferring", "time_note"]

P = TypeVar("P")
_LEFT_OUT = "left out of the words"
_SEARCHED_TOO = "searched as words too, the question has no other"
Rows = list[dict[str, Any]]


def _found(query: Any) -> tuple[TimeWords, ...]:
    return _time_words(query)[0] if isinstance(query, str) else ()


@functools.lru_cache(maxsize=256)  # asked on every search, a pure function of the text
def _time_words(query: str) -> tuple[tuple[TimeWords, ...], bool]:
    """The question's time words, and whether the best match searches them too: it has
    no other word but common ones, so they are what there is to find (``plan.best_match``)."""
    parsed = parse_query(query)
    found = time_words(parsed)
    words = {t.text.lower() for t in best_match(parsed).terms} if found else set()
    searched = any(w.text.lower() in words or words & set(w.text.lower().split()) for w in found)
    return found, searched


def _windows(found: tuple[TimeWords, ...], now: float) -> tuple[tuple[float, float], ...]:
    """The union of the windows, merged and in time order."""
    merged: list[tuple[float, float]] = []
    for lo, hi in sorted(w for words in found for w in windows(words, now)):
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    return tuple(merged)


def _note(query: str, found: tuple[TimeWords, ...], now: float, bounded: bool) -> str:
    what = _SEARCHED_TOO if _time_words(query)[1] else _LEFT_OUT
    if bounded or not any(windows(w, now) for w in found):
        said = ", ".join(f"'{w.text}'" for w in found)
        why = "the after/before given set the time" if bounded else "no message has that time"
        return f"time words {said} {what}: {why}"
    said = ", ".join(f"'{w.text}' ({describe(w, now)}, local time)" for w in found)
    return f"time words {said} {what}: matches from then come first, then the rest"


def time_note(query: Any, now: float | None = None, bounded: bool = False) -> str | None:
    """What a search for ``query`` does with its time words, None when it has none.

    ``now`` (default: the current time) is where relative words count from;
    ``bounded``: the search has explicit ``after``/``before`` bounds.
    """
    found = _found(query)
    return _note(query, found, time.time() if now is None else now, bounded) if found else None


def search_preferring(
    request: SearchRequest, search: Callable[[SearchRequest], tuple[P, Rows]]
) -> tuple[P, Rows, tuple[str, ...]]:
    """``search(request)``, with rows from the time its words name first, and the note.

    ``search`` runs one request and returns ``(plan, rows)``.
    """
    found = _found(request.query)
    if not found:
        return (*search(request), ())
    now = time.time() if request.now is None else request.now
    bounded = request.after is not None or request.before is not None
    note = (_note(request.query, found, now, bounded),)
    spans = () if bounded else _windows(found, now)
    if not spans or request.limit == 0:
        return (*search(request), note)
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
    if len(rows) < want:  # every match from then is read: the rest follow
        seen = {row[key] for row in rows}
        rows += [row for row in search(whole)[1] if row[key] not in seen]
    rows = rows[request.offset : want]
    if fields != request.projection:
        rows = [{k: row[k] for k in request.projection or ()} for row in rows]
    return plan, rows, note
