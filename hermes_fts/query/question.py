"""Reading a question: which of its words name what a conversation says.

A best match (``best.best_match``) searches the words of a question as a
model writes it.  These words there do not name anything a
conversation says, and would decide the match if searched (docs/QUERY.md,
"Reading a question"):

* a possessive: ``Anna's`` is the word ``Anna`` (the tokenizer would make it
  the phrase "anna s");
* a category word: the ``hobby`` of "what kind of hobby", the ``数据库`` of
  "哪种数据库": the conversation names the thing (bouldering), not its kind;
* time words: "last week", "3月8号", "先週", "지난주": a message's date is
  its timestamp (``request.search_preferring`` turns them into a time preference);
* the particles a quoted phrase carries (``「東京タワー」に行った``): its grammar,
  no word of the one after it.

Only words written without quotes are read; a quoted phrase is searched as
written.  The common words a best match leaves out while others remain
(``STOP_WORDS``, ``CJK_STOP_WORDS``) are listed here too.  This module knows
words, not SQL.

Which stretches are time words is ``query/timeranges.py``'s;
what the search does with them is docs/QUERY.md's "Time words" and
docs/DESIGN.md §6.4c.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass

from .._index_text import fold_width, has_cjk
from .cjk_forms import KOREAN_PARTICLES, korean_stem
from .timeranges import find_time_words
from .timewords import TimeWords
from .tree import AllOf, Query, Term

__all__ = [
    "ALONE_NOTE",
    "CJK_FUNCTION_CHARS",
    "CJK_STOP_WORDS",
    "HAN_PAIR",
    "KO_ASKED",
    "KO_ENDINGS",
    "KO_SAID",
    "STOP_WORDS",
    "Reading",
    "common_contraction",
    "lone_possessive",
    "read_question",
    "time_words",
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
mention mentioned mentions mentioning told tells telling chatted chatting
remind reminded remembered recalled spoke spoken asked earlier previously regarding
""".split()
)
# A CJK bigram holding one of these characters is mostly grammar (的, 了, 吗, 什么):
# 是 (is) is in hardly any noun, and its bigrams in a question straddle two
# words (`新干线是` gives 线是).
CJK_FUNCTION_CHARS = frozenset("的了吗呢吧啊呀么什哪谁是")
# The last lines frame a question (你还记得…, …的对话, 怎么回事, 讨论过, 聊了, 話した;
# 上次聊天 (when we chatted last time), 关于 (about), 你刚才告诉我 (you just told me);
# あなたが前に言った (you said before), 覚えていますか, 教えて (tell me), 前回の会話, の件;
# 先ほど, 先程 (a moment ago), この前話した (we talked the other day), 何か (anything);
# 기억나요, 얘기한, 알려 주세요, 얘기한 거: the thing we talked about; 네가 전에 말했던,
# you said before; 지난번 대화, last time's conversation; 배포에 관해, about; 뭐였지, what
# was it; 어느, which; 그, 저 and 이 written apart, that and this) and name nothing
# a conversation is about.
CJK_STOP_WORDS = frozenset(
    """
时候 怎样 怎么 为什 我们 你们 他们 她们 这个 那个 一个 是不 有没 没有 是否 曾经 以前 之前 哪里 哪儿
いつ どこ なに なん だれ どう どの どれ です ます した ました でし まし ませ ない たの 何 話 時 方
언제 어디 무엇 누가 누구 어떻 어떤 무슨 했나 나요 습니 니까 까요 있나 었나 였나 인가
记得 还记 你还 对话 讨论 聊过 论过 谈过 说过 讲过 问过 提过 聊到 说到 谈到 讲到 提到 提起 回事 聊的
聊了 说了 谈了 讲了 问了 提了 話し 到过
谈论 聊天 告诉 关于 上次 上回 刚才 刚刚 记不 不记
言っ 言い 言及 覚え 教え 聞い 会話 前回 あなた 私た 前 件
先ほ 先程 前話 何か
기억 기억나 얘기 얘기한 이야기 이야기한 알려 어떻게 뭐 뭐라고 무엇 뭐였 했죠 해요
대해 대한 우리 제가 내가 뭐에 뭐를 뭐가 뭘 거 것
대해서 관해 관해서 관한 대화 언급 논의 네가 너가 니가 당신 저희
전에 예전 지난번 저번 아까 그때 적 있어
뭐지 뭐였지 뭐더라 뭐였더라 어느 어디서 그 저 이 내 제 네 나 너
""".split()
)
# Endings of the Korean words that end a sentence: the question's predicate; and of
# one a question quotes (봤다고 했지, 있다고 했어: said that … saw, had), a form
# no answer holds (it says 봤어), found only in other chats that quote.
# So are the endings of an embedded question (샀는지 알려줘: tell me what … bought) and
# of a request (알려줘, 말해줄래).
KO_ENDINGS = ("요", "죠", "까", "니다", "다고", "라고", "더라", "는지", "줘", "줄래")
# A question word with its copula (뭐였어, 어디였지, 언제야): "what was it".
KO_ASKED = re.compile("(?:뭐|어디|언제|누구|무엇)(?:이었|였|이에|예|야|이야|지|더)[\uac00-\ud7a3]*")
# 말하다 (to say) as 하다 verbs are read (말했던, 말한): its noun is one syllable, which
# ``cjk_forms.korean_stem`` keeps, so it is named here.
KO_SAID = "말"


