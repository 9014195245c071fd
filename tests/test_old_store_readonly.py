"""A store written by an older Hermes build, opened read-only: readable, never modified."""

from __future__ import annotations

import hashlib
import sqlite3

import pytest

from hermes_fts import session_search
from hermes_fts.store import SessionStore

OLD_SCHEMA = """
CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, model TEXT,
    parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL, title TEXT);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,
    role TEXT NOT NULL, content TEXT, tool_calls TEXT, tool_name TEXT, timestamp REAL NOT NULL);
"""


@pytest.fixture()
def old_profile(tmp_path, monkeypatch):
    home = tmp_path / "home"
    db = home / "profiles" / "old" / "state.db"
    db.parent.mkdir(parents=True)
    conn = sqlite3.connect(db)
    conn.executescript(OLD_SCHEMA)
    conn.execute("INSERT INTO sessions VALUES ('o1', 'cli', 'm', NULL, 100, NULL, '旧的会话')")
    conn.executemany(
        "INSERT INTO messages(session_id, role, content, timestamp) VALUES ('o1', ?, ?, ?)",
        [
            ("user", "部署脚本又失败了", 101),
            ("assistant", "check deploy.sh permissions", 102),
            ("user", "好的，谢谢", 103),
        ],
    )
    conn.commit()
    conn.close()
    monkeypatch.setenv("HERMES_HOME", str(home))
    return db


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_search_works_with_defaults_for_missing_columns(old_profile):
    before = digest(old_profile)
    with SessionStore(old_profile, readonly=True) as store:
        rows = store.search_messages("部署")
        assert [r["snippet"] for r in rows] == [">>>部署<<<脚本又失败了"]
        assert store.describe_search_path("部署") == "like_scan"
        assert [r["role"] for r in store.search_messages("deploy.sh")] == ["assistant"]
        assert store.rebuild_status() is None
    assert digest(old_profile) == before


def test_the_tool_reads_an_old_profile_read_only(old_profile):
    before = digest(old_profile)
    found = session_search(None, query="部署", profile="old")
    assert found["success"] is True and found["count"] == 1
    assert found["results"][0]["session_id"] == "o1"
    read = session_search(None, session_id="@session:old/o1")
    assert read["success"] is True and read["message_count"] == 3
    scroll = session_search(None, session_id="old/o1", around_message_id=2, window=1)
    assert [m["id"] for m in scroll["messages"]] == [1, 2, 3]
    browse = session_search(None, profile="old")
    assert [r["session_id"] for r in browse["results"]] == ["o1"]
    assert digest(old_profile) == before
