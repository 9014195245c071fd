"""A row the CJK index has not taken yet is found as the index would find it.

Rows written by a process without the extension (the ``sqlite3`` shell, Hermes
Agent itself) wait in the pending table until a hermes-fts write applies them.
A read-only store (the Hermes plugin's) answers them by LIKE on the ``fts_cjk`` route; that
LIKE folds case and diacritics as the index does, or a new ``Café`` is missed
by ``cafe`` while an indexed one is found.
"""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest
from _support import needs_extension

from hermes_fts import session_search
from hermes_fts.index.rank_bounds import index_totals
from hermes_fts.index.schema import CJK
from hermes_fts.search.evidence import EVERY_ID, IndexUnits, score_apart
from hermes_fts.store import QueryError, SessionStore

pytestmark = needs_extension

MESSAGES = [
    ("s1", "user", "Café au lait at the Zürich office"),
    ("s1", "assistant", "Tiếng Việt: phở bò ở Hà Nội"),
    ("s2", "user", "NAÏVE RÉSUMÉ parser for 東京 logs"),
    ("s2", "assistant", "plain cafe without marks"),
]

QUERIES = ["cafe", "CAFÉ", "zurich", "viet", "pho", "naive resume", '"resume parser"',
           "NEAR(naive parser, 3)", "cafe OR viet", "cafe NOT zurich", "résumé 東京"]  # fmt: skip


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _stores(tmp_path: Path, messages: list[tuple[str, str, str]] = MESSAGES) -> tuple[Path, Path]:
    """The same messages twice: indexed by hermes-fts, and written by the sqlite3 shell."""
    indexed, pending = tmp_path / "indexed.db", tmp_path / "pending.db"
    for path in (indexed, pending):
        with SessionStore(path) as st:
            for n, sid in enumerate(dict.fromkeys(sid for sid, _, _ in messages)):
                st.add_session(sid, "telegram" if n % 2 else "cli")
    with SessionStore(indexed) as st:
        for n, (sid, role, text) in enumerate(messages):
            st.add_message(sid, role, text, timestamp=1_700_000_000 + n)
    script = "".join(
        "INSERT INTO messages(session_id, role, content, timestamp) "
        f"VALUES({_quoted(sid)}, {_quoted(role)}, {_quoted(text)}, {1_700_000_000 + n});"
        for n, (sid, role, text) in enumerate(messages)
    )
    subprocess.run([str(shutil.which("sqlite3")), str(pending), script], check=True, timeout=60)
    return indexed, pending


def _found(st: SessionStore, query: str, **kw: object) -> tuple[list[str], str]:
    result = st.search(query, limit=50, **kw)  # type: ignore[arg-type]
    return sorted(r["session_id"] + ":" + r["role"] for r in result.rows), result.route


@pytest.mark.parametrize("sort", [None, "newest", "oldest", "sessions"])
def test_pending_rows_fold_case_and_diacritics_as_the_index(tmp_path, sort):
    indexed, pending = _stores(tmp_path)
    with SessionStore(pending, readonly=True) as waiting:
        assert waiting.index_state()["cjk_pending"] == len(MESSAGES)
        with SessionStore(indexed, readonly=True) as taken:
            for query in QUERIES:
                expected, route = _found(taken, query, sort=sort)
                assert expected and route == "fts_cjk", query
                assert _found(waiting, query, sort=sort) == (expected, route), query


@pytest.mark.parametrize(
    "filters",
    [{"role_filter": ["user"]}, {"source_filter": ["telegram"]}, {"after": 1_700_000_001}],
)
def test_pending_rows_fold_alike_with_filters(tmp_path, filters):
    indexed, pending = _stores(tmp_path)
    with SessionStore(pending, readonly=True) as waiting, SessionStore(indexed) as taken:
        for query in ("cafe", "naive", "resume OR zurich"):
            expected = _found(taken, query, **filters)
            assert _found(waiting, query, **filters) == expected, (query, filters)


def _old_talk_and_a_new_message(path: Path) -> None:
    """Ten indexed messages holding one word of the question, then one message Hermes
    writes (the sqlite3 shell here) holding all of them: it waits in the pending table."""
    with SessionStore(path) as st:
        st.add_session("old", "cli")
        st.add_session("new", "cli")
        for n in range(10):
            st.add_message("old", "user", f"kubernetes note {n}", timestamp=1_700_000_000 + n)
    new = (
        "INSERT INTO messages(session_id, role, content, timestamp) "
        "VALUES ('new', 'user', 'kubernetes ingress migration plan', 1700000100);"
    )
    subprocess.run([str(shutil.which("sqlite3")), str(path), new], check=True, timeout=60)


