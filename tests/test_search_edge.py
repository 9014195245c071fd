"""Edge cases of search_messages found by QA: paging, time sorts, filters, stale state."""

from __future__ import annotations

import sqlite3

import pytest

from hermes_fts.store import SessionStore

ROUTES = ("fts5", "fts_cjk", "trigram", "like_scan")


@pytest.fixture()
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("HERMES_WORD_FTS", "1")  # every route, the opt-in fts5 too
    st = SessionStore(tmp_path / "state.db")
    st.add_session("s1", source="cli", started_at=1.0)
    st.add_session("s2", source="cron", started_at=2.0)
    st.add_session("s3", source="telegram", started_at=3.0)
    yield st
    st.close()


def ids(rows):
    return [r["id"] for r in rows]


def forced(st, q, route, **kw):
    return ids(st.search_messages(q, route=route, **kw))


# ---------------------------------------------------------------------------
# Time sorts when timestamps do not follow insertion order


@pytest.fixture()
def shuffled_times(store):
    """12 messages whose timestamps run against their ids (an imported history)."""
    made = store.add_messages(
        {
            "session_id": "s1",
            "role": "user",
            "content": f"alpha 测试 word{i}",
            "timestamp": float(100 - i),
        }
        for i in range(12)
    )
    return made  # newest first by timestamp == ascending ids


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("sort", ["newest", "oldest"])
def test_time_sorted_pages_follow_timestamps_not_rowids(store, shuffled_times, route, sort):
    expected = shuffled_times if sort == "newest" else shuffled_times[::-1]
    for q in ("alpha", "测试"):
        assert forced(store, q, route, sort=sort, limit=100) == expected, (q, route)
        pages = []
        for offset in range(0, 12, 5):
            pages += forced(store, q, route, sort=sort, limit=5, offset=offset)
        assert pages == expected, (q, route)


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("sort", [None, "newest", "oldest"])
def test_pages_of_equal_ranks_neither_overlap_nor_skip(store, route, sort):
    store.add_messages(
        {"session_id": "s1", "role": "user", "content": "same 同样 text", "timestamp": float(i % 7)}
        for i in range(600)
    )
    for q in ("same", "同样"):
        full = forced(store, q, route, sort=sort, limit=10**6)
        pages = []
        for offset in range(0, 600, 37):
            pages += forced(store, q, route, sort=sort, limit=37, offset=offset)
        assert len(full) == 600
        assert pages == full, (q, route, sort)


def test_newest_glued_latin_row_is_not_lost_behind_word_hits(store):
    """A row only the CJK index finds (Latin glued to CJK) still sorts by time."""
    words = [
        store.add_message("s1", "user", f"youer plain {i}", timestamp=float(i)) for i in range(5)
    ]
    glued = store.add_message("s1", "user", "修改youer服务端", timestamp=50.0)
    assert store.describe_search_path("youer") == "fts5"
    assert ids(store.search_messages("youer", sort="newest", limit=1)) == [glued]
    pages = [
        ids(store.search_messages("youer", sort="newest", limit=2, offset=o)) for o in (0, 2, 4)
    ]
    assert sum(pages, []) == [glued, *words[::-1]]


# ---------------------------------------------------------------------------
# Filters given as strings


@pytest.mark.parametrize("route", ROUTES)
def test_source_filters_accept_comma_separated_strings_like_role_filter(store, route):
    cli = store.add_message("s1", "user", "alpha 测试 one", timestamp=1.0)
    cron = store.add_message("s2", "assistant", "alpha 测试 two", timestamp=2.0)
    tg = store.add_message("s3", "user", "alpha 测试 three", timestamp=3.0)
    for q in ("alpha", "测试"):
        kw = {"limit": 100}
        assert set(forced(store, q, route, source_filter="cli,cron", **kw)) == {cli, cron}
        assert set(forced(store, q, route, source_filter=" cli , cron ", **kw)) == {cli, cron}
        assert set(forced(store, q, route, source_filter="telegram", **kw)) == {tg}
        assert set(forced(store, q, route, exclude_sources="cli,cron", **kw)) == {tg}
        assert set(forced(store, q, route, role_filter="user,assistant", **kw)) == {cli, cron, tg}


@pytest.mark.parametrize("bad", [5, ["cli", 5], [None], b"cli"])
def test_a_source_filter_that_is_not_text_is_a_clear_error(store, bad):
    # [None] or ["cli", 5] matched no session for that item, without a word; 5 failed
    # deep inside the SQL builder with "'int' object is not iterable".
    store.add_message("s1", "user", "alpha", timestamp=1.0)
    for name in ("source_filter", "exclude_sources"):
        with pytest.raises(TypeError, match=f"search {name} must be .* list of source names"):
            store.search_messages("alpha", **{name: bad})


