"""`hermes-fts bench` on a user's own store: read-only, every class timed, recall checked."""

from __future__ import annotations

import hashlib
import json
import random
import tracemalloc

import pytest

from hermes_fts import bench
from hermes_fts.cli import main, timing
from hermes_fts.store import SessionStore

WORDS = ["deploy", "server", "config", "memory", "search", "window", "python", "ticket"]
HAN = "广西桂林漓江山水服务端修改计划东京明天问题会议记录"


def make_store(path):
    rng = random.Random(5)
    with SessionStore(path) as st:
        st.add_session("s1", source="cli")
        st.add_messages(
            {
                "session_id": "s1",
                "role": rng.choice(["user", "assistant"]),
                "content": " ".join(rng.choice(WORDS) for _ in range(4))
                + " "
                + "".join(rng.choice(HAN) for _ in range(rng.randint(2, 9))),
                "timestamp": float(i),
            }
            for i in range(400)
        )


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_bench_reports_every_class_with_full_recall_and_writes_nothing(tmp_path, capsys):
    db = tmp_path / "state.db"
    make_store(db)
    before = digest(db)
    assert main(["bench", "--db", str(db), "--json", "--per-band", "1", "--repeats", "1"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert digest(db) == before
    classes = {row["class"]: row for row in report["classes"]}
    assert set(classes) == {"cjk1", "cjk2", "cjk3", "latin_word"}
    for row in classes.values():
        assert row["min_recall"] == 1.0
        assert row["median_ratio"] > 0
    assert classes["cjk2"]["routes"] == "fts_cjk"
    assert classes["latin_word"]["routes"] == "fts_cjk"  # the word index is opt-in
    assert set(report["sizes"]) == {"hermes_fts_cjk"}  # word and trigram: opt-in
    for term in report["terms"]:
        assert term["route"] == "fts_cjk" and term["like_ms"] > 0


def test_bench_table_for_people_and_argument_errors(tmp_path, capsys):
    db = tmp_path / "state.db"
    make_store(db)
    assert main(["bench", "--db", str(db), "--per-band", "1", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "cjk2" in out and "x text" in out and "recall" in out
    assert main(["bench", "--db", str(db), "--repeats", "0"]) == 2
    assert "must be an integer from 1 to 100" in capsys.readouterr().err


def test_bench_samples_words_not_the_long_tokens_of_tool_output(tmp_path, capsys):
    """A store's vocabulary holds tokens no one searches for (a 19,000-character run in
    a tool output, base64): the bench leaves them out instead of failing on them."""
    db = tmp_path / "state.db"
    make_store(db)
    with SessionStore(db) as st:
        st.add_message("s1", "tool", "x" * 19_000, tool_name="terminal")
    code = main(["bench", "--db", str(db), "--json", "--per-band", "50", "--repeats", "1"])
    assert code == 0
    terms = [t["term"] for t in json.loads(capsys.readouterr().out)["terms"]]
    assert terms and max(len(t) for t in terms) <= 64


class _CtrlCWhileReading:
    """The store's connection, with Ctrl-C arriving once the first row of a read
    of the bench's vocabulary table has come (its statement still running)."""

    def __init__(self, conn):
        self._conn = conn

    def __getattr__(self, name):
        return getattr(self._conn, name)

    def execute(self, sql, *params):
        cursor = self._conn.execute(sql, *params)
        if "hermes_bench_vocab" not in sql or not sql.startswith("SELECT"):
            return cursor

        class Interrupted:
            def __iter__(self):
                yield next(cursor)
                raise KeyboardInterrupt

            def close(self):
                cursor.close()

        return Interrupted()


def test_ctrl_c_while_the_bench_reads_the_vocabulary_stays_an_interrupt(tmp_path):
    """The vocabulary read of a large store takes seconds: Ctrl-C then failed with
    "database table is locked" (exit 2, "locked by another process"), as the
    temporary table was dropped while its read was still open."""
    db = tmp_path / "state.db"
    make_store(db)
    with SessionStore(db, readonly=True) as store:
        conn = store._conn
        store._conn = _CtrlCWhileReading(conn)
        with pytest.raises(KeyboardInterrupt):
            bench.sample_terms(store)
        store._conn = conn
        left = conn.execute("SELECT name FROM temp.sqlite_master").fetchall()
        assert left == []
        assert bench.sample_terms(store, per_band=1)["cjk2"]  # the connection still works


def test_bench_reads_a_large_vocabulary_in_bounded_memory(tmp_path, monkeypatch):
    """A 1M-message store's CJK index holds millions of terms: the bench held them
    all, twice (1 GB resident); it keeps a sample per class whatever their number."""
    db = tmp_path / "state.db"
    rng = random.Random(7)
    with SessionStore(db) as st:
        st.add_session("s1", source="cli")
        st.add_messages(
            {
                "session_id": "s1",
                "role": "user",
                "content": " ".join(f"w{rng.getrandbits(40):x}" for _ in range(20))
                + " "
                + "".join(rng.choice(HAN) for _ in range(6)),
                "timestamp": float(i),
            }
            for i in range(2000)
        )
    monkeypatch.setattr(bench, "VOCAB_SAMPLE", 500, raising=False)
    with SessionStore(db, readonly=True) as store:
        tracemalloc.start()
        try:
            classes = bench.sample_terms(store, per_band=2)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert len(classes["latin_word"]["rare"]) == 2
    # 40,000 distinct words of ~11 characters are over 4 MB as (term, count) tuples.
    assert peak < 1_500_000, peak


@pytest.mark.parametrize("as_json", [False, True])
def test_bench_progress_counts_the_terms_and_shows_under_json(
    tmp_path, capsys, monkeypatch, as_json
):
    """A bench on a large store runs for minutes: its progress said which term it
    timed but not how many were left, nothing while it read the vocabulary, and
    nothing at all under --json (the other long commands write JSON events)."""
    db = tmp_path / "state.db"
    make_store(db)
    monkeypatch.setattr(timing, "PLAIN_EVERY_S", 0.0)  # every step, not one every few seconds
    extra = ["--json"] if as_json else []
    assert main(["bench", "--db", str(db), *extra, "--per-band", "1", "--repeats", "1"]) == 0
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    if as_json:
        report = json.loads(captured.out)
        lines = [json.loads(line)["message"] for line in lines]
    else:
        report = {"terms": [None] * sum(int(row.split()[1]) for row in _table(captured.out))}
    total = len(report["terms"])
    assert total > 4
    assert "vocabulary" in lines[0]
    counted = [line for line in lines if line.startswith("bench: timing term ")]
    assert len(counted) == total
    assert counted[0].startswith(f"bench: timing term 1 of {total}: ")
    assert counted[-1].startswith(f"bench: timing term {total} of {total}: ")


def _table(out):
    """The per-class rows of bench's table (class, terms, ...)."""
    return [
        line for line in out.splitlines() if line.split()[:1] and line.split()[0] in bench.CLASSES
    ]


def test_bench_of_a_damaged_index_says_what_to_do(tmp_path, capsys):
    """Pages of the CJK index deleted in the sqlite3 shell: search and status name the
    damage and `optimize-storage`, but bench said only "the session store cannot be
    used (database disk image is malformed)"."""
    import shutil
    import subprocess

    shell = shutil.which("sqlite3")
    if shell is None:
        pytest.skip("needs the sqlite3 shell")
    db = tmp_path / "state.db"
    make_store(db)
    with SessionStore(db) as st:
        st.optimize_storage(sleep=lambda s: None)
    subprocess.run([shell, str(db), "DELETE FROM hermes_fts_cjk_data WHERE id > 10;"], check=True)
    assert main(["bench", "--db", str(db), "--per-band", "1", "--repeats", "1"]) == 1
    error = capsys.readouterr().err.splitlines()[-1]
    assert error.startswith("Error: cannot use the session store: the store is damaged"), error
    assert f"`hermes-fts optimize-storage --db {db}`" in error, error
    assert main(["bench", "--db", str(db), "--json", "--per-band", "1", "--repeats", "1"]) == 1
    assert "optimize-storage" in json.loads(capsys.readouterr().out)["error"]
