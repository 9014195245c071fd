"""Query defects of issues 33 and 34, through the API, the ``hermes-fts`` command
(a subprocess, ``--json``) and the ``session_search`` tool.

* 33: ``A NOT w`` drops rows where ``w`` is glued to CJK on every route; one-
  character CJK words are searched (never dropped, never an FTS5 syntax error
  or a RecursionError) and named in the notes; a property test checks random
  mixes of them, Latin glued to CJK and operators against a substring oracle
  on every route.
* 34: the partial-match note names words as written and never describes a
  title match's neighbour; a search with the extension switched off says so;
  the LIKE scan matches Latin words whole, as the indexes do.
"""

from __future__ import annotations

import json
import os
import random
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _support import needs_extension
from _tool_fixtures import T0, conversation, one_message_each, open_store
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_fts import session_search
from hermes_fts.search.request import ROUTE_ORDER
from hermes_fts.store import SessionStore

pytestmark = needs_extension  # the fts_cjk route is one of the routes under test

EVERY_ROUTE = (None, *ROUTE_ORDER)  # None: the route the store chooses


def cli(db: Path, *args: str, **env: str) -> dict[str, Any]:
    """``hermes-fts <args> --json --db <db>`` in a subprocess; its JSON answer."""
    proc = subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", *args, "--json", "--db", str(db)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


# --------------------------------------------------------------------------- issue 33

