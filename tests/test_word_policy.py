"""Lean storage (issue 35): the word index is opt-in (docs/DESIGN.md §5.2, §9.2 item 6).

The CJK index reads Latin words as unicode61 does and splits them off CJK, so
it answers every Latin query exactly; by default a store keeps no word index,
optimize-storage drops one an older version built, and ``HERMES_WORD_FTS=1``
keeps it.  A store without it answers every query class with the same rows as
a store with it: with the CJK index served, stale, behind on rows a process
without the extension wrote, or with the extension switched off.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from _opt_in import ENABLED, MIXED_TURNS, OptIn, stop_serving_cjk

from hermes_fts.index import schema
from hermes_fts.index.lifecycle import WORD_INSTEAD, WORD_NOT_KEPT
from hermes_fts.store import SessionStore

TURNS = [
    *MIXED_TURNS,
    ("tool", '{"path": "src/foo/bar-baz.py", "status": "deployed to ｓｔａｇｉｎｇ"}'),
    ("user", "Ｄｅｐｌｏｙ again, then check config.ts"),
]
# The rows holding a Latin word glued to CJK (修改youer服务端) or in full width.
GLUED_OR_WIDE = {5, 9, 10}
# Latin words, prefixes, phrases, AND/OR/NOT/NEAR, Latin glued to CJK,
# identifiers, full width, CJK of 1, 2 and 3+ characters, mixed.
QUERIES = [
    "deploy",
    "Deploy",
    "deplo*",
    "staging cluster",
    '"staging cluster"',
    "deploy AND staging",
    "deploy OR cluster",
    "deploy NOT cluster",
    "NEAR(staging cluster, 2)",
    "youer",
    "修改youer服务端",
    "my-app.config.ts",
    "config.ts",
    "src/foo/bar-baz.py",
    "ｓｔａｇｉｎｇ",
    "数",
    "数据库迁移",
    "漓江 Guangxi",
    "数据库 NOT 方案",
    "ラーメン",
    "한국어",
    "广西 OR 桂林",
]


WORD = OptIn(
    index=schema.BASE,
    switches=("HERMES_WORD_FTS", "HERMES_TRIGRAM_FTS", "HERMES_CJK_FTS"),
    turns=TURNS,
    queries=QUERIES,
    names=(f"{schema.BASE}%",),
)
home = WORD.fixture()


def test_a_new_store_has_no_word_index(home: Path) -> None:
    word = WORD.optimize_new(home)
    assert not word["exists"] and word["reason"] == f"not kept: {WORD_NOT_KEPT}"
    with SessionStore(home / "state.db", readonly=True) as store:
        assert store.search("deploy").route == "fts_cjk"


def test_an_existing_word_index_is_dropped_by_optimize(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert WORD.keep(home, monkeypatch)["exists"]
    assert any("insert" in name for name in WORD.objects(home))  # its triggers
    monkeypatch.delenv("HERMES_WORD_FTS")
    with SessionStore(home / "state.db", readonly=True) as store:
        state = store.index_state()
        assert "word_to_drop" in state["needs_optimize"]
        assert store.slowed_by() == []  # served until dropped: no route is slower
        assert store.search("deploy").route == "fts5"
    report = WORD.status(home)
    assert isinstance(report, dict)
    assert report["not_kept"][schema.BASE]["exists"] is True
    assert not WORD.optimize(home)["exists"] and WORD.objects(home) == []
    WORD.stays_dropped(home, "a brand new rollout", "rollout")  # later writes keep it dropped


def test_an_interrupted_build_of_a_word_index_is_dropped_too(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    WORD.keep(home, monkeypatch)
    with SessionStore(home / "state.db") as store:
        store._mark_fts_stale("test")  # a rebuild under the build name starts
        from hermes_fts.index import lifecycle

        lifecycle.repair(store._conn, store._caps)
        assert schema.building(store._conn, schema.BASE)
    monkeypatch.delenv("HERMES_WORD_FTS")
    WORD.optimize(home)
    assert WORD.objects(home) == []
    with SessionStore(home / "state.db", readonly=True) as store:
        assert store.rebuild_status() is None


def test_a_dropped_word_index_leaves_no_rank_bounds_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its rank bounds went unused with the index but stayed in the file: nothing
    measures or deletes the bounds of an index that is no longer there."""
    from test_optimize_storage import optimize, write_store

    monkeypatch.delenv("HERMES_TRIGRAM_FTS", raising=False)
    monkeypatch.setenv("HERMES_WORD_FTS", "1")
    db = tmp_path / "state.db"
    write_store(db)
    code, result, err = optimize(db)
    assert code == 0 and result["rank_bounds_measured"].get(schema.BASE), (result, err)
    monkeypatch.delenv("HERMES_WORD_FTS")
    code, result, err = optimize(db)
    assert code == 0 and result["ok"], err
    conn = sqlite3.connect(db)
    try:
        left = conn.execute(
            "SELECT tbl, count(*) FROM hermes_fts_rank_bounds GROUP BY tbl"
        ).fetchall()
    finally:
        conn.close()
    assert [tbl for tbl, _n in left] == [schema.CJK], left


