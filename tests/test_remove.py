"""``hermes-fts remove``: before uninstalling, every object hermes-fts made leaves the
store, and the store is as Hermes Agent alone would have it.  Left in place, our
triggers went on writing the pending table (deleted text included) at every
message Hermes Agent 0.19.0 wrote, with no hermes-fts left to apply it."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import _hermes_env as he
import pytest
from _support import needs_extension

ROOT = Path(__file__).resolve().parent.parent

# Hermes' own code: one session written, or one more message, or a message deleted.
AGENT = textwrap.dedent("""
    import sys
    from pathlib import Path
    from hermes_state import SessionDB
    db = SessionDB(Path(sys.argv[2]))
    if sys.argv[1] == "seed":
        db.create_session("s1", "cli")
        for text in ("部署到东京的服务器", "deploy the staging server", "数据库迁移 done"):
            db.append_message("s1", "user", content=text)
    elif sys.argv[1] == "append":
        db.append_message("s1", "user", content=sys.argv[3])
    else:
        db.delete_session("s1")
    db.close()
""")


def _agent(venv: Path, db: Path, *args: str) -> None:
    proc = subprocess.run(
        [str(he.venv_python(venv)), "-c", AGENT, *args[:1], str(db), *args[1:]],
        capture_output=True,
        text=True,
        env=he.clean_env(db.parent / "home"),
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr


def _cli(db: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", "--db", str(db), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


def _objects(db: Path) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """(ours, everything else) in sqlite_master, as (type, name)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = {(str(t), str(n)) for t, n in conn.execute("SELECT type, name FROM sqlite_master")}
    finally:
        conn.close()
    ours = {r for r in rows if r[1].lower().startswith("hermes_fts_")}
    return ours, rows - ours


