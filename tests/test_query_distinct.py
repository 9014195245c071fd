"""search_distinct: discovery returns `limit` distinct groups even when one session
holds every top-ranked hit (issue: one long session crowded out the rest)."""

from __future__ import annotations

import pytest

from hermes_fts import search
from hermes_fts.store import SessionStore

OTHERS = ["s1", "s2", "s3", "s4", "s5", "s6"]
PARENT = {"s6": "s5"}  # s6 continues s5: one lineage


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    st = SessionStore(tmp_path_factory.mktemp("distinct") / "state.db")
    st.add_session("big", source="cli", started_at=1.0)
    for sid in OTHERS:
        st.add_session(sid, source="cron" if sid == "s2" else "cli", started_at=2.0,
                       parent_session_id=PARENT.get(sid))
    # the other sessions' hits are older and rank lower: one long word-poor mention each
    for i, sid in enumerate(OTHERS):
        st.add_message(sid, "user", "we talked about many things " * 20 + "and deploy", timestamp=5.0 + i)
    # one long session whose 700 short hits outrank everything and are newest
    st.add_messages({"session_id": "big", "role": "assistant", "content": "deploy deploy",
                     "timestamp": 100.0 + i} for i in range(700))
    yield st
    st.close()


def lineage(row) -> str:
    sid = row["session_id"]
    return PARENT.get(sid, sid)


def test_one_long_session_crowds_out_a_fixed_scan(store) -> None:
    """Why: the old discovery read the top 300 rows, all from one session."""
    rows = search.search_messages(store, "deploy", limit=search.DISTINCT_FIRST_SCAN)
    assert {r["session_id"] for r in rows} == {"big"}


def test_returns_limit_distinct_groups_best_hit_first(store) -> None:
    got = search.search_distinct(store, "deploy", lineage, 5)
    assert len({lineage(r) for r in got}) == len(got) == 5
    assert got[0]["session_id"] == "big"  # the best hit's group leads
    everything = search.search_messages(store, "deploy", limit=10**6)
    position = {r["id"]: i for i, r in enumerate(everything)}
    order = [position[r["id"]] for r in got]
    assert order == sorted(order)  # ranking order kept
    for row in got:  # each group's row is its best hit
        first = next(r for r in everything if lineage(r) == lineage(row))
        assert first["id"] == row["id"]


def test_all_groups_when_fewer_match(store) -> None:
    got = search.search_distinct(store, "deploy", lineage, 50)
    assert sorted(lineage(r) for r in got) == ["big", "s1", "s2", "s3", "s4", "s5"]


def test_demoted_groups_come_last(store) -> None:
    got = search.search_distinct(store, "deploy", lineage, 50,
                                 demote=lambda r: r["source"] == "cron")
    assert lineage(got[-1]) == "s2"
    assert len(got) == 6
    # with room for only five, the cron lineage gives way
    five = search.search_distinct(store, "deploy", lineage, 5,
                                  demote=lambda r: r["source"] == "cron")
    assert "s2" not in {lineage(r) for r in five} and len(five) == 5


def test_skipped_rows_and_scan_bound(store) -> None:
    not_big = search.search_distinct(store, "deploy",
                                     lambda r: None if r["session_id"] == "big" else lineage(r), 2)
    assert len(not_big) == 2 and "big" not in {r["session_id"] for r in not_big}
    # the bound is honoured: 300 rows of one session hold only one group
    capped = search.search_distinct(store, "deploy", lineage, 5, first_scan=300, max_scan=300)
    assert [r["session_id"] for r in capped] == ["big"]
    assert search.search_distinct(store, "deploy", lineage, 0) == []


def test_options_reach_the_search(store) -> None:
    got = search.search_distinct(store, "deploy", lineage, 5, exclude_sources=["cron"])
    assert "s2" not in {lineage(r) for r in got}
