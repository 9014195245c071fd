"""The time table (``hermes_fts.index.time_table``): filled in chunks, kept exact by triggers
in every writer, used only when complete, and the old index on
``messages(timestamp)`` migrated away.

Walk-versus-sort equality and the real Hermes Agent writer are in
``tests/test_search_plans.py``; these tests use plain sqlite3 as the writer
without our extension (Hermes Agent's situation).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from _support import needs_extension

from hermes_fts.cli import main
from hermes_fts.index import maintain as indexing
from hermes_fts.index import time_table
from hermes_fts.store import SessionStore

pytestmark = needs_extension

T0 = 1_700_000_000.0


def _mirror(conn: Any) -> list[tuple[Any, ...]]:
    return [
        tuple(r)
        for r in conn.execute(f"SELECT id, ts, typeof(ts) FROM {time_table.TABLE} ORDER BY id")
    ]


def _truth(conn: Any) -> list[tuple[Any, ...]]:
    return [
        tuple(r)
        for r in conn.execute("SELECT id, timestamp, typeof(timestamp) FROM messages ORDER BY id")
    ]


def _store(path: Path, n: int = 300) -> SessionStore:
    st = SessionStore(path)
    st.add_session("s1", "cli")
    st.add_session("s2", "cli")
    st.add_messages(
        {
            "session_id": f"s{1 + i % 2}",
            "role": "user",
            "content": f"数据 deploy {i}",
            "timestamp": T0 + (i * 7) % 50,
        }
        for i in range(n)
    )
    return st


def _plain(path: Path) -> sqlite3.Connection:
    """A writer without our extension, like Hermes Agent's process."""
    return sqlite3.connect(path, timeout=5, isolation_level=None)


def _walks(st: SessionStore) -> bool:
    statements: list[str] = []
    st._conn.set_trace_callback(statements.append)
    try:
        st.search_messages("数据", sort="newest", limit=1)
    finally:
        st._conn.set_trace_callback(None)
    return any(time_table.INDEX in s for s in statements)


def test_only_optimize_storage_adds_it_and_a_second_run_keeps_it(tmp_path):
    with _store(tmp_path / "state.db") as st:
        assert st.index_state()["time_table"]["status"] == "absent"
        assert st.index_state()["time_index"] is None  # writes alone never add it
        assert st.optimize_storage(vacuum=False)["ok"]
        assert st.index_state()["time_index"] == time_table.TABLE
        assert _mirror(st._conn) == _truth(st._conn)
        assert _walks(st)
        statements: list[str] = []
        st._conn.set_trace_callback(statements.append)
        st.optimize_storage(vacuum=False)  # complete and sound: left as it is, not refilled
        st._conn.set_trace_callback(None)
        assert not [s for s in statements if f"INSERT INTO main.{time_table.TABLE}" in s]
        assert not st.optimize_needed()


def test_chunked_fill_is_exact_with_writes_of_every_kind_between_chunks(tmp_path):
    db = tmp_path / "state.db"
    with _store(db, 400) as st:
        plain = _plain(db)
        time_table.install(st._conn)
        assert st.index_state()["time_index"] is None  # not before it is complete
        assert st.index_state()["time_table"]["status"] == "filling"
        chunks: list[int | None] = []
        writes = iter(
            [
                "INSERT INTO messages(session_id, role, content, timestamp) "
                "VALUES ('s1', 'user', 'late 数据', 1.0)",
                "UPDATE messages SET timestamp = 5.0 WHERE id = 3",  # filled already
                "UPDATE messages SET timestamp = 6.0 WHERE id = 390",  # not yet filled
                "UPDATE messages SET id = 2000 WHERE id = 5",  # filled -> above the window
                "DELETE FROM messages WHERE id = 7",
                "UPDATE messages SET id = 7 WHERE id = 380",  # unfilled -> a filled id
                "DELETE FROM messages WHERE id = 9",
                "DELETE FROM messages WHERE id = 395",
                "UPDATE messages SET content = 'only content 数据' WHERE id = 11",
                "INSERT OR REPLACE INTO messages(id, session_id, role, content, timestamp) "
                "VALUES (12, 's2', 'user', 'replaced 数据', 'text time')",
                "DELETE FROM messages WHERE session_id = 's2' AND id > 300",
            ]
        )

        def between_chunks(_seconds: float) -> None:
            chunks.append(st.index_state()["time_table"]["filled"])
            assert st.index_state()["time_index"] is None
            sql = next(writes, None)
            if sql is not None:
                plain.execute(sql)

        time_table.drive_fill(st._conn, sleep=between_chunks, chunk_rows=30, txn_target=None)
        plain.close()
        st._seen.forget()
        assert len(chunks) >= 11  # every write landed between two chunks
        assert next(writes, None) is None
        assert st.index_state()["time_index"] == time_table.TABLE
        assert _mirror(st._conn) == _truth(st._conn)
        assert ("text",) == tuple({r[2] for r in _mirror(st._conn) if r[0] == 12})


