"""optimize-storage cut short in its last step, the merge and VACUUM (DESIGN §5.6):
the store must still say that its compaction is left, and a rerun must do it.

Ctrl-C during the merge or the VACUUM reaches Python when SQLite returns, so
the run stops before its VACUUM; here the step's room check, which opens it,
raises KeyboardInterrupt as a Ctrl-C landing there does.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from _support import cut_short_after, needs_extension

from hermes_fts import session_search
from hermes_fts.index import space
from hermes_fts.store import SessionStore

ROOT = Path(__file__).resolve().parents[1]

pytestmark = needs_extension


def _store_with_free_pages(path: Path) -> None:
    """A store whose file holds pages a VACUUM gives back (deleted sessions)."""
    with SessionStore(path) as store:
        for number in range(20):
            sid = f"s{number}"
            store.add_session(sid, "cli")
            for i in range(20):
                store.add_message(sid, "user", f"note {i} 部署到东京 " + "filler " * 60)
    conn = sqlite3.connect(path)  # as Hermes deletes a session
    with conn:
        conn.execute("DELETE FROM messages WHERE session_id < 's5'")
    conn.close()


def _free_pages(path: Path) -> int:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return int(conn.execute("PRAGMA freelist_count").fetchone()[0])
    finally:
        conn.close()


def _interrupt_vacuum(*args: object, **kwargs: object) -> None:
    raise KeyboardInterrupt


def test_interrupted_vacuum_leaves_compaction_pending_and_a_rerun_does_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "state.db"
    _store_with_free_pages(db)
    assert _free_pages(db) > 0
    phases: list[str] = []
    with SessionStore(db) as store:
        monkeypatch.setattr(space, "check_vacuum_room", _interrupt_vacuum)
        with pytest.raises(KeyboardInterrupt):
            store.optimize_storage(lambda ev: phases.append(ev["phase"]), sleep=lambda _s: None)
        monkeypatch.undo()
    assert phases[-1] == "vacuum"  # stopped in the VACUUM step, every other one done
    assert _free_pages(db) > 0  # not compacted
    with SessionStore(db, readonly=True) as store:
        assert "compaction" in store.status()["needs_optimize"]
        assert store.optimize_needed()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    shown = subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", "--db", str(db), "status"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert shown.returncode == 0, shown.stderr
    assert (
        "Optimize: a run's VACUUM is left to do (it stopped, or Hermes had the store open) (compaction)"
        in shown.stdout
    ), shown.stdout
    with SessionStore(db) as store:
        result = store.optimize_storage(sleep=lambda _s: None)
        assert result["ok"] and result["vacuumed"]
    assert _free_pages(db) == 0
    with SessionStore(db, readonly=True) as store:
        assert "compaction" not in store.status()["needs_optimize"]


def test_a_run_without_vacuum_does_not_claim_compaction(tmp_path: Path) -> None:
    """--no-vacuum asks for no compaction: it neither does it nor leaves it pending."""
    db = tmp_path / "state.db"
    _store_with_free_pages(db)
    with SessionStore(db) as store:
        assert store.optimize_storage(vacuum=False, sleep=lambda _s: None)["ok"]
        assert "compaction" not in store.status()["needs_optimize"]


def test_ctrl_c_in_the_command_s_vacuum_step_says_compaction_is_left(tmp_path: Path) -> None:
    """The real command and a real SIGINT, which lands as the VACUUM step starts."""
    db = tmp_path / "state.db"
    _store_with_free_pages(db)
    code = (
        "import os, signal, sys\n"
        "from hermes_fts.index import space\n"
        "real = space.check_vacuum_room\n"
        "def check(*args, **kwargs):\n"
        "    real(*args, **kwargs)\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "space.check_vacuum_room = check\n"
        "from hermes_fts.cli import run\n"
        "sys.argv = ['hermes-fts', '--db', sys.argv[1], 'optimize-storage', '--yes']\n"
        "run()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code, str(db)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        restore_signals=True,
    )
    assert done.returncode == 130 and "Traceback" not in done.stderr, done.stderr
    assert "Compacting database (VACUUM)" in done.stderr and "Done." not in done.stderr
    assert "again to resume" in done.stderr
    assert _free_pages(db) > 0
    shown = subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", "--db", str(db), "--json", "status"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert "compaction" in json.loads(shown.stdout)["needs_optimize"]
    rerun = subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", "--db", str(db), "optimize-storage", "--yes"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert rerun.returncode == 0, rerun.stderr
    assert _free_pages(db) == 0


HOLDER = """\
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1])  # as Hermes keeps its store open
conn.execute("SELECT count(*) FROM messages").fetchone()
print("open", flush=True)
sys.stdin.readline()
"""


@pytest.mark.skipif(sys.platform != "linux", reason="who has a store open is read in /proc/locks")
def test_a_long_vacuum_is_left_while_another_process_has_the_store_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The merge and VACUUM each hold the write lock for one statement: longer than
    # Hermes retries a write (about 15 s), and Hermes loses the message it saves.
    from hermes_fts.index import optimize

    db = tmp_path / "state.db"
    _store_with_free_pages(db)
    size = db.stat().st_size
    # As if the disk copied this file's pages slower than Hermes waits for them.
    monkeypatch.setattr(optimize, "VACUUM_BYTES_PER_S", size / 30)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"open\n"
        with SessionStore(db) as store:
            result = store.optimize_storage(min_pause=0)
            assert result["ok"] and result["vacuumed"] is False, result
            assert "while Hermes is stopped" in result["vacuum_left"]
            assert "compaction" in store.index_state()["needs_optimize"]
        assert db.stat().st_size >= size  # not compacted
    finally:
        holder.communicate(b"\n", timeout=30)
    # Alone with the store, the same run compacts it.
    with SessionStore(db) as store:
        result = store.optimize_storage(min_pause=0)
        assert result["ok"] and result["vacuumed"] is True and "vacuum_left" not in result
        assert "compaction" not in store.index_state()["needs_optimize"]
    assert db.stat().st_size < size


@pytest.mark.skipif(sys.platform != "linux", reason="who has a store open is read in /proc/locks")
def test_the_dry_run_says_a_long_vacuum_is_left_while_another_process_has_the_store_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With Hermes holding the store open, the run leaves a merge and VACUUM longer than
    Hermes waits, and the file does not shrink; the dry run promised "give back
    about ..." all the same."""
    from hermes_fts.index import optimize

    db = tmp_path / "state.db"
    _store_with_free_pages(db)
    monkeypatch.setattr(optimize, "VACUUM_BYTES_PER_S", db.stat().st_size / 30)
    with SessionStore(db, readonly=True) as store:
        alone = store.optimize_estimate()
    assert alone["vacuum_left"] is None and alone["adds_bytes"] < 0, alone
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"open\n"
        with SessionStore(db, readonly=True) as store:
            plan = store.optimize_estimate()
        assert "while Hermes is stopped" in (plan["vacuum_left"] or ""), plan
        assert plan["adds_bytes"] >= 0 and plan["seconds"] < alone["seconds"], (plan, alone)
        with SessionStore(db) as store:
            result = store.optimize_storage(min_pause=0)
        assert result["vacuumed"] is False and result["size_after"] >= result["size_before"]
    finally:
        holder.communicate(b"\n", timeout=30)


