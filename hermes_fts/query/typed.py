"""A query's characters as typed, before it is read as the query language.

What keyboards, pastes and other hands put into a query that the language
would otherwise read wrongly without a word: control characters, characters
that cannot be seen inside a word, operators typed in full width or glued to
CJK text, typographic quotes and full-width parentheses, and ``NEAR (``
written apart.  Each change is a note (``syntax.parse_query`` collects them).
"""

from __future__ import annotations

import re

from .._index_text import fold_case, has_cjk, is_token_char

SPACE = " \t\n\r"
OPERATORS = ("AND", "OR", "NOT")

# Characters no one sees, which a paste (a web page's soft hyphen or zero-width
# space, a file's BOM) leaves inside a word: the tokenizer splits the word there.
INVISIBLE = {
    "\u00ad": "soft hyphen",
    "\u200b": "zero-width space",
    "\u200c": "zero-width non-joiner",
    "\u200d": "zero-width joiner",
    "\u2060": "word joiner",
    "\ufeff": "zero-width no-break space",
}
_INVISIBLE = f"[{''.join(INVISIBLE)}]"
# Persian and Indic words spell with these two: dropped only between Latin letters,
# digits or CJK, where they are never spelling.
_JOINERS = "\u200c\u200d"
# ＡＮＤ, ＯＲ, ＮＯＴ and ＮＥＡＲ( as a CJK keyboard types them, not inside a word.
# ＊ too, a prefix's star: dropped as punctuation, ｄｅｐ＊ searched the word dep alone.
_FULL_WIDTH_OPERATOR = re.compile(
    "(?<![0-9A-Za-z０-９Ａ-Ｚａ-ｚ])(?:(ＡＮＤ|ＯＲ|ＮＯＴ)(?![0-9A-Za-z０-９Ａ-Ｚａ-ｚ])|ＮＥＡＲ(?=[(（]))|＊"
)


def clean_control(text: str, notes: list[str]) -> str:
    """Control characters, lone surrogates and non-ASCII spaces become spaces.

    NUL would end FTS5's scan early, other controls are syntax errors,
    surrogates cannot be bound, and a non-ASCII space (U+3000) separates
    terms for a user but is a bareword character for FTS5.  Controls that
    are not whitespace are noted: a query of only those would otherwise find
    nothing without a word said.
    """
    out = []
    controls: dict[str, None] = {}
    for ch in text:
        cp = ord(ch)
        if ch in SPACE:
            out.append(ch)
        elif cp < 0x20 or 0x7F <= cp <= 0x9F or 0xD800 <= cp <= 0xDFFF or ch.isspace():
            out.append(" ")
            if not ch.isspace():
                controls[f"U+{cp:04X}"] = None
        else:
            out.append(ch)
    if controls:
        notes.append(f"read control characters ({', '.join(controls)}) as spaces")
    return "".join(out)


def _inside_a_word(ch: str, before: str, after: str) -> bool:
    if not (before and after and is_token_char(before) and is_token_char(after)):
        return False
    return ch not in _JOINERS or all(c < "\u0250" or has_cjk(c) for c in (before, after))


def _visible(text: str) -> tuple[str, dict[str, None]]:
    """``text`` without the invisible characters inside its words, and those named."""
    out: list[str] = []
    dropped: dict[str, None] = {}
    for i, ch in enumerate(text):
        if ch in INVISIBLE and _inside_a_word(ch, out[-1] if out else "", text[i + 1 : i + 2]):
            dropped[f"U+{ord(ch):04X} {INVISIBLE[ch]}"] = None
        else:
            out.append(ch)
    return "".join(out), dropped


def drop_invisible(text: str, notes: list[str]) -> str:
    """``data\u200bbase`` → ``database``: an invisible character inside a word is
    dropped, so the word is searched as it looks.  Kept, it split the word in
    two, a phrase no message holds, and the search found nothing."""
    visible, dropped = _visible(text)
    if dropped:
        # a quoted word's own quotes stay out: advice to search ""data base"" was no phrase
        typed = [w.strip('"') for w in text.split() if _visible(w)[1]]
        read = " ".join(_visible(w)[0] for w in typed)
        split = ", ".join(f'"{re.sub(_INVISIBLE, " ", w).strip()}"' for w in typed)
        notes.append(
            f"dropped invisible characters inside words ({', '.join(dropped)}): searched as "
            f"{read}; the index splits text that holds them there (search {split} for it)"
        )
    return visible


