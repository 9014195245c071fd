#!/usr/bin/env python3
"""Generate the CJK script tables from csrc/cjk_ranges.txt.

Writes two files from the same source so C and Python never disagree:

* csrc/cjk_script.h        -- ranges + width-folding tables for the C tokenizer
* hermes_fts/_cjk_ranges.py -- RANGES tuple and is_cjk() for the query router

The half-width katakana table and the voiced-mark compositions are derived
from Python's own Unicode database (NFKC / NFC), not typed by hand, so they
cannot contain transcription mistakes.  The late symbols ("symbols 1"), the
separators the query side reads and the canonical compositions ("compose 1")
come from the Unicode Character Database files of Debian's unicode-data
(/usr/share/unicode), a fixed Unicode version whatever the Python.

Usage: python csrc/gen_cjk_tables.py [--check]
  --check  write nothing; exit 1 if either generated file is stale.
"""

from __future__ import annotations

import argparse
import sys
import unicodedata
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SOURCE = HERE / "cjk_ranges.txt"
C_OUT = HERE / "cjk_script.h"
PY_OUT = ROOT / "hermes_fts" / "_cjk_ranges.py"

UCD = Path("/usr/share/unicode")
# unicode61's tables are Unicode 6.1's: it reads a code point assigned later
# as a letter, so an emoji glued to a word (`deploy🫠`) hides the word.
UNICODE61_VERSION = (6, 1)
# The pictograph blocks (Mahjong Tiles .. Symbols and Pictographs Extended-A):
# their unassigned code points are the emoji of Unicode versions to come.
PICTOGRAPHS = (0x1F000, 0x1FAFF)

HALFWIDTH_FIRST = 0xFF65
HALFWIDTH_LAST = 0xFF9F
KATAKANA_FIRST = 0x30A1
KATAKANA_LAST = 0x30FA
VOICED = 0x3099
SEMI_VOICED = 0x309A
# Katakana that "kana 1" folds to hiragana: the letters and iteration marks.
KANA_FOLD_FIRST = 0x30A1
KANA_FOLD_LAST = 0x30FE


def parse_ranges(text: str) -> list[tuple[int, int]]:
    ranges: list[tuple[int, int]] = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            if ".." in line:
                lo_s, hi_s = line.split("..", 1)
                lo, hi = int(lo_s, 16), int(hi_s, 16)
            else:
                lo = hi = int(line, 16)
        except ValueError:
            raise SystemExit(f"{SOURCE.name}:{lineno}: cannot parse {raw!r}") from None
        if not 0 <= lo <= hi <= 0x10FFFF:
            raise SystemExit(f"{SOURCE.name}:{lineno}: bad range {raw!r}")
        ranges.append((lo, hi))
    ranges.sort()
    merged: list[tuple[int, int]] = []
    for lo, hi in ranges:
        if merged and lo <= merged[-1][1]:
            raise SystemExit(f"{SOURCE.name}: overlapping ranges at U+{lo:04X}")
        if merged and lo == merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], hi)
        else:
            merged.append((lo, hi))
    return merged


def halfwidth_table() -> list[int]:
    """Full-width counterpart of every code point U+FF65..U+FF9F (NFKC)."""
    out = []
    for cp in range(HALFWIDTH_FIRST, HALFWIDTH_LAST + 1):
        folded = unicodedata.normalize("NFKC", chr(cp))
        if len(folded) != 1:
            raise SystemExit(f"unexpected NFKC of U+{cp:04X}: {folded!r}")
        out.append(ord(folded))
    return out


def compositions(mark: int) -> list[int]:
    """For each katakana U+30A1..U+30FA: its NFC composition with `mark`, or 0."""
    out = []
    for cp in range(KATAKANA_FIRST, KATAKANA_LAST + 1):
        composed = unicodedata.normalize("NFC", chr(cp) + chr(mark))
        out.append(ord(composed) if len(composed) == 1 else 0)
    return out


def kana_table(ranges: list[tuple[int, int]]) -> list[int]:
    """For each katakana U+30A1..U+30FE: the hiragana of the same name, or 0.

    By name (KATAKANA LETTER SMALL A -> HIRAGANA LETTER SMALL A), and only
    CJK to CJK, so folding never moves a run boundary.  The BMP block is
    stable across Unicode versions, so --check agrees on every Python.
    """
    out = []
    for cp in range(KANA_FOLD_FIRST, KANA_FOLD_LAST + 1):
        name = unicodedata.name(chr(cp), "").replace("KATAKANA", "HIRAGANA", 1)
        try:
            target = ord(unicodedata.lookup(name)) if name.startswith("HIRAGANA") else 0
        except KeyError:
            target = 0
        if target and not (_in(ranges, cp) and _in(ranges, target)):
            target = 0
        out.append(target)
    return out


