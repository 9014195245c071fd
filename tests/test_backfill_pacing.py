"""Adaptive backfill pacing: chunks sized to a transaction length, and a writer
waiting for the lock still gets in between chunks.

Speed is measured in benchmarks/test_bench_backfill.py; these tests assert on
behaviour only (chunk sizing, who got the lock when), never on durations.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from _support import needs_extension, shell_backlog

from hermes_fts import _sharing, cli
from hermes_fts.index import maintain as indexing
from hermes_fts.index import schema
from hermes_fts.index.schema import CJK
from hermes_fts.store import SessionStore

ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def _to_backfill(tmp_path: Path, rows: int) -> Iterator[SessionStore]:
    """A store of ``rows`` messages in s1 whose CJK index is reset, for a backfill to fill."""
    with SessionStore(tmp_path / "state.db") as store:
        store.add_session("s1", "cli")
        store.add_messages(
            {"session_id": "s1", "role": "user", "content": f"消息 {i}"} for i in range(rows)
        )
        indexing.reset_index(store._conn, CJK)
        yield store


def test_chunk_grows_at_most_twofold_and_shrinks_after_a_slow_one() -> None:
    assert indexing.next_chunk_rows(500, 0.01, 0.35) == 1000  # fast: capped at 2x
    assert indexing.next_chunk_rows(1000, 0.35, 0.35) == 1000  # on target: unchanged
    assert indexing.next_chunk_rows(1000, 0.7, 0.35) == 500  # twice too slow: halved
    assert indexing.next_chunk_rows(1000, 35.0, 0.35) == 10  # a stall: cut hard
    assert indexing.next_chunk_rows(1, 100.0, 0.35) == 1  # never zero
    assert indexing.next_chunk_rows(40_000, 0.0, 0.35) == indexing.MAX_CHUNK_ROWS


def test_pause_is_longer_than_hermes_retry_interval() -> None:
    # Hermes Agent 0.19.0 retries a locked write after 20-150 ms; SQLite's busy
    # handler polls at most every 100 ms.  The yield must outlast both.
    assert indexing.MIN_PAUSE > 0.150
    # A backfill chunk ends by TXN_LIMIT_S; one chunk and one pause stay inside
    # Hermes' 1 s busy timeout.
    assert indexing.TXN_TARGET_S <= indexing.TXN_LIMIT_S
    assert indexing.TXN_LIMIT_S + indexing.MIN_PAUSE < 1.0


@needs_extension
def test_chunks_follow_the_measured_speed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with _to_backfill(tmp_path, 5000) as store:
        sizes: list[int] = []
        real_step = indexing.backfill_step

        def step(conn, index, chunk_rows=indexing.CHUNK_ROWS, deadline=None):  # type: ignore[no-untyped-def]
            sizes.append(chunk_rows)
            return real_step(conn, index, chunk_rows)  # the fake clock sizes them, whole

        monkeypatch.setattr(indexing, "backfill_step", step)
        # A fake clock: every chunk "takes" 0.1 s, so with a 0.4 s target the
        # chunks double until they reach four times 100 rows.
        clock = iter(x * 0.05 for x in range(10_000))
        monkeypatch.setattr(indexing.time, "monotonic", lambda: next(clock))
        store.backfill(CJK, sleep=lambda s: None, chunk_rows=100, txn_target=0.4)
        assert sizes[:4] == [100, 200, 400, 800]
        assert store.rebuild_status() is None
        expected = {r[0] for r in store._conn.execute(f"SELECT id FROM {schema.DDL[CJK].view}")}
        indexed = {r[0] for r in store._conn.execute(f"SELECT id FROM {CJK}_docsize")}
        assert indexed == expected


@needs_extension
def test_a_chunk_past_its_deadline_ends_after_its_first_slice(tmp_path: Path) -> None:
    """A chunk reads its rows in slices and stops after the one that reaches its
    deadline; the progress marker says how far it got and the next chunk goes on
    from there, so the index ends complete and consistent."""
    with _to_backfill(tmp_path, 2000) as store:
        high = indexing.backfill_window(store._conn, CJK)[0]  # type: ignore[index]
        assert indexing.backfill_step(store._conn, CJK, 800, deadline=0.0)
        assert indexing.backfill_window(store._conn, CJK) == (high, 800 // indexing.SLICES)
        indexed = store._conn.execute(f"SELECT count(*) FROM {CJK}_docsize").fetchone()[0]
        assert indexed == 800 // indexing.SLICES
        assert indexing.backfill_step(store._conn, CJK, 800)  # no deadline: all 800
        assert indexing.backfill_window(store._conn, CJK) == (high, 800 // indexing.SLICES + 800)
        while indexing.backfill_step(store._conn, CJK, 800, deadline=0.0):
            pass
        assert store.rebuild_status() is None
        assert store.integrity_check()[CJK] is None
        assert len(store.search_messages("消息", limit=5000)) == 2000


def _merge_config(conn, table: str) -> tuple[int | None, int | None]:  # type: ignore[no-untyped-def]
    found = dict(
        conn.execute(
            f"SELECT k, v FROM {table}_config WHERE k IN ('automerge', 'crisismerge')"
        ).fetchall()
    )
    return tuple(
        None if found.get(k) is None else int(found[k]) for k in ("automerge", "crisismerge")
    )  # type: ignore[return-value]


@needs_extension
def test_a_build_merges_in_small_steps_and_never_in_a_crisis(tmp_path: Path) -> None:
    """While a backfill fills the index FTS5 merges 16 segments at a time after each
    write, with its crisis merge (a whole level in one transaction) out of reach;
    the last chunk sets FTS5's defaults again.  Regression: with merging off, the
    crisis merge held one chunk's write lock for over a second."""
    with _to_backfill(tmp_path, 3000) as store:
        building = (indexing.BUILD_AUTOMERGE, indexing.BUILD_CRISISMERGE)
        assert building[1] > building[0]  # the small steps run before any crisis
        assert indexing.backfill_step(store._conn, CJK, 100)
        assert _merge_config(store._conn, CJK) == building
        while indexing.backfill_step(store._conn, CJK, 100):
            assert _merge_config(store._conn, CJK) == building
        assert _merge_config(store._conn, CJK) == (indexing.AUTOMERGE, indexing.CRISISMERGE)
        assert (indexing.AUTOMERGE, indexing.CRISISMERGE) == (4, 16)  # FTS5's defaults
        assert store.rebuild_status() is None
        assert store.integrity_check()[CJK] is None
        assert [r["id"] for r in store.search_messages("消息", limit=3)]


