"""Never worse than Hermes' own search: wherever Hermes Agent 0.19.0's built-in
``session_search`` finds a conversation, ``hermes_fts.session_search`` finds it too.

One store written by Hermes' own ``SessionDB`` (English, CJK, code, symbols), built by
``hermes-fts optimize-storage``, and every query asked of both tools on it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import _hermes_env as he
import pytest

HISTORY = [
    (
        "en-docker",
        [
            ("user", "How do I fix the Docker deployment on staging?"),
            (
                "assistant",
                "Restart the container with docker compose up -d; don't forget the .env file.",
            ),
        ],
    ),
    (
        "en-db",
        [
            ("user", "We migrated the database to PostgreSQL 16 on 2024-03-08."),
            ("assistant", "The migration script is scripts/migrate_db.py and it ran in v1.2.3."),
        ],
    ),
    (
        "en-lang",
        [
            ("user", "I love C++ templates and C# generics"),
            ("assistant", "Use std::vector<int> and node.js; see https://example.com/docs?q=1"),
        ],
    ),
    ("en-anna", [("user", "Anna's birthday is on March 8"), ("assistant", "TODO: buy a gift")]),
    (
        "zh",
        [("user", "我们讨论了数据库迁移的问题"), ("assistant", "大别山项目的部署在生产环境完成了")],
    ),
    (
        "ja",
        [("user", "おにぎりを食べました"), ("assistant", "ラーメンが好きです。東京に行きました")],
    ),
    ("ko", [("user", "어제 배포했어요"), ("assistant", "프로젝트 회의는 내일입니다")]),
    ("mixed", [("user", "Python脚本运行失败 error code 500"), ("assistant", "🚀 café straße")]),
]

# Hermes strips ':' (its column-filter operator), '+', '^' and braces, and searches
# the words on each side.
JOINED = [
    "docker:staging",
    "staging:docker",
    "restart:container",
    "birthday:march",
    "docker+staging",
    "docker^staging",
    "docker{staging}",
    "the docker:staging",
    "docker:staging AND fix",
    "docker:staging OR zzz",
    "NOT:docker",
]
QUERIES = [
    *JOINED,
    "docker",
    "Docker deployment",
    '"docker compose"',
    "deploy*",
    "docker AND staging",
    "docker OR kubernetes",
    "docker NOT staging",
    "don't",
    "C++",
    "C#",
    "node.js",
    "v1.2.3",
    "2024-03-08",
    "16",
    "TODO: buy",
    "Anna's",
    "scripts/migrate_db.py",
    "std::vector",
    "数据库",
    "数据库迁移",
    "迁移",
    "大别山",
    "山",
    "东京",
    "東京",
    "おにぎり",
    "らーめん",
    "배포",
    "어제",
    "Python脚本",
    "🚀",
    "cafe",
    "café",
    "STRASSE",
    "error code 500",
    "TODO:",
    ":docker",
    "TODO:buy",
]
# The built-in reads these otherwise (docs/QUERY.md, "Beside Hermes' own search").
APART = '"数据库 迁移"'
INTENDED = [APART, "迁移 NOT 数据库", "数据 AND 東京"]


@pytest.fixture(scope="module")
def answers(hermes_venv: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    home = tmp_path_factory.mktemp("parity-home")
    out = he.run_driver(
        hermes_venv,
        home,
        "parity",
        "--history",
        json.dumps(HISTORY, ensure_ascii=False),
        "--queries",
        json.dumps(QUERIES + INTENDED, ensure_ascii=False),
        timeout=300,
    )
    assert out["built"] == 0, out
    return dict(out["queries"])


@pytest.mark.parametrize("query", QUERIES)
def test_every_conversation_the_builtin_finds_is_found(answers: dict[str, Any], query: str) -> None:
    got = answers[query]
    assert got["error"] is None, got
    assert set(got["builtin"]) <= set(got["ours"]), got


@pytest.mark.parametrize("query", JOINED)
def test_a_joined_word_in_no_message_is_searched_as_its_words_with_a_note(
    answers: dict[str, Any], query: str
) -> None:
    # As written it is the phrase of its words, in no message; Hermes reads ':' (or
    # '+', '^', a brace) as a space and finds the conversation holding both words apart.
    got = answers[query]
    assert got["builtin"] and set(got["builtin"]) <= set(got["ours"]), got
    assert any("in no message as written: searched as" in n for n in got["notes"]), got


def test_a_cjk_phrase_a_space_parts_says_how_to_find_its_words_glued(
    answers: dict[str, Any],
) -> None:
    # Hermes ORs the words of a CJK phrase with a short word and finds 数据库迁移;
    # the phrase here is its words apart, and the note says how to write them glued.
    got = answers[APART]
    assert got["builtin"] == ["zh"] and got["ours"] == [], got
    assert any('written together they are "数据库迁移"' in n for n in got["notes"]), got


@pytest.mark.parametrize("query", ["迁移 NOT 数据库", "数据 AND 東京"])
def test_a_strict_query_with_a_short_cjk_word_keeps_its_operators(
    answers: dict[str, Any], query: str
) -> None:
    # The built-in drops the operators of such a query: it finds 数据库迁移, which
    # holds the excluded word, and conversations holding only one of the words.
    got = answers[query]
    assert "zh" in got["builtin"] and got["ours"] == [], got
