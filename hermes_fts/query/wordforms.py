"""Other forms of an English word, for a best match: ``fixed`` is also searched as ``fix*``.

A best match (``best.best_match``) searches each English word written
without quotes as written and as the prefix its forms share, its stem: ``migrations`` as
``migrat*`` finds "migrate", "migrated" and "migration", ``deployment`` as
``deploy*`` finds "deploy" and "deployed".  No index changes: every route
already answers a prefix (docs/DESIGN.md §6.4a).

The stemmer is a small rule set of our own, cautious on purpose: a wrong
cut costs precision on every query with that word, a missed one only the
recall a suffix would have bought.  One suffix is cut (plural, ``-ed``,
``-ing``, ``-ment``, ``-ion``/``-ation``, ``-ly``), then a doubled final
consonant or a final ``e``/``y`` goes, as long as the stem keeps
``MIN_STEM`` letters and a vowel.  ``-er`` is never cut: it names things
(docker, server, worker, filter) whose stem is another word.

Korean and Japanese glue a word to its grammar; the word alone is what other
sentences hold.  ``korean_stem`` cuts the particle off a Korean word
(``태호의`` → ``태호``) and ``korean_verb_forms`` gives a verb's past or stem
(``고치다``: ``고쳤``); ``japanese_verb_forms`` gives the bigrams of a Japanese
verb's other forms (``登る``: ``登っ``, ``登り``); ``hiragana_words`` cuts a noun
written in hiragana out of a Japanese sentence (``おにぎりを`` → ``おにぎり``);
``straddles`` tells a Japanese bigram across two words (``の姉``, ``姉は``), and
``lone_kanji`` finds the word such bigrams hold alone (``姉``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from .._index_text import fold_width, has_cjk
from .syntax import by_start
from .tree import Query, Term

__all__ = [
    "KOREAN_PARTICLES",
    "IRREGULAR",
    "MIN_STEM",
    "before_honorific",
    "form_pairs",
    "forms_note",
    "hiragana_words",
    "inflections",
    "japanese_verb_forms",
    "korean_verb_forms",
    "korean_stem",
    "lone_kanji",
    "lone_names",
    "straddles",
    "stem",
    "term_groups",
    "term_labels",
    "unit_labels",
    "unit_words",
    "word_forms",
]

# Three letters keep `fix` (fixed, fixes, fixing); two would reach every word
# starting with `te` from `tests`.
MIN_STEM = 3
# A suffix that leaves a stem this short is not cut: `version` stays whole
# rather than `vers*` (versus, verse), `statement` rather than `state*`.
_MIN_DERIVED = 5

_WORD = re.compile(r"[A-Za-z]{3,}")
_VOWEL = re.compile(r"[aeiouy]")
# (suffix, the shortest stem it may leave), longest suffixes first.
_SUFFIXES: tuple[tuple[str, int], ...] = (
    ("ations", _MIN_DERIVED),
    ("ation", _MIN_DERIVED),
    ("ments", _MIN_DERIVED),
    ("ment", _MIN_DERIVED),
    ("ions", _MIN_DERIVED),
    ("ion", _MIN_DERIVED),
    ("ings", MIN_STEM),
    ("ing", MIN_STEM),
    ("ies", MIN_STEM + 1),
    ("ied", MIN_STEM + 1),
    ("ly", _MIN_DERIVED),
    ("ed", MIN_STEM),
    ("es", MIN_STEM),
    ("s", MIN_STEM),
)
# -es is a suffix of its own only after a hissing sound (fixes, classes, matches).
_SIBILANT = ("s", "x", "z", "ch", "sh")
# A final s that is no plural: class, status, analysis.
_NOT_PLURAL = ("ss", "us", "is")
# Words whose final s is no plural either: news was searched as new.
_S_WORDS = frozenset({"news", "species", "lens", "means", "series", "physics"})
# Endings after which English keeps a silent e (merge, parse, cache, solve, breathe):
# a short stem of an -ed or -ing form ending so may have lost one.
_E_ENDINGS = ("c", "g", "s", "u", "v", "z", "ch", "th")


def _stem_ok(stem: str, shortest: int) -> bool:
    return len(stem) >= shortest and _VOWEL.search(stem) is not None


def _silent_e(stem: str) -> bool:
    """A one-syllable stem left by -ed or -ing that ends in vowel-consonant after at
    most two consonants: English doubles the consonant of such a word (hopping,
    stopped), so this one lost an e (making, loved, used; staging, scaled,
    writing: stag*, scal* and writ* found neither stage nor scale nor write).  A
    final w, x or y never doubles (fixed, showing)."""
    if not 2 <= len(stem) <= 4:
        return False
    start = stem[:-2]
    # a y after consonants is the vowel (typed, hyped: type, hype)
    vowel = stem[-2] in "aeiou" or (stem[-2] == "y" and len(stem) > 2)
    return vowel and not any(ch in "aeiouy" for ch in start) and stem[-1] not in "aeiouwxy"


def _cut(word: str) -> str:
    """``word`` without its one suffix (or ``word``)."""
    if word in _S_WORDS:
        return word
    for suffix, shortest in _SUFFIXES:
        if not word.endswith(suffix):
            continue
        stem = word[: -len(suffix)]
        if suffix == "es" and not stem.endswith(_SIBILANT):
            continue  # files: the plural is -s (file), tried next
        if suffix == "s" and word.endswith(_NOT_PLURAL):
            return word
        if suffix == "ed" and stem.endswith("e"):
            continue  # speed, need: no -ed
        if suffix in ("ed", "ing") and _silent_e(stem):
            return word  # making: mak* would reach makeup, make* misses making
        if _stem_ok(stem, shortest):
            return stem
    return word


def _trim(stem: str) -> str:
    """The shared start of a stem's forms: stopp → stop, migrate → migrat, query → quer."""
    if len(stem) > MIN_STEM and stem[-1] == stem[-2] and stem[-1] not in "aeioulsz":
        return stem[:-1]  # stopped, running; but install, pass, buzz keep theirs
    if stem.endswith("e") and _stem_ok(stem[:-1], _MIN_DERIVED):
        return stem[:-1]  # migrate: migrated, migrating (state stays whole)
    if stem.endswith("y") and _stem_ok(stem[:-1], _MIN_DERIVED) and stem[-2] not in "aeiou":
        return stem[:-1]  # history: histories (deploy keeps its y; reply, not repl*)
    return stem


