"""Symbols newer than unicode61's tables (``symbols 1``): separators, not letters.

unicode61 classifies characters by Unicode 6.1 and reads any code point
assigned since as a letter, so an emoji of Unicode 7 or later glued to a word
(``deploy🫠``, ``👍🏻ok``, ``100₽``) made one token of both and a search for the
word found nothing.  With ``symbols 1`` (the store's CJK index) such a
symbol separates words, as the symbols unicode61 knows do, and as the query
side (``_index_text.segments``) always read them.
"""

from __future__ import annotations

import bisect
import itertools
import json

import pytest
from _support import needs_extension, rebuild_cjk_index, rebuilt_by_optimize_storage

import hermes_fts
from hermes_fts import loader
from hermes_fts._index_text import positions
from hermes_fts.index.schema import CJK_TOKENIZE
from hermes_fts.store import SessionStore

pytestmark = needs_extension

GLUED = [
    ("deploy🫠 now please", "deploy"),  # U+1FAE0, Unicode 14
    ("ship🥲it tomorrow", "it"),  # between two words
    ("👍🏻ok thanks", "ok"),  # a skin tone modifier (Unicode 8) after an old emoji
    ("paid 100₽ for hosting", "100"),  # the ruble sign (Unicode 7)
    ("recording⏺started", "recording"),  # a media control (Unicode 7)
    ("猫🫠狗 so cute", "狗"),  # between CJK characters
]


def words(text: str, *options: str) -> list[str]:
    return [t.text for t in loader.tokenize(text, *options) if not t.colocated]


@pytest.mark.parametrize(("text", "word"), GLUED)
def test_a_late_symbol_separates_the_words_around_it(text, word):
    tokens = words(text, "symbols", "1")
    assert word in tokens
    assert words(text) != tokens  # unicode61 alone reads the symbol as a letter
    assert not any(ord(ch) > 0x2000 and not ch.isalnum() for t in tokens for ch in t)


def _token_counts(conn, samples: list[str]) -> list[int]:
    """How many words the CJK index's tokenizer reads in each of ``samples``."""
    options = CJK_TOKENIZE.split()[1:]
    text = "\n".join(samples)
    ends = list(itertools.accumulate(len(s.encode()) + 1 for s in samples))
    sql = f"SELECT cjk_tokens(?{', ?' * len(options)})"
    (raw,) = conn.execute(sql, (text, *options)).fetchone()
    counts = [0] * len(samples)
    for token in json.loads(raw):
        if not token["colocated"]:
            counts[bisect.bisect_right(ends, token["start"])] += 1
    return counts


def test_the_tokenizer_and_the_query_side_agree_on_every_code_point():
    """Every code point, inside a word and at its start, makes the words in the
    tokenizer (the CJK index's options) that ``_index_text.segments``, the query
    side's model, reads there.  Regression: a code point unassigned in Unicode
    6.1, which unicode61 reads as a letter (a mark of Unicode 7, U+1AB0; a
    letter of Unicode 11, U+1DA6B), separated words on the query side, so the
    LIKE scan found ``deploy`` in "deploy\u1ab0x" and no index did; unicode61's
    diacritics go on a word (``за\u0301мок`` is one) and a New Tai Lue vowel sign
    (a mark in 6.1) does not."""
    conn = hermes_fts.connect(":memory:")
    code_points = [cp for cp in range(0x80, 0x110000) if not 0xD800 <= cp <= 0xDFFF]
    disagree = []
    for i in range(0, len(code_points), 4096):
        chunk = code_points[i : i + 4096]
        samples = [f"x{chr(cp)}y {chr(cp)}y" for cp in chunk]
        for cp, sample, count in zip(chunk, samples, _token_counts(conn, samples)):
            if count != len(positions(sample, document=False)):
                disagree.append(f"U+{cp:04X}")
    assert disagree == []


def test_the_option_takes_0_or_1():
    conn = hermes_fts.connect(":memory:")
    for bad in ("2", "yes"):
        with pytest.raises(Exception, match="error in tokenizer constructor"):
            conn.execute(
                f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='cjk_unicode61 symbols {bad}')"
            )
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='cjk_unicode61 symbols 0')")
    conn.execute("INSERT INTO t VALUES ('deploy🫠')")
    assert conn.execute("SELECT count(*) FROM t WHERE t MATCH 'deploy'").fetchone() == (0,)


