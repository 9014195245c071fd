"""cjk_highlight() and cjk_snippet(): merged spans, exact offsets, char-counted snippets."""

from __future__ import annotations

import pytest
from _cjk_hosts import DB_ERRORS, HOSTS, Db, host_db


@pytest.fixture(params=HOSTS)
def db(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Db:
    return host_db(request.param, tmp_path_factory)


def make_table(db: Db, rows: list[tuple], cols: str = "x", options: str = "") -> None:
    db.run(f"CREATE VIRTUAL TABLE t USING fts5({cols}, tokenize='cjk_unicode61 {options}')")
    marks = ", ".join("?" for _ in rows[0])
    for row in rows:
        db.run(f"INSERT INTO t VALUES ({marks})", row)


def highlight(db: Db, query: str, col: int = 0) -> list[str]:
    return [
        h
        for (h,) in db.all(
            f"SELECT cjk_highlight(t, {col}, '[', ']') FROM t WHERE t MATCH ? ORDER BY rowid",
            (query,),
        )
    ]


def snippet(db: Db, query: str, max_chars: int, col: int = 0, ellipsis: str = "…") -> list[str]:
    return [
        s
        for (s,) in db.all(
            f"SELECT cjk_snippet(t, {col}, '[', ']', ?, {max_chars}) FROM t WHERE t MATCH ? "
            "ORDER BY rowid",
            (ellipsis, query),
        )
    ]


@pytest.mark.parametrize(
    "text, query, expected",
    [
        # the bigrams of one phrase merge into one span
        ("我是中国人民", "中国人", "我是[中国人]民"),
        # two adjacent phrases touch: one span
        ("我是中国人民", "中国 人民", "我是[中国人民]"),
        # separate hits stay separate
        ("中国和中国", "中国", "[中国]和[中国]"),
        # Latin and CJK in one phrase, exact offsets around width-folded text
        ("修改youer服务端", '"youer 服务端"', "修改[youer服务端]"),
        ("型番ＡＢＣ１２３です", "abc123", "型番[ＡＢＣ１２３]です"),
        ("ｶﾞｲﾄﾞﾌﾞｯｸを読む", "ガイド", "[ｶﾞｲﾄﾞ]ﾌﾞｯｸを読む"),
        # Latin words separated by a space are not adjacent: two spans
        ("hello world again", "hello world", "[hello] [world] again"),
        ("hello world again", '"hello world"', "[hello world] again"),
        # prefix query on bigrams
        ("中华人民共和国", "人民*", "中华[人民]共和国"),
    ],
)
def test_highlight_merges(db: Db, text: str, query: str, expected: str) -> None:
    make_table(db, [(text,)])
    assert highlight(db, query) == [expected]


def test_highlight_matches_builtin_on_latin(db: Db) -> None:
    text = "the quick brown fox jumps over the lazy dog; the end"
    make_table(db, [(text,)])
    for q in ("the", '"quick brown"', "fox OR dog", "jump*", "NEAR(quick fox, 3)"):
        ours = highlight(db, q)
        builtin = [
            h for (h,) in db.all("SELECT highlight(t, 0, '[', ']') FROM t WHERE t MATCH ?", (q,))
        ]
        assert ours == builtin, q


def test_highlight_other_column_and_nulls(db: Db) -> None:
    make_table(db, [("中国人", None), (None, "人民中国")], cols="a, b")
    assert db.all(
        "SELECT rowid, cjk_highlight(t, 0, '<', '>'), cjk_highlight(t, 1, '<', '>') "
        "FROM t WHERE t MATCH '中国' ORDER BY rowid"
    ) == [(1, "<中国>人", None), (2, None, "人民<中国>")]


def test_single_char_hit_with_unigrams(db: Db) -> None:
    make_table(db, [("我是中国人民",)], options="unigrams 1")
    got = highlight(db, "国")
    if db.sqlite_version >= (3, 45, 0):
        # xInstToken (extension API v3) tells which character matched
        assert got == ["我是中[国]人民"]
        assert highlight(db, "民") == ["我是中国人[民]"]
    else:
        # SQLite 3.40: only the position is known; its bigram is highlighted
        assert got == ["我是中[国人]民"]
        assert highlight(db, "民") == ["我是中国[人民]"]


def _plain(s: str, ellipsis: str = "…") -> str:
    return s.replace("[", "").replace("]", "").replace(ellipsis, "")


def test_snippet_counts_characters(db: Db) -> None:
    text = (
        "今天我们讨论了很多问题，" * 5 + "最后决定修改服务端配置。" + "然后大家一起去吃饭了。" * 5
    )
    make_table(db, [(text,)])
    (s,) = snippet(db, "服务端", 10)
    assert "[服务端]" in s
    assert s.startswith("…") and s.endswith("…")
    inner = _plain(s)
    assert len(inner) == 10 and inner in text
    # centred on the hit
    assert inner.index("服务端") in (3, 4)


def test_snippet_short_text_is_whole(db: Db) -> None:
    make_table(db, [("中国人民",)])
    assert snippet(db, "人民", 10) == ["中国[人民]"]
    assert snippet(db, "人民", 4) == ["中国[人民]"]
    assert snippet(db, "人民", 3) == ["…国[人民]"]


def test_snippet_ellipsis_only_where_cut(db: Db) -> None:
    text = "中国人民银行在北京召开会议讨论经济问题"
    make_table(db, [(text,)])
    (s,) = snippet(db, "中国", 6)
    assert s == "[中国]人民银行…"
    (s,) = snippet(db, "问题", 6)
    assert s == "…讨论经济[问题]"


def test_snippet_prefers_window_with_most_phrases(db: Db) -> None:
    text = "苹果" + "。" * 30 + "苹果和香蕉" + "。" * 30
    make_table(db, [(text,)])
    (s,) = snippet(db, "苹果 香蕉", 9)
    assert "[苹果]和[香蕉]" in s


def test_snippet_best_column(db: Db) -> None:
    make_table(db, [("没有相关内容", "中国人民，中国银行")], cols="a, b")
    assert snippet(db, "中国", 20, col=-1) == ["[中国]人民，[中国]银行"]
    assert snippet(db, "中国", 20, col=0) == ["没有相关内容"]


def test_snippet_width_folded_and_surrogate_pairs(db: Db) -> None:
    text = "𠀀𠀁𠀂𠀃 ＡＢＣ１２３ 𠀄𠀅𠀆𠀇"
    make_table(db, [(text,)])
    (s,) = snippet(db, "abc123", 8)
    assert "[ＡＢＣ１２３]" in s
    assert len(_plain(s)) == 8


@pytest.mark.parametrize(
    "text, query, expected",
    [
        # a combining mark the tokenizer separates from the CJK before it
        ("東京\u0301タワー", "東京", "[東京\u0301]タワー"),
        ("東京\u0301\u0302タワー", "東京", "[東京\u0301\u0302]タワー"),
        # a joiner and the emoji it joins, a skin tone after a word
        ("部署\u200d\U0001f468 ok", "部署", "[部署\u200d\U0001f468] ok"),
        ("ok\U0001f3fb fine", "ok", "[ok\U0001f3fb] fine"),
        ("東京タワー", "東京", "[東京]タワー"),  # nothing drawn with the hit: as before
    ],
)
def test_a_highlight_keeps_the_character_it_ends_in_whole(
    db: Db, text: str, query: str, expected: str
) -> None:
    # The span ended at the token's last byte, so the mark drawn with that
    # character came after the close marker (>>>東京<<<́), where the LIKE
    # scan's snippet of the same row keeps it inside.
    make_table(db, [(text,)], options="compose 1 symbols 1")
    assert highlight(db, query) == [expected]
    assert snippet(db, query, 64) == [expected]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT cjk_highlight(t, 0, '[') FROM t WHERE t MATCH '中国'",
        "SELECT cjk_highlight(t, 0, '[', ']', 'x') FROM t WHERE t MATCH '中国'",
        "SELECT cjk_snippet(t, 0, '[', ']', '…') FROM t WHERE t MATCH '中国'",
    ],
)
def test_wrong_argument_count(db: Db, sql: str) -> None:
    make_table(db, [("中国人",)])
    with pytest.raises(DB_ERRORS, match="wrong number of arguments"):
        db.all(sql)


def test_bad_column_and_length(db: Db) -> None:
    make_table(db, [("中国人",)])
    with pytest.raises(DB_ERRORS, match="out of range"):
        db.all("SELECT cjk_highlight(t, 5, '[', ']') FROM t WHERE t MATCH '中国'")
    with pytest.raises(DB_ERRORS, match="max_chars"):
        db.all("SELECT cjk_snippet(t, 0, '[', ']', '…', 0) FROM t WHERE t MATCH '中国'")


def test_a_long_snippet_of_a_text_full_of_hits_is_its_first_window(db: Db) -> None:
    # Each hit's window counted every hit inside it, so a text of 150,000 hits cut in
    # windows of 75,000 took minutes (benchmarks/test_bench_snippet_hits.py times it);
    # windows now come and go in one sweep, the earliest of equal windows still first.
    make_table(db, [("中国" * 150_000,)])
    (s,) = snippet(db, "中国", 150_000)
    assert s.endswith("…") and _plain(s) == "中国" * 75_000
