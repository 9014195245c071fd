"""Query building against real FTS5 tables.

* property: no sanitized query and no per-route MATCH expression ever makes
  MATCH raise, on unicode61, trigram and cjk_unicode61 tables; the sanitized
  string means the same to FTS5 as the parsed form; sanitizing is idempotent.
* recall: on generated rows, every route that claims it can represent a query
  returns exactly what that route promises (computed in Python), and LIKE
  returns exactly the ground truth: CJK as substrings, Latin as whole words.
"""

from __future__ import annotations

import functools
import random
import sqlite3
import unicodedata
from collections.abc import Iterator
from typing import Callable

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

pytest.importorskip(
    "hermes_fts._cjk_ranges",
    reason="hermes_fts/_cjk_ranges.py not generated yet (python csrc/gen_cjk_tables.py)",
)

import hermes_fts  # noqa: E402
from hermes_fts._cjk_ranges import is_cjk  # noqa: E402
from hermes_fts.query.plan import (  # noqa: E402
    Query,
    match_expression,
    parse_query,
    route_can_represent,
    sanitize_fts5_query,
)
from hermes_fts.query.tree import AllOf, AnyOf, Near, Node, Term  # noqa: E402
from hermes_fts.search import like as like_sql  # noqa: E402
from hermes_fts.search.like import like_plan  # noqa: E402

ROUTES = ("fts5", "fts_cjk", "trigram")

TABLE_FOR_ROUTE = {"fts5": "u", "trigram": "t", "fts_cjk": "k"}


def open_db() -> tuple[sqlite3.Connection, str | None]:
    """A connection with the extension, or a plain one and the reason it is missing."""
    try:
        return hermes_fts.connect(":memory:"), None
    except hermes_fts.ExtensionUnavailable as exc:
        return sqlite3.connect(":memory:"), f"cjk_unicode61 extension unavailable: {exc}"


def create_tables(conn: sqlite3.Connection, with_cjk: bool, columns: str) -> list[str]:
    conn.execute(f"CREATE VIRTUAL TABLE u USING fts5({columns})")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5({columns}, tokenize='trigram')")
    tables = ["u", "t"]
    if with_cjk:
        conn.execute(
            f"CREATE VIRTUAL TABLE k USING fts5({columns}, tokenize='cjk_unicode61 unigrams 1')"
        )
        conn.execute(f"CREATE VIRTUAL TABLE k0 USING fts5({columns}, tokenize='cjk_unicode61')")
        tables += ["k", "k0"]
    return tables


def rowids(conn: sqlite3.Connection, table: str, expr: str) -> set[int]:
    sql = f"SELECT rowid FROM {table} WHERE {table} MATCH ?"
    return {r[0] for r in conn.execute(sql, (expr,))}


def like_rowids(conn: sqlite3.Connection, query: Query) -> set[int]:
    """The search layer's LIKE SQL over ``messages m`` (content, tool_name, tool_calls)."""
    sql, params = like_sql.like_where(conn, like_plan(query))
    return {
        r[0] for r in conn.execute(f"SELECT id FROM {like_sql.LIKE_SOURCE} m WHERE {sql}", params)
    }


# ---------------------------------------------------------------------------
# Property: MATCH never raises
# ---------------------------------------------------------------------------

FRAGMENTS = [
    "AND", "OR", "NOT", "and", "or", "not", "NEAR", "NEAR(", "(", ")", '"', '""', "*", "**",
    ":", "\\", "/", "-", "--", ".", "_", "%", "'", "`", "@", "#", "^", "+", "{", "}", "[",
    "]", "<", ">", "~", "!", "?", ",", ";", "=", "&", "|", "$", "col:", "content:", "-x",
    "广西", "桂", "漓江旅游", "秃发*", "修改youer服务端", "ｶﾞ", "ＡＢＣ", "한국어", "ひらがな",
    "。", "、", "「", "」", "😀", "\x00", "\x0c", "\x1a", "\u3000", "\u200b", "\ud800",
    "my-app.config", "61.2%", "C:\\Users", "user@example.com", ".env", "x.y*", "a_b",
]  # fmt: skip
ALPHABET = "abcXYZ019广西桂林秃发ｶﾞ한あ *\"():-._%\\/'`^+@#,。"
SEPARATORS = ["", " ", " ", "  ", "\t", "\n"]

