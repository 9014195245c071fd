"""Newer Hermes Agent builds (the 0.20-0.22 forks on PyPI), driven by their own code.

Each fork runs in its own cached venv with this checkout (``_hermes_forks``;
set ``HERMES_FTS_TEST_FORK_VENVS`` to a folder to keep them between runs).
Newer Hermes has its own ``messages_fts_cjk`` index with a tokenizer named
``cjk_unicode61`` from its own ``libfts5_cjk.so``, an ``optimize-storage``
that moves every ``messages_fts_%`` table to trash, and a repair whose last
step deletes every ``messages_fts%`` object.  The tests here hold Hermes alone
to what the hermes-fts tests demand of a store it shares: a store written by
0.19.0 goes through the fork's writes, optimizer and repair, then through
0.19.0 again; every write succeeds, every FTS5 table passes
``integrity-check`` (rank 1) and Hermes' own search misses no row.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import _hermes_env as he
import _hermes_forks as hf
import pytest

# Words the writes below add; the queries cover them and the seeded history's.
FORK_WORDS = ["新記録", "freshfork", "缓存清理", "rewritten"]
OLD_WORDS = ["旧版本", "oldwrite", "回滚计划"]
QUERIES = hf.QUERIES + FORK_WORDS + OLD_WORDS


@pytest.fixture(scope="session")
def fork_venvs_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    keep = os.environ.get("HERMES_FTS_TEST_FORK_VENVS", "").strip()
    return Path(keep) if keep else tmp_path_factory.getbasetemp() / "fork-venvs"


@pytest.fixture(scope="session", params=sorted(hf.FORKS))
def fork_venv(request: pytest.FixtureRequest, fork_venvs_root: Path) -> Path:
    """The fork and this checkout, on a Python that can load extensions where one is
    here (so Hermes can load a ``libfts5_cjk`` when one is given to it)."""
    requirement = hf.FORKS[request.param]
    try:
        return hf.ensure_fork_venv(fork_venvs_root, requirement, hf.base_python())
    except (he.HermesUnavailable, OSError) as exc:
        pytest.skip(f"{requirement} cannot be installed here: {exc}")


@pytest.fixture
def loading_fork_venv(fork_venv: Path) -> Path:
    """``fork_venv`` where Hermes can load its ``libfts5_cjk`` and so build its own
    ``messages_fts_cjk``."""
    if not hf.loads_extensions(he.venv_python(fork_venv)):
        pytest.skip("no Python 3.11+ here whose sqlite3 can load extensions; Hermes "
                    "cannot load a libfts5_cjk library without one")
    return fork_venv


class Store:
    """One state.db in its own HERMES_HOME."""

    def __init__(self, root: Path) -> None:
        self.home = root / "home"
        self.home.mkdir(parents=True)
        self.db = self.home / "state.db"

    def drive(self, venv: Path, *args: str, env: dict[str, str] | None = None
              ) -> dict[str, Any]:
        return hf.run_driver(venv, self.home, *args, "--db", str(self.db), env=env)

def write_steps(ids: dict[str, list[int]], who: str) -> list[dict[str, Any]]:
    """Insert, update content and delete, each with words the queries look for."""
    if who == "fork":
        return [{"append": ["fork-new", "user", "新記録を保存しました freshfork"]},
                {"append": ["conv-1", "assistant", "東京の新記録 freshfork again"]},
                {"update": [ids["conv-0"][0], "缓存清理 rewritten"]},
                {"update": [ids["conv-0"][5], "好的 缓存清理"]},
                {"delete": "conv-3"}]
    return [{"append": ["old-new", "user", "旧版本写入 oldwrite"]},
            {"append": ["conv-2", "assistant", "回滚计划 oldwrite 서울"]},
            {"update": [ids["conv-6"][0], "回滚计划 rewritten by 旧版本"]},
            {"update": [ids["conv-6"][5], "done"]},
            {"delete": "conv-4"}]


def write(store: Store, venv: Path, steps: list[dict[str, Any]],
          env: dict[str, str] | None = None) -> None:
    results = store.drive(venv, "write", "--steps", json.dumps(steps, ensure_ascii=False),
                          env=env)["results"]
    assert len(results) == len(steps)
    for step, result in zip(steps, results):
        if "append" in step:
            assert isinstance(result, int) and result > 0, (step, result)
        elif "delete" in step:
            assert result is True, (step, result)


def optimize_and_repair(store: Store, venv: Path, env: dict[str, str] | None = None) -> None:
    """Hermes' storage optimizer, then its repair (forced: the rebuild strategy runs
    even where the probe finds the file healthy); both must end healthy."""
    optimized = store.drive(venv, "optimize", env=env)
    assert optimized["result"].get("ok") is True, optimized
    repaired = store.drive(venv, "repair", "--force", env=env)
    assert repaired["reason_after"] is None, repaired
    if repaired["report"] is not None:
        assert repaired["report"]["repaired"] is True, repaired


def assert_hermes_search_misses_nothing(store: Store, venv: Path,
                                       env: dict[str, str] | None = None) -> None:
    """Hermes' own search finds every user/assistant row holding a word."""
    truth = hf.ground_truth(store.db, QUERIES)
    found = store.drive(venv, "search", "--queries", json.dumps(QUERIES, ensure_ascii=False),
                        env=env)["results"]
    missed = {q: sorted(truth[q]["ids"] - set(found[q])) for q in QUERIES
              if truth[q]["ids"] - set(found[q])}
    assert not missed, f"Hermes' search missed rows: {missed}"


