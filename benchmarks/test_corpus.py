"""The benchmark corpus is deterministic and shaped like a Hermes store."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from itertools import islice
from pathlib import Path

import pytest

from benchmarks import corpus

pytest.importorskip("wordfreq")

SESSION_KEYS = {
    "id",
    "source",
    "parent_session_id",
    "started_at",
    "ended_at",
    "end_reason",
    "title",
    "model",
}
MESSAGE_KEYS = {
    "session_id",
    "role",
    "content",
    "tool_name",
    "tool_calls",
    "timestamp",
    "active",
    "compacted",
}
HAN = re.compile(r"[\u4e00-\u9fff]")
KANA = re.compile(r"[\u3041-\u30ff]")
HANGUL = re.compile(r"[\uac00-\ud7a3]")
GLUED = re.compile(r"[a-z]{3,}[\u4e00-\u9fff]|[\u4e00-\u9fff][a-z]{3,}")
IDENT = re.compile(r"\b[a-z]+-[a-z]+\.[a-z]+\.(?:py|ts|tsx|js|json|md|toml|yaml|go|rs|sh|c)\b")


@pytest.fixture(scope="module")
def data() -> tuple[list[dict], list[dict]]:
    sessions, messages = corpus.generate(3000, seed=7)
    return sessions, list(messages)


def test_exact_count_and_columns(data: tuple[list[dict], list[dict]]) -> None:
    sessions, messages = data
    assert len(messages) == 3000
    assert all(set(s) == SESSION_KEYS for s in sessions)
    assert all(set(m) == MESSAGE_KEYS for m in messages)
    ids = [s["id"] for s in sessions]
    assert len(ids) == len(set(ids))
    assert {m["session_id"] for m in messages} <= set(ids)
    titles = [s["title"] for s in sessions if s["title"] is not None]
    assert len(titles) == len(set(titles)), "titles are unique, as the Hermes index requires"


def test_deterministic_across_processes(data: tuple[list[dict], list[dict]]) -> None:
    sessions, messages = data
    again_s, again_m = corpus.generate(3000, seed=7)
    assert again_s == sessions
    assert list(again_m) == messages
    # A fresh interpreter with another hash seed produces the same rows.
    code = (
        "import json,sys; from benchmarks import corpus; s,m=corpus.generate(3000, seed=7); "
        "m=list(m); print(json.dumps([s[-1], m[-1], m[1234]], ensure_ascii=False))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).parent.parent,
        env={"PYTHONHASHSEED": "12345", "PATH": "/usr/bin:/bin"},
    )
    assert json.loads(out.stdout) == [sessions[-1], messages[-1], messages[1234]]
    other_s, other_m = corpus.generate(3000, seed=8)
    assert list(other_m) != messages


def test_prefix_stable_for_sessions_is_lazy() -> None:
    _, messages = corpus.generate(200_000, seed=0)
    first = list(islice(messages, 50))
    assert len(first) == 50  # a large corpus streams without materialising


def test_shape_of_conversations(data: tuple[list[dict], list[dict]]) -> None:
    sessions, messages = data
    assert {s["source"] for s in sessions} == set(corpus.SOURCES)
    by_id = {s["id"]: s for s in sessions}
    compressed = [s for s in sessions if s["end_reason"] == "compression"]
    assert compressed
    children = [s for s in sessions if s["parent_session_id"] in {c["id"] for c in compressed}]
    assert children and all(
        c["started_at"] >= by_id[c["parent_session_id"]]["started_at"] for c in children
    )
    span = max(s["started_at"] for s in sessions) - min(s["started_at"] for s in sessions)
    assert span > 300 * 86400, "timestamps spread over about a year"
    roles = {m["role"] for m in messages}
    assert roles == {"user", "assistant", "tool"}
    tools = [m for m in messages if m["role"] == "tool"]
    assert all(m["tool_name"] for m in tools)
    assert max(len(m["content"]) for m in tools) > 2000
    calls = [json.loads(m["tool_calls"]) for m in messages if m["tool_calls"]]
    assert calls and all(c[0]["function"]["name"] in corpus.TOOL_NAMES for c in calls)
    states = {(m["active"], m["compacted"]) for m in messages}
    assert states == {(1, 0), (0, 0), (0, 1)}
    for s in sessions:  # timestamps increase inside a session
        ts = [m["timestamp"] for m in messages if m["session_id"] == s["id"]]
        assert ts == sorted(ts)


def test_languages_and_hard_cases(data: tuple[list[dict], list[dict]]) -> None:
    _, messages = data
    text = "\n".join(m["content"] for m in messages)
    assert HAN.search(text) and KANA.search(text) and HANGUL.search(text)
    assert GLUED.search(text), "Latin glued to CJK"
    assert IDENT.search(text), "identifiers like my-app.config.ts"


@pytest.mark.parametrize(
    "lang,pattern",
    [("zh", HAN), ("ja", KANA), ("ko", HANGUL), ("en", re.compile(r"[a-z]{4,} [a-z]{4,}"))],
)
def test_texts_per_language(lang: str, pattern: re.Pattern[str]) -> None:
    texts = corpus.texts(lang, 200)
    assert len(texts) == 200 and texts == corpus.texts(lang, 200)
    assert sum(bool(pattern.search(t)) for t in texts) > 180


@pytest.mark.parametrize("qc", corpus.QUERY_CLASSES)
def test_term_samples_per_band(qc: str) -> None:
    bands = corpus.term_samples(qc, per_band=4)
    assert list(bands) == list(corpus.BANDS)
    for terms in bands.values():
        assert len(terms) == 4 and all(terms)
    assert bands == corpus.term_samples(qc, per_band=4)
    flat = [t for ts in bands.values() for t in ts]
    if qc == "zh2":
        assert all(len(t) == 2 and HAN.fullmatch(t[0]) for t in flat)
    elif qc == "zh3":
        assert all(len(t) >= 3 for t in flat)
    elif qc == "cjk1":
        assert all(len(t) == 1 for t in flat)
    elif qc == "ja2":
        assert all(len(t) == 2 and KANA.search(t) for t in flat)
    elif qc == "ja3":
        assert all(len(t) >= 3 for t in flat)
    elif qc == "zh2_or":
        assert all(" OR " in t for t in flat)
    elif qc == "latin_glued":
        assert all(GLUED.search(t) for t in flat)


def test_common_terms_occur_more_often() -> None:
    _, messages = corpus.generate(3000, seed=1)
    text = "\n".join(m["content"] for m in messages)
    bands = corpus.term_samples("zh2", per_band=5)
    common = sum(text.count(t) for t in bands["very_common"])
    rare = sum(text.count(t) for t in bands["rare"])
    assert common > 10 * max(rare, 1)


def test_size_parsing() -> None:
    from benchmarks.conftest import parse_size

    assert parse_size("2000") == 2000
    assert parse_size("10k") == 10_000
    assert parse_size("1M") == 1_000_000
    with pytest.raises(ValueError):
        parse_size("0")


def test_cache_tags_read_files_that_exist() -> None:
    """A cached store is rebuilt when the code that writes it changes: the files named
    must exist (after a move they silently did not, and stale stores were reused)."""
    import hermes_fts
    from benchmarks import corpus

    pkg = Path(hermes_fts.__file__).parent
    for name in (*corpus.STORE_CODE, *corpus.OPTIMIZE_CODE):
        assert (pkg / name).is_file(), name
