"""session_search: call forms, clamps, lineage, profiles, errors, schema."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from _tool_fixtures import (
    T0,
    assert_error,
    chat,
    conversation,
    ids_of,
    open_store,
    require_search,
)

import hermes_fts
from hermes_fts.index import slowed
from hermes_fts.store import SessionStore
from hermes_fts.tool import TOOL_SCHEMA, session_search
from hermes_fts.tool import context as tool_context
from hermes_fts.tool.shape import PAYLOAD_BUDGET_BYTES, WINDOW_CONTENT_CAP, payload_bytes


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    return tmp_path


@pytest.fixture
def store(home: Path):
    s = open_store(home / "state.db")
    yield s
    s.close()


@pytest.fixture
def searchable(store):
    require_search(store)
    return store


def dumps(payload: dict[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False)


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --------------------------------------------------------------------------- schema


def test_tool_schema_shape():
    assert TOOL_SCHEMA["name"] == "session_search"
    params = TOOL_SCHEMA["parameters"]
    assert params["type"] == "object"
    assert params["required"] == []
    assert "mode" not in params["properties"]
    for name in (
        "query",
        "session_id",
        "around_message_id",
        "window",
        "limit",
        "sort",
        "detail",
        "role_filter",
        "profile",
        "after",
        "before",
        "exclude_session_ids",
    ):
        assert name in params["properties"], name
    assert params["properties"]["detail"]["enum"] == ["adaptive", "full", "index"]
    json.dumps(TOOL_SCHEMA, ensure_ascii=False)


def test_tool_schema_description_covers_the_rules():
    text = TOOL_SCHEMA["description"].lower()
    for needle in (
        "query=",  # search form
        "around_message_id",  # scroll form
        "session_id alone",  # read form
        "no arguments",  # browse form
        " or ",
        "double quotes",
        "prefix",
        "only sees past conversations",
        "inspect that source",
        "does not mean there was no prior contact",
        "@session:",
        "markdown",
        "backticks",
        "line by itself",
        "do not repeat the title",
    ):
        assert needle in text, needle


def test_public_names_are_exported():
    assert hermes_fts.session_search is session_search
    assert hermes_fts.TOOL_SCHEMA is TOOL_SCHEMA


# --------------------------------------------------------------------------- browse


def test_browse_lists_recent_sessions(store):
    conversation(store, "s_old", [("user", "first thing")], start=T0, title="Old one")
    conversation(store, "s_new", [("user", "x" * 90)], start=T0 + 100)
    conversation(store, "s_sub", [("user", "delegated")], start=T0 + 200, source="subagent")
    conversation(store, "s_tool", [("user", "tooling")], start=T0 + 300, source="tool")
    conversation(store, "s_kan", [("user", "board")], start=T0 + 400, source="kanban")
    out = session_search(store)
    assert out["success"] is True and out["mode"] == "browse"
    assert [r["session_id"] for r in out["results"]] == ["s_new", "s_old"]
    assert out["count"] == 2 and "query" in out["message"]
    first, second = out["results"]
    assert first["preview"] == "x" * 60 + "..."
    assert first["title"] is None and second["title"] == "Old one"
    assert second["link"] == "@session:default/s_old"
    assert first["message_count"] == 1
    assert {"started_at", "last_active", "source"} <= set(first)
    dumps(out)


def test_browse_of_an_empty_store_says_there_are_no_sessions(store):
    out = session_search(store)
    assert out["success"] is True and out["results"] == [] and out["count"] == 0
    assert out["message"] == "No sessions to list.", out["message"]
    conversation(store, "mine", chat(2))
    alone = session_search(store, current_session_id="mine")
    assert alone["message"] == "No sessions to list besides the current conversation."


def test_browse_limit_clamps(store):
    for i in range(14):
        conversation(store, f"s{i:02d}", [("user", f"hello {i}")], start=T0 + i)
    assert session_search(store)["count"] == 3
    assert session_search(store, limit=0)["count"] == 1
    assert session_search(store, limit=-5)["count"] == 1
    assert session_search(store, limit=100)["count"] == 10
    assert session_search(store, limit="4")["count"] == 4
    assert session_search(store, limit="lots")["count"] == 3
    assert session_search(store, limit=2.9)["count"] == 2
    assert session_search(store, limit=True)["count"] == 3
    assert session_search(store, query="   ", limit=5)["mode"] == "browse"


def test_browse_orders_by_last_activity(store):
    conversation(store, "a", [("user", "early start")], start=T0)
    conversation(store, "b", [("user", "later start")], start=T0 + 100)
    store.add_message("a", "user", "came back", timestamp=T0 + 500)
    out = session_search(store, limit=5)
    assert [r["session_id"] for r in out["results"]] == ["a", "b"]


def test_browse_skips_current_and_shows_compressed_tip(store):
    conversation(store, "root", chat(2), start=T0, end_reason="compression")
    conversation(store, "tip", chat(2), start=T0 + 10, parent="root")
    conversation(store, "other", chat(2), start=T0 + 5)
    conversation(
        store,
        "delegate",
        chat(2),
        start=T0 + 20,
        parent="other",
        model_config=json.dumps({"_delegate_from": "other"}),
    )
    out = session_search(store, limit=10)
    listed = {r["session_id"]: r for r in out["results"]}
    assert set(listed) == {"tip", "other"}
    assert listed["tip"]["lineage_root_id"] == "root"
    mine = session_search(store, limit=10, current_session_id="tip")
    assert [r["session_id"] for r in mine["results"]] == ["other"]


def test_browse_lists_reset_and_branch_children(store):
    conversation(store, "p1", chat(2), start=T0, end_reason="session_reset", session_key="tg:1")
    conversation(store, "c1", chat(2), start=T0 + 10, parent="p1", session_key="tg:1")
    conversation(store, "p2", chat(2), start=T0 + 20, end_reason="branched")
    conversation(store, "c2", chat(2), start=T0 + 30, parent="p2")
    out = session_search(store, limit=10)
    assert {r["session_id"] for r in out["results"]} == {"p1", "c1", "p2", "c2"}
    # a /new reset does not hide the previous conversation from a reset child
    mine = session_search(store, limit=10, current_session_id="c1")
    assert {r["session_id"] for r in mine["results"]} == {"p1", "p2", "c2"}


# --------------------------------------------------------------------------- read


def test_read_small_session(store):
    ids = conversation(
        store,
        "s1",
        [
            ("user", "hello there"),
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c1", "function": {"name": "terminal"}}],
            },
            {"role": "tool", "content": "ok", "tool_name": "terminal", "tool_call_id": "c1"},
        ],
        title="Greeting",
    )
    out = session_search(store, session_id="s1")
    assert out["success"] is True and out["mode"] == "read"
    assert out["session_id"] == "s1" and out["link"] == "@session:default/s1"
    assert out["message_count"] == 3 and out["truncated"] is False and "message" not in out
    assert out["session_meta"]["title"] == "Greeting"
    assert out["session_meta"]["source"] == "cli" and out["session_meta"]["model"] == "test-model"
    assert ids_of(out["messages"]) == ids
    tool_call_turn = out["messages"][1]
    assert tool_call_turn["content"] is None and "content" in tool_call_turn
    assert tool_call_turn["tool_calls"][0]["id"] == "c1"
    assert out["messages"][2]["tool_name"] == "terminal"
    assert out["messages"][2]["tool_call_id"] == "c1"
    assert "anchor" not in out["messages"][0]


def test_search_arguments_beside_session_id_are_named_not_dropped_silently(store):
    """A query given with session_id reads that session: the answer says the words
    were not searched, so it does not pass for a search that found it."""
    ids = conversation(store, "s1", chat(5))
    out = session_search(store, session_id="s1", query="deploy", sort="newest")
    assert out["success"] is True and out["mode"] == "read"
    assert ids_of(out["messages"]) == ids
    (note,) = out["query_notes"]
    assert note.startswith("query, sort not used: session_id reads that session")
    scrolled = session_search(store, session_id="s1", around_message_id=ids[2], role_filter="user")
    assert scrolled["query_notes"] == [
        "role_filter not used: session_id scrolls that session; leave session_id out to search"
    ]
    assert "query_notes" not in session_search(store, session_id="s1")


def test_read_truncates_long_sessions(store):
    ids = conversation(store, "s1", chat(45))
    out = session_search(store, session_id="s1")
    assert out["truncated"] is True and out["message_count"] == 45
    assert ids_of(out["messages"]) == ids[:20] + ids[-10:]
    assert "around_message_id" in out["message"]
    exact = conversation(store, "s2", chat(30))
    out = session_search(store, session_id="s2")
    assert out["truncated"] is False and ids_of(out["messages"]) == exact


def test_read_accepts_links_and_profile_prefix(store):
    conversation(store, "20260315_092437_c9a6ff", chat(3))
    for ref in (
        "@session:default/20260315_092437_c9a6ff",
        "default/20260315_092437_c9a6ff",
        " 20260315_092437_c9a6ff ",
        "@session:20260315_092437_c9a6ff",
    ):
        out = session_search(store, session_id=ref)
        assert out["success"] is True, (ref, out)
        assert out["session_id"] == "20260315_092437_c9a6ff"
        assert "profile" not in out


def test_read_strips_ansi_and_decodes(store):
    conversation(
        store,
        "s1",
        [
            ("assistant", "\x1b[31mred\x1b[0m text"),
            ("user", '\x00json:[{"type": "text", "text": "hi"}]'),
        ],
    )
    out = session_search(store, session_id="s1")
    assert [m["content"] for m in out["messages"]] == ["red text", "hi"]


def test_snippets_and_previews_lose_escapes_as_contents_do(searchable):
    """Regression: a message's content lost its colour codes, its snippet and the
    browse preview kept them (``\\u001b[31m`` in the model's answer)."""
    conversation(searchable, "s1", [("user", "colour \x1b[31mredalert\x1b[0m here")])
    found = session_search(searchable, query="colour")
    assert [r["snippet"] for r in found["results"]] == [">>>colour<<< redalert here"]
    listed = session_search(searchable)
    assert [r["preview"] for r in listed["results"]] == ["colour redalert here"]


def test_read_unknown_session(store):
    assert_error(session_search(store, session_id="nope"), "session_id not found: nope")


def test_read_current_session_is_allowed(store):
    conversation(store, "me", chat(3))
    assert session_search(store, session_id="me", current_session_id="me")["success"] is True


# --------------------------------------------------------------------------- scroll


def test_scroll_default_window_and_anchor(store):
    ids = conversation(store, "s1", chat(40))
    out = session_search(store, session_id="s1", around_message_id=ids[20])
    assert out["success"] is True and out["mode"] == "scroll"
    assert out["window"] == 5 and out["around_message_id"] == ids[20]
    assert ids_of(out["messages"]) == ids[15:26]
    assert [m.get("anchor", False) for m in out["messages"]].count(True) == 1
    assert out["messages"][5]["anchor"] is True
    assert out["messages_before"] == 5 and out["messages_after"] == 5
    assert out["link"] == "@session:default/s1"
    assert set(out["session_meta"]) == {"when", "source", "model", "title"}


@pytest.mark.parametrize(
    ("window", "expected"),
    [
        (None, 5),
        (0, 1),
        (-4, 1),
        (1, 1),
        (20, 20),
        (21, 20),
        (99, 20),
        ("3", 3),
        ("wide", 5),
        (2.7, 2),
    ],
)
def test_scroll_window_clamps(store, window, expected):
    ids = conversation(store, "s1", chat(60))
    out = session_search(store, session_id="s1", around_message_id=ids[30], window=window)
    assert out["window"] == expected
    assert len(out["messages"]) == 2 * expected + 1


@pytest.mark.parametrize(
    "form",
    [{"query": "chatter"}, {"session_id": "s1"}, {}],
    ids=["search", "read", "browse"],
)
def test_a_window_given_where_nothing_scrolls_is_named_not_used(store, form):
    """``{"query": "backup", "window": 3}`` showed its usual messages with no word:
    a window sizes a scroll alone."""
    conversation(store, "s1", chat(12))
    plain = session_search(store, **form)
    out = session_search(store, window=3, **form)
    assert out["success"] is True and out.get("mode") == plain.get("mode")
    said = [n for n in out.get("query_notes", []) if n.startswith("window not used")]
    assert len(said) == 1 and "around_message_id" in said[0]
    assert not any(n.startswith("window") for n in plain.get("query_notes", []))
    first = store.first_message_id("s1")
    scrolled = session_search(store, session_id="s1", around_message_id=first, window=3)
    assert scrolled["window"] == 3
    assert not any(n.startswith("window") for n in scrolled.get("query_notes", []))


def test_scroll_paging_protocol_repeats_boundary(store):
    ids = conversation(store, "s1", chat(30))
    first = session_search(store, session_id="s1", around_message_id=ids[10], window=3)
    forward = session_search(
        store, session_id="s1", around_message_id=first["messages"][-1]["id"], window=3
    )
    assert forward["messages"][3]["id"] == first["messages"][-1]["id"]
    backward = session_search(
        store, session_id="s1", around_message_id=first["messages"][0]["id"], window=3
    )
    assert backward["messages"][-4]["id"] == first["messages"][0]["id"]
    edge = session_search(store, session_id="s1", around_message_id=ids[-1], window=3)
    assert edge["messages_after"] == 0


def test_scroll_accepts_numeric_string_anchor(store):
    ids = conversation(store, "s1", chat(5))
    out = session_search(store, session_id="s1", around_message_id=str(ids[2]), window=1)
    assert out["success"] is True and out["around_message_id"] == ids[2]


@pytest.mark.parametrize("bad", ["abc", 1.5, [1], {"id": 1}, True])
def test_scroll_rejects_non_integer_anchor(store, bad):
    conversation(store, "s1", chat(5))
    assert_error(
        session_search(store, session_id="s1", around_message_id=bad),
        "scroll requires integer around_message_id",
    )


def test_scroll_errors(store):
    a = conversation(store, "a", chat(5))
    b = conversation(store, "b", chat(5))
    assert_error(
        session_search(store, session_id="zzz", around_message_id=a[0]), "session_id not found: zzz"
    )
    assert_error(
        session_search(store, session_id="a", around_message_id=b[0]),
        f"around_message_id {b[0]} not in session_id a",
    )
    assert_error(
        session_search(store, session_id="a", around_message_id=10**9), "not in session_id a"
    )
    assert_error(session_search(store, around_message_id=a[0]), "scroll requires session_id")
    assert_error(
        session_search(store, session_id="   ", around_message_id=a[0]),
        "scroll requires session_id",
    )


def test_scroll_wins_over_query(store):
    ids = conversation(store, "s1", chat(5))
    out = session_search(store, query="anything", session_id="s1", around_message_id=ids[1])
    assert out["mode"] == "scroll"
    assert session_search(store, query="anything", session_id="s1")["mode"] == "read"


def test_scroll_rebinds_within_a_lineage(store):
    conversation(store, "parent", chat(4), end_reason="compression")
    child = conversation(store, "child", chat(6), start=T0 + 100, parent="parent")
    out = session_search(store, session_id="parent", around_message_id=child[3], window=1)
    assert out["success"] is True
    assert out["session_id"] == "child" and "warning" in out
    assert str(child[3]) in out["warning"] and "child" in out["warning"]
    assert ids_of(out["messages"]) == child[2:5]


def test_scroll_lineage_guard(store):
    parent = conversation(store, "parent", chat(6), end_reason="compression")
    live = conversation(store, "live", chat(6), start=T0 + 100, parent="parent")
    store.set_message_flags(live[1], active=False, compacted=True)
    rejected = session_search(
        store, session_id="live", around_message_id=live[3], current_session_id="live"
    )
    assert_error(rejected, "scroll rejected", "current session lineage")
    archived = session_search(
        store, session_id="live", around_message_id=live[1], current_session_id="live"
    )
    assert archived["success"] is True
    ended = session_search(
        store, session_id="parent", around_message_id=parent[2], current_session_id="live"
    )
    assert ended["success"] is True
    store.set_message_flags(parent[4], active=False, compacted=False)
    rewound = session_search(
        store, session_id="parent", around_message_id=parent[4], current_session_id="live"
    )
    assert_error(rewound, "scroll rejected")
    elsewhere = conversation(store, "other", chat(4), start=T0 + 500)
    assert (
        session_search(
            store, session_id="other", around_message_id=elsewhere[1], current_session_id="live"
        )["success"]
        is True
    )


def test_scroll_caps_content_as_discovery_does(store):
    # Replaces test_scroll_has_no_caps: issue 14 asks read and scroll to cap
    # content (content_truncated, with how to see more) like discovery.
    big = "z" * 9000
    ids = conversation(store, "s1", [("user", "q"), ("assistant", big), ("user", "thanks")])
    out = session_search(store, session_id="s1", around_message_id=ids[1], window=1)
    shown = out["messages"][1]
    assert shown["content"] == "z" * WINDOW_CONTENT_CAP + "\u2026"
    assert shown["content_truncated"] is True and shown["original_content_chars"] == 9000
    assert "content_truncated" not in out["messages"][0]
    assert any("4,000" in note and "scroll" in note for note in out["query_notes"])


@pytest.mark.parametrize("chars", ["z", "\u6771"])  # ASCII and CJK (3 UTF-8 bytes each)
def test_read_and_scroll_stay_under_the_payload_budget(store, chars):
    huge = chars * 3_000_000
    turns = [
        ("user", f"q{i}") if i % 2 else ("assistant", huge if i == 4 else chars * 5000)
        for i in range(60)
    ]
    ids = conversation(store, "s1", turns)
    read = session_search(store, session_id="s1")
    scroll = session_search(store, session_id="s1", around_message_id=ids[4], window=20)
    for out in (read, scroll):
        assert out["success"] is True
        assert payload_bytes(out) <= PAYLOAD_BUDGET_BYTES
        assert any("64 KB" in note for note in out["query_notes"])
        assert all(len(m["content"]) <= WINDOW_CONTENT_CAP + 1 for m in out["messages"])
    anchor = [m for m in scroll["messages"] if m.get("anchor")]
    assert anchor and anchor[0]["original_content_chars"] == 3_000_000
    # Only what was needed is cut: a small session comes back whole.
    small = conversation(store, "s2", [("user", "hello"), ("assistant", "hi")])
    out = session_search(store, session_id="s2", around_message_id=small[0], window=1)
    assert "query_notes" not in out and [m["content"] for m in out["messages"]] == ["hello", "hi"]


def test_a_search_with_many_notes_stays_under_the_payload_budget(searchable):
    """Regression: a pasted command line of dashed words has a note per word (over
    300 of them, 35 KB), added after the results were fitted to the budget with
    room for 1 KB of notes: the answer was past the 64 KB the tool promises.
    (Words glued to emoji made the notes here first; those are one note now.)"""
    for n in range(3):
        turns = [("user", f"pelican {'x ' * 4500}"), ("assistant", f"pelican {'y ' * 4500}")]
        conversation(searchable, f"s{n}", turns * 5, start=T0 + 1000 * n)
    query = "pelican " + " ".join(f"-x{i}" for i in range(400))
    out = session_search(searchable, query=query, limit=3)
    assert out["success"] is True and out["count"] == 3
    assert sum("does not exclude" in note for note in out["query_notes"]) > 100
    assert payload_bytes(out) <= PAYLOAD_BUDGET_BYTES


@pytest.mark.parametrize("detail", ["adaptive", "full"])
def test_a_search_stays_under_the_payload_budget(searchable, detail):
    # Ten coding sessions whose turns write files: every message and every tool
    # call's arguments near the cap.  The answer was 140 KB (adaptive) to 560 KB
    # (full), past the 100,000 characters Hermes keeps in the model's context.
    write = json.dumps(
        [
            {
                "id": "c",
                "type": "function",
                "function": {
                    "name": "write_file",
                    "arguments": json.dumps({"content": "w" * 9000}),
                },
            }
        ]
    )
    for n in range(10):
        turns = [
            {
                "role": "user" if i % 2 == 0 else "assistant",
                "content": f"pelican {'x ' * 4500}",
                "tool_calls": write if i % 2 else None,
            }
            for i in range(20)
        ]
        conversation(searchable, f"s{n}", turns, start=T0 + 1000 * n)
    out = session_search(searchable, query="pelican", limit=10, detail=detail)
    assert out["success"] is True and out["count"] == 10
    assert payload_bytes(out) <= PAYLOAD_BUDGET_BYTES
    assert any("64 KB" in note for note in out["query_notes"])
    first = out["results"][0]
    assert first["detail"] == "full" and len(first["messages"]) > 1
    assert [m["id"] for m in first["messages"] if m.get("anchor")] == [first["match_message_id"]]
    for result in out["results"]:
        assert any(m["content_truncated"] for m in result["messages"])
    # Only what was needed is cut: an answer within the budget keeps the 4,000 characters.
    conversation(searchable, "small", [("user", "heron " * 2000)], start=T0 + 20_000)
    few = session_search(searchable, query="heron", detail=detail)
    assert not any("64 KB" in note for note in few.get("query_notes", []))
    assert len(few["results"][0]["messages"][0]["content"]) == WINDOW_CONTENT_CAP + 1


def test_scroll_caps_tool_call_arguments(store):
    store.add_session("s1", "cli")
    big_args = json.dumps({"query": "q" * 20000})
    mid = store.add_message(
        "s1",
        "assistant",
        None,
        tool_calls=[
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "web_search", "arguments": big_args},
            }
        ],
    )
    out = session_search(store, session_id="s1", around_message_id=mid, window=1)
    msg = out["messages"][0]
    assert msg["tool_calls_truncated"] is True
    assert len(msg["tool_calls"][0]["function"]["arguments"]) == WINDOW_CONTENT_CAP + 1
    assert msg["tool_calls"][0]["function"]["name"] == "web_search"


