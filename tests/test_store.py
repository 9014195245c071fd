"""SessionStore in one process: schema, writers, pending sync, fail-open paths, CLI."""

from __future__ import annotations

import hashlib
import io
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _support import needs_extension

import hermes_fts
from hermes_fts import cli
from hermes_fts._sqlite import is_index_corruption
from hermes_fts.index import maintain as indexing
from hermes_fts.index import pending, schema
from hermes_fts.index.schema import BASE, CJK, CJK_PENDING, TRIGRAM
from hermes_fts.store import SessionStore

TEXTS = [
    ("user", "我们讨论了数据库迁移的计划", None),
    ("assistant", "日本語のテキストを検索します", None),
    ("user", "한국어 문장도 검색할 수 있어야 합니다", None),
    ("assistant", "plain English about deployment pipelines", None),
    ("tool", "工具输出 " + "x" * 9000 + " tailmarker", "shell"),
    ("user", "修改youer服务端的计划", None),
]


def _fill(store: SessionStore, n_rounds: int = 1) -> list[int]:
    store.add_session("s1", "cli", started_at=1.0)
    store.add_session("c1", "cron", started_at=2.0)
    rows = []
    for i in range(n_rounds):
        for j, (role, content, tool) in enumerate(TEXTS):
            rows.append(
                {
                    "session_id": "c1" if j == 3 else "s1",
                    "role": role,
                    "content": f"{content} r{i}",
                    "tool_name": tool,
                    "timestamp": 10.0 + i * 10 + j,
                }
            )
    return store.add_messages(rows)


def _match(store: SessionStore, index: str, query: str) -> set[int]:
    return {
        r[0]
        for r in store._conn.execute(f"SELECT rowid FROM {index} WHERE {index} MATCH ?", (query,))
    }


def _indexed_ids(conn: sqlite3.Connection, index: str) -> set[int]:
    return {r[0] for r in conn.execute(f"SELECT id FROM {index}_docsize")}


def _view_ids(conn: sqlite3.Connection, index: str) -> set[int]:
    return {r[0] for r in conn.execute(f"SELECT id FROM {schema.reads_view(conn, index)}")}


def _assert_indexes_exact(store: SessionStore) -> None:
    assert all(v is None for v in store.integrity_check().values()), store.integrity_check()
    for index in schema.INDEXES:
        if schema.index_sql(store._conn, index) is not None:
            assert _indexed_ids(store._conn, index) == _view_ids(store._conn, index), index


def _plain_write(db: Path, *statements: tuple[str, tuple[Any, ...]]) -> None:
    """Write through a plain connection (no SessionStore): the triggers log, nothing applies."""
    conn = sqlite3.connect(db)
    try:
        with conn:
            for sql, params in statements:
                conn.execute(sql, params)
    finally:
        conn.close()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "state.db"


@pytest.fixture(autouse=True)
def word_index(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests keep the opt-in word index: the trigger-written index whose
    maintenance and failures they check beside the CJK index's."""
    monkeypatch.setenv("HERMES_WORD_FTS", "1")


def test_default_path_uses_hermes_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("HERMES_WORD_FTS")  # the default layout
    SessionStore(tmp_path / "home" / "state.db").close()  # an explicit path creates
    with SessionStore() as store:
        assert store.path == os.path.realpath(tmp_path / "home" / "state.db")
        assert store._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        names = {r[0] for r in store._conn.execute("SELECT name FROM sqlite_master")}
        assert {"sessions", "messages", "state_meta"} <= names
        assert CJK in names or not store.cjk_available
        assert BASE not in names  # opt-in (HERMES_WORD_FTS=1)
        assert TRIGRAM not in names  # opt-in (HERMES_TRIGRAM_FTS=1)
        assert "schema_version" not in names  # that table belongs to Hermes Agent


def test_a_store_out_of_wal_keeps_its_journal_mode(tmp_path: Path) -> None:
    """Hermes 0.20+ keeps state.db out of WAL on a SQLite with the WAL-reset bug or
    under `database.journal_mode: delete`, and never switches a WAL file back; our
    write opens (sync, optimize-storage, the plugin's after-turn sync) turned it to
    WAL for good."""
    path = tmp_path / "state.db"
    with SessionStore(path) as store:
        _fill(store)
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode = DELETE").fetchone()[0] == "delete"
    conn.close()
    with SessionStore(path) as store:
        store.sync()
        store.optimize_storage()
        assert store._conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    finally:
        conn.close()


@pytest.mark.parametrize("readonly", [False, True])
def test_default_path_is_never_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, readonly: bool
) -> None:
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "home"))
    with pytest.raises(FileNotFoundError, match=r"no session store at .*state\.db.*HERMES_HOME"):
        SessionStore(readonly=readonly)
    assert not (tmp_path / "home").exists()  # not even the folder


