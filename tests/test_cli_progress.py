"""optimize-storage progress: one bar over the whole job, in messages, to 100 %, log-friendly."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import hermes_fts
from hermes_fts.cli.progress import PLAIN_EVERY_S, ProgressBar, waiting
from hermes_fts.store import SessionStore

pytestmark = pytest.mark.skipif(
    not hermes_fts.extension_path(), reason="needs the built cjk_unicode61 extension"
)

MESSAGES = 300


def _store_needing_a_full_backfill(path: Path) -> None:
    with SessionStore(path) as store:
        store.add_session("s1", "cli")
        store.add_messages(
            {"session_id": "s1", "role": "user", "content": f"note {i} 東京 backup"}
            for i in range(MESSAGES)
        )
        store._mark_fts_stale("test")  # every index is rebuilt from scratch


class _Stop(Exception):
    pass


def _run(path: Path, stop_after: int | None = None) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []

    def record(ev: dict[str, Any]) -> None:
        events.append(dict(ev))
        backfill = [e for e in events if e["phase"] == "backfill"]
        if stop_after is not None and len(backfill) >= stop_after:
            raise _Stop

    with SessionStore(path) as store:
        try:
            store.optimize_storage(
                progress=record,
                vacuum=False,
                sleep=lambda s: None,
                chunk_rows=40,
                # Fixed chunks: with adaptive ones an index can finish before the
                # stop, and a resumed job does not yet count finished indexes.
                txn_target=None,
            )
        except _Stop:
            pass
    return [e for e in events if e["phase"] == "backfill"]


def test_one_bar_in_messages_that_never_restarts_and_reaches_100(tmp_path):
    db = tmp_path / "state.db"
    _store_needing_a_full_backfill(db)
    events = _run(db)
    assert len(events) > 5  # several chunks per index, several indexes
    assert {e["total"] for e in events} == {MESSAGES}  # messages, not index rows
    done = [e["indexed"] for e in events]
    assert done == sorted(done), "the bar went backwards (restarted at an index change)"
    assert events[0]["percent"] == 0 and events[-1]["percent"] == 100
    assert events[-1]["indexed"] == MESSAGES


def test_a_resumed_run_starts_where_the_first_stopped(tmp_path):
    db = tmp_path / "state.db"
    _store_needing_a_full_backfill(db)
    first = _run(db, stop_after=6)
    second = _run(db)
    assert second[0]["indexed"] >= first[-1]["indexed"] > 0
    assert second[-1]["percent"] == 100 and {e["total"] for e in second} == {MESSAGES}


def test_the_bar_counts_messages_when_the_first_ids_were_deleted(tmp_path):
    """Ids need not be dense: with the first 200 of 300 messages deleted (old
    sessions), the bar read 80 % after its first chunk of 40 of the 100 messages."""
    import sqlite3

    db = tmp_path / "state.db"
    _store_needing_a_full_backfill(db)
    conn = sqlite3.connect(db)  # as Hermes deletes a session
    with conn:
        conn.execute("DELETE FROM messages WHERE id <= 200")
    conn.close()
    events = _run(db)
    assert {e["total"] for e in events} == {100}
    assert [e["indexed"] for e in events] == [0, 40, 80, 100], events


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _event(indexed: int, total: int = 1000) -> dict[str, Any]:
    return {
        "phase": "backfill",
        "indexed": indexed,
        "total": total,
        "percent": int(100 * indexed / total),
    }


def test_off_a_terminal_plain_lines_every_few_seconds_and_at_100():
    stream, clock = io.StringIO(), _Clock()
    bar = ProgressBar(stream, clock=clock, terminal=False)
    bar({"phase": "repair", "indexed": 0, "total": 0, "percent": 0})
    for step in range(1, 11):  # one event a second
        clock.now += 1.0
        bar(_event(step * 100))
    bar({"phase": "done", "indexed": 0, "total": 0, "percent": 100})
    text = stream.getvalue()
    assert "\r" not in text and "\x1b" not in text
    lines = [line for line in text.splitlines() if line.startswith("Indexing")]
    # The first event, one every PLAIN_EVERY_S seconds, and the final 100 %.
    assert len(lines) == 1 + int(9 // PLAIN_EVERY_S) + 1
    assert "100%" in lines[-1] and "1,000/1,000 messages" in lines[-1]
    assert text.splitlines()[-1] == "Done."


def test_on_a_terminal_the_line_is_redrawn_in_place():
    stream, clock = io.StringIO(), _Clock()
    bar = ProgressBar(stream, clock=clock, terminal=True)
    for step in range(1, 4):
        clock.now += 1.0
        bar(_event(step * 100))
    bar.close()
    assert stream.getvalue().count("\r") == 3 and stream.getvalue().endswith("\n")


def _screen_line(text: str) -> str:
    """What a terminal shows of the current line after ``text``: a carriage return
    goes back to the start, ESC [K erases from there, other characters overwrite."""
    cells: list[str] = []
    col = 0
    for part in re.split(r"(\r|\x1b\[K|\n)", text):
        if part == "\r":
            col = 0
        elif part == "\x1b[K":
            del cells[col:]
        elif part == "\n":
            cells, col = [], 0
        else:
            for ch in part:
                cells[col : col + 1] = [ch]
                col += 1
    return "".join(cells)


def test_on_a_terminal_a_shorter_line_leaves_nothing_of_the_longer_one():
    stream, clock = io.StringIO(), _Clock()
    bar = ProgressBar(stream, clock=clock, terminal=True)
    bar(_event(0))
    clock.now += 0.01
    bar(_event(200))  # 20,000 messages/s: a long rate
    clock.now += 10.0
    bar(_event(300))  # about 30 messages/s: the line gets shorter
    shown = _screen_line(stream.getvalue())
    last = stream.getvalue().rsplit("\r", 1)[-1].replace("\x1b[K", "")
    assert "30 messages/s" in last
    assert shown == last


def test_rate_after_a_resume_counts_only_this_runs_work():
    stream, clock = io.StringIO(), _Clock()
    bar = ProgressBar(stream, clock=clock, terminal=True)
    bar(_event(600))  # resumed: 600 of 1000 were done by an earlier run
    clock.now += 2.0
    bar(_event(800))
    assert "100 messages/s" in stream.getvalue().rsplit("\r", 1)[-1]
    assert "left 0:00:02" in stream.getvalue().rsplit("\r", 1)[-1]


def test_the_progress_bar_is_attached_to_stderr_by_default(monkeypatch):
    fake = io.StringIO()
    monkeypatch.setattr("sys.stderr", fake)
    bar = ProgressBar()
    assert bar.stream is fake and bar.terminal is False


def test_an_interrupted_rebuild_of_a_damaged_store_resumes(tmp_path):
    # Regression: the word index's triggers are dropped while it is damaged,
    # and the next open took that for unlogged writes and restarted the rebuild.
    db = tmp_path / "state.db"
    _store_needing_a_full_backfill(db)
    first = _run(db, stop_after=3)
    with SessionStore(db) as store:
        assert store.rebuild_status()["indexed"] > 0
    second = _run(db)
    assert second[0]["indexed"] >= first[-1]["indexed"] > 0


def test_measuring_rank_bounds_is_its_own_bar_in_words():
    stream, clock = io.StringIO(), _Clock()
    bar = ProgressBar(stream, clock=clock, terminal=False)
    bar(_event(1000))  # the backfill, done
    bar({"phase": "rank_bounds", "indexed": 0, "total": 0, "percent": 100})
    for done in (10, 20, 40):
        clock.now += 10.0
        bar({"phase": "rank_bounds", "indexed": done, "total": 40, "percent": done * 100 // 40})
    lines = stream.getvalue().splitlines()
    assert "Measuring frequent words (rank bounds)…" in lines
    measured = [line for line in lines if line.startswith("Measuring ")]
    assert "40/40 words" in measured[-1] and "100%" in measured[-1]
    assert "2 words/s" in measured[-1]  # its own rate, 30 words in 20 s, not the backfill's


def _with_stderr_gone(*argv: str) -> int:
    """``hermes-fts ARGV``'s exit status, its stderr a pipe whose reader has gone
    (`2>&1 | head -1` once head has its line); stdin empty."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line
    try:
        return subprocess.run(
            [sys.executable, "-m", "hermes_fts.cli", *argv],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=write_end,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
            timeout=300,
        ).returncode
    finally:
        os.close(write_end)


def test_a_progress_reader_that_went_away_does_not_stop_the_run(tmp_path):
    """`hermes-fts optimize-storage --yes 2>&1 | head -1`: the first progress line
    after head exits raised BrokenPipeError out of the run, which stopped half done
    and exited 0, as if it had finished."""
    db = tmp_path / "state.db"
    _store_needing_a_full_backfill(db)
    assert _with_stderr_gone("optimize-storage", "--yes", "--db", str(db)) == 0
    with SessionStore(db, readonly=True) as store:
        assert store.status()["needs_optimize"] == [], "the run stopped half done"


def test_with_stderr_gone_a_refusal_keeps_its_exit_status(tmp_path):
    """The prompt no one could read ended the command with 0 (nothing done), and an
    error line that could not be written turned a usage error's 2 into 1."""
    db = tmp_path / "state.db"
    _store_needing_a_full_backfill(db)
    before = db.read_bytes()
    assert _with_stderr_gone("optimize-storage", "--db", str(db)) == 1  # no consent
    assert db.read_bytes() == before
    assert _with_stderr_gone("search", "x", "--limit", "abc", "--db", str(db)) == 2


def test_with_stderr_gone_bench_still_reports(tmp_path):
    """bench's 'timing ...' line raised BrokenPipeError: exit 0 and no report at all."""
    db = tmp_path / "state.db"
    _store_needing_a_full_backfill(db)
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "hermes_fts.cli", "bench", "--per-band", "1"]
            + ["--repeats", "1", "--db", str(db)],  # --json shows no progress
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=write_end,
            text=True,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
            timeout=300,
        )
    finally:
        os.close(write_end)
    assert proc.returncode == 0 and proc.stdout.startswith(f"Store: {db} "), proc.stdout
    assert "index ms" in proc.stdout, proc.stdout


