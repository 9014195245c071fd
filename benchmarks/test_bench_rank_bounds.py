"""Rank bounds against scoring every match: a one-word search by sessions (what
discovery reads) and a ranked one, common words of each language.

Both ways give the same page (checked first); the table holds the median of
each, interleaved call by call, and their ratio from the same run.  The
store is the optimized cached one: ``optimize-storage`` builds the bounds
once the store has frequent enough words (``rank_bounds.FREQUENT``), so at
the smoke size they exist for no word and both columns time the full pass.

Latin words are answered by the CJK index (the word index is opt-in,
``HERMES_WORD_FTS=1``); a second test times them there against a copy of
the store that keeps the word index, and counts the words each index
answered from its bounds.
"""

from __future__ import annotations

import shutil
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks import corpus
from benchmarks.conftest import merge_indexes

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


def _merged_copy(source: Path, folder: Path, word_index: bool) -> Any:
    """A copy of ``source``, with the opt-in word index built when asked, every index
    merged as optimize-storage leaves it, opened read-only."""
    from hermes_fts.store import SessionStore

    path = folder / "state.db"
    shutil.copyfile(source, path)
    with pytest.MonkeyPatch.context() as mp:
        if word_index:
            mp.setenv("HERMES_WORD_FTS", "1")
        with SessionStore(str(path)) as st:
            if word_index:
                assert st.optimize_storage(vacuum=False)["ok"]
            merge_indexes(st)
    return SessionStore(str(path), readonly=True)


@pytest.fixture(scope="module")
def two_stores(bench_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The benchmark store as it is by default (the CJK index alone) and with the
    opt-in word index, with its bounds; both merged."""
    cjk = _merged_copy(bench_store, tmp_path_factory.mktemp("cjk"), False)
    word = _merged_copy(bench_store, tmp_path_factory.mktemp("word"), True)
    yield cjk, word
    cjk.close()
    word.close()


@pytest.mark.parametrize("sort", ["sessions", None])
def test_latin_words_cjk_index_against_word_index(
    benchmark: Any,
    two_stores: Any,
    bench_report: Any,
    bench_size: int,
    sort: str | None,
) -> None:
    from hermes_fts.index import schema
    from hermes_fts.search import run as search

    try:
        samples = corpus.term_samples("latin_word", ("very_common", "common"), per_band=6)
    except RuntimeError as exc:  # word lists missing
        pytest.skip(str(exc))
    words = [t for band in samples.values() for t in band]
    store, word_store = two_stores
    bounded = search.bounded_page
    by_blocks: dict[str, set[str]] = {schema.CJK: set(), schema.BASE: set()}

    def page(st: Any, word: str) -> list[int]:
        def traced(conn: Any, table: str, *args: Any) -> Any:
            found = bounded(conn, table, *args)
            if found is not None:
                by_blocks.setdefault(table, set()).add(word)
            return found

        search.bounded_page = traced
        try:
            rows = st.search_messages(word, limit=12, sort=sort, fields=("id",))
        finally:
            search.bounded_page = bounded
        return [r["id"] for r in rows]

    times: dict[str, list[float]] = {"cjk": [], "word": []}
    for _ in range(ROUNDS):
        for word in words:
            times["cjk"].append(_ms(lambda w=word: page(store, w))[0])
            times["word"].append(_ms(lambda w=word: page(word_store, w))[0])
    benchmark.group = f"latin words by index, sort={sort}"
    benchmark.pedantic(lambda: [page(store, w) for w in words], rounds=1, iterations=1)
    p50 = {k: statistics.median(v) for k, v in times.items()}
    p99 = {k: sorted(v)[int(0.99 * (len(v) - 1))] for k, v in times.items()}
    bench_report.add(
        "Rank bounds: common Latin words, the CJK index against the opt-in word index",
        {
            "messages": bench_size,
            "sort": sort or "rank",
            "words": len(words),
            "by bounds, CJK / word index": (
                f"{len(by_blocks[schema.CJK])} / {len(by_blocks[schema.BASE])}"
            ),
            "CJK index p50 / p99 ms": f"{p50['cjk']:.1f} / {p99['cjk']:.1f}",
            "word index p50 / p99 ms": f"{p50['word']:.1f} / {p99['word']:.1f}",
            "CJK / word at p50": f"{p50['cjk'] / p50['word']:.2f}",
        },
    )