@pytest.mark.parametrize(
    "calls",
    [
        # arguments as an object, as some providers hand them over
        [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "w", "arguments": {"a": "q" * 10**6}},
            }
        ],
        [{"name": "w", "arguments": "q" * 10**6}],  # no "function" level
        ["q" * 10**6],  # a bare string in the list
        {"function": {"name": "w", "arguments": {"a": "q" * 10**6}}},  # one call, not a list
    ],
)
def test_tool_calls_of_any_shape_stay_under_the_payload_budget(searchable, calls):
    ids = conversation(
        searchable,
        "s1",
        [("user", "ibis"), {"role": "assistant", "content": "ok", "tool_calls": json.dumps(calls)}],
    )
    read = session_search(searchable, session_id="s1")
    scroll = session_search(searchable, session_id="s1", around_message_id=ids[1], window=1)
    found = session_search(searchable, query="ibis")
    for out in (read, scroll, found):
        assert payload_bytes(out) <= PAYLOAD_BUDGET_BYTES
    # the call is shown, cut, not left out of the read
    assert ids_of(read["messages"]) == ids and "messages_omitted" not in read
    shown = scroll["messages"][1]
    assert shown["tool_calls_truncated"] is True and "qqq" in json.dumps(shown["tool_calls"])


# --------------------------------------------------------------------------- discovery


