"""Japanese and Korean words as other sentences hold them, for a best match.

Both glue a word to its grammar; the word alone is what other sentences hold.
``korean_stem`` cuts the particle off a Korean word (``태호의`` → ``태호``) and
``korean_verb_forms`` gives a verb's past or stem (``고치다``: ``고쳤``);
``japanese_verb_forms`` gives the bigrams of a Japanese verb's other forms
(``登る``: ``登っ``, ``登り``); ``hiragana_words`` cuts a noun written in
hiragana out of a Japanese sentence (``おにぎりを`` → ``おにぎり``);
``straddles`` tells a Japanese bigram across two words (``の姉``, ``姉は``), and
``lone_kanji`` finds the word such bigrams hold alone (``姉``).  English
forms, and how a word and its forms count as one, are ``wordforms``'.
"""

from __future__ import annotations

import re

__all__ = [
    "KOREAN_HADA_ENDINGS",
    "KOREAN_PARTICLES",
    "before_honorific",
    "hiragana_words",
    "japanese_verb_forms",
    "korean_stem",
    "korean_verb_forms",
    "lone_kanji",
    "lone_names",
    "straddles",
]


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