@needs_extension
def test_writers_and_indexes(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HERMES_TRIGRAM_FTS", "1")  # the opt-in index is kept right too
    with SessionStore(db) as store:
        ids = _fill(store)
        assert store.get_session("s1")["source"] == "cli"
        assert [m["id"] for m in store.get_messages("s1")] == [
            i for k, i in enumerate(ids) if k != 3
        ]
        assert _match(store, CJK, "数据") == {ids[0]}
        assert _match(store, CJK, "迁") == {ids[0]}  # unigrams 1: one char inside a run
        assert _match(store, CJK, '"服务"') == {ids[5]}
        # Every index holds every row whole: tool rows past 8 KB, cron sessions.
        for index in (BASE, CJK):
            assert _match(store, index, "tailmarker") == {ids[4]}
            assert _match(store, index, "shell") == {ids[4]}
        assert _match(store, TRIGRAM, "tailmarker") == {ids[4]}
        assert _match(store, TRIGRAM, "deployment") == {ids[3]}
        assert _match(store, TRIGRAM, "数据库") == {ids[0]}
        store.update_message(ids[0], content="新的内容：向量检索")
        store.delete_message(ids[1])
        store.end_session("s1", "compression")
        store.end_session("s1", "later")
        assert store.get_session("s1")["end_reason"] == "compression"
        assert _match(store, CJK, "数据") == set()
        assert _match(store, CJK, "检索") == {ids[0]}
        assert pending.pending_count(store._conn) == 0  # own writes applied in the same txn
        _assert_indexes_exact(store)


@needs_extension
def test_flag_flips_never_touch_the_indexes(db: Path) -> None:
    with SessionStore(db) as store:
        ids = _fill(store)
        conn = store._conn
        conn.execute(f"DROP TRIGGER {CJK_PENDING}_insert")  # keep pending rows visible
        before = conn.total_changes
        store.set_message_flags(ids[0], active=False, compacted=True)
        # one row changed, no trigger wrote anything
        assert conn.total_changes - before == 1
        assert pending.pending_count(conn) == 0


@needs_extension
def test_pending_coalescing_of_foreign_changes(db: Path) -> None:
    with SessionStore(db) as store:
        ids = _fill(store)
    _plain_write(
        db,
        ("UPDATE messages SET content = '第一次修改' WHERE id = ?", (ids[0],)),
        ("UPDATE messages SET content = '第二次修改' WHERE id = ?", (ids[0],)),
        ("UPDATE messages SET role = 'tool' WHERE id = ?", (ids[2],)),
        ("UPDATE messages SET role = 'user' WHERE id = ?", (ids[4],)),
        ("UPDATE messages SET content = '临时' WHERE id = ?", (ids[1],)),
        ("DELETE FROM messages WHERE id = ?", (ids[1],)),
        (
            "INSERT INTO messages(session_id, role, content, timestamp) "
            "VALUES ('s1', 'user', '外部插入的消息', 99)",
            (),
        ),
        ("UPDATE messages SET content = '外部插入后又改了' WHERE content = '外部插入的消息'", ()),
    )
    with SessionStore(db) as store:  # open applies the backlog
        assert pending.pending_count(store._conn) == 0
        assert _match(store, CJK, "第二") == {ids[0]}
        assert _match(store, CJK, "第一") == set()
        assert _match(store, CJK, "工具") == {ids[4]}
        assert _match(store, CJK, "又改") != set()
        _assert_indexes_exact(store)


def test_foreign_id_change_is_indexed_under_the_new_id(db: Path) -> None:
    # Regression: the pending triggers logged only the old id, so a row whose
    # id a plain writer changed vanished from the CJK index.
    with SessionStore(db) as store:
        ids = _fill(store)
    _plain_write(db, ("UPDATE messages SET id = 9999 WHERE id = ?", (ids[0],)))
    with SessionStore(db) as store:
        assert _match(store, CJK, "迁移") == {9999}
        assert {r["id"] for r in store.search_messages("迁移")} == {9999}
        _assert_indexes_exact(store)


def test_pending_keeps_old_text_once_per_message(db: Path) -> None:
    # Only the first pending row's old values are ever read, so later edits
    # and the final delete must not store the text again.
    with SessionStore(db) as store:
        ids = _fill(store)
    _plain_write(
        db,
        ("UPDATE messages SET content = '第一版' WHERE id = ?", (ids[0],)),
        ("UPDATE messages SET content = '第二版' WHERE id = ?", (ids[0],)),
        ("DELETE FROM messages WHERE id = ?", (ids[0],)),
    )
    conn = sqlite3.connect(db)
    kept = conn.execute(
        f"SELECT old_content FROM {CJK_PENDING} WHERE msg_id = ?", (ids[0],)
    ).fetchall()
    conn.close()
    assert kept == [(TEXTS[0][1] + " r0",)]
    with SessionStore(db) as store:
        assert pending.pending_count(store._conn) == 0
        assert _match(store, CJK, "迁移") == set()
        assert _match(store, CJK, "第二") == set()
        _assert_indexes_exact(store)


def test_readonly_open_changes_no_byte(db: Path) -> None:
    def digest(p: Path) -> bytes:
        # SQLite itself creates an empty -wal/-shm pair for a WAL reader when
        # none exists; an absent and an empty log hold the same bytes.
        return hashlib.sha256(p.read_bytes() if p.exists() else b"").digest()

    with SessionStore(db) as store:
        _fill(store)
        store._mark_fts_stale("test: pending state must not be repaired by a reader")
    wal = db.with_name(db.name + "-wal")
    for writer_open in (False, True):
        writer = SessionStore(db) if writer_open else None
        if writer is not None:
            writer.add_message("s1", "user", "写入者仍然打开")
        before = (digest(db), digest(wal))
        with SessionStore(db, readonly=True) as ro:
            state = ro.index_state()
            assert ro._conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0] >= 6
            assert ro.sync() == 0
            with pytest.raises(PermissionError):
                ro.add_message("s1", "user", "nope")
            assert ro.optimize_storage()["reason"] == "read_only"
        assert state["fts_stale"] is True
        assert (digest(db), digest(wal)) == before
        if writer is not None:
            writer.close()


