"""Reading a question: which of its words name what a conversation says.

A best match (``plan.best_match``) searches the words of a question as a
model writes it.  Three kinds of word there do not name anything a
conversation says, and would decide the match if searched (docs/QUERY.md,
"Reading a question"):

* a possessive: ``Anna's`` is the word ``Anna`` (the tokenizer would make it
  the phrase "anna s");
* a category word: the ``hobby`` of "what kind of hobby", the ``数据`` of
  "哪个数据库": the conversation names the thing (bouldering), not its kind;
* time words: "last week", "3月8号", "先週", "지난주": a message's date is
  its timestamp (``search/prefer.py`` turns them into a time preference).

Only words written without quotes are read; a quoted phrase is searched as
written.  This module knows words, not SQL.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .syntax import AllOf, Query, Term
from .timewords import TimeWords, find_time_words

__all__ = ["Reading", "read_question", "time_words"]

_POSSESSIVE = re.compile(r"(\w+)['\u2019]s", re.IGNORECASE)
# "what kind of X", "which type of X", "what sorts of X": X names a category.
_ASKING = frozenset({"what", "which"})
_KINDS = frozenset({"kind", "kinds", "type", "types", "sort", "sorts"})
# "which X" asks only where a question or its clause starts: after a noun,
# "which" is relative ("the bug which crashed") and the word after it a verb.
_ASKS_AFTER = frozenset("in on at from to for with of by about during into and or".split())
# The noun after these names a category too: Chinese (its first two
# characters), Japanese (its kanji or katakana run) and Korean (the next word).
# Not 哪个 ("which one"): it mostly picks among things named before.
_CJK_CATEGORY = re.compile(
    "(?:什么样的?|什麼樣的?|什么类型的|什麼類型的|什么种类的|什麼種類的|哪种|哪種|哪些|哪类|哪類)"
    "(?![是有的了在])([\u4e00-\u9fff]{2})"
    "|(?:どんな|どの|どういう|どういった|何の|なんの)([\u4e00-\u9fff\u30a0-\u30ff\u3005]+)"
)
_KO_ASKING = frozenset({"어떤", "무슨"})
MAX_TIME_WORDS = 8  # read as times; more are searched as the words they are

Word = tuple[Term, bool]  # a term of the query and whether it was written without quotes
Span = tuple[int, int]


@dataclass(frozen=True)
class Reading:
    """A question's words as a best match should search them.

    ``words``: the query's terms in order, each with whether it was written
    without quotes; possessives read and time and category words cut out of
    the words holding them.  ``aside``: those time and category words, left
    out while other words remain.  ``times``: the time words found.
    ``notes``: what was read, for the query's notes.  ``written``: the words
    as the user wrote them (a possessive read as its name), not the pieces a
    CJK sentence is cut into: what a note may name.
    """

    words: tuple[Word, ...]
    aside: frozenset[Term] = frozenset()
    times: tuple[TimeWords, ...] = ()
    notes: tuple[str, ...] = ()
    written: frozenset[str] = frozenset()


def _top_words(q: Query) -> list[Word]:
    if q.expr is None:
        return []
    top = q.expr.include if isinstance(q.expr, AllOf) else (q.expr,)
    bare = set(q.bare)
    return [(node, node.text in bare) for node in top if isinstance(node, Term)]


def _possessives(words: list[Word], is_stop: Callable[[str], bool]) -> tuple[list[Word], list[str]]:
    """``Anna's`` and ``Anna’s`` written without quotes as ``Anna``, and the note's pairs.

    ``it's`` and ``let's`` become common words, left out as such: no possessive
    to name."""
    out, read = [], []
    for term, unquoted in words:
        found = _POSSESSIVE.fullmatch(term.text) if unquoted else None
        if found is not None:
            if not is_stop(found.group(1)):
                read.append(f"{term.text} → {found.group(1)}")
            term = Term(found.group(1), term.prefix)
        out.append((term, unquoted))
    return out, read


def _stretches(words: list[Word]) -> Iterator[list[tuple[int, int]]]:
    """Runs of consecutive words written without quotes, as (word index, offset) lists:
    the offset of each word in the run's text, its words joined by spaces."""
    run: list[tuple[int, int]] = []
    offset = 0
    for i, (term, unquoted) in enumerate(words):
        if not unquoted:
            if run:
                yield run
            run, offset = [], 0
            continue
        run.append((i, offset))
        offset += len(term.text) + 1
    if run:
        yield run


