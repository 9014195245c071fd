"""Query sanitizing, parsing and per-route query building (no SQL connections).

Pipeline used by the search layer::

    text = sanitize_fts5_query(raw)        # a string FTS5 never rejects
    q = parse_query(text)                  # groups of terms, shared by every route
    if q.is_empty: -> no results
    route_can_represent(q, route)          # can this index answer q exactly?
    match_expression(q, route)             # the MATCH string for that index
    like_where(q)                          # (sql, params) for the LIKE scan
    snippet_terms(q)                       # positive terms, for LIKE snippets

Boolean meaning (the same on every route): a query is an OR of groups; a group
is an AND of terms; ``NOT`` negates exactly the term that follows it.  So
``NOT`` binds tighter than ``AND`` (explicit or implicit between adjacent
terms), and ``AND`` tighter than ``OR``.  The sanitizer writes its output so
that FTS5 reads it with exactly this meaning too (it inserts ``AND`` after a
negated term that is followed by another term, because FTS5 would otherwise
negate the whole implicit-AND run).

What each route promises for one term (``T`` = the term text):

* ``fts5`` (unicode61): the term's unicode61 tokens appear as consecutive
  tokens (case and diacritics folded, punctuation ignored); a trailing ``*``
  makes the last token a prefix.  Cannot represent CJK (a CJK run is one
  unicode61 token) nor a term without any letter/number.
* ``fts_cjk`` (``cjk_unicode61``): like ``fts5`` for non-CJK text (plus width
  folding); a term made of one CJK run is an exact substring match (bigrams;
  a single character uses the document-only colocated unigrams of
  ``unigrams 1``); ``秃发*`` finds 秃发头.
* ``trigram``: ``T`` is a substring (Unicode case-insensitive, no diacritic or
  width folding); a trailing ``*`` adds nothing (substrings already extend).
  Only terms of >= 3 characters.
* LIKE (:func:`like_where`): ``T`` is a substring, case-insensitive for ASCII
  letters only (SQLite's built-in LIKE), no width folding: the raw text is
  searched as stored, so the answer is the exact-substring ground truth.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from hermes_fts._cjk_ranges import is_cjk

__all__ = [
    "MAX_FTS5_QUERY_CHARS",
    "MAX_LIKE_ALTERNATIVES",
    "QueryTooBroad",
    "OPERATORS",
    "ROUTES",
    "Group",
    "Query",
    "Term",
    "cjk_run_lengths",
    "choose_route",
    "cjk_terms",
    "fold_width",
    "has_cjk",
    "check_like_alternatives",
    "like_where",
    "match_expression",
    "min_cjk_run",
    "parse_query",
    "route_can_represent",
    "sanitize_fts5_query",
    "snippet_terms",
]

MAX_FTS5_QUERY_CHARS = 2048
OPERATORS = frozenset({"AND", "OR", "NOT"})
ROUTES = ("fts5", "fts_cjk", "trigram")
LIKE_COLUMNS = ("m.content", "m.tool_name", "m.tool_calls")

# FTS5's own whitespace (fts5ExprIsspace); anything else outside a string must
# be a bareword character or an operator character, or MATCH fails.
_FTS5_SPACE = " \t\n\r"
_WS_SPLIT = re.compile(r"([ \t\n\r]+)")
_BALANCED_QUOTE = re.compile(r'"([^"]*)"')
_PLACEHOLDER = re.compile(r"(\x00\d+\x00)")
_PLACEHOLDER_FULL = re.compile(r"\x00(\d+)\x00")
# A dotted / hyphenated / underscored word run (`\w+([._-]\w+)+`): the whole
# token is quoted.  Such a run exists exactly when a separator has a word
# character on both sides; this form is linear (the nested one backtracks
# quadratically on a 2048-character word).
_IDENTIFIER = re.compile(r"\w[._-]\w")
_WORD = re.compile(r"\w")
# Kept characters are FTS5 bareword characters: ASCII alphanumerics, "_" and
# every code point above 127.  Everything else in ASCII becomes a space.
_NOT_BAREWORD = re.compile(r"[^A-Za-z0-9_\u0080-\U0010FFFF]")
# Trimmed from both ends of a quoted identifier token: brackets, commas,
# sentence punctuation around a path or version.  "%" stays (`61.2%`).
_TRIM_PUNCT = "".join(ch for ch in "!\"#$&'()*+,-./:;<=>?@[\\]^`{|}~" if ch != "%")

_HALFWIDTH_KANA_FIRST = 0xFF65
_HALFWIDTH_KANA_LAST = 0xFF9F
_HALFWIDTH_VOICED = "\uff9e"
_HALFWIDTH_SEMI_VOICED = "\uff9f"
_KATAKANA_FIRST = 0x30A1
_KATAKANA_LAST = 0x30FA


# ---------------------------------------------------------------------------
# CJK classification (the table comes from hermes_fts._cjk_ranges)
# ---------------------------------------------------------------------------


def fold_width(text: str) -> str:
    """Fold widths the way the ``cjk_unicode61`` tokenizer does before classifying.

    Full-width ASCII U+FF01..U+FF5E becomes ASCII; half-width katakana
    U+FF65..U+FF9F becomes full-width (NFKC), and a half-width (semi-)voiced
    mark is composed into the katakana before it when such a kana exists
    (``ｶﾞ`` → ``ガ``).  Everything else (half-width Hangul, U+FFE0..FFEE, the
    ideographic space) is left alone, as in the C library.
    """
    out: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        cp = ord(ch)
        i += 1
        if cp < _KATAKANA_FIRST:
            out.append(ch)
            continue
        if 0xFF01 <= cp <= 0xFF5E:
            ch = chr(cp - 0xFEE0)
        elif _HALFWIDTH_KANA_FIRST <= cp <= _HALFWIDTH_KANA_LAST:
            ch = unicodedata.normalize("NFKC", ch)
        if (
            len(ch) == 1
            and _KATAKANA_FIRST <= ord(ch) <= _KATAKANA_LAST
            and i < n
            and text[i] in (_HALFWIDTH_VOICED, _HALFWIDTH_SEMI_VOICED)
        ):
            mark = "\u3099" if text[i] == _HALFWIDTH_VOICED else "\u309a"
            composed = unicodedata.normalize("NFC", ch + mark)
            if len(composed) == 1:
                ch = composed
                i += 1
        out.append(ch)
    return "".join(out)


def has_cjk(text: str) -> bool:
    """True if ``text`` contains a CJK character (after width folding)."""
    return any(is_cjk(ord(ch)) for ch in fold_width(text))


def cjk_run_lengths(text: str) -> list[int]:
    """Lengths of the maximal CJK runs of ``text`` after width folding, in order.

    Any non-CJK character (space, punctuation, Latin, digits) ends a run,
    exactly as in the tokenizer.
    """
    runs: list[int] = []
    current = 0
    for ch in fold_width(text):
        if is_cjk(ord(ch)):
            current += 1
        elif current:
            runs.append(current)
            current = 0
    if current:
        runs.append(current)
    return runs


def _is_token_char(ch: str) -> bool:
    """unicode61's default token characters: categories L*, N*, Co."""
    cat = unicodedata.category(ch)
    return cat[0] in "LN" or cat == "Co"


