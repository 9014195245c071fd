"""A best match: the words a question or a run of words is searched as.

Words next to each other with no operator, or a top-level OR of terms, are a
best match (``query/plan.py`` documents the language): rows with every word
come first, then rows with most of them, the rarer words counting more.  This
module decides which words those are, and says so in the query's notes:

* common and question words (``question.STOP_WORDS``, CJK particles) are left
  out while other words remain;
* a CJK run of three or more characters written without quotes may be a
  sentence with no spaces, so its bigrams are words too; Korean words are
  searched whole, without their particle;
* an English word is also searched as its stem's prefix
  (``query/wordforms.py``), and possessives, category and time words are read
  first (``query/question.py``).

No SQL and no routes: ``plan.evidence_units`` turns the result into MATCH text.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Collection, Sequence

from .._cjk_ranges import is_cjk
from .._index_text import fold_width, has_cjk, is_token_char, segments
from .cjk_forms import (
    KOREAN_HADA_ENDINGS,
    KOREAN_PARTICLES,
    before_honorific,
    hiragana_words,
    japanese_verb_forms,
    korean_stem,
    lone_kanji,
    lone_names,
    straddles,
)
from .question import (
    ALONE_NOTE,
    CJK_FUNCTION_CHARS,
    CJK_STOP_WORDS,
    HAN_PAIR,
    KO_ASKED,
    KO_ENDINGS,
    KO_SAID,
    STOP_WORDS,
    Reading,
    common_contraction,
    read_question,
)
from .syntax import OPERATOR_WORD, by_start
from .tree import AnyOf, Node, Query, Term
from .wordforms import form_pairs, forms_note, word_forms

__all__ = ["MAX_BEST_TERMS", "best_match", "parts_held", "words_held"]


MAX_BEST_TERMS = 32  # the words of one best match (MAX_LIKE_ALTERNATIVES)


def _is_stop(text: str) -> bool:
    if _korean(text):
        # Judged without its particle (무엇을 is 무엇); a word ending a sentence
        # (기억나요, 했었나요, 주세요) is the question's predicate.
        # A 하다 verb ending one (배포했어요) names its noun: only that noun decides.
        bare = korean_stem(text) or text
        predicate = len(text) > 2 and text.endswith(KO_ENDINGS) and bare == text
        # 하다 written apart from its noun (배포 했어): "did", naming nothing.
        did = len(text) > 1 and text in KOREAN_HADA_ENDINGS
        # 말했던, 말한: "said", framing the question as 얘기한 does.
        said = text.startswith(KO_SAID) and text[len(KO_SAID) :] in KOREAN_HADA_ENDINGS
        asked = KO_ASKED.fullmatch(text) is not None
        return bare in CJK_STOP_WORDS or predicate or did or said or asked
    if has_cjk(text):
        if text in CJK_STOP_WORDS or len(text) > 2:
            return text in CJK_STOP_WORDS
        # Hiragana alone is Japanese grammar: particles, endings (には, ました).
        return (
            any(c in CJK_FUNCTION_CHARS for c in text)
            or all(0x3041 <= ord(c) <= 0x309F for c in text)
            or straddles(text)
            or _pointing(text)
        )
    # ｔｈｅ, as a CJK keyboard in full-width mode types it, is the word every index reads
    return fold_width(text).lower() in STOP_WORDS or common_contraction(text)


def _indexable(text: str) -> bool:
    """Whether an index answers the word ``text`` as written: no lone CJK character
    among other parts (``plan.route_can_represent``)."""
    segs = segments(text)
    return len(segs) == 1 or all(len(seg) > 1 for cjk, seg in segs if cjk)


def _korean(text: str) -> bool:
    """Whether ``text`` holds Korean and no other CJK script: a word of a language
    that writes spaces, searched whole (with its particle cut, ``word_forms``)."""
    cjk = [c for c in text if has_cjk(c)]
    return bool(cjk) and all("\uac00" <= c <= "\ud7a3" for c in cjk)


def _parts(text: str) -> list[tuple[bool, str]]:
    """``segments`` of a word glued to CJK, but an identifier between two CJK runs one
    part, its edge punctuation dropped: ``v2.3.1的变化`` is ``v2.3.1`` and ``变化``.
    Split at its punctuation, an identifier was searched as its tokens apart, any
    of them (``1``, ``py``, ``com``), found in every message that holds one.  Words
    joined by hyphens alone (``budget-cli的``) stay words apart, as before: a
    project's name then anchors its sessions with the weight of each word
    (benchmarks/README.md, "Real histories")."""
    parts: list[tuple[bool, str]] = []
    for cjk, run in itertools.groupby(fold_width(text), key=lambda ch: is_cjk(ord(ch))):
        part = "".join(run)
        if not cjk:
            tokens = [n for n, ch in enumerate(part) if is_token_char(ch)]
            part = part[tokens[0] : tokens[-1] + 1] if tokens else ""
            if _HYPHENED_WORDS.fullmatch(part):
                parts += segments(part)
                continue
        if part:
            parts.append((cjk, part))
    return parts


_HYPHENED_WORDS = re.compile(r"[^\W\d_]+(?:[-_][^\W\d_]+)+")


def _pieces(term: Term) -> list[Term]:
    """A word written without quotes, as the words a best match looks for: a CJK run
    of three or more characters may be a sentence with no spaces, so each of
    its bigrams is a word; Latin glued to it is a word of its own.  The word
    itself stays one of them, so rows holding it as written rank first.  A
    lone CJK character between punctuation inside a word is mostly grammar and
    left out, unless the word holds nothing else (``中.文``).  Korean writes
    spaces: its words are searched whole, and without their particle."""
    if not has_cjk(term.text):
        return _with_forms(term)
    if _korean(term.text):
        # A particle glued to a Latin word (garden-bot의) leaves only its stem.
        whole = [t for t in _with_forms(term) if _indexable(t.text)]
        segs = _parts(whole[-1].text) if whole else []
        if len(segs) > 1 and any(c for c, _ in segs):
            # A name glued to a Korean word (Anna프로젝트) is each word too, as in Chinese.
            last = len(segs) - 1
            parts = [Term(s, term.prefix and n == last) for n, (_, s) in enumerate(segs)]
            whole += [f for p in parts for f in (_with_forms(p) if _korean(p.text) else [p])]
        if whole:
            return list(dict.fromkeys(whole))
    segs = _parts(term.text)
    # The word as written; one with a lone CJK character among other parts no
    # index answers exactly (query.route_can_represent).
    out = [term] if _indexable(term.text) else []
    for n, (cjk, seg) in enumerate(segs):
        prefix = term.prefix and n == len(segs) - 1
        if not cjk or len(seg) == 2:
            out.append(Term(seg, prefix))
        elif len(seg) > 2:
            out += [
                Term(seg[i : i + 2], prefix and i == len(seg) - 2)
                for i in range(len(seg) - 1)
                if not before_honorific(seg, i)
            ]
            out += [Term(w) for w in lone_names(seg)]
            out += [Term(w) for w in hiragana_words(seg) if w != seg]
            out += [Term(w) for w in lone_kanji(seg)]
            out += [Term(w) for w in _lone_hanzi(seg)]
        if cjk and len(seg) >= 2 and not prefix:
            out += _verb_forms(seg)
    lone = [
        Term(seg, term.prefix and n == len(segs) - 1)
        for n, (c, seg) in enumerate(segs)
        if c and len(seg) == 1
    ]
    return list(dict.fromkeys(out or lone))


def _verb_forms(run: str) -> list[Term]:
    """The bigrams of the other forms of the Japanese verbs in ``run`` (登る: 登っ, 登り),
    of a verb's bigram that decides: a form searched where its verb is not."""
    return [
        Term(form)
        for verb, form in japanese_verb_forms(run)
        if not _is_stop(verb) and not _is_stop(form)
    ]