# A writer shaped like Hermes Agent 0.19.0's: plain sqlite3 (no extension),
# a 1 s busy timeout, BEGIN IMMEDIATE, and a 20-150 ms jittered retry when the
# lock stays taken.  Inside each transaction it notes how far the fill had got
# (``probe``), so the test can see between which chunks it got the lock.
_HERMES_LIKE_WRITER = """
    import json, os, random, sqlite3, time
    conn = sqlite3.connect({db!r}, timeout=1.0, isolation_level=None)
    conn.execute("PRAGMA schema_version").fetchone()  # opens the -shm: "ready" means connected
    print("ready", flush=True)
    seen, ids, retries = [], [], 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not os.path.exists({stop!r}):
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            retries += 1
            time.sleep(random.uniform(0.020, 0.150))
            continue
        row = conn.execute({probe!r}).fetchone()
        cur = conn.execute("INSERT INTO messages(session_id, role, content, timestamp) "
                           "VALUES ('w1', 'user', ?, ?)", (f"写入者 {{len(ids)}}", time.time()))
        conn.execute("COMMIT")
        ids.append(cur.lastrowid)
        if row[0]:
            seen.append(row[0])
        time.sleep(0.005)
    print(json.dumps({{"seen": seen, "ids": ids, "retries": retries}}), flush=True)
"""


