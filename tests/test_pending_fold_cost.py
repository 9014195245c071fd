"""Rows pending for the CJK index are folded in Python only where folding changes them.

A read-only store answers the rows another writer left pending by a LIKE test
that folds case and diacritics as the index does (``_index_text.fold_case``).
It folded every pending row's whole text character by character in Python: on
a 1M-message store with 100,000 rows waiting, about 1.8 s of every search
(benchmarks/README.md).  Text of ASCII and caseless blocks (CJK, kana, Hangul,
punctuation, emoji) folds to its ASCII lower case, which ``lower`` gives.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from _support import needs_extension

from hermes_fts import _index_text
from hermes_fts._cjk_ranges import is_cjk
from hermes_fts._index_text import CASELESS_RANGES, fold_case
from hermes_fts.store import SessionStore

# Case, diacritics (composed and combining), full width, Han variants, kana
# (half width too), Hangul, Greek, Cyrillic, ligatures, emoji, a NUL.
TEXTS = [
    "部署服务器 deploy to STAGING",
    "東京タワーの「ラーメン」、とても美味しい…",
    "臺灣的天氣 台湾天气 東京 东京",
    "ｶﾀｶﾅ ﾗｰﾒﾝ カタカナ らーめん",
    "ＣＡＦＥ ａｂｃ １２３ ＡＢＣ",
    "Café au lait in Zürich — NAÏVE RÉSUMÉ",
    "cafe\u0301 decomposed, and a stray \u0301 mark",
    "한국어 검색 테스트 Anna의 ✓ 🚀",
    "ΑΛΦΑ Ελληνικά ΣΊΣΥΦΟΣ ς",
    "ЕЩЁ Ёлка ПРИВЕТ",
    "ﬁle ﬂow Straße ẞ İstanbul ǅ",
    "K ﹙Kelvin﹚ Ω Å Ⓐ ⅰⅡ",
    "中文\u0301 a mark after CJK, 文\u0301\u0302中",
    "2024年3月8号 选了哪个数据库?",
]


def test_every_caseless_character_folds_to_itself():
    """The blocks ``fold_case`` skips hold no character it (or ``lower``) changes."""
    changed = [
        hex(cp)
        for low, high in CASELESS_RANGES
        for cp in range(low, high + 1)
        if not 0xD800 <= cp <= 0xDFFF
        and (_index_text._fold_character(chr(cp)) != chr(cp) or chr(cp).lower() != chr(cp))
    ]
    assert not changed, changed[:20]


def _by_character(text: str) -> str:
    """``fold_case`` one character at a time: combining marks right after CJK separate."""
    out, after_cjk = [], False
    for ch in text:
        mark = "\u0300" <= ch <= "\u036f"
        out.append(" " if mark and after_cjk else _index_text._fold_character(ch))
        after_cjk = is_cjk(ord(ch)) or (mark and after_cjk)
    return "".join(out)


@pytest.mark.parametrize("text", TEXTS)
def test_fold_case_folds_as_character_by_character(text):
    """The same fold as before, whatever the text holds, and each of its words."""
    for piece in [text, *text.split()]:
        assert fold_case(piece) == _by_character(piece), piece


def _pending_store(tmp_path: Path) -> tuple[Path, Path]:
    """TEXTS written by the sqlite3 shell (pending), and a copy a writer applied."""
    path = tmp_path / "state.db"
    with SessionStore(path) as st:
        st.add_session("s1", "cli")
    script = "".join(
        "INSERT INTO messages(session_id, role, content, timestamp) "
        f"VALUES ('s1', 'user', CAST(X'{text.encode().hex()}' AS TEXT), {1_700_000_000 + n});"
        for n, text in enumerate(TEXTS)
    )
    subprocess.run([str(shutil.which("sqlite3")), str(path), script], check=True, timeout=60)
    applied = tmp_path / "applied.db"
    shutil.copy(path, applied)
    with SessionStore(applied) as st:
        assert st.index_state()["cjk_pending"] == 0
    return path, applied


QUERIES = ["cafe", "CAFÉ", "zurich", "東京", "东京", "台湾 天气", "らーめん", "ラーメン", "ｶﾀｶﾅ",
           "ABC", "ａｂｃ", "123", "staging", "部署", "한국어", "anna", "αλφα", "σισυφος", "еще",
           "ёлка", "file", "strasse", "straße", "kelvin", "数据库", "2024年", "résumé OR ελληνικά",
           '"naive resume"', "NEAR(deploy staging, 3)", "after"]  # fmt: skip


@needs_extension
def test_pending_rows_match_as_indexed_ones_on_varied_text(tmp_path):
    path, applied = _pending_store(tmp_path)
    with (
        SessionStore(path, readonly=True) as waiting,
        SessionStore(applied, readonly=True) as taken,
    ):
        assert waiting.index_state()["cjk_pending"] == len(TEXTS)
        for query in QUERIES:
            expected = taken.search(query, limit=50)
            found = waiting.search(query, limit=50)
            assert found.route == expected.route, query
            assert sorted(r["id"] for r in found.rows) == sorted(r["id"] for r in expected.rows), (
                query
            )


def _caseless(text: str) -> bool:
    return all(
        ch.isascii() or any(low <= ord(ch) <= high for low, high in CASELESS_RANGES) for ch in text
    )


@needs_extension
def test_pending_cjk_and_ascii_rows_are_not_folded_character_by_character(tmp_path, monkeypatch):
    """Only the pending rows with a letter that has case or diacritics are folded in Python."""
    path, _ = _pending_store(tmp_path)
    folded: list[str] = []
    fold_character = _index_text._fold_character

    def counting(ch: str) -> str:
        folded.append(ch)
        return fold_character(ch)

    monkeypatch.setattr(_index_text, "_fold_character", counting)
    with SessionStore(path, readonly=True) as waiting:
        assert waiting.search("数据库", limit=5).rows
    caseless = {ch for text in TEXTS if _caseless(text) for ch in text}
    caseless -= {ch for text in TEXTS if not _caseless(text) for ch in text}
    assert caseless and not caseless & set(folded), sorted(caseless & set(folded))[:10]
