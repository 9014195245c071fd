"""Hermes Agent 0.19.0's own search never finds less on a store hermes-fts touched.

Every check compares two copies of one history written by the real agent
(``hermes_state.SessionDB`` from PyPI, driven by ``_coex_driver.py`` inside a
venv): ``control`` is never touched by hermes-fts, ``db`` is.  Both get the
same agent writes; for every probe query, Hermes' own
``search_messages(q, limit=100000)`` on ``db`` must return a superset of what
it returns on ``control``.  Then: every route of ours gives one answer.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import _hermes_env as he
import pytest
from _tool_fixtures import nobody_package_root

from hermes_fts.index import schema
from hermes_fts.search import run as search
from hermes_fts.search.request import SearchRequest
from hermes_fts.store import SessionStore

DRIVER = Path(__file__).with_name("_coex_driver.py")
ROOT = Path(__file__).resolve().parent.parent

# Latin words, identifiers, 1/2/3+-character CJK, words only in tool rows,
# a word past the first 8 KB of a tool row, tool names, CJK in tool-call
# arguments and in multimodal (list) content, words only in cron and
# subagent sessions.
PROBES = [
    "deploy",
    "pipeline",
    "scripts/deploy.sh",
    "user@example.com",
    "服",
    "服务",
    "服务端",
    "数据库迁移",
    "工具标记",
    "tailmarker",
    "桂林",
    "한국어",
    "東京タワー",
    "ラーメン",
    "terminal",
    "cronword",
    "subagentword",
    "每日构建",
    "新消息",
    "tailA",
    "editedA",
    "dolor",
    "象鼻山",
    "照片",
    "天气",
]


def agent(venv: Path, *args: str) -> Any:
    """Run one ``_coex_driver.py`` command with Hermes' own code; its JSON result."""
    env = he.clean_env(Path(args[1]).parent / "home")
    proc = subprocess.run(
        [str(he.venv_python(venv)), str(DRIVER), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def probe(venv: Path, db: Path) -> dict[str, set[int]]:
    return {q: set(ids) for q, ids in agent(venv, "probe", str(db), json.dumps(PROBES)).items()}


@pytest.fixture()
def pair(tmp_path: Path, hermes_venv: Path) -> tuple[Path, Path]:
    """``(db, control)``: two identical agent-written stores."""
    db, control = tmp_path / "state.db", tmp_path / "control.db"
    agent(hermes_venv, "seed", str(db))
    shutil.copy(db, control)
    return db, control


def lost(venv: Path, db: Path, control: Path) -> dict[str, set[int]]:
    """Per probe, the rows Hermes finds on ``control`` but not on ``db``."""
    ours, theirs = probe(venv, db), probe(venv, control)
    assert any(theirs.values())  # the probes find something at all
    return {q: theirs[q] - ours[q] for q in PROBES if theirs[q] - ours[q]}


def both_write(venv: Path, db: Path, control: Path, tag: str) -> None:
    """The same agent writes, edits and deletes on both copies."""
    assert agent(venv, "write", str(db), tag) == agent(venv, "write", str(control), tag)


@pytest.mark.parametrize("trigram", ["1", "0"])
def test_open_optimize_and_later_agent_writes_never_worse(
    pair: tuple[Path, Path], hermes_venv: Path, trigram: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, control = pair
    monkeypatch.setenv("HERMES_TRIGRAM_FTS", trigram)
    with SessionStore(db) as store:
        assert lost(hermes_venv, db, control) == {}  # after an open
        assert store.optimize_storage(min_pause=0)["ok"]
    assert lost(hermes_venv, db, control) == {}  # after optimize-storage
    both_write(hermes_venv, db, control, "A")
    assert lost(hermes_venv, db, control) == {}  # rows the agent wrote afterwards
    assert probe(hermes_venv, db)["tailA"]  # past the first 8 KB of a new tool row
    with SessionStore(db) as store:  # our next open after the agent's
        state = store.index_state()
        if trigram == "0":
            assert not state[schema.TRIGRAM]["served"]
            assert "triggers missing" not in state[schema.TRIGRAM]["reason"]
        assert store.optimize_storage(min_pause=0)["ok"]
    both_write(hermes_venv, db, control, "B")
    assert lost(hermes_venv, db, control) == {}


# What `hermes plugins enable hermes-fts` writes.  Our trigram index is opt-in
# (issue 35): with the plugin or without, optimize-storage drops it.
PLUGIN_ENABLED = "plugins:\n  enabled:\n    - hermes-fts\n"


def _hermes_objects(db: Path) -> dict[str, tuple[str, str]]:
    """Hermes' own index objects: name -> (type, sql)."""
    import sqlite3

    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {
            name: (kind, sql)
            for kind, name, sql in conn.execute(
                "SELECT type, name, sql FROM sqlite_master WHERE name LIKE 'messages_fts%'"
            )
        }
    finally:
        conn.close()


def test_with_the_plugin_enabled_trigram_is_dropped_and_stays_dropped(
    pair: tuple[Path, Path], hermes_venv: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, control = pair
    monkeypatch.delenv("HERMES_TRIGRAM_FTS", raising=False)
    (db.parent / "config.yaml").write_text(PLUGIN_ENABLED)
    with SessionStore(db) as store:
        if not store.cjk_available:
            pytest.skip("the plugin policy needs cjk_unicode61")
        assert store.optimize_storage(min_pause=0)["ok"]
        assert not store.index_state()[schema.TRIGRAM]["exists"]
    assert _hermes_objects(db) == _hermes_objects(control)  # Hermes' own are untouched
    assert lost(hermes_venv, db, control) == {}
    size = db.stat().st_size
    for tag in ("A", "B"):  # Hermes opens and writes: no refill
        both_write(hermes_venv, db, control, tag)
        assert _hermes_objects(db) == _hermes_objects(control)
        assert lost(hermes_venv, db, control) == {}
    assert probe(hermes_venv, db)["tailA"]
    # A refill of messages_fts would rewrite it whole; the writes add a few pages.
    assert db.stat().st_size < size * 1.25
    with SessionStore(db) as store:  # our next open and optimize keep it dropped
        assert not store.optimize_needed()
        state = store.index_state()
        assert state[schema.CJK]["served"] and not state["fts_stale"]
        assert store.integrity_check() == {schema.CJK: None}  # word and trigram are opt-in
        assert not store.index_state()[schema.TRIGRAM]["exists"]
    assert _hermes_objects(db) == _hermes_objects(control)


def test_during_and_after_an_interrupted_optimize_never_worse(
    pair: tuple[Path, Path], hermes_venv: Path
) -> None:
    db, control = pair
    pauses: list[int] = []

    def pause(_seconds: float) -> None:
        # Between two chunks no transaction is open: the agent may search.
        pauses.append(1)
        if len(pauses) in (1, 4):
            assert lost(hermes_venv, db, control) == {}
        if len(pauses) == 4:
            raise KeyboardInterrupt  # Ctrl-C in the middle of a rebuild

    with SessionStore(db) as store:
        with pytest.raises(KeyboardInterrupt):
            # Fixed 5-row chunks, so the rebuild is still under way at the 4th pause.
            store.optimize_storage(sleep=pause, chunk_rows=5, min_pause=0, txn_target=None)
        assert store.rebuild_status() is not None  # it did stop mid-way
    assert lost(hermes_venv, db, control) == {}
    both_write(hermes_venv, db, control, "A")
    assert lost(hermes_venv, db, control) == {}
    with SessionStore(db) as store:  # a rerun finishes the job
        assert store.optimize_storage(min_pause=0)["ok"]
        assert store.rebuild_status() is None
        # the word and trigram indexes are opt-in: not kept, not checked
        assert store.integrity_check() == {schema.CJK: None}
    assert lost(hermes_venv, db, control) == {}


def test_kill_9_during_optimize_never_worse(
    pair: tuple[Path, Path], hermes_venv: Path, tmp_path: Path
) -> None:
    db, control = pair
    marker = tmp_path / "paused"
    script = (
        "import sys, time, pathlib\n"
        "from hermes_fts.store import SessionStore\n"
        "marker = pathlib.Path(sys.argv[2]); count = [0]\n"
        "def pause(_s):\n"
        "    count[0] += 1\n"
        "    if count[0] == 3:\n"
        "        marker.write_text('x'); time.sleep(600)\n"
        "SessionStore(sys.argv[1]).optimize_storage(sleep=pause, chunk_rows=5, min_pause=0)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", script, str(db), str(marker)], env=env)
    try:
        for _ in range(600):
            if marker.exists() or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert marker.exists(), "optimize-storage never reached its third pause"
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert lost(hermes_venv, db, control) == {}
    both_write(hermes_venv, db, control, "A")
    assert lost(hermes_venv, db, control) == {}


# ------------------------------------------------------------ one answer per route

ROUTES = ("fts5", "fts_cjk", "trigram", "like_scan")


@pytest.fixture()
def every_kind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[SessionStore, dict[str, int]]:
    """A store holding every kind of row, optimized: all three indexes served
    (the word and trigram ones are opt-in)."""
    monkeypatch.setenv("HERMES_TRIGRAM_FTS", "1")
    monkeypatch.setenv("HERMES_WORD_FTS", "1")
    store = SessionStore(tmp_path / "routes.db")
    store.add_session("chat", "cli")
    store.add_session("cron-1", "cron")
    store.add_session("sub-1", "subagent")
    calls = json.dumps(
        [
            {
                "id": "c1",
                "type": "function",
                "function": {
                    "name": "web_search",
                    "arguments": json.dumps({"q": "漓江 竹筏"}, ensure_ascii=False),
                },
            }
        ],
        ensure_ascii=False,
    )
    rows = {
        "user": store.add_message("chat", "user", "服务端 deploy 数据库迁移"),
        "calls": store.add_message("chat", "assistant", "好的 sure", tool_calls=calls),
        "tool": store.add_message(
            "chat", "tool", "工具标记 " + "x " * 6000 + " 尾部词 tailword", tool_name="terminal"
        ),
        "toolname": store.add_message("chat", "tool", "ok", tool_name="搜"),
        "cron": store.add_message("cron-1", "user", "定时任务报告 cronword"),
        "sub": store.add_message("sub-1", "assistant", "子代理输出 subword"),
    }
    assert store.optimize_storage(min_pause=0)["ok"]
    state = store.index_state()
    assert all(state[index]["served"] for index in schema.INDEXES), state
    yield store, rows
    store.close()


def _route_ids(store: SessionStore, query: str, route: str) -> list[int]:
    return [r["id"] for r in store.search_messages(query, limit=1000, route=route)]


@pytest.mark.parametrize(
    "query, expect",
    [
        ("服务端", {"user"}),
        ("数据库迁移", {"user"}),
        ("工具标记", {"tool"}),
        ("尾部词", {"tool"}),  # past the first 8 KB of a tool row
        ('"漓江竹"', set()),  # quoted: alone, in no row as written, it is read as a sentence
        ("竹筏", {"calls"}),
        ("定时任务", {"cron"}),
        ("子代理", {"sub"}),
        ("搜", {"toolname"}),  # one character, found only in a tool row's tool_name
    ],
)
def test_every_cjk_route_gives_the_same_rows(
    every_kind: tuple[SessionStore, dict[str, int]], query: str, expect: set[str]
) -> None:
    store, rows = every_kind
    want = {rows[name] for name in expect}
    for route in ("fts_cjk", "trigram", "like_scan"):
        found = _route_ids(store, query, route)
        assert len(found) == len(set(found)), (route, found)  # no duplicates
        assert set(found) == want, (route, query)


@pytest.mark.parametrize(
    "query, expect",
    [
        ("deploy", {"user"}),
        ("tailword", {"tool"}),
        ("terminal", {"tool"}),
        ("web_search", {"calls"}),
        ("cronword", {"cron"}),
        ("subword", {"sub"}),
    ],
)
def test_every_route_gives_the_same_rows_for_whole_latin_words(
    every_kind: tuple[SessionStore, dict[str, int]], query: str, expect: set[str]
) -> None:
    store, rows = every_kind
    want = {rows[name] for name in expect}
    for route in ROUTES:
        found = _route_ids(store, query, route)
        assert len(found) == len(set(found)), (route, found)
        assert set(found) == want, (route, query)


def test_only_the_trigram_route_treats_latin_as_substrings(
    every_kind: tuple[SessionStore, dict[str, int]],
) -> None:
    """The documented difference: fts5, fts_cjk and LIKE match words, trigram substrings.
    The trigram index answers a Latin word only where LIKE folds nothing (no
    extension): it holds ＤＥＰＬＯＹ raw, so where LIKE folds, LIKE answers."""
    store, rows = every_kind
    assert _route_ids(store, "eploy", "fts5") == []
    assert _route_ids(store, "eploy", "fts_cjk") == []
    assert _route_ids(store, "eploy", "like_scan") == []
    assert _route_ids(store, "eploy", "trigram") == []
    raw = {**store.index_state(), "cjk_fold": False}
    found = search.run(store._conn, raw, SearchRequest("eploy", route="trigram", limit=1000))
    assert found.route == "trigram" and [r["id"] for r in found.rows] == [rows["user"]]


# ------------------------------------------------------------- opening changes nothing


def _file_state(db: Path) -> tuple[bytes, list[tuple[Any, ...]]]:
    import sqlite3

    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        schema_rows = sorted(conn.execute("SELECT type, name, sql FROM sqlite_master"))
    finally:
        conn.close()
    return db.read_bytes(), schema_rows


def test_opening_and_searching_an_agent_store_leaves_it_byte_identical(
    pair: tuple[Path, Path], hermes_venv: Path
) -> None:
    db, _control = pair
    before = _file_state(db)
    with SessionStore(db) as store:
        assert store.search_messages("服务端", limit=5)
        assert store.search_messages("deploy", limit=5)
        assert store.index_state()[schema.CJK]["exists"] is False  # not created by a search
    assert _file_state(db) == before
    with SessionStore(db) as store:  # an explicit sync may add the CJK index
        store.sync()
        assert store.index_state()[schema.CJK]["exists"]
    assert _file_state(db)[1] != before[1]


# ------------------------------------------------------------- searching never writes


# The test interpreter may live where nobody cannot run it (~root/.pyenv):
# the system's python3 runs this checkout instead.
SYSTEM_PYTHON = shutil.which("python3", path="/usr/bin:/bin")
RUNUSER = shutil.which("runuser")


def _as_nobody(*args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(nobody_package_root()), "HOME": "/tmp"}
    return subprocess.run(
        [str(RUNUSER), "-u", "nobody", "--", str(SYSTEM_PYTHON), "-m", "hermes_fts.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd="/tmp",
        timeout=120,
    )


@pytest.mark.skipif(
    os.geteuid() != 0 or RUNUSER is None or SYSTEM_PYTHON is None,
    reason="needs root, runuser and /usr/bin/python3 to run as nobody",
)
def test_read_only_file_in_a_read_only_folder_is_searched_as_nobody() -> None:
    import sqlite3
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="hermes-fts-ro-"))
    try:
        db = folder / "state.db"
        with SessionStore(db) as store:
            store.add_session("a")
            store.add_message("a", "user", "服务端 deploy")
            assert store.optimize_storage(min_pause=0)["ok"]
        conn = sqlite3.connect(db)  # a write our package has not applied: a pending row
        with conn:
            conn.execute(
                "INSERT INTO messages(session_id, role, content, timestamp) "
                "VALUES ('a', 'user', '后来的 服务端 pendingword', 2)"
            )
        conn.close()
        assert not Path(f"{db}-wal").exists()
        db.chmod(0o444)
        folder.chmod(0o755)  # nobody may read, not write
        for args in (
            ["search", "pendingword", "--json"],
            ["search", "服务端", "--json"],
            ["browse", "--json"],
            ["status", "--json"],
            ["read", "a", "--json"],
        ):
            proc = _as_nobody(*args, "--db", str(db))
            assert proc.returncode == 0, (args, proc.stderr)
            json.loads(proc.stdout)
        found = json.loads(_as_nobody("search", "pendingword", "--json", "--db", str(db)).stdout)
        assert found["results"], found  # the pending row, by the exact fallback
        assert sorted(p.name for p in folder.iterdir()) == ["state.db"]  # nothing written
        # With a -wal that holds something next to it, someone may be writing: a clear
        # error, not a stale read (an empty one, left by a crash, is read as none).
        folder.chmod(0o700)
        Path(f"{db}-wal").write_bytes(b"\0" * 4096)
        folder.chmod(0o755)
        proc = _as_nobody("search", "服务端", "--db", str(db))
        assert proc.returncode != 0 and "folder" in proc.stderr and "read-only" in proc.stderr
    finally:
        folder.chmod(0o700)
        shutil.rmtree(folder, ignore_errors=True)


def test_agent_store_before_optimize_gives_one_answer_without_duplicates(
    pair: tuple[Path, Path],
) -> None:
    """Before optimize-storage our indexes do not exist yet (we never read Hermes'):
    every route answers by the exact fallback, one answer, no row twice."""
    db, _control = pair
    with SessionStore(db) as store:
        assert not store.index_state()[schema.TRIGRAM]["exists"]
        for query in ("服务端", "数据库迁移", "工具标记", "東京タワー"):
            trigram = _route_ids(store, query, "trigram")
            assert trigram and len(trigram) == len(set(trigram)), query
            assert set(trigram) == set(_route_ids(store, query, "like_scan")), query
        for query in ("deploy", "tailmarker", "terminal"):
            words = _route_ids(store, query, "fts5")
            assert words and len(words) == len(set(words)), query
            assert set(words) == set(_route_ids(store, query, "like_scan")), query