# Grammar a one-character noun comes after: 什么书, 的书, 哪些书; the aspect marker
# of a framing verb (提到过猫, 聊过猫, 说了猫); a measure word after this or that (那本书).
_BEFORE_LONE = frozenset("么的些")
_ASPECT = frozenset("过了")
_POINTING = frozenset("这那哪")
_MEASURES = frozenset("个本家只条部首件位辆张台")


def _pointing(pair: str) -> bool:
    """这 or 那 and a measure word (那本, 这家): "that one", as 这个 and 那个 are; searched,
    那本 found "那本杂志" before the book the question is about."""
    return len(pair) == 2 and pair[0] in _POINTING and pair[1] in _MEASURES


def _lone_hanzi(run: str) -> list[str]:
    """The one-character nouns of a Chinese sentence with no spaces (no kana): a Han
    character after grammar (什么书, 的车, 哪些书, 提到过猫, 那本书) that ends the run
    or a word (书吗).  Its bigrams (么书, 过猫) are no word, and it was searched in none."""
    if any(0x3041 <= ord(c) <= 0x30FF for c in run):
        return []  # Japanese: ``lone_kanji``
    out = []
    for i in range(1, len(run)):
        ch, before = run[i], run[i - 1]
        ends = (
            i == len(run) - 1 or run[i + 1] in CJK_FUNCTION_CHARS or run[i + 1 : i + 3] in _CALLED
        )
        if not (HAN_PAIR.fullmatch(ch * 2) and ends) or ch in CJK_FUNCTION_CHARS:
            continue
        if before + ch == "么样" or run[max(i - 2, 0) : i] == "怎么":
            continue  # 什么样的, 怎么样: a question word; 怎么做: how to, a verb after it
        framed = before in _ASPECT and (
            run[max(i - 2, 0) : i] in CJK_STOP_WORDS or run[max(i - 3, 0) : i - 1] in CJK_STOP_WORDS
        )
        counted = before in _MEASURES and i > 1 and run[i - 2] in _POINTING
        if before in _BEFORE_LONE or framed or counted:
            out.append(ch)
    return out