def note_signs(stem: str, word: str, notes: list[str]) -> bool:
    """Whether ``stem`` is ``word`` written with signs that name a language or a
    platform (``C++``, ``C#``, ``F#``, ``.NET``), which the index drops: searched
    as the word alone, they find it however it is written, and a note says so."""
    start = stem.find(word)
    before, after = stem[:start], stem[start + len(word) :]
    if not (before.endswith(".") or after[:1] in ("+", "#")) or not word.isalnum():
        return False
    # "(C#,": the word with its signs alone, no bracket or comma
    shown = "." * before.endswith(".") + word + after[: len(after) - len(after.lstrip("+#"))]
    notes.append(
        f"{stem!r} is searched as {fold_case(word)}: the index keeps no '+', '#' or leading "
        f"'.' around a word, so it finds every {fold_case(word)}, not only {shown}"
    )
    return True


def note_number_signs(stem: str, word: str, notes: list[str]) -> None:
    """A note when ``stem`` is the number in ``word`` with a percent or dollar sign
    (``61.2%``, ``$100``; ``word`` keeps a ``%``), which the indexes drop: it
    finds every 61.2, and unsaid that read as a search for the percentage."""
    number = word.rstrip("%")
    start = stem.find(word)
    before, after = stem[:start][-1:], word[len(number) :][:1] or stem[start + len(word) :][:1]
    signs = [s for s in (before, after) if s in ("$", "%", "\uff05")]
    if signs and number[:1].isdigit() and number[-1:].isdigit():
        # "(61.2%)", "$100,": the signs alone beside the number, no bracket or comma
        before, after = (s if s in signs else "" for s in (before, after))
        notes.append(
            f"{stem!r} is searched as {number}: the index keeps no {' or '.join(map(repr, signs))}"
            f", so it finds every {number}, not only {before}{number}{after}"
        )


# NEAR(a b，2): the same keyboard types the comma before NEAR's distance in full width,
# and between its terms (NEAR(数据库，迁移)), which syntax._near reads as a list.
_NEAR_COMMA = re.compile(r'(NEAR[(（][^()（）"]*?)，([ \t\n\r]*\d+[ \t\n\r]*[)）])')
_NEAR_GROUP = re.compile(r'NEAR[(（][^()（）"]*[)）]')


def read_full_width_operators(text: str, notes: list[str]) -> str:
    """``部署 ＯＲ 迁移`` → ``部署 OR 迁移``, ``ｄｅｐ＊`` → ``ｄｅｐ*``, outside ``"`` phrases,
    with a note: a CJK keyboard types the operators in full width, as it types
    （ ）, and read as words they turned an OR into a search for the word ＯＲ."""
    pieces = text.split('"')
    read: dict[str, None] = {}
    # outside phrases: the even pieces, and the last after a '"' that closes nothing
    for n in {*range(0, len(pieces), 2), len(pieces) - 1}:
        for m in _FULL_WIDTH_OPERATOR.finditer(pieces[n]):
            read[m.group()] = None
        pieces[n] = _FULL_WIDTH_OPERATOR.sub(_ascii, pieces[n])
    if read:
        shown = ", ".join(f"{w} as {_ascii_text(w)}" for w in read)
        notes.append(f"read full-width operators as operators: {shown}")
    text, commas = _NEAR_COMMA.subn(r"\1,\2", '"'.join(pieces))
    if commas:
        notes.append("read a full-width '，' before NEAR's distance as ','")
    # the one between its terms: syntax._near's note on the commas says how it was read
    pieces = text.split('"')
    for n in {*range(0, len(pieces), 2), len(pieces) - 1}:
        pieces[n] = _NEAR_GROUP.sub(lambda m: m.group().replace("，", ","), pieces[n])
    return '"'.join(pieces)


def _ascii_text(word: str) -> str:
    return "".join(chr(ord(c) - 0xFEE0) for c in word)


def _ascii(m: re.Match[str]) -> str:
    return _ascii_text(m.group())


_GLUED_OPERATOR = re.compile("AND|OR|NOT")


# Typographic quotes and the quotes that close them (never ”…”: 12” is inches),
# and full-width parentheses: phones, models' prose and CJK keyboards type them.
_QUOTES = dict(zip("“„«「『＂〝", ["”", "“”", "»", "」", "』", "＂", "〞〟"]))
_PARENTHESES = {"（": "(", "）": ")"}


