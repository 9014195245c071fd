"""Session recall: does a search find the conversation a question is about?

Each query is written from one message of the generated corpus
(``benchmarks.corpus``): some of its words, a few of them swapped for other
words of the language (a paraphrase) and the rest dropped, in two forms:

* ``question``: the words inside a question, as a model asks it ("When did
  we talk about ...?", "我们什么时候讨论过...的事情？");
* ``keywords``: the words alone, side by side.

The answer is the message's session.  hermes-fts is asked for sessions
(``search_messages(sort="sessions")``, what ``session_search`` discovery reads)
and compared with plain BM25 over whole sessions (``rank_bm25``: every visible
message of a session is one document, Latin words and CJK bigrams as tokens).
Both read the same store.  Reported per engine and form: success@1/3/5/10
(the answer among the first k sessions), MRR over the first 10 and the share
of queries with no result; and hermes-fts' time per query.

    python -m benchmarks.session_recall --messages 20000 --queries 300

``--engines hermes-fts-rows`` reads the sessions of the first ranked rows
instead, as discovery did before (and as any hermes-fts version can answer,
for a before/after comparison).
"""

from __future__ import annotations

import argparse
import random
import re
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.corpus import build_store, cache_dir, lexicon, term_samples

KS = (1, 3, 5, 10)
_LATIN = re.compile(r"[A-Za-z0-9_]+")
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7a3]+")
# Content words only: the question templates bring the function words.
_EN_SKIP = frozenset("the a an and or of to in is it that this for on with as be was are".split())

QUESTIONS = {
    "en": (
        "When did we talk about {}?",
        "What did I say about {}?",
        "Do you remember the conversation about {}?",
        "Where did we discuss {}?",
    ),
    "zh": ("我们什么时候讨论过{}的事情？", "你还记得{}吗？", "上次说的{}是什么？"),
    "ja": ("いつ{}について話しましたか", "{}のことを覚えていますか"),
    "ko": ("우리가 언제 {}에 대해 이야기했나요?", "{} 기억나요?"),
}
LANG_SHARE = {"en": 0.4, "zh": 0.25, "ja": 0.2, "ko": 0.15}


@dataclass(frozen=True)
class Case:
    lang: str
    session_id: str
    question: str
    keywords: str


