"""Lean storage (issue 35): the trigram index is opt-in (docs/DESIGN.md §9.2 item 4).

Searches read it only while the CJK index is not served, and a LIKE scan then
returns the same rows, so optimize-storage builds none and drops one an older
version built; ``HERMES_TRIGRAM_FTS=1`` keeps it.  A store without it answers
every query class with the same rows as a store with it, whether or not the
CJK index is served, and ``status --json`` names it as not kept.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _opt_in import ENABLED, MIXED_TURNS, OptIn, stop_serving_cjk
from _tool_fixtures import conversation

from hermes_fts.index import schema
from hermes_fts.index.lifecycle import NOT_KEPT, TRIGRAM_INSTEAD
from hermes_fts.store import SessionStore

TURNS = [
    *MIXED_TURNS,
    ("user", "数 is one character, 数据 two, 数据库 three"),
]
# Latin words, phrases, prefixes, CJK of 1, 2 and 3+ characters, mixed, NOT,
# Latin glued to CJK, identifiers, and substrings only a trigram index matches.
QUERIES = [
    "deploy",
    "staging cluster",
    '"staging cluster"',
    "deplo*",
    "数",
    "数据",
    "数据库迁移",
    "服务端升级",
    "漓江 Guangxi",
    "deploy NOT cluster",
    "数据库 NOT 方案",
    "youer",
    "修改youer服务端",
    "my-app.config.ts",
    "config.ts",
    "第1章",
    "ラーメン",
    "한국어",
    "eploy",
    "广西 OR 桂林",
]


TRIGRAM = OptIn(
    index=schema.TRIGRAM,
    switches=("HERMES_TRIGRAM_FTS", "HERMES_CJK_FTS"),
    turns=TURNS,
    queries=QUERIES,
    # Ours, and any under Hermes' own trigram name.
    names=(f"{schema.TRIGRAM}%", "messages_fts_trigram%"),
    needs_trigram=True,
)
home = TRIGRAM.fixture()


def test_a_new_store_has_no_trigram_index(home: Path) -> None:
    trigram = TRIGRAM.optimize_new(home)
    assert not trigram["exists"] and trigram["reason"] == f"not kept: {NOT_KEPT}"


def test_an_existing_trigram_index_is_dropped_by_optimize(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert TRIGRAM.keep(home, monkeypatch)["exists"]
    monkeypatch.delenv("HERMES_TRIGRAM_FTS")
    with SessionStore(home / "state.db", readonly=True) as store:
        assert "trigram_to_drop" in store.index_state()["needs_optimize"]
    report = TRIGRAM.status(home)
    assert report["not_kept"][schema.TRIGRAM]["exists"] is True
    assert not TRIGRAM.optimize(home)["exists"] and TRIGRAM.objects(home) == []
    TRIGRAM.stays_dropped(home, "新的数据库消息", "新的数据库")  # later writes keep it dropped


@pytest.mark.parametrize("config", [None, ENABLED])
def test_opt_in_keeps_it_with_or_without_the_plugin(
    home: Path, monkeypatch: pytest.MonkeyPatch, config: str | None
) -> None:
    TRIGRAM.keep_served(home, monkeypatch, config)
    assert schema.TRIGRAM not in TRIGRAM.status(home, HERMES_TRIGRAM_FTS="1")["not_kept"]
    with SessionStore(home / "state.db", readonly=True) as store:
        rows = store.search_messages("数据库迁移", route="trigram")
        assert [r["session_id"] for r in rows] == ["s1", "s1"]


def test_status_names_the_index_not_kept_and_what_answers_instead(home: Path) -> None:
    TRIGRAM.optimize(home)
    report = TRIGRAM.status(home)
    missing = report["not_kept"][schema.TRIGRAM]
    assert missing == {"why": NOT_KEPT, "instead": TRIGRAM_INSTEAD, "exists": False}
    assert report["indexes"][schema.TRIGRAM]["reason"] == f"not kept: {NOT_KEPT}"
    assert report["needs_optimize"] == []
    human = TRIGRAM.status(home, human=True)
    assert f"{schema.TRIGRAM}" in human and "HERMES_TRIGRAM_FTS=1" in human


@pytest.mark.parametrize("cjk", ["served", "no_extension", "stale"])
def test_without_the_trigram_index_every_query_finds_the_same_rows(
    home: Path, monkeypatch: pytest.MonkeyPatch, cjk: str
) -> None:
    kept = TRIGRAM.kept_copy(home, monkeypatch)
    # What the word and CJK indexes answer: the meaning every route keeps.
    reference = TRIGRAM.answers(home / "state.db")
    # The CJK index not served: a process without the extension, or a rebuild pending.
    stop_serving_cjk(cjk, monkeypatch, kept / "state.db", home / "state.db")
    with SessionStore(home / "state.db", readonly=True) as store:
        assert store.index_state()[schema.CJK]["served"] is (cjk == "served")
    monkeypatch.setenv("HERMES_TRIGRAM_FTS", "1")
    with_trigram = TRIGRAM.answers(kept / "state.db")
    monkeypatch.delenv("HERMES_TRIGRAM_FTS")
    without = TRIGRAM.answers(home / "state.db")
    for query in QUERIES:
        assert without[query][0] != "trigram"
        assert without[query][1] == reference[query][1], query
        if with_trigram[query][0] != "trigram":
            assert with_trigram[query][1] == reference[query][1], query
    # Trigram alone reads Latin words as substrings (docs/QUERY.md): "eploy" and
    # "redeploy" are in no other route's answer.
    assert {q for q in QUERIES if not without[q][1]} <= {"eploy"}
    # The comparison reached the trigram route where the CJK index is not served;
    # beside it, what that index cannot represent (第1章) holds ASCII, which stored
    # text may spell in full width, so the CJK index proposes and LIKE decides.
    routes = {route for route, _ in with_trigram.values()}
    assert "trigram" in routes if cjk != "served" else "fts_cjk_checked" in routes


def test_the_plugin_adds_no_rebuild_note_for_the_absent_trigram(home: Path) -> None:
    answer = TRIGRAM.plugin_answer(home, "数据库")
    assert answer["engine"].startswith("hermes-fts") and answer["count"] == 1
    assert "index_rebuild" not in answer


# Text the fold makes of another spelling: full-width letters, a ligature, Greek
# accents, ё, Hebrew points.  The trigram index holds it raw.
FOLDED_ROWS = {
    "ＦＵＬＬ　ＷＩＤＴＨ text": "width",
    "the ﬁle system": "file",
    "άλφα βήτα": "αλφα",
    "ещё раз": "еще",
    "שָׁלוֹם עולם": "שלום",
}


def test_the_trigram_index_misses_no_row_the_fold_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the extension is loaded and the CJK index is not served, a query the fold
    leaves as it is (``width``) went to the trigram index, which holds ``ＷＩＤＴＨ``
    raw: the row the LIKE scan and the CJK index find was silently missing."""
    monkeypatch.setenv("HERMES_TRIGRAM_FTS", "1")
    db = tmp_path / "state.db"
    with SessionStore(db) as store:
        if not (store.cjk_available and store.trigram_available):
            pytest.skip("needs cjk_unicode61 and the trigram tokenizer")
        ids = conversation(store, "s1", [("user", text) for text in FOLDED_ROWS])
    stop_serving_cjk("stale", monkeypatch, db)
    with SessionStore(db, readonly=True) as store:
        assert store.index_state()[schema.TRIGRAM]["served"]
        for (text, query), row in zip(FOLDED_ROWS.items(), ids):
            assert [r["id"] for r in store.search(query).rows] == [row], (query, text)
