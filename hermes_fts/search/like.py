"""The LIKE route: a query as substring tests (``like_plan``), and their SQL.

The fragment is written for ``LIKE_SOURCE m``: ``messages`` with each indexed
column's text as the indexes hold it (``content.indexed_text_sql``: JSON
escapes decoded), so a scan finds what an index finds.  ``NEAR`` is checked
in SQL by ``near_matches``, registered on the connection as
``hermes_fts_near``, and a term with a Latin word by ``words_match``
(``hermes_fts_words``) after its LIKE prefilter: the indexes' word boundaries.

With ``fold`` (the extension's ``cjk_fold()`` is on the connection) every
comparison is between folded texts: the column through ``cjk_fold()``, the
pattern through ``plan.fold_text``, the same width and Han variant folds the
``variants 1`` CJK index applies, so 东京 finds 東京 here too.  With ``letters``
both sides also get unicode61's case and diacritic fold (``fold_case``), in
Python: for the few rows an index route answers by LIKE (rows pending for the
CJK index, rows a backfill has not reached), which must match as the index
does (`cafe` finds "Café"), not for a scan of the whole store.

A term with a lone CJK character beside other tokens (``Anna의``, ``2024年``,
``Pythonで``, ``第3版``) is not exact on ``fts_cjk``: the character is a
colocated unigram there, so the phrase ``"의 anna"`` also matches "의사Anna".
It is a superset, though: a row holding ``의Anna`` holds the phrase, since a
run's first character is colocated with its first bigram and its last with
its last bigram (``unigrams 1``, docs/DESIGN.md §3.5).  So the LIKE test,
which is exact, needs to read only the rows such a superset expression
matches (``candidates_expression``, route ``fts_cjk_checked``), not the
whole store.
"""

from __future__ import annotations

import functools
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Union

from .._index_text import (
    BETWEEN_WORDS,
    SEPARATOR,
    fold_case,
    positions,
    segments,
    word_goes_on,
)
from ..content import INDEXED_COLUMNS, indexed_text_sql
from ..query.plan import fold_text, folds_apply
from ..query.syntax import QueryError, parse_query
from ..query.tree import AllOf, AnyOf, Near, Node, Query, Term, render

__all__ = [
    "CHECKED_ROUTE",
    "LIKE_COLUMNS",
    "LIKE_SOURCE",
    "MAX_LIKE_ALTERNATIVES",
    "LikeAll",
    "LikeAny",
    "LikeNear",
    "LikeNode",
    "LikeText",
    "LikeWords",
    "QueryTooBroad",
    "candidates_expression",
    "check_like_alternatives",
    "like_plan",
    "like_where",
    "near_matches",
    "proposed",
    "proposes",
    "term_pattern",
    "words_match",
]

# ---------------------------------------------------------------------------
# The plan: a query as substring tests, and the NEAR and whole-word checks
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class LikeText:
    """Some column contains ``text`` (SQLite LIKE: ASCII letters case-insensitive)."""

    text: str


@dataclass(frozen=True)
class LikeNear:
    """``near_matches(spec, column…)`` holds; every ``required`` text is a cheap prefilter."""

    spec: str
    required: tuple[str, ...]


@dataclass(frozen=True)
class LikeWords:
    """``words_match(spec, column…)`` holds: the term ``spec`` with its Latin words as
    whole tokens; every ``required`` text (its parts as written) is a cheap prefilter,
    and ``text`` between spaces (``prefix``: a space before it) a cheap proof."""

    spec: str
    required: tuple[str, ...]
    text: str
    prefix: bool = False


@dataclass(frozen=True)
class LikeAll:
    include: tuple[LikeNode, ...]
    exclude: tuple[LikeNode, ...]


@dataclass(frozen=True)
class LikeAny:
    options: tuple[LikeNode, ...]


LikeNode = Union[LikeText, LikeNear, LikeWords, LikeAll, LikeAny]


