"""hermes_fts.query.plan: canonical text, parsed form, routing decisions, MATCH text and LIKE plans."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest
from _support import IDENTIFIERS

import hermes_fts
from hermes_fts._index_text import fold_width
from hermes_fts.query.best import best_match
from hermes_fts.query.plan import (
    Query,
    choose_route,
    has_cjk,
    match_expression,
    parse_query,
    route_can_represent,
    sanitize_fts5_query,
    snippet_terms,
)
from hermes_fts.query.syntax import MAX_FTS5_QUERY_CHARS
from hermes_fts.query.tree import AllOf, AnyOf, Near, Term
from hermes_fts.search import like as like_sql
from hermes_fts.search.like import (
    LikeAll,
    LikeNear,
    LikeText,
    LikeWords,
    like_plan,
    near_matches,
)


def q(raw: str) -> Query:
    parsed = parse_query(raw)
    assert parsed.error is None, parsed.error
    return parsed


# ---------------------------------------------------------------------------
# Canonical text: every term quoted, every operator explicit
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("hello world", '"hello" AND "world"'),
        ("chat-send", '"chat-send"'),
        ("P2.2", '"P2.2"'),
        ("my-app.config.ts", '"my-app.config.ts"'),
        ("scripts/deploy.sh", '"scripts/deploy.sh"'),
        ("user@example.com", '"user@example.com"'),
        ("61.2%", '"61.2%"'),
        ("50%", '"50%"'),
        ("path\\to\\file.txt", '"path\\to\\file.txt"'),
        ("my-app.config*", '"my-app.config"*'),
        ("my-app.config***", '"my-app.config"*'),
        ("path:config.yaml", '"path:config.yaml"'),
        ("content:deploy", '"content:deploy"'),  # one term, never `content AND deploy`
        ("(see my-app.config.ts),", '"see" AND "my-app.config.ts"'),
        ("`my-app.config.ts`", '"my-app.config.ts"'),
        ("TODO: fix", '"TODO" AND "fix"'),
        ("C:\\Users", '"C:\\Users"'),
        (".env", '"env"'),
        ("rm -rf", '"rm" AND "rf"'),
        ("--force", '"force"'),
        ("alpha`beta", '"alpha`beta"'),
        ("issue --- main", '"issue" AND "main"'),
        ("a\tb  c", '"a" AND "b" AND "c"'),
        ('"exact phrase" other', '"exact phrase" AND "other"'),
        ('say "unbalanced', '"say" AND "unbalanced"'),
        ('""', ""),
        ("***", ""),
        ("*foo", '"foo"'),
        ("foo*", '"foo"*'),
        ("OR*", '"OR"*'),
        ("秃发*", '"秃发"*'),
        ('"秃发*"', '"秃发"*'),
        ("100%完成", '"100%完成"'),
        ("x\u3000y", '"x" AND "y"'),
        ("a\x00b", '"a" AND "b"'),
        ("foo_bar", '"foo_bar"'),
        ('"say ""hi"""', '"say ""hi"""'),
        ("桂林OR漓江", '"桂林" OR "漓江"'),
        ("ORACLE DOOR漓江", '"ORACLE" AND "DOOR漓江"'),  # an operator only between CJK
        ("NEAR(deploy service, 5)", 'NEAR("deploy" "service", 5)'),
        ("NEAR(deploy service)", 'NEAR("deploy" "service", 10)'),
        ("near(deploy service)", '"near" AND "deploy" AND "service"'),
    ],
)
def test_canonical_text(raw: str, expected: str) -> None:
    assert sanitize_fts5_query(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("a AND OR b", '"a" OR "b"'),
        ("OR OR", ""),
        ("a OR OR b", '"a" OR "b"'),
        ("x AND AND y", '"x" AND "y"'),
        ("a AND NOT b", '"a" NOT "b"'),
        ("AND a", '"a"'),
        ("OR a OR", '"a"'),
        ("foo NOT", '"foo"'),
        ("a --- OR --- b", '"a" OR "b"'),
        ("(a OR b)", '"a" OR "b"'),
        ("a (b OR c)", '"a" AND ("b" OR "c")'),
        # NOT and AND bind at one level, left to right; OR is loosest
        ("a NOT b c", '("a" AND "c") NOT "b"'),
        ("a OR b NOT c", '"a" OR ("b" NOT "c")'),
        ("x NOT (a OR b) NOT c", '"x" NOT ("a" OR "b" OR "c")'),
        ("a NOT (b NOT c)", '"a" NOT ("b" NOT "c")'),
        ("and or not", '"and" AND "or" AND "not"'),
        # refused: nothing to find, or ambiguous
        ("NOT NOT x", ""),
        ("a NOT NOT b", ""),
        ("a OR NOT b", ""),
        ("NOT foo", ""),
    ],
)
def test_canonical_operators(raw: str, expected: str) -> None:
    assert sanitize_fts5_query(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("NEAR (deploy service)", 'NEAR("deploy" "service", 10)'),
        ("NEAR\t( deploy service, 3 )", 'NEAR("deploy" "service", 3)'),
        ("fix NEAR (deploy service, 2)", '"fix" AND NEAR("deploy" "service", 2)'),
        ("(NEAR (a b))", 'NEAR("a" "b", 10)'),
        ('"NEAR (a b)"', '"NEAR (a b)"'),  # a phrase stays text
        ("xNEAR (a b)", '"xNEAR" AND "a" AND "b"'),  # not the operator
    ],
)
def test_a_space_before_nears_parenthesis_is_read_as_near_with_a_note(
    raw: str, expected: str
) -> None:
    """Regression: ``NEAR (a b)``, which FTS5 reads as a NEAR group, was searched
    as the words NEAR, a and b, required, with no note."""
    assert sanitize_fts5_query(raw) == expected
    said = "read 'NEAR (' as 'NEAR(': a NEAR group, written without the space"
    assert (said in parse_query(raw).notes) == ("NEAR(" in expected)
    assert parse_query("NEAR (a b").error  # unclosed, as NEAR(a b is


