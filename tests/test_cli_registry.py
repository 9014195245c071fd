"""One registry and one main: every subcommand has --db and --json; stores open one way."""

from __future__ import annotations

import json
import os
import shlex
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _support import needs_extension, other_application_db
from _tool_fixtures import (
    chat,
    conversation,
    needs_nobody,
    nobody_dir,
    nobody_package_root,
    nobody_python,
    open_store,
)

from hermes_fts.cli import build_parser, main
from hermes_fts.cli.demo import load_demo
from hermes_fts.cli.registry import COMMANDS, SUBCOMMANDS, command
from hermes_fts.index import schema
from hermes_fts.loader import LIB_SUFFIX
from hermes_fts.store import SessionStore

REPO = Path(__file__).resolve().parents[1]

# The positional arguments each subcommand needs to parse.
POSITIONALS = {"search": ["deploy"], "read": ["s1"], "scroll": ["s1", "3"]}
EXPECTED = {
    "path",
    "status",
    "sync",
    "optimize-storage",
    "remove",
    "bench",
    "search",
    "read",
    "scroll",
    "browse",
    "demo",
}


def test_every_subcommand_takes_db_and_json():
    parser = build_parser(configure_all=True)
    assert set(COMMANDS) == set(SUBCOMMANDS) == EXPECTED
    for name in COMMANDS:
        args = parser.parse_args([name, *POSITIONALS.get(name, []), "--db", "x.db", "--json"])
        assert args.db == Path("x.db") and args.json is True, name
        plain = parser.parse_args([name, *POSITIONALS.get(name, [])])
        assert plain.db is None and plain.json is False, name


def test_a_subcommand_name_is_registered_once():
    build_parser(configure_all=True)
    with pytest.raises(ValueError, match="registered twice"):
        command("status", help="again")(lambda args: 0)
    assert COMMANDS["status"].help.startswith("show which indexes")