def tokens(text: str) -> list[str]:
    """BM25 tokens: lower-cased Latin words and the bigrams of each CJK run."""
    out = [w.lower() for w in _LATIN.findall(text)]
    for run in _CJK_RUN.findall(text):
        out += [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
    return out


def _lang(text: str) -> str:
    if re.search(r"[\uac00-\ud7a3]", text):
        return "ko"
    if re.search(r"[\u3040-\u30ff]", text):
        return "ja"
    if re.search(r"[\u3400-\u9fff]", text):
        return "zh"
    return "en"


def _words(lang: str, text: str, rng: random.Random) -> list[str]:
    """Candidate query words of a message, in message order."""
    if lang == "en":
        return list(
            dict.fromkeys(
                w
                for w in _LATIN.findall(text)
                if w.isalpha() and len(w) >= 3 and w.lower() not in _EN_SKIP
            )
        )
    if lang == "ko":
        return list(
            dict.fromkeys(
                w
                for w in (p.strip(".?!,") for p in text.split())
                if len(w) >= 2 and _CJK_RUN.fullmatch(w)
            )
        )
    pieces = []
    for run in _CJK_RUN.findall(text):
        start = 0
        while start + 2 <= len(run):
            size = rng.randint(2, 4)
            pieces.append(run[start : start + size])
            start += size + rng.randint(0, 3)
    return list(dict.fromkeys(p for p in pieces if len(p) >= 2))


def make_cases(db: Path, count: int, seed: int = 1) -> list[Case]:
    """``count`` queries, each from one visible user or assistant message."""
    rng = random.Random(f"session-recall/{seed}")
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = conn.execute(
        "SELECT m.session_id, m.content FROM messages m WHERE m.role IN ('user', 'assistant') "
        "AND m.active = 1 AND m.compacted = 0 AND length(m.content) >= 40"
    ).fetchall()
    conn.close()
    rng.shuffle(rows)
    wanted = {lang: round(count * share) for lang, share in LANG_SHARE.items()}
    cases: list[Case] = []
    for session_id, content in rows:
        lang = _lang(content)
        if wanted.get(lang, 0) <= 0:
            continue
        words = _words(lang, content, rng)
        if len(words) < 5:
            continue
        picked = rng.sample(words, min(len(words), rng.randint(3, 6)))
        # A paraphrase: about a quarter of the words become other words.
        lex = lexicon(lang)
        picked = [lex.one(rng) if rng.random() < 0.25 else w for w in picked]
        picked = list(dict.fromkeys(picked))
        if lang in ("zh", "ja"):
            joined = "、".join(picked) if lang == "zh" else "と".join(picked)
        elif lang == "en":
            joined = ", ".join(picked[:-1]) + " and " + picked[-1]
        else:
            joined = " ".join(picked)
        question = rng.choice(QUESTIONS[lang]).format(joined)
        cases.append(Case(lang, session_id, question, " ".join(picked)))
        wanted[lang] -= 1
        if sum(wanted.values()) <= 0:
            break
    return cases


def bm25_sessions(db: Path) -> Callable[[str, int], list[str]]:
    """Plain BM25 over whole sessions: ``search(query, k)`` gives the top session ids."""
    from rank_bm25 import BM25Okapi

    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    docs: dict[str, list[str]] = {}
    for sid, content, tool_name, tool_calls in conn.execute(
        "SELECT session_id, content, tool_name, tool_calls FROM messages "
        "WHERE active = 1 ORDER BY id"
    ):
        doc = docs.setdefault(sid, [])
        for text in (content, tool_name, tool_calls):
            if text:
                doc += tokens(text)
    conn.close()
    ids = list(docs)
    index = BM25Okapi([docs[s] for s in ids])

    def search(query: str, k: int) -> list[str]:
        words = [t for t in tokens(query) if t != "or"]
        if not words:
            return []
        scores = index.get_scores(words)
        top = sorted(range(len(ids)), key=lambda i: -scores[i])[:k]
        return [ids[i] for i in top if scores[i] > 0]

    return search


def hermes_sessions(
    db: Path, by_rows: bool = False
) -> tuple[Callable[[str, int], list[str]], Callable[[], None]]:
    """hermes-fts' sessions for a query: ``sort="sessions"``, or with ``by_rows`` the
    sessions of the first ranked rows in order (what discovery read before
    sessions were ranked; any hermes-fts version answers it)."""
    import hermes_fts

    store = hermes_fts.SessionStore(str(db))

    def search(query: str, k: int) -> list[str]:
        if by_rows:
            rows = store.search_messages(query, limit=20 * k, fields=("id", "session_id"))
        else:
            rows = store.search_messages(
                query, limit=k, sort="sessions", fields=("id", "session_id")
            )
        return list(dict.fromkeys(r["session_id"] for r in rows))[:k]

    return search, store.close


@dataclass
class Score:
    hits: dict[int, int]
    reciprocal: float
    empty: int
    total: int
    times_ms: list[float]

    def row(self) -> list[str]:
        n = max(self.total, 1)
        cells = [f"{self.hits[k] / n:.3f}" for k in KS]
        cells += [f"{self.reciprocal / n:.3f}", f"{self.empty / n:.3f}"]
        if self.times_ms:
            ordered = sorted(self.times_ms)
            p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
            cells += [f"{statistics.median(ordered):.1f}", f"{p99:.1f}"]
        else:
            cells += ["", ""]
        return cells


def evaluate(
    search: Callable[[str, int], list[str]], cases: Sequence[Case], form: str, timed: bool = False
) -> Score:
    score = Score({k: 0 for k in KS}, 0.0, 0, len(cases), [])
    for case in cases:
        query = getattr(case, form)
        started = time.perf_counter()
        found = search(query, max(KS))
        if timed:
            score.times_ms.append((time.perf_counter() - started) * 1000)
        if not found:
            score.empty += 1
        if case.session_id in found:
            rank = found.index(case.session_id) + 1
            score.reciprocal += 1.0 / rank
            for k in KS:
                score.hits[k] += rank <= k
    return score


def run(
    messages: int,
    queries: int,
    db: Path | None = None,
    engines: Sequence[str] = ("hermes-fts", "bm25"),
) -> list[list[str]]:
    if db is None:
        db = cache_dir() / f"session-recall-{messages}.db"
        if not db.exists():
            db.parent.mkdir(parents=True, exist_ok=True)
            build_store(db, messages)
    cases = make_cases(db, queries)
    table = []
    for engine in engines:
        close: Callable[[], None] = lambda: None  # noqa: E731
        if engine == "bm25":
            search = bm25_sessions(db)
        else:
            search, close = hermes_sessions(db, by_rows=engine == "hermes-fts-rows")
        for form in ("question", "keywords"):
            for lang in (None, *LANG_SHARE):
                picked = [c for c in cases if lang is None or c.lang == lang]
                score = evaluate(search, picked, form, timed=engine != "bm25")
                table.append([engine, form, lang or "all", str(len(picked)), *score.row()])
        close()
    return table


def _bounds_state(db: Path) -> str:
    """Whether the store has rank bounds (``optimize-storage`` builds them)."""
    import sqlite3

    from hermes_fts.index import rank_bounds

    conn = sqlite3.connect(db)
    try:
        lag = rank_bounds.lag(conn)
    finally:
        conn.close()
    return "none (run optimize-storage)" if lag is None else str(lag)


def _percentiles(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def latency(db: Path, queries: int, rounds: int = 3) -> list[list[str]]:
    """Discovery's time per query beside the raw FTS5 MATCH, in milliseconds (p50, p99).

    Query sets: common words alone (``corpus.term_samples``, the very common
    and common bands of each language) and the benchmark's questions.
    ``discovery``: ``session_search`` with ``detail="index"`` (the search
    alone, no surrounding messages); ``sessions``: ``search_messages(sort=
    "sessions", limit=12)``; ``raw MATCH``: the index's best 12 rows
    for the query's MATCH text (``ORDER BY rank LIMIT 12``), what FTS5 alone
    costs for the same words.
    """
    import hermes_fts
    from hermes_fts.query.plan import match_expression
    from hermes_fts.search import route

    store = hermes_fts.SessionStore(str(db))
    common = [
        t
        for cls in ("latin_word", "zh2", "ja", "ko")
        for band in term_samples(cls, ("very_common", "common"), per_band=5).values()
        for t in band
    ]
    sets = {"common word": common, "question": [c.question for c in make_cases(db, queries)]}
    table = []
    state = store.index_state()
    for name, texts in sets.items():
        timings: dict[str, list[float]] = {"discovery": [], "sessions": [], "raw MATCH": []}
        plans = [route.plan_search(state, text) for text in texts]
        # One pass over every text per measure: none of them runs on the pages
        # another measure just read for the same text.
        for _ in range(rounds):
            for text in texts:
                started = time.perf_counter()
                hermes_fts.session_search(store, query=text, detail="index")
                timings["discovery"].append((time.perf_counter() - started) * 1000)
            for text in texts:
                started = time.perf_counter()
                store.search_messages(text, limit=12, sort="sessions", fields=("id", "session_id"))
                timings["sessions"].append((time.perf_counter() - started) * 1000)
            for plan in plans:
                if plan.route in route.INDEX_ROUTES:
                    table_name = route.INDEX_ROUTES[plan.route]
                    expression = match_expression(plan.query, plan.route)
                    started = time.perf_counter()
                    store._conn.execute(
                        f"SELECT rowid FROM {table_name} WHERE {table_name} MATCH ? "
                        f"ORDER BY rank LIMIT 12",
                        (expression,),
                    ).fetchall()
                    timings["raw MATCH"].append((time.perf_counter() - started) * 1000)
        for what, times in timings.items():
            p50, p99 = _percentiles(times)
            table.append([name, what, str(len(texts)), f"{p50:.1f}", f"{p99:.1f}"])
    store.close()
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--db", type=Path, default=None, help="a store to read instead")
    parser.add_argument(
        "--engines",
        default="hermes-fts,bm25",
        help="comma-separated: hermes-fts, hermes-fts-rows, bm25",
    )
    parser.add_argument("--all-only", action="store_true", help="no per-language rows")
    parser.add_argument(
        "--latency", action="store_true", help="time discovery beside the raw FTS5 MATCH instead"
    )
    args = parser.parse_args(argv)
    if args.latency:
        db = args.db or cache_dir() / f"session-recall-{args.messages}.db"
        if not db.exists():
            build_store(db, args.messages)
        print(f"rank bounds: {_bounds_state(db)}")
        print("| queries | what | n | p50 ms | p99 ms |")
        print("|---|---|---|---|---|")
        for row in latency(db, args.queries):
            print("| " + " | ".join(row) + " |", flush=True)
        return 0
    head = [
        "engine",
        "form",
        "lang",
        "n",
        *(f"s@{k}" for k in KS),
        "MRR",
        "empty",
        "p50 ms",
        "p99 ms",
    ]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for row in run(args.messages, args.queries, args.db, args.engines.split(",")):
        if not args.all_only or row[2] == "all":
            print("| " + " | ".join(row) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__: list[Any] = ["Case", "bm25_sessions", "evaluate", "make_cases", "run", "tokens"]