def _result_ids(payload: dict[str, Any]) -> list[str]:
    return [r["session_id"] for r in payload["results"]]


def test_discovery_basic_shape(searchable):
    ids = conversation(
        searchable,
        "s1",
        [("user", "how do I rotate the zebrakey"), ("assistant", "use the rotate command")],
        title="Keys",
    )
    out = session_search(searchable, query="zebrakey")
    assert out["success"] is True and out["mode"] == "discover"
    assert out["query"] == "zebrakey" and out["detail"] == "adaptive"
    assert out["count"] == 1 and out["sessions_searched"] == 1
    res = out["results"][0]
    assert res["session_id"] == "s1" and res["link"] == "@session:default/s1"
    assert res["match_message_id"] == ids[0] and res["matched_role"] == "user"
    assert ">>>" in res["snippet"] and res["title"] == "Keys"
    assert res["source"] == "cli" and res["model"] == "test-model" and res["detail"] == "full"
    assert ids_of(res["messages"]) == ids
    assert res["messages"][0]["anchor"] is True
    assert {"bookend_start", "bookend_end", "messages_before", "messages_after", "when"} <= set(res)
    dumps(out)


def test_discovery_no_results(searchable):
    conversation(searchable, "s1", chat(3))
    out = session_search(searchable, query="qwertyzzz")
    assert out["success"] is True and out["results"] == [] and out["count"] == 0
    assert "No matching sessions" in out["message"]


