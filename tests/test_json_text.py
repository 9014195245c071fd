"""JSON-escaped text is indexed, scanned and snippeted as the text it encodes.

Hermes Agent 0.19.0 stores ``tool_calls`` as ``json.dumps(...)`` (CJK becomes
``\\uXXXX``) and list (multimodal) content as ``"\\x00json:" + json.dumps(...)``.
Every index we own and the LIKE scan hold, per column, the stored value plus
the decoded text (``content.indexed_text_sql``); rows without an escape hold
exactly the stored value.  Written by the real agent (``_coex_driver.py`` in
the ``hermes_venv``) and the real ``sqlite3`` shell.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_coexistence import agent, probe

import hermes_fts
from hermes_fts import content
from hermes_fts.index import maintain as indexing
from hermes_fts.index import old_layout, schema
from hermes_fts.store import SessionStore

try:
    import apsw
except ImportError:  # pragma: no cover - apsw is in the test extras
    apsw = None

ROUTES = ("fts5", "fts_cjk", "trigram", "like_scan")
ESCAPE = re.compile(r"\\u[0-9a-fA-F]{4}")
SQLITE3 = shutil.which("sqlite3")


@pytest.fixture(scope="module", autouse=True)
def trigram_kept() -> Any:
    """Every route, the opt-in word and trigram indexes too, holds the decoded text."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HERMES_TRIGRAM_FTS", "1")
        mp.setenv("HERMES_WORD_FTS", "1")
        yield


def _text(conn: Any, value: Any) -> Any:
    sql = f"SELECT {content.indexed_text_sql('x')} FROM (SELECT ? AS x)"
    return list(conn.execute(sql, (value,)))[0][0]


def _calls(arguments: dict[str, Any]) -> str:
    """tool_calls exactly as Hermes Agent 0.19.0 stores them."""
    return json.dumps(
        [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "web_search", "arguments": json.dumps(arguments)},
            }
        ]
    )


# ------------------------------------------------------------------ the text itself


def test_escaped_json_gets_its_decoded_text_after_the_stored_value() -> None:
    conn = sqlite3.connect(":memory:")
    calls = _calls({"query": "桂林 天气"})
    assert "桂林" not in calls  # stored escaped, arguments escaped twice
    text = _text(conn, calls)
    stored, decoded = text.split("\n", 1)
    assert stored == calls
    assert "query: 桂林 天气" in decoded and "web_search" in decoded
    listed = content.JSON_CONTENT_PREFIX + json.dumps([{"type": "text", "text": "象鼻山"}])
    # Structured content's NUL reads as a space: trigram and LIKE stop at a NUL.
    assert _text(conn, listed) == " " + listed[1:] + "\n[{type: text, text: 象鼻山}]"


@pytest.mark.parametrize(
    "value",
    [
        "plain 桂林 text",
        '{"a": "plain", "b": [1, 2]}',
        "[no escape]",
        None,
        5,
        2.5,
        b"[\\u6842]",  # not text
        "see \\u6842 in code",  # not JSON: does not start with [, { or "
        '["\\x41 \\u6842"]',  # an escape JSON does not have: nothing decodes
        json.dumps(["孤立\ud800"]),  # a lone surrogate would decode to invalid UTF-8
    ],
)
def test_values_without_a_decodable_escape_are_indexed_as_stored(value: Any) -> None:
    assert _text(sqlite3.connect(":memory:"), value) == value