def _segments(text: str) -> list[tuple[bool, str]]:
    """The tokenizer's view of ``text``: (is_cjk_run, segment) pairs.

    Separators are dropped; a non-CJK segment is a maximal run of unicode61
    token characters; a CJK segment is a maximal CJK run (width folded).
    """
    segs: list[tuple[bool, str]] = []
    cur: list[str] = []
    cur_cjk = False
    for ch in fold_width(text):
        if is_cjk(ord(ch)):
            kind: bool | None = True
        elif _is_token_char(ch):
            kind = False
        else:
            kind = None
        if cur and kind is not cur_cjk:
            segs.append((cur_cjk, "".join(cur)))
            cur = []
        if kind is not None:
            cur.append(ch)
            cur_cjk = kind
    if cur:
        segs.append((cur_cjk, "".join(cur)))
    return segs


# ---------------------------------------------------------------------------
# Sanitizer
# ---------------------------------------------------------------------------


@dataclass
class _Item:
    kind: str  # "ws", "op" or "term"
    text: str
    prefix: bool = False


def _clean_control(text: str) -> str:
    """Control characters (C0, DEL, C1), lone surrogates and other spaces become spaces.

    NUL would end FTS5's scan early (an "unterminated string" inside quotes),
    other ASCII controls are syntax errors, surrogates cannot be bound, and a
    non-ASCII space (U+3000, U+00A0) separates terms for a user but is a
    bareword character for FTS5.
    """
    out = []
    for ch in text:
        cp = ord(ch)
        if ch in _FTS5_SPACE:
            out.append(ch)
        elif cp < 0x20 or 0x7F <= cp <= 0x9F or 0xD800 <= cp <= 0xDFFF or ch.isspace():
            out.append(" ")
        else:
            out.append(ch)
    return "".join(out)


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _split_words(cleaned: str) -> list[_Item]:
    """Split a space-separated bareword string into term/op items and spaces."""
    items: list[_Item] = []
    for part in re.split(r"( +)", cleaned):
        if not part:
            continue
        if part.startswith(" "):
            items.append(_Item("ws", part))
        elif part in OPERATORS:
            items.append(_Item("op", part))
        else:
            items.append(_Item("term", part))
    return items


