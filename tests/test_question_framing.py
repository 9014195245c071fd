"""The frame of a question about a past conversation decides nothing (docs/QUERY.md).

"你提到了什么部署" (what deployment did you mention?) is about 部署; 你提到 ("you
mentioned") only frames it.  Chinese and Japanese write no spaces, so a
sentence is searched by its bigrams: those of the frame, and those across the
frame's edge, must not be searched beside the word the question is about,
or every message that says "you mentioned" is found with it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _support import needs_extension
from _tool_fixtures import T0, conversation, open_store

from hermes_fts import session_search
from hermes_fts.query.best import best_match
from hermes_fts.query.syntax import parse_query

pytestmark = needs_extension

ZH_ANSWER, JA_ANSWER, KO_ANSWER = "部署已经完成了", "デプロイが終わりました", "배포가 끝났어요"


def searched(question: str) -> list[str]:
    return [t.text for t in best_match(parse_query(question)).terms]


def found(tmp_path: Path, question: str, answer: str, decoy: str) -> list[str]:
    """The sessions ``question`` finds among one that holds ``answer`` and a newer one
    that holds ``decoy`` (the frame, and none of the question's words)."""
    st = open_store(tmp_path / "state.db")
    try:
        conversation(st, "answer", [("user", answer)], start=T0)
        conversation(st, "decoy", [("user", decoy)], start=T0 + 10)
        return [r["session_id"] for r in session_search(st, query=question)["results"]]
    finally:
        st.close()


@pytest.mark.parametrize(
    ("question", "frame", "decoy"),
    [
        ("你提到了什么部署", "你提", "你提的建议很好"),
        ("你说过什么部署", "你说", "你说得对"),
        ("你之前提到的部署", "你之", "你之后再来吧"),
        ("我们什么时候讨论过部署", "过部", "经过部分测试"),
        ("你跟我说过部署吗", "跟我", "跟我来"),
        ("我问过你部署的事", "你部", "你部门的人"),
        ("我们讨论的那个部署问题", "个部", "这个部分很难"),
    ],
)
def test_a_chinese_frame_glued_to_the_word_is_not_searched(
    tmp_path: Path, question: str, frame: str, decoy: str
) -> None:
    """你提 (you + mention), 跟我 (with me), and 过部, 个部 across the end of 讨论过 and
    那个 were searched beside 部署, so a chat that only held them was found too."""
    assert frame not in searched(question)
    assert "部署" in searched(question)
    assert found(tmp_path, question, ZH_ANSWER, decoy) == ["answer"]


@pytest.mark.parametrize("word", ["迷你", "自我"])
def test_a_word_holding_a_pronoun_is_still_searched(word: str) -> None:
    assert word in searched(f"我们聊的{word}主机")


@pytest.mark.parametrize(
    ("question", "frame", "answer", "decoy"),
    [
        # 上次 (last time), 关于 (about), 聊天 (chat), 告诉 (told), 谈论 (discuss)
        ("我们上次聊的部署", "上次", ZH_ANSWER, "上次的会议很长"),
        ("你还记得关于部署的对话吗", "关于", ZH_ANSWER, "关于这个问题"),
        ("我们刚才聊天说的部署", "聊天", ZH_ANSWER, "聊天很开心"),
        ("你刚刚告诉我的部署", "告诉", ZH_ANSWER, "告诉他吧"),
        ("我们谈论过部署吗", "谈论", ZH_ANSWER, "大家都在谈论"),
        # 教えて (tell me), 言った (said), 前回の会話 (last time's conversation),
        # 覚えて (remember), の件 (the matter of), 言及 (mention)
        ("デプロイについて教えて", "教え", JA_ANSWER, "教えてくれてありがとう"),
        ("あなたが前に言ったデプロイ", "言っ", JA_ANSWER, "あなたが言ったとおりです"),
        ("前回の会話で話したデプロイ", "前回", JA_ANSWER, "前回の会話は楽しかった"),
        ("私たちが話したデプロイを覚えていますか", "覚え", JA_ANSWER, "私たちは覚えています"),
        ("前に聞いたデプロイの件", "件", JA_ANSWER, "前に聞いた件です"),
        ("言及したデプロイ", "言及", JA_ANSWER, "言及しました"),
        # 先ほど, 先程 (a moment ago), この前 (the other day), 何か (anything), のこと
        ("先ほど話したデプロイ", "先ほ", JA_ANSWER, "先ほどはありがとう"),
        ("先程話したデプロイ", "先程", JA_ANSWER, "先程はありがとう"),
        ("この前話したデプロイ", "前話", JA_ANSWER, "以前話したように休みです"),
        ("デプロイについて何か言ってた？", "何か", JA_ANSWER, "何か食べたい"),
        ("デプロイのことを覚えてる？", "ーのこと", JA_ANSWER, "コーヒーのことを考えた"),
        # してるって (that … is doing): a verb quoted, no noun in hiragana
        ("デプロイをしてるって言った？", "してる", JA_ANSWER, "今何してる？"),
        ("どういう仕事をしてるって言った？", "してる", "仕事はエンジニアです", "今何してる？"),
        # 말했던 (said: 말하다, whose noun is one syllable), 네가 and 당신 (you), 전에 and
        # 지난번에 (before, last time), 관해 and 대해서 (about), 대화 (conversation), 언급 (mention)
        ("전에 말했던 배포", "말했던", KO_ANSWER, "전에 말했던 대로 했어요"),
        ("네가 말한 배포", "네가", KO_ANSWER, "네가 말한 게 맞아"),
        ("지난번에 말한 배포", "지난번에", KO_ANSWER, "지난번에 만났을 때"),
        ("배포에 관해 얘기했었나요", "관해", KO_ANSWER, "그것에 관해 생각했어요"),
        ("배포에 대해서 대화했던 적 있어?", "대화했던", KO_ANSWER, "대화했던 적 있어"),
        ("당신이 언급한 배포", "언급한", KO_ANSWER, "당신이 언급한 책"),
        # 叫什么 (is called what), 怎么样 (how is it): X叫 and X怎 are no words
        ("你记得我妹妹叫什么吗", "妹叫", "妹妹在北京上学", "妹叫我吃饭"),
        ("那个餐厅怎么样", "厅怎", "餐厅很好吃", "大厅怎么走"),
        # 봤다고 했지 (you said you saw): a quoted verb, in a form no answer holds;
        # 뭐였지 (what was it), 어느 (which), 그 (that)
        ("무슨 영화 봤다고 했지?", "봤다고", "영화 기생충을 봤어", "그거 봤다고 했잖아"),
        ("어떤 취미가 있다고 했지?", "있다고", "취미는 등산이야", "시간 있다고 했잖아"),
        ("그 책 제목이 뭐였지?", "그", "책 제목은 데미안이야", "그래 그거 뭐였지"),
        ("어느 호텔에 묵었어?", "어느", "신라호텔에 묵었어", "어느 쪽이야"),
        # 알려줘 (tell me) and 샀는지 (what … bought, asked inside it), 뭐였어 and 어디였지
        # (what, where was it), 내 (my)
        ("어떤 노트북을 샀는지 알려줘", "알려줘", "노트북은 맥북이야", "그거 알려줘"),
        ("그 회사 이름이 뭐였어?", "뭐였어", "회사 이름은 카카오야", "그게 뭐였어"),
        ("여행지가 어디였지?", "어디였지", "여행지는 제주도였어", "거기가 어디였지"),
        ("내 동생 이름 기억나?", "내", "동생 이름은 민지야", "내일 봐"),
    ],
)
def test_a_cjk_framing_word_is_not_searched(
    tmp_path: Path, question: str, frame: str, answer: str, decoy: str
) -> None:
    """These words frame a question as 讨论, 話した and 얘기했던 do, but were searched
    beside the word the question is about, and found the chat that only held them."""
    assert frame not in searched(question)
    assert found(tmp_path, question, answer, decoy) == ["answer"]


def test_a_quoted_hada_verb_names_its_noun() -> None:
    """배포했다고 (said it was deployed) is the noun 배포 made a verb, not a quoted
    verb that names nothing; nor is 이사 (moving house) the 이 (this) left out."""
    assert "배포" in searched("민수가 배포했다고 했지?")
    assert "이사" in searched("서연이 이사 간다고 했지?")


@pytest.mark.parametrize(
    ("question", "noun", "answer", "decoy"),
    [
        ("有没有提到过猫", "猫", "我家的猫很可爱", "有没有空"),
        ("我们聊过猫吗", "猫", "我家的猫很可爱", "我们聊过天"),
        ("你推荐过什么书", "书", "我推荐你读三体这本书", "推荐一部电影"),
        ("我上次买的是什么车", "车", "车是特斯拉", "我上次买的是什么来着"),
        ("你之前说过的书", "书", "那本书很好", "你之前说过的话"),
        ("我的猫叫什么名字", "猫", "我家的猫很可爱", "我的手机"),
    ],
)
def test_a_one_character_noun_after_the_frame_is_searched(
    tmp_path: Path, question: str, noun: str, answer: str, decoy: str
) -> None:
    """A one-character noun after grammar (什么书, 的书) or a framing verb (提到过猫)
    was only searched in its bigrams (么书, 过猫), words of no message: the chat
    about the cat was not found, or came after one sharing the frame."""
    assert noun in searched(question)
    assert found(tmp_path, question, answer, decoy)[0] == "answer"


@pytest.mark.parametrize(
    ("question", "noun", "pointing", "answer", "decoy"),
    [
        ("你刚才说的那本书", "书", "那本", "书名是三体", "那本杂志"),
        ("你上次去的那家店", "店", "那家", "店名是老王烧烤", "那家伙"),
    ],
)
def test_that_one_is_no_word_its_noun_is(
    tmp_path: Path, question: str, noun: str, pointing: str, answer: str, decoy: str
) -> None:
    """那本书 (that book) was searched as 那本 and 本书, never 书: "书名是三体" (the
    title is…) was found after "那本杂志" (that magazine)."""
    assert noun in searched(question) and pointing not in searched(question)
    assert found(tmp_path, question, answer, decoy) == ["answer"]


def test_a_question_word_is_no_one_character_noun() -> None:
    assert "样" not in searched("我们讨论过怎么样的方案")
    assert "敏" not in searched("你对什么过敏")
    assert "做" not in searched("我们讨论的部署怎么做")  # how to: a verb
    assert "天气" in searched("今天气怎么样")  # 气怎 at the word's start stays


def test_a_horse_is_still_a_word() -> None:
    """말 alone is a word (a horse, an end): only 말하다's forms frame a question."""
    assert "말" in searched("말 타기 배포")


@pytest.mark.parametrize(
    ("question", "frame"),
    [
        ("Do you remember what I told you about kubernetes?", "told"),
        ("do you recall when we chatted about kubernetes", "chatted"),
        ("remind me what we said about kubernetes", "remind"),
        ("what was it I asked you about kubernetes earlier", "asked"),
        ("what were we talking about regarding kubernetes", "regarding"),
        ("you mentioned kubernetes previously", "previously"),
    ],
)
def test_an_english_framing_word_is_not_searched(tmp_path: Path, question: str, frame: str) -> None:
    """told (tell was common), chatted, remind, asked, earlier, regarding and previously
    frame a question as talk and remember do, but were searched beside kubernetes.
    Not chat: a noun too, and a project's name (chat-relay) holds it."""
    assert "chat" in searched("chat-relay的编码错误是怎么解决的")
    assert frame not in searched(question)
    decoy = "I told you to remind me, we chatted earlier and previously, I asked regarding it"
    assert found(tmp_path, question, "the kubernetes cluster is up", decoy) == ["answer"]


@pytest.mark.parametrize(
    ("question", "pair", "decoy"),
    [
        ("这周我们聊了部署", "周我", "这周我很忙"),
        ("上周你说的部署是什么", "周你", "上周你去哪了"),
        ("先週話したデプロイは何でしたっけ", "週話", "先週話した"),
    ],
)
def test_a_pair_across_a_time_words_end_into_the_frame_is_not_searched(
    tmp_path: Path, question: str, pair: str, decoy: str
) -> None:
    """The two characters across a time word's end are searched so that 天津 of
    前天津市长 still counts; into a pronoun or a framing word (周我 of 这周我们, 週話 of
    先週話した) they name nothing, and found "I'm busy this week" (这周我很忙)."""
    assert pair not in searched(question)
    answer = JA_ANSWER if "デプロイ" in question else ZH_ANSWER
    assert found(tmp_path, question, answer, decoy) == ["answer"]


@pytest.mark.parametrize(
    ("question", "frame", "decoy"),
    [
        ("你还记得上周的部署吗", "你还记得", "你还记得我上次跟你说的吗？"),
        ("我们讨论过 部署", "我们讨论过", "我们讨论过很多次"),
        ("部署 覚えていますか", "覚えていますか", "覚えていますか"),
    ],
)
def test_a_sentence_of_framing_words_alone_is_not_searched(
    tmp_path: Path, question: str, frame: str, decoy: str
) -> None:
    """你还记得 (do you remember), cut from the question by its time word or written
    apart, is a sentence whose every part is a common word; it was searched
    whole all the same, and found every chat asking "do you remember"."""
    assert frame not in searched(question)
    assert found(tmp_path, question, ZH_ANSWER, decoy) == ["answer"]


@pytest.mark.parametrize(
    ("question", "name", "honorific", "answer", "decoy"),
    [
        ("田中さんに何をあげた？", "田中", "中さ", "田中に本をあげた", "山中さんが来た"),
        ("林さんに何をあげた？", "林", "林さ", "林に本をあげた", "ケンさんが来た"),
        (
            "さくらちゃんの好きな食べ物は？",
            "さくら",
            "さくらちゃん",
            "さくらはカレーが好き",
            "ちゃんと食べた",
        ),
    ],
)
def test_a_japanese_honorific_is_no_part_of_the_name(
    tmp_path: Path, question: str, name: str, honorific: str, answer: str, decoy: str
) -> None:
    """田中さん was searched as 田中 and 中さ, the pair across the honorific, which
    found 山中さん (another name) before the 田中 the question is about."""
    assert name in searched(question) and honorific not in searched(question)
    assert found(tmp_path, question, answer, decoy)[0] == "answer"


def test_two_overlapping_bigrams_of_a_sentence_are_one_word(tmp_path: Path) -> None:
    """张伟说的岩馆是怎么回事: 伟说, the name glued to the verb after it, was searched
    as a word of its own beside 张伟, so a chat that said 张伟说 held the name twice
    and came before the one about 张伟 and 岩馆.  Of two overlapping bigrams at most
    one is a word of the sentence; held, they count once (and a long word, its
    three bigrams, no longer weighs three names)."""
    question = "张伟说的岩馆是怎么回事"
    st = open_store(tmp_path / "state.db")
    try:
        said = [
            ("answer", "张伟最近常去岩馆"),
            ("other", "岩馆周末人很多"),
            ("decoy", "张伟说比赛是最难的部分"),
            *[(f"filler{i}", "今天天气不错") for i in range(7)],
        ]
        for n, (sid, text) in enumerate(said):
            conversation(st, sid, [("user", text)], start=T0 + n)
        got = session_search(st, query=question)
        assert [r["session_id"] for r in got["results"]][:2] == ["answer", "decoy"]
        # one word to the score, yet each bigram is named as the row holds it
        rows = st.search(question, sort="sessions", fields=["session_id", "matched_terms"]).rows
        matched = {r["session_id"]: r["matched_terms"] for r in rows}
        assert (matched["decoy"], matched["answer"]) == (["张伟", "伟说"], ["张伟", "岩馆"])
        assert st.parts_held(question, matched["decoy"]) == [(question, ["张伟说"])]
    finally:
        st.close()