def test_structured_content_is_indexed_with_a_space_for_its_nul(tmp_path: Path) -> None:
    """unicode61 splits words at a NUL and at a space alike, so the word index
    keeps exactly Hermes Agent's tokens; FTS5's trigram tokenizer stops at a NUL,
    so the agent's own trigram index holds nothing of such a row, and ours does."""
    value = content.JSON_CONTENT_PREFIX + json.dumps([{"type": "text", "text": "plain words"}])
    conn = sqlite3.connect(tmp_path / "t.db")
    assert _text(conn, value) == " " + value[1:]
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(w, row)")
    conn.execute("CREATE VIRTUAL TABLE w USING fts5(x)")
    conn.execute("INSERT INTO w(rowid, x) VALUES (1, ?), (2, ?)", (value, _text(conn, value)))
    assert [r for r in conn.execute("SELECT term, doc FROM v")] == [
        (t, 2) for t in sorted(["json", "type", "text", "plain", "words"])
    ]
    conn.execute("CREATE VIRTUAL TABLE g USING fts5(x, tokenize='trigram')")
    conn.execute("INSERT INTO g(rowid, x) VALUES (1, ?), (2, ?)", (value, _text(conn, value)))
    assert [r for (r,) in conn.execute("SELECT rowid FROM g WHERE g MATCH '\"plain\"'")] == [2]


def test_truncated_json_still_decodes_and_nul_stays_literal() -> None:
    conn = sqlite3.connect(":memory:")
    # A tool result cut at a size limit is not valid JSON; its escapes still decode.
    assert _text(conn, '{"r": "\\u6842\\u6797').endswith("\n{r: 桂林")
    # SQLite 3.40 decodes \u0000 as the end of the text and 3.54 as NUL: kept literal.
    assert _text(conn, json.dumps("a\u0000b 桂")).endswith("\na\\u0000b 桂")
    # A surrogate pair is a character; Hangul (U+D000-U+D7FF) is not a surrogate.
    assert _text(conn, json.dumps("😀 한국어")).endswith("\n😀 한국어")


@pytest.mark.skipif(apsw is None, reason="apsw (a newer SQLite) not installed")
def test_the_text_is_the_same_bytes_on_sqlite_3_40_and_the_newest() -> None:
    """FTS5's 'delete' must remove what another process's insert added."""
    deep = "[" * 1500 + '"\\u6df1"' + "]" * 1500  # json_valid differs: depth 2000 vs 1000
    values = [
        _calls({"query": "桂林", "x": 'a\\b "q" \t'}),
        deep,
        json.dumps({"n": "\u0000\u0001 😀 \ud800"}),
        json.dumps("한국어 \\u6842"),
        '["\\x41 \\u6842"]',
        '{"r": "\\u6842',
        json.dumps({"k": "v\n"}, indent=2),
    ]
    old, new = sqlite3.connect(":memory:"), apsw.Connection(":memory:")
    assert apsw.sqlite_lib_version() != sqlite3.sqlite_version
    for value in values:
        ours = _text(old, value)
        assert ours == _text(new, value), value[:40]
        ours.encode("utf-8")  # valid UTF-8 (the lone surrogate was not decoded)


def test_trigger_sql_leaves_parser_stack_to_spare() -> None:
    """SQLite before 3.46 parses with a fixed 100-entry stack, and a trigger it
    cannot parse makes the whole schema unreadable (every Hermes open fails).
    The deepest trigger must parse with 10 extra levels of nesting around a value."""
    conn = sqlite3.connect(":memory:")
    conn.execute(schema.MESSAGES.create_sql())
    conn.execute(schema.STATE_META.create_sql())
    conn.execute(schema.BUILD_DDL[schema.BASE].table_sql)
    name, sql = schema.BUILD_DDL[schema.BASE].triggers[2]  # update: gated, delete + insert
    assert name.endswith("_update")
    wrapped = sql.replace(
        content.indexed_text_sql("old.tool_calls"),
        "(" * 10 + content.indexed_text_sql("old.tool_calls") + ")" * 10,
        1,
    )
    assert wrapped != sql
    conn.execute(wrapped)


# ------------------------------------------------------------ every route, agent rows


@pytest.fixture(scope="module")
def agent_store(tmp_path_factory: pytest.TempPathFactory, hermes_venv: Path) -> Path:
    """A history written by the real agent, with awkward JSON rows, optimized."""
    db = tmp_path_factory.mktemp("json") / "state.db"
    agent(hermes_venv, "seed", str(db))
    agent(hermes_venv, "json", str(db))
    with SessionStore(db) as store:
        assert store.optimize_storage(min_pause=0)["ok"]
    return db


