"""``hermes-fts scroll`` pages: following `more:` from any message to the end, and
`earlier:` back to the start, shows every message of the session exactly once
(the next page centred on the last message shown repeated half a page)."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from _tool_fixtures import T0, conversation

from hermes_fts import session_search
from hermes_fts.cli import main
from hermes_fts.store import SessionStore

MESSAGES = 23  # no window's page size divides it: the last page is a short one


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("scroll") / "state.db"
    with SessionStore(db) as st:
        turns = [("user" if i % 2 == 0 else "assistant", f"message {i}") for i in range(MESSAGES)]
        conversation(st, "long", turns, start=T0)
        conversation(st, "other", [("user", "another session"), ("assistant", "ok")], start=T0)
    return db


def _ids(db: Path) -> list[int]:
    with SessionStore(db, readonly=True) as st:
        return [m["id"] for m in st.get_messages("long")]


def _page(db: Path, capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[list[int], str]:
    assert main(["--db", str(db), *argv]) == 0
    out = capsys.readouterr().out
    shown = [int(n) for n in re.findall(r"^  [ ▶] #(\d+) ", out, flags=re.M)]
    return shown, out


def _walk(db: Path, capsys: pytest.CaptureFixture[str], first: list[str], link: str) -> list[int]:
    """Every page from ``first`` on, following the ``link`` line (more / earlier)."""
    seen: list[int] = []
    argv = first
    for _ in range(3 * MESSAGES):
        shown, out = _page(db, capsys, argv)
        seen += shown
        follow = re.search(rf"^  {link}: hermes-fts (.*) --db ", out, flags=re.M)
        if follow is None:
            assert ("(end of session)" if link == "more" else "(start of session)") in out
            return seen
        argv = shlex.split(follow.group(1))  # as a shell reads the line
    raise AssertionError("the pages never ended")


@pytest.mark.parametrize("window", [1, 2, 5, 20])
def test_more_pages_show_each_message_once(
    store: Path, capsys: pytest.CaptureFixture[str], window: int
) -> None:
    ids = _ids(store)
    for start in (ids[0], ids[3], ids[-1]):
        seen = _walk(store, capsys, ["scroll", "long", str(start), "--window", str(window)], "more")
        first = max(0, ids.index(start) - window)
        assert seen == ids[first:], (window, start, seen)


@pytest.mark.parametrize("window", [1, 2, 5, 20])
def test_earlier_pages_show_each_message_once(
    store: Path, capsys: pytest.CaptureFixture[str], window: int
) -> None:
    ids = _ids(store)
    for start in (ids[-1], ids[-4], ids[0]):
        seen = _walk(
            store, capsys, ["scroll", "long", str(start), "--window", str(window)], "earlier"
        )
        last = min(len(ids), ids.index(start) + window + 1)
        assert sorted(seen) == ids[:last] and len(seen) == len(set(seen)), (window, start, seen)


def test_a_page_after_is_the_json_of_the_messages_after(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = _ids(store)
    argv = ["--json", "scroll", "long", str(ids[4]), "--window", "3", "--after"]
    assert main(["--db", str(store), *argv]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [m["id"] for m in doc["messages"]] == ids[5:11]
    assert doc["after_message_id"] == ids[4]
    assert not any(m.get("anchor") for m in doc["messages"])
    # Only what describes this page: no centre it was cut from, nor its counts.
    assert not {"around_message_id", "messages_before", "messages_after"} & set(doc)
    assert (doc["at_start"], doc["at_end"]) == (False, False)
    for argv, edges in (
        (["scroll", "long", str(ids[-3]), "--window", "3", "--after"], (False, True)),
        (["scroll", "long", str(ids[-1]), "--after"], (False, True)),
        (["scroll", "long", str(ids[0]), "--before"], (True, False)),
        (["scroll", "long", str(ids[4]), "--window", "2", "--before"], (True, False)),
        (["scroll", "long", str(ids[9]), "--window", "2", "--before"], (False, False)),
    ):
        assert main(["--db", str(store), "--json", *argv]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert (doc["at_start"], doc["at_end"]) == edges, argv
    shown, out = _page(store, capsys, ["scroll", "long", str(ids[-1]), "--after"])
    assert shown == [] and "(end of session)" in out


def test_the_pages_come_from_the_api_as_the_command_shows_them(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The page after a message is the tool's own answer (``beyond``), not pieced
    together by the command line; a window that reaches the session's first
    message exactly says so, though its count equals the window."""
    ids = _ids(store)
    argv = ["--json", "scroll", "long", str(ids[4]), "--window", "3", "--after"]
    assert main(["--db", str(store), *argv]) == 0
    shown = json.loads(capsys.readouterr().out)
    with SessionStore(store, readonly=True) as st:
        page = session_search(
            st, session_id="long", around_message_id=ids[4], window=3, beyond="after"
        )
        assert page == shown
        centred = session_search(st, session_id="long", around_message_id=ids[3], window=3)
        assert centred["messages_before"] == 3 and centred["at_start"] is True
        assert centred["at_end"] is False
        wrong = session_search(st, session_id="long", around_message_id=ids[3], beyond="later")
        assert wrong["success"] is False and "beyond" in wrong["error"]
        for alone in ({"session_id": "long"}, {}, {"query": "message"}):  # nothing to page past
            refused = session_search(st, beyond="after", **alone)
            assert refused["success"] is False and "around_message_id" in refused["error"]


