"""Lean storage (issue 13): the trigram index is kept only where something reads it.

With the Hermes plugin enabled in the ``config.yaml`` next to the store and
cjk_unicode61 loaded here, the agent's ``session_search`` reads the CJK index,
so optimize-storage drops our trigram index (Hermes keeps its own).  Without the plugin, or with
``HERMES_TRIGRAM_FTS=1``, the trigram index stays complete; ``HERMES_TRIGRAM_FTS=0``
drops it in every case.  The real Hermes Agent 0.19.0 on such a store is
tested in ``test_coexistence.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _tool_fixtures import conversation

from hermes_fts.hermes import plugin as hermes_plugin
from hermes_fts.index import schema
from hermes_fts.index.lifecycle import PLUGIN_SERVES
from hermes_fts.store import SessionStore

ENABLED = (
    "plugins:\n  enabled:\n    - hermes-fts\n  entries:\n    hermes-fts:\n"
    "      allow_tool_override: true\n"
)
DISABLED = "plugins:\n  enabled: []\n  disabled:\n    - hermes-fts\n"
TURNS = [
    ("user", "数据库迁移的方案"),
    ("assistant", "服务端升级以后再做数据库迁移"),
    ("user", "deploy the staging cluster"),
]


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("HERMES_TRIGRAM_FTS", raising=False)
    monkeypatch.delenv("HERMES_CJK_FTS", raising=False)
    folder = tmp_path / "hermes-home"
    folder.mkdir()
    with SessionStore(folder / "state.db") as store:
        if not store.cjk_available or not store.trigram_available:
            pytest.skip("needs cjk_unicode61 and the trigram tokenizer")
        conversation(store, "s1", TURNS)
    return folder


def _config(home: Path, text: str | None) -> None:
    path = home / "config.yaml"
    if text is None:
        path.unlink(missing_ok=True)
    else:
        path.write_text(text, encoding="utf-8")


def _optimize(home: Path) -> dict:
    with SessionStore(home / "state.db") as store:
        assert store.optimize_storage(min_pause=0)["ok"]
        assert not store.optimize_needed()
        return store.index_state()[schema.TRIGRAM]


def _trigram_objects(home: Path) -> list[str]:
    """Every object of our trigram index or under Hermes' trigram name."""
    with SessionStore(home / "state.db", readonly=True) as store:
        return [
            r[0]
            for r in store._conn.execute(
                "SELECT name FROM sqlite_master WHERE name LIKE ? OR name LIKE 'messages_fts_trigram%'",
                (f"{schema.TRIGRAM}%",),
            )
        ]


def test_plugin_enabled_drops_the_trigram_index(home: Path) -> None:
    _config(home, ENABLED)
    assert _trigram_objects(home)
    trigram = _optimize(home)
    assert not trigram["exists"] and _trigram_objects(home) == []
    assert trigram["reason"] == f"not kept: {PLUGIN_SERVES}"
    with SessionStore(home / "state.db") as store:  # later opens keep it dropped
        assert not store.optimize_needed()
        conversation(store, "s2", [("user", "新的数据库消息")])
        assert [r["session_id"] for r in store.search_messages("新的数据库")] == ["s2"]
    assert _trigram_objects(home) == []


def test_without_the_plugin_the_trigram_index_stays_complete(home: Path) -> None:
    for config in (None, DISABLED):
        _config(home, config)
        trigram = _optimize(home)
        assert trigram["exists"] and trigram["served"], trigram


@pytest.mark.parametrize("switch, kept", [("1", True), ("0", False)])
def test_hermes_trigram_fts_overrides_the_plugin_default(
    home: Path, monkeypatch: pytest.MonkeyPatch, switch: str, kept: bool
) -> None:
    _config(home, ENABLED)
    monkeypatch.setenv("HERMES_TRIGRAM_FTS", switch)
    assert _optimize(home)["exists"] is kept


def test_without_the_extension_the_plugin_cannot_serve_so_trigram_stays(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _config(home, ENABLED)
    monkeypatch.setenv("HERMES_CJK_FTS", "0")
    assert _optimize(home)["exists"]


def test_disabling_the_plugin_later_rebuilds_trigram_on_the_next_optimize(home: Path) -> None:
    _config(home, ENABLED)
    assert not _optimize(home)["exists"]
    _config(home, DISABLED)
    with SessionStore(home / "state.db") as store:
        assert store.optimize_needed()
        assert "optimize-storage" in store.index_state()[schema.TRIGRAM]["reason"]
    trigram = _optimize(home)
    assert trigram["exists"] and trigram["served"]
    with SessionStore(home / "state.db", readonly=True) as store:
        assert [r["session_id"] for r in store.search_messages("数据库迁移", route="trigram")] == [
            "s1",
            "s1",
        ]


def test_the_plugin_adds_no_rebuild_note_for_the_dropped_trigram(home: Path) -> None:
    _config(home, ENABLED)
    _optimize(home)
    answer = json.loads(
        hermes_plugin.serve({"query": "数据库"}, None, lambda: "builtin", home / "state.db")
    )
    assert answer["engine"].startswith("hermes-fts") and answer["count"] == 1
    assert "index_rebuild" not in answer
