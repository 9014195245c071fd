"""hermes-fts against newer Hermes Agent builds (the 0.20-0.22 forks on PyPI).

Each fork runs in its own cached venv with this checkout (``_hermes_forks``;
set ``HERMES_FTS_TEST_FORK_VENVS`` to a folder to keep them between runs).
Newer Hermes has its own ``messages_fts_cjk`` index with a tokenizer named
``cjk_unicode61`` from its own ``libfts5_cjk.so``, an ``optimize-storage``
that moves every ``messages_fts_%`` table to trash, and a repair whose last
step deletes every ``messages_fts%`` object.  A store written by 0.19.0 and
optimized by hermes-fts goes through the fork's writes, optimizer and repair,
then through 0.19.0 again: every write succeeds, hermes-fts never changes
Hermes' index objects, every FTS5 table passes ``integrity-check`` (rank 1)
and neither Hermes' search nor hermes-fts' misses a row.  The same holds with
Hermes' own CJK index next to ours, built with our library or with a stand-in
for Hermes' own.  The harness tests hold Hermes alone to the same checks.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
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
        pytest.skip(
            "no Python 3.11+ here whose sqlite3 can load extensions; Hermes "
            "cannot load a libfts5_cjk library without one"
        )
    return fork_venv


class Store:
    """One state.db in its own HERMES_HOME (``plugin``: hermes-fts enabled in config.yaml)."""

    def __init__(self, root: Path, plugin: bool = True) -> None:
        self.home = root / "home"
        self.home.mkdir(parents=True)
        if plugin:
            hf.enable_plugin(self.home)
        self.db = self.home / "state.db"

    def drive(self, venv: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
        return hf.run_driver(venv, self.home, *args, "--db", str(self.db), env=env)

    def hermes_fts(self, venv: Path, *args: str, env: dict[str, str] | None = None) -> str:
        proc = hf.run_hermes_fts(venv, self.home, *args, "--db", str(self.db), env=env)
        assert proc.returncode == 0, f"hermes-fts {args}:\n{proc.stdout}\n{proc.stderr}"
        return proc.stdout

    def hermes_fts_writes(self, venv: Path, *args: str, env: dict[str, str] | None = None) -> None:
        """A hermes-fts command that writes (optimize-storage, sync): it may change
        only its own objects, never Hermes' index objects or what they index."""
        before = hf.hermes_index_objects(self.db)
        self.hermes_fts(venv, *args, env=env)
        after = hf.hermes_index_objects(self.db)
        changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        assert not changed, f"hermes-fts {args} changed Hermes' objects: {changed}"

    def schema(self, venv: Path) -> str:
        """The objects and state_meta, for failure messages."""
        return json.dumps(self.drive(venv, "schema"), ensure_ascii=False)


def seed_and_optimize(store: Store, hermes_venv: Path) -> dict[str, list[int]]:
    """0.19.0 writes the history; hermes-fts optimizes the store with the plugin enabled."""
    ids = store.drive(hermes_venv, "seed")["ids"]
    store.hermes_fts_writes(hermes_venv, "optimize-storage", "--yes")
    return ids


def write_steps(ids: dict[str, list[int]], who: str) -> list[dict[str, Any]]:
    """Insert, update content and delete, each with words the queries look for."""
    if who == "fork":
        return [
            {"append": ["fork-new", "user", "新記録を保存しました freshfork"]},
            {"append": ["conv-1", "assistant", "東京の新記録 freshfork again"]},
            {"update": [ids["conv-0"][0], "缓存清理 rewritten"]},
            {"update": [ids["conv-0"][5], "好的 缓存清理"]},
            {"delete": "conv-3"},
        ]
    return [
        {"append": ["old-new", "user", "旧版本写入 oldwrite"]},
        {"append": ["conv-2", "assistant", "回滚计划 oldwrite 서울"]},
        {"update": [ids["conv-6"][0], "回滚计划 rewritten by 旧版本"]},
        {"update": [ids["conv-6"][5], "done"]},
        {"delete": "conv-4"},
    ]


def write(
    store: Store, venv: Path, steps: list[dict[str, Any]], env: dict[str, str] | None = None
) -> None:
    results = store.drive(venv, "write", "--steps", json.dumps(steps, ensure_ascii=False), env=env)[
        "results"
    ]
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


def assert_integrity(store: Store, venv: Path, env: dict[str, str] | None = None) -> None:
    """Every FTS5 table passes integrity-check (rank 1) in the process that owns it:
    Hermes' tables where Hermes loads its tokenizer, ``hermes_fts*`` where
    hermes-fts opens the store; none is left unchecked."""
    tables = hf.fts5_tables(store.db)
    hermes_side = store.drive(venv, "integrity", env=env)
    ours = store.drive(venv, "integrity", "--with-hermes-fts", env=env)
    report = {"tables": tables, "hermes": hermes_side, "hermes-fts": ours}
    for table in tables:
        owner = ours if table.startswith("hermes_fts") else hermes_side
        assert table in owner["passed"], report