@pytest.mark.parametrize(
    "query",
    [
        "deploy " + "K" * 1500 + "扩",  # a lone CJK character beside a word
        "한" * 2000,  # a Korean word's other form
        "*" + "x" * 2000,  # a star before a word
        "-" + "y" * 1500 + " z",  # a leading dash, and the word's forms
        "a" * 1000 + "🚀" + "b" * 900,  # a symbol beside words
    ],
)
def test_a_note_names_a_long_word_by_its_start(query: str) -> None:
    """Regression: notes quoted a pasted word of up to 2,048 characters whole, some
    twice (the word and its form), where docs/QUERY.md says a note names a long
    word by its start."""
    parsed = best_match(parse_query(query, sentence=True))  # as read again when in no message
    assert parsed.notes
    for note in parsed.notes:
        assert len(note) < 400 and "…" in note, note[:100]


def test_long_input_is_cut_at_a_term_boundary() -> None:
    parsed = parse_query("ab " * MAX_FTS5_QUERY_CHARS)
    assert [t.text for t in parsed.terms] == ["ab"]
    assert any("cut" in n for n in parsed.notes)
    # a phrase across the limit is dropped whole, never cut into `"ab c`
    raw = "x" * (MAX_FTS5_QUERY_CHARS - 3) + ' "ab cd"'
    assert sanitize_fts5_query(raw) == '"' + "x" * (MAX_FTS5_QUERY_CHARS - 3) + '"'
    assert parse_query("a" * (MAX_FTS5_QUERY_CHARS + 500)).error


def test_a_long_paste_is_not_kept_by_the_parse_cache() -> None:
    """Questions are parsed once per text and kept (syntax._parse); a paste of megabytes,
    each one different, would have been kept too, 256 of them."""
    from hermes_fts.query import syntax

    before = syntax._parse.cache_info().currsize
    paste = "deploy log line " * 200_000  # 3.2 million characters
    assert parse_query(paste).terms and parse_query(paste + "x").terms
    assert syntax._parse.cache_info().currsize == before
    # a question is kept: the same reading is handed back
    assert parse_query("keep this question") is parse_query("keep this question")