def _one_character_note(terms: Sequence[Term]) -> list[str]:
    """A one-character CJK word is found wherever the character stands (unigrams)."""
    chars = [t.text for t in terms if len(t.text) == 1 and has_cjk(t.text)]
    if not chars:
        return []
    return [
        f"one-character words are found wherever the character appears, inside "
        f"longer words too: {', '.join(chars)}"
    ]


_KO_PARTICLES = frozenset(KOREAN_PARTICLES)


def _particles_apart(written: Sequence[tuple[Term, list[Term]]]) -> set[Term]:
    """One-syllable Korean particles written apart from the word before them (레슨 의
    병실): grammar, which as one-character words would be found inside every
    word holding the syllable.  One that starts the query (가 alone) is a word,
    and so may a longer one be (서연과 보다: to watch)."""
    return {
        word
        for (before, _), (word, _) in zip(written, written[1:])
        if len(word.text) == 1 and word.text in _KO_PARTICLES and _korean(before.text[-1:])
    }


def _word_pieces(reading: Reading) -> list[tuple[Term, list[Term]]]:
    """Each word of a question as read (``question.read_question``), with the terms it
    is searched as: the pair across a time word's end with the word after it."""
    return [
        (
            n,
            [*_pieces(n), *(pair for word, pair in reading.joins if word == n)]
            if unquoted
            else [n],
        )
        for n, unquoted in reading.words
    ]


def _written(q: Query) -> list[tuple[Term, list[Term]]]:
    """Each word of the best match ``q`` as written, with the terms it is searched as."""
    if isinstance(q.expr, AnyOf):  # an OR of words (_any_of_words): no question to read
        terms = [t for t in q.expr.options if isinstance(t, Term)]
        return [(t, _with_forms(t) if t.text in q.bare else [t]) for t in terms]
    return _word_pieces(read_question(q, _is_stop))


def _cut_words(written: list[tuple[Term, list[Term]]], kept: list[Term], keep: int) -> str:
    """The words as written whose terms fall past the first ``keep`` of ``kept``."""
    cut = set(kept[keep:])
    named = []
    for node, pieces in written:
        searched = [p for p in pieces if p in kept]
        if searched and any(p in cut for p in searched):
            whole = all(p in cut for p in searched)
            named.append(node.text if whole else f"part of {node.text}")
    return ", ".join(dict.fromkeys(named))


