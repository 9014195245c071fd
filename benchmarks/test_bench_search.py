"""search_messages per query class against the LIKE scan it replaces (issue 4).

For every query class, terms are sampled across frequency bands (rare …
very common).  Each term is timed three ways in the same run:

* ``search_messages(term, limit=20)`` through the route the router picks;
* the LIKE scan for the same term (the ``like_scan`` route: same filters,
  same finalize), the fallback a plain SQLite store would use;
* for Latin classes, the raw SQL statement of the ``fts5`` route (join,
  filters, snippet, ``ORDER BY rank LIMIT 20``) with no router around it,
  to show what planning and the glued-Latin check cost.

Ratios are LIKE time / index time per term, medians per class, measured in
one run (these machines are shared and noisy).  Recall is checked too: the
index route must return the same rows as a LIKE scan restricted to what the
route promises (see tests/test_search.py for the exact ground truth).
"""

from __future__ import annotations

import os
import statistics
from typing import Any

import pytest

from benchmarks import corpus
from hermes_fts.bench import median_ms, recall
from hermes_fts.index import maintain as indexing
from hermes_fts.query.plan import match_expression
from hermes_fts.search import request as search_request
from hermes_fts.search import route as search_route
from hermes_fts.search import rows as search_rows
from hermes_fts.search import run as search
from hermes_fts.search.snippets import few_snippet_sql, snippet_sql
from hermes_fts.store import SessionStore

PER_BAND = int(os.environ.get("HERMES_BENCH_PER_BAND", "2"))  # terms per frequency band
# HERMES_BENCH_RECALL=0 leaves the recall columns out: each is two more full
# LIKE scans per term with every hit's snippet, most of a 1M run's time.
RECALL = os.environ.get("HERMES_BENCH_RECALL", "1") != "0"
REPEATS = 5
CJK_CLASSES = ("zh2", "zh3", "cjk1", "ja", "ko", "zh2_or")
LATIN_CLASSES = ("latin_word", "latin_ident", "latin_glued")
NO_CONTEXT = [f for f in search.RESULT_FIELDS if f != "context"]


@pytest.fixture(scope="module")
def store(bench_size: int, bench_seed: int) -> Any:
    """The store as written, without optimize-storage's time index.

    The LIKE scan orders by timestamp: with the time index it would walk it
    and stop after ``limit`` hits instead of scanning, which is not the scan
    the index routes replace.  Index routes rank by relevance and do not use it.
    """
    st = SessionStore(corpus.cached_store(bench_size, bench_seed), readonly=True)
    if not st.cjk_available:
        pytest.skip("cjk_unicode61 extension unavailable: nothing to compare")
    yield st
    st.close()


def raw_fts5(st: SessionStore, term: str) -> list[Any]:
    """The Latin route's MATCH alone (the word index where it is kept, else the CJK
    index), read as the search reads it (the exact ranked plan, and the rare phrase's one pass
    where the library has it): no sanitizing, routing or supplements."""
    state = st.index_state()
    plan = search_route.plan_search(state, term)
    route = "fts5" if state["hermes_fts_word"]["served"] else "fts_cjk"
    table = search_route.INDEX_ROUTES[route]
    where, params, _ = search_rows.where_sql(search.SearchRequest(term))
    return search_rows.match_rows(
        st._conn,
        table,
        match_expression(plan.query, route),
        snippet_sql(table, True),
        where,
        params,
        search_request.RANKED_ORDER,
        20,
        few_snippet_sql=few_snippet_sql(table) if state["cjk_few_snippet"] else None,
    )


def recall_all_visible(st: SessionStore, term: str) -> float | None:
    """Share of a substring scan over all visible rows (tool rows too) the search returns.

    The ground truth is the LIKE scan (content, tool_name and tool_calls,
    decoded); for Latin terms it counts substrings, so a word index scores
    below 100 % where a term is part of a longer word.
    """
    got = {r["id"] for r in st.search_messages(term, limit=10**7, fields=["id"])}
    truth = {
        r["id"] for r in st.search_messages(term, limit=10**7, fields=["id"], route="like_scan")
    }
    return len(got & truth) / len(truth) if truth else None