def stem(word: str) -> str:
    """The lower-cased prefix the forms of the English ``word`` share; ``word``
    lower-cased when it has no suffix to cut (``fix`` → ``fix``, ``fixed`` →
    ``fix``, ``migrations`` → ``migrat``).  Only for ASCII letters."""
    lowered = word.lower()
    return _trim(_cut(lowered))


def word_forms(term: Term) -> tuple[Term, ...]:
    """The other forms a best match searches ``term`` as, beside the word: a single
    English word (three or more ASCII letters, no ``*``) as its stem's prefix,
    or as its stem and the stem's inflections when the stem is short, or as the
    forms ``IRREGULAR`` lists (went: go, goes, going, gone); a Korean word
    without the particle it ends in (``korean_stem``); nothing else."""
    if term.prefix:
        return ()
    # ｄｅｐｌｏｙｅｄ, as a CJK keyboard in full-width mode types it, is the word every
    # index reads: its forms are that word's
    if _WORD.fullmatch(fold_width(term.text)):
        lowered = fold_width(term.text).lower()
        if lowered in _S_WORDS or not _VOWEL.search(lowered):
            return ()  # no other form: news is no plural of new, dns no verb
        if lowered in IRREGULAR:
            return tuple(Term(form) for form in IRREGULAR[lowered] if form != lowered)
        root = stem(lowered)
        if root == lowered:
            root = _lost_e(lowered) or root
        y_word = _y_word(lowered)
        # cities keeps `citie` when its stem is too short for -ies: city is its word
        if len(root) < _MIN_DERIVED or (y_word and root == lowered[:-1]):
            base = y_word or root
            forms = dict.fromkeys(
                (base, *_inflected(base), *_ie_word(lowered, base), *_e_word(lowered, base))
            )
            return tuple(Term(form) for form in forms if form != lowered)
        return (Term(root, prefix=True),)
    bare = korean_stem(term.text)
    others = [*([bare] if bare else []), *korean_verb_forms(bare or term.text)]
    return tuple(Term(form) for form in dict.fromkeys(others) if form != term.text)


