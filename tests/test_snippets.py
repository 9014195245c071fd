"""Snippets people can read: tool calls as calls, no cut term, no cut character."""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import pytest

import hermes_fts
from hermes_fts._cjk_variants import FOLDS, fold_char
from hermes_fts.content import JSON_CONTENT_PREFIX, render_tool_calls
from hermes_fts.index.schema import BASE, CJK
from hermes_fts.query.plan import fold_text, parse_query
from hermes_fts.query.tree import Term
from hermes_fts.search import snippets
from hermes_fts.search.request import ROUTE_ORDER
from hermes_fts.search.snippets import (
    CLOSE,
    LIKE_SNIPPET_BEFORE,
    LIKE_SNIPPET_CHARS,
    MARKS,
    OPEN,
    snippet_sql,
    with_marks,
)
from hermes_fts.store import SessionStore
from hermes_fts.tool import session_search

needs_extension = pytest.mark.skipif(
    not hermes_fts.extension_path(), reason="needs the built cjk_unicode61 extension"
)

MARKED = re.compile(r">>>(.*?)<<<")


# The module marks matches with OPEN and CLOSE while a search runs; these tests
# read and write them as a search's rows show them (>>> <<<).
def _internal(snippet: str) -> str:
    return snippet.replace(">>>", OPEN).replace("<<<", CLOSE)


def like_snippet(texts, terms, **kwargs) -> str:
    """Of terms as a query writes them (``dep*``: a prefix)."""
    terms = [Term(t.removesuffix("*"), t.endswith("*")) for t in terms]
    return with_marks(snippets.like_snippet(texts, terms, **kwargs), MARKS)


def edge_cut_highlight(snippet: str) -> bool:
    return snippets.edge_cut_highlight(_internal(snippet))


def is_tool_call_json(snippet: str) -> bool:
    return snippets.is_tool_call_json(_internal(snippet))


def single_char_narrowing(q):
    narrow = snippets.single_char_narrowing(q)
    return None if narrow is None else lambda snippet: with_marks(narrow(_internal(snippet)), MARKS)


def _call(name: str, arguments: dict) -> list[dict]:
    return [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }
    ]


# --------------------------------------------------------------------------- tool calls


def test_tool_calls_render_as_calls():
    raw = json.dumps(_call("web_search", {"query": "nginx 配置", "limit": 5}), ensure_ascii=False)
    assert render_tool_calls(raw) == 'web_search(query="nginx 配置", limit=5)'
    two = _call("a", {}) + _call("b", {"x": [1]})
    assert render_tool_calls(json.dumps(two)) == "a(); b(x=[1])"
    assert render_tool_calls("[1, 2]") is None and render_tool_calls("not json") is None


def test_like_snippet_marks_the_match_inside_the_rendered_call():
    raw = json.dumps(_call("web_search", {"query": "deploy guide"}))
    assert like_snippet([None, None, raw], ["web_search"]) == (
        '>>>web_search<<<(query="deploy guide")'
    )
    assert like_snippet([None, None, raw], ["guide"]) == 'web_search(query="deploy >>>guide<<<")'


def test_like_snippet_marks_every_hit_in_the_cut_but_none_on_its_edge():
    raw = json.dumps(
        _call("terminal", {"command": "sudo systemctl reload nginx && nginx -s reload"})
    )
    assert like_snippet([None, None, raw], ["reload"]) == (
        'terminal(command="sudo systemctl >>>reload<<< nginx && nginx -s >>>reload<<<")'
    )
    assert like_snippet(["Nginx and NGINX and nginx"], ["nginx"]) == (
        ">>>Nginx<<< and >>>NGINX<<< and >>>nginx<<<"
    )
    text = "x" * 30 + " deploy" * 40
    snippet = like_snippet([text], ["deploy"])
    assert snippet.count(">>>deploy<<<") > 1 and not edge_cut_highlight(snippet), snippet


@pytest.fixture()
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HERMES_WORD_FTS", "1")  # both index routes, the opt-in fts5 too
    with SessionStore(tmp_path / "state.db") as st:
        st.add_session("s1", "cli")
        yield st


# One message, queries of several terms, and the words each route must mark.
MANY_TERMS = "We fixed the broken deploy, and the fixes held. 서버를 배포했어요 東京と大阪"
MANY_MARKED = {
    "fix* broken": ["fixed", "broken", "fixes"],
    "deploy fixes": ["fixed", "deploy", "fixes"],  # fixes: its other forms too
    "배포 서버": ["서버", "배포"],
    "东京 大阪": ["東京", "大阪"],
}


