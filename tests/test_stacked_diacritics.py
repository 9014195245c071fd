"""A letter with two diacritics folds like one with one (``remove_diacritics 2``).

The docs promise that the indexes fold diacritics (``cafe`` finds "Café").
unicode61's default (``remove_diacritics 1``) leaves a letter alone when it
carries more than one: Vietnamese writes most vowels so (``ệ``, ``ế``, ``ở``),
and ``viet`` or ``tieng`` found nothing in "Tiếng Việt".  The store's CJK
index is built with ``remove_diacritics 2``; one built before keeps answering
as it did, ``status`` says what it misses, and ``optimize-storage`` rebuilds it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from _support import needs_extension, rebuild_cjk_index

import hermes_fts
from hermes_fts.index.schema import CJK
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
    path = tmp_path / "state.db"
    st, ids = _store(path)
    rebuild_cjk_index(st, " remove_diacritics 2")
    assert st.status()["indexes"][CJK]["diacritics"] is False
    assert "cjk_outdated" in st.status()["needs_optimize"]
    assert st.search("viet").rows == []  # the old tokens: it answers as it did
    assert [r["id"] for r in st.search("việt").rows] == [ids[0]]
    note = hermes_fts.session_search(st, query="viet")["index_rebuild"]["note"]
    assert "Việt" in note and "optimize-storage" in note
    st.close()
    status = subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", "status", "--db", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "two diacritics" in status.stdout
    with SessionStore(path) as st:
        st.optimize_storage(vacuum=False)
        assert st.status()["indexes"][CJK]["diacritics"] is True
        assert not st.optimize_needed()
        assert [r["id"] for r in st.search("viet").rows] == [ids[0]]
