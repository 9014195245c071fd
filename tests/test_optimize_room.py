"""optimize-storage on a disk without room for it (DESIGN §5.6, "Disk room").

The store is Hermes Agent 0.19.0's own, on a small tmpfs mounted for the
test.  A run whose peak does not fit is refused before it changes anything;
a disk that fills up while a run builds ends the run with a non-zero exit,
the store intact, and room for Hermes to go on writing sessions.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import _hermes_env as he
import pytest

import hermes_fts
from hermes_fts import cli
from hermes_fts.index import maintain as indexing
from hermes_fts.index import schema, space
from hermes_fts.store import SessionStore

pytestmark = pytest.mark.skipif(
    not hermes_fts.extension_path(), reason="needs the built cjk_unicode61 extension"
)

ROWS = 15_000
WORDS = "alpha beta deploy staging cluster 数据库 迁移 東京 天气 한국어".split()


@pytest.fixture(scope="module")
def hermes_store(hermes_venv: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Hermes store (its own schema and indexes) of ROWS messages, without ours."""
    home = tmp_path_factory.mktemp("hermes-home")
    db = Path(he.run_driver(hermes_venv, home, "seed")["db"])
    rnd = random.Random(7)
    conn = sqlite3.connect(db)
    with conn:  # a foreign writer: Hermes' triggers keep its own indexes
        conn.executemany(
            "INSERT INTO messages(session_id, role, content, timestamp) "
            "VALUES ('en-1', 'user', ?, ?)",
            (
                (" ".join(rnd.choice(WORDS) for _ in range(25)) + f" row{i}", 1.7e9 + i)
                for i in range(ROWS)
            ),
        )
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("VACUUM")
    conn.close()
    return db


def small_disk(folder: Path, megabytes: int) -> Path:
    """A tmpfs of ``megabytes`` at ``folder``; skips where mounting is not permitted."""
    folder.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={megabytes}m", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {proc.stderr.strip() or proc.returncode}")
    return folder


@pytest.fixture
def disk(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Path]:
    folder = small_disk(tmp_path / "disk", request.param)
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def optimize(db: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "hermes_fts.cli", "optimize-storage", "--yes", "--json"]
        + ["--db", str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )


def fill(folder: Path) -> None:
    """Another program takes all of the disk's room."""
    with open(folder / "filler", "wb") as out:
        try:
            while True:
                out.write(bytes(1 << 16))
                out.flush()
        except OSError:
            pass  # ENOSPC: the disk is full


def assert_intact_and_findable(db: Path, rows: int) -> None:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    texts = dict(conn.execute("SELECT id, content FROM messages"))
    conn.close()
    assert len(texts) == rows
    with SessionStore(db, readonly=True) as store:
        for word in ("deploy", "数据库", "한국어", "still"):
            truth = {i for i, t in texts.items() if word in t}
            assert {r["id"] for r in store.search(word, limit=rows).rows} == truth, word
        for i in range(0, ROWS, 500):
            # Without the word index "row5" is a substring (row5, row50, ...): found among them.
            found = {r["id"] for r in store.search(f"row{i}", limit=rows).rows}
            assert {k for k, t in texts.items() if t.endswith(f" row{i}")} <= found


@pytest.mark.parametrize("disk", [40], indirect=True)
def test_a_run_that_cannot_fit_is_refused_before_it_starts(hermes_store, disk):
    db = disk / "state.db"
    shutil.copy(hermes_store, db)
    before = db.read_bytes()
    proc = optimize(db)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, err
    doc = json.loads(out)
    assert doc["success"] is False and "not enough free disk space" in doc["error"], doc
    notes = [json.loads(line) for line in err.splitlines()]
    room = next(n for n in notes if n.get("event") == "note" and "need" in n)
    assert room["free"] < room["need"]
    assert db.read_bytes() == before  # nothing was changed