def test_canonical_text_is_a_fixed_point() -> None:
    for raw in [
        "a NOT b c",
        "scripts/deploy.sh*",
        '"秃发*" OR 桂林',
        "TODO: fix",
        "a AND OR b",
        'NEAR(a "b c"*, 3) OR (x NOT y)',
        '"a ""quoted"" word"',
    ]:
        once = sanitize_fts5_query(raw)
        assert sanitize_fts5_query(once) == once
        assert parse_query(once).expr == parse_query(raw).expr


# ---------------------------------------------------------------------------
# Parsed form
# ---------------------------------------------------------------------------


def test_parse_tree_and_precedence() -> None:
    t = Term
    assert q("alpha beta OR gamma NOT delta epsilon").expr == AnyOf(
        (
            AllOf((t("alpha"), t("beta"))),
            AllOf((t("gamma"), t("epsilon")), (t("delta"),)),
        )
    )
    assert q("a b a").expr == AllOf((t("a"), t("b")))  # a repeated term changes nothing
    assert q("a OR a").expr == t("a")
    assert q("NEAR(a b*, 2)").expr == Near((t("a"), t("b", prefix=True)), 2)


def test_parse_prefix_flags_and_term_listing() -> None:
    parsed = q('"exact phrase"* my-app.config foo* NOT bar')
    assert parsed.terms == (
        Term("exact phrase", prefix=True),
        Term("my-app.config"),
        Term("foo", prefix=True),
        Term("bar", negated=True),
    )
    assert q("a NOT (b NOT c)").terms == (Term("a"), Term("b", negated=True), Term("c"))


def test_parse_undoubles_quotes_and_never_raises() -> None:
    assert parse_query('"say ""hi"""').terms == (Term('say "hi"'),)
    for junk in [
        "",
        "   ",
        "OR",
        "NOT",
        '"',
        '"""',
        "*",
        "NOT x",
        "a OR NOT",
        "(((",
        ":",
        ")))",
        "NEAR(",
        "NEAR()",
        "NEAR(,)",
        "NEAR(a,",
        None,
        42,
    ]:
        parsed = parse_query(junk)
        assert parsed.is_empty or parsed.error is None


def test_negative_only_is_refused_never_inverted() -> None:
    for raw in ["NOT a OR b", "NOT a", "-a", "(NOT a)", "a OR NOT b"]:
        parsed = parse_query(raw)
        assert parsed.is_empty and parsed.error and "NOT" in parsed.error, raw
    assert q("NOT a b").expr == AllOf((Term("b"),), (Term("a"),))  # a word to find


# ---------------------------------------------------------------------------
# CJK classification
# ---------------------------------------------------------------------------


def test_has_cjk_uses_folded_width() -> None:
    assert has_cjk("ｶﾀｶﾅ")  # half-width katakana folds to katakana
    assert not has_cjk("ＡＢＣ")  # full-width Latin folds to ASCII
    assert has_cjk("한국어") and has_cjk("ひらがな") and has_cjk("漢字")
    assert not has_cjk("。、「」")  # CJK punctuation separates, it is not CJK
    assert fold_width("ｶﾞｷﾞＡ") == "ガギA"


def test_routing_is_per_term_not_the_total_cjk_count() -> None:
    # hermes-agent#20494: 8 CJK characters, but every term has 2: no trigram
    query = q("广西 OR 桂林 OR 漓江 OR 旅游")
    assert choose_route(query) == "fts_cjk"
    assert choose_route(query, cjk_index=False) == "like_scan"


# ---------------------------------------------------------------------------
# Routing decisions
# ---------------------------------------------------------------------------


