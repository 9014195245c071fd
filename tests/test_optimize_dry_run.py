"""``optimize-storage --dry-run``: what a run would add, build and drop, how long it
would take and the free space it needs at its peak, before anything starts;
the file is left byte for byte as it was.  How close the estimate comes to a
real run is measured in benchmarks/test_bench_storage.py.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest
from _support import cut_short_after
from _tool_fixtures import needs_nobody, nobody_dir, nobody_package_root, nobody_python
from test_optimize_storage import cli, optimize, text_of, write_store

import hermes_fts
from hermes_fts.cli import main
from hermes_fts.index import health, maintain, schema, space
from hermes_fts.store import SessionStore


def _files(db: Path) -> dict[str, bytes]:
    """The store's main file and what its WAL holds, as bytes.  (``-shm`` is shared
    memory, not data; SQLite may leave an empty WAL file after any open.)"""
    wal = Path(f"{db}-wal")
    return {"main": db.read_bytes(), "wal": wal.read_bytes() if wal.exists() else b""}


@pytest.fixture()
def stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A store whose indexes optimize-storage must all build anew."""
    monkeypatch.delenv("HERMES_TRIGRAM_FTS", raising=False)
    monkeypatch.delenv("HERMES_WORD_FTS", raising=False)
    db = tmp_path / "state.db"
    write_store(db)
    with SessionStore(db) as store:
        store._mark_fts_stale("test")
    return db


def test_dry_run_reports_before_it_starts_and_changes_nothing(stale: Path) -> None:
    before = _files(stale)
    proc = cli("optimize-storage", "--dry-run", "--json", db=stale)
    assert proc.returncode == 0, proc.stderr
    plan = json.loads(proc.stdout)
    assert plan["dry_run"] and plan["success"]
    assert plan["builds"] == [schema.CJK] and plan["drops"] == []  # word and trigram: opt-in
    assert plan["adds_bytes"] > 0 and plan["seconds"] > 0
    assert plan["peak_free_bytes"] > plan["adds_bytes"] and plan["free_bytes"] > 0
    assert plan["fits"] is True and plan["vacuum"] is True and plan["refused"] is None
    assert _files(stale) == before
    with SessionStore(stale, readonly=True) as store:
        assert store.optimize_needed()
    human = cli("optimize-storage", "--dry-run", db=stale)
    assert human.returncode == 0 and "nothing was changed" in human.stdout
    assert "free at its peak" in human.stdout and "take about" in human.stdout
    assert _files(stale) == before


def test_no_vacuum_dry_run_counts_the_chunks_a_build_leaves(stale: Path) -> None:
    plans = [
        json.loads(cli("optimize-storage", "--dry-run", "--json", *extra, db=stale).stdout)
        for extra in ((), ("--no-vacuum",))
    ]
    assert plans[1]["vacuum"] is False
    assert plans[1]["adds_bytes"] > plans[0]["adds_bytes"]  # no merge, no VACUUM
    assert plans[1]["peak_free_bytes"] < plans[0]["peak_free_bytes"]


@pytest.mark.parametrize(
    ("switch", "index"),
    [("HERMES_TRIGRAM_FTS", schema.TRIGRAM), ("HERMES_WORD_FTS", schema.BASE)],
    ids=["trigram", "word"],
)
def test_dry_run_names_the_opt_in_index_it_would_drop(
    stale: Path, monkeypatch: pytest.MonkeyPatch, switch: str, index: str
) -> None:
    monkeypatch.setenv(switch, "1")  # the opt-in builds it
    assert optimize(stale)[1]["ok"]
    monkeypatch.delenv(switch)
    before = _files(stale)
    plan = json.loads(cli("optimize-storage", "--dry-run", "--json", db=stale).stdout)
    assert plan["drops"] == [index] and plan["builds"] == []
    assert plan["adds_bytes"] < 0  # the VACUUM gives its pages back
    assert _files(stale) == before
    code, result, _ = optimize(stale)
    assert code == 0 and result["size_after"] < result["size_before"]