@pytest.mark.parametrize("disk", [100], indirect=True)
def test_a_disk_filling_up_mid_run_ends_it_and_leaves_room_for_hermes(
    hermes_store, hermes_venv, disk, tmp_path
):
    db = disk / "state.db"
    shutil.copy(hermes_store, db)
    rows = ROWS + 8  # and the seed's eight
    proc = optimize(db)
    assert proc.stderr is not None
    events: list[dict[str, Any]] = []
    for line in proc.stderr:
        events.append(json.loads(line))
        if events[-1].get("event") == "progress" and events[-1]["phase"] == "backfill":
            # The build has started. Stopped while the disk fills: a run that met the
            # full disk first would give its room back to the filler, not to Hermes.
            os.kill(proc.pid, signal.SIGSTOP)
            try:
                fill(disk)
            finally:
                os.kill(proc.pid, signal.SIGCONT)
            break
    out, rest = proc.communicate(timeout=300)
    assert any(e.get("phase") == "backfill" for e in events), events
    assert proc.returncode == 1
    doc = json.loads(out)
    assert doc["success"] is False and doc["reason"] == "disk_full", doc
    # --json's stderr stays one event a line: the run's warning came as bare text.
    later = [json.loads(line) for line in rest.splitlines()]
    assert any(
        e["event"] == "note" and e.get("level") == "warning" and "disk is full" in e["message"]
        for e in later
    ), later
    # The room the run took while building is given back: no half-built index,
    # no WAL left behind.
    assert not Path(f"{db}-wal").exists() or Path(f"{db}-wal").stat().st_size == 0
    assert_intact_and_findable(db, rows)
    # Hermes Agent 0.19.0 still saves a new session and its message.
    home = tmp_path / "home"
    home.mkdir()
    saved = he.run_driver(hermes_venv, home, "session", "--db-path", str(db))
    assert saved["message"] > 0
    assert_intact_and_findable(db, rows + 1)


def leave_free(folder: Path, room: int) -> None:
    """Another program takes all of the disk's room but ``room`` bytes."""
    free = shutil.disk_usage(folder).free
    with open(folder / "filler", "wb") as out:
        out.write(bytes(max(0, free - room)))


@pytest.mark.parametrize("disk", [16], indirect=True)
def test_a_disk_another_program_filled_is_not_called_about_to_fill(disk):
    """Between two steps a run stops when less than half its reserve is free.  On a disk
    another program had filled it said "only 0 bytes free on the disk; stopped before
    it is full", two things at once."""
    store = disk / "state.db"
    store.write_bytes(b"")
    space.keep_reserve(store)  # a fresh disk: room enough
    fill(disk)
    with pytest.raises(space.NoRoom) as stopped:
        space.keep_reserve(store)
    said = str(stopped.value)
    assert said.startswith("only 0 bytes free on the disk"), said
    assert f"under half the {space.reserve(store):,} kept for Hermes' own writes" in said, said
    assert "before it is full" not in said, said


def sync_json(db: Path) -> subprocess.CompletedProcess[str]:
    """``hermes-fts sync --json`` on ``db`` in its own process, no stdin."""
    return subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", "sync", "--json", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("disk", [60], indirect=True)
