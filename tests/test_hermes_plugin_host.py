"""The plugin's Hermes-independent parts, in this interpreter (no Hermes installed):
config.yaml status, the libfts5_cjk drop-in, import isolation and pass-through."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_fts.hermes import host as hermes_host
from hermes_fts.hermes.host import ConfigUnreadable, config_section, plugin_status

ROOT = Path(__file__).resolve().parent.parent

# What `hermes plugins enable hermes-fts --allow-tool-override` writes (Hermes 0.19.0),
# inside the kind of file `hermes setup` leaves behind.
HERMES_CONFIG = """\
_config_version: 33
model:
  default: anthropic/claude-sonnet-4
  provider: openrouter
plugins:
  enabled:
    - hermes-fts
  disabled: []
  entries:
    hermes-fts:
      allow_tool_override: true

# ── Security ──
# security:
#   redact_secrets: true
toolsets:
  - name: web
    enabled: true
prompt: |
  multi-line text: with colons
"""


@pytest.fixture(params=["pyyaml", "subset-reader"])
def yaml_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "pyyaml":
        import yaml  # noqa: F401 - in the test extra, as in Hermes' own environment
    else:
        monkeypatch.setitem(sys.modules, "yaml", None)  # import yaml -> ImportError
    return str(request.param)


def write_config(home: Path, text: str) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(text, encoding="utf-8")
    return home


def test_status_of_a_full_hermes_config(tmp_path: Path, yaml_mode: str) -> None:
    status = plugin_status(write_config(tmp_path / "h", HERMES_CONFIG))
    assert status["enabled"] and status["allow_tool_override"] and not status["disabled"]
    assert status["serves_session_search"] and status["grant"] == "schema override"
    assert status["hint"] is None and status["error"] is None


@pytest.mark.parametrize(
    ("text", "serves", "grant"),
    [
        ("plugins:\n  enabled: [other, hermes-fts]\n", True, "execution middleware only"),
        (
            "plugins:\n  enabled: ['hermes-fts']  # on\n  entries:\n    hermes-fts: {}\n",
            True,
            "execution middleware only",
        ),
        ("plugins:\n  enabled:\n  - hermes-fts\n  disabled:\n  - hermes-fts\n", False, None),
        ("plugins:\n  enabled: []\n", False, None),
        ("plugins:\n  entries:\n    hermes-fts:\n      allow_tool_override: true\n", False, None),
        ("model:\n  default: x\n", False, None),
        ("", False, None),
    ],
)
def test_status_variants(
    tmp_path: Path, yaml_mode: str, text: str, serves: bool, grant: str | None
) -> None:
    status = plugin_status(write_config(tmp_path / "h", text))
    assert status["error"] is None
    assert status["serves_session_search"] is serves and status["grant"] == grant
    assert status["hint"] == "hermes plugins enable hermes-fts --allow-tool-override"


@pytest.mark.parametrize(
    "grant",
    [
        "      granted_capabilities:\n        - tools.override\n",
        "      granted_capabilities: [llm.model_override, tools.override]\n",
    ],
)
def test_newer_hermes_capability_grant_is_the_override(
    tmp_path: Path, yaml_mode: str, grant: str
) -> None:
    """Hermes 0.20+ grants the override by `granted_capabilities` alone; status said
    "execution middleware only" and asked for the grant the store already had."""
    text = f"plugins:\n  enabled:\n    - hermes-fts\n  entries:\n    hermes-fts:\n{grant}"
    status = plugin_status(write_config(tmp_path / "h", text))
    assert status["error"] is None and status["allow_tool_override"] is True
    assert status["grant"] == "schema override" and status["hint"] is None


@pytest.mark.parametrize(
    ("value", "granted"),
    [("true", True), ("1", True), ("yes", True), ("'false'", True), ("0", False), ("no", False)],
)
def test_the_override_grant_is_read_as_hermes_reads_it(
    tmp_path: Path, yaml_mode: str, value: str, granted: bool
) -> None:
    """Hermes 0.19 grants the override for any true value (`bool(...)`): status said
    "execution middleware only" for `allow_tool_override: 1`, which Hermes granted."""
    text = (
        "plugins:\n  enabled: [hermes-fts]\n  entries:\n    hermes-fts:\n"
        f"      allow_tool_override: {value}\n"
    )
    status = plugin_status(write_config(tmp_path / "h", text))
    assert status["error"] is None and status["allow_tool_override"] is granted
    assert status["grant"] == ("schema override" if granted else "execution middleware only")


def test_a_capability_list_without_the_override_grants_nothing(tmp_path: Path) -> None:
    text = (
        "plugins:\n  enabled: [hermes-fts]\n  entries:\n    hermes-fts:\n"
        "      granted_capabilities: [llm.model_override]\n"
    )
    status = plugin_status(write_config(tmp_path / "h", text))
    assert status["grant"] == "execution middleware only" and status["hint"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (HERMES_CONFIG, "enabled in {c}; serves session_search (schema override)"),
        (
            "plugins:\n  enabled: [hermes-fts]\n",
            "enabled in {c}; serves session_search (execution middleware only); "
            "`hermes plugins enable hermes-fts --allow-tool-override` shows the model",
        ),
        ("plugins:\n  enabled: [hermes-fts]\n  disabled: [hermes-fts]\n", "disabled in {c}"),
        ("", "not enabled in {c}; run `hermes plugins enable hermes-fts --allow-tool-override`"),
    ],
)
def test_status_line_for_hermes_fts_status(tmp_path: Path, text: str, expected: str) -> None:
    home = write_config(tmp_path / "h", text)
    line = hermes_host.format_plugin_status(plugin_status(home))
    assert line.startswith("Hermes plugin: ")
    assert expected.format(c=home / "config.yaml") in line


def test_missing_config_means_not_enabled(tmp_path: Path) -> None:
    status = plugin_status(tmp_path / "nothing-here")
    assert status["error"] is None and not status["enabled"]
    assert status["config"] == str(tmp_path / "nothing-here" / "config.yaml")


def test_unreadable_plugins_section_is_reported_not_guessed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "yaml", None)
    status = plugin_status(write_config(tmp_path / "h", "plugins:\n  enabled: &a [x]\n"))
    assert status["error"] and "config.yaml" in status["error"]
    assert status["serves_session_search"] is False
    with pytest.raises(ConfigUnreadable):
        config_section("plugins:\n  enabled:\n    - name: x\n", "plugins")


def test_subset_reader_only_reads_the_plugins_section(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "yaml", None)
    text = "weird: &anchor\n  - {a: [1, {b: 2}]}\n" + HERMES_CONFIG
    assert config_section(text, "plugins") == {
        "enabled": ["hermes-fts"],
        "disabled": [],
        "entries": {"hermes-fts": {"allow_tool_override": True}},
    }
    assert config_section(text, "absent") is None


def test_a_config_saved_with_a_byte_order_mark_is_read_as_hermes_reads_it(
    tmp_path: Path, yaml_mode: str
) -> None:
    """Notepad's UTF-8 starts the file with a BOM: Hermes (PyYAML) loads the plugin,
    but without PyYAML status took the first key for another and said not enabled."""
    home = tmp_path / "h"
    home.mkdir()
    text = HERMES_CONFIG[HERMES_CONFIG.index("plugins:") :]  # the key the mark comes before
    (home / "config.yaml").write_bytes(b"\xef\xbb\xbf" + text.encode())
    status = plugin_status(home)
    assert status["error"] is None and status["grant"] == "schema override"


def test_a_plugins_section_pasted_below_another_is_the_one_read(
    tmp_path: Path, yaml_mode: str
) -> None:
    """HERMES.md's block pasted at the end of a config that has ``plugins:`` already:
    Hermes (PyYAML) reads the last, the reader without PyYAML read the first."""
    text = "plugins:\n  enabled: []\nmodel:\n  default: x\n" + HERMES_CONFIG
    status = plugin_status(write_config(tmp_path / "h", text))
    assert status["error"] is None and status["grant"] == "schema override"
    text = HERMES_CONFIG + "plugins:\n  disabled:\n  - hermes-fts\n"
    status = plugin_status(write_config(tmp_path / "h", text))
    assert status["disabled"] and not status["enabled"] and status["grant"] is None


def test_same_answer_with_and_without_pyyaml(monkeypatch: pytest.MonkeyPatch) -> None:
    yaml = pytest.importorskip("yaml")
    expected = yaml.safe_load(HERMES_CONFIG)["plugins"]
    monkeypatch.setitem(sys.modules, "yaml", None)
    assert config_section(HERMES_CONFIG, "plugins") == expected


# --------------------------------------------------------------------------- drop-in library


@pytest.fixture()
def built_library() -> Path:
    library = hermes_host.bundled_library()
    if not library.is_file():
        pytest.skip(f"the extension is not built ({library}); run setup.py build_ext --inplace")
    return library


def test_drop_in_is_a_stable_symlink_to_the_bundled_library(
    tmp_path: Path, built_library: Path
) -> None:
    path = hermes_host.hermes_drop_in_path(tmp_path / "cache")
    assert path.is_absolute() and path.name == "libfts5_cjk" + built_library.suffix
    assert path.resolve() == built_library.resolve()
    assert hermes_host.hermes_drop_in_path(tmp_path / "cache") == path
    path.unlink()
    path.write_bytes(b"stale")  # a stale copy is replaced, atomically
    assert hermes_host.hermes_drop_in_path(tmp_path / "cache").resolve() == built_library


def test_drop_in_falls_back_to_a_copy_without_symlinks(
    tmp_path: Path, built_library: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_symlinks(*_a: object, **_k: object) -> None:
        raise OSError("symlinks not permitted here")

    monkeypatch.setattr(os, "symlink", no_symlinks)
    path = hermes_host.hermes_drop_in_path(tmp_path / "cache")
    assert not path.is_symlink() and path.read_bytes() == built_library.read_bytes()
    assert hermes_host.hermes_drop_in_path(tmp_path / "cache") == path
    assert not list((tmp_path / "cache").glob(".*tmp")), "no staging file left behind"


def test_default_drop_in_folder_is_per_install(
    tmp_path: Path, built_library: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if sys.platform in ("win32", "darwin"):
        pytest.skip("XDG_CACHE_HOME is the Linux cache folder")
    path = hermes_host.hermes_drop_in_path()
    assert path.parent.parent == tmp_path / "xdg" / "hermes-fts"


def test_sqlite_derives_the_ftscjk_entry_point_from_the_drop_in_name(
    tmp_path: Path, built_library: Path
) -> None:
    shell = shutil.which("sqlite3")
    if shell is None:
        pytest.skip("the sqlite3 shell is not installed")
    path = hermes_host.hermes_drop_in_path(tmp_path / "cache")
    # No entry point given: exactly how Hermes' HERMES_FTS5_CJK_SO loader calls it.
    proc = subprocess.run(
        [
            shell,
            ":memory:",
            f".load {path}",
            "CREATE VIRTUAL TABLE t USING fts5(x, tokenize='cjk_unicode61');",
            "INSERT INTO t VALUES ('我们明天去东京');",
            "SELECT count(*) FROM t WHERE t MATCH '东京';",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "1"


def test_missing_library_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hermes_host, "bundled_library", lambda: tmp_path / "gone.so")
    with pytest.raises(hermes_host.loader.ExtensionUnavailable, match="reinstall"):
        hermes_host.hermes_drop_in_path(tmp_path / "cache")


# --------------------------------------------------------------------------- isolation


def test_importing_hermes_fts_never_imports_the_plugin_or_hermes() -> None:
    code = (
        "import sys, hermes_fts\n"
        "hermes_fts.session_search; hermes_fts.TOOL_SCHEMA; hermes_fts.SessionStore\n"
        "import hermes_fts.cli\n"
        "bad = [m for m in sys.modules if m == 'hermes_fts.hermes.plugin' or\n"
        "       m.split('.')[0] in ('hermes_cli', 'hermes_state', 'hermes_constants', 'tools')]\n"
        "print(bad)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_middleware_passes_every_other_tool_through_untouched() -> None:
    from hermes_fts.hermes import plugin as hermes_plugin

    seen: list[object] = []

    def terminal(args: object) -> str:
        seen.append(args)
        return json.dumps({"ok": True})

    args = {"command": "ls"}
    assert (
        hermes_plugin.tool_execution_middleware(
            tool_name="terminal", args=args, next_call=terminal, session_id="s"
        )
        == '{"ok": true}'
    )
    assert seen == [args]


def test_outside_hermes_the_store_follows_hermes_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_fts.hermes import plugin as hermes_plugin
    from hermes_fts.hermes import serving as hermes_serving

    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    assert hermes_serving.store_path() == tmp_path / "state.db"
    calls: list[str] = []
    result = hermes_plugin.serve({"query": "东京"}, None, lambda: calls.append("builtin") or "B")
    assert result == "B" and calls == ["builtin"], "no store: Hermes' built-in answers"


# --------------------------------------------------------------------------- the cached store

PLAIN_INSERT = """\
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1])  # no extension: the CJK index cannot be written here
conn.execute("INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
             ("s1", "user", sys.argv[2], 1700000100.0))