def assert_hermes_search_misses_nothing(
    store: Store, venv: Path, env: dict[str, str] | None = None
) -> None:
    """Hermes' own search finds every user/assistant row holding a word."""
    truth = hf.ground_truth(store.db, QUERIES)
    found = store.drive(
        venv, "search", "--queries", json.dumps(QUERIES, ensure_ascii=False), env=env
    )["results"]
    missed = {
        q: sorted(truth[q]["ids"] - set(found[q]))
        for q in QUERIES
        if truth[q]["ids"] - set(found[q])
    }
    assert not missed, f"Hermes' search missed rows: {missed}"


def assert_no_search_misses(store: Store, venv: Path, env: dict[str, str] | None = None) -> None:
    """Hermes' own search and hermes-fts' find every user/assistant row holding a word."""
    assert_hermes_search_misses_nothing(store, venv, env)
    truth = hf.ground_truth(store.db, QUERIES)
    ours_wrong = {}
    for query in QUERIES:
        payload = json.loads(
            store.hermes_fts(
                venv, "search", "--json", "--limit", "10", "--detail", "index", query, env=env
            )
        )
        sessions = {r["session_id"] for r in payload.get("results", [])}
        assert len(truth[query]["sessions"]) < 10, query  # the limit never hides a miss
        if sessions != truth[query]["sessions"]:
            ours_wrong[query] = {
                "found": sorted(sessions),
                "expected": sorted(truth[query]["sessions"]),
            }
    assert not ours_wrong, f"hermes-fts search is wrong: {ours_wrong}"


def assert_hermes_integrity(
    store: Store, venv: Path, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """Every FTS5 table passes integrity-check in Hermes' own process; none skipped."""
    report = store.drive(venv, "integrity", env=env)
    assert not report["failed"] and not report["skipped"], report
    assert sorted(report["passed"]) == sorted(hf.fts5_tables(store.db)), report
    return report


# ---------------------------------------------------------------- the harness on Hermes alone


def test_harness_round_trip_on_hermes_alone(
    tmp_path: Path, hermes_venv: Path, fork_venv: Path
) -> None:
    """The same round trip without hermes-fts: what the checks below demand of a
    store hermes-fts optimized, Hermes' own store meets by itself."""
    store = Store(tmp_path, plugin=False)
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
    tmp_path: Path, loading_fork_venv: Path
) -> None:
    """With the stand-in in ``$HERMES_HOME/lib``, the fork loads it as Hermes loads
    its own library, builds ``messages_fts_cjk`` with it and keeps it sound."""
    store = Store(tmp_path, plugin=False)
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


# ---------------------------------------------------------------- hermes-fts with newer Hermes


def test_optimized_store_survives_newer_hermes_and_back(
    tmp_path: Path, hermes_venv: Path, fork_venv: Path
) -> None:
    """0.19.0 seeds, hermes-fts optimizes, the fork writes, optimizes and repairs,
    0.19.0 does the same: every write succeeds, neither search misses a row before
    hermes-fts applied what Hermes queued for its CJK index, and once it has
    (``sync``), every FTS5 table passes integrity-check."""
    store = Store(tmp_path)
    ids = seed_and_optimize(store, hermes_venv)
    assert_integrity(store, hermes_venv)

    write(store, fork_venv, write_steps(ids, "fork"))
    optimize_and_repair(store, fork_venv)
    assert_no_search_misses(store, fork_venv)
    store.hermes_fts_writes(fork_venv, "sync")
    assert_integrity(store, fork_venv)

    write(store, hermes_venv, write_steps(ids, "old"))
    optimize_and_repair(store, hermes_venv)
    assert_no_search_misses(store, hermes_venv)
    store.hermes_fts_writes(hermes_venv, "sync")
    assert_integrity(store, hermes_venv)
    # hermes-fts' own optimizer after both, and the newer build's search on the result.
    store.hermes_fts_writes(hermes_venv, "optimize-storage", "--yes")
    assert_integrity(store, fork_venv)
    assert_no_search_misses(store, fork_venv)


def _names_and_keys(store: Store, venv: Path) -> tuple[set[str], set[str]]:
    schema = store.drive(venv, "schema")
    return {name for _, name in schema["objects"]}, set(schema["state_meta"])