def test_sync_on_a_nearly_full_disk_leaves_hermes_its_room(disk):
    """``sync`` stops before the pending apply takes the disk's last bytes: the rows
    wait (a LIKE scan finds them), the run says so, and Hermes can still write."""
    db = disk / "state.db"
    with SessionStore(db) as store:  # the CJK index exists, empty
        store.add_session("s1", "cli")
    rnd = random.Random(11)
    texts = {}
    conn = sqlite3.connect(db)
    with conn:  # a writer without the extension: every row waits in the pending table
        for i in range(ROWS):
            text = " ".join(rnd.choice(WORDS) for _ in range(40)) + f" row{i}"
            texts[
                conn.execute(
                    "INSERT INTO messages(session_id, role, content, timestamp) "
                    "VALUES ('s1', 'user', ?, ?)",
                    (text, 1.7e9 + i),
                ).lastrowid
            ] = text
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    # Less than the room optimize-storage keeps for Hermes (half its reserve),
    # far less than applying the backlog takes.
    room = space.reserve(db) // 4
    leave_free(disk, room)
    proc = sync_json(db)
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["pending"] > 0 and doc["reason"] == "disk_full", doc
    # It stopped to keep the room, whatever SQLite's own words ("database or disk is full").
    assert doc["error"].startswith("stopped to keep the disk's last room for Hermes"), doc
    assert shutil.disk_usage(disk).free >= room - (64 << 10)  # the room is still there
    conn = sqlite3.connect(db)
    with conn:  # a Hermes-style write still goes through
        conn.execute(
            "INSERT INTO messages(session_id, role, content, timestamp) "
            "VALUES ('s1', 'user', 'still here', 2e9)"
        )
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    with SessionStore(db, readonly=True) as store:
        for word in ("数据库", "still"):
            truth = {i for i, t in {**texts, 0: "still here"}.items() if word in t} - {0}
            found = {r["id"] for r in store.search(word, limit=2 * ROWS).rows}
            assert truth <= found and (word != "still" or len(found) == 1), word
    (disk / "filler").unlink()
    with SessionStore(db) as store:
        store.sync()
        assert store.index_state()["cjk_pending"] == 0


