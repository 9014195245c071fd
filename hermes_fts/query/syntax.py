"""The query language's syntax: the lexer and the parser.

``parse_query`` turns user or model text into a tree (``query.tree``) of
``Term``, ``Near``, ``AllOf`` and ``AnyOf`` nodes, with a note for every change
it made to what was written, or a refusal saying how to write the query.  The
language itself is documented in :mod:`hermes_fts.query.plan`.
"""

from __future__ import annotations

import functools
import re
import string
import unicodedata
from dataclasses import dataclass

from .._index_text import compose, has_cjk, is_token_char, segments
from .tree import (
    DEFAULT_NEAR_DISTANCE,
    AnyOf,
    Near,
    Node,
    Query,
    Term,
    all_of,
    any_of,
    quote,
    render,
)
from .typed import (
    OPERATORS,
    clean_control,
    closing_quote,
    drop_invisible,
    note_number_signs,
    note_signs,
    read_full_width_operators,
    read_near_apart,
    read_typography,
    split_glued_operators,
)

MAX_FTS5_QUERY_CHARS = 2048
MAX_NESTING = 16  # parentheses; SQLite and FTS5 limit expression depth
MAX_NEAR_DISTANCE = 100_000
OPERATOR_WORD = "{!r} is a word here, not an operator: operators are upper case ({})"
COLUMN_NAMES = frozenset({"content", "tool_name", "tool_calls", "role", "source", "title"})

_SPACE = " \t\n\r"
# A word named in a note: a pasted CJK paragraph is one word of up to 2,048 characters.
NOTE_WORD_CHARS = 40


def by_start(word: str) -> str:
    """``word`` as a note names it: a long one by its start (docs/QUERY.md, Notes)."""
    return word if len(word) <= NOTE_WORD_CHARS else word[: NOTE_WORD_CHARS - 1] + "…"


_LISTED = re.compile("(?<=[A-Za-z\u00c0-\u024f])[,;|](?=[A-Za-z\u00c0-\u024f])")
_NEAR_DISTANCE = re.compile(r",[ \t\n\r]*(\d+)[ \t\n\r]*\)")


class QueryError(ValueError):
    """A query the language refuses; the message says how to write it."""


# ---------------------------------------------------------------------------
# Lexer
# ---------------------------------------------------------------------------


class _Refuse(Exception):
    """Internal: carries a QueryError message out of the parser."""


@dataclass
class _Tok:
    kind: str  # "(", ")", "AND", "OR", "NOT", "term", "near"
    term: Term | None = None
    near: Near | None = None
    dash: bool = False  # a word written with a leading single "-"
    quoted: bool = False  # a "phrase": its words stay together in a best match


def _is_edge_punct(ch: str) -> bool:
    # "%" stays (`61.2%`); it is part of what people search for.  A format character
    # (a bidi mark, a BOM) no one sees: alone it made a word that found nothing.
    category = unicodedata.category(ch)
    return ch != "%" and (ch in string.punctuation or category[0] == "P" or category == "Cf")


def _trim(word: str) -> str:
    start, end = 0, len(word)
    while start < end and _is_edge_punct(word[start]):
        start += 1
    while end > start and _is_edge_punct(word[end - 1]):
        end -= 1
    return word[start:end]


def _phrase(text: str, start: int, notes: list[str]) -> tuple[Term | None, int]:
    """The phrase opened at ``start`` and the index after it (and its ``*``)."""
    end = closing_quote(text, start)
    body = text[start + 1 : end].replace('""', '"').strip(_SPACE)
    i = end + 1
    prefix = False
    while i < len(text) and text[i] == "*":
        prefix, i = True, i + 1
    if body.endswith("*"):  # `"秃发*"`: a closing star is a prefix on every route
        # Every star and space at the end, so `"ab* *"` is `"ab"*` and renders back
        # to text that parses to the same term.
        body, prefix = body.rstrip("*" + _SPACE), True
    if not body:
        notes.append('ignored an empty phrase ""')
        return None, i
    _note_symbols(body, notes)
    _note_cjk_apart(body, notes)
    for word in body.split():  # a phrase keeps no signs either: "C++", "61.2%"
        note_signs(word, _trim(word), notes)
        note_number_signs(word, _trim(word), notes)
    return Term(body, prefix), i