@needs_extension
@pytest.mark.parametrize("route", ROUTE_ORDER)
@pytest.mark.parametrize("query", MANY_MARKED)
def test_every_route_marks_every_term_its_snippet_shows(store, route, query):
    """Regression: the LIKE scan marked the first term it found and that word's
    repeats alone (``>>>fixed<<< the broken deploy … the fixes``, for
    ``fix* broken``), where the index routes mark every term."""
    store.add_message("s1", "user", MANY_TERMS)
    result = store.search(query, route=route)
    assert [MARKED.findall(r["snippet"]) for r in result.rows] == [MANY_MARKED[query]], result.route


@needs_extension
@pytest.mark.parametrize("route", ROUTE_ORDER)
def test_a_term_inside_a_longer_word_is_not_the_snippets_hit(store, route):
    """Regression: the LIKE scan found the row by "deploy" and cut its snippet
    around the "redeploy" before it, marked, the word it found out of sight."""
    text = "we redeploy nightly. " + "filler words here " * 10 + "then deploy again"
    store.add_message("s1", "user", text)
    [row] = store.search("deploy", route=route).rows
    assert MARKED.findall(row["snippet"]) == ["deploy"], row["snippet"]


# A message, a query, and the words every route marks in its snippet: as each
# route finds them (a phrase's words apart, a word whole).
FOUND_AS_MATCHED = [
    ("the alpha-service went down", '"alpha service"', ["alpha-service"]),
    ("we saw alpha,  service errors", '"alpha service"', ["alpha,  service"]),
    ("数据库、迁移 done", '"数据库 迁移"', ["数据库、迁移"]),
    ("we decided to decide later", "decide", ["decide"]),
    ("we decided to decide later", '"decide" AND later', ["decide", "later"]),
    ("we decided to decide later", "decide* AND later", ["decided", "decide", "later"]),
]


@needs_extension
@pytest.mark.parametrize("route", ROUTE_ORDER)
@pytest.mark.parametrize(("text", "query", "marked"), FOUND_AS_MATCHED)
def test_every_route_marks_a_term_where_it_found_it(store, route, text, query, marked):
    """Regression: the LIKE scan found "alpha-service" for ``"alpha service"`` but
    its snippet marked nothing (the text's head), and marked "decided" for
    ``decide``, which it does not count as a match."""
    store.add_message("s1", "user", text)
    result = store.search(query, route=route)
    assert [MARKED.findall(r["snippet"]) for r in result.rows] == [marked], result.route


@needs_extension
def test_a_snippet_cut_again_from_a_tool_call_marks_whole_words(store):
    """Regression: the index snippet of a tool call, cut again from the call, marked
    "decided" for ``decide``, a word the index did not match."""
    store.add_message(
        "s1", "assistant", None, tool_calls=_call("note", {"text": FOUND_AS_MATCHED[3][0]})
    )
    [row] = store.search("decide", route="fts_cjk").rows
    assert row["snippet"] == 'note(text="we decided to >>>decide<<< later")'


@needs_extension
@pytest.mark.parametrize("query", ["web_search", "nginx", "deploy*"])
def test_index_snippets_of_tool_calls_show_the_call_not_json(store, query):
    store.add_message("s1", "user", "find me a guide")
    store.add_message(
        "s1", "assistant", None, tool_calls=_call("web_search", {"query": "nginx deploy guide"})
    )
    out = session_search(store, query=query, role_filter="assistant")
    assert out["count"] == 1, out
    snippet = out["results"][0]["snippet"]
    assert '"function"' not in snippet and "arguments" not in snippet
    assert snippet.startswith(("web_search(", ">>>web_search<<<("))
    assert MARKED.search(snippet), snippet


@needs_extension
@pytest.mark.parametrize("table", [BASE, CJK])
def test_json_stored_as_plain_text_keeps_the_index_snippet(store, table):
    # A fetched page's fields: cut again from the stored text it would show the
    # same JSON, with fewer marks.  The index snippet marks both hits.
    page = json.dumps(
        {
            "title": "nginx 部署指南",
            "url": "https://example.org/nginx",
            "note": "how to deploy nginx",
        },
        ensure_ascii=False,
    )
    store.add_message("s1", "tool", page, tool_name="web_extract")
    route = {BASE: "fts5", CJK: "fts_cjk"}[table]
    [row] = store.search_messages("nginx", route=route)
    indexed = with_marks(
        store._conn.execute(
            f"SELECT {snippet_sql(table, True)} FROM {table} WHERE {table} MATCH 'nginx'"
        ).fetchone()[0],
        MARKS,
    )
    assert is_tool_call_json(indexed) and len(MARKED.findall(indexed)) == 3, indexed
    assert row["snippet"] == indexed