def test_dry_run_names_a_half_built_index_no_longer_kept_and_the_room_it_frees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A word index build cut short, then the opt-in taken back: status said the run
    drops it, and the run gave its pages back, but the dry run said "drop: nothing"
    and counted none of them (it looked at the live tables alone)."""
    monkeypatch.delenv("HERMES_TRIGRAM_FTS", raising=False)
    db = tmp_path / "state.db"
    write_store(db)
    monkeypatch.delenv("HERMES_WORD_FTS", raising=False)
    assert optimize(db)[1]["ok"]
    monkeypatch.setenv("HERMES_WORD_FTS", "1")
    chunks = 0

    def interrupt(_seconds: float) -> None:  # Ctrl-C between two chunks of the backfill
        nonlocal chunks
        chunks += 1
        if chunks == 11:
            raise KeyboardInterrupt

    with SessionStore(db) as store, pytest.raises(KeyboardInterrupt):
        store.optimize_storage(
            vacuum=False, sleep=interrupt, chunk_rows=100, min_pause=0, txn_target=None
        )
    monkeypatch.delenv("HERMES_WORD_FTS")
    conn = sqlite3.connect(db)
    half = conn.execute(f"SELECT sum(length(block)) FROM {schema.BASE}_next_data").fetchone()[0]
    conn.close()
    assert half > 10_000
    with SessionStore(db, readonly=True) as store:
        assert "word_to_drop" in store.status()["needs_optimize"]
    plan = json.loads(cli("optimize-storage", "--dry-run", "--json", db=db).stdout)
    assert plan["drops"] == [schema.BASE], plan
    assert plan["adds_bytes"] <= -half, plan
    code, result, err = optimize(db)
    assert code == 0 and result["ok"], err
    assert result["size_before"] - result["size_after"] >= half


def test_dry_run_counts_the_old_layout_index_a_run_gives_back(tmp_path: Path) -> None:
    """A store an older hermes-fts indexed as ``messages_fts_cjk``: the run drops that
    index (``old_layout.give_back``) and its pages go with the VACUUM, but the dry
    run said "drop: nothing" and counted none of them."""
    db = tmp_path / "state.db"
    write_store(db)
    assert optimize(db)[1]["ok"]
    plain = json.loads(cli("optimize-storage", "--dry-run", "--json", db=db).stdout)
    conn = hermes_fts.connect(str(db))
    assert conn.execute("SELECT cjk_unicode61_claim()").fetchone()[0] == 1
    cols = "content, tool_name, tool_calls"
    conn.execute(f"CREATE VIEW messages_fts_cjk_text AS SELECT id, {cols} FROM messages")
    conn.execute(
        f"CREATE VIRTUAL TABLE messages_fts_cjk USING fts5({cols}, "
        "content='messages_fts_cjk_text', content_rowid='id', tokenize='cjk_unicode61')"
    )
    conn.execute("INSERT INTO messages_fts_cjk(messages_fts_cjk) VALUES ('rebuild')")
    conn.commit()
    held = conn.execute("SELECT sum(length(block)) FROM messages_fts_cjk_data").fetchone()[0]
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    before = _files(db)
    plan = json.loads(cli("optimize-storage", "--dry-run", "--json", db=db).stdout)
    assert _files(db) == before
    assert plan["drops"] == ["messages_fts_cjk"], plan
    assert plan["adds_bytes"] <= plain["adds_bytes"] - held, (plan, plain, held)
    code, result, err = optimize(db)
    assert code == 0 and result["ok"], err
    assert result["size_before"] - result["size_after"] >= held


def test_dry_run_takes_each_full_scan_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The damage probe, the text and the index sizes read the whole store (seconds
    each on 1M messages): the dry run took each twice, once for its estimate and
    again for the room, 5.5 s on the 1M-message store where 3.5 s do."""
    db = tmp_path / "state.db"
    write_store(db)  # a served, complete CJK index: the probe asks it
    calls: dict[str, int] = {"probe": 0, "text_bytes": 0, "index_sizes": 0}
    for module, name in ((health, "probe"), (maintain, "text_bytes"), (maintain, "index_sizes")):
        real = getattr(module, name)

        def counted(*args: Any, _real: Any = real, _name: str = name, **kwargs: Any) -> Any:
            calls[_name] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)
    assert main(["optimize-storage", "--dry-run", "--json", "--db", str(db)]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["dry_run"] and plan["peak_free_bytes"] > 0 and plan["fits"] is True
    assert calls == {"probe": 1, "text_bytes": 1, "index_sizes": 1}


def test_dry_run_counts_the_free_pages_the_vacuum_gives_back(tmp_path: Path) -> None:
    """Pages a deletion left free go with the VACUUM: a store holding more of them
    than the run adds was said to grow ("add about 1.2 MB") when it shrank."""
    db = tmp_path / "state.db"
    write_store(db)
    code, result, err = optimize(db)
    assert code == 0 and result["ok"], err
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE scratch(b BLOB)")
    conn.execute("INSERT INTO scratch SELECT zeroblob(4096) FROM messages LIMIT 1000")
    conn.commit()
    conn.execute("DROP TABLE scratch")
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    plan = json.loads(cli("optimize-storage", "--dry-run", "--json", db=db).stdout)
    code, result, err = optimize(db)
    assert code == 0 and result["ok"], err
    shrank = result["size_before"] - result["size_after"]
    assert shrank >= 4_000_000  # the dropped table's pages
    assert -plan["adds_bytes"] >= 0.9 * shrank, (plan, result)
    human = cli("optimize-storage", "--dry-run", db=db).stdout
    assert "add about 0 B" in human  # an optimized store without free pages: none


def test_a_resumed_backfill_needs_the_room_and_time_of_what_is_left(stale: Path) -> None:
    """After Ctrl-C three quarters into a build, the next run resumes it; the dry run
    and the free-space check counted a whole build again, so a resume that fits
    on a tight disk was refused for room it does not need."""
    whole = json.loads(
        cli("optimize-storage", "--dry-run", "--json", "--no-vacuum", db=stale).stdout
    )
    with SessionStore(stale, readonly=True) as store:
        whole_build = store.optimize_room(False)["build"]
    with SessionStore(stale) as store:  # Ctrl-C between two chunks of the backfill
        cut_short_after(store, 11)
    with SessionStore(stale, readonly=True) as store:
        left = store.status()["backfill"]
        assert left["indexed"] == 1100 and left["total"] == 1500, left
        build = store.optimize_room(False)["build"]
    share = 400 / 1500
    resumed = json.loads(
        cli("optimize-storage", "--dry-run", "--json", "--no-vacuum", db=stale).stdout
    )
    assert resumed["builds"] == [schema.CJK]
    time_rows = space.TIME_ROW_BYTES * 1500  # the time table, not begun, is whole in both
    index, index_left = whole["adds_bytes"] - time_rows, resumed["adds_bytes"] - time_rows
    assert abs(index_left - share * index) < 0.05 * index, (resumed, whole)
    assert resumed["peak_free_bytes"] < whole["peak_free_bytes"], (resumed, whole)
    assert abs(build - time_rows - share * index) < 0.05 * index, (build, whole_build)
    code, result, err = optimize(stale)  # and the resume completes the index
    assert code == 0 and result["ok"], err


def test_a_resumed_time_table_fill_counts_only_the_rows_left(tmp_path: Path) -> None:
    """A fill of the time table cut short keeps the rows it copied and the next run
    goes on from there, but the dry run and the free-space check counted every
    message again (64 MB on a million messages), as for a table never begun."""
    db = tmp_path / "state.db"
    write_store(db)  # the CJK index complete: the run's chunks are the time table's
    with SessionStore(db) as store:  # Ctrl-C between two chunks of the fill
        cut_short_after(store, 11)
    with SessionStore(db, readonly=True) as store:
        tt = store.status()["time_table"]
        assert tt["status"] == "filling" and tt["rows"] == 1100, tt
        build = store.optimize_room(False)["build"]
    left = space.TIME_ROW_BYTES * 400
    assert build == left
    plan = json.loads(cli("optimize-storage", "--dry-run", "--json", "--no-vacuum", db=db).stdout)
    assert plan["adds_bytes"] == left and "time_table" in plan["fills"], plan
    code, result, err = optimize(db)
    assert code == 0 and result["ok"], err


def test_dry_run_names_the_time_table_and_rank_bounds_a_run_fills(tmp_path: Path) -> None:
    """A store with its index complete but never optimized: the dry run said
    "build: nothing" and yet "add about 1.2 MB" (the time table, the rank bounds)."""
    db = tmp_path / "state.db"
    write_store(db)
    plan = json.loads(cli("optimize-storage", "--dry-run", "--json", db=db).stdout)
    assert plan["builds"] == [] and plan["fills"] == ["time_table", "rank_bounds"], plan
    human = cli("optimize-storage", "--dry-run", db=db).stdout
    assert "build: nothing; fill: time table, rank bounds; drop: nothing" in human, human
    code, result, err = optimize(db)
    assert code == 0 and result["rank_bounds_measured"], (result, err)
    plan = json.loads(cli("optimize-storage", "--dry-run", "--json", db=db).stdout)
    assert plan["builds"] == [] and plan["fills"] == [], plan  # a second run fills nothing


def test_dry_run_names_the_rank_bounds_a_run_measures_after_building_the_cjk_index(
    tmp_path: Path,
) -> None:
    """A store with no CJK index yet (hermes-fts removed, or never run): the run builds
    it and then measures its words, but the dry run asked the missing index whether the
    library could and left the rank bounds out of what it fills."""
    db = tmp_path / "state.db"
    write_store(db)
    with SessionStore(db) as store:
        store.remove_search_objects()
    before = _files(db)
    plan = json.loads(cli("optimize-storage", "--dry-run", "--json", db=db).stdout)
    assert _files(db) == before
    assert schema.CJK in plan["builds"], plan
    assert plan["fills"] == ["time_table", "rank_bounds"], plan
    code, result, err = optimize(db)
    assert code == 0 and result["rank_bounds_measured"], (result, err)


@needs_nobody
def test_dry_run_says_a_run_would_be_refused_on_a_file_this_user_cannot_write() -> None:
    """On a 0444 store the dry run said "(fits)" and nothing else; the run it plans
    is then refused for the read-only file."""
    import pwd  # POSIX only, as runuser is

    with nobody_dir() as folder:
        db = folder / "state.db"
        write_store(db)
        db.chmod(0o444)
        os.chown(folder, pwd.getpwnam("nobody").pw_uid, -1)

        def as_nobody(*argv: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                ["runuser", "-u", "nobody", "--", str(nobody_python())]
                + ["-m", "hermes_fts.cli", "optimize-storage", "--db", str(db), *argv],
                capture_output=True,
                text=True,
                env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(nobody_package_root())},
                cwd="/tmp",
                timeout=120,
            )

        plan = json.loads(as_nobody("--dry-run", "--json").stdout)
        assert plan["success"] and f"{db} is a read-only file" in plan["refused"], plan
        human = as_nobody("--dry-run")
        assert human.returncode == 0, human.stderr
        assert f"a run would be refused: {db} is a read-only file" in human.stdout
        run = as_nobody("--yes", "--json")
        assert run.returncode != 0 and plan["refused"] in json.loads(run.stdout)["error"]