def _note_cjk_apart(body: str, notes: list[str]) -> None:
    """A phrase's CJK words a space parts match them apart only; Hermes' own search
    also finds them glued (``数据库迁移``), as CJK is usually written."""
    words = body.split()
    glued = words[:1]
    for word in words[1:]:
        joins = has_cjk(glued[-1][-1]) and has_cjk(word[0])
        glued[-1:] = [glued[-1] + word] if joins else [glued[-1], word]
    if len(glued) < len(words):
        notes.append(
            f'"{body}" finds its CJK words apart, a space or punctuation between; '
            f'written together they are "{" ".join(glued)}"'
        )


def _note_symbols(text: str, notes: list[str]) -> None:
    """Name the symbols (emoji, arrows, currency) in a term that has words: every route
    reads them as spaces there, while a symbol written on its own is searched."""
    if not segments(text):
        return
    symbols = dict.fromkeys(
        ch
        for ch in text
        if not ch.isascii() and unicodedata.category(ch)[0] == "S" and not is_token_char(ch)
    )
    if symbols:
        notes.append(f"{by_start(''.join(symbols))!r} in {by_start(text)!r}{_SYMBOLS_NOTE}")


_SYMBOLS_NOTE = (
    " is not searched: beside words a symbol separates them (search it on its own to find it)"
)
_SYMBOLS_NAMED = 3  # a paste of emoji-glued words named them all, one note each


def _fold_symbol_notes(notes: list[str]) -> list[str]:
    """One note for the symbols beside many words: the count and a few of them."""
    said = [n for n in notes if n.endswith(_SYMBOLS_NOTE)]
    if len(said) <= _SYMBOLS_NAMED:
        return notes
    some = ", ".join(n.removesuffix(_SYMBOLS_NOTE) for n in said[:_SYMBOLS_NAMED])
    folded = f"symbols in {len(said)} words, such as {some}, are not searched" + (
        _SYMBOLS_NOTE.removeprefix(" is not searched")
    )
    first = notes.index(said[0])
    rest = [n for n in notes if not n.endswith(_SYMBOLS_NOTE)]
    return [*rest[:first], folded, *rest[first:]]


def _word(piece: str, notes: list[str]) -> _Tok | None:
    stem = piece.rstrip("*")
    text = _trim(stem)
    if not text:
        notes.append(f"ignored {piece!r}: nothing to search for in it")
        return None
    dash = len(stem) > 1 and stem[0] == "-" and stem[1] != "-"
    if dash:
        searched = by_start(text) + "*" * (stem != piece)  # `-deploy*` is still a prefix
        notes.append(
            f"{by_start(piece)!r} is searched as {searched!r}: a leading '-' does not "
            f"exclude (write NOT {searched} to exclude it)"
        )
    if stem.upper() in OPERATORS + ("NEAR",) and (stem != stem.upper() or stem != piece):
        notes.append(OPERATOR_WORD.format(piece, stem.upper()))
    column = stem.split(":", 1)[0].lstrip(string.punctuation).lower() if ":" in stem else ""
    if column in COLUMN_NAMES:
        notes.append(
            f"{by_start(piece)!r} is searched as text: column filters such as '{column}:' "
            "are not part of the query language"
        )
    if "*" in stem:  # the prefix star is gone: one before or inside is no wildcard
        shown = " ".join(w for w in text.split("*") if w) + ("*" if stem != piece else "")
        notes.append(
            f"{by_start(piece)!r} is searched as {by_start(shown)!r}: a '*' is a wildcard "
            "only at the end of a word (dep* finds deploy)"
        )
    _note_symbols(text, notes)
    # C++ is a name: searched exactly as c, never left out as common nor in other forms
    named = note_signs(stem, text, notes)
    note_number_signs(stem, text, notes)
    return _Tok("term", Term(text, stem != piece), dash=dash, quoted=named)


def _chunk_end(text: str, i: int, stop: str) -> int:
    while i < len(text) and text[i] not in _SPACE and text[i] not in stop:
        i += 1
    return i