atoms = st.one_of(
    st.sampled_from(FRAGMENTS),
    st.text(alphabet=ALPHABET, min_size=1, max_size=6),
    st.text(min_size=1, max_size=3),
)
queries = st.lists(st.tuples(atoms, st.sampled_from(SEPARATORS)), max_size=12).map(
    lambda parts: "".join(atom + sep for atom, sep in parts)
)


@pytest.fixture(scope="module")
def prop_db() -> Iterator[tuple[sqlite3.Connection, list[str], str | None]]:
    conn, missing = open_db()
    tables = create_tables(conn, missing is None, "content, tool_name, tool_calls")
    conn.execute("CREATE TABLE messages (id INTEGER PRIMARY KEY, content, tool_name, tool_calls)")
    rng = random.Random(20494)
    words = [f for f in FRAGMENTS if f not in ("\x00", "\ud800")] + ["alpha", "beta", "桂林"]
    for i in range(1, 61):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(1, 8)))
        tool = rng.choice([None, "terminal", "web_search"])
        conn.execute("INSERT INTO messages VALUES (?, ?, ?, NULL)", (i, text, tool))
        for table in tables:
            cols = "content, tool_name" + (", tool_calls" if table != "t" else "")
            values = (i, text, tool) + ((None,) if table != "t" else ())
            marks = ", ".join("?" * len(values))
            conn.execute(f"INSERT INTO {table}(rowid, {cols}) VALUES ({marks})", values)
    yield conn, tables, missing
    conn.close()


