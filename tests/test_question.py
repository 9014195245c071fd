"""Reading a question (docs/QUERY.md, "Reading a question"): possessives, category
words and time words, through the store, the tool and the CLI.

Each store holds a session with the answer and a decoy that a plain best
match of the question's words ranks first; the question must find the answer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from _support import needs_extension
from _tool_fixtures import conversation, open_store

from hermes_fts.store import SessionStore
from hermes_fts.tool import session_search

pytestmark = needs_extension

NOW = "2026-12-03T12:00"  # a Thursday; last week is 23-29 November
LAST_WEEK = "2026-11-23 – 2026-11-29"
WEEK_BEFORE_LAST = "2026-11-16 – 2026-11-22"


def at(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()  # local time, as the package reads dates


def sessions(store: SessionStore, query: str, **kw: Any) -> list[str]:
    rows = store.search(query, sort="sessions", fields=["session_id"], **kw).rows
    return [r["session_id"] for r in rows]


def answer_and_decoy(tmp_path: Path, query: str, answer: str, decoy: str) -> list[str]:
    """The sessions ``query`` finds in a store of two chats: ``answer``, and ``decoy``
    written ten seconds later (newer, so it wins a tie)."""
    st = open_store(tmp_path / "state.db")
    try:
        conversation(st, "answer", [("user", answer)], start=at("2026-01-01T10:00"))
        conversation(st, "decoy", [("user", decoy)], start=at("2026-01-01T10:00") + 10)
        return sessions(st, query)
    finally:
        st.close()


def notes(store: SessionStore, query: str, **kw: Any) -> tuple[str, ...]:
    return store.search(query, sort="sessions", fields=["session_id"], **kw).notes


def tool(store: SessionStore, query: str, **kw: Any) -> tuple[list[str], list[str]]:
    got = session_search(store, query=query, **kw)
    assert got["success"], got
    return [r["session_id"] for r in got["results"]], got.get("query_notes", [])


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> SessionStore:
    st = open_store(tmp_path_factory.mktemp("question") / "state.db")
    say = [
        # possessives: the decoy is newer and says "sister" only
        ("anna", "2026-06-01T10:00", ["Anna said her sister moves to Lisbon"]),
        ("sister", "2026-06-02T10:00", ["my sister sent a postcard"]),
        # category words: the decoy says "hobby"; "start" is common
        ("boulder", "2026-05-01T10:00", ["Melanie wants to start bouldering at the gym"]),
        ("hobby", "2026-05-02T10:00", ["Melanie thinks a hobby helps, she said"]),
        *[(f"build{i}", "2026-05-03T10:00", [f"start the build {i}"]) for i in range(4)],
        # time words: the older session holds the words more often
        ("oct", "2026-10-05T10:00", ["we decide", "decide the cache: decide Redis"]),
        ("lastweek", "2026-11-25T10:00", ["we decide on RabbitMQ for the queue"]),
        ("db2023", "2023-03-08T10:00", ["我们选了PostgreSQL作为数据库"]),
        ("db2024", "2024-05-10T10:00", ["我们选了哪个数据库？我们选了MySQL"]),
        ("ja_old", "2026-10-06T10:00", ["会議で何に決めましたか？会議でRedisに決めました"]),
        ("ja_week", "2026-11-24T10:00", ["会議でRabbitMQに決めました"]),
        ("ja_0308", "2025-03-08T10:00", ["データベースはPostgreSQLを選びました"]),
        ("ja_other", "2025-06-01T10:00", ["データベースは何を選びましたか？MySQLです"]),
        ("ko_old", "2026-10-07T10:00", ["회의에서 무엇을 결정했어? 회의에서 Redis로 결정했어요"]),
        ("ko_week", "2026-11-26T10:00", ["회의에서 RabbitMQ로 결정했어요"]),
        # a noun in hiragana: the decoy is newer and holds the verb twice
        ("onigiri", "2026-04-01T10:00", ["昨日はおにぎりを食べた。美味しかった"]),
        ("ramen", "2026-04-02T10:00", ["ラーメンを食べた", "またラーメンを食べたい"]),
    ]
    for sid, when, texts in say:
        conversation(st, sid, [("user", text) for text in texts], start=at(when))
    yield st
    st.close()


# --------------------------------------------------------------------------- hiragana nouns


@pytest.mark.parametrize(
    "query", ["おにぎりを食べたのはいつ？", "どんなおにぎりを食べた？", "東京でおにぎりを食べた"]
)
def test_a_hiragana_noun_in_a_japanese_sentence_is_searched(
    store: SessionStore, query: str
) -> None:
    # Its bigrams alone read as grammar (おに, にぎ, ぎり), the verb decided.
    assert sessions(store, query)[0] == "onigiri"


@pytest.mark.parametrize(
    "run",
    [
        "由美の姉はどんな趣味の話をしていましたか",  # a verb: no particle ends it
        "由美の姉がはまった住まいは何でしたか",  # after a particle, ended by none
        "美味しかったですね",  # an ending after a kanji
        "リハビリについてどんな助言をしましたか",
    ],
)
def test_hiragana_grammar_is_no_noun(run: str) -> None:
    from hermes_fts.query.cjk_forms import hiragana_words

    assert hiragana_words(run) == []


@pytest.mark.parametrize(
    ("question", "searched", "left_out"),
    [
        (
            "由美の姉はどんな趣味の話をしていましたか",
            ["由美", "姉"],
            ["の姉", "姉は", "の話", "話を"],
        ),
        (
            "健太の娘がはまった仕事は何でしたか",
            ["健太", "娘", "仕事"],
            ["の娘", "娘が", "た仕", "何"],
        ),
        ("悠真とオーブンの話はどうなりましたか", ["悠真", "オー", "ブン"], ["とオ", "ンの"]),
        ("お茶を飲んだのはいつ", ["お茶", "飲ん"], ["茶を"]),  # お is part of the word
    ],
)
def test_japanese_bigrams_across_two_words_do_not_decide(
    question: str, searched: list[str], left_out: list[str]
) -> None:
    """A bigram of a particle and a kanji (の姉, 姉は) straddles two words; searched,
    it matched every sentence with that grammar (の話を), and a kanji between
    two particles (姉, a word alone) was held only by such bigrams."""
    from hermes_fts.query.best import best_match
    from hermes_fts.query.syntax import parse_query

    terms = [t.text for t in best_match(parse_query(question)).terms]
    assert all(t in terms for t in searched) and not any(t in terms for t in left_out), terms


def test_a_japanese_question_finds_the_sister_not_the_grammar(tmp_path: Path) -> None:
    st = open_store(tmp_path / "state.db")
    said = [
        ("sister", "姉の千尋に誘われてチェスを始めました。由美より"),
        *[
            (f"talk{k}", f"前にもこの話をしましたね{k}。由美さん、どんな話をしていましたか")
            for k in range(3)
        ],
    ]
    for n, (sid, text) in enumerate(said):
        conversation(st, sid, [("user", text)], start=at("2026-05-01T10:00") + n)
    assert sessions(st, "由美の姉はどんな趣味の話をしていましたか")[0] == "sister"
    st.close()


# --------------------------------------------------------------------------- possessives


@pytest.mark.parametrize(
    "query",
    [
        "Anna's sister",
        "Anna\u2019s sister",
        "ANNA'S sister",
        # the other apostrophes keyboards type: autocorrect's ‘, full width, ʼ
        "Anna\u2018s sister",
        "Anna\uff07s sister",
        "Anna\u02bcs sister",
        # a CJK keyboard in full-width mode types the s so too: searched as "anna s"
        "\uff21\uff4e\uff4e\uff41\uff07\uff53 sister",
    ],
)
def test_a_possessive_searches_the_name(store: SessionStore, query: str) -> None:
    assert sessions(store, query)[0] == "anna"
    name = query.split()[0]
    assert f"read possessives as the name: {name} → {name[:-2]}" in notes(store, query)
    found, said = tool(store, query)
    assert found[0] == "anna" and any("possessives" in n for n in said)


@pytest.mark.parametrize("query", ["Anna's", "Anna\u2019s"])
def test_a_possessive_alone_in_no_message_is_searched_as_the_name(
    store: SessionStore, query: str, tmp_path: Path
) -> None:
    # One word is searched as written: the phrase "anna s", in no message, answered
    # nothing without a word.
    assert sessions(store, query) == ["anna"]
    assert any("in no message as written: searched as Anna" in n for n in notes(store, query))
    # Where a message holds it as written, it is searched so, with no note.
    held = open_store(tmp_path / "state.db")
    conversation(held, "annas", [("user", "Anna's bike is red")], start=at("2026-01-01T10:00"))
    conversation(held, "anna", [("user", "Anna moved to Lisbon")], start=at("2026-01-02T10:00"))
    try:
        assert sessions(held, query) == ["annas"] and notes(held, query) == ()
    finally:
        held.close()


@pytest.mark.parametrize("query", ["O'Brien's", "O\u2019Brien\u2019s", "what was O'Brien's plan"])
def test_a_name_holding_an_apostrophe_has_a_possessive_too(tmp_path: Path, query: str) -> None:
    # O'Brien's was no possessive (the name held a quote): alone, the phrase
    # "o brien s" found nothing; in a question, "plan" decided the match.
    st = open_store(tmp_path / "state.db")
    conversation(st, "obrien", [("user", "O'Brien drafted the plan")], start=at("2026-01-01T10:00"))
    conversation(st, "plan", [("user", "the plan, the plan")], start=at("2026-01-02T10:00"))
    try:
        assert sessions(st, query)[0] == "obrien"
        name = query.split()[-2 if " " in query else 0][:-2]
        assert any(n.endswith(name) or f"→ {name}" in n for n in notes(st, query))
    finally:
        st.close()


@pytest.mark.parametrize(
    ("query", "name"),
    [
        ("v2.3.1\u2019s", "v2.3.1"),
        ("what was in v2.3.1's release", "v2.3.1"),
        ("PR-42's", "PR-42"),
        ("when was PR-42's release", "PR-42"),
    ],
)
def test_a_version_or_id_has_a_possessive_too(tmp_path: Path, query: str, name: str) -> None:
    # The name was taken as letters and digits only: v2.3.1's alone found nothing,
    # and in a question the version did not decide the match.
    st = open_store(tmp_path / "state.db")
    said = [("v", "PR-42 ships in release v2.3.1"), ("r", "the release, the release")]
    for n, (sid, text) in enumerate(said):
        conversation(st, sid, [("user", text)], start=at("2026-01-01T10:00") + n)
    try:
        assert sessions(st, query)[0] == "v"
        assert any(f"→ {name}" in n or n.endswith(f"searched as {name}") for n in notes(st, query))
    finally:
        st.close()


def test_a_contraction_is_no_possessive_to_name(store: SessionStore) -> None:
    """Left out as common words, ``it's`` and ``let's`` were named ``it`` and ``let``:
    words the question does not hold."""
    said = SessionStore.query_notes("it's Anna's sister, let's see")
    assert "read possessives as the name: Anna's → Anna" in said, said
    assert "left out common words that do not decide a match: it's, let's" in said, said
    rows = store.search("it’s Anna’s sister", sort="sessions", fields=["session_id"])
    assert rows.rows[0]["session_id"] == "anna"
    assert "left out common words that do not decide a match: it’s" in rows.notes


@pytest.mark.parametrize("contraction", ["didn't", "can\u2019t", "won't", "we'll", "I'm", "I've"])
def test_an_auxiliary_or_pronoun_contraction_is_a_common_word(
    tmp_path: Path, contraction: str
) -> None:
    """Only a common word's 's was common: ``didn't``, ``we'll`` or ``I'm`` was searched
    as a rare word, and the chat that said it outranked the one about the backup."""
    query = f"why {contraction} the backup run"
    said = SessionStore.query_notes(query)
    assert f"left out common words that do not decide a match: why, {contraction}, the" in said
    decoy = f"{contraction} check the backup".replace("\u2019", "'")
    assert answer_and_decoy(tmp_path, query, "the backup run failed at 3am", decoy) == [
        "answer",
        "decoy",
    ]


def test_a_question_of_contractions_alone_searches_them_as_written(tmp_path: Path) -> None:
    """With nothing else to search, ``what's that`` is searched as written: a message
    that says "what's that" ranks above one that only says "what"."""
    st = open_store(tmp_path / "state.db")
    said = [("said", "so what's that thing"), ("what", "what a day, and that")]
    for n, (sid, text) in enumerate(said):
        conversation(st, sid, [("user", text)], start=at("2026-01-01T10:00") + n)
    try:
        assert sessions(st, "what's that") == ["said", "what"]
    finally:
        st.close()


def test_a_time_words_possessive_is_no_name(store: SessionStore) -> None:
    """``last week's decision`` said it read "week's → week" as a name: the time
    word it is says how it was read, last week first."""
    said = notes(store, "last week's decision", now=NOW)
    assert not any("possessives" in n for n in said), said
    assert any(n.startswith(f"time words 'last week' ({LAST_WEEK}") for n in said), said
    said = notes(store, "Anna's and yesterday's sister", now=NOW)
    assert "read possessives as the name: Anna's → Anna" in said, said


def test_a_quoted_possessive_keeps_its_text(store: SessionStore) -> None:
    rows = store.search('"Anna\'s" sister', sort="sessions", fields=["session_id", "matched_terms"])
    assert not any("possessives" in n for n in rows.notes)
    # Nothing says "Anna's": the session that says "Anna" matches "sister" only.
    assert {r["session_id"]: r["matched_terms"] for r in rows.rows}["anna"] == ["sister"]


def test_james_apostrophe_is_james(store: SessionStore) -> None:
    conversation(
        store, "james", [("user", "James parked his car downtown")], start=at("2026-01-01")
    )
    assert sessions(store, "James' car")[0] == "james"
    assert sessions(store, "James\u2019 car")[0] == "james"


# --------------------------------------------------------------------------- category words


def test_the_category_word_does_not_decide(store: SessionStore) -> None:
    # Searched as a word, "hobby" decides: the decoy holds it, the answer does not.
    assert sessions(store, "Melanie start hobby")[0] == "hobby"
    query = "What kind of hobby did Melanie start?"
    assert sessions(store, query)[0] == "boulder"
    assert any(n.endswith("not its kind: kind of hobby") for n in notes(store, query))
    found, said = tool(store, query)
    assert found[0] == "boulder" and any("kind of hobby" in n for n in said)


@pytest.mark.parametrize(
    ("query", "category"),
    [
        ("which activity did Melanie start", "activity"),
        ("what type of hobby did Melanie start", "type of hobby"),
        ("what sort of hobby did Melanie start", "sort of hobby"),
        ("梅兰妮开始了什么样的爱好", "爱好"),
        ("梅兰妮开始了哪些活动", "活动"),
        ("梅兰妮去过哪些城市了", "城市"),  # 了 is grammar, no part of the noun
        ("哪类服务器的配置最好", "服务器"),  # 的 ends the word: 服务器, not 服务
        # the predicate ends the noun: an adverb, 给, a pronoun (not the 他 of 吉他)
        ("陈静觉得哪种书比较好", "书"),
        ("陳靜覺得哪種書比較好", "書"),
        ("你推荐过什么样的书给我", "书"),
        ("哪类游戏他最喜欢", "游戏"),
        ("陈静买了哪种吉他", "吉他"),
        ("哪种数据库你用过", "数据库"),
        # four characters are the noun where the phrase ends (健康 is a kind too); before
        # a pronoun the fourth may be a verb's, and a longer run is cut at two
        ("陈静得了哪种健康问题", "健康问题"),
        ("哪种健康问题最严重", "健康问题"),
        ("哪种运动适合我们", "运动"),
        ("陈静喜欢哪种运动适合冬天", "运动"),
        ("张伟参加了哪些活动昨天", "活动"),  # a time word ends it too
        ("メラニーはどんな趣味を始めましたか", "趣味"),
        ("メラニーは何という店に行きましたか", "店"),
        ("メラニーはなんていう映画を見ましたか", "映画"),
        ("멜라니는 어떤 취미를 시작했어", "취미를"),
        ("멜라니는 무슨 취미를 시작했어", "취미를"),
        # the noun phrase's last word where the question's verb ends it
        ("which Python version did we pin", "version"),
        ("what kind of health problem did Olivia get into", "kind of problem"),
        # no verb we know after it: the first word, never a name past it
        ("which hobby Melanie started", "hobby"),
    ],
)
def test_category_words_in_four_languages(store: SessionStore, query: str, category: str) -> None:
    said = SessionStore.query_notes(query)
    assert any(n.endswith(f"not its kind: {category}") for n in said), said


@pytest.mark.parametrize(
    "query",
    [
        "which of the tests fail",  # a common word after it
        "the deploy which crashed the server",  # relative, after a noun
        "what caused the outage",  # "what" alone asks for no kind
        "sort of flaky deploy",  # no "what" before it
    ],
)
def test_no_category_word(store: SessionStore, query: str) -> None:
    assert not any("category" in n for n in SessionStore.query_notes(query))


@pytest.mark.parametrize(
    ("query", "answer", "decoy"),
    [
        (
            "Which Python version did we settle on?",
            "we went with Python 3.12 for the service",
            "bump the version of the node image",
        ),
        (
            "What kind of health problem did Olivia get into?",
            "Olivia says her health is better, the knee heals",
            "Olivia found the problem with the printer",
        ),
    ],
)
def test_the_category_is_the_last_noun_before_the_verb(
    tmp_path: Path, query: str, answer: str, decoy: str
) -> None:
    """Only the word after "which" or "kind of" was the category: "Python" was left
    out and "version" searched, found in the decoy alone; "health" left out and
    "problem" searched.  The last noun before the question's verb is the kind,
    and the words before it narrow it."""
    assert answer_and_decoy(tmp_path, query, answer, decoy)[0] == "answer"


def test_which_after_a_preposition_asks(store: SessionStore) -> None:
    said = SessionStore.query_notes("in which city did Anna live")
    assert any(n.endswith("not its kind: city") for n in said), said


@pytest.mark.parametrize(
    ("query", "category"),
    [
        ("which Anna's sister did we talk about", "sister"),
        ("what kind of Anna's sister", "kind of sister"),
    ],
)
def test_a_possessive_after_which_is_no_category(
    store: SessionStore, query: str, category: str
) -> None:
    """The noun after *which* names the kind; a possessive there says whose it is.
    Taken for the category, the name was left out, its possessive note with it, and
    only "sister" was searched, finding a stranger's sister first."""
    assert sessions(store, query)[0] == "anna"
    found, said = tool(store, query)
    assert found[0] == "anna"
    assert "read possessives as the name: Anna's → Anna" in said, said
    assert any(n.endswith(f"not its kind: {category}") for n in said), said


