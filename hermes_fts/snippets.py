"""Snippets: the text shown around a match, marked ``>>>term<<<``, on every route.

Index routes ask SQLite for the snippet (``snippet_sql``); the LIKE scan cuts
it from the decoded text itself (``like_snippet``); ``narrow_single_char_hits``
fixes the CJK index's marks for one-character terms.  Pure text functions
apart from the SQL expression they return.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ._index_text import fold_width
from .content import decode_content
from .query import Query, fold_text, has_cjk

__all__ = ["like_snippet", "narrow_single_char_hits", "snippet_sql"]

SNIPPET_TOKENS = 40  # built-in snippet(): a word index counts tokens
SNIPPET_CHARS = 80  # cjk_snippet(): characters, since a bigram is one character wide
LIKE_SNIPPET_BEFORE = 40
LIKE_SNIPPET_CHARS = 120


def snippet_sql(table: str, cjk_helpers: bool) -> str:
    if cjk_helpers:  # merges overlapping bigram/trigram hits into one span
        return f"cjk_snippet({table}, -1, '>>>', '<<<', '...', {SNIPPET_CHARS})"
    return f"snippet({table}, -1, '>>>', '<<<', '...', {SNIPPET_TOKENS})"


def like_snippet(texts: Iterable[str | None], terms: Sequence[str], *,
                 fold: bool = False) -> str:
    """Text around the first term found, marked ``>>>term<<<``.

    Taken from the first column holding a term, so a hit in ``tool_name``
    alone still shows the term.  With ``fold`` (the LIKE scan compared
    folded text) the term is looked up in the folded text and the mark is
    put on the original characters it came from (``>>>東京<<<`` for 东京).
    """
    found = [t for t in (decode_content(x) for x in texts) if isinstance(t, str) and t]
    for text in found:
        lowered, starts = _folded(text) if fold else (text.lower(), None)
        for term in terms:
            key = (fold_text(term) if fold else term).lower()
            at = lowered.find(key)
            if at < 0:
                continue
            stop = at + len(key)
            if starts is not None:  # folded positions back to original ones
                at, stop = starts[at], starts[stop]
            start = max(0, at - LIKE_SNIPPET_BEFORE)
            end = min(len(text), start + LIKE_SNIPPET_CHARS)
            end = max(end, stop)
            return (
                ("..." if start > 0 else "")
                + text[start:at]
                + ">>>"
                + text[at:stop]
                + "<<<"
                + text[stop:end]
                + ("..." if end < len(text) else "")
            )
    return found[0][:LIKE_SNIPPET_CHARS] if found else ""


_HALFWIDTH_MARKS = ("\uff9e", "\uff9f")


def _folded(text: str) -> tuple[str, list[int]]:
    """``fold_text(text).lower()`` and, per folded character, where it starts in ``text``.

    Variant folding keeps lengths; width folding may join a half-width kana
    and its voiced mark into one character, so positions need the map (the
    extra last entry is ``len(text)``).
    """
    chars: list[str] = []
    starts: list[int] = []
    i = 0
    while i < len(text):
        pair = text[i : i + 2]
        step = 2 if pair[1:] in _HALFWIDTH_MARKS and len(fold_width(pair)) == 1 else 1
        for ch in fold_text(text[i:i + step]).lower():
            chars.append(ch)
            starts.append(i)
        i += step
    starts.append(len(text))
    return "".join(chars), starts


_MARKED = re.compile(r">>>(.*?)<<<", re.DOTALL)


def narrow_single_char_hits(snippet: str, q: Query) -> str:
    """Mark just the character when a one-character term hit inside a bigram.

    cjk_snippet can only narrow such a hit itself on SQLite >= 3.45 (which
    says which token matched); before that it marks the whole bigram, e.g.
    ``>>>猫粮<<<`` for the query 猫.  The query knows which character it was.
    """
    singles = {t.text for t in q.terms if not t.negated and len(t.text) == 1 and has_cjk(t.text)}
    if not singles or not snippet:
        return snippet
    longer = [t.text for t in q.terms if not t.negated and len(t.text) > 1]

    def narrow(m: re.Match[str]) -> str:
        span = m.group(1)
        if len(span) != 2 or any(span in t for t in longer):
            return m.group(0)
        first, second = span[0], span[1]
        if first in singles:
            return f">>>{first}<<<{second}"
        if second in singles:
            return f"{first}>>>{second}<<<"
        return m.group(0)

    return _MARKED.sub(narrow, snippet)
