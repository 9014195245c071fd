"""cjk_few_snippet(): a one-phrase query's snippet when it is in at most n rows, else NULL."""

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

ROWS = 400
# Each word is in a different share of the rows, so counts range from a few to most.
WORDS = {
    "中国": 0.6,
    "人民": 0.2,
    "服务端": 0.05,
    "deploy": 0.02,
    "東京タワー": 0.01,
    "서울": 0.004,
    "孤例": 0.0,
}


@pytest.fixture(params=HOSTS)
def db(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Db:
    return host_db(request.param, tmp_path_factory)


@pytest.fixture
def table(db: Db) -> Db:
    """A CJK table of ROWS random texts in two columns, a row holding 孤例 and one with the rest."""
    db.run("CREATE VIRTUAL TABLE t USING fts5(a, b, tokenize='cjk_unicode61 unigrams 1')")
    rng = random.Random(11)
    for i in range(ROWS):
        words = [w for w, share in WORDS.items() if rng.random() < share] or ["无关"]
        rng.shuffle(words)
        filler = "文字" * rng.randrange(0, 30)
        db.run(
            "INSERT INTO t (a, b) VALUES (?, ?)",
            (filler + " ".join(words), "其他" if i % 7 == 0 else None),
        )
    db.run("INSERT INTO t (a, b) VALUES ('只有一个孤例, 中国', NULL)")
    db.run("INSERT INTO t (a, b) VALUES (?, NULL)", (" ".join(w for w in WORDS if w != "孤例"),))
    return db


def few(db: Db, query: str, n: int, rank: str = "rank") -> list[tuple[Any, Any]]:
    """(the function's value, cjk_snippet's) on every row the query matches."""
    return [
        (r[0], r[1])
        for r in db.all(
            f"SELECT cjk_few_snippet(t, {rank}, ?, -1, '[', ']', '…', 12), "
            "cjk_snippet(t, -1, '[', ']', '…', 12) FROM t WHERE t MATCH ?",
            (n, query),
        )
    ]


def rows_in_table(db: Db) -> int:
    return int(db.value("SELECT count(*) FROM t"))


@pytest.mark.parametrize(
    "query",
    ['"中国"', '"人民"', '"服务端"', "deploy", '"東京タワー"', "서울", "孤例", "国", "b : 其他"],
)
@pytest.mark.parametrize("n", [0, 1, 3, 8, 20, 60, 150])
def test_builds_exactly_when_the_phrase_is_in_at_most_n_rows(table: Db, query: str, n: int) -> None:
    got = few(table, query, n)
    hits = len(got)
    assert hits > 0
    total = rows_in_table(table)
    if hits <= n and total > 2 * n + 2:
        # Every row gets the snippet cjk_snippet would build.
        assert [value for value, _ in got] == [snippet for _, snippet in got]
    elif hits > n:
        assert {value for value, _ in got} == {None}


def test_a_bound_over_the_table_is_every_row(table: Db) -> None:
    got = few(table, '"中国"', rows_in_table(table))
    assert got and all(value == snippet for value, snippet in got)


def test_where_half_the_rows_would_do_it_cannot_tell_and_builds_nothing(table: Db) -> None:
    # bm25 gives a phrase in half of the rows or more the same floor score,
    # so a bound that high cannot be told from the score: nothing is built.
    total = rows_in_table(table)
    assert {v for v, _ in few(table, "孤例", total // 2)} == {None}


@pytest.mark.parametrize(
    "query",
    ['"孤例" AND "中国"', '"孤例" OR "服务端"', '"孤例" NOT "人民"', 'NEAR("東京タワー" "中国")'],
)
def test_a_query_of_several_phrases_builds_nothing(table: Db, query: str) -> None:
    # Their score mixes several IDFs, which no row's score can separate.
    got = few(table, query, 100)
    assert got and {v for v, _ in got} == {None}


def test_another_score_only_changes_what_is_built(table: Db) -> None:
    # A score that claims a very rare phrase builds snippets for a common one;
    # the caller counts the rows it got before trusting them to be all.
    got = few(table, '"中国"', 5, rank="-1000.0")
    assert len(got) > 5 and all(v == s for v, s in got)
    assert {v for v, _ in few(table, "孤例", 5, rank="-0.000001")} == {None}


@pytest.mark.parametrize(
    "args, message",
    [
        ("", "wrong number of arguments"),
        (", rank, 5, -1, '[', ']', '…'", "wrong number of arguments"),
        (", 'x', 5, -1, '[', ']', '…', 12", "score must be a number"),
        (", NULL, 5, -1, '[', ']', '…', 12", "score must be a number"),
        (", rank, 2.5, -1, '[', ']', '…', 12", "n must be an integer"),
        (", rank, 'five', -1, '[', ']', '…', 12", "n must be an integer"),
        (", rank, 1000, 9, '[', ']', '…', 12", "column index 9 out of range"),
        (", rank, 1000, -1, '[', ']', '…', 0", "max_chars must be at least 1"),
    ],
)
def test_bad_arguments(table: Db, args: str, message: str) -> None:
    with pytest.raises(DB_ERRORS, match=message):
        table.all(f"SELECT cjk_few_snippet(t{args}) FROM t WHERE t MATCH '孤例'")


@pytest.mark.parametrize("n", [0, 1000])  # a phrase too common to build, and a rare one
@pytest.mark.parametrize(
    "args, message",
    [
        ("9, '[', ']', '…', 12", r"cjk_few_snippet\(\): column index 9 out of range"),
        ("-1, '[', ']', '…', 0", r"cjk_few_snippet\(\): max_chars must be at least 1, got 0"),
    ],
)
def test_a_bad_argument_is_refused_in_its_own_name_whether_or_not_it_builds(
    table: Db, n: int, args: str, message: str
) -> None:
    with pytest.raises(DB_ERRORS, match=message):
        table.all(f"SELECT cjk_few_snippet(t, rank, {n}, {args}) FROM t WHERE t MATCH '中国'")


def test_numbers_beyond_an_int_are_not_wrapped(table: Db) -> None:
    # max_chars past 2^31 asks for the whole text, as a large one does.
    whole = "SELECT cjk_snippet(t, 0, '[', ']', '…', {}) FROM t WHERE t MATCH '孤例'"
    assert table.all(whole.format(2**32)) == table.all(whole.format(10**6))
    assert table.all(whole.format(2**32))[0][0].count("[孤例]") == 1
    # A column past 2^31 is out of range, not column 0 once wrapped.
    for call in ("cjk_highlight(t, {}, '[', ']')", "cjk_snippet(t, {}, '[', ']', '…', 9)"):
        with pytest.raises(DB_ERRORS, match=f"column index {2**32} out of range"):
            table.all(f"SELECT {call.format(2**32)} FROM t WHERE t MATCH '孤例'")


def test_a_negative_n_builds_nothing(table: Db) -> None:
    assert {v for v, _ in few(table, "孤例", -1)} == {None}


# --------------------------------------------------------------------------- the store


def test_the_probe_tells_a_library_with_it_from_one_without(tmp_path: Path) -> None:
    # A connection without the extension stands in for an older library: the
    # function is unknown there, and the probe says so instead of raising.
    script = (
        "import sqlite3\n"
        "from hermes_fts import loader\n"
        "plain = sqlite3.connect(':memory:')\n"
        "plain.execute('CREATE VIRTUAL TABLE t USING fts5(x)')\n"
        "loaded = loader.connect(':memory:')\n"
        "loaded.execute('CREATE VIRTUAL TABLE t USING fts5(x)')\n"
        "print(loader.has_few_snippet(plain, 't'), loader.has_few_snippet(loaded, 't'))\n"
    )
    package_root = Path(loader.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(package_root)}
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
        env=env,
    ).stdout.split()
    assert out == ["False", "True"]


def _searched(st: SessionStore, query: str, **kw: Any) -> tuple[list[Any], int]:
    """The rows, and how many statements ran a MATCH."""
    statements: list[str] = []
    st._conn.set_trace_callback(statements.append)
    try:
        rows = st.search_messages(query, **kw)
    finally:
        st._conn.set_trace_callback(None)
    matches = sum(1 for s in statements if " MATCH " in s and not s.startswith("--"))
    return [(r["id"], r["snippet"], r["context"]) for r in rows], matches


@needs_extension
def test_a_rare_term_is_ranked_and_cut_in_one_match(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "state.db"
    with SessionStore(path) as st:
        st.add_session("s1", "cli", started_at=1.0)
        st.add_session("s2", "telegram", started_at=2.0)
        st.add_messages(
            [
                {"session_id": "s1", "role": "user", "content": "孤例 一"},
                {
                    "session_id": "s2",
                    "role": "tool",
                    "content": "其中也有孤例 二",
                    "tool_name": "shell",
                },
                {"session_id": "s1", "role": "assistant", "content": "rare-word here"},
            ]
            + [
                {"session_id": "s1", "role": "user", "content": f"常见 词 {i} common"}
                for i in range(80)
            ]
        )
        queries = [
            ("孤例", {}),
            ("孤例", {"role_filter": "tool"}),
            ("孤例", {"source_filter": ["cli"]}),
            ("rare-word", {}),
            ("常见", {}),
            ("孤例 OR 常见", {}),
            ("common", {"limit": 3}),
        ]
        with_it = [_searched(st, q, **kw) for q, kw in queries]
        assert st.index_state()["cjk_few_snippet"]
    # One MATCH for rare one-phrase terms (a Latin word too: the CJK index
    # answers it, with no look for glued rows, which only the opt-in word
    # index needs); the common terms and the OR keep the second MATCH for the
    # snippets of the rows they keep.
    assert [n for _, n in with_it] == [1, 1, 1, 1, 2, 2, 2]
    assert [len(rows) for rows, _ in with_it] == [2, 1, 1, 1, 20, 20, 3]

    monkeypatch.setattr(loader, "has_few_snippet", lambda conn, table: False)
    with SessionStore(path) as st:
        assert st.index_state()["cjk_few_snippet"] is False
        without = [_searched(st, q, **kw) for q, kw in queries]
    # The same rows, snippets and contexts either way.
    assert [rows for rows, _ in without] == [rows for rows, _ in with_it]
    assert [n for _, n in without] == [2, 2, 2, 2, 2, 2, 2]


@needs_extension
def test_a_rare_term_with_more_matches_than_wanted_reads_them_the_usual_way(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "state.db") as st:
        st.add_session("s1", "cli", started_at=1.0)
        st.add_messages(
            [{"session_id": "s1", "role": "user", "content": f"稀有 {i}"} for i in range(6)]
            + [{"session_id": "s1", "role": "user", "content": f"别的 {i}"} for i in range(200)]
        )
        few_rows, few_matches = _searched(st, "稀有", limit=10)
        page, page_matches = _searched(st, "稀有", limit=4)
    assert len(few_rows) == 6 and few_matches == 1
    # Six matches for a page of four: the snippets of the four come afterwards.
    assert page == few_rows[:4] and page_matches == 2
