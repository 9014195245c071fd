"""Time and category words glued to other text (docs/QUERY.md, "Reading a question").

Chinese and Japanese write no spaces and Korean glues its particles to a
word, so a time word often shares a word with grammar or with another word.
What is left once a time word is cut out must be the words of the question,
never its grammar (``에는``, ``には``) nor the piece of a word the time word
only looked like (the ``집`` of ``오늘의집``).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from _support import needs_extension
from _tool_fixtures import conversation, open_store

from hermes_fts.query.best import best_match
from hermes_fts.query.question import time_words
from hermes_fts.query.syntax import parse_query
from hermes_fts.store import SessionStore

pytestmark = needs_extension

NOW = "2026-12-03T12:00"


def at(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()  # local time, as the package reads dates


def searched(question: str) -> list[str]:
    return [t.text for t in best_match(parse_query(question)).terms]


def sessions(store: SessionStore, query: str) -> list[str]:
    rows = store.search(query, sort="sessions", fields=["session_id"], now=NOW).rows
    return [r["session_id"] for r in rows]


def one_message_sessions(tmp_path: Path, *said: tuple[str, str, str]) -> SessionStore:
    """A store of sessions of one user message each: ``(session id, when, text)``."""
    st = open_store(tmp_path / "state.db")
    for sid, when, text in said:
        conversation(st, sid, [("user", text)], start=at(when))
    return st


@pytest.mark.parametrize(
    ("question", "words"),
    [
        ("최근에는 배포", ["배포"]),
        ("어제까지는 배포", ["배포"]),
        ("작년에도 배포", ["배포"]),
        ("12月20日には会議", ["会議"]),
        ("先週からの会議", ["会議"]),
    ],
)
def test_particles_stacked_after_a_time_word_are_no_word(question: str, words: list[str]) -> None:
    """``최근에는`` searched ``에는`` and ``12月20日には会議`` ``は会議``: only one particle
    the time word carried went with it, and the next was searched as a word."""
    assert searched(question) == words


def test_stacked_particles_do_not_rank_their_sentences_first(tmp_path: Path) -> None:
    """With ``は会議`` searched, a message holding "今日は会議" came before the meeting
    of December 20th that the question asks about."""
    st = one_message_sessions(
        tmp_path,
        ("meeting", "2025-12-20T10:00", "会議の資料"),
        ("decoy", "2024-12-20T10:00", "今日は会議でしたが、資料はまだ作っていません"),
    )
    try:
        assert sessions(st, "12月20日には会議")[0] == "meeting"
    finally:
        st.close()


@pytest.mark.parametrize(
    ("question", "word"),
    [
        ("先週もらったプレゼント", "もらったプレゼント"),  # もらう (get), no particle も
        ("昨日はもう寝た", "もう寝た"),  # nothing stacks after は: もう (already)
        ("先週にもらった", "もらった"),
    ],
)
def test_a_word_that_starts_like_a_particle_keeps_its_start(question: str, word: str) -> None:
    """The も of もらった and of もう was cut off as a particle stacked after the time
    word's: らった and う寝た were searched, words of no message."""
    assert word in searched(question)


def test_a_verb_cut_short_finds_no_other_verb_first(tmp_path: Path) -> None:
    """先週もらった (what I got last week) searched らった, found in わらった (laughed)."""
    st = one_message_sessions(
        tmp_path,
        ("got", "2025-10-01T10:00", "もらったのは本でした"),
        ("decoy", "2025-10-02T10:00", "みんなわらった"),
    )
    try:
        assert sessions(st, "先週もらった")[0] == "got"
    finally:
        st.close()


@pytest.mark.parametrize(
    ("question", "word"),
    [
        ("오늘의집 가구 주문", "오늘의집"),
        ("최근접 이웃 알고리즘", "최근접"),
        ("오늘날 기술", "오늘날"),
    ],
)
def test_a_korean_word_holding_a_time_word_is_no_time(question: str, word: str) -> None:
    """``오늘의집`` (a shop) was read as 오늘, today, and searched as ``의집``; ``최근접``
    (nearest) as 최근, lately, and ``접``: Korean writes spaces, so a time word glued
    to more than its particles is another word."""
    assert time_words(parse_query(question)) == ()
    assert word in searched(question)


@pytest.mark.parametrize(
    "question", ["오늘의 회의", "최근에는 배포", "작년도 예산", "지난해에 출장"]
)
def test_a_korean_time_word_with_its_particles_is_still_a_time(question: str) -> None:
    assert len(time_words(parse_query(question))) == 1


def test_the_shop_is_found_before_todays_furniture(tmp_path: Path) -> None:
    """``오늘의집 가구 주문`` preferred today's messages, so one about ordering furniture
    anywhere came before the order placed at 오늘의집 months ago."""
    st = one_message_sessions(
        tmp_path,
        ("shop", "2026-05-01T10:00", "오늘의집에서 가구 주문했어"),
        ("today", "2026-12-03T09:00", "가구 주문은 내일 할게"),
    )
    try:
        assert sessions(st, "오늘의집 가구 주문") == ["shop", "today"]
    finally:
        st.close()


@pytest.mark.parametrize(
    "question",
    [
        "目前天气 查询",
        "提前天数 设置",
        "以前天天加班",
        "过去年份 数据",
        "如今年轻人 工作",
        "最近邻算法",
        "最近傍探索 実装",
    ],
)
def test_a_word_a_time_word_starts_inside_is_no_time(question: str) -> None:
    """``目前天气`` (the current weather) was read as 前天 (two days ago) and searched as
    ``目`` and ``气``, one-character words found everywhere; ``最近邻`` (nearest
    neighbour) as 最近, lately."""
    assert time_words(parse_query(question)) == ()
    lone = [t for t in searched(question) if len(t) == 1]
    assert lone == [], lone