def test_module_entry_point_lists_every_subcommand(tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", "--help"],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(tmp_path),
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    for name in EXPECTED:
        assert name in proc.stdout


def test_demo_data_is_package_json_and_the_demo_counts_what_it_stored(tmp_path, capsys):
    demo = load_demo()
    assert len(demo.sessions) >= 12 and [s.query for s in demo.searches][:2] == ["部署", "猫"]
    target = tmp_path / "demo.db"
    assert main(["demo", "--db", str(target), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    conn = sqlite3.connect(target)
    try:
        stored_messages = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
        stored_sessions = conn.execute("SELECT count(*) FROM sessions").fetchone()[0]
    finally:
        conn.close()
    assert report["messages"] == stored_messages == sum(len(s["turns"]) for s in demo.sessions)
    assert report["sessions"] == stored_sessions == len(demo.sessions)
    assert [item["query"] for item in report["searches"]] == [s.query for s in demo.searches]


@pytest.mark.parametrize("argv", [["status"], ["search", "x"], ["read", "s1"], ["browse"]])
def test_a_foreign_sqlite_file_is_refused_untouched(tmp_path, capsys, argv):
    other = other_application_db(tmp_path / "other.db")
    before = other.read_bytes()
    assert main([*argv, "--db", str(other)]) == 2
    err = capsys.readouterr().err
    assert "not a Hermes session store" in err and "--db PATH" in err
    assert other.read_bytes() == before


# --------------------------------------------------------------------------- no silent coercion


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["search", "x", "--limit", "abc"], "must be an integer from 1 to 100 (got 'abc')"),
        (["search", "x", "--limit", "0"], "must be an integer from 1 to 100 (got '0')"),
        (["browse", "--limit", "-1"], "must be an integer from 1 to 100 (got '-1')"),
        (["browse", "--limit", "101"], "must be an integer from 1 to 100 (got '101')"),
        (["browse", "--offset", "-1"], "must be an integer from 0 to 100000 (got '-1')"),
        (["read", "s1", "--profile", "../x"], "invalid profile name '../x'"),
        (["search", "x", "--limit", "2.5"], "(got '2.5')"),
        # Python's int() reads these; the limit and the message id were taken unsaid
        (["search", "x", "--limit", "\uff15"], "from 1 to 100, written with the digits 0-9 (got"),
        (["browse", "--offset", "1_0"], "from 0 to 100000, written with the digits 0-9 (got"),
        (["scroll", "s1", "\uff13"], "a message id such as 42, written with the digits 0-9"),
        (["scroll", "s1", "3", "--window", "x"], "must be an integer from 1 to 20 (got 'x')"),
        (["scroll", "s1", "3", "--window", "21"], "must be an integer from 1 to 20 (got '21')"),
        (["search", "x", "--sort", "sideways"], "invalid choice: 'sideways'"),
        (["read", "s1", "--limit", "3"], "unrecognized arguments: --limit 3"),
        (["read", "s1", "--sort", "newest"], "unrecognized arguments: --sort newest"),
        (["scroll", "s1", "3", "--limit", "3"], "unrecognized arguments: --limit 3"),
        (["browse", "--sort", "newest"], "unrecognized arguments: --sort newest"),
        (["search", "x", "--role", "bogus"], "invalid role 'bogus'; choose from"),
        (["search", "x", "--detail", "most"], "invalid choice: 'most'"),
        (["bench", "--per-band", "0"], "must be an integer from 1 to"),
        (["bench", "--repeats", "x"], "must be an integer from 1 to"),
        (["search", "-deploy"], "goes after `--` (hermes-fts search --db"),
        (["search", "x", "-deploy"], "-- x -deploy)"),
        # The hint names what works: --after=-7d is refused too, and a missing value
        # was once told to be written as -7d.
        (["search", "x", "--after", "-7d"], "is written without '-' (--after 7d)"),
        (["search", "x", "--before", "-1h"], "is written without '-' (--before 1h)"),
        (["search", "x", "--exclude", "-b1"], "is written with '=' (--exclude=-b1)"),
        (["search", "x", "--limit"], "expected one argument; give it a value (--limit VALUE)"),
        # `--db "$DB"` with DB unset: it was read as the current folder (". is a directory").
        (["search", "x", "--db", ""], "--db: the path is empty; name a file, or leave --db out"),
        (["status", "--db="], "--db: the path is empty"),
        # `--exclude "$SID"` with SID unset: the session meant to be left out was searched.
        (["search", "x", "--exclude", ""], "--exclude: the session is empty"),
        (["search", "x", "--exclude=@session:"], "--exclude: the session is empty"),
        (["demo", "--db", ""], "--db: the path is empty"),
        # An unknown option with no command was reported as the command missing.
        (["--bogus"], "unrecognized arguments: --bogus; a command comes first"),
        (["--bogus=1"], "unrecognized arguments: --bogus=1; a command comes first"),
    ],
)
def test_invalid_or_unused_values_are_refused(tmp_path, capsys, argv, needle):
    # Usage errors go through main's one error path (not argparse's exit), so
    # that --json can report them as JSON too.
    assert main([*argv, "--db", str(tmp_path / "never-opened.db")]) == 2
    out = capsys.readouterr()
    assert needle in out.err and out.out == ""
    assert main([*argv, "--db", str(tmp_path / "never-opened.db"), "--json"]) == 2
    out = capsys.readouterr()
    payload = json.loads(out.out)
    assert payload["success"] is False and needle in payload["error"] and out.err == ""
    assert not (tmp_path / "never-opened.db").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "x", "-rf"],
        ["search", "--limit", "5", "-rf", "x"],
        ["search", "--limit=5", "x", "-rf", "--role", "user"],
        ["search", "-rf", "node_modules"],
    ],
)
def test_a_query_word_with_a_leading_dash_is_shown_the_command_that_runs(tmp_path, capsys, argv):
    # The hint once named `hermes-fts search -- -word`, a query the language refuses
    # (nothing but a '-' word), whatever the user wrote.
    db = tmp_path / "state.db"
    with open_store(db) as store:
        conversation(store, "s1", [("user", "run rm -rf x to clean")])
    assert main(["--db", str(db), *argv]) == 2
    err = capsys.readouterr().err
    hinted = err.split("goes after `--` (", 1)[1].rsplit(")", 1)[0]
    words = shlex.split(hinted)
    assert words[0] == "hermes-fts" and "--" in words, hinted
    assert main(words[1:]) == 0
    assert "s1" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "shown"),
    [
        (["read", "-b1"], "session id"),
        (["read", "--full", "-b1"], "session id"),
        (["read", "-help1"], "session id"),  # argparse read it as -h with a value
        (["scroll", "-b1", "2", "--window", "1"], "session id"),
        (["search", "-hello", "there"], "query"),
    ],
)
def test_a_session_id_with_a_leading_dash_is_shown_the_command_that_runs(
    tmp_path, capsys, argv, shown
):
    # read and scroll said only that the session was missing, and `search -hello`
    # that -h/--help ignored 'ello', with no word of `--`.
    db = tmp_path / "state.db"
    with open_store(db) as store:
        conversation(store, "-b1", [("user", "hello there"), ("assistant", "hi")])
        conversation(store, "-help1", [("user", "-hello"), ("assistant", "hi")])
    assert main(["--db", str(db), *argv]) == 2
    err = capsys.readouterr().err
    assert f"a {shown} that starts with '-' goes after `--`" in err, err
    words = shlex.split(err.split("goes after `--` (", 1)[1].rsplit(")", 1)[0])
    assert main(words[1:]) == 0
    assert "hello" in capsys.readouterr().out