def test_only_a_category_is_still_searched(store: SessionStore) -> None:
    # Nothing else to find: the words are what there is (as with common words).
    assert sessions(store, "what kind of hobby")[0] == "hobby"
    assert not any("category" in n for n in notes(store, "what kind of hobby"))


@pytest.mark.parametrize(
    ("query", "noun"),
    [
        ("哪些城市", "城市"),
        ("什么样的音乐", "音乐"),
        ("どんな音楽", "音楽"),
        ("哪种数据库", "数据库"),
        ("哪种数据库的", "数据库"),
        ("哪些城市了", "城市"),
        ("哪些书", "书"),  # one character that ends the word
        ("什么样的车", "车"),
        ("哪些书是", "书"),  # 是 is grammar, in no noun
    ],
)
def test_only_a_cjk_category_searches_its_noun(tmp_path: Path, query: str, noun: str) -> None:
    """A CJK question of a category alone searched the question word glued to its
    noun (哪些城市), which no message holds: nothing found.  And of 数据库 only
    数据 was the category: 库 was searched alone, found in every 仓库.  The grammar
    after the noun was taken into it (城市了, no message holds it), or left the
    third character out (数据库的: 数据, and 库的 searched)."""
    st = open_store(tmp_path / "state.db")
    said = [("noun", f"我们聊过{noun}的事"), ("decoy", "代码推到了私有仓库")]
    for n, (sid, text) in enumerate(said):
        conversation(st, sid, [("user", text)], start=at("2026-01-01T10:00") + n)
    try:
        assert sessions(st, query) == ["noun"]
    finally:
        st.close()