def test_readonly_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        SessionStore(tmp_path / "nope.db", readonly=True)
    assert not (tmp_path / "nope.db").exists()


def test_trigram_tokenizer_unavailable_simulated(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # This SQLite has trigram; the capability probe is what is simulated.
    probe = schema.probe_trigram
    monkeypatch.setenv("HERMES_TRIGRAM_FTS", "1")
    with SessionStore(db) as store:
        ids = _fill(store)
    monkeypatch.setattr(schema, "probe_trigram", lambda conn: False)
    with SessionStore(db) as store:
        state = store.index_state()
        assert state[TRIGRAM]["served"] is False
        assert state[BASE]["served"] is True
        assert schema.missing_triggers(store._conn, TRIGRAM)  # detached: writes keep working
        new = store.add_message("s1", "user", "written while trigram is off")
        assert _match(store, BASE, "written") == {new}
        store.delete_message(ids[0])
    fresh = db.with_name("fresh.db")
    with SessionStore(fresh) as store:
        assert schema.index_sql(store._conn, TRIGRAM) is None
        _fill(store)
        assert store.index_state()[BASE]["served"] is True
    monkeypatch.setattr(schema, "probe_trigram", probe)
    with SessionStore(db) as store:  # tokenizer back: rebuilt by optimize-storage
        assert store.index_state()[TRIGRAM]["served"] is False
        assert store.optimize_storage(sleep=lambda s: None, vacuum=False)["ok"]
        assert store.index_state()[TRIGRAM]["served"] is True
        _assert_indexes_exact(store)


def test_trigram_opt_out(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HERMES_TRIGRAM_FTS", "1")
    with SessionStore(db) as store:
        _fill(store)
    monkeypatch.setenv("HERMES_TRIGRAM_FTS", "0")
    with SessionStore(db) as store:
        assert store.index_state()[TRIGRAM]["served"] is False
        assert schema.index_sql(store._conn, TRIGRAM) is not None  # storage kept until optimize
        store.add_message("s1", "user", "after opt-out")
        assert store.optimize_storage(sleep=lambda s: None, vacuum=False)["ok"]
        assert schema.index_sql(store._conn, TRIGRAM) is None
    fresh = db.with_name("fresh.db")
    with SessionStore(fresh) as store:
        assert schema.index_sql(store._conn, TRIGRAM) is None


def test_no_fts5_simulated_writes_still_work(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with SessionStore(db) as store:
        _fill(store)
    monkeypatch.setattr(schema, "probe_fts5", lambda conn: False)
    with SessionStore(db) as store:
        assert store.index_state()[BASE]["served"] is False
        assert schema.missing_triggers(store._conn, BASE)
        store.add_message("s1", "user", "no fts5 here")
        assert store.optimize_storage()["reason"] == "fts5_unavailable"
    monkeypatch.undo()
    monkeypatch.setenv("HERMES_WORD_FTS", "1")  # undone with the rest
    with SessionStore(db) as store:
        assert store.fts_stale
        assert store.optimize_storage(sleep=lambda s: None, vacuum=False)["ok"]
        assert _match(store, BASE, "fts5") != set()
        _assert_indexes_exact(store)


@needs_extension
def test_corrupt_shadow_table_fails_open_to_like(db: Path) -> None:
    with SessionStore(db) as store:
        ids = _fill(store, n_rounds=30)
        contents = {r[0]: r[1] for r in store._conn.execute("SELECT id, content FROM messages")}
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(f"UPDATE {BASE}_data SET block = randomblob(length(block)) WHERE id > 10")
    conn.close()
    with SessionStore(db) as store:
        with pytest.raises(sqlite3.DatabaseError) as err:
            store._conn.execute(
                f"SELECT rowid FROM {BASE} WHERE {BASE} MATCH 'deployment'"
            ).fetchall()
        assert is_index_corruption(store._conn, err.value)
        store._mark_fts_stale(str(err.value))
        state = store.index_state()
        assert state["fts_stale"] and not state[BASE]["served"] and not state[CJK]["served"]
        # Every message is still found by a LIKE scan over its own text.
        for mid, text in contents.items():
            probe = text[:12]
            hits = {
                r[0]
                for r in store._conn.execute(
                    "SELECT id FROM messages WHERE content LIKE ?", (f"%{probe}%",)
                )
            }
            assert mid in hits
        new = store.add_message("s1", "user", "written after corruption 损坏之后")
        assert store.get_messages("s1")[-1]["id"] == new
    with SessionStore(db) as store:
        assert store.fts_stale  # stays stale across opens until optimize
        result = store.optimize_storage(sleep=lambda s: None, vacuum=True)
        assert result["ok"] and result["vacuumed"]
        assert not store.fts_stale
        assert _match(store, BASE, "deployment") == {
            i for i in ids if contents[i] and "deployment" in contents[i]
        }
        _assert_indexes_exact(store)


@needs_extension
def test_write_through_corrupt_index_is_not_lost(db: Path) -> None:
    with SessionStore(db) as store:
        _fill(store, n_rounds=30)
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(f"UPDATE {BASE}_data SET block = randomblob(length(block)) WHERE id > 10")
    conn.close()
    with SessionStore(db) as store:
        ids = [store.add_message("s1", "user", f"deployment 部署 {i}") for i in range(20)]
        stored = {m["id"] for m in store.get_messages("s1")}
        assert set(ids) <= stored
        if store.fts_stale:  # the trigger hit the corrupt segment
            assert not store.index_state()[BASE]["served"]


@needs_extension
def test_backfill_in_process_with_status_and_gap(db: Path) -> None:
    with SessionStore(db) as store:
        ids = _fill(store, n_rounds=40)
        store._mark_fts_stale("test")
        progress: list[dict] = []
        result = store.optimize_storage(
            progress=progress.append,
            vacuum=False,
            sleep=lambda s: None,
            chunk_rows=25,
            txn_target=None,
        )
        assert result["ok"]
        phases = [p["phase"] for p in progress]
        assert phases[0] == "repair" and phases[-1] == "done" and "backfill" in phases
        mid = [p for p in progress if p["phase"] == "backfill" and 0 < p["percent"] < 100]
        assert mid, "progress reported between chunks"
        assert store.rebuild_status() is None
        assert store.unindexed_range(BASE) is None
        _assert_indexes_exact(store)
        # A rebuild of the word index runs under its build name: the live
        # index has no gap, the rebuild's progress is reported.
        store._mark_fts_stale("again")
        indexing.reset_index(store._conn, BASE)
        assert store.unindexed_range(BASE) is None and store.index_state()[BASE]["rebuilding"]
        # the CJK index is rebuilt in place and shows the range LIKE must scan
        indexing.reset_index(store._conn, CJK)
        assert store.unindexed_range(CJK) == (0, max(ids))
        st = store.rebuild_status()
        assert st and st["pending"] and st["indexed"] == 0 and st["percent"] == 0


def test_add_messages_rejects_unknown_fields(db: Path) -> None:
    with SessionStore(db) as store:
        store.add_session("s1", "cli")
        with pytest.raises(ValueError):
            store.add_messages([{"session_id": "s1", "role": "user", "bogus": 1}])
        with pytest.raises(ValueError):
            store.update_message(1, session_id="other")
        assert store.get_messages("s1") == []


def test_a_message_field_given_as_none_takes_its_default(db: Path) -> None:
    """``timestamp=None`` is "not known", as ``started_at=None`` is for a session:
    the current time, not a NOT NULL constraint error from SQLite."""
    with SessionStore(db) as store:
        store.add_session("s1", "cli", started_at=None)
        mid = store.add_message("s1", "user", "hello", timestamp=None, active=None, compacted=None)
        (row,) = store.get_messages("s1")
        assert row["id"] == mid and row["timestamp"] > 0
        assert (row["active"], row["compacted"]) == (1, 0)


def test_existing_store_extra_columns_and_tables_untouched(db: Path) -> None:
    conn = sqlite3.connect(db)
    conn.executescript("""
        CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL,
                               started_at REAL NOT NULL, billing TEXT);
        CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,
                               role TEXT NOT NULL, content TEXT, timestamp REAL NOT NULL,
                               extra_col TEXT);
        CREATE TABLE my_table (x);
        INSERT INTO sessions VALUES ('s', 'cli', 1, 'b');
        INSERT INTO messages(session_id, role, content, timestamp, extra_col)
            VALUES ('s', 'user', 'old message 旧消息', 1, 'keep');
    """)
    conn.close()
    with SessionStore(db) as store:
        assert store.optimize_needed()  # old rows wait for optimize-storage
        store.optimize_storage(sleep=lambda s: None, vacuum=False)
        row = store._conn.execute("SELECT extra_col, display_kind FROM messages").fetchone()
        assert tuple(row) == ("keep", None)
        assert store._conn.execute("SELECT billing FROM sessions").fetchone()[0] == "b"
        assert _match(store, BASE, "old") == {1}
        _assert_indexes_exact(store)


# --------------------------------------------------------------------------- CLI


def test_cli_status_sync_path(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with SessionStore(db) as store:
        _fill(store)
    assert cli.main(["status", "--db", str(db), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["indexes"][BASE]["exists"] and data["indexes"][BASE]["x_text"] > 0
    assert data["sqlite_version"] == sqlite3.sqlite_version
    assert cli.main(["status", "--db", str(db)]) == 0
    assert "hermes_fts_word" in capsys.readouterr().out
    assert cli.main(["sync", "--db", str(db), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["pending"] == 0
    assert cli.main(["path"]) == 0
    assert capsys.readouterr().out.strip() == hermes_fts.extension_path()
    assert cli.main(["status", "--db", str(db.with_name("missing.db"))]) == 2


def test_cli_optimize_prompt_with_stdin_closed_is_no(db: Path) -> None:
    """Run with no stdin at all (`<&-`, as some schedulers start a job), the prompt
    read sys.stdin, which Python sets to None, and died with a traceback."""
    with SessionStore(db) as store:
        _fill(store)
        store._mark_fts_stale("test")
    before = db.read_bytes()
    proc = subprocess.run(
        ["sh", "-c", 'exec "$0" -m hermes_fts.cli optimize-storage --db "$1" <&-']
        + [sys.executable, str(db)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
        timeout=120,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    # Run with no input (a script, cron): the error says how to run it without the question.
    assert proc.stderr.endswith(
        "Proceed? [y/N] \nError: cancelled; nothing was changed (no answer came: the input "
        "ended); pass --yes to run without asking\n"
    )
    assert db.read_bytes() == before


def test_cli_optimize_prompt_eof_is_no(
    db: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with SessionStore(db) as store:
        _fill(store)
        store._mark_fts_stale("test")
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert cli.main(["optimize-storage", "--db", str(db)]) == 1
    assert "cancelled; nothing was changed" in capsys.readouterr().err
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))  # a person's no needs no --yes hint
    assert cli.main(["optimize-storage", "--db", str(db)]) == 1
    assert capsys.readouterr().err.endswith("Error: cancelled; nothing was changed\n")
    with SessionStore(db) as store:
        assert store.fts_stale
    assert cli.main(["optimize-storage", "--db", str(db), "--yes"]) == 0
    out = capsys.readouterr()
    assert "optimized" in out.out and ("reclaimed" in out.out or "grew by" in out.out)
    with SessionStore(db) as store:
        assert not store.fts_stale and store.rebuild_status() is None


def test_cli_progress_bar_renders() -> None:
    stream = io.StringIO()
    bar = cli.ProgressBar(stream, terminal=True)
    bar({"phase": "repair", "percent": 0, "indexed": 0, "total": 0})
    bar({"phase": "backfill", "percent": 10, "indexed": 100, "total": 1000})
    bar({"phase": "backfill", "percent": 50, "indexed": 500, "total": 1000})
    bar({"phase": "done", "percent": 100, "indexed": 0, "total": 0})
    text = stream.getvalue()
    assert (
        "50%" in text and "500/1,000 messages" in text and "messages/s" in text and "left" in text
    )


def test_add_messages_streams_an_iterator_and_returns_ids(db: Path) -> None:
    with SessionStore(db) as store:
        store.add_session("s1", "cli")
        first = store.add_message("s1", "user", "before")
        store.delete_message(first)  # AUTOINCREMENT: ids never reused
        gen = ({"session_id": "s1", "role": "user", "content": f"row {i}"} for i in range(250))
        ids = store.add_messages(gen)
        assert ids == [m["id"] for m in store.get_messages("s1")]
        assert ids[0] == first + 1 and len(ids) == 250
        assert store.add_messages([]) == []


@needs_extension
def test_cli_optimize_ctrl_c_then_resume(
    db: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with SessionStore(db) as store:
        _fill(store, n_rounds=100)
        store._mark_fts_stale("test")
    calls = {"n": 0}
    real = cli.ProgressBar.__call__

    def interrupting(self: cli.ProgressBar, ev: dict) -> None:
        real(self, ev)
        if ev["phase"] == "backfill":
            calls["n"] += 1
            if calls["n"] == 3:
                raise KeyboardInterrupt

    monkeypatch.setattr(cli.ProgressBar, "__call__", interrupting)
    assert cli.main(["optimize-storage", "--db", str(db), "--yes", "--no-vacuum"]) == 130
    assert "resume" in capsys.readouterr().err
    with SessionStore(db) as store:
        assert store.rebuild_status() is not None
    monkeypatch.setattr(cli.ProgressBar, "__call__", real)
    assert cli.main(["optimize-storage", "--db", str(db), "--yes", "--no-vacuum"]) == 0
    with SessionStore(db) as store:
        assert store.rebuild_status() is None
        _assert_indexes_exact(store)


@needs_extension
def test_needs_optimize_names_each_reason_as_a_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One machine-readable list, read by the CLI, the tool and the plugin alike."""
    db = tmp_path / "state.db"
    with SessionStore(db) as store:
        _fill(store)
    plain = sqlite3.connect(db)  # an agent-written store: rows, none of our indexes
    with plain:
        for index in schema.INDEXES:
            schema.drop_index_objects(plain, index)
    plain.close()
    with SessionStore(db) as store:
        reasons = store.index_state()["needs_optimize"]
        assert {"word_missing", "cjk_missing"} <= set(reasons), reasons
        assert store.optimize_needed()
        assert store.optimize_storage(min_pause=0)["ok"]
        assert store.index_state()["needs_optimize"] == [] and not store.optimize_needed()
        store._mark_fts_stale("test: a damaged page")
        assert "fts_stale" in store.index_state()["needs_optimize"]
    assert cli.main(["status", "--db", str(db), "--json"]) == 0
    assert "fts_stale" in json.loads(capsys.readouterr().out)["needs_optimize"]


def test_text_that_is_not_utf8_reads_with_replacement_characters(db: Path) -> None:
    """Bytes another tool wrote as TEXT (the sqlite3 shell, a CAST) must not make
    every read of their row fail: they read as U+FFFD, the rest of the text intact."""
    with SessionStore(db) as store:
        store.add_session("s1", title="fine")
        store.add_message("s1", "user", "deploy notes")
    _plain_write(
        db,
        ("UPDATE sessions SET title = CAST(X'74ff74' AS TEXT) WHERE id = 's1'", ()),
        (
            "INSERT INTO messages(session_id, role, content, timestamp) "
            "VALUES ('s1', 'assistant', CAST(X'6465706c6f7920ff20626164' AS TEXT), 1)",
            (),
        ),
    )
    with SessionStore(db) as store:
        store.sync()
    with SessionStore(db, readonly=True) as store:
        assert store.get_session("s1")["title"] == "t\ufffdt"
        contents = [m["content"] for m in store.get_messages("s1")]
        assert contents == ["deploy notes", "deploy \ufffd bad"]
        assert [s["title"] for s in store.sessions_by_activity()] == ["t\ufffdt"]
        found = store.search("bad")
        assert [r["snippet"] for r in found.rows] == ["deploy \ufffd >>>bad<<<"]
    plain = sqlite3.connect(db)  # as Hermes left it: none of our indexes, to estimate
    with plain:
        for index in schema.INDEXES:
            schema.drop_index_objects(plain, index)
    plain.close()
    with SessionStore(db, readonly=True) as store:
        assert store.optimize_estimate()["text_bytes"] > 0


@needs_extension
@pytest.mark.parametrize("cjk", ["1", "0"])
def test_text_another_program_stored_as_a_blob_is_found_and_read_as_text(
    db: Path, cjk: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A BLOB where text belongs (bytes written with the sqlite3 shell or a driver)
    is indexed as its text; the LIKE scan finds it too (Debian's SQLite never
    matches a pattern in a BLOB), and every read shows the text, never b'…'."""
    with SessionStore(db) as store:
        store.add_session("s1", title="fine")
        store.add_message("s1", "user", "deploy notes")
    calls = '[{"function": {"name": "terminal", "arguments": "{}"}}]'
    _plain_write(
        db,
        (
            "INSERT INTO messages(session_id, role, content, tool_calls, timestamp) "
            "VALUES ('s1', 'assistant', CAST(? AS BLOB), CAST(? AS BLOB), 2)",
            ("rollout blob 部署完成", calls),
        ),
        (
            "INSERT INTO messages(session_id, role, content, tool_name, timestamp) "
            "VALUES ('s1', 'tool', 'output', CAST('kubectl' AS BLOB), 3)",
            (),
        ),
    )
    monkeypatch.setenv("HERMES_CJK_FTS", cjk)
    with SessionStore(db) as store:
        store.sync()
        assert store.search("部署").rows[0]["snippet"] == "rollout blob >>>部署<<<完成"
        assert store.search("rollout").rows[0]["id"] == 2
        assert store.search("kubectl").rows[0]["tool_name"] == "kubectl"
        around = store.get_messages_around("s1", 2, 1)["window"]
        assert [m["content"] for m in around] == ["deploy notes", "rollout blob 部署完成", "output"]
        assert around[1]["tool_calls"] == json.loads(calls)
        assert around[2]["tool_name"] == "kubectl"
        messages = store.get_messages("s1")  # decoded, as Hermes' own get_messages
        assert [m["content"] for m in messages] == [m["content"] for m in around]
        assert messages[1]["tool_calls"] == json.loads(calls)
        assert messages[2]["tool_name"] == "kubectl"
        for found in (
            hermes_fts.session_search(store, query="部署"),
            hermes_fts.session_search(store, session_id="s1"),
        ):
            assert "b'" not in json.dumps(found, ensure_ascii=False)
            assert "rollout blob 部署完成" in json.dumps(found, ensure_ascii=False)


@needs_extension
def test_one_store_shared_by_threads_keeps_every_write(tmp_path: Path) -> None:
    """A framework's worker threads on one SessionStore: their transactions shared the
    connection, and a write failed ("cannot start a transaction within a transaction")
    whenever another thread was searching."""
    import threading

    store = SessionStore(tmp_path / "state.db")
    store.add_session("s1", "cli", started_at=1.0)
    errors: list[BaseException] = []
    added: list[int] = []

    def run(work: Any) -> None:
        try:
            for n in range(40):
                work(n)
        except BaseException as exc:  # noqa: BLE001 - the test reports every failure
            errors.append(exc)

    def write(tag: str) -> Any:
        return lambda n: added.append(store.add_message("s1", "user", f"{tag} 部署 note {n}"))

    def read(n: int) -> None:
        store.search("部署 OR note", limit=5)
        store.get_messages("s1")

    workers = [threading.Thread(target=run, args=(write(f"w{i}"),)) for i in range(3)]
    workers += [threading.Thread(target=run, args=(read,)) for _ in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []
    assert len(added) == 120
    assert sorted(r["id"] for r in store.get_messages("s1")) == sorted(added)
    assert len(store.search("部署", limit=500).rows) == 120
    store.close()