def test_discovery_limit_and_adaptive_detail(searchable):
    for i in range(6):
        conversation(
            searchable,
            f"s{i}",
            [("user", f"talk about marmalade {i}"), ("assistant", "sure")],
            start=T0 + i * 10,
        )
    out = session_search(searchable, query="marmalade")
    assert out["count"] == 3
    details = [r["detail"] for r in out["results"]]
    assert details == ["full", "compact", "compact"]
    compact = out["results"][1]
    assert [m["id"] for m in compact["messages"]] == [compact["match_message_id"]]
    assert "bookend_start" not in compact
    full = session_search(searchable, query="marmalade", detail="FULL", limit=10)
    assert full["count"] == 6 and {r["detail"] for r in full["results"]} == {"full"}
    assert session_search(searchable, query="marmalade", limit=50)["count"] == 6
    assert session_search(searchable, query="marmalade", limit=0)["count"] == 1
    assert session_search(searchable, query="marmalade", detail="bogus")["detail"] == "adaptive"


def test_discovery_index_detail_returns_snippets_only(searchable):
    for i in range(3):
        conversation(searchable, f"s{i}", chat(12, f"quokka{i} quokka"), start=T0 + i)
    out = session_search(searchable, query="quokka", detail="index", limit=5)
    assert out["detail"] == "index" and out["count"] == 3
    for res in out["results"]:
        assert res["detail"] == "index"
        assert "messages" not in res and "bookend_start" not in res
        assert res["snippet"] and res["link"].startswith("@session:default/")


def test_discovery_excludes_hidden_sources(searchable):
    conversation(searchable, "cli1", [("user", "narwhal facts")])
    for src in ("subagent", "tool", "kanban"):
        conversation(searchable, f"{src}1", [("user", "narwhal facts")], source=src)
    out = session_search(searchable, query="narwhal", limit=10)
    assert _result_ids(out) == ["cli1"]


def test_discovery_demotes_cron_stably(searchable):
    for i in range(3):
        conversation(
            searchable,
            f"cron{i}",
            [("user", "pelican report pelican pelican")],
            source="cron",
            start=T0 + i,
        )
    conversation(searchable, "human", [("user", "pelican")], start=T0 + 50)
    conversation(searchable, "human2", [("user", "a pelican again")], start=T0 + 60)
    out = session_search(searchable, query="pelican", limit=10)
    ids = _result_ids(out)
    assert ids[:2] == sorted(ids[:2], key=["human", "human2"].index)
    assert set(ids[:2]) == {"human", "human2"}
    assert set(ids[2:]) == {"cron0", "cron1", "cron2"}
    raw = [
        r["session_id"]
        for r in searchable.search_messages(
            "pelican", exclude_sources=("kanban", "subagent", "tool"), limit=300
        )
    ]
    cron_order = [sid for sid in raw if sid.startswith("cron")]
    assert ids[2:] == cron_order
    assert session_search(searchable, query="pelican", limit=2)["count"] == 2
    assert set(_result_ids(session_search(searchable, query="pelican", limit=2))) == {
        "human",
        "human2",
    }


def test_discovery_dedupes_lineage_and_returns_hit_session(searchable):
    conversation(
        searchable,
        "root",
        [("user", "the capybara plan"), ("assistant", "ok")],
        end_reason="compression",
        title="Capybara",
    )
    child = conversation(
        searchable,
        "child",
        [("user", "capybara follow-up"), ("assistant", "capybara done")],
        start=T0 + 100,
        parent="root",
    )
    conversation(
        searchable, "grandchild", [("user", "more capybara")], start=T0 + 200, parent="child"
    )
    out = session_search(searchable, query="capybara", limit=10, sort="newest")
    assert out["count"] == 1 and out["sessions_searched"] == 1
    res = out["results"][0]
    assert res["session_id"] == "grandchild"
    assert res["parent_session_id"] == "root"
    assert res["title"] == "Capybara"
    assert res["link"] == "@session:default/grandchild"
    assert res["match_message_id"] in ids_of(res["messages"])
    oldest = session_search(searchable, query="capybara", limit=10, sort="oldest")
    assert oldest["results"][0]["session_id"] == "root"
    assert "parent_session_id" not in oldest["results"][0]
    assert child  # the middle session is deduped into the same slot