def _mark_times(words: list[Word], marks: list[list[Span]]) -> list[TimeWords]:
    """Find the time words of each stretch; mark their characters in the words."""
    found: list[TimeWords] = []
    for run in _stretches(words):
        text = " ".join(words[i][0].text for i, _ in run)
        for start, end, when in find_time_words(text):
            if len(found) == MAX_TIME_WORDS:  # a day in every year is 57 windows each
                return found
            found.append(when)
            for i, offset in run:
                lo, hi = max(start, offset), min(end, offset + len(words[i][0].text))
                if lo < hi:
                    marks[i].append((lo - offset, hi - offset))
    return found


def _mark_categories(
    words: list[Word], marks: list[list[Span]], is_stop: Callable[[str], bool]
) -> list[str]:
    """Mark category words (see the module docstring); return them as written."""
    found = []
    for run in _stretches(words):
        idx = [i for i, _ in run]
        texts = [words[i][0].text for i in idx]
        low = [t.lower() for t in texts]
        for k in range(len(idx)):
            nxt, kind = k + 1, ""
            if (
                low[k] in _ASKING
                and k + 3 < len(idx)
                and low[k + 1] in _KINDS
                and low[k + 2] == "of"
            ):
                marks[idx[k + 1]].append((0, len(texts[k + 1])))
                nxt, kind = k + 3, f"{texts[k + 1]} of "
            elif not (
                low[k] in _KO_ASKING
                or low[k] == "which"
                and (k == 0 or low[k - 1] in _ASKS_AFTER or is_stop(low[k - 1]))
            ):
                continue
            if nxt < len(idx) and low[nxt].isalpha() and not is_stop(low[nxt]):
                if not marks[idx[nxt]]:  # a time word is one already
                    marks[idx[nxt]].append((0, len(texts[nxt])))
                    found.append(kind + texts[nxt])
            elif kind:
                found.append(texts[k + 1])
        for i in idx:
            for m in _CJK_CATEGORY.finditer(words[i][0].text):
                # The question word goes with its noun: どんな alone is no word either.
                if not any(a < m.end() and m.start() < b for a, b in marks[i]):
                    marks[i].append(m.span())
                    found.append(m.group(1) or m.group(2))
    return found


def _split(term: Term, spans: list[Span]) -> list[tuple[Term, bool]]:
    """``term`` cut at ``spans``, in order: each piece and whether it was cut out."""
    text = term.text
    pieces: list[tuple[Term, bool]] = []
    pos = 0
    for start, end in sorted(spans) + [(len(text), len(text))]:
        start = max(start, pos)
        for a, b, cut in ((pos, start, False), (start, end, True)):
            piece = text[a:b].strip()
            if piece:
                pieces.append((Term(piece, term.prefix and b == len(text)), cut))
        pos = max(pos, end)
    return pieces


def time_words(q: Query) -> tuple[TimeWords, ...]:
    """The time words of a best match written without quotes, in query order."""
    return read_question(q, _no_stop_words).times if q.loose else ()


def _no_stop_words(_text: str) -> bool:
    return False  # time words do not depend on them


@functools.lru_cache(maxsize=256)
def read_question(q: Query, is_stop: Callable[[str], bool]) -> Reading:
    """``q``'s top-level words as a best match searches them (the module docstring).

    ``is_stop(word)``: whether a word is a common word, never a category's
    noun (``which of``).  A query that is not a best match (``q.loose``
    false) is left as it is.
    """
    words = _top_words(q)
    if not q.loose:
        return Reading(tuple(words), written=frozenset(q.bare))
    words, possessives = _possessives(words, is_stop)
    written = frozenset(term.text for term, unquoted in words if unquoted)
    marks: list[list[Span]] = [[] for _ in words]
    times = _mark_times(words, marks)
    categories = _mark_categories(words, marks, is_stop)
    out: list[Word] = []
    aside: list[Term] = []
    for (term, unquoted), spans in zip(words, marks):
        if not spans:
            out.append((term, unquoted))
            continue
        for piece, cut in _split(term, spans):
            out.append((piece, not cut))  # a cut word is kept whole if nothing else is left
            if cut:
                aside.append(piece)
    notes = []
    if possessives:
        notes.append("read possessives as the name: " + ", ".join(possessives))
    if categories:
        notes.append(
            "left out category words, since a conversation names the thing, not its kind: "
            + ", ".join(dict.fromkeys(categories))
        )
    return Reading(tuple(out), frozenset(aside), tuple(times), tuple(notes), written)
