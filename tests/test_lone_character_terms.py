"""A lone CJK character glued to a name or number is answered from the CJK index.

``Anna의``, ``GPT로``, ``Pythonで``, ``2024年``, ``3月8号``, ``第3版``: the CJK
index holds the character as a colocated unigram, so ``"anna 의"`` there is a
superset (it also matches "Anna 의견").  Such a query took the LIKE scan over
every message; now the index proposes the rows and the LIKE test checks them
(route ``fts_cjk_checked``): the same rows, without reading the whole store.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from _support import needs_extension, rebuild_cjk_index

from hermes_fts.search.like import CHECKED_ROUTE
from hermes_fts.store import SessionStore

pytestmark = needs_extension

TEXTS = [
    "Anna의 여동생은 부산에 살아",
    "Anna 의견을 들었다",  # the index's phrase, not the substring
    "Joanna의 책",  # the substring, not the word
    "garden-bot의 로그",
    "garden bot 의사",
    "GPT로 번역했어",
    "GPT 로그",
    "Python을 배우고 있어",
    "Pythonで書いた",
    "Python で書いた",
    "3月8号选了数据库",
    "13月8号了",
    "3 月8号",
    "2024年的计划",
    "２０２４年",
    "2024 年",
    "买了5个苹果",
    "5 个",
    "第3版发布了",
    "第13版",
    "회의Anna 일정",
    "의사Anna",
]

# Each query's rows, by the query language's rule: its Latin words whole, its CJK
# a substring, a space between them or none (as the tokenizer reads both).
EXPECTED = {
    "Anna의": ["Anna의 여동생은 부산에 살아", "Anna 의견을 들었다"],
    "garden-bot의": ["garden-bot의 로그", "garden bot 의사"],
    "GPT로": ["GPT로 번역했어", "GPT 로그"],
    "Python을": ["Python을 배우고 있어"],
    "Pythonで": ["Pythonで書いた", "Python で書いた"],
    "3月8号": ["3月8号选了数据库", "3 月8号"],
    "2024年": ["2024年的计划", "２０２４年", "2024 年"],
    "２０２４年": ["2024年的计划", "２０２４年", "2024 年"],
    "5个": ["买了5个苹果", "5 个"],
    "第3版": ["第3版发布了"],
    "의Anna": ["회의Anna 일정"],  # not 의사Anna, which the index's unigram 의 also matches
}


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("lone") / "state.db"
    with SessionStore(path) as st:
        st.add_session("s1", "cli")
        st.add_session("s2", "cli")
        for n, text in enumerate(TEXTS):
            st.add_message(f"s{n % 2 + 1}", "user", text, timestamp=float(n))
    return path


@pytest.mark.parametrize("query", EXPECTED)
def test_the_index_proposes_and_the_rows_are_exact(db: Path, query: str) -> None:
    with SessionStore(db, readonly=True) as st:
        found = st.search(query, limit=100)
        assert found.route == CHECKED_ROUTE, query  # never the scan of every message
        assert sorted(TEXTS[r["id"] - 1] for r in found.rows) == sorted(EXPECTED[query])
        scanned = st.search(query, limit=100, route="like_scan")
        assert scanned.route == "like_scan"
        assert [r["id"] for r in found.rows] == [r["id"] for r in scanned.rows]


@pytest.mark.parametrize(
    "query",
    [
        "Anna의 NOT 부산",
        "Anna의 OR 2024年",
        "(GPT로 OR 5个) NOT 번역",
        '"Anna의 여동생은"',
        "NEAR(Anna의 부산, 3)",
        "Python* AND 2024年",
        "Anna의*",
    ],
)
@pytest.mark.parametrize("sort", [None, "newest", "oldest", "sessions"])
def test_operators_sorts_and_pages_match_the_scan(db: Path, query: str, sort: str | None) -> None:
    with SessionStore(db, readonly=True) as st:
        assert st.describe_search_path(query) == CHECKED_ROUTE, query
        for offset in (0, 1):
            got = st.search(query, limit=2, offset=offset, sort=sort)
            want = st.search(query, limit=2, offset=offset, sort=sort, route="like_scan")
            assert [r["id"] for r in got.rows] == [r["id"] for r in want.rows], (query, sort)


def test_a_symbol_alone_still_takes_the_scan(db: Path) -> None:
    """No index holds 🚀: an OR with it has no candidates to propose."""
    with SessionStore(db, readonly=True) as st:
        assert st.describe_search_path("Anna의 OR 🚀") == "like_scan"


def test_rows_pending_for_the_index_are_tested_with_their_new_text(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    with SessionStore(db) as st:
        st.add_session("s1", "cli")
        kept = st.add_message("s1", "user", "Anna의 책")
        changed = st.add_message("s1", "user", "Anna의 옛 글")
    conn = sqlite3.connect(db)  # a writer without the extension: changes wait as pending
    with conn:
        new = conn.execute(
            "INSERT INTO messages(session_id, role, content, timestamp) "
            "VALUES ('s1', 'user', 'GPT로 쓴 Anna의 새 글', 9.0)"
        ).lastrowid
        conn.execute("UPDATE messages SET content = 'Anna 새 글' WHERE id = ?", (changed,))
    conn.close()
    with SessionStore(db, readonly=True) as ro:
        assert ro.index_state()["cjk_pending"] > 0
        found = ro.search("Anna의")
        assert found.route == CHECKED_ROUTE
        assert {r["id"] for r in found.rows} == {kept, new}


@pytest.mark.parametrize(
    "without, query, stored",
    [(" variants 1", "Python國", "Python国"), (" kana 1", "Pythonヲ", "Pythonを")],
)
def test_an_index_that_folds_less_than_the_scan_proposes_nothing(
    tmp_path: Path, without: str, query: str, stored: str
) -> None:
    """An index an older hermes-fts built without a fold would miss rows the LIKE test
    folds to (国 for 國): such a query keeps the scan of every message."""
    with SessionStore(tmp_path / "state.db") as st:
        st.add_session("s1", "cli")
        hit = st.add_message("s1", "user", f"{stored} 사용")
        rebuild_cjk_index(st, without)
        found = st.search(query)
        assert found.route == "like_scan"
        assert [r["id"] for r in found.rows] == [hit]


@pytest.mark.parametrize(
    "query, named",
    [
        ("3시 회의", "3시 as 3"),
        ("第3版 发布", "第3版 as 3"),
        ("5个 苹果", "5个 as 5"),
        ("Pythonで 書いた", "Pythonで as Python"),
        ("A형 독감", "A형 not at all"),
    ],
)
def test_among_other_words_a_dropped_lone_character_is_said(
    db: Path, query: str, named: str
) -> None:
    """Beside other words such a word is searched by its other parts only: the note
    says so, and how to search it as written, where it was a silent change."""
    with SessionStore(db, readonly=True) as st:
        notes = st.search(query).notes
        assert any(named in n and "quote the word" in n for n in notes), notes
        word = query.split()[0]
        quoted = st.search(f'"{word}" {query.split()[1]}')
        assert quoted.route == CHECKED_ROUTE  # as written: the index proposes, LIKE decides


@pytest.mark.parametrize("query", ["Anna의 여동생", "中.文 x", "数据库迁移 计划"])
def test_no_such_note_where_nothing_is_dropped_or_a_particle_is_named(db: Path, query: str) -> None:
    with SessionStore(db, readonly=True) as st:
        assert not any("lone CJK character" in n for n in st.search(query).notes)