def test_discovery_survives_parent_cycles(searchable):
    conversation(searchable, "a", [("user", "ouroboros one")])
    conversation(searchable, "b", [("user", "ouroboros two")], parent="a")
    searchable._conn.execute("UPDATE sessions SET parent_session_id = 'b' WHERE id = 'a'")
    conversation(searchable, "orphan", [("user", "ouroboros three")])
    searchable._conn.execute("PRAGMA foreign_keys = OFF")
    searchable._conn.execute("UPDATE sessions SET parent_session_id = 'gone' WHERE id = 'orphan'")
    out = session_search(searchable, query="ouroboros", limit=10)
    assert out["success"] is True
    ids = _result_ids(out)
    assert len(ids) == 2 and "orphan" in ids


def test_discovery_skips_current_lineage(searchable):
    conversation(searchable, "me", [("user", "wombat notes")])
    conversation(searchable, "other", [("user", "wombat elsewhere")], start=T0 + 10)
    out = session_search(searchable, query="wombat", current_session_id="me", limit=10)
    assert _result_ids(out) == ["other"]


def test_discovery_current_lineage_exceptions(searchable):
    conversation(searchable, "compressed", [("user", "axolotl early")], end_reason="compression")
    conversation(
        searchable,
        "reset",
        [("user", "axolotl reset talk")],
        start=T0 + 10,
        parent="compressed",
        end_reason="session_reset",
    )
    conversation(
        searchable,
        "branched",
        [("user", "axolotl branch")],
        start=T0 + 20,
        parent="reset",
        end_reason="branched",
    )
    live = conversation(
        searchable,
        "live",
        [("user", "axolotl archived"), ("user", "axolotl live")],
        start=T0 + 30,
        parent="branched",
    )
    searchable.set_message_flags(live[0], active=False, compacted=True)
    out = session_search(
        searchable, query="axolotl", current_session_id="live", limit=10, sort="oldest"
    )
    # one slot per lineage: the oldest allowed hit is in the compression-ended parent
    assert _result_ids(out) == ["compressed"]
    newest = session_search(
        searchable, query="axolotl", current_session_id="live", limit=10, sort="newest"
    )
    # newest allowed hit is the compaction archive in the live session itself
    assert _result_ids(newest) == ["live"]
    assert newest["results"][0]["match_message_id"] == live[0]
    # without the archive and with the compression parent excluded, the reset parent shows
    searchable.set_message_flags(live[0], active=False, compacted=False)
    filtered = session_search(
        searchable,
        query="axolotl",
        current_session_id="live",
        limit=10,
        sort="newest",
        exclude_session_ids=["compressed"],
    )
    assert _result_ids(filtered) == ["reset"]
    # a branched parent never counts as having left live context
    branched_only = session_search(
        searchable, query="axolotl AND branch", current_session_id="live"
    )
    assert branched_only["results"] == []


def test_discovery_finds_the_current_lineages_archives_behind_its_live_matches(searchable):
    # Hermes' compaction keeps the session id: the archived past and the live
    # summary both match, and a search by sessions read only the live best row.
    mine = conversation(
        searchable,
        "ongoing",
        [("user", "narwhal tusk plans"), ("user", "narwhal summary narwhal narwhal")],
        start=T0 + 40,
    )
    searchable.set_message_flags(mine[0], active=False, compacted=True)
    # a sibling in the same lineage, found by the reads only
    sib = conversation(
        searchable,
        "sibling",
        [("user", "narwhal sibling archive"), ("user", "narwhal narwhal narwhal live")],
        start=T0 + 50,
        parent="ongoing",
    )
    searchable.set_message_flags(sib[0], active=False, compacted=True)
    out = session_search(searchable, query="narwhal", current_session_id="ongoing", limit=10)
    # one lineage, shown by an archive, never by a live row
    assert [r["match_message_id"] for r in out["results"]] in ([mine[0]], [sib[0]]), out
    for left_out, shown, archive in (
        ("sibling", "ongoing", mine[0]),
        ("ongoing", "sibling", sib[0]),
    ):
        alone = session_search(
            searchable,
            query="narwhal",
            current_session_id="ongoing",
            exclude_session_ids=[left_out],
        )
        assert [(r["session_id"], r["match_message_id"]) for r in alone["results"]] == [
            (shown, archive)
        ]


def test_discovery_bookends_skip_compaction_summaries_and_cap(searchable):
    summary = "[CONTEXT COMPACTION] earlier turns summarised " + "s" * 5000
    turns = [
        ("user", "  " + summary),
        ("assistant", "[CONTEXT SUMMARY]: the gist"),
        ("user", "opening question " + "o" * 3000),
        *chat(20, "filler"),
        ("user", "the ocelot matter " + "w" * 6000),
        *chat(20, "filler"),
        ("assistant", "closing " + "c" * 2000),
    ]
    ids = conversation(searchable, "s1", turns)
    out = session_search(searchable, query="ocelot", detail="full")
    res = out["results"][0]
    starts = [m["content"] for m in res["bookend_start"]]
    assert all("CONTEXT" not in c for c in starts)
    assert starts[0].startswith("opening question")
    opening = res["bookend_start"][0]
    assert opening["content_truncated"] is True
    assert opening["original_content_chars"] == len("opening question " + "o" * 3000)
    assert len(opening["content"]) == 1201 and opening["content"].endswith("\u2026")
    closing = res["bookend_end"][-1]
    assert len(closing["content"]) == 1201 and closing["content_truncated"] is True
    anchor = next(m for m in res["messages"] if m.get("anchor"))
    assert anchor["id"] == ids[23]
    assert len(anchor["content"]) == 4001 and anchor["original_content_chars"] == 6018
    assert all("content_truncated" not in m for m in res["messages"] if not m.get("anchor"))


def test_discovery_title_match(searchable):
    conversation(searchable, "t1", [("user", "first words")], title="Garden plan", start=T0)
    conversation(
        searchable, "t2", [("user", "second words")], title="Garden plan #2", start=T0 + 10
    )
    conversation(searchable, "t3", [("user", "third words")], title="Garden plan #3", start=T0 + 20)
    conversation(searchable, "w1", [("user", "other")], title="test_project", start=T0)
    conversation(searchable, "w2", [("user", "other")], title="testXproject #2", start=T0 + 5)
    out = session_search(searchable, query="`Garden plan`")
    res = out["results"][0]
    assert res["session_id"] == "t3" and res["matched_role"] == "session_title"
    assert res["snippet"] == "Session title matched: Garden plan #3"
    assert res["detail"] == "full" and res["link"] == "@session:default/t3"
    exact = session_search(searchable, query="Garden plan #2")["results"][0]
    assert exact["session_id"] == "t2"
    escaped = session_search(searchable, query="test_project")
    assert escaped["results"][0]["session_id"] == "w1"
    assert (
        session_search(searchable, query="Garden plan", detail="index")["results"][0]["detail"]
        == "index"
    )


def test_discovery_title_match_respects_current_lineage(searchable):
    conversation(searchable, "me", [("user", "hi")], title="My session")
    out = session_search(searchable, query="My session", current_session_id="me")
    assert out["results"] == []


def test_discovery_time_bounds(searchable):
    conversation(searchable, "old", [("user", "lemur sighting")], start=T0)
    conversation(searchable, "new", [("user", "lemur again")], start=T0 + 86400 * 30)
    after = session_search(searchable, query="lemur", limit=5, after=T0 + 86400)
    assert _result_ids(after) == ["new"] and after["filters"]["after"] == T0 + 86400
    before = session_search(searchable, query="lemur", limit=5, before=str(T0 + 10))
    assert _result_ids(before) == ["old"]
    from datetime import datetime

    iso = datetime.fromtimestamp(T0 + 86400 * 10).date().isoformat()
    assert _result_ids(session_search(searchable, query="lemur", after=iso)) == ["new"]
    assert _result_ids(session_search(searchable, query="lemur", before=iso)) == ["old"]
    assert session_search(searchable, query="lemur", limit=5, after="")["count"] == 2


