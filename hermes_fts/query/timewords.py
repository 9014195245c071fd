"""Time words: the dates and relative words of a question, as written.

:func:`find_time_expressions` finds such expressions in a stretch of query
text (English, Chinese, Japanese and Korean): "last week", "3月8号", "先週",
"지난주", each as a :class:`TimeWords` that says what it names: a day, a
week, a month or a year, counted back from now or not.  Which of them a range
joins is ``timeranges``'; which days they are from a given ``now``,
``timespans``' (the calendar).  Which words of a
question are read so is ``question.read_question``'s; what the search does
with them is docs/QUERY.md's "Time words" and docs/DESIGN.md §6.4c.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace
from datetime import date

__all__ = [
    "FIRST_YEAR",
    "LATELY_DAYS",
    "ASCII_WIDTH",
    "MONTH_NAMES",
    "NUM",
    "YEAR",
    "WEEKDAY_NAMES",
    "TimeWords",
    "find_time_expressions",
    "number",
]


FIRST_YEAR = 1970  # a date without a year: that day in each year from here to now's


@dataclass(frozen=True)
class TimeWords:
    """One time expression as written, and what it names.

    ``back`` set: a relative expression, ``back`` ``unit``\\ s before now's
    (0: this one); with ``within``, the ``back`` ``unit``\\ s up to today
    ("the past 3 days").  ``weekday`` (0: Monday) set: that day of this week
    (``back`` 0), of last week (1), the last one before today or last week's
    (-1: "last Tuesday" means either), or the last one up to today (None).
    ``month`` set with ``back``: that month (and ``day``) of the year ``back``
    years before now's (去年12月), or with ``back`` -1 the last one before today
    ("last March"); ``day`` with ``back`` and no ``month``: that day
    of the month ``back`` months before now's (上个月8号).  ``day`` alone ("on the
    3rd", 8일날): the last such day of a month up to today.  Otherwise absolute: ``year`` None means
    every year.  ``order``: how a date of numbers alone was read ("month/day").
    """

    text: str
    unit: str  # "day", "week", "month" or "year"
    back: int | None = None
    year: int | None = None
    month: int | None = None
    day: int | None = None
    within: bool = False
    weekday: int | None = None
    order: str = ""
    this_day: bool = False  # today's month and day in the year named (去年的今天)
    # ``unit`` "week" with this_day: about this time (去年这个时候), two weeks either side
    through: TimeWords | None = None  # a range's end (3月到5月): these days up to its


MONTH_NAMES = tuple(
    "January February March April May June July August September October November December".split()
)
_MONTHS = {name[:size].lower(): n for n, name in enumerate(MONTH_NAMES, 1) for size in (3, 9)}
_MONTHS["sept"] = 9
_FULL_MONTHS = "|".join(name.lower() for name in MONTH_NAMES)
_FULL_MONTHS_NOT_MAY = "|".join(name.lower() for name in MONTH_NAMES if name != "May")
_ANY_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
# "3 may break" is no date: after a number, "may" is the verb (the 2nd may fail);
# after "of" (the 8th of May) it is the month, and May written so after an ordinal.
_DAY_FIRST_MONTH = "|".join(sorted(set(_MONTHS) - {"may"}, key=len, reverse=True))
_DAY_FIRST_MONTH += r"|(?<=of\s)may|(?<=(?:st|nd|rd|th)\s)(?-i:May)"
_COUNTS = {"a": 1, "an": 1}
_COUNTS |= zip(
    "one two three four five six seven eight nine ten eleven twelve".split(), range(1, 13)
)
# A Hangul syllable, and the CJK scripts (a word character of none of them is
# Latin's, or another alphabet's): big classes, which re builds character by
# character in each pattern holding one (see _compiled).  None of them has a case.
_HANGUL = "(?-i:[\uac00-\ud7a3])"
_CJK_RANGES = (
    ("\u3040", "\u30ff"),
    ("\u3400", "\u4dbf"),
    ("\u4e00", "\u9fff"),
    ("\uac00", "\ud7a3"),
)
_CJK = "".join(f"{lo}-{hi}" for lo, hi in _CJK_RANGES)
_CJK_CHAR = f"(?-i:[{_CJK}])"
_NOT_CJK_WORD = rf"(?-i:[^\W{_CJK}])"
_HAN_DIGITS = {c: n for n, c in enumerate("〇一二三四五六七八九")} | {"两": 2, "兩": 2, "零": 0}
NUM = r"\d{1,3}|[〇零一二两兩三四五六七八九十]{1,3}"  # Arabic or Chinese numerals
# Counts no one said exactly: "a few weeks ago" (几周前, 数週間前, 몇 주 전) is read
# as the past four weeks, a preference as wide as the words.
_VAGUE = frozenset("few several 几 幾 数 數 些 몇 며칠".split())  # 數: traditional 数; 前些天
_VAGUE_BACK = 4
_N = f"({NUM}|[几幾数數])"
_EN_N = rf"(\d{{1,3}}|{'|'.join(_COUNTS)}|(?:a\s+)?(?:few|couple(?:\s+of)?)|several)"
# Korean counts a week or a month in native numerals (한 달 전, 두 주 전), days in
# words of their own (하루, 이틀), and "a week" as 일주일: none was read before.
_KO_COUNTS = dict(zip("한 두 세 네 다섯 여섯 일곱 여덟 아홉 열".split(), range(1, 11)))
_KO_COUNTS |= dict(zip("하루 이틀 사흘 나흘".split(), range(1, 5))) | {"일": 1}
_KO_NATIVE = "|".join(
    sorted(_KO_COUNTS.keys() - {"하루", "이틀", "사흘", "나흘", "일"}, key=len)[::-1]
)
_KO_N = rf"(\d{{1,3}}|몇|(?<!{_HANGUL})(?:{_KO_NATIVE}))"
_DAY_SUFFIX = r"(?:st|nd|rd|th)?"
YEAR = r"(19[7-9]\d|2\d{3})"

# 周 as a week, not the start of a word: 上个周期 is "the last cycle", 这周边 "around
# here", not last or this week.
_ZH_WEEK = r"(?:周|週)(?![期边邊围圍转轉全刊])"
# Where a day or year word only starts inside another word: 目前天气 is the current
# weather, 提前天数 days in advance, 以前天天 every day before (not 前天, two days
# ago); 过去年份 past years, 如今年轻人 young people now (年轻: young).
_NOT_AFTER_QIAN = "(?<![目提以之从從当當先眼面空事生向往])"
_NOT_YOUNG = "(?![轻輕])"
# A part of a month is read as the month, as mid-March is (3月初, 3月中旬, 3月底,
# 3月末, 3月初め, 3월 초, 3월 말에): searched, 底 and 初 were words of their own.
_MONTH_PART = "(?:上旬|中旬|下旬|初め|初旬|初(?![次步])|底|末|頭)?"
_KO_MONTH_PART = rf"(?:\s*(?:초순|중순|하순|초|말)(?=(?:에|쯤|경|께)?(?!{_HANGUL})))?"
# So is a part of a relative month or year (上个月底, 先月末, 지난달 말, 去年底, 去年年初,
# 昨年末, 작년 말): its month or year.  今年初めて is "for the first time this year".
_YEAR_PART = "(?:年?(?:底|末|初(?![次步め])))?"
# 月 starts a word of its own after a month word: 这个月亮 is "this moon", 这个月饼
# "this mooncake", 上个月球 no month; 本月 ends another word in 基本月薪 (base
# monthly pay), 日本月饼, 一本月刊, 成本, 版本, 脚本: no "this month" there.
_NOT_MOON = "(?![球亮光饼餅刊])"
_NOT_AFTER_BEN = "(?<![基日成版样樣资資根剧劇脚腳文课課账賬记記一两兩几幾原标標范範副])"
# Relative words with a fixed distance: (pattern, unit, back).  A step further back
# (大前天, 上上周, 先々週, 지지난주) starts before the nearer word: read first, whole.
_FIXED = [
    (r"大前天|前前天|さきおととい|一昨昨日|그끄저께|그끄제", "day", 3),
    (
        rf"\bthe\s+day\s+before\s+yesterday\b|{_NOT_AFTER_QIAN}前天|一昨日|おととい|그저께|그제",
        "day",
        2,
    ),
    (r"\byesterday\b|\blast\s+night\b|昨天|昨日|昨晚|昨夜|어제|어젯밤", "day", 1),
    (
        r"\btoday\b|\btonight\b|\bthis\s+(?:morning|afternoon|evening)\b|今天|今日|今早|"
        r"今晚|今朝|今夜|오늘",
        "day",
        0,
    ),
    (
        rf"\bthe\s+week\s+before\s+last\b|上上(?:个|個)?(?:{_ZH_WEEK}|星期|礼拜|禮拜)末?|"
        r"先[々先]週末?|지지난\s*주말?",
        "week",
        2,
    ),
    (
        rf"\b(?:last|previous)\s+week(?:end)?\b|上(?:个|個)?(?:{_ZH_WEEK}末?|星期|礼拜|禮拜)|"
        r"先週末?|지난\s*주말?|저번\s*주말?",
        "week",
        1,
    ),
    (
        rf"\bthis\s+week(?:end)?\b|(?:这|這)(?:个|個)?(?:{_ZH_WEEK}末?|星期)|本{_ZH_WEEK}末?|"
        r"今週末?|이번\s*주말?",
        "week",
        0,
    ),
    (
        rf"\bthe\s+month\s+before\s+last\b|(?:上上(?:个|個)?月{_NOT_MOON}|先[々先]月){_MONTH_PART}"
        rf"|지지난\s*달{_KO_MONTH_PART}",
        "month",
        2,
    ),
    (
        rf"\b(?:last|previous)\s+month\b|(?:上(?:个|個)?月{_NOT_MOON}|先月){_MONTH_PART}"
        rf"|(?:지난|저번)\s*달{_KO_MONTH_PART}",
        "month",
        1,
    ),
    (
        rf"\bthis\s+month\b|(?:(?:这|這)(?:个|個)?月{_NOT_MOON}|{_NOT_AFTER_BEN}本月{_NOT_MOON}|今月){_MONTH_PART}"
        rf"|이번\s*달{_KO_MONTH_PART}",
        "month",
        0,
    ),
    (r"\bhalf\s+a\s+year\s+ago\b|(?<![一二两兩三四五六七八九十\d])半年前|반\s*년\s*전", "month", 6),
    # half a month is two weeks (보름: a fortnight), a month and a half six weeks
    (
        r"\bhalf\s+a\s+month\s+ago\b|(?<![一二两兩三四五六七八九十\d])半(?:个|個)月前|보름\s*전",
        "week",
        2,
    ),
    (r"\ba\s+month\s+and\s+a\s+half\s+ago\b|(?<![\d])一(?:个|個)半月前", "week", 6),
    (rf"(?:大前年|さきおととし|一昨昨年){_YEAR_PART}", "year", 3),
    (
        rf"\bthe\s+year\s+before\s+last\b|(?:{_NOT_AFTER_QIAN}前年{_NOT_YOUNG}|一昨年|おととし)"
        rf"{_YEAR_PART}|(?:재작년|그러께){_KO_MONTH_PART}",
        "year",
        2,
    ),
    (
        rf"\b(?:last|previous)\s+year\b|(?:(?<![过過失])去年{_NOT_YOUNG}|昨年){_YEAR_PART}"
        rf"|(?:작년|지난\s*해){_KO_MONTH_PART}",
        "year",
        1,
    ),
    (
        rf"\bthis\s+year\b|今年{_NOT_YOUNG}{_YEAR_PART}|(?:올해|금년){_KO_MONTH_PART}",
        "year",
        0,
    ),
]
# "N <unit>s ago" in each language: (pattern with the count as group 1, unit).
# English is typed short too: 3 wks ago, 2 mos ago, 5 yrs ago.
_AGO = [
    (
        rf"\b{_EN_N}\s+days?\s+ago\b|(?<!\d){_N}\s*(?:天|日)\s*前|(?<!\d){_KO_N}\s*일\s*전|(며칠)\s*전"
        rf"|(?<!{_HANGUL})(하루|이틀|사흘|나흘)\s*전",
        "day",
    ),
    (
        rf"\b{_EN_N}\s+(?:weeks?|wks?)\.?\s+ago\b|(?<!\d){_N}\s*(?:个|個)?\s*(?:星期|周|週|礼拜|禮拜|週間)\s*前"
        rf"|(?<!\d){_KO_N}\s*주(?:일)?\s*전|(?<!{_HANGUL})(일)주일\s*전",
        "week",
    ),
    (
        rf"\b{_EN_N}\s+(?:months?|mos?|mths?)\.?\s+ago\b|(?<!\d){_N}\s*(?:个|個|ヶ|か|カ|ケ|箇)\s*月\s*前"
        rf"|(?<!\d){_KO_N}\s*(?:달|개월)\s*전",
        "month",
    ),
    (
        rf"\b{_EN_N}\s+(?:years?|yrs?)\.?\s+ago\b|(?<!\d){_N}\s*年\s*前|(?<!\d){_KO_N}\s*년\s*전",
        "year",
    ),
]
# "the past 3 days", "过去一周": the units up to today (pattern, count group, unit group).
_UNITS = {
    **dict.fromkeys("day days 天 日 일 日子".split(), "day"),
    **dict.fromkeys("week weeks wks 周 週 星期 礼拜 禮拜 週間 주".split(), "week"),
    **dict.fromkeys("month months mos mths 月 か月 ヶ月 カ月 ケ月 箇月 개월 달".split(), "month"),
    **dict.fromkeys("year years yrs 年 년".split(), "year"),
}
_EN_SOME = "|".join([r"\d{1,3}", *_COUNTS, "few", "couple"])  # "the past few days"
_WITHIN = [
    rf"\b(?:last|past)\s+(?P<n>{_EN_SOME})(?:\s+of)?\s+(?P<u>days|weeks|wks|months|mos|mths|years|yrs)\b",
    r"\bpast\s+(?P<u>day|week|month|year)\b",
    rf"(?:过去|過去|最近|近)\s*(?P<n>{NUM}|几|幾)\s*(?:个|個)?\s*(?P<u>天|周|週|星期|礼拜|禮拜|月|年)",
    r"(?:这|這)(?P<n>几|幾|两|兩)(?P<u>天)",  # 这两天: these couple of days
    # 前几天: a few days ago; 我前几天 too (之前几天, 提前几天 are no such days).
    rf"{_NOT_AFTER_QIAN}前(?P<n>几|幾|些)(?:个|個)?(?P<u>天|周|週|月|年|日子)",
    # 前两天: the last couple of days (前两年 is as often "the first two years")
    rf"{_NOT_AFTER_QIAN}前(?P<n>两|兩)(?P<u>天)",
    rf"(?:過去|直近|ここ)\s*(?P<n>{NUM})\s*(?P<u>日|週間|か月|ヶ月|カ月|ケ月|箇月|年)(?:間)?",
    rf"(?:지난|최근)\s*(?P<n>\d{{1,3}}|{_KO_NATIVE})\s*(?P<u>일|주|개월|달|년)(?:\s*간|\s*동안)?",
]
# Hours name no day of their own: "3 hours ago", "the past 24 hours", 几个小时前,
# 数時間前, 세 시간 전 are read as the whole days they reach into, today's included.
_HOURS = [
    rf"\b(?P<n>{_EN_N})\s+(?:hours?|hrs?)\.?\s+ago\b",
    rf"\b(?:last|past)\s+(?P<n>{_EN_SOME})(?:\s+of)?\s+hours\b|\bpast\s+hour\b",
    rf"(?<!\d)(?P<n>{_N})\s*(?:个|個)?\s*(?:小时|小時|钟头|鐘頭|時間)\s*前",
    rf"(?:过去|過去|最近|近|直近|ここ)\s*(?P<n>{_N})\s*(?:个|個)?\s*(?:小时|小時|钟头|鐘頭|時間)",
    rf"(?<!\d)(?P<n>{_KO_N})\s*시간\s*전|(?:지난|최근)\s*(?P<k>\d{{1,3}}|{_KO_NATIVE})\s*시간",
]
HOURS_A_DAY = 24
# "recently", 最近, 최근: a stretch of no length said, read as the last LATELY_DAYS
# days, a preference only.  After 离 or 距, 最近 is "nearest" (离公司最近的车站), and so
# it is in 最近邻 (nearest neighbour; 最近邻居 is "lately, the neighbours") and 最近傍.
_LATELY = (
    r"\brecently\b|\blately\b|最近(?![邻鄰](?!居)|傍)|최근|近頃|このごろ"
    # 前段时间, 前阵子: a while ago, no length said either
    rf"|{_NOT_AFTER_QIAN}前(?:一)?段(?:时间|時間|日子)|{_NOT_AFTER_QIAN}前(?:一)?(?:阵|陣)子"
)
LATELY_DAYS = 30
# "this time last year", 去年的这个时候, 昨年の今頃, 작년 이맘때: about this day then, read
# as the two weeks either side of it.  Alone, "this time" is no time.
_THIS_TIME = (
    r"\b(?:about\s+|around\s+)?this\s+time\b|(?:这|這)(?:个|個)?时候|(?:这|這)(?:个|個)?時候"
    r"|今頃|今ごろ|이맘때쯤?"
)
# Weekdays: "last Tuesday", "上周二", "火曜日", "화요일" (pattern, which week: see TimeWords).
WEEKDAY_NAMES = "monday tuesday wednesday thursday friday saturday sunday".split()
_EN_DAYS = "|".join(WEEKDAY_NAMES)
_WEEKDAY_CHARS = dict(zip("一二三四五六日天", (0, 1, 2, 3, 4, 5, 6, 6)))
_WEEKDAY_CHARS |= dict(zip("月火水木金土", range(6))) | dict(zip("월화수목금토일", range(7)))
# Which week a weekday's prefix names: 0 this one, 1 last week, 2 the week before.
_WEEK_PREFIXES = ("这 這 本 今週 이번", "上 先週 지난 저번", "上上 先々週 先先週 지지난")
_WEEKS = {word: back for back, words in enumerate(_WEEK_PREFIXES) for word in words.split()}
# 一 and 日 begin common words after a week word: 上周一起 is "together last week",
# not last Monday, 上周日本 "Japan last week", not last Sunday.
# A numeral before a measure word or another numeral counts: 上周一个客户 is "a
# customer last week", 上周二十个请求 "twenty requests", not last Monday or Tuesday.
_COUNTED = (
    r"(?![个個次位台篇件条條张張本份场場家名种種批项項组組只隻把段遍回趟封顿頓半十百千万萬]"
    r"|天(?![气氣]))"
)
_ZH_WEEKDAY = (
    rf"[二三四五六]{_COUNTED}|天|一(?![起直定样樣下些般共切点點会會]){_COUNTED}"
    r"|日(?![本子常期记記程志语語文元])"
)
_WEEKDAYS = [
    (rf"\b(?:last|previous)\s+({_EN_DAYS})\b", -1),
    (rf"\bthis\s+({_EN_DAYS})\b", 0),
    (rf"\bon\s+({_EN_DAYS})\b(?!s)", None),
    (rf"(?<!每)(上上|上|这|這|本)?(?:个|個)?(?:周|週|星期|礼拜|禮拜)({_ZH_WEEKDAY})", None),
    (r"(?:(先々週|先先週|先週|今週)の?)?([月火水木金土日])曜日?", None),
    (r"(?:(지지난|지난|저번|이번)\s*주\s*)?([월화수목금토일])요일", None),
    # 지난 금요일, as "last Friday": no week said (지난주 금요일 is last week's)
    (r"(?:지난|저번)\s*([월화수목금토일])요일", -1),
]
# A number a unit or a thing counted follows counts it: "in 2048 bytes", "in 2000
# ms" are no years (and 2048, 2000 are searched).  Not any plural: "in 2024 sales
# rose" is the year.
_COUNTED_BY = (
    r"\s*(?:ms|ns|[kmgt]i?b|px|[kmg]?hz|rpm|fps|qps|rps|(?:bytes|bits|rows|lines|items"
    r"|records|requests|tokens|files|entries|chars|characters|words|steps|iterations"
    r"|epochs|tests|errors|messages|pages|points|times|seconds|secs|minutes|mins|hours"
    r"|days|weeks|months|years|users|calls|queries|jobs|tasks|threads|samples|docs"
    r"|documents|nodes|pods|commits|retries|attempts|units|dollars|yen|yuan|euros))\b"
)
# Dates, with named groups y (year), m (month number or name) and d (day).
_DATES = [
    r"(?<![\w-])(?P<y>\d{4})[-/.](?P<m>\d{1,2})[-/.](?P<d>\d{1,2})(?=T\d{1,2}:\d{2}|(?![\w-]))",
    r"(?<![\w-])(?P<y>\d{4})-(?P<m>\d{2})(?![\w-])",
    rf"\b(?P<m>{_ANY_MONTH})\.?\s+(?P<d>\d{{1,2}}){_DAY_SUFFIX}(?:,?\s+(?P<y>\d{{4}}))?\b",
    rf"\b(?P<d>\d{{1,2}}){_DAY_SUFFIX}\s+(?:of\s+)?(?P<m>{_DAY_FIRST_MONTH})\b\.?(?:\s+(?P<y>\d{{4}})\b)?",
    rf"\b(?P<m>{_ANY_MONTH})\.?\s+(?P<y>{YEAR})\b",
    # A month alone is a word too ("may", "march"): read only after in/during.
    rf"\b(?:in|during)\s+(?:(?:early|late|mid)[\s-]+)?(?P<m>{_FULL_MONTHS})\b(?:,?\s+(?P<y>{YEAR})\b)?",
    # A part of a month names it too (mid-March, early April, the end of May): its
    # month.  Not "late may" or "early may", where may is the verb (too late may be).
    rf"\b(?:(?:early|late|mid)\s+(?P<m>{_FULL_MONTHS_NOT_MAY})|mid-(?P<m2>{_ANY_MONTH})"
    rf"|(?:early|late)-(?P<m3>{_FULL_MONTHS})|(?:the\s+)?(?:end|beginning|start|middle)\s+of\s+"
    rf"(?P<m4>{_FULL_MONTHS}))\b(?:,?\s+(?P<y>{YEAR})\b)?",
    rf"\b(?:in|during)\s+(?P<y>{YEAR})\b(?!{_COUNTED_BY})",
    # 8일날: "the day of the 8th", as Korean speech says it
    rf"(?<!\d)(?P<y>\d{{4}}|\d{{2}})\s*[年년]\s*(?P<m>{NUM})\s*[月월]\s*(?P<d>{NUM})\s*(?:[日号號]|일날?)",
    rf"(?<!\d)(?P<m>{NUM})\s*[月월]\s*(?P<d>{NUM})\s*(?:[日号號]|일날?)",
    # 24年3月: a year of two digits, as said, where a month follows (24年 alone is
    # as often 24 years)
    rf"(?<!\d)(?P<y>\d{{4}}|\d{{2}})\s*[年년]\s*(?P<m>{NUM})\s*(?:月{_MONTH_PART}|월{_KO_MONTH_PART})(?!\s*前)",
    rf"(?<!\d)(?P<m>{NUM})\s*月份?{_MONTH_PART}(?!\s*前)",
    rf"(?<!\d)(?P<m>\d{{1,2}})\s*월{_KO_MONTH_PART}(?!\s*전)",
    r"(?<!\d)(?P<y>\d{4})\s*[年년](?!\s*前|\s*전)",
]
# A month named after last or this ("last March", "this March 8", 지난 3월): that
# month (day) this year, or for "last" the last one before today's (in March 2026,
# last March is March 2025).  Not "last may", the verb (the last may fail).
_LAST_MONTH = [
    rf"\b(?P<w>last|this)\s+(?P<m>{_FULL_MONTHS_NOT_MAY}|(?-i:May))\b"
    rf"(?:\.?\s+(?P<d>\d{{1,2}}){_DAY_SUFFIX}\b)?",
    rf"(?P<w>지난|저번)\s*(?P<m>\d{{1,2}})\s*월{_KO_MONTH_PART}(?:\s*(?P<d>\d{{1,2}})\s*일날?)?",
]
# A date of numbers alone: which is the month is the writer's habit.  Slashes are
# read month/day, as Chinese, Japanese and US writing has it (3/8 is March 8), and
# day/month only where the first can be no month (25/12); dots with the year last
# day.month.year (8.3.2024), as German or Russian writing has it.  The note says which.
# Inside a word, a version or a sum (v1.2.2024, 10/3/2024, 3/8%): no date.  CJK text
# is no such word: it writes no spaces (我们3/8讨论了, 3/8的会议).
_NOT_AFTER = rf"(?<!{_NOT_CJK_WORD}|[/.,:+-])"
_NUMBERS_END = rf"(?!{_NOT_CJK_WORD}|[/%°:+-]|[.,]\d)"
# Weekdays as a date is written beside them: Friday 3/8, Fri 3/8.
_DAY_NAMES = rf"{_EN_DAYS}|mon|tues?|wed|thu(?:rs?)?|fri"  # sat and sun are words
_AT_TIME = (
    r",?\s+(?:at\s+|@\s*)?(?:\d{1,2}(?::\d{2})?\s*[ap]\.?m\b\.?|\d{1,2}:\d{2}\b|noon\b|midnight\b)"
    r"|\s+(?:in\s+the\s+)?(?:morning|afternoon|evening|night)\b"
)
# A part of a day or a clock time after a day (yesterday afternoon, March 8 at
# 3pm, 2024-03-08T10:00, 昨天下午3点, 昨日の午後, 어제 오후 3시) is that day: searched,
# "afternoon" held no message of that afternoon, and "evening" found "even".
_CLOCK = rf"(?:\s*(?:{NUM})\s*[点點時时시](?:\s*半|\s*반|\s*(?:{NUM})\s*分)?)?"
_DAY_PART = (
    rf"(?:{_AT_TIME})"
    r"|T\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?(?![\w:])"
    rf"|\s*(?:的\s*)?(?:早上|上午|中午|下午|晚上|傍晚|凌晨|早晨|白天|夜里|夜裡|晚间|晚間){_CLOCK}"
    rf"|\s*(?:の\s*)?(?:午前|午後|夕方)|\s*の\s*(?:朝|昼|夜|晩){_CLOCK}"
    rf"|\s*(?:아침|오전|점심|오후|저녁|밤|새벽){_CLOCK}(?=(?:에|의|쯤)?(?!{_HANGUL}))"
)
_NUMBERS_DATE = rf"{_NOT_AFTER}(?P<a>\d{{1,2}})(?P<sep>[/.])(?P<b>\d{{1,2}})"
_DATED = [
    rf"{_NUMBERS_DATE}(?P=sep)(?P<y>\d{{4}}){_NUMBERS_END}",
    # 3/8/24: slashes only (1.2.24 is a version as often as a day)
    rf"{_NOT_AFTER}(?P<a>\d{{1,2}})(?P<sep>/)(?P<b>\d{{1,2}})/(?P<y>\d{{2}}){_NUMBERS_END}",
    # A fraction or a score is no date (3/8 of the tests, what is 1/2, score 3/8?):
    # one with no year is read only where a date stands, after a word that leads
    # to one (on, since, by) or a weekday, or before a time of day (3/8 at 3pm).
    rf"(?P<on>\b(?:on|since|until|till|by|before|after|from|{_DAY_NAMES})\.?,?\s+)?"
    rf"{_NOT_AFTER}(?P<a>\d{{1,2}})(?P<sep>/)(?P<b>\d{{1,2}}){_NUMBERS_END}(?P<at>{_AT_TIME})?",
]
_NUMBERS_APART = re.compile(r"\d[/.]\d")  # each _DATED date holds it: none built without
# Where a clause ends: the text's end, a mark, or CJK text beside it (on the 3rd的会议).
_CLAUSE_END = rf"\s*(?:$|[?!.,;:)\]」』）？！。，、]|{_CJK_CHAR})"
# "on the 3rd" (no month: the last 3rd up to today), read only where a clause ends:
# "on the 3rd floor" is no day.  Korean 8일날 says "the 8th" in any sentence.
_MONTH_DAY = [
    r"\bon\s+the\s+(?P<d>\d{1,2})(?:st|nd|rd|th)\b",
    r"(?<![\d월月])(?P<d>\d{1,2})\s*일날",
]
_FLAGS = re.IGNORECASE
# "the 3rd of last month", "last month on the 3rd": that day of that month (read
# apart, the month was preferred whole and the 3rd searched as a word).
_EN_DAY_OF_MONTH = [
    r"\b(?:on\s+)?the\s+(?P<d>\d{1,2})(?:st|nd|rd|th)\s+(?:of\s+)?"
    r"(?P<w>last|previous|this)\s+month\b",
    r"\b(?P<w>last|previous|this)\s+month\s+on\s+the\s+(?P<d>\d{1,2})(?:st|nd|rd|th)\b",
]
# A day after this or last month's word (上个月8号, 先月の8日, 지난달 8일): that day of
# the month.  A number alone (8号) is no day (8号楼, building 8), so only here.
_DAY_OF_MONTH_WORD = re.compile(
    rf"\s*(?:的|の|의)?\s*(?P<d>{NUM})\s*(?:[日号號](?![楼樓线線])|일날?)", _FLAGS
)
# A CJK keyboard types Latin in full width (ｌａｓｔ ｗｅｅｋ): read as ASCII, one
# character for one, so the offsets and the words as written stay the user's.
ASCII_WIDTH = {cp: cp - 0xFEE0 for cp in range(0xFF01, 0xFF5F)} | {0x3000: 0x20}
_NEVER = "(?!)"


def _is_cjk(char: str) -> bool:
    return any(lo <= char <= hi for lo, hi in _CJK_RANGES)


# One text: a reading asks about it for every pattern; a paste is not kept after it.
@functools.lru_cache(maxsize=1)
def _scripts(text: str) -> tuple[bool, bool]:
    """Whether ``text`` holds a Hangul syllable, and whether any CJK character."""
    chars = set(text)
    return any("\uac00" <= c <= "\ud7a3" for c in chars), any(map(_is_cjk, chars))


def _pattern(source: str, text: str) -> re.Pattern[str]:
    """``source`` compiled for searching ``text`` (see ``_compiled``)."""
    return _compiled(source, *_scripts(text))


@functools.cache  # the module's patterns, in three forms at most
def _compiled(source: str, hangul: bool, cjk: bool) -> re.Pattern[str]:
    """``source`` compiled for a text with Hangul (``hangul``), with CJK (``cjk``) or
    neither: in a text without such characters their big classes match nothing
    (a word character of no CJK script is any), and building them was most of a
    new process's first reading of a question."""
    if not hangul:
        source = source.replace(_HANGUL, _NEVER)
    if not cjk:
        source = source.replace(_CJK_CHAR, _NEVER).replace(_NOT_CJK_WORD, r"\w")
    return re.compile(source, _FLAGS)


