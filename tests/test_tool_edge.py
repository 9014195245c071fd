"""Edge cases of session_search and the CLI found in QA; each test pins one fixed bug.

Bad ``--db`` paths (a folder, a non-SQLite file, a SQLite file that is not a
session store) are clear errors with a non-zero exit and leave the file as it
was; blank positional arguments are refused; out-of-range message ids are a
plain error payload; sessions in a ``parent_session_id`` cycle stay browsable.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from _support import other_application_db
from _tool_fixtures import T0, assert_error, chat, conversation, open_store

from hermes_fts import cli
from hermes_fts.store import SessionStore
from hermes_fts.tool import session_search

SUBCOMMANDS = [
    ["search", "deploy"],
    ["read", "s1"],
    ["scroll", "s1", "3"],
    ["browse"],
    ["status"],
    ["sync"],
    ["optimize-storage", "--yes", "--no-vacuum"],
    ["bench", "--repeats", "1", "--per-band", "1"],
]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("NO_COLOR", raising=False)
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


@pytest.fixture
def db(home: Path) -> Path:
    path = home / "state.db"
    s = open_store(path)
    conversation(s, "s_en", [("user", "plan the database migration"), ("assistant", "ok")])
    conversation(s, "s_long", chat(12, "long"), start=T0 + 100)
    s.close()
    return path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


# --------------------------------------------------------------------------- --db that is not a store


@pytest.mark.parametrize("argv", SUBCOMMANDS, ids=lambda a: a[0])
def test_db_that_is_a_directory_is_a_clear_error(home, tmp_path, capsys, argv):
    folder = tmp_path / "folder"
    folder.mkdir()
    code, _out, err = run_cli([*argv, "--db", str(folder)], capsys)
    assert code == 2
    assert "directory" in err and "--db" in err and "Traceback" not in err
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("argv", SUBCOMMANDS, ids=lambda a: a[0])
def test_db_that_is_not_sqlite_is_a_clear_error_and_untouched(home, tmp_path, capsys, argv):
    bogus = tmp_path / "notes.db"
    bogus.write_bytes(b"these are plain notes, not a database\n" * 40)
    before = digest(bogus)
    code, _out, err = run_cli([*argv, "--db", str(bogus)], capsys)
    assert code == 2
    assert "not a SQLite database" in err and "--db" in err
    assert digest(bogus) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "notes.db"]


@pytest.mark.parametrize("argv", SUBCOMMANDS, ids=lambda a: a[0])
def test_db_of_another_application_is_refused_and_untouched(home, tmp_path, capsys, argv):
    other = other_application_db(tmp_path / "other.db")
    before = digest(other)
    code, _out, err = run_cli([*argv, "--db", str(other)], capsys)
    assert code == 2
    assert "not a Hermes session store" in err and "--db" in err
    assert digest(other) == before
    conn = sqlite3.connect(other)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    conn.close()
    assert tables == {"notes"}


def test_empty_db_file_is_refused(home, tmp_path, capsys):
    empty = tmp_path / "empty.db"
    empty.touch()
    code, _out, err = run_cli(["browse", "--db", str(empty)], capsys)
    assert code == 2 and "empty" in err
    assert empty.stat().st_size == 0


def test_default_store_that_is_a_directory_is_a_clear_error(home, capsys):
    (home / "state.db").mkdir()
    for argv in (["browse"], ["search", "x", "--json"], ["status"], ["sync"]):
        code, out, err = run_cli(argv, capsys)
        assert code == 2, argv
        # With --json the error is the one JSON document on stdout (issue 14).
        text = json.loads(out)["error"] if "--json" in argv else err
        assert "directory" in text, argv


def test_sync_does_not_create_a_missing_store(home, capsys):
    code, _out, err = run_cli(["sync"], capsys)
    assert code == 2 and "no session store" in err
    assert not (home / "state.db").exists()
    code, _out, err = run_cli(["sync", "--db", str(home / "nope.db")], capsys)
    assert code == 2 and "no session store" in err
    assert not (home / "nope.db").exists()


def test_corrupt_store_is_an_error_not_a_traceback(home, tmp_path, capsys):
    broken = tmp_path / "broken.db"
    broken.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4000)
    before = digest(broken)
    code, _out, err = run_cli(["status", "--db", str(broken)], capsys)
    assert code != 0 and err.startswith("Error:") and "--db" in err
    assert digest(broken) == before


def test_valid_store_still_works(db, capsys):
    code, out, _err = run_cli(["read", "s_en", "--db", str(db), "--json"], capsys)
    assert code == 0 and json.loads(out)["session_id"] == "s_en"
    assert run_cli(["status", "--db", str(db)], capsys)[0] == 0
    assert run_cli(["sync", "--db", str(db)], capsys)[0] == 0


# --------------------------------------------------------------------------- blank arguments


@pytest.mark.parametrize("ref", ["", "   ", "@session:", "@session:  "])
@pytest.mark.parametrize("as_json", [False, True])
def test_read_with_blank_session_is_refused(db, capsys, ref, as_json):
    argv = ["read", ref, "--db", str(db)] + (["--json"] if as_json else [])
    code, out, err = run_cli(argv, capsys)
    assert code == 2
    # With --json the error is the one JSON document on stdout (issue 14).
    text = json.loads(out)["error"] if as_json else err
    assert "session" in text and "browse" in text
    assert (err if as_json else out) == ""


@pytest.mark.parametrize("query", ["", "   "])
@pytest.mark.parametrize("as_json", [False, True])
def test_search_with_blank_query_is_refused(db, capsys, query, as_json):
    argv = ["search", query, "--db", str(db)] + (["--json"] if as_json else [])
    code, out, err = run_cli(argv, capsys)
    assert code == 2
    # With --json the error is the one JSON document on stdout (issue 14).
    text = json.loads(out)["error"] if as_json else err
    assert "QUERY" in text and "browse" in text
    assert (err if as_json else out) == ""


# --------------------------------------------------------------------------- tool edge cases


@pytest.mark.parametrize("anchor", [10**30, -(10**30), 2**63, str(10**25)])
def test_scroll_anchor_out_of_range_is_a_plain_error(db, anchor):
    from hermes_fts.store import SessionStore

    store = SessionStore(db)
    try:
        out = session_search(store, session_id="s_long", around_message_id=anchor)
    finally:
        store.close()
    assert_error(out, "around_message_id", "out of range")
    assert "session_search failed" not in out["error"]


def test_scroll_anchor_at_int64_edge_is_not_found(db):
    from hermes_fts.store import SessionStore

    store = SessionStore(db)
    try:
        out = session_search(store, session_id="s_long", around_message_id=2**63 - 1)
    finally:
        store.close()
    assert_error(out, "not in session_id s_long")


def test_browse_lists_sessions_in_a_parent_cycle(home):
    s = open_store(home / "state.db")
    try:
        conversation(s, "loop", [("user", "self parent")], start=T0)
        conversation(s, "a", [("user", "alpha")], start=T0 + 10)
        conversation(
            s, "b", [("user", "beta")], start=T0 + 20, parent="a", end_reason="compression"
        )
        conversation(s, "plain", [("user", "plain")], start=T0 + 30)
        s._conn.execute("UPDATE sessions SET parent_session_id = 'loop' WHERE id = 'loop'")
        s._conn.execute("UPDATE sessions SET parent_session_id = 'b' WHERE id = 'a'")
        out = session_search(s, limit=10)
        assert out["success"] is True
        listed = [r["session_id"] for r in out["results"]]
        assert "plain" in listed and "loop" in listed
        # the a <-> b cycle is one conversation, listed once
        assert len({"a", "b"} & set(listed)) == 1
        assert len(listed) == 3
        # the current session's cycle is still left out
        out = session_search(s, limit=10, current_session_id="loop")
        assert "loop" not in [r["session_id"] for r in out["results"]]
    finally:
        s.close()


# --------------------------------------------------------------------------- failures in use


def _locked_error(tmp_path: Path) -> sqlite3.Error:
    """The real error SQLite gives a reader while another connection holds EXCLUSIVE."""
    path = tmp_path / "journal.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA journal_mode = DELETE")
    holder.execute("CREATE TABLE t(x)")
    holder.execute("BEGIN EXCLUSIVE")
    reader = sqlite3.connect(path, timeout=0)
    try:
        reader.execute("SELECT * FROM t").fetchall()
    except sqlite3.Error as exc:
        return exc
    finally:
        reader.close()
        holder.close()
    raise AssertionError("the reader was not refused")


def _readonly_error(tmp_path: Path) -> sqlite3.Error:
    path = tmp_path / "ro.db"
    sqlite3.connect(path).execute("CREATE TABLE t(x)").connection.close()
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        conn.execute("INSERT INTO t VALUES (1)")
    except sqlite3.Error as exc:
        return exc
    finally:
        conn.close()
    raise AssertionError("the write was not refused")


def test_a_store_failure_in_use_names_its_cause_not_the_arguments(db, tmp_path, monkeypatch):
    # Regression: a lock met while searching was reported as "retry with
    # simpler arguments", which sends a model rewriting a sound query.
    store = open_store(db)
    try:
        error = _locked_error(tmp_path)

        def locked(*_args, **_kwargs):
            raise error

        monkeypatch.setattr(store, "search", locked)
        payload = session_search(store, query="migration")
        assert_error(payload, "could not read the store", "locked by another process", "try again")
        assert "simpler arguments" not in payload["error"]
    finally:
        store.close()


def test_failure_causes_of_real_sqlite_errors(tmp_path):
    from hermes_fts._store_problems import failure_cause

    assert "locked by another process" in failure_cause(_locked_error(tmp_path))
    assert "cannot be written" in failure_cause(_readonly_error(tmp_path))
    broken = tmp_path / "broken.db"
    broken.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4000)
    try:
        sqlite3.connect(broken).execute("SELECT * FROM sqlite_master").fetchall()
    except sqlite3.Error as exc:
        assert "damaged" in failure_cause(exc)
    else:
        raise AssertionError("the broken file was read")
    assert failure_cause(ValueError("a bug of ours")) is None
    assert failure_cause(sqlite3.OperationalError("no such column: x")) is None


@pytest.mark.parametrize(
    "args", [{"query": "deploy"}, {}, {"session_id": "c1"}], ids=["search", "browse", "read"]
)
def test_a_closed_store_is_named_not_blamed_on_the_query(home, args):
    """A caller that closed its store got "retry with plain words", which cannot help."""
    s = open_store(home / "state.db")
    conversation(s, "c1", [("user", "deploy the rocket")], start=T0)
    s.close()
    payload = session_search(s, **args)
    assert_error(payload, "could not read the store: the store was closed", "open it again")
    assert "plain words" not in payload["error"]


def test_browse_lists_a_parent_cycle_no_session_of_which_was_compressed(home):
    s = open_store(home / "state.db")
    try:
        conversation(s, "c1", [("user", "one side")], start=T0)
        conversation(s, "c2", [("user", "other side")], start=T0 + 10)
        conversation(s, "helper", [("user", "delegated")], start=T0 + 20, parent="c1")
        s._conn.execute("UPDATE sessions SET parent_session_id = 'c2' WHERE id = 'c1'")
        s._conn.execute("UPDATE sessions SET parent_session_id = 'c1' WHERE id = 'c2'")
        found = session_search(s, query="side", limit=10)
        assert [r["session_id"] for r in found["results"]] == ["c2"]
        out = session_search(s, limit=10)
        # the cycle is one conversation, listed once as its latest session; the
        # child hanging off it is still a delegation, not listed
        assert [(r["session_id"], r.get("lineage_root_id")) for r in out["results"]] == [
            ("c2", "c1")
        ]
        out = session_search(s, limit=10, current_session_id="c1")
        assert out["results"] == []
    finally:
        s.close()


def test_a_time_of_infinity_in_the_store_is_answered_as_json(db, capsys):
    """A REAL column holds infinity (the sqlite3 shell's ``9e999``): the message's
    timestamp came out as ``Infinity``, which no JSON parser reads, in the tool's answer
    and in the command line's ``--json``."""
    script = (
        "UPDATE messages SET timestamp = 9e999 WHERE id = (SELECT min(id) FROM messages "
        "WHERE session_id = 's_en'); UPDATE messages SET timestamp = -9e999 WHERE id = "
        "(SELECT max(id) FROM messages WHERE session_id = 's_en');"
    )
    subprocess.run([str(shutil.which("sqlite3")), str(db), script], check=True, timeout=60)

    def strict(text: str) -> object:
        def refuse(constant: str) -> object:
            raise AssertionError(f"{constant} is no JSON")

        return json.loads(text, parse_constant=refuse)

    with SessionStore(db, readonly=True) as store:
        for args in (
            {"session_id": "s_en"},
            {"session_id": "s_en", "around_message_id": 1},
            {"query": "migration"},
        ):
            out = session_search(store, **args)
            assert out["success"] is True, out
            shown = strict(json.dumps(out))
            found = shown["results"][0]["messages"] if "query" in args else shown["messages"]
            assert [m["timestamp"] for m in found] == ["inf", "-inf"], found
    code, out, _err = run_cli(["--db", str(db), "read", "s_en", "--json"], capsys)
    assert code == 0
    assert [m["timestamp"] for m in strict(out)["messages"]] == ["inf", "-inf"]


# --------------------------------------------------------------------------- a store changing under a search


@pytest.mark.parametrize("detail", [None, "index"])
def test_a_hit_deleted_after_the_search_found_it_is_left_out_and_said(home, monkeypatch, detail):
    """Hermes deleting a session between the search and the read of its hit gave a
    result with no messages and a link to nothing (a compact or index one), or, when
    its view failed, a page one short with nothing said."""
    path = home / "state.db"
    store = open_store(path)
    for n, sid in enumerate(("s_a", "s_b", "s_c")):
        turns = [("user", f"deploy the service {sid}"), ("assistant", "deployed")]
        conversation(store, sid, turns, start=T0 + 100 * n)
    search = store.search

    def then_deleted(*args, **kwargs):
        found = search(*args, **kwargs)
        other = sqlite3.connect(path)  # Hermes' own delete, from its process
        with other:
            other.execute("DELETE FROM messages WHERE session_id = 's_b'")
            other.execute("DELETE FROM sessions WHERE id = 's_b'")
        other.close()
        return found

    try:
        monkeypatch.setattr(store, "search", then_deleted)
        payload = session_search(store, query="deploy", detail=detail)
    finally:
        store.close()
    json.dumps(payload)
    shown = [r["session_id"] for r in payload["results"]]
    assert shown == ["s_c", "s_a"], payload
    assert payload["count"] == len(payload["results"]) == 2
    assert all(r["messages"] for r in payload["results"] if r["detail"] != "index"), payload
    assert any(
        n.startswith("1 result(s) left out: the message found was deleted")
        for n in payload["query_notes"]
    ), payload
