"""Query text a fuzzer found mishandled, through ``SessionStore.search`` on every
route, the ``session_search`` tool and ``hermes-fts search --json``: each case
is an answer (never a traceback) with the same rows on every route."""

from __future__ import annotations

from typing import Any

import pytest
from _support import needs_extension
from _tool_fixtures import one_message_each

from hermes_fts.store import SessionStore

pytestmark = needs_extension  # the fts_cjk route and the folding LIKE scan are under test

# fts5 is the opt-in word index (open_store(word_index=True)); None: the store's choice
ROUTES = (None, "fts5", "fts_cjk", "like_scan")

ROWS = {
    "tokyo": "database notes on 東京 servers",
    "quoted": 'the d"e deploy step',
    "lisbon": "we deployed the last release from Lisbon",
    "refused": "connection refused again",
    "osaka": "大阪のたこ焼き屋に行った",
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    for st, _path in one_message_each(tmp_path_factory, "fuzzed", ROWS):
        yield st


def _found(st: SessionStore, query: str, route: str | None) -> set[str]:
    result = st.search(query, limit=50, route=route, fields=("id", "session_id"))
    return {row["session_id"] for row in result.rows}


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize(
    ("query", "wanted"),
    [
        ("database＂東京", {"tokyo"}),  # a lone full-width quote inside a word
        ("NEAR(ｄ＂ｅ deploy)", {"quoted"}),  # and inside a NEAR term
    ],
)
def test_a_full_width_quote_in_a_term_is_searched_on_the_like_scan(
    store: Any, route: str | None, query: str, wanted: set[str]
) -> None:
    # The LIKE check's term was folded after it was quoted: ＂ became a '"' that
    # closed the quoted term, and the check raised inside SQLite.
    assert _found(store, query, route) == wanted


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("\u200f last week", "last week"),  # a right-to-left mark pasted before a question
        (
            "\ufeffdeployment\u200e releases",
            "deployment releases",
        ),  # a file's BOM, a left-to-right mark
    ],
)
def test_an_invisible_format_character_beside_words_is_no_word(
    store: Any, route: str | None, typed: str, meant: str
) -> None:
    # Read as a word of its own, the mark was the question's one other word: the
    # time words were left out and a search for the mark found nothing; glued to a
    # word, it kept the word from being searched in its other forms.
    found = _found(store, typed, route)
    assert found == _found(store, meant, route)
    assert "lisbon" in found


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("query", ["refused的", "天refused"])
def test_a_word_glued_to_one_cjk_character_in_no_message_is_searched_by_its_word(
    store: Any, route: str | None, query: str
) -> None:
    # Searched only as written, a word no message holds so answered nothing with
    # no note, though its Latin word is in a message (a name glued to two CJK
    # characters, Python脚本, was read again by its words already).
    result = store.search(query, limit=50, route=route, fields=("id", "session_id"))
    assert {row["session_id"] for row in result.rows} == {"refused"}
    assert any("is in no message as written" in note for note in result.notes), result.notes


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("query", ['"' + "refused " * 400, 'deploy "x' + " refused" * 400])
def test_a_long_query_with_an_unmatched_quote_is_cut_at_the_limit(
    store: Any, route: str | None, query: str
) -> None:
    # The cut read the '"' that closes nothing as a phrase running to the end: the
    # query was refused as one term over the limit, or cut back to the quote.
    result = store.search(query, limit=50, route=route, fields=("id", "session_id"))
    assert "refused" in {row["session_id"] for row in result.rows}
    cut = next(note for note in result.notes if note.startswith("the query was cut to"))
    assert int(cut.split()[5]) > 2000, cut
    assert "ignored an unmatched '\"'" in result.notes


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize(
    "query", ["「大阪」「たこ焼き」", '"大阪"「たこ焼き」', "“大阪”“たこ焼き”"]
)
def test_quoted_phrases_that_touch_are_two_phrases(
    store: Any, route: str | None, query: str
) -> None:
    # Read as '"' each, the quotes between them made '""', a quote inside one
    # phrase: '大阪"たこ焼き' was searched, which the note did not say.
    result = store.search(query, limit=50, route=route, fields=("id", "session_id"))
    assert [row["session_id"] for row in result.rows] == ["osaka"]


@pytest.mark.parametrize("route", ROUTES)
def test_a_common_word_typed_in_full_width_is_left_out_like_its_ascii(
    store: Any, route: str | None
) -> None:
    # Every index reads ｔｈｅ as "the", but the best match did not know it for a
    # common word: it decided the match and found every row holding "the".
    typed = store.search("refused ｔｈｅ", limit=50, route=route, fields=("id", "session_id"))
    assert {row["session_id"] for row in typed.rows} == {"refused"}
    assert _found(store, "refused the", route) == {"refused"}
    assert any("left out common words" in note and "ｔｈｅ" in note for note in typed.notes)
