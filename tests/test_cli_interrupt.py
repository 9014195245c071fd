"""``hermes-fts sync`` on a large backlog, as a real process: the progress it
shows, and Ctrl-C (SIGINT) half way, which must leave a whole store, say what is
left and exit 130 without a traceback.

The backlog is written by the real ``sqlite3`` shell, as Hermes Agent writes
it: a process without the extension, whose rows wait in the pending table.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _support import needs_extension, shell_backlog

from hermes_fts.index.maintain import PENDING_BATCH_IDS
from hermes_fts.store import SessionStore

ROOT = Path(__file__).resolve().parents[1]
SQLITE3 = shutil.which("sqlite3")
BACKLOG = 30_000  # several batches: seconds of work, not minutes

pytestmark = [
    needs_extension,
    pytest.mark.skipif(SQLITE3 is None, reason="needs the sqlite3 shell"),
]


def _backlog_store(path: Path, rows: int = BACKLOG) -> None:
    """A store with a CJK index and ``rows`` messages the sqlite3 shell wrote."""
    shell_backlog(path, rows)
    assert _pending(path) == rows


def _pending(path: Path) -> int:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT COUNT(*) FROM hermes_fts_cjk_pending").fetchone()[0]
    finally:
        conn.close()


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "hermes_fts.cli", *args]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


def _interrupt_half_way(
    db: Path,
    *extra: str,
    command: tuple[str, ...] = ("sync",),
    sig: signal.Signals = signal.SIGINT,
) -> subprocess.CompletedProcess[str]:
    """``hermes-fts sync`` on ``db``, sent ``sig`` once its first batches are applied."""
    proc = subprocess.Popen(
        _cli("--db", str(db), *extra, *command),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
        # As from a shell with job control: Python's own Ctrl-C handler is live.
        restore_signals=True,
    )
    deadline = time.monotonic() + 60
    try:
        while _pending(db) > BACKLOG - 2 * PENDING_BATCH_IDS:
            assert proc.poll() is None, "sync ended before it could be interrupted"
            assert time.monotonic() < deadline, "sync applied nothing in 60 s"
            time.sleep(0.02)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _assert_whole(db: Path) -> None:
    with SessionStore(db, readonly=True) as store:
        assert store._conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    with SessionStore(db) as store:  # applies the rest
        problems = {k: v for k, v in store.integrity_check().items() if v is not None}
        assert not problems, problems
        found = store.search("backlog", limit=5)
        assert found.route == "fts_cjk" and found.rows


def test_ctrl_c_during_sync_says_what_is_left_and_exits_130(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    _backlog_store(db)
    done = _interrupt_half_way(db)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 130, (done.returncode, done.stderr)
    left = _pending(db)
    assert 0 < left < BACKLOG  # the batches applied stay applied, the rest waits
    assert "interrupted" in done.stderr
    assert f"{left:,}" in done.stderr and "hermes-fts sync --db" in done.stderr
    rerun = subprocess.run(
        _cli("--db", str(db), "sync"), capture_output=True, text=True, env=_env(), timeout=120
    )
    assert rerun.returncode == 0, rerun.stderr
    assert f"Applied {left:,} pending change(s); 0 left." in rerun.stdout
    _assert_whole(db)


def test_ctrl_c_during_sync_json_is_one_document(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    _backlog_store(db)
    done = _interrupt_half_way(db, "--json")
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 130
    doc = json.loads(done.stdout)
    assert doc["success"] is False and "interrupted" in doc["error"]
    assert doc["pending"] == _pending(db) > 0
    _assert_whole(db)


def test_sync_shows_progress_on_a_large_backlog(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    _backlog_store(db)
    done = subprocess.run(
        _cli("--db", str(db), "sync"), capture_output=True, text=True, env=_env(), timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"Applied {BACKLOG:,} pending change(s); 0 left.\n"
    lines = done.stderr.splitlines()
    # Not a terminal: plain lines, no carriage returns, the last one at 100 %.
    assert lines and "\r" not in done.stderr
    assert lines[-1].startswith("Applying") and "100%" in lines[-1]
    assert f"{BACKLOG:,}/{BACKLOG:,} messages" in lines[-1]


def test_sync_json_progress_is_json_lines_and_stdout_one_document(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    _backlog_store(db)
    done = subprocess.run(
        _cli("--db", str(db), "--json", "sync"),
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"success": True, "applied": BACKLOG, "pending": 0}
    events = [json.loads(line) for line in done.stderr.splitlines()]
    progress = [e for e in events if e["event"] == "progress"]
    assert progress and {e["phase"] for e in progress} == {"pending"}
    assert progress[-1]["done"] == progress[-1]["total"] == BACKLOG


def test_a_small_sync_prints_no_progress(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    _backlog_store(db, rows=10)
    done = subprocess.run(
        _cli("--db", str(db), "sync"), capture_output=True, text=True, env=_env(), timeout=120
    )
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout == "Applied 10 pending change(s); 0 left.\n"


@pytest.mark.parametrize(
    ("sig", "as_json"),
    [(signal.SIGINT, False), (signal.SIGINT, True), (signal.SIGTERM, False)],
)
def test_ctrl_c_during_a_long_read_only_command_exits_130(
    tmp_path: Path, sig: signal.Signals, as_json: bool
) -> None:
    """Ctrl-C exits 130, saying so; SIGTERM (`timeout`, `kill`) exits 143 and was
    called a Ctrl-C in the message."""
    named = "Ctrl-C" if sig == signal.SIGINT else "SIGTERM"
    db = tmp_path / "state.db"
    _backlog_store(db, rows=PENDING_BATCH_IDS)
    before = db.read_bytes()
    proc = subprocess.Popen(
        _cli("--db", str(db), *(["--json"] if as_json else []), "bench", "--repeats", "100"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
        restore_signals=True,
    )
    try:
        time.sleep(2.0)  # the bench times its first terms
        assert proc.poll() is None, "bench ended before it could be interrupted"
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "Traceback" not in err, err
    assert proc.returncode == 128 + sig
    if as_json:
        assert json.loads(out) == {
            "success": False,
            "error": f"interrupted ({named}); no change was left half done",
        }
    else:
        assert out == "" and err.endswith(
            f"Error: interrupted ({named}); no change was left half done\n"
        )
    assert db.read_bytes() == before  # bench reads only


def test_sync_on_a_store_hermes_fts_never_indexed_says_what_is_left(tmp_path: Path) -> None:
    """Hermes' own store, never touched by hermes-fts: sync creates the CJK index
    and applies nothing, since its messages are not changes but a backfill; it
    says so, with the command that fills the index, where it said only
    "Applied 0 pending change(s); 0 left." and searches stayed slow."""
    db = tmp_path / "state.db"
    script = (
        "PRAGMA journal_mode = WAL;"
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, "
        "started_at REAL NOT NULL, title TEXT);"
        "CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT "
        "NULL, role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, "
        "tool_name TEXT, timestamp REAL NOT NULL);"
        "INSERT INTO sessions VALUES ('s1', 'cli', 1700000000, 'notes');"
        "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 50) "
        "INSERT INTO messages(session_id, role, content, timestamp) "
        "SELECT 's1', 'user', 'note ' || i || ' 部署', 1700000000 + i FROM c;"
    )
    subprocess.run([str(SQLITE3), str(db), script], check=True, timeout=60)
    done = subprocess.run(
        _cli("--db", str(db), "sync"), capture_output=True, text=True, env=_env(), timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "Applied 0 pending change(s); 0 left.",
        "Searches: slower exact routes, since the indexes are not filled yet (backfill); "
        f"run `hermes-fts optimize-storage --db {db}`",
    ]
    done = subprocess.run(
        _cli("--db", str(db), "--json", "sync"),
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )
    assert json.loads(done.stdout) == {
        "success": True,
        "applied": 0,
        "pending": 0,
        "slowed_by": ["backfill"],
    }


def test_ctrl_c_while_optimize_storage_applies_a_backlog_says_it_resumes(tmp_path: Path) -> None:
    """optimize-storage's open applies the pending backlog first: Ctrl-C there is
    the run's own interruption (resume by running it again), not a bare one."""
    db = tmp_path / "state.db"
    _backlog_store(db)
    done = _interrupt_half_way(db, command=("optimize-storage", "--yes"))
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 130, (done.returncode, done.stderr)
    assert done.stderr.endswith(
        "Error: interrupted. No data was lost; run "
        f"`hermes-fts optimize-storage --db {db}` again to resume.\n"
    ), done.stderr
    rerun = subprocess.run(
        _cli("--db", str(db), "optimize-storage", "--yes"),
        capture_output=True,
        text=True,
        env=_env(),
        timeout=300,
    )
    assert rerun.returncode == 0, rerun.stderr
    assert _pending(db) == 0
    _assert_whole(db)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_or_sighup_stops_optimize_storage_as_ctrl_c_does(
    tmp_path: Path, sig: signal.Signals
) -> None:
    """`timeout`, `kill` or a closed terminal killed the run outright: its room file
    (the reserve it holds, taken from Hermes on that disk) and its run lock stayed
    behind and it said nothing; it now stops as Ctrl-C does, with the shell's status."""
    db = tmp_path / "state.db"
    _backlog_store(db)
    done = _interrupt_half_way(db, command=("optimize-storage", "--yes"), sig=sig)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 128 + sig, (done.returncode, done.stderr)
    assert done.stderr.endswith(
        "Error: interrupted. No data was lost; run "
        f"`hermes-fts optimize-storage --db {db}` again to resume.\n"
    ), done.stderr
    left = sorted(p.name for p in tmp_path.iterdir() if "hermes-fts" in p.name)
    assert left == []
    assert 0 < _pending(db) < BACKLOG
    _assert_whole(db)