def number(text: str) -> int | None:
    """An Arabic, English count or Chinese numeral up to 999 as an int (a few: 3, a
    couple: 2); None otherwise."""
    text = _plain(text)
    if text in _VAGUE or text == "couple":
        return 3 if text in _VAGUE else 2
    if text.isdigit():
        return int(text)
    if text in _COUNTS:
        return _COUNTS[text]
    if text in _KO_COUNTS:
        return _KO_COUNTS[text]
    if "十" in text:
        tens, _, ones = text.partition("十")
        high = _HAN_DIGITS.get(tens, -1) if tens else 1
        low = _HAN_DIGITS.get(ones, -1) if ones else 0
        return None if high < 0 or low < 0 else high * 10 + low
    if len(text) == 1 and text in _HAN_DIGITS:
        return _HAN_DIGITS[text]
    return None


def _year(text: str) -> int:
    """A year as written; two digits (24年3月, 3/8/24) are 1970-2069, as POSIX
    reads ``%y``, the years a message can hold."""
    year = int(text)
    return year if len(text) > 2 else year + (1900 if year >= FIRST_YEAR % 100 else 2000)


def _plain(count: str) -> str:
    """A count as written, lower-cased, without "a" and "of" (``a couple of``)."""
    return " ".join(count.lower().split()).removeprefix("a ").removesuffix(" of")


