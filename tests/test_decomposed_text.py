"""Text written decomposed (NFD) is found by text typed composed (NFC), and back.

macOS writes file names decomposed, so a pasted name holds ``cafe`` and a
combining accent, Hangul as conjoining jamo (U+1100..) and ``か`` with a
combining voiced mark; the same words typed on a keyboard are composed.  A
reader sees one word either way, and every route must find the same rows.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from _support import needs_extension

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