_BACKFILL_PROBE = (
    "SELECT group_concat(key || '=' || value) FROM state_meta WHERE key LIKE '%progress'"
)


def start_hermes_like_writer(
    db: Path, stop: Path, probe: str = _BACKFILL_PROBE
) -> subprocess.Popen[str]:
    """The writer above in its own process, once it has connected; ``probe`` is the
    query whose answer it notes in each of its transactions."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(_HERMES_LIKE_WRITER.format(db=str(db), stop=str(stop), probe=probe)),
        ],
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    return proc


@needs_extension
def test_adaptive_pacing_lets_a_hermes_like_writer_in(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    stop = tmp_path / "stop"
    with SessionStore(db) as store:
        store.add_session("s1", "cli")
        store.add_session("w1", "cli")
        store.add_messages(
            {"session_id": "s1", "role": "user", "content": f"历史消息 {i} history " + "词语" * 30}
            for i in range(6000)
        )
        indexing.reset_index(store._conn, CJK)
    proc = start_hermes_like_writer(db, stop)
    try:
        with SessionStore(db) as store:
            chunks = []
            # Production pacing (adaptive chunks, MIN_PAUSE yields), with a
            # shorter transaction target so that this small store takes many chunks.
            store.backfill(
                CJK, txn_target=0.03, on_chunk=lambda: chunks.append(store.rebuild_status())
            )
            assert store.rebuild_status() is None
    finally:
        stop.touch()
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    report = json.loads(out.strip().splitlines()[-1])
    mid_backfill = set(report["seen"])
    # The writer committed while the backfill was under way, at several
    # different points of it: it got the lock between chunks, not only after.
    assert len(chunks) >= 4
    assert len(mid_backfill) >= 3, (len(chunks), report)
    with SessionStore(db) as store:
        # Every row it wrote through the pending log reached the CJK index.
        found = {r["id"] for r in store.search_messages("写入者", limit=10**6, fields=["id"])}
        assert found == set(report["ids"])
        assert store.integrity_check()[CJK] is None


linux_locks = pytest.mark.skipif(
    not Path("/proc/locks").exists(), reason="reads the lock table Linux keeps in /proc/locks"
)


@linux_locks
def test_another_process_with_the_store_open_is_seen(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    stop = tmp_path / "stop"
    with SessionStore(db) as store:
        store.add_session("w1", "cli")
        assert not _sharing.opened_elsewhere(db)  # this process alone
        proc = start_hermes_like_writer(db, stop)  # connected, then writing now and then
        try:
            assert _sharing.opened_elsewhere(db)
        finally:
            stop.touch()
            proc.communicate(timeout=120)
        assert proc.returncode == 0
        assert not _sharing.opened_elsewhere(db)  # its connection closed with it
    # Without a -shm file (no WAL open) nothing can be told: assume others.
    assert _sharing.opened_elsewhere(tmp_path / "none.db")


@needs_extension
@linux_locks
def test_a_fill_alone_on_the_store_does_not_pause(tmp_path: Path) -> None:
    """The pauses let other processes' writers in; with none there, a fill goes on."""
    with _to_backfill(tmp_path, 3000) as store:
        chunks, pauses = _fill_asking(store)
        assert store.rebuild_status() is None
    assert len(chunks) >= 10 and pauses == []


def _fill_asking(store: SessionStore) -> tuple[list[int], list[float]]:
    """Backfill the CJK index in chunks of 200 rows, pausing as the command does:
    each chunk, and each pause taken."""
    chunks: list[int] = []
    pauses: list[float] = []
    store.backfill(
        CJK,
        sleep=_sharing.pause_when_shared(store.path, pauses.append),
        chunk_rows=200,
        txn_target=None,
        on_chunk=lambda: chunks.append(1),
    )
    return chunks, pauses


