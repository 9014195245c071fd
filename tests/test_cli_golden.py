"""Golden output of every ``hermes-fts`` subcommand: for people and ``--json``, on a terminal or not.

The expected text lives in ``tests/golden/NAME.txt``.  Only what changes from
run to run is masked (the temporary path, milliseconds, byte sizes, the
SQLite version and how the extension loaded); everything else must match line for line.  After a
deliberate change of the output, regenerate with
``HERMES_FTS_UPDATE_GOLDEN=1 python -m pytest tests/test_cli_golden.py`` and
review the diff.

``--json`` must be exactly one JSON document on stdout, with nothing on
stderr, for every subcommand and every error path.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from _tool_fixtures import T0, conversation

import hermes_fts
from hermes_fts.cli import main
from hermes_fts.store import SessionStore

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("HERMES_FTS_UPDATE_GOLDEN") == "1"

pytestmark = pytest.mark.skipif(
    not hermes_fts.extension_path(), reason="needs the built cjk_unicode61 extension"
)


@pytest.fixture(autouse=True)
def _fixed_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    path = tmp_path / "home" / "state.db"
    with SessionStore(path) as store:
        conversation(
            store,
            "s-nginx",
            [
                ("user", "how do I deploy nginx with a reverse proxy?"),
                ("assistant", "Write a server block with proxy_pass, then reload nginx."),
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {
                                "name": "web_search",
                                "arguments": json.dumps({"query": "nginx reverse proxy"}),
                            },
                        }
                    ],
                },
                {
                    "role": "tool",
                    "content": "nginx docs: proxy_pass sets the upstream",
                    "tool_name": "web_search",
                    "tool_call_id": "c1",
                },
                ("user", "thanks, deploy worked"),
            ],
            title="Deploying nginx",
            start=T0,
        )
        conversation(
            store,
            "s-tokyo",
            [
                ("user", "東京タワーの高さは？"),
                ("assistant", "東京タワーは333メートルです。"),
            ],
            title="東京タワー",
            start=T0 + 86400,
            source="telegram",
        )
    return path


def _mask(text: str, tmp: Path) -> str:
    text = text.replace(str(tmp), "<TMP>")
    text = re.sub(r"\d+(?:\.\d+)? ms\b", "<ms>", text)
    text = re.sub(r"\d+(?:\.\d+)? (?:B|KB|MB|GB)\b", "<size>", text)
    text = re.sub(r"\d+\.\d\dx text", "<x> text", text)
    text = re.sub(r"\[[#.]{20}\]", "[<bar>]", text)  # bars scale with the masked sizes
    text = re.sub(r"[\d,.]+ (\w+)/s\b", r"<rate> \1/s", text)  # progress lines
    text = re.sub(r"left \d+:\d\d:\d\d", "left <eta>", text)
    text = text.replace("\r", "<CR>")  # a redrawn line; read_text() would make it a newline
    text = text.replace(__import__("sqlite3").sqlite_version, "<sqlite>")
    text = re.sub(r"cjk_unicode61 loaded \(\w+\)", "cjk_unicode61 loaded (<how>)", text)
    text = text.replace(hermes_fts.extension_path() or "\0", "<EXT>")
    return text


def _run(argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch, terminal: bool):
    monkeypatch.setattr(sys.stdout, "isatty", lambda: terminal, raising=False)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: terminal, raising=False)
    # A redrawn line is cut to the terminal's width before the rate and time left
    # are masked, so their digits decided where; test_cli_terminals covers the cut.
    monkeypatch.setenv("COLUMNS", "400")
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def _check_golden(name: str, text: str) -> None:
    path = GOLDEN / f"{name}.txt"
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing {path}; run with HERMES_FTS_UPDATE_GOLDEN=1 and review it"
    assert text == path.read_text(encoding="utf-8")


HUMAN = {
    "path": ["path"],
    "status": ["status"],
    "sync": ["sync"],
    "search": ["search", "nginx"],
    "search-tool-call": ["search", "web_search", "--role", "assistant"],
    "search-cjk": ["search", "東京タワー", "--detail", "index"],
    "search-dash": ["search", "--", "-deploy nginx"],
    "read": ["read", "s-nginx"],
    "scroll": ["scroll", "s-nginx", "2", "--window", "1"],
    "browse": ["browse"],
    "optimize-storage": ["optimize-storage", "--yes"],
}


@pytest.mark.parametrize("terminal", [False, True], ids=["pipe", "tty"])
@pytest.mark.parametrize("name", sorted(HUMAN))
def test_human_output_is_golden(name, terminal, db, tmp_path, capsys, monkeypatch):
    code, out, err = _run(_argv(HUMAN[name], db), capsys, monkeypatch, terminal)
    assert code == 0, err
    text = f"--- stdout\n{_mask(out, tmp_path)}--- stderr\n{_mask(err, tmp_path)}"
    _check_golden(f"{name}.{'tty' if terminal else 'pipe'}", text)
    if not terminal:
        assert "\x1b" not in out + err and "\r" not in out + err


def _one_json(out: str, err: str, people: bool = False) -> Any:
    """The one JSON document on stdout; stderr empty unless the command talks to ``people``."""
    if not people:
        assert err == "", f"--json wrote to stderr: {err!r}"
    return json.loads(out)  # exactly one document: json.loads refuses trailing text


def _argv(words: list[str], db: Path, *extra: str) -> list[str]:
    """``words`` with ``--db`` (and ``extra``) right after the subcommand, before any ``--``."""
    return [words[0], "--db", str(db), *extra, *words[1:]]


JSON_OK = {**HUMAN, "bench": ["bench", "--per-band", "1", "--repeats", "1"]}


@pytest.mark.parametrize("terminal", [False, True], ids=["pipe", "tty"])
@pytest.mark.parametrize("name", sorted(JSON_OK))
def test_json_output_is_one_document(name, terminal, db, capsys, monkeypatch):
    code, out, err = _run(_argv(JSON_OK[name], db, "--json"), capsys, monkeypatch, terminal)
    # optimize-storage tells people what it does (disk space, phases) on stderr.
    payload = _one_json(out, err, people=name == "optimize-storage")
    assert code == 0, payload
    assert "\x1b" not in out
    if isinstance(payload, dict) and "success" in payload:
        assert payload["success"] is True


def test_demo_json_and_human(tmp_path, capsys, monkeypatch):
    code, out, err = _run(["demo", "--json"], capsys, monkeypatch, terminal=False)
    report = _one_json(out, err)
    assert code == 0 and report["searches"]
    code, out, _err = _run(["demo"], capsys, monkeypatch, terminal=False)
    assert code == 0 and "\x1b" not in out and out.startswith("Demo store:")
    code, out, _err = _run(["demo"], capsys, monkeypatch, terminal=True)
    assert code == 0 and "\x1b[1;33m" in out  # matches coloured on a terminal


def _not_sqlite(tmp: Path) -> Path:
    path = tmp / "notes.txt"
    path.write_text("just text, not a database\n")
    return path


def _folder(tmp: Path) -> Path:
    path = tmp / "a-folder"
    path.mkdir()
    return path


ERRORS = {
    "missing store": (["status"], lambda t: t / "missing.db", 2, "no session store"),
    "folder": (["search", "x"], _folder, 2, "is a directory"),
    "not sqlite": (["sync"], _not_sqlite, 2, "is not a SQLite database"),
    "bad limit": (["browse", "--limit", "abc"], None, 2, "must be an integer from 1 to 100"),
    "bad role": (["search", "x", "--role", "bogus"], None, 2, "invalid role 'bogus'"),
    "unused option": (["read", "s-nginx", "--limit", "3"], None, 2, "unrecognized arguments"),
    "dash query": (["search", "-deploy"], None, 2, "goes after `--`"),
    "no query": (["search"], None, 2, "required: query"),
    # The hint reads the same store: the --db the command line gave.
    "unknown session": (["read", "nope"], None, 1, "not found; `hermes-fts browse --db "),
    "anchor elsewhere": (
        ["scroll", "s-tokyo", "1"],
        None,
        1,
        "message 1 is not in session s-tokyo",
    ),
    "blank query": (["search", "  "], None, 2, "search needs a QUERY"),
    "too many alternatives": (
        ["search", " OR ".join(chr(0x1F600 + i) for i in range(40))],
        None,
        1,
        "OR alternatives",
    ),
    "optimize without --yes": (["optimize-storage"], None, 2, "needs --yes"),
    "demo over an existing file": (
        ["demo"],
        lambda t: t / "home" / "state.db",
        2,
        "already exists",
    ),
}


@pytest.mark.parametrize("as_json", [True, False], ids=["json", "human"])
@pytest.mark.parametrize("case", sorted(ERRORS))
def test_every_error_path(case, as_json, db, tmp_path, capsys, monkeypatch):
    argv, target, status, needle = ERRORS[case]
    path = target(tmp_path) if target else db
    if case == "optimize without --yes" and not as_json:
        monkeypatch.setattr("sys.stdin", __import__("io").StringIO(""))  # no consent
        status, needle = 1, "cancelled; nothing was changed"
    code, out, err = _run(
        _argv(argv, path, *(["--json"] if as_json else [])), capsys, monkeypatch, terminal=False
    )
    assert code == status, (out, err)
    if as_json:
        payload = _one_json(out, err)
        assert payload["success"] is False and needle in payload["error"], payload
    else:
        assert out == "" and "Error: " in err and needle in err.split("Error: ", 1)[1], (out, err)


def test_optimize_json_without_work_is_json(db, capsys, monkeypatch):
    with SessionStore(db) as store:  # the time table a first run fills: then nothing is left
        assert store.optimize_storage(vacuum=False)["ok"]
    code, out, err = _run(
        ["optimize-storage", "--no-vacuum", "--db", str(db), "--json"],
        capsys,
        monkeypatch,
        terminal=False,
    )
    payload = _one_json(out, err)
    assert code == 0 and payload == {"success": True, "ok": True, "nothing_to_do": True}


def test_optimize_json_with_yes_keeps_people_text_off_stdout(db, capsys, monkeypatch):
    with SessionStore(db) as store:
        store._mark_fts_stale("test")
    code, out, err = _run(
        ["optimize-storage", "--yes", "--db", str(db), "--json"],
        capsys,
        monkeypatch,
        terminal=False,
    )
    assert code == 0
    payload = json.loads(out)  # --json with --yes: the lines for people went to stderr
    assert payload["success"] is True and payload["ok"] is True
    assert "Database:" in err and "Database:" not in out


@pytest.mark.parametrize("as_json", [False, True], ids=["human", "json"])
def test_cli_read_and_scroll_of_a_huge_message_are_bounded(as_json, db, capsys, monkeypatch):
    with SessionStore(db) as store:
        ids = conversation(
            store, "s-huge", [("user", "q"), ("assistant", "長" * 3_000_000)], start=T0 + 2 * 86400
        )
    for words in (["read", "s-huge"], ["scroll", "s-huge", str(ids[1])]):
        code, out, _err = _run(
            _argv(words, db, *(["--json"] if as_json else [])), capsys, monkeypatch, terminal=False
        )
        assert code == 0
        assert len(out.encode("utf-8")) < 80 * 1024, len(out)
        if as_json:
            shown = json.loads(out)["messages"][1]
            assert shown["content_truncated"] and shown["original_content_chars"] == 3_000_000
        else:
            assert "[cut from 3,000,000 characters; --full shows it whole]" in out
            assert "note: 1 message(s) cut to 4,000 characters" in out


def test_a_long_log_cut_both_by_characters_and_by_lines_says_both(db, capsys, monkeypatch):
    """A 12,000-line, 1 MB log: read shows its first 12 lines.  The line saying what
    was left named the 33 lines of the 4,000 characters kept and not the cut, which
    was said at the end of the lines left out: the rest of the megabyte went unsaid."""
    log = "\n".join(f"line {k} deploy log output" for k in range(12_000))
    with SessionStore(db) as store:
        conversation(store, "s-log", [("user", "q"), ("tool", log)], start=T0 + 2 * 86400)
    code, out, _err = _run(_argv(["read", "s-log"], db), capsys, monkeypatch, terminal=False)
    assert code == 0
    shown = [line for line in out.splitlines() if "deploy log output" in line]
    assert len(shown) == 12 and "line 11 " in shown[-1]
    more = out.splitlines()[out.splitlines().index(shown[-1]) + 1].strip()
    hidden = len(log[:4000].splitlines()) - 12
    assert more == (
        f"[{hidden} more lines; cut from {len(log):,} characters; --full shows the message whole]"
    )