# English words whose forms no suffix rule finds (went: go, bought: buy, children:
# child), one word a line with every form of it; a word here is searched in these
# forms alone.  Left out, as forms of two words: left (leave; the side), rose (rise;
# the flower), led (lead; LED), bit (bite; a bit), lives (life; to live), leaves
# (leaf; to leave), fed (feed; the Fed), meant (mean, the average), drew (a name),
# stuck, wound, ground, bound, lit; and verbs that are common words (be, have, do,
# get, say, tell, think, know).  `go` is too short to get forms: it names a language.
_IRREGULAR_WORDS = """
go goes going went gone
see sees seeing saw seen
find finds finding findings found
feel feels feeling feelings felt
lay lays laying laid
begin begins beginning beginnings began begun
bend bends bending bent
bite bites biting bitten
bleed bleeds bleeding bled
blow blows blowing blew blown
break breaks breaking broke broken
breed breeds breeding bred
bring brings bringing brought
build builds building buildings built
burn burns burning burned burnt
buy buys buying bought
catch catches catching caught
choose chooses choosing chose chosen
come comes coming came
creep creeps creeping crept
deal deals dealing dealt
dig digs digging dug
dream dreams dreaming dreamed dreamt
drink drinks drinking drank drunk
drive drives driving drove driven
eat eats eating ate eaten
fall falls falling fell fallen
fight fights fighting fought
flee flees fleeing fled
fly flies flying flew flown
forget forgets forgetting forgot forgotten
forgive forgives forgiving forgave forgiven
freeze freezes freezing froze frozen
give gives giving gave given
grow grows growing grew grown
hang hangs hanging hung
hear hears hearing heard
hide hides hiding hid hidden
hold holds holding held
keep keeps keeping kept
learn learns learning learned learnt
lend lends lending lent
lose loses losing lost
make makes making made
meet meets meeting meetings met
pay pays paying paid
ride rides riding rode ridden
ring rings ringing rang rung
run runs running ran
seek seeks seeking sought
sell sells selling sold
send sends sending sent
shake shakes shaking shook shaken
shoot shoots shooting shot shots
show shows showing showed shown
shrink shrinks shrinking shrank shrunk
sing sings singing sang sung
sink sinks sinking sank sunk
sit sits sitting sat
sleep sleeps sleeping slept
slide slides sliding slid
spend spends spending spent
spin spins spinning spun
stand stands standing stood
steal steals stealing stole stolen
sting stings stinging stung
strike strikes striking struck
swear swears swearing swore sworn
sweep sweeps sweeping swept
swim swims swimming swam swum
swing swings swinging swung
take takes taking took taken
teach teaches teaching taught
tear tears tearing tore torn
throw throws throwing threw thrown
understand understands understanding understood
wake wakes waking woke woken
wear wears wearing wore worn
weep weeps weeping wept
win wins winning won
write writes writing writings wrote written
child children
man men
woman women
person persons people
foot feet
tooth teeth
goose geese
mouse mice
knife knives
wife wives
half halves
shelf shelves
wolf wolves
thief thieves
analysis analyses
crisis crises
criterion criteria
phenomenon phenomena
"""
# Each form of a word in _IRREGULAR_WORDS: all the word's forms.
IRREGULAR = {
    form: tuple(line.split()) for line in _IRREGULAR_WORDS.split("\n") for form in line.split()
}


def _inflected(base: str) -> tuple[str, ...]:
    """``inflections`` that are words: a noun ending in a, i or o (idea, photo, ski)
    has a plural but no -ed or -ing form (ideaed, biaing were searched); a stem
    ending in u has lost an e (queu: queuing)."""
    plural, ed, ing = inflections(base)
    return (plural,) if base.endswith(("a", "i", "o")) else (plural, ed, ing)


def _y_word(word: str) -> str | None:
    """The word whose y an ``-ies`` or ``-ied`` form replaced (carried: carry, parties:
    party), or None.  Its short stem's inflections were another word's: car, part."""
    if word.endswith(("ies", "ied")) and len(word) > len("ies") + 1:
        return word[:-3] + "y"
    return None


def _ie_word(word: str, base: str) -> tuple[str, ...]:
    """The singular of an ``-ies`` plural whose word ends in ie (cookies: cookie),
    beside the y-word: no rule tells the two apart."""
    return (word[:-1],) if word.endswith("ies") and base.endswith("y") else ()


