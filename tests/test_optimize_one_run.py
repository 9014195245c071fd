"""One optimize-storage run per store (DESIGN §5.6): a second run, from the
command line or the API, is refused at once and names the first; a run that
died (``kill -9``) never blocks the next.

The runs are real processes; the store's backlog is written by the real
``sqlite3`` shell, as Hermes Agent writes it, so the first run has seconds of
work to do.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from _support import needs_extension, shell_backlog

from hermes_fts.store import SessionStore

ROOT = Path(__file__).resolve().parents[1]
SQLITE3 = shutil.which("sqlite3")

pytestmark = [
    needs_extension,
    pytest.mark.skipif(SQLITE3 is None, reason="needs the sqlite3 shell"),
]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "hermes_fts.cli", *args]


def _holder(db: Path) -> subprocess.Popen[str]:
    """Another process that holds the store's run lock until it is killed."""
    code = (
        "import sys, time\n"
        "from hermes_fts._sharing import run_lock\n"
        "with run_lock(sys.argv[1]):\n"
        "    print('held', flush=True)\n"
        "    time.sleep(600)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(db)], stdout=subprocess.PIPE, text=True, env=_env()
    )
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    return proc


def test_a_second_run_is_refused_and_names_the_first(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    shell_backlog(db, 2_000)
    # A writer (Hermes saving a message) holds the write lock: the first run
    # waits for it, inside its run, while the second one starts.
    writer = sqlite3.connect(db, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    first = subprocess.Popen(
        _cli("--db", str(db), "--json", "optimize-storage", "--yes"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    try:
        assert first.stderr is not None
        while json.loads(first.stderr.readline() or '{"waiting": "ended"}').get("waiting") is None:
            assert first.poll() is None, "the first run ended without waiting"
        second = subprocess.run(
            _cli("--db", str(db), "--json", "optimize-storage", "--yes"),
            capture_output=True,
            text=True,
            env=_env(),
            timeout=120,
        )
        text = subprocess.run(
            _cli("--db", str(db), "optimize-storage", "--yes"),
            capture_output=True,
            text=True,
            env=_env(),
            timeout=120,
        )
        writer.execute("ROLLBACK")
        out, _ = first.communicate(timeout=300)
    finally:
        writer.close()
        if first.poll() is None:
            first.kill()
    assert second.returncode == 2, second.stdout
    doc = json.loads(second.stdout)
    assert doc["success"] is False
    assert f"another optimize-storage run (process {first.pid})" in doc["error"]
    assert text.returncode == 2 and text.stdout == ""
    assert f"process {first.pid}" in text.stderr and "Traceback" not in text.stderr
    assert first.returncode == 0 and json.loads(out)["ok"] is True
    assert not Path(f"{db}-hermes-fts-run").exists()  # no file left behind


def test_the_api_run_is_refused_while_another_process_runs(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    shell_backlog(db, 10)
    holder = _holder(db)
    try:
        with SessionStore(db) as store:
            result = store.optimize_storage(sleep=lambda _s: None)
        assert result["ok"] is False and result["reason"] == "another_run"
        assert f"process {holder.pid}" in result["detail"]
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.skipif(sys.platform != "linux", reason="who holds the run lock is read in /proc/locks")
def test_status_and_the_dry_run_say_a_run_is_at_work(tmp_path: Path) -> None:
    """During a run, status said its compaction was left because "it stopped, or Hermes
    had the store open", and the dry run planned a run the lock refuses."""
    db = tmp_path / "state.db"
    shell_backlog(db, 10)
    holder = _holder(db)
    try:
        status = subprocess.run(
            _cli("--db", str(db), "status"), capture_output=True, text=True, env=_env()
        )
        plan = subprocess.run(
            _cli("--db", str(db), "--json", "optimize-storage", "--dry-run"),
            capture_output=True,
            text=True,
            env=_env(),
        )
    finally:
        holder.kill()
        holder.wait()
    running = f"another optimize-storage run (process {holder.pid})"
    assert f"Running:  {running} is at work" in status.stdout, status.stdout
    assert json.loads(plan.stdout)["refused"] == f"{running} is at work on it", plan.stdout
    after = subprocess.run(  # a killed run holds nothing: nothing is said
        _cli("--db", str(db), "--json", "status"), capture_output=True, text=True, env=_env()
    )
    assert json.loads(after.stdout)["run_under_way"] is None


def test_a_killed_run_does_not_block_the_next(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    shell_backlog(db, 10)
    holder = _holder(db)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    assert Path(f"{db}-hermes-fts-run").exists()  # left behind, but no longer held
    done = subprocess.run(
        _cli("--db", str(db), "--json", "optimize-storage", "--yes"),
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["ok"] is True
    assert not Path(f"{db}-hermes-fts-run").exists()


def test_a_run_in_another_thread_of_this_process_is_refused(tmp_path: Path) -> None:
    """flock does not tell threads apart: a second run in the same process (two
    `hermes fts optimize-storage` in a Hermes gateway) is refused all the same."""
    import threading

    from hermes_fts._sharing import run_lock

    db = tmp_path / "state.db"
    shell_backlog(db, 10)
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with run_lock(db):
            held.set()
            release.wait(30)

    other = threading.Thread(target=hold)
    other.start()
    try:
        assert held.wait(30)
        with SessionStore(db) as store:
            result = store.optimize_storage(sleep=lambda _s: None)
        assert result["ok"] is False and result["reason"] == "another_run"
    finally:
        release.set()
        other.join()
    with SessionStore(db) as store:  # and once it ended, a run goes ahead
        assert store.optimize_storage(sleep=lambda _s: None)["ok"] is True


def test_a_run_started_while_sync_holds_the_room_names_the_sync(tmp_path: Path) -> None:
    """``sync`` holds the room for Hermes under the run lock while it applies a backlog
    of several batches; optimize-storage started meanwhile is refused as beside any
    run, and names the sync, not an optimize-storage run that is not there."""
    db = tmp_path / "state.db"
    shell_backlog(db, 5_000)
    lock = Path(f"{db}-hermes-fts-run")
    sync = subprocess.Popen(
        _cli("--db", str(db), "--json", "sync"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    try:
        while not (lock.exists() and "sync" in lock.read_text()):
            assert sync.poll() is None, "the sync ended before it held the lock"
        os.kill(sync.pid, signal.SIGSTOP)  # mid-backlog, while the run starts
        try:
            run = subprocess.run(
                _cli("--db", str(db), "--json", "optimize-storage", "--yes"),
                capture_output=True,
                text=True,
                env=_env(),
                timeout=120,
            )
        finally:
            os.kill(sync.pid, signal.SIGCONT)
        out, err = sync.communicate(timeout=300)
    finally:
        if sync.poll() is None:
            sync.kill()
    assert run.returncode == 2, run.stdout + run.stderr
    error = json.loads(run.stdout)["error"]
    assert f"another sync (process {sync.pid})" in error and "optimize-storage run" not in error
    assert sync.returncode == 0, err
    assert json.loads(out)["pending"] == 0
    assert not lock.exists() and not Path(f"{db}-hermes-fts-room").exists()


@pytest.mark.skipif(sys.platform != "linux", reason="/proc/locks is Linux's")
def test_asking_whether_a_run_is_alive_takes_no_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``status`` asks whether a run holds the room it left (run_alive).  A shared lock
    taken for that, even for a moment, refused a run starting then as "another
    run"; on Linux the answer is read in /proc/locks instead."""
    import fcntl

    from hermes_fts import _sharing

    db = tmp_path / "state.db"
    with SessionStore(db) as store:
        store.add_session("s1", "cli")
    taken: list[int] = []
    real_flock = fcntl.flock

    def flock(fd: int, op: int) -> None:
        taken.append(op)
        real_flock(fd, op)

    holder = _holder(db)
    try:
        monkeypatch.setattr(fcntl, "flock", flock)
        assert _sharing.run_alive(db)
        assert _sharing.run_under_way(db) == f"another optimize-storage run (process {holder.pid})"
    finally:
        holder.kill()
        holder.wait()
    Path(str(db) + _sharing.RUN_LOCK_SUFFIX).touch()  # a file the killed run left
    assert not _sharing.run_alive(db)
    assert _sharing.run_under_way(db) is None
    assert taken == []