@pytest.mark.parametrize(
    "change",
    [
        "INSERT INTO messages(session_id, role, content, timestamp) VALUES ('s1', 'user', 'n', 9)",
        "INSERT INTO messages(session_id, role, content, timestamp) "
        "VALUES ('s1', 'user', 'n', '2024-01-01')",
        "INSERT OR REPLACE INTO messages(id, session_id, role, content, timestamp) "
        "VALUES (4, 's1', 'user', 'n', 3.5)",
        "INSERT OR IGNORE INTO messages(id, session_id, role, content, timestamp) "
        "VALUES (4, 's1', 'user', 'n', 3.5)",
        "UPDATE messages SET timestamp = timestamp - 100 WHERE id % 3 = 0",
        "UPDATE messages SET id = id + 1000 WHERE id > 250",
        "UPDATE OR REPLACE messages SET id = 10 WHERE id = 20",
        "UPDATE messages SET content = 'x', timestamp = 1 WHERE id = 30",
        "DELETE FROM messages WHERE id % 5 = 0",
        "DELETE FROM messages",
    ],
)
def test_triggers_keep_it_exact_for_a_writer_without_the_extension(tmp_path, change):
    db = tmp_path / "state.db"
    with _store(db) as st:
        st.optimize_storage(vacuum=False)
    plain = _plain(db)
    plain.execute(change)
    plain.execute("VACUUM")  # Hermes Agent's vacuum(): ids and rows survive it
    plain.close()
    with SessionStore(db, readonly=True) as st:
        assert _mirror(st._conn) == _truth(st._conn)
        assert st.index_state()["time_index"] == time_table.TABLE


def test_the_old_index_is_not_walked_and_optimize_storage_drops_it(tmp_path):
    db = tmp_path / "state.db"
    with _store(db) as st:
        # A store optimized by the previous release: its index, no time table.
        st._conn.execute(f"CREATE INDEX {time_table.OLD_INDEX} ON messages(timestamp)")
        assert st.index_state()["time_table"]["old_index"]
        assert st.index_state()["time_index"] is None
        assert st.optimize_needed()
        statements: list[str] = []
        st._conn.set_trace_callback(statements.append)
        rows = st.search_messages("数据", sort="newest", limit=5)
        st._conn.set_trace_callback(None)
        assert rows and not any(time_table.OLD_INDEX in s for s in statements)
        assert st.optimize_storage(vacuum=False)["ok"]
        names = {
            r[0]
            for r in st._conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'messages'"
            )
        }
        assert time_table.OLD_INDEX not in names
        assert not st.index_state()["time_table"]["old_index"]
        assert st.index_state()["time_index"] == time_table.TABLE
        assert st.search_messages("数据", sort="newest", limit=5) == rows


def test_a_missing_trigger_stops_the_walk_until_a_refill(tmp_path):
    db = tmp_path / "state.db"
    with _store(db) as st:
        st.optimize_storage(vacuum=False)
    plain = _plain(db)
    plain.execute(f"DROP TRIGGER {time_table.TABLE}_update")
    plain.execute("UPDATE messages SET timestamp = 1 WHERE id = 50")  # goes past the table
    plain.execute(f"DROP TRIGGER {time_table.TABLE}_delete")
    plain.execute("DELETE FROM messages WHERE id > 280")  # leaves stale rows behind
    plain.close()
    with SessionStore(db) as st:
        assert _mirror(st._conn) != _truth(st._conn)
        assert st.index_state()["time_table"]["status"] == "triggers missing"
        assert st.index_state()["time_index"] is None
        assert not _walks(st)
        assert st.optimize_needed()
        st.optimize_storage(vacuum=False)
        assert _mirror(st._conn) == _truth(st._conn)  # stale rows and values fixed
        assert st.index_state()["time_index"] == time_table.TABLE


