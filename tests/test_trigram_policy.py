"""Lean storage (issue 35): the trigram index is opt-in (docs/DESIGN.md §9.2 item 4).

Searches read it only while the CJK index is not served, and a LIKE scan then
returns the same rows, so optimize-storage builds none and drops one an older
version built; ``HERMES_TRIGRAM_FTS=1`` keeps it.  A store without it answers
every query class with the same rows as a store with it, whether or not the
CJK index is served, and ``status --json`` names it as not kept.
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
from hermes_fts.index.lifecycle import NOT_KEPT, TRIGRAM_INSTEAD
from hermes_fts.store import SessionStore

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


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("HERMES_TRIGRAM_FTS", raising=False)
    monkeypatch.delenv("HERMES_CJK_FTS", raising=False)
    folder = tmp_path / "hermes-home"
    folder.mkdir()
    with SessionStore(folder / "state.db") as store:
        if not store.cjk_available or not store.trigram_available:
            pytest.skip("needs cjk_unicode61 and the trigram tokenizer")
        conversation(store, "s1", TURNS)
    return folder


def _optimize(home: Path) -> dict:
    with SessionStore(home / "state.db") as store:
        assert store.optimize_storage(min_pause=0)["ok"]
        assert not store.optimize_needed()
        return store.index_state()[schema.TRIGRAM]


def _trigram_objects(home: Path) -> list[str]:
    """Every object of our trigram index or under Hermes' trigram name."""
    with SessionStore(home / "state.db", readonly=True) as store:
        return [
            r[0]
            for r in store._conn.execute(
                "SELECT name FROM sqlite_master WHERE name LIKE ? OR name LIKE 'messages_fts_trigram%'",
                (f"{schema.TRIGRAM}%",),
            )
        ]


def _status(home: Path, **env: str) -> dict:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "hermes_fts.cli",
            "status",
            "--json",
            "--db",
            str(home / "state.db"),
        ],
        capture_output=True,
        text=True,
        env={**_clean_env(), **env},
        check=True,
    )
    return json.loads(out.stdout)


def _clean_env() -> dict[str, str]:
    import os

    return {
        k: v for k, v in os.environ.items() if k not in ("HERMES_TRIGRAM_FTS", "HERMES_CJK_FTS")
    }


def test_a_new_store_has_no_trigram_index(home: Path) -> None:
    assert _trigram_objects(home) == []
    trigram = _optimize(home)
    assert not trigram["exists"] and trigram["reason"] == f"not kept: {NOT_KEPT}"
    assert _trigram_objects(home) == []


def test_an_existing_trigram_index_is_dropped_by_optimize(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERMES_TRIGRAM_FTS", "1")
    assert _optimize(home)["exists"]
    monkeypatch.delenv("HERMES_TRIGRAM_FTS")
    with SessionStore(home / "state.db", readonly=True) as store:
        assert "trigram_to_drop" in store.index_state()["needs_optimize"]
    report = _status(home)
    assert report["not_kept"][schema.TRIGRAM]["exists"] is True
    assert not _optimize(home)["exists"] and _trigram_objects(home) == []
    with SessionStore(home / "state.db") as store:  # later writes keep it dropped
        conversation(store, "s2", [("user", "新的数据库消息")])
        assert [r["session_id"] for r in store.search_messages("新的数据库")] == ["s2"]
        assert not store.optimize_needed()
    assert _trigram_objects(home) == []


@pytest.mark.parametrize("config", [None, ENABLED])
def test_opt_in_keeps_it_with_or_without_the_plugin(
    home: Path, monkeypatch: pytest.MonkeyPatch, config: str | None
) -> None:
    if config:
        (home / "config.yaml").write_text(config, encoding="utf-8")
    monkeypatch.setenv("HERMES_TRIGRAM_FTS", "1")
    trigram = _optimize(home)
    assert trigram["exists"] and trigram["served"]
    assert schema.TRIGRAM not in _status(home, HERMES_TRIGRAM_FTS="1")["not_kept"]
    with SessionStore(home / "state.db", readonly=True) as store:
        rows = store.search_messages("数据库迁移", route="trigram")
        assert [r["session_id"] for r in rows] == ["s1", "s1"]


def test_status_names_the_index_not_kept_and_what_answers_instead(home: Path) -> None:
    _optimize(home)
    report = _status(home)
    missing = report["not_kept"][schema.TRIGRAM]
    assert missing == {"why": NOT_KEPT, "instead": TRIGRAM_INSTEAD, "exists": False}
    assert report["indexes"][schema.TRIGRAM]["reason"] == f"not kept: {NOT_KEPT}"
    assert report["needs_optimize"] == []
    human = subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", "status", "--db", str(home / "state.db")],
        capture_output=True,
        text=True,
        env=_clean_env(),
        check=True,
    ).stdout
    assert f"{schema.TRIGRAM}" in human and "HERMES_TRIGRAM_FTS=1" in human


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


@pytest.mark.parametrize("cjk", ["served", "no_extension", "stale"])
def test_without_the_trigram_index_every_query_finds_the_same_rows(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cjk: str
) -> None:
    kept = tmp_path / "kept"
    kept.mkdir()
    shutil.copy(home / "state.db", kept / "state.db")
    monkeypatch.setenv("HERMES_TRIGRAM_FTS", "1")
    assert _optimize(kept)["exists"]
    monkeypatch.delenv("HERMES_TRIGRAM_FTS")
    assert not _optimize(home)["exists"]
    # What the word and CJK indexes answer: the meaning every route keeps.
    reference = _answers(home / "state.db")
    # The CJK index not served: a process without the extension, or a rebuild pending.
    if cjk == "no_extension":
        monkeypatch.setenv("HERMES_CJK_FTS", "0")
    elif cjk == "stale":
        for db in (kept / "state.db", home / "state.db"):
            _cjk_stale(db)
    with SessionStore(home / "state.db", readonly=True) as store:
        assert store.index_state()[schema.CJK]["served"] is (cjk == "served")
    monkeypatch.setenv("HERMES_TRIGRAM_FTS", "1")
    with_trigram = _answers(kept / "state.db")
    monkeypatch.delenv("HERMES_TRIGRAM_FTS")
    without = _answers(home / "state.db")
    for query in QUERIES:
        assert without[query][0] != "trigram"
        assert without[query][1] == reference[query][1], query
        if with_trigram[query][0] != "trigram":
            assert with_trigram[query][1] == reference[query][1], query
    # Trigram alone reads Latin words as substrings (docs/QUERY.md): "eploy" and
    # "redeploy" are in no other route's answer.
    assert {q for q in QUERIES if not without[q][1]} <= {"eploy"}
    # The comparison reached the trigram route (第1章 too with the CJK index served).
    assert "trigram" in {route for route, _ in with_trigram.values()}


def test_the_plugin_adds_no_rebuild_note_for_the_absent_trigram(home: Path) -> None:
    (home / "config.yaml").write_text(ENABLED, encoding="utf-8")
    _optimize(home)
    answer = json.loads(
        hermes_plugin.serve({"query": "数据库"}, None, lambda: "builtin", home / "state.db")
    )
    assert answer["engine"].startswith("hermes-fts") and answer["count"] == 1
    assert "index_rebuild" not in answer