def _decoded_rows(db: Path, term: str) -> set[int]:
    """Ids whose text, JSON decoded by Python, holds ``term``: what every route must find."""
    conn = sqlite3.connect(db)
    out = set()
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(10_000)  # the 1500-deep row
    for mid, *values in conn.execute("SELECT id, content, tool_name, tool_calls FROM messages"):
        for value in values:
            if not isinstance(value, str):
                continue
            texts = [value]
            raw = (
                value[len(content.JSON_CONTENT_PREFIX) :]
                if value.startswith(content.JSON_CONTENT_PREFIX)
                else value
            )
            try:
                texts.append(json.dumps(json.loads(raw), ensure_ascii=False))
                for call in json.loads(raw) if isinstance(json.loads(raw), list) else []:
                    texts.append(
                        json.dumps(json.loads(call["function"]["arguments"]), ensure_ascii=False)
                    )
            except (ValueError, TypeError, KeyError, RecursionError):
                pass
            if any(term in t for t in texts):
                out.add(mid)
    sys.setrecursionlimit(limit)
    conn.close()
    return out


@pytest.mark.parametrize("term", ["桂林", "天气", "象鼻山", "照片", "漓江", "竹筏", "深层嵌套"])
def test_every_route_finds_cjk_the_agent_stored_escaped(agent_store: Path, term: str) -> None:
    want = _decoded_rows(agent_store, term)
    conn = sqlite3.connect(agent_store)
    escaped = {
        i
        for (i,) in conn.execute(
            "SELECT id FROM messages WHERE instr(coalesce(content, '') || coalesce(tool_calls, ''),"
            " ?) = 0",
            (term,),
        )
    } & want
    conn.close()
    assert escaped, "the term should also sit where it is stored escaped"
    with SessionStore(agent_store) as store:
        for route in ROUTES:
            found = [r["id"] for r in store.search_messages(term, limit=1000, route=route)]
            assert len(found) == len(set(found)), (route, term)  # no duplicates
            assert set(found) == want, (route, term)


def test_snippets_show_the_decoded_text(agent_store: Path) -> None:
    with SessionStore(agent_store) as store:
        for route in ROUTES:
            for term in ("桂林", "象鼻山", "漓江"):
                rows = store.search_messages(term, limit=1000, route=route)
                assert rows, (route, term)
                for row in rows:
                    assert f">>>{term}" in row["snippet"], (route, row["snippet"])
                    # Two levels decode; the row with JSON three levels deep shows its third.
                    shown = row["snippet"].split("nested=")[0]
                    assert not ESCAPE.search(shown), (route, row["snippet"])


def test_escapes_that_do_not_decode_are_found_as_stored(agent_store: Path) -> None:
    """Raw text stays indexed: a term written as is is found beside undecodable
    escapes.  A row whose decode would hold a lone surrogate (the agent escapes
    one it cannot store) keeps only its stored text, on every route alike."""
    assert _decoded_rows(agent_store, "孤立")
    conn = sqlite3.connect(agent_store)
    # Not JSON, but starts like it and its escapes decode: decoded (as truncated JSON is).
    (cut,) = conn.execute("SELECT id FROM messages WHERE content LIKE '[not json%'").fetchone()
    conn.close()
    with SessionStore(agent_store) as store:
        for route in ROUTES:
            assert store.search_messages("孤立", limit=100, route=route) == [], route
            assert {
                r["id"] for r in store.search_messages("广", limit=100, route=route)
            } == _decoded_rows(agent_store, "广") | {cut}, route
        assert store.integrity_check() == {index: None for index in schema.INDEXES}