@pytest.mark.parametrize("sort", [None, "newest", "oldest", "sessions"])
def test_a_pending_row_holding_every_word_ranks_first(tmp_path, sort):
    """A best match ranks rows holding every word first; a pending row was only added
    after the indexed ones, so with a short page the newest conversation, the one
    holding the whole question, was missing from the plugin's answers."""
    path = tmp_path / "state.db"
    _old_talk_and_a_new_message(path)
    applied = tmp_path / "applied.db"
    shutil.copy(path, applied)
    with SessionStore(applied) as st:  # a writer applies the pending row
        assert st.index_state()["cjk_pending"] == 0
        expected = [r["id"] for r in st.search("kubernetes ingress migration", sort=sort).rows]
    with SessionStore(path, readonly=True) as waiting:
        assert waiting.index_state()["cjk_pending"] == 1
        for limit in (1, 3, 20):
            found = waiting.search("kubernetes ingress migration", limit=limit, sort=sort)
            assert found.route == "fts_cjk"
            assert [r["id"] for r in found.rows] == expected[:limit], (limit, found.rows)
        answer = session_search(waiting, query="kubernetes ingress migration", limit=1)
        assert [r["session_id"] for r in answer["results"]] == ["new"], answer


def test_a_pending_row_is_folded_once_for_every_test_of_it(tmp_path, monkeypatch):
    """Each word of a best match is a LIKE test of the pending row, and each test
    folded the row's whole text again in Python: a long tool output waiting in
    the pending table cost a fold per word per search."""
    from hermes_fts.search import like

    path = tmp_path / "state.db"
    text = "Résumé of the deploy: " + "kubernetes ingress log line; " * 500
    with SessionStore(path) as st:
        st.add_session("s1", "cli")
    insert = (
        "INSERT INTO messages(session_id, role, content, timestamp) "
        f"VALUES ('s1', 'tool', {_quoted(text)}, 1700000000);"
    )
    subprocess.run([str(shutil.which("sqlite3")), str(path), insert], check=True, timeout=60)
    folded: list[str] = []
    fold_case = like.fold_case

    def counting(value: str) -> str:
        folded.append(value)
        return fold_case(value)

    monkeypatch.setattr(like, "fold_case", counting)
    question = "resume deploy kubernetes ingress log line rollout canary"
    with SessionStore(path, readonly=True) as waiting:
        assert [r["role"] for r in waiting.search(question).rows] == ["tool"]
    assert sum(value == text for value in folded) <= 1, sum(value == text for value in folded)


def _talk_then_a_pending_answer(path: Path) -> None:
    """Sessions that mention two words once in long messages, indexed, then one short
    message Hermes writes (the sqlite3 shell here) that is all about them: it
    waits in the pending table, and once applied its BM25 is the best."""
    with SessionStore(path) as st:
        for s in range(8):
            st.add_session(f"old{s}", "cli")
            filler = " ".join(f"word{k}" for k in range(40))
            st.add_message(
                f"old{s}", "user", f"kubernetes ingress {filler}", timestamp=1_700_000_000 + s
            )
            st.add_message(f"old{s}", "assistant", f"nothing here {s}", timestamp=1_700_000_050 + s)
        st.add_session("new", "cli")
    script = "".join(
        "INSERT INTO messages(session_id, role, content, timestamp) "
        f"VALUES ('new', 'user', {_quoted(text)}, {1_700_000_100 + n});"
        for n, text in enumerate(["kubernetes kubernetes ingress", "thanks"])
    )
    subprocess.run([str(shutil.which("sqlite3")), str(path), script], check=True, timeout=60)


