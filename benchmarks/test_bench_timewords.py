"""Time words in a question: what the time preference costs discovery (issue 36).

For terms of every frequency band, discovery of a question about the term
(``session_search(store, query=f"what did we say about {term}", limit=3)``)
is timed plain and with time words: one window counted from ``now`` (the
store's newest message), a month of one year, and a day in every year (an
OR of 57 windows, which the time zones cannot narrow).  Reported: each as a
multiple of the plain question in the same run; the target is at most 2x
(two searches at most, docs/DESIGN.md §6.4c).  Calls are interleaved, as in
``test_bench_filters.py``.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks import corpus
from hermes_fts.bench import interleaved_median_ms

CLASSES = ("zh2", "latin_word")
TARGET = 2.0
REPEATS = 7
TABLE = "discovery of a question with time words (x the same question without)"
TIME_WORDS = {
    "last week": "last week",
    "in March 2025": "in March 2025",
    "March 8 (every year)": "on March 8",
}


@pytest.fixture(scope="module")
def store(bench_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from hermes_fts.store import SessionStore

    mp = pytest.MonkeyPatch()
    mp.setenv("HERMES_HOME", str(tmp_path_factory.mktemp("hermes_home")))
    st = SessionStore(bench_store, readonly=True)
    yield st
    st.close()
    mp.undo()


@pytest.mark.parametrize("query_class", CLASSES)
def test_time_words_in_discovery(benchmark, store, bench_report, query_class):
    from hermes_fts.tool import session_search

    (now,) = store._conn.execute("SELECT MAX(timestamp) FROM messages").fetchone()

    def ask(question: str) -> Any:
        got = session_search(store, query=question, limit=3, now=now)
        assert got["success"], got
        return got

    samples = corpus.term_samples(query_class, per_band=1)
    for band, terms in samples.items():
        for term in terms:
            plain = f"what did we say about {term}"
            variants = {"plain": plain, **{k: f"{plain} {w}" for k, w in TIME_WORDS.items()}}
            ms = interleaved_median_ms(
                {name: lambda q=q: ask(q) for name, q in variants.items()}, REPEATS
            )
            row: dict[str, Any] = {
                "class": query_class,
                "band": band,
                "term": term,
                "plain_ms": ms["plain"],
            }
            for name in TIME_WORDS:
                row[name] = ms[name] / ms["plain"] if ms["plain"] else 0.0
            row["worst x"] = max(row[name] for name in TIME_WORDS)
            bench_report.add(TABLE, row)
    rows = [r for r in bench_report.rows(TABLE) if r["class"] == query_class]
    benchmark.extra_info["worst_x_plain"] = max(r["worst x"] for r in rows)
    benchmark.extra_info["median_worst_x_plain"] = statistics.median(r["worst x"] for r in rows)
    benchmark.extra_info["target"] = TARGET
    term = samples["very_common"][0] if samples.get("very_common") else rows[0]["term"]
    benchmark.pedantic(
        lambda: ask(f"what did we say about {term} on March 8"), rounds=3, iterations=1
    )
