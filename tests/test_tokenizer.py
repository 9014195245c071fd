"""The cjk_unicode61 tokenizer: token lists, exact offsets, options, unigrams.

Runs on two SQLite hosts (see _cjk_hosts.py): the stdlib module through
hermes_fts.connect() (3.40.1, FTS5 v1 API) and APSW's bundled newer SQLite.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from _cjk_hosts import DB_ERRORS, HOSTS, Db, assert_exact_offsets, fold, host_db
from _support import generator_copy
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

import hermes_fts
from hermes_fts import loader
from hermes_fts._cjk_ranges import RANGES, is_cjk
from hermes_fts._display import char_start

ROOT = Path(__file__).resolve().parent.parent
needs_source_tree = pytest.mark.skipif(
    not (ROOT / "csrc").is_dir(), reason="needs the source checkout (csrc/), not an installed wheel"
)


@pytest.fixture(params=HOSTS)
def db(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Db:
    return host_db(request.param, tmp_path_factory)


@pytest.fixture
def sdb(tmp_path_factory: pytest.TempPathFactory) -> Db:
    """The product host only: stdlib sqlite3 through hermes_fts.connect()."""
    return host_db("stdlib", tmp_path_factory)


# --------------------------------------------------------------------------
# Token lists per language


@pytest.mark.parametrize(
    "text, expected",
    [
        # Chinese, simplified and traditional
        ("我爱北京天安门", ["我爱", "爱北", "北京", "京天", "天安", "安门"]),
        ("臺灣資訊", ["臺灣", "灣資", "資訊"]),
        # Japanese: Han, kana and the prolonged sound mark mix in one run
        ("東京タワー", ["東京", "京タ", "タワ", "ワー"]),
        ("漢字ひらがな", ["漢字", "字ひ", "ひら", "らが", "がな"]),
        ("ゝゞヽヾ", ["ゝゞ", "ゞヽ", "ヽヾ"]),
        # Korean: syllables and Jamo
        ("한국어 처리", ["한국", "국어", "처리"]),
        ("ㄱㄴ ᄀᄁ", ["ㄱㄴ", "ᄀᄁ"]),
        # mixed Latin + CJK: Latin never joins a CJK run
        ("修改youer服务端", ["修改", "youer", "服务", "务端"]),
        ("重跑gen-itgc后", ["重跑", "gen", "itgc", "后"]),
        # lone characters are unigrams; no trailing unigram after a run
        ("我 是 a 中", ["我", "是", "a", "中"]),
        ("中国人", ["中国", "国人"]),
        # run breakers: space, CJK punctuation, ・, ideographic space, emoji, digits
        ("天、气。好", ["天", "气", "好"]),
        ("タワー・ビル", ["タワー"[0:2], "ワー", "ビル"]),
        ("中国\u3000人民", ["中国", "人民"]),
        ("中😀国", ["中", "国"]),
        ("第1章", ["第", "1", "章"]),
        # boundary members of the CJK set
        ("時々〇", ["時々", "々〇"]),
        ("ㇰㇱ", ["ㇰㇱ"]),
        ("𠀀𠀁", ["𠀀𠀁"]),  # Ext B
        ("\U00031350\U00031351", ["\U00031350\U00031351"]),  # Ext H
        ("\U0001b000\U0001b001", ["\U0001b000\U0001b001"]),  # kana supplement
        # ゠ U+30A0 is not CJK (unicode61 sees it as punctuation)
        ("ア゠イ", ["ア", "イ"]),
    ],
)
def test_token_lists(db: Db, text: str, expected: list[str]) -> None:
    tokens = db.tokens(text)
    assert [t["token"] for t in tokens] == expected
    assert all(not t["colocated"] for t in tokens)
    assert [t["pos"] for t in tokens] == list(range(len(expected)))
    assert_exact_offsets(text, tokens)


def test_mixed_offsets_exact(db: Db) -> None:
    tokens = db.tokens("修改youer服务端")
    assert [(t["token"], t["start"], t["end"]) for t in tokens] == [
        ("修改", 0, 6),
        ("youer", 6, 11),
        ("服务", 11, 17),
        ("务端", 14, 20),
    ]


# --------------------------------------------------------------------------
# Width folding


@pytest.mark.parametrize(
    "text, expected",
    [
        ("ＡＢＣ１２３", [("abc123", 0, 18)]),
        ("Ｈｅｌｌｏ世界", [("hello", 0, 15), ("世界", 15, 21)]),
        ("x ＡＢ y", [("x", 0, 1), ("ab", 2, 8), ("y", 9, 10)]),
        ("ｶﾞｷﾞ", [("ガギ", 0, 12)]),
        ("ｳﾞ", [("ヴ", 0, 6)]),
        ("ﾊﾟﾝ", [("パン", 0, 9)]),
        ("ﾜﾞ ｦﾞ", [("ヷ", 0, 6), ("ヺ", 7, 13)]),
        # no composition exists: the mark becomes combining U+3099 in the run
        ("ｱﾞ", [("ア\u3099", 0, 6)]),
        # full-width base + half-width mark composes as well
        ("カﾞ", [("ガ", 0, 6)]),
        ("ｶﾀｶﾅ", [("カタ", 0, 6), ("タカ", 3, 9), ("カナ", 6, 12)]),
        # half-width middle dot folds to ・, which separates
        ("ｶ･ｷ", [("カ", 0, 3), ("キ", 6, 9)]),
    ],
)
def test_width_folding(db: Db, text: str, expected: list[tuple[str, int, int]]) -> None:
    tokens = db.tokens(text)
    assert [(t["token"], t["start"], t["end"]) for t in tokens] == expected
    assert_exact_offsets(text, tokens)


def test_not_folded_forms(db: Db) -> None:
    # half-width Hangul, full-width symbols and the ideographic space are left alone
    assert db.terms("ﾡﾢ") == ["ﾡﾢ"]  # unicode61 word, not CJK (not bigrammed)
    assert db.terms("中￥国") == ["中", "国"]  # U+FFE5 is a symbol: separator
    assert db.terms("中\u3000国") == ["中", "国"]


def test_fullwidth_matches_ascii(db: Db) -> None:
    db.run("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='cjk_unicode61')")
    db.run("INSERT INTO t VALUES ('型番ＡＢＣ１２３です'), ('ｶﾞｲﾄﾞﾌﾞｯｸ')")
    assert db.all("SELECT rowid FROM t WHERE t MATCH 'abc123'") == [(1,)]
    assert db.all("SELECT rowid FROM t WHERE t MATCH 'ＡＢＣ１２３'") == [(1,)]
    assert db.all("SELECT rowid FROM t WHERE t MATCH 'ガイドブック'") == [(2,)]


# --------------------------------------------------------------------------
# unicode61 options pass through; unknown options fail like unicode61


def _vocab_terms(db: Db, tokenize: str, text: str) -> list[tuple[str, int]]:
    db.run("DROP TABLE IF EXISTS v")
    db.run("DROP TABLE IF EXISTS vv")
    db.run(f'CREATE VIRTUAL TABLE v USING fts5(x, tokenize="{tokenize}")')
    db.run("CREATE VIRTUAL TABLE vv USING fts5vocab(v, instance)")
    db.run("INSERT INTO v VALUES (?)", (text,))
    return sorted((term, off) for term, off in db.all("SELECT term, offset FROM vv"))


@pytest.mark.parametrize(
    "options, text, expected",
    [
        ("", "Café Ǖber", ["cafe", "ǖber"]),
        ("remove_diacritics 0", "Café", ["café"]),
        ("remove_diacritics 2", "Ǖber", ["uber"]),
        ("tokenchars '-'", "foo-bar baz", ["foo-bar", "baz"]),
        ("separators 'x'", "fooxbar", ["foo", "bar"]),
        ("categories 'L*'", "abc 123 def", ["abc", "def"]),
    ],
)
def test_unicode61_options_pass_through(
    db: Db, options: str, text: str, expected: list[str]
) -> None:
    args = options.replace("'", "").split()
    assert db.terms(text, *args) == expected
    # identical to unicode61 itself with the same options (terms and positions)
    ours = _vocab_terms(db, f"cjk_unicode61 {options}".strip(), text)
    theirs = _vocab_terms(db, f"unicode61 {options}".strip(), text)
    assert ours == theirs


def test_options_combine_with_unigrams(db: Db) -> None:
    toks = db.tokens("Foo-bar中国", "unigrams", "1", "tokenchars", "-")
    assert [(t["token"], t["colocated"]) for t in toks] == [
        ("foo-bar", False),
        ("中国", False),
        ("中", True),
        ("国", True),
    ]


@pytest.mark.parametrize(
    "tokenize",
    [
        "cjk_unicode61 bogus 1",
        "cjk_unicode61 remove_diacritics 7",
        "cjk_unicode61 unigrams 2",
        "cjk_unicode61 unigrams",
        "cjk_unicode61 unigrams yes",
    ],
)
def test_bad_options_fail(db: Db, tokenize: str) -> None:
    with pytest.raises(DB_ERRORS):
        db.run(f'CREATE VIRTUAL TABLE bad USING fts5(x, tokenize="{tokenize}")')
    args = tokenize.split()[1:]
    with pytest.raises(DB_ERRORS, match="tokenizer constructor"):
        db.tokens("中国", *args)


@pytest.mark.parametrize(
    "args, refused",
    [
        *[(("unigrams", "1", opt, "2"), f"refused '{opt} 2'") for opt in loader.INDEX_OPTIONS],
        (("bogus", "1"), "refused 'bogus 1'"),
        (("kana", "1", "remove_diacritics", "3"), "refused 'remove_diacritics 3'"),
        (("symbols", "1", "tokenchars"), "refused 'tokenchars' with no value"),
    ],
)
def test_a_refused_option_is_named_with_every_option_of_ours(
    db: Db, args: tuple[str, ...], refused: str
) -> None:
    with pytest.raises(DB_ERRORS) as caught:
        db.tokens("中国", *args)
    message = str(caught.value)
    assert refused in message
    for option in loader.INDEX_OPTIONS:
        assert f"'{option}'" in message


@pytest.mark.parametrize(
    "key, value, refused",
    [
        ("x'ff'", "'1'", "refused '\ufffd 1'"),
        ("'unigrams'", "x'c0af'", "refused 'unigrams \ufffd\ufffd'"),
        ("'kana'", "x'ed' || '中'", "refused 'kana \ufffd中'"),  # a cut sequence, then a character
        ("x'e4b8'", None, "refused '\ufffd\ufffd' with no value"),
    ],
)
def test_a_refused_option_not_utf8_is_named_in_utf8(
    db: Db, key: str, value: str | None, refused: str
) -> None:
    """An option of bytes that are not UTF-8 (a blob cast to text) was quoted into
    the message as it was, and Python's sqlite3 failed decoding the message with a
    UnicodeDecodeError instead of raising the error; hermes_fts.tokenize too."""
    args = f"CAST({key} AS TEXT)" + (f", CAST({value} AS TEXT)" if value else "")
    with pytest.raises(DB_ERRORS) as caught:
        db.run(f"SELECT cjk_tokens('中国', {args})")
    assert refused in str(caught.value)
    assert "'letters'" in str(caught.value)  # the rest of the message follows


def test_tokenize_names_an_option_not_utf8() -> None:
    with pytest.raises(ValueError, match="refused '\ufffd 1'"):
        loader.tokenize("中国", b"\xff", "1")  # type: ignore[arg-type]


def test_unknown_option_fails_like_unicode61(db: Db) -> None:
    for tok in ("unicode61 bogus 1", "cjk_unicode61 bogus 1"):
        with pytest.raises(DB_ERRORS):
            db.run(f"CREATE VIRTUAL TABLE bad USING fts5(x, tokenize='{tok}')")
    db.run("CREATE VIRTUAL TABLE ok USING fts5(x, tokenize='cjk_unicode61 unigrams 0')")


# --------------------------------------------------------------------------
# unigrams 1


def test_unigrams_token_stream(db: Db) -> None:
    toks = db.tokens("修改youer服务端 中", "unigrams", "1")
    assert [(t["token"], t["pos"], t["colocated"]) for t in toks] == [
        ("修改", 0, False),
        ("修", 0, True),
        ("改", 0, True),
        ("youer", 1, False),
        ("服务", 2, False),
        ("服", 2, True),
        ("务端", 3, False),
        ("务", 3, True),
        ("端", 3, True),
        ("中", 4, False),  # a lone char is emitted once
    ]
    assert_exact_offsets("修改youer服务端 中", toks)
    # positions are identical to the stream without unigrams
    plain = db.tokens("修改youer服务端 中")
    assert [(t["token"], t["pos"]) for t in toks if not t["colocated"]] == [
        (t["token"], t["pos"]) for t in plain
    ]


def test_unigrams_never_at_query_time(db: Db) -> None:
    text = "修改youer服务端"
    assert db.tokens(text, "unigrams", "1", query=True) == db.tokens(text, query=True)
    assert db.tokens(text, query=True) == db.tokens(text)


@pytest.mark.parametrize("unigrams", ["0", "1"])
def test_unigrams_matching(db: Db, unigrams: str) -> None:
    db.run(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='cjk_unicode61 unigrams {unigrams}')")
    rows = ["修改youer服务端", "天 气", "天、气", "天气很好", "中国人民银行"]
    for r in rows:
        db.run("INSERT INTO t VALUES (?)", (r,))

    def match(q: str) -> list[int]:
        return [r for (r,) in db.all("SELECT rowid FROM t WHERE t MATCH ? ORDER BY rowid", (q,))]

    # multi-character queries are exact either way, never across a space/punctuation
    assert match("天气") == [4]
    assert match("修改") == [1]
    assert match("youer") == [1]
    assert match('"修改 youer"') == [1]
    assert match('"youer 服务端"') == [1]
    assert match("中国 银行") == [5]
    assert match("国银") == []
    # a single character: inside runs only with unigrams 1
    assert match("改") == ([1] if unigrams == "1" else [])
    assert match("端") == ([1] if unigrams == "1" else [])
    assert match("天") == ([2, 3, 4] if unigrams == "1" else [2, 3])
    db.run("INSERT INTO t(t) VALUES ('integrity-check')")


# --------------------------------------------------------------------------
# robustness


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"\x00",
        b"a\x00\xe4\xb8\xad\xe5\x9b\xbd\x00b",
        b"\xff\xfe\xfd",
        b"\xe4\xb8",  # truncated 中
        b"\xe4\xe4\xb8\xad\xe5\x9b\xbd",  # stray lead byte then 中国
        b"\xc0\xaf\xe0\x80\xaf\xf0\x80\x80\xaf",  # overlong forms
        b"\xed\xa0\x80\xe4\xb8\xad\xe5\x9b\xbd",  # encoded surrogate then 中国
        b"\xf4\x90\x80\x80\xf0\x9f",  # above U+10FFFF, truncated 4-byte
        b"\x80\x80\xe4\xb8\xad",  # stray continuation bytes
    ],
)
def test_invalid_utf8_never_breaks(db: Db, raw: bytes) -> None:
    for args in ((), ("unigrams", "1")):
        tokens = db.tokens(raw, *args)  # blob: bytes reach the tokenizer untouched
        last = 0
        for t in tokens:
            assert 0 <= t["start"] < t["end"] <= len(raw)
            assert t["start"] >= last or t["colocated"]
            last = t["start"]
    # CJK after garbage is still found with exact offsets
    if b"\xe4\xb8\xad\xe5\x9b\xbd" in raw:
        at = raw.index(b"\xe4\xb8\xad\xe5\x9b\xbd")
        assert {"token": "中国", "start": at, "end": at + 6} in [
            {k: t[k] for k in ("token", "start", "end")} for t in db.tokens(raw)
        ]


def test_empty_and_null(db: Db) -> None:
    assert db.tokens("") == []
    assert db.value("SELECT cjk_tokens(NULL)") is None
    db.run("CREATE VIRTUAL TABLE t USING fts5(x, y, tokenize='cjk_unicode61 unigrams 1')")
    db.run("INSERT INTO t VALUES ('', NULL)")
    db.run("INSERT INTO t(t) VALUES ('integrity-check')")


def test_json_escaping(db: Db) -> None:
    toks = db.tokens('a"b\\c', "tokenchars", '"\\')
    assert [t["token"] for t in toks] == ['a"b\\c']
    raw = db.value("SELECT cjk_tokens(?, 'tokenchars', ?)", ["x\x01y", "\x01"])
    assert "\\u0001" in raw and json.loads(raw)[0]["token"] == "x\x01y"
    # an invalid byte inside a unicode61 token still gives valid JSON (U+FFFD)
    toks = db.tokens(b"ab\xffcd")
    assert all(isinstance(t["token"], str) for t in toks)
    assert "\ufffd" in "".join(t["token"] for t in toks) or len(toks) == 2


def test_megabyte_inputs(sdb: Db) -> None:
    big_cjk = "中华人民共和国" * 150_000  # ~3 MB
    big_en = "lorem ipsum dolor sit amet " * 40_000
    sdb.run("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='cjk_unicode61 unigrams 1')")
    sdb.run("INSERT INTO t VALUES (?)", (big_cjk,))
    sdb.run("INSERT INTO t VALUES (?)", (big_en + big_cjk[:999] + "ＡＢＣ " * 1000,))
    assert sdb.all("SELECT rowid FROM t WHERE t MATCH '和国'") == [(1,), (2,)]
    assert sdb.all("SELECT rowid FROM t WHERE t MATCH 'abc'") == [(2,)]
    n = sdb.value("SELECT json_array_length(cjk_tokens(?))", (big_cjk,))
    assert n == len(big_cjk) - 1


def test_version_string(db: Db) -> None:
    v = db.value("SELECT cjk_unicode61_version()")
    assert v.startswith(f"hermes-fts {hermes_fts.__version__}; fts5 api v1; sqlite ")
    assert v.endswith(db.value("SELECT sqlite_version()"))


# --------------------------------------------------------------------------
# one CJK table for C and Python


@needs_source_tree
def test_generated_tables_are_fresh() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "csrc" / "gen_cjk_tables.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr


@needs_source_tree
def test_generated_tables_check_detects_staleness(tmp_path: Path) -> None:
    script = generator_copy(
        tmp_path,
        "csrc/gen_cjk_tables.py",
        ("csrc/cjk_ranges.txt", "csrc/cjk_script.h", "hermes_fts/_cjk_ranges.py"),
    )
    assert subprocess.run([*script, "--check"], capture_output=True).returncode == 0
    with open(tmp_path / "csrc" / "cjk_ranges.txt", "a", encoding="utf-8") as f:
        f.write("E000..E001  # test-only range\n")
    assert subprocess.run([*script, "--check"], capture_output=True).returncode == 1
    subprocess.run(script, check=True, capture_output=True)
    assert "0x0E000" in (tmp_path / "hermes_fts" / "_cjk_ranges.py").read_text("utf-8")
    assert subprocess.run([*script, "--check"], capture_output=True).returncode == 0


def test_python_table_agrees_with_c(sdb: Db) -> None:
    probes: set[int] = set()
    for lo, hi in RANGES:
        probes.update({lo - 1, lo, lo + 1, hi - 1, hi, hi + 1})
    probes.update({0x30FB, 0x30A0, 0x3000, 0x3001, 0x41, 0xE9, 0x1F600})
    probes = {cp for cp in probes if 0x20 < cp <= 0x10FFFF and not 0xD800 <= cp <= 0xDFFF}
    probes -= set(range(0xFF01, 0xFFA0))  # folded before classification
    # three copies of a CJK char form two bigrams; non-CJK chars never do
    texts = [chr(cp) * 3 for cp in sorted(probes)]
    results = json.loads(
        sdb.value(
            "SELECT json_group_array(json(cjk_tokens(value))) FROM json_each(?)",
            (json.dumps(texts),),
        )
    )
    for cp, toks in zip(sorted(probes), results):
        c_says = [t["token"] for t in toks] == [chr(cp) * 2] * 2
        assert c_says == is_cjk(cp), hex(cp)


def test_tokenize_api_matches_sql(sdb: Db) -> None:
    text = "東京タワーＡＢＣ修改"
    api = hermes_fts.tokenize(text, unigrams=True)
    sql = sdb.tokens(text, "unigrams", "1")
    assert [(t.text, t.start, t.end, t.colocated) for t in api] == [
        (t["token"], t["start"], t["end"], t["colocated"]) for t in sql
    ]


# --------------------------------------------------------------------------
# property test: random bytes and random Unicode through the whole pipeline

FRAGMENTS = [
    "中国",
    "人民",
    "修改",
    "youer",
    "東京",
    "タワー",
    "ひらがな",
    "한국어",
    "々",
    "〇",
    "・",
    "ｶﾞ",
    "ﾊﾟ",
    "ﾞ",
    "ｱ",
    "ＡＢＣ",
    "１２",
    " ",
    "、",
    "😀",
    "𠀀",
    "café",
    "-",
    "\x00",
    "\n",
]
texts = st.one_of(
    st.text(max_size=40),
    st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=3)), max_size=12).map("".join),
)


@settings(
    max_examples=120,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(doc=texts, extra=st.binary(max_size=24), unigrams=st.booleans(), width=st.integers(1, 12))
@example(doc="中国\U0001f3fb", extra=b"", unigrams=False, width=1)  # a skin tone stays with 国
def test_property_pipeline(sdb: Db, doc: str, extra: bytes, unigrams: bool, width: int) -> None:
    assume("\u27e6" not in doc and "\u27e7" not in doc and "\u2026" not in doc)
    opts = "cjk_unicode61 unigrams 1" if unigrams else "cjk_unicode61"
    sdb.run("DROP TABLE IF EXISTS p")
    sdb.run(f"CREATE VIRTUAL TABLE p USING fts5(x, y, tokenize='{opts}')")
    sdb.run("INSERT INTO p VALUES (?, ?)", (doc, extra))
    tokens = sdb.tokens(doc, *(["unigrams", "1"] if unigrams else []))
    raw = doc.encode("utf-8")
    for t in tokens:
        assert 0 <= t["start"] < t["end"] <= len(raw)
        raw[t["start"] : t["end"]].decode("utf-8")  # offsets on character boundaries
    assert_exact_offsets(doc, [t for t in tokens if all(is_cjk(ord(c)) for c in t["token"])])
    # every positional token of the document finds the row as a phrase query
    for t in tokens[:6]:
        if t["colocated"]:
            continue
        phrase = '"' + t["token"].replace('"', '""') + '"'
        rows = sdb.all(
            "SELECT cjk_highlight(p, 0, '\u27e6', '\u27e7'), "
            f"cjk_snippet(p, 0, '\u27e6', '\u27e7', '\u2026', {width}), "
            "CAST(cjk_highlight(p, 1, '[', ']') AS BLOB), "
            "CAST(cjk_snippet(p, -1, '[', ']', '.', 3) AS BLOB) "
            "FROM p WHERE p MATCH ?",
            (phrase,),
        )
        assert len(rows) == 1, (t, phrase)
        hl, snip = rows[0][0], rows[0][1]
        assert "\u27e6" in hl
        assert hl.replace("\u27e6", "").replace("\u27e7", "") == doc
        plain = snip.replace("\u27e6", "").replace("\u27e7", "").replace("\u2026", "")
        # the window counts whole characters (DESIGN §3.6): a skin tone stays with 国
        starts = [i for i in range(len(plain)) if char_start(plain, i) == i]
        assert plain in doc and len(starts) <= width
    # random bytes as text in the second column, also as a MATCH needle
    if extra:
        try:
            sdb.all(
                "SELECT CAST(cjk_highlight(p, 1, '[', ']') AS BLOB) FROM p WHERE p MATCH ?",
                ('"' + extra.decode("utf-8", "replace").replace('"', '""') + '"',),
            )
        except DB_ERRORS:
            pass  # a malformed query is fine; a crash is not
    sdb.run("INSERT INTO p(p) VALUES ('integrity-check')")


# --------------------------------------------------------------------------
# Lucene CJKAnalyzer as an oracle (CJK bigrams only)

LUCENE_DIR = Path("/usr/share/java")
ORACLE_SRC = r"""
import java.io.*;
import java.nio.charset.StandardCharsets;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.cjk.CJKAnalyzer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.analysis.tokenattributes.TypeAttribute;