@pytest.mark.parametrize(
    "question",
    ["我前天部署的", "前天 部署", "去年的报告 呢", "最近邻居 搬家", "最近 部署", "今年 计划"],
)
def test_the_time_words_themselves_are_still_times(question: str) -> None:
    assert len(time_words(parse_query(question))) == 1


@pytest.mark.parametrize(
    ("question", "answer", "decoy"),
    [
        ("目前天气 查询", "目前天气查询接口很慢", "天气不错，我们查询了一下"),
        ("最近邻算法 实现", "最近邻算法的实现", "算法实现完成了"),
    ],
)
def test_the_word_is_found_before_that_days_talk(
    tmp_path: Path, question: str, answer: str, decoy: str
) -> None:
    """Read as a time, the question ranked a message from two days ago (or lately)
    holding only some of its words before the one holding them all."""
    st = one_message_sessions(
        tmp_path,
        ("answer", "2026-03-01T10:00", answer),
        ("decoy", "2026-12-01T10:00", decoy),
    )
    try:
        assert sessions(st, question) == ["answer", "decoy"]
    finally:
        st.close()


@pytest.mark.parametrize(
    ("question", "word"),
    [
        ("「東京タワー」に行った", "行った"),
        ('"東京タワー"には行った', "行った"),
        ('"React组件"的用法', "用法"),
        ("“deploy”の手順", "手順"),
    ],
)
def test_the_particle_a_quoted_phrase_carries_is_grammar(question: str, word: str) -> None:
    """``「東京タワー」に行った`` searched ``に行った``: the particle the quoted name carries
    stayed on the word after it, which a message saying 東京タワーへ行った lacks."""
    got = best_match(parse_query(question))
    assert word in [t.text for t in got.terms]
    assert not any(t.text[0] in "にはの的" for t in got.terms), got.terms
    assert any(n.startswith("read the particles after a quoted phrase") for n in got.notes)


def test_particles_after_a_quoted_phrase_decide_nothing(tmp_path: Path) -> None:
    """The Kyoto trip, holding に行った, came before the visit to the tower; and
    ``"Anna"의 동생`` searched ``의`` as a one-character word, so the answer lacked it."""
    st = one_message_sessions(
        tmp_path,
        ("tower", "2026-03-01T10:00", "東京タワーへ行った"),
        ("kyoto", "2026-03-02T10:00", "昨日、京都に行った"),
        ("sister", "2026-03-03T10:00", "Anna 동생이 서울에 왔어"),
        ("meeting", "2026-03-04T10:00", "회의에서 의견"),
    )
    try:
        assert sessions(st, "「東京タワー」に行った") == ["tower", "kyoto"]
        rows = st.search('"Anna"의 동생', fields=["session_id", "missing_terms"], now=NOW).rows
        assert [(r["session_id"], r["missing_terms"]) for r in rows] == [("sister", [])]
    finally:
        st.close()


@pytest.mark.parametrize(
    ("question", "words", "alone"),
    [
        ("我前天部署的服务", ["部署的服务", "部署", "服务", "天部"], "我"),
        ("服务 昨天我", ["服务"], "我"),  # 天我 runs into a pronoun: no word
        ("今天气怎么样", ["气怎么样", "气怎", "天气"], ""),  # a pair across its end: 天气
    ],
)
def test_a_character_a_time_word_leaves_alone_is_no_word(
    question: str, words: list[str], alone: str
) -> None:
    """``我前天部署的`` searched ``我`` as a one-character word, found in nearly every
    message: in the sentence it was only part of the bigram ``我前``."""
    got = best_match(parse_query(question))
    assert [t.text for t in got.terms] == words
    said = [n for n in got.notes if n.startswith("left out characters")]
    assert said == (
        [f"left out characters a time or category word left alone in a sentence: {alone}"]
        if alone
        else []
    )


def test_a_character_left_alone_finds_nothing_on_its_own(tmp_path: Path) -> None:
    """``我前天部署的`` found "我们讨论了数据库的性能" by its ``我``, and ``我昨天`` (nothing
    but the time word left) every message with 我; a kanji a particle parts from
    the time word (``昨日は姉``) is a word, searched."""
    st = one_message_sessions(
        tmp_path,
        ("deploy", "2026-12-01T10:00", "我前天部署的服务挂了"),
        ("decoy", "2026-12-02T10:00", "我们讨论了数据库的性能"),
        ("sister", "2026-12-02T11:00", "姉と映画を見た"),
    )
    try:
        assert sessions(st, "我前天部署的") == ["deploy"]
        assert sessions(st, "我昨天") == []
        assert sessions(st, "昨日は姉") == ["sister"]
    finally:
        st.close()


@pytest.mark.parametrize(
    ("question", "time", "when"),
    [
        ("昨天部署", "昨天", "2026-12-02T10:00"),
        ("上周部署", "上周", "2026-11-25T10:00"),
        ("3月部署", "3月", "2026-03-25T10:00"),
    ],
)
def test_a_time_word_glued_to_one_word_is_left_out_beside_it(tmp_path, question, time, when):
    """Regression: ``昨天部署`` (yesterday's deploy) searched 昨天 as a word beside 部署
    and said "the question has no other": 部署, searched with 天部 (the pair across the
    time word's end), counted as a sentence of common parts, so a chat from then
    that only said 昨天 was found beside the deploy."""
    st = one_message_sessions(
        tmp_path,
        ("deploy", when, "部署完成了"),
        ("decoy", when, f"{time}下雨了"),
    )
    assert sessions(st, question) == ["deploy"]
    (note,) = [n for n in st.search(question, now=NOW).notes if n.startswith("time words")]
    assert "left out of the words" in note, note
    st.close()
