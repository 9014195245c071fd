"""``read`` and ``scroll`` when the 64 KB payload budget leaves messages out (turns
with many long tool calls): a page never claims the session's end (or start) past
messages it left out, so following `more:` still shows every message once, and
``read`` says how many of the first and last messages it shows."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _tool_fixtures import T0, conversation

from hermes_fts.cli import main
from hermes_fts.store import SessionStore

MESSAGES = 60
CALLS = 16  # each argument is cut to 250 characters at most: 16 of them fill 4 KB a message


def _turn(i: int) -> dict:
    calls = [
        {
            "id": f"c{i}_{k}",
            "type": "function",
            "function": {
                "name": "write_file",
                "arguments": json.dumps({"path": f"f{k}", "content": "y" * 3000}),
            },
        }
        for k in range(CALLS)
    ]
    return {"role": "assistant", "content": f"turn {i}", "tool_calls": calls}


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("budget") / "state.db"
    with SessionStore(path) as st:
        conversation(st, "calls", [_turn(i) for i in range(MESSAGES)], start=T0)
    return path


def _ids(db: Path) -> list[int]:
    with SessionStore(db, readonly=True) as st:
        return [m["id"] for m in st.get_messages("calls")]


def test_a_page_the_budget_cut_does_not_claim_the_end(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = _ids(db)
    argv = ["--db", str(db), "--json", "scroll", "calls"]
    assert main([*argv, str(ids[-41]), "--window", "20", "--after"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["messages_omitted"] > 0 and doc["messages"][-1]["id"] < ids[-1]
    assert doc["at_end"] is False
    assert main([*argv, str(ids[40]), "--window", "20", "--before"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["messages_omitted"] > 0 and doc["at_start"] is False


def test_following_more_shows_every_message_once(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = _ids(db)
    argv = ["scroll", "calls", str(ids[0]), "--window", "20", "--after"]
    seen: list[int] = []
    for _ in range(MESSAGES):
        assert main(["--db", str(db), *argv]) == 0
        out = capsys.readouterr().out
        seen += [int(n) for n in re.findall(r"^  [ ▶] #(\d+) ", out, flags=re.M)]
        follow = re.search(r"^  more: hermes-fts (.*) --db ", out, flags=re.M)
        if follow is None:
            assert "(end of session)" in out
            break
        argv = follow.group(1).split()
    assert seen == ids[1:]


def test_following_earlier_shows_every_message_once(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = _ids(db)
    argv = ["scroll", "calls", str(ids[-1]), "--window", "20", "--before"]
    seen: list[int] = []
    for _ in range(MESSAGES):
        assert main(["--db", str(db), *argv]) == 0
        out = capsys.readouterr().out
        seen = [int(n) for n in re.findall(r"^  [ ▶] #(\d+) ", out, flags=re.M)] + seen
        follow = re.search(r"^  earlier: hermes-fts (.*) --db ", out, flags=re.M)
        if follow is None:
            assert "(start of session)" in out
            break
        argv = follow.group(1).split()
    assert seen == ids[:-1]


def test_read_says_how_many_of_the_ends_it_shows(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--db", str(db), "read", "calls"]) == 0
    out = capsys.readouterr().out
    shown = [int(n) for n in re.findall(r"^    #(\d+) ", out, flags=re.M)]
    assert 0 < len(shown) < 20  # more than the tail was left out
    assert f"showing the first {len(shown)}. " in out, out.splitlines()[:6]
    assert "the last -" not in out and "the last 0" not in out


def test_the_tool_s_read_says_how_many_of_the_ends_it_shows(db: Path) -> None:
    """The tool's own message counted 20 and 10 whatever the budget left out:
    "showing the first 20 and the last 10" above fewer messages."""
    from hermes_fts import session_search

    with SessionStore(db, readonly=True) as st:
        out = session_search(st, session_id="calls")
    shown = len(out["messages"])
    assert out["truncated"] and out.get("messages_omitted"), out.keys()
    assert 0 < shown < 20
    assert f"showing the first {shown}. " in out["message"], out["message"]