def _near(text: str, start: int, notes: list[str]) -> tuple[_Tok | None, int]:
    """``NEAR(`` at ``start``: its terms and optional ``, N`` up to the closing ``)``."""
    usage = "write NEAR(deploy service, 5): words or phrases, then an optional distance"
    terms: list[Term] = []
    distance = DEFAULT_NEAR_DISTANCE
    number = ""  # the last piece, when it is a bare number: a distance without its comma?
    # NEAR(deploy, rollback), as a function is called: a comma between each two terms
    listed = False  # the term about to be read follows a comma
    gaps: list[bool] = []  # for each term after the first, whether a comma preceded it
    i = start + len("NEAR(")
    while True:
        while i < len(text) and text[i] in _SPACE:
            i += 1
        if i >= len(text):
            raise _Refuse(f"NEAR( is not closed: {usage}")
        ch = text[i]
        if ch == ")":
            i += 1
            break
        if ch == '"' and closing_quote(text, i) >= 0:
            term, i = _phrase(text, i, notes)
            gaps += [listed] if term and terms else []
            terms += [term] if term else []
            number, listed = "", False
            continue
        if ch == ",":
            number = ""
            m = _NEAR_DISTANCE.match(text, i)
            if m is None and _NEAR_DISTANCE.match(text.rstrip(_SPACE) + ")", i):
                raise _Refuse(f"NEAR( is not closed: {usage}")  # `NEAR(a b, 5`
            if m is None and terms and not listed and text[i + 1 :].lstrip(_SPACE)[:1] != ")":
                listed, i = True, i + 1  # a term follows: the comma lists it
                continue
            if m is None:
                raise _Refuse(f"NEAR(...) takes a number after its comma: {usage}")
            distance, i = int(m.group(1)), m.end()
            if distance > MAX_NEAR_DISTANCE:
                notes.append(f"NEAR distance {distance} lowered to {MAX_NEAR_DISTANCE}")
                distance = MAX_NEAR_DISTANCE
            break
        end = _chunk_end(text, i, '"(),')
        piece = text[i:end]
        if not piece or piece in OPERATORS:
            raise _Refuse(f"NEAR(...) cannot hold {piece or ch!r}: {usage}")
        tok = _word(piece, notes)
        gaps += [listed] if tok and tok.term and terms else []
        terms += [tok.term] if tok and tok.term else []
        number, listed = piece if piece.isdigit() else "", False
        i = end
    if any(gaps):
        _read_listed(terms, gaps, distance, notes, usage)
    if number and len(terms) > 2:
        words = " ".join(t.text for t in terms[:-1])
        notes.append(
            f"{number!r} in NEAR(...) is searched as a word: a distance follows a comma, "
            f"NEAR({words}, {number})"
        )
    unique = tuple(dict.fromkeys(terms))
    if len(unique) < 2:
        notes.append("NEAR with fewer than two different terms is just its terms")
        if not unique:
            return None, i
    return _Tok("near", near=Near(unique, distance)), i


def _read_listed(
    terms: list[Term], gaps: list[bool], distance: int, notes: list[str], usage: str
) -> None:
    """NEAR's terms listed with commas (``gaps``: a comma before each term after the
    first): a note when every two are, refused when only some are."""
    if not all(gaps):
        # NEAR(a b, x): the words are written apart by spaces, so 'x' stands where the
        # distance goes; whether it is a word or a mistyped distance is not clear
        raise _Refuse(f"NEAR(...) takes a number after its comma: {usage}")
    words = " ".join((quote(t.text) if " " in t.text else t.text) + "*" * t.prefix for t in terms)
    notes.append(
        f"read the commas between NEAR's terms as spaces: NEAR({words}, {distance}) "
        "(a comma comes only before the distance)"
    )