@pytest.mark.parametrize(
    ("query", "answer", "decoy"),
    [
        ("陈静爬山后得了哪种健康问题", "陈静爬山后膝盖肿了", "陈静爬山的照片有问题"),
        ("陈静聊过什么样的旅行计划", "陈静想去京都泡温泉", "陈静把发布计划推迟了"),
    ],
)
def test_a_cjk_category_of_four_characters_is_one_noun(
    tmp_path: Path, query: str, answer: str, decoy: str
) -> None:
    """Only its first two characters were the category: 问题 and 计划 were searched,
    found in every chat about a bug or a release, and ranked them first."""
    assert answer_and_decoy(tmp_path, query, answer, decoy)[0] == "answer"


@pytest.mark.parametrize(
    ("query", "answer", "decoy"),
    [
        ("どんな助言", "助言は休むことでした", "どんな本が好き？"),
        ("どんな助言をもらった？", "助言は休むことでした", "どんな本が好き？"),
        ("何という店", "店はさくら亭でした", "何というか、難しい"),
        ("哪些城市", "城市都很美", "哪些是你的？"),
        ("你提到过什么样的餐厅", "那家餐厅很好吃", "你提到过的那个人"),
        ("我们聊过哪些电影", "电影很好看", "我们聊过天"),
        ("어떤 취미", "취미는 등산이야", "어떤 날은 비가 와"),
        ("what kind of hobby", "my hobby is bouldering", "what kind of day is it"),
    ],
)
def test_a_category_alone_searches_its_noun_not_its_question_word(
    tmp_path: Path, query: str, answer: str, decoy: str
) -> None:
    """A question of a category and its frame alone searched every word, the
    question word too: どんな, 哪些, 어떤 and the frame (你提到过) decided as much as
    the noun, and a newer chat that only shared them came first."""
    assert answer_and_decoy(tmp_path, query, answer, decoy) == ["answer"]


# --------------------------------------------------------------------------- time words


def test_last_week_comes_first_and_the_rest_follows(store: SessionStore) -> None:
    assert sessions(store, "What did we decide?")[:2] == ["oct", "lastweek"]
    query = "What did we decide last week?"
    assert sessions(store, query, now=NOW)[:2] == ["lastweek", "oct"]
    assert sessions(store, query, now=at(NOW))[:2] == ["lastweek", "oct"]
    said = notes(store, query, now=NOW)
    assert f"time words 'last week' ({LAST_WEEK}, local time) left out of the words: " in (
        " ".join(said)
    )
    found, said = tool(store, query, now=NOW)
    assert found[:2] == ["lastweek", "oct"]
    assert any(LAST_WEEK in n for n in said), said
    # A month later, last week is another week: the plain order again.
    assert sessions(store, query, now="2027-01-05T12:00")[:2] == ["oct", "lastweek"]


def test_a_window_no_match_is_from_is_said(store: SessionStore) -> None:
    # The note said "matches from then come first" when none was from then.
    later = notes(store, "What did we decide last week?", now="2027-01-05T12:00")
    said = " ".join(later)
    assert "no match is from then; these are from other times" in said, later
    assert "come first" not in said
    assert "come first" in " ".join(notes(store, "What did we decide last week?", now=NOW))


def test_a_search_that_finds_nothing_names_no_results_from_other_times(store) -> None:
    # "no match is from then; these are from other times" came with no result at all.
    found, said = tool(store, "last week", now=NOW)
    assert found == [], found
    told = " ".join(said)
    assert "no message matches, from then or from other times" in told, said
    assert "these are" not in told and "come first" not in told, said


def test_pages_of_a_preferred_search_are_exact(store: SessionStore) -> None:
    query = "What did we decide on the queue, cache or database last week?"
    whole = store.search(query, now=NOW, limit=100, fields=["id", "timestamp"]).rows
    lo, hi = at("2026-11-23"), at("2026-11-30")
    inside = [r["id"] for r in whole if lo <= r["timestamp"] < hi]
    assert inside and [r["id"] for r in whole[: len(inside)]] == inside
    assert len(whole) > len(inside)  # never a filter
    for limit in (1, 2, 3):
        for offset in range(len(whole)):
            page = store.search(query, now=NOW, limit=limit, offset=offset, fields=["id"]).rows
            assert [r["id"] for r in page] == [r["id"] for r in whole[offset : offset + limit]]
    for sort in ("newest", "oldest"):
        rows = store.search(query, now=NOW, sort=sort, limit=100, fields=["id"]).rows
        assert [r["id"] for r in rows][: len(inside)] == sorted(inside, reverse=sort == "newest")


def test_session_pages_of_a_preferred_search_are_exact(store: SessionStore) -> None:
    query = "What did we decide on the queue, cache or database last week?"
    whole = sessions(store, query, now=NOW, limit=100)
    assert whole[0] == "lastweek" and len(whole) > 1
    for offset in range(len(whole)):
        assert sessions(store, query, now=NOW, limit=2, offset=offset) == whole[offset : offset + 2]
        # The passes are merged by session: asked without it, the rows still come.
        rows = store.search(
            query, now=NOW, sort="sessions", limit=2, offset=offset, fields=["role"]
        )
        assert [list(r) for r in rows.rows] == [["role"]] * len(whole[offset : offset + 2])


def test_explicit_bounds_win(store: SessionStore) -> None:
    kw: dict[str, Any] = {"now": NOW, "after": at("2026-10-01"), "before": at("2026-11-01")}
    assert sessions(store, "What did we decide last week?", **kw) == sessions(
        store, "What did we decide?", **kw
    )
    assert sessions(store, "What did we decide last week?", **kw) == ["oct"]
    said = " ".join(notes(store, "What did we decide last week?", **kw))
    assert "time words 'last week' left out of the words: the after/before given set the time" in (
        said
    )
    found, said_tool = tool(store, "What did we decide last week?", now=NOW, after="2026-10-01")
    assert found[0] == "oct" and any("after/before given" in n for n in said_tool)


def test_a_date_without_a_year_is_that_day_in_any_year(store: SessionStore) -> None:
    assert sessions(store, "我们选了哪个数据库")[0] == "db2024"
    query = "3月8号我们选了哪个数据库"
    assert sessions(store, query)[:2] == ["db2023", "db2024"]
    assert any("'3月8号' (March 8 of every year, local time)" in n for n in notes(store, query))
    assert notes(store, query)[-1] in SessionStore.query_notes(query)  # the same note
    assert sessions(store, "March 8: which database did we pick, 我们选了")[0] == "db2023"
    # Numbers alone: 3/8 was searched as the words 3 and 8.
    assert sessions(store, "3/8我们选了哪个数据库")[:2] == ["db2023", "db2024"]
    assert sessions(store, "which database did we pick on 3/8/2023 我们选了")[0] == "db2023"


def test_japanese_and_korean_time_words(store: SessionStore) -> None:
    assert sessions(store, "会議で何に決めましたか")[0] == "ja_old"
    assert sessions(store, "先週の会議で何に決めましたか", now=NOW)[0] == "ja_week"
    assert sessions(store, "昨日の会議で何に決めましたか", now="2026-11-25T09:00")[0] == "ja_week"
    assert sessions(store, "データベースは何を選びましたか")[0] == "ja_other"
    assert sessions(store, "3月8日にデータベースは何を選びましたか")[0] == "ja_0308"
    assert sessions(store, "회의에서 무엇을 결정했어")[0] == "ko_old"
    assert sessions(store, "지난주 회의에서 무엇을 결정했어", now=NOW)[0] == "ko_week"
    found, said = tool(store, "지난주 회의에서 무엇을 결정했어", now=NOW)
    assert found[0] == "ko_week" and any(f"'지난주' ({LAST_WEEK}" in n for n in said)