@pytest.mark.skipif(sys.platform != "linux", reason="who has a store open is read in /proc/locks")
def test_a_long_integrity_check_is_left_while_another_process_has_the_store_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # FTS5's integrity-check is one INSERT holding the write lock while it reads the
    # whole index: on a large index, longer than Hermes retries a write.
    from hermes_fts.index import maintain, optimize

    db = tmp_path / "state.db"
    _store_with_free_pages(db)
    with SessionStore(db) as store:
        assert store.optimize_storage(min_pause=0)["ok"]  # the CJK index complete
    checked: list[str] = []
    real_check = maintain.integrity_check

    def integrity_check(conn: sqlite3.Connection, index: str) -> str | None:
        checked.append(index)
        return real_check(conn, index)

    monkeypatch.setattr(maintain, "integrity_check", integrity_check)
    # As if this index took a minute to check.
    monkeypatch.setattr(optimize, "INTEGRITY_BYTES_PER_S", 1)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"open\n"
        with SessionStore(db) as store:
            result = store.optimize_storage(min_pause=0, vacuum=False)
        assert result["ok"] and checked == [], (result, checked)
        assert "hermes_fts_cjk" in result["check_left"]
        assert "while Hermes is stopped" in result["check_left"]
    finally:
        holder.communicate(b"\n", timeout=30)
    # Alone with the store, the same run checks it in full.
    with SessionStore(db) as store:
        result = store.optimize_storage(min_pause=0, vacuum=False)
    assert result["ok"] and "check_left" not in result, result
    assert checked == ["hermes_fts_cjk"]