def _lex(text: str, notes: list[str]) -> list[_Tok]:
    toks: list[_Tok] = []
    i = 0
    dash = False  # a '-' just before a phrase: `deploy -"staging env"`
    while i < len(text):
        ch = text[i]
        if ch in _SPACE:
            i += 1
        elif ch == '"':
            if closing_quote(text, i) < 0:
                notes.append("ignored an unmatched '\"'")
                i += 1
                continue
            term, i = _phrase(text, i, notes)
            if term and dash:
                shown = by_start(quote(term.text)) + "*" * term.prefix
                notes.append(
                    f"'-{shown}' is searched as {shown}: a leading '-' does not exclude "
                    f"(write NOT {shown} to exclude it)"
                )
            if term:
                toks.append(_Tok("term", term, dash=dash, quoted=True))
            dash = False
        elif ch in "()":
            toks.append(_Tok(ch))
            i += 1
        elif text.startswith("NEAR(", i):
            tok, i = _near(text, i, notes)
            if tok:
                toks.append(tok)
        else:
            end = _chunk_end(text, i, '"()')
            chunk = text[i:end]
            i = end
            if chunk == "-" and text[end : end + 1] == '"' and closing_quote(text, end) > 0:
                dash = True  # the phrase's own note says what it means
                continue
            for piece in [chunk] if chunk in OPERATORS else split_glued_operators(chunk):
                words = [piece] if piece in OPERATORS else _LISTED.split(piece)
                if len(words) > 1:  # `deploy,rollback`: a list, no identifier
                    said = f"read {piece!r} as the words {' '.join(words)}"
                    notes.append(f"{said}: ',' ';' '|' between letters separate words")
                toks += [t for w in words if (t := _Tok(w) if w in OPERATORS else _word(w, notes))]
    _note_infix_near(toks, notes)
    return _balance(toks, notes)


_INFIX_NEAR = re.compile(r"NEAR(?:/(\d+))?|near/(\d+)", re.IGNORECASE)


def _note_infix_near(toks: list[_Tok], notes: list[str]) -> None:
    """``deploy NEAR/3 staging``, as FTS4 and other engines write it: here NEAR takes
    its terms in parentheses, so the words were searched, NEAR/3 among them, with
    no word on the proximity asked for.  The note says how to write it."""
    for n, tok in enumerate(toks):
        m = _INFIX_NEAR.fullmatch(tok.term.text) if tok.term and not tok.quoted else None
        around = [toks[i].term for i in (n - 1, n + 1) if 0 <= i < len(toks)]
        terms = [_written(t) for t in around if t] if len(around) == 2 and all(around) else []
        # NEAR alone is a word unless it stands between two (a lower-case `near` has
        # the note on operators' case); NEAR/3 is no word anyone writes
        if m is None or tok.term is None or not (m[1] or m[2] or terms and m[0] == "NEAR"):
            continue
        written = " ".join(terms or ["deploy", "service"])
        distance = f", {m[1] or m[2]}" if (m[1] or m[2]) else ""
        notes.append(
            f"{tok.term.text!r} is searched as a word, not as an operator: NEAR takes its "
            f"terms in parentheses, NEAR({written}{distance})"
        )


def _balance(toks: list[_Tok], notes: list[str]) -> list[_Tok]:
    """Drop a ``)`` that closes nothing and close every ``(`` left open."""
    out: list[_Tok] = []
    depth = 0
    for tok in toks:
        if tok.kind == ")":
            if depth == 0:
                notes.append("ignored a ')' that closes nothing")
                continue
            depth -= 1
        elif tok.kind == "(":
            depth += 1
        out.append(tok)
    if depth:
        notes.append(f"closed {depth} '(' left open at the end")
        out += [_Tok(")") for _ in range(depth)]
    return out


def _cut(
    text: str, written: int, notes: list[str], *, head: bool = False, quotes_later: bool = False
) -> str:
    """``text`` cut to the limit at a term boundary (outside phrases and NEAR).

    ``written`` is the length of the query as written; ``head``: ``text`` is only its
    start, which may end inside a word even when composing made it short enough;
    ``quotes_later``: the query holds a '"' after that start.
    """
    if len(text) <= MAX_FTS5_QUERY_CHARS and not head:
        return text
    inside = ""  # '"' inside a phrase, "N" inside NEAR(…)
    best = -1
    for i, ch in enumerate(text[: MAX_FTS5_QUERY_CHARS + 1]):
        if ch == '"':
            # A '"' that closes nothing is no phrase (_lex ignores it): read as one,
            # the rest of the query was dropped, or refused as one long term.
            opens = quotes_later or closing_quote(text, i) >= 0
            inside = "" if inside == '"' else ('"' if inside == "" and opens else inside)
        elif inside == "" and text.startswith("NEAR(", i):
            inside = "N"
        elif inside == "N" and ch == ")":
            inside = ""
        elif inside == "" and (ch in _SPACE or i and has_cjk(ch) and has_cjk(text[i - 1])):
            best = i  # a CJK sentence has no spaces: it is cut between two characters
    if best <= 0 or not text[:best].strip(_SPACE):
        raise _Refuse(
            f"the query is one term longer than {MAX_FTS5_QUERY_CHARS} characters: shorten it"
        )
    dropped = written - best
    notes.append(
        f"the query was cut to {best} characters at a term boundary (limit "
        f"{MAX_FTS5_QUERY_CHARS}): {dropped} characters at the end were not searched"
    )
    return text[:best]