def _with_forms(term: Term) -> list[Term]:
    """A word as written, then (an English word, not a common one) its stem's prefix
    (``query/wordforms.py``): the form written ranks first."""
    forms = [form for form in word_forms(term) if not _is_stop(form.text)]
    return [term] if _is_stop(term.text) else [term, *forms]


def _any_of_words(q: Query) -> Query:
    """An explicit OR of terms ranked as a best match: every term kept (a common
    word OR'ed is meant), words without quotes in their forms, CJK whole."""
    kept = list(dict.fromkeys(piece for _, pieces in _written(q) for piece in pieces))
    if len(kept) > MAX_BEST_TERMS:  # every alternative is meant: rank them as one OR
        return Query(q.expr, q.notes)
    notes = [*q.notes, *forms_note([n for n, _ in _written(q) if n.text in q.bare], kept)]
    expr: Node = kept[0] if len(kept) == 1 else AnyOf(tuple(kept))
    forms = form_pairs([pieces for _, pieces in _written(q)], kept)
    return Query(expr, tuple(notes), loose=len(kept) > 1, bare=q.bare, forms=forms)


@functools.lru_cache(maxsize=256)
def best_match(q: Query) -> Query:
    """``q`` as the terms a best match looks for, any of them (an OR), or ``q`` itself
    when it has an operator, a parenthesis or NEAR (``Query.loose`` is false).

    Words without quotes that hold a CJK run of three or more characters are
    split into the run's bigrams (a question in Chinese or Japanese has no
    spaces).  Common and question words (``STOP_WORDS``, CJK particles) are
    left out while other words remain, with a note naming them.  The result
    keeps ``loose`` set when it has two or more terms: a search then ranks
    rows with every term first, then by how many terms they hold and how
    rare those are.
    """
    if not q.loose or q.expr is None:
        return q
    if isinstance(q.expr, AnyOf):
        return _any_of_words(q)
    # Possessives, category and time words read first (query/question.py).
    reading = read_question(q, _is_stop)
    written = _word_pieces(reading)
    terms: dict[Term, bool] = {}  # term: written without quotes (a stop word may go)
    for (_, unquoted), (_, pieces) in zip(reading.words, written):
        for piece in pieces:
            terms[piece] = terms.get(piece, False) or unquoted
    kept, notes = _kept_terms(q, reading, written, terms)
    if len(kept) > MAX_BEST_TERMS:
        # A LIKE scan tests every word on every row; a long paste says enough in its head.
        notes.append(
            f"a best match looks for at most {MAX_BEST_TERMS} words; not searched: "
            + _cut_words(written, kept, MAX_BEST_TERMS)
        )
        kept = kept[:MAX_BEST_TERMS]
    notes += forms_note([n for n, unquoted in reading.words if unquoted], kept)
    notes += _one_character_note(kept)
    notes += _lone_characters_note(written, kept)
    expr: Node = kept[0] if len(kept) == 1 else AnyOf(tuple(kept))
    forms = form_pairs([pieces for _, pieces in written], kept) + _bigram_words(written, kept)
    return Query(expr, tuple(notes), loose=len(kept) > 1, bare=q.bare, forms=forms)


def _bigram_words(
    written: Sequence[tuple[Term, list[Term]]], kept: Sequence[Term]
) -> tuple[tuple[Term, Term], ...]:
    """The bigrams searched of a sentence with no spaces that follow each other, two by
    two from where a run of them starts (张伟 with 伟说, 温泉 with 泉旅, then 旅馆): one
    word to a row's score, held once (``Query.forms``).  Of two overlapping bigrams
    at most one is a word of the sentence (or both are one word, 数据库), so a run
    of n characters holds about n / 2 words, not n - 1: counted apart, 温泉旅馆
    weighed three names, and a name with the verb after it (张伟说) two, so a chat
    saying 张伟说 often beat the one about the name and the thing asked."""
    searched = {t.text: t for t in kept if len(t.text) == 2 and not t.prefix}
    out: list[tuple[Term, Term]] = []
    for node, _ in written:
        for cjk, seg in _parts(node.text) if has_cjk(node.text) else ():
            run: list[Term] = []
            for i in range(len(seg)):  # one past the last pair: the run ends there
                pair = searched.get(seg[i : i + 2]) if cjk and i < len(seg) - 1 else None
                if pair is not None:
                    run.append(pair)
                    continue
                out += [(a, b) for a, b in zip(run[::2], run[1::2]) if a != b]
                run = []
    return tuple(dict.fromkeys(out))