def test_agent_search_finds_more_and_never_less_after_optimize(
    tmp_path: Path, hermes_venv: Path
) -> None:
    """Hermes' own search_messages, before and after optimize-storage, on tool-call
    arguments and multimodal content: exactly as before (its indexes are its own),
    while ours sees the decoded list content."""
    db = tmp_path / "state.db"
    agent(hermes_venv, "seed", str(db))
    before = probe(hermes_venv, db)
    with SessionStore(db) as store:
        assert store.optimize_storage(min_pause=0)["ok"]
    after = probe(hermes_venv, db)
    assert all(before[q] <= after[q] for q in before), {
        q: before[q] - after[q] for q in before if before[q] - after[q]
    }
    assert after == before and not before["象鼻山"]
    with SessionStore(db) as store:
        for route in ROUTES:
            assert len(store.search_messages("象鼻山", limit=100, route=route)) == 12, route
    agent(hermes_venv, "write", str(db), "A")  # the agent's triggers keep decoding
    agent(hermes_venv, "json", str(db))
    with SessionStore(db) as store:
        assert store.integrity_check() == {index: None for index in schema.INDEXES}
        assert (
            {r["id"] for r in store.search_messages("漓江", route="fts_cjk")}
            == _decoded_rows(db, "漓江")
            != set()
        )


# ------------------------------------------------------------------ foreign writers