conn.commit()
"""
OUR_INSERT = """\
import sys
from hermes_fts.store import SessionStore
with SessionStore(sys.argv[1]) as store:
    store.add_message("s1", "assistant", sys.argv[2], timestamp=1700000100.0)
"""


def _served_sessions(path: Path, query: str) -> list[str] | None:
    """Session ids hermes-fts answers for ``query`` through the plugin; None: the built-in."""
    from hermes_fts.hermes import plugin as hermes_plugin

    raw = hermes_plugin.serve({"query": query}, None, lambda: None, path)
    if raw is None:
        return None
    payload = json.loads(raw)
    assert payload["engine"].startswith("hermes-fts"), payload
    return [r["session_id"] for r in payload["results"]]


@pytest.fixture()
def plugin_store(tmp_path: Path) -> Path:
    from _tool_fixtures import conversation

    from hermes_fts.store import SessionStore

    path = tmp_path / "state.db"
    with SessionStore(path) as store:
        if not store.cjk_available:
            pytest.skip("the plugin serves only with cjk_unicode61")
        conversation(store, "s1", [("user", "数据库迁移的方案")])
        store.optimize_storage(min_pause=0)
    return path


@pytest.mark.parametrize("writer", [PLAIN_INSERT, OUR_INSERT], ids=["plain-sqlite3", "hermes-fts"])
def test_a_write_by_another_process_is_seen_on_the_next_call(
    plugin_store: Path, writer: str
) -> None:
    assert _served_sessions(plugin_store, "数据库") == ["s1"]  # the store is now cached
    assert _served_sessions(plugin_store, "桂林机房") == []
    subprocess.run(
        [sys.executable, "-c", writer, str(plugin_store), "桂林机房要通知"],
        check=True,
        cwd=str(ROOT),
    )
    assert _served_sessions(plugin_store, "桂林机房") == ["s1"]


def test_a_replaced_file_is_not_answered_from_the_old_handle(
    plugin_store: Path, tmp_path: Path
) -> None:
    from _tool_fixtures import conversation

    from hermes_fts.store import SessionStore

    assert _served_sessions(plugin_store, "数据库") == ["s1"]
    other = tmp_path / "other.db"
    with SessionStore(other) as store:
        conversation(store, "s9", [("user", "东京的天气")])
    for suffix in ("-wal", "-shm"):
        Path(str(plugin_store) + suffix).unlink(missing_ok=True)
    os.replace(other, plugin_store)  # as a restore from backup would
    assert _served_sessions(plugin_store, "数据库") == []
    assert _served_sessions(plugin_store, "东京") == ["s9"]


def test_a_deleted_file_goes_to_the_builtin(plugin_store: Path) -> None:
    assert _served_sessions(plugin_store, "数据库") == ["s1"]
    for suffix in ("", "-wal", "-shm"):
        Path(str(plugin_store) + suffix).unlink(missing_ok=True)
    assert _served_sessions(plugin_store, "数据库") is None


def test_without_an_agent_behind_the_call_an_unknown_session_goes_to_the_builtin(
    plugin_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A host whose chain does not reach the agent: the current session must be in the
    # store, or the agent may be writing to another one.
    from hermes_fts.hermes import plugin as hermes_plugin
    from hermes_fts.hermes import serving as hermes_serving

    monkeypatch.setenv("HERMES_HOME", str(plugin_store.parent))
    calls: list[str] = []

    def builtin(args: object) -> str:
        calls.append("builtin")
        return json.dumps({"success": True, "results": []})

    def search(session_id: str) -> dict[str, object]:
        return json.loads(
            hermes_plugin.tool_execution_middleware(
                tool_name="session_search",
                args={"query": "数据库"},
                next_call=builtin,
                session_id=session_id,
            )
        )

    assert hermes_plugin.agent_behind(builtin, "not-written") is None
    assert "engine" not in search("not-written") and calls == ["builtin"]
    served = search("s1")  # s1 holds the only hit and is the current session: left out
    assert served["engine"] == hermes_serving.ENGINE and served["results"] == []


class _Handle:
    def __init__(self, ctx: _RecordingContext, what: str) -> None:
        self.ctx, self.what = ctx, what

    def dispose(self) -> None:
        self.ctx.active.remove(self.what)


class _RecordingContext:
    """The registration calls of a Hermes build that returns handles (0.20 and later),
    failing at ``fail_at``."""

    def __init__(self, fail_at: str) -> None:
        self.fail_at = fail_at
        self.active: list[str] = []

    def _add(self, what: str) -> _Handle:
        if what == self.fail_at:
            raise RuntimeError(f"{what} refused")
        self.active.append(what)
        return _Handle(self, what)

    def register_tool(self, name: str, *a: object, **k: object) -> _Handle:
        return self._add("tool")

    def register_cli_command(self, name: str, *a: object, **k: object) -> _Handle:
        return self._add("cli")

    def register_command(self, name: str, *a: object, **k: object) -> _Handle:
        return self._add("slash")

    def register_middleware(self, kind: str, callback: object) -> _Handle:
        return self._add("middleware")


@pytest.mark.parametrize("fail_at", ["tool", "cli", "slash", "middleware"])
def test_a_failed_registration_leaves_nothing_registered(
    fail_at: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_fts.hermes import commands as hermes_commands
    from hermes_fts.hermes import plugin as hermes_plugin
    from hermes_fts.hermes import serving as hermes_serving

    monkeypatch.setattr(hermes_serving, "REGISTRATION", hermes_serving.Registration())
    ctx = _RecordingContext(fail_at)
    with pytest.raises(RuntimeError, match="refused"):
        hermes_plugin.register(ctx)
    assert ctx.active == []
    assert not hermes_serving.REGISTRATION.middleware
    assert hermes_commands.serving_status()["serves_session_search"] is False

    ctx = _RecordingContext(fail_at="nothing")
    hermes_plugin.register(ctx)
    assert ctx.active == ["tool", "cli", "slash", "middleware"], "the middleware comes last"
    assert hermes_serving.REGISTRATION.middleware and hermes_serving.REGISTRATION.schema_override


def test_the_plugin_status_names_why_the_indexes_are_not_ready(
    plugin_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A trigger dropped by hand: the plugin's status said "not built or incomplete".
    from hermes_fts.hermes import commands as hermes_commands
    from hermes_fts.index import schema

    conn = sqlite3.connect(plugin_store)
    (trigger,) = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'messages' "
        "AND sql LIKE ? LIMIT 1",
        (f"%{schema.CJK_PENDING}%",),
    ).fetchone()
    conn.execute(f"DROP TRIGGER {trigger}")
    conn.commit()
    conn.close()
    monkeypatch.setenv("HERMES_HOME", str(plugin_store.parent))
    status = hermes_commands.serving_status()
    assert status["indexes_ready"] is False
    line = next(x for x in hermes_commands.format_status(status).splitlines() if "indexes:" in x)
    assert "were dropped (cjk_broken)" in line and "not built" not in line


@pytest.mark.parametrize(
    ("method", "args"),
    [
        ("search", {"query": "数据库"}),
        ("get_message_ends", {"session_id": "s1"}),
        ("get_messages_around", {"session_id": "s1", "around_message_id": 1}),
        ("sessions_by_activity", {}),
    ],
)
def test_a_failure_of_ours_inside_a_form_goes_to_the_builtin(
    plugin_store: Path, monkeypatch: pytest.MonkeyPatch, method: str, args: dict[str, object]
) -> None:
    """The plugin promises Hermes' built-in whenever our search fails inside, but a
    failure caught inside a form ("Search failed: …", "failed to load session: …")
    came back to the model as our error, telling it to retry a call that cannot work."""
    from hermes_fts.hermes import plugin as hermes_plugin
    from hermes_fts.hermes.serving import STORES
    from hermes_fts.store import SessionStore

    def broken(*_a: object, **_k: object) -> None:
        raise RuntimeError("a bug of ours")

    monkeypatch.setattr(SessionStore, method, broken)
    calls: list[str] = []
    try:
        raw = hermes_plugin.serve(
            args, None, lambda: calls.append("builtin") or '{"from": "builtin"}', plugin_store
        )
    finally:
        STORES.drop()
    assert raw == '{"from": "builtin"}' and calls == ["builtin"], raw