@needs_extension
@pytest.mark.parametrize("route", ["fts5", "fts_cjk"])
def test_structured_content_is_still_shown_decoded(store, route):
    parts = [{"type": "text", "text": "the nginx 部署 notes"}, {"type": "image_url"}]
    store.add_message("s1", "user", JSON_CONTENT_PREFIX + json.dumps(parts))
    [row] = store.search_messages("nginx", route=route)
    assert row["snippet"] == "the >>>nginx<<< 部署 notes", row


@pytest.mark.parametrize(
    "query, snippet, narrowed",
    [
        ("猫", ">>>猫粮<<<买好了，小>>>小猫<<<很开心", ">>>猫<<<粮买好了，小小>>>猫<<<很开心"),
        ("猫", ">>>猫猫<<<", ">>>猫<<<猫"),  # the first of the two, as the index marked it
        ("猫 粮", ">>>猫粮<<<", ">>>猫<<<粮"),
        (
            "猫 猫粮",
            ">>>猫粮<<<和>>>猫砂<<<",
            ">>>猫粮<<<和>>>猫<<<砂",
        ),  # a longer term's bigram stays
        (
            "猫",
            ">>>猫粮店<<< >>>狗粮<<< >>>cat<<< >>>猫<<<",
            ">>>猫粮店<<< >>>狗粮<<< >>>cat<<< >>>猫<<<",
        ),
        ("猫 NOT 狗", ">>>狗猫<<<", "狗>>>猫<<<"),  # an excluded character is not marked
        ("a.b 猫", ">>>[猫<<<", "[>>>猫<<<"),  # no character is special in the pattern
        # The index folds Han variants: 東 finds 东京, and marked the 京 beside it.
        ("東", ">>>东京<<<和>>>東京<<<", ">>>东<<<京和>>>東<<<京"),
        ("东", ">>>北東<<<", "北>>>東<<<"),
        ("東 东京", ">>>东京<<<", ">>>东京<<<"),  # a longer term's bigram stays
    ],
)
def test_one_character_terms_mark_only_their_character(query, snippet, narrowed):
    narrow = single_char_narrowing(parse_query(query))
    assert narrow is not None and narrow(snippet) == narrowed
    assert single_char_narrowing(parse_query("猫粮 cat")) is None


def test_every_han_variant_folds_as_the_table_says():
    """A one-character hit's other spellings are read off the variant table's own fold;
    the width and kana folds that ``fold_text`` adds leave every such character alone."""
    differ = [
        hex(cp) for cp in {*FOLDS, *FOLDS.values()} if fold_text(chr(cp)) != chr(fold_char(cp))
    ]
    assert not differ, differ[:20]


def test_a_one_character_query_folds_no_whole_variant_table(monkeypatch):
    """The other spellings of 東 were found by folding each of the variant table's
    characters in Python, in every process that searched a one-character word (each
    `hermes-fts search 猫`); now the table's fold gives them, with the same marks."""
    folded: list[str] = []
    fold = snippets.fold_text
    monkeypatch.setattr(snippets, "fold_text", lambda text: folded.append(text) or fold(text))
    snippets._variants_by_fold.cache_clear()
    narrow = single_char_narrowing(parse_query("東"))
    assert narrow is not None and narrow(">>>东京<<<和>>>東京<<<") == ">>>东<<<京和>>>東<<<京"
    assert len(folded) < 1000, len(folded)


@needs_extension
def test_a_one_character_han_variant_marks_only_its_character(store):
    """On SQLite before 3.45 the search layer narrows a one-character hit; it knew the
    kana the index folds together, not the Han variants, so 東 marked 东京 whole."""
    store.add_message("s1", "user", "我们在东京部署了服务")
    [row] = store.search_messages("東", route="fts_cjk")
    assert row["snippet"] == "我们在>>>东<<<京部署了服务"


# --------------------------------------------------------------------------- boundaries


def test_a_latin_mark_covers_its_whole_word():
    text = "a " * 60 + "deployment of the service"
    snippet = like_snippet([text], ["dep*"])
    assert ">>>deployment<<<" in snippet


def test_the_mark_is_never_cut_at_the_end_even_when_the_term_is_long():
    term = "z" * (LIKE_SNIPPET_CHARS + 30)
    text = "a" * 100 + " " + term + " tail"
    snippet = like_snippet([text], [term])
    assert MARKED.search(snippet).group(1) == term


# Characters of several code points, and what each is.
CLUSTERS = {
    "combining": "e\u0301",
    "zwj-family": "\U0001f468\u200d\U0001f469\u200d\U0001f467",
    "skin-tone": "\U0001f44d\U0001f3fd",
    "variation": "\u2764\ufe0f",
    "flag": "\U0001f1ef\U0001f1f5",
    "jamo": "\u1112\u1161\u11ab",  # 한 written as jamo
}