def test_a_chinese_time_word_takes_its_的_with_it(tmp_path: Path) -> None:
    """``上个月的deploy``: the 的 after a time word was left glued to the next word, so
    ``的deploy`` was searched as ``deploy`` alone, in none of its forms (nothing
    found), and a note told the user to quote ``的Docker镜像``, a word never written."""
    st = open_store(tmp_path / "state.db")
    said = [("dep", "the deploys are green now"), ("img", "我们把Docker镜像推到了仓库")]
    for n, (sid, text) in enumerate(said):
        conversation(st, sid, [("user", text)], start=at("2026-11-10T10:00") + n)
    try:
        assert sessions(st, "上个月的deploy", now=NOW) == ["dep"]
        for query in ("上周的Docker镜像", "上个月的deploy"):
            said_notes = notes(st, query, now=NOW)
            assert not any("的Docker镜像 as" in n or "的deploy as" in n for n in said_notes)
        assert sessions(st, "上周的Docker镜像", now=NOW) == ["img"]
    finally:
        st.close()


def _one_message_sessions(tmp_path: Path, *said: tuple[str, str, str]) -> SessionStore:
    """A store of sessions of one user message each: ``(session id, when, text)``."""
    st = open_store(tmp_path / "state.db")
    for sid, when, text in said:
        conversation(st, sid, [("user", text)], start=at(when))
    return st


def test_a_hiragana_word_before_the_quote_particle_is_searched(tmp_path: Path) -> None:
    """``ありがとうって言った？`` searched the whole sentence and ``言っ``: no message
    holds the sentence, so the session that said ありがとう lost to those that
    only say 言った, a common word, and with none of them the answer was empty."""
    st = _one_message_sessions(
        tmp_path,
        ("thanks", "2026-05-01T10:00", "本当にありがとうございました"),
        ("said", "2026-05-02T10:00", "彼はそう言った。私もそう言った"),
        *[(f"said{n}", f"2026-05-0{3 + n}T10:00", "先生がそう言った") for n in range(4)],
    )
    try:
        assert sessions(st, "ありがとうって言った？")[0] == "thanks"
        assert sessions(st, "ありがとうって何回言った？")[0] == "thanks"
    finally:
        st.close()


def test_a_particle_glued_after_a_date_goes_with_it(tmp_path: Path) -> None:
    """``12月20日にさくらと`` searched ``にさくら``: the に the date carries stayed on
    the name after it, which no message holds, so the day's session came after
    sessions holding only the sentence's grammar."""
    from hermes_fts.query.best import best_match
    from hermes_fts.query.syntax import parse_query

    question = "12月20日にさくらと祝うの話はどうなりましたか"
    terms = [t.text for t in best_match(parse_query(question)).terms]
    assert "さくら" in terms and not any(t.startswith("に") for t in terms), terms
    st = _one_message_sessions(
        tmp_path,
        ("bday", "2025-12-20T10:00", "母のさくらに誘われて誕生日を始めました"),
        ("talk1", "2026-02-01T10:00", "前にもこの話をしましたね。どうなりましたか"),
        ("talk2", "2026-03-01T10:00", "その話はどうなりましたか、と聞かれました"),
    )
    assert sessions(st, question, now=NOW)[0] == "bday"
    st.close()


@pytest.mark.parametrize(
    ("question", "word"),
    [("前天津市长的讲话说了什么", "天津"), ("今日头条上那篇文章讲了什么", "日头")],
)
def test_a_word_a_time_word_ends_inside_is_searched(question: str, word: str) -> None:
    """``前天津市长`` is the former mayor of Tianjin: 前天 (the day before yesterday) was
    cut out with the 天 of 天津, which was then in no searched word."""
    from hermes_fts.query.best import best_match
    from hermes_fts.query.syntax import parse_query

    assert word in [t.text for t in best_match(parse_query(question)).terms]


def test_the_tianjin_mayor_is_not_the_jinshi_mayor(tmp_path: Path) -> None:
    """Without 天津, ``前天津市长的讲话`` searched 津市, 市长 and 讲话: every session
    about the mayor of Jinshi (津市) held all three and came before Tianjin's."""
    st = _one_message_sessions(
        tmp_path,
        ("tianjin", "2025-03-01T10:00", "天津的市长讲话很长"),
        *[(f"jinshi{n}", f"2026-0{n + 1}-01T10:00", "津市市长讲话了") for n in range(4)],
    )
    try:
        assert sessions(st, "前天津市长的讲话说了什么", now=NOW)[0] == "tianjin"
    finally:
        st.close()


def test_a_word_starting_like_a_particle_keeps_it(tmp_path: Path) -> None:
    """``3月8日にんじん`` searched ``んじん``: the に of にんじん (carrot) was taken for
    the particle the date carries, though no Japanese word starts with ん."""
    from hermes_fts.query.best import best_match
    from hermes_fts.query.syntax import parse_query

    for question in ("3月8日にんじんを買った", "3月8日にんじん"):
        terms = [t.text for t in best_match(parse_query(question)).terms]
        assert "にんじん" in terms and not any(t.startswith("んじん") for t in terms), terms
    st = _one_message_sessions(
        tmp_path,
        ("carrot", "2025-03-08T10:00", "今日はスーパーでにんじんを三本買いました"),
        ("other", "2026-03-08T10:00", "今日は本を読みました"),
        ("older", "2024-05-01T10:00", "にんじんのスープを作りました"),
    )
    assert sessions(st, "3月8日にんじんを買った", now=NOW)[0] == "carrot"
    assert sessions(st, "3月8日にんじん", now=NOW)[:2] == ["carrot", "older"]
    st.close()