def routes(raw: str, unigrams: bool = True) -> dict[str, bool]:
    parsed = q(raw)
    return {
        "fts5": route_can_represent(parsed, "fts5"),
        "fts_cjk": route_can_represent(parsed, "fts_cjk", unigrams=unigrams),
        "trigram": route_can_represent(parsed, "trigram"),
    }


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("桂", {"fts5": False, "fts_cjk": True, "trigram": False}),
        ("广西", {"fts5": False, "fts_cjk": True, "trigram": False}),
        ("漓江水", {"fts5": False, "fts_cjk": True, "trigram": True}),
        ("广西 OR 桂林 OR 漓江", {"fts5": False, "fts_cjk": True, "trigram": False}),
        ("广西桂林 OR 漓江", {"fts5": False, "fts_cjk": True, "trigram": False}),
        ("广西桂林 OR 漓江山", {"fts5": False, "fts_cjk": True, "trigram": True}),
        ("秃发*", {"fts5": False, "fts_cjk": True, "trigram": False}),
        ("秃发头*", {"fts5": False, "fts_cjk": True, "trigram": True}),
        ("修改youer服务端", {"fts5": False, "fts_cjk": True, "trigram": True}),
        ("youer", {"fts5": True, "fts_cjk": True, "trigram": True}),
        ("ab", {"fts5": True, "fts_cjk": True, "trigram": False}),
        # a negated word may be glued to CJK (`ab服务器`), one unicode61 token (issue 33)
        ("alpha NOT ab", {"fts5": False, "fts_cjk": True, "trigram": False}),
        ("广西 NOT 桂", {"fts5": False, "fts_cjk": True, "trigram": False}),
        ('"广西 桂林"', {"fts5": False, "fts_cjk": True, "trigram": True}),
        # a lone character next to other tokens: colocated unigrams are not exact there
        ("第1章", {"fts5": False, "fts_cjk": False, "trigram": True}),
        ("😀", {"fts5": False, "fts_cjk": False, "trigram": False}),
        ('"---"', {"fts5": False, "fts_cjk": False, "trigram": True}),
        ("ｶﾀｶﾅ", {"fts5": False, "fts_cjk": True, "trigram": True}),
        # NEAR counts cjk_unicode61 positions: only the CJK index runs it natively
        ("NEAR(deploy service)", {"fts5": False, "fts_cjk": True, "trigram": False}),
        ("NEAR(桂林 漓江, 2)", {"fts5": False, "fts_cjk": True, "trigram": False}),
        ("NEAR(桂 漓江, 2)", {"fts5": False, "fts_cjk": False, "trigram": False}),
        ("alpha NOT NEAR(beta gamma)", {"fts5": False, "fts_cjk": True, "trigram": False}),
    ],
)
def test_route_can_represent(raw: str, expected: dict[str, bool]) -> None:
    assert routes(raw) == expected


def test_lone_character_needs_unigrams() -> None:
    assert routes("桂", unigrams=False)["fts_cjk"] is False
    assert routes("广西", unigrams=False)["fts_cjk"] is True
    assert routes("广西 桂", unigrams=False)["fts_cjk"] is False


@pytest.mark.parametrize(
    ("raw", "with_cjk_index", "trigram_only", "no_unigrams"),
    [
        ("hello world", "fts5", "fts5", "fts5"),
        ("桂", "fts_cjk", "like_scan", "like_scan"),
        ("广西", "fts_cjk", "like_scan", "fts_cjk"),
        ("漓江水", "fts_cjk", "trigram", "fts_cjk"),
        ("广西 OR 桂林 OR 漓江", "fts_cjk", "like_scan", "fts_cjk"),
        ("广西桂林 OR 漓江山", "fts_cjk", "trigram", "fts_cjk"),
        ("hello 广西", "fts_cjk", "like_scan", "fts_cjk"),
        ("第1章", "trigram", "trigram", "trigram"),
        ("秃发*", "fts_cjk", "like_scan", "fts_cjk"),
        ("😀", "like_scan", "like_scan", "like_scan"),
        ('"---"', "trigram", "trigram", "trigram"),
        ("---", "empty", "empty", "empty"),
    ],
)
def test_choose_route(raw: str, with_cjk_index: str, trigram_only: str, no_unigrams: str) -> None:
    parsed = q(raw)
    assert choose_route(parsed) == with_cjk_index
    assert choose_route(parsed, cjk_index=False) == trigram_only
    assert choose_route(parsed, unigrams=False) == no_unigrams
    assert choose_route(parsed, cjk_index=False, trigram_index=False) in (
        "fts5",
        "like_scan",
        "empty",
    )


