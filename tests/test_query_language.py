"""The query language holds on every route, checked against a reference evaluator.

The reference below is written from the documented language only (it never
calls the package's parser): each query's intended meaning is a small tree of
the test's own classes, evaluated on the raw text of every message.

* Latin terms are words on the token routes (``fts5``, ``fts_cjk``) and the
  LIKE scan: ``deploy`` does not find "deployment".  On ``trigram`` they are
  substrings: that is the one documented route difference, and the
  reference follows the route a search really took.
* CJK terms are substrings everywhere.
* ``NEAR`` counts tokens on every route: a Latin word is one token, a CJK run
  of n >= 2 characters is n - 1 tokens (its bigrams).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union

import pytest
from _support import needs_extension
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_fts.query.plan import (
    QueryError,
    match_expression,
    parse_query,
    sanitize_fts5_query,
)
from hermes_fts.query.syntax import MAX_FTS5_QUERY_CHARS, MAX_NESTING
from hermes_fts.query.tree import AllOf, Term
from hermes_fts.search import request as search_request
from hermes_fts.search import route as search_route
from hermes_fts.search import run as search
from hermes_fts.store import SessionStore

pytestmark = needs_extension  # the fts_cjk route is one of the routes under test

ROUTES = ("fts5", "fts_cjk", "trigram", "like_scan")
TOKEN_ROUTES = ("fts5", "fts_cjk")
WORD_ROUTES = (*TOKEN_ROUTES, "like_scan")  # Latin terms are whole words (issue 34)

# ---------------------------------------------------------------------------
# Reference evaluator
# ---------------------------------------------------------------------------

_CJK = re.compile(r"[\u3400-\u9fff]+")
_WORD_OR_RUN = re.compile(r"[\u3400-\u9fff]+|[a-z0-9]+")


def is_cjk_text(text: str) -> bool:
    return bool(_CJK.fullmatch(text))


@dataclass(frozen=True)
class Text:
    """A word or phrase: ``tokens`` consecutive (token routes) or ``literal`` as a substring."""

    literal: str
    tokens: tuple[str, ...]
    prefix: bool = False


def W(word: str, prefix: bool = False) -> Text:  # noqa: N802 - reads like the query
    return Text(word, (word.lower(),), prefix)


def PH(*words: str) -> Text:  # noqa: N802
    return Text(" ".join(words), tuple(w.lower() for w in words))


@dataclass(frozen=True)
class Cjk:
    """A CJK term: a substring on every route (a trailing ``*`` adds nothing)."""

    text: str


@dataclass(frozen=True)
class NearR:
    terms: tuple[Text | Cjk, ...]
    distance: int = 10


@dataclass(frozen=True)
class And:
    include: tuple[Ref, ...]
    exclude: tuple[Ref, ...] = ()


@dataclass(frozen=True)
class Or:
    options: tuple[Ref, ...]


Ref = Union[Text, Cjk, NearR, And, Or]


def latin_tokens(text: str) -> list[str]:
    """Latin words in order; a CJK run between two words keeps them apart."""
    return _WORD_OR_RUN.findall(text.lower())


def consecutive(doc: list[str], want: tuple[str, ...], prefix: bool) -> bool:
    n = len(want)
    for i in range(len(doc) - n + 1):
        if doc[i : i + n - 1] == list(want[:-1]) and (
            doc[i + n - 1] == want[-1] or (prefix and doc[i + n - 1].startswith(want[-1]))
        ):
            return True
    return False


def positions(text: str) -> list[tuple[str, str]]:
    """(kind, token) per position: Latin words, and the bigrams of each CJK run."""
    out: list[tuple[str, str]] = []
    for run in latin_tokens(text):
        if not is_cjk_text(run):
            out.append(("latin", run))
        elif len(run) == 1:
            out.append(("cjk", run))
        else:
            out += [("cjk", run[i : i + 2]) for i in range(len(run) - 1)]
    return out


def near_starts(doc: list[tuple[str, str]], term: Text | Cjk) -> tuple[list[int], int]:
    if isinstance(term, Cjk):
        grams = [term.text[i : i + 2] for i in range(len(term.text) - 1)]
        want, prefix = [("cjk", g) for g in grams], False
    else:
        want, prefix = [("latin", t) for t in term.tokens], term.prefix
    hits = []
    for i in range(len(doc) - len(want) + 1):
        head_ok = doc[i : i + len(want) - 1] == want[:-1]
        kind, last = doc[i + len(want) - 1]
        if (
            head_ok
            and kind == want[-1][0]
            and (last == want[-1][1] or (prefix and last.startswith(want[-1][1])))
        ):
            hits.append(i)
    return hits, len(want)


def holds(node: Ref, text: str, words: bool) -> bool:
    """Whether ``node`` holds for ``text``; ``words``: Latin word semantics."""
    if isinstance(node, Cjk):
        return node.text in text
    if isinstance(node, Text):
        if words:
            return consecutive(latin_tokens(text), node.tokens, node.prefix)
        return node.literal.lower() in text.lower()  # LIKE folds ASCII only; vocab is ASCII
    if isinstance(node, NearR):
        doc = positions(text)
        found = [near_starts(doc, t) for t in node.terms]
        if any(not starts for starts, _ in found):
            return False
        # FTS5: for the term starting last, every other term ends within `distance`
        return any(
            all(any(last - n - node.distance <= s <= last for s in starts) for starts, n in found)
            for starts, _ in found
            for last in starts
        )
    if isinstance(node, Or):
        return any(holds(o, text, words) for o in node.options)
    return all(holds(c, text, words) for c in node.include) and not any(
        holds(c, text, words) for c in node.exclude
    )


# ---------------------------------------------------------------------------
# Store
# ---------------------------------------------------------------------------

DOCS = [
    "deploy the service now",  # 0
    "deploy kubernetes cluster",  # 1
    "kubernetes service mesh",  # 2
    "deployment finished",  # 3
    "rollback service",  # 4
    "桂林山水甲天下",  # 5
    "漓江 风景 deploy",  # 6
    "桂林 deploy 漓江",  # 7
    "alpha bravo charlie",  # 8
    "bravo alpha",  # 9
    "alpha one two three four five six bravo",  # 10
    "TODO: fix the login bug",  # 11
    "see path:config.yaml here",  # 12
    "content:deploy notes",  # 13
    "广西桂林漓江旅游",  # 14
    "rm -rf build",  # 15
    "deployments and services",  # 16
    "桂林米粉 kubernetes",  # 17
    "service deploy 漓江山水",  # 18
    "alpha 桂林山水 bravo",  # 19
]


def make_store(path) -> tuple[SessionStore, list[int]]:
    st = SessionStore(path)
    st.add_session("s1", source="cli", started_at=1000.0)
    ids = [st.add_message("s1", "user", text, timestamp=10.0 + i) for i, text in enumerate(DOCS)]
    return st, ids


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:  # every route, the opt-in word and trigram too
        mp.setenv("HERMES_TRIGRAM_FTS", "1")
        mp.setenv("HERMES_WORD_FTS", "1")
        st, ids = make_store(tmp_path_factory.mktemp("lang") / "state.db")
    yield st, ids
    st.close()


def run(st: SessionStore, query: str, route: str) -> tuple[str, set[int]]:
    """(the route that answered, the message ids) for ``query`` forced onto ``route``."""
    taken = search_route.plan_search(st.index_state(), query, route=route).route
    rows = st.search_messages(query, route=route, limit=10**6)
    return taken, {r["id"] for r in rows}


def expected(ids: list[int], meaning: Ref, route_taken: str) -> set[int]:
    words = route_taken in WORD_ROUTES
    return {ids[i] for i, text in enumerate(DOCS) if holds(meaning, text, words)}


# ---------------------------------------------------------------------------
# Truth table
# ---------------------------------------------------------------------------

deploy, service, kube = W("deploy"), W("service"), W("kubernetes")
TRUTH_TABLE: list[tuple[str, Ref]] = [
    ("deploy", deploy),
    ("deploy*", W("deploy", prefix=True)),
    # side by side or OR'ed: a best match, each English word in its forms (its stem*)
    ("deploy service", Or((W("deploy", prefix=True), W("servic", prefix=True)))),
    ("deploy AND service", And((deploy, service))),
    ("deploy OR kubernetes", Or((W("deploy", prefix=True), W("kubernet", prefix=True)))),
    ('deploy OR "kubernetes"', Or((W("deploy", prefix=True), kube))),  # quoted: as written
    ("deploy NOT service", And((deploy,), (service,))),
    ("deploy AND NOT service", And((deploy,), (service,))),
    # the example: the true answer excludes every row with "service"
    ("(deploy OR kubernetes) NOT service", And((Or((deploy, kube)),), (service,))),
    # one precedence: NOT and AND left to right, OR loosest
    ("deploy NOT service kubernetes", And((deploy, kube), (service,))),
    ("deploy OR kubernetes NOT service", Or((deploy, And((kube,), (service,))))),
    ("kubernetes NOT service OR deploy", Or((And((kube,), (service,)), deploy))),
    ("deploy NOT (service OR cluster)", And((deploy,), (service, W("cluster")))),
    ("NOT service deploy", And((deploy,), (service,))),
    ("kubernetes (deploy OR mesh)", And((kube, Or((deploy, W("mesh")))))),  # FTS5 rejects it
    (
        "(deploy OR service) (kubernetes OR rollback)",
        And((Or((deploy, service)), Or((kube, W("rollback"))))),
    ),
    ("deploy NOT (kubernetes NOT cluster)", And((deploy,), (And((kube,), (W("cluster"),)),))),
    ('"alpha bravo"', PH("alpha", "bravo")),
    ('"bravo alpha"', PH("bravo", "alpha")),
    (
        '"alpha bravo" OR "kubernetes service"',
        Or((PH("alpha", "bravo"), PH("kubernetes", "service"))),
    ),
    ('"deploy the"*', Text("deploy the", ("deploy", "the"), prefix=True)),
    ("NEAR(alpha bravo)", NearR((W("alpha"), W("bravo")))),
    ("NEAR(alpha bravo, 0)", NearR((W("alpha"), W("bravo")), 0)),
    ("NEAR(alpha bravo, 5)", NearR((W("alpha"), W("bravo")), 5)),
    ("NEAR(alpha bravo, 6)", NearR((W("alpha"), W("bravo")), 6)),
    ("NEAR(alpha bravo, 2)", NearR((W("alpha"), W("bravo")), 2)),  # across 桂林山水: 3 tokens
    ("NEAR(alpha bravo, 3)", NearR((W("alpha"), W("bravo")), 3)),
    ('NEAR("alpha bravo" charlie, 0)', NearR((PH("alpha", "bravo"), W("charlie")), 0)),
    ("NEAR(depl* cluster, 1)", NearR((W("depl", prefix=True), W("cluster")), 1)),
    ("NEAR(桂林 漓江, 0)", NearR((Cjk("桂林"), Cjk("漓江")), 0)),
    ("NEAR(桂林 漓江, 1)", NearR((Cjk("桂林"), Cjk("漓江")), 1)),
    ("NEAR(deploy 漓江, 0)", NearR((deploy, Cjk("漓江")), 0)),
    ("NEAR(deploy 漓江山水, 0)", NearR((deploy, Cjk("漓江山水")), 0)),
    ("deploy NOT NEAR(deploy service, 0)", And((deploy,), (NearR((deploy, service), 0),))),
    ("kubernetes OR NEAR(alpha bravo, 0)", Or((kube, NearR((W("alpha"), W("bravo")), 0)))),
    ("桂林", Cjk("桂林")),
    ("桂", Cjk("桂")),
    ("桂林*", Cjk("桂林")),
    ("桂林OR漓江", Or((Cjk("桂林"), Cjk("漓江")))),
    ("桂林AND漓江", And((Cjk("桂林"), Cjk("漓江")))),
    ("桂林NOT漓江", And((Cjk("桂林"),), (Cjk("漓江"),))),
    ("(桂林OR漓江)NOT deploy", And((Or((Cjk("桂林"), Cjk("漓江"))),), (deploy,))),
    ("桂林 deploy", Or((Cjk("桂林"), W("deploy", prefix=True)))),
    ("桂林 OR kubernetes", Or((Cjk("桂林"), W("kubernet", prefix=True)))),
    ("漓江 NOT deploy", And((Cjk("漓江"),), (deploy,))),
    ("deploy NOT 桂林", And((deploy,), (Cjk("桂林"),))),
    ("桂林山水 OR 漓江山水", Or((Cjk("桂林山水"), Cjk("漓江山水")))),
    ("kubernetes NOT 米粉", And((kube,), (Cjk("米粉"),))),
    ("TODO: fix", Or((W("todo", prefix=True), W("fix", prefix=True)))),
    ("path:config.yaml", Text("path:config.yaml", ("path", "config", "yaml"))),
    ("content:deploy", Text("content:deploy", ("content", "deploy"))),
    ("rm -rf", Or((W("rm"), W("rf")))),  # a leading "-" is literal
    ("deploy -service", Or((W("deploy", prefix=True), W("servic", prefix=True)))),
    ("and or not", Or((W("and"), W("or"), W("not")))),  # lower case: words, all common
]


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize(("query", "meaning"), TRUTH_TABLE, ids=[q for q, _ in TRUTH_TABLE])
def test_truth_table(store, route: str, query: str, meaning: Ref) -> None:
    st, ids = store
    taken, got = run(st, query, route)
    assert taken not in ("empty", "refused"), query
    assert got == expected(ids, meaning, taken), (query, route, taken)


def test_truth_table_runs_natively_on_every_route(store) -> None:
    """The table is not all answered by the LIKE fallback: each index runs its share."""
    st, _ids = store
    native = {route: 0 for route in ROUTES}
    # The trigram index holds raw text: it answers where the LIKE scan folds
    # nothing either (no extension); where it folds, nearly every term may be
    # stored in a form the fold changes (ＷＩＤＴＨ) and goes to LIKE.
    raw = {**st.index_state(), "cjk_fold": False}
    for query, _meaning in TRUTH_TABLE:
        for route in ROUTES:
            state = raw if route == "trigram" else st.index_state()
            native[route] += search_route.plan_search(state, query, route=route).route == route
    assert min(native.values()) >= 5, native
    assert search_route.plan_search(st.index_state(), "NEAR(alpha bravo, 5)").route == "fts_cjk"
    # A negated word may hide glued to CJK in one unicode61 token (issue 33).
    assert search_route.plan_search(st.index_state(), "deploy NOT service").route == "fts_cjk"


def test_word_semantics_differ_only_on_the_trigram_route(store) -> None:
    st, ids = store
    for route in WORD_ROUTES:
        assert ids[3] not in run(st, "deploy", route)[1]  # "deployment" is another word
    # The trigram index answers a Latin word only where LIKE folds nothing (no
    # extension): it holds ＤＥＰＬＯＹ raw, so where LIKE folds, LIKE answers.
    assert run(st, "deploy", "trigram")[0] == "like_scan"
    raw = {**st.index_state(), "cjk_fold": False}
    ask = search_request.SearchRequest("deploy", route="trigram", limit=100)
    found = search.run(st._conn, raw, ask)
    assert found.route == "trigram" and ids[3] in {r["id"] for r in found.rows}


def test_fts5_precedence_never_decides(store) -> None:
    """Raw FTS5 (3.40) reads `a NOT b c` as `a NOT (b c)` and rejects `a (b OR c)`."""
    st, _ids = store
    conn = st._conn
    raw = "deploy NOT service kubernetes"
    ours = {
        r[0]
        for r in conn.execute(
            "SELECT rowid FROM hermes_fts_word WHERE hermes_fts_word MATCH ?",
            (match_expression(parse_query(raw), "fts5"),),
        )
    }
    theirs = {
        r[0]
        for r in conn.execute(
            "SELECT rowid FROM hermes_fts_word WHERE hermes_fts_word MATCH ?", (raw,)
        )
    }
    assert ours != theirs  # FTS5's own reading is a different query
    assert match_expression(parse_query(raw), "fts5") == '("deploy" AND "kubernetes") NOT "service"'
    with pytest.raises(Exception, match="syntax"):
        conn.execute(
            "SELECT rowid FROM hermes_fts_word WHERE hermes_fts_word MATCH ?",
            ("kubernetes (deploy OR mesh)",),
        ).fetchall()


# ---------------------------------------------------------------------------
# Negative-only queries, colons, leading dashes, notes
# ---------------------------------------------------------------------------

NEGATIVE_ONLY = [
    "NOT deploy",
    "NOT 桂林",
    "-deploy",
    "-deploy -service",
    "NOT (deploy OR service)",
    "deploy OR NOT service",
    "(NOT deploy)",
    "deploy NOT NOT service",
    "(deploy OR NOT service) kubernetes",
    "deploy (NOT service)",
]  # a group needs its own word; write deploy NOT service


@pytest.mark.parametrize("query", NEGATIVE_ONLY)
def test_negative_only_queries_are_refused_with_a_way_to_write_them(store, query: str) -> None:
    st, _ids = store
    for route in ROUTES:
        with pytest.raises(QueryError) as err:
            st.search_messages(query, route=route)
        message = str(err.value)
        assert "NOT" in message and ("write" in message or "Put" in message), message
    assert st.describe_search_path(query) == "refused"
    assert sanitize_fts5_query(query) == ""
    assert search_request.query_notes(query)[-1] == parse_query(query).error


@pytest.mark.parametrize(
    ("query", "excluded"),
    [
        # bare, the hint `<words> NOT staging env` kept `env` and excluded `staging`
        ('NOT "staging env"', Term("staging env")),
        ('deploy OR NOT "staging env"*', Term("staging env", prefix=True)),
        ('NOT "OR"', Term("OR")),  # bare, a dangling operator
        ('NOT "a""b"', Term('a"b')),
        ("NOT deploy*", Term("deploy", prefix=True)),
    ],
)
def test_a_refusal_names_the_exclusion_as_a_query_writes_it(query: str, excluded: Term) -> None:
    error = parse_query(query).error
    hint = re.search(r"'<words> (NOT .*)';", error or "")
    assert hint is not None, error
    assert parse_query(f"rollout {hint.group(1)}").expr == AllOf((Term("rollout"),), (excluded,))


@pytest.mark.parametrize(
    ("query", "row", "note"),
    [
        ("content:deploy", 13, "column filters"),
        ("tool_name:terminal", None, "column filters"),
        ("path:config.yaml", 12, None),
        ("TODO: fix", 11, None),
        ("rm -rf", 15, "leading '-'"),
        ("deploy -service", 0, "leading '-'"),
        # Before a phrase the '-' was "ignored", and the phrase silently searched
        ('deploy -"staging env"', None, "leading '-' does not exclude (write NOT \"staging env\""),
    ],
)
def test_colons_and_dashes_are_text_and_say_so(store, query, row, note) -> None:
    st, ids = store
    # A best match names the words it searched in their forms: not about the text.
    notes = [n for n in search_request.query_notes(query) if not n.startswith("also searched")]
    if note is None:
        assert notes == []
    else:
        assert any(note in n for n in notes), notes
    for route in ROUTES:
        got = run(st, query, route)[1]
        if row is not None:
            assert ids[row] in got, (query, route)
    # never an AND of the two halves: "content" and "deploy" apart do not match
    assert ids[0] not in run(st, "content:deploy", "like_scan")[1]


@pytest.mark.parametrize(
    ("query", "fragment"),
    [
        ("deploy AND", "dropped 'AND'"),
        ("OR deploy", "dropped an OR"),
        ("deploy OR OR service", "dropped an OR"),
        ("(deploy OR service", "closed 1 '('"),
        ("deploy) service", "')' that closes nothing"),
        ('deploy "service', "unmatched '\"'"),
        ("deploy AND AND service", "read 'AND AND' as 'AND'"),
        ("deploy ---", "ignored '---'"),
        ("NEAR(deploy)", "NEAR with fewer than two"),
        ("deploy or release", "'or' is a word here, not an operator: operators are upper case"),
        ("near(deploy release)", "'near' is a word here, not an operator"),
        ("NEAR(deploy service, 999999)", "NEAR distance 999999 lowered"),
        ("deploy\x00service", "read control characters (U+0000) as spaces"),
        ("\x01\x02\x7f", "read control characters (U+0001, U+0002, U+007F) as spaces"),
        ('"deploy 🚀"', "'🚀' in 'deploy 🚀' is not searched"),
        ("rocket🚀 launch", "'🚀' in 'rocket🚀' is not searched"),
        ("NEAR(→deploy release)", "'→' in '→deploy' is not searched"),
        # a number closing NEAR's words without its comma: a word, said so
        ("NEAR(deploy service 5)", "'5' in NEAR(...) is searched as a word: a distance follows"),
        # FTS4's infix NEAR: searched as words, without a word on the proximity asked
        ("deploy NEAR/3 release", "'NEAR/3' is searched as a word, not as an operator"),
        ("deploy NEAR/3 release", "NEAR takes its terms in parentheses, NEAR(deploy release, 3)"),
        ('"deploy env" NEAR release*', 'parentheses, NEAR("deploy env" release*)'),
        # a '*' before or inside a word: no wildcard, said so
        ("de*ploy", "'de*ploy' is searched as 'de ploy': a '*' is a wildcard only at the end"),
        ("*ploy", "'*ploy' is searched as 'ploy'"),
        ("*ploy*", "'*ploy*' is searched as 'ploy*'"),
        # a leading '-' before a prefix: the prefix is what is searched, and excluded
        (
            "rm -deploy*",
            "'-deploy*' is searched as 'deploy*': a leading '-' does not exclude (write NOT deploy* ",
        ),
        (
            'rm -"staging env"*',
            'searched as "staging env"*: a leading \'-\' does not exclude (write NOT "staging env"* ',
        ),
    ],
)
def test_every_change_to_the_written_query_is_noted(query: str, fragment: str) -> None:
    notes = parse_query(query).notes
    assert any(fragment in n for n in notes), notes
    # A best match may add one: the common words it leaves out ("or"); an 'or' or
    # 'and' it leaves out needs no word on operators (it is an OR of the words).
    kept = [n for n in notes if not n.startswith(("'or' is a word here", "'and' is a word here"))]
    assert search_request.query_notes(query)[: len(kept)] == kept


def test_clean_queries_have_no_notes() -> None:
    for query, _meaning in TRUTH_TABLE:
        if query not in ("rm -rf", "deploy -service", "content:deploy", "and or not"):
            assert parse_query(query).notes == (), query
    assert parse_query("deploy\tservice\r\nrollback\u3000東京").notes == ()  # spaces stay spaces
    assert parse_query("🚀 OR 👍").notes == ()  # a symbol on its own is searched as written
    for written in ("NEAR(deploy service, 5)", "NEAR(version 2)", "dep*", '"de*ploy"'):
        assert parse_query(written).notes == (), written


@pytest.mark.parametrize(
    "query",
    [
        "NEAR(deploy",
        "NEAR(deploy OR service)",
        "NEAR(deploy service, x)",
        "NEAR(a (b))",
        "(" * 20 + "deploy" + ")" * 20,
    ],
)
def test_malformed_queries_are_refused_not_rewritten(query: str) -> None:
    parsed = parse_query(query)
    assert parsed.error and parsed.is_empty
    assert sanitize_fts5_query(query) == ""


def test_the_deepest_accepted_nesting_runs_on_every_route(store) -> None:
    """MAX_NESTING keeps FTS5's and SQLite's expression depth limits out of reach."""
    st, ids = store
    query, meaning = "deploy", deploy
    for level in range(MAX_NESTING - 1):
        other = W(f"x{level}")
        if level % 2:  # (kubernetes OR x1 inner): OR binds loosest
            query, meaning = f"(kubernetes OR x{level} {query})", Or((kube, And((other, meaning))))
        else:  # (kubernetes NOT x0 inner)
            query, meaning = f"(kubernetes NOT x{level} {query})", And((kube, meaning), (other,))
    query = f"({query})"
    assert parse_query(query).error is None
    for route in ROUTES:
        taken, got = run(st, query, route)
        assert got == expected(ids, meaning, taken), (route, taken)
    assert expected(ids, meaning, "fts5")  # not a vacuous check
    assert parse_query(f"({query})").error is not None


# ---------------------------------------------------------------------------
# Truncation at the limit
# ---------------------------------------------------------------------------


def test_long_queries_are_cut_at_a_term_boundary_and_say_so(store) -> None:
    st, ids = store
    deploy_rows = run(st, "deploy*", "fts5")[1]  # a repeated word is a best match: its forms
    for query in ["deploy " * 300, "deploy " * 100, "please " * 292 + "deploy"]:
        parsed = parse_query(query)
        terms = {t.text for t in parsed.terms}
        assert terms <= {"deploy", "please"}, terms  # never a cut word such as "depl"
        assert (len(query) > MAX_FTS5_QUERY_CHARS) == any("cut" in n for n in parsed.notes)
    for route in ROUTES:
        assert run(st, "deploy " * 300, route)[1] == run(st, "deploy*", route)[1]
    assert run(st, "deploy " * 300, "fts5")[1] == deploy_rows
    # the cut word is dropped, not searched as "depl"
    assert {t.text for t in parse_query("please " * 292 + "deploy").terms} == {"please"}


def test_truncation_reports_what_was_dropped_of_a_huge_paste() -> None:
    query = "deploy " * 100_000
    (note,) = parse_query(query).notes
    assert "cut to 2043 characters" in note and f"{len(query) - 2043} characters" in note


def test_truncation_keeps_phrases_and_near_whole() -> None:
    pad = "x " * ((MAX_FTS5_QUERY_CHARS - 10) // 2)
    for tail in ['"alpha bravo charlie delta"', "NEAR(alpha bravo charlie, 3)"]:
        parsed = parse_query(pad + tail)
        assert {t.text for t in parsed.terms} == {"x"}
        assert any("cut" in n for n in parsed.notes)


def test_a_single_term_over_the_limit_is_refused() -> None:
    parsed = parse_query("a" * (MAX_FTS5_QUERY_CHARS + 1))
    assert parsed.error and "longer than" in parsed.error


# ---------------------------------------------------------------------------
# Property: random queries from the grammar agree with the reference on every route
# ---------------------------------------------------------------------------

LATIN_VOCAB = ["deploy", "service", "kubernetes", "alpha", "bravo", "cluster", "mesh"]
CJK_VOCAB = ["桂林", "漓江", "山水", "桂林山水", "漓江游"]


@st.composite
def leaves(draw) -> tuple[Ref, str]:
    kind = draw(st.sampled_from(["word", "prefix", "phrase", "cjk", "near"]))
    if kind == "word":
        w = draw(st.sampled_from(LATIN_VOCAB))
        return W(w), draw(st.sampled_from([w, f'"{w}"']))
    if kind == "prefix":
        w = draw(st.sampled_from(LATIN_VOCAB))
        stem = w[: draw(st.integers(3, len(w)))]
        return W(stem, prefix=True), stem + "*"
    if kind == "phrase":
        a, b = draw(st.lists(st.sampled_from(LATIN_VOCAB), min_size=2, max_size=2))
        return PH(a, b), f'"{a} {b}"'
    if kind == "cjk":
        c = draw(st.sampled_from(CJK_VOCAB))
        return Cjk(c), c
    terms = draw(
        st.lists(st.sampled_from(LATIN_VOCAB + CJK_VOCAB), min_size=2, max_size=3, unique=True)
    )
    distance = draw(st.integers(0, 4))
    ref = NearR(tuple(Cjk(t) if is_cjk_text(t) else W(t) for t in terms), distance)
    return ref, f"NEAR({' '.join(terms)}, {distance})"


def glue(left: str, op: str, right: str, tight: bool) -> str:
    """Operators may touch CJK text (`桂林OR漓江`): the language reads them the same."""
    if tight and is_cjk_text(left[-1:]) and is_cjk_text(right[:1]):
        return f"{left}{op}{right}"
    return f"{left} {op} {right}"


def combine(children: st.SearchStrategy) -> st.SearchStrategy:
    @st.composite
    def build(draw) -> tuple[Ref, str]:
        if draw(st.booleans()):
            parts = draw(st.lists(children, min_size=2, max_size=3))
            text = parts[0][1]
            for _ref, t in parts[1:]:
                text = glue(text, "OR", t, draw(st.booleans()))
            return Or(tuple(r for r, _ in parts)), f"({text})"
        pos = draw(st.lists(children, min_size=1, max_size=3))
        neg = draw(st.lists(children, max_size=2))
        text = pos[0][1]
        for _ref, t in pos[1:]:
            op = draw(st.sampled_from(["", "AND"]))
            text = f"{text} {t}" if not op else glue(text, op, t, draw(st.booleans()))
        for _ref, t in neg:
            text = glue(text, "NOT", t, draw(st.booleans()))
        return And(tuple(r for r, _ in pos), tuple(r for r, _ in neg)), f"({text})"

    return build()


grammar = st.recursive(leaves(), combine, max_leaves=8)

PROPERTY_DOCS = DOCS + [
    "alpha deploy bravo service",
    "mesh 漓江游 cluster",
    "kubernetes bravo 桂林山水 deploy",
    "service mesh alpha 漓江",
    "山水 桂林 deployments",
]


@pytest.fixture(scope="module")
def property_store(tmp_path_factory):
    st_ = SessionStore(tmp_path_factory.mktemp("prop") / "state.db")
    st_.add_session("s1", source="cli", started_at=1000.0)
    ids = [
        st_.add_message("s1", "assistant", t, timestamp=10.0 + i)
        for i, t in enumerate(PROPERTY_DOCS)
    ]
    yield st_, ids
    st_.close()


@settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=grammar)
def test_random_queries_agree_with_the_reference_on_every_route(property_store, case) -> None:
    st_, ids = property_store
    meaning, query = case
    for route in ROUTES:
        taken, got = run(st_, query, route)
        words = taken in WORD_ROUTES
        want = {ids[i] for i, text in enumerate(PROPERTY_DOCS) if holds(meaning, text, words)}
        assert got == want, (query, route, taken, sanitize_fts5_query(query))
    # the canonical form means the same query
    assert parse_query(sanitize_fts5_query(query)).expr == parse_query(query).expr


@pytest.mark.parametrize(
    ("query", "exclude", "quoted"),
    [
        ("-deploy", "'<words> NOT deploy'", '"-deploy"'),
        ("-x OR -x", "'<words> NOT x'", '"-x"'),  # each word once
        ("-x -y", "'<words> NOT x NOT y'", '"-x" "-y"'),  # NOT x y would keep y
        # a phrase was searched: the opposite of what the '-' asked
        ('-"staging env"', "'<words> NOT \"staging env\"'", '"-staging env"'),
        # a prefix stays one: NOT deploy and "-deploy" dropped the star that was searched
        ("-deploy*", "'<words> NOT deploy*'", '"-deploy"*'),
        ('-"staging env"*', "'<words> NOT \"staging env\"*'", '"-staging env"*'),
    ],
)
def test_a_query_of_dashed_words_alone_is_refused_with_queries_that_work(
    query: str, exclude: str, quoted: str
) -> None:
    error = parse_query(query).error
    assert error is not None and f"write {exclude};" in error and error.endswith(quoted)
    assert parse_query(f"deploy {exclude[9:-1]}").error is None
