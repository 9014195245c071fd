"""The public contract at its edges: signatures, time bounds at the ends of their
range, what ``sync`` reports, integrity checks on read-only stores, lone
surrogates in stored text and in arguments.  Each through the API, the CLI
(``--json``, in a subprocess) and the ``session_search`` tool."""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import pydoc
import shutil
import sqlite3
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from _support import needs_extension
from _tool_fixtures import T0, conversation, open_store

from hermes_fts.store import SessionStore
from hermes_fts.tool import session_search

pytestmark = needs_extension


def cli(*args: str, tz: str | None = None) -> tuple[int, Any]:
    """``hermes-fts ARGS --json`` in a subprocess: its exit status and its JSON document."""
    env = {**os.environ, **({"TZ": tz} if tz else {})}
    proc = subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", *args, "--json"],
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert proc.stdout, proc.stderr.decode("utf-8", "replace")
    return proc.returncode, json.loads(proc.stdout.decode("utf-8"))  # strict UTF-8


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    path = tmp_path / "state.db"
    store = open_store(path)
    conversation(store, "s1", [("user", "deploy the 服务端 today"), ("assistant", "ok")])
    store.close()
    return path


# --------------------------------------------------------------------------- signature


def test_search_messages_shows_the_parameters_of_search() -> None:
    rows = inspect.signature(SessionStore.search_messages)
    full = inspect.signature(SessionStore.search)
    assert list(rows.parameters.values()) == list(full.parameters.values())
    assert rows.return_annotation == "list[dict[str, Any]]"
    shown = pydoc.render_doc(SessionStore.search_messages, renderer=pydoc.plaintext)
    assert "exclude_session_ids" in shown and "**kwargs" not in shown


def test_search_messages_passes_every_argument_on(db: Path) -> None:
    with SessionStore(db) as store:
        kw: dict[str, Any] = {"role_filter": "assistant", "sort": "oldest", "fields": ["id"]}
        assert store.search_messages("ok", **kw) == store.search("ok", **kw).rows != []
        assert store.search_messages("ok", None, None, "user") == []
        assert store.search_messages("deploy", after=T0 + 1) == []
        assert store.search_messages("deploy", route="like_scan", before=T0 + 1)
        assert store.search_messages("deploy", exclude_session_ids=["s1"]) == []
        assert store.search_messages("deploy", archived_only_session_ids=["s1"]) == []


# --------------------------------------------------------------------------- time bounds


@pytest.mark.parametrize("huge", [10**309, -(10**400), 10**5000], ids=["e309", "-e400", "e5000"])
def test_a_time_bound_past_any_float_is_a_range_error(db: Path, huge: int) -> None:
    with SessionStore(db) as store:
        with pytest.raises(ValueError, match="search after is out of range"):
            store.search("deploy", after=huge)
        payload = session_search(store, query="deploy", before=huge)
    assert payload["success"] is False
    assert payload["error"].startswith("before is out of range"), payload


@pytest.mark.parametrize("bound", ["after", "before", "now"])
@pytest.mark.parametrize("infinite", [float("inf"), float("-inf")], ids=["inf", "-inf"])
def test_an_infinite_time_bound_is_a_range_error(db: Path, bound: str, infinite: float) -> None:
    """after=inf answered nothing and before=inf everything, with no word said,
    where the tool refuses either as out of range."""
    with SessionStore(db) as store:
        with pytest.raises(ValueError, match=f"search {bound} is out of range"):
            store.search("deploy", **{bound: infinite})
        payload = session_search(store, query="deploy", **{bound: infinite})
    assert payload["success"] is False
    assert payload["error"].startswith(f"{bound} is out of range"), payload


def test_an_infinite_message_time_is_refused(db: Path) -> None:
    with SessionStore(db) as store:
        with pytest.raises(ValueError, match="timestamp is out of range"):
            store.add_message("s1", role="user", content="later", timestamp=float("inf"))
        assert store.count_messages("s1") == 2


