"""hermes_fts.query: sanitizer, parsed form, routing decisions, MATCH and LIKE building."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest
from _support import IDENTIFIERS

import hermes_fts
from hermes_fts.query import (
    MAX_FTS5_QUERY_CHARS,
    Query,
    Term,
    choose_route,
    cjk_run_lengths,
    cjk_terms,
    fold_width,
    has_cjk,
    like_where,
    match_expression,
    min_cjk_run,
    parse_query,
    route_can_represent,
    sanitize_fts5_query,
    snippet_terms,
)


def q(raw: str) -> Query:
    return parse_query(sanitize_fts5_query(raw))


# ---------------------------------------------------------------------------
# Sanitizer: exact outputs
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("hello world", "hello world"),
        ("chat-send", '"chat-send"'),
        ("P2.2", '"P2.2"'),
        ("my-app.config.ts", '"my-app.config.ts"'),
        ("scripts/deploy.sh", '"scripts/deploy.sh"'),
        ("user@example.com", '"user@example.com"'),
        ("61.2%", '"61.2%"'),
        ("path\\to\\file.txt", '"path\\to\\file.txt"'),
        ("my-app.config*", '"my-app.config"*'),
        ("my-app.config***", '"my-app.config"*'),
        ("path:config.yaml", '"path:config.yaml"'),
        ("(see my-app.config.ts),", 'see "my-app.config.ts"'),
        ("`my-app.config.ts`", '"my-app.config.ts"'),
        ("TODO: fix", "TODO  fix"),
        ("C:\\Users", "C  Users"),
        (".env", "env"),
        ("rm -rf", "rm  rf"),
        ("--force", "force"),
        ("alpha`beta", "alpha beta"),
        ("issue --- main", "issue     main"),
        ("a\tb  c", "a\tb  c"),
        ('"exact phrase" other', '"exact phrase" other'),
        ('say "unbalanced', "say  unbalanced"),
        ('""', ""),
        ("***", ""),
        ("*foo", "foo"),
        ("foo*", "foo*"),
        ("foo)*", "foo*"),
        ("OR*", '"OR"*'),
        ("秃发*", "秃发*"),
        ('"秃发*"', '"秃发"*'),
        ("100%完成", '"100%完成"'),
        ("50%", "50"),
        ("x\u3000y", "x y"),
        ("a\x00b", "a b"),
        ("foo_bar", '"foo_bar"'),
    ],
)
def test_sanitize_exact(raw: str, expected: str) -> None:
    assert sanitize_fts5_query(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("a AND OR b", "a AND  b"),
        ("OR OR", ""),
        ("a OR OR b", "a OR  b"),
        ("NOT NOT x", "x"),
        ("x AND AND y", "x AND  y"),
        ("a AND NOT b", "a NOT  b"),
        ("a NOT NOT b", "a NOT  b"),
        ("a OR NOT b", "a OR  b"),
        ("AND a", "a"),
        ("OR a OR", "a"),
        ("NOT foo", "foo"),
        ("foo NOT", "foo"),
        ("a --- OR --- b", "a     OR     b"),
        ("(a OR b)", "a OR b"),
        # NOT negates one term: FTS5 must not read `a NOT (b c)`.
        ("a NOT b c", "a NOT b AND c"),
        ("and or not", "and or not"),
    ],
)
def test_sanitize_operators(raw: str, expected: str) -> None:
    assert sanitize_fts5_query(raw) == expected


def test_sanitize_cuts_long_input() -> None:
    out = sanitize_fts5_query("a" * (MAX_FTS5_QUERY_CHARS + 500))
    assert out == "a" * MAX_FTS5_QUERY_CHARS
    # the cut may split a phrase: the leftover quote becomes a space
    raw = "x" * (MAX_FTS5_QUERY_CHARS - 3) + ' "ab cd"'
    assert sanitize_fts5_query(raw) == "x" * (MAX_FTS5_QUERY_CHARS - 3) + "  a"


def test_sanitize_is_idempotent_on_examples() -> None:
    for raw in ["a NOT b c", "scripts/deploy.sh*", '"秃发*" OR 桂林', "TODO: fix", "a AND OR b"]:
        once = sanitize_fts5_query(raw)
        assert sanitize_fts5_query(once) == once


# ---------------------------------------------------------------------------
# Parsed form
# ---------------------------------------------------------------------------


def test_parse_groups_and_precedence() -> None:
    parsed = q("alpha beta OR gamma NOT delta epsilon")
    assert [[(t.text, t.negated) for t in g.terms] for g in parsed.groups] == [
        [("alpha", False), ("beta", False)],
        [("gamma", False), ("delta", True), ("epsilon", False)],
    ]


def test_parse_phrase_prefix_flags() -> None:
    parsed = q('"exact phrase"* my-app.config foo*')
    assert parsed.terms == (
        Term("exact phrase", phrase=True, prefix=True),
        Term("my-app.config", phrase=True),
        Term("foo", prefix=True),
    )


def test_parse_undoubles_quotes_and_never_raises() -> None:
    assert parse_query('"say ""hi"""').terms == (Term('say "hi"', phrase=True),)
    for junk in ["", "   ", "OR", "NOT", '"', '"""', "*", "NOT x", "a OR NOT", "(((", ":"]:
        parse_query(junk)