def _e_word(word: str, base: str) -> tuple[str, ...]:
    """The silent-e word an ``-ed``, ``-ing`` or ``-es`` form may have lost its e from,
    beside its short stem, with its plural: merging is merge or merg, parsed parse,
    queued queue, cases case (merged was merg, mergs, merged, merging: never merge)."""
    # -es after s, z or ch is also an e-word's -s (cases: case, sizes: size, caches:
    # cache; buses: bus)
    lost = word.endswith(("ed", "ing", "es")) and base.endswith(_E_ENDINGS)
    if not lost or base[-1] == base[-2] or word.startswith(base + base[-1]):
        return ()  # passed, logging: no e was lost beside a doubled letter
    plural, _, _ = inflections(base + "e")
    return base + "e", plural


def _lost_e(word: str) -> str | None:
    """The word an ``-ed`` or ``-ing`` form lost its ``e`` from (hiking: hike; dyed,
    tied: dye, tie, whose e the -ed took), or None."""
    if len(word) == len("dyed") and word.endswith(("yed", "ied")):
        return word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and _silent_e(word[: -len(suffix)]):
            return word[: -len(suffix)] + "e"
    return None


def inflections(word: str) -> tuple[str, str, str]:
    """The plural (or third person), ``-ed`` and ``-ing`` forms of a short stem.  Its
    prefix would reach other words: ``tom*`` finds "tomorrow", ``tim*`` "time",
    and a name that matches them stops deciding the match."""
    if word.endswith(("ee", "ye", "oe")):
        return word + "s", word + "d", word + "ing"  # agree: agreeing; dye: dyeing
    if word.endswith("ie"):
        return word + "s", word + "d", word[:-2] + "ying"  # die: dying, not diing
    if word.endswith("e"):
        return word + "s", word + "d", word[:-1] + "ing"  # hike: hikes, hiked, hiking
    if word.endswith("y") and word[-2] not in "aeiou":
        return word[:-1] + "ies", word[:-1] + "ied", word + "ing"  # try: tries, tried
    plural = word + ("es" if word.endswith(_SIBILANT) else "s")
    # One vowel before a final consonant doubles it: log, logged; stop, stopping.
    vowels = _VOWEL.findall(word[:-1])
    doubled = word[-1] not in "aeiouwxy" and len(vowels) == 1 and word[-2] in "aeiou"
    stem_ed = word + word[-1] if doubled else word
    return plural, stem_ed + "ed", stem_ed + "ing"


# Korean writes a word with its particle attached (태호의, 문제가, 세무사에,
# invoice-gen에서); other sentences hold the word with other particles.  Longest
# first, so 에서 is cut before 에 and 이랑 before 랑.
KOREAN_PARTICLES = sorted(
    "에서는 에서도 에서 에게 한테 께서 으로 로 에 의 이 가 은 는 을 를 와 과 도 만 랑 이랑 "
    "까지 부터 처럼 보다 이나".split(),
    key=len,
    reverse=True,
)


# The endings of a 하다 verb: 배포했어 is the noun 배포 (deployment) made a verb.
KOREAN_HADA_ENDINGS = sorted(
    (
        "했습니다 했어요 했나요 했는데 했어 했나 했다 했던 했고 합니다 해요 하는 하고 하기 한 해 "
        "하다가 하다 한다 하던 했지 했니 했냐 했었어 했었지 했었나 했었다 했었던 "
        "했다고 한다고 했었다고 했더라 했었더라"
    ).split(),
    key=len,
    reverse=True,
)
_TRAILING_HANGUL = re.compile("[\uac00-\ud7a3]*$")


def _hangul(ch: str) -> bool:
    return "\uac00" <= ch <= "\ud7a3"


def korean_stem(text: str) -> str | None:
    """``text`` without the Korean particle it ends in, or None.  The particle is
    cut only when two syllables of the word are left (``나이`` and ``작가``
    keep theirs), or when it follows a word of another script.  A 하다 verb
    (배포했어, 시작했어요, 연습하다) is its noun, when two syllables are left, and
    so is one carrying a particle (연습하다에)."""
    if not text or not _hangul(text[-1]):
        return None
    noun = _hada_noun(text)
    if noun is not None:
        return noun
    for particle in KOREAN_PARTICLES:
        if text.endswith(particle) and len(text) > len(particle):
            rest = text[: -len(particle)]
            tail = _TRAILING_HANGUL.search(rest)
            syllables = len(tail.group()) if tail else 0
            if syllables >= 2 or (syllables == 0 and rest[-1].isalnum()):
                return _hada_noun(rest) or rest
            return None
    return None