def test_a_rate_below_one_a_second_is_not_shown_as_zero():
    """Checking indexes takes seconds each: the bar said "2/2 indexes  0 indexes/s",
    which reads as stalled (the 1M store's optimize-storage)."""
    stream, clock = io.StringIO(), _Clock()
    bar = ProgressBar(stream, clock=clock, terminal=False)
    bar({"phase": "repair", "indexed": 0, "total": 2, "percent": 0})
    clock.now += 3.0
    bar({"phase": "repair", "indexed": 1, "total": 2, "percent": 50})
    clock.now += 3.0
    bar({"phase": "repair", "indexed": 2, "total": 2, "percent": 100})
    last = stream.getvalue().splitlines()[-1]
    assert "2/2 indexes" in last and "0.3 indexes/s" in last, last


def _store_with_pending(path: Path, rows: int) -> None:
    """``rows`` messages the sqlite3 shell wrote, as Hermes does without the extension:
    every one waits for the CJK index."""
    with SessionStore(path) as store:
        store.add_session("s1", "cli")
    script = (
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < "
        f"{rows}) INSERT INTO messages(session_id, role, content, timestamp) "
        "SELECT 's1', 'user', 'note ' || i || ' 东京 backup', 1700000000 + i FROM n;"
    )
    shell = shutil.which("sqlite3")
    assert shell is not None
    subprocess.run([shell, str(path), script], check=True, timeout=120)