@pytest.mark.parametrize("bad", ["no", "false", None, 2, 0.0])
def test_include_inactive_that_is_not_a_flag_is_a_clear_error(store, bad):
    # "no" or "false" is true to Python: the rewound rows asked to stay out were shown.
    kept = store.add_message("s1", "user", "alpha kept", timestamp=1.0)
    rewound = store.add_message("s1", "user", "alpha rewound", timestamp=2.0)
    store.set_message_flags(rewound, active=0, compacted=0)
    with pytest.raises(TypeError, match="search include_inactive must be True or False"):
        store.search_messages("alpha", include_inactive=bad)
    assert ids(store.search_messages("alpha", include_inactive=0)) == [kept]
    assert set(ids(store.search_messages("alpha", include_inactive=1))) == {kept, rewound}


@pytest.mark.parametrize("name", ["fields", "exclude_session_ids"])
@pytest.mark.parametrize("bad", [5, True, 1.5])
def test_a_collection_argument_given_a_number_is_named(store, name, bad):
    # It failed as "'int' object is not iterable", naming no argument.
    store.add_message("s1", "user", "alpha", timestamp=1.0)
    with pytest.raises(TypeError, match=rf"{name} must be a collection of .*, not {bad!r}"):
        store.search_messages("alpha", **{name: bad})


@pytest.mark.parametrize("bad", ["[]", "[", ("[",), ("[", None), True, b"[]"])
def test_marks_that_are_not_a_pair_of_texts_are_a_clear_error(store, bad):
    # "[]" marked matches as [ and ], "[" failed with an IndexError from the snippet
    # code, ("[", None) with str.replace's TypeError: none named the argument.
    store.add_message("s1", "user", "alpha", timestamp=1.0)
    with pytest.raises(TypeError, match=r"^search marks must be a pair of texts"):
        store.search_messages("alpha", marks=bad)
    assert store.search_messages("alpha", marks=["[", "]"])[0]["snippet"] == "[alpha]"


@pytest.mark.parametrize("bad", [None, "abc", 2.5, [3], object()])
def test_bad_limit_or_offset_is_a_clear_error(store, bad):
    store.add_message("s1", "user", "alpha", timestamp=1.0)
    with pytest.raises((TypeError, ValueError), match="limit"):
        store.search_messages("alpha", limit=bad)
    with pytest.raises((TypeError, ValueError), match="offset"):
        store.search_messages("alpha", offset=bad)


@pytest.mark.parametrize("bad", [123, ["alpha"], b"alpha"])
def test_a_query_that_is_not_text_is_a_clear_error_not_an_empty_page(store, bad):
    store.add_message("s1", "user", "alpha 123", timestamp=1.0)
    for call in (store.search, store.search_messages):
        with pytest.raises(TypeError, match="search query must be text"):
            call(bad)
    assert store.search_messages(None) == [] and store.search("  ").route == "empty"


def test_integer_like_limit_and_offset_still_work(store):
    made = [store.add_message("s1", "user", "alpha", timestamp=float(i)) for i in range(4)]
    assert ids(store.search_messages("alpha", limit="2", sort="oldest")) == made[:2]
    assert ids(store.search_messages("alpha", limit=2.0, offset=" 2", sort="oldest")) == made[2:]
    assert store.search_messages("alpha", limit=0) == []
    assert store.search_messages("alpha", limit=-5) == []
    assert ids(store.search_messages("alpha", offset=-1, sort="oldest")) == made


# ---------------------------------------------------------------------------
# Messages whose only text is tool_calls


def test_trigram_route_finds_terms_that_live_only_in_tool_calls(store):
    calls = [{"function": {"name": "run_cmd", "arguments": '{"cmd": "部署脚本 now"}'}}]
    hit = store.add_message("s1", "assistant", None, timestamp=2.0, tool_calls=calls)
    both = store.add_message(
        "s1",
        "assistant",
        "部署脚本写好了",
        timestamp=3.0,
        tool_calls=[{"function": {"name": "noop", "arguments": "{}"}}],
    )
    for route in ROUTES:
        assert set(forced(store, "部署脚本", route)) == {hit, both}, route
        assert set(forced(store, "run_cmd", route)) == {hit}, route
    # NOT must see tool_calls too: the trigram index alone would say `both` matches.
    for route in ("fts_cjk", "trigram", "like_scan"):
        assert forced(store, "部署脚本 NOT noop", route) == [hit], route


# ---------------------------------------------------------------------------
# A read-only store cannot apply pending CJK changes


