"""`hermes-fts path --hermes` and the plugin line of `hermes-fts status`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest

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
        [
            "sqlite3",
            ":memory:",
            f".load {path}",
            "CREATE VIRTUAL TABLE t USING fts5(x, tokenize='cjk_unicode61');",
            "INSERT INTO t VALUES ('我们明天去东京');",
            "SELECT rowid FROM t WHERE t MATCH '东京';",
        ],
        capture_output=True,
        text=True,
        check=True,
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


def test_hermes_fts_commands_in_hermes_leave_the_environment_and_stdout_alone(
    capsys, tmp_path, monkeypatch
):
    # Hermes runs agents in threads: `hermes fts status` once set HERMES_HOME and
    # replaced sys.stdout for the whole process while it ran.
    from hermes_fts.hermes import commands as hermes_commands
    from hermes_fts.hermes import serving as hermes_serving

    home = tmp_path / "hermes-home"
    home.mkdir()
    _store(home)
    (home / "config.yaml").write_text("plugins:\n  enabled:\n  - hermes-fts\n")
    elsewhere = tmp_path / "another-home"
    monkeypatch.setenv("HERMES_HOME", str(elsewhere))
    monkeypatch.setattr(hermes_serving, "hermes_home", lambda: home)  # Hermes' active home
    inside, release = threading.Event(), threading.Event()
    real_status = SessionStore.status

    def status_mid_command(store, *args):
        inside.set()
        assert release.wait(30)
        return real_status(store, *args)

    monkeypatch.setattr(SessionStore, "status", status_mid_command)
    stdout = sys.stdout
    codes: list[int] = []

    def command(argv):
        codes.append(hermes_commands.run_cli(argv))

    for argv in (["status", "--json"], ["status"]):
        inside.clear()
        release.clear()
        worker = threading.Thread(target=command, args=(argv,))
        worker.start()
        assert inside.wait(30), "the command is reading the store"
        seen = (os.environ.get("HERMES_HOME"), sys.stdout)  # what another agent thread sees
        release.set()
        worker.join(30)
        assert seen == (str(elsewhere), stdout)
    assert codes == [0, 0]
    json_out, text_out = capsys.readouterr().out.split("\n}\n", 1)
    data = json.loads(json_out + "}")
    assert data["db"] == str(home / "state.db"), "the command worked on Hermes' home"
    assert data["hermes_plugin"]["config"]["enabled"] is True
    assert "answers" in data["hermes_plugin"], "the plugin's own status is laid over"
    assert f"Store:    {home / 'state.db'}" in text_out and "Hermes plugin (" in text_out


def test_status_names_a_config_yaml_it_cannot_parse_on_its_one_line(capsys, tmp_path):
    # PyYAML's message spans lines (the text, a caret under it): it split the table.
    pytest.importorskip("yaml")
    db = _store(tmp_path)
    (tmp_path / "config.yaml").write_text("plugins: [\n  hermes-fts\n")
    assert main(["status", "--db", str(db)]) == 0
    lines = capsys.readouterr().out.splitlines()
    hermes = next(i for i, line in enumerate(lines) if line.startswith("Hermes:"))
    assert f"cannot read {tmp_path / 'config.yaml'}: while parsing a flow sequence" in lines[hermes]
    assert lines[hermes + 1].startswith("Extension:"), lines[hermes : hermes + 3]


def test_status_names_the_plugin_config_by_its_full_path(capsys, tmp_path, monkeypatch):
    """`--db state.db` from the store's folder named a bare "config.yaml", with no
    folder to tell which Hermes home was read."""
    db = _store(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["status", "--db", db.name, "--json"]) == 0
    config = json.loads(capsys.readouterr().out)["hermes_plugin"]["config"]
    assert config == str(tmp_path / "config.yaml")
    assert main(["status", "--db", db.name]) == 0
    assert f"not enabled in {tmp_path / 'config.yaml'};" in capsys.readouterr().out


def test_hermes_fts_alone_names_only_the_command_it_needs(capsys):
    """``hermes fts`` with no command said "the following arguments are required:
    COMMAND, fts_args", naming an internal argument."""
    import argparse

    from hermes_fts.hermes.commands import setup_cli as _setup_cli

    parser = argparse.ArgumentParser(prog="hermes fts")
    _setup_cli(parser)
    with pytest.raises(SystemExit) as stopped:
        parser.parse_args([])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "required: COMMAND" in err and "fts_args" not in err, err
    assert parser.parse_args(["status"]).fts_args == []


def test_hermes_fts_help_and_hints_name_the_command_as_typed(capsys, tmp_path, monkeypatch):
    """``hermes fts search --help`` printed "usage: hermes-fts search", and its hints
    told the user to run ``hermes-fts search -- -deploy``, a command on another
    store than the active profile's."""
    from hermes_fts.hermes import commands as hermes_commands
    from hermes_fts.hermes import serving as hermes_serving

    monkeypatch.setattr(hermes_serving, "hermes_home", lambda: tmp_path)
    with pytest.raises(SystemExit):
        hermes_commands.run_cli(["search", "--help"])
    assert capsys.readouterr().out.startswith("usage: hermes fts search")
    assert hermes_commands.run_cli(["search", "-deploy"]) == 2
    err = capsys.readouterr().err
    assert "hermes fts search: " in err and "(hermes fts search -- -deploy)" in err, err
    assert hermes_commands.run_cli(["--nope"]) == 2
    assert "`hermes fts --help` lists them" in capsys.readouterr().err
    # the console script keeps its own name
    assert main(["search", "-deploy"]) == 2
    assert "(hermes-fts search -- -deploy)" in capsys.readouterr().err