@pytest.mark.parametrize(
    ("words", "read"),
    [
        ("yesterday", "2026-12-02"),
        ("the day before yesterday", "2026-12-01"),
        ("today", "2026-12-03"),
        ("this morning", "2026-12-03"),
        ("last night", "2026-12-02"),
        ("this week", "2026-11-30 – 2026-12-06"),
        # a weekend is read as its week: a preference, never a filter
        ("last weekend", LAST_WEEK),
        ("上周末", LAST_WEEK),
        ("先週末", LAST_WEEK),
        ("지난 주말", LAST_WEEK),
        ("今朝", "2026-12-03"),
        ("昨夜", "2026-12-02"),
        ("어젯밤", "2026-12-02"),
        ("last month", "2026-11-01 – 2026-11-30"),
        ("last year", "2025-01-01 – 2025-12-31"),
        ("3 days ago", "2026-11-30"),
        ("two weeks ago", "2026-11-16 – 2026-11-22"),
        ("in March 2024", "2024-03-01 – 2024-03-31"),
        ("8 March 2024", "2024-03-08"),
        ("March 8th, 2024", "2024-03-08"),
        ("2024-03-08", "2024-03-08"),
        ("in May", "May of every year"),
        # a part of a month was no time unless after in: its month
        ("mid-March", "March of every year"),
        ("in mid-March", "March of every year"),
        ("early April", "April of every year"),
        ("late March 2024", "2024-03-01 – 2024-03-31"),
        ("the end of May", "May of every year"),
        ("mid-may", "May of every year"),
        ("Feb 29", "February 29 of every year"),
        ("昨天", "2026-12-02"),
        ("前天", "2026-12-01"),
        ("上周", LAST_WEEK),
        ("上个月", "2026-11-01 – 2026-11-30"),
        ("去年", "2025-01-01 – 2025-12-31"),
        ("3月8日", "March 8 of every year"),
        ("三月八号", "March 8 of every year"),
        ("5天前", "2026-11-28"),
        ("2024年3月8日", "2024-03-08"),
        ("昨日", "2026-12-02"),
        ("先週", LAST_WEEK),
        ("先月", "2026-11-01 – 2026-11-30"),
        ("2ヶ月前", "2026-10-01 – 2026-10-31"),
        ("어제", "2026-12-02"),
        ("지난주", LAST_WEEK),
        ("지난달", "2026-11-01 – 2026-11-30"),
        ("작년", "2025-01-01 – 2025-12-31"),
        ("3월 8일", "March 8 of every year"),
        ("2024년 3월 8일", "2024-03-08"),
        # a step further back was read as the nearer word inside it (大前天 as 前天)
        ("大前天", "2026-11-30"),
        ("さきおととい", "2026-11-30"),
        ("上上周", WEEK_BEFORE_LAST),
        ("上上个月", "2026-10-01 – 2026-10-31"),
        ("上上周三", "2026-11-18"),
        ("先々週", WEEK_BEFORE_LAST),
        ("先々月", "2026-10-01 – 2026-10-31"),
        ("先々週の金曜日", "2026-11-20"),
        ("지지난주", WEEK_BEFORE_LAST),
        ("지지난달", "2026-10-01 – 2026-10-31"),
        ("지지난주 금요일", "2026-11-20"),
        ("the week before last", WEEK_BEFORE_LAST),
        ("the month before last", "2026-10-01 – 2026-10-31"),
        ("大前年", "2023-01-01 – 2023-12-31"),
        # a count no one said exactly is the past four units; a said one stays exact
        ("a few days ago", "2026-11-29 – 2026-12-03"),
        ("several months ago", "2026-08-03 – 2026-12-03"),
        ("a couple of weeks ago", "2026-11-16 – 2026-11-22"),
        ("几天前", "2026-11-29 – 2026-12-03"),
        ("數天前", "2026-11-29 – 2026-12-03"),  # traditional 数 was no time (幾 was)
        ("三天前", "2026-11-30"),
        ("数週間前", "2026-11-05 – 2026-12-03"),
        ("며칠 전", "2026-11-29 – 2026-12-03"),
        ("몇 달 전", "2026-08-03 – 2026-12-03"),
        # 前几天 ("a few days ago") was searched as words: 前几 and 几天
        ("前几天", "2026-11-30 – 2026-12-03"),
        ("前几个月", "2026-09-03 – 2026-12-03"),
        # after a character of a word (我前几天) it was searched as words; so were
        # 前两天 and 这两天 (the last couple of days)
        ("我们前几天讨论的", "2026-11-30 – 2026-12-03"),
        ("前两天", "2026-12-01 – 2026-12-03"),
        ("我前两天部署的", "2026-12-01 – 2026-12-03"),
        ("这两天", "2026-12-01 – 2026-12-03"),
        # 一 and 日 begin a word after the week: 一起 (together), 日本 (Japan) were
        # read as last Monday and last Sunday
        ("上周一起吃饭的餐厅", LAST_WEEK),
        ("上周日本之行", LAST_WEEK),
        ("这周一直在忙的项目", "2026-11-30 – 2026-12-06"),
        ("上周一的会议", "2026-11-23"),
        ("上周日的会议", "2026-11-29"),
        # a numeral before a measure word or a numeral counts: 上周一个客户 ("a customer
        # last week") and 上周二十个请求 ("twenty requests") were read as one weekday
        ("上周一个客户反馈的问题", LAST_WEEK),
        ("上周二十个请求", LAST_WEEK),
        ("这周一次都没成功", "2026-11-30 – 2026-12-06"),
        ("上周三天都在开会", LAST_WEEK),
        ("上周五天气很好", "2026-11-27"),
        # 上个周末 (last weekend, as often said as 上周末) was searched as words
        ("上个周末", LAST_WEEK),
        ("上個週末", LAST_WEEK),
        ("这个周末", "2026-11-30 – 2026-12-06"),
        # Korean native counts and day words were no time: 한 달 전, 일주일 전 (a week ago)
        ("한 달 전", "2026-11-01 – 2026-11-30"),
        ("두 주 전", WEEK_BEFORE_LAST),
        ("일주일 전에", LAST_WEEK),
        ("이틀 전", "2026-12-01"),
        ("지난 한 달 동안", "2026-11-03 – 2026-12-03"),
        # hours and half a year were searched as words: the days the hours reach into
        ("3 hours ago", "2026-12-02 – 2026-12-03"),
        ("in the past 24 hours", "2026-12-02 – 2026-12-03"),
        ("the last 48 hours", "2026-12-01 – 2026-12-03"),
        ("a few hours ago", "2026-12-02 – 2026-12-03"),
        ("几个小时前", "2026-12-02 – 2026-12-03"),
        ("过去24小时", "2026-12-02 – 2026-12-03"),
        ("3時間前", "2026-12-02 – 2026-12-03"),
        ("세 시간 전", "2026-12-02 – 2026-12-03"),
        ("지난 24시간", "2026-12-02 – 2026-12-03"),
        # units typed short were searched as words
        ("3 wks ago", "2026-11-09 – 2026-11-15"),
        ("2 mos. ago", "2026-10-01 – 2026-10-31"),
        ("5 yrs ago", "2021-01-01 – 2021-12-31"),
        ("3 hrs ago", "2026-12-02 – 2026-12-03"),
        ("the past 3 wks", "2026-11-12 – 2026-12-03"),
        ("half a year ago", "2026-06-01 – 2026-06-30"),
        ("半年前", "2026-06-01 – 2026-06-30"),
        ("반년 전", "2026-06-01 – 2026-06-30"),
        # half a month (two weeks), a month and a half (six weeks), some days and
        # a while ago were searched as words
        ("半个月前", WEEK_BEFORE_LAST),
        ("half a month ago", WEEK_BEFORE_LAST),
        ("보름 전", WEEK_BEFORE_LAST),
        ("一个半月前", "2026-10-19 – 2026-10-25"),
        ("a month and a half ago", "2026-10-19 – 2026-10-25"),
        ("前些天", "2026-11-30 – 2026-12-03"),
        ("我前些日子部署的", "2026-11-30 – 2026-12-03"),
        ("前段时间", "2026-11-03 – 2026-12-03"),
        ("前阵子", "2026-11-03 – 2026-12-03"),
        # a year beside a date of no year is that date then: 去年12月 was all of
        # last year and December of every year
        ("去年12月", "2025-12-01 – 2025-12-31"),
        ("去年的3月8号", "2025-03-08"),
        # a day after this or last month's word was searched as a word (8号), and
        # the whole month preferred
        ("上个月8号", "2026-11-08"),
        ("上月的十五号", "2026-11-15"),
        ("这个月1号", "2026-12-01"),
        ("上上个月8号", "2026-10-08"),
        ("先月の8日", "2026-11-08"),
        ("지난달 8일", "2026-11-08"),
        ("이번 달 1일", "2026-12-01"),
        ("上个月8号楼的网络", "2026-11-01 – 2026-11-30"),  # building 8
        # a part of a day or a clock time after a day was searched as words
        ("yesterday afternoon", "2026-12-02"),
        ("last Friday evening", "2026-11-27"),
        ("on March 8 at 3pm", "March 8 of every year"),
        ("2024-03-08 10:00", "2024-03-08"),
        ("2024-03-08T10:00", "2024-03-08"),
        ("昨天下午3点", "2026-12-02"),
        ("昨日の午後", "2026-12-02"),
        ("어제 오후 3시에", "2026-12-02"),
        # a part of a relative month or year left 底, 末 or 말에 as words
        ("上个月底的部署", "2026-11-01 – 2026-11-30"),
        ("先月末", "2026-11-01 – 2026-11-30"),
        ("지난달 말에", "2026-11-01 – 2026-11-30"),
        ("这个月初", "2026-12-01 – 2026-12-31"),
        ("去年底", "2025-01-01 – 2025-12-31"),
        ("去年年初", "2025-01-01 – 2025-12-31"),
        ("昨年末", "2025-01-01 – 2025-12-31"),
        ("작년 말에", "2025-01-01 – 2025-12-31"),
        # and in English, where the month was preferred whole and 3rd searched
        ("on the 3rd of last month", "2026-11-03"),
        ("last month on the 8th", "2026-11-08"),
        ("the 15th of this month", "2026-12-15"),
        # 지난 금요일 ("last Friday") was the last Friday up to today, 지난 a word
        ("지난 수요일", "2026-11-25 or 2026-12-02"),
        ("저번 금요일에", "2026-11-27"),
        # a month after last or this was searched as the words last, March
        ("last March", "2026-03-01 – 2026-03-31"),
        ("last December", "2025-12-01 – 2025-12-31"),  # this month's is not yet over
        ("last March 8th", "2026-03-08"),
        ("this January", "2026-01-01 – 2026-01-31"),
        ("last May", "2026-05-01 – 2026-05-31"),
        ("지난 3월", "2026-03-01 – 2026-03-31"),
        ("지난 12월 25일", "2025-12-25"),
        ("last February 29", "2024-02-29"),
        # May after a day was the verb (3 may break) even where "of" or an
        # ordinal made it the month
        ("the 1st of May", "May 1 of every year"),
        ("8th May 2024", "2024-05-08"),
        ("昨年の12月", "2025-12-01 – 2025-12-31"),
        ("작년 12월", "2025-12-01 – 2025-12-31"),
        ("올해 3월 8일", "2026-03-08"),
        ("in March last year", "2025-03-01 – 2025-03-31"),
        ("last year in December", "2025-12-01 – 2025-12-31"),
        ("2024年的3月", "2024-03-01 – 2024-03-31"),
        # today beside a year is this day then: 去年的今天 preferred all of last year
        # and today
        ("去年的今天", "2025-12-03"),
        ("昨年の今日", "2025-12-03"),
        ("작년 오늘", "2025-12-03"),
        ("today last year", "2025-12-03"),
        ("2024年的今天", "2024-12-03"),
        # this time beside a year is about this day then, two weeks either side:
        # it preferred all of last year
        ("this time last year", "2025-11-19 – 2025-12-17"),
        ("去年的这个时候", "2025-11-19 – 2025-12-17"),
        ("去年这个时候", "2025-11-19 – 2025-12-17"),
        ("昨年の今頃", "2025-11-19 – 2025-12-17"),
        ("작년 이맘때", "2025-11-19 – 2025-12-17"),
        # Latin a CJK keyboard types in full width was searched as the words ｌａｓｔ, ｗｅｅｋ
        ("ｌａｓｔ ｗｅｅｋ", LAST_WEEK),
        ("ｙｅｓｔｅｒｄａｙ", "2026-12-02"),
        ("ｉｎ Ｍａｒｃｈ ２０２４", "2024-03-01 – 2024-03-31"),
        # dates of numbers alone, and a day of no month, were searched as words; the
        # note says which number was read as the month
        ("on 3/8", "March 8 of every year, read as month/day"),
        ("3/8/2024", "2024-03-08, read as month/day/year"),
        ("on 25/12", "December 25 of every year, read as day/month"),
        # a date of no year ending a clause was read, a fraction or score too: it
        # now needs a word a date stands after, a weekday or a time of day
        ("by 3/8", "March 8 of every year, read as month/day"),
        ("Friday 3/8", "March 8 of every year, read as month/day"),
        ("fri, 3/8", "March 8 of every year, read as month/day"),
        ("3/8 at 3pm", "March 8 of every year, read as month/day"),
        ("3/8 in the morning", "March 8 of every year, read as month/day"),
        ("13/3/2024", "2024-03-13, read as day/month/year"),
        ("8.3.2024", "2024-03-08, read as day.month.year"),
        ("2024/3/8", "2024-03-08"),
        ("3/8的会议", "March 8 of every year, read as month/day"),
        ("去年3/8", "2025-03-08, read as month/day"),
        # a year of two digits left the date every year's (24年3月) or no date
        ("3/8/24", "2024-03-08, read as month/day/year"),
        ("13/3/24", "2024-03-13, read as day/month/year"),
        ("24年3月", "2024-03-01 – 2024-03-31"),
        ("99年3月8日", "1999-03-08"),
        ("24년 3월 8일", "2024-03-08"),
        ("on the 3rd", "2026-12-03"),  # the last 3rd up to today
        ("on the 5th?", "2026-11-05"),
        ("on the 31st", "2026-10-31"),  # November has no 31st
        ("8일날", "2026-11-08"),
        # 날 glued to the day made it a part of another word: 3월 as 3
        ("3월 8일날", "March 8 of every year"),
        ("2024년 3월 8일날에", "2024-03-08"),
        ("in 2024 sales rose", "2024-01-01 – 2024-12-31"),  # a year, no count
    ],
)
def test_time_words_read(store: SessionStore, words: str, read: str) -> None:
    said = notes(store, f"deploy script {words}", now=NOW)
    assert any(f"({read}, local time) left out of the words" in n for n in said), said