def _hada_noun(text: str) -> str | None:
    """The noun of a 하다 verb (배포했어: 배포) when two syllables are left, or None."""
    for ending in KOREAN_HADA_ENDINGS:
        rest = text[: -len(ending)]
        tail = _TRAILING_HANGUL.search(rest)
        if text.endswith(ending) and tail is not None and len(tail.group()) >= 2:
            return rest
    return None


def form_pairs(
    words: Sequence[Sequence[Term]], kept: Sequence[Term]
) -> tuple[tuple[Term, Term], ...]:
    """``Query.forms`` of a best match: of each word's terms (``words``: as ``plan``
    cut them), the word paired with each of its other forms, where both were
    ``kept``."""
    searched = set(kept)
    pairs = [
        (pieces[0], form)
        for pieces in words
        if pieces and pieces[0] in searched
        for form in word_forms(pieces[0])
        if form in pieces[1:] and form in searched
    ]
    for pieces in words:  # a Japanese verb's bigram with its other forms' (登る: 登っ)
        for verb, form in _japanese_forms(pieces[0]) if pieces else ():
            if verb in searched and form in searched and form in pieces:
                pairs.append((verb, form))
    return tuple(pairs)


def term_groups(q: Query) -> list[int]:
    """The word each term of the best match ``q`` belongs to, numbered in query order:
    a word and its other forms (``Query.forms``) are one word, so a row holding
    both holds it once."""
    terms = [replace(t, negated=False) for t in q.terms]
    root = list(range(len(terms)))
    index = {t: i for i, t in reversed(list(enumerate(terms)))}

    def find(i: int) -> int:
        while root[i] != i:
            i = root[i]
        return i

    for word, form in q.forms:
        if word in index and form in index:
            a, b = sorted((find(index[word]), find(index[form])))
            root[b] = a
    number: dict[int, int] = {}
    return [number.setdefault(find(i), len(number)) for i in range(len(terms))]


def unit_words(q: Query) -> list[int]:
    """The word of each unit a search scores ``q`` by (``plan.evidence_units``): a
    best match's ``term_groups``; a strict query is one unit, one word."""
    return term_groups(q) if q.loose else [0]


def term_labels(q: Query) -> list[str]:
    """The label of each word of the best match ``q`` (``term_groups``), for
    ``matched_terms``: the word as searched (``fixed``, not its stem ``fix*``), so
    results speak of what a user wrote."""
    groups = term_groups(q)
    labels: dict[int, str] = {}
    for group, term in zip(groups, q.terms):
        if not term.prefix:
            labels.setdefault(group, term.text)
    for group, term in zip(groups, q.terms):
        labels.setdefault(group, term.text)
    return [labels[g] for g in range(len(labels))]


def unit_labels(q: Query) -> list[str]:
    """The label of each term of the best match ``q`` (a row's units, a bit each), for
    ``matched_terms``: its word's (``term_labels``), but a bigram of a sentence its
    own.  Two overlapping bigrams are one word to a score (``best._bigram_words``),
    yet a row holds either or both, and a note names the runs of the sentence a
    row holds (扩容, 集群 apart, or 扩容集群), never one it may not.  A verb's form
    (登っ) is named as the verb written (登る)."""
    labels = term_labels(q)
    bigrams = {t for a, b in q.forms if _overlap(a.text, b.text) for t in (a, b)}
    verbs = {b: a for a, b in q.forms if not _overlap(a.text, b.text)}
    return [
        verbs[t].text if t in verbs and t not in bigrams else t.text if t in bigrams else labels[g]
        for t, g in zip(q.terms, term_groups(q))
    ]


def _overlap(a: str, b: str) -> bool:
    """Two bigrams of a sentence that follow each other (张伟, 伟说)."""
    return _bigram(a) and _bigram(b) and a[1] == b[0]


def _bigram(text: str) -> bool:
    return len(text) == 2 and has_cjk(text)


