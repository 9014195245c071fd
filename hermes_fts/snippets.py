"""Snippets: the text shown around a match, marked ``>>>term<<<``, on every route.

Index routes ask SQLite for the snippet (``snippet_sql``); the LIKE scan cuts
it from the decoded text itself (``like_snippet``); ``narrow_single_char_hits``
fixes the CJK index's marks for one-character terms.  Pure text functions
apart from the SQL expression they return.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from .content import decode_content
from .query import Query, has_cjk

__all__ = ["like_snippet", "narrow_single_char_hits", "single_char_narrowing", "snippet_sql"]

SNIPPET_TOKENS = 40  # built-in snippet(): a word index counts tokens
SNIPPET_CHARS = 80  # cjk_snippet(): characters, since a bigram is one character wide
LIKE_SNIPPET_BEFORE = 40
LIKE_SNIPPET_CHARS = 120


def snippet_sql(table: str, cjk_helpers: bool) -> str:
    if cjk_helpers:  # merges overlapping bigram/trigram hits into one span
        return f"cjk_snippet({table}, -1, '>>>', '<<<', '...', {SNIPPET_CHARS})"
    return f"snippet({table}, -1, '>>>', '<<<', '...', {SNIPPET_TOKENS})"


def like_snippet(texts: Iterable[str | None], terms: Sequence[str]) -> str:
    """Text around the first term found, marked ``>>>term<<<``.

    Taken from the first column holding a term, so a hit in ``tool_name``
    alone still shows the term.
    """
    found = [t for t in (decode_content(x) for x in texts) if isinstance(t, str) and t]
    for text in found:
        lowered = text.lower()
        for term in terms:
            at = lowered.find(term.lower())
            if at < 0:
                continue
            start = max(0, at - LIKE_SNIPPET_BEFORE)
            end = min(len(text), start + LIKE_SNIPPET_CHARS)
            end = max(end, at + len(term))
            return (
                ("..." if start > 0 else "")
                + text[start:at]
                + ">>>"
                + text[at : at + len(term)]
                + "<<<"
                + text[at + len(term) : end]
                + ("..." if end < len(text) else "")
            )
    return found[0][:LIKE_SNIPPET_CHARS] if found else ""


_MARKED = re.compile(r">>>(.*?)<<<", re.DOTALL)


def narrow_single_char_hits(snippet: str, q: Query) -> str:
    """Mark just the character when a one-character term hit inside a bigram.

    cjk_snippet can only narrow such a hit itself on SQLite >= 3.45 (which
    says which token matched); before that it marks the whole bigram, e.g.
    ``>>>猫粮<<<`` for the query 猫.  The query knows which character it was.
    """
    narrow = single_char_narrowing(q)
    return snippet if narrow is None or not snippet else narrow(snippet)


def single_char_narrowing(q: Query) -> Callable[[str], str] | None:
    """``narrow_single_char_hits`` for one query, prepared once for all its rows.

    None when the query has no one-character CJK term (nothing to narrow).
    """
    singles = {t.text for t in q.terms if not t.negated and len(t.text) == 1 and has_cjk(t.text)}
    if not singles:
        return None
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

    return lambda snippet: _MARKED.sub(narrow, snippet)