def test_a_table_of_another_shape_by_that_name_is_replaced(tmp_path):
    with _store(tmp_path / "state.db") as st:
        st._conn.execute(f"CREATE TABLE {time_table.TABLE}(id INTEGER PRIMARY KEY, ts REAL, x)")
        assert st.index_state()["time_index"] is None
        st.optimize_storage(vacuum=False)
        assert st.index_state()["time_index"] == time_table.TABLE
        assert _mirror(st._conn) == _truth(st._conn)


def test_an_interrupted_fill_resumes_where_it_stopped(tmp_path, monkeypatch):
    with _store(tmp_path / "state.db") as st:
        time_table.install(st._conn)
        assert time_table.fill_step(st._conn, 100)
        assert st.index_state()["time_table"]["filled"] == 100
        steps: list[int] = []
        real = time_table.fill_step

        def step(conn: Any, rows: int) -> bool:
            steps.append(int(indexing.get_meta(conn, time_table.META_PROGRESS) or 0))
            return real(conn, rows)

        monkeypatch.setattr(time_table, "fill_step", step)
        st.optimize_storage(vacuum=False, min_pause=0)
        assert steps[0] == 100  # resumed, not restarted
        assert _mirror(st._conn) == _truth(st._conn)


def test_a_hermes_like_writer_gets_in_while_the_table_fills(tmp_path):
    from test_backfill_pacing import start_hermes_like_writer

    db = tmp_path / "state.db"
    stop = tmp_path / "stop"
    with _store(db, 6000) as st:
        st.add_session("w1", "cli")
        time_table.install(st._conn)
    proc = start_hermes_like_writer(db, stop)
    chunks: list[Any] = []
    try:
        with SessionStore(db) as st:
            # Production pacing (MIN_PAUSE yields), small fixed chunks: many of them.
            time_table.drive_fill(
                st._conn,
                chunk_rows=300,
                txn_target=None,
                on_chunk=lambda: chunks.append(time_table.state(st._conn)["filled"]),
            )
    finally:
        stop.touch()
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    report = json.loads(out.strip().splitlines()[-1])
    during = {s for s in report["seen"] if time_table.META_PROGRESS in s}
    assert len(chunks) >= 10
    assert len(during) >= 3, (len(chunks), report)  # it wrote at several points of the fill
    with SessionStore(db, readonly=True) as st:
        assert _mirror(st._conn) == _truth(st._conn)
        assert set(report["ids"]) <= {r[0] for r in _mirror(st._conn)}


def _status(db: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    assert main(["status", "--db", str(db), *extra]) == 0
    return capsys.readouterr().out


def test_status_shows_the_time_table(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    db = tmp_path / "state.db"
    with _store(db) as st:
        st._conn.execute(f"CREATE INDEX {time_table.OLD_INDEX} ON messages(timestamp)")
    out = _status(db, capsys)
    assert "Time table: none" in out and "Old time index" in out
    with SessionStore(db) as st:
        time_table.install(st._conn)
        time_table.fill_step(st._conn, 100)
    assert "Time table: filling 33% " in _status(db, capsys)
    doc = json.loads(_status(db, capsys, "--json"))
    assert doc["time_table"]["status"] == "filling" and doc["time_table"]["filled"] == 100
    assert not doc["time_table"]["old_index"]
    with SessionStore(db) as st:
        st.optimize_storage(vacuum=False)
    assert "Time table: complete, 300 rows" in _status(db, capsys)
    plain = _plain(db)
    plain.execute(f"DROP TRIGGER {time_table.TABLE}_insert")
    plain.close()
    assert "Time table: NOT used (triggers missing)" in _status(db, capsys)
