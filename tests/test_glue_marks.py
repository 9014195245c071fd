"""Glue marks (``glue 1``): words unicode61 reads differently in the raw text.

A Latin word glued to CJK text (``配置think``) or written in full-width forms
is a different token, or part of one, in Hermes' unicode61 ``messages_fts``.
The CJK index marks such words with colocated tokens (``GLUE_MARKS``), so the
glued-Latin look of a word search reads rare marked tokens instead of the
term's doclists.  Shown here: which words are marked; that marks change no
position, size, rank or snippet; that the marked rows are every row the CJK
index adds to a word search (the look is exact); and that a store searches the
same with and without marks.
"""

from __future__ import annotations

import random
import sqlite3

import pytest
from _support import needs_extension, rebuild_cjk_index

import hermes_fts
from hermes_fts import loader
from hermes_fts._index_text import GLUE_MARKS
from hermes_fts.index import schema
from hermes_fts.index.schema import CJK
from hermes_fts.query.plan import glue_look, match_expression, parse_query, route_can_represent
from hermes_fts.store import SessionStore

pytestmark = needs_extension

G, L, R, W, J = GLUE_MARKS  # word, left pair, right pair, width, joined pair


def spans(text: str) -> list[tuple[int, int]]:
    """The tokenizer's query words of ``text`` as UTF-8 byte spans (glue_look's input)."""
    return [(t.start, t.end) for t in loader.tokenize(text, query=True)]


def marks(text: str) -> list[str]:
    """The glue marks of ``text``, in order, each colocated with the word it ends in."""
    tokens = loader.tokenize(text, "glue", "1", "symbols", "1")
    out = []
    word = None
    for t in tokens:
        if t.text[0] in GLUE_MARKS:
            assert t.colocated and word is not None and t.text.endswith(word.text)
            assert (t.start, t.end) == (word.start, word.end)
            out.append(t.text)
        else:
            word = t
    return out


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # glued on the left (the first two words), and on the right (the last two)
        (
            "配置think.toml文件",
            [G + "think", G + "toml", L + "think" + L + "toml", R + "think" + R + "toml"],
        ),
        ("配置 think.toml 文件", []),  # separators: unicode61 sees the same words
        ("修改youer服务端", [G + "youer"]),  # one word, glued on both sides: one mark
        ("配x y z配", [G + "x", L + "x" + L + "y", G + "z", R + "y" + R + "z"]),
        ("ＡＢＣ next，word", [G + "abc", W + "abc"]),  # a full-width comma separates
        ("x１y z", [G + "x1y", W + "x1y"]),  # one full-width digit changes the whole word
        ("東京Tower", [G + "tower"]),  # folded to lower case, as the word itself
        ("ｶﾞ abc", []),  # half-width katakana is CJK, and a space follows it
        ("plain english words", []),
        # a late symbol glues as CJK does, and takes no position between two words
        ("ship🥲it now", [G + "ship", G + "it", J + "ship" + J + "it", L + "it" + L + "now"]),
        ("go 🫠 home", [J + "go" + J + "home"]),  # unicode61 sees 🫠 as a word between
        ("配置🫠x", [G + "x"]),  # no word before the symbol: nothing to join
        ("a🫠配置b", [G + "a", G + "b"]),  # CJK between: a phrase cannot span it
        ("", []),
    ],
)
def test_glued_and_full_width_words_are_marked(text, expected):
    assert marks(text) == expected


def test_marks_only_in_documents_with_the_option():
    text = "配置think.toml文件 ＡＢＣ"
    assert marks(text)
    for tokens in (
        loader.tokenize(text, "glue", "1", query=True),
        loader.tokenize(text),
        loader.tokenize(text, "glue", "0"),
    ):
        assert not any(t.text[0] in GLUE_MARKS for t in tokens)


@pytest.mark.parametrize("bad", [["glue", "2"], ["glue", "yes"], ["glue"], ["glue", ""]])
def test_glue_takes_0_or_1(bad):
    conn = hermes_fts.connect(":memory:")
    with pytest.raises(sqlite3.Error):
        conn.execute(
            f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='cjk_unicode61 {' '.join(bad)}')"
        )
    with pytest.raises(ValueError, match=r"refused 'glue.*take 0 or 1"):
        loader.tokenize("x", *bad)


ROWS = [
    "配置think.toml文件",
    "think.toml is the file",
    "修改youer服务端的计划",
    "youer 服务",
    "ＡＢＣ and abc",
    "東京Tower で",
    "the tower",
    "配x 和 x配",
    "a 配b c配 d",
]


