"""The store interface the tool and CLI use: open_store, file_has_session and the read methods."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from _support import other_application_db
from _tool_fixtures import (
    T0,
    chat,
    conversation,
    nobody_dir,
    nobody_package_root,
    nobody_python,
)

import hermes_fts
from hermes_fts import _sqlite, _store_problems, cli
from hermes_fts.store import SessionStore, StoreError, file_has_session, open_store


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    path = tmp_path / "state.db"
    with SessionStore(path) as store:
        conversation(store, "s1", chat(4), title="deploy notes")
        conversation(store, "s2", chat(2), start=T0 + 100, title="deploy notes #2")
        conversation(store, "s3", chat(2), start=T0 + 50, title="deploy notes #3")
        conversation(store, "lit", chat(1), start=T0 + 200, title="deployXnotes #9")
    return path


# --------------------------------------------------------------------------- refusals


def test_missing_store_is_refused_and_not_created(tmp_path: Path) -> None:
    path = tmp_path / "nope.db"
    for readonly in (True, False):
        with pytest.raises(StoreError, match="no session store") as err:
            open_store(path, readonly=readonly)
        assert err.value.wrong_path
    assert not path.exists()


def test_create_makes_a_new_store(tmp_path: Path) -> None:
    path = tmp_path / "new" / "state.db"
    with open_store(path, readonly=False, create=True) as store:
        assert store.path == os.path.realpath(path)
        assert store.count_messages("x") == 0
    with open_store(path, readonly=True) as store:
        assert store.status()["sessions"] == 0


@pytest.mark.parametrize("readonly", [True, False])
def test_directory_empty_plain_and_foreign_files_are_refused_untouched(
    tmp_path: Path, readonly: bool
) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    empty = tmp_path / "empty.db"
    empty.touch()
    notes = tmp_path / "notes.db"
    notes.write_bytes(b"plain notes, not a database\n" * 20)
    other = other_application_db(tmp_path / "other.db")
    half = tmp_path / "half.db"  # a sessions table and no messages table
    conn = sqlite3.connect(half)
    conn.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY)")
    conn.commit()
    conn.close()
    before = {p.name: (digest(p) if p.is_file() else None) for p in tmp_path.iterdir()}
    cases = [
        (folder, "is a directory"),
        (empty, "is empty"),
        (notes, "is not a SQLite database"),
        (other, "not a Hermes session store"),
        (half, "not a Hermes session store"),
    ]
    for path, reason in cases:
        with pytest.raises(StoreError, match=reason) as err:
            open_store(path, readonly=readonly)
        assert err.value.wrong_path, path
    after = {p.name: (digest(p) if p.is_file() else None) for p in tmp_path.iterdir()}
    assert after == before  # no -wal, -shm or journal files either
    assert list(folder.iterdir()) == []


def test_a_locked_store_says_locked_not_wrong_path(db: Path, monkeypatch) -> None:
    monkeypatch.setattr(_store_problems, "BUSY_TIMEOUT_S", 0.05)  # the preflight's wait
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreError, match="locked by another process") as err:
            open_store(db, readonly=False)
        assert not err.value.wrong_path
    finally:
        holder.execute("ROLLBACK")
        holder.close()


# --------------------------------------------------------------------------- real permissions


NOBODY_PYTHON = nobody_python()
needs_nobody = pytest.mark.skipif(
    NOBODY_PYTHON is None, reason="needs root to run as the real user nobody"
)

_AS_NOBODY = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, sys.argv[1])
    from hermes_fts.store import StoreError, open_store
    try:
        store = open_store(sys.argv[2], readonly=sys.argv[3] == "ro")
    except StoreError as exc:
        print(json.dumps({"error": str(exc), "wrong_path": exc.wrong_path}))
    else:
        print(json.dumps({"readonly": store.readonly,
                          "messages": store.status()["messages"]}))
        store.close()
""")