def test_a_mistyped_option_after_a_session_id_is_not_told_about_dashes(tmp_path, capsys):
    assert main(["read", "s1", "-x", "--db", str(tmp_path / "none.db")]) == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments: -x" in err and "--`" not in err


def test_a_search_without_words_is_not_told_about_dashes(tmp_path, capsys):
    assert main(["search", "--db", str(tmp_path / "none.db")]) == 2
    err = capsys.readouterr().err
    assert "required: query" in err and "--`" not in err


def test_values_in_range_reach_the_tool(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    with open_store(tmp_path / "state.db") as store:
        for number in range(12):
            conversation(store, f"s{number:02d}", chat(2), start=1_700_000_000.0 + number)
    assert main(["browse", "--limit", " 10 ", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["count"] == 10 and "query_notes" not in payload
    assert main(["scroll", "s03", "7", "--window", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["window"] == 1


# --------------------------------------------------------------------------- no silent read-only


_AS_NOBODY = textwrap.dedent(
    """
    import contextlib, io, json, sys
    sys.path.insert(0, sys.argv[1])
    from hermes_fts.cli import main
    from hermes_fts.tool import session_search
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["search", "chatter", "--db", sys.argv[2]])
    print(json.dumps({"code": code, "out": out.getvalue(), "err": err.getvalue(),
                      "tool": session_search(None, query="chatter")}))
    """
)


@needs_nobody
def test_a_read_only_store_is_searched_without_writing():
    with nobody_dir() as folder:
        _check_read_only_store_searched(folder)


def _check_read_only_store_searched(folder: Path) -> None:
    """The CLI's search and the tool never write, so both work on a read-only file
    (issue 10)."""
    os.chown(folder, 65534, 65534)  # nobody's folder; the file stays root's 0644
    path = folder / "state.db"
    store = open_store(path)
    conversation(store, "s1", chat(4))
    store.close()
    before = path.read_bytes()
    env = {"PATH": os.environ.get("PATH", ""), "HERMES_HOME": str(folder), "NO_COLOR": "1"}
    proc = subprocess.run(
        [
            "runuser",
            "-u",
            "nobody",
            "--",
            str(nobody_python()),
            "-c",
            _AS_NOBODY,
            str(nobody_package_root()),
            str(path),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["code"] == 0 and "chatter" in result["out"], result
    assert result["tool"]["success"] is True and result["tool"]["results"], result["tool"]
    assert path.read_bytes() == before


# --------------------------------------------------------------------------- status at a glance


def test_status_draws_the_text_and_each_index_on_one_scale(tmp_path, capsys):
    db = tmp_path / "state.db"
    with open_store(db) as store:
        conversation(store, "s1", [("user", f"deploy 部署 step {i} " * 20) for i in range(30)])
    assert main(["status", "--db", str(db), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert main(["status", "--db", str(db)]) == 0
    lines = capsys.readouterr().out.splitlines()
    sizes = {"text": data["text_bytes"]}
    sizes.update({n: i["bytes"] for n, i in data["indexes"].items() if i["exists"]})
    scale = max(sizes.values())
    for name, size in sizes.items():
        (line,) = [ln for ln in lines if ln.split()[:1] == [name]]
        chart = line[line.index("[") : line.index("]") + 1]
        assert len(chart) == 22, line
        assert chart.count("#") == int(20 * size / scale), (line, size, scale)
    assert any(ln.startswith("Backfill: none pending") for ln in lines)


@needs_extension
def test_status_says_what_a_never_optimized_store_needs_and_the_command(tmp_path, capsys):
    db = tmp_path / "state.db"
    with open_store(db) as store:
        conversation(store, "s1", chat(3))
    assert main(["status", "--db", str(db)]) == 0
    assert "Searches:" not in capsys.readouterr().out  # a complete store: nothing to say
    plain = sqlite3.connect(db)  # as Hermes leaves a store: rows, none of our indexes
    with plain:
        for index in schema.INDEXES:
            schema.drop_index_objects(plain, index)
    plain.close()
    assert main(["status", "--db", str(db), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["needs_optimize"] == ["cjk_missing"]
    assert main(["status", "--db", str(db)]) == 0
    (line,) = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("Searches:")]
    assert "the CJK index is not built (cjk_missing)" in line, line
    assert line.endswith(f"run `hermes-fts optimize-storage --db {db}`"), line


@needs_extension
def test_status_names_every_code_optimize_has_to_do_in_words(tmp_path, capsys, monkeypatch):
    """The text says all that ``needs_optimize`` holds, not only what slows a search:
    here an opt-in index to build, which no other line of the text named."""
    db = tmp_path / "state.db"
    with open_store(db) as store:
        conversation(store, "s1", chat(3))
    assert main(["status", "--db", str(db)]) == 0
    assert "Optimize:" not in capsys.readouterr().out  # nothing to do
    monkeypatch.setenv("HERMES_TRIGRAM_FTS", "1")
    assert main(["status", "--db", str(db), "--json"]) == 0
    codes = json.loads(capsys.readouterr().out)["needs_optimize"]
    assert "trigram_to_build" in codes
    assert main(["status", "--db", str(db)]) == 0
    (line,) = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("Optimize:")]
    assert "the trigram index (HERMES_TRIGRAM_FTS=1) is not built (trigram_to_build)" in line
    assert all(f"({code})" in line for code in codes), (codes, line)
    assert line.endswith(f"`hermes-fts optimize-storage --db {db}` does it"), line


def test_bench_draws_the_speed_ups_on_a_terminal_only(tmp_path, capsys, monkeypatch):
    db = tmp_path / "state.db"
    words = ["deploy", "server", "config", "memory", "search", "window"]
    han = "广西桂林漓江山水服务端修改计划东京明天问题"
    with open_store(db) as store:
        conversation(
            store,
            "s1",
            [
                (
                    "user",
                    f"{words[i % 6]} {words[i * 7 % 6]} {han[i % 20]}{han[i * 3 % 20]}{han[i % 7]}",
                )
                for i in range(300)
            ],
        )
    argv = ["bench", "--db", str(db), "--per-band", "1", "--repeats", "1"]
    assert main([*argv, "--json"]) == 0
    ratios = {
        row["class"]: row["median_ratio"] for row in json.loads(capsys.readouterr().out)["classes"]
    }
    assert main(argv) == 0
    assert "speed-up" not in capsys.readouterr().out  # not a terminal: the table only
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main(argv) == 0
    out = capsys.readouterr().out
    chart = out[out.index("median speed-up") :].splitlines()[1:]
    assert [line.split()[0] for line in chart] == list(ratios)
    fills = {line.split()[0]: line.count("#") for line in chart}
    assert max(fills.values()) == 30  # the largest speed-up fills its bar
    assert all(0 <= fill <= 30 for fill in fills.values())


def test_no_vacuum_help_says_the_merge_is_skipped_too(capsys):
    """--no-vacuum skips the segment merge that takes deleted text's words out of the
    CJK index, not only the VACUUM; its help said "skip the final VACUUM"."""
    with pytest.raises(SystemExit):
        main(["optimize-storage", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--no-vacuum skip the final index merge and VACUUM (deleted messages' words" in text


def test_db_help_says_what_db_means_for_demo_and_path(capsys):
    """demo keeps its store in a new --db file (default: a temporary folder), and
    path reads no store: their --help said "session store (default: state.db)"."""
    for name, words in (
        ("demo", "a new file to keep the demo store in (default: a temporary folder)"),
        ("path", "not used: path reads no store"),
        ("status", "session store (default: $HERMES_HOME/state.db)"),
    ):
        with pytest.raises(SystemExit):
            main([name, "--help"])
        assert " ".join(capsys.readouterr().out.split()).count(words) == 1, name


def test_path_refuses_when_the_library_is_not_there(tmp_path, capsys, monkeypatch):
    """`sqlite3 x.db ".load $(hermes-fts path)"` needs a library at that path: with none
    (a HERMES_FTS_LIBRARY that names nothing), path printed it and exited 0."""
    monkeypatch.setenv("HERMES_FTS_LIBRARY", str(tmp_path / "gone" / "cjk_unicode61.so"))
    assert main(["path"]) == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err.startswith("Error: cannot provide the library to load: ")
    assert f"was not found at {tmp_path / 'gone' / 'cjk_unicode61.so'}" in out.err
    assert main(["path", "--json"]) == 2
    payload = json.loads(capsys.readouterr().out)
    assert payload["success"] is False and "was not found at" in payload["error"]
    monkeypatch.delenv("HERMES_FTS_LIBRARY")
    assert main(["path", "--json"]) == 0  # the bundled library is there
    printed = json.loads(capsys.readouterr().out)["path"]
    assert Path(printed + LIB_SUFFIX).is_file(), printed


def test_path_says_why_a_library_that_is_there_does_not_load(tmp_path, capsys, monkeypatch):
    """optimize-storage and sync send users to `hermes-fts path` for why the library
    does not load; for a truncated file path printed its path and exited 0."""
    bad = tmp_path / f"cjk_unicode61{LIB_SUFFIX}"
    bad.write_bytes(b"not a library\n")
    monkeypatch.setenv("HERMES_FTS_LIBRARY", str(bad))
    assert main(["path"]) == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err.startswith("Error: cannot provide the library to load: ")
    assert f"{bad} does not load: " in out.err, out.err
    assert main(["path", "--json"]) == 2
    assert "does not load" in json.loads(capsys.readouterr().out)["error"]


def with_library(library: Path | None, *argv: str) -> str:
    """``hermes-fts ARGV``'s stdout in its own process, loading ``library`` (None: the
    one installed), with the extension on; it must succeed."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("HERMES_CJK_FTS", None)
    env.pop("HERMES_FTS_LIBRARY", None)
    env.update({"HERMES_FTS_LIBRARY": str(library)} if library else {})
    command = [sys.executable, "-m", "hermes_fts.cli", *argv]
    proc = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_status_says_why_the_extension_did_not_load(tmp_path):
    """With a library that does not load, status said "missing (not loaded)" and its
    JSON no more; the cause went only to a log line on stderr."""
    db = tmp_path / "state.db"
    with SessionStore(db) as store:
        store.add_session("s1")
        store.add_message("s1", "user", "东京 hello")
    bad = tmp_path / f"cjk_unicode61{LIB_SUFFIX}"
    bad.write_bytes(b"not a library\n")

    def status(*extra: str, library: Path | None) -> str:
        return with_library(library, "status", "--db", str(db), *extra)

    ext = json.loads(status("--json", library=bad))["extension"]
    assert ext["loaded"] is False and str(bad) in ext["error"], ext
    line = next(x for x in status(library=bad).splitlines() if x.startswith("Extension:"))
    assert line.startswith("Extension: cjk_unicode61 missing (not loaded: ") and str(bad) in line
    assert json.loads(status("--json", library=None))["extension"]["error"] is None


@needs_nobody
def test_a_search_without_a_library_that_loads_says_so_in_its_notes(tmp_path):
    """A library that does not load left '东京' finding nothing beside '東京' with no
    note (only a log line on stderr), where HERMES_CJK_FTS=0 says why on every answer."""
    db = tmp_path / "state.db"
    with SessionStore(db) as store:
        store.add_session("s1")
        store.add_message("s1", "user", "東京 hello")
    bad = tmp_path / f"cjk_unicode61{LIB_SUFFIX}"
    bad.write_bytes(b"not a library\n")

    def search(library: Path | None) -> dict:
        return json.loads(with_library(library, "search", "东京", "--db", str(db), "--json"))

    broken = search(bad)
    assert broken["count"] == 0, broken
    (note,) = [n for n in broken.get("query_notes", []) if "did not load" in n]
    assert "`hermes-fts path` says why" in note and "陽朔 does not find 阳朔" in note
    working = search(None)
    assert working["count"] == 1 and not working.get("query_notes"), working


def test_demo_in_a_folder_this_user_cannot_search_is_an_error_not_a_traceback():
    """As nobody, `demo --db` under root's 0700 folder: Path.exists raised
    PermissionError out of the command."""
    with nobody_dir() as folder:
        closed = folder / "closed"
        closed.mkdir(mode=0o700)
        for db in (closed / "state.db", closed / "sub" / "state.db"):
            proc = subprocess.run(
                ["runuser", "-u", "nobody", "--", str(nobody_python())]
                + ["-m", "hermes_fts.cli", "demo", "--db", str(db), "--json"],
                capture_output=True,
                text=True,
                env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(nobody_package_root())},
                cwd="/tmp",
                timeout=120,
            )
            assert proc.returncode == 2 and proc.stderr == "", proc.stderr
            assert json.loads(proc.stdout) == {
                "success": False,
                "error": f"{db} cannot be read by this user (Permission denied); give this "
                "user read permission on it and the folders above it, or run as the "
                "store's owner",
            }
        assert list(closed.iterdir()) == []


@needs_nobody
@pytest.mark.parametrize("argv", [["read", "s1"], ["scroll", "s1", "1"]])
def test_read_of_a_default_store_this_user_cannot_reach_names_the_cause(argv):
    """As nobody, with $HERMES_HOME root's 0700 folder: read and scroll looked for the
    default store with Path.exists, which raised PermissionError as a traceback."""
    with nobody_dir() as folder:
        home = folder / "home"
        home.mkdir(mode=0o700)
        with open_store(home / "state.db") as store:
            conversation(store, "s1", chat(2))
        proc = subprocess.run(
            ["runuser", "-u", "nobody", "--", str(nobody_python())]
            + ["-m", "hermes_fts.cli", *argv, "--json"],
            capture_output=True,
            text=True,
            env={
                "PATH": os.environ.get("PATH", ""),
                "PYTHONPATH": str(nobody_package_root()),
                "HERMES_HOME": str(home),
            },
            cwd="/tmp",
            timeout=120,
        )
        assert proc.returncode == 2 and proc.stderr == "", proc.stderr
        error = json.loads(proc.stdout)["error"]
        assert error.startswith(f"{home / 'state.db'} cannot be read by this user"), error


@pytest.mark.parametrize("argv", [["status"], ["search", "chatter"], ["read", "s1"], ["browse"]])
def test_a_store_whose_name_is_not_utf8_is_read(tmp_path, capsys, argv):
    """caf\\xe9.db (a Latin-1 name; Python reads it as 'caf\\udce9.db'): the read-only
    URI quoted the name as UTF-8 text, and every read died with UnicodeEncodeError."""
    db = tmp_path / os.fsdecode(b"caf\xe9.db")
    try:
        store = open_store(db)
    except (OSError, sqlite3.Error):  # a file system that refuses such names (APFS)
        pytest.skip("this file system refuses a name that is not UTF-8")
    with store:
        conversation(store, "s1", chat(2))
    assert main([*argv, "--db", str(db), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload.get("success", True) is True and payload != {}, payload


# A writer in rollback-journal mode that stops mid-write (killed, a crash): its pages
# spill to the file, and the -journal holding the old ones stays behind, hot.
CRASH_MID_WRITE = """
import os, sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA journal_mode=DELETE")
conn.execute("PRAGMA cache_size=1")
conn.execute("BEGIN")
conn.execute("UPDATE messages SET content = content || ' changed'")
os._exit(0)
"""


def test_a_hot_journal_is_named_with_the_command_that_rolls_it_back(tmp_path, capsys):
    """Every read said the (writable) file "cannot be written; make it writable"."""
    db = tmp_path / "state.db"
    with open_store(db) as store:
        conversation(store, "s1", chat(40))
    subprocess.run([sys.executable, "-c", CRASH_MID_WRITE, str(db)], check=True, timeout=60)
    assert Path(f"{db}-journal").stat().st_size > 0
    for argv in (["status"], ["search", "chatter"], ["browse"]):
        assert main([*argv, "--db", str(db)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"Error: state.db-journal next to {db} holds a write"), err
        assert f"run `hermes-fts sync --db {db}` once" in err and "writable" not in err, err
    assert main(["sync", "--db", str(db)]) == 0  # a writer rolls the write back
    capsys.readouterr()
    assert main(["search", "changed", "--db", str(db), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["results"] == []


@needs_nobody
@pytest.mark.parametrize(
    "python",
    [
        ["-m", "hermes_fts.cli", "browse", "--profile", "p1", "--json"],
        ["-m", "hermes_fts.cli", "status", "--profile", "p1", "--json"],
        [
            "-c",
            "import json, hermes_fts; print(json.dumps(hermes_fts.session_search(None, query='x')))",
        ],
    ],
    ids=["browse", "status", "tool"],
)
def test_a_hermes_home_this_user_cannot_search_is_named_for_profiles_and_the_tool(python):
    """As nobody, $HERMES_HOME root's 0700 folder: the look for a profile's or the
    default store (Path.is_file) raised PermissionError: 'browse failed: [Errno 13]'
    (status 1), and the tool told the model to 'retry with simpler arguments'."""
    with nobody_dir() as folder:
        home = folder / "home"
        (home / "profiles" / "p1").mkdir(parents=True)
        for db in (home / "state.db", home / "profiles" / "p1" / "state.db"):
            with open_store(db) as store:
                conversation(store, "s1", chat(2))
        home.chmod(0o700)
        proc = subprocess.run(
            ["runuser", "-u", "nobody", "--", str(nobody_python()), *python],
            capture_output=True,
            text=True,
            env={
                "PATH": os.environ.get("PATH", ""),
                "PYTHONPATH": str(nobody_package_root()),
                "HERMES_HOME": str(home),
            },
            cwd="/tmp",
            timeout=120,
        )
        assert "Traceback" not in proc.stderr, proc.stderr
        error = json.loads(proc.stdout)["error"]
        assert "state.db cannot be read by this user (Permission denied)" in error, error
        if python[0] == "-m":
            assert proc.returncode == 2, proc.stderr


@pytest.mark.parametrize("argv", [["status"], ["search", "x"], ["read", "s1"], ["sync"]])
def test_a_hermes_home_naming_the_store_file_is_said(tmp_path, capsys, monkeypatch, argv):
    # HERMES_HOME=~/.hermes/state.db: the error named .../state.db/state.db, no more.
    store_file = tmp_path / "state.db"
    sqlite3.connect(store_file).close()
    monkeypatch.setenv("HERMES_HOME", str(store_file))
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{store_file}/state.db" in err and f"{store_file} is a file" in err