def _pair(conn: sqlite3.Connection) -> None:
    for name, extra in (("g", " glue 1"), ("p", "")):
        conn.execute(
            f"CREATE VIRTUAL TABLE {name} USING fts5(x, tokenize='cjk_unicode61 unigrams 1{extra}')"
        )
        conn.executemany(f"INSERT INTO {name}(rowid, x) VALUES (?, ?)", enumerate(ROWS, 1))


@pytest.mark.parametrize(
    "query",
    [
        "think",
        '"think toml"',
        "toml 文件",
        "youer",
        "abc",
        "tower",
        "x",
        "配置",
        "b OR c",
        "NEAR(think toml, 1)",
        "thin*",
    ],
)
def test_marks_change_no_match_rank_or_snippet(query):
    # Colocated marks take no position and FTS5 does not count them in a
    # column's size: bm25, phrases, NEAR and highlights are those without marks.
    conn = hermes_fts.connect(":memory:")
    _pair(conn)
    sql = (
        "SELECT rowid, rank, highlight({t}, 0, '[', ']'), cjk_snippet({t}, 0, '[', ']', '…', 20) "
        "FROM {t} WHERE {t} MATCH ? ORDER BY rank, rowid"
    )
    with_marks = conn.execute(sql.format(t="g"), (query,)).fetchall()
    assert with_marks == conn.execute(sql.format(t="p"), (query,)).fetchall()
    assert with_marks or query == "b OR c"


# ---------------------------------------------------------------------------
# The look is exact: every row the CJK index adds to a word search is marked


LATIN = ["alpha", "Alpha", "alphabet", "beta", "ｂｅｔａ", "gamma", "x1", "ｘ１", "ta", "del"]
# What unicode61 reads as letters beside a word: CJK runs, and symbols newer
# than its tables (``symbols 1`` splits them off, so they glue as CJK does).
GLUING = ["配置", "东", "々", "ｶﾞ", "한국", "ー", "〇", "🫠", "₽"]
SEPARATORS = [" ", ".", "-", "/", "。", "・", "，", "　", ""]


def _rows(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)

    def words() -> str:  # two or three words in a row, as a phrase query has them
        return rng.choice(SEPARATORS[:4]).join(rng.choice(LATIN) for _ in range(rng.randint(2, 3)))

    def piece() -> str:
        kind = rng.random()
        if kind < 0.1:  # glued to CJK on the left, the right or both
            return rng.choice(("", rng.choice(GLUING))) + words() + rng.choice(GLUING)
        if kind < 0.2:
            return rng.choice(GLUING) + words()
        return rng.choice((LATIN, GLUING, SEPARATORS)[int(kind * 3) % 3])

    # and, for certain, phrases of three words glued on either side
    fixed = [
        "配置gamma.beta.alpha",
        "gamma.beta.alpha〇",
        "东del ta x1",
        "del ta x1ー",
        "한국alpha-beta.gamma",
        "alpha-beta.gammabet配置",
    ]
    return fixed + ["".join(piece() for _ in range(rng.randint(1, 12))) for _ in range(n)]


def _queries(seed: int) -> list[str]:
    rng = random.Random(seed)
    words = ["alpha", "beta", "gamma", "x1", "ta", "del", "alp*", "be*", "ｂｅｔａ", "ｘ１"]
    out = ["gamma.beta.alpha", '"del ta x1"', "alpha-beta.gam*"]
    for _ in range(120):
        kind = rng.random()
        a, b, c = rng.choice(words), rng.choice(words).rstrip("*"), rng.choice(words).rstrip("*")
        if kind < 0.25:
            out.append(a)
        elif kind < 0.45:
            out.append(f'"{b} {a}"')  # a phrase (the last word may be a prefix)
        elif kind < 0.55:
            out.append(f'"{c} {b} {a}"')
        elif kind < 0.7:
            out.append(f"{c}-{b}.{a.rstrip('*')}" if kind < 0.62 else f"{b}.{a.rstrip('*')}")
        elif kind < 0.85:
            out.append(f"{a} OR {b}")
        else:
            out.append(f"{a} {b}")
    return out


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_every_row_the_cjk_index_adds_to_a_word_search_is_marked(seed):
    conn = hermes_fts.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE u USING fts5(x)")  # Hermes' messages_fts
    conn.execute(f"CREATE VIRTUAL TABLE k USING fts5(x, tokenize='{schema.CJK_TOKENIZE}')")
    rows = _rows(400, seed)
    for table in ("u", "k"):
        conn.executemany(f"INSERT INTO {table}(rowid, x) VALUES (?, ?)", enumerate(rows, 1))

    def match(table: str, expr: str) -> set[int]:
        return {
            r[0] for r in conn.execute(f"SELECT rowid FROM {table} WHERE {table} MATCH ?", (expr,))
        }

    added = 0
    for raw in _queries(seed):
        q = parse_query(raw)
        assert route_can_represent(q, "fts5") and route_can_represent(q, "fts_cjk"), raw
        # No look for a full-width query: the CJK index folds it, the word index not.
        look = glue_look(q, spans) or match_expression(q, "fts_cjk")
        extra = match("k", match_expression(q, "fts_cjk")) - match("u", match_expression(q, "fts5"))
        assert extra <= match("k", look), raw
        added += len(extra)
    assert added > 50  # the rows do make the word index miss rows


