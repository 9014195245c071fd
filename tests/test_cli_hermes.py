"""`hermes-fts path --hermes` and the plugin line of `hermes-fts status`."""

from __future__ import annotations

import json
import subprocess

from hermes_fts import SessionStore
from hermes_fts.cli import main


def _store(tmp_path):
    db = tmp_path / "state.db"
    with SessionStore(str(db)) as store:
        store.add_session("s1")
        store.add_message("s1", "user", "东京 hello")
    return db


def test_path_hermes_prints_a_library_that_sqlite_loads_without_an_entry_point(capsys, tmp_path):
    assert main(["path", "--hermes", "--json"]) == 0
    path = json.loads(capsys.readouterr().out)["path"]
    assert path.endswith("libfts5_cjk.so")
    # SQLite derives sqlite3_ftscjk_init from the file name, as Hermes' loader relies on.
    shell = subprocess.run(
        ["sqlite3", ":memory:", f".load {path}",
         "CREATE VIRTUAL TABLE t USING fts5(x, tokenize='cjk_unicode61');",
         "INSERT INTO t VALUES ('我们明天去东京');",
         "SELECT rowid FROM t WHERE t MATCH '东京';"],
        capture_output=True, text=True, check=True,
    )
    assert shell.stdout.strip() == "1"


def test_status_reports_whether_the_plugin_is_enabled(capsys, tmp_path):
    db = _store(tmp_path)
    assert main(["status", "--db", str(db), "--json"]) == 0
    plugin = json.loads(capsys.readouterr().out)["hermes_plugin"]
    assert plugin["enabled"] is False and plugin["serves_session_search"] is False

    (tmp_path / "config.yaml").write_text(
        # As `hermes plugins enable hermes-fts --allow-tool-override` writes it.
        "plugins:\n  enabled:\n  - hermes-fts\n  entries:\n"
        "    hermes-fts:\n      allow_tool_override: true\n"
    )
    assert main(["status", "--db", str(db), "--json"]) == 0
    plugin = json.loads(capsys.readouterr().out)["hermes_plugin"]
    assert plugin["enabled"] is True and plugin["allow_tool_override"] is True

    assert main(["status", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "Hermes:" in out and "serves session_search" in out and "schema override" in out


def test_status_stays_read_only_when_reading_the_plugin_config(tmp_path):
    db = _store(tmp_path)
    before = db.read_bytes()
    assert main(["status", "--db", str(db)]) == 0
    assert db.read_bytes() == before