def added_by_hermes_fts(tmp_path: Path, hermes_venv: Path) -> tuple[Store, list[str]]:
    """A store 0.19.0 seeded and hermes-fts optimized, and the schema objects and
    state_meta keys it has that the same history written by 0.19.0 alone has not."""
    control = Store(tmp_path / "control")
    control.drive(hermes_venv, "seed")
    hermes_names, hermes_keys = _names_and_keys(control, hermes_venv)
    store = Store(tmp_path / "store")
    seed_and_optimize(store, hermes_venv)
    names, keys = _names_and_keys(store, hermes_venv)
    added = sorted((names - hermes_names) | (keys - hermes_keys))
    assert added, "hermes-fts optimize-storage added nothing"
    return store, added


def test_our_cjk_index_passes_integrity_check_while_hermes_changes_wait(
    tmp_path: Path, hermes_venv: Path, fork_venv: Path
) -> None:
    """Rows the fork inserted, edited and deleted wait in hermes-fts' queue until a
    hermes-fts write applies them; meanwhile every FTS5 table, ours included, still
    passes integrity-check with rank 1 (which compares an index with its content)."""
    store = Store(tmp_path)
    ids = seed_and_optimize(store, hermes_venv)
    write(store, fork_venv, write_steps(ids, "fork"))
    assert_integrity(store, fork_venv)
    assert_no_search_misses(store, fork_venv)


def test_hermes_fts_objects_survive_the_fork(
    tmp_path: Path, hermes_venv: Path, fork_venv: Path
) -> None:
    """After the fork wrote, optimized (which moves ``messages_fts_%`` tables to
    trash) and repaired (whose last step deletes ``messages_fts%`` objects),
    everything hermes-fts added is still there."""
    store, added = added_by_hermes_fts(tmp_path, hermes_venv)
    write(store, fork_venv, [{"append": ["fork-new", "user", "新記録 freshfork"]}])
    optimize_and_repair(store, fork_venv)
    names_after, keys_after = _names_and_keys(store, fork_venv)
    lost = sorted(set(added) - names_after - keys_after)
    assert not lost, f"the fork removed hermes-fts objects: {lost}"


def both_cjk_indexes(store: Store, hermes_venv: Path, fork_venv: Path, env: dict[str, str]) -> None:
    """A store holding Hermes' CJK index (built by the fork with the tokenizer
    ``env`` gives it) and hermes-fts' own, written by both processes."""
    ids = seed_and_optimize(store, hermes_venv)
    write(store, fork_venv, write_steps(ids, "fork"), env=env)
    optimize_and_repair(store, fork_venv, env=env)
    # Repair may have dropped Hermes' indexes; the next open and optimize rebuild them.
    write(store, fork_venv, [{"append": ["fork-late", "user", "新記録 freshfork late"]}], env=env)
    optimized = store.drive(fork_venv, "optimize", env=env)
    assert optimized["result"].get("ok") is True, optimized
    assert "messages_fts_cjk" in hf.fts5_tables(store.db), store.schema(fork_venv)
    store.hermes_fts_writes(fork_venv, "optimize-storage", "--yes", env=env)
    write(
        store,
        fork_venv,
        [
            {"append": ["conv-5", "assistant", "缓存清理 freshfork 서울"]},
            {"update": [ids["conv-7"][1], "rewritten staging"]},
            {"delete": "conv-8"},
        ],
        env=env,
    )
    store.hermes_fts_writes(fork_venv, "sync", env=env)


def test_hermes_cjk_index_next_to_ours_on_our_library(
    tmp_path: Path, hermes_venv: Path, loading_fork_venv: Path
) -> None:
    """HERMES_FTS5_CJK_SO pointing at ``hermes-fts path --hermes``: the fork
    builds its ``messages_fts_cjk`` with our library; both indexes stay sound."""
    fork_venv = loading_fork_venv
    store = Store(tmp_path)
    library = store.hermes_fts(fork_venv, "path", "--hermes").strip()
    env = {"HERMES_FTS5_CJK_SO": library}
    both_cjk_indexes(store, hermes_venv, fork_venv, env)
    assert_integrity(store, fork_venv, env=env)
    hermes_side = store.drive(fork_venv, "integrity", env=env)
    assert "messages_fts_cjk" in hermes_side["passed"], hermes_side
    assert_no_search_misses(store, fork_venv, env=env)


