"""``session_search`` calls a real model makes, through the real Hermes Agent loop.

hermes-agent 0.19.0 (``tests/_hermes_env.py``) runs one turn against a scripted
OpenAI-compatible server on 127.0.0.1 whose first answer calls the tool with the
arguments below; the plugin answers.  Every answer must be JSON that says what
was done, answer the question asked, and the loop must go on.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import _hermes_env as he
import pytest


@pytest.fixture()
def home(tmp_path: Path, hermes_venv: Path) -> Path:
    """A Hermes home: history written by SessionDB, the plugin enabled with the grant,
    the indexes built."""
    folder = tmp_path / "home"
    folder.mkdir()
    he.run_driver(hermes_venv, folder, "seed")
    (folder / "config.yaml").write_text(
        "plugins:\n  enabled:\n    - hermes-fts\n  disabled: []\n  entries:\n"
        "    hermes-fts:\n      allow_tool_override: true\n"
    )
    built = subprocess.run(
        [str(he.venv_bin(hermes_venv, "hermes-fts")), "optimize-storage", "--yes"],
        capture_output=True,
        text=True,
        env=he.clean_env(folder),
        timeout=120,
    )
    assert built.returncode == 0, built.stderr
    return folder


def turn(venv: Path, home: Path, *calls: dict[str, Any]) -> tuple[list[dict[str, Any]], dict]:
    out = he.run_driver(venv, home, "turn", "--tool-args", json.dumps(list(calls)))
    assert out["final"] == "Here is what I found.", "the loop went on after the tool calls"
    assert len(out["tool_messages"]) == len(calls), out
    return [json.loads(m) for m in out["tool_messages"]], out


def ours(payload: dict[str, Any]) -> bool:
    return str(payload.get("engine", "")).startswith("hermes-fts ")


def test_a_narrowed_or_numeric_search_that_finds_nothing_is_not_answered_by_another_question(
    hermes_venv: Path, home: Path
) -> None:
    # "deploy" is only in en-1: each search below rightly finds nothing.  Hermes'
    # built-in takes no exclusions or time bounds and browses for a number, so its
    # "hits" would answer another question (the session the model excluded).
    excluded, bounded, number = turn(
        hermes_venv,
        home,
        {"query": "deploy", "exclude_session_ids": ["en-1"]},
        {"query": "deploy", "after": "2001-01-01", "before": "2001-01-02"},
        {"query": 404},
    )[0]
    for payload in (excluded, bounded, number):
        assert ours(payload), payload
        assert payload["success"] is True and payload["mode"] == "discover", payload
        assert payload["results"] == [] and payload["message"], payload
    assert excluded["filters"] == {"exclude_session_ids": ["en-1"]}
    assert set(bounded["filters"]) == {"after", "before"}
    assert number["query"] == "404"


@pytest.mark.skipif(shutil.which("sqlite3") is None, reason="needs the sqlite3 shell")
def test_a_trigger_dropped_by_hand_leaves_hermes_writes_found_with_a_rebuild_note(
    hermes_venv: Path, home: Path
) -> None:
    # The user drops one of our triggers with the sqlite3 shell; Hermes keeps writing.
    subprocess.run(
        ["sqlite3", str(home / "state.db"), "DROP TRIGGER hermes_fts_cjk_pending_insert;"],
        check=True,
    )
    steps = [
        {"append": ["late-1", "user", "the zebrafish tank leaks"]},
        {"search": {"query": "zebrafish"}},
    ]
    found = he.run_driver(hermes_venv, home, "calls", "--steps", json.dumps(steps))["results"][1]
    assert ours(found), found  # not handed to the built-in after an empty answer of ours
    assert [r["session_id"] for r in found["results"]] == ["late-1"], found
    assert found["route"] != "fts_cjk", found
    assert "hermes fts optimize-storage" in found["index_rebuild"]["note"], found


def test_an_empty_strict_cjk_search_is_not_answered_by_the_builtin_reading_it_otherwise(
    hermes_venv: Path, home: Path
) -> None:
    # zh-1 holds both words, so each search rightly finds nothing.  Hermes' built-in
    # ORs the words of a query with a CJK word under three characters, whatever
    # joins them: its "hits" hold the excluded word, and blaming the indexes is false.
    steps = [
        {"search": {"query": q}}
        for q in ("迁移 NOT 数据库", "(升级 OR 迁移) NOT 服务端", "NEAR(升级 桂林, 2)")
    ]
    out = he.run_driver(hermes_venv, home, "calls", "--steps", json.dumps(steps))
    for payload in out["results"]:
        assert ours(payload), payload
        assert payload["results"] == [] and payload["message"], payload
    assert not [r for r in out["logs"] if "found nothing" in r["message"]], out["logs"]


def test_a_later_turn_is_not_sent_to_the_tool_output_of_its_own_conversation(
    hermes_venv: Path, home: Path
) -> None:
    # The first turn's answer (tool output holding "deploy") is stored in the current
    # session, which no search shows.  The second turn's empty search told the model
    # "Messages of role tool hold matches": a search with role_filter=tool found
    # nothing again, while the session it had excluded (en-1) was what held them.
    first = turn(hermes_venv, home, {"query": "deploy"})[0][0]
    assert [r["session_id"] for r in first["results"]] == ["en-1"], first
    (again,) = turn(hermes_venv, home, {"query": "deploy", "exclude_session_ids": ["en-1"]})[0]
    assert ours(again) and again["results"] == [], again
    assert "roles_with_matches" not in again, again
    assert again["excluded_hold_matches"] is True, again