def test_unknown_route_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown route"):
        route_can_represent(q("x"), "like")
    with pytest.raises(ValueError, match="unknown route"):
        match_expression(q("x"), "fts4")


# ---------------------------------------------------------------------------
# MATCH expressions
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "fts", "trigram"),
    [
        ("广西 OR 桂林 OR 漓江", '"广西" OR "桂林" OR "漓江"', '"广西" OR "桂林" OR "漓江"'),
        ("秃发*", '"秃发"*', '"秃发"'),
        ('"广西 桂林"', '"广西 桂林"', '"广西 桂林"'),
        ("a b OR c NOT d", '("a" AND "b") OR ("c" NOT "d")', '("a" AND "b") OR ("c" NOT "d")'),
        ("a NOT b c", '("a" AND "c") NOT "b"', '("a" AND "c") NOT "b"'),
        ("my-app.config*", '"my-app.config"*', '"my-app.config"'),
        ("修改youer服务端", '"修改youer服务端"', '"修改youer服务端"'),
        ("NEAR(ab* cd, 3)", 'NEAR("ab"* "cd", 3)', 'NEAR("ab" "cd", 3)'),
        (
            "(a OR b) (c OR d) NOT (e f)",
            '(("a" OR "b") AND ("c" OR "d")) NOT ("e" AND "f")',
            '(("a" OR "b") AND ("c" OR "d")) NOT ("e" AND "f")',
        ),
    ],
)
def test_match_expression(raw: str, fts: str, trigram: str) -> None:
    parsed = q(raw)
    assert match_expression(parsed, "fts5") == fts
    assert match_expression(parsed, "fts_cjk") == fts
    assert match_expression(parsed, "trigram") == trigram


def test_match_expression_doubles_quotes_and_empty() -> None:
    assert match_expression(q('"say ""hi"""'), "fts5") == '"say ""hi"""'
    assert match_expression(q("---"), "fts5") == ""
    assert match_expression(Query(), "trigram") == ""


# ---------------------------------------------------------------------------
# LIKE plan (the SQL is built by the search layer) and the NEAR check
# ---------------------------------------------------------------------------


def test_like_plan_shape() -> None:
    assert like_plan(q("alpha NOT beta* OR 广西")) is not None
    # A Latin word is a whole token (issue 34); a prefix keeps its star for the check.
    assert like_plan(q("alpha NOT beta*")) == LikeAll(
        (LikeWords('"alpha"', ("alpha",), "alpha"),),
        (LikeWords('"beta"*', ("beta",), "beta", True),),
    )
    assert like_plan(q('"100%_\\x"')) == LikeWords('"100%_\\x"', ("100", "x"), "100%_\\x")
    assert like_plan(q('"%_\\"')) == LikeText("%_\\")  # no word: a substring
    assert like_plan(q("广西")) == LikeText("广西")
    assert like_plan(q("NEAR(Deploy 桂林 Émile, 2)")) == LikeNear(
        'NEAR("Deploy" "桂林" "Émile", 2)', ("Deploy", "桂林")
    )
    assert like_plan(Query()) is None


