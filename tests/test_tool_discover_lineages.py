"""Discovery returns `limit` lineages whenever that many match, even when one
long session holds every top-ranked hit; query refusals and notes reach the model."""

from __future__ import annotations

import json

import pytest
from _tool_fixtures import conversation, open_store

from hermes_fts import session_search

OTHERS = ["s1", "s2", "s3", "s4", "s5", "s6"]
PARENT = {"s6": "s5"}  # s6 continues s5: one lineage


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    st = open_store(tmp_path_factory.mktemp("lineages") / "state.db")
    # Sessions whose single hit is word-poor and old: they rank below every big hit.
    for i, sid in enumerate(OTHERS):
        conversation(
            st,
            sid,
            [("user", "we talked about many things " * 20 + "and deploy")],
            source="cron" if sid == "s2" else "cli",
            start=1000.0 + i,
            parent=PARENT.get(sid),
        )
    conversation(st, "big", [("assistant", "deploy deploy")] * 700, start=5000.0)
    yield st
    st.close()


def _lineages(payload):
    assert payload["success"], payload
    return [r["session_id"] for r in payload["results"]]


def test_the_top_rows_belong_to_one_session(store):
    # Why the old fixed scan of 300 rows found one session only.
    rows = store.search_messages("deploy", limit=300)
    assert {r["session_id"] for r in rows} == {"big"}


def test_one_long_session_does_not_crowd_out_the_rest(store):
    got = _lineages(session_search(store, query="deploy", limit=5))
    assert len(got) == len(set(got)) == 5
    assert got[0] == "big"  # the best hit's lineage leads
    assert "s2" not in got  # the cron lineage gives way while others fill the page
    # One result per lineage: s5 and s6 are one conversation.
    assert not {"s5", "s6"} <= set(got)


def test_every_matching_lineage_with_cron_last(store):
    got = _lineages(session_search(store, query="deploy", limit=10))
    assert len(got) == 6 and got[-1] == "s2"
    assert got[0] == "big"


@pytest.mark.parametrize("sort", ["newest", "oldest"])
def test_time_sorts_also_return_limit_lineages(store, sort):
    got = _lineages(session_search(store, query="deploy", limit=5, sort=sort))
    assert len(got) == len(set(got)) == 5


def test_a_refused_query_says_how_to_write_it(store):
    out = session_search(store, query="NOT deploy")
    assert out["success"] is False
    assert "NOT" in out["error"] and "retry with plain words" not in out["error"]


def test_query_changes_are_reported_to_the_model(store):
    out = session_search(store, query="deploy -service")
    assert out["success"]
    assert any("-" in note for note in out.get("query_notes", [])), out


@pytest.mark.parametrize("limit", [1, 3, 5, 10])
@pytest.mark.parametrize("sort", [None, "newest", "oldest"])
@pytest.mark.parametrize("query", ["deploy", "things", "many things", "deploy OR things"])
def test_the_first_read_size_never_changes_the_answer(store, monkeypatch, query, sort, limit):
    # Discovery reads a few rows per wanted lineage first; a read of
    # everything at once (the reference) and reads doubling from one row per
    # lineage must give the same payload.
    from hermes_fts.tool import discover

    answers = []
    for per_lineage in (100_000, 1, discover._DISCOVER_ROWS_PER_LINEAGE):
        monkeypatch.setattr(discover, "_DISCOVER_ROWS_PER_LINEAGE", per_lineage)
        answers.append(session_search(store, query=query, limit=limit, sort=sort))
    assert answers[0]["success"] and answers[0]["results"]
    assert answers[1] == answers[0]
    assert answers[2] == answers[0]


@pytest.mark.parametrize("sort", [None, "newest", "oldest"])
def test_a_session_longer_than_the_largest_read_does_not_hide_the_rest(store, monkeypatch, sort):
    """Under a time sort every row is a message: a session holding more than the largest
    read (38,400 rows) of the newest hits filled it, and the search answered that
    session alone, with no next page, as if nothing else matched (here the largest
    read is 64 rows, and "big" holds 700 newer hits than the rest)."""
    from hermes_fts.tool import discover

    reference = session_search(store, query="deploy", limit=5, sort=sort)
    monkeypatch.setattr(discover, "_DISCOVER_MAX_SCAN", 64)
    got = session_search(store, query="deploy", limit=5, sort=sort)
    assert _lineages(got) == _lineages(reference)
    assert len(_lineages(got)) == 5 and "big" in _lineages(got)


def test_the_command_line_pages_past_a_session_longer_than_the_largest_read(
    store, monkeypatch, capsys
):
    """The same through `hermes-fts search --sort newest`: every page full, each
    lineage once, and the pages end where the matches do."""
    from hermes_fts.cli import main
    from hermes_fts.tool import discover

    monkeypatch.setattr(discover, "_DISCOVER_MAX_SCAN", 64)
    seen: list[str] = []
    offset: int | None = 0
    while offset is not None:
        argv = ["--db", str(store.path), "--json", "search", "deploy", "--sort", "newest"]
        assert main([*argv, "--limit", "2", "--offset", str(offset)]) == 0
        page = json.loads(capsys.readouterr().out)
        seen += _lineages(page)
        offset = page["next_offset"]
    assert seen[0] == "big"
    assert len(seen) == len(set(seen)) == 6  # big, s1-s4 and s5/s6 as one lineage


@pytest.mark.parametrize("sort", [None, "newest", "oldest"])
def test_a_time_word_note_speaks_of_the_first_read_not_the_last(tmp_path, monkeypatch, sort):
    """A long session from last week fills the first read; the next reads leave it
    out and find only older matches.  The note must still say that matches from
    last week come first (it said "no match is from then", the last read's)."""
    from datetime import datetime

    from hermes_fts.tool import discover

    def at(iso: str) -> float:
        return datetime.fromisoformat(iso).timestamp()

    st = open_store(tmp_path / "state.db")
    turns = [("user", f"deploy step {i}") for i in range(40)]
    conversation(st, "week", turns, start=at("2026-11-25T10:00"))
    conversation(st, "old1", [("user", "deploy the old thing")], start=at("2025-01-10T10:00"))
    conversation(st, "old2", [("user", "deploy the older thing")], start=at("2024-01-10T10:00"))
    ask = dict(query="deploy last week", sort=sort, now="2026-12-03T12:00")
    monkeypatch.setattr(discover, "_DISCOVER_ROWS_PER_LINEAGE", 100_000)
    reference = session_search(st, **ask)  # one read holds every match
    monkeypatch.setattr(discover, "_DISCOVER_ROWS_PER_LINEAGE", 1)
    got = session_search(st, **ask)
    st.close()
    assert _lineages(got)[0] == "week" and len(_lineages(got)) == 3
    said = [note for note in got["query_notes"] if note.startswith("time words")]
    assert said and "matches from then come first" in said[0], got["query_notes"]
    assert got == reference
