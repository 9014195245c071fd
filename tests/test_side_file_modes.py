"""Files next to the store never block the next user: a read-only open leaves
no ``-shm`` or ``-wal`` that blocks a later writer, and the room file a killed
optimize-storage leaves is replaced by the next run, whoever left it.

SQLite makes the ``-shm`` (and ``-wal``) a reader needs with the database
file's mode: ``hermes-fts status`` on a 0444 store, by root or by its owner,
left a 0444 ``-shm``, and once the owner made the store writable again every
write, Hermes Agent's included, failed with "attempt to write a readonly
database".  Run as root and as the real user ``nobody``, with the writer a
plain ``sqlite3`` connection as ``nobody``, as Hermes writes.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from _tool_fixtures import nobody_dir, nobody_package_root

from hermes_fts.store import SessionStore

SYSTEM_PYTHON = shutil.which("python3", path="/usr/bin:/bin")
RUNUSER = shutil.which("runuser") or shutil.which("runuser", path="/usr/sbin:/sbin")
NOBODY = 65534
pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or RUNUSER is None or SYSTEM_PYTHON is None,
    reason="needs root, runuser and /usr/bin/python3 to run as the real user nobody",
)

WRITE = (
    "import sqlite3, sys\n"
    "conn = sqlite3.connect(sys.argv[1])\n"
    "with conn:\n"
    "    conn.execute(\"INSERT INTO sessions(id, source, started_at) VALUES ('b', 'cli', 1)\")\n"
    "print('written')\n"
)


def _python(
    code: list[str], *, nobody: bool, user: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``python CODE`` as root, as nobody, or as ``user``."""
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(nobody_package_root()), "HOME": "/tmp"}
    cmd = [str(SYSTEM_PYTHON), *code]
    if nobody or user:
        cmd = [str(RUNUSER), "-u", user or "nobody", "--", *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd="/tmp", timeout=120)


def _nobodys_read_only_store(folder: Path) -> Path:
    """nobody's store, closed cleanly (no -wal, no -shm), made 0444 by its owner."""
    os.chown(folder, NOBODY, NOBODY)
    db = folder / "state.db"
    with SessionStore(db) as store:
        store.add_session("a", "cli")
        store.add_message("a", "user", "hello 東京")
    for side in ("-wal", "-shm"):
        Path(f"{db}{side}").unlink(missing_ok=True)
    os.chown(db, NOBODY, NOBODY)
    db.chmod(0o444)
    return db


@pytest.mark.parametrize("reader", ["root", "nobody"])
@pytest.mark.parametrize("command", [["status"], ["search", "hello"]])
def test_a_reader_of_a_0444_store_leaves_no_side_file_a_writer_fails_on(
    reader: str, command: list[str]
) -> None:
    with nobody_dir() as folder:
        db = _nobodys_read_only_store(folder)
        read = _python(
            ["-m", "hermes_fts.cli", *command, "--json", "--db", str(db)],
            nobody=reader == "nobody",
        )
        assert read.returncode == 0, read.stderr
        assert Path(f"{db}-shm").exists()  # the read made one: its folder is writable
        for side in ("-shm", "-wal"):
            path = Path(f"{db}{side}")
            if path.exists():
                st = path.stat()
                assert st.st_uid == NOBODY, side  # the store owner's, not root's
                assert st.st_mode & 0o200, (side, oct(st.st_mode))
        os.chmod(db, 0o644)  # the owner makes the store writable again
        written = _python(["-c", WRITE, str(db)], nobody=True)
        assert written.returncode == 0 and written.stdout == "written\n", written.stderr


def test_a_room_file_roots_killed_run_left_does_not_stop_the_owners_run() -> None:
    """optimize-storage holds its reserve in ``state.db-hermes-fts-room``, which a
    killed run leaves.  Left by root in nobody's folder, nobody's next run could
    not rewrite it and stopped with "the disk is full" on a disk with room."""
    with nobody_dir() as folder:
        db = _nobodys_read_only_store(folder)
        db.chmod(0o644)
        stale = Path(f"{db}-hermes-fts-room")
        stale.write_bytes(bytes(100))  # root's, 0644: a run as root killed outright
        done = _python(
            ["-m", "hermes_fts.cli", "--db", str(db), "--json", "optimize-storage", "--yes"],
            nobody=True,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert "disk is full" not in done.stderr
        assert not stale.exists()


@pytest.mark.parametrize(
    ("side", "command"),
    [("-shm", ["sync"]), ("-wal", ["sync"]), ("-wal", ["optimize-storage", "--yes"])],
)
def test_a_side_file_another_user_owns_is_named(side: str, command: list[str]) -> None:
    """nobody's writable store, with a ``-wal`` or ``-shm`` of root's (0644) that nobody
    may not write: every write fails as "attempt to write a readonly database",
    and the error told nobody to make the store and its folder writable, which
    they were.  It names the side file and its owner."""
    with nobody_dir() as folder:
        db = _nobodys_read_only_store(folder)
        db.chmod(0o644)
        holder = sqlite3.connect(db)  # another process keeps the side files there
        with holder:
            holder.execute(
                "INSERT INTO messages(session_id, role, content, timestamp) "
                "VALUES ('a', 'user', 'written by hermes 東京', 2)"
            )
        path = Path(f"{db}{side}")
        os.chown(path, 0, 0)  # SQLite as root gives its files to the store's owner
        path.chmod(0o644)
        try:
            done = _python(["-m", "hermes_fts.cli", *command, "--db", str(db)], nobody=True)
            pending = holder.execute("SELECT COUNT(*) FROM hermes_fts_cjk_pending").fetchone()
        finally:
            holder.close()
        assert done.returncode != 0, done.stdout
        assert "Traceback" not in done.stderr, done.stderr
        assert f"{path} belongs to root" in done.stderr, done.stderr
        assert "make it and its folder writable" not in done.stderr, done.stderr
        assert pending == (1,)  # nothing was applied


@pytest.fixture(scope="module")
def reader() -> Iterator[str]:
    """A second real non-root user, made with useradd for these tests."""
    name = "hermesftsreader"
    made = subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
        capture_output=True,
        text=True,
    )
    if made.returncode not in (0, 9):  # 9: the user is there already
        pytest.skip(f"cannot make a second user: {made.stderr.strip()}")
    yield name
    if made.returncode == 0:
        subprocess.run(["userdel", name], check=False)


@pytest.mark.parametrize("command", [["search", "hello"], ["status"], ["browse"]])
def test_another_users_read_leaves_no_side_file_the_owners_writes_fail_on(
    reader: str, command: list[str]
) -> None:
    """nobody's 0644 store in a folder everyone may write (1777, as /tmp): another
    user's read made a 0644 ``-shm`` and ``-wal`` of their own there, and every
    write of the store's owner, Hermes' included, then failed with "attempt to
    write a readonly database" until someone deleted them."""
    with nobody_dir() as folder:
        db = _nobodys_read_only_store(folder)
        db.chmod(0o644)
        folder.chmod(0o1777)
        read = _python(
            ["-m", "hermes_fts.cli", *command, "--json", "--db", str(db)], nobody=False, user=reader
        )
        assert read.returncode == 0, read.stderr
        shm = Path(f"{db}-shm")
        assert shm.exists() and shm.stat().st_uid not in (0, NOBODY)  # the reader's own
        written = _python(["-c", WRITE, str(db)], nobody=True)
        assert written.returncode == 0 and written.stdout == "written\n", written.stderr