@pytest.mark.parametrize("bad", ["yesterday", "2026-13-45", True, float("nan"), [1]])
def test_discovery_bad_time_bound(searchable, bad):
    assert_error(session_search(searchable, query="x", after=bad), "after must be epoch seconds")
    assert_error(session_search(searchable, query="x", before=bad), "before must be epoch")


def test_discovery_after_not_before_before(searchable):
    assert_error(
        session_search(searchable, query="x", after=200, before=100),
        "after must be earlier than before",
    )


def test_discovery_exclude_session_ids(searchable):
    for sid in ("a", "b", "c"):
        conversation(searchable, sid, [("user", "tapir trail")])
    out = session_search(
        searchable, query="tapir", limit=10, exclude_session_ids=["a", "@session:default/b"]
    )
    assert _result_ids(out) == ["c"]
    assert (
        session_search(searchable, query="tapir", limit=10, exclude_session_ids="a,b")["count"] == 1
    )
    assert_error(
        session_search(searchable, query="tapir", exclude_session_ids=5), "exclude_session_ids"
    )
    assert_error(
        session_search(searchable, query="tapir", exclude_session_ids=[1]), "exclude_session_ids"
    )


def test_discovery_role_filter(searchable):
    conversation(
        searchable,
        "s1",
        [
            ("user", "run it"),
            {"role": "tool", "content": "gecko exit 0", "tool_name": "terminal"},
        ],
    )
    assert session_search(searchable, query="gecko")["count"] == 0
    out = session_search(searchable, query="gecko", role_filter="tool")
    assert out["count"] == 1 and out["results"][0]["matched_role"] == "tool"
    assert session_search(searchable, query="gecko", role_filter=" user , TOOL ,,")["count"] == 1
    assert_error(session_search(searchable, query="gecko", role_filter=7), "role_filter")


def test_discovery_rebuild_note(searchable, monkeypatch):
    conversation(searchable, "s1", [("user", "heron")])
    monkeypatch.setattr(
        searchable,
        "rebuild_status",
        lambda: {"pending": 5, "total": 12000, "indexed": 6000, "percent": 50},
    )
    # A backfill of a served index: one under its build name slows no search.
    monkeypatch.setattr(searchable, "slowed_by", lambda: ["backfill"])
    out = session_search(searchable, query="heron")
    assert out["index_rebuild"]["percent"] == 50
    note = out["index_rebuild"]["note"]
    # The percent, and what finishes it on an idle store; no counts, since the
    # store's totals are id windows per index, not messages (issue 14).
    assert "50% done" in note and "hermes-fts optimize-storage" in note and "12,000" not in note
    monkeypatch.setattr(searchable, "rebuild_status", lambda: None)
    monkeypatch.setattr(searchable, "slowed_by", lambda: [])
    assert "index_rebuild" not in session_search(searchable, query="heron")

    def broken() -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(searchable, "rebuild_status", broken)
    assert session_search(searchable, query="heron")["success"] is True


def test_discovery_search_failure_is_an_error_payload(searchable, monkeypatch):
    def explode(*a: Any, **k: Any) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(searchable, "search", explode)
    assert_error(session_search(searchable, query="anything"), "Search failed", "disk I/O")


def test_discovery_cjk(searchable):
    conversation(
        searchable,
        "zh",
        [("user", "帮我看看部署脚本为什么失败"), ("assistant", "日志显示权限不足")],
    )
    out = session_search(searchable, query="部署")
    assert _result_ids(out) == ["zh"]
    text = dumps(out)
    assert "部署" in text


# --------------------------------------------------------------------------- profiles


def _profile_store(home: Path, name: str) -> Path:
    path = home / "profiles" / name / "state.db"
    s = open_store(path)
    conversation(
        s,
        f"{name}_sess",
        [("user", f"secret of {name} flamingo"), ("assistant", "noted")],
        title=f"{name} title",
    )
    s.close()
    return path


@pytest.mark.parametrize(
    "bad",
    [
        "../x",
        "..",
        "/abs",
        "/etc/passwd",
        "a/b",
        "x\x00y",
        "a" * 65,
        "a.b",
        "~root",
        "C:\\x",
        5,
    ],
)
def test_profile_names_refused(store, bad):
    conversation(store, "s1", chat(2))
    out = session_search(store, profile=bad)
    assert_error(out)
    assert "profile" in out["error"]


def test_profile_name_of_64_chars_is_valid_but_missing(store):
    assert_error(session_search(store, profile="a" * 64), "does not exist")


def test_missing_profile_lists_existing(home, store):
    _profile_store(home, "work")
    out = session_search(store, profile="ghost")
    assert_error(out, "profile 'ghost' does not exist", "work")


def test_profile_symlink_escape_refused(home, store, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")
    s = open_store(outside / "evil" / "state.db")
    conversation(s, "evil_sess", chat(2))
    s.close()
    (home / "profiles").mkdir(exist_ok=True)
    try:
        os.symlink(outside / "evil", home / "profiles" / "evil")
    except (OSError, NotImplementedError):
        pytest.skip("symlinks unavailable")
    assert_error(session_search(store, profile="evil"), "outside")
    assert_error(session_search(store, session_id="evil/evil_sess"), "outside")
    assert_error(session_search(store, session_id="evil_sess"), "not found")


def test_profile_read_is_readonly_and_isolated(home, store):
    conversation(store, "local", [("user", "local flamingo")])
    path = _profile_store(home, "work")
    digest = file_digest(path)
    browse = session_search(store, profile="work")
    assert [r["session_id"] for r in browse["results"]] == ["work_sess"]
    assert browse["results"][0]["link"] == "@session:work/work_sess"
    read = session_search(store, session_id="@session:work/work_sess")
    assert read["success"] is True and read["link"] == "@session:work/work_sess"
    scroll = session_search(
        store,
        session_id="work_sess",
        profile="work",
        around_message_id=read["messages"][0]["id"],
        window=1,
    )
    assert scroll["success"] is True
    if hasattr(store, "search_messages"):
        found = session_search(store, query="flamingo", profile="work", limit=10)
        assert [r["session_id"] for r in found["results"]] == ["work_sess"]
        assert found["results"][0]["link"] == "@session:work/work_sess"
    # the local store does not see the profile's sessions through a plain search
    assert_error(session_search(store, session_id="work/local"), "not found")
    assert file_digest(path) == digest
    wal = path.with_name("state.db-wal")
    assert not wal.exists() or wal.stat().st_size == 0  # nothing was written


def test_profile_current_session_not_applied(home, store):
    _profile_store(home, "work")
    out = session_search(
        store,
        session_id="work_sess",
        profile="work",
        current_session_id="work_sess",
        around_message_id=1,
    )
    # the id space is per profile, the caller's current session says nothing about it
    assert "scroll rejected" not in out.get("error", "")


def test_bare_id_found_in_another_profile(home, store):
    _profile_store(home, "alpha")
    _profile_store(home, "beta")
    out = session_search(store, session_id="beta_sess")
    assert out["success"] is True and out["profile"] == "beta"
    assert out["link"] == "@session:beta/beta_sess"
    mid = out["messages"][0]["id"]
    scroll = session_search(store, session_id="alpha_sess", around_message_id=mid, window=1)
    assert scroll["success"] is True and scroll["profile"] == "alpha"
    pinned = session_search(store, session_id="default/beta_sess")
    assert_error(pinned, "session_id not found: beta_sess")


def test_profile_store_closed_caller_store_kept(home, store, monkeypatch):
    _profile_store(home, "work")
    opened: list[SessionStore] = []
    real_open = tool_context.open_store

    def tracking(path: Path, *, readonly: bool) -> SessionStore:
        s = real_open(path, readonly=readonly)
        opened.append(s)
        return s

    monkeypatch.setattr(tool_context, "open_store", tracking)
    assert session_search(store, profile="work")["success"] is True
    assert len(opened) == 1 and opened[0].readonly is True
    with pytest.raises(sqlite3.ProgrammingError):
        opened[0]._conn.execute("SELECT 1")
    store._conn.execute("SELECT 1")  # the caller's store is still open


def test_default_profile_reuses_caller_store(home, store, monkeypatch):
    conversation(store, "mine", chat(3))

    def no_open(*a: Any, **k: Any) -> None:
        raise AssertionError("the caller's own store must be reused")

    monkeypatch.setattr(tool_context, "open_store", no_open)
    out = session_search(store, session_id="@session:default/mine", current_session_id="x")
    assert out["success"] is True and out["link"] == "@session:default/mine"


def test_no_store_opens_default_or_explains(home):
    assert_error(session_search(None), "no session store", "HERMES_HOME")
    assert not (home / "state.db").exists()
    s = open_store(home / "state.db")
    conversation(s, "s1", chat(2))
    s.close()
    out = session_search(None, session_id="s1")
    assert out["success"] is True and out["link"] == "@session:default/s1"


def test_store_outside_home_links_without_profile(tmp_path, monkeypatch):
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "home"))
    s = open_store(tmp_path / "elsewhere" / "custom.db")
    conversation(s, "s1", chat(2))
    out = session_search(s, session_id="s1")
    assert out["link"] == "@session:s1"
    s.close()


