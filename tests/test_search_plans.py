"""Faster search plans give exactly the rows and order of the plans they replace.

* Ranked rows: candidates ranked from the index alone, then the filters,
  rows and snippets of the best candidates only (or one filtered statement),
  against one statement that joins every match to its message and sorts
  them all, the definition of the order.
* Time sorts: walking the time table that optimize-storage fills
  (``time_table``) against reading and sorting every match.

The store mixes what the plans must agree on: tool rows (``tool_name``,
``tool_calls``), hidden rows, rewound and archived rows, cron and subagent
sessions, identical texts (equal ranks), equal timestamps, text timestamps,
and back-dated rows written late (ids that do not follow timestamps).
"""

from __future__ import annotations

import itertools
import json
import random
import shutil
from typing import Any

import pytest
from _support import needs_extension

from hermes_fts.index import schema, time_table
from hermes_fts.search import request as search_request
from hermes_fts.search import route as search_route
from hermes_fts.search import rows as search_rows
from hermes_fts.search import run as search
from hermes_fts.store import SessionStore

pytestmark = needs_extension

T0 = 1_700_000_000.0
WORDS = ["数据", "服务", "deploy", "config", "数据库", "日本語", "데이터", "据", "migration"]
QUERIES = [
    "数据",
    "deploy",
    "数据 OR deploy",
    "据",
    "config -deploy",
    "日本語",
    "데이터",
    "shell",
    "youer",
    "数据库 migration",
    "补录",
    "late 补录",
    "补录 OR nowhere",
    "孤例",
]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    st = SessionStore(tmp_path_factory.mktemp("plans") / "state.db")
    rng = random.Random(13)
    sources = ["cli", "cron", "telegram", "subagent"]
    for s in range(24):
        st.add_session(f"s{s:02d}", sources[s % 4], started_at=T0 + s * 600)
    rows = []
    for i in range(900):
        s = rng.randrange(24)
        role = rng.choice(["user", "assistant", "tool"])
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6)))
        if i % 7 == 0:
            text = "数据 deploy 同一段文字 same text"  # identical rows: equal ranks
        if i % 31 == 0:
            text = f"修改youer服务端 {text}"
        ts: Any = T0 + s * 600 + (i // 3) * 5  # groups of three share a timestamp
        active, compacted = rng.choice([(1, 0)] * 8 + [(0, 1), (0, 0)])
        rows.append(
            {
                "session_id": f"s{s:02d}",
                "role": role,
                "content": text,
                "timestamp": ts,
                "tool_name": "shell" if role == "tool" else None,
                "tool_calls": json.dumps(
                    [
                        {
                            "id": f"c{i}",
                            "type": "function",
                            "function": {
                                "name": "shell",
                                "arguments": json.dumps({"cmd": f"deploy {text}"}),
                            },
                        }
                    ]
                )
                if role == "assistant" and i % 5 == 0
                else None,
                "active": active,
                "compacted": compacted,
                "display_kind": "hidden" if i % 41 == 0 else None,
            }
        )
    ids = st.add_messages(rows)
    # Text timestamps (after every number in SQLite's order), as another writer
    # leaves them: our writes refuse a time that is not a number.
    st._conn.execute(
        "UPDATE messages SET timestamp = 'unknown' WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(ids[::97]),),
    )
    # Back-dated rows written late.
    st.add_messages(
        [
            {
                "session_id": "s03",
                "role": "user",
                "timestamp": T0 - 50 + k,
                "content": "数据 deploy 补录 late",
            }
            for k in range(6)
        ]
    )
    # A term with two matches, one of them a tool row.
    st.add_messages(
        [
            {
                "session_id": "s04",
                "role": role,
                "timestamp": T0 + 99,
                "content": "孤例 数据",
                "tool_name": "shell" if role == "tool" else None,
            }
            for role in ("user", "tool")
        ]
    )
    st.optimize_storage(vacuum=False)
    yield st
    st.close()


def _ids(rows: list[dict[str, Any]]) -> list[Any]:
    return [(r["id"], r["snippet"]) for r in rows]


# --------------------------------------------------------------------------- ranked rows


def one_statement_rows(
    conn: Any,
    table: str,
    expression: str,
    snippet_sql: str,
    where: str,
    params: list[Any],
    limit: int,
) -> list[dict[str, Any]]:
    """Every match joined to its message, filtered and sorted by ``RANKED_ORDER``."""
    cur = conn.execute(
        f"SELECT {search_request.ROW_COLUMNS.format(snippet=snippet_sql)} FROM {table} "
        f"JOIN messages m ON m.id = {table}.rowid JOIN sessions s ON s.id = m.session_id "
        f"WHERE {table} MATCH ? AND {where} ORDER BY {table}.rank, m.id DESC LIMIT ?",
        [expression, *params, limit],
    )
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def test_ranked_rows_equal_one_statement_over_every_match(store, monkeypatch):
    state = store.index_state()
    filters = [
        {},
        {"role_filter": ["tool"]},
        {"include_inactive": True},
        {"source_filter": ["cron", "subagent"]},
        {"before": T0 + 7200},
        {"exclude_session_ids": ["s01", "s02"]},
    ]
    filtered = []  # whether each search went to the one statement with the filters inside
    real = search_rows.rows_as_dicts
    monkeypatch.setattr(
        search_rows, "rows_as_dicts", lambda cur: (filtered.append(1), real(cur))[1]
    )
    checked = 0
    for query, kw, limit in itertools.product(QUERIES, filters, [1, 5, 40, 10_000]):
        plan = search_route.plan_search(state, query)
        if plan.route not in search_route.INDEX_ROUTES:
            continue
        request = search.SearchRequest(query, limit=limit, **kw)
        where, params, _ = search_rows.where_sql(request)
        iq = search._index_query(plan, plan.route, True, True)
        old = one_statement_rows(
            store._conn, iq.table, iq.expression, iq.snippet, where, params, limit
        )
        # A time bound also reads only its spans, as search_messages does.
        spans = time_table.spans(store._conn, None, kw["before"]) if "before" in kw else None
        # With and without the rare phrase's one pass that builds its snippets.
        for few in (None, iq.few_snippet):
            new = search_rows.match_rows(
                store._conn,
                iq.table,
                iq.expression,
                iq.snippet,
                where,
                params,
                "rank, m.id DESC",
                limit,
                spans=spans,
                few_snippet_sql=few,
            )
            assert new == old, (query, kw, limit, few)
        checked += bool(new)
    assert checked > 50
    assert filtered  # the filters-inside statement was compared too


def test_snippets_are_built_for_the_kept_rows_only(store):
    # One SELECT would build a snippet for every row that enters its top-N
    # sorter; a snippet reads the message through the index's content view.
    conn = store._conn
    table = "hermes_fts_cjk"
    where, params, _ = search_rows.where_sql(search.SearchRequest("数据"))
    iq = search._index_query(search_route.plan_search(store.index_state(), "数据"), "fts_cjk", True)
    matches = conn.execute(
        f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", [iq.expression]
    ).fetchone()[0]
    assert matches > 100
    one_select = (
        f"SELECT {search_request.ROW_COLUMNS.format(snippet=iq.snippet)} FROM {table} "
        f"JOIN messages m ON m.id = {table}.rowid JOIN sessions s ON s.id = m.session_id "
        f"WHERE {table} MATCH ? AND {where} ORDER BY {table}.rank, m.id DESC LIMIT ?"
    )

    def content_reads(run: Any) -> tuple[Any, int]:
        reads: list[str] = []
        conn.set_trace_callback(reads.append)
        try:
            got = run()
        finally:
            conn.set_trace_callback(None)
        return got, sum(f"{table}_text" in r for r in reads)

    for limit in (1, 5, 20):
        rows, ours = content_reads(
            lambda n=limit: search_rows.match_rows(
                conn,
                table,
                iq.expression,
                iq.snippet,
                where,
                params,
                search_request.RANKED_ORDER,
                n,
            )
        )
        assert len(rows) == limit
        # `limit` candidates are read first, each with its snippet; when the
        # filters drop some (hidden, inactive rows), as many more as their keep
        # rate predicts.
        assert limit <= ours <= 2 * limit + 4, (limit, ours)
        if limit >= 5:
            _, theirs = content_reads(
                lambda n=limit: conn.execute(one_select, [iq.expression, *params, n]).fetchall()
            )
            assert ours < theirs, (limit, ours, theirs)


def test_filters_that_drop_the_best_matches_still_reach_older_ones(store):
    # The best candidates hold no row the filter keeps: older matches still come.
    got = store.search_messages("补录", limit=100, before=T0)
    assert len(got) == 6
    got = store.search_messages("数据", limit=100, before=T0)
    assert {r["id"] for r in got} == {r["id"] for r in store.search_messages("补录", limit=100)}


# --------------------------------------------------------------------------- time sorts


def _time_sorted(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch, walk: bool, **kw: Any
) -> tuple[list[Any], list[str]]:
    """search_messages with the walk forced on or off, and the statements it ran."""
    monkeypatch.setattr(
        search_rows,
        "walk_threshold",
        (lambda limit, rows: 1) if walk else (lambda limit, rows: 10**18),
    )
    statements: list[str] = []
    store._conn.set_trace_callback(statements.append)
    try:
        return _ids(
            store.search_messages(fields=[f for f in search.RESULT_FIELDS if f != "context"], **kw)
        ), statements
    finally:
        store._conn.set_trace_callback(None)


def _walked(statements: list[str]) -> bool:
    return any(f"INDEXED BY {time_table.INDEX}" in s for s in statements)


def test_the_time_table_mirrors_messages_value_for_value(store):
    # Text timestamps stay text, REAL stays REAL: ordering by (ts, id) is ordering
    # by (timestamp, id), which is what makes the walk return the sort plan's rows.
    assert store.index_state()["time_index"] == time_table.TABLE
    conn = store._conn
    mirror = conn.execute(
        f"SELECT id, ts, typeof(ts) FROM {time_table.TABLE} ORDER BY id"
    ).fetchall()
    truth = conn.execute(
        "SELECT id, timestamp, typeof(timestamp) FROM messages ORDER BY id"
    ).fetchall()
    assert [tuple(r) for r in mirror] == [tuple(r) for r in truth]
    assert {r[2] for r in truth} == {"real", "text"}
    plan = " ".join(
        str(r[-1])
        for r in conn.execute(
            f"EXPLAIN QUERY PLAN SELECT id FROM {time_table.TABLE} INDEXED BY {time_table.INDEX} "
            f"ORDER BY ts DESC, id DESC LIMIT 5"
        )
    )
    assert "TEMP B-TREE" not in plan  # the index gives the order: a walk, not a sort


@pytest.mark.parametrize("sort", ["newest", "oldest"])
def test_time_index_walk_equals_sorting_every_match(store, monkeypatch, sort):
    filters = [
        {},
        {"role_filter": ["tool"]},
        {"role_filter": ["user", "assistant"]},
        {"include_inactive": True},
        {"source_filter": ["cron"]},
        {"exclude_sources": ["cron", "subagent"]},
        {"after": T0 + 3000},
        {"before": T0 + 9000},
        {"after": T0 + 2000, "before": T0 + 6000},
        {"exclude_session_ids": ["s00", "s05", "s11"]},
    ]
    walked = 0
    for query, kw, (limit, offset) in itertools.product(
        QUERIES, filters, [(1, 0), (7, 0), (20, 13), (2000, 0)]
    ):
        args = {"query": query, "sort": sort, "limit": limit, "offset": offset, **kw}
        fast, statements = _time_sorted(store, monkeypatch, True, **args)
        slow, _ = _time_sorted(store, monkeypatch, False, **args)
        assert fast == slow, args
        walked += _walked(statements)
    assert walked > 100  # the walk really ran on the index routes


def test_the_walk_is_chosen_only_for_very_common_terms(store):
    statements: list[str] = []
    store._conn.set_trace_callback(statements.append)
    try:
        store.search_messages("数据", sort="newest", limit=1)  # hundreds of matches
        common = _walked(statements)
        statements.clear()
        store.search_messages("补录", sort="newest", limit=1)  # six
        rare = _walked(statements)
    finally:
        store._conn.set_trace_callback(None)
    assert common and not rare
    assert search_rows.walk_threshold(20, 200_000) < search_rows.walk_threshold(300, 200_000)
    assert search_rows.walk_threshold(20, 200_000) < search_rows.walk_threshold(20, 1_000_000)


def _mirror_exact(conn: Any) -> bool:
    mirror = conn.execute(f"SELECT id, ts, typeof(ts) FROM {time_table.TABLE} ORDER BY id")
    truth = conn.execute("SELECT id, timestamp, typeof(timestamp) FROM messages ORDER BY id")
    return [tuple(r) for r in mirror] == [tuple(r) for r in truth]


def test_time_table_stays_exact_under_hermes_agent_and_the_walk_sees_it(
    tmp_path, hermes_venv, monkeypatch
):
    """Hermes Agent 0.19.0 writes, edits, rewrites, re-dates, renumbers and deletes
    on an optimized store and vacuums it: its own process runs our triggers, the
    table stays exact, nothing of Hermes rebuilds, and both plans agree."""
    from test_coexistence import agent, lost

    monkeypatch.setenv("HERMES_WORD_FTS", "1")  # the trigger-kept word index, Hermes writing
    db, control = tmp_path / "state.db", tmp_path / "control.db"
    agent(hermes_venv, "seed", str(db))
    shutil.copy(db, control)
    with SessionStore(db) as st:
        assert st.optimize_storage(min_pause=0)["ok"]
        assert st.index_state()["time_index"] == time_table.TABLE
        fts_before = {
            r[0]: r[1]
            for r in st._conn.execute(
                "SELECT name, rootpage FROM sqlite_master WHERE name LIKE 'hermes_fts_word%'"
            )
        }
    wrote = agent(hermes_venv, "write", str(db), "T")
    agent(hermes_venv, "write", str(control), "T")
    churn = agent(hermes_venv, "timechurn", str(db), "T")
    agent(hermes_venv, "timechurn", str(control), "T")
    assert lost(hermes_venv, db, control) == {}  # Hermes' own search finds no less
    with SessionStore(db, readonly=True) as st:
        conn = st._conn
        assert st.index_state()["time_index"] == time_table.TABLE
        assert _mirror_exact(conn)
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        # Hermes' writes kept our word index and its triggers whole: the objects
        # are the ones optimize-storage left (VACUUM renumbers pages, so the names
        # are compared).
        names = {
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE name LIKE 'hermes_fts_word%'"
            )
        }
        assert names == set(fts_before)
        assert not schema.missing_triggers(conn, schema.BASE)
        for query in ["服务端", "deploy", "数据库迁移", "工具标记"]:
            for sort in ["newest", "oldest"]:
                fast, statements = _time_sorted(
                    st, monkeypatch, True, query=query, sort=sort, limit=50
                )
                slow, _ = _time_sorted(st, monkeypatch, False, query=query, sort=sort, limit=50)
                assert fast == slow, (query, sort)
                assert _walked(statements)
        newest = [
            i
            for i, _ in _time_sorted(st, monkeypatch, True, query="deploy", sort="newest", limit=1)[
                0
            ]
        ]
        assert newest == [churn["late"]]  # re-dated to the newest time of all
        oldest = [
            i
            for i, _ in _time_sorted(st, monkeypatch, True, query="deploy", sort="oldest", limit=1)[
                0
            ]
        ]
        assert oldest == [churn["old"]]  # back-dated
        moved = _time_sorted(st, monkeypatch, True, query="moved", sort="newest", limit=5)[0]
        assert [i for i, _ in moved] == [churn["moved"]]
        assert wrote["edited"] in {
            i
            for i, _ in _time_sorted(
                st, monkeypatch, True, query="数据库迁移", sort="newest", limit=500
            )[0]
        }