@pytest.mark.parametrize("text", ["1e309", "9" * 400, "-" + "9" * 400, "9" * 400 + "d"])
def test_the_cli_says_a_huge_bound_is_out_of_range(db: Path, text: str) -> None:
    code, payload = cli("search", "deploy", "--db", str(db), f"--after={text}")
    assert code != 0 and payload["success"] is False
    assert payload["error"].startswith("after is out of range"), payload


@pytest.mark.parametrize("tz", ["UTC", "America/New_York", "Asia/Tokyo"])
def test_the_first_and_last_iso_dates_are_accepted(db: Path, tz: str) -> None:
    """datetime.timestamp() refuses 0001-01-01 (and 9999-12-31 east of UTC) in
    local time; both are ISO dates, so they bound a search like any other."""
    first, last = "0001-01-01", "9999-12-31T23:59:59"
    code, payload = cli(
        "search", "deploy", "--db", str(db), "--after", first, "--before", last, tz=tz
    )
    assert code == 0 and payload["success"] is True, payload
    zone = ZoneInfo(tz)
    assert payload["filters"] == {
        "after": datetime(1, 1, 1, tzinfo=zone).timestamp(),
        "before": datetime(9999, 12, 31, 23, 59, 59, tzinfo=zone).timestamp(),
    }
    assert [r["session_id"] for r in payload["results"]] == ["s1"]


def test_the_tool_takes_the_first_iso_date(db: Path) -> None:
    with SessionStore(db) as store:
        payload = session_search(store, query="deploy", after="0001-01-01", before="0001-01-02")
    assert payload["success"] is True and payload["results"] == []
    assert payload["filters"]["before"] - payload["filters"]["after"] == 86400


# --------------------------------------------------------------------------- sync


def shell_rows(db: Path, count: int, first: int) -> None:
    """``count`` messages written by the sqlite3 shell (no extension: they wait in
    the pending table until a process with the extension applies them)."""
    sql = (
        f"WITH RECURSIVE n(i) AS (SELECT {first} UNION ALL SELECT i + 1 FROM n "
        f"WHERE i < {first + count - 1}) INSERT INTO messages(session_id, role, content, "
        "timestamp) SELECT 's1', 'user', '外部写入 row ' || i, 1700000100 + i FROM n;"
    )
    subprocess.run([shutil.which("sqlite3") or "sqlite3", str(db), sql], check=True)


@pytest.mark.skipif(shutil.which("sqlite3") is None, reason="needs the sqlite3 shell")
def test_sync_reports_the_rows_it_applied(db: Path) -> None:
    shell_rows(db, 50, 1)
    pending = sqlite3.connect(db).execute("SELECT COUNT(*) FROM hermes_fts_cjk_pending")
    assert pending.fetchone()[0] == 50
    code, payload = cli("sync", "--db", str(db))
    assert code == 0 and payload == {"success": True, "applied": 50, "pending": 0}
    assert cli("sync", "--db", str(db))[1] == {"success": True, "applied": 0, "pending": 0}
    shell_rows(db, 7, 51)
    with SessionStore(db) as store:  # the open applies them; the first sync says so
        assert store.index_state()["cjk_pending"] == 0
        assert store.sync() == 7
        assert store.sync() == 0
        assert len(store.search_messages("外部写入", limit=100, route="fts_cjk")) == 57


# --------------------------------------------------------------------------- integrity


def test_integrity_check_never_reports_a_read_only_open_as_damage(db: Path) -> None:
    before = digest(db)
    with SessionStore(db, readonly=True) as store:
        with pytest.raises(PermissionError, match="open read-only.*readonly=False"):
            store.integrity_check()
    assert digest(db) == before
    with SessionStore(db) as store:
        checked = store.integrity_check()
    assert checked and all(result is None for result in checked.values()), checked


# --------------------------------------------------------------------------- lone surrogates

HERMES_SCHEMA = """
CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, model TEXT,
    parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL, title TEXT);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,
    role TEXT NOT NULL, content TEXT, tool_calls TEXT, tool_name TEXT, timestamp REAL NOT NULL);
"""


def _call(arguments: str) -> str:
    return json.dumps(
        [{"id": "c1", "type": "function", "function": {"name": "weather", "arguments": arguments}}]
    )