@pytest.mark.parametrize(
    ("spec", "text", "holds"),
    [
        ('NEAR("alpha" "beta", 0)', "alpha beta", True),
        ('NEAR("alpha" "beta", 0)', "beta alpha", True),  # unordered, as in FTS5
        ('NEAR("alpha" "beta", 0)', "alpha x beta", False),
        ('NEAR("alpha" "beta", 1)', "alpha x beta", True),
        ('NEAR("alpha" "beta", 2)', "alpha 桂林山水 beta", False),  # a run counts its bigrams
        ('NEAR("alpha" "beta", 3)', "alpha 桂林山水 beta", True),
        ('NEAR("ALPHA" "Émile", 0)', "alpha, emile", True),  # case and diacritics folded
        ('NEAR("al"* "beta", 0)', "alphabet beta", True),
        ('NEAR("alpha beta" "gamma", 0)', "alpha beta gamma", True),
        ('NEAR("alpha beta" "gamma", 0)', "beta alpha gamma", False),
        ('NEAR("桂林" "漓江", 1)', "广西桂林漓江", True),
        ('NEAR("桂" "漓江", 1)', "广西桂林漓江", True),  # a character is a colocated unigram
        ('NEAR("alpha" "beta", 10)', "alpha", False),
    ],
)
def test_near_matches(spec: str, text: str, holds: bool) -> None:
    assert near_matches(spec, None, text) is holds


def test_near_matches_agrees_with_the_cjk_index() -> None:
    try:
        conn = hermes_fts.connect(":memory:")
    except hermes_fts.ExtensionUnavailable as exc:
        pytest.skip(f"cjk_unicode61 extension unavailable: {exc}")
    conn.execute("CREATE VIRTUAL TABLE k USING fts5(x, tokenize='cjk_unicode61 unigrams 1')")
    texts = [
        "alpha beta",
        "alpha x beta",
        "alpha 桂林山水 beta",
        "广西桂林漓江",
        "桂林 x y 漓江",
        "beta 漓江山水 alpha",
        "deploy 的 service",
        "修改deploy服务端 service",
    ]
    conn.executemany("INSERT INTO k(rowid, x) VALUES (?, ?)", enumerate(texts, start=1))
    for terms in [
        '"alpha" "beta"',
        '"桂林" "漓江"',
        '"deploy" "service"',
        '"漓江山水" "alpha"',
        '"服务" "service"',
    ]:
        for distance in range(5):
            spec = f"NEAR({terms}, {distance})"
            native = {r[0] for r in conn.execute("SELECT rowid FROM k WHERE k MATCH ?", (spec,))}
            ours = {i for i, t in enumerate(texts, start=1) if near_matches(spec, t)}
            assert ours == native, spec


def test_snippet_terms() -> None:
    assert snippet_terms(q("alpha NOT beta OR alpha gamma*")) == [
        Term("alpha"),
        Term("gamma", prefix=True),
    ]


@pytest.fixture(scope="module")
def messages() -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE messages (id INTEGER PRIMARY KEY, content, tool_name, tool_calls)")
    rows = [
        (1, "100% done", None, None),
        (2, "100 done", None, None),
        (3, "a_b here", None, None),
        (4, "axb here", None, None),
        (5, "C:\\Users\\bob", None, None),
        (6, None, "web_search", '{"q": "广西"}'),
        (7, "广西桂林", None, None),
        (8, "Alpha beta", "terminal", None),
        (9, "ALPHA gamma", None, None),
        (10, "Émile", None, None),
        (11, "alpha and then beta", None, None),
    ]
    conn.executemany("INSERT INTO messages VALUES (?, ?, ?, ?)", rows)
    yield conn
    conn.close()


def like_ids(conn: sqlite3.Connection, query: Query) -> list[int]:
    sql, params = like_sql.like_where(conn, like_plan(query))
    return [
        r[0]
        for r in conn.execute(
            f"SELECT id FROM {like_sql.LIKE_SOURCE} m WHERE {sql} ORDER BY id", params
        )
    ]


def test_like_sql_escapes_wildcards() -> None:
    conn = sqlite3.connect(":memory:")
    sql, params = like_sql.like_where(conn, like_plan(q('"%_\\"')))
    assert sql.count("LIKE ? ESCAPE") == len(like_sql.LIKE_COLUMNS)
    assert params == ["%\\%\\_\\\\%"] * len(like_sql.LIKE_COLUMNS)
    assert like_sql.like_where(conn, None) == ("0", [])


