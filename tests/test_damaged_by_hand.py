"""A store a user edited with the real ``sqlite3`` shell: objects of ours dropped,
rows of our index's tables deleted.  The read-only paths (``status``, the tool, the
plugin's store) must say what is wrong and what to run, searches must still find
every matching row by an exact route, and ``optimize-storage`` must repair it."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from _tool_fixtures import conversation, open_store

from hermes_fts import SessionStore, session_search
from hermes_fts.cli import main as cli_main

SQLITE3 = shutil.which("sqlite3")
pytestmark = pytest.mark.skipif(SQLITE3 is None, reason="needs the sqlite3 shell")

NEW_ROW = (
    "INSERT INTO messages(session_id, role, content, timestamp) "
    "VALUES ('en-1', 'user', 'the zebrafish tank leaks', 1700000100);"
)


def shell(db: Path, sql: str) -> None:
    """``sql`` run by the sqlite3 shell, as a user editing the file by hand."""
    subprocess.run([str(SQLITE3), str(db), sql], check=True, capture_output=True, text=True)


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    """An optimized store: the CJK index served, complete, with its triggers."""
    path = tmp_path / "state.db"
    with open_store(path) as store:
        conversation(store, "en-1", [("user", "the deploy failed"), ("assistant", "redeployed")])
        conversation(store, "zh-1", [("user", "数据库迁移的方案"), ("assistant", "好的")])
        store.optimize_storage(sleep=lambda s: None, vacuum=False)
    return path


def search(db: Path, query: str) -> dict:
    with SessionStore(db, readonly=True) as store:
        return session_search(store, query=query)


def status_json(db: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    assert cli_main(["--json", "status", "--db", str(db)]) == 0
    return json.loads(capsys.readouterr().out)


# Each edit leaves a row the CJK index does not hold, or the index unreadable.
EDITS = {
    "insert trigger dropped": "DROP TRIGGER hermes_fts_cjk_pending_insert; " + NEW_ROW,
    "update trigger dropped": "DROP TRIGGER hermes_fts_cjk_pending_update; "
    "UPDATE messages SET content = 'the zebrafish tank leaks' WHERE content = 'redeployed';",
    "change log dropped": "DROP TABLE hermes_fts_cjk_pending;",
    "view dropped": "DROP VIEW hermes_fts_cjk_text;",
    # FTS5 cannot open, nor so drop, a table whose shadow tables are gone.
    "data table dropped": "DROP TABLE hermes_fts_cjk_data;",
    "every shadow table dropped": "DROP TABLE hermes_fts_cjk_data; DROP TABLE hermes_fts_cjk_idx; "
    "DROP TABLE hermes_fts_cjk_docsize; DROP TABLE hermes_fts_cjk_config;",
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_a_cjk_index_missing_a_part_is_not_served_and_searches_still_find_the_rows(
    db: Path, edit: str, capsys: pytest.CaptureFixture[str]
) -> None:
    shell(db, EDITS[edit])
    word = "zebrafish" if "trigger" in edit else "deploy"
    found = search(db, word)
    assert found["success"] is True, found
    assert [r["session_id"] for r in found["results"]] == ["en-1"], found
    assert found["route"] != "fts_cjk", "an exact route, not the index that misses rows"
    assert "optimize-storage" in found["index_rebuild"]["note"], found
    status = status_json(db, capsys)
    cjk = status["indexes"]["hermes_fts_cjk"]
    assert cjk["served"] is False and "optimize-storage" in cjk["reason"], cjk
    assert "cjk_broken" in status["needs_optimize"], status
    with SessionStore(db) as store:
        store.optimize_storage(sleep=lambda s: None, vacuum=False)
    repaired = search(db, word)
    assert repaired["route"] == "fts_cjk" and "index_rebuild" not in repaired, repaired
    assert [r["session_id"] for r in repaired["results"]] == ["en-1"], repaired


def test_a_change_log_dropped_with_changes_in_it_is_rebuilt_not_trusted(db: Path) -> None:
    # The shell has no extension: its row waits in the change log, which is then dropped.
    shell(db, NEW_ROW + " DROP TABLE hermes_fts_cjk_pending;")
    with SessionStore(db) as store:  # a writer's open puts the log back: the row is lost to it
        found = session_search(store, query="zebrafish")
        assert [r["session_id"] for r in found["results"]] == ["en-1"], found
        assert found["route"] != "fts_cjk", found
        store.optimize_storage(sleep=lambda s: None, vacuum=False)
        repaired = session_search(store, query="zebrafish")
    assert repaired["route"] == "fts_cjk", repaired
    assert [r["session_id"] for r in repaired["results"]] == ["en-1"], repaired


@pytest.mark.parametrize(
    "edit",
    [
        "DELETE FROM hermes_fts_cjk_docsize WHERE id IN "
        "(SELECT id FROM messages WHERE content LIKE '%deploy%');",
        "DELETE FROM hermes_fts_cjk_data WHERE id > 10;",  # every segment, the structure kept
        "DELETE FROM hermes_fts_cjk_config;",  # FTS5's version row: 'invalid fts5 file format'
        # No error, no match: zeroed pages and a shifted page map read as an empty answer.
        "UPDATE hermes_fts_cjk_data SET block = zeroblob(length(block)) WHERE id > 10;",
        "UPDATE hermes_fts_cjk_idx SET pgno = pgno + 5;",
    ],
)
def test_an_answer_from_a_damaged_index_says_so_in_its_notes(db: Path, edit: str) -> None:
    shell(db, edit)
    found = search(db, "deploy")  # read-only, as the plugin: nothing can be marked
    assert [r["session_id"] for r in found["results"]] == ["en-1"], found
    assert found["route"] != "fts_cjk", found
    said = [n for n in found.get("query_notes", []) if "damaged" in n]
    assert said and "optimize-storage" in said[0], found
    with SessionStore(db) as store:
        store.optimize_storage(sleep=lambda s: None, vacuum=False)
    repaired = search(db, "deploy")
    assert repaired["route"] == "fts_cjk" and "query_notes" not in repaired, repaired
    assert [r["session_id"] for r in repaired["results"]] == ["en-1"], repaired


def test_an_empty_answer_from_a_sound_index_is_not_taken_for_damage(db: Path) -> None:
    found = search(db, "zebrafish")
    assert found["results"] == [] and found["route"] == "fts_cjk", found
    assert "query_notes" not in found, found


def test_an_empty_answer_is_checked_by_lookups_not_by_counting_every_row(db: Path) -> None:
    """The check behind an empty answer counted the index's rows and its messages'
    (every row read: 0.9 s at a million messages, after each write); its
    lookups find the damage it is there for (pages zeroed by hand)."""
    statements: list[str] = []
    with SessionStore(db, readonly=True) as store:
        store._conn.set_trace_callback(statements.append)
        assert store.search("zebrafish").rows == []
    asked = [s for s in statements if "MATCH" in s and "rowid" in s]
    assert asked, statements  # the lookups ran
    counted = [s for s in statements if "count(*)" in s.lower() and "pending" not in s]
    assert not counted, counted


def test_status_reports_an_index_that_lost_rows_as_damaged(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A search for a word of the rows kept meets no damage; status must still see it.
    shell(db, "DELETE FROM hermes_fts_cjk_docsize WHERE id = 1;")  # not the newest row
    status = status_json(db, capsys)
    assert "holds" in status["damaged"]["hermes_fts_cjk"], status["damaged"]
    assert "damaged" in status["needs_optimize"]
    assert "damaged" in status["indexes"]["hermes_fts_cjk"]["reason"]
    assert cli_main(["status", "--db", str(db)]) == 0
    shown = capsys.readouterr().out
    assert "damaged (holds" in shown and "optimize-storage" in shown, shown
    with SessionStore(db) as store:
        store.optimize_storage(sleep=lambda s: None, vacuum=False)
    after = status_json(db, capsys)
    assert after["damaged"] == {} and "damaged" not in after["needs_optimize"], after
    assert after["indexes"]["hermes_fts_cjk"]["reason"] == "ok"


def test_a_renamed_content_column_is_named_not_read_as_empty_messages(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shell(db, "ALTER TABLE messages RENAME COLUMN content TO body;")
    for command in (["status"], ["search", "deploy"], ["optimize-storage", "--yes"]):
        assert cli_main(["--json", *command, "--db", str(db)]) != 0, command
        error = json.loads(capsys.readouterr().out)["error"]
        assert "no content column" in error and "RENAME COLUMN" in error, error
    # Nothing was added in its place: renaming it back gives the store back whole.
    shell(db, "ALTER TABLE messages RENAME COLUMN body TO content;")
    found = search(db, "deploy")
    assert [r["session_id"] for r in found["results"]] == ["en-1"], found
    assert found["route"] == "fts_cjk", found


def test_a_change_log_emptied_by_hand_is_not_trusted(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The shell has no extension: its row waits in the log, which is then emptied,
    # so the index neither holds the row nor will ever get it.
    shell(db, NEW_ROW + " DELETE FROM hermes_fts_cjk_pending;")
    found = search(db, "zebrafish")
    assert [r["session_id"] for r in found["results"]] == ["en-1"], found
    assert found["route"] != "fts_cjk" and "optimize-storage" in found["index_rebuild"]["note"]
    status = status_json(db, capsys)
    assert "cjk_unlogged" in status["needs_optimize"], status
    assert "change log" in status["indexes"]["hermes_fts_cjk"]["reason"]
    with SessionStore(db) as store:
        store.optimize_storage(sleep=lambda s: None, vacuum=False)
    repaired = search(db, "zebrafish")
    assert repaired["route"] == "fts_cjk" and "index_rebuild" not in repaired, repaired
    assert [r["session_id"] for r in repaired["results"]] == ["en-1"], repaired


def test_rows_waiting_in_the_change_log_are_not_taken_for_damage(db: Path) -> None:
    shell(db, NEW_ROW)  # written without the extension, as Hermes writes
    with SessionStore(db, readonly=True) as store:
        state = store.index_state()
        assert state["hermes_fts_cjk"]["served"] is True, state["hermes_fts_cjk"]
        assert state["cjk_pending"] == 1 and "cjk_unlogged" not in state["needs_optimize"]
        assert [r["session_id"] for r in session_search(store, query="zebrafish")["results"]] == [
            "en-1"
        ]


def test_a_message_of_separators_alone_is_not_taken_for_damage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``___`` holds no token ("_" separates words): no index finds a row by it, so
    the probe asked the index for it and reported a sound store as damaged."""
    path = tmp_path / "state.db"
    with open_store(path) as store:
        conversation(store, "s1", [("user", "___"), ("assistant", "__ ** __"), ("user", "ok")])
        store.optimize_storage(sleep=lambda s: None, vacuum=False)
    status = status_json(path, capsys)
    assert status["damaged"] == {} and "damaged" not in status["needs_optimize"], status
    assert status["indexes"]["hermes_fts_cjk"]["reason"] == "ok", status