ROWS = {
    "glued": "deploy plan staging服务器",
    "plain": "deploy plan only",
    "tokyo": "东京 tower at night",
    "tower": "塔 only here",
    "pets": "猫 and 狗 at home",
    "cat": "一只猫",
    "korean": "가 alone",
    "alone": "alone",
    "dots": "中.文",
    "weather": "天 气 好",
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    yield from one_message_each(tmp_path_factory, "defects", ROWS)  # every route, fts5 too


def _sessions(st_: SessionStore, query: str, route: str | None) -> tuple[set[str], Any]:
    result = st_.search(query, limit=100, route=route, fields=("id", "session_id"))
    return {r["session_id"] for r in result.rows}, result


@pytest.mark.parametrize("route", EVERY_ROUTE)
def test_not_drops_a_word_glued_to_cjk_on_every_route(store: Any, route: str | None) -> None:
    found, _ = _sessions(store[0], "deploy NOT staging", route)
    assert found == {"plain"}, route
    # the positive word glued to CJK is still found on every route
    assert _sessions(store[0], "staging", route)[0] == {"glued"}, route


def test_the_command_drops_the_glued_word_too(store: Any) -> None:
    answer = cli(store[1], "search", "deploy NOT staging")
    assert [r["session_id"] for r in answer["results"]] == ["plain"]


@pytest.mark.parametrize("route", EVERY_ROUTE)
@pytest.mark.parametrize(
    ("query", "wanted"),
    [
        ("东京 塔", {"tokyo", "tower"}),
        ("猫 狗", {"pets", "cat"}),
        ("가 alone", {"korean", "alone"}),
        ("天 气 好", {"weather"}),
        ("中.文", {"dots"}),
    ],
)
def test_one_character_words_are_searched_and_named(
    store: Any, route: str | None, query: str, wanted: set[str]
) -> None:
    found, result = _sessions(store[0], query, route)
    assert found == wanted, (query, route, result.route)
    assert any("one-character words" in note for note in result.notes), result.notes


@pytest.mark.parametrize("route", EVERY_ROUTE)
def test_a_repeated_hiragana_character_is_searched(store: Any, route: str | None) -> None:
    found, _ = _sessions(store[0], "い い", route)
    assert found == set()  # no row holds い; the point is an answer, not an error


@pytest.mark.parametrize(("query", "wanted"), [("猫 狗", {"pets", "cat"}), ("东京 塔", None)])
def test_one_character_words_through_the_command_and_the_tool(
    store: Any, query: str, wanted: set[str] | None
) -> None:
    st_, path = store
    answer = cli(path, "search", query, "--limit", "10")
    tool = session_search(st_, query=query, limit=10)
    for payload in (answer, tool):
        assert payload["success"] and payload["count"] >= 1, payload
        found = {r["session_id"] for r in payload["results"]}
        assert found == (wanted or {"tokyo", "tower"})
        assert any("one-character words" in n for n in payload["query_notes"])


# The property: random queries of one-character CJK words, Latin glued to CJK
# and operators mean on every route what a substring check says.  Latin words
# are never inside one another and are glued only to CJK; "zz" parts the
# pieces of a row, so a term's tokens are consecutive only where its text is.
LATIN = ["deploy", "staging", "alpha"]
CJK = ["猫", "狗", "塔", "天", "东京", "猫狗"]
GLUED = ["staging服务器", "deploy猫", "服务器alpha", "塔alpha东京"]
PROPERTY_ROWS = [
    " zz ".join(random.Random(seed).sample(LATIN + CJK + GLUED, random.Random(seed).randint(1, 4)))
    for seed in range(40)
]


@pytest.fixture(scope="module")
def property_store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    st_ = open_store(tmp_path_factory.mktemp("mix") / "state.db", word_index=True)
    conversation(st_, "s", [("user", text) for text in PROPERTY_ROWS])
    ids = [m["id"] for m in st_.get_messages("s")]
    yield st_, ids
    st_.close()


loose_word = st.sampled_from(LATIN + CJK + [f'"{g}"' for g in GLUED])
strict_word = st.sampled_from(LATIN + CJK + GLUED + [f'"{g}"' for g in GLUED])
group = st.tuples(st.lists(strict_word, min_size=1, max_size=3), st.lists(strict_word, max_size=2))
mixes = st.one_of(
    st.lists(loose_word, min_size=1, max_size=4).map(lambda ws: ("any", ws)),
    st.lists(group, min_size=1, max_size=3).map(lambda gs: ("strict", gs)),
)


def _text(word: str) -> str:
    return word.strip('"')


def _query_and_oracle(mix: Any) -> tuple[str, Any]:
    kind, parts = mix
    if kind == "any":  # words side by side: a best match finds rows with any of them
        return " ".join(parts), lambda row: any(_text(w) in row for w in parts)
    query = " OR ".join(" AND ".join(pos) + "".join(f" NOT {n}" for n in neg) for pos, neg in parts)

    def holds(row: str) -> bool:
        return any(
            all(_text(p) in row for p in pos) and not any(_text(n) in row for n in neg)
            for pos, neg in parts
        )

    return query, holds


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(mix=mixes)
def test_random_mixes_agree_with_a_substring_oracle_on_every_route(
    property_store: Any, mix: Any
) -> None:
    st_, ids = property_store
    query, holds = _query_and_oracle(mix)
    want = {i for i, row in zip(ids, PROPERTY_ROWS) if holds(row)}
    for route in EVERY_ROUTE:
        result = st_.search(query, limit=10**6, route=route, fields=("id",))
        assert {r["id"] for r in result.rows} == want, (query, route, result.route)


# --------------------------------------------------------------------------- issue 34


@pytest.fixture(scope="module")
def travel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("travel") / "state.db"
    with open_store(path) as st_:
        turns = [("user", f"第{i}条消息") for i in range(10)]
        turns += [("user", "桂林旅行计划的细节都在这里"), ("assistant", "好的")]
        conversation(st_, "titled", turns, title="桂林旅行计划", start=T0)
        conversation(st_, "guilin", [("user", "我去过桂林，很美")], start=T0 + 100)
        conversation(st_, "trip", [("user", "上次的旅行很好玩")], start=T0 + 200)
        conversation(st_, "kyoto", [("user", "京都の紅葉はきれいです")], start=T0 + 300)
        conversation(st_, "yangshuo", [("user", "阳朔的山水")], start=T0 + 400)
    return path


def test_a_title_match_gets_no_note_about_its_neighbour(travel: Path) -> None:
    answer = cli(travel, "search", "桂林旅行计划")
    first = answer["results"][0]
    assert first["session_id"] == "titled" and first["matched_role"] == "session_title"
    notes = answer.get("query_notes") or []
    assert not any("no conversation holds every word" in n for n in notes), notes


@pytest.mark.parametrize(
    "query", ["上次说的桂林旅行计划是什么", "京都で紅葉を見るならどこがいい？", "桂林 旅行 阳朔"]
)
def test_the_partial_note_names_only_words_as_written(travel: Path, query: str) -> None:
    answer = cli(travel, "search", query)
    (note,) = [n for n in answer["query_notes"] if n.startswith("no conversation holds")]
    written = set(re.sub(r"[？?]", "", query).split())
    said = note.split("; the first result ", 1)[1]
    # what of a word the result holds, in parentheses, is a stretch of it as typed
    held = re.findall(r" \(([^)]*)\)", said)
    assert all(run in query for runs in held for run in runs.split(", ")), note
    named = re.split(
        r", | and |matches only part of |matches |not ", re.sub(r" \([^)]*\)", "", said)
    )
    assert {n for n in named if n} <= written, note


def test_the_switched_off_extension_is_said(travel: Path) -> None:
    off = cli(travel, "search", "陽朔", HERMES_CJK_FTS="0")
    assert off["route"] == "like_scan" and off["count"] == 0  # 阳朔 is not folded
    assert any("HERMES_CJK_FTS=0" in n and "陽朔" in n for n in off["query_notes"])
    on = cli(travel, "search", "陽朔")
    assert on["count"] == 1 and not any("HERMES_CJK_FTS" in n for n in on.get("query_notes", []))


OLD_SCHEMA = """
CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, model TEXT,
    parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL, title TEXT);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,
    role TEXT NOT NULL, content TEXT, tool_calls TEXT, tool_name TEXT, timestamp REAL NOT NULL);
"""


def test_like_and_the_indexes_agree_on_whole_words(tmp_path: Path) -> None:
    """Before optimize-storage a store is searched by LIKE, after it by the word index."""
    db = tmp_path / "state.db"
    conn = sqlite3.connect(db)
    conn.executescript(OLD_SCHEMA)
    texts = {"a": "we decided to ship", "b": "please decide today", "c": "decide服务器 now"}
    for n, (sid, text) in enumerate(texts.items()):
        conn.execute("INSERT INTO sessions VALUES (?, 'cli', 'm', NULL, 100, NULL, NULL)", (sid,))
        conn.execute(
            "INSERT INTO messages(session_id, role, content, timestamp) VALUES (?, 'user', ?, ?)",
            (sid, text, 101 + n),
        )
    conn.commit()
    conn.close()
    queries = ("decide", "decide*", "ecide", "decide NOT ship")

    def answers() -> dict[str, tuple[str, set[str]]]:
        out = {}
        for query in queries:
            got = cli(db, "search", query, "--limit", "10")
            out[query] = (got["route"], {r["session_id"] for r in got["results"]})
        return out

    before = answers()
    assert {route for route, _ in before.values()} == {"like_scan"}
    cli(db, "optimize-storage", "--yes")
    after = answers()
    assert "like_scan" not in {route for route, _ in after.values()}
    assert {q: found for q, (_, found) in before.items()} == {
        q: found for q, (_, found) in after.items()
    }
    assert after["decide"][1] == {"b", "c"} and after["decide*"][1] == {"a", "b", "c"}
    assert after["ecide"][1] == set()


def test_a_cut_best_match_names_words_as_written() -> None:
    sentence = "".join(chr(0x4E00 + 7 * i) for i in range(45))  # 44 bigrams, no stop word
    (note,) = SessionStore.query_notes(f"{sentence} 桂林")
    assert note.endswith(f"not searched: part of {sentence}, 桂林"), note
    assert sentence[40:42] not in note.replace(sentence, "")  # no bigram of it alone


def test_diacritics_differ_only_as_docs_query_md_says(tmp_path: Path) -> None:
    """Issue 11: the token routes fold diacritics; the LIKE scan and trigram keep them."""
    with open_store(tmp_path / "state.db", word_index=True) as st_:
        conversation(st_, "accent", [("user", "un café crème")])
        conversation(st_, "plain", [("user", "the cafe menu")])
        expected = {
            "fts5": {"accent", "plain"},
            "fts_cjk": {"accent", "plain"},
            "trigram": {"plain"},
            "like_scan": {"plain"},
        }
        for route, wanted in expected.items():
            assert _sessions(st_, "cafe", route)[0] == wanted, route
        # ASCII case folds on every route, and a word as written is found everywhere
        for route in expected:
            assert "accent" in _sessions(st_, "Café", route)[0], route