def _clean_piece(piece: str, query_has_cjk: bool) -> list[_Item]:
    """Apply the per-token rules of spec §6.2 (generation B) to one piece."""
    if not piece:
        return []
    quote_whole = _IDENTIFIER.search(piece) is not None or (
        query_has_cjk and "%" in piece and _WORD.search(piece) is not None
    )
    if quote_whole:
        trimmed = piece.strip(_TRIM_PUNCT)
        if trimmed:
            return [_Item("term", _quote(trimmed))]
    return _split_words(_NOT_BAREWORD.sub(" ", piece))


def _clean_token(token: str, phrases: Sequence[str], query_has_cjk: bool) -> list[_Item]:
    """One whitespace-delimited token → items (terms, operators, inner spaces)."""
    if token in OPERATORS:
        return [_Item("op", token)]
    stem = token.rstrip("*")
    star = len(stem) != len(token)
    token = stem
    items: list[_Item] = []
    for piece in _PLACEHOLDER.split(token):
        ph = _PLACEHOLDER_FULL.fullmatch(piece)
        if ph is None:
            items.extend(_clean_piece(piece, query_has_cjk))
            continue
        body = phrases[int(ph.group(1))]
        prefix = False
        stripped = body.rstrip(_FTS5_SPACE)
        if stripped.endswith("*"):
            # `"秃发*"`: a star closing a phrase is a prefix operator on every
            # route, never a literal asterisk that no route could agree on.
            body, prefix = stripped.rstrip("*"), True
        if body.strip(_FTS5_SPACE):
            items.append(_Item("term", _quote(body), prefix))
    if star:
        for item in reversed(items):
            if item.kind == "ws":
                continue
            if item.kind == "op":  # `OR*` is the word "or" as a prefix
                item.kind, item.text = "term", _quote(item.text)
            item.prefix = True
            break
    return items


