"""The search query language: parse user text once, then say what each route runs.

Pipeline used by the search layer (this module knows nothing of SQL)::

    q = parse_query(raw)          # expression tree + notes, or a refusal (q.error)
    choose_route(q, ...)          # the first index that answers q exactly
    best.best_match(q)            # words side by side: any of them, most first
    match_expression(q, route)    # the MATCH text for an FTS5 index
    glue_look(q, token_spans)     # rows where unicode61 may miss a Latin term
    snippet_terms(q)              # positive terms, for LIKE snippets

The same tree as substring checks for a LIKE scan is ``search/like.py``'s
``like_plan``.

The language (the same meaning on every route):

* words and ``"quoted phrases"`` (``""`` is a quote inside a phrase); words
  next to each other with no operator are a best match (``best.best_match``):
  rows with every one come first, then rows with most of them, the rarer
  words counting more; common and question words are left out while other
  words remain, and an English word is also searched as its stem's prefix
  (``query/wordforms.py``); ``query/best.py`` picks those words.  A
  top-level OR of terms alone is ranked the same way.  An explicit ``AND``
  (or NOT, a parenthesis or NEAR) keeps the strict meaning: every term, as
  written;
* ``OR``, ``AND`` and binary ``NOT`` (upper case; lower-case ``and``/``or``/
  ``not`` are words).  Precedence: ``NOT`` and ``AND`` (explicit or implicit)
  bind at the same level, left to right, and ``OR`` binds loosest.  ``a NOT b``
  is "a and not b", so ``a NOT b c`` is ``(a NOT b) AND c`` and
  ``a OR b NOT c`` is ``a OR (b NOT c)``.  ``AND NOT`` is the same as ``NOT``;
* ``( … )`` groups; ``NOT (a OR b)`` excludes both.  A query, each side of
  an ``OR`` and each group needs a word that is not negated (``NOT x`` alone
  is refused, never answered with its opposite); ``NOT x deploy`` is
  ``deploy NOT x``;
* ``prefix*`` and ``"phrase"*``: the last word of the term is a prefix;
* ``NEAR(a "b c" d, N)``: every term occurs and the terms lie within ``N``
  tokens of each other (``N`` defaults to 10); ``NEAR(a, b, N)``, a comma
  between every two terms, is read so too, with a note.  A token is a word; a run of
  CJK characters counts as its bigrams (``桂林山水`` is three tokens);
* operators glued to CJK text are operators: ``桂林OR漓江`` is ``桂林 OR 漓江``.

What is not part of the language is read as text, and every change is
reported in ``Query.notes``: punctuation around a word is dropped, a leading
``-`` is literal (``-rf`` searches ``rf``), a colon is text (``content:deploy``
and ``path:config.yaml`` are single terms, not column filters), unmatched
quotes and parentheses are ignored or closed, dangling operators are dropped,
and input over ``MAX_FTS5_QUERY_CHARS`` is cut at a term boundary.  A query
that cannot mean what it says is refused with ``Query.error`` saying how to
write it: nothing to find (``NOT x``, ``a OR NOT b``, a query of only ``-x``
words), ``NOT NOT``, a malformed ``NEAR``, nesting deeper than
``MAX_NESTING``, or a single term longer than the limit.

What each route promises for one term (``T`` = the term text):

* ``fts5`` (unicode61): the term's tokens appear as consecutive tokens (case
  and diacritics folded, punctuation ignored).  Cannot represent CJK (a CJK
  run is one unicode61 token), a term without letters or numbers, NEAR
  (it would count a CJK run as one token), or a negated term (``staging服务器``
  is one token, so ``deploy NOT staging`` would keep it).
* ``fts_cjk`` (``cjk_unicode61``): like ``fts5`` for non-CJK text (plus width
  folding); a CJK run is an exact substring (bigrams; a lone character uses
  the colocated unigrams of ``unigrams 1``).  NEAR is native here.
* ``trigram``: ``T`` is a substring (Unicode case-insensitive); terms of
  >= 3 characters only, no NEAR.
* LIKE: a CJK ``T`` is a substring; a ``T`` with a Latin word matches it as
  whole tokens, as ``fts_cjk`` does (``like.words_match``), after a substring
  prefilter.  Case-insensitive for ASCII letters only, diacritics as written.
  Where the extension is loaded both sides are folded (:func:`fold_text`,
  ``cjk_fold()``): widths, kana and Han variants, as on ``fts_cjk``; without it,
  raw text.  NEAR is checked by ``like.near_matches``.

So Latin words are words on every route but trigram (``deploy`` finds
"deployment" there): the main route difference.  LIKE folds only ASCII case
and trigram no diacritics; NEAR counts tokens on every route.  The trigram index
compares raw text, so a query that folding changes (:func:`folds_apply`), or
whose characters stored text may spell in a folded form (:func:`folds_into`:
``ＷＩＤＴＨ`` for ``width``), is not answered by trigram alone where the
extension is loaded (the search layer sends it to LIKE, which folds).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from .._cjk_ranges import fold_kana, folded_from_other, has_kana
from .._index_text import (
    GLUE_MARKS,
    fold_width,
    has_cjk,
    is_token_char,
    segments,
)
from .syntax import QueryError, parse_query, reads_as_sentence
from .tree import AnyOf, Near, Node, Query, Term, contains_near, render

# What the other modules of the package use; the tree types (Term, Near, AllOf,
# AnyOf) come with Query.expr and live in hermes_fts.query.tree.
__all__ = [
    "Query",
    "QueryError",
    "choose_route",
    "fold_text",
    "kana_applies",
    "folds_apply",
    "folds_into",
    "glue_look",
    "has_cjk",
    "evidence_units",
    "match_expression",
    "parse_query",
    "reads_as_sentence",
    "route_can_represent",
    "sanitize_fts5_query",
    "snippet_terms",
]

ROUTES = ("fts5", "fts_cjk", "trigram")


# ---------------------------------------------------------------------------
# Routing
# ---------------------------------------------------------------------------


def _check_route(route: str) -> None:
    if route not in ROUTES:
        raise ValueError(f"unknown route {route!r}; expected one of {', '.join(ROUTES)}")


def _term_representable(term: Term, route: str, unigrams: bool) -> bool:
    if route == "trigram":
        return len(term.text) >= 3  # shorter substrings produce no trigram
    segs = segments(term.text)
    if not segs:
        return False  # nothing a token index can see (`😀`, `"---"`)
    if route == "fts5":
        # A negated word glued to CJK (`staging服务器`) hides inside one unicode61
        # token, so NOT would keep that row: only the CJK index sees it.  A symbol
        # newer than unicode61's tables (`deploy🫠`) is a letter there, glued to the
        # word, where every other route reads it as a space.
        return (
            not term.negated
            and not any(is_cjk_seg for is_cjk_seg, _ in segs)
            and not any(_separates(ch) for ch in term.text if not ch.isascii())
        )
    # fts_cjk.  A lone character is a unigram.  Without `unigrams 1` it only
    # matches isolated characters; with it, document unigrams are colocated
    # with bigrams, which is exact for a one-token term but not next to other
    # tokens in a phrase (`A x` would match "ABx").
    lone = any(is_cjk_seg and len(seg) == 1 for is_cjk_seg, seg in segs)
    return not lone or (unigrams and len(segs) == 1)


def _separates(ch: str) -> bool:
    """A character the query side reads as a space between words (not a letter,
    number or space): unicode61 may read it as a letter (`🫠`, Unicode 14)."""
    return not ch.isspace() and not is_token_char(ch)


def _near_representable(node: Node, unigrams: bool) -> bool:
    """fts_cjk positions are the NEAR definition; a colocated unigram is not exact there."""
    if isinstance(node, Near):
        return all(
            _term_representable(t, "fts_cjk", unigrams)
            and not any(c and len(s) == 1 for c, s in segments(t.text))
            for t in node.terms
        )
    if isinstance(node, Term):
        return True
    children = node.options if isinstance(node, AnyOf) else node.include + node.exclude
    return all(_near_representable(c, unigrams) for c in children)


@functools.lru_cache(maxsize=256)  # asked again by every Latin search (the glued-Latin look)
def route_can_represent(q: Query, route: str, *, unigrams: bool = True) -> bool:
    """Whether ``route`` answers ``q`` exactly (by the route's own promise).

    * ``fts5``: no term contains CJK, every term has a letter or number, no
      NEAR, no negated term (a word glued to CJK is hidden from unicode61, so
      ``NOT`` would keep its row);
    * ``fts_cjk``: every term has a letter, number or CJK character; a lone
      CJK character only with ``unigrams`` (the table's ``unigrams 1``) and
      as its term's only token, and never inside NEAR;
    * ``trigram``: every term has >= 3 characters, no NEAR.  The trigram
      table indexes ``content`` and ``tool_name`` only.

    Positive and negated terms are both checked.  An empty query is
    representable everywhere (it matches nothing).
    """
    _check_route(route)
    if q.expr is not None and contains_near(q.expr):
        if route != "fts_cjk" or not _near_representable(q.expr, unigrams):
            return False
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

    Order: ``fts5`` → ``fts_cjk`` → ``trigram`` → ``like_scan``, skipping an
    index that is unavailable or cannot represent ``q``; ``"empty"`` for an
    empty query.  Per term, never from the query's total CJK count
    (hermes-agent#20494).  Runtime fall-through stays with the caller.
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


def match_expression(q: Query, route: str) -> str:
    """The MATCH text for ``route`` (``fts5``, ``fts_cjk`` or ``trigram``).

    Every term is quoted (``"`` doubled), every operator explicit, every
    compound operand parenthesized.  A prefix keeps its ``*`` except on
    ``trigram`` (a substring already extends).  ``""`` for an empty query:
    the caller must not run MATCH then.
    """
    _check_route(route)
    return "" if q.expr is None else render(q.expr, prefix_star=route != "trigram")


def glue_look(q: Query, token_spans: Callable[[str], Sequence[tuple[int, int]]]) -> str | None:
    """MATCH text, on a CJK index built with ``glue 1``, for the rows where a Latin term
    of ``q`` may occur as words a unicode61 index of the raw text does not see:
    its first word glued to CJK text (or a late symbol) before it, its last
    word glued to one after it, a word in full-width forms, or a late symbol
    between two of its words.  None: ``q`` has a negated term,
    or a term in full-width forms.

    Those are the only rows the CJK index matches and the word index does
    not: a term none of whose words is marked occurs in the raw text as the
    same consecutive words.  Two kinds of query turn that round, and get no
    look: a negated term (a row the word index drops could pass) and a term
    that width folding changes (only the CJK index folds the query).

    Each term asks for the tokenizer's marks (``GLUE_MARKS``) alone, rare
    tokens, without the rest of the phrase: a one-word term for its word
    mark; a phrase for its two first words, its two last, each word's width
    mark and each pair's join mark.  A row with a mark may still hold no glued occurrence; the
    search then finds that out.  ``token_spans(text)``: the UTF-8 byte spans
    of the tokenizer's query words of ``text``.  A mark is written with the
    words as the query has them, so the tokenizer folds them as it folds the
    words.
    """
    if any(t.negated or fold_width(t.text) != t.text for t in q.terms):
        return None
    word, left, right, width, join = (m.encode("utf-8") for m in GLUE_MARKS)
    options = []
    for term in q.terms:
        try:
            raw = term.text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: no exact MATCH text
            return None
        words = [raw[a:b] for a, b in token_spans(term.text)]
        if not words:
            continue
        # (mark, whether it ends in the term's last word, which may be a prefix)
        if len(words) == 1:
            marks = [(word + words[0], True)]
        else:
            marks = [(width + w, i == len(words) - 1) for i, w in enumerate(words)]
            marks += [
                (left + words[0] + left + words[1], len(words) == 2),
                (right + words[-2] + right + words[-1], True),
            ]
            marks += [
                (join + a + join + b, i == len(words) - 2)
                for i, (a, b) in enumerate(zip(words, words[1:]))
            ]
        options += [
            render(Term(text.decode("utf-8"), prefix=term.prefix and ends_last))
            for text, ends_last in marks
        ]
    return " OR ".join(dict.fromkeys(options)) or None


def evidence_units(q: Query, route: str) -> tuple[tuple[str, str], ...]:
    """What a search scores a row by, as ``(label, MATCH text)`` pairs: each term of a
    best match (``best.best_match``), or the whole query as one unit."""
    _check_route(route)
    if q.expr is None:
        return ()
    if q.loose and isinstance(q.expr, AnyOf):
        return tuple(
            (t.text, render(t, prefix_star=route != "trigram"))
            for t in q.expr.options
            if isinstance(t, Term)
        )
    return (("", match_expression(q, route)),)


def sanitize_fts5_query(query: str) -> str:
    """Turn arbitrary text into an FTS5 query with the meaning of :func:`parse_query`.

    The result is the query in canonical form (every term quoted, every
    operator explicit, groups parenthesized), parses in MATCH on unicode61,
    trigram and cjk_unicode61 tables, and parses back to the same query.
    ``""`` means no results: nothing searchable, or a refused query (its
    reason is ``parse_query(query).error``).
    """
    parsed = parse_query(query)
    return "" if parsed.error else match_expression(parsed, "fts5")


def fold_text(text: str) -> str:
    """Width, kana then Han variant folding: Python's twin of the extension's ``cjk_fold()``
    (which also reads a NUL as a space, as the tokenizer reads it: a separator)."""
    from hermes_fts._cjk_variants import fold as fold_variants  # a large table, rarely needed

    return fold_variants(fold_kana(fold_width(text))).replace("\0", " ")


def folds_apply(q: Query) -> bool:
    """Whether folding could change what a term matches (a variant, kana or a width form).

    Checked on both sides of a fold: 東 and 东 alike, ら and ラ alike, since
    either may be the text's spelling.
    """
    from hermes_fts._cjk_variants import has_variants  # a large table, rarely needed

    return any(
        has_variants(t.text) or has_kana(t.text) or fold_width(t.text) != t.text for t in q.terms
    )


def folds_into(q: Query) -> bool:
    """Whether a term's characters are the fold of another spelling (``width`` of
    ``ＷＩＤＴＨ``, ``file`` of ``ﬁle``, ``αλφα`` of ``άλφα``): raw text, as the
    trigram index holds it, misses such a row although the term itself never folds."""
    return any(folded_from_other(ch) for t in q.terms for ch in t.text)


def kana_applies(q: Query) -> bool:
    """Whether a term holds kana, which a CJK index built without ``kana 1`` does not fold."""
    return any(has_kana(fold_width(t.text)) for t in q.terms)  # ﾗ is ラ


def snippet_terms(q: Query) -> list[Term]:
    """Positive terms in query order, without duplicates (for LIKE snippets): a
    prefix keeps its ``*``, since ``decide`` marks no "decided" where ``decide*`` does."""
    return list(dict.fromkeys(Term(t.text, t.prefix) for t in q.terms if not t.negated))
