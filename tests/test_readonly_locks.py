"""Searching never needs to write, and every store error names its real cause (issue 10).

Everything runs the real ``hermes-fts`` command as a subprocess, as root and
as the real user ``nobody`` where permission matters: on a 0444 file with a
pending change, on a full disk (a small tmpfs mounted here), while another
process holds ``BEGIN EXCLUSIVE``, and in a read-only folder.  The
``session_search`` tool and the Hermes plugin's ``serve`` are run the same way.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _tool_fixtures import nobody_dir, nobody_package_root

from hermes_fts import _sqlite
from hermes_fts.store import SessionStore

ROOT = Path(__file__).resolve().parent.parent
# The test interpreter may live where nobody cannot run it (~root/.pyenv).
SYSTEM_PYTHON = shutil.which("python3", path="/usr/bin:/bin")
RUNUSER = shutil.which("runuser") or shutil.which("runuser", path="/usr/sbin:/sbin")
NOBODY = 65534
as_root_and_nobody = pytest.mark.skipif(
    os.geteuid() != 0 or RUNUSER is None or SYSTEM_PYTHON is None,
    reason="needs root, runuser and /usr/bin/python3 to run as the real user nobody",
)
pytestmark = as_root_and_nobody

READS = [
    ["search", "pendingword"],
    ["search", "服务端"],
    ["read", "a"],
    ["scroll", "a", "2"],
    ["browse"],
    ["status"],
]


def run(
    args: list[str],
    *,
    nobody: bool = False,
    home: Path | None = None,
    python: list[str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``hermes-fts ARGS`` (or ``python`` code) from a copy of this checkout, as root or nobody."""
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(nobody_package_root()),
        "HOME": "/tmp",
        "NO_COLOR": "1",
        "HERMES_HOME": str(home or "/nonexistent"),
    }
    cmd = [str(SYSTEM_PYTHON), *(python or ["-m", "hermes_fts.cli", *args])]
    if nobody:
        cmd = [str(RUNUSER), "-u", "nobody", "--", *cmd]
    return subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        env=env,
        cwd="/tmp",
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def read_json(args: list[str], db: Path, **kw: Any) -> dict[str, Any]:
    proc = run([*args, "--json", "--db", str(db)], **kw)
    assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    payload: dict[str, Any] = json.loads(proc.stdout)
    return payload


def error_of(args: list[str], db: Path, **kw: Any) -> str:
    proc = run([*args, "--db", str(db)], **kw)
    assert proc.returncode != 0, (args, proc.stdout)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.stderr


# The tool (default store: $HERMES_HOME/state.db) and the plugin's serve(),
# as Hermes calls them; "BUILTIN" would mean the plugin gave up.
TOOL_AND_PLUGIN = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from hermes_fts import session_search
    from hermes_fts.hermes.plugin import serve
    tool = session_search(None, query="pendingword")
    plugin = serve({"query": "pendingword"}, None, lambda: "BUILTIN", Path(sys.argv[1]))
    print(json.dumps({"tool": tool, "plugin": plugin}))