def forms_note(words: Sequence[Term], searched: Sequence[Term]) -> list[str]:
    """The note naming the ``words`` (a best match's, written without quotes, as read:
    a possessive as its name) that were searched in all their forms
    (``searched``: the terms the best match kept)."""
    kept = set(searched)
    shown = []
    for term in dict.fromkeys(words):
        forms = [by_start(f.text + "…" * f.prefix) for f in word_forms(term) if f in kept]
        if forms:
            shown.append(f"{by_start(term.text)} ({', '.join(forms)})")
        verbs: dict[Term, list[str]] = {}
        for verb, form in _japanese_forms(term):
            if verb in kept and form in kept:
                verbs.setdefault(verb, []).append(form.text)
        shown += [f"{verb.text} ({', '.join(held)})" for verb, held in verbs.items()]
    if not shown:
        return []
    return ["also searched other forms of: " + ", ".join(shown)]


# A Japanese sentence glues its words with hiragana particles and endings, and a
# bigram of hiragana alone is read as grammar (best._is_stop).  A noun written in
# hiragana (おにぎり) was lost with them: these cut one out of its stretch.
_JA_CASE = "をがはにでとのもへ"  # the particles that follow a noun
_JA_QUOTE = "って"  # the spoken quote particle: ありがとうって言った
# What a verb or the copula ends in before it (してるって, 行ったって, 好きだって); a
# noun written in hiragana hardly ever does.
_JA_VERB_ENDS = ("る", "た", "だ")
_JA_ASKING = ("いつ", "どこ", "なに", "なん", "だれ", "どんな", "どの", "どれ", "どう")
_HIRAGANA_STRETCH = re.compile("[\u3041-\u309f\u30fc]+")
_HIRAGANA_WORD = 3  # shorter ones are mostly particles and endings


def hiragana_words(run: str) -> list[str]:
    """The nouns written in hiragana in the Japanese CJK run ``run``: a stretch of
    hiragana that a case particle or ``って`` ends (おにぎりを), without it, without the
    particle that starts it after a kanji or katakana (東京で…), and without a question
    word before it (どんな…).  Without a dictionary, only where a particle
    marks it: a stretch after a kanji that no particle starts is that word's
    ending (食べた), and one that ends otherwise is a verb (している)."""
    words = []
    for m in _HIRAGANA_STRETCH.finditer(run):
        stretch, start = m.group(), m.start()
        if start and _katakana(run[start - 1]):
            # the ー of カレーのことを is the katakana word's: its particle starts the stretch
            start += len(stretch) - len(stretch.lstrip("ー"))
            stretch = stretch.lstrip("ー")
        if start and (_kanji(run[start - 1]) or _katakana(run[start - 1])) and stretch:
            if stretch[0] not in _JA_CASE:
                continue  # okurigana
            stretch = stretch[1:]
        if stretch.endswith(_JA_QUOTE):
            stretch = stretch.removesuffix(_JA_QUOTE)
            if stretch.endswith(_JA_VERB_ENDS):
                continue  # してるって, いたって: a verb quoted, no noun
        elif stretch[-1:] in tuple(_JA_CASE):
            stretch = stretch[:-1]
        else:
            continue
        for asking in _JA_ASKING:
            stretch = stretch.removeprefix(asking)
        for honorific in _HONORIFICS:  # さくらちゃんの: the name
            stretch = stretch.removesuffix(honorific)
        if len(stretch) >= _HIRAGANA_WORD:
            words.append(stretch)
    return words


def _kanji(ch: str) -> bool:
    return "\u4e00" <= ch <= "\u9fff" or ch == "\u3005"


# Honorifics after a name (田中さん, 鈴木くん, さくらちゃん): no part of the name.
_HONORIFICS = ("さん", "さま", "くん", "ちゃん")


def before_honorific(run: str, i: int) -> bool:
    """Whether the bigram of the Japanese ``run`` at ``i`` is a name's last kanji or
    katakana and the first kana of its honorific (the 中さ of 田中さん): searched, it
    found 山中さん before the 田中 the question is about."""
    return (_kanji(run[i]) or _katakana(run[i])) and run.startswith(_HONORIFICS, i + 1)


def lone_names(run: str) -> list[str]:
    """A name of one kanji or katakana before its honorific (林さん: 林), whose pair
    ``before_honorific`` leaves out."""
    return [
        run[i]
        for i in range(len(run) - 1)
        if before_honorific(run, i)
        and (i == 0 or not (_kanji(run[i - 1]) or _katakana(run[i - 1])))
    ]


