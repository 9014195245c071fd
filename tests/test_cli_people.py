"""The command line for a person with a big, real history (issue 34): every row searched,
pages, messages whole, readable tool rows, --version, one exit status for a missing store,
errors in the command line's own words, a start that skips the store stack.

Every test runs ``hermes-fts`` as a subprocess (``python -m hermes_fts.cli``), with
``--json`` where there is a payload to check.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _tool_fixtures import T0, conversation

import hermes_fts
from hermes_fts.cli import build_parser
from hermes_fts.store import SessionStore

REPO = Path(__file__).resolve().parents[1]
LONG_OUTPUT = "START " + "x" * 19_000 + " THE-END"
# 250 log lines in 3,999 characters: under the 4,000-character cut, a screenful and more.
LOG_LINES = "\n".join(["INFO request ok"] * 250)


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(arguments)}
    return {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "function": function}]}


def _tool(name: str, output: str) -> dict[str, Any]:
    return {"role": "tool", "content": output, "tool_name": name, "tool_call_id": "c"}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("home")
    with SessionStore(folder / "state.db") as store:
        conversation(
            store,
            "ops",
            [
                ("user", "please look at the web server"),
                _call("terminal", {"command": "sudo systemctl reload nginx && nginx -s reload"}),
                _tool("terminal", "bash: /etc/nginx/nginx.conf: Permission denied"),
                _tool("web_search", json.dumps({"results": [{"title": "桂林 travel"}]})),
                _tool("terminal", LONG_OUTPUT),
                _tool("journal", LOG_LINES),
                _call("web_search", {"query": "ＮＧＩＮＸ config ＮＧＩＮＸ"}),
                ("assistant", "done"),
            ],
            title="Server work",
            start=T0,
        )
        for number in range(25):
            conversation(
                store,
                f"chat{number:02d}",
                [("user", f"weekly standup notes {number}"), ("assistant", "noted")],
                start=T0 + (number + 1) * 3600,
            )
    return folder


def run(home: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HERMES_HOME": str(home), "PYTHONPATH": str(REPO)}
    env.pop("NO_COLOR", None)
    return subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(REPO),
        timeout=120,
    )


def run_json(home: Path, *argv: str) -> tuple[int, dict[str, Any]]:
    proc = run(home, *argv, "--json")
    assert proc.stderr == "", proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def message(payload: dict[str, Any], message_id: int) -> dict[str, Any]:
    return next(m for m in payload["messages"] if m["id"] == message_id)


# --------------------------------------------------------------------------- every row


def test_search_covers_tool_output_by_default(home):
    code, data = run_json(home, "search", "Permission denied")
    assert code == 0 and data["count"] == 1
    assert data["results"][0]["matched_role"] == "tool"
    code, data = run_json(home, "search", "Permission denied", "--role", "user,assistant")
    assert code == 0 and data["count"] == 0
    # Narrowed by hand: the empty answer says what was left out.
    proc = run(home, "search", "Permission denied", "--role", "user,assistant")
    assert "Searched user,assistant messages only; tool, system left out." in proc.stdout


def test_an_empty_json_answer_names_the_command_lines_flags(home):
    """`--json` gave the tool's message, which told a person to pass role_filter and
    drop exclude_session_ids: the command line has --role and --exclude."""
    text = run(home, "search", "Permission denied", "--role", "user").stdout
    code, data = run_json(home, "search", "Permission denied", "--role", "user")
    assert code == 0 and data["count"] == 0 and data["roles_with_matches"] == ["tool"]
    said = [line for line in text.splitlines()[1:] if not line.startswith("note:")]
    assert data["message"] == " ".join(said)  # the text output's words
    assert data["message"].endswith("Tool messages hold matches: add them with --role user,tool.")
    code, plain = run_json(home, "search", "Permission denied")
    found = plain["results"][0]["session_id"]
    code, data = run_json(home, "search", "Permission denied", "--exclude", found)
    assert data["excluded_hold_matches"] is True
    assert data["message"].endswith(" The sessions --exclude leaves out hold matches.")
    for doc in (data, run_json(home, "search", "Permission denied", "--role", "user")[1]):
        assert "role_filter" not in doc["message"] and "exclude_session_ids" not in doc["message"]


def test_an_exclude_naming_no_session_says_so(home):
    """``--exclude`` with a mistyped id left nothing out and said nothing: the search
    looked as if the session named had been left out."""
    code, plain = run_json(home, "search", "Permission denied")
    found = plain["results"][0]["session_id"]
    code, data = run_json(home, "search", "Permission denied", "--exclude", found[:-1])
    assert code == 0 and [r["session_id"] for r in data["results"]] == [found]
    assert (
        f"no session {found[:-1]} to exclude here; nothing was left out for it"
        in (data["query_notes"])
    )
    code, data = run_json(home, "search", "Permission denied", "--exclude", found)
    assert data["count"] == 0 and not any("to exclude" in n for n in data.get("query_notes", []))


# --------------------------------------------------------------------------- pages


@pytest.mark.parametrize(
    ("words", "default"), [(["search", "standup"], 10), (["browse"], 20)], ids=["search", "browse"]
)
def test_pages_cover_the_listing_once_in_order(home, words, default):
    code, first = run_json(home, *words)
    assert code == 0 and first["count"] == default and first["next_offset"] == default
    code, whole = run_json(home, *words, "--limit", "100")
    assert whole["next_offset"] is None
    everything = [r["session_id"] for r in whole["results"]]
    paged, offset = [], 0
    while offset is not None:
        code, page = run_json(home, *words, "--limit", "7", "--offset", str(offset))
        assert code == 0 and page["offset"] == offset
        paged += [r["session_id"] for r in page["results"]]
        offset = page["next_offset"]
    assert paged == everything and len(set(paged)) == len(paged) >= 25
    code, past = run_json(home, *words, "--offset", "500")
    assert code == 0 and past["results"] == [] and past["next_offset"] is None


@pytest.mark.parametrize(
    ("words", "found"), [(["search", "standup"], "25 matching"), (["browse"], "26 sessions")]
)
def test_a_page_past_the_last_says_so_not_that_nothing_matched(home, words, found):
    code, past = run_json(home, *words, "--offset", "500")
    assert code == 0 and past["results"] == []
    assert "offset 500" in past["message"] and found in past["message"], past["message"]
    assert "No matching" not in past["message"] and "Try fewer" not in past["message"]
    proc = run(home, *words, "--offset", "500")
    assert proc.returncode == 0 and past["message"] in proc.stdout, proc.stdout


def test_page_size_is_checked_and_a_page_says_where_the_next_starts(home):
    proc = run(home, "browse", "--limit", "101")
    assert proc.returncode == 2 and "must be an integer from 1 to 100" in proc.stderr
    proc = run(home, "browse", "--limit", "5", "--offset", "5")
    assert proc.returncode == 0
    assert proc.stdout.startswith("6-10 of the most recently active sessions")
    assert "next page: the same command with --offset 10" in proc.stdout


# --------------------------------------------------------------------------- whole messages


def _ops_ids(home: Path) -> dict[str, int]:
    code, data = run_json(home, "read", "ops", "--full")
    assert code == 0
    contents = {m.get("content"): m["id"] for m in data["messages"]}
    return {"long": contents[LONG_OUTPUT], "log": contents[LOG_LINES]}


def test_full_shows_a_long_tool_output_to_its_end(home):
    ids = _ops_ids(home)
    code, cut = run_json(home, "read", "ops")
    shown = message(cut, ids["long"])
    assert shown["content_truncated"] and shown["original_content_chars"] == len(LONG_OUTPUT)
    assert "THE-END" not in shown["content"]
    code, whole = run_json(home, "scroll", "ops", str(ids["long"]), "--window", "1", "--full")
    assert code == 0 and message(whole, ids["long"])["content"] == LONG_OUTPUT
    assert "content_truncated" not in message(whole, ids["long"])
    proc = run(home, "scroll", "ops", str(ids["long"]), "--window", "1", "--full")
    assert "THE-END" in proc.stdout and "cut from" not in proc.stdout


def test_read_shows_a_many_line_output_in_a_few_lines_unless_full(home):
    ids = _ops_ids(home)
    proc = run(home, "read", "ops")
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout.count("INFO request ok") == 12
    assert "[238 more lines; --full shows the message whole]" in proc.stdout
    assert "[cut from 19,014 characters; --full shows it whole]" in proc.stdout
    proc = run(home, "scroll", "ops", str(ids["log"]), "--window", "1", "--full")
    assert proc.stdout.count("INFO request ok") == 250


# --------------------------------------------------------------------------- readable tool rows


def test_tool_rows_print_as_text_not_json_escapes(home):
    for argv in (["read", "ops"], ["scroll", "ops", str(_ops_ids(home)["long"]), "--window", "3"]):
        proc = run(home, *argv)
        assert proc.returncode == 0
        assert '"title": "桂林 travel"' in proc.stdout and "\\u" not in proc.stdout, argv
        assert 'calls terminal(command="sudo systemctl reload nginx' in proc.stdout


@pytest.mark.parametrize(
    ("query", "snippet"),
    [
        (
            "reload",
            'terminal(command="sudo systemctl >>>reload<<< nginx && nginx -s >>>reload<<<")',
        ),
        # Widths fold: "nginx" of the other call matches too, and ranks below this one;
        # every term the snippet shows is marked, config too.
        (
            "ＮＧＩＮＸ config",
            'web_search(query=">>>ＮＧＩＮＸ<<< >>>config<<< >>>ＮＧＩＮＸ<<<")',
        ),
    ],
)
def test_tool_call_snippets_read_as_calls_with_every_hit_marked(home, query, snippet):
    code, data = run_json(home, "search", query, "--detail", "index", "--role", "assistant")
    assert code == 0
    assert snippet in [r["snippet"] for r in data["results"]], data["results"]


def test_escape_sequences_in_stored_text_never_reach_the_terminal(tmp_path):
    """Regression: tool output keeps its colours (and may hold an OSC sequence, which
    retitles the terminal); search snippets, browse previews, titles and read printed
    them raw, so the terminal acted on them."""
    with SessionStore(tmp_path / "state.db") as store:
        conversation(
            store,
            "esc",
            [
                ("user", "colour \x1b[31mredalert\x1b[0m here"),
                _tool("term\x1b[2Jinal", "set \x1b]0;pwned\x07 redalert bell\x07 nul\x00 end"),
            ],
            title="ti\x1b[5mtle",
            start=T0,
        )
        conversation(store, "bare", [("user", "\x1b[1mpreview\x1b[0m line")], start=T0 + 9)
    for argv in (
        ["search", "colour"],
        ["search", "pwned"],
        ["search", "redalert", "--detail", "full"],
        ["read", "esc"],
        ["browse"],
    ):
        proc = run(tmp_path, *argv)
        assert proc.returncode == 0, proc.stderr
        shown = proc.stdout
        assert not any(ch in shown for ch in "\x1b\x07\x00"), (argv, shown)
        assert ("preview line" if argv == ["browse"] else "redalert") in shown, argv
    assert "colour redalert here" in run(tmp_path, "search", "colour").stdout
    assert "title" in run(tmp_path, "read", "esc").stdout


# --------------------------------------------------------------------------- version, errors


def test_version():
    proc = run(REPO, "--version")
    assert proc.returncode == 0 and proc.stdout == f"hermes-fts {hermes_fts.__version__}\n"


@pytest.mark.parametrize(
    "argv",
    [["--json", "--version"], ["--version", "--json"], ["--db", "x.db", "--json", "--version"]],
)
def test_version_with_json_is_one_json_document(argv):
    proc = run(REPO, *argv)
    assert proc.returncode == 0 and proc.stderr == ""
    assert json.loads(proc.stdout) == {"name": "hermes-fts", "version": hermes_fts.__version__}


@pytest.mark.parametrize(
    "argv",
    [["--json", "--help"], ["search", "--help", "--json"], ["--json", "optimize-storage", "-h"]],
)
def test_help_with_json_is_one_json_document(argv):
    proc = run(REPO, *argv)
    assert proc.returncode == 0 and proc.stderr == ""
    text = json.loads(proc.stdout)["help"]
    assert text.startswith("usage: hermes-fts") and "--json" in text
    # The same text a person gets without --json.
    plain = [word for word in argv if word != "--json"]
    assert text == run(REPO, *plain).stdout


MISSING_STORE = [
    ["status"],
    ["sync"],
    ["bench"],
    ["search", "deploy"],
    ["browse"],
    ["read", "s1"],
    ["scroll", "s1", "3"],
]


@pytest.mark.parametrize("words", MISSING_STORE, ids=lambda w: w[0])
def test_a_missing_store_is_one_error_with_one_exit_status(tmp_path, words):
    proc = run(tmp_path, *words)
    assert proc.returncode == 2 and proc.stdout == ""
    expected = (
        f"Error: no session store at {tmp_path / 'state.db'}; pass the Hermes state.db as --db PATH"
    )
    assert proc.stderr.startswith(expected), proc.stderr
    for argv in ([*words, "--json"], ["--json", *words]):  # --json after or before the subcommand
        proc = run(tmp_path, *argv)
        assert proc.returncode == 2 and proc.stderr == ""
        payload = json.loads(proc.stdout)
        assert payload["success"] is False and payload["error"].startswith(expected[7:])
    assert not (tmp_path / "state.db").exists()


@pytest.mark.parametrize("flag", ["--j", "--js", "--jso"])
def test_json_abbreviated_as_argparse_allows_makes_errors_json_too(tmp_path, flag):
    """argparse reads ``--js`` as ``--json``: the answers were JSON, but an error was a
    line on stderr and stdout stayed empty, no document for the script to read."""
    for argv in (["search", "deploy", flag], [flag, "status"], ["browse", "--limit", "0", flag]):
        proc = run(tmp_path, *argv)
        assert proc.returncode == 2 and proc.stderr == "", proc.stderr
        assert json.loads(proc.stdout)["success"] is False, proc.stdout
    # After `--` it is query text, as --json itself is.
    proc = run(tmp_path, "search", "--", "deploy", flag)
    assert proc.returncode == 2 and proc.stdout == "" and proc.stderr.startswith("Error: ")
    # The check reads any prefix of --json as it: no other option may start --j.
    parser = build_parser(configure_all=True)
    subparsers = next(a for a in parser._actions if a.dest == "command").choices.values()
    options = {o for p in (parser, *subparsers) for o in p._option_string_actions}
    assert {o for o in options if o.startswith("--j")} == {"--json"}


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["read", "nope"], "session nope not found; `hermes-fts browse` lists recent sessions"),
        (
            ["scroll", "ops", "999999"],
            "message 999999 is not in session ops; `hermes-fts read ops`",
        ),
        (["browse", "--profile", "work"], "profile 'work' does not exist"),
        (["read", "x", "--profile", "a/b"], "invalid profile name 'a/b'"),
        (["scroll", "ops", "abc"], "must be a message id such as 42 (got 'abc')"),
        # the default profile's store is the root's, not profiles/default (regression)
        (
            ["read", "@session:default/ops", "--db", "x.db"],
            "@session:default/ops reads $HERMES_HOME/state.db and --db names another store",
        ),
        # --profile won over the reference's profile: "session ops not found" in work
        (
            ["read", "default/ops", "--profile", "work"],
            "default/ops reads $HERMES_HOME/state.db and --profile names another store "
            "($HERMES_HOME/profiles/work/state.db): pass the session id alone with --profile",
        ),
        (
            ["scroll", "@session:work/ops", "3", "--profile", "default"],
            "@session:work/ops reads $HERMES_HOME/profiles/work/state.db and --profile",
        ),
        (
            ["search", "x", "--profile", "default", "--db", "x.db"],
            "--profile default reads $HERMES_HOME/state.db and --db",
        ),
        (["browse", "--profile", "work", "--db", "x.db"], "$HERMES_HOME/profiles/work/state.db"),
    ],
)
def test_errors_name_the_command_lines_flags(home, argv, needle):
    proc = run(home, *argv)
    assert proc.returncode in (1, 2) and needle in proc.stderr, proc.stderr
    for model_words in ("call with no arguments", "omit profile", "around_message_id", "omit it"):
        assert model_words not in proc.stderr


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["search", "deploy", "--after", "bogus"], "after must be epoch seconds"),
        (["search", "deploy", "--before", "1e400"], "before is out of range"),
        (
            ["search", "deploy", "--after", "99999999d"],
            "after '99999999d' goes back past the year 1",
        ),
        # superscript digits failed in int(): "search failed", exit 1
        (["search", "deploy", "--after", "\u00b2\u2070\u00b2\u2076"], "with the digits 0-9"),
        # `--after "$SINCE"` with SINCE unset searched every date, as if no bound was given.
        (["search", "deploy", "--after", ""], "--after: the time is empty"),
        (["search", "deploy", "--before", "  "], "--before: the time is empty"),
        (
            ["search", "deploy", "--after", "2026-01-02", "--before", "2026-01-01"],
            "after must be earlier than before",
        ),
        (["browse", "--profile", "nope"], "profile 'nope' does not exist"),
        (["read", "s1", "--profile", "nope"], "profile 'nope' does not exist"),
        (["browse", "--profile", "broken"], "profile 'broken' cannot be opened"),
        (["search", "deploy", "--profile", "broken"], "profile 'broken' cannot be opened"),
        (["scroll", "s1", "1", "--profile", "broken"], "profile 'broken' cannot be opened"),
    ],
)
def test_a_bad_value_or_an_unusable_profile_store_exits_2_without_a_traceback(
    tmp_path, argv, needle
):
    # docs/USAGE.md: 2 is "could not start" (a usage error, no store, not a store),
    # as argparse's refusals and a missing --db store already were.
    with SessionStore(tmp_path / "state.db") as store:
        conversation(store, "s1", [("user", "deploy the server")])
    (tmp_path / "profiles" / "broken").mkdir(parents=True)
    (tmp_path / "profiles" / "broken" / "state.db").write_text("not a database\n")
    proc = run(tmp_path, *argv)
    assert proc.returncode == 2 and proc.stdout == "", proc
    assert proc.stderr.startswith("Error: ") and needle in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    proc = run(tmp_path, *argv, "--json")
    assert proc.returncode == 2 and proc.stderr == "", proc.stderr
    assert needle in json.loads(proc.stdout)["error"]


def test_json_before_the_subcommand_is_the_same_option(home):
    code, data = run_json(home, "browse", "--limit", "1")
    proc = run(home, "--json", "browse", "--limit", "1")
    assert proc.returncode == code == 0 and json.loads(proc.stdout)["results"] == data["results"]


# --------------------------------------------------------------------------- progress


def test_bench_shows_progress_off_a_terminal_and_stays_quiet_with_json(tmp_path):
    with SessionStore(tmp_path / "state.db") as store:
        conversation(store, "s1", [("user", "deploy the 桂林 server"), ("assistant", "deployed")])
    home = tmp_path
    proc = run(home, "bench", "--per-band", "1", "--repeats", "1")
    # Its first step (the vocabulary read) at once, then a line every few seconds.
    assert proc.returncode == 0 and proc.stderr.startswith("bench: reading the indexes' vocab")
    assert "\r" not in proc.stderr and "\x1b" not in proc.stderr
    proc = run(home, "bench", "--per-band", "1", "--repeats", "1", "--json")
    assert proc.returncode == 0 and proc.stderr == ""


def test_a_long_session_and_an_id_out_of_range_are_named_in_the_command_lines_words(tmp_path):
    with SessionStore(tmp_path / "state.db") as store:
        conversation(
            store, "long", [("user", f"step {n}") for n in range(40)], title="Long", start=T0
        )
    proc = run(tmp_path, "read", "long")
    assert proc.returncode == 0, proc.stderr
    assert (
        "Session has 40 messages; showing the first 20 and the last 10. "
        "`hermes-fts scroll long ID` shows the messages around any id shown here; "
        "--full shows them all."
    ) in proc.stdout
    proc = run(tmp_path, "scroll", "long", "99999999999999999999999")
    assert proc.returncode == 1 and proc.stderr == (
        "Error: message 99999999999999999999999 is not in session long (no message id is "
        "that large); `hermes-fts read long` shows its message ids\n"
    )
    for out in (run(tmp_path, "read", "long").stdout, proc.stderr):
        assert "around_message_id" not in out and "session_id" not in out


def test_a_huge_query_is_not_echoed_whole(home):
    """A pasted log of 100,000 characters: the header shows its start, one line, and
    the note says how much was searched; it echoed all of it."""
    query = "nginx " * 20_000
    proc = run(home, "search", query)
    assert proc.returncode == 0, proc.stderr
    header = proc.stdout.splitlines()[0]
    assert header.startswith("Search 'nginx nginx") and len(header) < 300, header[:400]
    assert "the query was cut to" in proc.stdout


# --------------------------------------------------------------------------- backfill note


def test_a_backfill_under_way_says_its_searches_are_exact_not_that_hits_are_missing(tmp_path):
    """Rows a backfill has not reached are read by a LIKE scan (DESIGN §6.3): on the 200k
    store mid-backfill every search found what the finished index finds, while the note
    said "Hits from older messages can be missing until it completes"."""
    from hermes_fts.index import maintain
    from hermes_fts.index.schema import CJK

    with SessionStore(tmp_path / "state.db") as store:
        for n in range(6):
            turns = [("user", f"deploy the server {n}"), ("assistant", "done")]
            conversation(store, f"s{n}", turns, start=T0 + n)
        maintain.reset_index(store._conn, CJK)
        assert store.rebuild_status()  # the whole CJK index waits for its backfill
    code, data = run_json(tmp_path, "search", "deploy", "--limit", "100")
    assert code == 0 and data["count"] == 6  # every session holding the word
    note = data["index_rebuild"]["note"]
    assert "0% done" in note and "hermes-fts optimize-storage" in note
    assert "missing" not in note and "no hit is left out" in note


def test_json_notes_and_status_name_the_store_chosen(tmp_path):
    """With ``--db``, the text output's notes name `hermes-fts optimize-storage --db PATH`;
    ``--json``'s (search's ``index_rebuild`` note, status' reasons) named it bare, which
    runs on the default store, not the one searched."""
    from hermes_fts.index import maintain
    from hermes_fts.index.schema import CJK

    db = tmp_path / "elsewhere" / "state.db"
    db.parent.mkdir()
    with SessionStore(db) as store:
        conversation(store, "s1", [("user", "deploy the server"), ("assistant", "done")])
        maintain.reset_index(store._conn, CJK)  # a backfill waits: notes name optimize-storage
    home = tmp_path / "home"
    home.mkdir()
    for argv in (["search", "deploy"], ["status"]):
        code, data = run_json(home, *argv, "--db", str(db))
        text = json.dumps(data)
        commands = re.findall(r"`hermes-fts ([^`]*)`", text)
        assert code == 0 and any(c.startswith("optimize-storage") for c in commands), text
        assert all(f"--db {db}" in c for c in commands), commands
    proc = run(home, "search", "deploy", "--db", str(db))  # the text output, as it was
    assert f"`hermes-fts optimize-storage --db {db}`" in proc.stdout, proc.stdout