# --------------------------------------------------------------------------- errors


def test_every_error_is_json_ready(store):
    conversation(store, "s1", chat(3))
    calls: list[dict[str, Any]] = [
        {"session_id": "missing"},
        {"session_id": "s1", "around_message_id": "x"},
        {"around_message_id": 3},
        {"profile": "../etc"},
        {"query": "x", "after": "nonsense"},
        {"query": "x", "role_filter": 3.5},
    ]
    for kwargs in calls:
        out = session_search(store, **kwargs)
        assert_error(out)
        assert json.loads(json.dumps(out, ensure_ascii=False)) == out


def test_unexpected_exceptions_become_payloads(store, monkeypatch):
    conversation(store, "s1", chat(3))

    def boom(*a: Any, **k: Any) -> None:
        raise RuntimeError("kaput")

    monkeypatch.setattr(store, "get_message_ends", boom)
    assert_error(session_search(store, session_id="s1"), "failed to load session", "kaput")
    monkeypatch.setattr(store, "sessions_by_activity", boom)
    assert_error(session_search(store), "kaput")


def test_browse_hides_only_the_current_conversation(store):
    conversation(store, "r", chat(2), start=T0, end_reason="compression", session_key="k")
    conversation(
        store,
        "tip",
        chat(2),
        start=T0 + 10,
        parent="r",
        session_key="k",
        end_reason="session_reset",
    )
    conversation(store, "fresh", chat(2), start=T0 + 20, parent="tip", session_key="k")
    mine = session_search(store, limit=10, current_session_id="fresh")
    # the compressed conversation r -> tip is another conversation: still listed, as its tip
    assert [r["session_id"] for r in mine["results"]] == ["tip"]
    theirs = session_search(store, limit=10, current_session_id="tip")
    assert [r["session_id"] for r in theirs["results"]] == ["fresh"]


def test_title_with_like_wildcards_is_literal(searchable):
    conversation(searchable, "p1", [("user", "x")], title="100% done", start=T0)
    conversation(searchable, "p2", [("user", "y")], title="1000 done #2", start=T0 + 5)
    out = session_search(searchable, query="100% done")
    assert out["results"][0]["session_id"] == "p1"
    assert out["results"][0]["matched_role"] == "session_title"


def test_long_error_text_is_bounded(store, monkeypatch):
    require_search(store)

    def explode(*a: Any, **k: Any) -> None:
        raise RuntimeError("x" * 10_000)

    monkeypatch.setattr(store, "search", explode)
    out = session_search(store, query="anything")
    assert_error(out, "Search failed")
    assert len(out["error"]) < 2100 and out["error"].endswith("[truncated]")


def test_no_default_store_still_finds_profile_sessions(home):
    _profile_store(home, "solo")
    out = session_search(None, session_id="solo_sess")
    assert out["success"] is True and out["link"] == "@session:solo/solo_sess"
    assert out["profile"] == "solo"
    assert_error(session_search(None, session_id="ghost"), "no session store")
    assert not (home / "state.db").exists()


def test_profiles_are_anchored_at_hermes_root_under_an_active_profile(tmp_path, monkeypatch):
    # `hermes -p work` points HERMES_HOME at <root>/profiles/work; Hermes still
    # finds profile "default" at <root>/state.db and "other" next to "work".
    root = tmp_path / "data"
    default = open_store(root / "state.db")
    conversation(default, "root_sess", [("user", "secret of root flamingo")], title="root")
    default.close()
    _profile_store(root, "other")
    work = _profile_store(root, "work")
    monkeypatch.setenv("HERMES_HOME", str(root / "profiles" / "work"))
    with open_store(work) as current:
        other = session_search(current, query="flamingo", profile="other")
        assert [r["session_id"] for r in other["results"]] == ["other_sess"]
        home = session_search(current, query="flamingo", profile="default")
        assert [r["session_id"] for r in home["results"]] == ["root_sess"]


def test_an_unknown_role_is_noted_not_silently_empty(searchable):
    conversation(searchable, "s1", [("user", "gecko facts")])
    out = session_search(searchable, query="gecko", role_filter="user,bogus")
    assert out["count"] == 1
    assert any("'bogus' is not a Hermes role" in note for note in out["query_notes"])
    out = session_search(searchable, query="gecko", role_filter="bogus")
    assert out["count"] == 0 and "'bogus' is not a Hermes role" in " ".join(out["query_notes"])
    assert "query_notes" not in session_search(searchable, query="gecko", role_filter="user")


def test_discovery_names_why_it_used_slower_routes(tmp_path: Path) -> None:
    """An agent's store without our indexes is answered exactly, and the note carries
    the store's needs_optimize codes that slowed it (issue 27: one reading of them)."""
    db = tmp_path / "state.db"
    with SessionStore(db) as store:
        conversation(store, "s1", [("user", "heron nests by the river")])
    plain = sqlite3.connect(db)  # as an agent-written store: rows, none of our indexes
    with plain:
        for (name,) in plain.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'hermes_fts%'"
        ).fetchall():
            plain.execute(f"DROP TRIGGER {name}")
    plain.close()
    conn = hermes_fts.connect(str(db))
    with conn:
        for table in ("hermes_fts_word", "hermes_fts_trigram", "hermes_fts_cjk"):
            conn.execute(f"DROP TABLE IF EXISTS {table}")
    conn.close()
    with SessionStore(db, readonly=True) as store:
        out = session_search(store, query="heron")
        assert out["count"] == 1 and out["route"] == "like_scan"
        assert out["index_rebuild"]["reasons"] == ["cjk_missing"]  # the word index is opt-in
        assert "hermes-fts optimize-storage" in out["index_rebuild"]["note"]
    with SessionStore(db) as store:
        assert store.optimize_storage(min_pause=0)["ok"]
        assert "index_rebuild" not in session_search(store, query="heron")


