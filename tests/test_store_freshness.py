"""The data_version shortcut: a search skips the pending sync and reuses the index
state only while nothing was written, and never serves a stale result.

Writers here are other processes (a plain python sqlite3 connection without the
extension, the sqlite3 shell), another store in this process, and the store
itself; each write must be seen by the very next search.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _support import needs_extension

import hermes_fts
from hermes_fts.index import pending, schema
from hermes_fts.store import SessionStore

pytestmark = needs_extension


def _ids(store: SessionStore, query: str) -> set[int]:
    return {r["id"] for r in store.search_messages(query, limit=100, fields=["id"])}


def _plain_python(db: Path, sql: str) -> None:
    """Run ``sql`` in a separate process through the standard sqlite3 module only."""
    code = textwrap.dedent(f"""
        import sqlite3
        conn = sqlite3.connect({str(db)!r}, timeout=10, isolation_level=None)
        conn.executescript({sql!r})
        conn.close()
    """)
    proc = subprocess.run(
        [sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    path = tmp_path / "state.db"
    with SessionStore(path) as store:
        store.add_session("s1", "cli", started_at=1.0)
        store.add_messages(
            {
                "session_id": "s1",
                "role": "user",
                "timestamp": float(i),
                "content": f"原有消息 {i} basetext",
            }
            for i in range(10)
        )
    return path


def test_unchanged_file_skips_the_sync(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = pending.apply_pending
    monkeypatch.setattr(
        pending, "apply_pending", lambda conn, **kw: calls.append(1) or real(conn, **kw)
    )
    with SessionStore(db) as store:
        calls.clear()
        assert len(_ids(store, "原有")) == 10
        assert len(_ids(store, "消息")) == 10
        assert calls == []  # open synced; nobody wrote since
        _plain_python(
            db,
            "INSERT INTO messages(session_id, role, content, timestamp) "
            "VALUES ('s1', 'user', '外来写入 foreignrow', 50);",
        )
        assert len(_ids(store, "外来")) == 1
        assert calls == [1]


def test_plain_sqlite3_process_insert_update_delete_seen_next_search(db: Path) -> None:
    with SessionStore(db) as store:
        ids = sorted(_ids(store, "原有"))
        assert _ids(store, "外来") == set()
        _plain_python(
            db,
            f"""
            INSERT INTO messages(session_id, role, content, timestamp)
                VALUES ('s1', 'user', '外来写入的消息 foreigninsert', 50);
            UPDATE messages SET content = '改写之后 rewritten' WHERE id = {ids[0]};
            DELETE FROM messages WHERE id = {ids[1]};
        """,
        )
        new = _ids(store, "外来")
        assert len(new) == 1 and new.isdisjoint(ids)
        assert _ids(store, "改写") == {ids[0]}
        assert _ids(store, "foreigninsert") == new
        assert ids[0] not in _ids(store, "原有")
        assert ids[1] not in _ids(store, "原有")
        # A second foreign write right after the first is seen too.
        _plain_python(db, f"UPDATE messages SET content = '再改一次' WHERE id = {ids[0]};")
        assert _ids(store, "改写") == set()
        assert _ids(store, "再改") == {ids[0]}


def test_sqlite3_shell_write_seen_next_search(db: Path) -> None:
    shell = shutil.which("sqlite3")
    if shell is None:
        pytest.skip("sqlite3 shell not installed (CI installs it with apt)")
    with SessionStore(db) as store:
        ids = sorted(_ids(store, "原有"))
        assert _ids(store, "命令行") == set()
        script = (
            f"UPDATE messages SET content = '命令行改写 shellwrite' WHERE id = {ids[2]};\n"
            "INSERT INTO messages(session_id, role, content, timestamp) "
            "VALUES ('s1', 'assistant', '命令行新增', 60);\n"
        )
        proc = subprocess.run(
            [shell, str(db)], input=script, capture_output=True, text=True, timeout=30
        )
        assert proc.returncode == 0 and not proc.stderr, proc.stderr
        found = _ids(store, "命令行")
        assert ids[2] in found and len(found) == 2
        assert _ids(store, "shellwrite") == {ids[2]}
        assert ids[2] not in _ids(store, "原有")


def test_other_store_in_this_process_and_own_writes(db: Path) -> None:
    with SessionStore(db) as reader, SessionStore(db) as writer:
        assert _ids(reader, "同进程") == set()
        mid = writer.add_message("s1", "user", "同进程写入")
        assert _ids(reader, "同进程") == {mid}
        writer.delete_message(mid)
        assert _ids(reader, "同进程") == set()
        own = reader.add_message("s1", "user", "自己写入 ownwrite")
        assert _ids(reader, "自己") == {own}
        reader.set_message_flags(own, active=False)
        assert _ids(reader, "自己") == set()


def test_read_only_store_sees_foreign_writes(db: Path) -> None:
    """A read-only store cannot sync; its cached state must still notice the pending rows."""
    with SessionStore(db, readonly=True) as store:
        assert store.index_state()["cjk_pending"] == 0
        assert _ids(store, "外来") == set()
        _plain_python(
            db,
            "INSERT INTO messages(session_id, role, content, timestamp) "
            "VALUES ('s1', 'user', '外来只读可见', 70);",
        )
        assert store.index_state()["cjk_pending"] > 0
        assert len(_ids(store, "外来")) == 1


def test_own_schema_work_refreshes_the_state(db: Path) -> None:
    """optimize_storage changes the schema without another connection: state is read again."""
    with SessionStore(db) as store:
        before = store.index_state()
        store._mark_fts_stale("test: simulated damage")
        assert store.index_state()["fts_stale"] is True
        assert store.describe_search_path("原有") == "like_scan_fts_stale"
        assert store.optimize_storage(vacuum=False)["ok"] is True
        after = store.index_state()
        assert after["fts_stale"] is False and after["hermes_fts_cjk"]["served"]
        assert before["hermes_fts_cjk"]["served"]
        assert store.describe_search_path("原有") == "fts_cjk"
        assert len(_ids(store, "原有")) == 10


def test_index_state_is_a_copy(db: Path) -> None:
    with SessionStore(db) as store:
        state = store.index_state()
        state["hermes_fts_cjk"]["served"] = False
        state["fts_stale"] = True
        assert store.describe_search_path("原有") == "fts_cjk"
        assert store.index_state()["hermes_fts_cjk"]["served"] is True


def test_plain_connection_commit_in_this_process(db: Path) -> None:
    """A plain sqlite3 connection of this process (no extension) is another connection too."""
    with SessionStore(db) as store:
        assert _ids(store, "普通连接") == set()
        conn = sqlite3.connect(str(db), isolation_level=None)
        try:
            conn.execute(
                "INSERT INTO messages(session_id, role, content, timestamp) "
                "VALUES ('s1', 'user', '同一进程普通连接', 80)"
            )
        finally:
            conn.close()
        assert len(_ids(store, "普通连接")) == 1


@pytest.mark.parametrize("route", ["fts5", "fts_cjk"])
def test_read_only_search_finds_latin_glued_to_cjk_in_pending_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, route: str
) -> None:
    """Issue 28, item 9: ``nginx`` in ``東京でnginxを設定`` is one unicode61 token with its
    CJK neighbours, so the word index misses it; the CJK index finds it, but not
    while the row still waits in the pending table of a store opened read-only.
    Without the word index (the default) the CJK index answers and the LIKE scan
    of the pending rows adds it the same way."""
    if route == "fts5":
        monkeypatch.setenv("HERMES_WORD_FTS", "1")
    db = tmp_path / "state.db"
    with SessionStore(db) as store:
        store.add_session("s1", "cli")
        plain = store.add_message("s1", "user", "restart nginx after the change")
        applied = store.add_message("s1", "user", "大阪でnginxを再起動")
    conn = sqlite3.connect(db)  # a writer without the extension: the rows wait
    with conn:
        cur = conn.execute(
            "INSERT INTO messages(session_id, role, content, timestamp) "
            "VALUES ('s1', 'user', '東京でnginxを設定', 3)"
        )
    conn.close()
    waiting = cur.lastrowid
    with SessionStore(db, readonly=True) as store:
        assert store.index_state()["cjk_pending"] == 1
        result = store.search("nginx", limit=10)
        assert result.route == route
        assert {r["id"] for r in result.rows} == {plain, applied, waiting}
    with SessionStore(db) as store:  # once applied, the CJK index answers it
        assert store.index_state()["cjk_pending"] == 0
        assert {r["id"] for r in store.search_messages("nginx", limit=10)} == {
            plain,
            applied,
            waiting,
        }


def test_cjk_index_passes_integrity_check_while_changes_wait(tmp_path: Path) -> None:
    """Rows a writer without the extension inserted, edited and deleted wait in the
    pending table; the index's content view shows what the index holds meanwhile,
    so FTS5's integrity-check with rank 1 (index against content) passes before
    and after they are applied."""
    db = tmp_path / "state.db"
    with SessionStore(db) as store:
        store.add_session("s1", "cli")
        edited = store.add_message("s1", "user", "原来的内容 original text")
        deleted = store.add_message("s1", "user", "将被删除 doomed text")
    conn = sqlite3.connect(db)  # no extension: every change is logged, none applied
    with conn:
        conn.execute(
            "INSERT INTO messages(session_id, role, content, timestamp) "
            "VALUES ('s1', 'user', '新写入的消息 fresh text', 3)"
        )
        conn.execute(
            "UPDATE messages SET content = '改过的内容 edited text' WHERE id = ?", (edited,)
        )
        conn.execute("DELETE FROM messages WHERE id = ?", (deleted,))
    conn.close()
    check = f"INSERT INTO {schema.CJK}({schema.CJK}, rank) VALUES ('integrity-check', 1)"
    plain = hermes_fts.connect(str(db))  # applies nothing: the rows stay pending
    assert plain.execute(f"SELECT count(*) FROM {schema.CJK_PENDING}").fetchone() == (3,)
    plain.execute(check)  # raises "database disk image is malformed" if not
    plain.close()
    with SessionStore(db, readonly=True) as store:
        assert store.index_state()["cjk_pending"] == 3
        assert {r["id"] for r in store.search_messages("改过的内容")} == {edited}
        assert store.search_messages("将被删除") == []
    with SessionStore(db) as store:  # the open applies them
        assert store.index_state()["cjk_pending"] == 0
        assert store.integrity_check()[schema.CJK] is None


@pytest.mark.parametrize("sort", ["newest", "oldest", None])
def test_a_sync_landing_during_a_search_hides_no_row(db: Path, sort: str | None) -> None:
    """`hermes-fts sync` (or the plugin's after-turn apply) in another process moved a
    Hermes row from the pending log into the CJK index between the search's read of
    the index and its read of the log: the row was in neither, and the answer
    lacked it.  The sync is run from SQLite's trace hook."""
    _plain_python(
        db,
        "INSERT INTO messages(session_id, role, content, timestamp) "
        "VALUES ('s1', 'user', '赫尔墨斯写的 racetoken', 80);",
    )
    conn = sqlite3.connect(db)
    hermes_row = [r[0] for r in conn.execute("SELECT id FROM messages WHERE timestamp = 80")]
    conn.close()
    synced: list[int] = []
    index_read: list[str] = []

    def sync_in_another_process(sql: str) -> None:
        """Once, as the first statement after one that read the CJK index starts."""
        if sql.startswith("--") or synced:
            return  # FTS5's own statements, or synced already
        if "hermes_fts_cjk MATCH" in sql:
            index_read.append(sql)
            return
        if not index_read:
            return
        proc = subprocess.run(
            [sys.executable, "-m", "hermes_fts.cli", "sync", "--json", "--db", str(db)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        synced.append(json.loads(proc.stdout)["applied"])

    with SessionStore(db, readonly=True) as store:
        assert store.index_state()["cjk_pending"] == 1
        store._conn.set_trace_callback(sync_in_another_process)
        for query in ("racetoken", "赫尔墨斯"):
            synced.clear(), index_read.clear()
            rows = store.search(query, sort=sort).rows
            assert synced == [1 if query == "racetoken" else 0], synced
            assert [r["id"] for r in rows] == hermes_row, (query, rows)
            if query == "racetoken":  # the second query finds the row in the index
                assert store.index_state()["cjk_pending"] == 0