def _collapse_operators(items: list[_Item]) -> list[_Item]:
    """Drop dangling operators and collapse runs of adjacent operators.

    A run keeps its first operator, except that a run of only ``AND``/``NOT``
    containing a ``NOT`` becomes ``NOT`` (``a AND NOT b`` means a NOT b;
    ``NOT NOT x`` stays one ``NOT``).  Leading and trailing operators go.
    After a negated term that is followed by another term an explicit ``AND``
    is inserted so FTS5 negates only that one term.
    """
    out: list[_Item] = []
    last: _Item | None = None  # last kept non-space item
    negating = False  # the last kept term was negated by NOT
    for item in items:
        if item.kind == "ws":
            out.append(item)
            continue
        if item.kind == "op":
            if last is None:
                continue  # leading operator
            if last.kind == "op":
                pair = {last.text, item.text}
                if pair <= {"AND", "NOT"} and "NOT" in pair:
                    last.text = "NOT"
                continue
            out.append(item)
            last = item
            continue
        if last is not None and last.kind == "term" and negating:
            if out[-1].kind != "ws":
                out.append(_Item("ws", " "))
            out.append(_Item("op", "AND"))
            out.append(_Item("ws", " "))
        negating = last is not None and last.kind == "op" and last.text == "NOT"
        out.append(item)
        last = item
    while out and out[-1].kind != "term":
        out.pop()
    return out


def sanitize_fts5_query(query: str) -> str:
    """Turn arbitrary user or model text into an FTS5 query that never fails to parse.

    Rules (spec §6.2 generation B, hardened):

    * input cut at ``MAX_FTS5_QUERY_CHARS``; control characters, lone
      surrogates and non-ASCII spaces become spaces;
    * balanced ``"…"`` phrases are kept verbatim as phrases (empty ones are
      dropped; a ``*`` closing a phrase moves outside as a prefix); a leftover
      unbalanced ``"`` becomes a space;
    * per whitespace token: ``AND``/``OR``/``NOT`` (upper case) are operators;
      a trailing run of ``*`` becomes one prefix ``*`` placed outside any
      quotes, kept only if the token still has content; a token containing a
      dotted/hyphenated/underscored word (``\\w+([._-]\\w+)+``), or a ``%``
      in a query containing CJK, is quoted whole, interior separators
      included, after trimming punctuation (other than ``%``) from its ends:
      ``"scripts/deploy.sh"``, ``"user@example.com"``, ``"61.2%"``,
      ``"my-app.config"*``; otherwise every ASCII character that is not
      alphanumeric or ``_`` becomes a space (so ``:`` never reaches FTS5 as a
      column filter, and ``---`` disappears);
    * operator runs collapse to one, dangling operators are dropped, and an
      ``AND`` follows a negated term that has a term after it;
    * whitespace between kept tokens is preserved; the result is stripped and
      may be empty (meaning: no results).

    The result parses in MATCH on unicode61, trigram and cjk_unicode61 tables,
    and for every query a route can represent (:func:`route_can_represent`)
    FTS5 gives it the boolean meaning :func:`parse_query` does.
    """
    text = _clean_control(query[:MAX_FTS5_QUERY_CHARS])
    phrases: list[str] = []

    def protect(m: re.Match[str]) -> str:
        phrases.append(m.group(1))
        return f"\x00{len(phrases) - 1}\x00"

    protected = _BALANCED_QUOTE.sub(protect, text).replace('"', " ")
    query_has_cjk = has_cjk(text)

    items: list[_Item] = []
    for part in _WS_SPLIT.split(protected):
        if not part:
            continue
        if part[0] in _FTS5_SPACE:
            items.append(_Item("ws", part))
        else:
            items.extend(_clean_token(part, phrases, query_has_cjk))

    pieces: list[str] = []
    prev_kind = "ws"
    for item in _collapse_operators(items):
        if item.kind != "ws" and prev_kind != "ws":
            pieces.append(" ")  # pieces of one token (`foo"bar"`) stay apart
        pieces.append(item.text + ("*" if item.prefix else ""))
        prev_kind = item.kind
    return "".join(pieces).strip(_FTS5_SPACE)


# ---------------------------------------------------------------------------
# Parsed representation
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Term:
    """One search term.

    ``text`` is the literal text to find: the inside of a quoted phrase (with
    ``""`` undoubled) or a bareword.  ``phrase`` is True when it was quoted
    (by the user, or by the sanitizer for an identifier such as
    ``my-app.config``).  ``prefix`` is a trailing ``*``; ``negated`` a
    preceding ``NOT``.
    """

    text: str
    phrase: bool = False
    prefix: bool = False
    negated: bool = False


