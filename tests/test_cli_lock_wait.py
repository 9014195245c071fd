"""A store another process keeps locked: every command waits the busy timeout
once, then names the lock, exit status 2.

On a file system without WAL, Hermes Agent falls back to a rollback journal,
and a writer's ``BEGIN EXCLUSIVE`` then blocks readers too.  The lock is held
by the real ``sqlite3`` shell; the commands are real ``hermes-fts`` processes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _support import needs_extension

from hermes_fts.store import BUSY_TIMEOUT_S, SessionStore

ROOT = Path(__file__).resolve().parents[1]
SQLITE3 = shutil.which("sqlite3")

pytestmark = [
    needs_extension,
    pytest.mark.skipif(SQLITE3 is None, reason="needs the sqlite3 shell"),
]


def _rollback_store(path: Path) -> None:
    with SessionStore(path) as store:
        store.add_session("s1", "cli")
        store.add_message("s1", "user", "deploy the 東京 server")
    subprocess.run([str(SQLITE3), str(path), "PRAGMA journal_mode = DELETE;"], check=True)


def _hold_exclusive(path: Path) -> subprocess.Popen[str]:
    """The sqlite3 shell inside ``BEGIN EXCLUSIVE`` until its stdin closes."""
    shell = subprocess.Popen(
        [str(SQLITE3), str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert shell.stdin is not None and shell.stdout is not None
    shell.stdin.write(
        "BEGIN EXCLUSIVE;\n"
        "INSERT INTO messages(session_id, role, content, timestamp) "
        "VALUES ('s1', 'user', 'uncommitted', 2);\n"
        "SELECT 'held';\n"
    )
    shell.stdin.flush()
    assert shell.stdout.readline().strip() == "held"
    return shell


@pytest.mark.parametrize(
    "argv",
    [["search", "deploy"], ["status"], ["read", "s1"], ["sync"]],
    ids=lambda argv: argv[0],
)
def test_a_locked_store_is_waited_for_once_then_named(tmp_path: Path, argv: list[str]) -> None:
    db = tmp_path / "state.db"
    _rollback_store(db)
    shell = _hold_exclusive(db)
    try:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        started = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-m", "hermes_fts.cli", "--db", str(db), "--json", *argv],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        took = time.monotonic() - started
    finally:
        assert shell.stdin is not None
        shell.stdin.close()
        shell.wait(timeout=30)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    error = json.loads(proc.stdout)["error"]
    assert error.startswith(f"{db} is locked by another process"), error
    # One busy timeout, not one per connection the command opens.
    assert BUSY_TIMEOUT_S - 0.5 < took < BUSY_TIMEOUT_S + 3, took