def _date_words(match: re.Match[str]) -> TimeWords | None:
    """A matched date as TimeWords, None when it names no real day or month."""
    found = match.groupdict()
    year = _year(found["y"]) if found.get("y") else None
    month_text = found.get("m") or found.get("m2") or found.get("m3") or found.get("m4")
    month = None
    if month_text:
        month = _MONTHS.get(month_text.lower().rstrip(".")) or number(month_text)
    day = number(found["d"]) if found.get("d") else None
    if month_text and not (month and 1 <= month <= 12):
        return None
    if year is not None and not FIRST_YEAR <= year <= 9999:
        return None
    if day is not None:
        try:  # 29 February is a day in a leap year
            date(year or 2000, month or 1, day)
        except ValueError:
            return None
    unit = "day" if day is not None else "month" if month else "year"
    return TimeWords(match.group(0).strip(), unit, None, year, month, day)


def _last_month(m: re.Match[str]) -> TimeWords | None:
    """A month named after last or this (``_LAST_MONTH``) as TimeWords, None where
    it names no real day: ``back`` 0 this year's, -1 the last one before today."""
    month = _MONTHS.get(m["m"].lower()) or int(m["m"])
    day = int(m["d"]) if m["d"] else None
    try:  # 29 February is a day in a leap year
        date(2000, month, day or 1)
    except ValueError:
        return None
    back = 0 if m["w"].lower() == "this" else -1
    return TimeWords(m[0], "day" if day else "month", back, month=month, day=day)