@dataclass(frozen=True)
class Group:
    """An AND of terms; every group holds at least one positive term."""

    terms: tuple[Term, ...]

    @property
    def positive(self) -> tuple[Term, ...]:
        return tuple(t for t in self.terms if not t.negated)

    @property
    def negative(self) -> tuple[Term, ...]:
        return tuple(t for t in self.terms if t.negated)


@dataclass(frozen=True)
class Query:
    """An OR of groups.  An empty query (no groups) matches nothing."""

    groups: tuple[Group, ...]

    @property
    def is_empty(self) -> bool:
        return not self.groups

    @property
    def terms(self) -> tuple[Term, ...]:
        return tuple(t for g in self.groups for t in g.terms)


def _lex(text: str) -> Iterable[tuple[str, str, bool]]:
    """Yield (kind, text, prefix) with kind in {"op", "word", "phrase"}."""
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch in _FTS5_SPACE:
            i += 1
            continue
        if ch == '"':
            j = i + 1
            buf: list[str] = []
            while j < n:
                if text[j] == '"':
                    if j + 1 < n and text[j + 1] == '"':
                        buf.append('"')
                        j += 2
                        continue
                    j += 1
                    break
                buf.append(text[j])
                j += 1
            prefix = j < n and text[j] == "*"
            while j < n and text[j] == "*":
                j += 1
            i = j
            yield "phrase", "".join(buf), prefix
            continue
        j = i
        while j < n and text[j] not in _FTS5_SPACE and text[j] != '"':
            j += 1
        word = text[i:j]
        i = j
        if word in OPERATORS:
            yield "op", word, False
            continue
        stem = word.rstrip("*")
        if stem:
            yield "word", stem, stem != word


def parse_query(text: str) -> Query:
    """Parse a sanitized query into groups of terms.

    Grammar: terms are ``"quoted phrases"`` (``""`` escapes a quote) or
    barewords, each optionally followed by ``*``; ``OR`` starts a new group;
    ``AND`` (explicit or implicit) joins terms in a group; ``NOT`` negates the
    next term only.  Operators without an operand are ignored, empty phrases
    and bare stars are skipped, a group without a positive term is dropped,
    and a term repeated in a group or a group repeated in the query is kept
    once.  Never raises; meant for :func:`sanitize_fts5_query` output
    (other input is read with the same rules, parentheses are not special).
    """
    groups: dict[Group, None] = {}  # ordered set
    current: list[Term] = []
    negate = False

    def close() -> None:
        # Repeated terms and repeated groups change nothing: keep the first.
        terms = tuple(dict.fromkeys(current))
        if any(not t.negated for t in terms):
            groups.setdefault(Group(terms), None)
        current.clear()

    for kind, value, prefix in _lex(text):
        if kind == "op":
            if value == "OR":
                close()
                negate = False
            elif value == "NOT":
                negate = True
            continue
        if not value.strip(_FTS5_SPACE):
            negate = False
            continue
        current.append(Term(value, phrase=kind == "phrase", prefix=prefix, negated=negate))
        negate = False
    close()
    return Query(tuple(groups))


# ---------------------------------------------------------------------------
# CJK analysis and routing
# ---------------------------------------------------------------------------


def cjk_terms(q: Query) -> list[Term]:
    """Terms (positive or negated) that contain at least one CJK character."""
    return [t for t in q.terms if has_cjk(t.text)]


def min_cjk_run(q: Query) -> int | None:
    """Shortest CJK run over all terms (per term, never the total), None if no CJK.

    ``广西 OR 桂林 OR 漓江`` → 2 (three 2-character terms, hermes-agent#20494).
    """
    runs = [r for t in q.terms for r in cjk_run_lengths(t.text)]
    return min(runs) if runs else None


def _check_route(route: str) -> None:
    if route not in ROUTES:
        raise ValueError(f"unknown route {route!r}; expected one of {', '.join(ROUTES)}")


