"""Time words read the same whichever form of a pattern a text is read with.

``query/timewords.py`` compiles each pattern for the scripts a text holds: in
a text without Hangul (without CJK) the big classes of those characters match
nothing and are left out, so a question need not build them.  These tests
hold every pattern's lighter forms to its whole form on texts of their
scripts, and the script test to the class it stands for.
"""

from __future__ import annotations

import re

import pytest

from hermes_fts.query import timewords as tw

# Dates, days and their neighbours in each script, what the classes decide on:
# a word before or after 3/8, a clause's end after "on the 3rd", Korean glued on.
TEXTS = {
    "latin": [
        "what did we decide on 3/8 at 3pm",
        "é3/8 and 3/8é, v1.2.2024, 3/8%, score 3/8?",
        "on the 3rd. on the 3rd floor, on the 21st",
        "yesterday afternoon 2 days ago last month on the 8th, Fri 3/8 3/8/24",
        "since 25/12 the past 3 days ΚΑΛΗ 3/8 ſeptember İn March",
    ],
    "cjk": [
        "我们3/8讨论了 3/8的会议 去年3/8",
        "上个月8号 on the 3rd的会议 昨天下午3点 3月初",
        "先月の8日 昨日の午後 ここ3日間 火曜日 3/8に",
    ],
    "hangul": [
        "지난달 8일 3월 초에 작년 말 오후 3시 반",
        "하루 전 일주일 전 두 달 전 오늘의집 3/8에 on the 3rd에",
        "3월 말쯤 지난 금요일 세 시간 전 8일날",
    ],
}
SOURCES = [
    *(p for p, _, _ in tw._FIXED),
    *(p for p, _ in tw._AGO),
    *tw._EN_DAY_OF_MONTH,
    *tw._DATES,
    *tw._LAST_MONTH,
    *tw._DATED,
    *tw._MONTH_DAY,
    *tw._WITHIN,
    *tw._HOURS,
    *(p for p, _ in tw._WEEKDAYS),
    tw._THIS_TIME,
    tw._LATELY,
    tw._DAY_PART,
    tw._CLAUSE_END,
]


def _read(pattern: re.Pattern[str], text: str) -> list[tuple[int, int, dict[str, str | None]]]:
    at = [m for pos in range(len(text) + 1) if (m := pattern.match(text, pos))]
    found = [*pattern.finditer(text), *at]
    return [(m.start(), m.end(), m.groupdict()) for m in found]


@pytest.mark.parametrize("script", list(TEXTS))
def test_a_lighter_form_reads_as_the_whole_pattern(script: str) -> None:
    for text in TEXTS[script]:
        scripts = tw._scripts(text)
        assert scripts == (script == "hangul", script != "latin"), text
        for source in SOURCES:
            whole = tw._compiled(source, True, True)
            assert _read(tw._pattern(source, text), text) == _read(whole, text), (source, text)


def test_a_lighter_form_leaves_the_big_classes_out() -> None:
    assert tw._HANGUL in tw._DAY_PART and tw._NOT_CJK_WORD in tw._DATED[0]
    for source in SOURCES:
        for hangul, cjk in ((False, False), (False, True)):
            lighter = tw._compiled(source, hangul, cjk).pattern
            assert tw._HANGUL not in lighter
            assert cjk or (tw._CJK_CHAR not in lighter and tw._NOT_CJK_WORD not in lighter)


def test_the_cjk_test_is_the_class() -> None:
    whole = re.compile(tw._CJK_CHAR, tw._FLAGS)
    for cp in range(0x10000):
        char = chr(cp)
        assert tw._is_cjk(char) == bool(whole.fullmatch(char)), hex(cp)
    assert not tw._is_cjk("")


def test_a_long_paste_is_not_kept_after_its_reading() -> None:
    """Which scripts a text holds is asked once per reading (tw._scripts); it kept the
    last 16 texts read, a query pasted at megabytes among them."""
    for n in range(17):
        pastes = tw.find_time_expressions(f"log line {n} " * 1_000 + "last week")
        assert pastes and pastes[-1][2].unit == "week"
    assert tw._scripts.cache_info().currsize == 1
