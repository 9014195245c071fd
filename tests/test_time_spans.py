"""Time bounds read only the id ranges whose zones can hold them, with the same rows.

``time_table.spans`` turns ``after``/``before`` into rowid ranges from the
zones (the lowest and highest numeric timestamp each block of ids ever
had); searches read only there.  The store spreads its ids over many zones,
mostly in time order, with back-dated, re-dated, deleted and text-dated
rows, and rows written by a plain sqlite3 writer after
optimize-storage (the triggers widen the zones).  Every bounded search must
return exactly the unbounded search's rows that fall in the window, in the
same order, on every route and sort.
"""

from __future__ import annotations

import itertools
import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from _support import needs_extension

from hermes_fts.index import time_table
from hermes_fts.search import request as search_request
from hermes_fts.search import rows as search_rows
from hermes_fts.store import SessionStore

pytestmark = needs_extension

T0 = 1_700_000_000.0
WORDS = ["数据", "服务", "deploy", "config", "数据库", "日本語", "데이터", "据", "迁移"]
QUERIES = ["数据", "deploy", "数据 OR deploy", "据", "config -deploy", "데이터", "迁移"]
STEP = 137  # ids per message: 900 messages over about 120 zones


def _plain(path: Path) -> sqlite3.Connection:
    """A writer without the extension, as another program would be."""
    return sqlite3.connect(path, isolation_level=None)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = tmp_path_factory.mktemp("spans") / "state.db"
    st = SessionStore(path)
    for s in range(12):
        st.add_session(f"s{s:02d}", ["cli", "cron", "telegram"][s % 3], started_at=T0 + s)
    st.close()
    rng = random.Random(7)
    db = _plain(path)
    with db:
        for i in range(900):
            ts: Any = T0 + i * 10.0
            if i % 23 == 0:
                ts = T0 - 5000 - i  # back-dated: widens its zone to the distant past
            elif i % 97 == 0:
                ts = "yesterday"  # text: never inside a numeric window
            elif i % 89 == 0:
                ts = "n/a"
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 5)))
            if i % 11 == 0:  # Latin glued to CJK: only the CJK index sees the word
                text += " 修改deploy配置"
            db.execute(
                "INSERT INTO messages(id, session_id, role, content, timestamp) "
                "VALUES (?, ?, ?, ?, ?)",
                (
                    1000 + i * STEP,
                    f"s{rng.randrange(12):02d}",
                    rng.choice(["user", "assistant", "tool"]),
                    text,
                    ts,
                ),
            )
    db.close()
    with SessionStore(path) as st:
        assert st.optimize_storage(vacuum=False, min_pause=0)["ok"]
    # After optimize-storage, a writer without the extension re-dates, deletes
    # and adds rows: only the triggers keep the time table and zones right.
    db = _plain(path)
    with db:
        db.execute("UPDATE messages SET timestamp = ? WHERE id = ?", (T0 + 20_000, 1000 + 5 * STEP))
        db.execute("UPDATE messages SET timestamp = ? WHERE id = ?", (T0 - 9000, 1000 + 700 * STEP))
        db.execute(
            "DELETE FROM messages WHERE id IN (?, ?)", (1000 + 400 * STEP, 1000 + 401 * STEP)
        )
        db.execute(
            "INSERT INTO messages(id, session_id, role, content, timestamp) "
            "VALUES (?, 's01', 'user', '数据 deploy 补录', ?)",
            (500_000, T0 + 10.0),
        )
    db.close()
    st = SessionStore(path, readonly=True)
    assert st.index_state()["time_index"] == time_table.TABLE
    yield st
    st.close()


WINDOWS = [
    (T0 + 1000, T0 + 2000),
    (T0 + 8000, None),
    (None, T0 + 500),
    (T0 - 6000, T0 - 4000),
    (T0 + 4490, T0 + 4510),
    (None, T0 - 20_000),
    (T0 + 30_000, None),
    (T0 + 19_999, None),
]