def _open_as_nobody(path: Path, mode: str) -> dict:
    assert NOBODY_PYTHON is not None
    env = {"PATH": os.environ.get("PATH", ""), "HERMES_CJK_FTS": "0"}
    proc = subprocess.run(
        [
            "runuser",
            "-u",
            "nobody",
            "--",
            NOBODY_PYTHON,
            "-c",
            _AS_NOBODY,
            str(nobody_package_root()),
            str(path),
            mode,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture()
def shared_dir() -> Iterator[Path]:
    with nobody_dir() as path:
        yield path


def _store_in(folder: Path) -> Path:
    path = folder / "state.db"
    with SessionStore(path) as store:
        conversation(store, "s1", chat(3))
    for suffix in ("-wal", "-shm"):
        assert not Path(f"{path}{suffix}").exists()
    return path


@needs_nobody
def test_read_write_open_of_a_read_only_file_fails_and_never_reopens_read_only(
    shared_dir: Path,
) -> None:
    os.chown(shared_dir, 65534, 65534)  # the folder is nobody's; the file stays root's 0644
    path = _store_in(shared_dir)
    before = digest(path)
    result = _open_as_nobody(path, "rw")
    assert "error" in result, result
    # Not a read-only file: its owner writes it, and the error says whose it is.
    assert "belongs to root, who may write it" in result["error"] and not result["wrong_path"]
    assert "chmod" not in result["error"]
    assert digest(path) == before
    assert _open_as_nobody(path, "ro") == {"readonly": True, "messages": 3}


@needs_nobody
def test_read_write_open_in_a_read_only_folder_names_the_folder(shared_dir: Path) -> None:
    path = _store_in(shared_dir)  # the folder stays root's 0755; the file becomes nobody's
    os.chown(path, 65534, 65534)
    result = _open_as_nobody(path, "rw")
    assert "error" in result, result
    assert "folder" in result["error"] and "read-only" in result["error"]
    assert not result["wrong_path"]
    assert str(shared_dir) in result["error"]


# --------------------------------------------------------------------------- peeks and reads


def test_file_has_session_peeks_without_writing(db: Path, tmp_path: Path) -> None:
    before = digest(db)
    assert file_has_session(db, "s1")
    assert not file_has_session(db, "missing")
    assert not file_has_session(tmp_path / "nope.db", "s1")
    assert not (tmp_path / "nope.db").exists()
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not sqlite" * 100)
    assert not file_has_session(junk, "s1")
    assert digest(db) == before


@pytest.mark.parametrize("flag", [None, "no", "false", 2])
def test_a_readonly_that_is_not_a_flag_is_refused_before_the_open(db: Path, flag: object) -> None:
    # None opened for writing a store meant to be read, "no" and "false" read-only.
    before = digest(db)
    with pytest.raises(TypeError, match=r"^readonly must be True or False, not "):
        SessionStore(db, readonly=flag)  # type: ignore[arg-type]
    assert digest(db) == before
    assert sorted(p.name for p in db.parent.iterdir()) == [db.name]


@pytest.mark.parametrize("path", [b"/tmp/state.db", 5])
def test_a_path_that_is_not_text_is_refused_naming_it(path: object) -> None:
    """pathlib's TypeError named no argument, and for 5 said bytes were accepted."""
    with pytest.raises(TypeError, match=r"^path must be text or a path, not "):
        SessionStore(path)  # type: ignore[arg-type]


def test_path_is_the_real_file(db: Path, tmp_path: Path) -> None:
    link = tmp_path / "link.db"
    link.symlink_to(db)
    with open_store(link, readonly=True) as store:
        assert store.path == os.path.realpath(db)


def test_read_methods(db: Path) -> None:
    with open_store(db, readonly=True) as store:
        first = store.first_message_id("s1")
        assert first == min(m["id"] for m in store.get_messages("s1"))
        assert store.message_flags(first) == ("s1", 1, 0)
        assert store.message_flags(10**9) is None
        assert store.count_messages("s1") == 4 and store.count_messages("none") == 0
        assert store.session_preview("s1") == store.get_messages("s1")[0]["content"][:60]
        assert store.first_message_id("none") is None
        # The newest continuation by start time wins; the exact title otherwise.
        assert store.find_session_by_title("deploy notes") == "s2"
        assert store.find_session_by_title("deploy notes #3") == "s3"
        assert store.find_session_by_title("deploy_notes") is None
        assert store.find_session_by_title("deployXnotes") == "lit"  # only a continuation
        listed = [row["id"] for row in store.sessions_by_activity((), limit=10)]
        assert listed == ["lit", "s2", "s3", "s1"]
        assert [r["id"] for r in store.sessions_by_activity((), limit=2, offset=1)] == ["s2", "s3"]
        summary = store.get_anchor_summary("s1", first, 2)
        assert [m["id"] for m in summary["window"]] == [first]
        assert (summary["messages_before"], summary["messages_after"]) == (0, 2)


def test_flags_follow_writes(db: Path) -> None:
    with open_store(db, readonly=False) as store:
        mid = store.first_message_id("s2")
        assert mid is not None
        store.set_message_flags(mid, active=False, compacted=True)
        assert store.message_flags(mid) == ("s2", 0, 1)
        store.set_message_flags(mid, compacted=False)
        assert store.message_flags(mid) == ("s2", 0, 0)
        # A rewound first message is no longer the session's first visible one.
        assert store.first_message_id("s2") != mid


def test_status_reports_everything_without_writing(db: Path) -> None:
    before = digest(db)
    with open_store(db, readonly=True) as store:
        data = store.status()
        conn = sqlite3.connect(_sqlite.readonly_uri(db), uri=True)
        pages, size = (
            conn.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_count", "page_size")
        )
        text = conn.execute("SELECT SUM(length(CAST(content AS BLOB))) FROM messages").fetchone()[0]
        conn.close()
    assert digest(db) == before
    assert data["db"] == os.path.realpath(db)
    assert (data["messages"], data["sessions"]) == (9, 4)
    assert data["db_bytes"] == pages * size
    assert data["text_bytes"] == text
    assert data["cjk_pending"] == 0 and data["backfill"] is None and not data["fts_stale"]
    cjk = data["indexes"]["hermes_fts_cjk"]
    assert cjk["exists"] and cjk["served"] and cjk["bytes"] > 0
    assert cjk["x_text"] == round(cjk["bytes"] / text, 3)
    word = data["indexes"]["hermes_fts_word"]  # opt-in: not kept
    assert not word["exists"] and word["bytes"] is None and "hermes_fts_word" in data["not_kept"]
    assert data["sqlite_version"] == sqlite3.sqlite_version
    assert set(data["extension"]) == {"loaded", "strategy", "disabled", "error"}
    json.dumps(data)  # the CLI prints it as JSON


def _insert_plainly(db: Path) -> None:
    """A message written as Hermes writes it: no extension, no hermes-fts."""
    with sqlite3.connect(db) as plain:
        plain.execute(
            "INSERT INTO messages(session_id, role, content, timestamp) "
            "VALUES ('s1', 'user', 'written by Hermes', 1)"
        )
    plain.close()


# Every table a trigger of ours on messages writes (the rank bounds' dirty blocks and
# what they cover, the time table's zones): optimize-storage stopped on a missing
# rank-bounds table ("no such table") and left Hermes unable to save a message.
DROPPABLE = [
    "hermes_fts_cjk_pending",
    "hermes_fts_time",
    "hermes_fts_time_zones",
    "hermes_fts_rank_bounds_dirty",
    "hermes_fts_rank_bounds_built",
]


@pytest.mark.parametrize("table", DROPPABLE)
def test_status_says_a_dropped_table_of_ours_makes_every_write_fail(
    db: Path, table: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with SessionStore(db) as store:
        store.optimize_storage(sleep=lambda s: None, vacuum=False)
    with hermes_fts.connect(db) as conn:  # a user dropping one of our tables by hand
        conn.execute(f"DROP TABLE {table}")
    conn.close()
    with pytest.raises(sqlite3.OperationalError, match=f"no such table: main.{table}"):
        _insert_plainly(db)  # our triggers still name it: Hermes can save nothing
    before = digest(db)
    with open_store(db, readonly=True) as store:
        data = store.status()
    assert cli.main(["status", "--db", str(db)]) == 0
    shown = capsys.readouterr().out
    assert digest(db) == before
    assert data["blocked_writes"] and all(t == [table] for t in data["blocked_writes"].values())
    assert "writes_blocked" in data["needs_optimize"]
    assert f"Writes FAIL: {table} is missing" in shown and "optimize-storage" in shown, shown
    with open_store(db, readonly=True) as store:  # searches still answer meanwhile
        assert len(store.search("chatter", sort="newest").rows) == 9
    with SessionStore(db) as store:
        assert store.optimize_storage(sleep=lambda s: None, vacuum=False)["ok"] is True
        assert store.status()["blocked_writes"] == {}
    _insert_plainly(db)
    with open_store(db, readonly=True) as store:
        assert len(store.search("written by Hermes").rows) == 1
