"""Text written decomposed (NFD) is found by text typed composed (NFC), and back.

macOS writes file names decomposed, so a pasted name holds ``cafe`` and a
combining accent, Hangul as conjoining jamo (U+1100..) and ``か`` with a
combining voiced mark; the same words typed on a keyboard are composed.  A
reader sees one word either way, and every route must find the same rows.
"""

from __future__ import annotations

import shutil
import subprocess
import unicodedata
from pathlib import Path

import pytest
from _support import needs_extension, rebuild_cjk_index, rebuilt_by_optimize_storage

from hermes_fts._index_text import compose
from hermes_fts.store import SessionStore

pytestmark = needs_extension

WORDS = ["café", "한국어", "がっこう", "Tiếng Việt", "Ελληνικά"]
ROUTES = ["fts_cjk", "like_scan", "no_extension"]


def _ids(path: Path, route: str, query: str, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    if route == "no_extension":
        monkeypatch.setenv("HERMES_CJK_FTS", "0")
    with SessionStore(path) as st:
        found = st.search(query, route=None if route == "no_extension" else route)
        assert found.route == ("like_scan" if route == "no_extension" else route)
        return sorted(r["id"] for r in found.rows)


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("word", WORDS)
def test_a_decomposed_query_finds_the_composed_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, word: str, route: str
) -> None:
    path = tmp_path / "state.db"
    with SessionStore(path) as st:
        st.add_session("s1", "cli")
        row = st.add_message("s1", "user", f"{word} in a message")
        st.add_message("s1", "user", "something else entirely")
    query = unicodedata.normalize("NFD", word)
    assert query != word
    assert _ids(path, route, query, monkeypatch) == [row]


@pytest.mark.parametrize(
    "text",
    [
        "\uf900\uf91d",  # CJK compatibility ideographs: NFC maps them alone
        "\u2126 and \u212b",  # the ohm and angstrom signs
        "\u0301 a mark first",
        "plain ascii",
    ],
)
def test_composing_leaves_a_character_without_marks_as_written(text: str) -> None:
    assert compose(text) == text


def test_composing_joins_marks_and_jamo_to_the_letter_before() -> None:
    assert compose("cafe\u0301 \u1112\u1161\u11ab \uac00\u11a8 \u304b\u3099") == "café 한 각 が"


# Text stored decomposed: the CJK index composes it (``compose 1``), and so does
# cjk_fold() for the LIKE scan.  Cyrillic and Greek matter as much as Hangul:
# unicode61 drops a combining mark, so a decomposed й was и and ё was е.
STORED = ["한국어", "がっこう", "мой", "ёлка", "άλφα", "café", "Tiếng Việt"]


def _decomposed_store(path: Path) -> tuple[SessionStore, list[int]]:
    st = SessionStore(path)
    st.add_session("s1", "cli")
    ids = [st.add_message("s1", "user", unicodedata.normalize("NFD", w) + " here") for w in STORED]
    st.add_message("s1", "user", "мои 하 がつこう")  # what dropping marks made of them
    return st, ids


@pytest.mark.parametrize("route", ["fts_cjk", "like_scan"])
def test_decomposed_text_is_found_by_the_composed_query(tmp_path: Path, route: str) -> None:
    st, ids = _decomposed_store(tmp_path / "state.db")
    with st:
        for word, row in zip(STORED, ids):
            found = st.search(word, route=route)
            assert found.route == route
            assert [r["id"] for r in found.rows] == [row], word


def test_decomposed_text_the_sqlite3_shell_wrote_is_found_before_and_after_indexing(
    tmp_path: Path,
) -> None:
    """Rows a process without the extension wrote wait for the CJK index; a search
    reads them by the LIKE scan meanwhile, and both find the decomposed text."""
    path = tmp_path / "state.db"
    with SessionStore(path) as st:
        st.add_session("s1", "cli")
        st.add_message("s1", "user", "first")
    text = unicodedata.normalize("NFD", "한국어 мой")
    shell = shutil.which("sqlite3")
    assert shell is not None
    sql = (
        "INSERT INTO messages(session_id, role, content, timestamp) "
        f"VALUES ('s1', 'user', '{text}', 1700000000);"
    )
    subprocess.run([shell, str(path), sql], check=True, timeout=60)
    with SessionStore(path) as st:
        waiting = [len(st.search(q).rows) for q in ("한국어", "мой")]
        st.sync()
        indexed = [st.search(q) for q in ("한국어", "мой")]
        assert {r.route for r in indexed} == {"fts_cjk"}
        assert waiting == [len(r.rows) for r in indexed] == [1, 1]


@pytest.mark.parametrize(
    ("query", "last"),
    [
        ("cafe\u0301 " * 500 + "deploy", "café"),  # 3,006 characters, 2,506 composed
        ("\u1112\u1161\u11ab" * 1000 + " x", "한" * 682),  # a paste of jamo: 3 to 1
    ],
)
def test_a_long_decomposed_query_is_cut_between_terms_with_a_note(query: str, last: str) -> None:
    """Regression: the query's first 2,049 characters composed to fewer than 2,048,
    so nothing was cut and nothing said: its last word was the head of a word
    (``caf``, a syllable of the jamo it began) and the rest went unsearched."""
    from hermes_fts.query.syntax import parse_query

    parsed = parse_query(query)
    assert parsed.terms[-1].text == last
    assert any(n.startswith("the query was cut to ") for n in parsed.notes), parsed.notes


def test_every_composition_folds_as_nfc() -> None:
    """cjk_fold() (the tokenizer's characters) composes every pair NFC composes:
    kana with both voiced marks, each Hangul syllable's jamo, the table's pairs."""
    from hermes_fts import loader

    conn = loader.connect(":memory:")
    decomposed = [
        chr(cp)
        for cp in range(0xA0, 0x30000)
        if len(unicodedata.normalize("NFD", chr(cp))) > 1
        and unicodedata.normalize("NFC", unicodedata.normalize("NFD", chr(cp))) == chr(cp)
    ]
    kana = [chr(cp) + m for cp in range(0x3041, 0x3100) for m in "\u3099\u309a"]
    wrong = []
    for text in decomposed + kana:
        nfd, nfc = unicodedata.normalize("NFD", text), unicodedata.normalize("NFC", text)
        folded = conn.execute("SELECT cjk_fold(?), cjk_fold(?)", (nfd, nfc)).fetchone()
        if folded[0] != folded[1]:
            wrong.append(text)
    conn.close()
    assert len(decomposed) > 11172 and wrong == []


@pytest.mark.parametrize("word", STORED + ["ў", "Ǖ", "ộ", "\u0b4b"])
def test_the_python_model_composes_as_the_tokenizer_does(word: str) -> None:
    from hermes_fts import loader
    from hermes_fts._index_text import positions
    from hermes_fts.index.schema import CJK_TOKENIZE

    options = CJK_TOKENIZE.split()[1:]
    for text in (word, unicodedata.normalize("NFD", word)):
        real = [t.text for t in loader.tokenize(text, *options, query=True)]
        model = [next(iter(p)) for p in positions(text, document=False)]
        assert model == real == [t.text for t in loader.tokenize(word, *options, query=True)]


def test_an_index_built_before_the_option_is_rebuilt_by_optimize_storage(tmp_path: Path) -> None:
    st, ids = _decomposed_store(tmp_path / "state.db")
    rebuild_cjk_index(st, " compose 1")
    assert st.search("한국어").rows == []  # the old tokens: it answers as it did
    rebuilt_by_optimize_storage(
        st, "compose", "한국어", ids[0], "decomposed Hangul and kana not composed", "decomposed"
    )
