"""Han variant folding in the session store: the CJK index's ``variants 1``,
its upgrade by optimize-storage, and the same folds on every search route."""

from __future__ import annotations

import pytest
from _support import needs_extension, rebuild_cjk_index

import hermes_fts
from hermes_fts import loader
from hermes_fts.index import schema
from hermes_fts.index.schema import CJK
from hermes_fts.query.tree import Term
from hermes_fts.search import route as search_route
from hermes_fts.search import snippets
from hermes_fts.store import SessionStore

pytestmark = needs_extension

TEXTS = {
    "ja": "東京タワーの近くで",
    "zh-Hans": "我们明天去东京",
    "zh-Hant": "臺灣的天氣很好",
    "zh-Hans-2": "台湾天气不错",
}


def _fill(st: SessionStore) -> dict[str, int]:
    st.add_session("s1", source="cli", started_at=1000.0)
    return {
        key: st.add_message("s1", "user", text, timestamp=10.0 + n)
        for n, (key, text) in enumerate(TEXTS.items())
    }


@pytest.fixture()
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("HERMES_TRIGRAM_FTS", "1")  # the opt-in trigram route is compared too
    st = SessionStore(tmp_path / "state.db")
    ids = _fill(st)
    yield st, ids
    st.close()


def _ids(rows: list[dict]) -> set[int]:
    return {r["id"] for r in rows}


def test_the_cjk_index_folds_variants_by_default(store):
    st, ids = store
    assert schema.CJK_TOKENIZE in schema.index_sql(st._conn, CJK)
    assert st.status()["indexes"][CJK]["variants"] is True
    assert not st.optimize_needed()
    assert st.describe_search_path("东京") == "fts_cjk"
    assert _ids(st.search_messages("东京")) == {ids["ja"], ids["zh-Hans"]}


def test_tokenize_check_reads_the_options():
    assert schema.cjk_tokenize_current(schema.DDL[CJK].table_sql)
    older = schema.DDL[CJK].table_sql.replace(" variants 1", "")
    assert not schema.cjk_tokenize_current(older)
    assert not schema.cjk_tokenize_current(None)
    assert schema.cjk_option_on(older, "variants") is False
    assert schema.cjk_option_on(schema.DDL[CJK].table_sql, "variants") is True
    assert schema.cjk_option_on(None, "variants") is None
    # the order of options does not matter to the tokenizer, but a rebuild is
    # only skipped for exactly our options; `variants 0` is off.
    assert (
        schema.cjk_option_on(older.replace("unigrams 1", "unigrams 1 variants 0"), "variants")
        is False
    )


def test_optimize_storage_upgrades_an_index_without_variants(tmp_path):
    path = tmp_path / "state.db"
    with SessionStore(path) as st:
        ids = _fill(st)
        rebuild_cjk_index(st, " variants 1")
    with SessionStore(path) as st:  # reopened as after an upgrade of hermes-fts
        assert st.status()["indexes"][CJK]["variants"] is False
        assert st.index_state()[CJK]["served"]
        assert _ids(st.search_messages("东京")) == {ids["zh-Hans"]}  # the old index's answer
        assert st.optimize_needed()

        result = st.optimize_storage()
        assert result["ok"], result
        assert not st.optimize_needed()
        assert st.status()["indexes"][CJK]["variants"] is True
        assert st.index_state()[CJK]["served"]
        assert st.integrity_check()[CJK] is None
        assert st.describe_search_path("东京") == "fts_cjk"
        rows = {r["id"]: r for r in st.search_messages("东京")}
        assert set(rows) == {ids["ja"], ids["zh-Hans"]}
        assert ">>>東京<<<" in rows[ids["ja"]]["snippet"]  # the original characters
        assert ">>>东京<<<" in rows[ids["zh-Hans"]]["snippet"]


# ---------------------------------------------------------------------------
# every route folds alike


QUERIES = [
    ("东京", {"ja", "zh-Hans"}),  # Simplified finds Japanese
    ("東京", {"ja", "zh-Hans"}),  # and the other way round
    ("台湾", {"zh-Hant", "zh-Hans-2"}),
    ("臺灣", {"zh-Hant", "zh-Hans-2"}),
    ("天气很好", {"zh-Hant"}),  # >= 3 characters: the trigram index could take it
    ("天氣不错", {"zh-Hans-2"}),
    ("東京タワー", {"ja"}),
]