# The time table and its zones raise no error when edited: time sorts and time
# bounds read them as they are (zones deleted: a bounded search found nothing),
# status said "complete" and optimize-storage left them so.
TIME_EDITS = {
    "a row deleted": "DELETE FROM hermes_fts_time WHERE id = 1;",
    "a time edited": "UPDATE hermes_fts_time SET ts = ts + 1e6 WHERE id = 1;",
    "a row added": "INSERT INTO hermes_fts_time(id, ts) VALUES (999, 1);",
    "zones deleted": "DELETE FROM hermes_fts_time_zones;",
    "zones narrowed": "UPDATE hermes_fts_time_zones SET lo = hi;",
    # NULL compares as NULL: the check passed them while bounded searches found nothing.
    "zones' lows emptied": "UPDATE hermes_fts_time_zones SET lo = NULL;",
    "zones' highs emptied": "UPDATE hermes_fts_time_zones SET hi = NULL;",
}


@pytest.mark.parametrize("edit", list(TIME_EDITS))
def test_a_time_table_edited_by_hand_is_named_and_refilled(
    db: Path, edit: str, capsys: pytest.CaptureFixture[str]
) -> None:
    shell(db, TIME_EDITS[edit])
    status = status_json(db, capsys)
    assert status["time_table"]["damaged"], status["time_table"]
    assert "hermes_fts_time" in status["damaged"] and "damaged" in status["needs_optimize"]
    assert cli_main(["status", "--db", str(db)]) == 0
    shown = capsys.readouterr().out
    assert "Time table: DAMAGED" in shown and "optimize-storage" in shown, shown
    with SessionStore(db) as store:
        done = store.optimize_storage(sleep=lambda s: None, vacuum=False)
    assert done["ok"] is True and "hermes_fts_time" in done["repaired"], done
    after = status_json(db, capsys)
    assert after["damaged"] == {} and after["time_table"]["status"] == "complete", after
    with SessionStore(db, readonly=True) as store:
        for how in ({"sort": "newest"}, {"sort": "oldest"}, {"after": 0, "before": 4e9}):
            assert len(store.search("deploy", **how).rows) == 1, how


