"""A query's characters as typed, before it is read as the query language.

What keyboards, pastes and other hands put into a query that the language
would otherwise read wrongly without a word: control characters, characters
that cannot be seen inside a word, and operators typed in full width.  Each
change is a note (``syntax.parse_query`` collects them).
"""

from __future__ import annotations

import re

from .._index_text import fold_case, has_cjk, is_token_char

SPACE = " \t\n\r"

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
_FULL_WIDTH_OPERATOR = re.compile(
    "(?<![0-9A-Za-z０-９Ａ-Ｚａ-ｚ])(?:(ＡＮＤ|ＯＲ|ＮＯＴ)(?![0-9A-Za-z０-９Ａ-Ｚａ-ｚ])|ＮＥＡＲ(?=[(（]))"
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
        typed = [w for w in text.split() if _visible(w)[1]]
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
    notes.append(
        f"{stem!r} is searched as {fold_case(word)}: the index keeps no '+', '#' or leading "
        f"'.' around a word, so it finds every {fold_case(word)}, not only {stem}"
    )
    return True


# NEAR(a b，2): the same keyboard types the comma before NEAR's distance in full width.
_NEAR_COMMA = re.compile(r'(NEAR[(（][^()（）"]*?)，([ \t\n\r]*\d+[ \t\n\r]*[)）])')


def read_full_width_operators(text: str, notes: list[str]) -> str:
    """``部署 ＯＲ 迁移`` → ``部署 OR 迁移``, outside ``"`` phrases, with a note: a CJK
    keyboard types the operators in full width, as it types （ ）, and read as
    words they turned an OR into a search for the word ＯＲ."""
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
    return text


def _ascii_text(word: str) -> str:
    return "".join(chr(ord(c) - 0xFEE0) for c in word)


def _ascii(m: re.Match[str]) -> str:
    return _ascii_text(m.group())