def _term_representable(term: Term, route: str, unigrams: bool) -> bool:
    if route == "trigram":
        return len(term.text) >= 3  # shorter substrings produce no trigram
    segs = _segments(term.text)
    if not segs:
        return False  # nothing a token index can see (`😀`, `"---"`)
    if route == "fts5":
        return not any(is_cjk_seg for is_cjk_seg, _ in segs)
    # fts_cjk.  A lone character is a unigram.  Without `unigrams 1` it only
    # matches isolated characters; with it, document unigrams are colocated
    # with bigrams, which is exact for a one-token term but not next to other
    # tokens in a phrase (`A x` would match "ABx").
    lone = any(is_cjk_seg and len(seg) == 1 for is_cjk_seg, seg in segs)
    return not lone or (unigrams and len(segs) == 1)


def route_can_represent(q: Query, route: str, *, unigrams: bool = True) -> bool:
    """Whether ``route`` answers ``q`` exactly (by the route's own promise).

    * ``fts5``: no term contains CJK (a CJK run is one unicode61 token, so
      a CJK term could only match whole runs), and every term has a letter
      or number (otherwise the term would vanish and a NOT would be ignored).
    * ``fts_cjk``: every term has a letter, number or CJK character; a term
      with a lone CJK character (a 1-character CJK run) is representable only
      with ``unigrams`` (the table's ``unigrams 1``) and only when that
      character is the term's only token.
    * ``trigram``: every term is at least 3 characters long (shorter
      substrings produce no trigram and would match nothing).  Note the
      trigram table indexes ``content`` and ``tool_name`` only.

    Positive and negated terms are both checked.  An empty query is
    representable everywhere (it matches nothing).
    """
    _check_route(route)
    return all(_term_representable(t, route, unigrams) for t in q.terms)


def choose_route(
    q: Query,
    *,
    fts5_index: bool = True,
    cjk_index: bool = True,
    trigram_index: bool = True,
    unigrams: bool = True,
) -> str:
    """The first index that answers ``q`` exactly, else ``"like_scan"``.

    Order: ``fts5`` (best ranking, only without CJK) → ``fts_cjk`` →
    ``trigram`` → ``like_scan``; an index is skipped when it is unavailable
    (the ``*_index`` flags) or cannot represent ``q``
    (:func:`route_can_represent`).  ``"empty"`` for an empty query.  The
    decision is per term, never from the query's total CJK count
    (hermes-agent#20494).  Pure: runtime fall-through (a MATCH error, the
    zero-result Latin retry on ``fts_cjk`` for words glued to CJK) stays
    with the caller.
    """
    if q.is_empty:
        return "empty"
    available = {"fts5": fts5_index, "fts_cjk": cjk_index, "trigram": trigram_index}
    for route in ROUTES:
        if available[route] and route_can_represent(q, route, unigrams=unigrams):
            return route
    return "like_scan"


# ---------------------------------------------------------------------------
# Per-route query text
# ---------------------------------------------------------------------------


def _match_term(term: Term, route: str) -> str:
    text = _quote(term.text)
    if term.prefix and route != "trigram":
        text += "*"
    return text


def match_expression(q: Query, route: str) -> str:
    """The MATCH string for ``route`` (``fts5``, ``fts_cjk`` or ``trigram``).

    Every term is quoted (``"`` doubled), so it reaches the tokenizer as one
    FTS5 string: a user phrase stays one phrase on every route (on
    ``fts_cjk`` its CJK runs become consecutive bigrams).  A prefix term keeps
    its ``*`` on ``fts5`` and ``fts_cjk`` and becomes the plain substring on
    ``trigram``.  Shape: ``(p1 AND p2 NOT n1) OR p3`` with parentheses only
    around multi-term groups when there are several groups.  Returns ``""``
    for an empty query: the caller must not run MATCH then.
    """
    _check_route(route)
    rendered: list[str] = []
    for group in q.groups:
        expr = " AND ".join(_match_term(t, route) for t in group.positive)
        for term in group.negative:
            expr += " NOT " + _match_term(term, route)
        if len(q.groups) > 1 and len(group.terms) > 1:
            expr = f"({expr})"
        rendered.append(expr)
    return " OR ".join(rendered)


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _balanced(parts: list[str], op: str) -> str:
    """Join ``parts`` with ``op`` as a balanced tree.

    SQLite parses ``a AND b AND c …`` into a left-deep tree and rejects
    depth > 1000, which a 2048-character query of one-letter words exceeds;
    a balanced tree is log2(n) deep.
    """
    if len(parts) == 1:
        return parts[0]
    mid = len(parts) // 2
    return f"({_balanced(parts[:mid], op)} {op} {_balanced(parts[mid:], op)})"