def one_statement_time_sort(
    conn: Any,
    table: str,
    expression: str,
    snippet_sql: str,
    where: str,
    params: list[Any],
    order: str,
    limit: int,
) -> list[dict[str, Any]]:
    """The time-sort plan before this change: top ids in a CTE, a MATCH per top row."""
    top = (
        f"SELECT m.id FROM {table} JOIN messages m ON m.id = {table}.rowid "
        f"JOIN sessions s ON s.id = m.session_id "
        f"WHERE {table} MATCH ? AND {where} ORDER BY {order} LIMIT ?"
    )
    sql = (
        f"WITH top(id) AS ({top}) "
        f"SELECT {search_request.ROW_COLUMNS.format(snippet=snippet_sql)} FROM top "
        f"CROSS JOIN {table} ON {table}.rowid = top.id "
        f"JOIN messages m ON m.id = top.id JOIN sessions s ON s.id = m.session_id "
        f"WHERE {table} MATCH ? ORDER BY {order}"
    )
    cur = conn.execute(sql, [expression, *params, limit, expression])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


@pytest.mark.parametrize("walk", [False, True])
def test_time_sorts_equal_the_old_one_statement_plan(store, walk):
    state = store.index_state()
    time_index = (state["time_index"], state["message_id_max"]) if walk else None
    assert not walk or time_index[0] == time_table.TABLE
    filters = [
        {},
        {"role_filter": ["tool"]},
        {"include_inactive": True},
        {"source_filter": ["cron", "subagent"]},
        {"after": T0 + 3000},
    ]
    checked = 0
    for query, kw, limit, order in itertools.product(
        QUERIES,
        filters,
        [1, 9, 10_000],
        ["m.timestamp DESC, m.id DESC", "m.timestamp ASC, m.id ASC"],
    ):
        plan = search_route.plan_search(state, query)
        if plan.route not in search_route.INDEX_ROUTES:
            continue
        where, params, _ = search_rows.where_sql(search.SearchRequest(query, limit=limit, **kw))
        iq = search._index_query(plan, plan.route, True)
        new = search_rows.match_rows(
            store._conn,
            iq.table,
            iq.expression,
            iq.snippet,
            where,
            params,
            order,
            limit,
            time_index=time_index,
        )
        old = one_statement_time_sort(
            store._conn, iq.table, iq.expression, iq.snippet, where, params, order, limit
        )
        assert new == old, (query, kw, limit, order)
        checked += bool(new)
    assert checked > 50
