"""cjk_rarest_phrase(): rows of the query's rarest phrase, counted up to cap + 1."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _cjk_hosts import DB_ERRORS, HOSTS, Db, host_db
from _support import needs_extension

from hermes_fts import loader
from hermes_fts.store import SessionStore


@pytest.fixture(params=HOSTS)
def db(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Db:
    return host_db(request.param, tmp_path_factory)


WORDS = ["中国", "人民", "服务", "deploy", "東京", "タワー", "서울", "x"]


@pytest.fixture
def table(db: Db) -> list[str]:
    """A CJK table of 300 random texts; returns them, in rowid order from 1."""
    db.run("CREATE VIRTUAL TABLE t USING fts5(a, b, tokenize='cjk_unicode61 unigrams 1')")
    rng = random.Random(7)
    texts = []
    for _ in range(300):
        # Rarer words come up less often, so some phrases have few rows.
        words = [w for i, w in enumerate(WORDS) if rng.random() < 0.5 / (i + 1)]
        text = " ".join(words) or "无关"
        texts.append(text)
        db.run("INSERT INTO t (a, b) VALUES (?, ?)", (text, "其他" if rng.random() < 0.1 else None))
    return texts


def rarest(db: Db, query: str, cap: int) -> list[int]:
    """The function's value on every row the query matches."""
    return [r[0] for r in db.all("SELECT cjk_rarest_phrase(t, ?) FROM t WHERE t MATCH ?",
                                 (cap, query))]


def rows_with(db: Db, phrase: str) -> int:
    return int(db.value("SELECT count(*) FROM t WHERE t MATCH ?", (f'"{phrase}"',)))


@pytest.mark.parametrize("query, phrases", [
    ('"中国"', ["中国"]),
    ('"中国" AND "人民"', ["中国", "人民"]),
    ('"deploy" AND "東京" AND "中国"', ["deploy", "東京", "中国"]),
    ('NEAR("中国" "服务")', ["中国", "服务"]),
    ('"タワー"', ["タワー"]),
])
@pytest.mark.parametrize("cap", [0, 1, 5, 40, 1000])
def test_counts_the_rarest_phrase_up_to_cap_plus_one(db: Db, table: list[str], query: str,
                                                     phrases: list[str], cap: int) -> None:
    fewest = min(rows_with(db, p) for p in phrases)
    values = rarest(db, query, cap)
    matches = int(db.value("SELECT count(*) FROM t WHERE t MATCH ?", (query,)))
    assert len(values) == matches
    # The same value on every row, whatever the cap.
    assert set(values) <= {min(fewest, cap + 1)}
    # What a search relies on: at most cap by this count means at most cap matches.
    if values and values[0] <= cap:
        assert matches <= cap


def test_is_a_bound_only_when_every_phrase_is_required(db: Db, table: list[str]) -> None:
    # For OR the rarest phrase says nothing about the query's matches: callers
    # use the function only for queries whose phrases are all required.
    matches = int(db.value("SELECT count(*) FROM t WHERE t MATCH ?", ('"中国" OR "x"',)))
    values = rarest(db, '"中国" OR "x"', 1000)
    assert values[0] == rows_with(db, "x") < matches


def test_a_column_filter_counts_in_that_column(db: Db, table: list[str]) -> None:
    assert rarest(db, 'b : "其他"', 1000)[0] == sum(1 for _ in db.all(
        "SELECT 1 FROM t WHERE b = '其他'"))


def test_a_cap_per_row_is_honoured(db: Db, table: list[str]) -> None:
    # The count is kept with its cap; another cap on a later row is counted again.
    got = db.all("SELECT rowid % 2, cjk_rarest_phrase(t, CASE WHEN rowid % 2 THEN 2 ELSE 1000 END) "
                 "FROM t WHERE t MATCH '\"中国\"'")
    total = rows_with(db, "中国")
    assert {v for odd, v in got if odd} == {3}
    assert {v for odd, v in got if not odd} == {total}


@pytest.mark.parametrize("args, message", [
    ("", "wrong number of arguments"),
    (", 1, 2", "wrong number of arguments"),
    (", -1", "cap must be an integer"),
    (", 'ten'", "cap must be an integer"),
    (", 1.5", "cap must be an integer"),
    (", NULL", "cap must be an integer"),
    (", 4611686018427387905", "cap must be an integer"),
])
def test_bad_arguments(db: Db, table: list[str], args: str, message: str) -> None:
    with pytest.raises(DB_ERRORS, match=message):
        db.all(f"SELECT cjk_rarest_phrase(t{args}) FROM t WHERE t MATCH '中国'")


def test_largest_cap(db: Db, table: list[str]) -> None:
    assert rarest(db, '"中国"', 2**62)[0] == rows_with(db, "中国")


# --------------------------------------------------------------------------- the store


def test_the_probe_tells_a_library_with_it_from_one_without(tmp_path):
    # A connection without the extension stands in for an older library: the
    # function is unknown there, and the probe says so instead of raising.
    script = (
        "import sqlite3\n"
        "from hermes_fts import loader\n"
        "plain = sqlite3.connect(':memory:')\n"
        "plain.execute('CREATE VIRTUAL TABLE t USING fts5(x)')\n"
        "loaded = loader.connect(':memory:')\n"
        "loaded.execute('CREATE VIRTUAL TABLE t USING fts5(x)')\n"
        "print(loader.has_rarest_phrase(plain, 't'), loader.has_rarest_phrase(loaded, 't'))\n"
    )
    package_root = Path(loader.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(package_root)}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, cwd=tmp_path, env=env).stdout.split()
    assert out == ["False", "True"]


@needs_extension
def test_search_uses_it_only_where_the_library_has_it(tmp_path, monkeypatch):
    def run(st: SessionStore, query: str) -> tuple[list[Any], bool]:
        statements: list[str] = []
        st._conn.set_trace_callback(statements.append)
        try:
            rows = st.search_messages(query, limit=5)
        finally:
            st._conn.set_trace_callback(None)
        return ([(r["id"], r["snippet"], r["context"]) for r in rows],
                any("cjk_rarest_phrase" in s for s in statements))

    path = tmp_path / "state.db"
    with SessionStore(path) as st:
        st.add_session("s1", "cli", started_at=1.0)
        st.add_messages([{"session_id": "s1", "role": role, "content": text,
                          "tool_name": "shell" if role == "tool" else None}
                         for role, text in [("user", "孤例 一"), ("tool", "孤例 二"),
                                            ("assistant", "常见 " * 3)] * 1
                         + [("user", f"常见 {i}") for i in range(20)]])
        queries = ["孤例", "常见", "孤例 二", "孤例 OR 常见"]
        with_it = {q: run(st, q) for q in queries}
        assert st.index_state()["cjk_rarest"]
    # Queries whose phrases are all required ask the index how rare they are
    # (at most 5 matches: one pass); an OR cannot.
    assert {q: used for q, (_, used) in with_it.items()} == {
        "孤例": True, "常见": True, "孤例 二": True, "孤例 OR 常见": False}
    assert len(with_it["孤例"][0]) == 2 and len(with_it["常见"][0]) == 5

    monkeypatch.setattr(loader, "has_rarest_phrase", lambda conn, table: False)
    with SessionStore(path) as st:
        assert st.index_state()["cjk_rarest"] is False
        without = {q: run(st, q) for q in queries}
    assert {q: rows for q, (rows, _) in without.items()} == {
        q: rows for q, (rows, _) in with_it.items()}
    assert not any(used for _, used in without.values())
