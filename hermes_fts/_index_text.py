"""The indexes' view of text, modelled in Python: widths, CJK runs, token positions.

The search layer and the query language both need to know what the
``cjk_unicode61`` tokenizer will see in a piece of text (to choose a route, and
to check NEAR on a LIKE scan exactly as the CJK index counts it).  These
functions mirror the C library; the tests compare them with the real tokenizer.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from ._cjk_ranges import (
    DIACRITICS,
    LETTER_FOLD,
    RANGES,
    SEPARATORS,
    is_cjk,
    is_diacritic,
    is_dropped_mark,
    is_selector,
    is_separator,
)

_HALFWIDTH_KANA_FIRST = 0xFF65
_HALFWIDTH_KANA_LAST = 0xFF9F
_HALFWIDTH_VOICED = "\uff9e"
_HALFWIDTH_SEMI_VOICED = "\uff9f"
_KATAKANA_FIRST = 0x30A1
_KATAKANA_LAST = 0x30FA

# The first characters of the CJK index's glue marks (``glue 1``; the C
# tokenizer says which words get which): a word messages_fts does not see, the
# first two words after CJK text, the last two before it, a width-folded word,
# two words a late symbol (``symbols 1``) comes between.
GLUE_MARKS = ("\ue000", "\ue001", "\ue002", "\ue003", "\ue004")


def compose(text: str) -> str:
    """``text`` with its decomposed letters composed (NFC), as most text is stored.

    macOS writes file names (and so pastes of them) decomposed: ``cafe`` and a
    combining accent, Hangul as conjoining jamo, ``か`` and a voiced mark.  A
    query is composed in one place (``syntax.parse_query``), so it finds the
    composed text on every route.  Only a character with marks or jamo joined
    to it changes: one NFC would change alone (a CJK compatibility ideograph,
    the ohm sign) stays as written, since the indexes keep it so.
    """
    if text.isascii() or unicodedata.is_normalized("NFC", text):
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        j = i + 1
        while j < len(text) and _joins(text[j]):
            j += 1
        out.append(unicodedata.normalize("NFC", text[i:j]) if j - i > 1 else text[i])
        i = j
    return "".join(out)


def _joins(ch: str) -> bool:
    """A character NFC may compose into the one before: a mark (Indic vowel signs
    have combining class 0), or a Hangul vowel or final consonant jamo."""
    return ch >= "\u0300" and (unicodedata.category(ch)[0] == "M" or "\u1160" <= ch <= "\u11ff")


def fold_width(text: str) -> str:
    """Fold widths the way the ``cjk_unicode61`` tokenizer does before classifying.

    Full-width ASCII U+FF01..U+FF5E becomes ASCII; half-width katakana
    U+FF65..U+FF9F becomes full-width (NFKC), and a half-width (semi-)voiced
    mark is composed into the katakana before it when such a kana exists
    (``ｶﾞ`` → ``ガ``).  A letter and the marks that follow it compose as NFC
    composes them (``compose 1``: ``и`` U+0306 → ``й``, Hangul jamo → ``한``,
    ``か`` U+3099 → ``が``), then folds as ``letters 1`` does (``ά`` → ``α``,
    ``ё`` → ``е``, Hebrew points and Arabic harakat dropped), and the variation
    selectors after a CJK character are dropped (``selectors 1``).  Everything
    else is left alone, as in the C library.
    """
    return "".join(folded_characters(text))


def folded_characters(text: str, limit: int | None = None) -> list[str]:
    """``fold_width(text)`` character by character (a ligature: its letters), each
    followed by as many empty strings as it took characters of ``text`` beyond
    one (a joined mark), so the list indexes ``text``; up to ``limit`` folded
    characters."""
    out: list[str] = []
    i = 0
    n = len(text)
    folded = 0
    while i < n and (limit is None or folded < limit):
        start = i
        first = len(out)
        ch = text[i]
        cp = ord(ch)
        i += 1
        if cp < _KATAKANA_FIRST:  # hiragana, 々 and Hangul jamo among them
            i = _selectors_after(text, _join_following(text, i, ch, out), out[first])
            folded += len(out[first])
            if i - start > 1:
                out.extend([""] * (i - start - 1))
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
        i = _selectors_after(text, _join_following(text, i, ch, out), out[first])
        folded += len(out[first])
        if i - start > 1:
            out.extend([""] * (i - start - 1))
    return out


def _selectors_after(text: str, i: int, folded: str) -> int:
    """``i`` past the variation selectors (VS1..VS16, VS17..VS256) at ``text[i]`` when
    ``folded`` is a CJK character: they pick its glyph (``selectors 1``: 葛 VS17 飾 is 葛飾)."""
    if len(folded) != 1 or not is_cjk(ord(folded)):
        return i
    while i < len(text) and is_selector(text[i]):
        i += 1
    return i


# ``letters 1``: the Latin ligatures PDF text extraction leaves in, as their letters.
_LIGATURES = {"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl"}
_LIGATURES.update({"\ufb05": "st", "\ufb06": "st"})


def _join_following(text: str, i: int, ch: str, out: list[str]) -> int:
    """Append ``ch`` with what follows it at ``text[i]`` joined to it; the next index.
    ``compose 1``: composed as NFC composes a pair (marks in the order written);
    ``letters 1``: folded to the letter without its marks, the Hebrew points and
    Arabic harakat after it dropped, a ligature as its letters (``ﬁ`` → ``fi``)."""
    while i < len(text) and _joins(text[i]):
        composed = unicodedata.normalize("NFC", ch + text[i])
        if len(composed) != 1:
            break
        ch = composed
        i += 1
    ch = _LIGATURES.get(ch) or chr(LETTER_FOLD.get(ord(ch), ord(ch)))
    while i < len(text) and is_dropped_mark(text[i]):
        i += 1
    out.append(ch)
    return i


def has_cjk(text: str) -> bool:
    """True if ``text`` contains a CJK character (after width folding)."""
    return any(is_cjk(ord(ch)) for ch in fold_width(text))


def is_token_char(ch: str) -> bool:
    """A character of a word to the CJK index's tokenizer: unicode61's letters,
    numbers and private use by its Unicode 6.1 tables, so also a code point
    assigned since (a mark glued to a word) or unassigned, a late symbol aside."""
    if ch.isascii():
        return ch.isalnum()
    return not is_separator(ord(ch))


def segments(text: str, fold: bool = True) -> list[tuple[bool, str]]:
    """The tokenizer's view of ``text``: (is_cjk_run, segment) pairs.

    Separators are dropped; a non-CJK segment is a maximal run of unicode61
    token characters (``is_token_char``) and the diacritics it goes on through;
    a CJK segment is a maximal CJK run (width folded, unless ``fold`` is false:
    the segments then keep the text's own characters).
    """
    segs: list[tuple[bool, str]] = []
    cur: list[str] = []
    cur_cjk = False
    for ch in fold_width(text) if fold else text:
        # Unfolded, a character is still classed as it folds: half-width ﾗ is kana,
        # and a variation selector after CJK is part of its character.
        if is_cjk(ord(ch)) if fold else has_cjk(ch) or (cur_cjk and cur and is_selector(ch)):
            kind: bool | None = True
        elif is_token_char(ch) or (cur and not cur_cjk and is_diacritic(ch)):
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


def fold_case(token: str) -> str:
    """unicode61 folding of a non-CJK token (``remove_diacritics 2``): case folded,
    a Latin letter's diacritics removed, and a combining diacritic dropped.
    Other scripts keep theirs (ё, ά) and compatibility forms stay (ﬁ, ²), as
    unicode61 keeps them (``letters 1`` folds ё, ά and ﬁ before it, in
    ``fold_width``): NFKD folded them here, so NEAR on a LIKE scan found
    ``еще`` in "ещё" where an index without ``letters 1`` does not.  A whole
    message's text (the LIKE test of a pending row) of ASCII and caseless blocks
    (CJK, kana, Hangul) folds at the cost of one regex search and ``lower``;
    other text at a lookup per character, which on a 100,000-row backlog cost
    every search seconds."""
    if token.isascii() or not _MAY_FOLD.search(token):
        return token.lower()
    return "".join(map(_fold_character, _MARKS_AFTER_CJK.sub(_spaces, token)))


def _spaces(found: re.Match[str]) -> str:
    return " " * len(found[0])


# Combining diacritics right after a CJK character: the tokenizer starts no word
# with one, so there they separate (ー and U+0301 before ラ is no ーラ), where inside
# a word they are dropped.
_MARKS_AFTER_CJK = re.compile(
    "(?<=[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in RANGES) + "])[\u0300-\u036f]+"
)


@functools.lru_cache(maxsize=8192)
def _fold_character(ch: str) -> str:
    out = []
    for c in _fold_letter_case(ch):
        if _COMBINING_DIACRITICS[0] <= ord(c) <= _COMBINING_DIACRITICS[1]:
            continue
        base = unicodedata.normalize("NFD", c)
        latin = len(base) > 1 and unicodedata.name(base[0], "").startswith("LATIN")
        out.append("".join(b for b in base if not unicodedata.combining(b)) if latin else c)
    return "".join(out)


_COMBINING_DIACRITICS = (0x0300, 0x036F)

# Blocks with no case and no Latin letter, so ``fold_case`` leaves every character
# of them as it is (a test checks each): text of these and ASCII folds to its
# lower case, with no fold in Python per character.
CASELESS_RANGES = (
    (0x2000, 0x206F),  # general punctuation: dashes, curly quotes, ellipsis
    (0x2190, 0x23FF),  # arrows, mathematical operators, technical symbols
    (0x2500, 0x27BF),  # box drawing, shapes, symbols, dingbats
    (0x2E80, 0x2FDF),  # CJK radicals
    (0x3000, 0x4DBF),  # CJK punctuation, kana, bopomofo, jamo, enclosed CJK, ext. A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFE30, 0xFE4F),  # CJK compatibility forms
    (0xFF01, 0xFF20),  # full-width punctuation and digits (not the capitals after them)
    (0xFF3B, 0xFFEF),  # full-width small letters, half-width kana and Hangul
    (0x1F000, 0x1FAFF),  # emoji and pictographs
    (0x20000, 0x3FFFF),  # CJK extensions B and later
)
# A character of neither: text without one (most CJK text) needs only ``lower``.
_MAY_FOLD = re.compile(
    "[^\x00-\x7f" + "".join(f"{chr(low)}-{chr(high)}" for low, high in CASELESS_RANGES) + "]"
)


def _fold_letter_case(ch: str) -> str:
    """unicode61's case fold of one character: one character (ς is σ), never two
    (ß stays ß, where ``casefold`` makes it ss)."""
    folded = ch.casefold()
    return folded if len(folded) == 1 else ch.lower()


def positions(text: str, document: bool) -> list[frozenset[str]]:
    """cjk_unicode61 token positions of ``text``: the tokens at each position.

    A non-CJK word is one position; a CJK run is its bigrams (a lone
    character is itself).  In a ``document`` (``unigrams 1``), each character
    of a run is also colocated with the bigram it starts, the last with the
    last bigram; a query never has unigrams.
    """
    out: list[frozenset[str]] = []
    for cjk, seg in segments(text):
        if not cjk:
            out.append(frozenset({fold_case(seg)}))
        elif len(seg) == 1:
            out.append(frozenset({seg}))
        else:
            for i in range(len(seg) - 1):
                extra = {seg[i]} | ({seg[i + 1]} if i == len(seg) - 2 else set())
                out.append(frozenset({seg[i : i + 2]} | (extra if document else set())))
    return out


def word_goes_on(text: str, i: int, step: int) -> bool:
    """Whether a non-CJK word ending before ``text[i]`` (``step`` 1), or starting
    after ``text[i]`` (``step`` -1), goes on there: a letter of it follows, past
    the diacritics the tokenizer keeps in a word and drops."""
    while 0 <= i < len(text) and is_diacritic(text[i]):
        i += step
    if not 0 <= i < len(text):
        return False
    ch = text[i]
    if ch.isascii():
        return ch.isalnum()
    return is_token_char(ch) and not has_cjk(ch)


def _class(ranges: tuple[tuple[int, int], ...]) -> str:
    return "[" + "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in ranges) + "]"


# ``SEPARATORS`` as a regular expression over lower-cased text, and what stands
# between two words: the diacritics the first goes on through, then separators.
SEPARATOR = _class(SEPARATORS)
_DIACRITIC = _class(DIACRITICS)
BETWEEN_WORDS = f"{_DIACRITIC}*(?!{_DIACRITIC}){SEPARATOR}+"