def test_sigterm_during_sync_json_is_one_document(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    _backlog_store(db)
    done = _interrupt_half_way(db, "--json", sig=signal.SIGTERM)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 128 + signal.SIGTERM
    doc = json.loads(done.stdout)
    assert doc["success"] is False and doc["reason"] == "interrupted"
    assert doc["pending"] == _pending(db) > 0
    _assert_whole(db)


def test_ctrl_c_during_bench_on_a_terminal_starts_the_error_on_its_own_line(
    tmp_path: Path,
) -> None:
    """bench redraws "timing TERM" in place on a terminal: the interrupted run
    clears it, where the error ran on after the term ("timing 部署Error: ...")."""
    import pty

    db = tmp_path / "state.db"
    _backlog_store(db, rows=PENDING_BATCH_IDS)
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        _cli("--db", str(db), "bench", "--repeats", "100"),
        stdout=subprocess.PIPE,
        stderr=follower,
        env=_env(),
        restore_signals=True,
    )
    os.close(follower)
    try:
        time.sleep(2.0)
        assert proc.poll() is None, "bench ended before it could be interrupted"
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    assert proc.returncode == 130
    text = seen.decode("utf-8", "replace")
    assert "timing" in text and "Traceback" not in text, text
    before_error = text[: text.index("Error: interrupted")]
    assert before_error.endswith(("\r\x1b[K", "\n")), repr(text[-300:])


