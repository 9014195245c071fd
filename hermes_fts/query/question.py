"""Reading a question: which of its words name what a conversation says.

A best match (``plan.best_match``) searches the words of a question as a
model writes it.  Three kinds of word there do not name anything a
conversation says, and would decide the match if searched (docs/QUERY.md,
"Reading a question"):

* a possessive: ``Anna's`` is the word ``Anna`` (the tokenizer would make it
  the phrase "anna s");
* a category word: the ``hobby`` of "what kind of hobby", the ``数据`` of
  "哪个数据库": the conversation names the thing (bouldering), not its kind;
* time words: "last week", "3月8号", "先週", "지난주": a message's date is
  its timestamp (``request.search_preferring`` turns them into a time preference).

Only words written without quotes are read; a quoted phrase is searched as
written.  The common words a best match leaves out while others remain
(``STOP_WORDS``, ``CJK_STOP_WORDS``) are listed here too.  This module knows
words, not SQL.

Time words: :func:`find_time_words` finds such expressions in a stretch of
query text (English, Chinese, Japanese and Korean); :func:`windows` turns one
into ``[start, end)`` ranges of Unix seconds, counted from a given ``now`` in
the local time zone (the zone naive ISO bounds are read in, ``tool/args.py``).
A date without a year is that day in every year up to ``now``'s.  What the
search does with them is docs/QUERY.md's "Time words" and docs/DESIGN.md §6.4c.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from .syntax import AllOf, Query, Term
from .wordforms import KOREAN_PARTICLES

__all__ = [
    "CJK_FUNCTION_CHARS",
    "CJK_STOP_WORDS",
    "KO_ENDINGS",
    "STOP_WORDS",
    "Reading",
    "TimeWords",
    "describe",
    "find_time_words",
    "lone_possessive",
    "read_question",
    "time_words",
    "windows",
]


# Words that do not decide which conversation a question is about: English
# function and question words, the words that frame a question about a past
# conversation (talk, discuss), and the CJK particles and question words a
# sentence is glued together with.  Left out only while other words remain.
STOP_WORDS = frozenset(
    """
a about above after again all am an and any are as at be been before being below between
both but by can could did do does doing done down during each few for from further get
got had has have having he her here hers herself him himself his how i if in into is it
its itself just let me more most my myself no nor not now of off on once only or other
our ours ourselves out over own please same she should so some such than that the their
theirs them themselves then there these they this those through to too under until up
us very was we were what when where which while who whom whose why will with would you
your yours yourself yourselves tell remember recall said say says know think thing things
ever also again did does anything something someone somebody
talk talked talking talks discuss discussed discussing conversation conversations
mention mentioned
""".split()
)
# A CJK bigram holding one of these characters is mostly grammar (的, 了, 吗, 什么):
# 是 (is) is in hardly any noun, and its bigrams in a question straddle two
# words (`新干线是` gives 线是).
CJK_FUNCTION_CHARS = frozenset("的了吗呢吧啊呀么什哪谁是")
# The last two lines frame a question (你还记得…, …的对话, 怎么回事, 讨论过;
# 기억나요, 얘기한, 알려 주세요) and name nothing a conversation is about.
CJK_STOP_WORDS = frozenset(
    """