def test_parse_drops_group_without_positive_term() -> None:
    parsed = parse_query("NOT a OR b")
    assert [[t.text for t in g.terms] for g in parsed.groups] == [["b"]]
    assert parse_query("NOT a").is_empty


# ---------------------------------------------------------------------------
# CJK classification
# ---------------------------------------------------------------------------


def test_has_cjk_uses_folded_width() -> None:
    assert has_cjk("ｶﾀｶﾅ")  # half-width katakana folds to katakana
    assert not has_cjk("ＡＢＣ")  # full-width Latin folds to ASCII
    assert has_cjk("한국어") and has_cjk("ひらがな") and has_cjk("漢字")
    assert not has_cjk("。、「」")  # CJK punctuation separates, it is not CJK
    assert fold_width("ｶﾞｷﾞＡ") == "ガギA"


def test_cjk_run_lengths_are_per_run() -> None:
    assert cjk_run_lengths("广西 桂林漓江 x 山") == [2, 4, 1]
    assert cjk_run_lengths("ｶﾞｷﾞ") == [2]  # folded: ガギ
    assert cjk_run_lengths("修改youer服务端") == [2, 3]


def test_min_cjk_run_is_per_term_not_total() -> None:
    # hermes-agent#20494: 8 CJK characters, but every term has 2
    query = q("广西 OR 桂林 OR 漓江 OR 旅游")
    assert min_cjk_run(query) == 2
    assert len(cjk_terms(query)) == 4
    assert min_cjk_run(q("hello")) is None
    assert min_cjk_run(q("广西桂林 漓")) == 1


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
        ("alpha NOT ab", {"fts5": True, "fts_cjk": True, "trigram": False}),
        ("广西 NOT 桂", {"fts5": False, "fts_cjk": True, "trigram": False}),
        ('"广西 桂林"', {"fts5": False, "fts_cjk": True, "trigram": True}),
        # a lone character next to other tokens: colocated unigrams are not exact there
        ("第1章", {"fts5": False, "fts_cjk": False, "trigram": True}),
        ("😀", {"fts5": False, "fts_cjk": False, "trigram": False}),
        ('"---"', {"fts5": False, "fts_cjk": False, "trigram": True}),
        ("ｶﾀｶﾅ", {"fts5": False, "fts_cjk": True, "trigram": True}),
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
        ("a NOT b c", '"a" AND "c" NOT "b"', '"a" AND "c" NOT "b"'),
        ("my-app.config*", '"my-app.config"*', '"my-app.config"'),
        ("修改youer服务端", '"修改youer服务端"', '"修改youer服务端"'),
    ],
)
def test_match_expression(raw: str, fts: str, trigram: str) -> None:
    parsed = q(raw)
    assert match_expression(parsed, "fts5") == fts
    assert match_expression(parsed, "fts_cjk") == fts
    assert match_expression(parsed, "trigram") == trigram


def test_match_expression_doubles_quotes_and_empty() -> None:
    parsed = Query(groups=parse_query('"say ""hi"""').groups)
    assert match_expression(parsed, "fts5") == '"say ""hi"""'
    assert match_expression(q("---"), "fts5") == ""


# ---------------------------------------------------------------------------
# LIKE
# ---------------------------------------------------------------------------


def test_like_where_shape_and_escaping() -> None:
    sql, params = like_where(parse_query('"100%_\\x"'), columns=("c",))
    assert sql == "((COALESCE(c, '') LIKE ? ESCAPE '\\'))"
    assert params == ["%100\\%\\_\\\\x%"]


def test_like_where_no_positive_term() -> None:
    assert like_where(parse_query("")) == ("0", [])
    assert like_where(Query(groups=())) == ("0", [])
    with pytest.raises(ValueError):
        like_where(q("x"), columns=())


def test_snippet_terms() -> None:
    assert snippet_terms(q("alpha NOT beta OR alpha gamma*")) == ["alpha", "gamma"]


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
    ]
    conn.executemany("INSERT INTO messages VALUES (?, ?, ?, ?)", rows)
    yield conn
    conn.close()


def like_ids(conn: sqlite3.Connection, query: Query) -> list[int]:
    sql, params = like_where(query)
    return [
        r[0] for r in conn.execute(f"SELECT id FROM messages m WHERE {sql} ORDER BY id", params)
    ]


@pytest.mark.parametrize(
    ("query", "ids"),
    [
        (parse_query('"100%"'), [1]),
        (parse_query('"a_b"'), [3]),
        (parse_query('"C:\\Users"'), [5]),
        (q("广西"), [6, 7]),  # tool_calls and content
        (q("web_search"), [6]),
        (q("alpha"), [8, 9]),  # ASCII case-insensitive
        (q("alpha NOT beta"), [9]),
        (q("alpha NOT 广西"), [8, 9]),  # NULL columns do not hide rows from NOT
        (q("beta OR gamma"), [8, 9]),
        (q("广西 NOT 桂林"), [6]),
        (q("alp* gam*"), [9]),
        (q("émile"), []),  # SQLite LIKE folds ASCII only
        (q("Émile"), [10]),
    ],
)
def test_like_where_semantics(messages: sqlite3.Connection, query: Query, ids: list[int]) -> None:
    assert like_ids(messages, query) == ids


def test_like_where_no_positive_term_selects_nothing(messages: sqlite3.Connection) -> None:
    assert like_ids(messages, parse_query("NOT alpha")) == []


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
    parsed = parse_query(sanitized)
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