def _search(db: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", "search", "--db", str(db), "东京", *argv],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
        timeout=300,
    )


def test_a_search_over_a_long_pending_backlog_says_what_it_waits_for(tmp_path):
    """A read-only search reads the rows waiting for the CJK index by a scan: seconds
    on a long backlog, with nothing on stderr until the answer came."""
    from hermes_fts.cli.progress import SCAN_NOTE_PENDING

    db = tmp_path / "state.db"
    _store_with_pending(db, SCAN_NOTE_PENDING)
    plain = _search(db)
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout.startswith("Search '东京'")
    note = f"Searching; {SCAN_NOTE_PENDING:,} messages wait for the search index"
    assert plain.stderr.startswith(note) and f"hermes-fts sync --db {db}" in plain.stderr
    assert "\r" not in plain.stderr  # not a terminal: a plain line
    as_json = _search(db, "--json")
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout)["results"]  # stdout stays one JSON document
    (event,) = [json.loads(line) for line in as_json.stderr.splitlines()]
    assert event["event"] == "note" and event["message"].startswith(note)


def test_a_search_of_a_long_history_the_cjk_index_does_not_serve_says_so(tmp_path, monkeypatch):
    """Without the CJK index (never built, removed, half built) or with the extension
    off, every search is a LIKE scan of the whole store: 1.5 s on 200,000 messages,
    with nothing on stderr until the answer came."""
    from hermes_fts.cli.progress import SCAN_NOTE_PENDING

    db, small = tmp_path / "state.db", tmp_path / "small.db"
    for path, rows in ((db, SCAN_NOTE_PENDING), (small, 50)):
        _store_with_pending(path, rows)
        with SessionStore(path) as store:
            store.remove_search_objects()
    plain = _search(db)
    assert plain.returncode == 0 and plain.stdout.startswith("Search '东京'"), plain.stderr
    note = f"Searching up to {SCAN_NOTE_PENDING:,} messages by a slower exact scan"
    assert plain.stderr.startswith(f"{note}, since the CJK index is not built (cjk_missing)")
    assert f"`hermes-fts optimize-storage --db {db}` makes searches fast" in plain.stderr
    as_json = _search(db, "--json")
    assert json.loads(as_json.stdout)["results"]  # stdout stays one JSON document
    (event,) = [json.loads(line) for line in as_json.stderr.splitlines()]
    assert event["event"] == "note" and event["message"].startswith(note)
    assert _search(small).stderr == ""  # a short history: no wait worth a line
    monkeypatch.setenv("HERMES_CJK_FTS", "0")  # switched off: optimize-storage cannot help
    off = _search(db)
    assert off.returncode == 0 and off.stderr.startswith(f"{note} without the CJK extension…")


def test_a_search_over_a_short_backlog_says_nothing(tmp_path):
    db = tmp_path / "state.db"
    _store_with_pending(db, 50)
    found = _search(db)
    assert found.returncode == 0 and found.stdout.startswith("Search '东京'")
    assert found.stderr == ""


def test_on_a_terminal_the_waiting_line_is_erased_when_the_wait_ends(monkeypatch):
    monkeypatch.setenv("TERM", "xterm")
    stream = io.StringIO()
    stream.isatty = lambda: True  # type: ignore[method-assign]
    with waiting("Searching…", stream=stream):
        assert stream.getvalue().endswith("Searching…")
    assert stream.getvalue().endswith("\r\x1b[K")