def like_plan(q: Query) -> LikeNode | None:
    """The query as substring checks for a LIKE scan; None for an empty query.

    A CJK run is its literal text, a substring, without the punctuation or
    symbol beside it (which separates, as on the indexes); a term with no letter
    or number is its literal text (a prefix ``*`` adds nothing to either).
    A term with a Latin word or with parts apart is a :class:`LikeWords`: its
    words are whole tokens, as the indexes see them (``decide`` is not in
    "decided", ``decide*`` is), CJK next to it ends a word, and any separators
    stand between its parts (``"数据库 迁移"`` finds "数据库、迁移").
    NEAR becomes a :class:`LikeNear`, whose ``required`` texts are the ASCII
    words and CJK runs of its terms.  Texts stay as written; ``like_sql``
    folds both sides where the extension offers ``cjk_fold()``.
    """
    return None if q.expr is None else _like(q.expr)


def _like(node: Node) -> LikeNode:
    if isinstance(node, Term):
        parts = segments(node.text, fold=False)
        # One CJK run is a substring; CJK runs a space or punctuation parts
        # ("数据库 迁移") are a phrase, its parts apart as on the indexes.
        if not parts:
            return LikeText(node.text)
        if len(parts) == 1 and parts[0][0]:
            # Without the punctuation or symbol beside it ("东京。", "🚀东京"),
            # which separates on the indexes: the run alone is what they find.
            return LikeText(parts[0][1])
        required = tuple(dict.fromkeys(seg for _, seg in parts))
        return LikeWords(render(node), required, node.text, node.prefix)
    if isinstance(node, Near):
        # A superset check: SQLite's LIKE folds ASCII case only, so a word with
        # diacritics (which the NEAR check folds) is left to near_matches.
        words = [s for t in node.terms for cjk, s in segments(t.text) if cjk or s.isascii()]
        return LikeNear(render(node), tuple(dict.fromkeys(words)))
    if isinstance(node, AnyOf):
        return LikeAny(tuple(_like(o) for o in node.options))
    return LikeAll(tuple(_like(c) for c in node.include), tuple(_like(c) for c in node.exclude))


MAX_LIKE_ALTERNATIVES = 32  # substring tests a full LIKE scan may make per row that misses


class QueryTooBroad(QueryError):
    """A query a full LIKE scan would answer only at the cost of too many passes over the text."""


def _like_tests(node: LikeNode) -> int:
    """Substring tests a row that matches nothing costs (ANDed checks stop at the first miss)."""
    if isinstance(node, LikeAny):
        return sum(_like_tests(option) for option in node.options)
    if isinstance(node, LikeAll):
        return _like_tests(node.include[0]) if node.include else 1
    return 1


def check_like_alternatives(q: Query) -> None:
    """Refuse (``QueryTooBroad``) a query with more OR alternatives than a LIKE scan takes.

    A row that matches nothing is tested against every alternative, so 80
    OR'd emoji cost 80 substring tests per row of the store.  Such a query is
    refused with how to narrow it, never cut to fewer alternatives (which
    would silently answer a different query).
    """
    plan = like_plan(q)
    count = 0 if plan is None else _like_tests(plan)
    if count > MAX_LIKE_ALTERNATIVES:
        raise QueryTooBroad(
            f"the query has {count} OR alternatives, and a search that has to test each "
            "row's text (no index answers it exactly) takes at most "
            f"{MAX_LIKE_ALTERNATIVES}; search for fewer "
            "alternatives at a time (split the OR list), or use words an index serves"
        )


def _starts(doc: list[frozenset[str]], term: Term) -> list[int]:
    want = [next(iter(p)) for p in positions(term.text, document=False)]
    if not want:
        return []
    hits = []
    for start in range(len(doc) - len(want) + 1):
        ok = all(want[k] in doc[start + k] for k in range(len(want) - 1))
        last = doc[start + len(want) - 1]
        if ok and (want[-1] in last or (term.prefix and any(t.startswith(want[-1]) for t in last))):
            hits.append(start)
    return hits


@functools.lru_cache(maxsize=128)
def _near_of(spec: str) -> Near:
    expr = parse_query(spec).expr
    if isinstance(expr, Term):
        return Near((expr,))
    if not isinstance(expr, Near):
        raise ValueError(f"not a NEAR expression: {spec!r}")
    return expr


