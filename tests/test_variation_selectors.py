"""A CJK character written with a variation selector reads as the character (``selectors 1``).

Japanese names and places are often stored with an ideographic variation
sequence (``葛󠄀飾``: 葛 followed by VS17, U+E0100) so that a particular glyph is
drawn; an input method types plain ``葛飾``.  The selector chooses a glyph,
never another word, yet the tokenizer read it as a separator, so ``葛飾``
found nothing in ``葛󠄀飾区``.  Standard variation selectors (U+FE00..FE0F)
after Han characters are the same case.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from _cjk_hosts import HOSTS, host_db
from _support import needs_extension, rebuild_cjk_index, rebuilt_by_optimize_storage

import hermes_fts
from hermes_fts import loader
from hermes_fts.query.plan import fold_text
from hermes_fts.store import SessionStore

pytestmark = needs_extension

IVS = "\U000e0100"  # VS17, the first ideographic variation selector
VS1 = "\ufe00"
# (stored, typed): the typed word must find the stored one, and the reverse.
SAME = [
    (f"葛{IVS}飾区", "葛飾区"),
    (f"辻{IVS}堂", "辻堂"),
    (f"東{VS1}京", "東京"),
    (f"渡邉{IVS}{IVS}さん", "渡邉さん"),  # two selectors in a row
]


def _ids(st: SessionStore, query: str) -> list[int]:
    found = st.search(query, route="fts_cjk")
    assert found.route == "fts_cjk"
    return [r["id"] for r in found.rows]


def test_the_selector_is_part_of_the_character_before_it() -> None:
    plain = [t.text for t in loader.tokenize("葛飾区", "selectors", "1")]
    tokens = loader.tokenize(f"葛{IVS}飾区", "selectors", "1")
    assert [t.text for t in tokens] == plain == ["葛飾", "飾区"]
    # Offsets still cover the original bytes: the selector is inside the first bigram.
    assert (tokens[0].start, tokens[0].end) == (0, len(f"葛{IVS}飾".encode()))
    # Without the option (an index built before it) the selector separates.
    assert [t.text for t in loader.tokenize(f"葛{IVS}飾区")] == ["葛", "飾区"]


@pytest.mark.parametrize("text", [IVS, IVS * 3 + "a", f"a{IVS}b", f"{IVS}葛", "葛" + IVS])
def test_a_selector_alone_or_after_latin_is_no_token_of_its_own(text: str) -> None:
    texts = [t.text for t in loader.tokenize(text, "selectors", "1")]
    assert all(IVS not in t or t == "a" + IVS + "b" for t in texts), texts
    assert [t.text for t in loader.tokenize(text, "selectors", "1", query=True)] == [
        t.text for t in loader.tokenize(text, "selectors", "1")
    ]


def test_a_word_is_found_with_or_without_its_selector(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "state.db") as st:
        st.add_session("s1", "cli")
        stored = [st.add_message("s1", "user", f"{a} です") for a, _ in SAME]
        typed = [st.add_message("s1", "user", f"{b} です") for _, b in SAME]
        for (a, b), row_a, row_b in zip(SAME, stored, typed):
            assert sorted(_ids(st, b)) == [row_a, row_b], b
            assert sorted(_ids(st, a)) == [row_a, row_b], a
        # The snippet marks the word with its selector, not half of it.
        (snippet,) = [r["snippet"] for r in st.search("葛飾").rows if r["id"] == stored[0]]
        assert f">>>葛{IVS}飾<<<" in snippet


def test_an_index_built_before_the_option_is_rebuilt_by_optimize_storage(tmp_path: Path) -> None:
    st = SessionStore(tmp_path / "state.db")
    st.add_session("s1", "cli")
    row = st.add_message("s1", "user", f"葛{IVS}飾区に住んでいます")
    rebuild_cjk_index(st, " selectors 1")
    status = "variation selectors split CJK words"
    rebuilt_by_optimize_storage(st, "selectors", "葛飾", row, status, "variation selector")


@pytest.mark.parametrize(
    "text, plain",
    [
        (f"葛{IVS}飾区", "葛飾区"),
        (f"渡邉{IVS}{IVS}さん", "渡邉さん"),
        (f"か{IVS}き", "かき"),  # hiragana is CJK too
        (f"a{IVS}b ❤\ufe0f", f"a{IVS}b ❤\ufe0f"),  # after anything else it stays
        (f"{IVS}葛", f"{IVS}葛"),
    ],
)
def test_the_like_scan_folds_a_selector_away_as_the_index_reads_it(text: str, plain: str) -> None:
    # The LIKE scan compares cjk_fold(column) with the pattern through fold_text;
    # both kept the selector, so a row the index had not taken yet was found by
    # 葛󠄀飾 only, and the index found it by 葛飾 too.
    conn = hermes_fts.connect(":memory:")
    assert conn.execute("SELECT cjk_fold(?)", (text,)).fetchone()[0] == fold_text(plain)
    assert fold_text(text) == fold_text(plain)
    # cjk_fold_find counts the characters as written: the selector is one of them.
    assert conn.execute("SELECT cjk_fold_find(?, '飾')", (f"葛{IVS}飾",)).fetchone()[0] == 2


def _shell_rows(path: Path, texts: list[str]) -> None:
    """``texts`` written by the sqlite3 shell, as Hermes writes: pending for the CJK index."""
    script = "".join(
        "INSERT INTO messages(session_id, role, content, timestamp) "
        f"VALUES('s1', 'user', CAST(x'{t.encode().hex()}' AS TEXT), 1700000001);"
        for t in texts
    )
    subprocess.run([str(shutil.which("sqlite3")), str(path), script], check=True, timeout=60)


@pytest.mark.skipif(shutil.which("sqlite3") is None, reason="needs the sqlite3 shell")
def test_a_pending_row_is_found_as_the_index_finds_it(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    with SessionStore(path) as st:
        st.add_session("s1", "cli")
        st.add_message("s1", "user", "seed")
    _shell_rows(path, [f"{a} です" for a, _ in SAME])
    queries = [q for pair in SAME for q in pair] + ['"葛飾区 です"', "NEAR(渡邉さん です, 1)"]
    with SessionStore(path, readonly=True) as waiting:
        assert waiting.index_state()["cjk_pending"] == len(SAME)
        pending = {q: _ids(waiting, q) for q in queries}
        scanned = {
            q: sorted(r["id"] for r in waiting.search(q, route="like_scan").rows) for q in queries
        }
        snippet = waiting.search("葛飾").rows[0]["snippet"]
    with SessionStore(path) as st:
        st.optimize_storage(vacuum=False)
        indexed = {q: _ids(st, q) for q in queries}
    assert all(indexed.values()), indexed
    assert pending == scanned == indexed
    # The LIKE snippet marks the word with its selector, as the index's does.
    assert f">>>葛{IVS}飾<<<" in snippet


@pytest.mark.parametrize(
    "query, marked",
    [("葛", f">>>葛{IVS}<<<飾区"), ("飾", f"葛{IVS}>>>飾<<<区"), ("区", f"飾>>>区{IVS}<<<に")],
)
def test_a_one_character_hit_marks_its_character_with_its_selector(
    tmp_path: Path, query: str, marked: str
) -> None:
    # A bigram holding a selector is three code points; the narrowing looked for
    # two, so the query 葛 marked 葛󠄀飾 on the index route.
    with SessionStore(tmp_path / "state.db") as st:
        st.add_session("s1", "cli")
        st.add_message("s1", "user", f"葛{IVS}飾区{IVS}に住んでいます")
        for route in ("fts_cjk", "like_scan"):
            (row,) = st.search(query, route=route).rows
            assert marked in row["snippet"], (route, row["snippet"])


@pytest.mark.parametrize("host", HOSTS)
def test_cjk_highlight_narrows_a_character_with_its_selector(
    host: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    db = host_db(host, tmp_path_factory)
    db.run("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='cjk_unicode61 unigrams 1 selectors 1')")
    db.run("INSERT INTO t VALUES (?)", (f"葛{IVS}飾区",))
    got = db.value("SELECT cjk_highlight(t, 0, '[', ']') FROM t WHERE t MATCH '葛'")
    if db.sqlite_version >= (3, 45, 0):  # xInstToken says which character matched
        assert got == f"[葛{IVS}]飾区"
    else:  # the whole bigram; the search layer narrows it (above)
        assert got == f"[葛{IVS}飾]区"