@needs_extension
@linux_locks
def test_a_fill_pauses_while_another_process_has_the_store_open(tmp_path: Path) -> None:
    stop = tmp_path / "stop"
    with _to_backfill(tmp_path, 3000) as store:
        store.add_session("w1", "cli")
        proc = start_hermes_like_writer(tmp_path / "state.db", stop)
        try:
            chunks, pauses = _fill_asking(store)
        finally:
            stop.touch()
            out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    assert len(chunks) >= 10 and pauses == [indexing.MIN_PAUSE] * (len(chunks) - 1)


@needs_extension
@pytest.mark.parametrize("own_process", [True, False])
def test_only_the_command_alone_in_its_process_asks_who_has_the_store_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, own_process: bool
) -> None:
    """``hermes-fts`` (the console script) asks before each pause; called in-process,
    as the Hermes plugin calls it beside Hermes' own connection, it always pauses."""
    with _to_backfill(tmp_path, 3000):
        pass
    asked: list[str] = []
    monkeypatch.setattr(_sharing, "opened_elsewhere", lambda path: asked.append(path) or True)
    monkeypatch.setattr(indexing.time, "sleep", lambda s: None)
    argv = ["optimize-storage", "--yes", "--db", str(tmp_path / "state.db")]
    assert cli.main(argv, own_process=own_process) == 0
    assert bool(asked) == own_process