@pytest.mark.parametrize("query", ["kubernetes", "kubernetes ingress", "kubernetes OR ingress"])
def test_a_pending_row_ranks_by_the_bm25_it_will_have(tmp_path, query):
    """A pending row had no BM25 and came after every indexed row holding the same
    words: a one-word discovery listed the conversation Hermes had just written,
    the one most about the word, last, and off a short page.  It is scored as
    the index will score it, so the page is the one after a sync."""
    path = tmp_path / "state.db"
    _talk_then_a_pending_answer(path)
    applied = tmp_path / "applied.db"
    shutil.copy(path, applied)
    with SessionStore(applied) as st:  # a writer applies the pending rows
        assert st.index_state()["cjk_pending"] == 0
        expected = [r["session_id"] for r in st.search(query, sort="sessions", limit=20).rows]
    assert expected[0] == "new", expected
    with SessionStore(path, readonly=True) as waiting:
        assert waiting.index_state()["cjk_pending"] == 2
        for limit in (1, 3, 20):
            found = waiting.search(query, sort="sessions", limit=limit)
            assert found.route == "fts_cjk"
            assert [r["session_id"] for r in found.rows] == expected[:limit], (limit, found.rows)
        answer = session_search(waiting, query=query, limit=1)
        assert [r["session_id"] for r in answer["results"]] == ["new"], answer
        scores = waiting._conn.execute("SELECT count(*) FROM temp.hermes_fts_apart").fetchone()
        assert scores[0] >= 1  # the rows were scored in TEMP: the file is untouched


@pytest.mark.parametrize(
    "query", ['"東京。"', '"東京!"', '"🚀東京"', '"東京 ✓"', "東京✓ OR nothing"]
)
def test_punctuation_beside_a_cjk_word_is_a_separator_on_every_route(tmp_path, query):
    """Punctuation or a symbol beside a CJK word separates, as the CJK index reads
    it: the LIKE test looked for the text with it (東京。 in "東京 logs"), so the
    LIKE scan and every row pending for the index silently found nothing."""
    indexed, pending = _stores(tmp_path)
    with SessionStore(indexed, readonly=True) as taken:
        expected = _found(taken, query)
        assert expected == (["s2:user"], "fts_cjk")
        assert _found(taken, query, route="like_scan") == (expected[0], "like_scan")
    with SessionStore(pending, readonly=True) as waiting:
        assert _found(waiting, query) == expected


@pytest.mark.parametrize("query", ["ーラーメン", "東京タワー", "東京", "タワー", '"東京 タワー"'])
def test_a_combining_mark_after_cjk_separates_in_a_pending_row_too(tmp_path, query):
    """A combining accent right after a CJK character is a separator to the
    tokenizer (no word starts with one); the pending rows' case and diacritic
    fold dropped it as inside a Latin word, so ーラーメン found ー + U+0301 +
    ラーメン while the row was pending, and lost it once indexed."""
    marked = [("s1", "user", "ー\u0301ラーメン屋"), ("s1", "user", "東京\u0301\u0302タワー")]
    indexed, pending = _stores(tmp_path, marked + [("s2", "user", "ーラーメン 東京タワー")])
    with SessionStore(indexed, readonly=True) as taken:
        expected = _found(taken, query)
        assert expected[0] and expected[1] == "fts_cjk"
    with SessionStore(pending, readonly=True) as waiting:
        assert _found(waiting, query) == expected


# Mixed scripts, folds and punctuation for the seeded parity run below.
MIXED = [
    ("s1", "user", "数据库迁移的方案。"),
    ("s1", "assistant", "東京のラーメン屋さん ｶﾀｶﾅ"),
    ("s2", "user", "한국어 공부를 했어요, Anna의 프로젝트"),
    ("s2", "assistant", "Café au lait, naïve RÉSUMÉ, the ﬁle system"),
    ("s3", "user", "ＦＵＬＬ　ＷＩＤＴＨ deploy 🚀 done"),
    ("s3", "tool", '{"path": "config.yaml", "msg": "部署完成!"}'),
    ("s4", "user", "Kubernetes集群扩容到10个节点, the staging服务器"),
    ("s4", "assistant", "άλφα and ещё, 第3版 on 2024年3月8日"),
]
PIECES = ["数据库", "迁移", "東京", "东京", "らーめん", "カタカナ", "한국어", "Anna", "cafe", "CAFÉ",
          "naive", "file", "width", "deploy", "部署", "完成", "config.yaml", "staging", "服务器",
          "kubernetes", "10", "αλφα", "еще", "3", "2024年", "🚀", "节点", "dep*", "数*"]  # fmt: skip


