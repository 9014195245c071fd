"""Word forms in a best match: what searching each English word's stem as a prefix
costs (docs/DESIGN.md §6.4a).

The same English questions (``session_recall.make_cases``) are asked twice,
interleaved call by call: as written (each word also searched as its stem's
prefix, ``fixed`` → ``fixed`` and ``fix*``) and with every word quoted, which
is the same best match without the forms.  Both by sessions, what discovery
reads.  Reported: the median and p99 of each and their ratio, and how many
rows the prefixes add to the matches (the precision cost lives there: rows
reached by a prefix that hold no form of the word are counted in
benchmarks/README.md's word-forms section).
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import pytest

ROUNDS = 3
QUERIES = 60


def _ms(fn: Any) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000.0


def _quoted(text: str) -> str:
    """The words the best match of ``text`` keeps, quoted: the same words, no forms."""
    from hermes_fts.query.best import best_match
    from hermes_fts.query.plan import parse_query

    kept = best_match(parse_query(text)).terms
    return " ".join(f'"{t.text}"' for t in kept if not t.prefix)


def test_word_forms_against_words_as_written(
    benchmark: Any, store: Any, bench_store: Any, bench_report: Any, bench_size: int
) -> None:
    from benchmarks.session_recall import make_cases

    questions = [c.keywords for c in make_cases(bench_store, QUERIES * 3) if c.lang == "en"]
    questions = questions[:QUERIES]
    if not questions:
        pytest.skip("no English questions in this corpus")

    def page(text: str) -> list[Any]:
        rows = store.search_messages(text, limit=12, sort="sessions", fields=("id",))
        return [r["id"] for r in rows]

    times: dict[str, list[float]] = {"forms": [], "as written": []}
    for _ in range(ROUNDS):
        for text in questions:
            times["forms"].append(_ms(lambda t=text: page(t)))
            times["as written"].append(_ms(lambda t=text: page(_quoted(t))))
    benchmark.group = "word forms"
    benchmark.pedantic(lambda: [page(t) for t in questions], rounds=1, iterations=1)

    def count(text: str) -> int:
        return len(store.search_messages(text, limit=10**6, fields=("id",)))

    with_forms = sum(count(t) for t in questions)
    written = sum(count(_quoted(t)) for t in questions)
    p50 = {k: statistics.median(v) for k, v in times.items()}
    p99 = {k: sorted(v)[int(0.99 * (len(v) - 1))] for k, v in times.items()}
    bench_report.add(
        "Word forms: English keywords by sessions, with forms against as written",
        {
            "messages": bench_size,
            "queries": len(questions),
            "forms p50 / p99 ms": f"{p50['forms']:.1f} / {p99['forms']:.1f}",
            "as written p50 / p99 ms": f"{p50['as written']:.1f} / {p99['as written']:.1f}",
            "× at p50": f"{p50['forms'] / p50['as written']:.2f}",
            "matches with forms / as written": f"{with_forms / max(written, 1):.2f}",
        },
    )
    assert with_forms >= written  # forms only add: a stem is a prefix of its word
