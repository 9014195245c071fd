"""Issue 15 benchmark: what the tokenizer option ``variants 1`` costs and buys.

Three corpora of ``--bench-size`` generated messages: Simplified Chinese
(``corpus.texts("zh")``), the same messages converted to Traditional with
OpenCC's phrase and character tables (``benchmarks/hant.py``) and Japanese
(``corpus.texts("ja")``).

* Insert throughput and index size with and without ``variants 1`` (both
  with ``unigrams 1``, as in hermes_fts_cjk), like test_bench_tokenizers.
* Precision inside one script: every query (zh2, zh3 and cjk1 terms across
  all frequency bands; ja and cjk1 terms for Japanese) runs on the corpus
  with and without folding.  Folding only merges, so the unfolded hits are a
  subset; every extra hit is a row that spells the query differently and
  folds to the same text.  Reported: extra hits per query and the share of
  folded hits that are exact-spelling hits (a lower bound on precision).
* Across scripts, with ground truth: a table holding Simplified rows and the
  Traditional conversions of *other* messages, queried in Simplified and in
  Traditional.  A Traditional row is a correct hit when its Simplified source
  matches the Simplified query.  Reported: precision and recall of the
  folded index, and the recall without folding.

Counts are deterministic, so the precision floors below are asserted; times
are only reported.

    python -m pytest benchmarks/test_bench_variants.py --bench-size 20k \
        --benchmark-group-by=group --benchmark-json=bench-variants.json
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from typing import Any

import pytest

from benchmarks import corpus
from hermes_fts._cjk_variants import fold

PLAIN = "cjk_unicode61 unigrams 1"
FOLDED = "cjk_unicode61 unigrams 1 variants 1"
TOKENIZERS = {"plain": PLAIN, "variants": FOLDED}
CORPORA = ("zh-Hans", "zh-Hant", "ja")
ROUNDS = 3
PER_BAND = 10
INSERT_TABLE = "variants 1: insert throughput and index size (issue 15)"
PRECISION_TABLE = "variants 1: extra hits per query inside one script (issue 15)"
CROSS_TABLE = "variants 1: Traditional and Simplified finding each other (issue 15)"

# Floors for the deterministic counts (README records the measured values).
MIN_IN_SCRIPT_PRECISION = 0.97
MIN_CROSS_PRECISION = 0.95
MIN_CROSS_RECALL = 0.95

Connect = Callable[..., sqlite3.Connection]


def _hant() -> Callable[[str], str]:
    from benchmarks.hant import OpenCCMissing, to_traditional

    try:
        to_traditional("测试")
    except OpenCCMissing as exc:
        pytest.skip(str(exc))
    return to_traditional


_texts: dict[tuple[str, int], list[str]] = {}


def corpus_texts(name: str, n: int, seed: int) -> list[str]:
    key = (name, n)
    if key not in _texts:
        if name == "zh-Hans":
            _texts[key] = corpus.texts("zh", n, seed)
        elif name == "zh-Hant":
            convert = _hant()
            _texts[key] = [convert(t) for t in corpus_texts("zh-Hans", n, seed)]
        else:
            _texts[key] = corpus.texts("ja", n, seed)
    return _texts[key]


def queries(name: str) -> list[str]:
    """Query terms in the corpus's own script, all frequency bands."""
    classes = ("ja", "cjk1") if name == "ja" else ("zh2", "zh3", "cjk1")
    terms: list[str] = []
    for cls in classes:
        for band in corpus.term_samples(cls, per_band=PER_BAND).values():
            terms.extend(band)
    if name == "zh-Hant":
        convert = _hant()
        terms = [convert(t) for t in terms]
    return list(dict.fromkeys(terms))


def _table(conn: sqlite3.Connection, name: str, tokenizer: str, rows: list[str]) -> None:
    conn.execute(f"CREATE VIRTUAL TABLE {name} USING fts5(body, tokenize='{tokenizer}')")
    with conn:
        conn.executemany(f"INSERT INTO {name}(body) VALUES (?)", [(t,) for t in rows])


def _hits(conn: sqlite3.Connection, table: str, term: str) -> set[int]:
    phrase = '"' + term.replace('"', '""') + '"'
    return {
        r for (r,) in conn.execute(f"SELECT rowid FROM {table} WHERE {table} MATCH ?", [phrase])
    }


# --------------------------------------------------------------------------
# insert throughput and index size


CASES = [(c, t) for c in CORPORA for t in TOKENIZERS]