# What Hermes stores when a model's output or a tool's result held a lone
# surrogate: json.dumps escapes it as \ud800 (inside a tool call's arguments,
# a JSON string holding JSON, the escape is escaped once more).
LONE_ROWS = [
    ("assistant", "checking the forecast", _call('{"city": "zz\\ud800zz"}')),
    ("assistant", "checking again", _call('{"city": "yy\ud800yy"}')),
    ("user", "\x00json:" + json.dumps([{"type": "text", "text": "forecast \udfff please"}]), None),
    ("tool", json.dumps({"result": "forecast \ud800 sunny"}), None),
]
ESCAPED_TEXT = ("forecast \\udfff please", "forecast \\ud800 sunny")
ROUTE = {"indexed": "fts_cjk", "like": "like_scan"}  # the CJK index answers Latin words


@pytest.fixture(params=["indexed", "like"])
def lone_db(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A store holding the rows above: written by SessionStore (indexed), or by a
    writer without hermes-fts (no indexes of ours: the LIKE scan answers).  The
    folder is named after the kind."""
    path = tmp_path / request.param / "state.db"
    path.parent.mkdir()
    if request.param == "indexed":
        store = open_store(path)
        store.add_session("s1", "cli", started_at=T0)
        for i, (role, content, calls) in enumerate(LONE_ROWS):
            store.add_message("s1", role, content, tool_calls=calls, timestamp=T0 + i)
        store.close()
    else:
        conn = sqlite3.connect(path)
        conn.executescript(HERMES_SCHEMA)
        conn.execute("INSERT INTO sessions VALUES ('s1', 'cli', 'm', NULL, ?, NULL, NULL)", [T0])
        conn.executemany(
            "INSERT INTO messages(session_id, role, content, tool_calls, timestamp) "
            "VALUES ('s1', ?, ?, ?, ?)",
            [(*row, T0 + i) for i, row in enumerate(LONE_ROWS)],
        )
        conn.commit()
        conn.close()
    return path


def utf8_json(value: Any) -> str:
    """``value`` as the UTF-8 JSON a model or a script receives (raises on a lone surrogate)."""
    return json.dumps(value, ensure_ascii=False).encode("utf-8").decode("utf-8")


def test_stored_lone_surrogates_read_back_as_their_escapes(lone_db: Path) -> None:
    with SessionStore(lone_db, readonly=True) as store:
        for term in ("zz", "yy", "forecast"):
            result = store.search(term, limit=100)
            assert result.rows and result.route == ROUTE[lone_db.parent.name], term
            utf8_json(result.rows)
        snippets = utf8_json([r["snippet"] for t in ("zz", "yy") for r in store.search_messages(t)])
        # Both hits of the term are marked; the escape between them stays as stored.
        for t in ("zz", "yy"):
            shown = f'weather(city=">>>{t}<<<\\ud800>>>{t}<<<")'
            assert json.dumps(shown)[1:-1] in snippets, snippets
        payloads = [
            session_search(store, query="forecast"),
            session_search(store, session_id="s1"),
            session_search(store, session_id="s1", around_message_id=2, window=5),
            session_search(store),
        ]
    for payload in payloads:
        assert payload["success"] is True, payload
        utf8_json(payload)
    read = utf8_json(payloads[1])
    for escape in ESCAPED_TEXT:
        assert json.dumps(escape)[1:-1] in read, read
    assert json.dumps('{"city": "zz\\ud800zz"}')[1:-1] in read


@pytest.mark.parametrize(
    "args",
    [["search", "forecast OR zz"], ["read", "s1"], ["scroll", "s1", "2"], ["browse"]],
    ids=["search", "read", "scroll", "browse"],
)
def test_the_cli_prints_stored_lone_surrogates_as_escapes(lone_db: Path, args: list[str]) -> None:
    code, payload = cli(*args, "--db", str(lone_db))
    assert code == 0 and payload["success"] is True, payload
    human = subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", *args, "--db", str(lone_db)],
        capture_output=True,
        env={**os.environ, "NO_COLOR": "1"},
        timeout=120,
    )
    assert human.returncode == 0, human.stderr.decode("utf-8", "replace")
    if args[0] != "browse":
        assert b"forecast \\udfff please" in human.stdout, human.stdout.decode()


SURROGATE_ARGS = [
    ("query", {"query": "forecast \ud800"}),
    ("session_id", {"session_id": "s\udc00"}),
    ("role_filter", {"query": "forecast", "role_filter": ["user", "to\ud800ol"]}),
    ("exclude_session_ids", {"query": "forecast", "exclude_session_ids": ["\udfff"]}),
    ("current_session_id", {"query": "forecast", "current_session_id": "\ud800"}),
    ("profile", {"session_id": "s1", "profile": "w\ud800rk"}),
    ("after", {"query": "forecast", "after": "2026\ud800"}),
]


@pytest.mark.parametrize(("name", "args"), SURROGATE_ARGS, ids=[n for n, _ in SURROGATE_ARGS])
def test_a_tool_argument_with_a_lone_surrogate_is_named_in_a_clear_error(
    lone_db: Path, name: str, args: dict[str, Any]
) -> None:
    with SessionStore(lone_db, readonly=True) as store:
        payload = session_search(store, **args)
    assert payload["success"] is False
    assert payload["error"].startswith(f"{name} holds a lone UTF-16 surrogate"), payload
    utf8_json(payload)


@pytest.mark.parametrize(
    "name", ["query", "role_filter", "source_filter", "exclude_sources", "exclude_session_ids"]
)
def test_an_api_argument_with_a_lone_surrogate_is_a_clear_error(lone_db: Path, name: str) -> None:
    args: dict[str, Any] = {"query": "forecast", name: ["ok", "x\ud800"]}
    if name == "query":
        args[name] = "forecast \udc80"
    with SessionStore(lone_db, readonly=True) as store:
        with pytest.raises(ValueError, match=f"^search {name} holds a lone UTF-16 surrogate"):
            store.search(**args)


@pytest.mark.parametrize(
    ("method", "args", "name"),
    [
        ("get_messages", ("s\ud800",), "session_id"),
        ("get_message_ends", ("s\ud800", 1, 1), "session_id"),
        ("get_messages_around", ("s\ud800", 1), "session_id"),
        ("get_messages_beyond", ("s\ud800", 1, 1), "session_id"),
        ("get_anchored_view", ("s\ud800", 1), "session_id"),
        ("get_anchor_summary", ("s\ud800", 1), "session_id"),
        ("count_messages", ("s\ud800",), "session_id"),
        ("session_preview", ("s\ud800",), "session_id"),
        ("first_message_id", ("s\ud800",), "session_id"),
        ("get_session", ("s\ud800",), "session_id"),
        ("find_session_by_title", ("t\ud800",), "title"),
        ("sessions_by_activity", (["cron", "x\ud800"],), "hidden_sources"),
    ],
)
def test_a_reader_argument_with_a_lone_surrogate_is_named(
    lone_db: Path, method: str, args: tuple[Any, ...], name: str
) -> None:
    # It failed in SQLite's binding, a UnicodeEncodeError that named no argument.
    kwargs = {"forward": True} if method == "get_messages_beyond" else {}
    with SessionStore(lone_db, readonly=True) as store:
        with pytest.raises(ValueError, match=f"^{name} holds a lone UTF-16 surrogate") as exc:
            getattr(store, method)(*args, **kwargs)
    assert not isinstance(exc.value, UnicodeError)


@pytest.mark.parametrize(
    "method",
    [
        "get_messages",
        "count_messages",
        "session_preview",
        "first_message_id",
        "get_session",
        "each_message",
        "get_message_ends",
        "get_messages_around",
    ],
)
@pytest.mark.parametrize("session_id", [b"s1", 5, None, ["s1"]])
def test_a_session_id_that_is_not_text_is_a_type_error_naming_it(
    db: Path, method: str, session_id: Any
) -> None:
    # b"s1" and 5 read as a session without messages (s1 has two), a list failed in
    # SQLite's binding naming no argument.
    args = {"get_message_ends": (1, 1), "get_messages_around": (1,)}.get(method, ())
    with SessionStore(db, readonly=True) as store:
        with pytest.raises(TypeError, match="^session_id must be text, not "):
            getattr(store, method)(session_id, *args)


def test_ending_a_session_by_an_id_that_is_not_text_is_refused(db: Path) -> None:
    with SessionStore(db) as store:
        with pytest.raises(TypeError, match="^session_id must be text, not bytes"):
            store.end_session(b"s1", "done")  # type: ignore[arg-type]
        assert store.get_session("s1")["ended_at"] is None  # type: ignore[index]


@pytest.mark.parametrize("reason", [5, b"done", None])
def test_ending_a_session_for_a_reason_that_is_not_text_is_refused(db: Path, reason: Any) -> None:
    # 5 and b"done" were stored as the reason, and None ended it with none
    with SessionStore(db) as store:
        with pytest.raises(TypeError, match="^end_reason must be text, not "):
            store.end_session("s1", reason)
        assert store.get_session("s1")["ended_at"] is None  # type: ignore[index]


@pytest.mark.parametrize(
    "call",
    [
        lambda s, db: s.status(progress=5),
        lambda s, db: s.optimize_storage(progress="bar"),
        lambda s, db: s.optimize_storage(sleep=None),
        lambda s, db: SessionStore(db, progress=5),
        lambda s, db: SessionStore(db, pause=None),
    ],
)
def test_a_callback_that_cannot_be_called_is_refused_naming_it(db: Path, call: Any) -> None:
    """status(progress=5) failed with "'int' object is not callable", naming no
    argument, and optimize_storage(progress="bar") did so once its run had begun."""
    with SessionStore(db) as store:
        before = store.status()
        with pytest.raises(TypeError, match=r"^(progress|pause|sleep) must be a function"):
            call(store, db)
        assert store.status()["indexes"] == before["indexes"]


@pytest.mark.parametrize(
    ("write", "name"),
    [
        (lambda s: s.add_session("s\ud800", "cli"), "id"),
        (lambda s: s.add_session("s2", "cli", title="t\udc80"), "title"),
        (lambda s: s.add_message("s1", "user", "x\ud800"), "content"),
        (lambda s: s.add_messages([{"session_id": "s1", "role": "user\ud800"}]), "role"),
        (
            lambda s: s.add_message("s1", "assistant", "", tool_calls=[{"a": "\ud800"}]),
            "tool_calls",
        ),
        (lambda s: s.update_message(1, content="z\ud800"), "content"),
        (lambda s: s.end_session("s1", "done\ud800"), "end_reason"),
    ],
)
def test_a_write_with_a_lone_surrogate_is_named_and_writes_nothing(
    tmp_path: Path, write: Any, name: str
) -> None:
    # SQLite's binding failed with a UnicodeEncodeError that named no column.
    with SessionStore(tmp_path / "state.db") as store:
        store.add_session("s1", "cli")
        store.add_message("s1", "user", "kept")
        with pytest.raises(ValueError, match=f"^{name} holds a lone UTF-16 surrogate"):
            write(store)
        assert [m["content"] for m in store.get_messages("s1")] == ["kept"]
        assert store.get_session("s1")["end_reason"] is None
        assert store.get_session("s2") is None


def test_a_bulk_write_names_a_lone_surrogate_in_a_later_row_and_writes_no_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every non-ASCII value was encoded once more before SQLite bound it, only to
    # find a lone surrogate: now only a failed bind looks, at the row it failed on.
    from hermes_fts import writes

    looked: list[str] = []
    real = writes.check_text
    monkeypatch.setattr(writes, "check_text", lambda v, n: (looked.append(n), real(v, n)))
    texts = ["部署到东京", "サーバー", "x\ud800y", "never reached"]
    with SessionStore(tmp_path / "state.db") as store:
        store.add_session("s1", "cli", title="旅行")
        store.add_messages([{"session_id": "s1", "role": "user", "content": "已保存"}])
        store.update_message(1, content="已保存，改过")
        assert looked == []  # nothing bound failed, nothing was looked at again
        rows = ({"session_id": "s1", "role": "user", "content": t} for t in texts)
        with pytest.raises(ValueError, match="^content holds a lone UTF-16 surrogate"):
            store.add_messages(rows)
        assert [m["content"] for m in store.get_messages("s1")] == ["已保存，改过"]


@pytest.mark.parametrize(
    ("write", "name"),
    [
        (lambda s: s.add_message("s1", "user", "deploy", timestamp="yesterday"), "timestamp"),
        (
            lambda s: s.add_messages(
                [{"session_id": "s1", "role": "user", "content": "deploy", "timestamp": "1e9"}]
            ),
            "timestamp",
        ),
        (lambda s: s.add_message("s1", "user", "deploy", timestamp=datetime.now()), "timestamp"),
        (lambda s: s.update_message(1, timestamp="later"), "timestamp"),
        (lambda s: s.add_session("s2", "cli", started_at="today"), "started_at"),
        (lambda s: s.add_session("s2", "cli", ended_at=True), "ended_at"),
    ],
)
def test_a_time_that_is_not_a_number_is_refused_by_name_and_writes_nothing(
    tmp_path: Path, write: Any, name: str
) -> None:
    # Bound as given, "yesterday" sat in the REAL column: the message sorted as the
    # newest of all and a search with after= or before= silently left it out.
    with SessionStore(tmp_path / "state.db") as store:
        store.add_session("s1", "cli", started_at=1_700_000_000)
        store.add_message("s1", "user", "deploy kept", timestamp=1_700_000_000.5)
        with pytest.raises(TypeError, match=f"^{name} must be a Unix time in seconds"):
            write(store)
        assert [m["timestamp"] for m in store.get_messages("s1")] == [1_700_000_000.5]
        assert store.get_session("s2") is None
        assert [r["id"] for r in store.search("deploy", after=0).rows] == [1]


@pytest.mark.parametrize(
    ("write", "said"),
    [
        (lambda s: s.add_message("gone", "user", "hi"), "session_id 'gone' names no session"),
        (
            lambda s: s.add_messages(
                [
                    {"session_id": "s1", "role": "user", "content": "first"},
                    {"session_id": "gone", "role": "user", "content": "second"},
                ]
            ),
            "session_id 'gone' names no session",
        ),
        (
            lambda s: s.add_session("s2", "cli", parent_session_id="gone"),
            "parent_session_id 'gone' names no session",
        ),
        (lambda s: s.add_session("s1", "cli"), "session 's1' already exists"),
        (lambda s: s.add_session("s2", None), "add_session needs a source"),
        (lambda s: s.update_message(1, active=None), "active cannot be None"),
        (lambda s: s.update_message(1, timestamp=None), "timestamp cannot be None"),
        (lambda s: s.update_message(1, role=None, content="x"), "role cannot be None"),
        # an id no message has changed nothing and said nothing
        (lambda s: s.update_message(2, content="x"), "message 2 not found"),
        (lambda s: s.set_message_flags(2, active=False), "message 2 not found"),
        (lambda s: s.delete_message(2), "message 2 not found"),
    ],
)
def test_a_write_sqlite_refuses_names_the_session_or_column_and_writes_nothing(
    tmp_path: Path, write: Any, said: str
) -> None:
    # SQLite's bare IntegrityError ("FOREIGN KEY constraint failed", "UNIQUE constraint
    # failed: sessions.id", "NOT NULL constraint failed") named no session.
    with SessionStore(tmp_path / "state.db") as store:
        store.add_session("s1", "cli", started_at=1_700_000_000)
        store.add_message("s1", "user", "kept", timestamp=1_700_000_000.5)
        with pytest.raises(ValueError, match=f"^{said}"):
            write(store)
        assert [(m["content"], m["active"]) for m in store.get_messages("s1")] == [("kept", 1)]
        assert store.get_session("s1")["started_at"] == 1_700_000_000
        assert store.get_session("s2") is None
        store.add_session("s3", "cli", archived=None)  # None is "not given", as for a message
        assert store.get_session("s3")["archived"] == 0


@pytest.mark.skipif(shutil.which("sqlite3") is None, reason="needs the sqlite3 shell")
def test_the_writes_keep_the_session_counters_hermes_keeps(tmp_path: Path) -> None:
    """Hermes' append_message adds to its session's message_count and tool_call_count,
    which its session list and the tool's browse read; our writes left them as they
    were, so a session Hermes began showed 1 message where it held 4."""
    path = tmp_path / "state.db"
    SessionStore(path).close()
    subprocess.run(  # Hermes' own writes, as its append_message makes them
        [
            str(shutil.which("sqlite3")),
            str(path),
            "INSERT INTO sessions(id, source, started_at, message_count, tool_call_count) "
            "VALUES ('s1', 'cli', 1700000000, 1, 0);"
            "INSERT INTO messages(session_id, role, content, timestamp) "
            "VALUES ('s1', 'user', 'begun by Hermes', 1700000000);",
        ],
        check=True,
        timeout=60,
    )
    with SessionStore(path) as store:
        store.add_message("s1", "assistant", "", tool_calls=[{"id": "a"}, {"id": "b"}])
        store.add_messages(
            [
                {"session_id": "s1", "role": "tool", "content": "done"},
                {"session_id": "s1", "role": "assistant", "content": "all done"},
            ]
        )
        row = store.get_session("s1")
        assert (row["message_count"], row["tool_call_count"]) == (4, 2)
        browsed = session_search(store)["results"]
        assert [(r["session_id"], r["message_count"]) for r in browsed] == [("s1", 4)]
        store.delete_message(2)
        row = store.get_session("s1")
        assert (row["message_count"], row["tool_call_count"]) == (3, 0)


def test_a_title_that_is_not_text_is_a_clear_type_error(lone_db: Path) -> None:
    with SessionStore(lone_db, readonly=True) as store:
        with pytest.raises(TypeError, match="^title must be text, not NoneType"):
            store.find_session_by_title(None)


@pytest.mark.parametrize(
    ("query", "error", "said"),
    [
        ("forecast \udc80", ValueError, "search query holds a lone UTF-16 surrogate"),
        (5, TypeError, "search query must be text, not int"),
        (["forecast"], TypeError, "search query must be text, not list"),
    ],
)
def test_what_a_search_refuses_is_described_as_refused(
    lone_db: Path, query: Any, error: type[Exception], said: str
) -> None:
    # describe_search_path said fts_cjk (a lone surrogate) or empty (5), query_notes
    # that a control character was read as a space or nothing, while search raised.
    with SessionStore(lone_db, readonly=True) as store:
        with pytest.raises(error, match=said):
            store.search(query)
        assert store.describe_search_path(query) == "refused"
        notes = store.query_notes(query)
        assert len(notes) == 1 and notes[0].startswith(said)
        with pytest.raises(error, match=said):
            store.words_held(query, ["forecast"])
        assert store.describe_search_path(None) == "empty" and store.query_notes(None) == []
        assert store.words_held(None, ["forecast"]) == ([], [], [])


def test_cli_arguments_that_are_not_utf8_are_a_clear_error(lone_db: Path) -> None:
    for args in (
        [b"search", b"\xff\xfe"],
        [b"read", b"s\xff"],
        [b"search", b"forecast", b"--exclude", b"\xff"],
    ):
        proc = subprocess.run(
            [
                sys.executable.encode(),
                b"-m",
                b"hermes_fts.cli",
                *args,
                b"--db",
                str(lone_db).encode(),
                b"--json",
            ],
            capture_output=True,
            timeout=120,
        )
        payload = json.loads(proc.stdout.decode("utf-8"))
        assert proc.returncode != 0 and payload["success"] is False
        assert "holds a lone UTF-16 surrogate" in payload["error"], payload


@pytest.mark.parametrize(
    "command",
    [
        ["status"],
        ["path"],
        ["sync"],
        ["search", "deploy"],
        ["browse"],
        ["bench", "--repeats", "1"],
        ["optimize-storage", "--yes"],
        ["demo"],
    ],
    ids=lambda c: c[0],
)
def test_every_command_s_document_says_success(
    db: Path, tmp_path: Path, command: list[str]
) -> None:
    """A script reads ``success`` from any command's --json document, as errors carry
    ``"success": false``.  Regression: status, path, sync, bench and demo left it out."""
    where = ["--db", str(tmp_path / "demo.db")] if command == ["demo"] else ["--db", str(db)]
    code, payload = cli(*command, *([] if command == ["path"] else where))
    assert code == 0 and payload["success"] is True, payload