def _row_text(value: object) -> str | None:
    """A row's text as the SQL passes it (``CAST(… AS BLOB)``, see ``_row_bytes``)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value if isinstance(value, str) else None


def _row_bytes(columns: tuple[str, ...]) -> str:
    # Python's sqlite3 fails a function whose TEXT argument is not UTF-8 (bytes
    # another tool wrote), and with it the whole scan: the functions take bytes.
    return ", ".join(f"CAST({c} AS BLOB)" for c in columns)


def near_matches(spec: str, *texts: object) -> bool:
    """Whether any of ``texts`` satisfies the ``NEAR(…)`` text ``spec`` (FTS5's rule).

    Positions are cjk_unicode61's (``fts_cjk`` answers the same): every term
    occurs, and for the term that starts last, every other term ends at most
    ``distance`` tokens before that start.  Meant as a SQL function body.
    """
    near = _near_of(spec)
    for text in map(_row_text, texts):
        if not text:
            continue
        doc = positions(text, document=True)
        starts = [(_starts(doc, t), len(positions(t.text, document=False))) for t in near.terms]
        if any(not s for s, _ in starts):
            continue
        for last in {p for s, _ in starts for p in s}:
            if all(any(last - n - near.distance <= p <= last for p in s) for s, n in starts):
                return True
    return False


@functools.lru_cache(maxsize=256)
def _word_pattern(spec: str) -> tuple[re.Pattern[str], bool, bool]:
    """``term_pattern`` of the term ``spec``."""
    term = parse_query(spec).expr
    if not isinstance(term, Term):
        raise ValueError(f"not one term: {spec!r}")
    return term_pattern(term.text, term.prefix)


@functools.lru_cache(maxsize=256)
def term_pattern(text: str, prefix: bool) -> tuple[re.Pattern[str], bool, bool]:
    """The term ``text`` (a prefix: ``prefix``) as a regular expression over
    lower-cased text, and whether its first and its last part are words that
    must end there (not CJK, no prefix).  ``text`` has a letter or a number."""
    parts = segments(text.lower(), fold=False)
    pattern = ""
    for n, (cjk, seg) in enumerate(parts):
        if n:  # separators between two words; none needed where CJK meets Latin
            if cjk != parts[n - 1][0]:
                pattern += SEPARATOR + "*"
            else:
                pattern += SEPARATOR + "+" if cjk else BETWEEN_WORDS
        pattern += re.escape(seg)
    left, right = not parts[0][0], not (parts[-1][0] or prefix)
    # An ASCII letter or digit after a word is in it: the regex says so without a
    # Python step per miss ("decided").  (A lookbehind in front would keep re
    # from searching for the literal first, so words_match looks left itself.)
    return re.compile(pattern + "(?![0-9a-z])" * right), left, right


def words_match(spec: str, *texts: object) -> bool:
    """Whether any of ``texts`` holds the term ``spec`` with its Latin words whole.

    The LIKE scan's check for a term with a Latin word (``LikeWords``): the
    indexes' token boundaries, so ``decide`` does not match "decided" while
    ``decide*`` does, and CJK glued to a word ends it (``staging服务器``).
    Meant as a SQL function body, after the LIKE prefilter.
    """
    pattern, left, right = _word_pattern(spec)
    for text in map(_row_text, texts):
        if not text:
            continue
        low = text.lower()
        found = pattern.search(low)
        while found is not None:
            start, end = found.span()
            if not (
                (left and word_goes_on(low, start - 1, -1)) or (right and word_goes_on(low, end, 1))
            ):
                return True
            found = pattern.search(low, start + 1)
    return False


# ---------------------------------------------------------------------------
# The SQL
# ---------------------------------------------------------------------------


# SQLite merges this subquery into the scan (the id and session conditions
# still use their indexes) and computes a column's text where a check reads
# it; a row without a JSON escape costs a few comparisons and one GLOB.
# As text: SQLite built with SQLITE_LIKE_DOESNT_MATCH_BLOBS (Debian's is) finds no
# pattern in a BLOB another program stored, which the indexes read as text.
LIKE_SOURCE = (
    "(SELECT *, "
    + ", ".join(
        f"CAST({indexed_text_sql(col)} AS TEXT) AS _indexed_{col}" for col in INDEXED_COLUMNS
    )
    + " FROM messages)"
)
LIKE_COLUMNS = tuple(f"m._indexed_{col}" for col in INDEXED_COLUMNS)
NEAR_FUNCTION = "hermes_fts_near"  # near_matches, registered per connection
WORDS_FUNCTION = "hermes_fts_words"  # words_match, registered per connection
LETTERS_FUNCTION = "hermes_fts_fold_case"  # fold_case of a row's text, registered per connection


@functools.lru_cache(maxsize=8)
def _folded_letters(value: object) -> str | None:
    """A column's text through ``fold_case``; each LIKE test of a row asks again for
    the same few columns, which are folded once."""
    text = _row_text(value)
    return None if text is None else fold_case(text)


def like_where(
    conn: sqlite3.Connection, plan: LikeNode | None, fold: bool = False, letters: bool = False
) -> tuple[str, list[Any]]:
    """A WHERE fragment for ``plan`` over LIKE_COLUMNS; ``("0", [])`` for no plan.

    ``fold`` compares folded text (module docstring); it needs ``cjk_fold()``.
    ``letters`` folds case and diacritics too, as the indexes do (module docstring).

    ``COALESCE(col, '')`` keeps NULL columns from turning a NOT into NULL.
    """
    if plan is None:
        return "0", []
    functions = ((NEAR_FUNCTION, -1, near_matches), (WORDS_FUNCTION, -1, words_match))
    for name, args, function in (*functions, (LETTERS_FUNCTION, 1, _folded_letters)):
        try:
            conn.create_function(name, args, _stops_on_ctrl_c(conn, function), deterministic=True)
        except sqlite3.OperationalError:
            pass  # already registered: SQLite refuses to redefine it while a statement runs
    params: list[Any] = []
    columns = tuple(f"cjk_fold({c})" if fold else c for c in LIKE_COLUMNS)
    if letters:
        columns = tuple(f"{LETTERS_FUNCTION}(CAST({c} AS BLOB))" for c in columns)
    return _like_sql(plan, params, columns, _Folds(fold, letters)), params


def _stops_on_ctrl_c(conn: sqlite3.Connection, function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` as a SQL function whose Ctrl-C stops the statement (SQLite's
    interrupt, ``_sqlite.interrupted``): sqlite3 reports an exception raised in
    a function as the function failing, and the interrupt would be lost."""

    def call(*args: Any) -> Any:
        try:
            return function(*args)
        except KeyboardInterrupt:
            conn.interrupt()
            return None

    return call


@dataclass(frozen=True)
class _Folds:
    """What a LIKE test folds in the query's texts, as ``like_where`` folds the columns."""

    variants: bool  # widths, kana and Han variants (``plan.fold_text``)
    letters: bool  # case and diacritics (``fold_case``)

    def __call__(self, text: str) -> str:
        text = fold_text(text) if self.variants else text
        return fold_case(text) if self.letters else text


def _like_sql(node: LikeNode, params: list[Any], columns: tuple[str, ...], fold: _Folds) -> str:
    if isinstance(node, LikeText):
        text = fold(node.text)
        params.extend([f"%{_like_escape(text)}%"] * len(columns))
        return "(" + " OR ".join(f"COALESCE({col}, '') LIKE ? ESCAPE '\\'" for col in columns) + ")"
    if isinstance(node, LikeNear):
        parts = [_like_sql(LikeText(text), params, columns, fold) for text in node.required]
        # near_matches width-folds itself; the variant fold of spec and
        # columns makes it count the tokens the variants index counts.
        near = _near_of(node.spec)
        terms = tuple(replace(t, text=fold_text(t.text)) for t in near.terms)
        params.append(render(Near(terms, near.distance)) if fold.variants else node.spec)
        parts.append(f"{NEAR_FUNCTION}(?, {_row_bytes(columns)})")
        return _balanced(parts, "AND")
    if isinstance(node, LikeWords):
        return _words_sql(node, params, columns, fold)
    if isinstance(node, LikeAny):
        return _balanced([_like_sql(o, params, columns, fold) for o in node.options], "OR")
    parts = [_like_sql(c, params, columns, fold) for c in node.include]
    parts += ["NOT " + _like_sql(c, params, columns, fold) for c in node.exclude]
    return _balanced(parts, "AND")


def _words_sql(node: LikeWords, params: list[Any], columns: tuple[str, ...], fold: _Folds) -> str:
    """A term with a Latin word: its parts as substrings, then either the term between
    spaces (whole words for sure, no Python) or ``words_match`` on the row."""
    parts = [_like_sql(LikeText(text), params, columns, fold) for text in node.required]
    text = _like_escape(fold(node.text))
    params.extend([f"% {text}{'' if node.prefix else ' '}%"] * len(columns))
    spaced = " OR ".join(f"(' ' || COALESCE({c}, '') || ' ') LIKE ? ESCAPE '\\'" for c in columns)
    # The text folded, then quoted: a full-width ＂ in it folds to a '"' that ends a
    # quoted spec, and the check then failed the whole search.
    params.append(render(Term(fold(node.text), node.prefix)))
    parts.append(f"({spaced} OR {WORDS_FUNCTION}(?, {_row_bytes(columns)}))")
    return _balanced(parts, "AND")


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _balanced(parts: list[str], op: str) -> str:
    """``parts`` joined with ``op`` as a balanced tree.

    SQLite parses ``a AND b AND c …`` left-deep and rejects depth > 1000, which
    a 2048-character query of one-letter words exceeds; balanced is log2(n) deep.
    """
    if not parts:  # an empty OR holds for no row, an empty AND for every row
        return "0" if op == "OR" else "1"
    if len(parts) == 1:
        return parts[0]
    mid = len(parts) // 2
    return f"({_balanced(parts[:mid], op)} {op} {_balanced(parts[mid:], op)})"


# ---------------------------------------------------------------------------
# Candidates from the CJK index, for a query it cannot answer exactly
# ---------------------------------------------------------------------------

# The route of a search whose rows the CJK index proposes and the LIKE test decides.
CHECKED_ROUTE = "fts_cjk_checked"


def proposes(q: Query, folds_alike: bool) -> bool:
    """Whether the served CJK index can propose every row of ``q``, a query it cannot
    answer exactly.  ``folds_alike``: it folds Han variants as the LIKE test does;
    one built without ``variants 1`` would miss rows the test finds (东京, 東京)."""
    return candidates_expression(q) is not None and (folds_alike or not folds_apply(q))


def proposed(q: Query, table: str, also: str) -> tuple[str, list[Any]]:
    """The SQL condition (`` AND …`` on ``m.id``) for the rows the CJK index ``table``
    proposes for ``q``, or that satisfy ``also`` when given, with its parameters."""
    ids = f"m.id IN (SELECT rowid FROM {table} WHERE {table} MATCH ?)"
    return f" AND ({ids}{f' OR {also}' if also else ''})", [candidates_expression(q)]


@functools.lru_cache(maxsize=256)
def candidates_expression(q: Query) -> str | None:
    """A MATCH text for the CJK index (``unigrams 1``) that every row ``q`` matches
    matches too, or None when there is none (a term the index holds nothing of)."""
    if q.expr is None:
        return None
    node = _superset(q.expr)
    return None if node is None else render(node)


def _superset(node: Node) -> Node | None:
    if isinstance(node, Term):
        # A symbol alone (🚀) leaves no token: nothing to look up.
        return node if segments(node.text) else None
    if isinstance(node, Near):  # every term occurs; the distance is the LIKE test's
        return _superset(AllOf(tuple(node.terms)))
    if isinstance(node, AnyOf):
        options = tuple(o for o in (_superset(o) for o in node.options) if o is not None)
        return AnyOf(options) if len(options) == len(node.options) else None
    # An AND holds where all its parts do, so any of them is a superset; a NOT
    # (excluding rows) is left to the LIKE test.
    parts = tuple(p for p in (_superset(c) for c in node.include) if p is not None)
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else AllOf(parts)
