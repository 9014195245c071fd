"""Letters written with or without their marks read as one (``letters 1``).

unicode61 folds Latin diacritics only.  Greek is written with the tonos in
lower case and without it in capitals (``ΕΛΛΗΝΙΚΑ`` is ``Ελληνικά``), and
people type it either way; Russian writes ``ё`` as ``е`` more often than not;
Hebrew and Arabic are written without vowel points but quoted with them, and
unicode61 read a point as a separator, so ``שָׁלוֹם`` was three tokens and
``שלום`` found nothing there.  The Arabic tatweel only stretches a word.
Ligatures (``ﬁ``), which PDF text extraction leaves in, are their letters.
What must stay apart: ``й`` and ``и`` are different letters (``мой``, ``мои``),
and ``x²`` is not ``x2``.
"""

from __future__ import annotations

import subprocess
import unicodedata
from pathlib import Path

import pytest
from _support import needs_extension, rebuild_cjk_index, rebuilt_by_optimize_storage

from hermes_fts.store import SessionStore

pytestmark = needs_extension

# (stored, typed): the typed word must find the stored one, and the reverse.
SAME = [
    ("άλφα", "αλφα"),
    ("ελληνικά", "ελληνικα"),
    ("προϋπόθεση", "προυποθεση"),
    ("ещё", "еще"),
    ("ёлка", "елка"),
    ("שָׁלוֹם", "שלום"),
    ("مَرْحَبًا", "مرحبا"),
    ("كتـــاب", "كتاب"),
    ("ﬁnance", "finance"),  # ligatures, as PDF text extraction leaves them
    ("oﬃce", "office"),
]
ROUTES = ["fts_cjk", "like_scan"]


def _ids(st: SessionStore, query: str, route: str) -> list[int]:
    found = st.search(query, route=route)
    assert found.route == route
    return [r["id"] for r in found.rows]


@pytest.mark.parametrize("route", ROUTES)
def test_a_word_is_found_with_or_without_its_marks(tmp_path: Path, route: str) -> None:
    with SessionStore(tmp_path / "state.db") as st:
        st.add_session("s1", "cli")
        stored = [st.add_message("s1", "user", f"{a} one") for a, _ in SAME]
        typed = [st.add_message("s1", "user", f"{b} two") for _, b in SAME]
        for (a, b), row_a, row_b in zip(SAME, stored, typed):
            assert sorted(_ids(st, b, route)) == [row_a, row_b], b
            assert sorted(_ids(st, a, route)) == [row_a, row_b], a
            assert _ids(st, f'"{a} one"', route) == [row_a], a  # a phrase: one word, not three


def test_greek_capitals_without_accents_find_the_accented_word(tmp_path: Path) -> None:
    """Greek drops the tonos in capitals, so a heading ``ΕΛΛΗΝΙΚΑ`` is ``Ελληνικά``.
    (The LIKE scan folds ASCII case only, docs/QUERY.md: this is the index's.)"""
    with SessionStore(tmp_path / "state.db") as st:
        st.add_session("s1", "cli")
        heading = st.add_message("s1", "user", "ΕΛΛΗΝΙΚΑ")
        assert _ids(st, "Ελληνικά", "fts_cjk") == [heading]


@pytest.mark.parametrize("route", ROUTES)
def test_letters_that_differ_stay_apart(tmp_path: Path, route: str) -> None:
    with SessionStore(tmp_path / "state.db") as st:
        st.add_session("s1", "cli")
        moi = st.add_message("s1", "user", "мой дом")
        mine = st.add_message("s1", "user", "мои дома")
        assert _ids(st, "мой", route) == [moi]
        assert _ids(st, "мои", route) == [mine]


def test_the_python_model_folds_every_letter_as_the_tokenizer_does() -> None:
    """``fold_text`` (the LIKE scan's pattern) against ``cjk_fold()`` (its column),
    for every letter ``letters 1`` folds and every mark it drops after a letter."""
    from hermes_fts import loader
    from hermes_fts._cjk_ranges import DROPPED_MARKS, LETTER_FOLD
    from hermes_fts.query.plan import fold_text

    texts = [chr(cp) + "x" for cp in LETTER_FOLD] + [chr(cp) + "x" for cp in range(0xFB00, 0xFB07)]
    texts += ["ב" + chr(cp) + "ב" for lo, hi in DROPPED_MARKS for cp in range(lo, hi + 1)]
    conn = loader.connect(":memory:")
    wrong = [
        t for t in texts if conn.execute("SELECT cjk_fold(?)", (t,)).fetchone()[0] != fold_text(t)
    ]
    conn.close()
    assert len(texts) > 300 and wrong == []