时候 怎样 怎么 为什 我们 你们 他们 她们 这个 那个 一个 是不 有没 没有 是否 曾经 以前 之前 哪里 哪儿
いつ どこ なに なん だれ どう どの どれ です ます した ました でし まし ませ ない たの 何 話 時 方
언제 어디 무엇 누가 누구 어떻 어떤 무슨 했나 나요 습니 니까 까요 있나 었나 였나 인가
记得 还记 你还 对话 讨论 聊过 论过 谈过 说过 讲过 问过 提过 聊到 说到 谈到 讲到 提到 提起 回事 聊的
기억 기억나 얘기 얘기한 이야기 이야기한 알려 어떻게 뭐 뭐라고 무엇 뭐였 했죠 해요
대해 대한 우리 제가 내가 뭐에 뭐를 뭐가 뭘
""".split()
)
# Endings of the Korean words that end a sentence: the question's predicate.
KO_ENDINGS = ("요", "죠", "까", "니다")


_POSSESSIVE = re.compile(r"(\w+)['\u2019]s", re.IGNORECASE)
# "what kind of X", "which type of X", "what sorts of X": X names a category.
_ASKING = frozenset({"what", "which"})
_KINDS = frozenset({"kind", "kinds", "type", "types", "sort", "sorts"})
# "which X" asks only where a question or its clause starts: after a noun,
# "which" is relative ("the bug which crashed") and the word after it a verb.
_ASKS_AFTER = frozenset("in on at from to for with of by about during into and or".split())
# The noun after these names a category too: Chinese (its first two
# characters), Japanese (its kanji or katakana run) and Korean (the next word).
# Not 哪个 ("which one"): it mostly picks among things named before.
_CJK_CATEGORY = re.compile(
    "(?:什么样的?|什麼樣的?|什么类型的|什麼類型的|什么种类的|什麼種類的|哪种|哪種|哪些|哪类|哪類)"
    "(?![是有的了在])([\u4e00-\u9fff]{2})"
    "|(?:どんな|どの|どういう|どういった|何の|なんの)([\u4e00-\u9fff\u30a0-\u30ff\u3005]+)"
)
_KO_ASKING = frozenset({"어떤", "무슨"})
MAX_TIME_WORDS = 8  # read as times; more are searched as the words they are

Word = tuple[Term, bool]  # a term of the query and whether it was written without quotes
Span = tuple[int, int]


@dataclass(frozen=True)
class Reading:
    """A question's words as a best match should search them.

    ``words``: the query's terms in order, each with whether it was written
    without quotes; possessives read and time and category words cut out of
    the words holding them.  ``aside``: those time and category words, left
    out while other words remain.  ``times``: the time words found.
    ``notes``: what was read, for the query's notes.  ``written``: the words
    as the user wrote them (a possessive read as its name), not the pieces a
    CJK sentence is cut into: what a note may name.
    """

    words: tuple[Word, ...]
    aside: frozenset[Term] = frozenset()
    times: tuple[TimeWords, ...] = ()
    notes: tuple[str, ...] = ()
    written: frozenset[str] = frozenset()


def _top_words(q: Query) -> list[Word]:
    if q.expr is None:
        return []
    top = q.expr.include if isinstance(q.expr, AllOf) else (q.expr,)
    bare = set(q.bare)
    return [(node, node.text in bare) for node in top if isinstance(node, Term)]


def lone_possessive(text: str) -> str | None:
    """The name in a query of one possessive alone (``Anna's``), read so only when no
    message holds it as written (``request.search_reading``); None otherwise."""
    found = _POSSESSIVE.fullmatch(text.strip())
    name = found.group(1) if found else None
    return name if name and name.lower() not in STOP_WORDS else None


def _possessives(words: list[Word], is_stop: Callable[[str], bool]) -> tuple[list[Word], list[str]]:
    """``Anna's`` and ``Anna’s`` written without quotes as ``Anna``, and the note's pairs.

    ``it's`` and ``let's`` become common words, left out as such: no possessive
    to name."""
    out, read = [], []
    for term, unquoted in words:
        found = _POSSESSIVE.fullmatch(term.text) if unquoted else None
        if found is not None:
            if not is_stop(found.group(1)):
                read.append(f"{term.text} → {found.group(1)}")
            term = Term(found.group(1), term.prefix)
        out.append((term, unquoted))
    return out, read


def _stretches(words: list[Word]) -> Iterator[list[tuple[int, int]]]:
    """Runs of consecutive words written without quotes, as (word index, offset) lists:
    the offset of each word in the run's text, its words joined by spaces."""
    run: list[tuple[int, int]] = []
    offset = 0
    for i, (term, unquoted) in enumerate(words):
        if not unquoted:
            if run:
                yield run
            run, offset = [], 0
            continue
        run.append((i, offset))
        offset += len(term.text) + 1
    if run:
        yield run


def _mark_times(words: list[Word], marks: list[list[Span]]) -> list[TimeWords]:
    """Find the time words of each stretch; mark their characters in the words."""
    found: list[TimeWords] = []
    for run in _stretches(words):
        text = " ".join(words[i][0].text for i, _ in run)
        for start, end, when in find_time_words(text):
            if len(found) == MAX_TIME_WORDS:  # a day in every year is 57 windows each
                return found
            found.append(when)
            for i, offset in run:
                lo, hi = max(start, offset), min(end, offset + len(words[i][0].text))
                if lo < hi:
                    marks[i].append((lo - offset, hi - offset))
    return found


def _mark_categories(
    words: list[Word], marks: list[list[Span]], is_stop: Callable[[str], bool]
) -> list[str]:
    """Mark category words (see the module docstring); return them as written."""
    found = []
    for run in _stretches(words):
        idx = [i for i, _ in run]
        texts = [words[i][0].text for i in idx]
        low = [t.lower() for t in texts]
        for k in range(len(idx)):
            nxt, kind = k + 1, ""
            if (
                low[k] in _ASKING
                and k + 3 < len(idx)
                and low[k + 1] in _KINDS
                and low[k + 2] == "of"
            ):
                marks[idx[k + 1]].append((0, len(texts[k + 1])))
                nxt, kind = k + 3, f"{texts[k + 1]} of "
            elif not (
                low[k] in _KO_ASKING
                or low[k] == "which"
                and (k == 0 or low[k - 1] in _ASKS_AFTER or is_stop(low[k - 1]))
            ):
                continue
            if nxt < len(idx) and low[nxt].isalpha() and not is_stop(low[nxt]):
                if not marks[idx[nxt]]:  # a time word is one already
                    marks[idx[nxt]].append((0, len(texts[nxt])))
                    found.append(kind + texts[nxt])
            elif kind:
                found.append(texts[k + 1])
        for i in idx:
            for m in _CJK_CATEGORY.finditer(words[i][0].text):
                # The question word goes with its noun: どんな alone is no word either.
                if not any(a < m.end() and m.start() < b for a, b in marks[i]):
                    marks[i].append(m.span())
                    found.append(m.group(1) or m.group(2))
    return found


# Particles a date or a category word carries in Korean and Japanese.
_LEFT_BEHIND = frozenset([*KOREAN_PARTICLES, "に", "の", "は", "も", "から", "まで"])
# Japanese glues the particle to the words after it too (12月20日にさくらと…).
_JA_GLUED = ("から", "まで", "に", "の", "は", "も", "で", "と", "を", "が")
# No Japanese word starts with these: a particle before one is the word's own
# first syllable (にんじん, のっぽ), not a particle.
_NEVER_FIRST = frozenset("んンっッゃゅょャュョぁぃぅぇぉァィゥェォーゎゕゖ")


def _split(term: Term, spans: list[Span]) -> list[tuple[Term, bool]]:
    """``term`` cut at ``spans``, in order: each piece and whether it was cut out.
    A particle left behind a piece cut out (the 에 of ``11일에``, the に of
    ``3月8日に`` and of ``3月8日にさくらと``) went with it: it is no word of its own."""
    text = term.text
    pieces: list[tuple[Term, bool]] = []
    pos = 0
    for start, end in sorted(spans) + [(len(text), len(text))]:
        start = max(start, pos)
        for a, b, cut in ((pos, start, False), (start, end, True)):
            piece = text[a:b].strip()
            after_cut = not cut and pieces and pieces[-1][1]
            glued = next((p for p in _JA_GLUED if piece.startswith(p)), "") if after_cut else ""
            if glued and len(piece) > len(glued) and piece[len(glued)] not in _NEVER_FIRST:
                piece = piece[len(glued) :]
            if piece and (cut or not (after_cut and piece in _LEFT_BEHIND)):
                pieces.append((Term(piece, term.prefix and b == len(text)), cut))
        pos = max(pos, end)
    return pieces


def time_words(q: Query) -> tuple[TimeWords, ...]:
    """The time words of a best match written without quotes, in query order."""
    return read_question(q, _no_stop_words).times if q.loose else ()


def _no_stop_words(_text: str) -> bool:
    return False  # time words do not depend on them


@functools.lru_cache(maxsize=256)
def read_question(q: Query, is_stop: Callable[[str], bool]) -> Reading:
    """``q``'s top-level words as a best match searches them (the module docstring).

    ``is_stop(word)``: whether a word is a common word, never a category's
    noun (``which of``).  A query that is not a best match (``q.loose``
    false) is left as it is.
    """
    words = _top_words(q)
    if not q.loose:
        return Reading(tuple(words), written=frozenset(q.bare))
    words, possessives = _possessives(words, is_stop)
    written = frozenset(term.text for term, unquoted in words if unquoted)
    marks: list[list[Span]] = [[] for _ in words]
    times = _mark_times(words, marks)
    categories = _mark_categories(words, marks, is_stop)
    out: list[Word] = []
    aside: list[Term] = []
    for (term, unquoted), spans in zip(words, marks):
        if not spans:
            out.append((term, unquoted))
            continue
        for piece, cut in _split(term, spans):
            out.append((piece, not cut))  # a cut word is kept whole if nothing else is left
            if cut:
                aside.append(piece)
    notes = []
    if possessives:
        notes.append("read possessives as the name: " + ", ".join(possessives))
    if categories:
        notes.append(
            "left out category words, since a conversation names the thing, not its kind: "
            + ", ".join(dict.fromkeys(categories))
        )
    return Reading(tuple(out), frozenset(aside), tuple(times), tuple(notes), written)


# ---------------------------------------------------------------------------
# Time words: what a question's dates and relative words name


FIRST_YEAR = 1970  # a date without a year: that day in each year from here to now's


@dataclass(frozen=True)
class TimeWords:
    """One time expression as written, and what it names.

    ``back`` set: a relative expression, ``back`` ``unit``\\ s before now's
    (0: this one); with ``within``, the ``back`` ``unit``\\ s up to today
    ("the past 3 days").  ``weekday`` (0: Monday) set: that day of this week
    (``back`` 0), of last week (1), the last one before today or last week's
    (-1: "last Tuesday" means either), or the last one up to today (None).
    Otherwise absolute: ``year`` None means every year.
    """

    text: str
    unit: str  # "day", "week", "month" or "year"
    back: int | None = None
    year: int | None = None
    month: int | None = None
    day: int | None = None
    within: bool = False
    weekday: int | None = None


_MONTH_NAMES = tuple(
    "January February March April May June July August September October November December".split()
)
_MONTHS = {name[:size].lower(): n for n, name in enumerate(_MONTH_NAMES, 1) for size in (3, 9)}
_MONTHS["sept"] = 9
_FULL_MONTHS = "|".join(name.lower() for name in _MONTH_NAMES)
_ANY_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
# "3 may break" is no date: after a number, "may" is the verb.
_DAY_FIRST_MONTH = "|".join(sorted(set(_MONTHS) - {"may"}, key=len, reverse=True))
_COUNTS = {"a": 1, "an": 1}
_COUNTS |= zip(
    "one two three four five six seven eight nine ten eleven twelve".split(), range(1, 13)
)
_HAN_DIGITS = {c: n for n, c in enumerate("〇一二三四五六七八九")} | {"两": 2, "兩": 2, "零": 0}
_NUM = r"\d{1,3}|[〇零一二两兩三四五六七八九十]{1,3}"  # Arabic or Chinese numerals
# Counts no one said exactly: "a few weeks ago" (几周前, 数週間前, 몇 주 전) is read
# as the past four weeks, a preference as wide as the words.
_VAGUE = frozenset("few several 几 幾 数 數 몇 며칠".split())  # 數: traditional 数
_VAGUE_BACK = 4
_N = f"({_NUM}|[几幾数數])"
_EN_N = rf"(\d{{1,3}}|{'|'.join(_COUNTS)}|(?:a\s+)?(?:few|couple(?:\s+of)?)|several)"
# Korean counts a week or a month in native numerals (한 달 전, 두 주 전), days in
# words of their own (하루, 이틀), and "a week" as 일주일: none was read before.
_KO_COUNTS = dict(zip("한 두 세 네 다섯 여섯 일곱 여덟 아홉 열".split(), range(1, 11)))
_KO_COUNTS |= dict(zip("하루 이틀 사흘 나흘".split(), range(1, 5))) | {"일": 1}
_KO_NATIVE = "|".join(
    sorted(_KO_COUNTS.keys() - {"하루", "이틀", "사흘", "나흘", "일"}, key=len)[::-1]
)
_KO_N = rf"(\d{{1,3}}|몇|(?<![가-힣])(?:{_KO_NATIVE}))"
_DAY_SUFFIX = r"(?:st|nd|rd|th)?"
_YEAR = r"(19[7-9]\d|2\d{3})"

# Relative words with a fixed distance: (pattern, unit, back).  A step further back
# (大前天, 上上周, 先々週, 지지난주) starts before the nearer word: read first, whole.
_FIXED = [
    (r"大前天|前前天|さきおととい|一昨昨日|그끄저께|그끄제", "day", 3),
    (r"\bthe\s+day\s+before\s+yesterday\b|前天|一昨日|おととい|그저께|그제", "day", 2),
    (r"\byesterday\b|\blast\s+night\b|昨天|昨日|昨晚|昨夜|어제|어젯밤", "day", 1),
    (
        r"\btoday\b|\btonight\b|\bthis\s+(?:morning|afternoon|evening)\b|今天|今日|今早|"
        r"今晚|今朝|今夜|오늘",
        "day",
        0,
    ),
    (
        r"\bthe\s+week\s+before\s+last\b|上上(?:个|個)?(?:周|週|星期|礼拜|禮拜)末?|"
        r"先[々先]週末?|지지난\s*주말?",
        "week",
        2,
    ),
    (
        r"\b(?:last|previous)\s+week(?:end)?\b|上周末?|上週末?|上(?:个|個)?(?:星期|礼拜|禮拜)|"
        r"先週末?|지난\s*주말?|저번\s*주말?",
        "week",
        1,
    ),
    (
        r"\bthis\s+week(?:end)?\b|这周末?|這週末?|本周末?|本週末?|这(?:个)?星期|這(?:個)?星期|"
        r"今週末?|이번\s*주말?",
        "week",
        0,
    ),
    (
        r"\bthe\s+month\s+before\s+last\b|上上(?:个|個)?月(?![球亮光])|先[々先]月|지지난\s*달",
        "month",
        2,
    ),
    (
        r"\b(?:last|previous)\s+month\b|上(?:个|個)?月(?![球亮光])|先月|지난\s*달|저번\s*달",
        "month",
        1,
    ),
    (r"\bthis\s+month\b|这(?:个)?月|這(?:個)?月|本月|今月|이번\s*달", "month", 0),
    (r"大前年|さきおととし|一昨昨年", "year", 3),
    (r"\bthe\s+year\s+before\s+last\b|前年|一昨年|おととし|재작년|그러께", "year", 2),
    (r"\b(?:last|previous)\s+year\b|去年|昨年|작년|지난\s*해", "year", 1),
    (r"\bthis\s+year\b|今年|올해|금년", "year", 0),
]
# "N <unit>s ago" in each language: (pattern with the count as group 1, unit).
_AGO = [
    (
        rf"\b{_EN_N}\s+days?\s+ago\b|(?<!\d){_N}\s*(?:天|日)\s*前|(?<!\d){_KO_N}\s*일\s*전|(며칠)\s*전"
        r"|(?<![가-힣])(하루|이틀|사흘|나흘)\s*전",
        "day",
    ),
    (
        rf"\b{_EN_N}\s+weeks?\s+ago\b|(?<!\d){_N}\s*(?:个|個)?\s*(?:星期|周|週|礼拜|禮拜|週間)\s*前"
        rf"|(?<!\d){_KO_N}\s*주(?:일)?\s*전|(?<![가-힣])(일)주일\s*전",
        "week",
    ),
    (
        rf"\b{_EN_N}\s+months?\s+ago\b|(?<!\d){_N}\s*(?:个|個|ヶ|か|カ|ケ|箇)\s*月\s*前"
        rf"|(?<!\d){_KO_N}\s*(?:달|개월)\s*전",
        "month",
    ),
    (rf"\b{_EN_N}\s+years?\s+ago\b|(?<!\d){_N}\s*年\s*前|(?<!\d){_KO_N}\s*년\s*전", "year"),
]
# "the past 3 days", "过去一周": the units up to today (pattern, count group, unit group).
_UNITS = {
    **dict.fromkeys("day days 天 日 일".split(), "day"),
    **dict.fromkeys("week weeks 周 週 星期 礼拜 禮拜 週間 주".split(), "week"),
    **dict.fromkeys("month months 月 か月 ヶ月 カ月 ケ月 箇月 개월 달".split(), "month"),
    **dict.fromkeys("year years 年 년".split(), "year"),
}
_EN_SOME = "|".join([r"\d{1,3}", *_COUNTS, "few", "couple"])  # "the past few days"
_WITHIN = [
    rf"\b(?:last|past)\s+(?P<n>{_EN_SOME})(?:\s+of)?\s+(?P<u>days|weeks|months|years)\b",
    r"\bpast\s+(?P<u>day|week|month|year)\b",
    rf"(?:过去|過去|最近|近)\s*(?P<n>{_NUM}|几|幾)\s*(?:个|個)?\s*(?P<u>天|周|週|星期|礼拜|禮拜|月|年)",
    r"(?:这|這)(?P<n>几|幾)(?P<u>天)",
    r"(?<![\u4e00-\u9fff])前(?P<n>几|幾)(?:个|個)?(?P<u>天|周|週|月|年)",  # 前几天: a few days ago
    rf"(?:過去|直近|ここ)\s*(?P<n>{_NUM})\s*(?P<u>日|週間|か月|ヶ月|カ月|ケ月|箇月|年)(?:間)?",
    rf"(?:지난|최근)\s*(?P<n>\d{{1,3}}|{_KO_NATIVE})\s*(?P<u>일|주|개월|달|년)(?:\s*간|\s*동안)?",
]
# "recently", 最近, 최근: a stretch of no length said, read as the last LATELY_DAYS
# days, a preference only.  After 离 or 距, 最近 is "nearest" (离公司最近的车站).
_LATELY = r"\brecently\b|\blately\b|最近|최근|近頃|このごろ"
LATELY_DAYS = 30
# Weekdays: "last Tuesday", "上周二", "火曜日", "화요일" (pattern, which week: see TimeWords).
_WEEKDAY_NAMES = "monday tuesday wednesday thursday friday saturday sunday".split()
_EN_DAYS = "|".join(_WEEKDAY_NAMES)
_WEEKDAY_CHARS = dict(zip("一二三四五六日天", (0, 1, 2, 3, 4, 5, 6, 6)))
_WEEKDAY_CHARS |= dict(zip("月火水木金土", range(6))) | dict(zip("월화수목금토일", range(7)))
# Which week a weekday's prefix names: 0 this one, 1 last week, 2 the week before.
_WEEK_PREFIXES = ("这 這 本 今週 이번", "上 先週 지난 저번", "上上 先々週 先先週 지지난")
_WEEKS = {word: back for back, words in enumerate(_WEEK_PREFIXES) for word in words.split()}
# 一 and 日 begin common words after a week word: 上周一起 is "together last week",
# not last Monday, 上周日本 "Japan last week", not last Sunday.
_ZH_WEEKDAY = (
    r"[二三四五六天]|一(?![起直定样樣下些般共切点點会會])|日(?![本子常期记記程志语語文元])"
)
_WEEKDAYS = [
    (rf"\b(?:last|previous)\s+({_EN_DAYS})\b", -1),
    (rf"\bthis\s+({_EN_DAYS})\b", 0),
    (rf"\bon\s+({_EN_DAYS})\b(?!s)", None),
    (rf"(?<!每)(上上|上|这|這|本)?(?:个|個)?(?:周|週|星期|礼拜|禮拜)({_ZH_WEEKDAY})", None),
    (r"(?:(先々週|先先週|先週|今週)の?)?([月火水木金土日])曜日?", None),
    (r"(?:(지지난|지난|저번|이번)\s*주\s*)?([월화수목금토일])요일", None),
]
# Dates, with named groups y (year), m (month number or name) and d (day).
_DATES = [
    r"(?<![\w-])(?P<y>\d{4})[-/.](?P<m>\d{1,2})[-/.](?P<d>\d{1,2})(?![\w-])",
    r"(?<![\w-])(?P<y>\d{4})-(?P<m>\d{2})(?![\w-])",
    rf"\b(?P<m>{_ANY_MONTH})\.?\s+(?P<d>\d{{1,2}}){_DAY_SUFFIX}(?:,?\s+(?P<y>\d{{4}}))?\b",
    rf"\b(?P<d>\d{{1,2}}){_DAY_SUFFIX}\s+(?:of\s+)?(?P<m>{_DAY_FIRST_MONTH})\b\.?(?:\s+(?P<y>\d{{4}})\b)?",
    rf"\b(?P<m>{_ANY_MONTH})\.?\s+(?P<y>{_YEAR})\b",
    # A month alone is a word too ("may", "march"): read only after in/during.
    rf"\b(?:in|during)\s+(?:early\s+|late\s+|mid\s+)?(?P<m>{_FULL_MONTHS})\b(?:,?\s+(?P<y>{_YEAR})\b)?",
    rf"\b(?:in|during)\s+(?P<y>{_YEAR})\b",
    rf"(?<!\d)(?P<y>\d{{4}})\s*[年년]\s*(?P<m>{_NUM})\s*[月월]\s*(?P<d>{_NUM})\s*[日号號일]",
    rf"(?<!\d)(?P<m>{_NUM})\s*[月월]\s*(?P<d>{_NUM})\s*[日号號일]",
    rf"(?<!\d)(?P<y>\d{{4}})\s*[年년]\s*(?P<m>{_NUM})\s*[月월](?!\s*前)",
    rf"(?<!\d)(?P<m>{_NUM})\s*月份?(?!\s*前)",
    r"(?<!\d)(?P<m>\d{1,2})\s*월(?!\s*전)",
    r"(?<!\d)(?P<y>\d{4})\s*[年년](?!\s*前|\s*전)",
]
_FLAGS = re.IGNORECASE


def _number(text: str) -> int | None:
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


def _plain(count: str) -> str:
    """A count as written, lower-cased, without "a" and "of" (``a couple of``)."""
    return " ".join(count.lower().split()).removeprefix("a ").removesuffix(" of")


def _date_words(match: re.Match[str]) -> TimeWords | None:
    """A matched date as TimeWords, None when it names no real day or month."""
    found = match.groupdict()
    year = int(found["y"]) if found.get("y") else None
    month_text = found.get("m")
    month = None
    if month_text:
        month = _MONTHS.get(month_text.lower().rstrip(".")) or _number(month_text)
    day = _number(found["d"]) if found.get("d") else None
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


def _candidates(text: str) -> list[tuple[int, int, TimeWords]]:
    found = []
    for pattern, unit, back in _FIXED:
        for m in re.finditer(pattern, text, _FLAGS):
            found.append((m.start(), m.end(), TimeWords(m.group(0), unit, back)))
    for pattern, unit in _AGO:
        for m in re.finditer(pattern, text, _FLAGS):
            said = _plain(next(g for g in m.groups() if g))
            count, vague = _number(said), said in _VAGUE
            if count is not None:
                back = _VAGUE_BACK if vague else count
                found.append((m.start(), m.end(), TimeWords(m.group(0), unit, back, within=vague)))
    for pattern in _DATES:
        for m in re.finditer(pattern, text, _FLAGS):
            words = _date_words(m)
            if words is not None:
                found.append((m.start(), m.end(), words))
    for m in re.finditer(_LATELY, text, _FLAGS):
        if m.group() != "最近" or not re.search("[离離距]", text[: m.start()]):
            found.append(
                (m.start(), m.end(), TimeWords(m.group(), "day", LATELY_DAYS, within=True))
            )
    return found + _stretch_candidates(text)


def _stretch_candidates(text: str) -> list[tuple[int, int, TimeWords]]:
    """The past few units up to today ("the past 3 days") and weekdays ("last Tuesday")."""
    found = []
    for pattern in _WITHIN:
        for m in re.finditer(pattern, text, _FLAGS):
            n = (m.groupdict().get("n") or "1").lower()
            count = _number(n)
            unit = _UNITS.get(m.group("u").lower())
            if count and unit:
                found.append((m.start(), m.end(), TimeWords(m.group(0), unit, count, within=True)))
    for pattern, which in _WEEKDAYS:
        for m in re.finditer(pattern, text, _FLAGS):
            *week, day = m.groups()
            back = which if not week or week[0] is None else _WEEKS[week[0]]
            weekday = (
                _WEEKDAY_CHARS[day] if day in _WEEKDAY_CHARS else _WEEKDAY_NAMES.index(day.lower())
            )
            found.append((m.start(), m.end(), TimeWords(m.group(0), "day", back, weekday=weekday)))
    return found


def find_time_words(text: str) -> list[tuple[int, int, TimeWords]]:
    """The time expressions in ``text`` as ``(start, end, TimeWords)``, in text order.

    Overlapping readings go to the one that starts first, then the longest
    (``3月8号`` is a day, not the month ``3月``).
    """
    chosen: list[tuple[int, int, TimeWords]] = []
    for start, end, words in sorted(_candidates(text), key=lambda c: (c[0], c[0] - c[1])):
        if not chosen or start >= chosen[-1][1]:
            chosen.append((start, end, words))
    return chosen


def _shift_month(year: int, month: int, back: int) -> tuple[int, int]:
    index = year * 12 + month - 1 - back
    return index // 12, index % 12 + 1


def _span(unit: str, year: int, month: int, day: int) -> tuple[date, date]:
    """The ``unit`` that starts on the given day, as [first day, day after)."""
    first = date(year, month, day)
    if unit == "day":
        return first, first + timedelta(days=1)
    if unit == "week":
        return first, first + timedelta(days=7)
    if unit == "month":
        y, m = _shift_month(year, month, -1)
        return first, date(y, m, 1)
    return first, date(year + 1, 1, 1)


def _weekdays(words: TimeWords, today: date) -> list[date]:
    """The days a weekday names (``TimeWords``), counted from ``today``."""
    day = words.weekday or 0
    monday = today - timedelta(days=today.weekday())
    if words.back is None:  # the last one, today included
        return [today - timedelta(days=(today.weekday() - day) % 7)]
    if words.back >= 0:
        return [monday + timedelta(days=day - 7 * words.back)]
    before = today - timedelta(days=(today.weekday() - day - 1) % 7 + 1)
    return sorted({before, monday + timedelta(days=day - 7)})


def _within(words: TimeWords, today: date) -> date:
    """The first day of "the past ``back`` ``unit``\\ s" up to ``today``."""
    n = words.back or 0
    if words.unit in ("day", "week"):
        return today - timedelta(days=n * (7 if words.unit == "week" else 1))
    year, month = _shift_month(today.year, today.month, n * (12 if words.unit == "year" else 1))
    return date(year, month, min(today.day, 28))


def _days(words: TimeWords, today: date) -> list[tuple[date, date]]:
    if words.weekday is not None:
        return [_span("day", d.year, d.month, d.day) for d in _weekdays(words, today)]
    if words.within:
        return [(_within(words, today), today + timedelta(days=1))]
    if words.back is not None:
        if words.unit == "day":
            return [_span("day", *(today - timedelta(days=words.back)).timetuple()[:3])]
        if words.unit == "week":
            monday = today - timedelta(days=today.weekday() + 7 * words.back)
            return [_span("week", monday.year, monday.month, monday.day)]
        if words.unit == "month":
            return [_span("month", *_shift_month(today.year, today.month, words.back), 1)]
        return [_span("year", today.year - words.back, 1, 1)]
    years = [words.year] if words.year is not None else range(FIRST_YEAR, today.year + 1)
    spans = []
    for year in years:
        try:
            spans.append(_span(words.unit, year, words.month or 1, words.day or 1))
        except ValueError:  # 29 February in a year without one
            continue
    return spans


def _seconds(day: date) -> float:
    return datetime(day.year, day.month, day.day).timestamp()  # local midnight


def _today(now: float) -> date | None:
    """``now``'s local date; None where no date holds it (a ``now`` of 1e300)."""
    try:
        return datetime.fromtimestamp(now).date()
    except (ValueError, OverflowError, OSError):
        return None


def _calendar_days(words: TimeWords, today: date) -> list[tuple[date, date]]:
    """``_days``, none where they would pass the calendar's ends ("today" on
    9999-12-31, "last year" in year 1): a ``now`` a caller chose, not a failed search."""
    try:
        return _days(words, today)
    except (ValueError, OverflowError):
        return []


def windows(words: TimeWords, now: float) -> tuple[tuple[float, float], ...]:
    """``words`` as ``[start, end)`` Unix-second ranges of local time, counted from ``now``."""
    today = _today(now)
    return () if today is None else _windows(words, today)


@functools.lru_cache(maxsize=256)  # a day in every year is 57 windows; each search asks
def _windows(words: TimeWords, today: date) -> tuple[tuple[float, float], ...]:
    # A stretch that starts before FIRST_YEAR ("the past 100 years") holds every
    # message from then on: cut there, not dropped as a time no message has.
    first = date(FIRST_YEAR, 1, 1)
    try:
        return tuple(
            (_seconds(max(a, first)), _seconds(b))
            for a, b in _calendar_days(words, today)
            if b > first
        )
    except (ValueError, OverflowError, OSError):  # local midnight of 9999-12-31 east of UTC
        return ()


def describe(words: TimeWords, now: float) -> str:
    """The days ``words`` names, for a note: ``2026-11-23 – 2026-11-29``, or a
    date in every year (``March 8 of every year``)."""
    if words.back is None and words.year is None and words.weekday is None:
        month = _MONTH_NAMES[(words.month or 1) - 1]
        return f"{month} {words.day} of every year" if words.day else f"{month} of every year"
    today = _today(now)
    spans = [] if today is None else _calendar_days(words, today)
    if not spans:
        return "no day the calendar holds"
    said = []
    for first, after in spans:  # one span, or the two days of "last Tuesday"
        last = after - timedelta(days=1)
        said.append(first.isoformat() if first == last else f"{first} – {last}")
    return " or ".join(said)