public class CjkOracle {
  public static void main(String[] args) throws Exception {
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, "UTF-8");
    Analyzer analyzer = new CJKAnalyzer(CharArraySet.EMPTY_SET);
    String line;
    while ((line = in.readLine()) != null) {
      StringBuilder sb = new StringBuilder("[");
      TokenStream ts = analyzer.tokenStream("f", line);
      CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
      TypeAttribute type = ts.addAttribute(TypeAttribute.class);
      ts.reset();
      boolean first = true;
      while (ts.incrementToken()) {
        if (!first) sb.append(',');
        first = false;
        sb.append('[').append(quote(type.type())).append(',').append(quote(term.toString())).append(']');
      }
      ts.end();
      ts.close();
      out.println(sb.append(']'));
    }
  }
  static String quote(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') b.append('\\').append(c);
      else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
      else b.append(c);
    }
    return b.append('"').toString();
  }
}
"""

ORACLE_INPUTS = [
    "我爱北京天安门",
    "臺灣資訊工程學系",
    "東京タワーに行きました",
    "漢字ひらがなカタカナ",
    "한국어 형태소 분석",
    "修改youer服务端",
    "中国人民银行、上海分行。",
    "タワー・ビル",
    "ｶﾞｷﾞ ﾊﾟﾝ",
    "ＡＢＣ１２３です",
    "一 二 三",
    "𠀀𠀁𠀂",
    "ゝゞ",
]


@pytest.fixture(scope="module")
def lucene_oracle(tmp_path_factory: pytest.TempPathFactory):
    jars = sorted(LUCENE_DIR.glob("lucene-core-8*.jar")) + sorted(
        LUCENE_DIR.glob("lucene-analyzers-common-8*.jar")
    )
    if not shutil.which("javac") or not shutil.which("java"):
        pytest.skip("java/javac not installed (apt-get install -y default-jdk-headless)")
    if len(jars) < 2:
        pytest.skip("Lucene 8 jars not found (apt-get install -y liblucene8-java)")
    work = tmp_path_factory.mktemp("oracle")
    (work / "CjkOracle.java").write_text(ORACLE_SRC, encoding="utf-8")
    cp = os.pathsep.join(str(j) for j in jars)
    subprocess.run(
        ["javac", "-cp", cp, "-d", str(work), str(work / "CjkOracle.java")],
        check=True,
        capture_output=True,
        timeout=120,
    )

    def run(lines: list[str]) -> list[list[list[str]]]:
        proc = subprocess.run(
            ["java", "-cp", cp + os.pathsep + str(work), "CjkOracle"],
            input="\n".join(lines) + "\n",
            capture_output=True,
            text=True,
            encoding="utf-8",
            check=True,
            timeout=120,
        )
        return [json.loads(x) for x in proc.stdout.splitlines()]

    return run


def test_lucene_cjk_bigrams_agree(sdb: Db, lucene_oracle) -> None:
    # Documented divergences are kept out of the inputs: 々 (ALPHANUM in
    # Lucene 8), Ext F+ ideographs (no token in Lucene 8), emoji, Hangul glued
    # to Latin (one UAX#29 word in Lucene).
    results = lucene_oracle(ORACLE_INPUTS)
    for text, lucene in zip(ORACLE_INPUTS, results):
        theirs = [term for typ, term in lucene if typ in ("<DOUBLE>", "<SINGLE>")]
        ours = [t for t in sdb.terms(text) if all(is_cjk(ord(c)) for c in t)]
        assert ours == theirs, text
        # and the non-CJK words agree too on these simple inputs
        words = [term for typ, term in lucene if typ not in ("<DOUBLE>", "<SINGLE>")]
        assert [t for t in sdb.terms(text) if not all(is_cjk(ord(c)) for c in t)] == words, text


def test_fold_reference_selfcheck() -> None:
    # the reference used by assert_exact_offsets must itself be right
    assert fold("ｶﾞｷﾞ") == "ガギ" and fold("ＡＢＣ") == "ABC" and fold("ｱﾞ") == "ア\u3099"