def _mixed_query(rng: random.Random) -> str:
    """Words, phrases, operators, groups, NEAR and stray punctuation, from ``PIECES``."""

    def term() -> str:
        word = rng.choice(PIECES)
        return rng.choice(
            [word, f'"{word}"', f'"{word} {rng.choice(PIECES)}"', f"{word}。", f"«{word}»"]
        )

    parts = [term()]
    for _ in range(rng.randint(0, 3)):
        parts += [rng.choice(["", "AND", "OR", "NOT", "OR"]), term()]
    query = " ".join(p for p in parts if p)
    if rng.random() < 0.3:
        query = f"({query}) OR NEAR({rng.choice(PIECES).rstrip('*')} {rng.choice(PIECES).rstrip('*')}, 4)"
    return query


def test_seeded_mixed_queries_find_the_same_rows_pending_or_indexed(tmp_path):
    """Every row pending for the index is found as the index finds it, on a seeded
    run of mixed-script queries (punctuation beside a CJK word once missed them)."""
    indexed, pending = _stores(tmp_path, MIXED)
    rng = random.Random(14)
    with (
        SessionStore(indexed, readonly=True) as taken,
        SessionStore(pending, readonly=True) as waiting,
    ):
        assert waiting.index_state()["cjk_pending"] == len(MIXED)
        for _ in range(60):
            query = _mixed_query(rng)
            try:
                expected = _found(taken, query)
            except QueryError:
                with pytest.raises(QueryError):
                    _found(waiting, query)
                continue
            assert _found(waiting, query) == expected, query


@pytest.mark.parametrize(
    "query",
    [
        "kubernetes",
        '"kubernetes ingress"',
        "kubernetes AND ingress",
        "kubernetes NOT word99",
        "NEAR(kubernetes ingress, 3)",
        "kuber*",
        "(kubernetes OR thanks) AND ingress",
    ],
)
def test_a_strict_query_ranks_a_pending_row_by_its_bm25(tmp_path, query):
    """A strict query ranked by relevance listed pending rows after every indexed
    match (operators and prefixes after one word and one phrase); they rank by
    the BM25 the index will give them, every phrase of the query counted."""
    path = tmp_path / "state.db"
    _talk_then_a_pending_answer(path)
    applied = tmp_path / "applied.db"
    shutil.copy(path, applied)
    with SessionStore(applied) as st:
        rows = st.search(query, limit=20).rows
    expected = [r["id"] for r in rows]
    assert rows[0]["session_id"] == "new" and len(rows) > 3, rows
    with SessionStore(path, readonly=True) as waiting:
        for limit in (1, 3, 20):
            found = waiting.search(query, limit=limit)
            assert [r["id"] for r in found.rows] == expected[:limit], (limit, found.rows)


@pytest.mark.parametrize(
    "expression",
    [
        '"alpha" AND "bravo"',
        '"bravo" AND "alpha"',
        '"alpha" NOT "charlie"',
        'NEAR("alpha" "bravo", 4)',
        '"alp"* OR "bravo"',
        '("alpha" OR "echo") AND "bravo"',
    ],
)
def test_a_pending_row_scores_as_fts5_scores_an_indexed_twin(tmp_path, expression):
    """Each phrase of a strict query's MATCH text gets its own IDF, in the order FTS5
    numbers them: a rare word (alpha) beside a common one (bravo), so a phrase
    given another's IDF would be far off.  Each pending row has an indexed twin
    of the same text, whose BM25 FTS5 itself gives with the same statistics."""
    rng = random.Random(5)
    common = ["bravo", "charlie", "delta", "echo", "foxtrot"]
    pending = ["alpha bravo bravo alpha charlie delta echo foxtrot golf hotel",
               "alpha alpha alpha bravo delta delta echo echo golf hotel",
               "bravo bravo bravo bravo alpha echo echo golf hotel india"]  # fmt: skip
    path = tmp_path / "state.db"
    with SessionStore(path) as st:
        st.add_session("old", "cli")
        for n in range(200):
            words = [rng.choice(common) for _ in range(10)]
            if n % 40 == 0:
                words[0] = "alpha"
            st.add_message("old", "user", " ".join(words), timestamp=1_700_000_000 + n)
        st.add_session("twin", "cli")
        twins = [st.add_message("twin", "user", text, timestamp=1_700_000_500) for text in pending]
        st.add_session("new", "cli")
    script = "".join(
        "INSERT INTO messages(session_id, role, content, timestamp) "
        f"VALUES ('new', 'user', {_quoted(text)}, {1_700_001_000 + n});"
        for n, text in enumerate(pending)
    )
    subprocess.run([str(shutil.which("sqlite3")), str(path), script], check=True, timeout=60)
    with SessionStore(path, readonly=True) as waiting:
        conn = waiting._conn
        ids = [i for (i,) in conn.execute("SELECT id FROM messages WHERE session_id = 'new'")]
        units = IndexUnits(conn, CJK, [expression], [0], expression, EVERY_ID, "", 206, True)
        apart = [(i, "new", None, 1, True, 0.0) for i in ids]
        scored = [row[5] for row in score_apart(units, apart, index_totals(conn, CJK))]
        sql = f"SELECT rowid, -rank FROM {CJK} WHERE {CJK} MATCH ?"
        ranked = dict(conn.execute(sql, (expression,)).fetchall())
    expected = [ranked.get(twin, 0.0) for twin in twins]
    assert any(expected), expected
    assert scored == pytest.approx(expected, rel=1e-9), (scored, expected)