@pytest.mark.parametrize("query_class", CJK_CLASSES + LATIN_CLASSES)
def test_search_vs_like(benchmark, store, bench_report, query_class):
    samples = corpus.term_samples(query_class, per_band=PER_BAND)
    rows = []
    for band, terms in samples.items():
        for term in terms:
            route = store.describe_search_path(term)
            index_ms = median_ms(lambda t=term: store.search_messages(t, limit=20), REPEATS)
            like_ms = median_ms(
                lambda t=term: store.search_messages(t, limit=20, route="like_scan"), REPEATS
            )
            hits = len(store.search_messages(term, limit=10**6, fields=["id"]))
            row = {
                "class": query_class,
                "band": band,
                "term": term,
                "route": route,
                "hits": hits,
                "index_ms": index_ms,
                "like_ms": like_ms,
                "ratio": like_ms / index_ms if index_ms else float("inf"),
                "recall": recall(store, term) if RECALL else None,
                "recall_all_visible": recall_all_visible(store, term) if RECALL else None,
            }
            if query_class in CJK_CLASSES:
                # The substring index the bigram index replaces, when it can answer.
                row["trigram_route"] = search_route.plan_search(
                    store.index_state(), term, None, "trigram"
                ).route
                # A term trigram cannot answer runs the LIKE scan just timed.
                row["trigram_ms"] = (
                    like_ms
                    if row["trigram_route"] == "like_scan"
                    else median_ms(
                        lambda t=term: store.search_messages(t, limit=20, route="trigram"), REPEATS
                    )
                )
            if query_class in LATIN_CLASSES:
                row["raw_ms"] = median_ms(lambda t=term: raw_fts5(store, t), REPEATS)
                row["nocontext_ms"] = median_ms(
                    lambda t=term: store.search_messages(t, limit=20, fields=NO_CONTEXT), REPEATS
                )
                row["vs_raw"] = row["nocontext_ms"] / row["raw_ms"] if row["raw_ms"] else 0.0
            rows.append(row)
            bench_report.add("search: per term", row)
    ratios = [r["ratio"] for r in rows]
    summary = {
        "class": query_class,
        "terms": len(rows),
        "routes": ",".join(sorted({r["route"] for r in rows})),
        "median_index_ms": statistics.median(r["index_ms"] for r in rows),
        "median_like_ms": statistics.median(r["like_ms"] for r in rows),
        "median_ratio": statistics.median(ratios),
        "worst_ratio": min(ratios),
        "worst_term": min(rows, key=lambda r: r["ratio"])["term"],
        "min_recall": min((r["recall"] for r in rows if r["recall"] is not None), default=None),
        "min_recall_all_visible": min(
            (r["recall_all_visible"] for r in rows if r["recall_all_visible"] is not None),
            default=None,
        ),
    }
    if query_class in LATIN_CLASSES:
        summary["median_vs_raw_match"] = statistics.median(r["vs_raw"] for r in rows)
    bench_report.add("search: per query class", summary)
    benchmark.extra_info.update(summary)
    benchmark.extra_info["query_class"] = query_class
    benchmark.extra_info["ratio_vs_like"] = summary["median_ratio"]
    terms = [t for ts in samples.values() for t in ts]
    benchmark.pedantic(
        lambda: [store.search_messages(t, limit=20) for t in terms], rounds=3, iterations=1
    )


def test_index_sizes(benchmark, store, bench_report):
    """Each index as a multiple of the text it covers (sum of its %_data blocks)."""
    sizes = benchmark.pedantic(indexing.index_sizes, args=(store._conn,), rounds=1, iterations=1)
    for index, size in sizes.items():
        bench_report.add(
            "search: index sizes",
            {"index": index, "MB": size["bytes"] / 1e6, "x_text": size["x_text"]},
        )
        benchmark.extra_info[index] = size["x_text"]
