"""Smoke test of the real-histories benchmark (``benchmarks.real_histories``).

A small history (sessions per person from ``--bench-size``) is checked for
what the benchmark claims about it: deterministic, tool rows as Hermes stores
them, dates only in timestamps, category and absent words in no message the
question needs, recurrence within a session.  Then a small pooled store is
written (``--writer direct``: the Hermes schema through ``SessionStore``) and
hermes-fts discovery is timed with pytest-benchmark over its questions, beside
whole-session BM25 and, when Go and the deja-vu source are here, deja-vu.
The full run and its table: benchmarks/README.md ("Real histories").
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks import histories as H
from benchmarks import real_histories as R

NOW = R._now("2025-06-18")
TABLE = "real histories: session recall (smoke size)"


@pytest.fixture(scope="module")
def small(bench_size: int) -> H.Histories:
    return H.generate(
        seed=0, people_per_lang=1, sessions_per_person=max(6, bench_size // 120), now=NOW
    )


def _text(s: H.Session) -> str:
    return "\n".join(
        t
        for m in s.messages
        for t in (m.content, json.dumps(m.tool_calls) if m.tool_calls else None)
        if t
    )


def test_generation_is_deterministic(small: H.Histories, bench_size: int) -> None:
    again = H.generate(
        seed=0, people_per_lang=1, sessions_per_person=max(6, bench_size // 120), now=NOW
    )
    assert again.questions == small.questions
    assert [_text(s) for s in again.sessions] == [_text(s) for s in small.sessions]
    other = H.generate(
        seed=1, people_per_lang=1, sessions_per_person=max(6, bench_size // 120), now=NOW
    )
    assert other.questions != small.questions


def test_tool_rows_are_stored_as_hermes_stores_them(small: H.Histories) -> None:
    code = [s for s in small.sessions if s.kind == "code"]
    assert code
    for s in code:
        open_calls: set[str] = set()
        for m in s.messages:
            if m.tool_calls:
                for call in m.tool_calls:
                    assert call["type"] == "function"
                    json.loads(call["function"]["arguments"])  # a JSON string, as the API sends it
                    open_calls.add(call["id"])
            if m.role == "tool":
                assert m.tool_call_id in open_calls and m.tool_name
                json.loads(m.content or "")


def test_questions_carry_what_their_features_say(small: H.Histories) -> None:
    every = "\n".join(_text(s) for s in small.sessions)
    by_id = {s.id: s for s in small.sessions}
    assert "⟨" not in every
    for q in small.questions:
        gold = by_id[q.session_id]
        text = _text(gold).lower()
        for word in H.V.ABSENT_WORDS[q.lang]:
            assert word not in every.lower()
        if "category" in q.features:
            assert q.keywords[-1].lower() not in text, q
        if "inflected" in q.features and q.lang == "en":
            assert not re.search(rf"\b{re.escape(q.keywords[-1].lower())}\b", text), q
        if any(f.startswith(("date", "last")) for f in q.features):
            date = re.search(
                r"\d+\s*(?:月|월|年|년)|(?:January|February|March|April|May|June|July|August|September|October|November|December) \d+",
                q.text,
            )
            assert date is None or date.group(0) not in every
    # Recurrence: a chat's relative and topic words come back in several messages.
    for s in small.sessions:
        if s.kind == "chat":
            words = H.V.CHAT_TOPICS[s.topic][s.lang][1]
            assert sum(any(w in (m.content or "") for w in words) for m in s.messages) >= 3


@pytest.fixture(scope="module")
def pooled(small: H.Histories, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("real-histories")
    return R.build_store(folder / "pooled.db", small.sessions, "direct", folder)


def _recall(outcomes: list[R.Outcome]) -> float:
    return sum(o.rank is not None for o in outcomes) / max(len(outcomes), 1)


def test_discovery_on_real_histories(
    benchmark: Any, bench_report: Any, small: H.Histories, pooled: Path
) -> None:
    known = {s.id for s in small.sessions}
    with R.engine("bm25-session", pooled, pooled.parent, small.now) as bm25:
        baseline = R.ask(bm25, small.questions, "question")
    with R.engine("hermes-fts", pooled, pooled.parent, small.now) as search:
        for q in small.questions[:10]:
            assert set(search(q.text)) <= known
        outcomes: list[R.Outcome] = benchmark.pedantic(
            R.ask, args=(search, small.questions, "question"), rounds=1, iterations=1
        )
    # Built so that whole-session BM25 finds most sessions, as it does on real histories.
    assert _recall(baseline) >= 0.6
    for name, got in (("hermes-fts", outcomes), ("bm25-session", baseline)):
        bench_report.add(
            TABLE, dict(zip(["engine", *R.RESULT_HEAD[3:]], [name, *R.score(got, name in R.TIMED)]))
        )


def test_time_words_count_from_the_day_the_questions_were_written(
    small: H.Histories, pooled: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: hermes-fts read "last week" from the day the benchmark ran, not
    from the histories' ``now``; run a few days later, its last_week questions
    preferred another week and S@1 moved with the calendar (0.9 to 0.3)."""
    import hermes_fts

    asked: list[Any] = []
    real = hermes_fts.session_search

    def recording(store: Any, **args: Any) -> Any:
        asked.append(args.get("now"))
        return real(store, **args)

    monkeypatch.setattr(hermes_fts, "session_search", recording)
    question = next(q for q in small.questions if "last_week" in q.features)
    with R.engine("hermes-fts", pooled, pooled.parent, small.now) as search:
        top = search(question.text)[0]
    assert asked == [small.now]
    started = {s.id: s.started_at for s in small.sessions}[top]
    today = dt.datetime.fromtimestamp(small.now, dt.timezone.utc).date()
    monday = today - dt.timedelta(days=today.weekday() + 7)
    day = dt.datetime.fromtimestamp(started, dt.timezone.utc).date()
    assert monday <= day < monday + dt.timedelta(days=7)  # last week's session first


@pytest.fixture(scope="module")
def deja_binary() -> Iterator[Path]:
    from benchmarks import corpus, deja

    try:
        yield deja.binary(corpus.cache_dir())
    except deja.DejaUnavailable as exc:
        pytest.skip(f"deja-vu peer not run: {exc}")


def test_deja_vu_reads_the_same_store(
    deja_binary: Path, bench_report: Any, small: H.Histories, pooled: Path
) -> None:
    with R.engine("deja-vu", pooled, pooled.parent, small.now) as search:
        outcomes = R.ask(search, small.questions, "question")
    found = {s for o in outcomes for s in ([o.question.session_id] if o.rank else [])}
    assert found <= {s.id for s in small.sessions} and _recall(outcomes) > 0
    bench_report.add(
        TABLE, dict(zip(["engine", *R.RESULT_HEAD[3:]], ["deja-vu", *R.score(outcomes, True)]))
    )
