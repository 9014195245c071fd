"""On a full disk, the first word is the full disk.

A write open of a store whose disk has no room for the ``-shm`` failed the
extension's probe first, and the first thing said was "CJK search
unavailable (the auto-extension did not reach the new connection)", before
the real error.  The disk is a small tmpfs mounted here, filled by another
program, as in ``test_optimize_room.py``.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from _support import needs_extension

from hermes_fts.store import SessionStore

ROOT = Path(__file__).resolve().parents[1]
pytestmark = needs_extension


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A store on a 2 MB tmpfs that another program then fills; skips where
    mounting is not permitted."""
    folder = tmp_path / "disk"
    folder.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {proc.stderr.strip() or proc.returncode}")
    try:
        db = folder / "state.db"
        with SessionStore(db) as store:
            store.add_session("a", "cli")
            store.add_message("a", "user", "hello 東京")
        assert not Path(f"{db}-shm").exists()  # closed cleanly: the next open makes one
        with open(folder / "filler", "wb") as out:
            try:
                while True:
                    out.write(bytes(1 << 16))
                    out.flush()
            except OSError:
                pass  # ENOSPC: the disk is full
        yield db
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", *args],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )


def test_sync_on_a_full_disk_names_the_full_disk_first(full_disk: Path) -> None:
    done = _cli("--db", str(full_disk), "sync")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "CJK search unavailable" not in done.stderr, done.stderr
    assert done.stderr.splitlines()[0].startswith(f"Error: the disk holding {full_disk} is full")
    as_json = _cli("--db", str(full_disk), "--json", "sync")
    assert as_json.returncode != 0 and as_json.stderr == ""
    doc = json.loads(as_json.stdout)
    assert doc["success"] is False and "is full" in doc["error"]


def test_a_write_open_on_a_full_disk_warns_of_no_missing_extension(
    full_disk: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="hermes_fts"):
        with pytest.raises(sqlite3.Error) as raised:
            SessionStore(full_disk)
    assert "disk" in str(raised.value)
    assert not [r for r in caplog.records if "CJK search unavailable" in r.getMessage()]
    with SessionStore(full_disk, readonly=True) as store:  # reading still works
        assert store.search("hello").rows
