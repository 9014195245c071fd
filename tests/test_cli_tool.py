"""hermes-fts search/read/scroll/browse/demo: --json equals the tool payload; human output."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _tool_fixtures import T0, chat, conversation, open_store

from hermes_fts.cli import main
from hermes_fts.cli import output as cli_output
from hermes_fts.store import SessionStore
from hermes_fts.tool import session_search

REPO = Path(__file__).resolve().parents[1]


def _main(argv: list[str]) -> int:
    return int(main(argv))


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    monkeypatch.delenv("NO_COLOR", raising=False)
    return tmp_path


@pytest.fixture
def db(home: Path) -> Path:
    path = home / "state.db"
    s = open_store(path)
    conversation(
        s,
        "s_zh",
        [("user", "部署脚本失败了"), ("assistant", "看一下权限")],
        title="部署问题",
        start=T0,
    )
    conversation(
        s,
        "s_en",
        [("user", "plan the database migration"), ("assistant", "ok")],
        title="Migration",
        start=T0 + 100,
    )
    conversation(s, "s_long", chat(40, "long"), start=T0 + 200)
    s.close()
    return path


def run_json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, Any]:
    code = _main(argv)
    out = capsys.readouterr().out
    return code, json.loads(out)


def tool_payload(path: Path, **kwargs: Any) -> dict[str, Any]:
    store = SessionStore(path)
    try:
        return session_search(store, **kwargs)
    finally:
        store.close()


EVERY_ROLE = "user,assistant,tool,system"  # what the command line searches by default


def without_paging(data: dict[str, Any]) -> dict[str, Any]:
    """A listing's payload without the keys only the command line's paging adds."""
    return {k: v for k, v in data.items() if k not in ("offset", "next_offset")}


def _has_search() -> bool:
    return hasattr(SessionStore, "search_messages")


# --------------------------------------------------------------------------- --json parity


def test_read_json_equals_tool(db, capsys):
    code, data = run_json(capsys, ["read", "s_long", "--db", str(db), "--json"])
    assert code == 0
    assert data == tool_payload(db, session_id="s_long")
    assert data["truncated"] is True


def test_scroll_json_equals_tool(db, capsys):
    mid = tool_payload(db, session_id="s_long")["messages"][10]["id"]
    argv = ["scroll", "s_long", str(mid), "--window", "3", "--db", str(db), "--json"]
    code, data = run_json(capsys, argv)
    assert code == 0
    assert data == tool_payload(db, session_id="s_long", around_message_id=mid, window=3)


def test_browse_json_equals_tool(db, capsys):
    code, data = run_json(capsys, ["browse", "--limit", "2", "--json"])  # default store
    assert code == 0
    assert without_paging(data) == tool_payload(db, limit=2)
    assert data["count"] == 2 and data["offset"] == 0 and data["next_offset"] == 2


def test_search_json_equals_tool(db, capsys):
    if not _has_search():
        pytest.skip("search_messages not implemented yet")
    for argv, kwargs in (
        (["search", "部署"], {"query": "部署", "limit": 10, "role_filter": EVERY_ROLE}),
        (
            ["search", "migration", "--limit", "5", "--sort", "newest", "--detail", "full"],
            {
                "query": "migration",
                "limit": 5,
                "sort": "newest",
                "detail": "full",
                "role_filter": EVERY_ROLE,
            },
        ),
        (
            ["search", "migration", "--detail", "index", "--exclude", "s_zh", "--role", "user"],
            {
                "query": "migration",
                "limit": 10,
                "detail": "index",
                "exclude_session_ids": ["s_zh"],
                "role_filter": "user",
            },
        ),
    ):
        code, data = run_json(capsys, [*argv, "--db", str(db), "--json"])
        assert code == 0
        assert without_paging(data) == tool_payload(db, **kwargs), argv
        assert data["offset"] == 0 and data["next_offset"] is None


def test_json_errors_exit_nonzero(db, capsys):
    code, data = run_json(capsys, ["read", "missing", "--db", str(db), "--json"])
    assert code == 1 and data["success"] is False
    assert tool_payload(db, session_id="missing")["success"] is False
    # Worded for a person: the subcommands that list and find sessions, not tool
    # arguments, on the store this command read.
    assert data["error"] == (
        f"session missing not found; `hermes-fts browse --db {db}` lists recent sessions "
        f"and `hermes-fts search WORDS --db {db}` finds one"
    )
    code, data = run_json(capsys, ["browse", "--profile", "../x", "--json"])
    assert code == 2 and data["success"] is False and "invalid profile name" in data["error"]
    assert "omit" not in data["error"]


def test_profile_option(home, db, capsys):
    s = open_store(home / "profiles" / "work" / "state.db")
    conversation(s, "w1", [("user", "work stuff")], title="Work")
    s.close()
    code, data = run_json(capsys, ["read", "w1", "--profile", "work", "--json"])
    assert code == 0 and data["link"] == "@session:work/w1"
    code, data = run_json(capsys, ["browse", "--profile", "work", "--json"])
    assert [r["session_id"] for r in data["results"]] == ["w1"]


def test_hints_name_the_store_the_command_line_read(home, db, capsys):
    """A follow-up command without the --profile or --db given would read the default store."""
    work = home / "profiles" / "work" / "state.db"
    s = open_store(work)
    ids = conversation(s, "w1", chat(20, "work"))
    s.close()
    assert _main(["scroll", "w1", str(ids[5]), "--window", "1", "--profile", "work"]) == 0
    out = capsys.readouterr().out
    assert f"more: hermes-fts scroll w1 {ids[6]} --after --window 1 --profile work" in out
    assert _main(["scroll", "work/w1", str(ids[5]), "--window", "1"]) == 0
    assert (
        f"more: hermes-fts scroll work/w1 {ids[6]} --after --window 1\n" in capsys.readouterr().out
    )
    assert _main(["scroll", "w1", "999999", "--profile", "work"]) == 1
    assert "`hermes-fts read w1 --profile work` shows its message ids" in capsys.readouterr().err
    assert _main(["read", "nope", "--db", str(db)]) == 1
    err = capsys.readouterr().err
    assert f"`hermes-fts browse --db {db}`" in err and f"`hermes-fts search WORDS --db {db}`" in err
    # sync and optimize-storage take no --profile: the profile's file is their --db.
    with open_store(work) as store:
        store._mark_fts_stale("test")
    assert _main(["search", "work", "--profile", "work"]) == 0
    assert (
        f"`hermes-fts optimize-storage --db {work}` makes searches fast" in capsys.readouterr().out
    )
    assert _main(["status", "--db", str(work)]) == 0
    out = capsys.readouterr().out
    assert f"`hermes-fts optimize-storage --db {work}`" in out
    assert "`hermes-fts optimize-storage`" not in out


@pytest.mark.parametrize("argv", [["search", "stuff"], ["browse"], ["read", "w1"]])
def test_profile_and_db_together_are_refused_not_one_silently_ignored(home, db, capsys, argv):
    s = open_store(home / "profiles" / "work" / "state.db")
    conversation(s, "w1", [("user", "work stuff")], title="Work")
    s.close()
    code, data = run_json(capsys, [*argv, "--profile", "work", "--db", str(db), "--json"])
    assert code == 2 and data["success"] is False, data
    assert "--profile" in data["error"] and "--db" in data["error"]


@pytest.mark.parametrize("ref", ["work/w1", "@session:work/w1"])
def test_a_profile_reference_with_db_is_refused_not_db_silently_ignored(home, db, capsys, ref):
    """``work/w1`` reads the work profile's store, as --profile work does: with --db
    naming another store, one of the two would be silently ignored."""
    s = open_store(home / "profiles" / "work" / "state.db")
    conversation(s, "w1", [("user", "work stuff")], title="Work")
    s.close()
    for argv in (["read", ref], ["scroll", ref, "1"]):
        code, data = run_json(capsys, [*argv, "--db", str(db), "--json"])
        assert code == 2 and data["success"] is False, data
        assert "work" in data["error"] and "--db" in data["error"], data
    code, data = run_json(capsys, ["read", ref, "--json"])  # without --db it reads the profile
    assert code == 0 and data["link"] == "@session:work/w1"


def test_missing_db_is_an_error(home, capsys):
    code = _main(["read", "x", "--db", str(home / "nope.db")])
    assert code == 2
    assert "no session store" in capsys.readouterr().err
    assert not (home / "nope.db").exists()
    code, data = run_json(capsys, ["browse", "--json"])  # no default store either
    assert code == 2 and "no session store" in data["error"]
    assert not (home / "state.db").exists()


# --------------------------------------------------------------------------- human output


def test_human_read_and_scroll(db, capsys):
    assert _main(["read", "s_zh", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "部署问题" in out and "@session:default/s_zh" in out and "部署脚本失败了" in out
    assert " ms)" in out
    assert "\x1b[" not in out  # captured stdout is not a terminal
    mid = tool_payload(db, session_id="s_long")["messages"][5]["id"]
    assert _main(["scroll", "s_long", str(mid), "--window", "2", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert f"\u25b6 #{mid}" in out and "more: hermes-fts scroll s_long" in out


def test_human_read_truncated(db, capsys):
    assert _main(["read", "s_long", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "first 20" in out and "messages not shown" in out


def test_human_browse(db, capsys):
    assert _main(["browse", "--db", str(db), "--limit", "10"]) == 0
    out = capsys.readouterr().out
    assert "last active" in out and "Migration" in out and "@session:default/s_en" in out


def test_human_browse_of_an_empty_store_says_there_are_none(home, capsys):
    open_store(home / "empty.db").close()
    assert _main(["browse", "--db", str(home / "empty.db")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("No sessions to list.") and "most recently" not in out, out


def test_human_search(db, capsys):
    if not _has_search():
        pytest.skip("search_messages not implemented yet")
    assert _main(["search", "部署", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "[部署]" in out and "route " in out and " ms" in out
    assert "@session:default/s_zh" in out


def test_human_error(db, capsys):
    assert _main(["scroll", "s_zh", "abc", "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert "argument message_id: must be a message id such as 42 (got 'abc')" in err


# --------------------------------------------------------------------------- colour


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_highlight_plain_and_colour(monkeypatch):
    assert cli_output.highlight("a >>>b<<< c", False) == "a [b] c"
    coloured = cli_output.highlight("a >>>b<<< c", True)
    assert "\x1b[" in coloured and ">>>" not in coloured and "b" in coloured
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert cli_output.use_color(_Tty()) is True
    assert cli_output.use_color(io.StringIO()) is False
    monkeypatch.setenv("NO_COLOR", "1")
    assert cli_output.use_color(_Tty()) is False
    monkeypatch.setenv("NO_COLOR", "")
    assert cli_output.use_color(_Tty()) is True


# --------------------------------------------------------------------------- demo


def test_demo_in_process(home, capsys):
    target = home / "demo" / "demo.db"
    target.parent.mkdir()
    assert _main(["demo", "--db", str(target)]) == 0
    out = capsys.readouterr().out
    assert target.exists()
    assert "Demo store:" in out and "部署" in out and "migration" in out
    if _has_search():
        assert "route " in out and " ms" in out
        # the Chinese and English searches found their conversations
        assert "部署脚本权限问题" in out and "Orders table migration" in out
    assert _main(["demo", "--db", str(target)]) == 2  # never overwrites


def test_demo_json(home, capsys):
    code, data = run_json(capsys, ["demo", "--json"])
    assert code == 0
    assert data["messages"] >= 200 and data["sessions"] >= 12
    by_query = {item["query"]: item for item in data["searches"]}
    for query in ("部署", "migration", "猫", "設定ファイル", "백업", "deploy.sh", "nginx"):
        payload = by_query[query]["payload"]
        if not _has_search():
            assert payload["success"] is False
            continue
        assert payload["success"] is True and payload["count"] >= 1, query
    if _has_search():
        sources = {r["source"] for r in by_query["部署"]["payload"]["results"]}
        assert "subagent" not in sources


def test_demo_subprocess(home, tmp_path):
    env = dict(os.environ, HERMES_HOME=str(home), NO_COLOR="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", "demo"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        cwd=str(tmp_path),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Demo store:" in proc.stdout
    if _has_search():
        assert "部署脚本权限问题" in proc.stdout and "Orders table migration" in proc.stdout
        assert "[部署]" in proc.stdout


def test_search_prints_what_it_changed_in_the_query(tmp_path, capsys):
    from hermes_fts.cli import main

    db = tmp_path / "state.db"
    from hermes_fts import SessionStore

    with SessionStore(str(db)) as st:
        st.add_session("s1")
        st.add_message("s1", "user", "deploy the service today")
    assert main(["search", "--db", str(db), "--", "deploy -service"]) == 0
    out = capsys.readouterr().out
    assert "note:" in out and "-service" in out


def test_status_and_bench_take_profile_and_writers_name_the_db_to_pass(home, db, capsys):
    """--profile is the same on every subcommand that only reads; sync and
    optimize-storage write, and say which --db to pass instead."""
    work = home / "profiles" / "work" / "state.db"
    s = open_store(work)
    conversation(s, "w1", [("user", "work stuff")], title="Work")
    s.close()
    code, data = run_json(capsys, ["status", "--profile", "work", "--json"])
    assert code == 0 and data["db"] == str(work) and data["messages"] == 1
    code, data = run_json(capsys, ["--json", "bench", "--profile", "work", "--per-band", "1"])
    assert code == 0 and data["db"] == str(work)
    code, data = run_json(capsys, ["status", "--profile", "nope", "--json"])
    assert code == 2 and data["error"].startswith("profile 'nope' does not exist")
    code, data = run_json(capsys, ["status", "--profile", "work", "--db", str(db), "--json"])
    assert code == 2 and "pass one of them" in data["error"]
    before = work.read_bytes()
    for writer in ("sync", "optimize-storage"):
        code, data = run_json(capsys, [writer, "--profile", "work", "--json"])
        assert code == 2 and data["error"] == (
            f"{writer} writes the store, and --profile only reads one; pass the "
            f"profile's store as --db: `hermes-fts {writer} --db {work}`"
        )
    assert work.read_bytes() == before


def test_scrolling_a_long_session_pages_both_ways_with_the_same_window(db, capsys):
    """The follow-up scroll keeps --window and --full (it fell back to 5 messages a
    side and cut messages again), and an earlier page is named as well as the next."""
    code, whole = run_json(capsys, ["read", "s_long", "--full", "--db", str(db), "--json"])
    ids = [m["id"] for m in whole["messages"]]
    assert code == 0 and len(ids) == 40
    mid = ids[len(ids) // 2]
    assert _main(["scroll", "s_long", str(mid), "--window", "3", "--full", "--db", str(db)]) == 0
    lines = capsys.readouterr().out.splitlines()
    shown = [int(line.split("#")[1].split()[0]) for line in lines if " #" in line[:8]]
    assert shown == ids[ids.index(mid) - 3 : ids.index(mid) + 4]
    assert (
        f"  earlier: hermes-fts scroll s_long {shown[0]} --before --window 3 --full --db {db}"
        in lines
    )
    assert (
        f"  more: hermes-fts scroll s_long {shown[-1]} --after --window 3 --full --db {db}" in lines
    )
    # At the start of the session there is nothing earlier to name.
    assert _main(["scroll", "s_long", str(ids[0]), "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "(start of session)" in out and "earlier:" not in out
