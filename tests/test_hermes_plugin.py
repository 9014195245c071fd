"""The Hermes Agent plugin against the real hermes-agent 0.19.0 from PyPI.

A venv with hermes-agent and this checkout is built once per test session
(``tests/_hermes_env.py``; set ``HERMES_FTS_TEST_VENV`` to a folder to keep it
between sessions).  Every Hermes step runs in that venv's python: Hermes'
``SessionDB`` writes the history, its ``PluginManager`` and ``hermes plugins``
command enable the plugin, its ``AIAgent`` runs the turn against a scripted
OpenAI-compatible server on 127.0.0.1, and the real ``hermes`` command runs
``hermes fts ...``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import _hermes_env as he
import pytest

ENGINE_PREFIX = "hermes-fts "
PLUGIN_LOGGER = "hermes_fts.hermes.plugin"


# --------------------------------------------------------------------------- fixtures


@pytest.fixture()
def home(tmp_path: Path, hermes_venv: Path) -> Path:
    """A Hermes home whose state.db holds zh/ja/ko/en history written by SessionDB."""
    folder = tmp_path / "home"
    folder.mkdir()
    he.run_driver(hermes_venv, folder, "seed")
    return folder


def hermes(
    venv: Path, home: Path, *args: str, env: dict[str, str] | None = None, ok: bool = True
) -> Any:
    proc = he.run_hermes(venv, home, *args, env=env)
    if ok:
        assert proc.returncode == 0, f"hermes {args} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


def enable_with_hermes(venv: Path, home: Path, grant: bool) -> None:
    hermes(
        venv, home, "plugins", "enable", "hermes-fts", *(["--allow-tool-override"] if grant else [])
    )


def enable(venv: Path, home: Path, grant: bool) -> None:
    """What ``hermes plugins enable`` writes (checked in the discovery test), without
    the second it takes to start Hermes' CLI."""
    (home / "config.yaml").write_text(
        "plugins:\n  enabled:\n    - hermes-fts\n  disabled: []\n  entries:\n"
        f"    hermes-fts:\n      allow_tool_override: {'true' if grant else 'false'}\n"
    )