def _lone_characters_note(
    written: Sequence[tuple[Term, list[Term]]], kept: list[Term]
) -> list[str]:
    """Words whose lone CJK character beside another part is not searched (``3시``
    as ``3``, ``第3版`` as ``3``): no index answers the word whole beside other
    words, and dropped without a word it was a silently different query.  A
    Korean particle (``Anna의``) is named by the forms note instead."""
    lost: dict[str, str] = {}  # the word as written: what of it is searched
    for node, pieces in written:
        segs = segments(node.text)
        searched = [p.text for p in pieces if p in kept]
        lone = [s for cjk, s in segs if cjk and len(s) == 1 and s not in searched]
        if node in pieces or len(segs) < 2 or not lone:
            continue
        if _korean(node.text) and all(ch in _KO_PARTICLES for ch in lone):
            continue
        how = f"as {' '.join(map(by_start, searched))}" if searched else "not at all"
        lost[by_start(node.text)] = how
    if not lost:
        return []
    return [
        "a lone CJK character beside a word is not searched among other words: "
        + ", ".join(f"{word} {how}" for word, how in lost.items())
        + f' (quote the word, "{next(iter(lost))}", to search it as written)'
    ]


def _kept_terms(
    q: Query,
    reading: Reading,
    written: Sequence[tuple[Term, list[Term]]],
    terms: dict[Term, bool],
) -> tuple[list[Term], list[str]]:
    """The terms a best match keeps of ``terms`` (each: written without quotes), and
    the query's notes with what was left out: common and question words, Korean
    particles written apart, symbols among words; all of them when nothing
    else remains."""
    aside = reading.aside
    grammar = _particles_apart(written) | _junctions(written, framing=False)
    pairs = {pair for _, pair in reading.joins}  # they never decide alone
    apart = (
        grammar | _junctions(written) | _framing_joins(reading) | _frames(written, grammar, pairs)
    )
    kept = [
        t
        for t, unquoted in terms.items()
        if not (unquoted and (_is_stop(t.text) or t in apart) or t in aside)
    ]
    notes = list(q.notes)
    if all(t in _sentences(written, pairs) or t in pairs for t in kept):
        # Only common words (a sentence of them counts no more: 我们讨论了什么):
        # they are what there is to find.  A character a time word left alone (the
        # 我 of 我昨天) is found in nearly every message: not while another is left.
        # A category's noun names the thing asked about, its question word nothing:
        # searched, どんな or 哪些 found every question as often as the noun.
        nouns = [t for t in terms if t in reading.nouns]
        kept = (
            nouns
            or [t for t in terms if t not in pairs and t not in reading.alone]
            or [t for t in terms if t not in pairs]
        )
        notes += [n for n in reading.notes if n.startswith(ALONE_NOTE)]
        if nouns:
            notes.append(
                "nothing else names a thing: searched only the noun after the question "
                "word: " + ", ".join(t.text for t in nouns)
            )
    else:
        # "make, wanted and Young": a best match already ranks rows with both words
        # first, and is an OR; a lower-case 'not' or 'near' keeps its note.
        gone = {
            OPERATOR_WORD.format(t.text + star, t.text.upper())
            for t in terms
            if t not in kept and t.text.upper() in ("AND", "OR")
            for star in ("", "*")
        }
        notes = [n for n in notes if n not in gone] + list(reading.notes)
    # A symbol among words (deploy 🚀): every route reads it as a space beside words,
    # and searched on its own it sent the whole question to the LIKE scan.
    symbols = [t for t in kept if terms[t] and not segments(t.text)]
    symbols = symbols if len(symbols) < len(kept) else []
    if symbols:
        kept = [t for t in kept if t not in symbols]
        notes.append(
            f"{' '.join(t.text for t in symbols)!r} is not searched: beside words a symbol "
            "is left out (search it on its own to find it)"
        )
    if len(kept) + len(symbols) < len(terms):
        # Named as written: a bigram cut out of a sentence is no word of the user's.
        dropped = ", ".join(
            t.text
            for t in terms
            if t not in {*kept, *aside, *symbols} and t.text in reading.written
        )
        if dropped:
            notes.append(f"left out common words that do not decide a match: {dropped}")
    return kept, notes