@pytest.mark.parametrize(("name", "tok"), CASES, ids=[f"{c}-{t}" for c, t in CASES])
def test_insert_with_and_without_variants(
    benchmark: Any,
    name: str,
    tok: str,
    bench_size: int,
    bench_seed: int,
    connect_db: Connect,
    bench_report: Any,
) -> None:
    texts = corpus_texts(name, bench_size, bench_seed)
    rows = [(t,) for t in texts]
    text_bytes = sum(len(t.encode()) for t in texts)
    benchmark.group = f"insert {name}"
    times: list[float] = []
    conns: list[sqlite3.Connection] = []

    def setup() -> tuple[tuple[sqlite3.Connection], dict[str, Any]]:
        for old in conns:
            old.close()
        conns.clear()
        conn = connect_db(need_extension=True)
        conn.execute(
            f"CREATE VIRTUAL TABLE bench USING fts5(body, content='', tokenize='{TOKENIZERS[tok]}')"
        )
        conns.append(conn)
        return (conn,), {}

    def run(conn: sqlite3.Connection) -> None:
        t0 = time.perf_counter()
        with conn:
            conn.executemany("INSERT INTO bench(body) VALUES (?)", rows)
        times.append(time.perf_counter() - t0)

    benchmark.pedantic(run, setup=setup, rounds=ROUNDS, iterations=1)
    conn = conns[-1]
    with conn:
        conn.execute("INSERT INTO bench(bench) VALUES ('optimize')")
    (size,) = conn.execute("SELECT coalesce(sum(length(block)), 0) FROM bench_data").fetchone()
    for c in conns:
        c.close()
    best = min(times)
    row: dict[str, Any] = {
        "corpus": name,
        "tokenizer": TOKENIZERS[tok],
        "docs": len(texts),
        "text_MB": text_bytes / 1e6,
        "insert_s": best,
        "MB_per_s": text_bytes / 1e6 / best,
        "index_bytes": int(size),
    }
    for r in bench_report.rows(INSERT_TABLE):
        if r["corpus"] == name and r["tokenizer"] == PLAIN and tok == "variants":
            row["throughput_vs_plain"] = r["insert_s"] / best
            row["index_vs_plain"] = size / r["index_bytes"]
    benchmark.extra_info.update({k: v for k, v in row.items() if k != "corpus"})
    bench_report.notes[INSERT_TABLE] = (
        f"Contentless FTS5 tables, one bulk insert per round (best of {ROUNDS}); "
        "index = sum(length(block)) of %_data after 'optimize'."
    )
    bench_report.add(INSERT_TABLE, row)


# --------------------------------------------------------------------------
# precision inside one script


@pytest.mark.parametrize("name", CORPORA)
def test_extra_hits_inside_one_script(
    name: str, bench_size: int, bench_seed: int, connect_db: Connect, bench_report: Any
) -> None:
    texts = corpus_texts(name, bench_size, bench_seed)
    terms = queries(name)
    conn = connect_db(need_extension=True)
    try:
        _table(conn, "plain", PLAIN, texts)
        _table(conn, "folded", FOLDED, texts)
        plain_total = folded_total = with_extra = 0
        worst: tuple[int, str] = (0, "")
        # Only terms the corpus itself spells that way: a term with no exact
        # hit is in another script (題 on Simplified text), and all of its
        # folded hits are the right ones, which would flatter the numbers.
        terms = [t for t in terms if _hits(conn, "plain", t)]
        for term in terms:
            plain, folded = _hits(conn, "plain", term), _hits(conn, "folded", term)
            assert plain <= folded, term  # folding only ever merges spellings
            extra = len(folded) - len(plain)
            plain_total += len(plain)
            folded_total += len(folded)
            with_extra += extra > 0
            worst = max(worst, (extra, term))
    finally:
        conn.close()
    precision = plain_total / folded_total if folded_total else 1.0
    bench_report.notes[PRECISION_TABLE] = (
        "Phrase queries in the corpus's own spelling (zh2/zh3/cjk1 or ja/cjk1 terms, "
        f"{PER_BAND} per frequency band, those with at least one exact hit); "
        "extra = hits with variants 1 minus hits "
        "without; exact_share = unfolded hits / folded hits (precision lower bound)."
    )
    bench_report.add(
        PRECISION_TABLE,
        {
            "corpus": name,
            "docs": len(texts),
            "queries": len(terms),
            "hits_per_query": plain_total / len(terms),
            "extra_per_query": (folded_total - plain_total) / len(terms),
            "queries_with_extra": with_extra,
            "exact_share": precision,
            "worst_query": f"{worst[1]} (+{worst[0]})",
        },
    )
    assert precision >= MIN_IN_SCRIPT_PRECISION, (name, precision, worst)


