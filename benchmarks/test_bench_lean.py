"""The lean one-term paths (issue 35 item 4) against scoring every match: the most
common single CJK character by sessions and ranked, a rare phrase of two
common words (``set-limit``-like), and the most common CJK word of three
characters or more (``という``-like).

Rank bounds read a single character block by block and keep only the page
between rounds; a rare phrase of several tokens is read in one statement, a
common one by blocks.  Both
give the full pass's page (checked first); the table holds the median and
99th percentile of each, interleaved call by call, and how many statements
scored rows of the index.  The store is a copy of the optimized cached one;
below ``rank_bounds.WORTH_IT`` messages ``optimize-storage`` builds no
bounds, so the copy gets them for tokens in ``SMOKE_FREQUENT`` rows, and a
smoke run times the same paths a large store takes.
"""

from __future__ import annotations

import shutil
import sqlite3
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks import corpus
from benchmarks.conftest import merge_indexes

ROUNDS = 15
SMOKE_FREQUENT = 20
PAIR_WORDS = 30  # the phrase is sought among pairs of this many most frequent words


@pytest.fixture(scope="module")
def lean_store(bench_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A copy of the benchmark store with rank bounds, its indexes merged as
    optimize-storage leaves them (the cached store skipped its merge and VACUUM)."""
    from hermes_fts.index import rank_bounds
    from hermes_fts.store import SessionStore

    path = tmp_path_factory.mktemp("lean") / "state.db"
    shutil.copyfile(bench_store, path)
    conn = sqlite3.connect(path)
    ready = rank_bounds.ready_tables(conn)
    conn.close()
    st = SessionStore(str(path))
    merge_indexes(st)
    if not ready:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(rank_bounds, "FREQUENT", SMOKE_FREQUENT)
            rank_bounds.build(st._conn)
        st._seen.forget()
    yield st
    st.close()


def _bounded_tokens(conn: sqlite3.Connection, table: str) -> list[str]:
    from hermes_fts.index import rank_bounds

    return [
        str(r[0])
        for r in conn.execute(
            f"SELECT token FROM {rank_bounds.TABLE} WHERE tbl = ? ORDER BY rows DESC, token",
            (table,),
        )
    ]


def _queries(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """The most common CJK character with bounds, the rarest phrase (at least one
    row) of two of the most common Latin words with bounds, and the most common CJK
    word of three characters or more among the corpus' very common words."""
    from hermes_fts.index import schema

    found = []
    char = next(
        (t for t in _bounded_tokens(conn, schema.CJK) if len(t) == 1 and t > "\u2e80"), None
    )
    if char is not None:
        found.append(("cjk1", char))
    # Latin words from the word index where it is kept (opt-in), else the CJK index.
    table = schema.BASE if schema.index_sql(conn, schema.BASE) else schema.CJK
    words = [t for t in _bounded_tokens(conn, table) if t.isascii() and t.isalpha()][:PAIR_WORDS]
    pairs = []
    for a in words:
        for b in words:
            if a != b:
                df = conn.execute(
                    f"SELECT count(*) FROM {table} WHERE {table} MATCH ?",
                    (f'"{a} {b}"',),
                ).fetchone()[0]
                if df:
                    pairs.append((df, f"{a}-{b}"))
    if pairs:
        found.append(("rare phrase", min(pairs)[1]))
    # The most common CJK word of three characters or more (a phrase of bigrams).
    words = [
        (conn.execute(
            f"SELECT count(*) FROM {schema.CJK} WHERE {schema.CJK} MATCH ?", (f'"{w}"',)
        ).fetchone()[0], w)
        for cls in ("zh3", "ja", "ko")
        for band in corpus.term_samples(cls, ("very_common",), per_band=10).values()
        for w in band
        if len(w) >= 3
    ]  # fmt: skip
    if words and max(words)[0]:
        found.append(("common phrase", max(words)[1]))
    return found


def _run(store: Any, query: str, sort: str | None, lean: bool) -> tuple[float, list[int]]:
    """Time and page of one search, with the lean paths or the full pass."""
    from hermes_fts.search import run as search

    saved = search.bounded_page
    search.bounded_page = saved if lean else (lambda *a, **k: None)
    try:
        started = time.perf_counter()
        rows = store.search(query, limit=12, sort=sort, fields=("id",)).rows
        ms = (time.perf_counter() - started) * 1000.0
    finally:
        search.bounded_page = saved
    return ms, [r["id"] for r in rows]


def _scoring_statements(store: Any, query: str, sort: str | None, lean: bool) -> int:
    """Statements that scored rows of the index in one search, counted on a call of
    its own: a trace callback runs for every statement FTS5 runs inside, too,
    and would be timed with them."""
    scored = [0]

    def trace(sql: str) -> None:
        if " MATCH " in sql and ("hermes_fts_bm25" in sql or "rank" in sql):
            scored[0] += 1

    store._conn.set_trace_callback(trace)
    try:
        _run(store, query, sort, lean)
    finally:
        store._conn.set_trace_callback(None)
    return scored[0]


@pytest.mark.parametrize("sort", ["sessions", None])
def test_lean_one_term_paths(
    benchmark: Any, lean_store: Any, bench_report: Any, bench_size: int, sort: str | None
) -> None:
    queries = _queries(lean_store._conn)
    if not queries:
        pytest.skip("no token of the store has rank bounds")
    for label, query in queries:
        times: dict[bool, list[float]] = {True: [], False: []}
        statements = {lean: _scoring_statements(lean_store, query, sort, lean) for lean in times}
        for _ in range(ROUNDS):
            for lean in (True, False):
                ms, page = _run(lean_store, query, sort, lean)
                times[lean].append(ms)
                assert page == _run(lean_store, query, sort, not lean)[1], query
        p50 = {k: statistics.median(v) for k, v in times.items()}
        p99 = {k: sorted(v)[int(0.99 * (len(v) - 1))] for k, v in times.items()}
        bench_report.add(
            "Lean one-term paths against every match",
            {
                "messages": bench_size,
                "query": f"{label} {query}",
                "sort": sort or "rank",
                "lean p50 / p99 ms": f"{p50[True]:.2f} / {p99[True]:.2f}",
                "every match p50 / p99 ms": f"{p50[False]:.2f} / {p99[False]:.2f}",
                "statements scoring, lean / every": f"{statements[True]} / {statements[False]}",
            },
        )
    benchmark.group = f"lean one-term paths, sort={sort}"
    benchmark.pedantic(
        lambda: [_run(lean_store, q, sort, True) for _, q in queries], rounds=1, iterations=1
    )