def _first_word_build_cut_short(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """optimize-storage with HERMES_WORD_FTS=1 stopped (Ctrl-C) after its first chunk of
    the word index, which it builds under its build name, unserved until the swap."""
    WORD.optimize_new(home)
    monkeypatch.setenv("HERMES_WORD_FTS", "1")

    def stop(event: dict) -> None:
        if event.get("phase") == "backfill" and event.get("indexed"):
            raise KeyboardInterrupt

    with SessionStore(home / "state.db") as store:
        with pytest.raises(KeyboardInterrupt):
            store.optimize_storage(stop, chunk_rows=2, min_pause=0, txn_target=None)
        assert schema.building(store._conn, schema.BASE)
        assert store.rebuild_status() is not None


@pytest.mark.parametrize("kept", [True, False])
def test_a_word_build_cut_short_slows_no_search_and_says_what_is_left(
    home: Path, monkeypatch: pytest.MonkeyPatch, kept: bool
) -> None:
    """The half-built word index serves no search (the CJK index answers), yet status
    said searches took slower exact routes for its backfill, the tool's note said the
    unreached messages were scanned, and once opted out nothing said the run drops it."""
    from hermes_fts.tool.shape import rebuild_note

    _first_word_build_cut_short(home, monkeypatch)
    if not kept:
        monkeypatch.delenv("HERMES_WORD_FTS")
    with SessionStore(home / "state.db", readonly=True) as store:
        needs = store.index_state()["needs_optimize"]
        assert "backfill" not in needs
        assert ("word_missing" if kept else "word_to_drop") in needs
        assert store.slowed_by() == (["word_missing"] if kept else [])
        note = rebuild_note(store)
        assert note is None or "backfill" not in note["note"]
        assert store.search("deploy").route == "fts_cjk"
    shown = subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", "--db", str(home / "state.db"), "status"],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    backfill = next(line for line in shown.splitlines() if line.startswith("Backfill:"))
    # Opted out, the next run drops the half-built index: it does not finish it.
    assert ("to finish" in backfill) is kept and ("drops it" in backfill) is not kept, backfill
    WORD.optimize(home)
    assert bool(WORD.objects(home)) is kept


@pytest.mark.parametrize("config", [None, ENABLED])
def test_opt_in_keeps_it_with_or_without_the_plugin(
    home: Path, monkeypatch: pytest.MonkeyPatch, config: str | None
) -> None:
    WORD.keep_served(home, monkeypatch, config)
    report = WORD.status(home, HERMES_WORD_FTS="1")
    assert isinstance(report, dict) and schema.BASE not in report["not_kept"]
    with SessionStore(home / "state.db", readonly=True) as store:
        assert store.search("deploy").route == "fts5"
        rows = store.search("youer").rows  # the glued-Latin supplement
        assert [r["id"] for r in rows] == [5]


def test_zero_stops_serving_an_existing_one_at_once(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    WORD.keep(home, monkeypatch)
    kept = WORD.answers(home / "state.db")
    monkeypatch.setenv("HERMES_WORD_FTS", "0")
    with SessionStore(home / "state.db", readonly=True) as store:
        word = store.index_state()[schema.BASE]
        assert word["exists"] and not word["served"]
        assert word["reason"] == "disabled by HERMES_WORD_FTS"
    off = WORD.answers(home / "state.db")
    assert {q: rows for q, (_, rows) in off.items()} == {q: rows for q, (_, rows) in kept.items()}
    assert "fts5" not in {route for route, _ in off.values()}


def test_status_names_the_index_not_kept_and_what_answers_instead(home: Path) -> None:
    WORD.optimize(home)
    report = WORD.status(home)
    assert isinstance(report, dict)
    assert report["not_kept"][schema.BASE] == {
        "why": WORD_NOT_KEPT,
        "instead": WORD_INSTEAD,
        "exists": False,
    }
    assert report["indexes"][schema.BASE]["reason"] == f"not kept: {WORD_NOT_KEPT}"
    assert report["needs_optimize"] == []
    human = WORD.status(home, human=True)
    assert schema.BASE in human and "HERMES_WORD_FTS=1" in human


def test_status_says_pending_rows_are_read_by_like(home: Path) -> None:
    WORD.optimize(home)
    _write_without_extension(home / "state.db")
    human = WORD.status(home, human=True)
    assert isinstance(human, str)
    line = next(x for x in human.splitlines() if x.startswith("Pending CJK changes"))
    assert line.startswith("Pending CJK changes: 1 ") and "LIKE" in line


def test_the_note_with_the_extension_off_says_latin_is_scanned(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The note said the scan finds the same rows as the word index; it folds ASCII
    case only, so it says what it misses, and the word index kept finds it."""
    WORD.optimize(home)
    with SessionStore(home / "state.db") as store:
        store.add_message("s1", "user", "Café near ZÜRICH station")
    monkeypatch.setenv("HERMES_CJK_FTS", "0")
    with SessionStore(home / "state.db", readonly=True) as store:
        result = store.search("deploy")
        assert result.route == "like_scan"
        assert any("HERMES_WORD_FTS=1" in note and "LIKE scan" in note for note in result.notes)
        assert any("cafe does not find Café" in note for note in result.notes)
        assert [store.search(q).rows for q in ("cafe", "zurich")] == [[], []]
    monkeypatch.setenv("HERMES_WORD_FTS", "1")
    WORD.optimize(home)
    with SessionStore(home / "state.db", readonly=True) as store:
        for query in ("cafe", "zurich"):
            found = store.search(query)
            assert found.route == "fts5" and len(found.rows) == 1, query
            assert not any("cafe does not find" in note for note in found.notes)


def _write_without_extension(db: Path) -> None:
    """A row as Hermes writes it, with no extension: it waits in the pending table."""
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(
            "INSERT INTO messages(session_id, role, content, timestamp) VALUES "
            "('s1', 'user', '重新deploy到youer服务端, the staging cluster again', 99.0)"
        )
    conn.close()


@pytest.mark.parametrize("cjk", ["served", "pending", "no_extension", "stale"])
def test_without_the_word_index_every_query_finds_the_same_rows(
    home: Path, monkeypatch: pytest.MonkeyPatch, cjk: str
) -> None:
    kept = WORD.kept_copy(home, monkeypatch)
    if cjk == "pending":
        for db in (kept / "state.db", home / "state.db"):
            _write_without_extension(db)
    reference = WORD.answers(home / "state.db")  # the CJK index (and LIKE over pending rows)
    stop_serving_cjk(cjk, monkeypatch, kept / "state.db", home / "state.db")
    with SessionStore(home / "state.db", readonly=True) as store:
        state = store.index_state()
        assert state[schema.CJK]["served"] is (cjk in ("served", "pending"))
        assert state["cjk_pending"] == (1 if cjk == "pending" else 0)
    monkeypatch.setenv("HERMES_WORD_FTS", "1")
    with_word = WORD.answers(kept / "state.db")
    monkeypatch.delenv("HERMES_WORD_FTS")
    without = WORD.answers(home / "state.db")
    for query in QUERIES:
        assert without[query][0] != "fts5", query
        if cjk != "no_extension":  # without it nothing folds widths (Ｄｅｐｌｏｙ)
            assert without[query][1] == reference[query][1], query
        if cjk in ("no_extension", "stale"):
            # Glued to CJK or in full width: unicode61 alone cannot see those rows
            # (the CJK index's supplement is not served); the LIKE scan can.
            assert set(with_word[query][1]) <= set(without[query][1]), query
            if query != "ｓｔａｇｉｎｇ":  # unicode61 does not fold the query either
                assert set(without[query][1]) - set(with_word[query][1]) <= GLUED_OR_WIDE, query
        else:
            assert with_word[query][1] == without[query][1], query
    # Every query found rows, so no comparison held for want of any.
    assert all(rows for _, rows in without.values()), without
    if cjk in ("served", "pending"):
        assert {route for route, _ in without.values()} == {"fts_cjk"}
        assert "fts5" in {route for route, _ in with_word.values()}


def test_the_plugin_adds_no_rebuild_note_for_the_absent_word_index(home: Path) -> None:
    answer = WORD.plugin_answer(home, "deploy")
    assert answer["engine"].startswith("hermes-fts") and answer["count"] >= 1
    assert answer["route"] == "fts_cjk"
    assert "index_rebuild" not in answer