def read_typography(text: str, notes: list[str]) -> str:
    """The syntax as typed on other keyboards, outside ``"`` phrases, with notes: a
    phrase in typographic quotes (``“deploy rocket”``, ``「数据库迁移」``) whose text
    holds no ``"`` is that phrase in ``"``, and ``（ ）`` are parentheses in a query
    that writes the language (an operator or a parenthesis).  Read as text they
    changed the query without a word: the phrase's words searched apart, the
    grouping of ``（部署 OR 迁移） NOT 生产`` gone.  A ``"`` that closes nothing
    (the lexer ignores it) becomes a space, so it cannot close a phrase read here.
    The text keeps its length (``syntax._cut`` counts on), but for a space between a phrase
    read here and a ``"`` it touches: ``「東京」「ラーメン」`` is two phrases, where
    ``"東京""ラーメン"`` is one that holds a ``"``."""
    pieces = (p for c in re.split("[ \t\n\r（）()]+", text) if c for p in split_glued_operators(c))
    grouped = bool({"（", "）"} & set(text)) and (
        bool({"(", ")"} & set(text)) or "NEAR（" in text or any(p in OPERATORS for p in pieces)
    )
    out, read, unmatched, i = list(text), [], [], 0
    touching: list[int] = []  # where a read quote may touch another '"' after or before it
    while i < len(text):
        ch = text[i]
        if ch == '"':
            end = closing_quote(text, i)
            unmatched += [i] if end < 0 else []
            i = i + 1 if end < 0 else end + 1
            continue
        end = min(
            (e for e in (text.find(c, i + 1) for c in _QUOTES.get(ch, "")) if e > i), default=-1
        )
        # `“a”"b"` would read `"a""b"` as one phrase: left as written
        if end > i and '"' not in text[i : end + 2] and text[i + 1 : end].strip(SPACE):
            out[i] = out[end] = '"'
            touching += [i - 1, end]
            read.append(f'{text[i : end + 1]} as "{text[i + 1 : end]}"')
            i = end + 1
            continue
        out[i] = _PARENTHESES.get(ch, ch) if grouped else ch
        i += 1
    if read:
        notes.append(f"read typographic quotes as an exact phrase: {', '.join(read)}")
        out = [" " if n in unmatched else c for n, c in enumerate(out)]
        notes += ["ignored an unmatched '\"'"] if unmatched else []
        out = [
            c + " " if n in touching and out[n : n + 2] == ['"', '"'] else c
            for n, c in enumerate(out)
        ]
    if grouped and any(a != b for a, b in zip(out, text) if b in _PARENTHESES):
        notes.append("read full-width （ ） as parentheses")
    return "".join(out)


# `NEAR (a b)`: FTS5 reads a space before NEAR's '(' as nothing; read as the word
# NEAR beside a group, it searched another query without a note.
_NEAR_APART = re.compile(r"(?<![^ \t\n\r(）)])NEAR([ \t\n\r]+)\(")


def read_near_apart(text: str, notes: list[str]) -> str:
    """``NEAR (a b)`` as ``NEAR(a b)``, outside phrases, with a note; the space moves
    after the ``(``, so the text keeps its length (``syntax._cut`` counts on)."""
    pieces = text.split('"')
    moved = 0
    for n in {*range(0, len(pieces), 2), len(pieces) - 1}:
        pieces[n], count = _NEAR_APART.subn(r"NEAR(\1", pieces[n])
        moved += count
    if moved:
        notes.append("read 'NEAR (' as 'NEAR(': a NEAR group, written without the space")
    return '"'.join(pieces)


def closing_quote(text: str, start: int) -> int:
    """Index of the quote closing the phrase opened at ``start`` (``""`` escapes), or -1."""
    i = start + 1
    while i < len(text):
        if text[i] == '"':
            if i + 1 < len(text) and text[i + 1] == '"':
                i += 2
                continue
            return i
        i += 1
    return -1


def split_glued_operators(chunk: str) -> list[str]:
    """``桂林OR漓江`` → ``桂林``, ``OR``, ``漓江``: an operator between CJK characters."""
    pieces: list[str] = []
    last = 0
    for m in _GLUED_OPERATOR.finditer(chunk):
        before = chunk[m.start() - 1] if m.start() > 0 else ""
        after = chunk[m.end()] if m.end() < len(chunk) else ""
        if (before or after) and all(not c or has_cjk(c) for c in (before, after)):
            pieces += [chunk[last : m.start()], m.group()]
            last = m.end()
    pieces.append(chunk[last:])
    return [p for p in pieces if p]
