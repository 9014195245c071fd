"""``hermes-fts bench``: the index routes against the LIKE scan, on your own store.

Works on a store opened read-only, samples query terms from the store's own
index vocabulary across frequency bands (rare … very common), and for each
term times ``search_messages(term, limit=20)`` against the LIKE scan that a
store without indexes would run (``search_messages(term, route="like_scan")``),
checks recall against that scan, and reports index sizes as multiples of the
text they cover.  The benchmark suite in ``benchmarks/`` reports the same
numbers on generated stores.
"""

from __future__ import annotations

import random
import re
import sqlite3
import statistics
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from .index import schema
from .query.plan import has_cjk, match_expression, parse_query
from .store import SessionStore

CLASSES = ("cjk1", "cjk2", "cjk3", "latin_word")
BANDS = ("rare", "mid", "common", "very_common")
CONVERSATION_ROLES = ["user", "assistant", "system"]
_LATIN = re.compile(r"[a-z][a-z0-9]{2,63}")  # words people search for, not blobs


def median_ms(fn: Callable[[], Any], repeats: int = 3) -> float:
    """Median wall time of ``repeats`` calls, after one warm-up call, in ms."""
    return interleaved_median_ms({"fn": fn}, repeats)["fn"]


def interleaved_median_ms(fns: dict[str, Callable[[], Any]], repeats: int) -> dict[str, float]:
    """Median wall time in ms of each of ``fns``, after one warm-up call each, their
    calls interleaved so that a change in the machine's load hits them all alike
    (their ratios are what a benchmark reports)."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for fn in fns.values():
        fn()
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - t0) * 1000.0)
    return {name: statistics.median(v) for name, v in times.items()}


# Terms kept per class of a vocabulary: a uniform sample this large has the
# frequency bands of the whole (millions of terms on a large store) in bounded memory.
VOCAB_SAMPLE = 20_000


def _vocab_sample(
    conn: sqlite3.Connection,
    table: str,
    classify: Callable[[str], str | None],
    rng: random.Random,
) -> dict[str, list[tuple[str, int]]]:
    """Per class ``classify`` gives a term (None: left out), a uniform sample of up to
    ``VOCAB_SAMPLE`` (term, documents) of an index's vocabulary, read in one pass."""
    name = f"hermes_bench_vocab_{table}"
    conn.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{name} USING fts5vocab(main, {table}, row)"
    )
    kept: dict[str, list[tuple[str, int]]] = {}
    seen: dict[str, int] = {}
    cursor = conn.execute(f"SELECT term, doc FROM temp.{name}")
    try:
        for term, docs in cursor:
            cls = classify(term)
            if cls is None:
                continue
            sample = kept.setdefault(cls, [])
            seen[cls] = seen.get(cls, 0) + 1
            if len(sample) < VOCAB_SAMPLE:
                sample.append((term, docs))
            elif (slot := rng.randrange(seen[cls])) < VOCAB_SAMPLE:
                sample[slot] = (term, docs)
    finally:
        # Closed first: a read cut short (Ctrl-C) holds the table, whose DROP
        # would fail with "database table is locked" in place of the interrupt.
        cursor.close()
        conn.execute(f"DROP TABLE IF EXISTS temp.{name}")
    return kept


def _cjk_class(term: str) -> str | None:
    if not all(has_cjk(c) for c in term):
        return None
    return {1: "cjk1", 2: "cjk2"}.get(len(term))


def _latin_class(term: str) -> str | None:
    return "latin_word" if _LATIN.fullmatch(term) else None


def _cjk_or_latin_class(term: str) -> str | None:
    return _cjk_class(term) or _latin_class(term)


