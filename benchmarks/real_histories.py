"""Session recall on histories that look like real ones (``benchmarks.histories``).

Stores are written the way Hermes writes them: by hermes-agent 0.19.0's own
``SessionDB`` (``--writer hermes``, in a venv built once, as the plugin tests
do) or, where that venv cannot be had, by ``hermes_fts.SessionStore``'s
``add_session``/``add_messages`` into the same Hermes schema (``--writer
direct``).  Then ``optimize-storage`` runs, as a hermes-fts user has it.  Two
layouts: every person's history pooled in one store, and one store per person
(each person's questions asked of their own store).

Engines, each asked the question as a model writes it:

* ``hermes-fts``: the ``session_search`` tool (``query=question, limit=10``),
  discovery as a model calls it;
* ``hermes-fts-or``: the same tool with the question's keywords joined by OR
  (``Anna OR sister OR bouldering``), as a model retrying would write them;
* ``bm25-session``: plain BM25 (rank_bm25) over whole sessions, every
  visible message's content, tool name and tool calls, Latin words and CJK
  bigrams as tokens;
* ``bm25-message``: the same BM25 over single messages, a session scored by
  its best message;
* ``deja-vu``: the peer, ``deja search --json`` on the same store
  (``benchmarks.deja``).

Reported per engine, layout and language: success@1/5/10 (the right session
among the first k), MRR over the first 10, the share of questions answered
with nothing, and for hermes-fts and deja-vu the time per question; then the
misses of hermes-fts grouped by question feature.

    python -m benchmarks.real_histories --help
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import corpus, deja
from benchmarks import histories as H
from benchmarks.deja import DejaUnavailable
from benchmarks.session_recall import tokens

KS = (1, 5, 10)
ENGINES = ("hermes-fts", "hermes-fts-or", "bm25-session", "bm25-message", "deja-vu")
TIMED = ("hermes-fts", "hermes-fts-or", "deja-vu")
LAYOUTS = ("pooled", "per-person")
Search = Callable[[str], list[str]]


# --------------------------------------------------------------------------- stores


def _session_rows(sessions: Sequence[H.Session]) -> list[dict[str, Any]]:
    return [
        {
            "id": s.id,
            "source": s.source,
            "model": s.model,
            "started_at": s.started_at,
            "ended_at": s.ended_at,
            "messages": [{k: v for k, v in vars(m).items() if v is not None} for m in s.messages],
        }
        for s in sessions
    ]


def _write_hermes(path: Path, sessions: Sequence[H.Session], cache: Path) -> None:
    from benchmarks._hermes import hermes_env

    he = hermes_env()
    keep = os.environ.get("HERMES_FTS_TEST_VENV", "").strip()
    venv = he.ensure_venv(Path(keep) if keep else cache / "hermes-venv")
    spec = path.with_suffix(".json")
    spec.write_text(json.dumps(_session_rows(sessions), ensure_ascii=False), encoding="utf-8")
    writer = Path(__file__).with_name("_hermes_writer.py")
    home = path.parent / (path.name + ".home")
    home.mkdir(exist_ok=True)
    proc = subprocess.run(
        [str(he.venv_python(venv)), str(writer), str(path), str(spec)],
        env=he.clean_env(home),
        capture_output=True,
        text=True,
        cwd=str(home),
    )
    spec.unlink()
    shutil.rmtree(home, ignore_errors=True)
    if proc.returncode != 0:
        raise RuntimeError(f"Hermes' SessionDB could not write {path}:\n{proc.stderr[-3000:]}")


def _write_direct(path: Path, sessions: Sequence[H.Session]) -> None:
    import hermes_fts

    store = hermes_fts.SessionStore(str(path))
    try:
        for s in sessions:
            store.add_session(
                id=s.id,
                source=s.source,
                model=s.model,
                started_at=s.started_at,
                ended_at=s.ended_at,
                end_reason="user_exit",
            )
            store.add_messages(
                [
                    {
                        "session_id": s.id,
                        "role": m.role,
                        "content": m.content,
                        "tool_name": m.tool_name,
                        "tool_calls": json.dumps(m.tool_calls) if m.tool_calls else None,
                        "timestamp": m.timestamp,
                    }
                    for m in s.messages
                ]
            )
    finally:
        store.close()


def build_store(path: Path, sessions: Sequence[H.Session], writer: str, cache: Path) -> Path:
    """Write ``sessions`` at ``path`` (atomically), then ``optimize-storage`` it."""
    import hermes_fts

    if path.exists():
        return path
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    for suffix in ("", "-wal", "-shm"):
        Path(f"{tmp}{suffix}").unlink(missing_ok=True)
    if writer == "hermes":
        _write_hermes(tmp, sessions, cache)
    else:
        _write_direct(tmp, sessions)
    store = hermes_fts.SessionStore(str(tmp))
    try:
        store.optimize_storage(vacuum=False)
    finally:
        store.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{tmp}{suffix}").unlink(missing_ok=True)
    os.replace(tmp, path)
    return path


@dataclass
class Layout:
    name: str
    # the day the questions' relative words ("last week") count from
    now: float
    # (store, the questions asked of it)
    parts: list[tuple[Path, list[H.Question]]] = field(default_factory=list)


def layouts(
    h: H.Histories, writer: str, cache: Path, key: str, names: Sequence[str]
) -> list[Layout]:
    out = []
    for name in names:
        layout = Layout(name, h.now)
        if name == "pooled":
            path = cache / f"{key}-pooled.db"
            layout.parts.append((build_store(path, h.sessions, writer, cache), list(h.questions)))
        else:
            for person in h.people:
                path = cache / f"{key}-{person.key}.db"
                store = build_store(path, h.sessions_of(person.key), writer, cache)
                layout.parts.append((store, [q for q in h.questions if q.person == person.key]))
        out.append(layout)
    return out


def store_key(args: argparse.Namespace, h: H.Histories) -> str:
    """Names a cached store: what generated it, who wrote it and the store code."""
    day = dt.datetime.fromtimestamp(h.now, dt.timezone.utc).strftime("%Y%m%d")
    code = corpus._store_code_tag() + corpus._optimize_code_tag()
    tag = hashlib.sha1(Path(H.__file__).with_name("histories_vocab.py").read_bytes()).hexdigest()[
        :6
    ]
    return (
        f"histories-v{H.HISTORIES_VERSION}{tag}-s{args.seed}-p{args.people_per_lang}"
        f"-n{args.sessions}-{day}-{args.writer}-{code}"
    )


# --------------------------------------------------------------------------- engines


def _bm25(docs: dict[str, list[list[str]]], per_message: bool) -> Search:
    from rank_bm25 import BM25Okapi

    ids: list[str] = []
    corpus_docs: list[list[str]] = []
    for sid, parts in docs.items():
        if per_message:
            ids += [sid] * len(parts)
            corpus_docs += parts
        else:
            ids.append(sid)
            corpus_docs.append([t for part in parts for t in part])
    index = BM25Okapi(corpus_docs)

    def search(query: str) -> list[str]:
        words = [t for t in tokens(query) if t != "or"]
        if not words:
            return []
        scores = index.get_scores(words)
        best: dict[str, float] = {}
        for i in sorted(range(len(ids)), key=lambda i: -scores[i]):
            if scores[i] <= 0 or len(best) >= max(KS):
                break
            best.setdefault(ids[i], scores[i])
        return list(best)

    return search


def bm25(db: Path, per_message: bool) -> Search:
    import sqlite3

    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    docs: dict[str, list[list[str]]] = {}
    for sid, *texts in conn.execute(
        "SELECT session_id, content, tool_name, tool_calls FROM messages WHERE active = 1 ORDER BY id"
    ):
        docs.setdefault(sid, []).append([t for text in texts if text for t in tokens(text)])
    conn.close()
    return _bm25(docs, per_message)


def or_query(keywords: Sequence[str]) -> str:
    """Keywords joined by OR, a keyword of several words quoted as a phrase."""
    return " OR ".join(f'"{k}"' if " " in k else k for k in keywords)


@contextmanager
def engine(name: str, db: Path, cache: Path, now: float) -> Iterator[Search]:
    """``name``'s search of ``db``; hermes-fts counts time words from ``now``, the
    day the questions were written on, not from the day the benchmark runs."""
    if name.startswith("bm25"):
        yield bm25(db, per_message=name == "bm25-message")
        return
    if name == "deja-vu":
        home = Path(tempfile.mkdtemp(prefix="deja-home-", dir=cache))
        try:
            peer = deja.Deja(deja.binary(cache), db, home)
            yield lambda query: peer.search(query, max(KS))
        finally:
            shutil.rmtree(home, ignore_errors=True)
        return
    import hermes_fts

    store = hermes_fts.SessionStore(str(db), readonly=True)

    def search(query: str) -> list[str]:
        found = hermes_fts.session_search(store, query=query, limit=max(KS), now=now)
        if not found.get("success"):
            raise RuntimeError(f"session_search({query!r}) failed: {found.get('error')}")
        return [r["session_id"] for r in found.get("results") or []]

    try:
        yield search
    finally:
        store.close()


# --------------------------------------------------------------------------- scoring


@dataclass(frozen=True)
class Outcome:
    question: H.Question
    rank: int | None  # 1-based rank of the right session in the first 10, or None
    empty: bool
    ms: float
    top: str | None = None  # the first session found


def ask(search: Search, questions: Sequence[H.Question], form: str) -> list[Outcome]:
    out = []
    for q in questions:
        text = q.text if form == "question" else or_query(q.keywords)
        started = time.perf_counter()
        found = search(text)
        ms = (time.perf_counter() - started) * 1000
        rank = found.index(q.session_id) + 1 if q.session_id in found else None
        out.append(Outcome(q, rank, not found, ms, found[0] if found else None))
    return out


def run_layout(layout: Layout, engine_name: str, cache: Path) -> list[Outcome]:
    form = "keywords" if engine_name == "hermes-fts-or" else "question"
    base = "hermes-fts" if engine_name == "hermes-fts-or" else engine_name
    outcomes: list[Outcome] = []
    for db, questions in layout.parts:
        with engine(base, db, cache, layout.now) as search:
            outcomes += ask(search, questions, form)
    return outcomes


def _pct(times: list[float], q: float) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def score(outcomes: Sequence[Outcome], timed: bool) -> list[str]:
    n = max(len(outcomes), 1)
    cells = [str(len(outcomes))]
    cells += [f"{sum(o.rank is not None and o.rank <= k for o in outcomes) / n:.3f}" for k in KS]
    cells.append(f"{sum(1 / o.rank for o in outcomes if o.rank) / n:.3f}")
    cells.append(f"{sum(o.empty for o in outcomes) / n:.3f}")
    if timed and outcomes:
        times = [o.ms for o in outcomes]
        cells += [f"{statistics.median(times):.1f}", f"{_pct(times, 0.99):.1f}"]
    else:
        cells += ["", ""]
    return cells


def latency(layout: Layout, names: Sequence[str], cache: Path, rounds: int) -> list[list[str]]:
    """Time per question of ``names`` on the same stores, interleaved question by
    question (so load on the shared machine hits every engine alike), ``rounds``
    passes: p50 and p99 in milliseconds."""
    times: dict[str, list[float]] = {n: [] for n in names}
    for db, questions in layout.parts:
        with contextlib.ExitStack() as stack:
            engines = {n: stack.enter_context(engine(n, db, cache, layout.now)) for n in names}
            for _ in range(rounds):
                for q in questions:
                    for name, search in engines.items():
                        started = time.perf_counter()
                        search(q.text)
                        times[name].append((time.perf_counter() - started) * 1000)
    return [
        [n, layout.name, str(len(t)), f"{statistics.median(t):.1f}", f"{_pct(t, 0.99):.1f}"]
        for n, t in times.items()
    ]


RESULT_HEAD = [
    "engine",
    "layout",
    "lang",
    "n",
    *(f"S@{k}" for k in KS),
    "MRR",
    "empty",
    "p50 ms",
    "p99 ms",
]


def result_rows(
    results: dict[tuple[str, str], list[Outcome]], langs: Sequence[str]
) -> list[list[str]]:
    rows = []
    for (name, layout), outcomes in results.items():
        for lang in ("all", *langs):
            picked = [o for o in outcomes if lang == "all" or o.question.lang == lang]
            rows.append([name, layout, lang, *score(picked, name in TIMED)])
    return rows


FEATURES = (
    "possessive",
    "name",
    "project",
    "term",
    "inflected",
    "category",
    "date_month",
    "date_day",
    "last_week",
    "last_month",
    "absent_words",
)


def _rank(o: Outcome) -> int:
    return o.rank or max(KS) + 1


def feature_rows(
    results: dict[tuple[str, str], list[Outcome]], layout: str, langs: Sequence[str] = ("all",)
) -> list[list[str]]:
    """Per question feature: every engine's S@1 / S@10, then how often hermes-fts ranks
    the right session below (lost) or above (won) whole-session BM25, and its empty share."""
    names = [n for n, lay in results if lay == layout]
    rows = []
    for feature in FEATURES:
        for lang in langs:
            picked = {
                n: [
                    o
                    for o in results[(n, layout)]
                    if feature in o.question.features and lang in ("all", o.question.lang)
                ]
                for n in names
            }
            count = len(next(iter(picked.values()), []))
            if not count:
                continue
            cells = [
                f"{sum(_rank(o) <= 1 for o in got) / count:.2f} / "
                f"{sum(_rank(o) <= 10 for o in got) / count:.2f}"
                for got in picked.values()
            ]
            ours, bm25 = picked.get("hermes-fts", []), picked.get("bm25-session", [])
            pairs = list(zip(ours, bm25))
            lost = sum(_rank(a) > _rank(b) for a, b in pairs)
            won = sum(_rank(a) < _rank(b) for a, b in pairs)
            empty = sum(o.empty for o in ours)
            rows.append([feature, lang, str(count), *cells, str(lost), str(won), str(empty)])
    return rows


FEATURE_TAIL = ["lost to bm25-session", "won", "hermes-fts empty"]


def markdown(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def misses(outcomes: Sequence[Outcome], limit: int) -> list[str]:
    """Questions hermes-fts missed (not in the first 10), with their features."""
    return [
        f"- [{o.question.lang}] {o.question.text}  ({', '.join(o.question.features)}"
        f"{'; empty' if o.empty else ''})"
        for o in outcomes
        if o.rank is None
    ][:limit]


def _now(text: str | None) -> float | None:
    if not text:
        return None
    day = dt.date.fromisoformat(text)
    return dt.datetime(day.year, day.month, day.day, tzinfo=dt.timezone.utc).timestamp()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.real_histories",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--people-per-lang", type=int, default=4, help="people per language (4 languages)"
    )
    parser.add_argument(
        "--sessions", type=int, default=32, help="sessions per person (a quarter coding)"
    )
    parser.add_argument(
        "--now", help="the day relative dates count from, YYYY-MM-DD (default today, UTC)"
    )
    parser.add_argument(
        "--writer",
        choices=("hermes", "direct"),
        default="hermes",
        help="hermes: hermes-agent 0.19.0's SessionDB (default); direct: SessionStore into the same schema",
    )
    parser.add_argument(
        "--engines", default=",".join(ENGINES), help=f"comma-separated: {', '.join(ENGINES)}"
    )
    parser.add_argument(
        "--layouts", default=",".join(LAYOUTS), help="comma-separated: pooled, per-person"
    )
    parser.add_argument("--misses", type=int, default=0, help="print this many hermes-fts misses")
    parser.add_argument(
        "--feature-langs", action="store_true", help="feature rows per language too"
    )
    parser.add_argument(
        "--latency-rounds",
        type=int,
        default=3,
        help="passes of the interleaved hermes-fts / deja-vu timing (0: none)",
    )
    parser.add_argument("--json", type=Path, default=None, help="write every question's rank here")
    parser.add_argument(
        "--cache", type=Path, default=None, help="store cache (default $HERMES_BENCH_CACHE)"
    )
    parser.add_argument(
        "--stats", action="store_true", help="print the generated history's size and exit"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    h = H.generate(args.seed, args.people_per_lang, args.sessions, _now(args.now))
    n_messages = sum(len(s.messages) for s in h.sessions)
    day = dt.datetime.fromtimestamp(h.now, dt.timezone.utc).date()
    print(
        f"{len(h.people)} people, {len(h.sessions)} sessions, {n_messages} messages, "
        f"{len(h.questions)} questions; now = {day}; writer = {args.writer}",
        flush=True,
    )
    if args.stats:
        return 0
    cache = args.cache or corpus.cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    built = layouts(h, args.writer, cache, store_key(args, h), args.layouts.split(","))
    results: dict[tuple[str, str], list[Outcome]] = {}
    for name in args.engines.split(","):
        for layout in built:
            try:
                results[(name, layout.name)] = run_layout(layout, name, cache)
            except DejaUnavailable as exc:  # the peer cannot run here: say so, go on
                print(f"{name} skipped on {layout.name}: {type(exc).__name__}: {exc}", flush=True)
                break
    print(markdown(RESULT_HEAD, result_rows(results, H.V.LANGS)))
    langs = ("all", *H.V.LANGS) if args.feature_langs else ("all",)
    for layout in built:
        names = [n for n, lay in results if lay == layout.name]
        print(f"\nS@1 / S@10 per question feature ({layout.name})\n")
        head = ["feature", "lang", "n", *names, *FEATURE_TAIL]
        print(markdown(head, feature_rows(results, layout.name, langs)))
    timed = [n for n in ("hermes-fts", "deja-vu") if n in args.engines.split(",")]
    if args.latency_rounds and timed:
        print(f"\nTime per question, interleaved, {args.latency_rounds} rounds\n")
        rows = [r for layout in built for r in latency(layout, timed, cache, args.latency_rounds)]
        print(markdown(["engine", "layout", "calls", "p50 ms", "p99 ms"], rows))
    if "deja-vu" in args.engines.split(",") and built:
        print(
            f"\ndeja-vu process start (`deja version`, median): {deja.start_ms(deja.binary(cache)):.1f} ms"
        )
    if args.json:
        dump = {
            f"{name}/{layout}": [
                [o.question.text, o.rank, o.empty, round(o.ms, 2), o.top] for o in got
            ]
            for (name, layout), got in results.items()
        }
        args.json.write_text(json.dumps(dump, ensure_ascii=False, indent=0), encoding="utf-8")
    if args.misses and ("hermes-fts", built[0].name) in results:
        print(f"\nhermes-fts misses ({built[0].name}):")
        print("\n".join(misses(results[("hermes-fts", built[0].name)], args.misses)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