@pytest.mark.parametrize(
    ("now", "words", "read"),
    [
        ("2026-12-31T12:00", "past year", "2025-12-31 – 2026-12-31"),
        ("2026-12-31T12:00", "the last 3 months", "2026-09-30 – 2026-12-31"),
        ("2026-05-31T12:00", "过去一个月", "2026-04-30 – 2026-05-31"),
        ("2026-03-31T12:00", "지난 한 달 동안", "2026-02-28 – 2026-03-31"),
        ("2024-02-29T12:00", "past year", "2023-02-28 – 2024-02-29"),
    ],
)
def test_the_past_months_start_on_the_same_day(
    store: SessionStore, now: str, words: str, read: str
) -> None:
    """ "past year" asked on 31 December preferred from 28 December a year before:
    the day then was cut to the 28th in every month, not only where a month
    has no such day."""
    said = notes(store, f"deploy script {words}", now=now)
    assert any(f"({read}, local time) left out of the words" in n for n in said), said


def test_last_friday_in_korean_on_a_friday(tmp_path: Path) -> None:
    """``지난 금요일 배포`` ("the deploy last Friday") asked on a Friday preferred
    today's talk, the last Friday up to today, and searched 지난 as a word."""
    st = _one_message_sessions(
        tmp_path,
        ("today", "2026-12-04T09:00", "지난 서버 배포는 취소"),
        ("last", "2026-11-27T10:00", "서버 배포 완료"),
    )
    assert sessions(st, "지난 금요일 배포", now="2026-12-04T12:00") == ["last", "today"]
    st.close()


def test_last_march_comes_first(tmp_path: Path) -> None:
    """ "what did we deploy last March" searched the words last and March: the talk
    that said them came first, not the one from March."""
    st = _one_message_sessions(
        tmp_path,
        ("march", "2026-03-12T10:00", "we deploy the gateway tonight"),
        ("words", "2026-11-20T10:00", "deploy it last, after the March freeze"),
    )
    assert sessions(st, "what did we deploy last March", now=NOW) == ["march", "words"]
    assert sessions(st, "지난 3월 deploy", now=NOW) == ["march", "words"]
    st.close()


def test_a_part_of_a_relative_month_is_no_word(tmp_path: Path) -> None:
    """``上个月底的部署`` ("the deploy at the end of last month") searched 底的部署 and
    月底 beside 部署, so a talk of 月底 from another time came first."""
    from hermes_fts.query.best import best_match
    from hermes_fts.query.syntax import parse_query

    for question, word in (("上个月底的部署", "部署"), ("지난달 말에 배포", "배포")):
        assert [t.text for t in best_match(parse_query(question)).terms] == [word]
    st = _one_message_sessions(
        tmp_path,
        ("then", "2026-11-28T10:00", "我们部署了网关"),
        ("words", "2026-06-30T10:00", "月底的部署计划"),
    )
    assert sessions(st, "上个月底的部署", now=NOW) == ["then", "words"]
    st.close()


def test_a_part_of_the_day_is_no_word(tmp_path: Path) -> None:
    """ "deploy last Friday evening" searched evening, and its forms even and
    evens: a talk of that evening that said neither came after one that said
    "even"; 昨天下午部署的 searched 下午 and 天下 (the world)."""
    from hermes_fts.query.best import best_match
    from hermes_fts.query.syntax import parse_query

    for question in ("deploy last Friday evening", "deploy yesterday at 3pm", "昨天下午部署"):
        terms = {t.text for t in best_match(parse_query(question)).terms}
        assert not terms & {"evening", "even", "3pm", "下午", "天下"}, (question, terms)
    st = _one_message_sessions(
        tmp_path,
        ("plain", "2026-11-27T19:00", "the deploy of the gateway went out"),
        ("even", "2026-11-27T20:00", "even in the evening the deploy failed"),
    )
    assert sessions(st, "gateway deploy last Friday evening", now=NOW)[0] == "plain"
    st.close()


@pytest.mark.parametrize(
    ("words", "read"),
    [
        ("3月到5月", "March – May of every year"),
        ("from March 10 to May 20", "March 10 – May 20 of every year"),
        ("3월부터 5월까지", "March – May of every year"),
        ("3月から5月まで", "March – May of every year"),
        ("12月到2月", "December – February of every year"),
        # a day alone after a date ends the range in its month
        ("3月8号到10号", "March 8 – March 10 of every year"),
        ("March 8-10", "March 8 – March 10 of every year"),
        ("March 8th to 10th, 2024", "2024-03-08 – 2024-03-10"),
        ("3月8日から10日まで", "March 8 – March 10 of every year"),
        ("3월 8일부터 10일까지", "March 8 – March 10 of every year"),
        ("上个月8号到15号", "2026-11-08 – 2026-11-15"),
        ("between 2024-03-08 and 2024-03-10", "2024-03-08 – 2024-03-10"),
        ("3月8日～3月10日", "March 8 – March 10 of every year"),
        # the end in the start's year or week, where it names none
        ("去年3月到5月", "2025-03-01 – 2025-05-31"),
        ("上周一到周三", "2026-11-23 – 2026-11-25"),
        ("上周五到周一", "2026-11-27 – 2026-11-30"),
        ("yesterday to today", "2026-12-02 – 2026-12-03"),
    ],
)
def test_a_range_is_read_whole(store: SessionStore, words: str, read: str) -> None:
    """``3月到5月的部署`` (the deploys from March to May) preferred March and May and
    not April, and ``3月8号到10号`` March 8 alone, searching 10 and 号到 as words;
    ``上周一到周三`` (last Monday to Wednesday) preferred this week's Wednesday."""
    said = notes(store, f"deploy script {words}", now=NOW)  # named to the range's end
    assert any(f"{words.split()[-1]}' ({read}, local time)" in n for n in said), said


@pytest.mark.parametrize(
    ("words", "read"),
    [
        ("March 8 to 10 servers", "'March 8' (March 8 of every year"),  # 10 servers
        ("3月8号到8号楼", "'3月8号' (March 8 of every year"),  # building 8
        ("Feb 28 to 29, 2023", "'Feb 28' (February 28 of every year"),  # no 29th
        ("3月10号到8号", "'3月10号' (March 10 of every year"),  # no day after it
    ],
)
def test_a_number_after_a_date_that_ends_no_range(
    store: SessionStore, words: str, read: str
) -> None:
    said = notes(store, f"deploy script {words}", now=NOW)
    assert any(read in n for n in said), said


def test_the_days_within_a_range_come_first(tmp_path: Path) -> None:
    st = _one_message_sessions(
        tmp_path,
        ("june", "2026-06-20T10:00", "部署了网关，3月和5月的部署，10号的部署"),
        ("april", "2026-04-15T10:00", "部署了网关"),
        ("ninth", "2026-03-09T10:00", "部署了网关"),
    )
    found = sessions(st, "3月到5月的部署", now=NOW)  # June said 3月 and 5月
    assert set(found[:2]) == {"april", "ninth"} and found[2] == "june"
    assert sessions(st, "3月8号到10号的部署", now=NOW)[0] == "ninth"
    assert sessions(st, "部署 from March 1 to May 31", now=NOW)[-1] == "june"
    st.close()