@pytest.mark.parametrize("route", ["fts_cjk", "trigram", "like_scan"])
@pytest.mark.parametrize(("query", "keys"), QUERIES)
def test_variant_queries_agree_on_every_route(store, route, query, keys):
    st, ids = store
    rows = st.search_messages(query, route=route)
    assert _ids(rows) == {ids[k] for k in keys}, (route, query)
    planned = search_route.plan_search(st.index_state(), query, route=route).route
    # The raw-text trigram index never answers a query folding changes.
    assert planned == ("fts_cjk" if route == "fts_cjk" else "like_scan")
    for row in rows:
        marked = row["snippet"].split(">>>", 1)[1].split("<<<", 1)[0]
        assert marked and marked in TEXTS[next(k for k in keys if ids[k] == row["id"])]


def test_variant_free_cjk_still_takes_the_trigram_route(store):
    st, _ids_ = store
    hangul = st.add_message("s1", "user", "한국어 공부를 한다", timestamp=99.0)
    assert search_route.plan_search(st.index_state(), "한국어", route="trigram").route == "trigram"
    assert _ids(st.search_messages("한국어", route="trigram")) == {hangul}
    # Kana folds (らーめん finds ラーメン), so the raw-text trigram index leaves it to LIKE.
    assert (
        search_route.plan_search(st.index_state(), "ラーメン屋", route="trigram").route
        == "like_scan"
    )


def test_like_scan_folds_widths(store):
    st, _ = store
    wide = st.add_message("s1", "user", "ＡＢＣ系统 ｶﾞｷﾞ", timestamp=99.0)
    assert _ids(st.search_messages("abc系統", route="like_scan")) == {wide}
    rows = st.search_messages("ガギ", route="like_scan")
    assert _ids(rows) == {wide}
    assert ">>>ｶﾞｷﾞ<<<" in rows[0]["snippet"]  # two folded characters, four original ones


def like_snippet(texts, terms, **kwargs) -> str:
    """The LIKE snippet as a search's rows show it (``>>> <<<``), of terms as a query
    writes them (``abc*``: a prefix)."""
    terms = [Term(t.removesuffix("*"), t.endswith("*")) for t in terms]
    return snippets.with_marks(snippets.like_snippet(texts, terms, **kwargs), snippets.MARKS)


def test_like_snippet_maps_folded_positions_back():
    conn = hermes_fts.connect(":memory:")
    assert like_snippet(["我去過東京タワー"], ["东京"], fold=conn) == "我去過>>>東京<<<タワー"
    assert (
        like_snippet(["ｶﾞｷﾞ東京ＡＢＣd"], ["ギ东京abc*"], fold=conn) == "ｶﾞ>>>ｷﾞ東京ＡＢＣd<<<"
    )  # the mark covers the whole Latin word
    assert like_snippet(["ｶﾞｷﾞ東京ＡＢＣd"], ["ギ东京abc*"]) == "ｶﾞｷﾞ東京ＡＢＣd"  # no fold, no hit


def test_a_library_without_cjk_fold_leaves_like_unfolded(tmp_path, monkeypatch):
    """HERMES_FTS_LIBRARY may name an older library: LIKE then compares raw text."""
    monkeypatch.setattr(loader, "has_fold", lambda conn: False)
    monkeypatch.setenv("HERMES_TRIGRAM_FTS", "1")
    with SessionStore(tmp_path / "state.db") as st:
        ids = _fill(st)
        assert st.index_state()["cjk_fold"] is False
        assert _ids(st.search_messages("东京", route="like_scan")) == {ids["zh-Hans"]}
        # nothing to fold with, so trigram answers as before (a stated route difference)
        assert (
            search_route.plan_search(st.index_state(), "东京タワ", route="trigram").route
            == "trigram"
        )


def test_status_says_whether_the_cjk_index_folds_variants(tmp_path, capsys):
    from hermes_fts.cli import main

    path = tmp_path / "state.db"
    with SessionStore(path) as st:
        _fill(st)
        rebuild_cjk_index(st, " variants 1")
    assert main(["status", "--db", str(path)]) == 0
    fix = f"Han variants not folded: `hermes-fts optimize-storage --db {path}`"
    assert fix in capsys.readouterr().out
    assert main(["optimize-storage", "--db", str(path), "--yes"]) == 0
    capsys.readouterr()
    assert main(["status", "--db", str(path)]) == 0
    assert "Han variants folded" in capsys.readouterr().out