@pytest.mark.parametrize("word", ["x²", "①", "ｍ²", "Ⅻ"])
def test_other_compatibility_forms_stay_as_written(tmp_path: Path, word: str) -> None:
    """x² is not x2 and ① not 1: only ligatures, which are typography alone, fold."""
    with SessionStore(tmp_path / "state.db") as st:
        st.add_session("s1", "cli")
        st.add_message("s1", "user", f"{word} here")
        plain = unicodedata.normalize("NFKC", word)
        assert plain != word
        assert _ids(st, plain, "fts_cjk") == []


def test_an_index_built_before_the_option_is_rebuilt_by_optimize_storage(tmp_path: Path) -> None:
    st = SessionStore(tmp_path / "state.db")
    st.add_session("s1", "cli")
    row = st.add_message("s1", "user", "שָׁלוֹם עולם")
    rebuild_cjk_index(st, " letters 1")
    status = "Greek accents, ё and vowel points not folded"
    rebuilt_by_optimize_storage(st, "letters", "שלום", row, status, "vowel points")


def test_the_word_index_finds_the_same_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The opt-in word index (plain unicode61) keeps ά and ё; the CJK index marks the
    words ``letters 1`` changed (glue marks), so the ``fts5`` route finds them too,
    though the letter keeps its byte length there (ά -> α)."""
    monkeypatch.setenv("HERMES_WORD_FTS", "1")
    with SessionStore(tmp_path / "state.db") as st:
        st.add_session("s1", "cli")
        rows = {w: st.add_message("s1", "user", f"{w} x") for w in ("άλφα", "αλφα", "ещё", "еще")}
        st.optimize_storage(vacuum=False)
        for query, pair in (("αλφα", ("άλφα", "αλφα")), ("еще", ("ещё", "еще"))):
            expected = sorted(rows[w] for w in pair)
            assert sorted(_ids(st, query, "fts5")) == expected, query
            assert sorted(_ids(st, query, "fts_cjk")) == expected, query


def test_the_scan_marks_the_whole_word_with_its_marks(tmp_path: Path) -> None:
    """The LIKE scan's snippet marks the word as written: its points, harakat and
    decomposed syllables inside the mark, not the query's length of characters."""
    import unicodedata

    words = ["שָׁלוֹם", "مَرْحَبًا", unicodedata.normalize("NFD", "한국어"), "ｶﾞｷﾞ"]
    with SessionStore(tmp_path / "state.db") as st:
        st.add_session("s1", "cli")
        st.add_message("s1", "user", "say " + " and ".join(words) + " again")
        for word, query in zip(words, ["שלום", "مرحبا", "한국어", "ガギ"]):
            found = st.search(query, route="like_scan")
            assert f">>>{word}<<<" in found.rows[0]["snippet"], query


def test_a_read_only_open_finds_the_rows_the_sqlite3_shell_left_pending(tmp_path: Path) -> None:
    """Rows written without the extension wait for the CJK index; a read-only open
    cannot index them and reads them by the LIKE scan, which folds as the index."""
    import shutil

    path = tmp_path / "state.db"
    with SessionStore(path) as st:
        st.add_session("s1", "cli")
        indexed = [st.add_message("s1", "user", f"{a} indexed") for a, _ in SAME]
    shell = shutil.which("sqlite3")
    assert shell is not None
    values = ", ".join(f"('s1', 'user', '{a} pending', 1700000000)" for a, _ in SAME)
    sql = f"INSERT INTO messages(session_id, role, content, timestamp) VALUES {values};"
    subprocess.run([shell, str(path), sql], check=True, timeout=60)
    with SessionStore(path, readonly=True) as st:
        assert st.status()["cjk_pending"] == len(SAME)
        for (_, typed), row in zip(SAME, indexed):
            found = sorted(r["id"] for r in st.search(typed).rows)
            assert found == [row, row + len(SAME)], typed