def test_dry_run_names_the_rank_bounds_a_run_measures_after_building_the_word_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``HERMES_WORD_FTS=1`` on an optimized store: the run builds the word index and
    then measures the rank bounds of both indexes, but the dry run said "fill:
    nothing" (it asked about the rank bounds only when it built the CJK index)."""
    monkeypatch.delenv("HERMES_TRIGRAM_FTS", raising=False)
    monkeypatch.delenv("HERMES_WORD_FTS", raising=False)
    db = tmp_path / "state.db"
    write_store(db)
    assert optimize(db)[1]["ok"]
    monkeypatch.setenv("HERMES_WORD_FTS", "1")
    plan = json.loads(cli("optimize-storage", "--dry-run", "--json", db=db).stdout)
    assert plan["builds"] == [schema.BASE], plan
    code, result, err = optimize(db)
    assert code == 0 and result["rank_bounds_measured"].get(schema.BASE), (result, err)
    assert plan["fills"] == ["rank_bounds"], plan


def test_dry_run_counts_the_backlog_other_writers_left(tmp_path: Path) -> None:
    """Hermes without the plugin wrote 3,000 messages: a run applies them to the CJK
    index first, yet the dry run said "add about 0 B" and a few seconds (on 60,000
    waiting messages of the 200k store, 0 B and 3 s for a run of 50 s that grew the
    file by 19 MB), and the free-space check left their index out of its peak."""
    db = tmp_path / "state.db"
    write_store(db)
    code, result, err = optimize(db)
    assert code == 0 and result["ok"], err
    quiet = json.loads(cli("optimize-storage", "--dry-run", "--json", db=db).stdout)
    with SessionStore(db, readonly=True) as store:
        room = store.optimize_room(True)
    conn = sqlite3.connect(db)  # as Hermes writes: no extension, the triggers log it
    conn.executemany(
        "INSERT INTO messages(session_id, role, content, timestamp) VALUES ('s1', 'user', ?, ?)",
        ((f"{text_of(i)} 迁移第{i}批数据 {_words(i)}", i) for i in range(3000)),
    )
    conn.commit()
    conn.close()
    plan = json.loads(cli("optimize-storage", "--dry-run", "--json", db=db).stdout)
    human = cli("optimize-storage", "--dry-run", db=db).stdout
    with SessionStore(db, readonly=True) as store:
        assert store.optimize_room(True)["need"] > room["need"]  # the run's own check
    assert plan["peak_free_bytes"] > quiet["peak_free_bytes"]
    assert plan["seconds"] > quiet["seconds"]
    code, result, err = optimize(db)
    assert code == 0 and result["ok"], err
    grew = result["size_after"] - result["size_before"]
    assert grew > 100_000 and grew / 3 < plan["adds_bytes"] < grew * 3, (plan, result)
    assert plan["applies"] == 3000 and plan["builds"] == [] and quiet["applies"] == 0, plan
    assert "apply: the changes of 3,000 messages other writers left" in human, human
    human = cli("optimize-storage", "--dry-run", db=db).stdout
    assert "apply:" not in human  # applied: nothing waits


def _words(seed: int) -> str:
    """Twenty words of a 5,000-word vocabulary, as varied as a conversation's."""
    rng = random.Random(seed)
    return " ".join(f"w{rng.randrange(5000):x}q" for _ in range(20))