def _ucd_lines(name: str) -> list[list[str]]:
    path = UCD / name
    if not path.exists():
        raise SystemExit(f"needs {path} (Debian: apt-get install unicode-data)")
    out = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            out.append([field.strip() for field in line.split(";")])
    return out


def _code_points(field: str) -> range:
    lo, _, hi = field.partition("..")
    return range(int(lo, 16), int(hi or lo, 16) + 1)


def _separates(category: str) -> bool:
    return category[0] in "SPZ" or category == "Cf"


def _ages_and_categories() -> tuple[dict[int, tuple[int, ...]], dict[int, str]]:
    """Each code point's Unicode version (DerivedAge) and general category
    (UnicodeData), of the code points UnicodeData lists."""
    age = {
        cp: tuple(map(int, v.split(".")))
        for f, v in _ucd_lines("DerivedAge.txt")
        for cp in _code_points(f)
    }
    category: dict[int, str] = {}
    rows = _ucd_lines("UnicodeData.txt")
    for i, row in enumerate(rows):
        if row[1].endswith(", Last>"):
            continue
        last = int(rows[i + 1][0], 16) if row[1].endswith(", First>") else int(row[0], 16)
        for cp in range(int(row[0], 16), last + 1):
            category[cp] = row[2]
    return age, category


def late_symbols() -> tuple[str, list[tuple[int, int]]]:
    """The Unicode version read, and the ranges of code points assigned after
    unicode61's tables as a symbol, punctuation, space or format character,
    plus the pictograph blocks' unassigned code points.  unicode61 reads all
    of them as letters; with "symbols 1" they separate words, as the symbols
    its tables know do."""
    age, category = _ages_and_categories()
    picked = {
        cp
        for cp in range(0x80, 0x110000)
        if (cp in category and age[cp] > UNICODE61_VERSION and _separates(category[cp]))
        or (cp not in category and PICTOGRAPHS[0] <= cp <= PICTOGRAPHS[1])
    }
    version = (UCD / "DerivedAge.txt").read_text(encoding="utf-8").split("\n", 1)[0]
    return version.lstrip("# ").removeprefix("DerivedAge-").removesuffix(".txt"), _coalesced(picked)


# Marks in Unicode 6.1 that later versions made letters (New Tai Lue vowel signs,
# two Vedic signs), and letters made marks (Mongolian ali gali): unicode61 reads
# them as 6.1 did.  SQLite reads U+FFFE and U+FFFF as U+FFFD, a symbol.
MARKS_IN_6_1 = ((0x19B0, 0x19C0), (0x19C8, 0x19C9), (0x1CF2, 0x1CF3), (0xFFFE, 0xFFFF))
LETTERS_IN_6_1 = ((0x1885, 0x1886),)
# The marks unicode61 calls diacritics: one goes on the word before it (and is
# dropped from it, remove_diacritics), where it starts none.
DIACRITICS = (
    (0x0300, 0x0304),
    (0x0306, 0x030C),
    (0x030F, 0x030F),
    (0x0311, 0x0311),
    (0x031B, 0x031B),
    (0x0323, 0x0328),
    (0x032D, 0x032E),
    (0x0330, 0x0331),
)


def separators() -> list[tuple[int, int]]:
    """Ranges of the code points the CJK index's tokenizer reads between words,
    CJK aside: what unicode61's Unicode 6.1 tables call neither a letter, a
    number nor private use, and the late symbols ("symbols 1").  It reads any
    other code point as a letter: one assigned since 6.1 (a mark of Unicode 7
    glued to a word is in the word), or unassigned still."""
    age, category = _ages_and_categories()
    known = {
        cp
        for cp, cat in category.items()
        if age[cp] <= UNICODE61_VERSION and cat[0] not in "LN" and cat != "Co"
    }
    marks = {cp for lo, hi in MARKS_IN_6_1 for cp in range(lo, hi + 1)}
    letters = {cp for lo, hi in LETTERS_IN_6_1 for cp in range(lo, hi + 1)}
    late = {cp for lo, hi in late_symbols()[1] for cp in range(lo, hi + 1)}
    return _coalesced((known | marks | late) - letters)


