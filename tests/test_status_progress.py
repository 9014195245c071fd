"""``hermes-fts status`` on a large store reads the whole file (the text and each
index) and said nothing for seconds: it shows its progress on stderr, as
optimize-storage and sync do, and stdout stays the one result (valid JSON
under ``--json``).  A small store still prints nothing on stderr."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_fts.cli import admin, main
from hermes_fts.index import maintain
from hermes_fts.store import SessionStore


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("status") / "state.db"
    with SessionStore(db) as st:
        st.add_session("s1", "cli")
        for i in range(60):
            st.add_message("s1", "user", f"message {i} 東京 " + "word " * i)
    return db


@pytest.fixture
def large(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every store counts as large, and the text is read a few ids at a time."""
    monkeypatch.setattr(admin, "STATUS_PROGRESS_BYTES", 0)
    monkeypatch.setattr(maintain, "TEXT_CHUNK_IDS", 7)


def test_status_of_a_large_store_shows_its_progress(
    store: Path, large: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--db", str(store), "status"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("Store:") and "Measuring" not in out
    lines = err.splitlines()
    # Not a terminal: plain lines, the text's last one at 100 %, then the indexes.
    assert "\r" not in err
    assert any(line.startswith("Measuring text") and "100%" in line for line in lines), err
    assert "60/60 ids" in err
    assert lines[-1] == "Measuring the indexes…"


def test_status_json_progress_is_json_lines_and_stdout_one_document(
    store: Path, large: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--db", str(store), "--json", "status"]) == 0
    out, err = capsys.readouterr()
    doc = json.loads(out)
    events = [json.loads(line) for line in err.splitlines()]
    progress = [e for e in events if e["event"] == "progress"]
    assert progress and progress[-1]["done"] == progress[-1]["total"] == 60
    assert events[-1] == {"event": "phase", "phase": "sizes", "message": "Measuring the indexes…"}
    with SessionStore(store, readonly=True) as st:
        assert doc["text_bytes"] == maintain.text_bytes(st._conn) > 0


def test_status_of_a_small_store_prints_nothing_on_stderr(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--db", str(store), "status"]) == 0
    assert capsys.readouterr().err == ""


def test_the_text_read_in_chunks_is_the_text_read_at_once(store: Path) -> None:
    seen: list[tuple[int, int]] = []
    with SessionStore(store, readonly=True) as st:
        whole = maintain.text_bytes(st._conn)
        chunked = maintain.text_bytes(st._conn, lambda done, total: seen.append((done, total)))
    assert chunked == whole
    assert seen[-1] == (60, 60) and [d for d, _ in seen] == sorted({d for d, _ in seen})


def test_status_on_a_terminal_redraws_one_line(store: Path) -> None:
    """On a terminal the text's bar is redrawn in place, and the result on stdout
    (not a terminal here) holds no progress."""
    import os
    import pty
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from hermes_fts.cli import admin, main\n"
        "from hermes_fts.index import maintain\n"
        "admin.STATUS_PROGRESS_BYTES = 0\n"
        "maintain.TEXT_CHUNK_IDS = 7\n"
        "sys.exit(main(['--db', sys.argv[1], 'status']))\n"
    )
    leader, follower = pty.openpty()
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "-c", code, str(store)],
        stdout=subprocess.PIPE,
        stderr=follower,
        env={**os.environ, "PYTHONPATH": str(root)},
        timeout=120,
    )
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    assert done.returncode == 0 and b"Measuring" not in done.stdout
    text = seen.decode()
    # each redraw clears the line first (\x1b[K): a shorter line leaves no tail
    assert text.count("\r\x1b[KMeasuring text") >= 2 and "60/60 ids" in text, repr(text)
    assert text.rstrip().endswith("Measuring the indexes…")
