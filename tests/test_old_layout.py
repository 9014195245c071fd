"""Giving Hermes' names back (``old_layout``): only what an older hermes-fts made goes.

Newer Hermes builds keep indexes of their own under the same names, over
``messages_fts*_src`` views, with triggers of the same names; the real
forks are driven in ``test_newer_hermes.py``.  Here the two layouts are
written side by side as plain SQL, so each rule is checked on its own.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hermes_fts.index import old_layout
from hermes_fts.store import SessionStore

COLS = "content, tool_name, tool_calls"


def _hermes_v23(conn: sqlite3.Connection) -> None:
    """A Hermes 0.20+ layout: external content over its own ``_src`` views, gated triggers."""
    for name, tokenize in (("messages_fts", ""), ("messages_fts_trigram", ", tokenize='trigram'")):
        conn.execute(
            f"CREATE VIEW {name}_src AS SELECT id, {COLS} FROM messages WHERE role <> 'tool'"
        )
        conn.execute(
            f"CREATE VIRTUAL TABLE {name} USING fts5({COLS}, content='{name}_src', "
            f"content_rowid='id'{tokenize})"
        )
        conn.execute(
            f"CREATE TRIGGER {name}_insert AFTER INSERT ON messages BEGIN "
            f"INSERT INTO {name}(rowid, {COLS}) VALUES (new.id, new.content, "
            "new.tool_name, new.tool_calls); END"
        )
    conn.execute("INSERT INTO state_meta(key, value) VALUES ('fts_rebuild_high_water', '7')")


def _older_hermes_fts(conn: sqlite3.Connection) -> None:
    """What a hermes-fts before its namespace made: a table over a ``_text`` view, the
    trigram stub with its placeholder, the pending table, an index named like Hermes'."""
    conn.execute(f"CREATE VIEW messages_fts_text AS SELECT id, {COLS} FROM messages")
    conn.execute(
        f"CREATE VIRTUAL TABLE messages_fts USING fts5({COLS}, "
        "content='messages_fts_text', content_rowid='id')"
    )
    conn.execute(
        f"CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN "
        f"INSERT INTO messages_fts(rowid, {COLS}) VALUES (new.id, new.content, "
        "new.tool_name, new.tool_calls); END"
    )
    conn.execute(
        "CREATE VIEW messages_fts_trigram AS SELECT NULL AS rowid, NULL AS content, "
        f"'{old_layout.PLACEHOLDER_MARK}: trigram index off' AS note WHERE 0"
    )
    # What a Hermes open made of our placeholder: a real trigger writing into the stub.
    conn.execute(
        "CREATE TRIGGER messages_fts_trigram_update AFTER UPDATE OF content ON "
        "messages BEGIN INSERT INTO messages_fts_trigram(rowid, content) "
        "VALUES (new.id, new.content); END"
    )
    conn.execute("CREATE TABLE messages_fts_cjk_pending (seq INTEGER PRIMARY KEY, msg_id INTEGER)")
    conn.execute("CREATE INDEX idx_sessions_title ON sessions(title)")
    conn.execute("INSERT INTO state_meta(key, value) VALUES ('fts_rebuild_high_water', '7')")


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    path = tmp_path / "state.db"
    with SessionStore(path) as store:
        store.add_session("s1", "cli")
        store.add_message("s1", "user", "hello world")
    return path


def _names(conn: sqlite3.Connection) -> set[str]:
    return {
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE name LIKE "
            "'messages_fts%' OR name = 'idx_sessions_title'"
        )
    }


def test_hermes_own_layout_is_never_claimed(db: Path) -> None:
    conn = sqlite3.connect(db)
    with conn:
        _hermes_v23(conn)
    before = _names(conn)
    assert old_layout.find(conn) == []
    assert old_layout.give_back(conn) == []
    assert _names(conn) == before
    assert conn.execute(
        "SELECT value FROM state_meta WHERE key = 'fts_rebuild_high_water'"
    ).fetchone() == ("7",)  # Hermes' own marker stays
    conn.close()


def test_an_older_hermes_fts_layout_is_given_back_whole(db: Path) -> None:
    conn = sqlite3.connect(db)
    with conn:
        _older_hermes_fts(conn)
    assert set(old_layout.find(conn)) == {
        "messages_fts",
        "messages_fts_text",
        "messages_fts_insert",
        "messages_fts_trigram",
        "messages_fts_trigram_update",
        "messages_fts_cjk_pending",
        "idx_sessions_title",
    }
    old_layout.give_back(conn)
    assert _names(conn) == set() and old_layout.find(conn) == []
    assert (
        conn.execute("SELECT value FROM state_meta WHERE key = 'fts_rebuild_high_water'").fetchone()
        is None
    )  # our old marker under Hermes' key goes with it
    with conn:  # no trigger left that writes into a dropped table
        conn.execute(
            "INSERT INTO messages(session_id, role, content, timestamp) "
            "VALUES ('s1', 'user', 'after', 2)"
        )
        conn.execute("UPDATE messages SET content = 'edited' WHERE content = 'after'")
    conn.close()


def test_the_session_index_is_ours_until_hermes_has_its_own(db: Path) -> None:
    """messages(session_id, id): ours by our name; where Hermes 0.20+ made its own, not twice."""

    def indexes(conn: sqlite3.Connection) -> set[str]:
        return {
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'messages' "
                "AND sql LIKE '%(session_id, id)%'"
            )
        }

    conn = sqlite3.connect(db)
    assert indexes(conn) == {"hermes_fts_messages_session_id"}
    with conn:
        conn.execute("CREATE INDEX idx_messages_session_id ON messages(session_id, id)")
    conn.close()
    with SessionStore(db) as store:
        store.add_message("s1", "user", "a write aligns the base schema")
    conn = sqlite3.connect(db)
    assert indexes(conn) == {"idx_messages_session_id"}
    conn.close()