def test_hermes_own_cjk_index_next_to_ours(
    tmp_path: Path, hermes_venv: Path, loading_fork_venv: Path
) -> None:
    """Hermes' own library in ``$HERMES_HOME/lib`` (a stand-in that tokenizes as
    Hermes documents, not as hermes-fts does): the fork builds ``messages_fts_cjk``
    with it, hermes-fts keeps its own index; after writes from both processes
    each passes integrity-check with its own tokenizer, and neither search misses."""
    fork_venv = loading_fork_venv
    store = Store(tmp_path)
    try:
        hf.build_hermes_library(store.home)
    except hf.StandinUnavailable as exc:
        pytest.skip(f"cannot build a libfts5_cjk for Hermes here: {exc}")
    both_cjk_indexes(store, hermes_venv, fork_venv, {})
    assert_integrity(store, fork_venv)
    hermes_side = store.drive(fork_venv, "integrity")
    assert hermes_side["tokenizer"] == str(store.home / "lib" / "libfts5_cjk.so"), hermes_side
    assert "messages_fts_cjk" in hermes_side["passed"], hermes_side
    assert_no_search_misses(store, fork_venv)


def test_hermes_fts_adds_only_names_of_its_own(tmp_path: Path, hermes_venv: Path) -> None:
    """Everything hermes-fts adds to a store is named ``hermes_fts*``: no object or
    state_meta key under a name Hermes owns or may take."""
    _store, added = added_by_hermes_fts(tmp_path, hermes_venv)
    misnamed = [name for name in added if not name.startswith("hermes_fts")]
    assert not misnamed, f"hermes-fts objects or keys outside its namespace: {misnamed}"


def journal_mode(db: Path) -> str:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()
    finally:
        conn.close()


def test_hermes_fts_keeps_the_journal_mode_hermes_chose(tmp_path: Path, fork_venv: Path) -> None:
    """Newer Hermes keeps state.db out of WAL under `database.journal_mode: delete`
    (and on a SQLite with the WAL-reset bug) and never switches a WAL file back;
    hermes-fts' writes turned it to WAL for good."""
    store = Store(tmp_path)
    config = store.home / "config.yaml"
    config.write_text(config.read_text() + "database:\n  journal_mode: delete\n")
    store.drive(fork_venv, "seed", "--sessions", "2")
    assert journal_mode(store.db) == "delete"
    store.hermes_fts_writes(fork_venv, "optimize-storage", "--yes")
    write(store, fork_venv, [{"append": ["fork-new", "user", "新記録 freshfork"]}])
    store.hermes_fts_writes(fork_venv, "sync")
    assert journal_mode(store.db) == "delete", store.schema(fork_venv)


# The command each fork with a command line installs (async-hermes-agent is a
# library and installs none).
FORK_COMMANDS = {"iot-0.22": "hermes", "axisrow-0.20": "hermesx"}


@pytest.mark.parametrize("fork", sorted(FORK_COMMANDS))
def test_hermes_fts_status_through_the_forks_own_command(
    tmp_path: Path, hermes_venv: Path, fork_venvs_root: Path, fork: str
) -> None:
    """With the plugin enabled offline (config.yaml written directly, as 0.22's
    `plugins enable` admission would download a Python), `hermes fts status` runs
    inside the fork and reports the store and who answers session_search."""
    store = Store(tmp_path)
    seed_and_optimize(store, hermes_venv)
    out = fts_status_in_fork(fork_venvs_root, fork, store)
    assert f"store: {store.db}" in out, out
    assert "hermes-fts" in out


def fts_status_in_fork(root: Path, fork: str, store: Store) -> str:
    """``hermes fts status`` through the fork's own command; its output."""
    requirement = hf.FORKS[fork]
    try:
        venv = hf.ensure_fork_venv(root, requirement, hf.base_python())
    except (he.HermesUnavailable, OSError) as exc:
        pytest.skip(f"{requirement} cannot be installed here: {exc}")
    proc = subprocess.run(
        [str(he.venv_bin(venv, FORK_COMMANDS[fork])), "fts", "status"],
        capture_output=True,
        text=True,
        env=he.clean_env(store.home),
        stdin=subprocess.DEVNULL,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


@pytest.mark.parametrize("fork", sorted(FORK_COMMANDS))
def test_status_agrees_with_a_capability_grant(
    tmp_path: Path, hermes_venv: Path, fork_venvs_root: Path, fork: str
) -> None:
    """Granted by `granted_capabilities: [tools.override]` alone, which these builds
    honour: the model gets our schema, and both status lines say so (the config
    line said "execution middleware only" and asked for the grant)."""
    store = Store(tmp_path)
    (store.home / "config.yaml").write_text(
        "plugins:\n  enabled:\n    - hermes-fts\n  entries:\n    hermes-fts:\n"
        "      granted_capabilities:\n        - tools.override\n"
    )
    seed_and_optimize(store, hermes_venv)
    out = fts_status_in_fork(fork_venvs_root, fork, store)
    assert "session_search: served by hermes-fts (schema override)" in out, out
    assert "serves session_search (schema override)" in out, out
    assert "--allow-tool-override" not in out, out