MAX_LIKE_ALTERNATIVES = 32  # a full LIKE scan tests every row once per OR alternative


class QueryTooBroad(ValueError):
    """A query a full LIKE scan would answer only at the cost of too many passes over the text."""


def check_like_alternatives(q: Query) -> None:
    """Refuse (``QueryTooBroad``) a query with more OR alternatives than a LIKE scan takes.

    A row that matches nothing is tested against every alternative (ANDed
    terms stop at the first miss), so 80 OR'd emoji cost 80 substring tests
    per row of the store.  Such a query is refused with how to narrow it,
    never cut to fewer alternatives (which would silently answer a different
    query).
    """
    count = sum(1 for g in q.groups if g.positive)
    if count > MAX_LIKE_ALTERNATIVES:
        raise QueryTooBroad(
            f"the query has {count} OR alternatives, and a search that has to scan the text "
            f"(no index serves it) takes at most {MAX_LIKE_ALTERNATIVES}; search for fewer "
            "alternatives at a time (split the OR list), or use words an index serves"
        )


def like_where(q: Query, columns: Sequence[str] = LIKE_COLUMNS) -> tuple[str, list[str]]:
    """A WHERE fragment with the query's boolean meaning over ``columns`` via LIKE.

    Each term is the literal substring ``%<term>%`` (``\\``, ``%`` and ``_``
    escaped, ``ESCAPE '\\'``); a prefix ``*`` adds nothing (a substring already
    extends); a phrase is its literal text, spaces included.  A term matches
    when any column contains it; ``COALESCE(col, '')`` keeps NULL columns
    from turning a ``NOT`` into NULL.  Groups are ANDs, joined with OR.

    Case: SQLite's LIKE folds ASCII letters only (``É`` ≠ ``é``), unless the
    connection changed ``PRAGMA case_sensitive_like``.  Text is searched raw:
    no width folding (``ＡＢＣ`` does not find ``abc``), so the result is the
    exact-substring ground truth; ``fts_cjk`` may find more because it folds
    widths.  ``columns`` are SQL expressions supplied by the caller, never
    user input.  No positive term → ``("0", [])`` (no rows).
    """
    if not columns:
        raise ValueError("like_where needs at least one column")
    params: list[str] = []
    groups_sql: list[str] = []

    def clause(term: Term) -> str:
        pattern = f"%{_like_escape(term.text)}%"
        ors = []
        for col in columns:
            ors.append(f"COALESCE({col}, '') LIKE ? ESCAPE '\\'")
            params.append(pattern)
        body = "(" + " OR ".join(ors) + ")"
        return f"NOT {body}" if term.negated else body

    for group in q.groups:
        if not group.positive:
            continue
        parts = [clause(t) for t in group.positive] + [clause(t) for t in group.negative]
        groups_sql.append(_balanced(parts, "AND"))
    if not groups_sql:
        return "0", []
    return "(" + _balanced(groups_sql, "OR") + ")", params


def snippet_terms(q: Query) -> list[str]:
    """Positive term texts in query order, without duplicates (for LIKE snippets)."""
    seen: dict[str, None] = {}
    for term in q.terms:
        if not term.negated:
            seen.setdefault(term.text, None)
    return list(seen)
