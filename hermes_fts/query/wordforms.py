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

Korean and Japanese words get their other forms from ``cjk_forms`` (a
Korean word without its particle, a verb's past; a Japanese verb's other
forms); here a word and its forms, of any language, become one word of a
best match (``form_pairs``, ``term_groups``) and its note (``forms_note``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from .._index_text import fold_width, has_cjk
from .cjk_forms import japanese_verb_forms, korean_stem, korean_verb_forms
from .syntax import by_start
from .tree import Query, Term

__all__ = [
    "IRREGULAR",
    "MIN_STEM",
    "form_pairs",
    "forms_note",
    "inflections",
    "stem",
    "term_groups",
    "term_labels",
    "unit_caps",
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
# An acronym's plural (APIs, GPUs, VMs, OSes): its one other form is the acronym; read
# as a word, APIs was apises, apised, apising, and "the API" was not found.
_ACRONYM_PLURAL = re.compile(r"([A-Z]{2,})e?s")
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
# Words with no other form: the modal verbs (may was mays, mayed, maying; must musted)
# and the months (July was julies, julied; march* found "marching").
_NO_FORMS = frozenset(
    """may might must shall ought january february march april june july august september
    october november december jan feb mar apr jun jul aug sep sept oct nov dec""".split()
)
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
    forms ``IRREGULAR`` lists (went: go, goes, going, gone), an acronym's plural as
    the acronym (APIs: api); a Korean word without the particle it ends in
    (``korean_stem``); nothing else."""
    if term.prefix:
        return ()
    # ｄｅｐｌｏｙｅｄ, as a CJK keyboard in full-width mode types it, is the word every
    # index reads: its forms are that word's
    if _WORD.fullmatch(fold_width(term.text)):
        acronym = _ACRONYM_PLURAL.fullmatch(fold_width(term.text))
        if acronym:
            return (Term(acronym.group(1).lower()),)
        lowered = fold_width(term.text).lower()
        if lowered in _S_WORDS or lowered in _NO_FORMS or not _VOWEL.search(lowered):
            return ()  # no other form: news is no plural of new, dns no verb
        if lowered in IRREGULAR:
            return _irregular_forms(lowered)
        return _english_forms(lowered)
    bare = korean_stem(term.text)
    others = [*([bare] if bare else []), *korean_verb_forms(bare or term.text)]
    return tuple(Term(form) for form in dict.fromkeys(others) if form != term.text)


def _english_forms(lowered: str) -> tuple[Term, ...]:
    """``word_forms`` of a lower-cased English word by the rules: its stem's prefix,
    or a short stem and its inflections."""
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


def _irregular_forms(lowered: str) -> tuple[Term, ...]:
    """``word_forms`` of a word ``IRREGULAR`` lists: its word's forms, and where the
    rules search the word written by a prefix of its word (building, learned:
    build*, learn*), that prefix for the forms it reaches, so the table takes
    none of its reach (builder, learnings).  An irregular form's own prefix is
    no form (built*: builtin; stood* is no stand*)."""
    listed = IRREGULAR[lowered]
    reach = [t for t in _english_forms(lowered) if t.prefix and listed[0].startswith(t.text)]
    prefix = reach[0].text if reach else None
    others = [f for f in listed if f != lowered and not (prefix and f.startswith(prefix))]
    return (*reach, *map(Term, others))


# English words whose forms no suffix rule finds (went: go, bought: buy, children:
# child), one word a line with every form of it; a word here is searched in these
# forms, beside the prefix the rules give it (``_irregular_forms``).  Left out, as forms of two
# words: left (leave; the side), rose (rise; the flower), led (lead; LED), bit
# (bite; a bit), lives (life; to live), leaves (leaf; to leave), fed (feed; the
# Fed), meant (mean, the average), drew (a name), stuck, wound, ground, bound,
# lit; and verbs that are common words (be, have, do,
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


def unit_caps(q: Query) -> list[int] | None:
    """The unit whose weight bounds what a row earns for each unit
    (``plan.evidence_units``; its own where none), or None where none is bounded:
    a Korean word as written with its particle or 하다 ending (``invoice-gen에서``,
    ``배포했어``) earns no more than its stem.  The particle is grammar, not what
    the word names: rarer than the stem, the form as written outweighed it, and
    a message repeating the question's particle ranked above the conversation
    about the thing."""
    if not q.loose:
        return None
    index = {t: i for i, t in reversed(list(enumerate(replace(t, negated=False) for t in q.terms)))}
    caps = list(range(len(q.terms)))
    for word, form in q.forms:
        if word in index and form in index and korean_stem(word.text) == form.text:
            caps[index[word]] = index[form]
    return caps if caps != list(range(len(q.terms))) else None


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


def _japanese_forms(term: Term) -> list[tuple[Term, Term]]:
    """``japanese_verb_forms`` of a word as written, as terms; none for a prefix."""
    if term.prefix:
        return []
    return [(Term(a), Term(b)) for a, b in japanese_verb_forms(fold_width(term.text))]
