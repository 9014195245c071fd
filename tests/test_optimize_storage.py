"""optimize-storage through the CLI: damaged indexes repaired, no work twice, honest sizes.

The word index is kept here (``HERMES_WORD_FTS=1``): its build under another name is
what a killed run leaves half done (tests/test_word_policy.py has the default).

Every run is the real ``hermes-fts`` command in a subprocess with ``--json``;
what it did is read from its JSON document, what it left from the store.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import hermes_fts
from hermes_fts.index import schema
from hermes_fts.store import SessionStore

pytestmark = pytest.mark.skipif(
    not hermes_fts.extension_path(), reason="needs the built cjk_unicode61 extension"
)

MESSAGES = 1500


@pytest.fixture(scope="module", autouse=True)
def word_index():
    """These runs repair and rebuild the opt-in word index on purpose (its
    swapped-in build), beside the CJK index every store keeps."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HERMES_WORD_FTS", "1")
        yield


WORDS = ["deploy", "staging", "数据库", "東京", "迁移"]


def cli(*args: str, db: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", *args, "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def optimize(db: Path, *extra: str) -> tuple[int, dict[str, Any], str]:
    proc = cli("optimize-storage", "--yes", "--json", *extra, db=db)
    return proc.returncode, json.loads(proc.stdout), proc.stderr


def text_of(i: int) -> str:
    """Message ``i``: every word of WORDS whose bit is set in ``i``, and one of its own."""
    held = [w for k, w in enumerate(WORDS) if i >> k & 1]
    return " ".join(held + [f"alpha note{i}"])


def write_store(path: Path, messages: int = MESSAGES) -> None:
    with SessionStore(path) as store:
        store.add_session("s1", "cli")
        store.add_messages(
            {"session_id": "s1", "role": "user", "content": text_of(i)} for i in range(messages)
        )


@pytest.fixture(scope="module")
def optimized(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("optimized") / "state.db"
    write_store(db)
    code, result, err = optimize(db)
    assert code == 0 and result["ok"], err
    return db


def copy_of(db: Path, folder: Path) -> Path:
    target = folder / "state.db"
    shutil.copy(db, target)
    return target


def assert_every_route_finds_everything(db: Path) -> None:
    """Each index's route finds exactly the messages holding each word; without the
    opt-in trigram index its queries take the LIKE scan, with the same rows."""
    with SessionStore(db) as store:
        assert all(v is None for v in store.integrity_check().values())
        trigram = store.index_state()[schema.TRIGRAM]["exists"]
        # A substring of a word only trigram finds; the LIKE scan matches words whole.
        substrings = ["eploy"] if trigram else []
        routes = {
            "fts5": ["deploy", "staging"],
            "fts_cjk": WORDS,
            "trigram": ["staging", *substrings],
        }
        for route, words in routes.items():
            for word in words:
                truth = {
                    r[0]
                    for r in store._conn.execute(
                        "SELECT id FROM messages WHERE instr(content, ?)", (word,)
                    )
                }
                result = store.search(word, route=route, limit=10 * MESSAGES)
                answers = route if route != "trigram" or trigram else "like_scan"
                assert result.route == answers, (word, result.route)
                assert {r["id"] for r in result.rows} == truth, (route, word)


DAMAGE = {
    # Half the word index's blocks gone: FTS5's integrity-check sees it.
    "word_blocks_lost": (
        schema.BASE,
        "DELETE FROM hermes_fts_word_data WHERE id > 10 AND id % 2 = 0",
    ),
    # The CJK index's term directory emptied: integrity-check passes, every
    # lookup finds nothing; only the probe sees it.
    "cjk_directory_emptied": (schema.CJK, "DELETE FROM hermes_fts_cjk_idx"),
}


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_one_run_repairs_a_damaged_index(case, optimized, tmp_path):
    index, damage = DAMAGE[case]
    db = copy_of(optimized, tmp_path)
    conn = sqlite3.connect(db)
    conn.execute(damage)
    conn.commit()
    conn.close()
    code, result, err = optimize(db)
    assert code == 0 and result["ok"], err
    assert list(result["repaired"]) == [index]
    assert_every_route_finds_everything(db)
    # Repaired for good: the next run finds nothing to repair.
    code, again, err = optimize(db, "--no-vacuum")
    assert code == 0 and again.get("repaired", {}) == {}, err


def test_no_vacuum_fills_what_status_says_it_adds(tmp_path):
    """A store with its indexes built but no time table (never optimized) is not
    "nothing to do" for --no-vacuum: status names the table as optimize-storage's."""
    db = tmp_path / "state.db"
    write_store(db)
    with SessionStore(db, readonly=True) as store:
        assert store.status()["time_table"]["status"] == "absent"
    code, result, err = optimize(db, "--no-vacuum")
    assert code == 0 and result["ok"] and "nothing_to_do" not in result, (result, err)
    with SessionStore(db, readonly=True) as store:
        assert store.status()["time_table"]["status"] == "complete"
    code, again, err = optimize(db, "--no-vacuum")  # now there is nothing left
    assert code == 0 and again == {"success": True, "ok": True, "nothing_to_do": True}, err


def test_the_human_result_names_the_words_it_measured(tmp_path):
    """USAGE: the result lists the words it measured (none on an unchanged store);
    only --json did, the text said nothing of them."""
    db = tmp_path / "state.db"
    write_store(db)
    proc = cli("optimize-storage", "--yes", db=db)
    assert proc.returncode == 0, proc.stderr
    lines = re.findall(r"Rank bounds: measured ([\d,]+) frequent words of (\w+)\.", proc.stdout)
    measured = {index: int(words.replace(",", "")) for words, index in lines}
    assert measured.get(schema.CJK, 0) > 0, proc.stdout
    again = cli("optimize-storage", "--yes", db=db)  # unchanged: nothing measured, no line
    assert again.returncode == 0 and "Rank bounds" not in again.stdout, again.stdout


def test_a_vacuum_a_reader_kept_in_the_wal_is_explained(tmp_path):
    """Another process in a read transaction: the VACUUM's copy stays in the WAL and
    the result said "reclaimed 0 B" and "WAL file: 0 B → 40.4 MB", no more."""
    db = tmp_path / "state.db"
    write_store(db)
    reader = sqlite3.connect(db, isolation_level=None)
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM messages").fetchone()
        proc = cli("optimize-storage", "--yes", db=db)
        assert proc.returncode == 0, proc.stderr
        assert "The compacted store is still in the WAL file: another process" in proc.stdout
        reader.execute("COMMIT")
    finally:
        reader.close()
    again = cli("optimize-storage", "--yes", db=db)  # no reader: nothing to explain
    assert again.returncode == 0 and "still in the WAL" not in again.stdout, again.stdout


def test_an_unchanged_store_is_not_measured_again(optimized, tmp_path):
    db = copy_of(optimized, tmp_path)
    code, first, err = optimize(db)
    assert code == 0 and first["rank_bounds_measured"] == {}, err
    with SessionStore(db) as store:
        assert "rank_bounds" not in store.status()["needs_optimize"]
        store.add_messages(
            {"session_id": "s1", "role": "user", "content": text_of(i)} for i in range(MESSAGES)
        )
    # Twice the rows: the bounds are behind and measured again, once.
    code, second, err = optimize(db)
    assert code == 0 and second["rank_bounds_measured"][schema.BASE] >= 1, err
    code, third, err = optimize(db)
    assert code == 0 and third["rank_bounds_measured"] == {}, err


def test_the_first_run_measures_the_frequent_words(tmp_path):
    db = tmp_path / "state.db"
    write_store(db)
    code, result, err = optimize(db)
    assert code == 0, err
    # "alpha" is in every message: frequent enough for bounds in both indexes.
    assert result["rank_bounds_measured"][schema.BASE] >= 1
    assert result["rank_bounds_measured"][schema.CJK] >= 1


def popen_optimize(db: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "hermes_fts.cli", "optimize-storage", "--yes", "--json"]
        + ["--db", str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )


def fts5_tables(conn: sqlite3.Connection) -> list[str]:
    return [
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%USING fts5%'"
        )
    ]


def test_a_run_killed_mid_build_leaves_every_table_sound(tmp_path):
    db = tmp_path / "state.db"
    write_store(db, messages=20 * MESSAGES)
    with SessionStore(db) as store:
        store._mark_fts_stale("test")  # the word and trigram indexes are built anew
    proc = popen_optimize(db)
    assert proc.stderr is not None
    for line in proc.stderr:
        event = json.loads(line)
        if event.get("phase") == "backfill" and event.get("event") == "progress":
            break
    proc.kill()  # kill -9, mid-build
    proc.wait()
    with SessionStore(db) as store:
        conn = store._conn
        assert schema.building(conn, schema.BASE) or schema.building(conn, schema.TRIGRAM)
        # Every FTS5 table, the half-built ones too, passes FTS5's own checks,
        # as Hermes' doctor may run them on any table.
        tables = fts5_tables(conn)
        assert any(t.endswith(schema.BUILD_SUFFIX) for t in tables), tables
        for table in tables:
            for rank in (0, 1):  # 1 also compares the index with its content view
                conn.execute(
                    f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', ?)", (rank,)
                )
    code, result, err = optimize(db)
    assert code == 0 and result["ok"], err
    with SessionStore(db) as store:
        assert not any(t.endswith(schema.BUILD_SUFFIX) for t in fts5_tables(store._conn))


def test_progress_is_json_lines_with_counts_rates_and_time_left(tmp_path):
    db = tmp_path / "state.db"
    write_store(db)
    with SessionStore(db) as store:
        store._mark_fts_stale("test")
    code, result, err = optimize(db)
    assert code == 0 and result["ok"]
    events = [json.loads(line) for line in err.splitlines()]  # every line is JSON
    progress = [e for e in events if e["event"] == "progress"]
    phases = {e["phase"] for e in progress}
    assert {"backfill", "time", "rank_bounds"} <= phases
    for phase in phases:
        lines = [e for e in progress if e["phase"] == phase]
        units = {e["unit"] for e in lines}
        assert len(units) == 1  # one step, one unit: no step reuses another's count
        last = lines[-1]
        assert last["done"] == last["total"] and last["percent"] == 100
        assert last["seconds_left"] == 0 and last["rate"] > 0
        assert all(e["rate"] is None or e["rate"] > 0 for e in lines)
        assert all(0 <= e["done"] <= e["total"] for e in lines)
    backfill = [e for e in progress if e["phase"] == "backfill"]
    assert backfill[-1]["total"] == MESSAGES and backfill[-1]["unit"] == "messages"


@pytest.mark.parametrize("command", ["sync", "optimize-storage"])
def test_a_held_write_lock_is_said_while_waiting(command, optimized, tmp_path):
    db = copy_of(optimized, tmp_path)
    holder = subprocess.Popen(
        ["sqlite3", str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdin is not None and holder.stdout is not None
    holder.stdin.write("PRAGMA journal_mode=WAL;\nBEGIN IMMEDIATE;\nSELECT 'held';\n")
    holder.stdin.flush()
    assert holder.stdout.readline().strip() in ("wal", "held")
    try:
        extra = ["--yes"] if command == "optimize-storage" else []
        proc = subprocess.Popen(
            [sys.executable, "-m", "hermes_fts.cli", command, "--json", *extra] + ["--db", str(db)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        assert proc.stderr is not None
        waiting = None
        for line in proc.stderr:
            event = json.loads(line)
            if event.get("waiting") == "write_lock":
                waiting = event
                break
        # Said while it waits, before the command gives up.
        assert waiting is not None and proc.poll() is None
        assert "waiting up to" in waiting["message"]
    finally:
        holder.stdin.write("ROLLBACK;\n.quit\n")
        holder.stdin.flush()
        holder.wait(timeout=30)
    out, _err = proc.communicate(timeout=60)
    assert proc.returncode == 0, out  # the lock went: the command went on


def test_sizes_leave_a_concurrent_writers_wal_apart(optimized, tmp_path):
    db = copy_of(optimized, tmp_path)
    writer = sqlite3.connect(db)
    writer.execute("PRAGMA wal_autocheckpoint = 0")  # its WAL grows, as a busy writer's may
    with writer:
        writer.executemany(
            "INSERT INTO messages(session_id, role, content, timestamp) VALUES ('s1', 'user', ?, 0)",
            [("padding " * 200,)] * 2000,
        )
    wal = Path(f"{db}-wal").stat().st_size
    main = db.stat().st_size
    assert wal > main / 2
    code, result, err = optimize(db, "--no-vacuum")
    assert code == 0, err
    # The writer's WAL is checkpointed first, so it is counted once, in the main
    # file, not as the store's size on top of it; the WAL is reported apart.
    assert result["wal_before"] == 0 and main < result["size_before"] <= main + wal
    assert result["size_after"] == db.stat().st_size
    wal_now = Path(f"{db}-wal")
    assert result["wal_after"] == (wal_now.stat().st_size if wal_now.exists() else 0)
    writer.close()


AWKWARD = [
    "line one\nline\ttwo  with   spaces\r\nand more",  # a trigram sees the whitespace
    '{"query": "\\u6842\\u6797", "n": 3}',  # JSON escapes: indexed decoded too
    "修改youer服务端 glued\u3000全角ｗｉｄｔｈ",
    "ok",
    "?!… —",
    "😀 emoji 🎉 then 東京",
    "",
    "  leading\n\n\nblank lines 数据库",
]


def test_a_sound_store_is_never_taken_for_damaged(tmp_path):
    """Regression: the probe re-joined words with spaces, so a trigram index never
    found a message holding a newline, and a sound index was rebuilt on every run."""
    db = tmp_path / "state.db"
    with SessionStore(db) as store:
        store.add_session("s1", "cli")
        store.add_messages(
            {
                "session_id": "s1",
                "role": "tool" if i % 3 == 0 else "user",
                "content": AWKWARD[i % len(AWKWARD)] + ("" if i % 2 else f" n{i}"),
                "tool_name": "web_search" if i % 3 == 0 else None,
                "tool_calls": '[{"function": {"arguments": "{\\"q\\": \\"\\u6842\\"}"}}]'
                if i % 5 == 0
                else None,
            }
            for i in range(400)
        )
    for _ in range(2):
        code, result, err = optimize(db)  # the full check: integrity-check and probe
        assert code == 0 and result["repaired"] == {}, (err, result)


@pytest.mark.parametrize("command", ["sync", "optimize-storage"])
def test_without_the_extension_the_cjk_work_left_undone_is_a_failure_with_its_cause(
    command, optimized, tmp_path
):
    # It said "Applied 0 pending change(s); 1 left." (sync) or "✓ Search indexes
    # optimized" (optimize-storage) and exited 0 while the CJK index stayed behind.
    db = copy_of(optimized, tmp_path)
    conn = sqlite3.connect(db)
    with conn:  # as Hermes writes it, with no extension: the row waits in the pending table
        conn.execute(
            "INSERT INTO messages(session_id, role, content, timestamp) "
            "VALUES ('s1', 'user', '离线写入的消息', 99.0)"
        )
    conn.close()
    off = {**os.environ, "HERMES_CJK_FTS": "0"}
    args = [sys.executable, "-m", "hermes_fts.cli", command, "--db", str(db)]
    args += ["--yes"] if command == "optimize-storage" else []
    run = functools.partial(
        subprocess.run, capture_output=True, text=True, env=off, stdin=subprocess.DEVNULL
    )
    text = run(args)
    assert text.returncode == 1, text
    assert "HERMES_CJK_FTS=0" in text.stderr and "1 change(s) wait" in text.stderr
    doc = run([*args, "--json"])
    assert doc.returncode == 1, doc
    data = json.loads(doc.stdout)
    assert data["success"] is False and data["reason"] == "no_extension"
    assert "HERMES_CJK_FTS=0" in data["error"]
    # With the extension, the same command applies the change and succeeds.
    done = cli(command, "--json", *(["--yes"] if command == "optimize-storage" else []), db=db)
    assert done.returncode == 0, done
    with SessionStore(db, readonly=True) as store:
        assert store.index_state()["cjk_pending"] == 0
        assert store.search("离线写入").route == "fts_cjk"


FAR_ID = 1_700_000_000_000  # an id an import may keep: milliseconds since 1970

# A search and a run in a process with 2 GB of address space: an entry per id up
# to FAR_ID is terabytes, and without a cap the OOM killer ends it (or another).
CAPPED = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
from hermes_fts.store import SessionStore
with SessionStore(sys.argv[1]) as store:
    ids = [r["id"] for r in store.search("common", limit=5000).rows]
    route = store.search("common").route
    result = store.optimize_storage(min_pause=0) if sys.argv[2] == "optimize" else {}
print(json.dumps({"ids": ids, "route": route, "ok": result.get("ok")}))
"""


def capped(db: Path, *args: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", CAPPED, str(db), *args],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return dict(json.loads(proc.stdout))


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS caps the address space on Linux")
def test_a_message_with_a_far_id_costs_neither_time_nor_memory(tmp_path):
    """One message at a far id: status summed the text 50,000 ids at a time (34 million
    statements), the backfills and the time table paced their chunks by ids (days of
    empty chunks), and the rank bounds, and a search over bounds built before the row
    came, held an entry per id or block up to it (MemoryError, or the OOM killer)."""
    db = tmp_path / "state.db"
    with SessionStore(db) as store:
        store.add_session("a", "cli")
        store.add_messages(
            {"session_id": "a", "role": "user", "content": f"common word{i} 部署"}
            for i in range(1200)  # "common" is frequent: it gets rank bounds
        )
    code, result, err = optimize(db)
    assert code == 0 and result["rank_bounds_measured"], (result, err)
    conn = sqlite3.connect(db)
    with conn:  # an import, without the extension: the row waits in the change log
        conn.execute(
            "INSERT INTO messages(id, session_id, role, content, timestamp) "
            "VALUES (?, 'a', 'user', 'common faraway 迁移', 1800000000)",
            (FAR_ID,),
        )
    conn.close()
    found = capped(db, "search")
    assert len(found["ids"]) == 1201 and FAR_ID in found["ids"], found["route"]
    # Every index rebuilt over the gap: backfills, time table and rank bounds.
    with SessionStore(db) as store:
        store._mark_fts_stale("test: rebuild every index over a gap of ids")
    found = capped(db, "optimize")
    assert found["ok"] and FAR_ID in found["ids"]
    code, result, err = optimize(db)  # nothing left to do
    assert code == 0 and result["ok"] and not result["rank_bounds_measured"], (result, err)
    status = cli("--json", "status", db=db, timeout=30)
    assert status.returncode == 0, status.stderr
    with SessionStore(db, readonly=True) as store:
        assert store.index_state()["needs_optimize"] == []
        for word, route in (("faraway", "fts5"), ("迁移", "fts_cjk")):  # both indexes
            found = store.search(word)
            assert ([r["id"] for r in found.rows], found.route) == ([FAR_ID], route)
