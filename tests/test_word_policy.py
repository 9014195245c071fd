"""Lean storage (issue 35): the word index is opt-in (docs/DESIGN.md §5.2, §9.2 item 6).

The CJK index reads Latin words as unicode61 does and splits them off CJK, so
it answers every Latin query exactly; by default a store keeps no word index,
optimize-storage drops one an older version built, and ``HERMES_WORD_FTS=1``
keeps it.  A store without it answers every query class with the same rows as
a store with it: with the CJK index served, stale, behind on rows a process
without the extension wrote, or with the extension switched off.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from _tool_fixtures import conversation

from hermes_fts.hermes import plugin as hermes_plugin
from hermes_fts.index import schema
from hermes_fts.index.lifecycle import WORD_INSTEAD, WORD_NOT_KEPT
from hermes_fts.store import SessionStore

SWITCHES = ("HERMES_WORD_FTS", "HERMES_TRIGRAM_FTS", "HERMES_CJK_FTS")
ENABLED = (
    "plugins:\n  enabled:\n    - hermes-fts\n  entries:\n    hermes-fts:\n"
    "      allow_tool_override: true\n"
)
TURNS = [
    ("user", "数据库迁移的方案"),
    ("assistant", "服务端升级以后再做数据库迁移"),
    ("user", "deploy the staging cluster"),
    ("assistant", "Edit my-app.config.ts and redeploy; the deployment failed twice"),
    ("user", "修改youer服务端的配置, 然后 deploy 到 staging"),
    ("assistant", "桂林山水甲天下, 漓江 is in Guangxi 广西"),
    ("user", "东京のラーメン屋さん and 한국어 공부"),
    ("assistant", "第1章: the staging cluster was not deployed"),
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


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in SWITCHES:
        monkeypatch.delenv(name, raising=False)
    folder = tmp_path / "hermes-home"
    folder.mkdir()
    with SessionStore(folder / "state.db") as store:
        if not store.cjk_available:
            pytest.skip("needs cjk_unicode61")
        conversation(store, "s1", TURNS)
    return folder


def _optimize(home: Path) -> dict:
    with SessionStore(home / "state.db") as store:
        assert store.optimize_storage(min_pause=0)["ok"]
        assert not store.optimize_needed()
        return store.index_state()[schema.BASE]


def _word_objects(home: Path) -> list[str]:
    """Every object of our word index: tables, views, triggers, a build."""
    conn = sqlite3.connect(home / "state.db")
    try:
        return [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE name LIKE ?", (f"{schema.BASE}%",)
            )
        ]
    finally:
        conn.close()


def _clean_env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k not in SWITCHES}


def _status(home: Path, *, human: bool = False, **env: str) -> dict | str:
    out = subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", "status", "--db", str(home / "state.db")]
        + ([] if human else ["--json"]),
        capture_output=True,
        text=True,
        env={**_clean_env(), **env},
        check=True,
    )
    return out.stdout if human else json.loads(out.stdout)


def test_a_new_store_has_no_word_index(home: Path) -> None:
    assert _word_objects(home) == []
    word = _optimize(home)
    assert not word["exists"] and word["reason"] == f"not kept: {WORD_NOT_KEPT}"
    assert _word_objects(home) == []
    with SessionStore(home / "state.db", readonly=True) as store:
        assert store.search("deploy").route == "fts_cjk"


def test_an_existing_word_index_is_dropped_by_optimize(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERMES_WORD_FTS", "1")
    assert _optimize(home)["exists"]
    assert any("insert" in name for name in _word_objects(home))  # its triggers
    monkeypatch.delenv("HERMES_WORD_FTS")
    with SessionStore(home / "state.db", readonly=True) as store:
        state = store.index_state()
        assert "word_to_drop" in state["needs_optimize"]
        assert store.slowed_by() == []  # served until dropped: no route is slower
        assert store.search("deploy").route == "fts5"
    report = _status(home)
    assert isinstance(report, dict)
    assert report["not_kept"][schema.BASE]["exists"] is True
    assert not _optimize(home)["exists"] and _word_objects(home) == []
    with SessionStore(home / "state.db") as store:  # later writes keep it dropped
        conversation(store, "s2", [("user", "a brand new rollout")])
        assert [r["session_id"] for r in store.search_messages("rollout")] == ["s2"]
        assert not store.optimize_needed()
    assert _word_objects(home) == []


def test_an_interrupted_build_of_a_word_index_is_dropped_too(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERMES_WORD_FTS", "1")
    _optimize(home)
    with SessionStore(home / "state.db") as store:
        store._mark_fts_stale("test")  # a rebuild under the build name starts
        from hermes_fts.index import lifecycle

        lifecycle.repair(store._conn, store._caps)
        assert schema.building(store._conn, schema.BASE)
    monkeypatch.delenv("HERMES_WORD_FTS")
    _optimize(home)
    assert _word_objects(home) == []
    with SessionStore(home / "state.db", readonly=True) as store:
        assert store.rebuild_status() is None


@pytest.mark.parametrize("config", [None, ENABLED])
def test_opt_in_keeps_it_with_or_without_the_plugin(
    home: Path, monkeypatch: pytest.MonkeyPatch, config: str | None
) -> None:
    if config:
        (home / "config.yaml").write_text(config, encoding="utf-8")
    monkeypatch.setenv("HERMES_WORD_FTS", "1")
    word = _optimize(home)
    assert word["exists"] and word["served"]
    report = _status(home, HERMES_WORD_FTS="1")
    assert isinstance(report, dict) and schema.BASE not in report["not_kept"]
    with SessionStore(home / "state.db", readonly=True) as store:
        assert store.search("deploy").route == "fts5"
        rows = store.search("youer").rows  # the glued-Latin supplement
        assert [r["id"] for r in rows] == [5]


def test_zero_stops_serving_an_existing_one_at_once(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERMES_WORD_FTS", "1")
    _optimize(home)
    kept = _answers(home / "state.db")
    monkeypatch.setenv("HERMES_WORD_FTS", "0")
    with SessionStore(home / "state.db", readonly=True) as store:
        word = store.index_state()[schema.BASE]
        assert word["exists"] and not word["served"]
        assert word["reason"] == "disabled by HERMES_WORD_FTS"
    off = _answers(home / "state.db")
    assert {q: rows for q, (_, rows) in off.items()} == {q: rows for q, (_, rows) in kept.items()}
    assert "fts5" not in {route for route, _ in off.values()}


def test_status_names_the_index_not_kept_and_what_answers_instead(home: Path) -> None:
    _optimize(home)
    report = _status(home)
    assert isinstance(report, dict)
    assert report["not_kept"][schema.BASE] == {
        "why": WORD_NOT_KEPT,
        "instead": WORD_INSTEAD,
        "exists": False,
    }
    assert report["indexes"][schema.BASE]["reason"] == f"not kept: {WORD_NOT_KEPT}"
    assert report["needs_optimize"] == []
    human = _status(home, human=True)
    assert schema.BASE in human and "HERMES_WORD_FTS=1" in human


def test_status_says_pending_rows_are_read_by_like(home: Path) -> None:
    _optimize(home)
    _write_without_extension(home / "state.db")
    human = _status(home, human=True)
    assert isinstance(human, str)
    line = next(x for x in human.splitlines() if x.startswith("Pending CJK changes"))
    assert line.startswith("Pending CJK changes: 1 ") and "LIKE" in line


def test_the_note_with_the_extension_off_says_latin_is_scanned(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _optimize(home)
    monkeypatch.setenv("HERMES_CJK_FTS", "0")
    with SessionStore(home / "state.db", readonly=True) as store:
        result = store.search("deploy")
    assert result.route == "like_scan"
    assert any("HERMES_WORD_FTS=1" in note and "LIKE scan" in note for note in result.notes)


def _answers(db: Path) -> dict[str, tuple[str, list[int]]]:
    with SessionStore(db, readonly=True) as store:
        out = {}
        for query in QUERIES:
            result = store.search(query, limit=50)
            out[query] = (result.route, sorted(r["id"] for r in result.rows))
        return out


def _cjk_stale(db: Path) -> None:
    """The CJK index marked for a rebuild, as a writer leaves it: not served."""
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("INSERT INTO state_meta(key, value) VALUES (?, '1')", (schema.META_CJK_STALE,))
    conn.close()


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
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cjk: str
) -> None:
    kept = tmp_path / "kept"
    kept.mkdir()
    shutil.copy(home / "state.db", kept / "state.db")
    monkeypatch.setenv("HERMES_WORD_FTS", "1")
    assert _optimize(kept)["exists"]
    monkeypatch.delenv("HERMES_WORD_FTS")
    assert not _optimize(home)["exists"]
    if cjk == "pending":
        for db in (kept / "state.db", home / "state.db"):
            _write_without_extension(db)
    reference = _answers(home / "state.db")  # the CJK index (and LIKE over pending rows)
    if cjk == "no_extension":
        monkeypatch.setenv("HERMES_CJK_FTS", "0")
    elif cjk == "stale":
        for db in (kept / "state.db", home / "state.db"):
            _cjk_stale(db)
    with SessionStore(home / "state.db", readonly=True) as store:
        state = store.index_state()
        assert state[schema.CJK]["served"] is (cjk in ("served", "pending"))
        assert state["cjk_pending"] == (1 if cjk == "pending" else 0)
    monkeypatch.setenv("HERMES_WORD_FTS", "1")
    with_word = _answers(kept / "state.db")
    monkeypatch.delenv("HERMES_WORD_FTS")
    without = _answers(home / "state.db")
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
    (home / "config.yaml").write_text(ENABLED, encoding="utf-8")
    _optimize(home)
    answer = json.loads(
        hermes_plugin.serve({"query": "deploy"}, None, lambda: "builtin", home / "state.db")
    )
    assert answer["engine"].startswith("hermes-fts") and answer["count"] >= 1
    assert answer["route"] == "fts_cjk"
    assert "index_rebuild" not in answer