def test_a_backlog_of_rows_waiting_for_the_cjk_index_is_named_with_sync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows a writer without the extension added wait in the pending table, and a
    search that cannot apply them (read-only, as the plugin opens) reads them by
    a LIKE scan, Latin words too now that the word index is opt-in.  From
    ``PENDING_SLOW`` of them the answer says so, and that ``sync`` adds them."""
    monkeypatch.setattr(slowed, "PENDING_SLOW", 3)
    db = tmp_path / "state.db"
    with SessionStore(db) as store:
        conversation(store, "s1", [("user", "heron nests by the river")])
        assert store.optimize_storage(min_pause=0)["ok"]
    plain = sqlite3.connect(db)  # an agent's writer: no extension, the triggers log rows
    for k, when in ((0, 1.0), (1, 2.0)):
        with plain:
            plain.execute(
                "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
                ("s1", "user", f"heron count {k}", when),
            )
        with SessionStore(db, readonly=True) as store:
            out = session_search(store, query="heron")
            assert out["count"] == 1 and "index_rebuild" not in out  # below the line
    with plain:
        plain.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
            ("s1", "user", "heron count 2", 3.0),
        )
    plain.close()
    with SessionStore(db, readonly=True) as store:
        out = session_search(store, query="heron")
        assert out["index_rebuild"]["reasons"] == ["cjk_pending"]
        assert "hermes-fts sync" in out["index_rebuild"]["note"]
    with SessionStore(db) as store:
        store.sync()
    with SessionStore(db, readonly=True) as store:
        assert "index_rebuild" not in session_search(store, query="heron")


def test_an_outdated_cjk_index_is_named_as_such_not_as_not_built(tmp_path: Path) -> None:
    """A CJK index an older hermes-fts built is complete and served only for the
    queries it can answer: the tool's and the plugin's notes name that cause, in
    ``status``' words, where they said the indexes were "not built (or not complete)"."""
    from _support import rebuild_cjk_index

    db = tmp_path / "state.db"
    with SessionStore(db) as store:
        conversation(store, "s1", [("user", "heron nests by the river")])
        assert store.optimize_storage(min_pause=0)["ok"]
        rebuild_cjk_index(store, " glue 1")
    with SessionStore(db, readonly=True) as store:
        out = session_search(store, query="heron")
    assert out["count"] == 1 and out["index_rebuild"]["reasons"] == ["cjk_outdated"]
    note = out["index_rebuild"]["note"]
    assert "not built" not in note and "not complete" not in note, note
    assert "the CJK index was built with older options (cjk_outdated)" in note, note
    assert "`hermes-fts optimize-storage`" in note
    # The plugin's note and status say the same.
    from hermes_fts.hermes.plugin import _annotate

    with SessionStore(db, readonly=True) as store:
        state = store.index_state()
    payload: dict[str, Any] = {}
    _annotate(state, payload, db)
    plugin_note = payload["index_rebuild"]["note"]
    assert "not built" not in plugin_note and "(cjk_outdated)" in plugin_note, plugin_note


def test_bare_id_of_another_profile_scrolls_though_its_message_id_is_in_the_current_session(
    home, store
):
    # Every store numbers its messages from 1: the same id in the caller's live
    # session says nothing about another profile's session.
    live = conversation(store, "live", chat(4))
    _profile_store(home, "work")
    out = session_search(
        store, session_id="work_sess", around_message_id=live[0], current_session_id="live"
    )
    assert out["success"] is True, out
    assert out["profile"] == "work" and out["session_id"] == "work_sess"
    assert out["messages"][0]["content"] == "secret of work flamingo"


def test_the_time_note_is_true_of_the_results_shown(searchable):
    """Regression: asked in yesterday's conversation, "what did we deploy yesterday"
    said "matches from then come first" above a result from ten days before: the
    current conversation's own matches are no result and a cron job's come last,
    so the only matches from then were not first."""
    now = T0 + 10 * 86400
    conversation(searchable, "old", [("user", "the deploy to staging failed")], start=T0)
    conversation(searchable, "cur", [("user", "deploy the cache now")], start=now - 86400)
    conversation(searchable, "job", [("user", "deploy report")], start=now - 86400, source="cron")

    def said(**kw):
        out = session_search(searchable, query="what did we deploy yesterday", now=now, **kw)
        (note,) = [n for n in out["query_notes"] if n.startswith("time words")]
        return [r["session_id"] for r in out["results"]], note

    shown, note = said()
    assert shown == ["cur", "old", "job"]
    assert note.endswith("matches from then come first, then the rest"), note
    shown, note = said(current_session_id="cur")
    assert shown == ["old", "job"]
    assert note.endswith(
        "the first result is from another time: the current conversation's "
        "own matches are not shown and cron jobs' come last (1 of these are "
        "from then)"
    ), note
    shown, note = said(current_session_id="cur", limit=1)
    assert shown == ["old"] and "no result here is from then" in note, note


def test_the_time_note_of_a_query_read_as_a_sentence(searchable):
    """Regression: ``昨天的部署`` ("yesterday's deploy"), in no message as written and
    searched as a sentence, headed yesterday's talk with "no result here is from
    then": the tool judged the results by the time words of the text as written,
    which has none, not by those of the reading searched."""
    now = T0 + 10 * 86400
    conversation(searchable, "old", [("user", "部署失败了")], start=T0)
    conversation(searchable, "y", [("user", "我们部署了新的服务")], start=now - 86400)
    for query in ("昨天的部署", "部署:yesterday"):
        out = session_search(searchable, query=query, now=now)
        assert [r["session_id"] for r in out["results"]] == ["y", "old"], out
        (note,) = [n for n in out["query_notes"] if n.startswith("time words")]
        assert note.endswith("matches from then come first, then the rest"), note


def test_no_partial_note_while_a_cron_job_holds_every_word(searchable):
    """Regression: with limit=1, "deploy billing" said "no conversation holds every
    word" while a cron job's conversation held both: it ranks after the others, so
    it was not among the results the note was judged on."""
    conversation(searchable, "job", [("user", "nightly deploy of billing")], source="cron")
    conversation(searchable, "chat", [("user", "the deploy went fine")], start=T0 + 5)
    for limit in (1, 3):
        out = session_search(searchable, query="deploy billing", limit=limit)
        assert [r["session_id"] for r in out["results"]] == ["chat", "job"][:limit]
        assert not any(n.startswith("no conversation holds") for n in out["query_notes"]), out
    out = session_search(searchable, query="deploy invoices", limit=1)  # truly held by none
    partial = [n for n in out["query_notes"] if n.startswith("no conversation holds")]
    assert partial == [
        "no conversation holds every word; the first result matches deploy and not invoices"
    ]