@needs_extension
def test_applying_a_backlog_lets_a_hermes_like_writer_in_between_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: the pending table was applied in batches of 2,000 ids back to back,
    so a backlog of long tool outputs held the lock for longer than Hermes retries
    a write.  Batches are now sized to a transaction length, with a pause between."""
    db = tmp_path / "state.db"
    stop = tmp_path / "stop"
    backlog = 3000
    shell_backlog(db, backlog)
    with sqlite3.connect(db) as conn:  # the writer's session; an open would apply the backlog
        conn.execute("INSERT INTO sessions(id, source, started_at) VALUES ('w1', 'cli', 0)")
    last = backlog + 1  # the store's first message, then the shell's rows
    # Batches of 200 ids, so that this small backlog takes many of them (their
    # sizing is the backfill's, tested above).
    monkeypatch.setattr(indexing, "PENDING_BATCH_IDS", 200)
    monkeypatch.setattr(indexing, "next_chunk_rows", lambda rows, elapsed, target: rows)
    probe = f"SELECT COUNT(*) FROM {schema.CJK_PENDING} WHERE msg_id <= {last}"
    proc = start_hermes_like_writer(db, stop, probe)
    applied: list[int] = []

    def note(event: dict[str, object]) -> None:
        if event.get("phase") == "pending":
            applied.append(int(event["indexed"]))  # type: ignore[call-overload]

    try:
        with SessionStore(db, progress=note):  # the open applies the backlog
            pass
    finally:
        stop.touch()
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    report = json.loads(out.strip().splitlines()[-1])
    # What was left of the backlog each time the writer got the lock.
    left = {int(n) for n in report["seen"]}
    batches = len(applied) - 1  # the first event comes before any batch
    assert batches >= 10, applied
    # A waiting writer gets in at each pause between batches: each count left
    # between two batches is one the writer saw (a few may be missed on a busy machine).
    between = set(range(backlog - 200, 0, -200))
    assert len(left & between) >= len(between) // 2, (sorted(left), sorted(between))
    with SessionStore(db) as store:
        assert store.index_state()["cjk_pending"] == 0
        assert len(store.search_messages("部署到东京", limit=10**6, fields=["id"])) == backlog
        found = {r["id"] for r in store.search_messages("写入者", limit=10**6, fields=["id"])}
        assert found == set(report["ids"])
        assert store.integrity_check()[CJK] is None


@needs_extension
@pytest.mark.parametrize("own_process", [True, False])
def test_sync_alone_in_its_process_asks_who_has_the_store_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, own_process: bool
) -> None:
    """``hermes-fts sync`` pauses between the pending table's batches as optimize-storage
    pauses between chunks: the console script only while another process has the
    store open."""
    db = tmp_path / "state.db"
    shell_backlog(db, 3 * indexing.PENDING_BATCH_IDS)
    asked: list[str] = []
    slept: list[float] = []
    monkeypatch.setattr(_sharing, "opened_elsewhere", lambda path: asked.append(path) or False)
    monkeypatch.setattr(indexing.time, "sleep", slept.append)
    assert cli.main(["sync", "--db", str(db)], own_process=own_process) == 0
    assert bool(asked) == own_process
    # Asked and told nobody else is there, the command does not wait; in-process it does.
    assert slept == ([] if own_process else [indexing.MIN_PAUSE] * len(slept)) and (
        own_process or slept
    )
    with SessionStore(db) as store:
        assert store.index_state()["cjk_pending"] == 0


def test_deleted_text_is_merged_out_of_the_word_index_in_paced_steps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After Hermes deletes messages, the next open for writing merges the opt-in
    word index so that no older segment keeps the deleted words; the merge runs in
    steps, each its own transaction with a pause between.  Regression: one FTS5
    ``'optimize'`` held the write lock for the whole index (6.7 s on a 200k
    store), longer than a waiting Hermes write may retry."""
    db = tmp_path / "state.db"
    monkeypatch.setenv("HERMES_WORD_FTS", "1")
    with SessionStore(db) as store:
        store.add_session("s1", "cli")
        for batch in range(8):  # a segment per transaction
            store.add_messages(
                {"session_id": "s1", "role": "user", "content": f"note {batch} {i} filler text"}
                for i in range(200)
            )
        store.add_messages([{"session_id": "s1", "role": "user", "content": "veritaslantern"}])
    with sqlite3.connect(db) as hermes:  # Hermes deletes without our extension
        hermes.execute("DELETE FROM messages WHERE content = 'veritaslantern'")
    monkeypatch.setattr(indexing, "MERGE_FIRST_PAGES", 1)
    steps: list[int] = []
    merge = indexing.merge_paced
    monkeypatch.setattr(indexing, "merge_paced", lambda *a, **k: steps.append(merge(*a, **k)))
    pauses: list[float] = []
    with SessionStore(db, pause=pauses.append) as store:
        assert store.integrity_check()[schema.BASE] is None
        (held,) = store._conn.execute(
            f"SELECT count(*) FROM {schema.BASE}_data WHERE instr(block, ?) > 0",
            (b"veritaslantern",),
        ).fetchone()
    assert held == 0  # no segment of the word index keeps the deleted word
    assert len(steps) == 1 and steps[0] > 1, steps  # the word index, in several steps
    assert pauses.count(indexing.MIN_PAUSE) >= steps[0] - 1


def test_a_paced_merge_ends_while_writers_keep_adding_segments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer that adds a segment in every pause would keep the merge finding
    work for ever; it stops after writing twice the index's pages."""
    monkeypatch.setenv("HERMES_WORD_FTS", "1")
    with SessionStore(tmp_path / "state.db") as store:
        store.add_session("s1", "cli")
        for batch in range(4):
            store.add_messages(
                {"session_id": "s1", "role": "user", "content": f"note {batch} {i}"}
                for i in range(50)
            )
        monkeypatch.setattr(indexing, "MERGE_FIRST_PAGES", 1)
        monkeypatch.setattr(indexing, "next_chunk_rows", lambda rows, elapsed, target: 1)
        added = [0]

        def writer(_: float) -> None:  # a new segment in each pause
            added[0] += 1
            assert added[0] < 1000, "the merge never ends"
            store.add_messages([{"session_id": "s1", "role": "user", "content": f"w {added[0]}"}])

        (pages,) = store._conn.execute(f"SELECT count(*) FROM {schema.BASE}_data").fetchone()
        steps = indexing.merge_paced(store._conn, schema.BASE, sleep=writer)
        assert 0 < steps <= 2 * pages + 1, (steps, pages)
        assert store.integrity_check()[schema.BASE] is None