def _rows(db: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


@needs_extension
def test_remove_leaves_the_store_as_hermes_alone_has_it(hermes_venv: Path, tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    _agent(hermes_venv, db, "seed")
    hermes_objects = _objects(db)[1]
    assert _cli(db, "optimize-storage", "--yes").returncode == 0
    _agent(hermes_venv, db, "append", "写在移除之前 before remove")  # waits in our pending table
    ours, others = _objects(db)
    assert ours and ("table", "hermes_fts_cjk_pending") in ours
    messages = _rows(db, "SELECT id, session_id, role, content FROM messages ORDER BY id")

    done = _cli(db, "remove", "--yes")
    assert done.returncode == 0, done.stderr
    assert f"Removed {len(ours)} hermes-fts objects" in done.stdout
    assert _objects(db) == (set(), others)  # Hermes' own objects all there, ours gone
    assert hermes_objects <= others
    assert _rows(db, "SELECT id, session_id, role, content FROM messages ORDER BY id") == messages
    assert _rows(db, "SELECT key FROM state_meta WHERE key LIKE 'hermes_fts%'") == []
    assert _rows(db, "PRAGMA integrity_check") == [("ok",)]

    # Hermes goes on writing and deleting, and nothing of ours comes back.
    _agent(hermes_venv, db, "append", "写在移除之后 after remove")
    _agent(hermes_venv, db, "delete")
    assert _objects(db) == (set(), others)
    assert _rows(db, "SELECT count(*) FROM messages") == [(0,)]
    again = _cli(db, "remove", "--yes")
    assert again.returncode == 0 and "nothing was changed" in again.stdout


def _store(tmp_path: Path) -> Path:
    from hermes_fts.store import SessionStore

    db = tmp_path / "state.db"
    with SessionStore(db) as store:
        store.add_session("s1", "cli")
        store.add_message("s1", "user", "部署到东京 deploy")
        store.optimize_storage(vacuum=False)
    return db


@needs_extension
def test_remove_asks_first_and_a_script_must_say_yes(tmp_path: Path) -> None:
    db = _store(tmp_path)
    ours = _objects(db)[0]
    asked = _cli(db, "remove")  # no stdin: no answer, no consent
    assert asked.returncode == 1 and "Remove them? [y/N]" in asked.stderr
    assert "nothing was changed" in asked.stderr and "--yes" in asked.stderr
    scripted = _cli(db, "--json", "remove")
    assert scripted.returncode != 0
    assert "needs --yes" in json.loads(scripted.stdout)["error"]
    assert _objects(db)[0] == ours
    done = _cli(db, "--json", "remove", "--yes")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["success"] is True and sorted(doc["names"]) == sorted(n for _, n in ours)
    assert sum(doc["removed"].values()) == len(ours) and doc["freed_bytes"] > 0
    assert _objects(db)[0] == set()


@needs_extension
def test_remove_refuses_while_the_plugin_would_put_them_back(tmp_path: Path) -> None:
    db = _store(tmp_path)
    ours = _objects(db)[0]
    (tmp_path / "config.yaml").write_text("plugins:\n  enabled:\n  - hermes-fts\n")
    refused = _cli(db, "remove", "--yes")
    assert refused.returncode == 2
    assert "hermes plugins disable hermes-fts" in refused.stderr
    assert _objects(db)[0] == ours


@needs_extension
def test_remove_refuses_the_enabled_plugin_for_what_it_would_really_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The refusal said the plugin "would add hermes-fts' objects back after Hermes'
    next turn", but its hook after a turn builds nothing on a removed store: what it
    does is answer by slow scans, each answer asking for the optimize-storage that
    builds them again."""
    import time

    from hermes_fts.hermes import plugin, serving, upkeep

    db = _store(tmp_path)
    (tmp_path / "config.yaml").write_text("plugins:\n  enabled:\n  - hermes-fts\n")
    refused = _cli(db, "remove", "--yes")
    assert refused.returncode == 2
    assert "slow exact scans" in refused.stderr, refused.stderr
    assert "`hermes fts optimize-storage`" in refused.stderr, refused.stderr
    assert "next turn" not in refused.stderr, refused.stderr
    (tmp_path / "config.yaml").unlink()  # removed anyway: what would the plugin do?
    assert _cli(db, "remove", "--yes").returncode == 0
    conn = sqlite3.connect(db)  # Hermes saves the turn's message
    with conn:
        conn.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) "
            "VALUES ('s1', 'user', 'deploy again', 2.0)"
        )
    conn.close()
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    plugin.after_turn()
    deadline = time.monotonic() + 60
    while upkeep.running() and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        answer = plugin.answer({"query": "deploy"}, None, db)
    finally:
        serving.STORES.drop()
    assert _objects(db)[0] == set()  # the turn put nothing back
    assert answer["count"] == 1 and answer["route"] == "like_scan", answer
    assert "`hermes fts optimize-storage`" in answer["index_rebuild"]["note"], answer


@needs_extension
def test_remove_without_the_extension_says_why_and_removes_nothing(tmp_path: Path) -> None:
    db = _store(tmp_path)
    ours = _objects(db)[0]
    refused = _cli(db, "remove", "--yes", HERMES_CJK_FTS="0")
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert "extension" in refused.stderr and "nothing was removed" in refused.stderr
    assert _objects(db)[0] == ours


@needs_extension
def test_remove_drops_a_pending_backlog_without_applying_it_first(tmp_path: Path) -> None:
    """Rows Hermes wrote while hermes-fts did not run wait in the pending table: the
    write open applied all of them to the CJK index before remove dropped it, silently,
    for minutes on a large backlog, and then freed more than the question said."""
    from _support import shell_backlog

    from hermes_fts.store import SessionStore

    db = tmp_path / "state.db"
    shell_backlog(db, 5_000)
    with SessionStore(db, readonly=True) as store:
        asked = store.search_objects()["freed_bytes"]
    if asked is None:
        pytest.skip("this SQLite has no dbstat to measure the objects")
    done = _cli(db, "remove", "--yes", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["freed_bytes"] == asked
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("SELECT count(*) FROM messages").fetchone()[0] == 5_001
        left = conn.execute(
            "SELECT name FROM sqlite_master WHERE name LIKE 'hermes_fts%'"
        ).fetchall()
    finally:
        conn.close()
    assert left == []
