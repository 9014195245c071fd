"""``hermes-fts read`` of a very long session (a gateway chat of many thousand
messages): the first 20 and the last 10 are shown, read without holding the
whole session in memory; ``--full`` still shows every message."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from hermes_fts.cli import history, main, output
from hermes_fts.store import SessionStore
from hermes_fts.tool import Call, run_call

MESSAGES = 30_000


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("long") / "state.db"
    with SessionStore(path) as store:
        store.add_session("chat", "telegram", title="a long chat")
        store.add_messages(
            {
                "session_id": "chat",
                "role": "user" if i % 2 else "assistant",
                "content": f"message {i} of the chat about the deploy " + "details " * 10,
                "timestamp": 1_700_000_000.0 + i,
            }
            for i in range(MESSAGES)
        )
        store.add_session("short", "cli")
        store.add_messages(
            {"session_id": "short", "role": "user", "content": f"short {i}", "timestamp": 1.0 + i}
            for i in range(25)
        )
    return path


def _ids(db: Path, session: str) -> list[int]:
    with SessionStore(db, readonly=True) as store:
        rows = store._conn.execute(
            "SELECT id FROM messages WHERE session_id = ? ORDER BY id", (session,)
        )
        return [row[0] for row in rows]


def test_read_of_a_long_session_does_not_hold_it_whole(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every message was read and decoded to show 30: 155 MB resident for a session of
    150,000 messages (1 s), growing with the session; now what is shown."""
    ids = _ids(db, "chat")
    tracemalloc.start()
    try:
        assert main(["--db", str(db), "read", "chat"]) == 0
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    out = capsys.readouterr().out
    assert f"Session has {MESSAGES:,} messages; showing the first 20 and the last 10" in out
    shown = [int(n) for n in re.findall(r"^    #(\d+) ", out, flags=re.M)]
    assert shown == ids[:20] + ids[-10:]
    # The whole session as rows is tens of MB (each message a dict of every column).
    assert peak < 8_000_000, peak