# optimize-storage in a process of its own, its rank bounds measured for every token of
# two rows or more, each read slowed down so a SIGTERM lands in the step.
SLOW_BOUNDS = """\
import sys, time
from hermes_fts.index import rank_bounds
rank_bounds.FREQUENT = 2
read = rank_bounds._read_token
def slow(*args, **kwargs):
    time.sleep(0.02)
    return read(*args, **kwargs)
rank_bounds._read_token = slow
from hermes_fts.cli import run
sys.argv = ["hermes-fts", "--db", sys.argv[1], "--json", "optimize-storage", "--yes"]
run()
"""


def _words_store(path: Path) -> None:
    """Messages of a few hundred words each in many rows: that many frequent tokens."""
    import random

    rnd = random.Random(3)
    vocab = [f"w{n}" for n in range(400)]
    with SessionStore(path) as store:
        store.add_session("s", "cli")
        store.add_messages(
            [
                {"session_id": "s", "role": "user", "content": " ".join(rnd.sample(vocab, 30))}
                for _ in range(1500)
            ]
        )


def _bounds(path: Path) -> tuple[list[tuple], list[tuple]]:
    from hermes_fts.index import rank_bounds

    conn = sqlite3.connect(path)
    try:
        built = conn.execute(f"SELECT * FROM {rank_bounds.BUILT} ORDER BY tbl").fetchall()
        rows = conn.execute(f"SELECT * FROM {rank_bounds.TABLE} ORDER BY tbl, token").fetchall()
        return built, rows
    finally:
        conn.close()