def straddles(pair: str) -> bool:
    """A Japanese bigram across two words: hiragana before a kanji or katakana (の姉,
    た仕; not the honorific お, ご), or a kanji or katakana before a particle (姉は,
    ンの).  A kanji's own hiragana follow it (決め) and stay a word."""
    if len(pair) != 2:
        return False
    first, second = pair[0], pair[1]
    if _hiragana(first) and first not in "おご" and (_kanji(second) or _katakana(second)):
        return True
    return (_kanji(first) or _katakana(first)) and second in _JA_CASE


def _hiragana(ch: str) -> bool:
    return "\u3041" <= ch <= "\u309f"


def _katakana(ch: str) -> bool:
    return "\u30a1" <= ch <= "\u30ff"


def lone_kanji(run: str) -> list[str]:
    """A kanji standing alone between particles in a Japanese run (由美の姉は: 姉),
    a word whose bigrams all straddle (``straddles``)."""
    return [
        ch
        for i, ch in enumerate(run)
        if _kanji(ch)
        and (i == 0 or run[i - 1] in _JA_CASE)
        and (i == len(run) - 1 or run[i + 1] in _JA_CASE)
        and any(c in _JA_CASE for c in run[max(i - 1, 0) : i + 2])
    ]


# A Japanese verb keeps its kanji and changes the kana after it (登る, 登った,
# 登ります); a question's bigram of the two met none of the session's.  The kana a
# form puts after the kanji, by the kana the question has there and, for a
# conjugated form, the kana after that: our own table of the regular verbs.  A
# verb whose stem ends in kana (受ける, 落ちた) keeps its bigram (受け, 落ち).
_JA_VERB_KANA: tuple[tuple[str, str, str], ...] = (
    # the dictionary form: る of 登る (godan: 登った, 登ります) or 見る (見た, 見ます)
    ("る", "", "っりらたてま"),
    ("う", "", "いっわ"),
    ("く", "", "きいか"),
    ("ぐ", "", "ぎいが"),
    ("す", "", "しさ"),  # 直す: 直した; 発酵する's 酵す likewise: 発酵した, 発酵させ
    ("つ", "", "ちった"),
    ("む", "", "みんま"),
    ("ぶ", "", "びんば"),
    ("ぬ", "", "にんな"),
    # the た and て forms: 登った, 焼いた, 泳いだ, 直した, 読んだ, 見た
    ("っ", "たて", "るうりい"),
    ("い", "たて", "くき"),
    ("い", "だで", "ぐぎ"),
    ("し", "たて", "すさ"),
    ("ん", "だで", "むみぶび"),
    ("た", "", "るまて"),
    ("て", "", "るまた"),
    # the ます form: 登ります, 見ます
    ("り", "ま", "るっら"),
    ("き", "ま", "くいか"),
    ("み", "ま", "むんま"),
    ("ま", "すし", "るたて"),
)


def _japanese_forms(term: Term) -> list[tuple[Term, Term]]:
    """``japanese_verb_forms`` of a word as written, as terms; none for a prefix."""
    if term.prefix:
        return []
    return [(Term(a), Term(b)) for a, b in japanese_verb_forms(fold_width(term.text))]


def japanese_verb_forms(run: str) -> list[tuple[str, str]]:
    """The bigrams of a Japanese verb's other forms, each with the verb's bigram in
    the run ``run`` it is a form of: (登る, 登っ), (登る, 登り), (見た, 見る)."""
    out = []
    for i in range(len(run) - 1):
        pair, after = run[i : i + 2], run[i + 2 : i + 3]
        if not _kanji(run[i]):
            continue
        for kana, before, forms in _JA_VERB_KANA:
            if pair[1] == kana and (not before or (after and after in before)):
                out += [(pair, run[i] + k) for k in forms if k != kana]
    return list(dict.fromkeys(out))


# A Korean verb's past fuses 았/었 into its last syllable (고치다: 고쳤어요, 보다: 봤어,
# 먹다: 먹었어): a question's 고치다 met no bigram of the session's 고쳤어요.  Hangul
# syllables are (initial * 21 + vowel) * 28 + final from U+AC00; the vowels and
# finals by number:
_A, _AE, _EO, _E, _YEO, _O, _WA, _WAE, _OE, _U, _WO, _EU, _I = (
    0,
    1,
    4,
    5,
    6,
    8,
    9,
    10,
    11,
    13,
    14,
    18,
    20,
)
_DIGEUT, _RIEUL, _BIEUP, _SSANG_SIOT = 7, 8, 17, 20
# An open syllable's vowel as the past fuses it (보 → 봤, 고치 → 고쳤, 되 → 됐).
_FUSED = {_A: _A, _AE: _AE, _EO: _EO, _E: _E, _YEO: _YEO, _O: _WA, _U: _WO, _I: _YEO, _OE: _WAE}
_UNFUSED = {_WA: _O, _WO: _U, _YEO: _I, _WAE: _OE, _A: _A, _AE: _AE, _EO: _EO, _E: _E}