def _in_window(ts: Any, after: float | None, before: float | None) -> bool:
    if not isinstance(ts, (int, float)):
        return False
    return (after is None or ts >= after) and (before is None or ts < before)


def test_spans_hold_every_message_of_the_window(store):
    conn = store._conn
    rows = conn.execute("SELECT id, timestamp FROM messages").fetchall()
    zones = conn.execute(f"SELECT count(*) FROM {time_table.ZONES}").fetchone()[0]
    assert zones > 100
    narrowed = 0
    for after, before in WINDOWS:
        spans = time_table.spans(conn, after, before)
        assert spans == sorted(spans, reverse=True) and len(spans) <= 16
        for mid, ts in rows:
            if _in_window(ts, after, before):
                assert any(lo <= mid <= hi for lo, hi in spans), (after, before, mid)
        covered = sum(hi - lo + 1 for lo, hi in spans)
        narrowed += covered < zones * time_table.ZONE_IDS // 2
    assert narrowed >= 4
    assert time_table.spans(conn, None, T0 - 20_000) == []  # nothing that old


def test_side_by_side_zones_make_one_span_and_a_gap_makes_two(tmp_path):
    path = tmp_path / "state.db"
    with SessionStore(path) as st:
        st.add_session("s1", "cli", started_at=T0)
    db = _plain(path)
    ids = time_table.ZONE_IDS
    with db:  # five zones of ids in time order, as an agent writes them
        db.executemany(
            "INSERT INTO messages(id, session_id, role, content, timestamp) "
            "VALUES (?, 's1', 'user', '数据', ?)",
            [(i, T0 + i) for i in range(0, 5 * ids, 8)],
        )
    db.close()
    with SessionStore(path) as st:
        assert st.optimize_storage(vacuum=False, min_pause=0)["ok"]
        conn = st._conn
        assert time_table.spans(conn, None, T0 + 2.5 * ids) == [(0, 3 * ids - 1)]
        assert time_table.spans(conn, T0 + ids, T0 + 2 * ids) == [(ids, 2 * ids - 1)]
        assert time_table.spans(conn, T0 + 9 * ids, None) == []
        st._conn.execute("UPDATE messages SET timestamp = ? WHERE id = 8", (T0 + 9 * ids,))
        assert time_table.spans(conn, T0 + 4.5 * ids, None) == [
            (4 * ids, 5 * ids - 1),
            (0, ids - 1),
        ]


def _full(monkeypatch: pytest.MonkeyPatch) -> None:
    """Searches without zones: every id range (the reference)."""
    monkeypatch.setattr(
        time_table,
        "spans",
        lambda conn, after, before, windows=(): [
            (search_request.MIN_ROWID, search_request.MAX_ROWID)
        ],
    )


def test_bounded_searches_equal_the_unbounded_rows_of_the_window(store, monkeypatch):
    ts = dict(store._conn.execute("SELECT id, timestamp FROM messages").fetchall())
    checked = 0
    for query, (after, before), sort, limit in itertools.product(
        QUERIES, WINDOWS, [None, "newest", "oldest"], [1, 6, 400]
    ):
        kw = {"query": query, "sort": sort, "after": after, "before": before}
        got = store.search_messages(limit=limit, **kw)
        everything = store.search_messages(query, sort=sort, limit=100_000)
        expected = [r for r in everything if _in_window(ts[r["id"]], after, before)][:limit]
        assert [(r["id"], r["snippet"]) for r in got] == [
            (r["id"], r["snippet"]) for r in expected
        ], kw
        with monkeypatch.context() as m:
            _full(m)
            assert store.search_messages(limit=limit, **kw) == got, kw
        checked += bool(got)
    assert checked > 100


def test_a_window_no_message_falls_in_reads_no_index(store):
    statements: list[str] = []
    store._conn.set_trace_callback(statements.append)
    try:
        assert store.search_messages("数据", before=T0 - 20_000) == []
    finally:
        store._conn.set_trace_callback(None)
    assert not any("MATCH" in s for s in statements)