@pytest.mark.parametrize(
    ("words", "read"),
    [
        ("on Monday or Tuesday", ["'on Monday' (2026-11-30", "'Tuesday' (2026-12-01"]),
        ("on Monday, Tuesday or Friday", ["'Tuesday' (2026-12-01", "'Friday' (2026-11-27"]),
        ("3月8号和9号", ["'3月8号' (March 8 of every year", "'9号' (March 9 of every year"]),
        ("3월 8일이나 9일", ["'3월 8일' (March 8 of every year", "'9일' (March 9 of every year"]),
        ("3月8日と9日", ["'3月8日' (March 8 of every year", "'9日' (March 9 of every year"]),
        ("3月8号、9号", ["'9号' (March 9 of every year"]),
        ("on March 8, 9 and 10", ["'9' (March 9 of every year", "'10' (March 10 of every year"]),
        ("March 8 or 9, 2024", ["'March 8' (2024-03-08", "(2024-03-09"]),
        ("上个月8号和9号", ["'上个月8号' (2026-11-08", "'9号' (2026-11-09"]),
        ("in March or April", ["'in March' (March of every year", "'April' (April of every year"]),
        ("in 2024 or 2025", ["'2025' (2025-01-01 – 2025-12-31"]),
        # a later time in the earlier's week or year, as a range's end
        ("上周一和周三", ["'上周一' (2026-11-23", "'周三' (2026-11-25"]),
        ("지난주 월요일이나 화요일", ["'화요일' (2026-11-24"]),
        ("去年3月和5月", ["'5月' (2025-05-01 – 2025-05-31"]),
        ("last Monday or Tuesday", ["'Tuesday' (2026-11-24 or 2026-12-01"]),
        ("3月8号到10号和12号", ["'12号' (March 12 of every year"]),
    ],
)
def test_each_time_of_a_list_is_read(store: SessionStore, words: str, read: list[str]) -> None:
    """``on Monday or Tuesday`` read Monday alone and searched Tuesday as a word, and
    ``3月8号和9号`` (``3월 8일이나 9일``, ``3月8日と9日``) searched 9 and 号和; each time
    of a list is now a time of its own, named in the note."""
    from hermes_fts.query.best import best_match
    from hermes_fts.query.syntax import parse_query

    said = notes(store, f"deploy script {words}", now=NOW)
    assert all(any(f"{r}, local time)" in n for n in said) for r in read), said
    terms = {t.text.lower() for t in best_match(parse_query(f"deploy {words}")).terms}
    assert terms == {"deploy"}, terms


@pytest.mark.parametrize(
    ("words", "searched"),
    [
        ("March 8 and 9 servers", "9"),  # nine servers
        ("3月8号和9号楼", "号楼"),  # building 9
        ("in March, May said", "may"),  # May the name (the comma is not read)
        ("Feb 28 or 29, 2023", "29"),  # no 29th that year
    ],
)
def test_a_number_or_name_after_a_time_that_lists_none(words: str, searched: str) -> None:
    from hermes_fts.query.best import best_match
    from hermes_fts.query.syntax import parse_query

    terms = {t.text.lower() for t in best_match(parse_query(f"deploy {words}")).terms}
    assert searched in terms, terms


def test_each_day_of_a_list_comes_first(tmp_path: Path) -> None:
    st = _one_message_sessions(
        tmp_path,
        ("tuesday", "2026-12-01T10:00", "the gateway deploy went out"),
        ("words", "2026-11-18T10:00", "the gateway deploy went out on Tuesday"),
        ("ninth", "2026-03-09T10:00", "部署了网关"),
        ("nine", "2026-06-20T10:00", "部署了网关 9号"),
    )
    assert sessions(st, "gateway deploy on Monday or Tuesday", now=NOW)[0] == "tuesday"
    for question in ("3月8号和9号的部署", "3월 8일이나 9일 部署", "3月8日と9日の部署"):
        assert sessions(st, question, now=NOW)[0] == "ninth", question
    st.close()


def test_a_day_of_last_month_comes_first(tmp_path: Path) -> None:
    """``上个月8号选了哪个数据库`` ("which database did we pick on the 8th of last
    month") preferred all of November and searched 8号 as a word: the talk of the
    20th came before the one of the 8th."""
    st = _one_message_sessions(
        tmp_path,
        ("eighth", "2026-11-08T10:00", "我们选了数据库 postgres"),
        ("twentieth", "2026-11-20T10:00", "我们选了数据库 mysql"),
    )
    for question in ("上个月8号选了哪个数据库", "先月の8日 数据库", "지난달 8일 数据库"):
        assert sessions(st, question, now=NOW) == ["eighth", "twentieth"], question
    st.close()


@pytest.mark.parametrize(
    "query",
    [
        'deploy "last week"',
        "deploy last week NOT x",
        "yesterday",
        "python 3 may break",
        "deploy too late may be",
        "deploy early may help",
        "deploy midmarch",
        "deploy February 30",
        "deploy 2月30号",
        "deploy 24 hours",  # a length, not a time
        "deploy 3 wks",
        "deploy 3 works ago",
        "一年半前的部署",  # a year and a half: no window read as half a year
        "backup_2024-03-08 deploy",
        "deploy 배포한 달",  # 한 ends a verb here: "the month we deployed"
        "deploy 上周期的数据",  # the last cycle's data, not last week's
        "deploy 这周边的餐厅",  # the restaurants around here, not this week's
        # numbers that are no date: a fraction, a version, a ratio, an ordinal
        "deploy 3/8 of the tests failed",
        "deploy what is 1/2",
        "deploy score 3/8?",
        "deploy is it 3/4 done?",
        "deploy the sun 3/8",
        "deploy version 3.8",
        "deploy version 1.2.24",
        "deploy 1/2/3",
        "他工作了24年3个月",  # 24 years and 3 months
        "deploy 1/2 cup",
        "deploy 100/200",
        "deploy 3/8% done",
        "deploy v1.2.2024",
        "deploy 3/8.5",
        "deploy on the 3rd floor",
        "deploy 2/30",
        "deploy 提前几天通知",  # a few days in advance, not a few days ago
        "deploy 前段的代码",  # the front part's code
        "deploy 以前段时间",
        "deploy 两个半月前",
        "deploy failed this time",
        "deploy 这个时候",
        # a count after in, read as a year (and left out of the words)
        "deploy the last may fail",  # may, the verb
        "deploy the 2nd may fail",
        # 月 starting a word (月饼 mooncake, 月亮 moon, 月刊), 本月 ending one (基本月薪)
        "这个月饼很好吃",
        "deploy 这个月亮真圆",
        "基本月薪是多少",
        "日本月饼 deploy",
        "deploy 一本月刊",
        "buffer overflow in 2048 bytes",
        "deploy timed out in 2000 ms",
        "deploy sorted in 2500 rows",
        "deploy done in 2000 MB",
    ],
)
def test_not_time_words(store: SessionStore, query: str) -> None:
    """Quoted, strict, one word, a verb after a number, no such day, inside an
    identifier: words as written."""
    assert not any("time words" in n for n in notes(store, query, now=NOW))


def test_a_count_after_in_is_searched(tmp_path: Path) -> None:
    """``buffer overflow in 2048 bytes`` read ``in 2048`` as the year 2048: 2048 was
    left out of the words, so the overflow at 4096 bytes came first."""
    st = _one_message_sessions(
        tmp_path,
        ("four", "2026-11-01T10:00", "buffer overflow again, the buffer overflow in 4096 bytes"),
        ("two", "2025-10-01T10:00", "buffer overflow in 2048 bytes"),
    )
    assert sessions(st, "buffer overflow in 2048 bytes", now=NOW)[0] == "two"
    assert sessions(st, "buffer overflow in 2026", now=NOW)[0] == "four"  # a year still
    st.close()


def test_last_years_december_comes_first(tmp_path: Path) -> None:
    """去年12月 names December of last year: it came after every December and every
    month of last year that held the words more often, read as two times."""
    st = open_store(tmp_path / "state.db")
    for sid, when, text in [
        ("dec_last_year", "2025-12-10T10:00", "我们选了PostgreSQL数据库"),
        ("dec_long_ago", "2019-12-10T10:00", "我们选了哪个数据库？我们选了MySQL数据库"),
        ("june_last_year", "2025-06-10T10:00", "我们选了哪个数据库？我们选了Redis数据库"),
    ]:
        conversation(st, sid, [("user", text)], start=at(when))
    for query in ("去年12月我们选了哪个数据库", "작년 12월 数据库", "数据库 in December last year"):
        assert sessions(st, query, now=NOW)[0] == "dec_last_year", query
    st.close()


@pytest.mark.parametrize(
    ("query", "read"),
    [
        # a word written twice was read once: "the day before yesterday" as
        # "yesterday", "the week before last" as "last week"
        (
            "what did the team deploy the day before yesterday",
            "'the day before yesterday' (2026-12-01,",
        ),
        ("deploy the script the week before last", f"'the week before last' ({WEEK_BEFORE_LAST},"),
    ],
)
def test_a_word_written_twice_is_read_where_it_stands(
    store: SessionStore, query: str, read: str
) -> None:
    said = notes(store, query, now=NOW)
    assert any(read in n for n in said), said


def test_a_repeat_outside_a_time_word_is_still_searched(store: SessionStore) -> None:
    """The other "last" of "the last build last week" is a word, searched; the time
    word is left out, and its note says so."""
    got = store.search(
        "deploy the last build last week", fields=["session_id", "matched_terms"], now=NOW
    )
    assert any(f"'last week' ({LAST_WEEK}, local time) left out" in n for n in got.notes)
    assert all("week" not in r["matched_terms"] for r in got.rows)


def test_this_day_last_year_on_29_february(store: SessionStore) -> None:
    """A year with no 29 February holds its 28th: the day was no time at all."""
    said = notes(store, "deploy 去年的今天", now="2028-02-29T12:00")
    assert any("'去年的今天' (2027-02-28, local time)" in n for n in said), said


def test_many_time_words(store: SessionStore) -> None:
    """A paste of dates: the first 8 are read (57 windows each), the rest are words."""
    days = " ".join(f"3月{d}号" for d in range(1, 29)) + " 我们选了哪个数据库"
    got = store.search(days, sort="sessions", fields=["session_id"], now=NOW)
    assert got.rows[0]["session_id"] == "db2023"
    (note,) = [n for n in got.notes if n.startswith("time words")]
    assert note.count("of every year") == 8 and "'3月9号'" not in note