def _candidates(text: str) -> list[tuple[int, int, TimeWords | None]]:
    found: list[tuple[int, int, TimeWords | None]] = []
    for pattern, unit, back in _FIXED:
        for m in _pattern(pattern, text).finditer(text):
            found.append((m.start(), m.end(), TimeWords(m.group(0), unit, back)))
            day = _DAY_OF_MONTH_WORD.match(text, m.end()) if unit == "month" and back < 3 else None
            if day and 1 <= (number(day["d"]) or 0) <= 31:
                said = text[m.start() : day.end()]
                found.append(
                    (m.start(), day.end(), TimeWords(said, "day", back, day=number(day["d"])))
                )
    for pattern in _EN_DAY_OF_MONTH:
        for m in _pattern(pattern, text).finditer(text):
            if 1 <= int(m["d"]) <= 31:
                back = 0 if m["w"].lower() == "this" else 1
                found.append((m.start(), m.end(), TimeWords(m[0], "day", back, day=int(m["d"]))))
    for pattern, unit in _AGO:
        for m in _pattern(pattern, text).finditer(text):
            said = _plain(next(g for g in m.groups() if g))
            count, vague = number(said), said in _VAGUE
            if count is not None:
                back = _VAGUE_BACK if vague else count
                found.append((m.start(), m.end(), TimeWords(m.group(0), unit, back, within=vague)))
    found += _hours(text)
    for pattern in _DATES:
        for m in _pattern(pattern, text).finditer(text):
            # A date no calendar holds (2月30号) is read as nothing, not as its month.
            found.append((m.start(), m.end(), _date_words(m)))
    found += _numbers_dates(text)
    for pattern in _LAST_MONTH:
        for m in _pattern(pattern, text).finditer(text):
            found.append((m.start(), m.end(), _last_month(m)))
    for m in _pattern(_THIS_TIME, text).finditer(text):  # a time only beside a year
        found.append((m.start(), m.end(), TimeWords(m[0], "week", this_day=True)))
    for m in _pattern(_LATELY, text).finditer(text):
        if m.group() != "最近" or not re.search("[离離距]", text[: m.start()]):
            found.append(
                (m.start(), m.end(), TimeWords(m.group(), "day", LATELY_DAYS, within=True))
            )
    return found + _stretch_candidates(text)