def _banded(terms: list[tuple[str, int]], per_band: int, rng: random.Random) -> dict[str, list]:
    """Split terms by document count into quartiles and sample each."""
    ranked = sorted(terms, key=lambda x: (x[1], x[0]))
    out: dict[str, list[str]] = {}
    for i, band in enumerate(BANDS):
        part = ranked[i * len(ranked) // 4 : (i + 1) * len(ranked) // 4]
        if band == "very_common":
            part = ranked[-max(1, len(ranked) // 100) :]  # the top percent
        out[band] = [t for t, _ in rng.sample(part, min(per_band, len(part)))]
    return out


def sample_terms(store: SessionStore, per_band: int = 2, seed: int = 0) -> dict[str, dict]:
    """Query terms per class and frequency band, taken from the store's own indexes."""
    rng = random.Random(seed)
    conn = store._conn
    classes: dict[str, dict[str, list[str]]] = {}
    state = store.index_state()
    cjk = state[schema.CJK]["exists"] and store.cjk_available
    # Latin words from the word index, or from the CJK index, which holds them
    # as unicode61 reads them (the word index is opt-in): then one pass reads both.
    words_apart = state[schema.BASE]["exists"]
    vocab = {}
    if cjk:
        classify = _cjk_class if words_apart else _cjk_or_latin_class
        vocab = _vocab_sample(conn, schema.CJK, classify, rng)
    for cls in ("cjk1", "cjk2"):
        if vocab.get(cls):
            classes[cls] = _banded(vocab[cls], per_band, rng)
    if cjk:
        longer = _longer_cjk_terms(conn, rng, per_band * 8)
        if longer:
            classes["cjk3"] = _banded(longer, per_band, rng)
    if words_apart:
        vocab = _vocab_sample(conn, schema.BASE, _latin_class, rng)
    if vocab.get("latin_word"):
        classes["latin_word"] = _banded(vocab["latin_word"], per_band, rng)
    return classes


def _longer_cjk_terms(conn: sqlite3.Connection, rng: random.Random, n: int) -> list:
    """3–4 character CJK substrings of random messages, with their document counts."""
    top = conn.execute("SELECT MAX(id) FROM messages").fetchone()[0] or 0
    found: dict[str, int] = {}
    for _ in range(n * 20):
        if len(found) >= n or not top:
            break
        row = conn.execute(
            "SELECT content FROM messages WHERE id >= ? AND role <> 'tool' ORDER BY id LIMIT 1",
            (rng.randint(1, top),),
        ).fetchone()
        text = row[0] if row and isinstance(row[0], str) else ""
        runs = [r for r in re.findall(r"\S+", text) if len(r) >= 3]
        for run in runs:
            start = rng.randrange(0, len(run) - 2)
            term = run[start : start + rng.choice((3, 4))]
            if len(term) >= 3 and all(has_cjk(c) for c in term):
                found[term] = 0
                break
    for term in found:
        (found[term],) = conn.execute(
            f"SELECT count(*) FROM {schema.CJK} WHERE {schema.CJK} MATCH ?",
            (match_expression(parse_query(f'"{term}"'), "fts_cjk"),),
        ).fetchone()
    return list(found.items())


def recall(store: SessionStore, term: str) -> float | None:
    """Share of the LIKE scan's rows (what the route promises) that the index returns."""
    fields = ["id"]
    got = {
        r["id"]
        for r in store.search_messages(
            term, role_filter=CONVERSATION_ROLES, limit=10**7, fields=fields
        )
    }
    truth_rows = store.search_messages(
        term, role_filter=CONVERSATION_ROLES, limit=10**7, fields=fields, route="like_scan"
    )
    truth = {r["id"] for r in truth_rows}
    if not has_cjk(term):  # the word index matches words, LIKE substrings
        word = re.compile(r"(?<![a-z0-9])" + re.escape(term.lower()) + r"(?![a-z0-9])")
        marks = ",".join("?" for _ in truth)
        truth = (
            {
                i
                for i, c in store._conn.execute(
                    f"SELECT id, content FROM messages WHERE id IN ({marks})", list(truth)
                )
                if isinstance(c, str) and word.search(c.lower())
            }
            if truth
            else set()
        )
    if not truth:
        return None
    return len(got & truth) / len(truth)


def run(
    store: SessionStore,
    per_band: int = 2,
    repeats: int = 3,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Time every sampled term both ways; return per-term rows, per-class summaries, sizes.

    ``progress`` hears what is being done: the vocabulary read (seconds on a large
    store), then each term as "term N of TOTAL: CLASS BAND TERM".
    """
    if progress:
        progress("reading the indexes' vocabulary for terms")
    sampled = sample_terms(store, per_band, seed)
    total = sum(len(terms) for bands in sampled.values() for terms in bands.values())
    rows: list[dict[str, Any]] = []
    for cls, bands in sampled.items():
        for band, terms in bands.items():
            for term in terms:
                if progress:
                    progress(f"timing term {len(rows) + 1} of {total}: {cls} {band} {term}")
                index_ms = median_ms(partial(store.search_messages, term, limit=20), repeats)
                like_ms = median_ms(
                    partial(store.search_messages, term, limit=20, route="like_scan"), repeats
                )
                rows.append(
                    {
                        "class": cls,
                        "band": band,
                        "term": term,
                        "route": store.search(term, limit=20).route,
                        "index_ms": round(index_ms, 3),
                        "like_ms": round(like_ms, 3),
                        "ratio": round(like_ms / index_ms, 1) if index_ms else None,
                        "recall": recall(store, term),
                    }
                )
    status = store.status()
    return {
        "db": status["db"],
        "text_bytes": status["text_bytes"],
        "sizes": {
            index: {"bytes": info["bytes"], "x_text": info["x_text"]}
            for index, info in status["indexes"].items()
            if info["bytes"] is not None
        },
        "classes": _summary(rows),
        "terms": rows,
    }


def _summary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per class of the timed ``rows``: medians, the worst ratio and term, the least recall."""
    summary = []
    for cls in CLASSES:
        mine = [r for r in rows if r["class"] == cls]
        if not mine:
            continue
        ratios = [r["ratio"] for r in mine if r["ratio"] is not None]
        recalls = [r["recall"] for r in mine if r["recall"] is not None]
        worst = min(mine, key=lambda r: r["ratio"] or 0)
        summary.append(
            {
                "class": cls,
                "terms": len(mine),
                "routes": ",".join(sorted({r["route"] for r in mine})),
                "median_index_ms": round(statistics.median(r["index_ms"] for r in mine), 3),
                "median_like_ms": round(statistics.median(r["like_ms"] for r in mine), 3),
                "median_ratio": round(statistics.median(ratios), 1) if ratios else None,
                "worst_ratio": worst["ratio"],
                "worst_term": worst["term"],
                "min_recall": min(recalls) if recalls else None,
            }
        )
    return summary
