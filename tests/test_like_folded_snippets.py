"""LIKE-route snippets of folded text: the mark sits on the original characters.

The LIKE scan compares folded text (width, kana and Han variants), and its
snippet finds the terms in the folded row in C (``cjk_fold_find``).  These
tests search a store Hermes wrote and hermes-fts has not synced, opened
read-only as the plugin opens it, so every search is a LIKE scan, and check
each snippet against a reference that folds the text one character at a time
(how snippets were cut before) and cuts it by the documented rule.
"""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest
from _support import needs_extension

from hermes_fts._index_text import fold_width
from hermes_fts.query.plan import fold_text
from hermes_fts.search.snippets import (
    CLOSE,
    LIKE_SNIPPET_BEFORE,
    LIKE_SNIPPET_CHARS,
    LIKE_SNIPPET_READ,
    MARKS,
    OPEN,
    with_marks,
)
from hermes_fts.store import SessionStore

pytestmark = needs_extension

HERMES_SCHEMA = """
CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, model TEXT,
    parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL, title TEXT);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,
    role TEXT NOT NULL, content TEXT, tool_calls TEXT, tool_name TEXT, timestamp REAL NOT NULL);
"""
# Pieces whose folds change lengths (ｶﾞ: two characters, one folded) or only
# spellings (東/东, ラ/ら, Ａ/a), with neighbours a mark must not swallow.
PIECES = [
    "ｶﾞ", "ｶ", "ﾞ", "ﾟ", "ﾊﾟ", "ガ", "が", "東京", "东京", "臺灣", "台湾", "ラーメン",
    "らーめん", "ﾗｰﾒﾝ", "ＡＢＣ", " ", "x", "😀", "É", "𠀀", "。",
]  # fmt: skip
TERMS = ["東京", "东京", "らーめん", "ラーメン", "ガ", "が", "ｶﾞ", "台湾", "ﾗｰ", "京ら", "めん東"]


def _reference_spans(text: str, term: str) -> list[tuple[int, int]]:
    """The term's places in the folded text, one after another, as original offsets:
    folding one character at a time (a half-width kana with its voiced mark as one)."""
    folded: list[str] = []
    starts: list[int] = []
    i = 0
    while i < len(text):
        step = 2 if text[i + 1 : i + 2] in ("\uff9e", "\uff9f") else 1
        if step == 2 and len(fold_width(text[i : i + step])) != 1:
            step = 1
        for ch in fold_text(text[i : i + step]):
            folded.append(ch)
            starts.append(i)
        i += step
    starts.append(len(text))
    key, joined, spans = fold_text(term), "".join(folded), []
    at = joined.find(key)
    while at >= 0:
        spans.append((starts[at], starts[at + len(key)]))
        at = joined.find(key, at + len(key))
    return spans


def _reference_span(text: str, term: str) -> tuple[int, int] | None:
    spans = _reference_spans(text, term)
    return spans[0] if spans else None


def _reference_snippet(text: str, term: str) -> str | None:
    spans = _reference_spans(text, term)
    if not spans:
        return None
    at, stop = spans[0]
    start = max(0, at - LIKE_SNIPPET_BEFORE)
    end = max(min(len(text), start + LIKE_SNIPPET_CHARS), stop)
    # Every other hit the cut shows whole, off its edges (the "..."), is marked too.
    marks = [spans[0]] + [
        (a, b)
        for a, b in spans[1:]
        if (start < a or start == a == 0) and (b < end or b == end == len(text))
    ]
    out, pos = [], start
    for a, b in marks:
        if out and a == pos:  # touching marks become one
            out[-1] += text[a:b]
        else:
            out += [text[pos:a], text[a:b]]
        pos = b
    pieces = [f"{x}" if n % 2 == 0 else f"{OPEN}{x}{CLOSE}" for n, x in enumerate(out)]
    return with_marks(
        ("..." if start > 0 else "")
        + "".join(pieces)
        + text[pos:end]
        + ("..." if end < len(text) else ""),
        MARKS,
    )


def _hermes_store(path: Path, texts: list[str]) -> Path:
    conn = sqlite3.connect(path)
    conn.executescript(HERMES_SCHEMA)
    conn.execute("INSERT INTO sessions VALUES ('s1', 'cli', 'm', NULL, 100, NULL, 't')")
    conn.executemany(
        "INSERT INTO messages(session_id, role, content, timestamp) VALUES ('s1', 'user', ?, ?)",
        [(text, 101 + n) for n, text in enumerate(texts)],
    )
    conn.commit()
    conn.close()
    return path


@pytest.fixture(scope="module")
def random_texts() -> list[str]:
    rng = random.Random(33)
    return ["".join(rng.choices(PIECES, k=rng.randint(1, 60))) for _ in range(400)]


@pytest.fixture(scope="module")
def unsynced(tmp_path_factory: pytest.TempPathFactory, random_texts: list[str]) -> SessionStore:
    db = _hermes_store(tmp_path_factory.mktemp("like") / "state.db", random_texts)
    with SessionStore(db, readonly=True) as st:
        yield st