def test_the_look_asks_for_one_rare_mark_per_alternative():
    assert glue_look(parse_query("alpha NOT beta"), spans) is None
    assert glue_look(parse_query("ＡＢＣ"), spans) is None
    assert glue_look(parse_query("Alpha*"), spans) == f'"{G}Alpha"*'
    # a phrase: each word's width mark, the glued pairs at either end, each joined pair
    assert glue_look(parse_query("said-cycle.json*"), spans) == " OR ".join(
        [f'"{W}said"', f'"{W}cycle"', f'"{W}json"*', f'"{L}said{L}cycle"', f'"{R}cycle{R}json"*']
        + [f'"{J}said{J}cycle"', f'"{J}cycle{J}json"*']
    )
    assert glue_look(parse_query("think.toml*"), spans) == " OR ".join(
        [f'"{W}think"', f'"{W}toml"*', f'"{L}think{L}toml"*', f'"{R}think{R}toml"*']
        + [f'"{J}think{J}toml"*']
    )


# ---------------------------------------------------------------------------
# The store: same rows with and without marks, and the upgrade


STORE_ROWS = [
    ("user", "配置think.toml文件"),
    ("user", "think.toml again"),
    ("tool", "读取think.toml成功"),
    ("assistant", "修改youer服务端"),
    ("user", "youer youer"),
    ("user", "ＡＢＣ 的"),
    ("user", "abc plain"),
    ("assistant", "东京Tower见"),
    ("user", "tower crane"),
]


def _store(path) -> tuple[SessionStore, list[int]]:
    st = SessionStore(path)
    st.add_session("s1", source="cli", started_at=1000.0)
    return st, [
        st.add_message("s1", role, text, timestamp=10.0 + n)
        for n, (role, text) in enumerate(STORE_ROWS)
    ]


QUERIES = [
    "think.toml",
    "think",
    "toml",
    "youer",
    "abc",
    "tower",
    "thin*",
    "abc OR tower",
    "youer NOT 服务端",
    "crane",
    "ＡＢＣ",
    "ｔｈｉｎｋ.toml",
]


def test_a_store_finds_the_same_rows_with_and_without_marks(tmp_path):
    marked_store, _ = _store(tmp_path / "marked.db")
    plain_store, _ = _store(tmp_path / "plain.db")
    rebuild_cjk_index(plain_store, " glue 1")
    assert marked_store.status()["indexes"][CJK]["glue"] is True
    assert plain_store.status()["indexes"][CJK]["glue"] is False
    for role in (None, ["tool"]):
        for query in QUERIES:
            ours = [
                (r["id"], r["snippet"])
                for r in marked_store.search_messages(query, role_filter=role)
            ]
            assert ours == [
                (r["id"], r["snippet"])
                for r in plain_store.search_messages(query, role_filter=role)
            ], query
            assert ours or role, query
    marked_store.close()
    plain_store.close()


def test_optimize_storage_adds_the_marks_to_an_older_index(tmp_path):
    st, ids = _store(tmp_path / "state.db")
    rebuild_cjk_index(st, " glue 1")
    assert st.optimize_needed()
    glued = [r["id"] for r in st.search_messages("think.toml")]
    assert sorted(glued) == ids[:3]  # the plain row and both glued ones
    st.optimize_storage(vacuum=False)
    assert st.status()["indexes"][CJK]["glue"] is True
    assert not st.optimize_needed()
    assert [r["id"] for r in st.search_messages("think.toml")] == glued
    st.close()


def test_status_says_when_the_cjk_index_has_no_glue_marks(tmp_path, capsys):
    from hermes_fts.cli import main

    st, _ = _store(tmp_path / "state.db")
    rebuild_cjk_index(st, " glue 1")
    st.close()
    assert main(["status", "--db", str(tmp_path / "state.db")]) == 0
    assert "no glue marks: word searches" in capsys.readouterr().out
    assert main(["optimize-storage", "--db", str(tmp_path / "state.db"), "--yes"]) == 0
    capsys.readouterr()
    assert main(["status", "--db", str(tmp_path / "state.db")]) == 0
    assert "glue marks" not in capsys.readouterr().out