def _sentences(
    written: Sequence[tuple[Term, list[Term]]], pairs: Collection[Term] = ()
) -> set[Term]:
    """The words written as a CJK sentence with no spaces, searched by their parts too.
    ``pairs``: those across a time word's end, no part of the word after it (部署 of
    昨天部署, searched with 天部, is a word, not a sentence)."""
    return {
        n
        for n, pieces in written
        if len([p for p in pieces if p not in pairs]) > 1
        and has_cjk(n.text)
        and not _korean(n.text)
    }


def _junctions(written: Sequence[tuple[Term, list[Term]]], framing: bool = True) -> set[Term]:
    """Bigrams of a sentence with no spaces that join two common words (们讨 in
    我们讨论): a piece of each, no word of the user's.  A bigram common only by a
    particle (的指, 弹是) or across a Japanese particle (た仕, 事は) is a boundary,
    not a word: 指弹 and 仕事 between them are words.  In Chinese, so is one
    that starts where a common word ends (过部 of 讨论过部署, 们上 of 我们上次) and
    one holding a pronoun (你提 of 你提到, 跟我 of 跟我说): see ``_framing``; not
    with ``framing`` false (``_frames``: 们选 holds the 选 of 我们选了)."""
    out: set[Term] = set()
    for node in _sentences(written):
        for cjk, seg in segments(node.text):
            pairs = [seg[i : i + 2] for i in range(len(seg) - 1)] if cjk else []
            out |= {
                Term(pairs[i])
                for i in range(len(pairs))
                if 0 < i < len(pairs) - 1
                and _common(pairs[i - 1])
                and _common(pairs[i + 1])
                or framing
                and _framing(pairs, i)
            }
    return out


# The pronouns a question is put with (你提到, 我说过, 跟你说): glued to the verb
# beside them they make a bigram of grammar.  Words that hold one all the same:
_PRONOUNS = frozenset("你您我")
# "is called what" (猫叫什么名字): the noun before it ends there, and 猫叫 is no word.
_CALLED = frozenset({"叫什", "叫啥"})
# …and "how" (餐厅怎么样): 厅怎 is no word either.
_ASKED_AFTER = _CALLED | {"怎么", "怎样"}
_PRONOUN_WORDS = frozenset("自我 迷你 我国 我司 我方 忘我 你好".split())


def _framing(pairs: Sequence[str], i: int) -> bool:
    """Whether the Chinese bigram ``pairs[i]`` of a sentence only frames it: it starts
    where a common word ends (过部 of 讨论过部署: 部署 is the word) or holds a
    pronoun (你提 of 你提到什么部署).  Searched, it found every message that says
    "you mentioned" and ranked it beside the one about 部署."""
    pair = pairs[i]
    if not HAN_PAIR.fullmatch(pair) or _common(pair):
        return False  # kana: a Japanese pair across two words is ``straddles``'s
    after_common = i > 0 and _common(pairs[i - 1])
    # 妹叫 of 妹妹叫什么, 厅怎 of 餐厅怎么样: the word before ends in its own pair; at
    # the start (气怎 of 今天气怎么样, its 天气 across a time word's end) it decides
    asked = 0 < i < len(pairs) - 1 and pairs[i + 1] in _ASKED_AFTER
    return after_common or asked or (bool(_PRONOUNS & set(pair)) and pair not in _PRONOUN_WORDS)