def _numbers_dates(text: str) -> list[tuple[int, int, TimeWords | None]]:
    """Dates of numbers alone (``3/8``, ``3/8/2024``, ``8.3.2024``) and days of no
    month ("on the 3rd", ``8일날``), where they read as dates (``_DATED``)."""
    found: list[tuple[int, int, TimeWords | None]] = []
    for pattern in _DATED if _NUMBERS_APART.search(text) else ():
        for m in _pattern(pattern, text).finditer(text):
            if "y" in m.re.groupindex or m["on"] or m["at"] or _beside_cjk(text, m):
                found.append((m.start(), m.end(), _numbers_date(m)))
    for n, pattern in enumerate(_MONTH_DAY):
        for m in _pattern(pattern, text).finditer(text):
            if (n or _pattern(_CLAUSE_END, text).match(text, m.end())) and 1 <= int(m["d"]) <= 31:
                found.append((m.start(), m.end(), TimeWords(m[0], "day", day=int(m["d"]))))
    return found


def _beside_cjk(text: str, m: re.Match[str]) -> bool:
    """Whether a date of numbers stands in CJK text (3/8的会议, 去年3/8): it is no
    fraction there, where a CJK sentence writes its dates so."""
    before, after = text[m.start("a") - 1 : m.start("a")], text[m.end("b") :].lstrip()
    return _is_cjk(before) or _is_cjk(after[:1])