@pytest.mark.parametrize("session", ["chat", "short"])
def test_read_json_counts_every_message_and_shows_the_ends(
    db: Path, capsys: pytest.CaptureFixture[str], session: str
) -> None:
    ids = _ids(db, session)
    assert main(["--db", str(db), "--json", "read", session]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["message_count"] == len(ids)
    assert doc["truncated"] is (len(ids) > 30)
    expected = ids[:20] + ids[-10:] if len(ids) > 30 else ids
    assert [m["id"] for m in doc["messages"]] == expected


def test_read_full_still_shows_every_message(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ids = _ids(db, "short")
    assert main(["--db", str(db), "--json", "read", "short", "--full"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [m["id"] for m in doc["messages"]] == ids and doc["truncated"] is False


@pytest.mark.parametrize("as_json", [False, True])
def test_read_full_of_a_long_session_shows_its_progress(
    db: Path, capsys: pytest.CaptureFixture[str], as_json: bool
) -> None:
    """`read --full` of a session of 400,000 messages printed nothing for seconds while it
    read every message: it now shows a progress line on stderr, as the other long steps
    do (JSON events with --json), and stdout stays the session alone."""
    ids = _ids(db, "chat")
    assert main(["--db", str(db), *(["--json"] if as_json else []), "read", "chat", "--full"]) == 0
    captured = capsys.readouterr()
    if as_json:
        assert [m["id"] for m in json.loads(captured.out)["messages"]] == ids
        events = [json.loads(line) for line in captured.err.splitlines()]
        assert events and all(e["event"] == "progress" and e["phase"] == "read" for e in events)
        assert (events[-1]["done"], events[-1]["total"]) == (MESSAGES, MESSAGES)
    else:
        shown = [int(n) for n in re.findall(r"^    #(\d+) ", captured.out, flags=re.M)]
        assert shown == ids and "Reading" not in captured.out
        last = captured.err.splitlines()[-1]
        assert last.startswith("Reading") and f"{MESSAGES:,}/{MESSAGES:,} messages" in last
    # A short session is read at once: nothing on stderr.
    assert main(["--db", str(db), "read", "short", "--full"]) == 0
    assert capsys.readouterr().err == ""


def test_read_full_writes_each_message_as_it_is_read(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`read --full` of a session of 400,000 messages held them all (400 MB), and
    printed them only after its progress said 100%: seconds more with stdout a file.
    Each message is now printed as it is read, so the progress ends the output."""
    ids = _ids(db, "chat")
    out = tmp_path / "out.txt"
    with out.open("w", encoding="utf-8") as stream:
        # One file for both streams keeps the order they were written in.
        monkeypatch.setattr("sys.stdout", stream)
        monkeypatch.setattr("sys.stderr", stream)
        tracemalloc.start()
        try:
            assert main(["--db", str(db), "read", "chat", "--full"]) == 0
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    text = out.read_text(encoding="utf-8")
    assert [int(n) for n in re.findall(r"^    #(\d+) ", text, flags=re.M)] == ids
    lines = text.splitlines()
    last = [n for n, line in enumerate(lines) if f"{MESSAGES:,}/{MESSAGES:,} messages" in line]
    assert last == [len(lines) - 1], lines[-3:]
    assert peak < 8_000_000, peak


def test_read_full_json_is_written_as_it_is_read(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--json read --full` held every message and then the encoded document: the
    document is now written message by message, the same JSON as the tool's answer."""
    ids = _ids(db, "chat")
    out, err = tmp_path / "out.json", tmp_path / "err.txt"
    with out.open("w", encoding="utf-8") as stdout, err.open("w", encoding="utf-8") as stderr:
        monkeypatch.setattr("sys.stdout", stdout)
        monkeypatch.setattr("sys.stderr", stderr)
        tracemalloc.start()
        try:
            assert main(["--db", str(db), "--json", "read", "chat", "--full"]) == 0
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    doc = json.loads(out.read_text(encoding="utf-8"))
    with SessionStore(db, readonly=True) as store:
        whole = run_call(store, Call.parse("chat", None, None, full=True))
    assert doc == whole and [m["id"] for m in doc["messages"]] == ids
    events = [json.loads(line) for line in err.read_text(encoding="utf-8").splitlines()]
    assert (events[-1]["done"], events[-1]["total"]) == (MESSAGES, MESSAGES)
    assert peak < 8_000_000, peak


@pytest.mark.skipif(shutil.which("sqlite3") is None, reason="needs the sqlite3 shell")
@pytest.mark.parametrize("as_json", [False, True])
def test_read_full_counts_the_messages_it_shows_while_another_process_writes(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    as_json: bool,
) -> None:
    """`read --full` counted the session's messages, then read them: a message another
    process (Hermes, here the sqlite3 shell) wrote in between was shown, one more than the
    count the header gave (`--json`: message_count); seen with Hermes writing the session."""
    db = tmp_path / "state.db"
    with SessionStore(db) as store:
        store.add_session("live", "cli")
        for i in range(5):
            store.add_message("live", "user", f"message {i}")
    # The other process writes as the header goes out, before the first message does.
    owner, name = (output.JsonList, "begin") if as_json else (history, "_print_session_header")
    header = getattr(owner, name)

    def write_then_header(*args: Any) -> None:
        subprocess.run(
            ["sqlite3", str(db), "INSERT INTO messages(session_id, role, content, timestamp)"
             " VALUES ('live', 'user', 'late', 2e9);"],
            check=True,
        )  # fmt: skip
        header(*args)

    monkeypatch.setattr(owner, name, write_then_header)
    assert main(["--db", str(db), *(["--json"] if as_json else []), "read", "live", "--full"]) == 0
    out = capsys.readouterr().out
    if as_json:
        doc = json.loads(out)
        assert doc["message_count"] == len(doc["messages"]) == 5, doc
    else:
        shown = re.findall(r"^    #(\d+) ", out, flags=re.M)
        assert "5 messages" in out.splitlines() and len(shown) == 5, out