@pytest.mark.parametrize("term", TERMS)
def test_like_snippets_mark_the_folded_hit_in_the_original_text(unsynced, random_texts, term):
    assert unsynced.describe_search_path(term) == "like_scan"
    rows = unsynced.search_messages(term, limit=1000)
    expected = {n + 1: _reference_snippet(t, term) for n, t in enumerate(random_texts)}
    assert {r["id"] for r in rows} == {i for i, s in expected.items() if s is not None}
    assert rows, term  # the random texts hold every term somewhere
    for row in rows:
        assert row["snippet"] == expected[row["id"]], random_texts[row["id"] - 1]


@pytest.mark.parametrize(
    ("text", "term", "snippet"),
    [
        ("ｶﾞｶﾞ東京タワー", "东京", "ｶﾞｶﾞ>>>東京<<<タワー"),  # joined pairs before the hit
        ("ｶﾞｷﾞ東京ＡＢＣd", "ギ东京abc*", "ｶﾞ>>>ｷﾞ東京ＡＢＣd<<<"),  # the Latin word is whole
        ("今日はﾗｰﾒﾝを", "らーめん", "今日は>>>ﾗｰﾒﾝ<<<を"),
        ("😀ラーメン", "らーめん", "😀>>>ラーメン<<<"),  # a character outside the BMP before it
        ("ｶﾞ" * 50 + "臺灣", "台湾", "..." + "ｶﾞ" * 20 + ">>>臺灣<<<"),  # cut in original chars
        # Found as the scan matched it: a phrase's words apart, a word whole.
        (
            "the ＡＬＰＨＡ－ｓｅｒｖｉｃｅ went",
            '"alpha service"',
            "the >>>ＡＬＰＨＡ－ｓｅｒｖｉｃｅ<<< went",
        ),
        ("ｶﾞｷﾞ alpha,\u3000ｻｰﾋﾞｽ", '"alpha さーびす"', "ｶﾞｷﾞ >>>alpha,\u3000ｻｰﾋﾞｽ<<<"),
        ("ｄｅｃｉｄｅｄ to ｄｅｃｉｄｅ", "decide", "ｄｅｃｉｄｅｄ to >>>ｄｅｃｉｄｅ<<<"),
        ("数据库、遷移 done", '"数据库 迁移"', ">>>数据库、遷移<<< done"),
    ],
)
def test_like_snippet_cases(tmp_path, text, term, snippet):
    with SessionStore(_hermes_store(tmp_path / "state.db", [text]), readonly=True) as st:
        assert [r["snippet"] for r in st.search_messages(term)] == [snippet]


def test_fields_without_the_snippet_find_the_same_rows(unsynced, random_texts):
    full = unsynced.search_messages("东京", limit=1000)
    ids = unsynced.search_messages("东京", limit=1000, fields=["id"])
    assert ids == [{"id": r["id"]} for r in full]
    assert len(ids) == sum(_reference_span(t, "东京") is not None for t in random_texts)


def test_a_snippet_reads_a_long_text_only_up_to_its_cap(tmp_path):
    """The row is found wherever its term is; the mark only within the cap."""
    pad = "ｶﾞ東京 " * (LIKE_SNIPPET_READ // 4)
    early = pad[: LIKE_SNIPPET_READ - 10] + "臺灣" + pad
    late = pad + "臺灣"
    with SessionStore(_hermes_store(tmp_path / "state.db", [early, late]), readonly=True) as st:
        rows = {r["id"]: r["snippet"] for r in st.search_messages("台湾")}
    assert rows[1].endswith(
        ">>>臺灣<<<" + pad[: LIKE_SNIPPET_CHARS - LIKE_SNIPPET_BEFORE - 2] + "..."
    )
    assert rows[2] == pad[:LIKE_SNIPPET_CHARS] + "..."  # past the cap: the head, unmarked


def test_a_folded_snippet_tries_a_bounded_number_of_places(tmp_path):
    """Each folded lookup reads the text again from its last place: a tool output of
    thousands of "decided" before one ｄｅｃｉｄｅ (full width: a folded scan) was
    read once per "decided", a pause that grew with the square of the text."""
    from hermes_fts import connect
    from hermes_fts.query.syntax import Term
    from hermes_fts.search.snippets import FOLDED_TRIES, like_snippet

    class Counting:
        def __init__(self, conn: sqlite3.Connection) -> None:
            self.conn, self.calls = conn, 0

        def execute(self, sql: str, params: tuple[object, ...]) -> sqlite3.Cursor:
            self.calls += 1
            return self.conn.execute(sql, params)

    conn = connect(":memory:")
    near = "we ｄｅｃｉｄｅ now"
    assert OPEN + "ｄｅｃｉｄｅ" + CLOSE in like_snippet([near], [Term("decide")], fold=conn)
    counting = Counting(conn)
    far = "decided " * 5000 + near
    snippet = like_snippet([far], [Term("decide")], fold=counting)  # type: ignore[arg-type]
    assert counting.calls <= FOLDED_TRIES + 1
    assert OPEN not in snippet and snippet.startswith("decided decided")
    conn.close()