@pytest.mark.parametrize("pad", range(LIKE_SNIPPET_BEFORE - 3, LIKE_SNIPPET_BEFORE + 4))
@pytest.mark.parametrize(
    "cluster",
    [CLUSTERS[k] for k in ("combining", "zwj-family", "skin-tone", "variation")],
    ids=["combining", "zwj-family", "skin-tone", "variation"],
)
def test_no_character_is_cut_at_either_edge(pad, cluster):
    # The cluster sits where the snippet's start (or end) would otherwise fall.
    text = cluster * 30 + "x" * pad + "東京タワー" + "y" * (LIKE_SNIPPET_CHARS - pad) + cluster * 30
    snippet = like_snippet([text], ["東京タワー"])
    body = snippet.removeprefix("...").removesuffix("...")
    body = body.replace(">>>", "").replace("<<<", "")
    assert body in text
    start = text.index(body)
    end = start + len(body)
    for edge in (start, end):
        if 0 < edge < len(text):
            ch, before = text[edge], text[edge - 1]
            assert not unicodedata.combining(ch) and ch not in "\u200d\ufe0f", (pad, edge)
            assert before != "\u200d" and not ("\U0001f3fb" <= ch <= "\U0001f3ff"), (pad, edge)


@needs_extension
@pytest.mark.parametrize("route", ["fts_cjk", "fts5"])
@pytest.mark.parametrize("cluster", list(CLUSTERS.values()), ids=list(CLUSTERS))
def test_an_index_snippet_cuts_no_character_at_either_edge(store, route, cluster):
    """cjk_snippet cut its window at code points: a flag's second half beside the next
    flag's first showed other flags, half an emoji family another family, a letter
    lost its accent to the edge or an accent stood alone."""
    # The window is centred on the hit: each pad moves its edges to another place in
    # a cluster.
    texts = [cluster * 40 + "z" * pad + " deploy " + "z" * pad + cluster * 40 for pad in range(7)]
    for text in texts:
        store.add_message("s1", "user", text)
    rows = store.search_messages("deploy", route=route, limit=10)
    assert len(rows) == len(texts)
    for row in rows:
        snippet = row["snippet"]
        assert snippet.startswith("...") and snippet.endswith("..."), snippet
        body = snippet[3:-3].replace(">>>", "").replace("<<<", "")
        text = next(t for t in texts if body in t)
        start = text.index(body)
        for edge in (start, start + len(body)):
            assert (text[:edge] + "|").endswith(("z|", " |", cluster + "|")), (ascii(body), edge)


@pytest.mark.parametrize("at", [0, 1, 39, 40, 41, 119, 120, 121])
def test_cjk_term_whole_at_every_position(at):
    text = "中" * at + "東京タワー" + "文" * 150
    snippet = like_snippet([text], ["東京タワー"])
    assert MARKED.findall(snippet) == ["東京タワー"]
    assert snippet.replace(">>>", "").replace("<<<", "").strip(".") in text


def test_edge_cut_detection():
    assert edge_cut_highlight(">>>東京タワ<<<...") is True  # issue 14's example
    assert edge_cut_highlight(">>>東京タワー<<< and more") is False
    assert edge_cut_highlight("...abc >>>東京タワ<<<...") is True
    assert edge_cut_highlight("...>>>タワー<<< abc") is True
    assert edge_cut_highlight("...a >>>b<<< c...") is False


@needs_extension
def test_index_snippet_never_cuts_a_marked_cjk_term(store):
    # A run of hits longer than the snippet: the index's own snippet marks it
    # up to its character limit and cuts it there.
    store.add_message("s1", "user", "東京タワー" * 40)
    store.add_message("s1", "user", "前" * 200 + "東京タワー" * 30)
    for res in session_search(store, query="東京タワー", limit=5)["results"]:
        snippet = res["snippet"]
        assert not edge_cut_highlight(snippet), snippet
        for marked in MARKED.findall(snippet):
            assert marked.replace("東京タワー", "") == "", snippet


@pytest.mark.parametrize(
    "text, term, expected",
    [
        # İ lowers to two characters: positions found in lowered text used to
        # land that many characters late.
        ("İİİ 東京タワー 見た", "東京", "İİİ >>>東京<<<タワー 見た"),
        ("İİİ Tower 見た", "tower", "İİİ >>>Tower<<< 見た"),
        ("İstanbul'da deploy", "DEPLOY", "İstanbul'da >>>deploy<<<"),
        # A CJK term is looked up in the text itself (it has no case).
        ("ＡＢＣ　東京", "東京", "ＡＢＣ　>>>東京<<<"),
    ],
)
def test_like_snippet_marks_where_the_term_is_when_lowering_moves_characters(
    text: str, term: str, expected: str
) -> None:
    assert like_snippet([text], [term]) == expected
