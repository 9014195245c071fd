"""The route a search reports is the route that answered it (issue 27).

The CLI, the tool, the plugin, the demo and ``hermes-fts bench`` print the
``route`` of ``SessionStore.search``'s result; none plans the query again for
a label.  A plan made beside the search can differ from what answered: on a
read-only store whose CJK index turns out to be damaged, the plan says
``fts_cjk`` and the search is answered by the LIKE fallback.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from _support import needs_extension

from hermes_fts.cli import main
from hermes_fts.hermes import plugin as hermes_plugin
from hermes_fts.index import schema
from hermes_fts.store import SessionStore

pytestmark = needs_extension  # the CJK index answers Latin words (the word index is opt-in)


@pytest.fixture()
def damaged(tmp_path: Path) -> Path:
    """A store whose CJK index reads as corrupt on MATCH, recorded nowhere."""
    db = tmp_path / "state.db"
    with SessionStore(db) as store:
        store.add_session("s1", "cli")
        store.add_message("s1", "user", "corruption probe sentence")
        store.add_message("s1", "assistant", "another corruption line")
    conn = sqlite3.connect(db)
    with conn:  # leaf pages full of 0xff: FTS5 reports SQLITE_CORRUPT_VTAB on MATCH
        conn.execute(f"UPDATE {schema.CJK}_data SET block = x'ffffffffffffffffffff' WHERE id > 10")
    conn.close()
    return db


def test_search_result_carries_the_route_that_answered(damaged: Path) -> None:
    with SessionStore(damaged, readonly=True) as store:
        assert store.describe_search_path("corruption") == "fts_cjk"  # the plan, before
        result = store.search("corruption")
        assert result.route == "like_scan_fts_stale" and len(result.rows) == 2
        # Only that the index is damaged and what repairs it: the query was not changed.
        (damage,) = result.notes
        assert "index is damaged" in damage and "optimize-storage" in damage
        # Beside it, the parser's notes for this very query, the same the tool shows.
        changed = store.search('"corruption')
        assert changed.notes == (*store.query_notes('"corruption'), damage)
        assert store.query_notes('"corruption') != []


def test_cli_prints_the_route_that_answered(
    damaged: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["search", "corruption", "--db", str(damaged)]) == 0
    assert "route like_scan_fts_stale" in capsys.readouterr().out
    assert main(["search", "corruption", "--db", str(damaged), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["route"] == "like_scan_fts_stale" and payload["count"] == 1


def test_plugin_reports_the_route_that_answered(damaged: Path) -> None:
    answer = json.loads(
        hermes_plugin.serve({"query": "corruption"}, None, lambda: "builtin", damaged)
    )
    assert answer["engine"].startswith("hermes-fts")
    assert answer["route"] == "like_scan_fts_stale"


def test_an_undamaged_search_reports_its_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "state.db"
    with SessionStore(db) as store:
        store.add_session("s1", "cli")
        store.add_message("s1", "user", "deploy the staging cluster")
        assert store.search("deploy").route == store.describe_search_path("deploy") == "fts_cjk"
    assert main(["search", "deploy", "--db", str(db), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["route"] == "fts_cjk"
