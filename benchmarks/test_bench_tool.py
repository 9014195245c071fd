"""Issue 5 benchmark: the session_search tool end to end, per query class.

For every query class of ``benchmarks.corpus`` (Chinese 2/3+ characters, one
CJK character, Japanese, Korean, English word, identifier, Latin glued to CJK,
Chinese OR) a few terms per frequency band are run through

* discovery: ``session_search(store, query=term, limit=3)`` (adaptive detail:
  300-row scan, cron demotion, lineage dedupe, anchored views), and
* scroll: ``session_search(store, session_id=..., around_message_id=hit)``
  anchored on the discovery hits of that class.

Medians (ms) go into ``benchmark.extra_info`` and the Markdown report.
Targets: discovery median ≤ 20 ms for every class, scroll ≤ 2 ms.  They are
reported, never asserted (speed is shown by benchmarks, not timed asserts).

    python -m pytest benchmarks/test_bench_tool.py --bench-size 200k \
        --benchmark-group-by=group --benchmark-json=bench-tool.json
"""

from __future__ import annotations

import itertools
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks import corpus

DISCOVERY_TARGET_MS = 20.0
SCROLL_TARGET_MS = 2.0
TERMS_PER_BAND = 2
TIMED_PASSES = 3
TABLE = "session_search end to end per query class (issue 5)"


@pytest.fixture(scope="module")
def tool_store(
    bench_store: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch_module: Any
) -> Iterator[Any]:
    from hermes_fts.store import SessionStore

    monkeypatch_module.setenv("HERMES_HOME", str(tmp_path_factory.mktemp("hermes_home")))
    store = SessionStore(bench_store, readonly=True)
    if not hasattr(store, "search_messages"):
        store.close()
        pytest.skip("search_messages not implemented yet")
    yield store
    store.close()


@pytest.fixture(scope="module")
def monkeypatch_module() -> Iterator[pytest.MonkeyPatch]:
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def _terms(query_class: str) -> list[tuple[str, str]]:
    try:
        samples = corpus.term_samples(query_class, per_band=TERMS_PER_BAND)
    except RuntimeError as exc:  # word lists missing
        pytest.skip(str(exc))
    return [(band, term) for band, terms in samples.items() for term in terms]


def _time_ms(fn: Any) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000.0


def _route(store: Any, query: str) -> str:
    describe = getattr(store, "describe_search_path", None)
    try:
        return str(describe(query)) if callable(describe) else "unknown"
    except Exception:  # noqa: BLE001 - a label only
        return "unknown"


@pytest.mark.parametrize("query_class", corpus.QUERY_CLASSES)
def test_discovery_and_scroll(
    benchmark: Any, tool_store: Any, bench_report: Any, bench_size: int, query_class: str
) -> None:
    from hermes_fts.tool import session_search

    terms = _terms(query_class)
    if not terms:
        pytest.skip(f"no terms for {query_class}")

    # Untimed pass: warm caches, check every call answers, collect scroll anchors.
    anchors: list[tuple[str, int]] = []
    hits = 0
    for _band, term in terms:
        payload = session_search(tool_store, query=term, limit=3)
        assert payload["success"] is True, (term, payload)
        hits += payload["count"]
        anchors.extend(
            (r["session_id"], r["match_message_id"])
            for r in payload["results"]
            if r.get("match_message_id") is not None
        )

    # Per-term medians by band (our own timer), then the benchmark proper.
    per_band: dict[str, list[float]] = {}
    for _ in range(TIMED_PASSES):
        for band, term in terms:
            elapsed = _time_ms(lambda t=term: session_search(tool_store, query=t, limit=3))
            per_band.setdefault(band, []).append(elapsed)
    all_times = [t for times in per_band.values() for t in times]
    discovery_median = statistics.median(all_times)

    cycle = itertools.cycle([term for _band, term in terms])
    benchmark.group = f"tool discovery {query_class}"
    benchmark.pedantic(
        lambda: session_search(tool_store, query=next(cycle), limit=3),
        rounds=len(terms) * TIMED_PASSES,
        iterations=1,
        warmup_rounds=1,
    )

    scroll_times: list[float] = []
    for _ in range(TIMED_PASSES):
        for sid, mid in anchors:
            scroll_times.append(
                _time_ms(
                    lambda s=sid, m=mid: session_search(
                        tool_store, session_id=s, around_message_id=m
                    )
                )
            )
    scroll_median = statistics.median(scroll_times) if scroll_times else None
    if anchors:
        out = session_search(tool_store, session_id=anchors[0][0], around_message_id=anchors[0][1])
        assert out["success"] is True, out

    routes = sorted({_route(tool_store, term) for _band, term in terms})
    info = {
        "messages": bench_size,
        "query_class": query_class,
        "terms": len(terms),
        "results": hits,
        "routes": ",".join(routes),
        "discovery_median_ms": round(discovery_median, 3),
        "discovery_p90_ms": round(_quantile(all_times, 0.9), 3),
        "discovery_median_ms_by_band": {
            band: round(statistics.median(times), 3) for band, times in per_band.items()
        },
        "discovery_target_ms": DISCOVERY_TARGET_MS,
        "discovery_meets_target": discovery_median <= DISCOVERY_TARGET_MS,
        "scroll_median_ms": None if scroll_median is None else round(scroll_median, 3),
        "scroll_target_ms": SCROLL_TARGET_MS,
        "scroll_meets_target": None if scroll_median is None else scroll_median <= SCROLL_TARGET_MS,
    }
    benchmark.extra_info.update(info)
    bench_report.add(
        TABLE,
        {
            "class": query_class,
            "messages": bench_size,
            "route": info["routes"],
            "discovery median ms": info["discovery_median_ms"],
            "discovery p90 ms": info["discovery_p90_ms"],
            "scroll median ms": info["scroll_median_ms"] if scroll_median is not None else "-",
            "targets met": _verdict(info),
        },
    )


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def _verdict(info: dict[str, Any]) -> str:
    ok = info["discovery_meets_target"] and info["scroll_meets_target"] is not False
    return "yes" if ok else "NO"
