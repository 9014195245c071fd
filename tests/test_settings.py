"""The environment variables hermes-fts reads (``hermes_fts._env``): a value none of
them reads is said once in a WARNING, read as unset, and named by ``status``."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from _support import extension_available
from _tool_fixtures import conversation

from hermes_fts import _env
from hermes_fts.store import SessionStore

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _no_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HERMES_CJK_FTS", "HERMES_TRIGRAM_FTS", "HERMES_WORD_FTS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("HERMES_SEARCH_LOG_QUERY", raising=False)
    monkeypatch.delenv("HERMES_SEARCH_SLOW_MS", raising=False)
    monkeypatch.setattr(_env, "_warned", set())  # each test sees its own first warning


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


@pytest.mark.parametrize("raw", ["abc", "-5", "nan", "0x10", "1,000"])
def test_a_slow_threshold_that_is_no_number_is_said_once_and_the_default_used(
    tmp_path, caplog, monkeypatch, raw
):
    # HERMES_SEARCH_SLOW_MS=abc gave the default without a word: the user who set it
    # to see slow searches saw none and could not tell why.
    with SessionStore(tmp_path / "state.db") as store:
        conversation(store, "s1", [("user", "graphiti memory")])
        monkeypatch.setenv("HERMES_SEARCH_SLOW_MS", raw)
        caplog.set_level(logging.INFO)
        for _ in range(3):
            assert store.search_messages("graphiti")
    said = f"HERMES_SEARCH_SLOW_MS={raw!r} is not a number of milliseconds, 0 or more"
    assert [w for w in _warnings(caplog) if said in w] == [
        f"hermes-fts: {said}; used the default 1000"
    ]
    assert not [r for r in caplog.records if r.name == "hermes_fts.search.run"]
    assert _env.search_slow_ms() == 1000.0
    assert _env.ignored_settings() == [f"{said}; used the default 1000"]


@pytest.mark.parametrize(("raw", "ms"), [("0", 0.0), (" 250.5 ", 250.5), ("inf", float("inf"))])
def test_a_slow_threshold_it_reads_is_used_without_a_word(caplog, monkeypatch, raw, ms):
    monkeypatch.setenv("HERMES_SEARCH_SLOW_MS", raw)
    assert _env.search_slow_ms() == ms
    assert _env.ignored_settings() == [] and _warnings(caplog) == []


@pytest.mark.skipif(not extension_available(), reason="cjk extension not built")
def test_a_switch_that_is_neither_on_nor_off_is_said_once_and_read_as_unset(
    tmp_path, caplog, monkeypatch
):
    # HERMES_CJK_FTS=disabled left the extension on and searched with it, unsaid:
    # only 0, false, off and no switch it off.
    monkeypatch.setenv("HERMES_CJK_FTS", "disabled")
    monkeypatch.setenv("HERMES_WORD_FTS", "please")
    with SessionStore(tmp_path / "state.db") as store:
        conversation(store, "s1", [("user", "桂林 trip")])
        assert store.search_messages("桂林") and store.cjk_available
        assert store.search_messages("trip")
    with sqlite3.connect(tmp_path / "state.db") as conn:
        word = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'hermes_fts_word'")
        assert word.fetchall() == []
    expected = [
        "HERMES_CJK_FTS='disabled' is neither on (1, true, on, yes) nor off (0, false, off, "
        "no); read as unset: the extension on",
        "HERMES_WORD_FTS='please' is neither on (1, true, on, yes) nor off (0, false, off, "
        "no); read as unset: no word index kept",
    ]
    assert sorted(set(_warnings(caplog))) == [f"hermes-fts: {text}" for text in expected]
    assert len(_warnings(caplog)) == 2, "once each, however often they are read"
    assert _env.ignored_settings() == expected
    for value in ("0", "OFF", " no ", "1", "True", ""):
        monkeypatch.setenv("HERMES_CJK_FTS", value)
        monkeypatch.setenv("HERMES_WORD_FTS", value)
        assert _env.ignored_settings() == []


def _status(tmp_path: Path, *flags: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {
        **{k: v for k, v in os.environ.items() if not k.startswith("HERMES_")},
        "HERMES_HOME": str(tmp_path),
        "PYTHONPATH": str(REPO),
        **env,
    }
    return subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", "status", *flags],
        capture_output=True,
        text=True,
        env=full,
        timeout=120,
    )


def test_status_names_a_value_it_could_not_read(tmp_path):
    SessionStore(tmp_path / "state.db").close()
    bad = {"HERMES_SEARCH_SLOW_MS": "abc", "HERMES_TRIGRAM_FTS": "maybe"}
    proc = _status(tmp_path, **bad)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if line.startswith("Ignored:")]
    assert lines == [
        "Ignored:  HERMES_TRIGRAM_FTS='maybe' is neither on (1, true, on, yes) nor off "
        "(0, false, off, no); read as unset: no trigram index kept",
        "Ignored:  HERMES_SEARCH_SLOW_MS='abc' is not a number of milliseconds, 0 or more; "
        "used the default 1000",
    ]
    data = json.loads(_status(tmp_path, "--json", **bad).stdout)
    assert data["ignored_settings"] == [line.removeprefix("Ignored:  ") for line in lines]
    fine = _status(tmp_path, HERMES_SEARCH_SLOW_MS="50", HERMES_TRIGRAM_FTS="0")
    assert "Ignored:" not in fine.stdout and fine.stderr == ""
    assert json.loads(_status(tmp_path, "--json").stdout)["ignored_settings"] == []