def _jamo(ch: str) -> tuple[int, int, int]:
    n = ord(ch) - 0xAC00
    return n // 588, n // 28 % 21, n % 28


def _syllable(initial: int, vowel: int, final: int) -> str:
    return chr(0xAC00 + (initial * 21 + vowel) * 28 + final)


def _bright(vowel: int) -> bool:
    """ㅏ and ㅗ take 았, the rest 었 (vowel harmony)."""
    return vowel in (_A, _O)


def _korean_pasts(stem: str) -> list[str]:
    """The past stems of the Korean verb stem ``stem`` (고치: 고쳤; 먹: 먹었; 굽: 굽었 and, as
    ㅂ-irregular verbs have it, 구웠; 오르: 올랐; 걷: 걷었 and 걸었)."""
    head, last = stem[:-1], stem[-1]
    initial, vowel, final = _jamo(last)
    if last == "하":
        return [head + "했"]
    if final:
        out = [stem + ("았" if _bright(vowel) else "었")]
        if final == _BIEUP:
            out.append(head + _syllable(initial, vowel, 0) + ("왔" if vowel == _O else "웠"))
        if final == _DIGEUT:
            out.append(
                head + _syllable(initial, vowel, _RIEUL) + ("았" if _bright(vowel) else "었")
            )
        return out
    if vowel == _EU and head:  # 쓰 → 썼, 아프 → 아팠, 오르 → 올랐
        before = _jamo(head[-1])
        fused = _A if _bright(before[1]) else _EO
        if last == "르" and not before[2]:
            return [
                head[:-1]
                + _syllable(before[0], before[1], _RIEUL)
                + _syllable(5, fused, _SSANG_SIOT)
            ]
        return [head + _syllable(initial, fused, _SSANG_SIOT)]
    if vowel == _EU:
        return [_syllable(initial, _EO, _SSANG_SIOT)]
    if vowel in _FUSED:
        return [head + _syllable(initial, _FUSED[vowel], _SSANG_SIOT)]
    return [stem + "었"]  # 할퀴었, 띄었: no fusing


def _korean_past_stem(word: str) -> str | None:
    """The stem of the Korean past form ``word`` (고쳤어요: 고치; 먹었던: 먹; 봤어: 보), its
    past syllable within the first two, or None."""
    for i, ch in enumerate(word[:3]):
        initial, vowel, final = _jamo(ch)
        if final != _SSANG_SIOT or not word[i + 1 :]:
            continue
        if ch in "았었" and i:
            return word[:i]
        if vowel in _UNFUSED and ch not in "했겠":  # 하다 verbs: their noun; 겠: will
            return word[:i] + _syllable(initial, _UNFUSED[vowel], 0)
        return None
    return None


def korean_verb_forms(word: str) -> list[str]:
    """The other forms of the Korean verb ``word``, each of two syllables or more: a
    dictionary form's past stems (고치다: 고쳤; 먹다: 먹었), a past
    form's stem (고쳤어요: 고치) or, for a stem of one syllable, its forms with 고, 는
    and 러 (봤어: 보고, 보는, 보러; 먹었어: 먹고, 먹는, 먹으): a lone syllable would be
    found inside every word."""
    if not word or not all(_hangul(ch) for ch in word):
        return []
    if len(word) >= 2 and word.endswith("다"):
        # a past of one syllable (보다: 봤, 주다: 줬) is mostly the verb as a helper
        # glued to another (물어봤어요, asked; 해줬어, did for someone): none is searched
        return [past for past in _korean_pasts(word[:-1]) if len(past) > 1]
    stem = _korean_past_stem(word)
    if stem is None:
        return []
    if len(stem) > 1:
        return [stem]
    # 러 (to go and do) takes 으 after a final consonant: 보러, 먹으러
    return [stem + "고", stem + "는", stem + ("으" if _jamo(stem)[2] else "러")]
