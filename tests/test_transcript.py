"""get_messages_around / get_anchored_view and the small session read helpers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _tool_fixtures import chat, conversation, ids_of, open_store

from hermes_fts import content, listing, transcript
from hermes_fts.store import SessionStore


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    s = open_store(tmp_path / "state.db")
    yield s
    s.close()


def around(store: SessionStore, sid: str, anchor: int, window: int = 5) -> dict:
    return transcript.get_messages_around(store._conn, sid, anchor, window)


def anchored(store: SessionStore, sid: str, anchor: int, **kw) -> dict:
    return transcript.get_anchored_view(store._conn, sid, anchor, **kw)


# --------------------------------------------------------------------------- around


def test_window_centres_on_anchor(store):
    ids = conversation(store, "s1", chat(20))
    view = around(store, "s1", ids[10], window=3)
    assert ids_of(view["window"]) == ids[7:14]
    assert view["messages_before"] == 3 and view["messages_after"] == 3


def test_window_counts_show_session_edges(store):
    ids = conversation(store, "s1", chat(6))
    head = around(store, "s1", ids[1], window=5)
    assert ids_of(head["window"]) == ids
    assert head["messages_before"] == 1 and head["messages_after"] == 4
    tail = around(store, "s1", ids[-1], window=2)
    assert ids_of(tail["window"]) == ids[-3:]
    assert tail["messages_after"] == 0


def test_window_orders_by_id_not_timestamp(store):
    turns = [("user", f"t{i}") for i in range(5)]
    ids = conversation(store, "s1", turns)
    store.update_message(ids[1], timestamp=1.0)  # clock skew must not reorder
    view = around(store, "s1", ids[2], window=2)
    assert ids_of(view["window"]) == ids


def test_window_stays_in_its_session(store):
    a = conversation(store, "a", chat(4))
    conversation(store, "b", chat(4), start=5000)
    view = around(store, "a", a[-1], window=5)
    assert ids_of(view["window"]) == a


def test_anchor_of_another_session_gives_empty_window(store):
    conversation(store, "a", chat(4))
    b = conversation(store, "b", chat(4))
    assert around(store, "a", b[0]) == {"window": [], "messages_before": 0, "messages_after": 0}
    assert around(store, "a", 999_999)["window"] == []


def test_negative_window_means_only_the_anchor(store):
    ids = conversation(store, "s1", chat(5))
    view = around(store, "s1", ids[2], window=-3)
    assert ids_of(view["window"]) == [ids[2]]
    assert view["messages_before"] == 0 and view["messages_after"] == 0


def test_rewound_neighbours_skipped_and_window_refills(store):
    ids = conversation(store, "s1", chat(12))
    for mid in (ids[4], ids[7]):
        store.set_message_flags(mid, active=False, compacted=False)
    view = around(store, "s1", ids[6], window=2)
    assert ids_of(view["window"]) == [ids[3], ids[5], ids[6], ids[8], ids[9]]
    assert view["messages_before"] == 2 and view["messages_after"] == 2


def test_rewound_anchor_is_still_returned(store):
    ids = conversation(store, "s1", chat(6))
    store.set_message_flags(ids[3], active=False, compacted=False)
    view = around(store, "s1", ids[3], window=1)
    assert ids_of(view["window"]) == [ids[2], ids[3], ids[4]]
    assert view["window"][1]["active"] == 0


def test_compaction_archive_neighbours_stay_visible(store):
    ids = conversation(store, "s1", chat(6))
    store.set_message_flags(ids[2], active=False, compacted=True)
    view = around(store, "s1", ids[3], window=1)
    assert ids_of(view["window"]) == [ids[2], ids[3], ids[4]]


def test_messages_are_hydrated(store):
    calls = [{"id": "c1", "type": "function", "function": {"name": "terminal"}}]
    multimodal = [
        {"type": "text", "text": "look at"},
        {"type": "image_url", "image_url": {"url": "data:x"}},
        {"type": "text", "text": "this chart"},
    ]
    ids = conversation(
        store,
        "s1",
        [
            {"role": "assistant", "content": None, "tool_calls": calls},
            ("user", "\x00json:" + json.dumps(multimodal)),
            ("user", "\x00json:" + json.dumps([{"type": "image_url", "image_url": {}}])),
            ("user", "\x00json:" + json.dumps("plain 文字")),
            ("user", "\x00json:{broken"),
        ],
    )
    window = around(store, "s1", ids[2], window=5)["window"]
    assert window[0]["tool_calls"] == calls and window[0]["content"] is None
    assert window[1]["content"] == "look at this chart"
    assert window[2]["content"] == content.MULTIMODAL_PLACEHOLDER
    assert window[3]["content"] == "plain 文字"
    assert window[4]["content"] == "{broken"
    assert {"id", "session_id", "role", "timestamp", "active", "compacted"} <= set(window[0])


def test_decode_content_passthrough():
    assert content.decode_content(None) is None
    assert content.decode_content("plain") == "plain"
    assert content.decode_content('\x00json:{"text": "dict part"}') == "dict part"
    assert content.decode_content("\x00json:42") == "42"


def test_include_hidden_switch_on_the_primitive(store):
    ids = conversation(store, "s1", chat(5))
    store.update_message(ids[1], display_kind="hidden")
    assert ids[1] in ids_of(around(store, "s1", ids[2], window=1)["window"])
    strict = transcript.get_messages_around(store._conn, "s1", ids[2], 1, include_hidden=False)
    assert ids_of(strict["window"]) == [ids[0], ids[2], ids[3]]


# --------------------------------------------------------------------------- anchored view


def _tool_heavy(store: SessionStore) -> list[int]:
    turns = []
    for i in range(20):
        turns.append(("user", f"question {i}"))
        turns.append({"role": "assistant", "content": f"answer {i}"})
        turns.append({"role": "tool", "content": f"tool output {i}", "tool_name": "terminal"})
    return conversation(store, "s1", turns)


def test_anchored_view_filters_roles_but_keeps_anchor(store):
    ids = _tool_heavy(store)
    anchor = ids[29]  # a tool row
    view = anchored(store, "s1", anchor, window=3, bookend=0)
    roles = [m["role"] for m in view["window"]]
    assert anchor in ids_of(view["window"])
    assert roles.count("tool") == 1  # only the anchor
    assert view["messages_before"] == 3 and view["messages_after"] == 3
    assert set(view) == {
        "window",
        "messages_before",
        "messages_after",
        "bookend_start",
        "bookend_end",
    }


def test_anchored_view_keep_roles_none_disables_filter(store):
    ids = _tool_heavy(store)
    view = anchored(store, "s1", ids[30], window=2, bookend=2, keep_roles=None)
    assert ids_of(view["window"]) == ids[28:33]
    assert [m["role"] for m in view["bookend_start"]] == ["user", "assistant"]
    assert view["bookend_end"][-1]["role"] == "tool"


def test_bookends_are_outside_the_window(store):
    ids = _tool_heavy(store)
    view = anchored(store, "s1", ids[30], window=2, bookend=3)
    window_ids = ids_of(view["window"])
    start, end = ids_of(view["bookend_start"]), ids_of(view["bookend_end"])
    assert start == [ids[0], ids[1], ids[3]]
    assert end == [ids[55], ids[57], ids[58]]
    assert max(start) < min(window_ids) and min(end) > max(window_ids)
    assert all(m["role"] in ("user", "assistant") for m in view["bookend_start"])


def test_bookends_empty_when_window_touches_edges(store):
    ids = conversation(store, "s1", chat(8))
    view = anchored(store, "s1", ids[2], window=5, bookend=3)
    assert view["bookend_start"] == []
    assert ids_of(view["bookend_end"]) == []  # window reaches the last message
    view = anchored(store, "s1", ids[0], window=1, bookend=3)
    assert view["bookend_start"] == []
    assert ids_of(view["bookend_end"]) == ids[5:]


def test_bookends_skip_empty_rewound_and_hidden(store):
    turns = [
        ("user", ""),
        ("assistant", None),
        ("user", "rewound start"),
        ("assistant", "hidden scaffolding"),
        ("user", "real opening"),
        *chat(20, "middle"),
        ("assistant", "real closing"),
        ("user", "rewound end"),
    ]
    ids = conversation(store, "s1", turns)
    store.set_message_flags(ids[2], active=False, compacted=False)
    store.update_message(ids[3], display_kind="hidden")
    store.set_message_flags(ids[-1], active=False, compacted=False)
    view = anchored(store, "s1", ids[14], window=2, bookend=1)
    assert [m["content"] for m in view["bookend_start"]] == ["real opening"]
    assert [m["content"] for m in view["bookend_end"]] == ["real closing"]


def test_bookend_zero_and_negative(store):
    ids = conversation(store, "s1", chat(30))
    for n in (0, -2):
        view = anchored(store, "s1", ids[15], window=2, bookend=n)
        assert view["bookend_start"] == [] and view["bookend_end"] == []


def test_hidden_rows_filtered_before_window_limit(store):
    ids = conversation(store, "s1", chat(12))
    store.update_message(ids[5], display_kind="hidden")
    store.update_message(ids[7], display_kind="hidden")
    view = anchored(store, "s1", ids[6], window=2, bookend=0)
    assert ids_of(view["window"]) == [ids[3], ids[4], ids[6], ids[8], ids[9]]
    assert view["messages_before"] == 2 and view["messages_after"] == 2


def test_hidden_anchor_gives_empty_view_unless_included(store):
    ids = conversation(store, "s1", chat(6))
    store.update_message(ids[3], display_kind="hidden")
    empty = anchored(store, "s1", ids[3])
    assert empty == {
        "window": [],
        "messages_before": 0,
        "messages_after": 0,
        "bookend_start": [],
        "bookend_end": [],
    }
    shown = anchored(store, "s1", ids[3], include_hidden=True)
    assert ids[3] in ids_of(shown["window"])


def test_rewound_anchor_in_anchored_view(store):
    ids = conversation(store, "s1", chat(6))
    store.set_message_flags(ids[3], active=False, compacted=False)
    view = anchored(store, "s1", ids[3], window=1, bookend=0)
    assert ids_of(view["window"]) == [ids[2], ids[3], ids[4]]


def test_anchored_view_unknown_anchor(store):
    conversation(store, "s1", chat(3))
    view = anchored(store, "s1", 12345)
    assert view["window"] == [] and view["bookend_start"] == [] and view["bookend_end"] == []


def test_store_methods_delegate_when_present(store):
    ids = conversation(store, "s1", chat(9))
    method = getattr(store, "get_anchored_view", None)
    if method is None:
        pytest.skip("SessionStore.get_anchored_view not added yet")
    assert method("s1", ids[4], window=1, bookend=1) == anchored(
        store, "s1", ids[4], window=1, bookend=1
    )
    assert store.get_messages_around("s1", ids[4], window=2) == around(store, "s1", ids[4], 2)


# --------------------------------------------------------------------------- session helpers


def test_first_message_id_and_preview(store):
    ids = conversation(
        store,
        "s1",
        [
            ("system", "you are helpful"),
            ("user", "rewound"),
            ("user", "please look at the\nflaky   deploy script " + "x" * 80),
        ],
    )
    store.set_message_flags(ids[1], active=False, compacted=False)
    assert transcript.first_message_id(store._conn, "s1") == ids[0]
    preview = transcript.session_preview(store._conn, "s1")
    assert preview.startswith("please look at the flaky deploy script x")
    assert preview.endswith("...") and len(preview) == transcript.PREVIEW_CHARS + 3
    conversation(store, "empty", [])
    assert transcript.first_message_id(store._conn, "empty") is None
    assert transcript.session_preview(store._conn, "empty") == ""


def test_sessions_by_activity_uses_newest_message(store):
    conversation(store, "old", chat(2), start=1000)
    conversation(store, "new", chat(2), start=2000)
    store.add_message("old", "user", "late reply", timestamp=9000)
    conversation(store, "bot", chat(2), start=3000, source="subagent")
    rows = listing.sessions_by_activity(store._conn, ("subagent",), limit=10)
    assert [r["id"] for r in rows] == ["old", "new"]
    assert rows[0]["last_active"] == 9000


def test_hidden_sources_given_as_text_name_sources_not_letters(store):
    conversation(store, "chat", chat(2), start=1000)
    conversation(store, "bot", chat(2), start=2000, source="subagent")
    conversation(store, "job", chat(2), start=3000, source="cron")
    # "subagent" was read as the sources s, u, b, …: every session stayed listed.
    assert [r["id"] for r in store.sessions_by_activity("subagent")] == ["job", "chat"]
    assert [r["id"] for r in store.sessions_by_activity("subagent, cron")] == ["chat"]
    with pytest.raises(TypeError, match="hidden_sources must be"):
        store.sessions_by_activity([None])


def test_paging_counts_are_counts_of_rows(store):
    ids = conversation(store, "s", chat(6))
    beyond = store.get_messages_beyond
    # "2" failed on count + 1; a negative count was SQLite's LIMIT -1, the whole session.
    assert ids_of(beyond("s", ids[1], "2", forward=True)["window"]) == ids[2:4]
    assert beyond("s", ids[1], -2, forward=True)["window"] == []
    assert store.get_message_ends("s", -1, 0) == (6, [])
    # Nothing asked for still counts what the session shows (it said 0).
    assert store.get_message_ends("s", 0, 0) == (6, [])
    with pytest.raises(ValueError, match="message_id must be an integer, got 2.5"):
        beyond("s", 2.5, 2, forward=True)
    # Python's int() reads "1_0" and full-width "２" too; nobody means them as numbers
    with pytest.raises(ValueError, match="count must be an integer, written with the digits 0-9"):
        beyond("s", ids[1], "\uff12", forward=True)
    with pytest.raises(ValueError, match="message_id must be an integer, written with the dig"):
        beyond("s", f"0_{ids[1]}", 2, forward=True)


def test_a_number_past_sqlites_integers_is_no_overflow(store):
    ids = conversation(store, "s", chat(4))
    huge = 10**30
    # A count that large holds every row; SQLite's binding raised OverflowError on it.
    assert ids_of(store.get_messages_beyond("s", ids[0], huge, forward=True)["window"]) == ids[1:]
    assert ids_of(store.get_message_ends("s", huge, 0)[1]) == ids
    assert ids_of(store.get_messages_around("s", ids[1], huge)["window"]) == ids
    assert ids_of(store.get_anchored_view("s", ids[1], huge, huge)["window"]) == ids
    assert store.get_anchor_summary("s", ids[1], huge)["messages_after"] == 2
    assert [r["id"] for r in store.sessions_by_activity(limit=huge, offset=huge)] == []
    # No message has an id that large: said so, by the argument's name.
    for call in (
        lambda: store.get_messages_around("s", huge),
        lambda: store.get_anchored_view("s", -huge),
        lambda: store.get_anchor_summary("s", huge),
        lambda: store.get_messages_beyond("s", huge, 2, forward=False),
        lambda: store.message_flags(huge),
    ):
        with pytest.raises(ValueError, match="is out of range: no message id is that large"):
            call()


def test_anchor_summary_matches_anchored_view(store):
    ids = _tool_heavy(store)
    store.set_message_flags(ids[10], active=False, compacted=False)
    store.update_message(ids[12], display_kind="hidden")
    for anchor in (ids[0], ids[11], ids[13], ids[30], ids[-1]):
        full = anchored(store, "s1", anchor)
        summary = transcript.get_anchor_summary(store._conn, "s1", anchor)
        assert ids_of(summary["window"]) == [anchor]
        assert summary["messages_before"] == full["messages_before"]
        assert summary["messages_after"] == full["messages_after"]
    assert transcript.get_anchor_summary(store._conn, "s1", ids[12])["window"] == []
    assert transcript.get_anchor_summary(store._conn, "other", ids[3])["window"] == []


def test_sessions_by_activity_survives_times_that_are_not_numbers(store):
    """A start or message time stored as text (a hand-edited or imported store)
    sorts as no time at all, rather than failing the whole listing."""
    conversation(store, "fine", chat(2), start=2000)
    conversation(store, "odd", chat(2), start=1000)
    with store._conn:
        store._conn.execute("UPDATE sessions SET started_at = 'not a time' WHERE id = 'odd'")
        store._conn.execute("UPDATE messages SET timestamp = 'yesterday' WHERE session_id = 'odd'")
    rows = listing.sessions_by_activity(store._conn, limit=10)
    assert [r["id"] for r in rows] == ["fine", "odd"]


def test_a_time_stored_as_text_does_not_hide_a_sessions_other_times(store):
    """One message time stored as text among numbers: the session's last activity is
    its newest number (SQLite's max() would give the text, and the session sorted
    as no time, last, showing the text as its last activity)."""
    conversation(store, "older", chat(2), start=2000)
    ids = conversation(store, "mixed", chat(3), start=3000)
    with store._conn:
        store._conn.execute("UPDATE messages SET timestamp = '2024-01-01' WHERE id = ?", (ids[0],))
    rows = listing.sessions_by_activity(store._conn, limit=10)
    assert [r["id"] for r in rows] == ["mixed", "older"]
    newest = store._conn.execute("SELECT max(timestamp) FROM messages WHERE id IN (?, ?)", ids[1:])
    assert rows[0]["last_active"] == newest.fetchone()[0]