def canonical_pairs() -> list[tuple[int, int, int]]:
    """Every (first, second, composed) NFC composes, Hangul aside (composed by
    arithmetic): a two-character canonical decomposition not excluded from
    composition ("compose 1").  Sorted; composing never lengthens the UTF-8."""
    excluded = {
        cp
        for f, prop, *_ in _ucd_lines("DerivedNormalizationProps.txt")
        if prop == "Full_Composition_Exclusion"
        for cp in _code_points(f)
    }
    pairs = []
    for row in _ucd_lines("UnicodeData.txt"):
        parts = row[5].split()
        if len(parts) != 2 or parts[0].startswith("<") or int(row[0], 16) in excluded:
            continue
        first, second, composed = int(parts[0], 16), int(parts[1], 16), int(row[0], 16)
        if len(chr(composed).encode()) > len((chr(first) + chr(second)).encode()):
            raise SystemExit(f"U+{composed:04X} is longer than its decomposition")
        pairs.append((first, second, composed))
    return sorted(pairs)


# "letters 1": the blocks whose letters with marks fold to the letter (Greek
# tonos, dialytika and the polytonic marks; Hebrew presentation forms with
# points), the two Cyrillic letters Russian writes either way, and the blocks
# whose combining marks are dropped (Hebrew points and cantillation, Arabic
# harakat and Quranic marks), with the Arabic tatweel, a letter that only
# stretches a word.
LETTER_FOLD_BLOCKS = ((0x0370, 0x03FF), (0x1F00, 0x1FFF), (0xFB1D, 0xFB4F))
CYRILLIC_YO = ((0x0401, 0x0415), (0x0451, 0x0435))  # Ё -> Е, ё -> е; й stays
DROPPED_MARK_BLOCKS = ((0x0590, 0x05FF), (0x0600, 0x06FF))
TATWEEL = 0x0640


def letter_folds() -> list[tuple[int, int]]:
    """(letter, folded) for "letters 1", sorted: a letter of LETTER_FOLD_BLOCKS whose
    NFD is a letter and nonspacing marks folds to that letter; ё to е."""
    out = list(CYRILLIC_YO)
    for lo, hi in LETTER_FOLD_BLOCKS:
        for cp in range(lo, hi + 1):
            nfd = unicodedata.normalize("NFD", chr(cp))
            if (
                len(nfd) > 1
                and unicodedata.category(nfd[0])[0] == "L"
                and all(unicodedata.category(c) == "Mn" for c in nfd[1:])
            ):
                out.append((cp, ord(nfd[0])))
    return sorted(out)


def dropped_marks() -> list[tuple[int, int]]:
    """Ranges of the marks "letters 1" drops after a letter, and the tatweel."""
    return _coalesced(
        {TATWEEL}
        | {
            cp
            for lo, hi in DROPPED_MARK_BLOCKS
            for cp in range(lo, hi + 1)
            if unicodedata.category(chr(cp)) == "Mn"
        }
    )


# Drawn with the character before them, as hermes_fts/_display.py reads text: the
# zero-width joiner and the emoji variation selectors, the skin-tone modifiers, and
# a Hangul vowel or final jamo (one syllable written as jamo); with every
# nonspacing mark and every mark of a nonzero combining class.
JOINERS = ((0x200D, 0x200D), (0xFE0E, 0xFE0F), (0x1F3FB, 0x1F3FF), (0x1160, 0x11FF))

# "selectors 1": the variation selectors a CJK character keeps as part of itself,
# VS1..VS16 and VS17..VS256 (the ideographic variation sequences of names).
SELECTORS = ((0xFE00, 0xFE0F), (0xE0100, 0xE01EF))


def joining() -> list[tuple[int, int]]:
    """Ranges of the code points a snippet's edge never falls before (``JOINERS``)."""
    points = {cp for lo, hi in JOINERS for cp in range(lo, hi + 1)}
    for row in _ucd_lines("UnicodeData.txt"):
        if row[2] == "Mn" or row[3] != "0":
            points.add(int(row[0], 16))
    return _coalesced(points)


def _coalesced(points: set[int]) -> list[tuple[int, int]]:
    """Sorted inclusive ranges covering exactly ``points``."""
    ranges: list[tuple[int, int]] = []
    for cp in sorted(points):
        if ranges and cp == ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], cp)
        else:
            ranges.append((cp, cp))
    return ranges