@pytest.mark.parametrize("sort", [None, "sessions"])
def test_pending_rows_are_scored_with_the_idf_the_indexed_rows_get(tmp_path, sort):
    """A pending row's IDF counted the pending matches but not the rest of the
    backlog (Hermes' other messages): lower than the one FTS5 gave the indexed
    rows, so the short rows holding the word, the best matches once synced,
    ranked after every indexed one."""
    path = tmp_path / "state.db"
    filler = "alpha bravo charlie delta echo foxtrot golf hotel"
    with SessionStore(path) as st:
        for n in range(20):
            st.add_session(f"s{n}", "cli")
        for n in range(100):  # 10 indexed matches among 100 rows, each of 8 tokens
            text = "deploy bravo charlie delta echo foxtrot golf hotel" if n % 10 == 0 else filler
            st.add_message(f"s{n % 10}", "user", text, timestamp=1_700_000_000 + n)
    # 10 pending matches of 6 tokens, each in a session of its own, among 100 others
    waiting = [("deploy kilo lima mike november oscar", f"s{10 + n}") for n in range(10)]
    waiting += [(filler, "s0")] * 100
    script = "".join(
        "INSERT INTO messages(session_id, role, content, timestamp) "
        f"VALUES('{sid}', 'user', {_quoted(text)}, {1_700_001_000 + n});"
        for n, (text, sid) in enumerate(waiting)
    )
    subprocess.run([str(shutil.which("sqlite3")), str(path), script], check=True, timeout=60)
    synced = tmp_path / "synced.db"
    shutil.copy(path, synced)
    with SessionStore(synced) as st:
        assert st.index_state()["cjk_pending"] == 0
        expected = [r["id"] for r in st.search("deploy", limit=3, sort=sort).rows]
    assert min(expected) > 100  # short pending rows, once synced
    with SessionStore(path, readonly=True) as st:
        assert st.index_state()["cjk_pending"] == len(waiting)
        found = st.search("deploy", limit=3, sort=sort)
    assert found.route == "fts_cjk"
    assert [r["id"] for r in found.rows] == expected, found.rows


def _words_store(path: Path, alphas: int, bravos: int) -> list[int]:
    """40 filler rows, then ``alphas`` user rows holding alpha and ``bravos`` holding
    bravo, indexed; the alpha rows' ids.  A row holding one word ranks by that
    word's weight: the rarer word's rows come first."""
    with SessionStore(path) as st:
        st.add_session("s1", "cli")
        for n in range(40):
            st.add_message(
                "s1", "assistant", f"filler words number {n}", timestamp=1_700_000_000 + n
            )
        ids = [
            st.add_message("s1", "user", "alpha one two", timestamp=1_700_000_100 + n)
            for n in range(alphas)
        ]
        for n in range(bravos):
            st.add_message("s1", "user", "bravo one two", timestamp=1_700_000_200 + n)
    return ids


