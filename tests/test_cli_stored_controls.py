"""What a session row holds is printed to a terminal by ``read``, ``scroll`` and
``search``: a title, source, model, role or tool name with an escape sequence or a
line break (another program wrote it, or a title made from a web page) printed
escape sequences and broke the header over lines; every field is one line, free
of controls, as the messages are."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from _tool_fixtures import T0, conversation

from hermes_fts.cli import main
from hermes_fts.store import SessionStore

EVIL = "\x1b]0;pwned\x07\x1b[2J"


@pytest.fixture
def db(tmp_path: Path) -> tuple[Path, list[int]]:
    path = tmp_path / "state.db"
    with SessionStore(path) as st:
        ids = conversation(
            st,
            "s",
            [
                ("user", "deploy the tokyo server \u202egnp.exe\u202c \u2067x\u2069"),
                {"role": "tool", "content": "deploy done", "tool_name": f"term{EVIL}\ninal"},
            ],
            start=T0,
            title=f"plan{EVIL}\nsecond line",
            source=f"cli{EVIL}",
            model=f"gpt{EVIL}\n4",
        )
    return path, ids


@pytest.mark.parametrize("argv", [["read", "s"], ["scroll", "s", "1"], ["search", "deploy"]])
def test_stored_fields_print_without_controls(
    db: tuple[Path, list[int]], capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    path, ids = db
    argv = [str(ids[0]) if arg == "1" else arg for arg in argv]
    assert main(["--db", str(path), *argv]) == 0
    out = capsys.readouterr().out
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", out), repr(out)
    # bidi overrides and isolates reorder what follows them on the terminal
    assert not re.search("[\u202a-\u202e\u2066-\u2069]", out), repr(out)
    assert "gnp.exe" in out
    assert "second line" not in out.split("plan", 1)[0]  # the title stays on its line
    header = next(line for line in out.splitlines() if "plan" in line)
    assert "second line" in header and "cli" in header and "gpt" in header
    if argv[0] != "search":
        tool_line = next(line for line in out.splitlines() if "deploy done" in line)
        assert "tool:term" in tool_line and "inal" in tool_line


@pytest.mark.parametrize("argv", [["scroll", "ID", "--window", "1"], ["read"]])
def test_the_commands_shown_for_a_session_print_without_controls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    """A session id with an escape sequence (as `browse --json` hands it to a script)
    went raw into scroll's `more:`/`earlier:` lines and read's `scroll` line."""
    path = tmp_path / "state.db"
    sid = f"s{EVIL}"
    with SessionStore(path) as st:
        ids = conversation(st, sid, [("user", f"turn {i}") for i in range(40)], start=T0)
    argv = [str(ids[20]) if arg == "ID" else arg for arg in argv]
    assert main(["--db", str(path), argv[0], sid, *argv[1:]]) == 0
    out = capsys.readouterr().out
    assert "hermes-fts scroll" in out
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", out), repr(out)
