"""Hermes Agent 0.19.0 saving messages beside hermes-fts on a nearly full disk
(DESIGN §5.3, §5.6 "Disk room"): our work must never make a save fail that
Hermes alone would have made.

The store is Hermes' own on a small tmpfs mounted here (skipped where that is
not permitted), filled by another program; Hermes' saves are its ``SessionDB``
in the real 0.19.0 venv; the backlog is written without the extension, as
Hermes writes it.
"""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import _hermes_env as he
import pytest
from _support import needs_extension
from test_optimize_room import WORDS, leave_free, small_disk

from hermes_fts.hermes import upkeep
from hermes_fts.index import space
from hermes_fts.store import SessionStore

pytestmark = needs_extension

BACKLOG = 1_200  # more than one batch: the apply holds the reserve in its room file


@pytest.fixture
def disk(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Path]:
    """A tmpfs of 48 MB, or of the test's ``disk`` parameter."""
    folder = small_disk(tmp_path / "disk", getattr(request, "param", 48))
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def _store_with_backlog(hermes_venv: Path, folder: Path, work: Path) -> Path:
    """Hermes' store with our CJK index, built in ``work``, copied onto the disk at
    ``folder``; then BACKLOG messages written without the extension wait in our
    pending table."""
    db = Path(he.run_driver(hermes_venv, work, "seed")["db"])
    rnd = random.Random(3)
    conn = sqlite3.connect(db)
    with conn:  # a history large enough for a reserve of megabytes
        conn.executemany(
            "INSERT INTO messages(session_id, role, content, timestamp) "
            "VALUES ('en-1', 'user', ?, ?)",
            ((" ".join(rnd.choice(WORDS) for _ in range(120)), 1.7e9 + i) for i in range(3000)),
        )
    conn.close()
    with SessionStore(db) as store:
        assert store.optimize_storage(vacuum=False)["ok"]
    target = folder / "state.db"
    shutil.copy(db, target)
    conn = sqlite3.connect(target)
    with conn:
        conn.executemany(
            "INSERT INTO messages(session_id, role, content, timestamp) "
            "VALUES ('en-1', 'user', ?, ?)",
            ((f"backlog{i} 部署到服务器 deploy", 1.8e9 + i) for i in range(BACKLOG)),
        )
    conn.close()
    return target


@pytest.mark.parametrize("beside", [40 << 10, 24 << 20], ids=["tight", "ample"])
def test_hermes_saves_while_a_backlog_is_applied_on_a_nearly_full_disk(
    hermes_venv: Path, disk: Path, tmp_path: Path, beside: int
) -> None:
    """The write open of the plugin's after-turn apply (or of ``sync``) holds the
    reserve in a file while it applies a backlog of several batches.  With less
    free than the reserve and half of it, the file took the disk's last bytes, and
    Hermes' save failed ("database or disk is full") until the first batch's check
    gave them back, where Hermes alone had megabytes."""
    db = _store_with_backlog(hermes_venv, disk, tmp_path)
    home = tmp_path / "home"  # Hermes' own files off the small disk
    home.mkdir()
    room = Path(f"{db}{space.ROOM_SUFFIX}")
    leave_free(disk, space.reserve(db) + beside)
    saves: list[dict[str, Any]] = []

    def hermes_saves(_event: dict[str, Any]) -> None:
        # Told before the first batch and after each, while the apply holds its room.
        if saves:
            return
        held = room.exists()
        try:
            he.run_driver(hermes_venv, home, "session", "--db-path", str(db), "--session-id", "a")
            saves.append({"held": held, "error": None})
        except AssertionError as exc:  # the driver's output, Hermes' traceback
            saves.append({"held": held, "error": str(exc)[-300:]})

    with SessionStore(db, progress=hermes_saves) as store:
        left = store.index_state()["cjk_pending"]
    assert [s["error"] for s in saves if s["error"]] == []
    if beside > space.reserve(db):
        # The room is held while Hermes saves, and the backlog applied.
        assert saves == [{"held": True, "error": None}] and left == 0
    else:
        # Nothing applied, the room untaken: the rows wait, a LIKE scan finds them.
        assert saves == [] and left == BACKLOG
    assert not room.exists()
    assert he.run_driver(hermes_venv, home, "session", "--db-path", str(db), "--session-id", "b")
    (disk / "filler").unlink()  # room comes back: the next sync takes the rest
    with SessionStore(db) as store:
        store.sync()
        assert store.index_state()["cjk_pending"] == 0
        assert store.integrity_check() == {"hermes_fts_cjk": None}
        found = store.search("部署", limit=2 * BACKLOG)
        assert found.route == "fts_cjk" and len(found.rows) == BACKLOG
        assert len(store.search("still writing", limit=5).rows) == 1 + (len(saves) == 1)


@pytest.mark.parametrize("disk", [160], indirect=True)
def test_the_wal_an_after_turn_apply_grew_is_given_back_while_hermes_keeps_the_store_open(
    hermes_venv: Path, disk: Path, tmp_path: Path
) -> None:
    """A turn of long tool outputs waits for the CJK index; the plugin's after-turn
    apply wrote its batches' pages into the WAL, which Hermes' open connection kept
    at that size (6 MB after 3,000 outputs) until Hermes closed: megabytes of the
    disk Hermes saves to, taken until it restarts."""
    db = _store_with_backlog(hermes_venv, disk, tmp_path)
    with SessionStore(db) as store:
        store.sync()  # the backlog's rows applied; the turn below is what waits
    home = tmp_path / "home"
    home.mkdir()
    hermes = subprocess.Popen(
        [str(he.venv_python(hermes_venv)), he.__file__, "hold", "--db-path", str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=he.clean_env(home),
        cwd=str(home),
    )
    try:
        assert hermes.stdout is not None
        line = hermes.stdout.readline()
        assert line, hermes.communicate()[1]
        turn = json.loads(line)
        (main, wal), free = space.file_sizes(db), shutil.disk_usage(disk).free
        thread = upkeep.apply_after_turn(db)
        assert thread is not None
        thread.join(timeout=300)
        with SessionStore(db, readonly=True) as store:
            assert store.index_state()["cjk_pending"] == 0
            found = store.search("部署日志", limit=5000)
            assert len(found.rows) == turn["last"] - turn["first"] + 1
        # The disk lost the index's pages, not a WAL grown by them.
        grown = space.file_sizes(db)[0] - main
        assert space.file_sizes(db)[1] <= wal, (wal, space.file_sizes(db))
        assert free - shutil.disk_usage(disk).free <= grown + (64 << 10), (free, grown)
    finally:
        out, err = hermes.communicate("", timeout=120)
    assert hermes.returncode == 0, err
    assert json.loads(out.splitlines()[-1])["message"] > turn["last"]