# The apostrophes a possessive is typed with: ASCII, curly (’, and ‘ where a keyboard's
# autocorrect turned it the wrong way), full width (a CJK keyboard, which types the s
# so too: Ａｎｎａ＇ｓ) and ʼ.  The name is a word as written, which may hold one
# itself or other marks (O'Brien's, v2.3.1's, PR-42's, state-of-the-art's).
_APOSTROPHES = "'\u2019\u2018\uff07\u02bc"
_POSSESSIVE = re.compile(rf"(\S*?\w)[{_APOSTROPHES}][sｓ]", re.IGNORECASE)
# A pronoun's or auxiliary's contraction (we'll, they're, I've, I'm, didn't, won't):
# searched, didn't was a rare word deciding the match.  Read after ``fold_width``.
_CONTRACTION = re.compile(
    rf"(\S*?\w)(?:[{_APOSTROPHES}](?:s|ll|re|ve|m|d)|(n[{_APOSTROPHES}]t))", re.I
)
# "what kind of X", "which type of X", "what sorts of X": X names a category.
_ASKING = frozenset({"what", "which"})
_KINDS = frozenset({"kind", "kinds", "type", "types", "sort", "sorts"})
# "which X" asks only where a question or its clause starts: after a noun,
# "which" is relative ("the bug which crashed") and the word after it a verb.
_ASKS_AFTER = frozenset("in on at from to for with of by about during into and or".split())
# The verb a question's noun phrase ends at: "which Python version did we pin" asks for
# a version, the last noun, and "Python" narrows it, a word the answer says.
_AUXILIARIES = frozenset(
    "do does did is are was were has have had will would can could should may might".split()
)
_MAX_MODIFIERS = 2
# The noun after these names a category too: Chinese (see ``_zh_noun_end``), Japanese
# (its kanji or katakana run) and Korean (the next word).
# Not 哪个 ("which one"): it mostly picks among things named before.
# Grammar after a noun: no part of it (城市了, 城市的 were cut out as the noun).
_AFTER_NOUN = "是有的了在吗呢吧"
_GRAMMAR = frozenset(_AFTER_NOUN) | CJK_FUNCTION_CHARS
_ZH_ASKING = re.compile(
    "什么样的?|什麼樣的?|什么类型的|什麼類型的|什么种类的|什麼種類的|哪种|哪種|哪些|哪类|哪類"
)
# What starts the predicate after a Chinese noun, never the end of one (哪种书比较好: 书,
# not 书比): adverbs, 给 and a pronoun, but one ending a noun (吉他, 迷你).
# Not 更 (变更), 都 (京都), 能 (功能).
_ZH_PREDICATE = tuple("比较 比較 非常 特别 特別 可以 应该 應該 最 很 不 给 給".split())
_ZH_PRONOUNS = tuple("你您我她他它妳")
_ZH_PRONOUN_NOUNS = frozenset("吉他 其他 其它 迷你".split())
# 健康问题, 旅行计划: a longer run goes on into words we cannot cut; before a pronoun
# (运动适合我们), the fourth character is as often a verb's.
_ZH_NOUN = 4
_JA_CATEGORY = re.compile(
    "(?:どんな|どの|どういう|どういった|何の|なんの|何という|なんという|なんていう|何て)"
    "([\u4e00-\u9fff\u30a0-\u30ff\u3005]+)"
)
_KO_ASKING = frozenset({"어떤", "무슨"})
ALONE_NOTE = "left out characters a time or category word left alone in a sentence: "
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
    CJK sentence is cut into: what a note may name.  ``joins``: see the field.
    """

    words: tuple[Word, ...]
    aside: frozenset[Term] = frozenset()
    times: tuple[TimeWords, ...] = ()
    notes: tuple[str, ...] = ()
    written: frozenset[str] = frozenset()
    # (word, pair): the two Han characters across a time word's end, searched as a
    # part of the word after it (``HAN_PAIR``), never deciding on their own.
    joins: tuple[tuple[Term, Term], ...] = ()
    # One character a time or category word left alone in a sentence (``_left_alone``):
    # in ``aside``, and never searched on its own, even when nothing else is left.
    alone: frozenset[Term] = frozenset()
    # The nouns of category words (in ``aside``): what a question of nothing else is
    # searched as, never its question word (どんな助言: 助言, not どんな).
    nouns: frozenset[Term] = frozenset()


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


def common_contraction(text: str) -> bool:
    """Whether ``text`` is a common word with its 's, 'll, 're, 've, 'm or 'd (``it's``,
    ``let's``, ``we'll``, ``I'm``) or an auxiliary with n't (``didn't``, ``can't``):
    common itself, and named as written when left out (it was named ``it``)."""
    found = _CONTRACTION.fullmatch(fold_width(text))
    return found is not None and (
        found.group(2) is not None or found.group(1).lower() in STOP_WORDS
    )


def _possessives(
    words: list[Word], is_stop: Callable[[str], bool]
) -> tuple[list[Word], list[tuple[int, str, str]]]:
    """``Anna's`` and ``Anna’s`` written without quotes as ``Anna``, and the note's pairs,
    each with the word's position.

    ``it's`` and ``let's`` stay as written: common words, no possessive to name."""
    out, read = [], []
    for n, (term, unquoted) in enumerate(words):
        found = _POSSESSIVE.fullmatch(term.text) if unquoted else None
        if found is not None and not is_stop(found.group(1)):
            read.append((n, term.text, found.group(1)))
            term = Term(found.group(1), term.prefix)
        out.append((term, unquoted))
    return out, read


def _after_quotes(words: list[Word]) -> tuple[list[Word], str]:
    """The particles a quoted phrase carries (``「東京タワー」に行った``, ``"Anna"의``,
    ``"React组件"的用法``) cut off the word written after it, and the note's pairs:
    searched, they made a word of grammar (``に行った``, ``의``) that decided the match."""
    out: list[Word] = []
    read = []
    for n, (term, unquoted) in enumerate(words):
        if unquoted and n and not words[n - 1][1]:
            text = _unglued(term.text)
            if _particles_only(text):
                read.append(f"{term.text} (left out)")
                continue
            if text != term.text:
                read.append(f"{term.text} → {text}")
                term = Term(text, term.prefix)
        out.append((term, unquoted))
    return out, ", ".join(read)


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


def _mark_times(words: list[Word], marks: list[list[Span]], joins: list[Term]) -> list[TimeWords]:
    """Find the time words of each stretch; mark their characters in the words.  The
    two Han characters across a time word's end join ``joins`` (see ``HAN_PAIR``)."""
    found: list[TimeWords] = []
    for run in _stretches(words):
        text = " ".join(words[i][0].text for i, _ in run)
        for start, end, when in find_time_words(text):
            if _inside_korean_word(text, start, end):
                continue
            if len(found) == MAX_TIME_WORDS:  # a day in every year is 57 windows each
                return found
            found.append(when)
            for i, offset in run:
                lo, hi = max(start, offset), min(end, offset + len(words[i][0].text))
                if lo < hi:
                    marks[i].append((lo - offset, hi - offset))
                    word = words[i][0].text
                    if HAN_PAIR.fullmatch(word[hi - offset - 1 : hi - offset + 1]):
                        joins.append(Term(word[hi - offset - 1 : hi - offset + 1]))
    return found


_HANGUL = re.compile("[\uac00-\ud7a3]+")


def _inside_korean_word(text: str, start: int, end: int) -> bool:
    """Whether the Korean time word at ``text[start:end]`` is part of a longer word:
    Korean writes spaces, so one glued to more than its particles (오늘의집, a shop;
    최근접, nearest; 오늘날, nowadays) names no time, and cut out it left a piece
    of a word (의집, 접) to search."""
    before = _HANGUL.fullmatch(text[start - 1 : start + 1]) if start else None
    after = _HANGUL.match(text, end - 1)
    return bool(before) or (after is not None and not _particles_only(after.group()[1:]))


# A day or year word may end where another word starts: 前天津市长 is the former
# mayor of Tianjin, 前日本首相 a former Japanese prime minister, 今日头条 an app.
# Cut out, the time word took 天津 or 日本 with it; the pair across its end is
# searched too, a word if the sentence has one there.
HAN_PAIR = re.compile("[\u3400-\u4dbf\u4e00-\u9fff]{2}")


def _mark_categories(
    words: list[Word],
    marks: list[list[Span]],
    is_stop: Callable[[str], bool],
    owners: Collection[int] = (),
) -> tuple[list[str], set[str]]:
    """Mark category words (see the module docstring); return them as written, and
    their nouns as cut out (without the kind or question word before them).
    ``owners``: the positions of possessives read as their name, whose noun is the
    word after them (which Tom's book: the kind is book, Tom the one to find)."""
    found = []
    nouns: set[str] = set()
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
            if nxt < len(idx) and idx[nxt] in owners:
                nxt += 1  # which Tom's book: Tom is the one to find, book the kind
            if nxt < len(idx) and low[nxt].isalpha() and not is_stop(low[nxt]):
                nxt = _head_noun(low, [marks[i] for i in idx], nxt, is_stop)
                if not marks[idx[nxt]]:  # a time word is one already
                    # 취미를: the noun without its particle, which goes with it
                    stem = korean_stem(texts[nxt]) or texts[nxt]
                    marks[idx[nxt]].append((0, len(stem)))
                    found.append(kind + texts[nxt])
                    nouns.add(stem)
            elif kind:
                found.append(texts[k + 1])
        for i in idx:
            text = words[i][0].text
            for start, at, end in _cjk_categories(text, marks[i]):
                # The question word goes with its noun: どんな alone is no word either.
                # Two pieces, so a question of nothing else searches the noun (城市), not
                # 哪些城市 as written, which no message holds.
                if not any(a < end and start < b for a, b in marks[i]):
                    marks[i] += [(start, at), (at, end)]
                    found.append(text[at:end])
                    nouns.add(text[at:end])
    return found, nouns


def _cjk_categories(text: str, marks: list[Span]) -> Iterator[tuple[int, int, int]]:
    """The category words of a Chinese or Japanese ``text``: where each question word
    starts, and where its noun starts and ends; a Chinese noun ends where a time word
    (``marks``) starts (哪些活动昨天: 活动)."""
    for m in _ZH_ASKING.finditer(text):
        stop = min((a for a, _ in marks if a >= m.end()), default=len(text))
        end = _zh_noun_end(text[:stop], m.end())
        if end is not None:
            yield m.start(), m.end(), end
    for m in _JA_CATEGORY.finditer(text):
        yield m.start(), m.start(1), m.end()


def _zh_noun_end(text: str, at: int) -> int | None:
    """Where the Chinese noun starting at ``at`` ends: at the grammar or the predicate
    after it, all of it up to ``_ZH_NOUN`` characters (书, 数据库; 健康问题: cut at two,
    问题 was searched, found in every chat about a bug); a longer one, its first two,
    which a noun has (运动适合我们: 运动)."""
    end = at
    while end < len(text) and "\u4e00" <= text[end] <= "\u9fff" and text[end] not in _AFTER_NOUN:
        if end > at and _predicate_starts(text, end):
            break
        end += 1
    longest = _ZH_NOUN - text.startswith(_ZH_PRONOUNS, end)
    return None if end == at else end if end - at <= longest else at + 2


def _predicate_starts(text: str, at: int) -> bool:
    if text.startswith(_ZH_PRONOUNS, at):
        return text[at - 1 : at + 1] not in _ZH_PRONOUN_NOUNS
    return text.startswith(_ZH_PREDICATE, at)


def _head_noun(
    low: list[str], marks: list[list[Span]], at: int, is_stop: Callable[[str], bool]
) -> int:
    """The category's noun of an English noun phrase starting at ``at``: its last word
    where a verb of the question ends it within a few words (``health problem did``:
    ``problem``), else its first word (a verb past it is no word we know)."""
    for end in range(at + 1, min(at + _MAX_MODIFIERS + 2, len(low))):
        if low[end] in _AUXILIARIES:
            return end - 1
        if not low[end].isascii() or not low[end].isalpha() or is_stop(low[end]) or marks[end]:
            break
    return at


# Particles a date or a category word carries in Korean and Japanese.
_LEFT_BEHIND = frozenset([*KOREAN_PARTICLES, "に", "の", "は", "も", "から", "まで"])
# Japanese glues the particle to the words after it too (12月20日にさくらと…), and
# Chinese its 的 (上周的Docker镜像: last week's Docker image).
_GLUED = ("から", "まで", "に", "の", "は", "も", "で", "と", "を", "が", "的")
# No Japanese word starts with these: a particle before one is the word's own
# first syllable (にんじん, のっぽ), not a particle.  Nor does a word written in
# hiragana start with ら, り, る, れ or ろ (no native word does): the も of もらった,
# the と of とる.
_NEVER_FIRST = frozenset("んンっッゃゅょャュョぁぃぅぇぉァィゥェォーゎゕゖらりるれろ")
# Particles nothing stacks after (には and からの stack; をも, はも do not): the
# も of 昨日はもう寝た is the word's (もう, already), not a second particle.
_LAST_GLUED = ("は", "も", "を", "が")


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
            after_cut = bool(not cut and pieces and pieces[-1][1])
            piece = _unglued(piece) if after_cut else piece
            if piece and (cut or not (after_cut and _particles_only(piece))):
                pieces.append((Term(piece, term.prefix and b == len(text)), cut))
        pos = max(pos, end)
    return pieces


def _unglued(piece: str) -> str:
    """``piece`` without the particles a cut word left glued to its front, stacked too
    (the には of ``12月20日には会議``, the からの of ``先週からの会議``)."""
    while True:
        glued = next((p for p in _GLUED if piece.startswith(p)), "")
        if not glued or len(piece) <= len(glued) or piece[len(glued)] in _NEVER_FIRST:
            return piece
        piece = piece[len(glued) :]
        if glued in _LAST_GLUED:
            return piece


@functools.lru_cache(maxsize=256)
def _particles_only(piece: str) -> bool:
    """Whether ``piece`` is particles alone, stacked too (``까지는``, ``에는``): searched,
    it was a word that every sentence with the particles holds."""
    return not piece or any(
        piece.startswith(p) and _particles_only(piece[len(p) :]) for p in _LEFT_BEHIND
    )


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
    repeats = _as_written(words, q.bare)
    words = repeats or words
    words, particles = _after_quotes(words)
    words, possessives = _possessives(words, is_stop)
    written = frozenset(term.text for term, unquoted in words if unquoted)
    marks: list[list[Span]] = [[] for _ in words]
    pairs: list[Term] = []
    times = _mark_times(words, marks, pairs)
    owners = frozenset(n for n, _, _ in possessives)
    categories, nouns = _mark_categories(words, marks, is_stop, owners)
    out: list[Word] = []
    aside: list[Term] = []
    joins: list[tuple[Term, Term]] = []
    alone: list[str] = []
    for (term, unquoted), spans in zip(words, marks):
        if not spans:
            out.append((term, unquoted))
            continue
        before: Term | None = None  # the piece cut out just before
        split = _split(term, spans)
        for n, (piece, cut) in enumerate(split):
            out.append((piece, not cut))  # a cut word is kept whole if nothing else is left
            if cut or _left_alone(term.text, split, n):
                aside.append(piece)
                alone += [] if cut else [piece.text]
            if not cut and before is not None:
                joins += [
                    (piece, pair)
                    for pair in pairs
                    if before.text.endswith(pair.text[0]) and piece.text.startswith(pair.text[1])
                ]
            before = piece if cut else None
    if repeats:
        out, aside = _once(out, aside, alone)
    notes = []
    # yesterday's, last week's: a time word, whose note says how it was read, no name
    names = [f"{said} → {name}" for _, said, name in possessives if Term(name) not in aside]
    if names:
        notes.append("read possessives as the name: " + ", ".join(names))
    if particles:
        notes.append("read the particles after a quoted phrase as its grammar: " + particles)
    if categories:
        notes.append(
            "left out category words, since a conversation names the thing, not its kind: "
            + ", ".join(dict.fromkeys(categories))
        )
    named = [ch for ch in alone if ch not in _GRAMMAR]  # 城市了: 了 is a common word
    if named:
        notes.append(ALONE_NOTE + ", ".join(dict.fromkeys(named)))
    return Reading(
        tuple(out),
        frozenset(aside),
        tuple(times),
        tuple(notes),
        written,
        tuple(joins),
        frozenset(Term(text) for text in alone),
        frozenset(term for term in aside if term.text in nouns),
    )


def _as_written(words: list[Word], bare: tuple[str, ...]) -> list[Word] | None:
    """The words of a question of plain words with their repeats, as written; None
    with no repeat.  The query keeps a word once, and "the team … the day before
    yesterday" was read without its second "the", as "yesterday"."""
    plain = all(unquoted and not term.prefix for term, unquoted in words)
    if (
        not plain
        or len(bare) == len(words)
        or list(dict.fromkeys(bare)) != [term.text for term, _ in words]
    ):
        return None
    return [(Term(text), True) for text in bare]


def _once(out: list[Word], aside: list[Term], alone: list[str]) -> tuple[list[Word], list[Term]]:
    """Each word once again (``_as_written``): searched where any of its repeats is
    not part of a time or category word, and left aside only where all are (a
    question of plain words: no quotes, so a word not searched is one cut)."""
    kept = {term for term, searched in out if searched and term.text not in alone}
    words = dict.fromkeys(term for term, _ in out)
    return [(term, term in kept) for term in words], [t for t in aside if t not in kept]


def _left_alone(text: str, split: list[tuple[Term, bool]], n: int) -> bool:
    """Whether piece ``n`` of ``text`` cut at its time or category words (``split``) is
    one Chinese or Japanese character glued to a piece cut out (the 我 of 我前天部署的,
    the 气 of 今天气): in a sentence with no spaces it was only part of a
    two-character word, and alone it is found in nearly every message.  One a
    particle parts from the cut (昨日は姉) stands alone as written: a word."""
    piece = split[n][0].text
    if len(piece) != 1 or not has_cjk(piece) or _HANGUL.match(piece):
        return False
    cut_before = n > 0 and split[n - 1][1] and split[n - 1][0].text + piece in text
    cut_after = n + 1 < len(split) and split[n + 1][1] and piece + split[n + 1][0].text in text
    return bool(cut_before or cut_after)