def _in(ranges: list[tuple[int, int]], cp: int) -> bool:
    return any(lo <= cp <= hi for lo, hi in ranges)


def c_array(values: list[int], per_line: int = 8) -> str:
    lines = []
    for i in range(0, len(values), per_line):
        lines.append("  " + ", ".join(f"0x{v:04X}" for v in values[i : i + per_line]) + ",")
    return "\n".join(lines)


def render_c(ranges: list[tuple[int, int]]) -> str:
    body = "\n".join(f"  {{0x{lo:05X}, 0x{hi:05X}}}," for lo, hi in ranges)
    version, symbols = late_symbols()
    pairs = canonical_pairs()
    seconds = _coalesced({second for _, second, _ in pairs})
    seconds_body = "\n".join(f"  {{0x{a:05X}, 0x{b:05X}}}," for a, b in seconds)
    folds = letter_folds()
    folded_ranges = _coalesced({cp for cp, _ in folds})
    folded_body = "\n".join(f"  {{0x{a:04X}, 0x{b:04X}}}," for a, b in folded_ranges)
    folds_body = "\n".join(f"  {{0x{a:04X}, 0x{b:04X}}}," for a, b in folds)
    marks = dropped_marks()
    marks_body = "\n".join(f"  {{0x{a:04X}, 0x{b:04X}}}," for a, b in marks)
    pairs_body = "\n".join(f"  {{0x{a:05X}, 0x{b:05X}, 0x{c:05X}}}," for a, b, c in pairs)
    joins = joining()
    joins_body = "\n".join(f"  {{0x{a:05X}, 0x{b:05X}}}," for a, b in joins)
    symbols_body = "\n".join(f"  {{0x{lo:05X}, 0x{hi:05X}}}," for lo, hi in symbols)
    selectors_body = "\n".join(f"  {{0x{lo:05X}, 0x{hi:05X}}}," for lo, hi in SELECTORS)
    return f"""/* Generated by csrc/gen_cjk_tables.py from csrc/cjk_ranges.txt -- do not edit.
** The folding tables come from NFKC/NFC data that is stable across Unicode versions;
** the late symbols and compositions from the Unicode {version} character database.
*/
#ifndef HERMES_CJK_SCRIPT_H
#define HERMES_CJK_SCRIPT_H

/* Sorted, non-overlapping, non-adjacent inclusive CJK ranges. */
static const unsigned int hermes_cjk_ranges[][2] = {{
{body}
}};
#define HERMES_CJK_NRANGES {len(ranges)}
/* Every range starts at or above this code point: a cheap first test. */
#define HERMES_CJK_MIN 0x{ranges[0][0]:04X}

/* U+{HALFWIDTH_FIRST:04X}..U+{HALFWIDTH_LAST:04X} (half-width katakana) -> full-width (NFKC). */
#define HERMES_HALFWIDTH_FIRST 0x{HALFWIDTH_FIRST:04X}
#define HERMES_HALFWIDTH_LAST 0x{HALFWIDTH_LAST:04X}
static const unsigned short hermes_halfwidth_kana[] = {{
{c_array(halfwidth_table())}
}};

/* Katakana U+{KATAKANA_FIRST:04X}..U+{KATAKANA_LAST:04X} + (semi-)voiced mark
** -> composed kana (NFC), 0 = no composition. */
#define HERMES_KATAKANA_FIRST 0x{KATAKANA_FIRST:04X}
#define HERMES_KATAKANA_LAST 0x{KATAKANA_LAST:04X}
static const unsigned short hermes_kana_voiced[] = {{
{c_array(compositions(VOICED))}
}};
static const unsigned short hermes_kana_semivoiced[] = {{
{c_array(compositions(SEMI_VOICED))}
}};

/* Katakana U+{KANA_FOLD_FIRST:04X}..U+{KANA_FOLD_LAST:04X} -> the hiragana of the same
** name ("kana 1"), 0 = none. */
#define HERMES_KANA_FOLD_FIRST 0x{KANA_FOLD_FIRST:04X}
#define HERMES_KANA_FOLD_LAST 0x{KANA_FOLD_LAST:04X}
static const unsigned short hermes_kana_hiragana[] = {{
{c_array(kana_table(ranges))}
}};

/* Symbols, punctuation, spaces and format characters assigned after Unicode
** {".".join(map(str, UNICODE61_VERSION))} (unicode61's tables, which read them as letters), and the
** unassigned code points of the pictograph blocks U+{PICTOGRAPHS[0]:04X}..U+{PICTOGRAPHS[1]:04X}:
** separators under "symbols 1".  Sorted, non-overlapping, non-adjacent. */
static const unsigned int hermes_late_symbols[][2] = {{
{symbols_body}
}};
#define HERMES_LATE_SYMBOLS_N {len(symbols)}
#define HERMES_LATE_SYMBOLS_MIN 0x{symbols[0][0]:04X}

/* The pairs NFC composes into one character, Hangul aside ("compose 1"):
** first, second, composed; sorted by first, then second. */
static const unsigned int hermes_compositions[][3] = {{
{pairs_body}
}};
#define HERMES_COMPOSITIONS_N {len(pairs)}
/* Every pair's second character lies in these ranges: a cheap test first. */
static const unsigned int hermes_compose_seconds[][2] = {{
{seconds_body}
}};
#define HERMES_COMPOSE_SECONDS_N {len(seconds)}

/* "letters 1": letter -> the letter without its marks (Greek, Hebrew
** presentation forms; Cyrillic ё -> е), sorted. */
static const unsigned int hermes_letter_folds[][2] = {{
{folds_body}
}};
#define HERMES_LETTER_FOLDS_N {len(folds)}
/* The letters folded, as ranges: a cheap test first. */
static const unsigned int hermes_letter_folded[][2] = {{
{folded_body}
}};
#define HERMES_LETTER_FOLDED_N {len(folded_ranges)}
/* "letters 1": the marks dropped after a letter (Hebrew points, Arabic
** harakat) and the tatweel; sorted ranges. */
static const unsigned int hermes_dropped_marks[][2] = {{
{marks_body}
}};
#define HERMES_DROPPED_MARKS_N {len(marks)}

/* What is drawn with the character before it (a combining mark, a joiner, a
** variation selector, a skin tone, a Hangul vowel or final jamo), as
** hermes_fts/_display.py reads text: a snippet's edge never falls before one.
** Sorted ranges. */
static const unsigned int hermes_joining[][2] = {{
{joins_body}
}};
#define HERMES_JOINING_N {len(joins)}
#define HERMES_JOINING_MIN 0x{joins[0][0]:04X}

/* The variation selectors a CJK character keeps ("selectors 1"); sorted ranges. */
static const unsigned int hermes_selectors[][2] = {{
{selectors_body}
}};
#define HERMES_SELECTORS_N {len(SELECTORS)}

#endif /* HERMES_CJK_SCRIPT_H */
"""