""")


def tool_and_plugin_find_the_pending_row(db: Path, *, nobody: bool) -> None:
    proc = run([], nobody=nobody, home=db.parent, python=["-c", TOOL_AND_PLUGIN, str(db)])
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["tool"]["success"] is True, out["tool"]
    assert [r["session_id"] for r in out["tool"]["results"]] == ["a"], out["tool"]
    assert out["plugin"] != "BUILTIN", "the plugin fell back to Hermes' built-in"
    assert json.loads(out["plugin"])["results"], out["plugin"]


def make_store(folder: Path) -> Path:
    """An optimized store plus one row written without our package: a pending CJK change."""
    db = folder / "state.db"
    with SessionStore(db) as store:
        store.add_session("a")
        store.add_message("a", "user", "服务端 deploy")
        assert store.optimize_storage(min_pause=0)["ok"]
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(
            "INSERT INTO messages(session_id, role, content, timestamp) "
            "VALUES ('a', 'user', '后来的 服务端 pendingword', 2)"
        )
    assert conn.execute("SELECT COUNT(*) FROM hermes_fts_cjk_pending").fetchone() == (1,)
    conn.close()
    assert not Path(f"{db}-wal").exists()
    return db


def reads_all_work(db: Path, *, nobody: bool) -> None:
    found = read_json(["search", "pendingword"], db, nobody=nobody)
    assert [r["session_id"] for r in found["results"]] == ["a"], found  # the exact fallback
    for args in READS:
        payload = read_json(args, db, nobody=nobody)
        assert payload.get("success", True) is not False, (args, payload)
    tool_and_plugin_find_the_pending_row(db, nobody=nobody)


@contextlib.contextmanager
def tmpfs(size: str = "2m") -> Iterator[Path]:
    """A small tmpfs anyone may write, unmounted afterwards; skips if it cannot be mounted."""
    mount = Path(tempfile.mkdtemp(prefix="hermes-fts-tmpfs-"))
    mount.chmod(0o755)
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0777", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        mount.rmdir()
        pytest.skip(f"cannot mount a tmpfs to fill the disk: {proc.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)
        mount.rmdir()


def fill(folder: Path, leave: int = 0) -> None:
    """Fill ``folder``'s file system, then free ``leave`` bytes again."""
    with open(folder / "filler", "wb", buffering=0) as fh:
        with contextlib.suppress(OSError):
            while True:
                fh.write(b"\0" * 4096)
    if leave:
        os.truncate(folder / "filler", max(0, (folder / "filler").stat().st_size - leave))
    assert shutil.disk_usage(folder).free <= leave + 4096


def files(db: Path) -> dict[str, bytes]:
    """The store's bytes: the main file and a -wal file's content, if any."""
    out = {"main": db.read_bytes()}
    wal = Path(f"{db}-wal")
    if wal.exists() and wal.stat().st_size:
        out["wal"] = wal.read_bytes()
    return out


# ---------------------------------------------------------------- searching never writes


def test_a_read_only_file_with_a_pending_change_is_read_as_nobody() -> None:
    with nobody_dir() as folder:
        os.chown(folder, NOBODY, NOBODY)  # nobody may make -shm; the file stays root's
        db = make_store(folder)
        db.chmod(0o444)
        before = db.read_bytes()
        reads_all_work(db, nobody=True)
        assert db.read_bytes() == before
        # Writing commands say why they cannot, and never blame the path.
        for command in (["sync"], ["optimize-storage", "--yes"]):
            message = error_of(command, db, nobody=True)
            assert "read-only file" in message and "chmod" in message, message
            assert "--db" not in message, message
        assert db.read_bytes() == before


def test_another_users_writable_store_names_its_owner_not_chmod() -> None:
    """root's 0644 store in a folder nobody may write: the file is not read-only
    (its owner writes it), so `chmod u+w` would change nothing."""
    with nobody_dir() as folder:
        os.chown(folder, NOBODY, NOBODY)
        db = make_store(folder)
        db.chmod(0o644)
        before = db.read_bytes()
        for command in (["sync"], ["optimize-storage", "--yes"], ["--json", "sync"]):
            proc = run([*command, "--db", str(db)], nobody=True)
            assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
            message = json.loads(proc.stdout)["error"] if "--json" in command else proc.stderr
            assert f"{db} belongs to root, who may write it, and this user (nobody) may not" in (
                message
            ), message
            assert "read-only file" not in message and "chmod" not in message, message
        assert db.read_bytes() == before


@pytest.mark.parametrize("nobody", [False, True], ids=["root", "nobody"])
def test_reads_work_on_a_full_disk(nobody: bool) -> None:
    with tmpfs() as mount:
        db = make_store(mount)
        os.chown(db, NOBODY if nobody else 0, NOBODY if nobody else 0)  # the disk is the cause
        fill(mount)
        before = files(db)
        reads_all_work(db, nobody=nobody)
        assert files(db) == before
        # sync must write: it says the disk is full, not that the path is wrong.
        message = error_of(["sync"], db, nobody=nobody)
        assert "disk" in message and "full" in message and "--db" not in message, message
        assert files(db) == before