def _as_once_synced(tmp_path: Path, path: Path, **kw: object) -> None:
    synced = tmp_path / "synced.db"
    shutil.copy(path, synced)
    with SessionStore(synced) as st:
        expected = [r["id"] for r in st.search("alpha bravo", **kw).rows]  # type: ignore[arg-type]
    with SessionStore(path, readonly=True) as st:
        assert st.index_state()["cjk_pending"]
        found = st.search("alpha bravo", **kw)  # type: ignore[arg-type]
    assert found.route == "fts_cjk"
    assert [r["id"] for r in found.rows] == expected, (found.rows, expected)


@pytest.mark.parametrize("sort", [None, "newest"])
def test_pending_rows_a_filter_drops_weigh_their_words_all_the_same(tmp_path, sort):
    """A word's weight counts every row holding it, kept by the filters or not; pending
    rows counted only when kept, so a role filter made the word five waiting
    assistant rows hold look rarer than it is, and its rows ranked first."""
    path = tmp_path / "state.db"
    _words_store(path, alphas=10, bravos=8)
    rows = [("assistant", "bravo one two")] * 5 + [("user", "alpha one two")]
    script = "".join(
        "INSERT INTO messages(session_id, role, content, timestamp) "
        f"VALUES('s1', '{role}', '{text}', {1_700_000_400 + n});"
        for n, (role, text) in enumerate(rows)
    )
    subprocess.run([str(shutil.which("sqlite3")), str(path), script], check=True, timeout=60)
    _as_once_synced(tmp_path, path, role_filter=["user"], sort=sort, limit=3)


@pytest.mark.parametrize("sort", [None, "newest"])
def test_rows_deleted_while_pending_do_not_weigh_their_words(tmp_path, sort):
    """The index holds a message deleted by Hermes until the delete is applied; its
    words were still counted, so alpha (10 rows indexed, 3 deleted since) weighed
    as if 10 rows held it and bravo's rows ranked first."""
    path = tmp_path / "state.db"
    ids = _words_store(path, alphas=10, bravos=9)
    delete = f"DELETE FROM messages WHERE id IN ({', '.join(map(str, ids[:3]))});"
    subprocess.run([str(shutil.which("sqlite3")), str(path), delete], check=True, timeout=60)
    _as_once_synced(tmp_path, path, sort=sort, limit=3)


def test_the_table_scoring_pending_rows_is_made_once_per_connection(tmp_path):
    """sqlite_master keeps a TEMP table's statement without ``temp.``: compared with it,
    the table scoring pending rows was dropped and made again by every search."""
    import sqlite3

    path = tmp_path / "state.db"
    _old_talk_and_a_new_message(path)
    made: list[str] = []

    def watch(action: int, name: object, *_: object) -> int:
        if action == sqlite3.SQLITE_CREATE_VTABLE:
            made.append(str(name))
        return sqlite3.SQLITE_OK

    with SessionStore(path, readonly=True) as st:
        st._conn.set_authorizer(watch)
        for query in ("kubernetes ingress", "kubernetes migration", "ingress"):
            assert [r["session_id"] for r in st.search(query, limit=1).rows] == ["new"]
    assert made == ["hermes_fts_apart"], made


def test_rows_applied_by_another_process_during_a_search_do_not_break_it(tmp_path, monkeypatch):
    """The index's row count and a word's count are read by separate statements; a
    sync in another process between them (the plugin's after-turn upkeep, `hermes fts
    sync`) counted more rows holding the word than rows in all, and a word every
    message holds made the search raise "math domain error" (the plugin then gave the
    call to Hermes' built-in, `hermes-fts search` failed)."""
    from hermes_fts.search import evidence

    path = tmp_path / "state.db"
    with SessionStore(path) as st:
        st.add_session("s1", "cli")
        for n in range(3):
            st.add_message("s1", "user", f"deploy step {n}", timestamp=1_700_000_000 + n)
    script = "".join(
        "INSERT INTO messages(session_id, role, content, timestamp) "
        f"VALUES('s1', 'user', 'deploy again {n}', {1_700_000_100 + n});"
        for n in range(3)
    )
    subprocess.run([str(shutil.which("sqlite3")), str(path), script], check=True, timeout=60)
    counted = evidence.unit_counts
    synced: list[int] = []

    def sync_first(*args, **kw):
        if not synced:  # another process applies the backlog between the two reads
            with SessionStore(path) as writer:
                synced.append(writer.sync())
        return counted(*args, **kw)

    monkeypatch.setattr(evidence, "unit_counts", sync_first)
    with SessionStore(path, readonly=True) as reader:
        assert reader.index_state()["cjk_pending"] == 3
        found = reader.search("deploy", limit=10)
    assert synced == [3], "the sync ran inside the search"
    assert found.route == "fts_cjk"
    assert sorted(r["id"] for r in found.rows) == list(range(1, 7)), found.rows