@pytest.mark.parametrize(
    ("query", "ids"),
    [
        (q('"100%"'), [1, 2]),  # the word 100, as the indexes see it ("%" is no letter)
        (q('"%"'), [1]),  # no word in it: a substring, "%" escaped
        (q('"a_b"'), [3]),
        (parse_query('"C:\\Users"'), [5]),
        (q("广西"), [6, 7]),  # tool_calls and content
        (q("web_search"), [6]),
        (q("alpha"), [8, 9, 11]),  # ASCII case-insensitive
        (q("alpha NOT beta"), [9]),
        (q("alpha NOT 广西"), [8, 9, 11]),  # NULL columns do not hide rows from NOT
        (q("beta OR gamma"), [8, 9, 11]),
        (q("广西 NOT 桂林"), [6]),
        (q("alp* gam*"), [9]),
        (q("alp"), []),  # a Latin word is whole (issue 34): "alp" is not in "alpha"
        (q("alph*"), [8, 9, 11]),
        (q("émile"), []),  # SQLite LIKE folds ASCII only
        (q("Émile"), [10]),
        (q("NEAR(alpha beta, 0)"), [8]),
        (q("NEAR(alpha beta, 2)"), [8, 11]),
        (q("gamma OR NEAR(alpha beta, 0)"), [8, 9]),
        (q("alpha NOT NEAR(alpha beta, 0)"), [9, 11]),
    ],
)
def test_like_semantics(messages: sqlite3.Connection, query: Query, ids: list[int]) -> None:
    assert like_ids(messages, query) == ids


# ---------------------------------------------------------------------------
# Identifiers still find the message that contains them verbatim
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ident_db() -> Iterator[tuple[sqlite3.Connection, bool]]:
    try:
        conn = hermes_fts.connect(":memory:")
        cjk = True
    except hermes_fts.ExtensionUnavailable:
        conn = sqlite3.connect(":memory:")
        cjk = False
    conn.execute("CREATE TABLE messages (id INTEGER PRIMARY KEY, content, tool_name, tool_calls)")
    conn.execute("CREATE VIRTUAL TABLE messages_fts USING fts5(content, tool_name, tool_calls)")
    conn.execute(
        "CREATE VIRTUAL TABLE messages_fts_trigram"
        " USING fts5(content, tool_name, tokenize='trigram')"
    )
    if cjk:
        conn.execute(
            "CREATE VIRTUAL TABLE messages_fts_cjk USING fts5(content, tool_name, tool_calls,"
            " tokenize='cjk_unicode61 unigrams 1')"
        )
    texts = [f"before {ident} after" for ident in IDENTIFIERS]
    texts += ["nothing relevant here", "app config deploy users"]
    for i, text in enumerate(texts, start=1):
        conn.execute("INSERT INTO messages VALUES (?, ?, NULL, NULL)", (i, text))
        conn.execute("INSERT INTO messages_fts(rowid, content) VALUES (?, ?)", (i, text))
        conn.execute("INSERT INTO messages_fts_trigram(rowid, content) VALUES (?, ?)", (i, text))
        if cjk:
            conn.execute("INSERT INTO messages_fts_cjk(rowid, content) VALUES (?, ?)", (i, text))
    yield conn, cjk
    conn.close()