# ---------------------------------------------------------------------------
# Parser
# ---------------------------------------------------------------------------


class _Parser:
    """Recursive descent over the tokens; see the module docstring for the grammar."""

    def __init__(self, toks: list[_Tok], notes: list[str]) -> None:
        self.toks = toks
        self.pos = 0
        self.notes = notes

    def peek(self) -> str | None:
        return self.toks[self.pos].kind if self.pos < len(self.toks) else None

    def any_of(self, depth: int) -> Node | None:
        options: list[Node] = []
        dangling = False
        while True:
            node = self.all_of(depth)
            if node is None:
                dangling = dangling or bool(options) or self.peek() == "OR"
            else:
                options.append(node)
            if self.peek() != "OR":
                break
            self.pos += 1
            if node is None:
                dangling = True
        if dangling:
            self.notes.append("dropped an OR with nothing on one side")
        return any_of(options) if options else None

    def all_of(self, depth: int) -> Node | None:
        include: list[Node] = []
        exclude: list[Node] = []
        pending: list[str] = []
        while self.peek() not in (None, ")", "OR"):
            kind = self.peek()
            if kind in ("AND", "NOT"):
                pending.append(str(kind))
                self.pos += 1
                continue
            operand = self.primary(depth)
            if operand is None:
                continue
            negated = self.read_operators(pending, first=not (include or exclude))
            pending = []
            (exclude if negated else include).append(operand)
        if pending:
            self.notes.append(f"dropped {' '.join(pending)!r} with nothing after it")
        if not (include or exclude):
            return None
        if not include:
            excluded = all_of(exclude, [])
            shown = (
                _written(excluded) if isinstance(excluded, Term) else render(excluded, top=False)
            )
            raise _Refuse(
                f"NOT {shown} has nothing to find: NOT only removes rows from what the "
                f"words before it find. Put what you are looking for first, e.g. "
                f"'<words> NOT {shown}'; in an OR or a group, every side needs such a word"
            )
        return all_of(include, exclude)

    def read_operators(self, pending: list[str], first: bool) -> bool:
        """Whether the operand after ``pending`` operators is negated; notes odd runs."""
        if pending.count("NOT") > 1:
            raise _Refuse("'NOT NOT' is ambiguous: write one NOT, or drop both")
        negated = "NOT" in pending
        meant = ["NOT"] if negated else (["AND"] if pending else [])
        if first and "AND" in pending:
            self.notes.append("dropped an AND with nothing before it")
        elif pending not in (meant, ["AND", "NOT"]):
            self.notes.append(f"read {' '.join(pending)!r} as {' '.join(meant)!r}")
        return negated

    def primary(self, depth: int) -> Node | None:
        tok = self.toks[self.pos]
        self.pos += 1
        if tok.kind == "(":
            if depth >= MAX_NESTING:
                raise _Refuse(f"parentheses nested deeper than {MAX_NESTING} levels: simplify")
            node = self.any_of(depth + 1)
            self.pos += 1  # the ")" that _balance guarantees
            if node is None:
                self.notes.append("ignored an empty ( )")
            return node
        return tok.term if tok.kind == "term" else tok.near


def parse_query(text: object, *, sentence: bool = False) -> Query:
    """Parse user or model text into a :class:`Query`; never raises.

    A refused query has ``error`` set (and no expression); ``notes`` lists
    every change made to what was written.  Non-strings parse as empty.
    ``sentence``: a word of three to five CJK characters written alone is
    read as a sentence too, as one of six or more always is (``search.run``
    asks so once it is in no message as written).
    """
    if not isinstance(text, str):
        return Query()
    if len(text) > MAX_FTS5_QUERY_CHARS:  # a paste of any size: the cache would keep it
        return _parse.__wrapped__(text, sentence)
    return _parse(text, sentence)