def test_a_store_on_a_read_only_mount_is_named_as_such() -> None:
    """A volume mounted read-only (a container's `:ro`, a backup): writers told root
    the file was read-only and to `chmod u+w` it, which the mount refuses too."""
    with tmpfs() as mount:
        db = make_store(mount)
        subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
        before = files(db)
        reads_all_work(db, nobody=False)
        for command in (["sync"], ["optimize-storage", "--yes"], ["demo"]):
            target = db if command != ["demo"] else mount / "new" / "state.db"
            message = error_of(command, target)
            assert message == (
                f"Error: {target} is on a file system mounted read-only and this command "
                "writes to the store; remount it read-write, or copy the store to a disk "
                "that can be written\n"
            ), message
        assert files(db) == before


def leave_unread_wal(db: Path) -> None:
    """A writer that ended without a checkpoint (a crash), then a reboot: the -wal
    holds changes and no -shm is left."""
    script = (
        "import os, sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
        "c.execute(\"UPDATE sessions SET title = 'x'\"); c.commit(); os._exit(0)"
    )
    subprocess.run([sys.executable, "-c", script, str(db)], check=True)
    assert Path(f"{db}-wal").stat().st_size > 0
    Path(f"{db}-shm").unlink()


def test_a_full_disk_with_unread_wal_changes_says_so() -> None:
    """With a -wal holding changes, the file alone is not the store: no immutable read."""
    with tmpfs() as mount:
        db = make_store(mount)
        leave_unread_wal(db)
        fill(mount)
        message = error_of(["search", "deploy"], db)
        assert "disk" in message and "full" in message and "--db" not in message, message


