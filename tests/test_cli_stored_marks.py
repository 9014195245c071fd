"""Stored text that holds ``>>>`` or ``<<<`` (a Python prompt, a merge conflict, a
heredoc): ``hermes-fts search`` printed them as match marks, brackets or colour
with no match inside, and a LIKE snippet marked every repeat of the words a stored
``>>>word<<<`` held.  Only the matches are marked; the stored text prints as it is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _tool_fixtures import T0, conversation

from hermes_fts.cli import main
from hermes_fts.store import SessionStore

REPL = ">>> import deploy\n>>> deploy.run()"
MERGE = "<<<<<<< HEAD\nrollout plan\n=======\nother\n>>>>>>> branch"
QUOTED = "see >>>alpha<<< first, then sync alpha"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "state.db"
    with SessionStore(path) as st:
        conversation(st, "s", [("user", REPL), ("assistant", MERGE), ("user", QUOTED)], start=T0)
    return path


# The CJK index's snippet, and the LIKE scan's (the extension switched off).
ROUTES = [("fts_cjk", None), ("like_scan", "0")]


@pytest.mark.parametrize(("route", "cjk"), ROUTES)
@pytest.mark.parametrize(
    ("query", "shown"),
    [
        ("deploy", ">>> import [deploy] >>> [deploy].run()"),
        ("rollout", "<<<<<<< HEAD [rollout] plan ======= other >>>>>>> branch"),
        ("sync", "see >>>alpha<<< first, then [sync] alpha"),
    ],
)
def test_stored_marks_print_as_text(
    db: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    route: str,
    cjk: str | None,
    query: str,
    shown: str,
) -> None:
    if cjk is not None:
        monkeypatch.setenv("HERMES_CJK_FTS", cjk)
    monkeypatch.setenv("NO_COLOR", "1")
    assert main(["--db", str(db), "--json", "search", query]) == 0
    assert json.loads(capsys.readouterr().out)["route"] == route
    assert main(["--db", str(db), "search", query]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    link = next(i for i, line in enumerate(lines) if "match #" in line)
    snippet = lines[link + 1].strip()  # the line under the result's link
    assert snippet == shown, out


@pytest.mark.parametrize(("route", "cjk"), ROUTES)
def test_json_snippets_keep_the_tools_marks(
    db: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    route: str,
    cjk: str | None,
) -> None:
    """``--json`` is the tool's answer: matches between ``>>>`` and ``<<<``."""
    if cjk is not None:
        monkeypatch.setenv("HERMES_CJK_FTS", cjk)
    assert main(["--db", str(db), "--json", "search", "rollout"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["route"] == route
    assert payload["results"][0]["snippet"] == MERGE.replace("rollout", ">>>rollout<<<")
    with SessionStore(db, readonly=True) as st:
        (row,) = st.search("sync").rows
    assert row["snippet"] == QUOTED.replace("sync", ">>>sync<<<")