# --------------------------------------------------------------------------
# Traditional and Simplified finding each other, with ground truth


def test_traditional_and_simplified_find_each_other(
    bench_size: int, bench_seed: int, connect_db: Connect, bench_report: Any
) -> None:
    convert = _hant()
    half = max(1, bench_size // 2)
    hans = corpus.texts("zh", half, bench_seed)
    sources = corpus.texts("zh", half, bench_seed + 1)  # other messages, converted
    rows = hans + [convert(t) for t in sources]
    # Simplified spellings only: the cjk1 class also holds Traditional and
    # Japanese characters (題), for which "matches the Simplified source
    # without folding" would be the wrong ground truth.
    terms = [t for t in queries("zh-Hans") if fold(t) == t]
    conn = connect_db(need_extension=True)
    try:
        # Same rowids: truth row i is the Simplified text of row i.
        _table(conn, "truth", PLAIN, hans + sources)
        _table(conn, "plain", PLAIN, rows)
        _table(conn, "folded", FOLDED, rows)
        for query_in, to_query in (("Simplified", str), ("Traditional", convert)):
            correct = returned = relevant = plain_found = plain_returned = 0
            for term in terms:
                truth = _hits(conn, "truth", term)
                got = _hits(conn, "folded", to_query(term))
                plain = _hits(conn, "plain", to_query(term))
                correct += len(got & truth)
                returned += len(got)
                relevant += len(truth)
                plain_found += len(plain & truth)
                plain_returned += len(plain)
            precision = correct / returned if returned else 1.0
            recall = correct / relevant if relevant else 1.0
            bench_report.add(
                CROSS_TABLE,
                {
                    "query_in": query_in,
                    "rows": f"{len(hans)} Simplified + {len(sources)} Traditional",
                    "queries": len(terms),
                    "relevant_rows": relevant,
                    "precision_variants": precision,
                    "recall_variants": recall,
                    "precision_without": plain_found / plain_returned if plain_returned else 1.0,
                    "recall_without": plain_found / relevant if relevant else 1.0,
                },
            )
            assert precision >= MIN_CROSS_PRECISION, (query_in, precision)
            assert recall >= MIN_CROSS_RECALL, (query_in, recall)
    finally:
        conn.close()
    bench_report.notes[CROSS_TABLE] = (
        "Ground truth: a row is relevant when its Simplified text (the row itself, "
        "or the source a Traditional row was converted from) matches the Simplified "
        "form of the query without folding."
    )


# --------------------------------------------------------------------------
# the LIKE route over cjk_fold()

LIKE_TABLE = "variants: LIKE scan with and without cjk_fold() (issue 15)"
LIKE_SQL = {
    "raw": "SELECT count(*) FROM docs WHERE body LIKE ?",
    "cjk_fold": "SELECT count(*) FROM docs WHERE cjk_fold(body) LIKE ?",
}


@pytest.mark.parametrize("how", sorted(LIKE_SQL))
def test_like_scan_over_cjk_fold(
    benchmark: Any,
    how: str,
    bench_size: int,
    bench_seed: int,
    connect_db: Connect,
    bench_report: Any,
) -> None:
    """What folding the LIKE route costs: one scan of mixed zh-Hans/zh-Hant rows."""
    convert = _hant()
    half = max(1, bench_size // 2)
    rows = corpus.texts("zh", half, bench_seed) + [
        convert(t) for t in corpus.texts("zh", half, bench_seed + 1)
    ]
    terms = [t for t in queries("zh-Hans") if fold(t) == t][:20]
    conn = connect_db(need_extension=True)
    conn.execute("CREATE TABLE docs(body TEXT)")
    with conn:
        conn.executemany("INSERT INTO docs VALUES (?)", [(t,) for t in rows])
    sql = LIKE_SQL[how]
    patterns = [f"%{t}%" for t in terms]
    benchmark.group = "LIKE scan zh-Hans + zh-Hant"
    counts: list[int] = []

    def run() -> None:
        counts[:] = [conn.execute(sql, [p]).fetchone()[0] for p in patterns]

    benchmark.pedantic(run, rounds=ROUNDS, iterations=1)
    conn.close()
    stats = benchmark.stats.stats if benchmark.stats else None
    bench_report.add(
        LIKE_TABLE,
        {
            "compare": how,
            "rows": len(rows),
            "queries": len(patterns),
            "ms_per_query": (stats.min * 1000 / len(patterns)) if stats else "",
            "hits_per_query": sum(counts) / len(patterns),
        },
    )
