"""Helpers shared by the tests of the opt-in word and trigram indexes (not a test module)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from _tool_fixtures import Turn, conversation

from hermes_fts.hermes import plugin as hermes_plugin
from hermes_fts.index import schema
from hermes_fts.store import SessionStore

# Latin words, identifiers, Latin glued to CJK, CJK, kana and hangul: the rows
# both files' queries find (each adds its own after these).
MIXED_TURNS: list[Turn] = [
    ("user", "数据库迁移的方案"),
    ("assistant", "服务端升级以后再做数据库迁移"),
    ("user", "deploy the staging cluster"),
    ("assistant", "Edit my-app.config.ts and redeploy; the deployment failed twice"),
    ("user", "修改youer服务端的配置, 然后 deploy 到 staging"),
    ("assistant", "桂林山水甲天下, 漓江 is in Guangxi 广西"),
    ("user", "东京のラーメン屋さん and 한국어 공부"),
    ("assistant", "第1章: the staging cluster was not deployed"),
]
# A Hermes config that enables the plugin and lets it serve session_search.
ENABLED = (
    "plugins:\n  enabled:\n    - hermes-fts\n  entries:\n    hermes-fts:\n"
    "      allow_tool_override: true\n"
)


@dataclass(frozen=True)
class OptIn:
    """What the word and trigram tests differ in, so both share the helpers below."""

    index: str  # its name in hermes_fts.index.schema
    switches: tuple[str, ...]  # its own environment switch first, then others a test clears
    turns: Sequence[Turn]  # session s1 of home()
    queries: Sequence[str]  # what answers() asks
    names: tuple[str, ...]  # LIKE patterns for the index's names in sqlite_master
    needs_trigram: bool = False

    def home(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
        """A Hermes home whose store holds the turns as session s1, no switch set."""
        for name in self.switches:
            monkeypatch.delenv(name, raising=False)
        folder = tmp_path / "hermes-home"
        folder.mkdir()
        with SessionStore(folder / "state.db") as store:
            if not store.cjk_available:
                pytest.skip("needs cjk_unicode61")
            if self.needs_trigram and not store.trigram_available:
                pytest.skip("needs the trigram tokenizer")
            conversation(store, "s1", self.turns)
        return folder

    def fixture(self) -> Any:
        """The test module's ``home`` fixture: home() in the test's own tmp_path."""

        def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
            return self.home(tmp_path, monkeypatch)

        return pytest.fixture(home)

    def optimize(self, home: Path) -> dict:
        """Runs optimize-storage to the end; the index's state after it."""
        with SessionStore(home / "state.db") as store:
            assert store.optimize_storage(min_pause=0)["ok"]
            assert not store.optimize_needed()
            return store.index_state()[self.index]

    def optimize_new(self, home: Path) -> dict:
        """optimize() on a store that never had the index, checking it builds none."""
        assert self.objects(home) == []
        state = self.optimize(home)
        assert self.objects(home) == []
        return state

    def keep(self, home: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
        """optimize() with the index's own switch left on, as a user opts in."""
        monkeypatch.setenv(self.switches[0], "1")
        return self.optimize(home)

    def keep_served(self, home: Path, monkeypatch: pytest.MonkeyPatch, config: str | None) -> None:
        """keep() with ``config`` as Hermes' config.yaml, checking the index is built and served."""
        if config:
            (home / "config.yaml").write_text(config, encoding="utf-8")
        state = self.keep(home, monkeypatch)
        assert state["exists"] and state["served"]

    def kept_copy(self, home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
        """A copy of home's store optimized with the index, and home's without it."""
        kept = home.parent / "kept"
        kept.mkdir()
        shutil.copy(home / "state.db", kept / "state.db")
        assert self.keep(kept, monkeypatch)["exists"]
        monkeypatch.delenv(self.switches[0])
        assert not self.optimize(home)["exists"]
        return kept

    def stays_dropped(self, home: Path, text: str, query: str) -> None:
        """After a drop, a new message (``text``, found by ``query``) builds no index again."""
        with SessionStore(home / "state.db") as store:
            conversation(store, "s2", [("user", text)])
            assert [r["session_id"] for r in store.search_messages(query)] == ["s2"]
            assert not store.optimize_needed()
        assert self.objects(home) == []

    def objects(self, home: Path) -> list[str]:
        """Every object of the index: tables, views, triggers, a build."""
        conn = sqlite3.connect(home / "state.db")
        try:
            where = " OR ".join("name LIKE ?" for _ in self.names)
            return [
                r[0]
                for r in conn.execute(f"SELECT name FROM sqlite_master WHERE {where}", self.names)
            ]
        finally:
            conn.close()

    def status(self, home: Path, *, human: bool = False, **env: str) -> Any:
        """``status`` (its JSON, or the text) from a process that sees no switch but ``env``."""
        clean = {k: v for k, v in os.environ.items() if k not in self.switches}
        out = subprocess.run(
            [sys.executable, "-m", "hermes_fts.cli", "status", "--db", str(home / "state.db")]
            + ([] if human else ["--json"]),
            capture_output=True,
            text=True,
            env={**clean, **env},
            check=True,
        )
        return out.stdout if human else json.loads(out.stdout)

    def answers(self, db: Path) -> dict[str, tuple[str, list[int]]]:
        """The route and the sorted row ids of each query, to compare stores by."""
        with SessionStore(db, readonly=True) as store:
            out = {}
            for query in self.queries:
                result = store.search(query, limit=50)
                out[query] = (result.route, sorted(r["id"] for r in result.rows))
            return out

    def plugin_answer(self, home: Path, query: str) -> dict:
        """The enabled plugin's session_search answer to ``query`` after optimize()."""
        (home / "config.yaml").write_text(ENABLED, encoding="utf-8")
        self.optimize(home)
        return json.loads(
            hermes_plugin.serve({"query": query}, None, lambda: "builtin", home / "state.db")
        )


def stop_serving_cjk(how: str, monkeypatch: pytest.MonkeyPatch, *dbs: Path) -> None:
    """The CJK index not served, as ``how`` names: "no_extension", or "stale" in ``dbs``."""
    if how == "no_extension":
        monkeypatch.setenv("HERMES_CJK_FTS", "0")
    elif how == "stale":  # marked for a rebuild, as a writer leaves it
        for db in dbs:
            conn = sqlite3.connect(db)
            with conn:
                conn.execute(
                    "INSERT INTO state_meta(key, value) VALUES (?, '1')", (schema.META_CJK_STALE,)
                )
            conn.close()