def test_readers_are_not_blocked_by_another_process_holding_begin_exclusive() -> None:
    with nobody_dir() as folder:
        db = make_store(folder)
        holder = subprocess.Popen(
            [
                sys.executable,
                "-c",
                textwrap.dedent("""
                import sqlite3, sys, time
                c = sqlite3.connect(sys.argv[1], isolation_level=None)
                c.execute("BEGIN EXCLUSIVE")
                c.execute("INSERT INTO messages(session_id, role, content, timestamp) "
                          "VALUES ('a', 'user', 'uncommitted pendingword', 3)")
                print("held", flush=True)
                sys.stdin.read()
            """),
                str(db),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert holder.stdout is not None and holder.stdout.readline() == "held\n"
            reads_all_work(db, nobody=False)
            found = read_json(["search", "pendingword"], db)
            assert len(found["results"]) == 1  # the uncommitted row is not seen
            message = error_of(["sync"], db)  # a writer waits, then names the lock
            assert "locked by another process" in message and "--db" not in message, message
        finally:
            holder.communicate("", timeout=30)


def test_a_store_opened_for_writing_gives_way_to_the_lock_before_a_search(tmp_path: Path) -> None:
    """In-process: the search after an agent write while another process holds the lock."""
    db = make_store(tmp_path)
    with SessionStore(db) as store:
        assert store.index_state()["cjk_pending"] == 0  # the open applied it
        writer = sqlite3.connect(db, isolation_level=None)
        writer.execute(
            "INSERT INTO messages(session_id, role, content, timestamp) "
            "VALUES ('a', 'user', '又一条 lockedword', 4)"
        )
        writer.execute("BEGIN EXCLUSIVE")
        try:
            hits = store.search_messages("lockedword")
            assert [h["snippet"] for h in hits] == ["又一条 >>>lockedword<<<"], hits
            assert store.search_messages("又一条")  # the CJK route, by the fallback
        finally:
            writer.execute("ROLLBACK")
            writer.close()
        store.sync()  # the lock is gone: applied now
        assert store.index_state()["cjk_pending"] == 0


# ---------------------------------------------------------------- preflight before writing


def test_optimize_refuses_for_lack_of_space_before_writing_anything() -> None:
    with tmpfs("1m") as mount:
        db = make_store(mount)
        size = db.stat().st_size
        fill(mount, leave=size // 2)  # room for the -shm, not for a VACUUM copy
        before = files(db)
        proc = run(["optimize-storage", "--yes", "--db", str(db)])
        assert proc.returncode == 1, proc.stderr
        assert "not enough free disk space" in proc.stderr, proc.stderr
        assert files(db) == before  # the pending row was not applied, nothing changed
        with SessionStore(db, readonly=True) as store:
            assert store.index_state()["cjk_pending"] == 1


# ---------------------------------------------------------------- every cause by name


def test_missing_and_foreign_files_are_wrong_paths(tmp_path: Path) -> None:
    message = error_of(["search", "x"], tmp_path / "nope.db")
    assert "no session store at" in message and "--db" in message, message
    notes = tmp_path / "notes.db"
    notes.write_bytes(b"plain notes\n" * 100)
    for command in (["search", "x"], ["sync"], ["status"]):
        message = error_of(command, notes)
        assert "is not a SQLite database" in message and "--db" in message, message


@pytest.mark.parametrize("command", [["search", "x"], ["sync"], ["status"]])
def test_a_pipe_or_a_device_is_a_wrong_path_not_a_wait(tmp_path: Path, command: list[str]) -> None:
    """A FIFO no one writes blocked the command for ever in its look at the header,
    and `--db <(cat state.db)` was called "not a SQLite database" (the look read it)."""
    fifo = tmp_path / "state.db"
    os.mkfifo(fifo)
    for db in (fifo, Path("/dev/null")):
        proc = subprocess.run(
            [sys.executable, "-m", "hermes_fts.cli", *command, "--db", str(db)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
        kind = "a pipe" if db == fifo else "a device"
        assert proc.returncode == 2 and proc.stdout == "", proc.stderr
        assert proc.stderr == (
            f"Error: {db} is {kind}, not a file (SQLite reads a store only from a file); "
            "pass the Hermes state.db as --db PATH\n"
        )


def test_a_read_only_folder_is_named_as_nobody() -> None:
    with nobody_dir() as folder:  # root's 0755 folder, nobody's file
        db = make_store(folder)
        os.chown(db, NOBODY, NOBODY)
        before = db.read_bytes()
        reads_all_work(db, nobody=True)  # no -wal: immutable
        message = error_of(["sync"], db, nobody=True)
        assert f"the folder {folder} is read-only" in message and "--db" not in message, message
        # A -wal with content, no -shm: someone may be writing, no immutable read.
        Path(f"{db}-wal").write_bytes(b"\0" * 4096)
        message = error_of(["search", "deploy"], db, nobody=True)
        assert "folder" in message and "read-only" in message and "-wal" in message, message
        assert "--db" not in message, message
        assert db.read_bytes() == before


def test_a_symlink_to_a_store_in_a_read_only_folder_is_read_as_nobody() -> None:
    """The link sits in a folder nobody may write; SQLite keeps the side files next to
    the store it names, in root's 0755 folder.  The look for writers was at the
    link's folder, so the read was not immutable and failed as 'cannot be written'."""
    with nobody_dir() as folder:
        store_folder, link_folder = folder / "store", folder / "links"
        store_folder.mkdir(mode=0o755)
        link_folder.mkdir(mode=0o755)
        os.chown(link_folder, NOBODY, NOBODY)
        db = make_store(store_folder)
        link = link_folder / "state.db"
        link.symlink_to(db)
        before = db.read_bytes()
        reads_all_work(link, nobody=True)
        assert db.read_bytes() == before
        assert sorted(p.name for p in store_folder.iterdir()) == ["state.db"]


def test_an_empty_wal_left_behind_in_a_read_only_folder_is_read_as_nobody() -> None:
    """A crash or a copy leaves an empty state.db-wal and no -shm: no process is
    in WAL mode without the -shm, and the WAL holds nothing, so the store is read
    as it is; every read failed, saying someone might be writing."""
    with nobody_dir() as folder:  # root's 0755 folder and 0644 file
        db = make_store(folder)
        Path(f"{db}-wal").write_bytes(b"")
        before = db.read_bytes()
        reads_all_work(db, nobody=True)
        assert db.read_bytes() == before and Path(f"{db}-wal").stat().st_size == 0
        assert not Path(f"{db}-shm").exists()
        # A -wal that holds a crashed writer's commit is not read as if it were empty:
        # its row is found, or the read is refused saying why.
        crash = (
            "import os, sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
            "c.execute('PRAGMA wal_autocheckpoint = 0'); "
            'c.execute("INSERT INTO messages(session_id, role, content, timestamp) '
            "VALUES ('a', 'user', 'walonlyword', 3)\"); c.commit(); os._exit(0)"
        )
        subprocess.run([sys.executable, "-c", crash, str(db)], check=True)
        Path(f"{db}-shm").unlink()
        assert Path(f"{db}-wal").stat().st_size > 0
        proc = run(["search", "walonlyword", "--json", "--db", str(db)], nobody=True)
        if proc.returncode == 0:
            assert json.loads(proc.stdout)["count"] == 1, proc.stdout
        else:
            assert "-wal" in json.loads(proc.stdout)["error"], proc.stdout


def test_a_store_this_user_cannot_read_is_named_as_nobody() -> None:
    with nobody_dir() as folder:
        db = make_store(folder)
        folder.chmod(0o700)  # nobody cannot even look inside
        for command in (["search", "deploy"], ["sync"]):
            message = error_of(command, db, nobody=True)
            assert "cannot be read by this user" in message and "--db" not in message, message


def test_damage_is_named_as_damage_not_as_a_wrong_path(tmp_path: Path) -> None:
    db = make_store(tmp_path)
    data = bytearray(db.read_bytes())
    data[100:108] = b"\xff" * 8  # the schema page's b-tree header destroyed
    db.write_bytes(bytes(data))
    for command in (["search", "deploy"], ["status"], ["sync"]):
        message = error_of(command, db)
        assert "is damaged" in message and ".recover" in message, message
        assert "--db" not in message, message


def test_cannot_write_now_tells_circumstances_from_data() -> None:
    """The classification behind "left for later": a lock, a full disk, a read-only file."""
    assert _sqlite.cannot_write_now(sqlite3.OperationalError("database is locked"))
    assert _sqlite.cannot_write_now(sqlite3.OperationalError("database or disk is full"))
    assert not _sqlite.cannot_write_now(sqlite3.OperationalError("no such table: x"))
    assert not _sqlite.cannot_write_now(ValueError("locked"))


def test_a_wal_store_on_a_read_only_mount_is_named_as_such_to_readers() -> None:
    """A store whose -wal holds changes, on a volume mounted read-only with no -shm
    (a backup, a reboot): SQLite cannot read it, and the reader was told to make
    the folder writable because someone may be writing, which on such a mount no
    one can be and no chmod allows."""
    with tmpfs() as mount:
        db = make_store(mount)
        leave_unread_wal(db)
        subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
        for command in (["search", "deploy"], ["status"]):
            message = error_of(command, db)
            assert "mounted read-only" in message and "remount it read-write" in message, message
            assert "make the folder writable" not in message, message
            assert "--db" not in message, message  # the path is right


HELD_OPEN = textwrap.dedent("""
    import sys
    from hermes_fts import SessionStore
    store = SessionStore(sys.argv[1], readonly=True)
    print(len(store.search("latertoken").rows), flush=True)
    sys.stdin.readline()  # the owner writes meanwhile
    print(len(store.search("latertoken").rows), flush=True)
""")


def test_a_rollback_journal_store_in_a_read_only_folder_sees_later_writes_as_nobody() -> None:
    """A store in rollback-journal mode (Hermes' fallback where WAL fails, or
    `journal_mode: delete`) leaves no side file while its writer is idle, so a
    reader who cannot write the folder opened it immutable: a store held open
    never saw a message its owner wrote afterwards, and reads during a write
    were torn.  Such a store needs no -shm: it is read with locks."""
    with nobody_dir() as folder:  # root's 0755 folder: nobody cannot write it
        db = make_store(folder)
        conn = sqlite3.connect(db)
        conn.execute("PRAGMA journal_mode = DELETE")
        reader = subprocess.Popen(
            [str(RUNUSER), "-u", "nobody", "--", str(SYSTEM_PYTHON), "-c", HELD_OPEN, str(db)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(nobody_package_root()), "HOME": "/tmp"},
            cwd="/tmp",
        )
        assert reader.stdout is not None and reader.stdin is not None
        assert reader.stdout.readline() == "0\n"
        with conn:
            conn.execute(
                "INSERT INTO messages(session_id, role, content, timestamp) "
                "VALUES ('a', 'user', 'latertoken 東京', 3)"
            )
        conn.close()
        out, err = reader.communicate("go\n", timeout=120)
        assert reader.returncode == 0, err
        assert out == "1\n", err
        assert sorted(p.name for p in folder.iterdir()) == ["state.db"]


def test_status_on_a_read_only_mount_says_no_write_runs_there() -> None:
    """``status`` of a store on a read-only mount told the user to run `sync` for its
    pending change, a command that cannot run there."""
    with tmpfs() as mount:
        db = make_store(mount)  # one change pending: status names `sync`
        subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
        command = [sys.executable, "-m", "hermes_fts.cli", "status", "--db", str(db)]
        text = subprocess.run(command, capture_output=True, text=True, cwd="/tmp", check=True)
        assert "mounted read-only, so the commands below that write" in text.stdout
        assert "`hermes-fts sync" in text.stdout  # still named: it is what a writable copy needs
        data = subprocess.run(
            [*command, "--json"], capture_output=True, text=True, cwd="/tmp", check=True
        )
        assert json.loads(data.stdout)["read_only_mount"] is True
    with tmpfs() as mount:
        db = make_store(mount)
        text = subprocess.run(
            [sys.executable, "-m", "hermes_fts.cli", "status", "--db", str(db), "--json"],
            capture_output=True,
            text=True,
            cwd="/tmp",
            check=True,
        )
        assert json.loads(text.stdout)["read_only_mount"] is False


def test_a_full_temporary_folder_is_named_not_the_store_s_disk(tmp_path: Path) -> None:
    """A read-only command whose sort outgrew memory met SQLite's temporary folder full
    (SQLITE_TMPDIR, TMPDIR or /var/tmp on a small disk) and said "the disk holding
    state.db is full" of a store whose disk had gigabytes free."""
    db = tmp_path / "state.db"
    with SessionStore(db) as store:
        store.add_session("a")
        store.add_message("a", "user", "first")
    conn = sqlite3.connect(db)
    with conn:  # words enough that bench's read of the vocabulary is sorted on disk
        conn.executemany(
            "INSERT INTO messages(session_id, role, content, timestamp) VALUES ('a', 'user', ?, ?)",
            ((f"word{i} tok{i * 7} 部署{i}", 1.7e9 + i) for i in range(20_000)),
        )
    conn.close()
    with SessionStore(db) as store:
        store.sync()
    with tmpfs("1m") as temp:
        fill(temp)
        proc = subprocess.run(
            [str(SYSTEM_PYTHON), "-m", "hermes_fts.cli", "--db", str(db), "--json", "bench"],
            capture_output=True,
            text=True,
            env={
                "PATH": "/usr/bin:/bin",
                "PYTHONPATH": str(nobody_package_root()),
                "SQLITE_TMPDIR": str(temp),
            },
            timeout=300,
        )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert error.startswith(f"SQLite's temporary folder {temp} is full"), error
    assert "the disk holding" not in error, error
