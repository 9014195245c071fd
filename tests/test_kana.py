"""Kana folding: らーめん finds ラーメン (and ﾗｰﾒﾝ) and the other way round.

The tokenizer option ``kana 1`` folds katakana to hiragana (the store's CJK
index has it), ``cjk_fold`` and ``query.fold_text`` fold the same way for the
LIKE route, and highlights mark the characters as written.  A CJK index built
before ``kana 1`` sends kana queries to LIKE until optimize-storage rebuilds it.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _support import needs_extension, rebuild_cjk_index

import hermes_fts
from hermes_fts.query.plan import fold_text
from hermes_fts.store import SessionStore

pytestmark = needs_extension

KATAKANA = "今日はラーメンを食べた"
HIRAGANA = "らーめん大好き"
HALFWIDTH = "駅前のﾗｰﾒﾝ屋"
HERMES_SCHEMA = """
CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, model TEXT,
    parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL, title TEXT);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,
    role TEXT NOT NULL, content TEXT, tool_calls TEXT, tool_name TEXT, timestamp REAL NOT NULL);
"""
# Each session holds one spelling, so the CLI (one result per session) shows all.
SESSIONS = {"kata": KATAKANA, "hira": HIRAGANA, "half": HALFWIDTH}
MARKED = {
    "kata": "今日は>>>ラーメン<<<を食べた",
    "hira": ">>>らーめん<<<大好き",
    "half": "駅前の>>>ﾗｰﾒﾝ<<<屋",
}


# --------------------------------------------------------------------------- the tokenizer


@pytest.fixture()
def conn() -> sqlite3.Connection:
    return hermes_fts.connect(":memory:")


def _tokens(conn: sqlite3.Connection, text: str, *args: str, query: bool = False) -> list[Any]:
    fn = "cjk_tokens_query" if query else "cjk_tokens"
    marks = ", ".join("?" for _ in args)
    sql = f"SELECT {fn}(?{', ' if args else ''}{marks})"
    return [
        (t["token"], t["start"], t["end"])
        for t in json.loads(conn.execute(sql, (text, *args)).fetchone()[0])
    ]


def test_kana_option_folds_katakana_to_hiragana_with_offsets_of_the_original(conn):
    assert _tokens(conn, "ラーメン", "kana", "1") == [
        ("らー", 0, 6),
        ("ーめ", 3, 9),
        ("めん", 6, 12),
    ]
    assert [t[0] for t in _tokens(conn, "ﾗｰﾒﾝ", "kana", "1")] == ["らー", "ーめ", "めん"]
    assert [t[:1] for t in _tokens(conn, "ヴァ ヾ", "kana", "1", query=True)] == [
        ("ゔぁ",),
        ("ゞ",),
    ]
    # without the option (and with "kana 0") katakana stays itself
    assert [t[0] for t in _tokens(conn, "ラーメン")] == ["ラー", "ーメ", "メン"]
    assert [t[0] for t in _tokens(conn, "ラーメン", "kana", "0")] == ["ラー", "ーメ", "メン"]
    # katakana without a hiragana of its name (ヷ, ㇰ) is left alone
    assert [t[0] for t in _tokens(conn, "ヷㇰ", "kana", "1")] == ["ヷㇰ"]


@pytest.mark.parametrize("bad", [["kana", "2"], ["kana", "yes"], ["kana"], ["kana", ""]])
def test_kana_option_takes_0_or_1(conn, bad):
    with pytest.raises(sqlite3.OperationalError, match=r"refused 'kana.*take 0 or 1"):
        _tokens(conn, "ラーメン", *bad)


def test_c_and_python_fold_every_kana_alike(conn):
    """Exhaustive over the kana blocks, half-width forms and the small kana."""
    blocks = [(0x3040, 0x3100), (0x31F0, 0x3200), (0xFF61, 0xFFA0), (0x1B000, 0x1B170)]
    text = "".join(chr(cp) for lo, hi in blocks for cp in range(lo, hi))
    assert conn.execute("SELECT cjk_fold(?)", (text,)).fetchone()[0] == fold_text(text)
    assert fold_text("ラーメン ﾗｰﾒﾝ ヽヾ") == "らーめん らーめん ゝゞ"


@pytest.mark.parametrize(
    ("text", "key", "at"),
    [
        ("今日はラーメン", "らーめん", 3),
        ("ｶﾞｶﾞ東京", "东京", 4),  # two original characters per folded ｶﾞ
        ("𠀀😀東京", "東京", 2),  # characters outside the BMP count once
        ("ABC", "b", -1),  # ASCII case is the caller's (it lowers both)
        ("abc", "", 0),
        ("", "a", -1),
        ("aaab", "aab", 1),  # a restart inside a partial match
    ],
)
def test_cjk_fold_find(conn, text, key, at):
    assert conn.execute("SELECT cjk_fold_find(?, ?)", (text, key)).fetchone()[0] == at


def test_cjk_fold_find_edges(conn):
    value = lambda sql, *a: conn.execute(sql, a).fetchone()[0]  # noqa: E731
    assert value("SELECT cjk_fold_find(NULL, 'a')") is None
    assert value("SELECT cjk_fold_find('a', NULL)") is None
    assert value("SELECT cjk_fold_find(12345, 34)") == 2
    # invalid bytes count as one character each and match only themselves
    assert value("SELECT cjk_fold_find(x'ff80e69db1e4baac', '东京')") == 2
    assert value("SELECT cjk_fold_find(x'ffe69d', x'e69d')") == 1
    with pytest.raises(sqlite3.OperationalError):
        value("SELECT cjk_fold_find('a')")


# --------------------------------------------------------------------------- the store


def _fill(st: SessionStore) -> None:
    for n, (sid, text) in enumerate(SESSIONS.items()):
        st.add_session(sid, source="cli", started_at=100.0 + n)
        st.add_message(sid, "user", text, timestamp=101.0 + n)


def _cli(*argv: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", *argv, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _marked(out: dict[str, Any]) -> dict[str, str]:
    return {r["session_id"]: r["snippet"] for r in out["results"]}


@pytest.fixture()
def indexed(tmp_path) -> Path:
    db = tmp_path / "state.db"
    with SessionStore(db) as st:
        _fill(st)
    return db


@pytest.mark.parametrize("query", ["らーめん", "ラーメン", "ﾗｰﾒﾝ"])
def test_cli_finds_every_spelling_on_the_cjk_index(indexed, query):
    out = _cli("search", query, "--db", str(indexed), "--detail", "index")
    assert out["route"] == "fts_cjk"
    assert _marked(out) == MARKED  # the characters as written are marked


@pytest.mark.parametrize("query", ["らーめん", "ラーメン"])
def test_cli_finds_every_spelling_on_the_like_route(tmp_path, query):
    """A store Hermes wrote, not synced, read through --profile (read-only): LIKE."""
    home = tmp_path / "home"
    db = home / "profiles" / "old" / "state.db"
    db.parent.mkdir(parents=True)
    conn = sqlite3.connect(db)
    conn.executescript(HERMES_SCHEMA)
    for n, (sid, text) in enumerate(SESSIONS.items()):
        conn.execute(
            "INSERT INTO sessions VALUES (?, 'cli', 'm', NULL, ?, NULL, NULL)", (sid, 100 + n)
        )
        conn.execute(
            "INSERT INTO messages(session_id, role, content, timestamp) VALUES (?, 'user', ?, ?)",
            (sid, text, 101 + n),
        )
    conn.commit()
    conn.close()
    env = dict(os.environ, HERMES_HOME=str(home))
    out = _cli("search", query, "--profile", "old", "--detail", "index", env=env)
    assert out["route"] == "like_scan"
    assert _marked(out) == MARKED


def test_one_kana_marks_only_its_character(tmp_path):
    with SessionStore(tmp_path / "state.db") as st:
        _fill(st)
        rows = st.search_messages("ら", route="fts_cjk")
        assert {r["snippet"] for r in rows} == {
            "今日は>>>ラ<<<ーメンを食べた",
            ">>>ら<<<ーめん大好き",
            "駅前の>>>ﾗ<<<ｰﾒﾝ屋",
        }


def test_an_index_built_before_kana_sends_kana_to_like_until_optimized(indexed):
    with SessionStore(indexed) as st:
        rebuild_cjk_index(st, " kana 1")
        assert st.index_state()["hermes_fts_cjk"]["kana"] is False
        assert st.optimize_needed()
        for query in ("らーめん", "ﾗｰﾒﾝ", "めん NOT 好き"):
            assert st.describe_search_path(query) == "like_scan", query
        assert st.describe_search_path("今日") == "fts_cjk"  # no kana: the index answers
    out = _cli("search", "らーめん", "--db", str(indexed), "--detail", "index")
    assert (out["route"], _marked(out)) == ("like_scan", MARKED)
    assert _cli("status", "--db", str(indexed))["indexes"]["hermes_fts_cjk"]["kana"] is False
    text = subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", "status", "--db", str(indexed)],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    assert "kana not folded" in text
    _cli("optimize-storage", "--db", str(indexed), "--yes")
    assert _cli("status", "--db", str(indexed))["indexes"]["hermes_fts_cjk"]["kana"] is True
    out = _cli("search", "らーめん", "--db", str(indexed), "--detail", "index")
    assert (out["route"], _marked(out)) == ("fts_cjk", MARKED)


@pytest.mark.parametrize("query", ["ﾗｰﾒﾝ", "ラーメン"])
def test_with_the_extension_off_half_width_kana_glued_to_a_word_is_found_as_written(
    tmp_path, monkeypatch, query
):
    """HERMES_CJK_FTS=0: the LIKE scan compares raw text, and a CJK term is a
    substring there.  Half-width katakana (ﾗｰﾒﾝ) was read as a Latin word, so a
    digit or letter after it (ﾗｰﾒﾝ2024) ended no word and the row was missed,
    where ラーメン2024 was found."""
    monkeypatch.setenv("HERMES_CJK_FTS", "0")
    with SessionStore(tmp_path / "state.db") as st:
        st.add_session("s", "cli")
        spelled = {query: st.add_message("s", "user", f"{query}2024 harbor")}
        spelled["latin"] = st.add_message("s", "user", f"harbor{query}")
        found = st.search(query, fields=("id",))
        assert found.route == "like_scan"
        assert {r["id"] for r in found.rows} == set(spelled.values())