def dry_run_plan(db: Path) -> dict[str, Any]:
    """``hermes-fts optimize-storage --dry-run --json`` on ``db``, in its own process."""
    dry = subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", "optimize-storage", "--dry-run", "--json"]
        + ["--db", str(db)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert dry.returncode == 0, dry.stderr
    return dict(json.loads(dry.stdout))


@pytest.mark.parametrize("disk", [100], indirect=True)
def test_the_room_a_killed_run_left_counts_as_free_room(hermes_store, disk):
    """A run killed outright leaves its room file (``kill -9`` cannot be caught);
    the next run's free-space check counts it as free, since the run gives it back,
    and so does ``--dry-run``, which said "does NOT fit" of a run that then fitted."""
    db = disk / "state.db"
    shutil.copy(hermes_store, db)
    left = Path(f"{db}{space.ROOM_SUFFIX}")
    left.write_bytes(bytes(space.reserve(db)))  # as the killed run left it
    need = dry_run_plan(db)["peak_free_bytes"]
    # Less free than the run needs, unless the left room counts.
    leave_free(disk, need - space.reserve(db) // 2)
    plan = dry_run_plan(db)
    assert plan["fits"] is True, plan
    assert left.exists()  # the dry run changes nothing
    proc = optimize(db)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, out + err
    assert json.loads(out)["ok"] is True
    assert not left.exists()


def leave_killed_wal(db: Path, megabytes: int) -> None:
    """A writer killed outright in the middle of a big transaction (a VACUUM, an
    import): its pages stay in the -wal file, never committed."""
    script = (
        "import os, signal, sqlite3, sys\n"
        "conn = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "conn.execute('PRAGMA cache_size=16')\n"  # the pages spill into the WAL
        "conn.execute('BEGIN')\n"
        "conn.execute('CREATE TABLE scratch(b BLOB)')\n"
        "for _ in range(int(sys.argv[2])):\n"
        "    conn.execute('INSERT INTO scratch VALUES (randomblob(1 << 20))')\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script, str(db), str(megabytes)])
    assert proc.returncode == -signal.SIGKILL


@pytest.mark.parametrize("disk", [100], indirect=True)
def test_the_wal_a_killed_writer_left_counts_as_free_room(hermes_store, disk):
    """The -wal file a killed VACUUM or import leaves stays as big as it grew while
    Hermes keeps the store open; the run truncates it before it starts, yet the
    check counted it as taken and refused a run that fits."""
    db = disk / "state.db"
    shutil.copy(hermes_store, db)
    hermes = sqlite3.connect(db)  # Hermes holds the store open: the WAL is not deleted
    (rows,) = hermes.execute("SELECT count(*) FROM messages").fetchone()
    leave_killed_wal(db, 30)
    wal = space.file_sizes(db)[1]
    assert wal > 25 << 20
    plan = dry_run_plan(db)
    assert plan["free_bytes"] >= shutil.disk_usage(disk).free + wal - (1 << 20)
    # Less free than the run needs, unless the WAL's bytes count.
    leave_free(disk, plan["peak_free_bytes"] - wal // 2)
    proc = optimize(db)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, out + err
    assert json.loads(out)["ok"] is True
    assert space.file_sizes(db)[1] < wal
    hermes.execute(
        "INSERT INTO messages(session_id, role, content, timestamp) "
        "VALUES ('en-1', 'user', 'still here', 2e9)"
    )
    hermes.commit()
    hermes.close()
    assert_intact_and_findable(db, rows + 1)


@pytest.mark.parametrize("disk", [120], indirect=True)
def test_sync_merging_after_deletes_leaves_hermes_its_room(disk, monkeypatch):
    """With the word and trigram indexes kept, ``sync`` after Hermes deleted messages
    merges them (§5.3); a merge writes an index anew before its old segments go,
    so on a nearly full disk it is left for later rather than take Hermes' last room."""
    monkeypatch.setenv("HERMES_WORD_FTS", "1")
    monkeypatch.setenv("HERMES_TRIGRAM_FTS", "1")
    db = disk / "state.db"
    with SessionStore(db) as store:  # on an empty store: both indexes and their triggers
        store.add_session("s1", "cli")
    rnd = random.Random(3)
    conn = sqlite3.connect(db)
    for chunk in range(40):  # Hermes' writes, a segment each: its triggers fill both
        with conn:
            conn.executemany(
                "INSERT INTO messages(session_id, role, content, timestamp) "
                "VALUES ('s1', 'user', ?, ?)",
                ((" ".join(rnd.choice(WORDS) for _ in range(40)) + f" row{chunk}-{i}", 1.7e9 + i)
                 for i in range(250)),
            )  # fmt: skip
    conn.close()
    with SessionStore(db) as store:  # the CJK index takes them
        store.sync()
        largest = max(indexing.index_bytes(store._conn, i) or 0 for i in schema.INDEXES)
    conn = sqlite3.connect(db)
    with conn:  # then Hermes deletes a session's first messages
        conn.execute("DELETE FROM messages WHERE id <= 20")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    # Room for the reserve's half and the largest index once, not for a merge's copy.
    room = space.reserve(db) // 2 + largest
    leave_free(disk, room)
    proc = sync_json(db)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["pending"] == 0  # the deletes are applied
    assert shutil.disk_usage(disk).free >= room - (256 << 10)  # and the room is still there
    conn = sqlite3.connect(db)
    with conn:  # a Hermes-style write still goes through
        conn.execute(
            "INSERT INTO messages(session_id, role, content, timestamp) "
            "VALUES ('s1', 'user', 'still here', 2e9)"
        )
    conn.close()
    (disk / "filler").unlink()
    with SessionStore(db) as store:
        assert store.search("still", limit=5).rows


@pytest.mark.parametrize("disk", [60], indirect=True)
@pytest.mark.parametrize("how", ["optimize-storage", "sync", "optimize_storage()"])
def test_a_disk_filling_while_the_backlog_is_applied_still_gets_the_wal_truncated(
    disk, monkeypatch, capsys, how
):
    """optimize-storage applied Hermes' pending backlog at its open, before it took
    its room for Hermes: a disk another program filled between two batches left no
    room to checkpoint the batch applied, so the WAL kept its pages.  ``sync`` and
    a ``SessionStore`` opened for ``optimize_storage()`` applied it with no room held."""
    db = disk / "state.db"
    with SessionStore(db) as store:  # the CJK index exists, empty
        store.add_session("s1", "cli")
    rnd = random.Random(5)
    conn = sqlite3.connect(db)
    with conn:  # a writer without the extension: every row waits in the pending table
        conn.executemany(
            "INSERT INTO messages(session_id, role, content, timestamp) "
            "VALUES ('s1', 'user', ?, ?)",
            ((" ".join(rnd.choice(WORDS) for _ in range(40)) + f" row{i}", 1.7e9 + i)
             for i in range(ROWS)),
        )  # fmt: skip
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    checks: list[int] = []
    keep_reserve = space.keep_reserve

    def filled_between_batches(path: Any) -> None:
        checks.append(1)
        if len(checks) == 2:  # the first batch is applied, in the WAL
            subprocess.run(["sh", "-c", f"cat /dev/zero > {disk / 'filler'}"], check=False)
        keep_reserve(path)

    monkeypatch.setattr(space, "keep_reserve", filled_between_batches)
    if how == "optimize_storage()":
        with SessionStore(db) as store:  # the open applies the backlog
            doc = store.optimize_storage()
        assert doc["ok"] is False and doc["reason"] == "disk_full", doc
    else:
        yes = ["--yes"] if how == "optimize-storage" else []
        status = cli.main([how, *yes, "--json", "--db", str(db)])
        doc = json.loads(capsys.readouterr().out)
        assert status == 1 and doc["reason"] == "disk_full", doc
        # A failed document says why, as every --json error does (optimize-storage's had none).
        assert doc["success"] is False, doc
        assert doc["error"].startswith("stopped to keep the disk's last room for Hermes"), doc
    assert len(checks) >= 2
    assert space.file_sizes(db)[1] == 0  # the applied batch is in the main file
    monkeypatch.undo()
    (disk / "filler").unlink()
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    with SessionStore(db) as store:
        store.sync()
        assert store.index_state()["cjk_pending"] == 0
        assert len(store.search("row77", limit=5).rows) == 1


def optimize_with_temp(db: Path, env: dict[str, str], *prefix: str) -> dict[str, Any]:
    """``optimize-storage --json --yes`` on ``db`` with ``env``, behind ``prefix``
    (``unshare``); returns its document with its exit status."""
    proc = subprocess.run(
        [*prefix, sys.executable, "-m", "hermes_fts.cli", "--json", "optimize-storage"]
        + ["--yes", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    return {**json.loads(proc.stdout), "status": proc.returncode}


@pytest.mark.parametrize("disk", [4], indirect=True)
def test_a_temporary_folder_without_room_for_vacuum_s_copy_is_refused_up_front(
    hermes_store, disk, tmp_path
):
    """SQLite writes VACUUM's temporary copy to SQLITE_TMPDIR (else TMPDIR, /var/tmp,
    /usr/tmp, /tmp); the check looked at Python's temporary folder and counted no
    room there: the run built every index, then failed at VACUUM and said the store's
    disk was full, which has room to spare."""
    db = tmp_path / "state.db"
    shutil.copy(hermes_store, db)
    before = db.read_bytes()
    env = {**os.environ, "SQLITE_TMPDIR": str(disk)}
    dry = subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", "--json", "optimize-storage", "--dry-run"]
        + ["--db", str(db)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    plan = json.loads(dry.stdout)
    assert plan["fits"] is False and str(disk) in plan["temp_room"], plan
    doc = optimize_with_temp(db, env)
    assert doc["status"] == 1 and doc["success"] is False, doc
    assert "temporary copy" in doc["error"] and str(disk) in doc["error"], doc
    assert "--no-vacuum" in doc["error"] and "Nothing was changed" in doc["error"], doc
    assert db.read_bytes() == before  # refused before the build, not after it
    # optimize_storage() has no preflight: it stops before the VACUUM, naming the folder.
    code = (
        "import json, sys\n"
        "from hermes_fts.store import SessionStore\n"
        "with SessionStore(sys.argv[1], apply_pending=False) as store:\n"
        "    done = store.optimize_storage()\n"
        "print(json.dumps({k: done.get(k) for k in ('ok', 'reason', 'detail')}))\n"
    )
    api = subprocess.run(
        [sys.executable, "-c", code, str(db)], capture_output=True, text=True, env=env, timeout=300
    )
    done = json.loads(api.stdout)
    assert done["ok"] is False and done["reason"] == "disk_full", done
    assert "temporary copy" in done["detail"] and str(disk) in done["detail"], done
    # Without the VACUUM nothing is copied there: the run does the rest.
    proc = subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", "--json", "optimize-storage", "--yes"]
        + ["--no-vacuum", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert proc.returncode == 0 and json.loads(proc.stdout)["ok"] is True, proc.stdout


def test_vacuum_s_copy_is_counted_in_var_tmp_where_sqlite_writes_it(hermes_store, tmp_path):
    """Without SQLITE_TMPDIR and TMPDIR SQLite writes it to /var/tmp, before /tmp;
    Python's tempfile names /tmp first. With /var/tmp on a small disk of its own (a
    mount namespace of the run's own) the run is refused up front, naming it."""
    db = tmp_path / "state.db"
    shutil.copy(hermes_store, db)
    before = db.read_bytes()
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=4m tmpfs /var/tmp"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        pytest.skip(f"cannot mount over /var/tmp in a namespace: {probe.stderr.strip()}")
    env = {k: v for k, v in os.environ.items() if k not in ("TMPDIR", "SQLITE_TMPDIR")}
    script = 'mount -t tmpfs -o size=4m tmpfs /var/tmp && exec "$@"'
    doc = optimize_with_temp(db, env, "unshare", "-m", "sh", "-c", script, "sh")
    assert doc["status"] == 1 and "temporary copy" in doc["error"], doc
    assert "/var/tmp" in doc["error"], doc
    assert db.read_bytes() == before


def test_a_run_stopped_with_the_wal_left_says_so_not_that_it_was_truncated(hermes_store, tmp_path):
    """A run stopped for room whose clean-up could not checkpoint (here the store may not
    grow: a file size limit, as a quota; elsewhere another program that took the room back
    at once) said "the WAL was truncated, so Hermes keeps writing" beside a WAL of tens of
    megabytes; it now says what the WAL still holds."""
    import resource

    db = tmp_path / "state.db"
    shutil.copy(hermes_store, db)
    limit = db.stat().st_size + (256 << 10)  # the store may grow by 256 KB, no more

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    done = subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", "optimize-storage", "--yes", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=small_files,
    )
    wal = Path(f"{db}-wal").stat().st_size
    assert done.returncode == 1 and wal > 0, (done.returncode, wal, done.stderr)
    error = done.stderr.splitlines()[-1]
    assert "the WAL was truncated" not in error, error
    assert "but the WAL still holds" in error, error
    assert_intact_and_findable(db, ROWS + 8)


@pytest.mark.parametrize("disk", [40], indirect=True)
def test_a_store_reached_by_a_symlink_is_measured_on_its_own_disk(hermes_store, disk, tmp_path):
    """``--db`` a symlink to a store on another, smaller disk: the run counted the free
    room of the symlink's folder, said it fitted, and filled the store's disk ("database
    or disk is full") with its reserve held beside the symlink, on the wrong disk."""
    db = disk / "state.db"
    shutil.copy(hermes_store, db)
    link = tmp_path / "state.db"
    link.symlink_to(db)
    plan = dry_run_plan(link)
    assert plan["free_bytes"] <= shutil.disk_usage(disk).free, plan
    assert plan["fits"] is False, plan
    before = db.read_bytes()
    proc = optimize(link)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, out + err
    assert "not enough free disk space" in json.loads(out)["error"]
    assert db.read_bytes() == before  # refused before it wrote anything
