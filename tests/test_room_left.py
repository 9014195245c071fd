"""The room an optimize-storage run holds for Hermes (DESIGN §5.6, "Disk room")
is given back when a run is killed outright: the next write open (``sync``)
removes the file a dead run left, never the file of a run still alive, and
``status`` says until then that a dead run's file holds that room.

Until then the file took its reserve (up to 8 MB) from the disk Hermes saves
messages to, and ``sync`` itself stopped applying rows sooner on a nearly
full disk, since the file counted against the free space it keeps.

The run is a real ``hermes-fts optimize-storage`` process killed with
SIGKILL while it holds the room; the backlog is written by the real
``sqlite3`` shell, as Hermes Agent writes it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _support import needs_extension, shell_backlog

from hermes_fts.cli.output import human_bytes
from hermes_fts.index.space import ROOM_SUFFIX

ROOT = Path(__file__).resolve().parents[1]
SQLITE3 = shutil.which("sqlite3")

pytestmark = [
    needs_extension,
    pytest.mark.skipif(SQLITE3 is None, reason="needs the sqlite3 shell"),
]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "hermes_fts.cli", *args]


def _sync(db: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        _cli("--db", str(db), "--json", "sync"),
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )


def _status(db: Path) -> tuple[dict[str, object], str]:
    """``status --json``'s document, and ``status``' text output."""
    run = [
        subprocess.run(
            _cli("--db", str(db), *fmt, "status"),
            capture_output=True,
            text=True,
            env=_env(),
            timeout=120,
            check=True,
        ).stdout
        for fmt in (("--json",), ())
    ]
    return json.loads(run[0]), run[1]


def _left_room(db: Path) -> tuple[object, str]:
    """``status``' ``left_room`` (--json), and its text output."""
    doc, text = _status(db)
    return doc["left_room"], text


def test_a_killed_run_s_room_is_given_back_by_the_next_sync(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    room = Path(f"{db}{ROOM_SUFFIX}")
    shell_backlog(db, 20_000)
    # Another process with the store open, as Hermes has it: the run pauses
    # between its chunks, so it is still holding the room when it is seen.
    hermes = sqlite3.connect(db)
    hermes.execute("SELECT count(*) FROM messages").fetchone()
    run = subprocess.Popen(
        _cli("--db", str(db), "optimize-storage", "--yes"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=_env(),
    )
    try:
        # polled: the run makes it once its checks passed, then writes its bytes
        while not (room.exists() and room.stat().st_size > 0):
            assert run.poll() is None, "the run ended before it held any room"
            time.sleep(0.005)
        os.kill(run.pid, signal.SIGKILL)
    finally:
        run.kill()
        run.wait()
    hermes.close()
    assert room.exists()  # a killed run cannot remove it itself
    # status said nothing of the megabytes it took from Hermes' disk
    left, text = _left_room(db)
    assert left == {"file": str(room), "bytes": room.stat().st_size}, left
    assert f"held in {room} by an optimize-storage or sync that was killed; " in text
    assert f"`hermes-fts sync --db {db}` gives it back" in text
    assert room.exists()  # status reads only

    done = _sync(db)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not room.exists()
    assert _left_room(db)[0] is None


def test_the_room_of_a_run_still_alive_is_left_alone(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    room = Path(f"{db}{ROOM_SUFFIX}")
    shell_backlog(db, 10)
    code = (
        "import sys\n"
        "from hermes_fts._sharing import run_lock\n"
        "with run_lock(sys.argv[1]):\n"
        "    open(sys.argv[1] + sys.argv[2], 'wb').write(bytes(4096))\n"
        "    print('held', flush=True)\n"
        "    sys.stdin.read()\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(db), ROOM_SUFFIX],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        left, text = _left_room(db)  # a live run's room is not left over
        assert left is None and "Disk room" not in text, text
        done = _sync(db)
        assert done.returncode == 0, done.stdout + done.stderr
        assert room.exists()  # the live run still needs it
    finally:
        holder.communicate("")
    assert room.exists()  # and the holder never removes what is not its own


def test_status_counts_the_wal_a_killed_writer_left(tmp_path: Path) -> None:
    """A writer killed in a big transaction (a VACUUM, an import) leaves its pages in the
    -wal file for as long as another process (Hermes) has the store open: status said
    "Store: 1.2 MB" of a store taking tens of megabytes more on disk."""
    db = tmp_path / "state.db"
    shell_backlog(db, 10)
    hermes = sqlite3.connect(db)  # keeps the WAL from being removed
    hermes.execute("SELECT count(*) FROM messages").fetchone()
    killed = (
        "import os, signal, sqlite3, sys\n"
        "conn = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "conn.execute('PRAGMA cache_size=16')\n"  # the pages spill into the WAL
        "conn.execute('BEGIN')\n"
        "conn.execute('CREATE TABLE scratch(b BLOB)')\n"
        "for _ in range(8):\n"
        "    conn.execute('INSERT INTO scratch VALUES (randomblob(1 << 20))')\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    try:
        proc = subprocess.run([sys.executable, "-c", killed, str(db)], timeout=60)
        assert proc.returncode == -signal.SIGKILL
        wal = Path(f"{db}-wal").stat().st_size
        assert wal > 8 << 20
        doc, text = _status(db)
    finally:
        hermes.close()
    assert doc["wal_bytes"] == wal
    store_line = text.splitlines()[0]
    assert f" + {human_bytes(wal)} WAL, " in store_line, store_line
