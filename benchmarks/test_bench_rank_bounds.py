"""Rank bounds against scoring every match: a one-word search by sessions (what
discovery reads) and a ranked one, common words of each language.

Both ways give the same page (checked first); the table holds the median of
each, interleaved call by call, and their ratio from the same run.  The
store is the optimized cached one: ``optimize-storage`` builds the bounds
once the store has frequent enough words (``rank_bounds.FREQUENT``), so at
the smoke size they exist for no word and both columns time the full pass.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import pytest

from benchmarks import corpus

CLASSES = ("latin_word", "zh2", "ja", "ko")
ROUNDS = 3


def _words() -> list[str]:
    try:
        return [
            t
            for cls in CLASSES
            for band in corpus.term_samples(cls, ("very_common", "common"), per_band=3).values()
            for t in band
        ]
    except RuntimeError as exc:  # word lists missing
        pytest.skip(str(exc))


def _ms(fn: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    out = fn()
    return (time.perf_counter() - started) * 1000.0, out


@pytest.mark.parametrize("sort", ["sessions", None])
def test_rank_bounds_against_every_match(
    benchmark: Any, store: Any, bench_report: Any, bench_size: int, sort: str | None
) -> None:
    from hermes_fts.index import rank_bounds
    from hermes_fts.search import run as search

    words = _words()
    bounded = search.bounded_page

    def page(word: str, use_bounds: bool) -> list[int]:
        search.bounded_page = bounded if use_bounds else (lambda *a, **k: None)
        try:
            rows = store.search_messages(word, limit=12, sort=sort, fields=("id",))
        finally:
            search.bounded_page = bounded
        return [r["id"] for r in rows]

    times: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(ROUNDS):
        for word in words:
            ms_b, with_bounds = _ms(lambda w=word: page(w, True))
            ms_f, every = _ms(lambda w=word: page(w, False))
            assert with_bounds == every, word
            times[True].append(ms_b)
            times[False].append(ms_f)
    benchmark.group = f"rank bounds, sort={sort}"
    benchmark.pedantic(lambda: [page(w, True) for w in words], rounds=1, iterations=1)
    bounded_words = (
        store._conn.execute(f"SELECT count(*) FROM {rank_bounds.TABLE}").fetchone()[0]
        if rank_bounds.lag(store._conn)
        else 0
    )
    p50 = {k: statistics.median(v) for k, v in times.items()}
    p99 = {k: sorted(v)[int(0.99 * (len(v) - 1))] for k, v in times.items()}
    bench_report.add(
        "Rank bounds: one common word, bounds against every match",
        {
            "messages": bench_size,
            "sort": sort or "rank",
            "tokens with bounds": bounded_words,
            "bounds p50 / p99 ms": f"{p50[True]:.1f} / {p99[True]:.1f}",
            "every match p50 / p99 ms": f"{p50[False]:.1f} / {p99[False]:.1f}",
            "× at p50": f"{p50[False] / p50[True]:.1f}",
            "× at p99": f"{p99[False] / p99[True]:.1f}",
        },
    )
