"""optimize-storage through the CLI: damaged indexes repaired, no work twice, honest sizes.

Every run is the real ``hermes-fts`` command in a subprocess with ``--json``;
what it did is read from its JSON document, what it left from the store.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import hermes_fts
from hermes_fts.index import schema
from hermes_fts.store import SessionStore

pytestmark = pytest.mark.skipif(
    not hermes_fts.extension_path(), reason="needs the built cjk_unicode61 extension"
)

MESSAGES = 1500
WORDS = ["deploy", "staging", "数据库", "東京", "迁移"]


def cli(*args: str, db: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", *args, "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def optimize(db: Path, *extra: str) -> tuple[int, dict[str, Any], str]:
    proc = cli("optimize-storage", "--yes", "--json", *extra, db=db)
    return proc.returncode, json.loads(proc.stdout), proc.stderr


def text_of(i: int) -> str:
    """Message ``i``: every word of WORDS whose bit is set in ``i``, and one of its own."""
    held = [w for k, w in enumerate(WORDS) if i >> k & 1]
    return " ".join(held + [f"alpha note{i}"])


def write_store(path: Path, messages: int = MESSAGES) -> None:
    with SessionStore(path) as store:
        store.add_session("s1", "cli")
        store.add_messages(
            {"session_id": "s1", "role": "user", "content": text_of(i)} for i in range(messages)
        )


@pytest.fixture(scope="module")
def optimized(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("optimized") / "state.db"
    write_store(db)
    code, result, err = optimize(db)
    assert code == 0 and result["ok"], err
    return db


def copy_of(db: Path, folder: Path) -> Path:
    target = folder / "state.db"
    shutil.copy(db, target)
    return target


def assert_every_route_finds_everything(db: Path) -> None:
    """Each index's route finds exactly the messages holding each word."""
    with SessionStore(db) as store:
        assert all(v is None for v in store.integrity_check().values())
        routes = {"fts5": ["deploy", "staging"], "fts_cjk": WORDS, "trigram": ["staging", "eploy"]}
        for route, words in routes.items():
            for word in words:
                truth = {
                    r[0]
                    for r in store._conn.execute(
                        "SELECT id FROM messages WHERE instr(content, ?)", (word,)
                    )
                }
                result = store.search(word, route=route, limit=10 * MESSAGES)
                assert result.route == route, (word, result.route)
                assert {r["id"] for r in result.rows} == truth, (route, word)


DAMAGE = {
    # Half the word index's blocks gone: FTS5's integrity-check sees it.
    "word_blocks_lost": (
        schema.BASE,
        "DELETE FROM hermes_fts_word_data WHERE id > 10 AND id % 2 = 0",
    ),
    # The CJK index's term directory emptied: integrity-check passes, every
    # lookup finds nothing; only the probe sees it.
    "cjk_directory_emptied": (schema.CJK, "DELETE FROM hermes_fts_cjk_idx"),
}


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_one_run_repairs_a_damaged_index(case, optimized, tmp_path):
    index, damage = DAMAGE[case]
    db = copy_of(optimized, tmp_path)
    conn = sqlite3.connect(db)
    conn.execute(damage)
    conn.commit()
    conn.close()
    code, result, err = optimize(db)
    assert code == 0 and result["ok"], err
    assert list(result["repaired"]) == [index]
    assert_every_route_finds_everything(db)
    # Repaired for good: the next run finds nothing to repair.
    code, again, err = optimize(db, "--no-vacuum")
    assert code == 0 and again.get("repaired", {}) == {}, err


def test_an_unchanged_store_is_not_measured_again(optimized, tmp_path):
    db = copy_of(optimized, tmp_path)
    code, first, err = optimize(db)
    assert code == 0 and first["rank_bounds_measured"] == {}, err
    with SessionStore(db) as store:
        assert "rank_bounds" not in store.status()["needs_optimize"]
        store.add_messages(
            {"session_id": "s1", "role": "user", "content": text_of(i)} for i in range(MESSAGES)
        )
    # Twice the rows: the bounds are behind and measured again, once.
    code, second, err = optimize(db)
    assert code == 0 and second["rank_bounds_measured"][schema.BASE] >= 1, err
    code, third, err = optimize(db)
    assert code == 0 and third["rank_bounds_measured"] == {}, err


def test_the_first_run_measures_the_frequent_words(tmp_path):
    db = tmp_path / "state.db"
    write_store(db)
    code, result, err = optimize(db)
    assert code == 0, err
    # "alpha" is in every message: frequent enough for bounds in both indexes.
    assert result["rank_bounds_measured"][schema.BASE] >= 1
    assert result["rank_bounds_measured"][schema.CJK] >= 1