def optimize(venv: Path, home: Path) -> None:
    proc = subprocess.run(
        [
            str(he.venv_bin(venv, "hermes-fts")),
            "optimize-storage",
            "--yes",
            "--db",
            str(home / "state.db"),
        ],
        capture_output=True,
        text=True,
        env=he.clean_env(home),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr


def turn(
    venv: Path,
    home: Path,
    *tool_args: dict[str, Any],
    prompt: str = "What did we say?",
    env: dict[str, str] | None = None,
    db_path: str | None = None,
    host_params: tuple[str, ...] = (),
) -> dict[str, Any]:
    args = ["turn", "--tool-args", json.dumps(list(tool_args)), "--prompt", prompt]
    if db_path:
        args += ["--db-path", db_path]
    for name in host_params:
        args += ["--host-param", name]
    out = he.run_driver(venv, home, *args, env=env)
    assert out["probe_first"], "the agent's first request is its probe"
    assert out["chat_requests"] == 2, out
    assert out["final"] == "Here is what I found.", "the agent turn completed"
    assert len(out["tool_messages"]) == len(tool_args), out
    out["payloads"] = [json.loads(m) for m in out["tool_messages"]]
    return out


def warnings(out: dict[str, Any]) -> list[str]:
    return [
        r["message"]
        for r in out["logs"]
        if r["logger"] == PLUGIN_LOGGER and r["level"] == "WARNING"
    ]


def infos(out: dict[str, Any]) -> list[str]:
    return [
        r["message"] for r in out["logs"] if r["logger"] == PLUGIN_LOGGER and r["level"] == "INFO"
    ]


def hit_sessions(payload: dict[str, Any]) -> list[str]:
    return [r["session_id"] for r in payload["results"]]


def is_ours(payload: dict[str, Any]) -> bool:
    return str(payload.get("engine", "")).startswith(ENGINE_PREFIX)


# --------------------------------------------------------------------------- discovery


def test_pluginmanager_finds_the_entry_point_and_enable_loads_it(
    hermes_venv: Path, home: Path
) -> None:
    before = he.run_driver(hermes_venv, home, "plugins")["plugins"]
    ours = [p for p in before if p["name"] == "hermes-fts"]
    assert len(ours) == 1 and ours[0]["source"] == "entrypoint"
    assert ours[0]["enabled"] is False, "pip plugins are opt-in"

    enable_with_hermes(hermes_venv, home, grant=False)
    after = {p["name"]: p for p in he.run_driver(hermes_venv, home, "plugins")["plugins"]}
    loaded = after["hermes-fts"]
    assert loaded["enabled"] is True and not loaded.get("error"), loaded
    assert loaded["middleware"] >= 1 and loaded["commands"] >= 1, loaded

    from hermes_fts.hermes.host import plugin_status

    status = plugin_status(home)
    assert status["serves_session_search"] and status["grant"] == "execution middleware only"
    assert status["hint"] == "hermes plugins enable hermes-fts --allow-tool-override"
    written = (home / "config.yaml").read_text()
    enable(hermes_venv, home, grant=False)
    assert plugin_status(home) == status, "the tests' enable() writes what Hermes writes"
    (home / "config.yaml").write_text(written)
    enable_with_hermes(hermes_venv, home, grant=True)
    status = plugin_status(home)
    assert status["allow_tool_override"] and status["grant"] == "schema override"
    assert status["hint"] is None
    hermes(hermes_venv, home, "plugins", "disable", "hermes-fts")
    assert not plugin_status(home)["serves_session_search"]


# --------------------------------------------------------------------------- the agent loop

SEARCHES = (
    {"query": "服务"},  # two-character Chinese
    {"query": "京"},  # one character (Japanese history)
    {"query": "검색"},  # Korean
)
EXPECTED = ("zh-1", "ja-1", "ko-1")


@pytest.mark.parametrize("grant", [False, True], ids=["middleware-only", "schema-override"])
def test_agent_turn_is_answered_by_hermes_fts(hermes_venv: Path, home: Path, grant: bool) -> None:
    enable(hermes_venv, home, grant=grant)
    optimize(hermes_venv, home)
    # The prompt holds the query words: the current session must stay out of the hits.
    out = turn(hermes_venv, home, *SEARCHES, prompt="服务 京 검색: what did we say?")
    for payload, expected in zip(out["payloads"], EXPECTED):
        assert is_ours(payload), payload
        assert payload["success"] is True and payload["mode"] == "discover"
        assert payload["route"] == "fts_cjk", payload
        assert hit_sessions(payload) == [expected], payload
        assert he.SESSION_ID not in hit_sessions(payload)
        assert payload["count"] == 1 and "index_rebuild" not in payload
        # Hermes' result shape, field for field.
        for key in (
            "session_id",
            "when",
            "source",
            "snippet",
            "messages",
            "bookend_start",
            "bookend_end",
            "match_message_id",
            "messages_before",
            "messages_after",
        ):
            assert key in payload["results"][0], key
    properties = set(out["schema"]["parameters"]["properties"])
    grant_hint = [m for m in infos(out) if "--allow-tool-override" in m]
    if grant:
        assert {"detail", "exclude_session_ids", "after", "before"} <= properties
        assert not grant_hint
    else:
        assert "detail" not in properties, "without the grant the model sees Hermes' schema"
        assert len(grant_hint) == 1, out["logs"]
    assert not warnings(out)


def _waiting(home: Path) -> tuple[int, int]:
    """(rows in the pending table, the current session's messages)."""
    con = sqlite3.connect(home / "state.db")
    try:
        (pending,) = con.execute("SELECT count(*) FROM hermes_fts_cjk_pending").fetchone()
        (mine,) = con.execute(
            "SELECT count(*) FROM messages WHERE session_id = ?", (he.SESSION_ID,)
        ).fetchone()
    finally:
        con.close()
    return pending, mine


@pytest.mark.parametrize("enabled", [True, False], ids=["plugin", "no-plugin"])
def test_the_turns_messages_are_indexed_after_the_turn(
    hermes_venv: Path, home: Path, enabled: bool
) -> None:
    """Hermes writes each message without our extension: it waited in the pending table,
    found by a LIKE scan, until someone ran `sync`, and the backlog grew with
    every turn.  The plugin applies it after each turn (on_session_end)."""
    if enabled:
        enable(hermes_venv, home, grant=False)
    optimize(hermes_venv, home)
    turn(hermes_venv, home, {"query": "服务"}, prompt="the zebrafishtank leaks: what did we say?")
    pending, mine = _waiting(home)
    assert mine >= 2, "Hermes saved the turn's messages"
    if not enabled:
        assert pending >= mine, "without the plugin the turn's messages wait"
        return
    assert pending == 0, "applied after the turn"
    proc = subprocess.run(
        [str(he.venv_bin(hermes_venv, "hermes-fts")), "search", "zebrafishtank", "--json",
         "--db", str(home / "state.db")],
        capture_output=True, text=True, env=he.clean_env(home), timeout=120, check=True,
    )  # fmt: skip
    found = json.loads(proc.stdout)
    assert [r["session_id"] for r in found["results"]] == [he.SESSION_ID], found
    assert found["route"] == "fts_cjk" and "index_rebuild" not in found, found


def test_store_without_our_indexes_is_answered_exactly_with_a_rebuild_note(
    hermes_venv: Path, home: Path
) -> None:
    enable(hermes_venv, home, grant=False)
    out = turn(hermes_venv, home, {"query": "服务"}, {"query": "deploy"})
    zh, en = out["payloads"]
    assert is_ours(zh) and hit_sessions(zh) == ["zh-1"]
    assert zh["route"] != "fts_cjk", "no CJK index yet: an exact fallback route"
    assert "hermes fts optimize-storage" in zh["index_rebuild"]["note"]
    assert is_ours(en) and hit_sessions(en) == ["en-1"]
    told = [m for m in infos(out) if "hermes fts optimize-storage" in m]
    assert len(told) == 1, "one log line, not one per call"
    con = sqlite3.connect(home / "state.db")
    try:
        names = {r[0] for r in con.execute("SELECT name FROM sqlite_master")}
    finally:
        con.close()
    assert not any(n.startswith("hermes_fts_cjk") for n in names), "no backfill in the turn"


@pytest.mark.parametrize("grant", [False, True], ids=["middleware-only", "schema-override"])
def test_an_argument_hermes_fts_does_not_know_goes_to_the_builtin(
    hermes_venv: Path, home: Path, grant: bool
) -> None:
    """Hermes main's chat ``scope`` narrows its search; dropping it would widen ours,
    so such a call is the built-in's, and the next call without it is ours again."""
    enable(hermes_venv, home, grant=grant)
    optimize(hermes_venv, home)
    out = turn(hermes_venv, home, {"query": "服务", "scope": "current_chat"}, {"query": "服务"})
    theirs, ours = out["payloads"]
    assert not is_ours(theirs) and theirs["success"] is True, theirs
    assert is_ours(ours) and hit_sessions(ours) == ["zh-1"], ours
    told = [m for m in warnings(out) if "scope" in m]
    assert told == [
        "hermes-fts: the call passes scope, which hermes-fts does not honour; Hermes' "
        "built-in session_search answers instead"
    ], out["logs"]


@pytest.mark.parametrize("grant", [False, True], ids=["middleware-only", "schema-override"])
def test_a_host_whose_tool_takes_more_parameters_answers_every_call(
    hermes_venv: Path, home: Path, grant: bool
) -> None:
    """A Hermes whose own session_search takes a parameter ours lacks may narrow every
    search by its default (a gateway's chat), so every call is the built-in's, and the
    model keeps Hermes' schema even with the grant."""
    enable(hermes_venv, home, grant=grant)
    optimize(hermes_venv, home)
    out = turn(hermes_venv, home, {"query": "服务"}, {}, host_params=("scope",))
    assert not any(is_ours(p) for p in out["payloads"]), out["payloads"]
    assert all(p["success"] is True for p in out["payloads"]), out["payloads"]
    properties = out["schema"]["parameters"]["properties"]
    assert "scope" in properties and "detail" not in properties
    told = [m for m in warnings(out) if "takes scope" in m]
    assert len(told) == 1, out["logs"]


def test_disabled_plugin_leaves_the_builtin_in_charge(hermes_venv: Path, home: Path) -> None:
    enable_with_hermes(hermes_venv, home, grant=True)
    hermes(hermes_venv, home, "plugins", "disable", "hermes-fts")
    out = turn(hermes_venv, home, {"query": "服务"})
    payload = out["payloads"][0]
    assert "engine" not in payload and "route" not in payload
    assert payload["success"] is True and hit_sessions(payload) == ["zh-1"]
    assert "detail" not in out["schema"]["parameters"]["properties"]


# --------------------------------------------------------------------------- fail safe


def _broken_library(tmp_path: Path) -> str:
    path = tmp_path / "libfts5_cjk.so"
    path.write_bytes(b"\x7fELF this is not a shared library")
    return str(path)


@pytest.mark.parametrize("case", ["extension-off", "broken-library"])
def test_without_the_extension_the_builtin_answers_with_one_warning(
    hermes_venv: Path, home: Path, tmp_path: Path, case: str
) -> None:
    enable(hermes_venv, home, grant=True)
    optimize(hermes_venv, home)
    env = (
        {"HERMES_CJK_FTS": "0"}
        if case == "extension-off"
        else {"HERMES_FTS_LIBRARY": _broken_library(tmp_path)}
    )
    out = turn(hermes_venv, home, {"query": "服务"}, {"query": "검색"}, env=env)
    for payload, expected in zip(out["payloads"], ("zh-1", "ko-1")):
        assert not is_ours(payload), payload
        assert payload["success"] is True and hit_sessions(payload) == [expected]
    found = warnings(out)
    assert len(found) == 1 and "cjk_unicode61" in found[0], out["logs"]


CORRUPTIONS = {
    # Zeroed segment pages read as an empty doclist: no error, just nothing found, until
    # the lookups of an empty answer's health probe (or the cross-check) catch it.
    "zeroed-segments": "UPDATE hermes_fts_cjk_data SET block = zeroblob(length(block)) "
    "WHERE id > 10",
    # A broken structure record raises SQLITE_CORRUPT_VTAB.
    "broken-structure": "UPDATE hermes_fts_cjk_data SET block = x'00' WHERE id = 10",
}


@pytest.mark.parametrize("corruption", sorted(CORRUPTIONS))
def test_corrupt_cjk_index_still_answers(hermes_venv: Path, home: Path, corruption: str) -> None:
    enable(hermes_venv, home, grant=False)
    optimize(hermes_venv, home)
    con = sqlite3.connect(home / "state.db")
    try:
        con.execute(CORRUPTIONS[corruption])
        con.commit()
    finally:
        con.close()
    out = turn(hermes_venv, home, {"query": "服务"})
    payload = out["payloads"][0]
    assert payload["success"] is True and hit_sessions(payload) == ["zh-1"], payload
    logged = [
        r
        for r in out["logs"]
        if r["level"] in ("WARNING", "ERROR") and r["logger"].startswith("hermes_fts")
    ]
    if is_ours(payload):  # our exact LIKE fallback, after logging the damage
        assert any("corrupt" in r["message"] for r in logged), out["logs"]
    else:  # our index read as empty; the cross-check handed the call to the built-in
        assert any("built-in found 1 session" in m for m in warnings(out)), out["logs"]


def test_another_profile_found_empty_is_not_answered_from_this_one(
    hermes_venv: Path, home: Path
) -> None:
    """An empty search of another profile was cross-checked with Hermes' built-in, which
    searches only the agent's own store: its sessions came back as the other
    profile's answer, with a WARNING that our indexes might be damaged."""
    from hermes_fts.store import SessionStore

    enable(hermes_venv, home, grant=True)
    optimize(hermes_venv, home)
    work = home / "profiles" / "work" / "state.db"
    work.parent.mkdir(parents=True)
    with SessionStore(work) as st:
        st.add_session("w1", "cli")
        st.add_message("w1", "user", "nothing about that here")
    steps = [{"search": {"query": "数据库", "profile": "work"}}, {"search": {"query": "数据库"}}]
    out = he.run_driver(hermes_venv, home, "calls", "--steps", json.dumps(steps))
    work_found, own = out["results"]
    assert is_ours(work_found) and work_found["results"] == [], work_found
    assert is_ours(own) and hit_sessions(own) == ["zh-1"], own
    assert not warnings(out), out["logs"]


def test_a_role_list_found_empty_is_not_answered_with_other_roles(
    hermes_venv: Path, home: Path
) -> None:
    """Hermes' built-in reads role_filter only as text: for a list it searches user and
    assistant rows, so the cross-check of ``["tool"]`` finding nothing returned an
    assistant row as the answer to a search of tool output."""
    enable(hermes_venv, home, grant=True)
    optimize(hermes_venv, home)
    steps = [
        {"search": {"query": "服务", "role_filter": ["tool"]}},
        {"search": {"query": "服务", "role_filter": ["user"]}},
    ]
    out = he.run_driver(hermes_venv, home, "calls", "--steps", json.dumps(steps))
    tools, users = out["results"]
    assert is_ours(tools) and tools["results"] == [], tools
    assert is_ours(users) and [r["matched_role"] for r in users["results"]] == ["user"], users
    assert not warnings(out), out["logs"]


@pytest.mark.skipif(shutil.which("sqlite3") is None, reason="needs the sqlite3 shell")
def test_an_empty_search_is_not_answered_with_the_current_conversation_on_a_parent_cycle(
    hermes_venv: Path, home: Path
) -> None:
    """On a ``parent_session_id`` cycle through the current session, Hermes' built-in
    stops its lineage walk where a session repeats and took the other member for a
    past conversation: the cross-check returned the model's own conversation and
    the WARNING blamed the indexes."""
    enable(hermes_venv, home, grant=True)
    optimize(hermes_venv, home)
    steps = [{"append": ["cyc-b", "user", "the zebrafish tank leaks"]}]
    he.run_driver(hermes_venv, home, "calls", "--steps", json.dumps(steps))
    subprocess.run(
        [
            "sqlite3",
            str(home / "state.db"),
            f"UPDATE sessions SET parent_session_id = 'cyc-b' WHERE id = '{he.SESSION_ID}';"
            f"UPDATE sessions SET parent_session_id = '{he.SESSION_ID}' WHERE id = 'cyc-b';",
        ],
        check=True,
    )
    steps = [{"search": {"query": "zebrafish"}}, {"search": {"query": "deploy"}}]
    out = he.run_driver(hermes_venv, home, "calls", "--steps", json.dumps(steps))
    own, past = out["results"]
    assert is_ours(own) and own["results"] == [], own
    assert is_ours(past) and hit_sessions(past) == ["en-1"], past
    assert not warnings(out), out["logs"]


def test_a_refused_call_names_no_route(hermes_venv: Path, home: Path) -> None:
    """A call the tool refuses reached no index; its payload said route "unknown"."""
    enable(hermes_venv, home, grant=True)
    optimize(hermes_venv, home)
    steps = [{"search": {"query": "服务", "after": "nonsense"}}]
    out = he.run_driver(hermes_venv, home, "calls", "--steps", json.dumps(steps))
    (refused,) = out["results"]
    assert is_ours(refused) and refused["success"] is False, refused
    assert "after must be epoch seconds" in refused["error"], refused
    assert "route" not in refused, refused


def test_custom_session_db_goes_to_the_builtin(
    hermes_venv: Path, home: Path, tmp_path: Path
) -> None:
    enable(hermes_venv, home, grant=True)
    other = tmp_path / "elsewhere" / "custom.db"
    other.parent.mkdir()
    out = turn(hermes_venv, home, {"query": "服务"}, db_path=str(other))
    payload = out["payloads"][0]
    assert not is_ours(payload) and payload["success"] is True
    assert payload["results"] == [], "the built-in searched the agent's own (empty) store"
    told = [m for m in warnings(out) if f"the agent's SessionDB is {other}" in m]
    assert len(told) == 1, out["logs"]


# The prompt word is in no seeded session, only in the new sessions' own prompts.
NEW_SESSION_SEARCHES = ({"query": "漓江"}, {"query": "服务"})


@pytest.mark.parametrize("grant", [False, True], ids=["middleware-only", "schema-override"])
@pytest.mark.parametrize("lazy_db", [True, False], ids=["agent-opens-db-lazily", "db-passed-in"])
def test_first_search_of_every_new_session_is_ours(
    hermes_venv: Path, home: Path, grant: bool, lazy_db: bool
) -> None:
    # Ten agents in one process, each with a session id state.db has never seen: an
    # agent built without a SessionDB writes its session row only after the turn.
    enable(hermes_venv, home, grant=grant)
    optimize(hermes_venv, home)
    args = [
        "sessions",
        "--count",
        "10",
        "--prompt",
        "漓江 服务?",
        "--tool-args",
        json.dumps(NEW_SESSION_SEARCHES, ensure_ascii=False),
    ]
    out = he.run_driver(hermes_venv, home, *args, *(["--lazy-db"] if lazy_db else []), timeout=300)
    earlier: list[str] = []
    for session in out["sessions"]:
        assert session["final"] == "Here is what I found.", session
        prompt_word, seeded = (json.loads(m) for m in session["tool_messages"])
        assert is_ours(prompt_word) and is_ours(seeded), (len(earlier), out["logs"])
        # The earlier new sessions hold the word; the current one stays out of the hits.
        assert prompt_word["success"] is True, prompt_word
        assert set(hit_sessions(prompt_word)) == set(earlier[-3:]), prompt_word
        # Earlier new sessions hit too, and may fill the page: each is in the index
        # once its turn ended (the plugin applies the pending table then), and its
        # short prompt holding the word outranks zh-1's longer message.
        assert hit_sessions(seeded)[0] == "zh-1" if not earlier else hit_sessions(seeded)
        assert set(hit_sessions(seeded)) <= {"zh-1", *earlier}, seeded
        assert session["stored_after"], "Hermes writes the session, as after its built-in"
        earlier.append(session["session_id"])
    assert len(earlier) == 10
    assert not warnings(out), out["logs"]


def test_locked_store_is_still_answered_by_hermes_fts(hermes_venv: Path, home: Path) -> None:
    enable(hermes_venv, home, grant=False)
    optimize(hermes_venv, home)
    steps = ["lock", {"search": {"query": "服务"}}, {"search": {"query": "京"}}, "unlock"]
    out = he.run_driver(hermes_venv, home, "calls", "--steps", json.dumps(steps))
    zh, ja = out["results"][1], out["results"][2]
    assert is_ours(zh) and hit_sessions(zh) == ["zh-1"], zh
    assert is_ours(ja) and hit_sessions(ja) == ["ja-1"], ja
    assert not warnings(out)


@pytest.mark.parametrize("grant", [False, True], ids=["middleware-only", "schema-override"])
def test_registry_dispatch_is_ours_only_with_the_grant(
    hermes_venv: Path, home: Path, grant: bool
) -> None:
    enable(hermes_venv, home, grant=grant)
    optimize(hermes_venv, home)
    steps = [{"dispatch": {"query": "검색", "detail": "index"}}]
    out = he.run_driver(hermes_venv, home, "calls", "--steps", json.dumps(steps))
    payload = out["results"][0]
    assert payload["success"] is True and hit_sessions(payload) == ["ko-1"]
    assert is_ours(payload) is grant, payload
    if grant:
        assert payload["detail"] == "index" and payload["route"] == "fts_cjk"


# --------------------------------------------------------------------------- live writes


@pytest.mark.parametrize("optimized", [True, False], ids=["optimized", "agent-only-store"])
def test_live_sessiondb_writes_show_up_on_the_next_search(
    hermes_venv: Path, home: Path, optimized: bool
) -> None:
    enable(hermes_venv, home, grant=False)
    if optimized:
        optimize(hermes_venv, home)
    steps: list[Any] = [
        {"search": {"query": "桂花糕"}},  # 0: nothing yet
        {"append": ["live-1", "user", "下午茶吃桂花糕，然后去桂林。"]},  # 1: new message id
        {"search": {"query": "桂花糕"}},  # 2: found
        {"search": {"query": "桂花"}},  # 3: two characters
    ]
    out = he.run_driver(hermes_venv, home, "calls", "--steps", json.dumps(steps))
    res = out["results"]
    new_id = res[1]
    steps2: list[Any] = [
        {"update": [new_id, "下午茶改成了绿豆糕。"]},
        {"search": {"query": "桂花糕"}},  # 1: gone after edit
        {"search": {"query": "绿豆糕"}},  # 2: the edit is found
        {"delete": "live-1"},
        {"search": {"query": "绿豆糕"}},  # 4: gone after delete
    ]
    out2 = he.run_driver(hermes_venv, home, "calls", "--steps", json.dumps(steps2))
    res2 = out2["results"]
    for payload in (res[0], res[2], res[3], res2[1], res2[2], res2[4]):
        assert is_ours(payload), payload
    assert res[0]["results"] == []
    assert hit_sessions(res[2]) == ["live-1"] and hit_sessions(res[3]) == ["live-1"]
    assert res2[1]["results"] == []
    assert hit_sessions(res2[2]) == ["live-1"]
    assert res2[4]["results"] == []
    assert not warnings(out) and not warnings(out2)


# --------------------------------------------------------------------------- hermes fts ...


def test_hermes_fts_commands_through_the_real_hermes_command(hermes_venv: Path, home: Path) -> None:
    enable_with_hermes(hermes_venv, home, grant=False)
    status = hermes(hermes_venv, home, "fts", "status").stdout
    assert "session_search: served by hermes-fts (execution middleware only)" in status
    assert "hermes plugins enable hermes-fts --allow-tool-override" in status
    assert "run `hermes fts optimize-storage`" in status
    assert str(home / "state.db") in status

    done = hermes(hermes_venv, home, "fts", "optimize-storage", "--yes")
    assert "optimized" in done.stdout.lower(), done.stdout

    data = json.loads(hermes(hermes_venv, home, "fts", "status", "--json").stdout)
    plugin = data["hermes_plugin"]
    assert plugin["serves_session_search"] and plugin["answers"] == "hermes-fts"
    assert plugin["indexes_ready"] is True and plugin["config"]["enabled"] is True

    found = hermes(hermes_venv, home, "fts", "search", "검색").stdout
    assert "ko-1" in found and "fts_cjk" in found
    hermes(hermes_venv, home, "fts", "sync")
    bad = hermes(hermes_venv, home, "fts", "demo", ok=False)
    assert bad.returncode != 0 and "invalid choice" in bad.stderr


def test_fts_slash_command_shows_who_answers(hermes_venv: Path, home: Path) -> None:
    enable(hermes_venv, home, grant=True)
    optimize(hermes_venv, home)
    text = he.run_driver(hermes_venv, home, "slash", "fts")["text"]
    assert "session_search: served by hermes-fts (schema override)" in text
    assert "answers now: hermes-fts" in text and "indexes:" not in text and "ignored" not in text
    off = he.run_driver(hermes_venv, home, "slash", "fts", env={"HERMES_CJK_FTS": "0"})["text"]
    assert "answers now: Hermes' built-in (the cjk_unicode61 extension" in off
    # /fts read no argument: `/fts search 桂林` answered with the status, as if searched.
    assert he.run_driver(hermes_venv, home, "slash", "fts", "status")["text"] == text
    unknown = he.run_driver(hermes_venv, home, "slash", "fts", "search 桂林")["text"]
    assert unknown.startswith("/fts does not take 'search 桂林'. /fts shows hermes-fts' status")
    assert "hermes fts status|optimize-storage|search|sync" in unknown
    assert "answers now" not in unknown
    usage = he.run_driver(hermes_venv, home, "slash", "fts", "help")["text"]
    assert usage.startswith("/fts shows") and "answers now" not in usage
    # A value it cannot read was taken as unset inside Hermes without a word.
    unread = {"HERMES_SEARCH_SLOW_MS": "abc"}
    said = he.run_driver(hermes_venv, home, "slash", "fts", env=unread)["text"]
    assert said.endswith(
        "\n  ignored: HERMES_SEARCH_SLOW_MS='abc' is not a number of milliseconds, 0 or more; "
        "used the default 1000"
    ), said


def test_hermes_fts_follows_the_active_profile(hermes_venv: Path, home: Path) -> None:
    enable(hermes_venv, home, grant=False)
    profile = home / "profiles" / "work"
    profile.mkdir(parents=True)
    (profile / "config.yaml").write_text((home / "config.yaml").read_text())
    he.run_driver(hermes_venv, profile, "seed")
    out = hermes(hermes_venv, home, "-p", "work", "fts", "status").stdout
    assert f"store: {profile / 'state.db'}" in out, out


def test_the_profile_steps_hermes_md_shows_make_the_plugin_serve_that_profile(
    hermes_venv: Path, home: Path
) -> None:
    # Enabling the plugin writes the active profile's config.yaml: a second profile
    # was left to Hermes' built-in, and `hermes -p work fts status` was no command.
    enable_with_hermes(hermes_venv, home, grant=True)
    profile = home / "profiles" / "work"
    profile.mkdir(parents=True)
    he.run_driver(hermes_venv, profile, "seed")
    assert hermes(hermes_venv, home, "-p", "work", "fts", "status", ok=False).returncode != 0
    page = " ".join((he.ROOT / "docs" / "HERMES.md").read_text(encoding="utf-8").split())
    steps = re.findall(r"`(hermes -p work (?:plugins enable|fts optimize-storage)[^`]*)`", page)
    assert len(steps) == 2, steps
    for step in steps:
        hermes(hermes_venv, home, *shlex.split(step)[1:])
    out = hermes(hermes_venv, home, "-p", "work", "fts", "status").stdout
    assert f"store: {profile / 'state.db'}" in out, out
    assert "served by hermes-fts (schema override)" in out and "answers now: hermes-fts" in out
    assert "indexes:" not in out, out


def test_the_offline_config_hermes_md_shows_enables_the_plugin_with_its_grant(
    hermes_venv: Path, home: Path
) -> None:
    # The page's config.yaml enabled the plugin without the grant the README's
    # command gives, and the status then said to run the command the offline
    # setup exists to avoid.
    page = (he.ROOT / "docs" / "HERMES.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"^```yaml\n(.*?)^```", page, flags=re.M | re.S)
    (home / "config.yaml").write_text(block)
    out = hermes(hermes_venv, home, "fts", "status").stdout
    assert "session_search: served by hermes-fts (schema override)" in out, out
    assert "not granted" not in out


def test_a_kept_venv_is_brought_up_to_the_checkout(hermes_venv: Path) -> None:
    # A venv kept with HERMES_FTS_TEST_VENV once went on testing the hermes-fts
    # it was made with, whatever the checkout had become.
    marker = hermes_venv / "hermes-fts-ready"
    assert marker.read_text().strip() == he.checkout_digest()
    installed = Path(
        subprocess.run(
            [
                str(he.venv_python(hermes_venv)),
                "-c",
                "import hermes_fts.search.rows as m; print(m.__file__)",
            ],
            capture_output=True,
            text=True,
            check=True,
            cwd=str(hermes_venv),
        ).stdout.strip()
    )
    source = he.ROOT / "hermes_fts" / "search" / "rows.py"
    assert installed != source and installed.read_text() == source.read_text()
    installed.write_text("# what an older checkout installed\n")
    marker.write_text("an older checkout\n")
    he.ensure_venv(hermes_venv)
    assert installed.read_text() == source.read_text()
    assert marker.read_text().strip() == he.checkout_digest()


# --------------------------------------------------------------------------- async Hermes

ASYNC_HERMES = "async-hermes-agent==0.20.4.1"
_UNREACHABLE = (
    "NewConnectionError",
    "Temporary failure in name resolution",
    "Network is unreachable",
    "Max retries exceeded",
    "No route to host",
)


@pytest.fixture(scope="session")
def async_hermes_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with async-hermes-agent (the native-async fork) and this checkout."""
    keep = os.environ.get("HERMES_FTS_TEST_VENV", "").strip()
    folder = Path(keep + "-async") if keep else tmp_path_factory.getbasetemp() / "async-hermes-venv"
    try:
        return he.ensure_venv(folder, ASYNC_HERMES)
    except he.HermesUnavailable as exc:
        if any(word in str(exc) for word in _UNREACHABLE):
            pytest.skip(f"the package index is unreachable: {exc}")
        raise


@pytest.mark.parametrize("grant", [False, True], ids=["middleware-only", "schema-override"])
def test_async_hermes_loads_the_plugin_and_its_agent_turn_is_ours(
    async_hermes_venv: Path, tmp_path: Path, grant: bool
) -> None:
    # Async Hermes awaits every middleware and tool handler: a plain function made
    # the plugin fail to load and every tool call of the agent fail with it.
    home = tmp_path / "home"
    home.mkdir()
    enable(async_hermes_venv, home, grant=grant)
    out = he.run_driver(
        async_hermes_venv,
        home,
        "async-turn",
        "--new-sessions",
        "3",
        "--tool-args",
        json.dumps([{"query": "服务", "limit": 10}, {"query": "검색", "limit": 10}]),
        timeout=300,
    )
    ours = [p for p in out["plugins"] if p["name"] == "hermes-fts"]
    assert len(ours) == 1 and ours[0]["enabled"] and ours[0]["error"] is None, ours
    assert ours[0]["middleware"] == 1 and ours[0]["tools"] == (1 if grant else 0), ours
    assert ours[0]["commands"] == 1, "/fts (async Hermes has no `hermes fts` commands)"
    assert out["final"] == "Here is what I found.", out
    zh, ko = (json.loads(m) for m in out["tool_messages"])
    assert is_ours(zh) and hit_sessions(zh) == ["zh-1"], zh
    assert is_ours(ko) and hit_sessions(ko) == ["ko-1"], ko
    assert len(out["new_sessions"]) == 3
    for session in out["new_sessions"]:  # their first search too (see the 0.19.0 test)
        # Earlier sessions of the run quote zh-1 and ko-1 in their stored tool results.
        for payload, seeded in zip(
            (json.loads(m) for m in session["tool_messages"]), ("zh-1", "ko-1")
        ):
            assert is_ours(payload) and seeded in hit_sessions(payload), payload
            assert session["session_id"] not in hit_sessions(payload), payload
        assert session["stored_after"], session
    assert not [r for r in out["logs"] if r["level"] in ("WARNING", "ERROR")], out["logs"]


def test_async_hermes_hands_a_call_with_an_unknown_argument_to_its_builtin(
    async_hermes_venv: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    enable(async_hermes_venv, home, grant=True)
    calls = [{"query": "服务", "scope": "current_chat"}, {"query": "검색"}]
    out = he.run_driver(
        async_hermes_venv, home, "async-turn", "--tool-args", json.dumps(calls), timeout=300
    )
    theirs, ours = (json.loads(m) for m in out["tool_messages"])
    assert not is_ours(theirs) and theirs["success"] is True, theirs
    assert is_ours(ours) and hit_sessions(ours) == ["ko-1"], ours
    told = [m for m in warnings(out) if "passes scope" in m]
    assert len(told) == 1, out["logs"]


def test_async_hermes_indexes_the_turns_messages_after_the_turn(
    async_hermes_venv: Path, tmp_path: Path
) -> None:
    """Async Hermes refuses a plain lifecycle hook: ours raised at the end of every turn
    (a WARNING from the agent loop, the hooks after ours skipped) and the turn's
    messages stayed pending."""
    home = tmp_path / "home"
    home.mkdir()
    enable(async_hermes_venv, home, grant=False)
    from hermes_fts.store import SessionStore

    with SessionStore(home / "state.db") as st:  # our indexes, no message yet
        assert st.index_state()["hermes_fts_cjk"]["served"]
    he.run_driver(
        async_hermes_venv,
        home,
        "async-turn",
        "--tool-args",
        json.dumps([{"query": "服务"}]),
        timeout=300,
    )
    pending, mine = _waiting(home)
    assert mine >= 2, "Hermes saved the turn's messages"
    assert pending == 0, "applied after the turn"