@pytest.mark.parametrize(
    "edit",
    [
        # A fill's markers on a complete table, and on one whose mark of completion is gone.
        "INSERT OR REPLACE INTO state_meta VALUES ('hermes_fts_time_high_water', '99999'), "
        "('hermes_fts_time_progress', 'zz');",
        "DELETE FROM state_meta WHERE key = 'hermes_fts_time_complete'; INSERT OR REPLACE "
        "INTO state_meta VALUES ('hermes_fts_time_high_water', 'n/a');",
    ],
)
def test_time_table_markers_edited_to_garbage_are_refilled_not_a_traceback(
    db: Path, edit: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """int() of a marker raised ValueError in every status, search and optimize-storage."""
    shell(db, edit)
    status = status_json(db, capsys)
    assert status["indexes"]["hermes_fts_cjk"]["served"] is True, status
    with SessionStore(db, readonly=True) as store:
        for how in ({}, {"sort": "newest"}, {"after": 0, "before": 4e9}):
            assert len(store.search("deploy", **how).rows) == 1, how
    assert cli_main(["--json", "optimize-storage", "--yes", "--db", str(db)]) == 0
    assert json.loads(capsys.readouterr().out)["ok"] is True
    after = status_json(db, capsys)
    assert after["time_table"]["status"] == "complete" and after["damaged"] == {}, after
    assert after["needs_optimize"] == [], after


@pytest.mark.parametrize(
    "edit",
    [
        "INSERT OR REPLACE INTO state_meta SELECT 'hermes_fts_cjk_rebuild_high_water', max(id) "
        "FROM messages; INSERT OR REPLACE INTO state_meta "
        "VALUES ('hermes_fts_cjk_rebuild_progress', '1');",  # rewound, as by an old backup's
        "INSERT OR REPLACE INTO state_meta VALUES ('hermes_fts_cjk_rebuild_high_water', '999999');",
    ],
)
def test_backfill_markers_behind_the_index_rebuild_it_not_index_rows_twice(
    db: Path, edit: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The resumed backfill added rows the index held again: FTS5 saw a malformed
    index while status said ok."""
    shell(db, edit)
    assert search(db, "deploy")["route"] != "fts_cjk"  # not complete: not served
    with SessionStore(db) as store:
        assert store.optimize_storage(sleep=lambda s: None, vacuum=False)["ok"] is True
        assert store.integrity_check() == {"hermes_fts_cjk": None}
    found = search(db, "deploy")
    assert found["route"] == "fts_cjk", found
    assert [r["session_id"] for r in found["results"]] == ["en-1"], found
    after = status_json(db, capsys)
    assert after["needs_optimize"] == [] and after["damaged"] == {}, after


def test_a_message_replaced_without_a_delete_is_not_left_in_the_index(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """INSERT OR REPLACE fires no delete trigger: the apply added the new text and
    kept the old, so 'deploy' found a message that no longer says it."""
    shell(
        db,
        "INSERT OR REPLACE INTO messages(id, session_id, role, content, timestamp) "
        "SELECT id, session_id, role, 'the zebrafish tank leaks', timestamp FROM messages "
        "WHERE content = 'the deploy failed';",
    )
    with SessionStore(db) as store:  # a write open applies the change log
        assert store.search("deploy").rows == []
        assert [r["session_id"] for r in store.search("zebrafish").rows] == ["en-1"]
    status = status_json(db, capsys)
    assert "cjk_stale" in status["needs_optimize"], status
    assert "optimize-storage" in status["indexes"]["hermes_fts_cjk"]["reason"], status
    with SessionStore(db) as store:
        assert store.optimize_storage(sleep=lambda s: None, vacuum=False)["ok"] is True
        assert store.integrity_check() == {"hermes_fts_cjk": None}
        assert store.search("deploy").rows == []
        found = store.search("zebrafish")
    assert found.route == "fts_cjk" and [r["session_id"] for r in found.rows] == ["en-1"]


@pytest.mark.parametrize("route", [None, "fts5"])
def test_a_message_replaced_without_a_delete_is_not_found_by_its_old_text_in_kept_indexes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, route: str | None
) -> None:
    """The kept word and trigram indexes' insert trigger added the new text beside the
    replaced row's old tokens: 'deploy' found a message that no longer says it, read-only
    before any apply and still after one, where only the CJK index was marked stale."""
    monkeypatch.setenv("HERMES_WORD_FTS", "1")
    monkeypatch.setenv("HERMES_TRIGRAM_FTS", "1")
    path = tmp_path / "state.db"
    with open_store(path) as store:
        conversation(store, "en-1", [("user", "the deploy failed"), ("assistant", "redeployed")])
        store.optimize_storage(sleep=lambda s: None, vacuum=False)
        assert store.search("deploy", route=route).route == (route or "fts5")
    shell(
        path,
        "INSERT OR REPLACE INTO messages(id, session_id, role, content, timestamp) "
        "SELECT id, session_id, role, 'the zebrafish tank leaks', timestamp FROM messages "
        "WHERE content = 'the deploy failed';",
    )
    with SessionStore(path, readonly=True) as reader:
        assert not reader.index_state()["hermes_fts_trigram"]["served"]
        assert reader.search("deploy", route=route).rows == []
        assert [r["session_id"] for r in reader.search("zebrafish", route=route).rows] == ["en-1"]
    with SessionStore(path) as store:  # a write open applies the change log
        assert store.search("deploy", route=route).rows == []
        assert store.optimize_storage(sleep=lambda s: None, vacuum=False)["ok"] is True
        assert store.search("deploy", route=route).rows == []
        found = store.search("zebrafish", route=route)
    assert found.route == (route or "fts5") and [r["session_id"] for r in found.rows] == ["en-1"]


def test_a_logged_delete_of_a_message_the_index_never_held_leaves_it_sound(db: Path) -> None:
    """FTS5 takes a 'delete' of a row it lacks at its word: it subtracted the tokens
    and the index was malformed while status said ok."""
    shell(
        db,
        "INSERT INTO hermes_fts_cjk_pending(msg_id, op, old_role, old_content) "
        "VALUES (99999, 'delete', 'user', 'the deploy failed');",
    )
    with SessionStore(db) as store:
        store.sync()
        assert store.integrity_check() == {"hermes_fts_cjk": None}
        found = store.search("deploy")
    assert found.route == "fts_cjk" and [r["session_id"] for r in found.rows] == ["en-1"]


def _shell_insert(db: Path, text: str) -> subprocess.CompletedProcess[str]:
    """A message written as Hermes writes it (no extension, our triggers fire)."""
    sql = (
        "INSERT INTO messages(session_id, role, content, timestamp) "
        f"VALUES ('en-1', 'user', '{text}', 1700000200);"
    )
    return subprocess.run([str(SQLITE3), str(db), sql], capture_output=True, text=True)


@pytest.mark.parametrize(
    "table",
    [
        "hermes_fts_time",
        "hermes_fts_time_zones",
        "hermes_fts_rank_bounds_dirty",
        "hermes_fts_rank_bounds_built",
    ],
)
def test_a_table_our_triggers_write_dropped_by_hand_no_longer_blocks_writes(
    db: Path, table: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every message write failed ("no such table") until optimize-storage, whose run
    the user may not make for days: Hermes lost each message.  A write open (a
    `sync`, the plugin's apply after a turn) puts the table back."""
    shell(db, f"DROP TABLE {table};")
    refused = _shell_insert(db, "the walrus tank leaks")
    assert refused.returncode != 0 and "no such table" in refused.stderr, refused
    assert "writes_blocked" in status_json(db, capsys)["needs_optimize"]
    assert cli_main(["sync", "--db", str(db)]) == 0
    capsys.readouterr()
    saved = _shell_insert(db, "the walrus tank leaks")
    assert saved.returncode == 0, saved.stderr
    assert "writes_blocked" not in status_json(db, capsys)["needs_optimize"]
    with SessionStore(db) as store:
        assert store.optimize_storage(sleep=lambda s: None, vacuum=False)["ok"]
        assert store.index_state()["needs_optimize"] == []
    found = search(db, "walrus")
    assert found["route"] == "fts_cjk" and [r["session_id"] for r in found["results"]] == ["en-1"]


def test_a_dropped_index_s_triggers_no_longer_block_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The opt-in word index dropped by hand: its triggers still wrote it.  A write open
    drops them (the index is missing: optimize-storage builds it whole)."""
    monkeypatch.setenv("HERMES_WORD_FTS", "1")
    path = tmp_path / "state.db"
    with open_store(path) as store:
        conversation(store, "en-1", [("user", "the deploy failed")])
        store.optimize_storage(sleep=lambda s: None, vacuum=False)
    shell(path, "DROP TABLE hermes_fts_word;")
    assert _shell_insert(path, "the walrus tank leaks").returncode != 0
    SessionStore(path).close()
    assert _shell_insert(path, "the walrus tank leaks").returncode == 0
    with SessionStore(path) as store:
        assert store.optimize_storage(sleep=lambda s: None, vacuum=False)["ok"]
        found = store.search("walrus")
        assert found.route == "fts5" and len(found.rows) == 1, found


def test_a_rebuild_s_triggers_are_not_taken_for_blocked_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: the triggers of a word or trigram index being rebuilt name their
    state_meta keys (``hermes_fts_word_rebuild_progress``) in strings; those were
    read as tables that are gone, so a write open dropped the triggers, and the
    rows written meanwhile were missing from the rebuilt index."""
    from hermes_fts.index import maintain as indexing
    from hermes_fts.index import schema

    monkeypatch.setenv("HERMES_WORD_FTS", "1")
    monkeypatch.setenv("HERMES_TRIGRAM_FTS", "1")
    path = tmp_path / "state.db"
    with open_store(path) as store:
        conversation(store, "en-1", [("user", f"note {i} about the deploy") for i in range(50)])
        for index in (schema.BASE, schema.TRIGRAM):
            indexing.reset_index(store._conn, index)
        triggers = {
            n
            for (n,) in store._conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        }
        assert schema.dangling_triggers(store._conn) == {}
        assert "writes_blocked" not in store.index_state()["needs_optimize"]
    with open_store(path) as store:  # a write open while both rebuild
        after = {
            n
            for (n,) in store._conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        }
        assert after == triggers
        conversation(store, "en-2", [("user", "the walrus joined meanwhile")])
        assert store.optimize_storage(sleep=lambda s: None, vacuum=False)["ok"]
        for index in (schema.BASE, schema.TRIGRAM):  # the row reached both rebuilt indexes
            held = store._conn.execute(
                f"SELECT count(*) FROM {index} WHERE {index} MATCH 'walrus'"
            ).fetchone()[0]
            assert held == 1, index


def _damage_message_pages(path: Path) -> None:
    """Overwrite the message table's leaf pages with bytes no page holds, as a disk
    fault would: the file still opens, reading its messages fails."""
    out = subprocess.run(
        [
            str(SQLITE3),
            str(path),
            "SELECT pageno FROM dbstat WHERE name = 'messages' AND pagetype = 'leaf';",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    pages = [int(n) for n in out.split()]
    assert pages
    with open(path, "r+b") as f:
        f.seek(0)
        page_size = int.from_bytes(f.read(18)[16:18], "big")
        for page in pages:
            f.seek((page - 1) * page_size)
            f.write(b"\xa5" * page_size)


def _optimized_store_with_damaged_message_pages(tmp_path: Path) -> Path:
    path = tmp_path / "state.db"
    with open_store(path) as store:
        conversation(store, "en-1", [("user", f"note {i} " + "deploy " * 40) for i in range(60)])
        store.optimize_storage(sleep=lambda s: None, vacuum=False)
    shell(path, "PRAGMA journal_mode = DELETE;")
    _damage_message_pages(path)
    return path


@pytest.mark.parametrize("command", [["status"], ["optimize-storage", "--yes"]])
def test_a_store_whose_message_pages_are_damaged_is_named_with_what_to_do(
    tmp_path: Path, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    path = _optimized_store_with_damaged_message_pages(tmp_path)
    status = cli_main([*command, "--json", "--db", str(path)])
    error = json.loads(capsys.readouterr().out)["error"]
    # The file, the damage and what to do: not "the session store cannot be used".
    assert status == 2
    assert f"{path} is damaged" in error and ".recover" in error


def test_a_search_on_damaged_message_pages_sends_to_the_command_that_names_the_cure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A search told a person to rebuild the indexes or restore a backup; the
    optimize-storage it named then refused with other words.  It now promises what
    optimize-storage does: a rebuild of ours, or the recovery of Hermes' tables."""
    path = _optimized_store_with_damaged_message_pages(tmp_path)
    assert cli_main(["search", "deploy", "--json", "--db", str(path)]) != 0
    error = json.loads(capsys.readouterr().out)["error"]
    assert "damaged" in error and "optimize-storage" in error, error
    assert "recover" in error and "restore it from a backup" not in error, error
    assert cli_main(["optimize-storage", "--yes", "--json", "--db", str(path)]) == 2
    assert ".recover" in json.loads(capsys.readouterr().out)["error"]


@pytest.mark.parametrize(
    "tables, wrong",
    [
        (  # no id: a message has only its rowid
            "CREATE TABLE messages(session_id TEXT, role TEXT, content TEXT, timestamp REAL);",
            "messages.id is not its INTEGER PRIMARY KEY",
        ),
        (  # text ids, no integer rowid alias
            "CREATE TABLE messages(id TEXT PRIMARY KEY, session_id TEXT, role TEXT, "
            "content TEXT, timestamp REAL);",
            "messages.id is not its INTEGER PRIMARY KEY",
        ),
        (
            "CREATE TABLE messages(id INTEGER PRIMARY KEY, role TEXT, content TEXT);",
            "messages has no session_id column",
        ),
    ],
)
@pytest.mark.parametrize(
    "command", [["status"], ["search", "deploy"], ["browse"], ["optimize-storage", "--yes"]]
)
def test_a_store_without_hermes_keys_is_refused_by_name_not_with_a_traceback(
    tmp_path: Path,
    tables: str,
    wrong: str,
    command: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "state.db"
    shell(path, "CREATE TABLE sessions(id TEXT PRIMARY KEY, source TEXT); " + tables)
    before = path.read_bytes()
    status = cli_main([*command, "--json", "--db", str(path)])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    assert status == 2
    assert wrong in json.loads(captured.out)["error"]
    assert path.read_bytes() == before  # no column was added to it


def test_rank_bounds_dropped_by_hand_are_named_by_status_and_measured_again(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Dropping the rank bounds' own table blocks no write (their triggers write the
    other two), but searches lose the bounds: status said nothing, while a run
    found the table gone and rebuilt it."""
    shell(db, "DROP TABLE hermes_fts_rank_bounds;")
    status = status_json(db, capsys)
    assert "dropped" in status["damaged"].get("hermes_fts_rank_bounds", ""), status["damaged"]
    assert "damaged" in status["needs_optimize"], status["needs_optimize"]
    assert cli_main(["status", "--db", str(db)]) == 0
    shown = capsys.readouterr().out
    assert "Rank bounds: NOT used (hermes_fts_rank_bounds dropped)" in shown, shown
    with SessionStore(db) as store:
        done = store.optimize_storage(sleep=lambda s: None, vacuum=False)
    assert done["ok"] is True and "hermes_fts_rank_bounds" in done["repaired"], done
    assert status_json(db, capsys)["damaged"] == {}


@pytest.mark.parametrize(
    "index",
    ["hermes_fts_messages_session_id", "hermes_fts_sessions_title", "hermes_fts_cjk_pending_msg"],
)
def test_an_index_of_ours_dropped_by_hand_is_named_and_made_again(
    db: Path, index: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Reading a session, or applying the CJK changes, goes slower without them: status
    named nothing and ``optimize-storage --no-vacuum`` said "nothing to do", so they
    stayed missing until a full run."""
    shell(db, f"DROP INDEX {index};")
    assert "read_indexes" in status_json(db, capsys)["needs_optimize"]
    assert cli_main(["status", "--db", str(db)]) == 0
    assert "(read_indexes)" in capsys.readouterr().out
    assert cli_main(["--json", "optimize-storage", "--no-vacuum", "--yes", "--db", str(db)]) == 0
    assert "nothing_to_do" not in json.loads(capsys.readouterr().out)
    assert "read_indexes" not in status_json(db, capsys)["needs_optimize"]