def _frames(
    written: Sequence[tuple[Term, list[Term]]], apart: Collection[Term], pairs: Collection[Term]
) -> set[Term]:
    """Sentences with no spaces made of common words alone (你还记得, 我们讨论过,
    覚えていますか): each of their parts is left out, so the whole names nothing
    either.  Searched, 你还记得 found every chat that asks "do you remember".
    ``apart``: the particles and junctions left out, not the pairs that only frame:
    我们选了 is no frame, its 们选 holds the 选 (chose)."""
    sentences = _sentences(written, pairs)
    return {
        node
        for node, pieces in written
        if node in sentences
        and all(p == node or p in pairs or p in apart or _is_stop(p.text) for p in pieces)
    }


def _framing_joins(reading: Reading) -> set[Term]:
    """Pairs across a time word's end (``Reading.joins``) into a pronoun or a common
    word: 周你 of 上周你说的, 週話 of 先週話した.  Searched, they found every chat
    that says "this week I" (这周我很忙) before the one the question is about."""
    return {
        pair
        for word, pair in reading.joins
        if _framing([pair.text, word.text[:2]], 0) or _common(word.text[:2])
    }


def _common(pair: str) -> bool:
    return pair in CJK_STOP_WORDS


def words_held(q: Query, matched: Collection[str]) -> tuple[list[str], list[str], list[str]]:
    """The words of the best match ``q`` as written, by how much of each a row holds:
    all of it, some of it, none of it.  ``matched``: the row's ``matched_terms``.

    A sentence typed without spaces is searched as its two-character parts; a
    row with only some of them holds "some" of the sentence, so a note can
    name the words a person wrote, never an index's bigrams.  A word left out
    as common (and so not searched) is in none of the lists.
    """
    searched = {t.text for t in best_match(q).terms}
    held: tuple[list[str], list[str], list[str]] = ([], [], [])
    for node, pieces in _written(q) if q.loose else []:
        parts = [p for p in dict.fromkeys(t.text for t in pieces) if p in searched]
        if not parts:
            continue
        have = [p for p in parts if p in matched]
        whole = node.text in matched if node.text in parts else len(have) == len(parts)
        shown = node.text + "*" * node.prefix
        named = held[0 if whole else 1 if have else 2]
        named += [] if shown in named else [shown]  # a word written twice is named once
    return held


def parts_held(q: Query, matched: Collection[str]) -> list[tuple[str, list[str]]]:
    """Each word of ``q`` a row holds only in part (``words_held``), with the runs of it
    as written that the row holds: ``数据库`` of ``我们讨论了什么数据库``, its
    two-character parts joined where they overlap, so a note names what was typed,
    never an index's bigrams.  A pair across a time word's end (the ``周东`` of
    ``这周东京塔``) is named with what it crosses: it is no run of the word alone."""
    searched = {t.text for t in best_match(q).terms}
    out: list[tuple[str, list[str]]] = []
    for node, pieces in _written(q) if q.loose else []:
        parts = [p for p in dict.fromkeys(t.text for t in pieces) if p in searched]
        have = [p for p in parts if p in matched]
        if not have or (node.text in matched if node.text in parts else have == parts):
            continue
        shown = node.text + "*" * node.prefix
        if shown in (word for word, _ in out):
            continue
        out.append((shown, _runs(node.text, have)))
    return out


def _runs(text: str, held: Sequence[str]) -> list[str]:
    """The stretches of ``text`` that the parts ``held`` cover, in order, then the
    pairs that start before it (across a time word's end).  Only parts that
    overlap are joined (数据, 据库: 数据库); 扩容 and 集群 side by side may stand
    apart in the row, so they are named apart."""
    spans: list[tuple[int, int]] = []
    across = []
    for part in held:
        at = text.find(part)
        if at < 0 and text.startswith(part[1:]):
            across.append(f"{part} across a time word's end")
        while at >= 0:
            spans.append((at, at + len(part)))
            at = text.find(part, at + 1)
    merged: list[list[int]] = []
    for lo, hi in sorted(spans):
        if merged and lo < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    runs = list(dict.fromkeys(text[lo:hi] for lo, hi in merged))
    # a run held where the word repeats (缓能 beside 缓能服) says nothing more
    runs = [r for r in runs if not any(r != longer and r in longer for longer in runs)]
    return [*runs, *across]