def test_read_only_store_is_exact_while_cjk_changes_are_pending(tmp_path):
    db = tmp_path / "state.db"
    st = SessionStore(db)
    st.add_session("s1", source="cli", started_at=1.0)
    old = st.add_message("s1", "user", "原始内容 original", timestamp=1.0)
    gone = st.add_message("s1", "user", "删除的消息", timestamp=2.0)
    st.close()
    # A writer that has never heard of hermes-fts (no extension, plain sqlite3).
    conn = sqlite3.connect(db)
    new = conn.execute(
        "INSERT INTO messages(session_id, role, content, timestamp) "
        "VALUES ('s1', 'user', '外部写入的消息', 5.0)"
    ).lastrowid
    conn.execute("UPDATE messages SET content = '外部改写 rewritten' WHERE id = ?", (old,))
    conn.execute("DELETE FROM messages WHERE id = ?", (gone,))
    conn.commit()
    conn.close()
    ro = SessionStore(db, readonly=True)
    try:
        assert ro.index_state()["cjk_pending"] > 0
        for q, want in (
            ("外部", {new, old}),
            ("外部写入", {new}),
            ("原始", set()),
            ("删除", set()),
            ("改写", {old}),
        ):
            assert set(ids(ro.search_messages(q))) == want, q
            assert set(forced(ro, q, "fts_cjk")) == want, q
            assert ro.describe_search_path(q) in ("fts_cjk", "like_scan"), q
    finally:
        ro.close()


@pytest.mark.parametrize("route", ROUTES)
def test_huge_limit_and_offset_mean_no_bound_not_an_overflow(store, route):
    hit = store.add_message("s1", "user", "alpha 测试", timestamp=1.0)
    for q in ("alpha", "测试"):
        assert forced(store, q, route, limit=10**30) == [hit]
        assert forced(store, q, route, limit=2**63 - 1, offset=0) == [hit]
        assert forced(store, q, route, limit=2**63 - 1, offset=5) == []
        assert forced(store, q, route, offset=10**30) == []


def test_read_only_sessions_list_a_session_once_while_cjk_changes_are_pending(tmp_path):
    """Rows pending for the CJK index are answered by a LIKE scan beside the index;
    by sessions it adds only sessions not listed yet."""
    db = tmp_path / "state.db"
    st = SessionStore(db)
    for sid in ("s1", "s2"):
        st.add_session(sid, source="cli", started_at=1.0)
    indexed = st.add_message("s1", "user", "外部资料在这里", timestamp=1.0)
    st.close()
    conn = sqlite3.connect(db)  # a writer without the extension: the rows stay pending
    pending = [
        conn.execute(
            "INSERT INTO messages(session_id, role, content, timestamp) VALUES (?, 'user', ?, ?)",
            (sid, f"外部写入的消息 {n}", 5.0 + n),
        ).lastrowid
        for n, sid in enumerate(("s1", "s2", "s2"))
    ]
    conn.commit()
    conn.close()
    ro = SessionStore(db, readonly=True)
    try:
        assert ro.index_state()["cjk_pending"] > 0
        for route in (None, "fts_cjk"):
            rows = ro.search_messages("外部", sort="sessions", route=route)
            assert [r["session_id"] for r in rows] == ["s1", "s2"], route
            assert rows[0]["id"] == indexed and rows[1]["id"] in pending[1:], route
    finally:
        ro.close()


def test_like_scan_reads_a_row_whose_text_is_not_utf8(store):
    """The LIKE scan's word and NEAR checks run in Python on the row's text; bytes
    another tool wrote as TEXT must not fail the whole search."""
    ok = store.add_message("s1", "user", "stuck at deploy: fine", timestamp=1.0)
    conn = sqlite3.connect(store.path)
    bad = conn.execute(
        "INSERT INTO messages(session_id, role, content, timestamp) "
        "VALUES ('s2', 'user', CAST(X'737475636b206174206465706c6f793a20ff' AS TEXT), 2.0)"
    ).lastrowid
    conn.commit()
    conn.close()
    for q in ("deploy", "NEAR(stuck deploy, 3)"):
        assert sorted(forced(store, q, "like_scan")) == sorted([ok, bad]), q


@pytest.mark.parametrize("sort", ["newset", "relevance", "time", 1])
def test_an_unknown_sort_is_refused(store, sort):
    """A misspelt sort ("newset") was read as relevance without a word: the answer
    came in another order than asked, as a route or a field name is refused."""
    store.add_message("s1", "user", "alpha", timestamp=1.0)
    with pytest.raises(ValueError, match="sort"):
        store.search_messages("alpha", sort=sort)


@pytest.mark.parametrize("sort", [None, "", " Newest ", "OLDEST", "sessions"])
def test_the_known_sorts_any_case(store, sort):
    store.add_message("s1", "user", "alpha", timestamp=1.0)
    assert len(store.search_messages("alpha", sort=sort)) == 1