# Ctrl-C while the subcommand's modules are still being imported: a real SIGINT,
# sent by the process to itself at that point of the console script's start.
CTRL_C_AT_START = """
import os, signal, sys
from hermes_fts.cli import registry
load_command = registry.load_command
def interrupted_import(name):
    os.kill(os.getpid(), signal.SIGINT)
    return load_command(name)
registry.load_command = interrupted_import
sys.argv = ["hermes-fts", *sys.argv[1:]]
from hermes_fts.cli import run
run()
"""


@pytest.mark.parametrize("as_json", [False, True])
def test_ctrl_c_while_the_command_starts_exits_130_without_a_traceback(
    tmp_path: Path, as_json: bool
) -> None:
    db = tmp_path / "state.db"
    proc = subprocess.run(
        [sys.executable, "-c", CTRL_C_AT_START, "search", "x", "--db", str(db)]
        + (["--json"] if as_json else []),
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
        restore_signals=True,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 130
    if as_json:
        assert json.loads(proc.stdout) == {
            "success": False,
            "error": "interrupted (Ctrl-C); no change was left half done",
        }
    else:
        assert proc.stdout == ""
        assert proc.stderr == "Error: interrupted (Ctrl-C); no change was left half done\n"
    assert not db.exists()


def _ctrl_c_in_the_document(argv: list[str]) -> tuple[bytes, bytes, int]:
    """``hermes-fts ARGV`` sent Ctrl-C while its stdout, a pipe nobody reads yet, is
    full: the command is blocked inside its --json document.  (stdout, stderr, status)."""
    proc = subprocess.Popen(
        _cli(*argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(),
        restore_signals=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        first = os.read(proc.stdout.fileno(), 1)  # one byte read, the pipe full
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert b"Traceback" not in err, err
    return first + out, err, proc.returncode


def test_ctrl_c_while_the_json_document_is_written_leaves_it_whole(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    long_text = "部署 deploy note " * 200  # 3 KB a message: the document is far bigger than a pipe
    with SessionStore(db) as store:
        for n in range(100):
            store.add_session(f"s{n}", "cli")
            store.add_messages(
                {"session_id": f"s{n}", "role": "user", "content": f"{i} {long_text}"}
                for i in range(4)
            )
    out, _err, status = _ctrl_c_in_the_document(
        ["search", "deploy", "--limit", "100", "--json", "--db", str(db)]
    )
    document = json.loads(out)  # whole, and the only document
    assert document["success"] is True and document["count"] == 100
    assert status == 0  # the answer was given in full


def test_ctrl_c_during_read_full_json_stops_it_with_one_document(tmp_path: Path) -> None:
    """`read --full --json` writes its document as it reads the session: a first Ctrl-C
    waited for the whole session (minutes on a long one) and exited 0, and a second
    one cut the document mid-string.  It now stops at once, the document ended whole."""
    db = tmp_path / "state.db"
    long_text = "部署 deploy note " * 200  # 3 KB a message: the document is far bigger than a pipe
    with SessionStore(db) as store:
        store.add_session("s1", "cli")
        store.add_messages(
            {"session_id": "s1", "role": "user", "content": f"{i} {long_text}"} for i in range(400)
        )
    out, _err, status = _ctrl_c_in_the_document(["read", "s1", "--full", "--json", "--db", str(db)])
    document = json.loads(out)  # whole, and the only document
    assert document["success"] is False
    assert document["error"] == "interrupted (Ctrl-C); no change was left half done"
    assert 0 < len(document["messages"]) < 400 == document["message_count"]
    assert status == 130


# Ctrl-C as SQLite calls one of the LIKE test's Python functions: Python runs its
# handler as the function starts, before the function's own `try` can stop the
# statement with SQLite's interrupt, and sqlite3 reports the function as failed.
CTRL_C_AS_A_LIKE_FUNCTION_STARTS = """
import os, signal, sys
from hermes_fts.search import like
stops = like._stops_on_ctrl_c
calls = []
def at_entry(conn, function):
    inner = stops(conn, function)
    def call(*args):
        if not calls:
            calls.append(1)
            os.kill(os.getpid(), signal.SIGINT)
        return inner(*args)
    return call
like._stops_on_ctrl_c = at_entry
sys.argv = ["hermes-fts", *sys.argv[1:]]
from hermes_fts.cli import run
run()
"""


@pytest.mark.parametrize("as_json", [False, True])
def test_ctrl_c_during_a_like_scan_search_is_an_interruption_not_a_failed_search(
    tmp_path: Path, as_json: bool
) -> None:
    """It said "Search failed: user-defined function raised exception; retry with plain
    words", with a logged failure, and exited 1."""
    db = tmp_path / "state.db"
    with SessionStore(db) as store:
        store.add_session("s1", "cli")
        store.add_messages(
            {"session_id": "s1", "role": "user", "content": "hello there"} for _ in range(3)
        )
    proc = subprocess.run(
        [sys.executable, "-c", CTRL_C_AS_A_LIKE_FUNCTION_STARTS, "search", "hello", "--db", str(db)]
        + (["--json"] if as_json else []),
        capture_output=True,
        text=True,
        env={**_env(), "HERMES_CJK_FTS": "0"},
        timeout=120,
        restore_signals=True,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 130, (proc.returncode, proc.stderr)
    error = "interrupted (Ctrl-C); no change was left half done"
    if as_json:
        assert json.loads(proc.stdout) == {"success": False, "error": error}
        assert proc.stderr == ""
    else:
        assert proc.stdout == "" and proc.stderr == f"Error: {error}\n"