@settings(
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(raw=queries)
@example(raw='"秃发* *"')  # found in a fresh clone: the sanitized text parsed differently
def test_match_never_raises(
    prop_db: tuple[sqlite3.Connection, list[str], str | None], raw: str
) -> None:
    conn, tables, _missing = prop_db
    sanitized = sanitize_fts5_query(raw)
    assert "\x00" not in sanitized
    assert sanitize_fts5_query(sanitized) == sanitized
    parsed = parse_query(raw)
    assert parse_query(sanitized).expr == parsed.expr
    assert parsed.is_empty == (sanitized == "")
    own = {"u": ("fts5", True), "k": ("fts_cjk", True), "k0": ("fts_cjk", False)}
    for table in tables:
        direct = rowids(conn, table, sanitized) if sanitized else set()
        for route in ROUTES:
            expr = match_expression(parsed, route)
            assert bool(expr) == (not parsed.is_empty)
            if not expr:
                continue
            hits = rowids(conn, table, expr)
            if own.get(table, ("", False))[0] != route:
                continue
            if route_can_represent(parsed, route, unigrams=own[table][1]):
                # FTS5 reads the sanitized text exactly as parse_query does
                assert hits == direct, (sanitized, expr, table)
    like_rowids(conn, parsed)


def test_property_covers_cjk_table(
    prop_db: tuple[sqlite3.Connection, list[str], str | None],
) -> None:
    _conn, tables, missing = prop_db
    if missing:
        pytest.skip(missing)
    assert "k" in tables


# ---------------------------------------------------------------------------
# Recall against Python ground truth
# ---------------------------------------------------------------------------

CJK_ALPHABET = "广西桂林漓江秃发"
LATIN_WORDS = ["alpha", "Alpha", "alphabet", "beta", "gamma", "youer", "del", "ta"]
RECALL_SEPARATORS = [" ", " ", ", ", "。", "-", "  ", "/"]


def make_rows(n: int, seed: int = 54242) -> list[str]:
    rng = random.Random(seed)

    def cjk_run() -> str:
        return "".join(rng.choice(CJK_ALPHABET) for _ in range(rng.randint(1, 6)))

    rows = []
    for _ in range(n):
        parts = []
        for _ in range(rng.randint(1, 7)):
            kind = rng.random()
            if kind < 0.45:
                parts.append(cjk_run())
            elif kind < 0.8:
                parts.append(rng.choice(LATIN_WORDS))
            else:  # Latin glued to CJK (hermes-agent#54242)
                parts.append(cjk_run() + rng.choice(LATIN_WORDS) + cjk_run())
            parts.append(rng.choice(RECALL_SEPARATORS))
        rows.append("".join(parts).strip())
    return rows


def _token_char(ch: str) -> bool:
    cat = unicodedata.category(ch)
    return cat[0] in "LN" or cat == "Co"


@functools.cache
def unicode61_tokens(text: str) -> tuple[str, ...]:
    """unicode61: maximal runs of letters/numbers (CJK included), lower-cased."""
    out: list[str] = []
    cur = ""
    for ch in text.lower():
        if _token_char(ch):
            cur += ch
        elif cur:
            out.append(cur)
            cur = ""
    if cur:
        out.append(cur)
    return tuple(out)


@functools.cache
def cjk_tokens(text: str) -> tuple[str, ...]:
    """cjk_unicode61 without unigrams: CJK runs → bigrams (a lone char → itself)."""
    out: list[str] = []
    for token in unicode61_tokens(text):
        seg, seg_cjk = "", False
        for ch in token + "\x00":
            ch_cjk = ch != "\x00" and is_cjk(ord(ch))
            if seg and (ch == "\x00" or ch_cjk != seg_cjk):
                if seg_cjk and len(seg) > 1:
                    out.extend(seg[i : i + 2] for i in range(len(seg) - 1))
                else:
                    out.append(seg)
                seg = ""
            seg += ch if ch != "\x00" else ""
            seg_cjk = ch_cjk
    return tuple(out)


def consecutive(doc: tuple[str, ...], term: tuple[str, ...], prefix: bool) -> bool:
    if not term:
        return False
    n = len(term)
    for i in range(len(doc) - n + 1):
        if doc[i : i + n - 1] != term[:-1]:
            continue
        last = doc[i + n - 1]
        if last == term[-1] or (prefix and last.startswith(term[-1])):
            return True
    return False


def ascii_lower(text: str) -> str:
    return "".join(ch.lower() if ch.isascii() else ch for ch in text)


def runs(text: str) -> list[tuple[bool, str]]:
    """unicode61 tokens cut where CJK meets Latin: (is_cjk, text) pairs."""
    out: list[tuple[bool, str]] = []
    for token in unicode61_tokens(text):
        start = len(out)
        for ch in token:
            cjk = is_cjk(ord(ch))
            if len(out) > start and out[-1][0] == cjk:
                out[-1] = (cjk, out[-1][1] + ch)
            else:
                out.append((cjk, ch))
    return out


def like_words(term: Term, text: str) -> bool:
    """LIKE on a term with a Latin word: its Latin words are whole tokens of the
    row, its CJK parts substrings that touch them (the index routes' meaning)."""
    want, doc = runs(term.text), runs(text)
    n = len(want)
    for i in range(len(doc) - n + 1):
        ok = True
        for k, (cjk, part) in enumerate(want):
            kind, got = doc[i + k]
            first, last = k == 0, k == n - 1
            if kind != cjk:
                ok = False
            elif cjk:
                ok = (got.endswith(part) or not first) and (got.startswith(part) or not last)
                ok = ok and (got == part or first or last)
            else:
                ok = got == part or (last and term.prefix and got.startswith(part))
            if not ok:
                break
        if ok:
            return True
    return False


def promise(route: str) -> Callable[[Term, str], bool]:
    """What one term promises on `route`, for one row's text."""
    if route == "like":
        # One CJK run is a substring; parts apart ("数据库 迁移") are a phrase.
        return lambda term, text: (
            ascii_lower(term.text) in ascii_lower(text)
            if len(runs(term.text)) <= 1 and all(cjk for cjk, _ in runs(term.text))
            else like_words(term, text)
        )
    if route == "trigram":
        return lambda term, text: term.text.lower() in text.lower()
    if route == "fts5":
        return lambda term, text: consecutive(
            unicode61_tokens(text), unicode61_tokens(term.text), term.prefix
        )

    def fts_cjk(term: Term, text: str) -> bool:
        wanted = cjk_tokens(term.text)
        if len(wanted) == 1 and len(wanted[0]) == 1 and is_cjk(ord(wanted[0])):
            return wanted[0] in text  # colocated unigrams: the character anywhere
        return consecutive(cjk_tokens(text), wanted, term.prefix)

    return fts_cjk


def evaluate(node: Node, text: str, holds: Callable[[Term, str], bool]) -> bool:
    if isinstance(node, Term):
        return holds(node, text)
    if isinstance(node, Near):
        raise AssertionError("recall queries have no NEAR (test_query_language covers it)")
    if isinstance(node, AnyOf):
        return any(evaluate(o, text, holds) for o in node.options)
    assert isinstance(node, AllOf)
    return all(evaluate(c, text, holds) for c in node.include) and not any(
        evaluate(c, text, holds) for c in node.exclude
    )


def truth(query: Query, rows: list[str], route: str) -> set[int]:
    holds = promise(route)
    assert query.expr is not None
    return {i for i, text in enumerate(rows, start=1) if evaluate(query.expr, text, holds)}


def recall_queries(rows: list[str]) -> list[str]:
    rng = random.Random(69456)
    substrings: set[str] = set()
    for text in rows:
        for token in text.replace("。", " ").split():
            run = ""
            for ch in token + " ":
                if is_cjk(ord(ch)):
                    run += ch
                    continue
                for n in range(1, 5):
                    substrings.update(run[i : i + n] for i in range(len(run) - n + 1))
                run = ""
    cjk = sorted(substrings)
    terms = rng.sample(cjk, min(80, len(cjk)))
    terms += ["发广西秃", "秃秃秃", "漓"]  # probably absent / repeated / single
    terms += LATIN_WORDS + ["alp*", "Al*", "gam*", "you*", "de", "ALPHA"]
    terms += ["秃发*", "广*", "漓江youer", "youer广西", "林youer", "alpha广", "西桂林*"]
    compound = [
        '"alpha beta"',
        '"广西 桂林"',
        '"youer 漓江"',
        "alpha NOT beta",
        "广西 NOT 桂林",
        "广西 OR 桂林 OR 漓江",
        "秃 OR 漓江 NOT 发",
    ]
    latin = LATIN_WORDS + ["alp*", "Al*", "gam*", "you*", "de", "ALPHA", '"alpha beta"']
    for pool in (terms, latin):
        for _ in range(40):
            a, b, c = rng.sample(pool, 3)
            op1, op2 = rng.choice(["", "OR", "NOT", "AND"]), rng.choice(["", "OR", "NOT"])
            compound.append(f"{a} {op1} {b} {op2} {c}")
    return terms + compound


@pytest.fixture(scope="module")
def recall_db() -> Iterator[tuple[sqlite3.Connection, list[str], list[str]]]:
    conn, missing = open_db()
    if missing:
        pytest.skip(missing)
    tables = create_tables(conn, True, "x")
    conn.execute("CREATE TABLE messages (id INTEGER PRIMARY KEY, content, tool_name, tool_calls)")
    rows = make_rows(400)
    for i, text in enumerate(rows, start=1):
        conn.execute("INSERT INTO messages VALUES (?, ?, NULL, NULL)", (i, text))
        for table in tables:
            conn.execute(f"INSERT INTO {table}(rowid, x) VALUES (?, ?)", (i, text))
    yield conn, rows, recall_queries(rows)
    conn.close()


def test_recall_every_representable_route(
    recall_db: tuple[sqlite3.Connection, list[str], list[str]],
) -> None:
    conn, rows, raws = recall_db
    checked = {"fts5": 0, "fts_cjk": 0, "fts_cjk/no-unigrams": 0, "trigram": 0, "like": 0}
    for raw in raws:
        parsed = parse_query(raw)
        assert not parsed.is_empty, raw
        expected_like = truth(parsed, rows, "like")
        assert like_rowids(conn, parsed) == expected_like, raw
        checked["like"] += 1
        for route in ROUTES:
            if not route_can_represent(parsed, route):
                continue
            got = rowids(conn, TABLE_FOR_ROUTE[route], match_expression(parsed, route))
            assert got == truth(parsed, rows, route), (raw, route)
            checked[route] += 1
        if route_can_represent(parsed, "fts_cjk", unigrams=False):
            got = rowids(conn, "k0", match_expression(parsed, "fts_cjk"))
            assert got == truth(parsed, rows, "fts_cjk"), (raw, "fts_cjk/no-unigrams")
            checked["fts_cjk/no-unigrams"] += 1
    assert min(checked.values()) >= 20, checked


def test_every_cjk_term_of_1_to_4_chars_uses_the_cjk_index(
    recall_db: tuple[sqlite3.Connection, list[str], list[str]],
) -> None:
    conn, rows, _raws = recall_db
    for term in ["漓", "广西", "桂林漓", "秃发广西", "秃发*", "广*"]:
        parsed = parse_query(term)
        assert route_can_represent(parsed, "fts_cjk"), term
        assert not route_can_represent(parsed, "fts5"), term
        # and the substring ground truth is what the CJK index returns
        got = rowids(conn, "k", match_expression(parsed, "fts_cjk"))
        assert got == truth(parsed, rows, "like"), term


def test_unrepresentable_routes_really_miss_rows(
    recall_db: tuple[sqlite3.Connection, list[str], list[str]],
) -> None:
    """Why routing must not use these routes: each would silently lose rows."""
    conn, rows, _raws = recall_db
    lone = parse_query("漓")
    assert not route_can_represent(lone, "fts_cjk", unigrams=False)
    assert rowids(conn, "k0", match_expression(lone, "fts_cjk")) < truth(lone, rows, "like")
    short = parse_query("广西")
    assert not route_can_represent(short, "trigram")
    assert rowids(conn, "t", match_expression(short, "trigram")) == set()
    assert truth(short, rows, "like")
    # a lone character next to another token: colocated unigrams are not exact
    glued = parse_query("广x")
    assert not route_can_represent(glued, "fts_cjk")
    conn.execute("INSERT INTO k(rowid, x) VALUES (100001, '广西x')")
    try:
        assert 100001 in rowids(conn, "k", match_expression(glued, "fts_cjk"))  # not a substring
    finally:
        conn.execute("DELETE FROM k WHERE rowid = 100001")
    cjk_on_fts5 = parse_query("广西")
    assert not route_can_represent(cjk_on_fts5, "fts5")
    assert rowids(conn, "u", match_expression(cjk_on_fts5, "fts5")) < truth(
        cjk_on_fts5, rows, "like"
    )


# ---------------------------------------------------------------------------
# Longest queries: SQLite's expression depth limit (1000) and FTS5's own
# ---------------------------------------------------------------------------

LONG_SHAPES = {
    "one-letter words": "a " * 1100,
    "distinct words": " ".join(f"w{i}" for i in range(700)),
    "ors": "a OR " * 600,
    "nots": " ".join(f"x NOT n{i}" for i in range(300)),
    "mixed": " ".join(f"p{i} q{i} OR r{i} NOT s{i}" for i in range(150)),
    "cjk": "广西 " * 800,
    "phrases": " ".join(f'"a{i} b"' for i in range(400)),
    "identifiers": " ".join(f"my-app{i}.ts" for i in range(200)),
}


@pytest.mark.parametrize("shape", sorted(LONG_SHAPES))
def test_longest_queries_run_on_every_route(
    prop_db: tuple[sqlite3.Connection, list[str], str | None], shape: str
) -> None:
    conn, tables, _missing = prop_db
    sanitized = sanitize_fts5_query(LONG_SHAPES[shape])
    parsed = parse_query(LONG_SHAPES[shape])
    assert not parsed.is_empty
    for table in tables:
        rowids(conn, table, sanitized)
        for route in ROUTES:
            rowids(conn, table, match_expression(parsed, route))
    sql, params = like_sql.like_where(conn, like_plan(parsed))
    # the search layer adds its own filters with AND
    conn.execute(
        f"SELECT count(*) FROM {like_sql.LIKE_SOURCE} m WHERE {sql} AND m.id > 0 AND m.content IS NOT NULL",
        params,
    ).fetchone()
