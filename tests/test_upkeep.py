"""The pending table applied after a Hermes turn (``hermes/upkeep.py``), mostly without
Hermes: the plugin's hook itself runs against the real hermes-agent in
``tests/test_hermes_plugin.py``, and here beside Hermes' own connection."""

from __future__ import annotations

import logging
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from _support import needs_extension, other_application_db

from hermes_fts.hermes import serving, upkeep
from hermes_fts.store import SessionStore

pytestmark = needs_extension


def _hermes_wrote(path: Path, texts: list[str]) -> None:
    """Messages written by a process without the extension (the sqlite3 shell)."""
    script = "".join(
        "INSERT INTO messages(session_id, role, content, timestamp) "
        f"VALUES ('s1', 'user', '{text}', {1_700_000_000 + n});"
        for n, text in enumerate(texts)
    )
    subprocess.run([str(shutil.which("sqlite3")), str(path), script], check=True, timeout=60)


def test_a_run_applies_what_waits_and_the_index_answers(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    with SessionStore(path) as st:
        st.add_session("s1", "cli")
    _hermes_wrote(path, ["the zebrafish tank leaks", "水族箱漏水了"])
    with SessionStore(path, readonly=True) as before:
        assert before.index_state()["cjk_pending"] == 2
    thread = upkeep.apply_after_turn(path)
    assert thread is not None and not thread.daemon
    thread.join(timeout=60)
    assert not upkeep.running()
    with SessionStore(path, readonly=True) as after:
        assert after.index_state()["cjk_pending"] == 0
        for word in ("zebrafish", "漏水"):
            found = after.search(word)
            assert found.route == "fts_cjk" and len(found.rows) == 1, (word, found)


def test_a_failed_run_is_told_once_and_raises_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "state.db"
    path.write_bytes(b"not a database, " * 512)
    caplog.set_level(logging.DEBUG, logger=upkeep.__name__)
    for _ in range(2):
        thread = upkeep.apply_after_turn(path)
        assert thread is not None
        thread.join(timeout=60)
    told = [r for r in caplog.records if "left pending CJK changes for later" in r.getMessage()]
    assert [r.levelno for r in told] == [logging.INFO, logging.DEBUG], told
    assert path.read_bytes() == b"not a database, " * 512  # nothing written


def _backlog(path: Path, rows: int) -> None:
    """``rows`` messages written by the sqlite3 shell, all pending for the CJK index."""
    with SessionStore(path) as st:
        st.add_session("s1", "cli")
    script = (
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < "
        f"{rows}) INSERT INTO messages(session_id, role, content, timestamp) "
        "SELECT 's1', 'tool', 'zebrafish log line ' || i, 1700000000 + i FROM n;"
    )
    subprocess.run([str(shutil.which("sqlite3")), str(path), script], check=True, timeout=120)


def _pending(path: Path) -> int:
    with SessionStore(path, readonly=True) as st:
        return int(st.index_state()["cjk_pending"])


def test_a_run_stops_between_batches_once_hermes_exits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The thread is not a daemon, so an exiting Hermes waits for it: it applied the
    whole backlog first (18 s for 14,000 tool outputs), not one short write."""
    from hermes_fts.index.maintain import PENDING_BATCH_IDS

    path = tmp_path / "state.db"
    _backlog(path, PENDING_BATCH_IDS + 500)
    monkeypatch.setattr(upkeep, "_exiting", lambda: True)
    thread = upkeep.apply_after_turn(path)
    assert thread is not None
    thread.join(timeout=60)
    assert not upkeep.running()
    assert _pending(path) == PENDING_BATCH_IDS + 500  # stopped before the first batch
    with SessionStore(path) as st:  # the run's connection is closed: a writer applies them
        assert _pending(path) == 0
        assert st.search("zebrafish", limit=1).route == "fts_cjk"


def test_a_python_that_exits_leaves_the_backlog_to_the_next_run(tmp_path: Path) -> None:
    """The real interpreter exit: the main thread returns at once after starting a run
    over a backlog of thirty batches; the process ends with rows left pending."""
    import sys

    path = tmp_path / "state.db"
    _backlog(path, 60_000)
    script = (
        "import sys; from hermes_fts.hermes import upkeep; "
        "sys.exit(0 if upkeep.apply_after_turn(sys.argv[1]) is not None else 3)"
    )
    subprocess.run([sys.executable, "-c", script, str(path)], check=True, timeout=120)
    assert 0 < _pending(path)
    with SessionStore(path) as st:
        st.sync()
        assert set(st.integrity_check().values()) == {None} and _pending(path) == 0


def _write_lock_held_by_another(path: Path) -> sqlite3.Connection:
    """A connection holding ``path``'s write lock, as another process' long write does
    (a gateway's VACUUM at its start, Hermes' own index merge)."""
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    return holder


def test_an_exiting_hermes_does_not_sit_out_another_process_write_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Hermes quit right after a turn while another process held the write lock: the
    run's open waited SQLite's whole busy timeout (10 s, which nothing cuts short) before
    Hermes could exit, then failed with "database is locked"; it now stops for the exit."""
    path = tmp_path / "state.db"
    _backlog(path, 2)
    caplog.set_level(logging.DEBUG, logger=upkeep.__name__)
    monkeypatch.setattr(upkeep, "_exiting", lambda: True)
    holder = _write_lock_held_by_another(path)
    try:
        thread = upkeep.apply_after_turn(path)
        assert thread is not None
        thread.join(timeout=60)
        told = [r.getMessage() for r in caplog.records]
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert not thread.is_alive() and not upkeep.running()
    assert any("Hermes exits" in m for m in told) and not any("locked" in m for m in told), told
    assert _pending(path) == 2  # left to the next run


def test_a_running_hermes_run_waits_for_another_process_write_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While Hermes runs, the run still waits for the lock and then applies the rows."""
    import threading

    path = tmp_path / "state.db"
    _backlog(path, 2)
    seen_held = threading.Event()

    def held(store: Path) -> bool:
        taken = upkeep_lock_held(store)
        if taken:
            seen_held.set()
        return taken

    upkeep_lock_held = upkeep.write_lock_held
    monkeypatch.setattr(upkeep, "write_lock_held", held)
    holder = _write_lock_held_by_another(path)
    try:
        thread = upkeep.apply_after_turn(path)
        assert thread is not None
        assert seen_held.wait(timeout=30)  # the run met the lock and waits
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    thread.join(timeout=60)
    assert not upkeep.running() and _pending(path) == 0


def test_a_run_creates_no_store_and_touches_no_other_database(tmp_path: Path) -> None:
    """The hook checks the store, then the run opens it: a store moved away meanwhile
    became a new empty one with our tables where Hermes keeps its history, and a
    file of another application got them added."""
    missing = tmp_path / "gone" / "state.db"
    other = other_application_db(tmp_path / "other.db")
    before = other.read_bytes()
    for path in (missing, other):
        thread = upkeep.apply_after_turn(path)
        assert thread is not None
        thread.join(timeout=60)
    assert not missing.exists() and not missing.parent.exists()
    assert other.read_bytes() == before


def _optimized_store(tmp_path: Path) -> Path:
    """A store with one message and every index built."""
    path = tmp_path / "state.db"
    with SessionStore(path) as st:
        st.add_session("s1", "cli")
        st.add_message("s1", "user", "the deploy failed")
        assert st.optimize_storage(min_pause=0, vacuum=False)["ok"]
    return path


def _block_writes(path: Path) -> None:
    """Drop the time table in the sqlite3 shell: our trigger then fails Hermes' writes."""
    sqlite3 = str(shutil.which("sqlite3"))
    subprocess.run([sqlite3, str(path), "DROP TABLE hermes_fts_time;"], check=True, timeout=60)
    with pytest.raises(subprocess.CalledProcessError):
        _hermes_wrote(path, ["lost"])


def _hook_after_turn(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The plugin's hook after a turn on ``home``'s store, waited for, its stores closed."""
    import time

    from hermes_fts.hermes import plugin

    monkeypatch.setenv("HERMES_HOME", str(home))
    plugin.after_turn()
    deadline = time.monotonic() + 60
    while upkeep.running() and time.monotonic() < deadline:
        time.sleep(0.05)
    serving.STORES.drop()


def test_the_hook_after_a_turn_puts_back_a_table_whose_loss_fails_every_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table of ours dropped by hand, its trigger kept: every message Hermes saved
    failed ("no such table").  The hook's apply ran only for pending rows of a served
    index, so nothing put the table back until the user ran optimize-storage."""

    path = _optimized_store(tmp_path)
    _block_writes(path)
    _hook_after_turn(tmp_path, monkeypatch)
    _hermes_wrote(path, ["the walrus tank leaks"])  # saved again


def test_the_hook_after_a_turn_unblocks_writes_but_builds_no_missing_cjk_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hook's apply ran ``sync()``, which creates a missing CJK index and seeds its
    backfill over every message: the plugin built an index, which it never does."""

    import hermes_fts

    path = _optimized_store(tmp_path)
    conn = hermes_fts.connect(str(path))  # the CJK table's tokenizer is needed to drop it
    conn.execute("DROP TABLE hermes_fts_cjk")
    conn.close()
    _block_writes(path)
    _hook_after_turn(tmp_path, monkeypatch)
    _hermes_wrote(path, ["the walrus tank leaks"])  # saved again
    with SessionStore(path, readonly=True) as after:
        state = after.index_state()
        assert not state["hermes_fts_cjk"]["exists"], state["hermes_fts_cjk"]
        assert "cjk_missing" in state["needs_optimize"]
        assert [r["snippet"] for r in after.search("walrus").rows] == [
            "the >>>walrus<<< tank leaks"
        ]


# Hermes' process: its own SessionDB connection stays open across turns; the hook's
# apply runs beside it; other Hermes processes (a gateway, a second CLI) save
# messages on the same store in between.
_HERMES_PROCESS = """
import os, subprocess, sys, time
from hermes_state import SessionDB
from hermes_fts.hermes import plugin, serving, upkeep
OTHER = ("import sys; from hermes_state import SessionDB; d = SessionDB(); "
         "d.append_message('s1', 'user', content=sys.argv[1]); d.close()")
db = SessionDB()
db.append_message("s1", "user", content="saved by this process")
plugin.after_turn()
while upkeep.running():
    time.sleep(0.01)
subprocess.run([sys.executable, "-c", OTHER, "saved by another process"], check=True)
db.append_message("s1", "user", content="saved again by this process")
subprocess.run([sys.executable, "-c", OTHER, "saved again by another process"], check=True)
db.close()
serving.STORES.drop()
"""


def test_the_hooks_apply_loses_no_message_another_hermes_process_saves(
    hermes_venv: Path, tmp_path: Path
) -> None:
    """Opening the store for the apply read its first bytes with Python's open(); the
    close dropped every POSIX lock of Hermes' process on the file, its own
    connection's too, so another Hermes process closing its connection deleted the
    WAL under it, and the next message that process saved was lost."""
    import _hermes_env as he

    home = tmp_path / "home"
    home.mkdir()
    path = home / "state.db"
    with SessionStore(path) as st:
        st.add_session("s1", "cli")
        st.add_message("s1", "user", "seeded")
        assert st.optimize_storage(min_pause=0, vacuum=False)["ok"]
    proc = subprocess.run(
        [str(he.venv_python(hermes_venv)), "-c", _HERMES_PROCESS],
        capture_output=True,
        text=True,
        env=he.clean_env(home),
        timeout=300,
        cwd=str(tmp_path),
    )
    assert proc.returncode == 0, proc.stderr
    conn = sqlite3.connect(path)
    try:
        saved = [text for (text,) in conn.execute("SELECT content FROM messages ORDER BY id")]
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finally:
        conn.close()
    assert saved == [
        "seeded",
        "saved by this process",
        "saved by another process",
        "saved again by this process",
        "saved again by another process",
    ]