@pytest.mark.parametrize(
    ("query", "kw"),
    [("kubernetes", {"sort": "sessions"}), ("kubernetes cluster", {}),
     ("kubernetes cluster", {"sort": "newest"})],
)  # fmt: skip
def test_a_pending_row_glued_to_cjk_keeps_its_place_with_the_word_index(
    tmp_path, monkeypatch, query, kw
):
    """With the word index kept, a best match or a search by sessions is scored on
    the CJK index where a row holds the word glued to CJK text, which unicode61
    does not see.  That look read the index alone: a message Hermes had just
    written (``部署kubernetes集群``, pending) was scored as missing the word, and
    fell off the page it tops once applied."""
    monkeypatch.setenv("HERMES_WORD_FTS", "1")
    path = tmp_path / "state.db"
    filler = " ".join(f"word{k}" for k in range(30))
    with SessionStore(path) as st:
        for s in range(6):
            st.add_session(f"old{s}", "cli")
            st.add_message(f"old{s}", "user", f"kubernetes {filler}", timestamp=1_700_000_000 + s)
        st.add_session("new", "cli")
    insert = (
        "INSERT INTO messages(session_id, role, content, timestamp) "
        "VALUES ('new', 'user', '部署kubernetes集群', 1700000100);"
    )
    subprocess.run([str(shutil.which("sqlite3")), str(path), insert], check=True, timeout=60)
    applied = tmp_path / "applied.db"
    shutil.copy(path, applied)
    with SessionStore(applied) as st:
        assert st.index_state()["cjk_pending"] == 0
    with SessionStore(applied, readonly=True) as taken:
        expected = [r["session_id"] for r in taken.search(query, limit=2, **kw).rows]
    assert expected[0] == "new", expected
    with SessionStore(path, readonly=True) as waiting:
        assert waiting.index_state()["cjk_pending"] == 1
        assert waiting.index_state()["hermes_fts_word"]["served"]
        found = waiting.search(query, limit=2, **kw)
        assert [r["session_id"] for r in found.rows] == expected


@pytest.mark.parametrize("sort", [None, "newest", "oldest"])
def test_a_glued_pending_row_is_on_the_page_that_reaches_it(tmp_path, monkeypatch, sort):
    """With the word index kept, a pending row where the word is glued to CJK is
    found by a LIKE scan of the pending rows.  That scan was cut at the rows the
    page still lacked before the pending rows the word index had found already
    were dropped from it, so a page that reached the glued row lost it: it was
    found by ``limit=1000`` and on no page of ``limit=4``."""
    monkeypatch.setenv("HERMES_WORD_FTS", "1")
    path = tmp_path / "state.db"
    with SessionStore(path) as st:
        st.add_session("s1", "cli")
        for n in range(3):
            st.add_message("s1", "user", f"kubernetes indexed {n}", timestamp=1_700_000_000 + n)
    # Pending: the glued row is the oldest, the plain ones (in the word index) newer.
    rows = [("部署kubernetes集群", 1_600_000_000)] + [
        (f"kubernetes pending {n}", 1_700_000_100 + n) for n in range(3)
    ]
    script = "".join(
        "INSERT INTO messages(session_id, role, content, timestamp) "
        f"VALUES ('s1', 'user', {_quoted(text)}, {ts});"
        for text, ts in rows
    )
    subprocess.run([str(shutil.which("sqlite3")), str(path), script], check=True, timeout=60)
    with SessionStore(path, readonly=True) as st:
        assert st.index_state()["cjk_pending"] == 4
        assert st.index_state()["hermes_fts_word"]["served"]
        every = [r["id"] for r in st.search("kubernetes", limit=1000, sort=sort).rows]
        assert len(every) == 7 and st.search("kubernetes", sort=sort).route == "fts5"
        assert [r["id"] for r in st.search("kubernetes", limit=7, sort=sort).rows] == every
        paged = [
            r["id"]
            for offset in range(0, 8, 2)
            for r in st.search("kubernetes", limit=2, offset=offset, sort=sort).rows
        ]
        assert paged == every