def assert_hermes_integrity(store: Store, venv: Path,
                            env: dict[str, str] | None = None) -> dict[str, Any]:
    """Every FTS5 table passes integrity-check in Hermes' own process; none skipped."""
    report = store.drive(venv, "integrity", env=env)
    assert not report["failed"] and not report["skipped"], report
    assert sorted(report["passed"]) == sorted(hf.fts5_tables(store.db)), report
    return report


# ---------------------------------------------------------------- the harness on Hermes alone


def test_harness_round_trip_on_hermes_alone(
        tmp_path: Path, hermes_venv: Path, fork_venv: Path) -> None:
    """0.19.0 -> fork (write, optimize-storage, repair) -> 0.19.0 (write, optimize,
    repair): no write fails, every FTS5 table passes, Hermes' search misses nothing."""
    store = Store(tmp_path)
    ids = store.drive(hermes_venv, "seed")["ids"]
    assert sum(len(v) for v in ids.values()) == 96
    write(store, fork_venv, write_steps(ids, "fork"))
    optimize_and_repair(store, fork_venv)
    assert_hermes_integrity(store, fork_venv)
    assert_hermes_search_misses_nothing(store, fork_venv)
    write(store, hermes_venv, write_steps(ids, "old"))
    optimize_and_repair(store, hermes_venv)
    report = assert_hermes_integrity(store, hermes_venv)
    assert {"messages_fts", "messages_fts_trigram"} <= set(report["passed"]), report
    assert_hermes_search_misses_nothing(store, hermes_venv)


def test_harness_stand_in_library_gives_hermes_its_cjk_index(
        tmp_path: Path, loading_fork_venv: Path) -> None:
    """With the stand-in in ``$HERMES_HOME/lib``, the fork loads it as Hermes loads
    its own library, builds ``messages_fts_cjk`` with it and keeps it sound."""
    store = Store(tmp_path)
    try:
        library = hf.build_hermes_library(store.home)
    except hf.StandinUnavailable as exc:
        pytest.skip(f"cannot build a libfts5_cjk for Hermes here: {exc}")
    ids = store.drive(loading_fork_venv, "seed")["ids"]
    optimized = store.drive(loading_fork_venv, "optimize")
    assert optimized["result"].get("ok") is True, optimized
    write(store, loading_fork_venv, write_steps(ids, "fork"))
    report = assert_hermes_integrity(store, loading_fork_venv)
    assert report["tokenizer"] == str(library), report
    assert "messages_fts_cjk" in report["passed"], report
    assert_hermes_search_misses_nothing(store, loading_fork_venv)
