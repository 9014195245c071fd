"""Snippets: the text shown around a match, marked ``>>>term<<<``, on every route.

While a search runs the marks are ``OPEN`` and ``CLOSE``, which stored text does
not hold; ``with_marks`` puts the caller's in their place at the end.

Index routes ask SQLite for the snippet (``snippet_sql``); the LIKE scan cuts
it from the decoded text itself (``like_snippet``); ``narrow_single_char_hits``
fixes the CJK index's marks for one-character terms, and
``recut_unreadable_snippets`` replaces an index snippet people cannot read
(raw tool-call JSON, a mark cut at the edge) with one cut from the stored
text.  Pure text functions apart from the SQL they run or return.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .._cjk_ranges import SELECTORS, is_cjk
from .._display import char_end, char_start
from .._index_text import SEPARATOR, folded_characters, segments, word_goes_on
from ..content import decode_content, escape_lone_surrogates, render_tool_calls
from ..query.plan import Query, fold_text, has_cjk
from ..query.tree import Term
from .like import term_pattern

__all__ = [
    "CLOSE",
    "MARKS",
    "OPEN",
    "edge_cut_highlight",
    "few_snippet_sql",
    "is_tool_call_json",
    "like_snippet",
    "narrow_single_char_hits",
    "readable_text",
    "recut_unreadable_snippets",
    "single_char_narrowing",
    "snippet_sql",
    "with_marks",
]

# A match is marked with two Unicode noncharacters while a search runs, and with
# ``MARKS`` (or the caller's marks) on the way out: stored text holds ``>>>`` and
# ``<<<`` (a Python prompt, a merge conflict), which read as marks otherwise.
OPEN, CLOSE = "\ufdd0", "\ufdd1"
MARKS = (">>>", "<<<")  # what the tool and ``SessionStore.search`` show

SNIPPET_TOKENS = 40  # built-in snippet(): a word index counts tokens
SNIPPET_CHARS = 80  # cjk_snippet(): characters, since a bigram is one character wide
LIKE_SNIPPET_BEFORE = 40
LIKE_SNIPPET_CHARS = 120
# A LIKE snippet looks for its term in this many characters of a text, so an
# 11 MB tool output costs its snippet what a 1 MB one does; a hit past it
# leaves the text's head, unmarked, as the snippet.
LIKE_SNIPPET_READ = 1_000_000


def with_marks(snippet: str, marks: tuple[str, str]) -> str:
    """``snippet`` with ``marks`` (open, close) where the search marked its matches."""
    return snippet.replace(OPEN, marks[0]).replace(CLOSE, marks[1])


def snippet_sql(table: str, cjk_helpers: bool) -> str:
    if cjk_helpers:  # merges overlapping bigram/trigram hits into one span
        return f"cjk_snippet({table}, -1, '{OPEN}', '{CLOSE}', '...', {SNIPPET_CHARS})"
    return f"snippet({table}, -1, '{OPEN}', '{CLOSE}', '...', {SNIPPET_TOKENS})"


def few_snippet_sql(table: str) -> str:
    """``snippet_sql`` with helpers, built only when the query is one phrase in at most
    ``?3`` rows (NULL otherwise): ``cjk_few_snippet`` judges it from ``rank``."""
    return f"cjk_few_snippet({table}, rank, ?3, -1, '{OPEN}', '{CLOSE}', '...', {SNIPPET_CHARS})"


def like_snippet(
    texts: Iterable[str | None], terms: Sequence[Term], *, fold: sqlite3.Connection | None = None
) -> str:
    """Text around the first term found, marked ``>>>term<<<``, as is every other
    term the cut shows.

    Taken from the first column holding a term, so a hit in ``tool_name``
    alone still shows the term.  A stored ``tool_calls`` array is shown as
    ``name(arg="value")`` rather than its JSON.  A term is found where the
    LIKE scan finds it: its Latin words whole (``decide`` is not in "decided")
    and its parts apart as the scan's pattern allows (``"alpha service"`` in
    "alpha-service"); the mark covers the whole word a prefix ends in
    (``dep*`` marks ``deployment``), and neither the mark nor a character (a
    combining mark, an emoji sequence) is cut at the snippet's edges.  The
    term is looked for in the first ``LIKE_SNIPPET_READ`` characters of each
    text.  With ``fold`` (the LIKE scan compared folded text; a connection
    with the extension's ``cjk_fold_find``) the term is looked up in the
    folded text and the mark is put on the original characters it came from
    (``>>>東京<<<`` for 东京, ``>>>ラーメン<<<`` for らーめん).
    """
    return _cut([readable_text(x) for x in texts], terms, fold)


def _cut(readable: list[str], terms: Sequence[Term], fold: sqlite3.Connection | None) -> str:
    """``like_snippet`` of texts already made readable (``readable_text``)."""
    found = [t for t in readable if t]
    sought = [_sought(term, fold is not None) for term in terms]
    for text in found:
        head = text[:LIKE_SNIPPET_READ]  # a prefix: its positions are the text's
        lowered = None
        for term in sought:
            if lowered is None and not term.caseless:
                lowered = _lowered(head)  # long non-ASCII text lowers slowly: only when needed
            span = _find(head if lowered is None else lowered, term, fold)
            if span is None:
                continue
            at, stop = span
            hit_end = _word_end(text, stop)
            at = _word_start(text, at)
            start = char_start(text, max(0, at - LIKE_SNIPPET_BEFORE))
            end = char_end(text, max(min(len(text), start + LIKE_SNIPPET_CHARS), hit_end))
            return _marked(text, start, end, (at, hit_end), sought, fold)
    if not found:
        return ""
    end = char_end(found[0], min(len(found[0]), LIKE_SNIPPET_CHARS))
    return found[0][:end] + ("..." if end < len(found[0]) else "")


@dataclass(frozen=True)
class _Sought:
    """A term as the LIKE scan matches it (``like.words_match``): ``key``, its first
    part lowered, is looked up as a substring, then ``pattern`` (a term of
    several parts; the scan's own, ``like.term_pattern``) must match there,
    over at most what ``reach`` matches of the text, and a Latin word ends
    where ``right`` says one must."""

    key: str
    caseless: bool  # no character of the term has a case: the text need not be lowered
    left: bool
    right: bool
    pattern: re.Pattern[str] | None = None
    reach: tuple[re.Pattern[str], ...] = ()


_NOT_SEPARATOR = "[^" + SEPARATOR[1:]


@functools.lru_cache(maxsize=256)
def _sought(term: Term, folded: bool) -> _Sought:
    """``term`` as the LIKE scan matches it, folded (``fold_text``) when ``folded``."""
    caseless = all(is_cjk(ord(ch)) for ch in term.text)  # CJK has no case, nothing lowers to it
    parts = segments(term.text, fold=False)
    if not parts:  # symbols alone: the text itself, as the scan's LikeText
        return _Sought(term.text.lower(), caseless, False, False)
    pattern, left, right = term_pattern(fold_text(term.text) if folded else term.text, term.prefix)
    if len(parts) == 1:  # one word or CJK run: the key and its edges say it all
        return _Sought(parts[0][1].lower(), caseless, left, right)
    # The text a match can span: the term's characters and two more, separators
    # apart; folding joins at most three characters into one.
    letters = sum(len(seg) for _, seg in parts)
    reach = tuple(
        re.compile(f"(?:{SEPARATOR}*{_NOT_SEPARATOR}){{0,{n}}}")
        for n in (letters + 2, 3 * letters + 2)
    )
    return _Sought(parts[0][1].lower(), caseless, left, right, pattern, reach)


# Each folded lookup reads the text again from the place after the last: a long tool
# output whose words only hold the term ("redeploy", "deployed" for deploy) was read
# once per such word.  Past this many places the snippet shows another term or none.
FOLDED_TRIES = 32


def _find(
    text: str, term: _Sought, fold: sqlite3.Connection | None, pos: int = 0
) -> tuple[int, int] | None:
    """Where ``term`` first occurs in ``text`` from ``pos`` on, folded with ``fold``
    (see ``like_snippet``), as the scan and the indexes find it: a Latin word
    neither starts nor ends inside a word (``deploy`` is not the one in
    "redeploy" or in "deployed").

    Folded, the text is read once, in C, up to the key (``cjk_fold_find``);
    only the characters of the hit are folded again here, to find where it
    ends (folding joins ``ｶﾞ``, a letter and its marks, Hangul jamo into one).
    Surrogates go through as the bytes Python would write for them.  Folded,
    at most ``FOLDED_TRIES`` places are tried.
    """
    for _ in itertools.count() if fold is None else range(FOLDED_TRIES):
        if fold is None:
            at = text.find(term.key, pos)
        else:
            at = fold.execute(
                "SELECT cjk_fold_find(?, ?)", (_utf8(text[pos:]), _utf8(term.key))
            ).fetchone()[0]
            at = at if at < 0 else pos + at
        if at < 0:
            return None
        pos = at + 1
        if term.left and not _escape_before(text, at) and word_goes_on(text, at - 1, -1):
            continue
        stop = _match_end(text, at, term, fold)
        if stop is not None:
            return at, stop
    return None


def _match_end(text: str, at: int, term: _Sought, fold: sqlite3.Connection | None) -> int | None:
    """Where ``term``, its key found at ``at``, ends in ``text``; None when it does not
    match there (a word goes on, the parts after the key differ)."""
    if term.pattern is None:
        if fold is None:
            stop = at + len(term.key)
        else:
            stop = at + len(folded_characters(text[at:], limit=len(fold_text(term.key))))
        return None if term.right and word_goes_on(text, stop, 1) else stop
    if fold is None:
        found = term.pattern.match(text, at)
        if found is None or (term.right and word_goes_on(text, found.end(), 1)):
            return None
        return found.end()
    return _folded_match_end(text, at, term)


def _folded_match_end(text: str, at: int, term: _Sought) -> int | None:
    """``_match_end`` where the scan compared folded text (folded, then lowered): the
    text the match can reach, each character's fold at its place, so the match
    maps back.  The text a character per letter of the term reaches first; the
    text three do, where folding joined characters (``ｶﾞ``, jamo) and missed."""
    for reach in term.reach:
        window = reach.match(text, at)  # {0,n}: always matches
        reached = text[at : window.end() if window else at]
        # ASCII folds letter for letter (a NUL to a space): no character's fold to place.
        pieces = list(reached) if reached.isascii() else folded_characters(reached)
        folded = fold_text("".join(pieces)).lower()
        if len(folded) == sum(map(len, pieces)):  # the kana and Han folds go letter for letter
            pieces = _split_like(folded, pieces)
        else:  # a letter lowered to two (İ): one at a time
            pieces = [fold_text(piece).lower() for piece in pieces]
            folded = "".join(pieces)
        found = term.pattern.match(folded) if term.pattern else None
        if found is not None and not (term.right and word_goes_on(folded, found.end(), 1)):
            # The characters the match folded from, and the ones joined to its last.
            read, stop = 0, 0
            while stop < len(pieces) and (read < found.end() or not pieces[stop]):
                read += len(pieces[stop])
                stop += 1
            return at + stop
        if all(pieces):  # nothing joined: the text read was all the match could reach
            return None
    return None


def _split_like(text: str, pieces: list[str]) -> list[str]:
    """``text`` cut into pieces as long as ``pieces``."""
    out, at = [], 0
    for piece in pieces:
        out.append(text[at : at + len(piece)])
        at += len(piece)
    return out


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _lowered(text: str) -> str:
    """``text.lower()`` with every character where it was, so a position found in it
    is one in ``text``: a character that lowers to several (İ) stays as it is."""
    lowered = text.lower()
    if len(lowered) == len(text):  # lowering never shortens: nothing moved
        return lowered
    return "".join(low if len(low := ch.lower()) == 1 else ch for ch in text)


# --------------------------------------------------------------------------- readable text


def readable_text(value: str | None, cut: bool = False) -> str:
    """A stored column as people read it: decoded content, tool calls as calls,
    other JSON holding ``\\u`` escapes with the characters they encode.

    ``cut``: the text is the head of a longer one (a capped message), so JSON in
    it does not parse; its ``\\u`` escapes are decoded one by one instead."""
    text = decode_content(value)
    if not isinstance(text, str) or not text:
        return ""
    calls = render_tool_calls(text) if text.lstrip().startswith("[") else None
    if calls is not None:
        return calls
    if "\\u" in text and text[:1] in ("[", "{", '"'):
        try:
            return escape_lone_surrogates(json.dumps(json.loads(text), ensure_ascii=False))
        except (ValueError, RecursionError):
            if cut:
                return _ESCAPE_OR_PAIR.sub(_unescaped, text)
            # else not JSON after all: shown as stored
    return text


# An escaped backslash (kept, so the ``u`` after it is no escape), a surrogate pair,
# or one escape.
_ESCAPE_OR_PAIR = re.compile(
    r"\\\\|\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})|\\u([0-9a-fA-F]{4})"
)


def _unescaped(found: re.Match[str]) -> str:
    """The character a JSON escape encodes, as ``json.dumps`` would show it: control
    characters, quotes, backslashes and lone surrogates stay escaped."""
    high, low, one = found.groups()
    if high is not None:
        return chr(0x10000 + ((int(high, 16) - 0xD800) << 10) + int(low, 16) - 0xDC00)
    if one is None:
        return found[0]
    code = int(one, 16)
    if code < 0x20 or code in (0x22, 0x5C) or 0xD800 <= code <= 0xDFFF:
        return found[0]
    return chr(code)


# What an index snippet of a JSON column looks like: escapes, or keys (quoted
# as stored, quoted and escaped inside a JSON string such as tool-call
# arguments, or bare as in the decoded text the indexes add).  Two patterns,
# each tried only where its literal part occurs: one alternation tried at
# every position costs 2 us a snippet, and every row's snippet is tested.
_JSON_ESCAPE = re.compile(r"\\u[0-9a-fA-F]{4}")
_JSON_KEY = re.compile(r'[{,] ?(?:\\?")?[A-Za-z_][\w-]*(?:\\?")?: ')


def is_tool_call_json(snippet: str) -> bool:
    """Whether an index snippet shows JSON: a ``tool_calls`` column, structured
    content or escaped text, as stored or as the decoded text indexed with it."""
    if '"' not in snippet and ": " not in snippet and "\\u" not in snippet:
        return False  # every shape below needs one of these (most prose has none)
    plain = snippet.replace(OPEN, "").replace(CLOSE, "")
    return (
        '"function"' in plain
        or '"arguments"' in plain
        or ("\\u" in plain and _JSON_ESCAPE.search(plain) is not None)
        or (": " in plain and _JSON_KEY.search(plain) is not None)
    )


def edge_cut_highlight(snippet: str) -> bool:
    """Whether a mark touches a cut edge (``...>>>`` or ``<<<...``): its term may be cut."""
    return snippet.startswith("..." + OPEN) or snippet.endswith(CLOSE + "...")


def recut_unreadable_snippets(
    conn: sqlite3.Connection, rows: list[dict[str, Any]], terms: Sequence[Term]
) -> None:
    """Cut again, from the stored text, the index snippets people could not read.

    SQLite's snippet shows a ``tool_calls`` column or structured content as
    JSON (raw, or the decoded text the indexes add to it), and one limited in
    characters can cut a marked term at its edge.  Those rows get
    ``like_snippet``'s (calls as ``name(arg="…")``, terms whole) when it finds
    a query term in the text; otherwise the index snippet stays.  So does
    the snippet of JSON stored as plain text (a fetched page's fields): cut
    again, it would show the very same JSON.
    """
    for row in rows:
        snippet = row.get("snippet")
        if not isinstance(snippet, str):
            continue
        edge_cut = edge_cut_highlight(snippet)
        if not (edge_cut or is_tool_call_json(snippet)):
            continue
        texts = (
            conn.execute(
                "SELECT content, tool_name, tool_calls FROM messages WHERE id = ?", (row["id"],)
            ).fetchone()
            or ()
        )
        readable = [readable_text(x) for x in texts]
        if not edge_cut and readable == [x or "" for x in texts]:
            continue  # nothing decodes or renders differently from how it is stored
        # The words the index marked, as written: a term it matched folded (ＮＧＩＮＸ
        # for nginx) is found in the stored text too.
        recut = _cut(readable, [*terms, *map(Term, _MARKED.findall(snippet))], None)
        if OPEN in recut:
            row["snippet"] = recut


_MARKED = re.compile(f"{OPEN}(.+?){CLOSE}")


def _marked(
    text: str,
    start: int,
    end: int,
    first: tuple[int, int],
    terms: Sequence[_Sought],
    fold: sqlite3.Connection | None,
) -> str:
    """``text[start:end]`` as a snippet: ``first`` marked, and every other hit of a term
    in it (any case, folded with ``fold``) over its whole Latin word, as the index
    routes mark every term they show, except where it would touch a cut edge
    (``...``).  Touching marks become one."""
    spans = [first]
    for at, stop in _hits(text[start:end], terms, fold):
        at, stop = _word_start(text, start + at), _word_end(text, start + stop)
        if (start < at or start == at == 0) and (stop < end or stop == end == len(text)):
            spans.append((at, stop))
    merged: list[list[int]] = []
    for at, stop in sorted(spans):
        if merged and at <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], stop)
        else:
            merged.append([at, stop])
    out, pos = ["..." if start > 0 else ""], start
    for at, stop in merged:
        out += [text[pos:at], OPEN, text[at:stop], CLOSE]
        pos = stop
    return "".join([*out, text[pos:end], "..." if end < len(text) else ""])


def _hits(
    window: str, terms: Sequence[_Sought], fold: sqlite3.Connection | None
) -> list[tuple[int, int]]:
    """Where each of ``terms`` occurs in ``window``, as ``_find`` finds the first."""
    lowered = _lowered(window)
    hits = []
    for term in dict.fromkeys(terms):
        pos = 0
        while term.key and (span := _find(lowered, term, fold, pos)) is not None:
            hits.append(span)
            pos = max(span[1], span[0] + 1)
    return hits


# --------------------------------------------------------------------------- edges


def _latin_word_char(ch: str) -> bool:
    return (ch.isalnum() or ch == "_") and not has_cjk(ch)


# A lone surrogate shows as its escape (``\\ud800``, ``content.escape_lone_surrogates``),
# which the tokenizer never read: a word beside it starts after it, not in its digits.
_SURROGATE_ESCAPE = re.compile(r"\\ud[89a-f][0-9a-f]{2}")


def _escape_before(text: str, i: int) -> bool:
    """Whether the shown escape of a lone surrogate ends right before ``text[i]``."""
    return (
        i >= 6
        and text[i - 1] in "0123456789abcdef"
        and bool(_SURROGATE_ESCAPE.fullmatch(text, i - 6, i))
    )


def _word_start(text: str, i: int) -> int:
    while (
        i > 0
        and _latin_word_char(text[i - 1])
        and _latin_word_char(text[i])
        and not _escape_before(text, i)
    ):
        i -= 1
    return char_start(text, i)


def _word_end(text: str, i: int) -> int:
    while 0 < i < len(text) and _latin_word_char(text[i - 1]) and _latin_word_char(text[i]):
        i += 1
    return char_end(text, i)


def _spellings(ch: str) -> frozenset[str]:
    """``ch`` and the characters the CJK index folds together with it: other kana
    (ら: ら, ラ and ﾗ) and other Han variants (東: 東 and 东)."""
    key = fold_text(ch)
    return frozenset({ch, *_kana_by_fold().get(key, ()), *_variants_by_fold().get(key, ())})


@functools.cache
def _kana_by_fold() -> dict[str, list[str]]:
    """Every kana (hiragana, katakana, half-width katakana) by its folded form."""
    forms: dict[str, list[str]] = {}
    for lo, hi in ((0x3041, 0x309F), (0x30A1, 0x30FF), (0xFF66, 0xFF9E)):
        for cp in range(lo, hi):
            forms.setdefault(fold_text(chr(cp)), []).append(chr(cp))
    return forms


@functools.cache
def _variants_by_fold() -> dict[str, list[str]]:
    """Every Han character with another spelling, by its folded form: the table's
    own fold, which is ``fold_text``'s for such a character (the width and kana
    folds leave it alone; a test checks each), without folding each in Python."""
    from .._cjk_variants import FOLDS, fold_char  # a large table, read only for such a query

    forms: dict[str, list[str]] = {}
    for cp in {*FOLDS, *FOLDS.values()}:
        forms.setdefault(chr(fold_char(cp)), []).append(chr(cp))
    return forms


# A CJK character and its variation selectors are one character (``selectors 1``).
_SELECTORS = "[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in SELECTORS) + "]"


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
    longer = [fold_text(t.text) for t in q.terms if not t.negated and len(t.text) > 1]
    # Only the two-character marks that hold one of them (as written, or as
    # other kana or Han variants the index folds with it): a pattern made for
    # the query finds those, so the other marks cost no Python call.
    spellings = {ch for single in singles for ch in _spellings(single)}
    chars = "".join(re.escape(ch) for ch in sorted(spellings))
    # A character with the variation selectors after it (``selectors 1``: 葛󠄀 is 葛).
    single, other = f"[{chars}]{_SELECTORS}*", f"[^{CLOSE}]{_SELECTORS}*"
    pair = re.compile(f"{OPEN}(?:({single})({other})|({other})({single})){CLOSE}")

    def narrow(m: re.Match[str]) -> str:
        if any(fold_text(m.group(0)[1:-1]) in t for t in longer):
            return m.group(0)
        if m.group(1):
            return f"{OPEN}{m.group(1)}{CLOSE}{m.group(2)}"
        return f"{m.group(3)}{OPEN}{m.group(4)}{CLOSE}"

    return lambda snippet: pair.sub(narrow, snippet)