def test_a_page_beside_a_message_that_no_longer_exists(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Paging on from a message Hermes deleted meanwhile (/retry and /undo rewrite a
    session's rows) failed with 'message N is not in session'; the page goes on
    from where it was, and says so."""
    db = tmp_path / "state.db"
    with SessionStore(db) as st:
        ids = conversation(st, "s", [("user", f"m{i}") for i in range(10)], start=T0)
        conversation(st, "other", [("user", "elsewhere")], start=T0)
        elsewhere = st.get_messages("other")[0]["id"]
    gone = ids[4]
    shell = [str(shutil.which("sqlite3")), str(db), f"DELETE FROM messages WHERE id = {gone}"]
    subprocess.run(shell, check=True, timeout=60)
    for side, expected in (("--after", ids[5:9]), ("--before", ids[0:4])):
        argv = ["--db", str(db), "--json", "scroll", "s", str(gone), "--window", "2", side]
        assert main(argv) == 0
        doc = json.loads(capsys.readouterr().out)
        assert [m["id"] for m in doc["messages"]] == expected, side
        assert any(f"message {gone} no longer exists" in n for n in doc["query_notes"])
    shown, out = _page(db, capsys, ["scroll", "s", str(gone), "--after"])
    assert shown == ids[5:] and "(end of session)" in out
    # A message of another session is still no place in this one.
    assert main(["--db", str(db), "scroll", "s", str(elsewhere), "--after"]) == 1
    assert f"message {elsewhere} is not in session s" in capsys.readouterr().err


def test_the_commands_shown_name_a_session_whose_id_has_a_space(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`more: hermes-fts scroll trip 会话 7 --after` ran as a scroll of session 'trip'
    with message id '会话': the session id was shown unquoted."""
    db = tmp_path / "state.db"
    with SessionStore(db) as st:
        ids = conversation(st, "trip 会话", [("user", f"turn {i}") for i in range(9)], start=T0)
    seen = _walk(db, capsys, ["scroll", "trip 会话", str(ids[0]), "--window", "2"], "more")
    assert seen == ids
    assert main(["--db", str(db), "scroll", "trip 会话", "999999"]) == 1
    hint = re.search(r"`hermes-fts (read [^`]*)`", capsys.readouterr().err)
    assert hint is not None
    assert main(shlex.split(hint.group(1))) == 0
    assert "turn 8" in capsys.readouterr().out