@pytest.mark.parametrize("ident", IDENTIFIERS)
def test_identifier_found_on_every_route(
    ident_db: tuple[sqlite3.Connection, bool], ident: str
) -> None:
    conn, cjk = ident_db
    row = IDENTIFIERS.index(ident) + 1
    sanitized = sanitize_fts5_query(ident)
    parsed = parse_query(ident)
    assert not parsed.is_empty

    def hits(table: str, expr: str) -> set[int]:
        sql = f"SELECT rowid FROM {table} WHERE {table} MATCH ?"
        return {r[0] for r in conn.execute(sql, (expr,))}

    assert row in hits("messages_fts", sanitized)
    assert route_can_represent(parsed, "fts5")
    assert row in hits("messages_fts", match_expression(parsed, "fts5"))
    assert row in like_ids(conn, parsed)
    if route_can_represent(parsed, "trigram"):
        assert row in hits("messages_fts_trigram", match_expression(parsed, "trigram"))
    if cjk:
        assert route_can_represent(parsed, "fts_cjk")
        assert row in hits("messages_fts_cjk", match_expression(parsed, "fts_cjk"))


# ---------------------------------------------------------------------------
# CJK routes against the real tokenizer
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cjk_db() -> Iterator[sqlite3.Connection]:
    try:
        conn = hermes_fts.connect(":memory:")
    except hermes_fts.ExtensionUnavailable as exc:
        pytest.skip(f"cjk_unicode61 extension unavailable: {exc}")
    conn.execute("CREATE VIRTUAL TABLE k USING fts5(x, tokenize='cjk_unicode61 unigrams 1')")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='trigram')")
    rows = [
        "秃发头的问题",  # 1
        "秃头",  # 2
        "广西桂林漓江旅游",  # 3
        "桂林 山水",  # 4
        "修改youer服务端的计划",  # 5
        "广西 旅游",  # 6
        "漓江",  # 7
    ]
    for i, text in enumerate(rows, start=1):
        conn.execute("INSERT INTO k(rowid, x) VALUES (?, ?)", (i, text))
        conn.execute("INSERT INTO t(rowid, x) VALUES (?, ?)", (i, text))
    yield conn
    conn.close()


def cjk_hits(conn: sqlite3.Connection, raw: str, table: str = "k") -> list[int]:
    route = "fts_cjk" if table == "k" else "trigram"
    expr = match_expression(q(raw), route)
    return [
        r[0]
        for r in conn.execute(f"SELECT rowid FROM {table} WHERE x MATCH ? ORDER BY rowid", (expr,))
    ]


@pytest.mark.parametrize(
    ("raw", "ids"),
    [
        ("秃发*", [1]),  # hermes-agent#90636
        ("秃*", [1, 2]),
        ("秃", [1, 2]),  # one character inside longer runs (unigrams 1)
        ("桂", [3, 4]),
        ("广西 OR 桂林 OR 漓江", [3, 4, 6, 7]),  # hermes-agent#20494
        ("广西 旅游", [3, 6]),
        ('"广西 旅游"', [6]),  # a user phrase stays a phrase
        ("广西 NOT 桂林", [6]),
        ("youer", [5]),  # Latin glued to CJK
        ("修改youer服务端", [5]),
        ("桂林漓", [3]),
    ],
)
def test_fts_cjk_route(cjk_db: sqlite3.Connection, raw: str, ids: list[int]) -> None:
    assert route_can_represent(q(raw), "fts_cjk")
    assert cjk_hits(cjk_db, raw) == ids


def test_trigram_route_for_long_terms(cjk_db: sqlite3.Connection) -> None:
    assert cjk_hits(cjk_db, "秃发头*", table="t") == [1]
    assert cjk_hits(cjk_db, "桂林漓 OR 服务端", table="t") == [3, 5]


@pytest.mark.parametrize("raw", ['"秃发* *"', '"ab* *"', '"ab * * "', '"ab*"', '"ab"*'])
def test_a_phrase_closing_in_stars_is_one_prefix_and_sanitizes_once(raw: str) -> None:
    """Found by the property test in a fresh clone: every star and space closing a
    phrase is its prefix, so the sanitized text parses back to the same term."""
    parsed = parse_query(raw)
    assert parsed.expr == Term(parsed.expr.text, prefix=True) and "*" not in parsed.expr.text
    once = sanitize_fts5_query(raw)
    assert sanitize_fts5_query(once) == once
    assert parse_query(once).expr == parsed.expr