@pytest.mark.parametrize("sort", ["newest", "oldest"])
def test_time_sorted_glued_rows_read_only_past_the_page_cutoff(store, monkeypatch, sort):
    # The glued-Latin supplement of a time sort reads only the zones that can
    # still beat the last row the word index found; the rows are the same.
    assert not time_table.has_null_timestamp(store._conn)
    glued = {r["id"] for r in store.search_messages("修改deploy配置", limit=1000)}
    assert len(glued) > 50
    checked = 0
    for query, limit, window in itertools.product(
        ["deploy", "deploy OR config", "deploy 数据"],
        [1, 6, 40, 400],
        [(None, None), (T0 + 1000, None), (None, T0 + 6000)],
    ):
        kw = {"query": query, "sort": sort, "limit": limit, "after": window[0], "before": window[1]}
        got = store.search_messages(**kw)
        with monkeypatch.context() as m:
            _full(m)
            assert store.search_messages(**kw) == got, kw
        checked += bool(glued & {r["id"] for r in got})
    assert checked > 10


@pytest.mark.parametrize("sort", ["newest", "oldest"])
def test_time_sorts_over_slices_of_zones_equal_sorting_every_match(store, monkeypatch, sort):
    # Both plans first read only the zones that reach furthest in the sort's
    # direction, and widen them until they find the page; sorting every
    # match is the reference.
    def run(plan: str, **kw: Any) -> list[Any]:
        with monkeypatch.context() as m:
            m.setattr(
                search_rows,
                "walk_threshold",
                (lambda limit, rows: 1) if plan == "walk" else (lambda limit, rows: 10**18),
            )
            if plan == "every match":
                m.setattr(search_rows, "_first_slice", lambda *a: None)
            elif plan == "sort":  # a slice small enough to be widened in this store
                m.setattr(search_rows, "_first_slice", lambda limit, rows, matches, walk: 2 * limit)
            return [(r["id"], r["snippet"]) for r in store.search_messages(**kw)]

    answered: list[Any] = []
    sliced_top = search_rows._sliced_top
    monkeypatch.setattr(
        search_rows,
        "_sliced_top",
        lambda *a: (lambda ids: (ids is not None and answered.append(ids), ids)[1])(sliced_top(*a)),
    )
    sliced = {"walk": 0, "sort": 0}
    for query, limit, (after, before) in itertools.product(
        QUERIES, [1, 6, 40, 400], [(None, None), *WINDOWS[:4]]
    ):
        kw = {"query": query, "sort": sort, "limit": limit, "after": after, "before": before}
        reference = run("every match", **kw)
        answered.clear()
        for plan in sliced:
            assert run(plan, **kw) == reference, (plan, kw)
            sliced[plan] += len(answered)
            answered.clear()
    # Pages the slices answered without falling back to every zone, both plans.
    assert min(sliced.values()) >= 5, sliced


def test_sorting_slices_start_where_the_page_is_expected():
    # About 2 * limit matches expected in the first slice; none for a rare term.
    assert search_rows._first_slice(20, 1_000_000, 1_000, walk=False) == 40_000
    assert (
        search_rows._first_slice(20, 1_000_000, 100_000, walk=False) == search_rows._FIRST_SLICE_IDS
    )
    assert search_rows._first_slice(20, 1_000_000, 19, walk=False) is None
    assert search_rows._first_slice(20, 1_000_000, 30, walk=False) is None  # most of the store
    # Sorting 200 matches costs less than reading the zones of a million messages twice.
    assert search_rows._first_slice(5, 1_000_000, 200, walk=False) is None
    assert search_rows._first_slice(5, 100_000, 200, walk=False) == search_rows._FIRST_SLICE_IDS
    assert search_rows._first_slice(20, 1_000_000, 30, walk=True) == search_rows._FIRST_SLICE_IDS