def test_only_time_words_are_searched_too(store: SessionStore) -> None:
    query = "what did we decide last week"
    assert sessions(store, query, now=NOW)[0] == "lastweek"
    said = notes(store, "what did we say last week", now=NOW)
    assert any("searched as words too, the question has no other" in n for n in said), said
    # The window's sessions first: every one of them holds a common word.
    assert sessions(store, "what did we say last week", now=NOW)[0] == "lastweek"
    found, said = tool(store, "last week", now=NOW)
    assert found == [] and any("searched as words too" in n for n in said)


def test_a_bad_now_is_refused(store: SessionStore) -> None:
    with pytest.raises(ValueError, match="search now"):
        store.search("deploy last week", now="next tuesday")
    got = session_search(store, query="deploy last week", now="next tuesday")
    assert not got["success"] and "now" in got["error"]
    got = session_search(store, query="deploy last week", now=1e300)
    assert not got["success"] and "now 1e+300 is past the year 5000" in got["error"]


@pytest.mark.parametrize(
    ("query", "now"),
    [
        ("decide today", "9999-12-31T12:00"),  # tomorrow is past the calendar
        ("decide last year", "0001-01-02"),  # year 0 is before it
        ("decide last week", -1e12),  # a float no date holds (one past the year 5000 is refused)
    ],
)
def test_a_now_at_the_calendar_s_ends_answers(store: SessionStore, query: str, now: Any) -> None:
    """A ``now`` the arguments accept is searched: the time words name no day then, so
    the words alone decide (it failed with "date value out of range")."""
    found, said = tool(store, query, now=now)
    assert found, said
    assert any("no message has that time" in n for n in said), said
    assert sessions(store, query, now=now)


@pytest.mark.parametrize(
    ("words", "lacks"),
    [
        ("上个月31号", "November 2026 has no day 31"),  # last month had 30
        ("the 31st of last month", "November 2026 has no day 31"),
        ("지난달 31일", "November 2026 has no day 31"),
        ("去年2月29日", "February 2025 has no day 29"),  # no leap year
        ("작년 2월 29일", "February 2025 has no day 29"),
        ("this February 29", "February 2026 has no day 29"),
    ],
)
def test_a_day_the_month_lacks_is_named(store: SessionStore, words: str, lacks: str) -> None:
    """``上个月31号`` after a November of 30 days said "no message has that time", as if
    the store were empty then; the note now says the day is not on the calendar.  It
    is left out of the words, as every time word is (2月30号, never a day, is words)."""
    found, said = tool(store, f"decide {words}", now=NOW)
    assert found and any(f"left out of the words: {lacks}" in n for n in said), said
    mixed = notes(store, f"decide yesterday or {words}", now=NOW)
    assert any(f"'{words}' ({lacks}" in n for n in mixed), mixed


@pytest.mark.parametrize("tz", ["UTC", "Asia/Tokyo", "America/New_York"])
@pytest.mark.parametrize("now", ["0001-01-01", "9999-12-31T23:59:59"])
def test_the_api_takes_the_calendar_s_first_and_last_day_as_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tz: str, now: str
) -> None:
    """``search(now="0001-01-01")`` was refused as no ISO date (east of UTC the last
    day too), though the tool and the CLI take both: the local offset of those
    days is past what the C library reads."""
    monkeypatch.setenv("TZ", tz)
    time.tzset()
    try:
        st = _one_message_sessions(tmp_path, ("plan", "2026-03-01T10:00", "decide the plan"))
        assert [r["session_id"] for r in st.search("decide last week", now=now).rows] == ["plan"]
        st.close()
    finally:
        monkeypatch.undo()
        time.tzset()


def test_a_stretch_from_before_1970_holds_every_message_since(store: SessionStore) -> None:
    """A stretch such as "the past 100 years" starts before the first year read: every
    message is from then, not "no message has that time"."""
    said = notes(store, "decide the past 100 years", now=NOW)
    assert any("(1926-12-03 – 2026-12-03, local time)" in n for n in said), said
    assert any("matches from then come first" in n for n in said), said
    assert {"oct", "lastweek"} <= set(sessions(store, "decide the past 100 years", now=NOW))


# --------------------------------------------------------------------------- the CLI


def _cli_search(path: Path, query: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", "search", query, "--db", str(path), "--json"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    return dict(json.loads(out.stdout))


def test_cli_json_counts_last_week_from_today(tmp_path: Path) -> None:
    today = date.today()
    monday = today - timedelta(days=today.weekday() + 7)  # last week's
    wednesday = datetime.combine(monday + timedelta(days=2), datetime.min.time())
    path = tmp_path / "state.db"
    st = open_store(path)
    conversation(st, "older", [("user", "we decide: Redis, decide now")], start=at("2020-01-01"))
    conversation(st, "lastweek", [("user", "we decide on RabbitMQ")], start=wednesday.timestamp())
    st.close()
    payload = _cli_search(path, "What did we decide last week?")
    assert [r["session_id"] for r in payload["results"]] == ["lastweek", "older"]
    window = f"{monday.isoformat()} – {(monday + timedelta(days=6)).isoformat()}"
    assert any(f"'last week' ({window}, local time)" in n for n in payload["query_notes"])


def test_cli_json_prefers_the_day(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    st = open_store(path)
    for sid, when, text in [
        ("db2023", "2023-03-08T10:00", "我们选了PostgreSQL作为数据库"),
        ("db2024", "2024-05-10T10:00", "我们选了哪个数据库？我们选了MySQL"),
    ]:
        conversation(st, sid, [("user", text)], start=at(when))
    st.close()
    payload = _cli_search(path, "3月8号我们选了哪个数据库")
    assert [r["session_id"] for r in payload["results"]] == ["db2023", "db2024"]
    assert any("March 8 of every year" in n for n in payload["query_notes"])


# --------------------------------------------------------------------------- exact order


def _in(ts: float, windows: list[tuple[str, str]]) -> bool:
    return any(at(lo) <= ts < at(hi) for lo, hi in windows)


@pytest.mark.parametrize("optimized", [False, True], ids=["plain", "time-index"])
def test_matches_from_then_first_is_the_plain_order_split(tmp_path: Path, optimized: bool) -> None:
    """Rows: exactly the plain best match's rows from the window, then the others,
    each in the plain order; with the time zones (optimize-storage) too."""
    import random

    rng = random.Random(7)
    st = open_store(tmp_path / "state.db")
    texts = ["deploy the cache", "cache miss again", "deploy failed", "we deploy daily"]
    for n in range(120):  # ids do not follow time: zones overlap in time
        when = datetime(
            rng.choice((2023, 2024, 2025, 2026)), rng.choice((3, 11)), rng.randint(1, 28)
        )
        msgs = [("user", rng.choice(texts)) for _ in range(rng.randint(1, 3))]
        conversation(st, f"s{n}", msgs, start=when.timestamp())
    if optimized:
        assert st.optimize_storage(vacuum=False)["ok"]
        assert st.index_state()["time_index"]
    cases = {
        "on March 8": [(f"{y}-03-08", f"{y}-03-09") for y in range(2023, 2027)],
        "last week": [("2026-11-23", "2026-11-30")],
        "in March 2024": [("2024-03-01", "2024-04-01")],
    }
    fields = ["id", "timestamp"]
    plain = st.search("deploy cache", limit=1000, fields=fields).rows
    for words, windows in cases.items():
        rows = st.search(f"deploy cache {words}", limit=1000, fields=fields, now=NOW).rows
        first = [r["id"] for r in plain if _in(r["timestamp"], windows)]
        assert first, words
        expected = first + [r["id"] for r in plain if not _in(r["timestamp"], windows)]
        assert [r["id"] for r in rows] == expected, words
    st.close()


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("3月底的部署", "3月底"),
        ("3月中旬的部署", "3月中旬"),
        ("3月初的部署", "3月初"),
        ("3月末の部署", "3月末"),
        ("2026年3月下旬 部署", "2026年3月下旬"),
    ],
)
def test_a_cjk_part_of_a_month_is_read_as_the_month(tmp_path, question, said):
    """Regression: ``3月底的部署`` (the deploy at the end of March) read only ``3月`` and
    searched 底 with what stood beside it (月底), so a March chat about 月底, 中旬 or
    月初 was found beside the deploy; 末 was searched as a word of one character.
    A part of a month is the month, as mid-March is."""
    st_ = open_store(tmp_path / "state.db")
    conversation(st_, "deploy", [("user", "部署完成了")], start=at("2026-03-25T10:00"))
    decoy = "中旬的会议在月底之前，月初的表和月末的账"
    conversation(st_, "decoy", [("user", decoy)], start=at("2026-03-26T10:00"))
    assert sessions(st_, question, now=NOW) == ["deploy"]
    assert any(n.startswith(f"time words '{said}' (") for n in notes(st_, question, now=NOW))
    st_.close()


def test_a_korean_part_of_a_month_is_read_as_the_month():
    """``3월 말에`` (at the end of March) is March, as 3月底 is; ``말씀`` (speech) is no part."""
    from hermes_fts.query.timeranges import find_time_words

    assert [w.text for _, _, w in find_time_words("3월 말에 배포")] == ["3월 말"]
    assert [w.text for _, _, w in find_time_words("3월 초순 배포")] == ["3월 초순"]
    assert [w.text for _, _, w in find_time_words("3월 말씀 배포")] == ["3월"]