def _store(path):
    st = SessionStore(path)
    st.add_session("s1", source="cli")
    ids = [st.add_message("s1", role="user", content=text) for text, _word in GLUED]
    st.add_message("s1", role="assistant", content="nothing glued here at all")
    return st, ids


def test_a_store_finds_a_word_glued_to_a_late_symbol(tmp_path):
    st, ids = _store(tmp_path / "state.db")
    for (text, word), rowid in zip(GLUED, ids):
        result = st.search(word)
        assert result.route == "fts_cjk", word
        assert rowid in [r["id"] for r in result.rows], (word, text)
    # A phrase reads across the symbol, as across a space.
    assert [r["id"] for r in st.search('"ship it"').rows] == [ids[1]]
    st.close()


def test_an_index_built_before_the_option_is_rebuilt_by_optimize_storage(tmp_path):
    st, ids = _store(tmp_path / "state.db")
    rebuild_cjk_index(st, " symbols 1")
    rebuilt_by_optimize_storage(st, "symbols", "deploy", ids[0], "newer emoji read as letters")


def test_answers_on_an_index_built_before_the_option_say_what_they_miss(tmp_path):
    """Such an index misses rows (a word glued to a newer emoji), so the note on every
    answer says so beside what only slows it, for the tool and for the plugin."""
    from hermes_fts.hermes import plugin

    path = tmp_path / "state.db"
    st, ids = _store(path)
    rebuild_cjk_index(st, " symbols 1")
    out = hermes_fts.session_search(st, query="deploy")
    note = out["index_rebuild"]["note"]
    assert "deploy🫠" in note and "is not found" in note and "optimize-storage" in note
    payload: dict = {}
    plugin._annotate(st.index_state(), payload, path)
    assert "deploy🫠" in payload["index_rebuild"]["note"]
    st.optimize_storage(vacuum=False)
    assert "index_rebuild" not in hermes_fts.session_search(st, query="deploy")
    payload = {}
    plugin._annotate(st.index_state(), payload, path)
    assert "index_rebuild" not in payload
    st.close()


@pytest.mark.parametrize("route", ["fts5", "fts_cjk", "like_scan"])
def test_a_query_with_a_late_symbol_finds_the_same_rows_on_every_route(tmp_path, route):
    """Regression: on the word index (``HERMES_WORD_FTS=1``, the ``fts5`` route)
    unicode61 read ``🫠`` in the query as a letter, so ``deploy🫠`` found only the
    row that glued the same symbol, and ``"deploy 🫠"`` found nothing, while the
    note said the symbol was not searched."""
    from _tool_fixtures import conversation, open_store

    st = open_store(tmp_path / "state.db", word_index=True)
    said = ["deploy the staging cluster", "deploy🫠 now please", "nothing here"]
    ids = conversation(st, "s1", [("user", text) for text in said])
    for query in ("deploy🫠", '"deploy 🫠"', "deploy 🫠"):
        result = st.search(query, route=route)
        assert sorted(r["id"] for r in result.rows) == ids[:2], (query, route, result.route)
    st.close()


@pytest.mark.parametrize("route", ["fts5", "fts_cjk", "like_scan"])
def test_a_word_glued_to_a_code_point_newer_than_the_tables_is_one_word_on_every_route(
    tmp_path, route
):
    """Regression: unicode61 reads a mark of Unicode 7 (U+1AB0) or a character
    of a later version (U+1EB3E, U+1093C, U+1DA6B) glued to a word as part of
    the word, where the LIKE scan read it as a space: ``deploy`` found
    "deploy\\u1ab0x now" there alone, and ``deploy-x`` found it on no index."""
    from _tool_fixtures import conversation, open_store

    st = open_store(tmp_path / "state.db", word_index=True)
    said = [
        "deploy\u1ab0x now",
        "ship\U0001eb3eit today",
        "ok\U0001093cgo",
        "\U0001da6b배포했어 어제",
        "deploy x to staging, ship it, ok go",
    ]
    ids = conversation(st, "s1", [("user", text) for text in said])
    expected = {
        "deploy": [ids[4]],
        "deploy-x": [ids[4]],
        '"ship it"': [ids[4]],
        "go": [ids[4]],
        "deploy\u1ab0x": [ids[0]],
        "ship\U0001eb3eit": [ids[1]],
        "\U0001da6b배포했어": [ids[3]],
    }
    for query, rows in expected.items():
        result = st.search(query, route=route)
        assert sorted(r["id"] for r in result.rows) == rows, (query, route, result.route)
    st.close()