# A search reads one text several times (its plan, time words, other readings, the note
# on what the first result holds); a Query is immutable, so each is parsed once.
@functools.lru_cache(maxsize=256)
def _parse(text: str, sentence: bool) -> Query:
    notes: list[str] = []
    try:
        # only what can be searched is cleaned: a huge paste costs no more than the limit
        start = text[: MAX_FTS5_QUERY_CHARS + 1]
        cleaned = clean_control(compose(start), notes)
        read = read_typography(read_full_width_operators(cleaned, notes), notes)
        grown = len(read) - len(cleaned)  # a space between two phrases that touch
        cleaned = read_near_apart(read, notes)
        # text decomposed (NFD) composes shorter: its start is still cut, between terms
        head, later = len(start) < len(text), '"' in text[len(start) :]
        cut = _cut(cleaned, len(text) + grown, notes, head=head, quotes_later=later)
        toks = _lex(drop_invisible(cut, notes), notes)
        expr = _Parser(toks, notes).any_of(0)
        words = [t for t in toks if t.kind == "term"]
        if words and all(t.dash for t in words) and not any(t.kind == "near" for t in toks):
            dashed = list(dict.fromkeys(t.term for t in words if t.term))
            excluded = " ".join(f"NOT {_written(t)}" for t in dashed)
            quoted = " ".join(quote(f"-{t.text}") + "*" * t.prefix for t in dashed)
            raise _Refuse(
                "a leading '-' is searched as text, not as an exclusion, and this query "
                f"has nothing else to find: to exclude write '<words> {excluded}'; to "
                f"search the text itself put it in quotes, e.g. {quoted}"
            )
    except _Refuse as exc:
        return Query(notes=tuple(notes), error=str(exc))
    loose = all(t.kind == "term" for t in toks) and (
        len(words) > 1
        or any(_sentence(t.term.text, sentence) for t in words if t.term and not t.quoted)
    )
    # `deploy OR docker`, the form the tool teaches, is ranked the same way.
    loose = loose or (
        all(t.kind in ("term", "OR") for t in toks)
        and isinstance(expr, AnyOf)
        and all(isinstance(o, Term) for o in expr.options)
    )
    bare = tuple(t.term.text for t in words if t.term and not t.quoted) if loose else ()
    return Query(expr, tuple(dict.fromkeys(_fold_symbol_notes(notes))), loose=loose, bare=bare)


_CJK_CHAR = re.compile("[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7a3]")
_CJK_PUNCTUATED = re.compile(
    "[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7a3][^\\w\\s]+[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7a3]"
)


def _written(term: Term) -> str:
    """``term`` as a hint writes it: bare where it reads back as itself, else in
    quotes (``NOT "staging env"``: bare, ``NOT staging env`` keeps ``env``)."""
    try:
        toks = _lex(term.text, [])
    except _Refuse:  # `"NEAR(x"`: a phrase
        toks = []
    bare = [t.term for t in toks] == [Term(term.text)] and toks[0].kind == "term"
    return (term.text if bare else quote(term.text)) + "*" * term.prefix


def reads_as_sentence(text: str) -> bool:
    """Whether ``text`` is a word of three to five CJK characters alone, searched as
    written, that ``parse_query(text, sentence=True)`` reads as a sentence."""
    return parse_query(text, sentence=True).loose and not parse_query(text).loose


def _sentence(text: str, short: bool = False) -> bool:
    """A word of six or more CJK characters (three with ``short``), or CJK with
    punctuation inside: a sentence written without spaces, searched as a best
    match of its parts like words side by side.  With ``short``, also a Latin
    word glued to CJK (``Kubernetes扩容``, ``Python脚本``, ``deploy的``): Chinese and
    Japanese glue a name to the words around it, a particle too."""
    least = 3 if short else 6
    if len(_CJK_CHAR.findall(text)) >= least or _CJK_PUNCTUATED.search(text) is not None:
        return True
    segs = segments(text) if short else []
    return any(c for c, _ in segs) and any(not c and any(ch.isalpha() for ch in s) for c, s in segs)