@pytest.mark.skipif(SQLITE3 is None, reason="sqlite3 shell not found")
def test_the_sqlite3_shell_writes_awkward_json_and_the_indexes_stay_right(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    with SessionStore(db) as store:
        store.add_session("s", "cli")
        store.add_message("s", "user", "hello")
        assert store.optimize_storage(min_pause=0)["ok"]
    deep = "[" * 1500 + '"\\u6df1\\u5c42"' + "]" * 1500
    huge = json.dumps(["巨大 " * 200_000])  # 1.2 MB of escapes
    nested = _calls({"q": "阳朔", "more": json.dumps({"city": "阳朔"})})
    script = "\n".join(
        [
            "BEGIN;",
            *(
                f"INSERT INTO messages(session_id, role, content, tool_calls, timestamp) "
                f"VALUES ('s', 'tool', '{c}', {t}, 1);"
                for c, t in [
                    (deep, "NULL"),
                    (huge, "NULL"),
                    ("ok", f"'{nested}'"),
                    ('{"bad": "\\u12', "NULL"),
                    ("[\\ud800 \\u6842]", "'[oops'"),
                    ('"\\u0000\\u6842"', "NULL"),
                ]
            ),
            "UPDATE messages SET content = '[\"\\u6f13\\u6c5f\"]' WHERE content = 'ok';",
            "DELETE FROM messages WHERE content LIKE '{\"bad%';",
            "COMMIT;",
            # Hermes Agent's repair: FTS5 reads the view itself (virtual tables off).
            "INSERT INTO hermes_fts_word(hermes_fts_word) VALUES ('rebuild');",
            "INSERT INTO hermes_fts_trigram(hermes_fts_trigram) VALUES ('rebuild');",
        ]
    )
    proc = subprocess.run(
        [SQLITE3, str(db)], input=script, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0 and not proc.stderr, proc.stderr
    with SessionStore(db) as store:
        assert store.integrity_check() == {index: None for index in schema.INDEXES}
        for term, n in (("深层", 1), ("巨大", 1), ("阳朔", 1), ("漓江", 1), ("桂", 1)):
            for route in ROUTES:
                found = [r["id"] for r in store.search_messages(term, limit=100, route=route)]
                assert len(found) == n == len(set(found)), (term, route, found)


# ------------------------------------------------------------ the earlier layout


def _to_earlier_layout(db: Path) -> None:
    """Rewrite the indexes as a hermes-fts before its own namespace kept them: under
    Hermes' names, over views ``<name>_rows`` with triggers over the stored values
    (JSON escapes and all), the CJK index with the public tokenizer name."""
    conn = hermes_fts.connect(str(db))
    cols = "content, tool_name, tool_calls"
    with conn:
        for index in schema.INDEXES:
            schema.drop_index_objects(conn, index)
        for index, tokenize in (
            ("messages_fts", ""),
            ("messages_fts_trigram", ", tokenize='trigram'"),
            ("messages_fts_cjk", ", tokenize='cjk_unicode61 unigrams 1 variants 1 glue 1'"),
        ):
            conn.execute(f"DROP TRIGGER IF EXISTS {index}_insert")
            conn.execute(f"DROP TRIGGER IF EXISTS {index}_delete")
            conn.execute(f"DROP TRIGGER IF EXISTS {index}_update")
            conn.execute(f"DROP TABLE IF EXISTS {index}")
            conn.execute(f"CREATE VIEW {index}_rows AS SELECT id, {cols} FROM messages")
            conn.execute(
                f"CREATE VIRTUAL TABLE {index} USING fts5({cols}, "
                f"content='{index}_rows', content_rowid='id'{tokenize})"
            )
            conn.execute(f"INSERT INTO {index}({index}) VALUES ('rebuild')")
            if index == "messages_fts_cjk":
                conn.execute(
                    f"CREATE TABLE {index}_pending (seq INTEGER PRIMARY KEY "
                    "AUTOINCREMENT, msg_id INTEGER NOT NULL, op TEXT NOT NULL, "
                    "old_role TEXT, old_content TEXT, old_tool_name TEXT, "
                    "old_tool_calls TEXT)"
                )
                conn.execute(
                    f"CREATE TRIGGER {index}_pending_insert AFTER INSERT ON messages "
                    f"BEGIN INSERT INTO {index}_pending(msg_id, op) "
                    "VALUES (new.id, 'insert'); END"
                )
                conn.execute("INSERT INTO state_meta(key, value) VALUES ('fts_cjk_stale', '1')")
                continue
            ins = (
                f"INSERT INTO {index}(rowid, {cols}) VALUES (new.id, new.content, "
                "new.tool_name, new.tool_calls);"
            )
            dele = (
                f"INSERT INTO {index}({index}, rowid, {cols}) VALUES ('delete', old.id, "
                "old.content, old.tool_name, old.tool_calls);"
            )
            conn.execute(f"CREATE TRIGGER {index}_insert AFTER INSERT ON messages BEGIN {ins} END")
            conn.execute(f"CREATE TRIGGER {index}_delete AFTER DELETE ON messages BEGIN {dele} END")
            conn.execute(
                f"CREATE TRIGGER {index}_update AFTER UPDATE OF id, {cols} ON messages "
                f"BEGIN {dele} {ins} END"
            )
    conn.close()


def test_an_earlier_layout_under_hermes_names_is_given_back(
    tmp_path: Path, hermes_venv: Path
) -> None:
    """A store an older hermes-fts optimized: its objects under Hermes' names go in one
    transaction, ours are built, and the agent, which recreates its own on its next
    open, never loses a row."""
    db = tmp_path / "state.db"
    agent(hermes_venv, "seed", str(db))
    with SessionStore(db) as store:
        assert store.optimize_storage(min_pause=0)["ok"]
    _to_earlier_layout(db)
    agent(hermes_venv, "write", str(db), "A")  # its triggers keep the earlier layout whole
    control = probe(hermes_venv, db)
    with SessionStore(db) as store:
        assert old_layout.find(store._conn)
        assert "old_layout" in store.index_state()["needs_optimize"]
        assert store.search_messages("象鼻山", route="like_scan")  # the scan still decodes
        assert store.optimize_storage(min_pause=0)["ok"]
        assert old_layout.find(store._conn) == []
        assert indexing.get_meta(store._conn, "fts_cjk_stale") is None
        state = store.index_state()
        for index in schema.INDEXES:
            assert state[index]["layout"] == "external" and state[index]["served"], index
        assert store.integrity_check() == {index: None for index in schema.INDEXES}
        want = _decoded_rows(db, "桂林")
        for route in ROUTES:
            assert {
                r["id"] for r in store.search_messages("桂林", limit=1000, route=route)
            } == want, route
    after = probe(hermes_venv, db)  # Hermes' open recreates and refills its own indexes
    assert all(control[q] <= after[q] for q in control)
    agent(hermes_venv, "write", str(db), "B")
    with SessionStore(db) as store:
        assert store.integrity_check() == {index: None for index in schema.INDEXES}
        assert not store.optimize_needed()