def test_sigterm_in_the_rank_bounds_step_keeps_the_tokens_measured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run stopped by SIGTERM while it measured rank bounds threw away every token
    it had read: they were written only at the end, so the next run read them all again."""
    from hermes_fts.index import rank_bounds

    db = tmp_path / "state.db"
    _words_store(db)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_BOUNDS, str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert proc.stderr is not None
    total = 0
    for line in proc.stderr:
        event = json.loads(line)
        if event.get("phase") == "rank_bounds" and event.get("done", 0) >= 150:
            total = event["total"]
            proc.send_signal(signal.SIGTERM)
            break
    out, err = proc.communicate(timeout=120)
    assert total > 300, err
    assert proc.returncode == 128 + signal.SIGTERM, out + err
    built, saved = _bounds(db)
    assert [r[4] for r in built] == [0]  # not ready: searches do not use them yet
    assert 0 < len(saved) < total  # the tokens read before the signal are kept
    twin = tmp_path / "twin.db"  # the same store, measured from the start
    shutil.copy(db, twin)
    monkeypatch.setattr(rank_bounds, "FREQUENT", 2)
    read: list[str] = []
    real = rank_bounds._read_token
    monkeypatch.setattr(
        rank_bounds, "_read_token", lambda *a, **k: read.append(a[2]) or real(*a, **k)
    )
    events: list[dict] = []
    with SessionStore(db) as store:
        assert store.optimize_storage(events.append, vacuum=False, sleep=lambda _s: None)["ok"]
    counted = [e["indexed"] for e in events if e["phase"] == "rank_bounds" and e["total"]]
    assert counted[0] == len(saved) + 1 and counted[-1] == total
    assert len(read) == total - len(saved)  # only the tokens left are read
    with SessionStore(twin) as store:
        with store._conn:
            rank_bounds.forget(store._conn)
        assert store.optimize_storage(vacuum=False, sleep=lambda _s: None)["ok"]
    assert _bounds(db) == _bounds(twin)  # the same bounds, to the byte
    assert _bounds(db)[0][0][4] == 1


def _early_ids_deleted(db: Path) -> None:
    """A store of 1,500 messages whose first 1,000 were deleted (old sessions)."""
    with SessionStore(db) as store:
        store.add_session("s1", "cli")
        store.add_messages(
            {"session_id": "s1", "role": "user", "content": f"note {i} 部署"} for i in range(1500)
        )
    conn = sqlite3.connect(db)  # as Hermes deletes a session
    with conn:
        conn.execute("DELETE FROM messages WHERE id <= 1000")
    conn.close()


@pytest.mark.parametrize("step", ["backfill", "time_table"])
def test_status_counts_what_a_run_left_in_messages_when_early_ids_were_deleted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], step: str
) -> None:
    """Ids need not be dense: with the first 1,000 of 1,500 messages deleted (old
    sessions), two chunks of 100 were "Backfill: 80% (1,200/1,500)" where 200 of
    the 500 messages are indexed, the time table's fill likewise."""
    from hermes_fts.cli import main as cli_main

    db = tmp_path / "state.db"
    _early_ids_deleted(db)
    with SessionStore(db) as store:
        if step == "backfill":
            store._mark_fts_stale("test")
        cut_short_after(store, 2)  # else the index is complete: the fill is the first step
    assert cli_main(["--json", "status", "--db", str(db)]) == 0
    status = json.loads(capsys.readouterr().out)
    assert cli_main(["status", "--db", str(db)]) == 0
    shown = capsys.readouterr().out
    if step == "backfill":
        backfill = status["backfill"]
        assert (backfill["indexed"], backfill["total"], backfill["percent"]) == (200, 500, 40)
        assert "Backfill: 40% " in shown and "(200/500)" in shown, shown
    else:
        assert status["time_table"]["filled_messages"] == 200, status["time_table"]
        assert "Time table: filling 40% " in shown and "(200/500 messages)" in shown, shown


def test_the_tools_backfill_note_counts_messages_when_early_ids_were_deleted(
    tmp_path: Path,
) -> None:
    """The model was told "Search index backfill incomplete: 80% done" of the store
    above, where 200 of its 500 messages were indexed: the tool's note counted ids."""
    db = tmp_path / "state.db"
    _early_ids_deleted(db)
    with SessionStore(db) as store:
        store._mark_fts_stale("test")
        cut_short_after(store, 2)
    with SessionStore(db, readonly=True) as store:
        note = session_search(store, query="部署")["index_rebuild"]
    assert note["percent"] == 40, note
    assert "backfill incomplete: 40% done" in note["note"], note


def test_the_backfill_note_names_optimize_storage_alone_as_what_finishes_it(
    tmp_path: Path,
) -> None:
    """The note said the backfill "advances while Hermes runs": nothing Hermes runs
    moves it (the plugin's after-turn apply is a sync), so a half-built index
    stayed half built while the note promised otherwise."""
    from hermes_fts.hermes import upkeep

    db = tmp_path / "state.db"
    _early_ids_deleted(db)
    with SessionStore(db) as store:
        store._mark_fts_stale("test")
        cut_short_after(store, 2)
    conn = sqlite3.connect(db)  # Hermes saves a turn's message without our extension
    with conn:
        conn.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) "
            "VALUES ('s1', 'user', 'new 部署', 1.0)"
        )
    conn.close()
    thread = upkeep.apply_after_turn(db)  # what the plugin runs after each turn
    assert thread is not None
    thread.join()
    with SessionStore(db) as store:
        assert store.sync() == 0  # the after-turn apply took the new message
    with SessionStore(db, readonly=True) as store:
        note = session_search(store, query="部署")["index_rebuild"]
    assert note["percent"] == 40, note  # as the run left it
    assert note["note"].endswith(
        "it does not advance on its own (Hermes and `sync` leave it), and "
        "`hermes-fts optimize-storage` finishes it."
    ), note