def render_py(ranges: list[tuple[int, int]]) -> str:
    body = "\n".join(f"    (0x{lo:05X}, 0x{hi:05X})," for lo, hi in ranges)
    kana = [(KANA_FOLD_FIRST + i, target) for i, target in enumerate(kana_table(ranges)) if target]
    kana_body = "\n".join(f"    0x{cp:04X}: 0x{target:04X}," for cp, target in kana)
    letters_body = "\n".join(f"    0x{a:04X}: 0x{b:04X}," for a, b in letter_folds())
    marks_body = "\n".join(f"    (0x{a:04X}, 0x{b:04X})," for a, b in dropped_marks())
    selectors_body = "\n".join(f"    (0x{lo:05X}, 0x{hi:05X})," for lo, hi in SELECTORS)
    separators_body = "\n".join(f"    (0x{lo:05X}, 0x{hi:05X})," for lo, hi in separators())
    diacritics_body = "\n".join(f"    (0x{lo:04X}, 0x{hi:04X})," for lo, hi in DIACRITICS)
    return f'''"""CJK code point ranges (generated, do not edit).

Generated by csrc/gen_cjk_tables.py from csrc/cjk_ranges.txt, the same source
as the C tokenizer's csrc/cjk_script.h.  Width folding (full-width ASCII,
half-width katakana) is applied by the tokenizer before this lookup.
``fold_kana`` is the tokenizer's ``kana 1`` (katakana to hiragana).
"""

from __future__ import annotations

from bisect import bisect_right

RANGES: tuple[tuple[int, int], ...] = (
{body}
)

_STARTS: tuple[int, ...] = tuple(lo for lo, _hi in RANGES)


def is_cjk(cp: int) -> bool:
    """True when code point `cp` belongs to a CJK run (Han, kana, Hangul)."""
    i = bisect_right(_STARTS, cp) - 1
    return i >= 0 and cp <= RANGES[i][1]


# Katakana -> the hiragana of the same name (csrc/cjk_script.h hermes_kana_hiragana).
KANA_FOLD: dict[int, int] = {{
{kana_body}
}}


_KANA = frozenset(KANA_FOLD) | frozenset(KANA_FOLD.values())


def fold_kana(text: str) -> str:
    """``text`` with katakana folded to hiragana, as the tokenizer's ``kana 1`` does."""
    return text.translate(KANA_FOLD)


def has_kana(text: str) -> bool:
    """Whether ``text`` holds a character ``kana 1`` folds or folds to."""
    return any(ord(ch) in _KANA for ch in text)


# ``letters 1``: a letter -> the letter without its marks (ά -> α, ё -> е), and the
# marks dropped after a letter (csrc/cjk_script.h hermes_letter_folds,
# hermes_dropped_marks).
LETTER_FOLD: dict[int, int] = {{
{letters_body}
}}
DROPPED_MARKS: tuple[tuple[int, int], ...] = (
{marks_body}
)


_LETTER_FOLDED = frozenset(LETTER_FOLD.values())


def folded_from_other(ch: str) -> bool:
    """Whether ``fold_width`` makes ``ch`` of another character too: ASCII of its
    full-width form (and of a ligature), a letter of its accented form (``α`` of
    ``ά``), a Hebrew or Arabic letter of itself with points or harakat after it."""
    cp = ord(ch)
    return 0x21 <= cp <= 0x7E or cp in _LETTER_FOLDED or 0x0590 <= cp <= 0x06FF


# Asked of every character a query or a row folds: a set, not a walk of the ranges.
_DROPPED = frozenset(cp for lo, hi in DROPPED_MARKS for cp in range(lo, hi + 1))


def is_dropped_mark(ch: str) -> bool:
    """Whether ``letters 1`` drops ``ch`` after a letter (a Hebrew point, a haraka)."""
    return ord(ch) in _DROPPED


# ``selectors 1``: the variation selectors a CJK character keeps (csrc/cjk_script.h
# hermes_selectors).
SELECTORS: tuple[tuple[int, int], ...] = (
{selectors_body}
)


_SELECTOR_POINTS = frozenset(cp for lo, hi in SELECTORS for cp in range(lo, hi + 1))


def is_selector(ch: str) -> bool:
    """Whether ``ch`` is a variation selector ``selectors 1`` keeps after a CJK character."""
    return ord(ch) in _SELECTOR_POINTS


# What the CJK index's tokenizer reads between words, CJK aside: what unicode61's
# Unicode 6.1 tables call neither a letter, a number nor private use, and the
# late symbols (``symbols 1``).  Any other code point is a letter to it, one
# assigned since 6.1 (a mark of Unicode 7) or unassigned still, whatever this
# Python's Unicode database says.
SEPARATORS: tuple[tuple[int, int], ...] = (
{separators_body}
)
_SEPARATOR_STARTS: tuple[int, ...] = tuple(lo for lo, _hi in SEPARATORS)


def is_separator(cp: int) -> bool:
    """Whether the tokenizer reads code point ``cp`` between words (``SEPARATORS``)."""
    i = bisect_right(_SEPARATOR_STARTS, cp) - 1
    return i >= 0 and cp <= SEPARATORS[i][1]


# unicode61's diacritics (separators): one right after a word's letter goes on the
# word (and is dropped from it), where it starts none.
DIACRITICS: tuple[tuple[int, int], ...] = (
{diacritics_body}
)


def is_diacritic(ch: str) -> bool:
    """Whether ``ch`` is one of unicode61's ``DIACRITICS``."""
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in DIACRITICS)
'''


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if generated files are stale")
    args = parser.parse_args(argv)
    ranges = parse_ranges(SOURCE.read_text(encoding="utf-8"))
    wanted = {C_OUT: render_c(ranges), PY_OUT: render_py(ranges)}
    stale = [p for p, text in wanted.items() if not p.exists() or p.read_text("utf-8") != text]
    if args.check:
        for p in stale:
            print(
                f"stale: {p.relative_to(ROOT)} (run python csrc/gen_cjk_tables.py)", file=sys.stderr
            )
        return 1 if stale else 0
    for p in stale:
        p.write_text(wanted[p], encoding="utf-8")
        print(f"wrote {p.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
