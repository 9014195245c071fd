"""A letter with two diacritics folds like one with one (``remove_diacritics 2``).

The docs promise that the indexes fold diacritics (``cafe`` finds "Café").
unicode61's default (``remove_diacritics 1``) leaves a letter alone when it
carries more than one: Vietnamese writes most vowels so (``ệ``, ``ế``, ``ở``),
and ``viet`` or ``tieng`` found nothing in "Tiếng Việt".  The store's CJK
index is built with ``remove_diacritics 2``; one built before keeps answering
as it did, ``status`` says what it misses, and ``optimize-storage`` rebuilds it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _support import needs_extension, rebuild_cjk_index, rebuilt_by_optimize_storage

from hermes_fts.store import SessionStore

pytestmark = needs_extension

TEXTS = ["Tiếng Việt có dấu", "Phở bò ở Hà Nội", "café au lait", "plain text"]


def _store(path: Path) -> tuple[SessionStore, list[int]]:
    st = SessionStore(path)
    st.add_session("s1", "cli")
    return st, [st.add_message("s1", "user", text) for text in TEXTS]


@pytest.mark.parametrize(
    "query, row",
    [
        ("viet", 0),
        ("tieng", 0),
        ("Tiếng Việt", 0),
        ('"tieng viet"', 0),
        ("pho", 1),
        ("noi", 1),
        ("cafe", 2),
    ],
)
def test_words_are_found_without_their_diacritics(tmp_path: Path, query: str, row: int) -> None:
    st, ids = _store(tmp_path / "state.db")
    with st:
        found = st.search(query)
        assert found.route == "fts_cjk"
        assert [r["id"] for r in found.rows] == [ids[row]], query


def test_an_index_built_before_the_option_is_rebuilt_by_optimize_storage(tmp_path: Path) -> None:
    st, ids = _store(tmp_path / "state.db")
    rebuild_cjk_index(st, " remove_diacritics 2")
    assert [r["id"] for r in st.search("việt").rows] == [ids[0]]
    rebuilt_by_optimize_storage(st, "diacritics", "viet", ids[0], "two diacritics", "Việt")


def test_the_opt_in_word_index_folds_them_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``HERMES_WORD_FTS=1`` the word index answers Latin queries; built with
    unicode61's default it found nothing for ``viet`` where a store without it did.
    One built so before is not served (the CJK index answers, the same rows)
    until optimize-storage rebuilds it."""
    from hermes_fts.index import maintain as indexing
    from hermes_fts.index import schema

    monkeypatch.setenv("HERMES_WORD_FTS", "1")
    path = tmp_path / "state.db"
    st, ids = _store(path)
    with st:
        for query in ("viet", "tieng", "cafe"):
            found = st.search(query)
            assert found.route == "fts5" and found.rows, query
        old_sql = schema.DDL[schema.BASE].table_sql.replace(
            f", tokenize='{schema.WORD_TOKENIZE}'", ""
        )
        with indexing.write_txn(st._conn):
            st._conn.execute(f"DROP TABLE {schema.BASE}")
            st._conn.execute(old_sql)
            st._conn.execute(f"INSERT INTO {schema.BASE}({schema.BASE}) VALUES ('rebuild')")
    with SessionStore(path) as st:
        assert "word_outdated" in st.status()["needs_optimize"]
        found = st.search("viet")
        assert found.route == "fts_cjk" and [r["id"] for r in found.rows] == [ids[0]]
        st.optimize_storage(vacuum=False)
        assert not st.optimize_needed()
        found = st.search("viet")
        assert found.route == "fts5" and [r["id"] for r in found.rows] == [ids[0]]


# Words whose folding the tokenizer decides: Latin loses its diacritics, Greek
# its accents and ё its dots, a ligature is its letters (letters 1), other
# compatibility forms stay, case folds to one character.
FOLDED_WORDS = [
    "ещё",
    "ЁЛКА",
    "Ελληνικά",
    "ΣΟΦΊΑ",
    "σοφίας",
    "ﬁnance",
    "Straße",
    "x²",
    "İstanbul",
    "Việt",
    "Phở",
    "ſun",
    "naïve",
    "ǅemal",
    "ⅻ",
]


@pytest.mark.parametrize("word", FOLDED_WORDS)
def test_the_python_model_folds_a_word_as_the_index_does(word: str) -> None:
    """``positions`` (NEAR on the LIKE scan) reads a word as the CJK index's tokenizer
    does; it folded by NFKD, so ``еще`` was NEAR ``раз`` in "ещё раз" there only."""
    from hermes_fts import loader
    from hermes_fts._index_text import positions
    from hermes_fts.index.schema import CJK_TOKENIZE

    options = CJK_TOKENIZE.split()[1:]
    real = [t.text for t in loader.tokenize(word, *options, query=True)]
    model = [next(iter(p)) for p in positions(word, document=False)]
    assert model == real


@pytest.mark.parametrize(
    "query",
    ["NEAR(еще раз, 2)", "NEAR(ещё раз, 2)", "NEAR(ελληνικα γραμματα, 2)", "NEAR(finance team, 2)"],
)
def test_near_finds_the_same_rows_on_the_index_and_the_scan(tmp_path: Path, query: str) -> None:
    with SessionStore(tmp_path / "state.db") as st:
        st.add_session("s1", "cli")
        for text in ("ещё раз мир", "Ελληνικά γράμματα εδώ", "ﬁnance team"):
            st.add_message("s1", "user", text)
        index = [r["id"] for r in st.search(query, route="fts_cjk").rows]
        scan = [r["id"] for r in st.search(query, route="like_scan").rows]
        assert index == scan, query