def _numbers_date(m: re.Match[str]) -> TimeWords | None:
    """A date of numbers alone (``_DATED``) as TimeWords; None where none is read."""
    a, b = int(m["a"]), int(m["b"])
    year = _year(m["y"]) if "y" in m.re.groupindex else None
    if m["sep"] == ".":
        month, day, order = b, a, "day.month.year"
    elif a <= 12:
        month, day, order = a, b, "month/day"
    else:
        month, day, order = b, a, "day/month"
    if year is not None and m["sep"] == "/":
        order += "/year"
    try:  # 29 February is a day in a leap year
        date(year or 2000, month, day)
    except ValueError:
        return None
    if year is not None and not FIRST_YEAR <= year <= 9999:
        return None
    return TimeWords(m[0], "day", year=year, month=month, day=day, order=order)


def _hours(text: str) -> list[tuple[int, int, TimeWords]]:
    """Hours as the days up to today they reach into: "3 hours ago" at 1 a.m. is
    yesterday's, "the past 48 hours" two days and today."""
    found = []
    for pattern in _HOURS:
        for m in _pattern(pattern, text).finditer(text):
            found_count = m.groupdict()
            count = number(found_count.get("n") or found_count.get("k") or "1")
            if count:
                days = -(-count // HOURS_A_DAY)
                found.append((m.start(), m.end(), TimeWords(m.group(0), "day", days, within=True)))
    return found


def _stretch_candidates(text: str) -> list[tuple[int, int, TimeWords]]:
    """The past few units up to today ("the past 3 days") and weekdays ("last Tuesday")."""
    found = []
    for pattern in _WITHIN:
        for m in _pattern(pattern, text).finditer(text):
            n = (m.groupdict().get("n") or "1").lower()
            count = number(n)
            unit = _UNITS.get(m.group("u").lower())
            if count and unit:
                found.append((m.start(), m.end(), TimeWords(m.group(0), unit, count, within=True)))
    for pattern, which in _WEEKDAYS:
        for m in _pattern(pattern, text).finditer(text):
            *week, day = m.groups()
            back = which if not week or week[0] is None else _WEEKS[week[0]]
            weekday = (
                _WEEKDAY_CHARS[day] if day in _WEEKDAY_CHARS else WEEKDAY_NAMES.index(day.lower())
            )
            found.append((m.start(), m.end(), TimeWords(m.group(0), "day", back, weekday=weekday)))
    return found


def find_time_expressions(text: str) -> list[tuple[int, int, TimeWords]]:
    """The time expressions in ``text`` as ``(start, end, TimeWords)``, in text order.

    Overlapping readings go to the one that starts first, then the longest
    (``3月8号`` is a day, not the month ``3月``).  A date no calendar holds
    (``2月30号``, February 30) is no time, and no shorter reading inside it is.
    """
    chosen: list[tuple[int, int, TimeWords | None]] = []
    found = _candidates(text.translate(ASCII_WIDTH))
    for start, end, words in sorted(found, key=lambda c: (c[0], c[0] - c[1])):
        if not chosen or start >= chosen[-1][1]:
            chosen.append((start, end, words))
    chosen = _with_their_hours(chosen, text.translate(ASCII_WIDTH))
    read = _with_their_year(
        [(a, b, replace(w, text=text[a:b])) for a, b, w in chosen if w is not None], text
    )
    # "this time" with no year beside it is no time (this time it failed)
    return [(a, b, w) for a, b, w in read if not (w.this_day and w.back is None and w.year is None)]


def _with_their_hours(
    chosen: list[tuple[int, int, TimeWords | None]], text: str
) -> list[tuple[int, int, TimeWords | None]]:
    """A day's time words with the part of the day or clock time after them
    (``_DAY_PART``), where no other time word starts inside it."""
    out = []
    for n, (start, end, words) in enumerate(chosen):
        day = words is not None and words.unit == "day" and not words.within
        after = _pattern(_DAY_PART, text).match(text, end) if day else None
        if after and (n + 1 == len(chosen) or chosen[n + 1][0] >= after.end()):
            end = after.end()
        out.append((start, end, words))
    return out


# What may stand between a year and its month or day: 去年的12月, 昨年の3月, in March of
# last year.
_YEAR_JOIN = re.compile(r"\s*(?:的|の|의|,|\b(?:in|of|on)\b)?\s*", _FLAGS)


def _with_their_year(
    found: list[tuple[int, int, TimeWords]], text: str
) -> list[tuple[int, int, TimeWords]]:
    """A year (``去年``, ``작년``, ``last year``, ``2024年``) beside a date without one
    (``12月``, ``3월 8일``, ``in March``) as one time: that date in that year.  Read
    apart, 去年12月 preferred all of last year and December of every year."""
    out: list[tuple[int, int, TimeWords]] = []
    for start, end, words in found:
        if out and _YEAR_JOIN.fullmatch(text, out[-1][1], start):
            joined = _in_year(out[-1][2], words) or _in_year(words, out[-1][2])
            if joined is not None:
                out[-1] = (out[-1][0], end, replace(joined, text=text[out[-1][0] : end]))
                continue
        out.append((start, end, words))
    return out


def _in_year(year: TimeWords, when: TimeWords) -> TimeWords | None:
    """``when`` (a month or day of no year, or today) in ``year`` (a year alone), else
    None.  去年的今天 is this day last year: read apart, it preferred all of last
    year and today."""
    alone = year.unit == "year" and not year.within and year.month is None
    today = when.unit == "day" and when.back == 0 and not when.within and when.weekday is None
    if alone and (today or when.this_day):
        return replace(when, back=year.back, year=year.year, this_day=True)
    if not alone or when.month is None or when.year is not None or when.back is not None:
        return None
    return replace(when, back=year.back, year=year.year)
