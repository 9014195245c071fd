"""Strict queries over messages of mixed scripts, on every route, against an oracle.

The messages mix English, Chinese, Japanese and Korean words, identifiers,
names glued to CJK (``Anna의``, ``2024年``, ``Pythonで``), emoji, full-width and
half-width forms and decomposed text, with spaces, CJK punctuation and emoji
between them.  The queries are exact (quoted phrases, prefixes, explicit
``AND``, ``OR`` and ``NOT`` in parentheses: no best match, no word forms), so
each route must return the rows the oracle below finds, written from
docs/QUERY.md: a Latin word is a whole token, a lone CJK run a substring, and
the parts of a phrase or glued term consecutive tokens (a CJK part at its
start ending a run, at its end starting one).  Widths, kana and Han variants
fold on both sides (``fold_text``, the folding tables every route shares).
"""

from __future__ import annotations

import unicodedata
from typing import Any

import pytest
from _support import needs_extension
from _tool_fixtures import one_message_each
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_fts._cjk_ranges import is_cjk
from hermes_fts.query.plan import fold_text

pytestmark = needs_extension  # the fts_cjk route and the folding LIKE scan are under test

ROUTES = (None, "fts5", "fts_cjk", "like_scan")

WORDS = [
    "deploy", "Deploy", "DEPLOY", "staging", "kube", "kubernetes", "Anna", "python", "v2.3.1",
    "scripts/deploy.sh", "user@example.com", "README.md", "foo_bar", "2024", "42", "fixed",
    "数据库", "迁移", "东京", "東京", "部署", "服务器", "猫", "桂林山水", "张伟", "数据",
    "ラーメン", "らーめん", "ﾗｰﾒﾝ", "ｶﾞ", "大阪", "たこ焼き", "映画", "を", "見ました", "の",
    "안녕하세요", "고양이", "들러리에", "들러리", "배포했어", "배포", "의", "프로젝트", "한",
    "ＡＢＣ", "ｄｅｐｌｏｙ", "１２３", "Ｋｕｂｅ", "か\u3099", "\u1112\u1161\u11ab",
    "Anna의", "2024年", "Pythonで", "staging服务器", "第3版", "deploy的", "Anna프로젝트",
    "invoice-gen에서", "年", "版",
]  # fmt: skip
SEPARATORS = [" ", " ", "", "。", "、", ", ", "\n", "🚀", "👍🏽"]
# Written in queries beside the words: parts of them, and of the messages' CJK runs.
PARTS = ["deplo", "dep", "大", "고양", "ラー", "映画を", "张", "山水"]


def _messages() -> dict[str, str]:
    import random

    rng = random.Random(88)
    return {
        f"m{n}": "".join(
            rng.choice(WORDS) + rng.choice(SEPARATORS) for _ in range(rng.randint(1, 7))
        ).strip()
        for n in range(160)
    }


MESSAGES = _messages()


def _runs(text: str) -> list[tuple[bool, str]]:
    """(is CJK, run) of the text's letters and digits, folded; anything else separates."""
    out: list[tuple[bool, str]] = []
    for ch in fold_text(unicodedata.normalize("NFC", text)):
        if unicodedata.category(ch)[0] not in "LN":
            out.append((False, ""))
            continue
        cjk = is_cjk(ord(ch))
        if out and out[-1][1] and out[-1][0] == cjk:
            out[-1] = (cjk, out[-1][1] + ch)
        else:
            out.append((cjk, ch))
    return [(cjk, run.lower()) for cjk, run in out if run]


def _holds_term(term: str, prefix: bool, text: str) -> bool:
    want, doc = _runs(term), _runs(text)
    if len(want) == 1 and want[0][0]:
        return any(cjk and want[0][1] in run for cjk, run in doc)
    last = len(want) - 1
    for start in range(len(doc) - last):
        for k, (cjk, part) in enumerate(want):
            kind, got = doc[start + k]
            if kind != cjk:
                break
            if cjk and not (
                got == part
                or (k == 0 < last and got.endswith(part))
                or (k == last > 0 and got.startswith(part))
            ):
                break
            if not cjk and not (got == part or (k == last and prefix and got.startswith(part))):
                break
        else:
            return True
    return False


# A query: ("term", text, prefix, as written) | ("and", includes, excludes) | ("or", options)
Node = tuple[Any, ...]


def _holds(node: Node, text: str) -> bool:
    if node[0] == "term":
        return _holds_term(node[1], node[2], text)
    if node[0] == "or":
        return any(_holds(option, text) for option in node[1])
    return all(_holds(n, text) for n in node[1]) and not any(_holds(n, text) for n in node[2])


def _written(node: Node) -> str:
    if node[0] == "term":
        return str(node[3])
    if node[0] == "or":
        return "(" + " OR ".join(map(_written, node[1])) + ")"
    text = " AND ".join(map(_written, node[1])) + "".join(f" NOT {_written(n)}" for n in node[2])
    return f"({text})"


_LATIN = [w for w in WORDS if w.isascii() and w.isalpha()]
word = st.sampled_from(WORDS + PARTS).flatmap(
    lambda w: st.sampled_from([("term", w, False, w), ("term", w, False, f'"{w}"')])
)
prefix = st.tuples(st.sampled_from(_LATIN), st.integers(2, 10)).map(
    lambda p: ("term", p[0][: p[1]], True, p[0][: p[1]] + "*")
)
phrase = st.tuples(
    st.lists(st.sampled_from(WORDS + PARTS), min_size=2, max_size=3),
    st.sampled_from([" ", "、", "-", "/"]),
).map(lambda p: ("term", " ".join(p[0]), False, '"' + p[1].join(p[0]) + '"'))
term = st.one_of(word, word, prefix, phrase)


def _extend(children: st.SearchStrategy[Node]) -> st.SearchStrategy[Node]:
    return st.one_of(
        st.lists(children, min_size=2, max_size=3).map(lambda options: ("or", options)),
        st.tuples(st.lists(children, min_size=1, max_size=3), st.lists(children, max_size=2)).map(
            lambda c: ("and", c[0], c[1])
        ),
    )


# At the top an AND of two at least: parentheses or an operator make every query strict.
queries = st.tuples(st.recursive(term, _extend, max_leaves=6), term).map(
    lambda pair: ("and", [pair[0], pair[1]], [])
)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    for st_, _path in one_message_each(tmp_path_factory, "mixed", MESSAGES):
        yield st_


@settings(
    max_examples=160,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(query=queries)
def test_strict_queries_find_what_the_oracle_finds_on_every_route(store: Any, query: Node) -> None:
    written = _written(query)
    want = {session for session, text in MESSAGES.items() if _holds(query, text)}
    for route in ROUTES:
        result = store.search(written, limit=10**6, route=route, fields=("session_id",))
        got = {row["session_id"] for row in result.rows}
        assert got == want, (written, route, result.route, result.notes)
