"""Word lists and sentence templates for ``benchmarks.histories`` (data only).

Every language has the same structure, so the generator never branches on
the language: people's names, relations, chat topics (a category word the
sessions never use, four topic words they repeat, and optionally a surface
form of one of them that only questions use), coding topics, sentences that
every session shares (the generic words distractors have in common) and
question templates.

Slots: ``{me}`` the history's owner, ``{name}``/``{rel}`` a relative and the
relation, ``{t}``/``{t2}`` topic words, ``{p}`` a project, ``{cat}`` a
category word, ``{who}``/``{what}``/``{when}`` a question's cues.
"""

from __future__ import annotations

LANGS = ("en", "zh", "ja", "ko")

NAMES = {
    "en": "Anna Maria Tom Lucas Emma Noah Olivia Liam Sophie Daniel Grace Henry Chloe Jack Ruby Oscar".split(),
    "zh": "小雨 王磊 李娜 张伟 刘洋 陈静 杨帆 赵敏 周杰 吴昊 徐婷 孙悦 马超 朱琳 胡斌 郭佳".split(),
    "ja": "アンナ さくら 健太 陽子 大輔 美咲 翔太 由美 拓也 恵美 直樹 彩花 悠真 千尋 蓮司 真央".split(),
    "ko": "안나 민준 서연 지훈 수빈 도윤 하은 현우 지민 예린 태호 유진 성민 다은 준호 소희".split(),
}

# One relation per column: the same relation in every language.
RELATIONS = {
    "en": ["sister", "brother", "mother", "friend", "colleague", "neighbour", "son", "daughter"],
    "zh": ["姐姐", "哥哥", "妈妈", "朋友", "同事", "邻居", "儿子", "女儿"],
    "ja": ["姉", "兄", "母", "友達", "同僚", "隣人", "息子", "娘"],
    "ko": ["언니", "오빠", "엄마", "친구", "동료", "이웃", "아들", "딸"],
}

# Chat topics: category word per language, then per language the topic words
# (the first is the headline) and an (in-session form, question-only form) pair.
CHAT_TOPICS: list[dict[str, tuple[str, list[str], tuple[str, str] | None]]] = [
    {
        "en": (
            "hobby",
            ["bouldering", "chalk", "crimps", "climbing gym"],
            ("bouldering", "boulder"),
        ),
        "zh": ("爱好", ["攀岩", "镁粉", "岩馆", "抱石"], None),
        "ja": ("趣味", ["ボルダリング", "チョーク", "ホールド", "登った"], ("登った", "登る")),
        "ko": ("취미", ["클라이밍", "초크", "암장", "홀드"], ("등반했어요", "등반하다")),
    },
    {
        "en": ("hobby", ["pottery", "clay", "glazed", "kiln"], ("glazed", "glaze")),
        "zh": ("爱好", ["陶艺", "陶土", "釉料", "窑"], None),
        "ja": ("趣味", ["陶芸", "粘土", "釉薬", "焼いた"], ("焼いた", "焼く")),
        "ko": ("취미", ["도예", "점토", "유약", "가마"], ("빚었어요", "빚다")),
    },
    {
        "en": ("hobby", ["sourdough", "starter", "proofing", "baked"], ("baked", "baking")),
        "zh": ("爱好", ["酸面包", "酵种", "发酵", "烤箱"], None),
        "ja": ("趣味", ["サワードウ", "酵母", "発酵", "オーブン"], ("発酵させた", "発酵させる")),
        "ko": ("취미", ["사워도우", "발효종", "발효", "오븐"], ("구웠어요", "굽다")),
    },
    {
        "en": ("hobby", ["chess", "openings", "Sicilian", "tournament"], ("openings", "opening")),
        "zh": ("爱好", ["国际象棋", "开局", "西西里", "比赛"], None),
        "ja": ("趣味", ["チェス", "序盤", "シシリアン", "大会"], ("負けた", "負ける")),
        "ko": ("취미", ["체스", "오프닝", "시실리안", "대회"], ("이겼어요", "이기다")),
    },
    {
        "en": ("hobby", ["guitar", "chords", "fingerpicking", "capo"], ("chords", "chord")),
        "zh": ("爱好", ["吉他", "和弦", "指弹", "变调夹"], None),
        "ja": ("趣味", ["ギター", "コード", "指弾き", "カポ"], ("弾いた", "弾く")),
        "ko": ("취미", ["기타", "코드", "핑거스타일", "카포"], ("연습했어요", "연습하다")),
    },
    {
        "en": ("pet", ["puppy", "leash", "vet", "barking"], ("barking", "barked")),
        "zh": ("宠物", ["小狗", "牵引绳", "兽医", "疫苗"], None),
        "ja": ("ペット", ["子犬", "リード", "獣医", "吠えた"], ("吠えた", "吠える")),
        "ko": ("반려동물", ["강아지", "목줄", "수의사", "예방접종"], ("짖었어요", "짖다")),
    },
    {
        "en": (
            "pet",
            ["kitten", "litter box", "scratching post", "neutered"],
            ("neutered", "neuter"),
        ),
        "zh": ("宠物", ["小猫", "猫砂", "猫抓板", "绝育"], None),
        "ja": ("ペット", ["子猫", "猫砂", "爪とぎ", "去勢"], ("引っかいた", "引っかく")),
        "ko": ("반려동물", ["고양이", "모래", "스크래처", "중성화"], ("할퀴었어요", "할퀴다")),
    },
    {
        "en": ("trip", ["Kyoto", "ryokan", "temples", "bullet train"], ("temples", "temple")),
        "zh": ("旅行", ["京都", "温泉旅馆", "寺庙", "新干线"], None),
        "ja": ("旅行", ["京都", "旅館", "お寺", "新幹線"], ("泊まった", "泊まる")),
        "ko": ("여행", ["교토", "료칸", "사찰", "신칸센"], ("묵었어요", "묵다")),
    },
    {
        "en": ("trip", ["Lisbon", "trams", "pastel de nata", "Alfama"], ("trams", "tram")),
        "zh": ("旅行", ["里斯本", "电车", "蛋挞", "阿尔法玛"], None),
        "ja": ("旅行", ["リスボン", "路面電車", "エッグタルト", "アルファマ"], ("歩いた", "歩く")),
        "ko": ("여행", ["리스본", "트램", "에그타르트", "알파마"], ("걸었어요", "걷다")),
    },
    {
        "en": ("trip", ["Dolomites", "hut", "via ferrata", "hiking"], ("hiking", "hike")),
        "zh": ("旅行", ["多洛米蒂", "山屋", "铁索攀登", "登山鞋"], None),
        "ja": ("旅行", ["ドロミテ", "山小屋", "登山靴", "縦走"], ("縦走した", "縦走する")),
        "ko": ("여행", ["돌로미티", "산장", "비아페라타", "등산화"], ("올랐어요", "오르다")),
    },
    {
        "en": (
            "health problem",
            ["knee", "physiotherapy", "meniscus", "swelling"],
            ("swelling", "swollen"),
        ),
        "zh": ("健康问题", ["膝盖", "理疗", "半月板", "肿胀"], None),
        "ja": ("体の不調", ["膝", "リハビリ", "半月板", "腫れ"], ("腫れた", "腫れる")),
        "ko": ("건강 문제", ["무릎", "물리치료", "반월판", "붓기"], ("다쳤어요", "다치다")),
    },
    {
        "en": (
            "health problem",
            ["allergy", "pollen", "antihistamine", "sneezing"],
            ("sneezing", "sneeze"),
        ),
        "zh": ("健康问题", ["过敏", "花粉", "抗组胺药", "打喷嚏"], None),
        "ja": (
            "体の不調",
            ["アレルギー", "花粉", "抗ヒスタミン薬", "くしゃみ"],
            ("飲んだ", "飲む"),
        ),
        "ko": ("건강 문제", ["알레르기", "꽃가루", "항히스타민제", "재채기"], ("먹었어요", "먹다")),
    },
    {
        "en": ("event", ["wedding", "bridesmaid", "speech", "venue"], ("wedding", "weddings")),
        "zh": ("活动", ["婚礼", "伴娘", "致辞", "场地"], None),
        "ja": ("イベント", ["結婚式", "ブライズメイド", "スピーチ", "会場"], ("頼まれた", "頼む")),
        "ko": ("행사", ["결혼식", "들러리", "축사", "예식장"], ("부탁받았어요", "부탁하다")),
    },
    {
        "en": ("event", ["birthday", "cake", "surprise party", "candles"], ("candles", "candle")),
        "zh": ("活动", ["生日", "蛋糕", "惊喜派对", "蜡烛"], None),
        "ja": ("イベント", ["誕生日", "ケーキ", "サプライズ", "ろうそく"], ("祝った", "祝う")),
        "ko": ("행사", ["생일", "케이크", "깜짝파티", "촛불"], ("축하했어요", "축하하다")),
    },
    {
        "en": ("job", ["interview", "recruiter", "salary", "offer"], ("interview", "interviewed")),
        "zh": ("工作", ["面试", "猎头", "薪水", "录用通知"], None),
        "ja": ("仕事", ["面接", "採用担当", "給料", "内定"], ("受けた", "受ける")),
        "ko": ("직장", ["면접", "리크루터", "연봉", "합격"], ("봤어요", "보다")),
    },
    {
        "en": ("housing", ["apartment", "landlord", "deposit", "movers"], ("movers", "moving")),
        "zh": ("住房", ["公寓", "房东", "押金", "搬家公司"], None),
        "ja": ("住まい", ["アパート", "大家", "敷金", "引っ越し業者"], ("払った", "払う")),
        "ko": ("주거", ["아파트", "집주인", "보증금", "이삿짐센터"], ("냈어요", "내다")),
    },
    {
        "en": (
            "finances",
            ["tax return", "deductions", "receipts", "accountant"],
            ("deductions", "deduct"),
        ),
        "zh": ("财务", ["报税", "抵扣", "发票", "会计"], None),
        "ja": ("家計", ["確定申告", "控除", "領収書", "税理士"], ("出した", "出す")),
        "ko": ("재정", ["연말정산", "공제", "영수증", "세무사"], ("챙겼어요", "챙기다")),
    },
    {
        "en": ("recipe", ["ramen", "broth", "noodles", "miso"], ("noodles", "noodle")),
        "zh": ("菜谱", ["拉面", "高汤", "面条", "味噌"], None),
        "ja": ("レシピ", ["ラーメン", "スープ", "麺", "味噌"], ("煮込んだ", "煮込む")),
        "ko": ("요리", ["라멘", "육수", "면", "된장"], ("끓였어요", "끓이다")),
    },
]

# Coding topics: the words of the conversation per language, an (in-session,
# question-only) form, and the English of the tool output (the same in every
# language, as tools print it).
CODE_TOPICS: list[dict[str, tuple[list[str], tuple[str, str]]]] = [
    {
        "en": (["migration", "alembic", "revision", "fixed"], ("fixed", "fix")),
        "zh": (["数据库迁移", "alembic", "字段", "修好"], ("修好", "修复")),
        "ja": (["マイグレーション", "alembic", "カラム", "直した"], ("直した", "直す")),
        "ko": (["마이그레이션", "alembic", "컬럼", "고쳤어요"], ("고쳤어요", "고치다")),
    },
    {
        "en": (["deploy", "staging", "rollback", "deployed"], ("deployed", "deployment")),
        "zh": (["部署", "预发环境", "回滚", "上线"], ("上线", "发布")),
        "ja": (
            ["デプロイ", "ステージング", "ロールバック", "デプロイした"],
            ("デプロイした", "デプロイする"),
        ),
        "ko": (["배포", "스테이징", "롤백", "배포했어요"], ("배포했어요", "배포하다")),
    },
    {
        "en": (["flaky", "pytest", "fixture", "timeouts"], ("timeouts", "timeout")),
        "zh": (["不稳定", "pytest", "测试用例", "超时"], ("超时", "超时了")),
        "ja": (["不安定", "pytest", "フィクスチャ", "落ちた"], ("落ちた", "落ちる")),
        "ko": (["불안정", "pytest", "픽스처", "실패했어요"], ("실패했어요", "실패하다")),
    },
    {
        "en": (["memory leak", "heap", "profiler", "workers"], ("workers", "worker")),
        "zh": (["内存泄漏", "堆内存", "分析器", "进程"], ("泄漏", "泄露")),
        "ja": (["メモリリーク", "ヒープ", "プロファイラ", "増えた"], ("増えた", "増える")),
        "ko": (["메모리 누수", "힙", "프로파일러", "늘었어요"], ("늘었어요", "늘다")),
    },
    {
        "en": (["OAuth", "refresh token", "expired", "login"], ("expired", "expiry")),
        "zh": (["OAuth", "刷新令牌", "过期", "登录"], ("过期", "失效")),
        "ja": (["OAuth", "リフレッシュトークン", "期限切れ", "ログイン"], ("切れた", "切れる")),
        "ko": (["OAuth", "리프레시 토큰", "만료", "로그인"], ("만료됐어요", "만료되다")),
    },
    {
        "en": (["CSV", "export", "encoding", "exported"], ("exported", "exporting")),
        "zh": (["CSV", "导出", "编码", "乱码"], ("乱码", "编码错误")),
        "ja": (["CSV", "エクスポート", "文字コード", "文字化け"], ("文字化けした", "文字化けする")),
        "ko": (["CSV", "내보내기", "인코딩", "깨졌어요"], ("깨졌어요", "깨지다")),
    },
    {
        "en": (["rate limit", "retries", "backoff", "throttled"], ("retries", "retry")),
        "zh": (["限流", "重试", "退避", "429"], ("重试", "重新尝试")),
        "ja": (["レート制限", "リトライ", "バックオフ", "弾かれた"], ("弾かれた", "弾かれる")),
        "ko": (["속도 제한", "재시도", "백오프", "막혔어요"], ("막혔어요", "막히다")),
    },
    {
        "en": (["Docker", "build cache", "layers", "image"], ("layers", "layer")),
        "zh": (["Docker", "构建缓存", "镜像", "分层"], ("镜像", "映像")),
        "ja": (["Docker", "ビルドキャッシュ", "イメージ", "遅くなった"], ("遅くなった", "遅い")),
        "ko": (["Docker", "빌드 캐시", "이미지", "느려졌어요"], ("느려졌어요", "느리다")),
    },
]

# What each coding topic's tools print (English, as tools do), with {p} and {t}.
CODE_OUTPUT = [
    "INFO  [alembic.runtime.migration] Running upgrade 3f2a1c -> 9b7e44, add due_date to invoices\n"
    "sqlalchemy.exc.OperationalError: (sqlite3.OperationalError) no such column: invoices.due_date",
    "deploying {p} to staging ... health check failed: GET /healthz returned 503\nrolling back to release {n}",
    "FAILED tests/test_sync.py::test_upload_resumes - TimeoutError: fixture 'server' took 30.0s\n"
    "1 failed, {n} passed in 41.2s",
    "worker rss grew from 180MB to 2.1GB over 6h; top allocations: lxml.etree._Element (61%), "
    "{p}/cache.py:88",
    "POST /oauth/token -> 401 invalid_grant: refresh token expired at 2024-11-02T10:15:00Z",
    "UnicodeEncodeError: 'ascii' codec can't encode character '\\u00e9' in position {n}: "
    "ordinal not in range(128) (export.csv)",
    "HTTP 429 Too Many Requests; Retry-After: 30; attempt {n} of 5 (backoff 8s)",
    "Step 7/12 : RUN pip install -r requirements.txt\n ---> Running in 4c1d (cache miss: layer invalidated by COPY . .)",
]

PROJECTS = (
    "billing-api photo-sync garden-bot ledger-web recipe-box trail-map invoice-gen chat-relay "
    "budget-cli quiz-app plant-watch music-tag"
).split()

TOOLS = ("terminal", "read_file", "search_files", "patch")

# Personal chat sentences; {t}/{t2} are topic words, {name}/{rel} the relative.
CHAT_USER = {
    "en": [
        "My {rel} {name} got me into {t} and now I can't stop thinking about it.",
        "{name} says the {t2} is the hardest part, is that true?",
        "I spent the whole evening on {t} again, {name} joined me for a bit.",
        "How do I get better at {t} without spending too much?",
        "{name} asked whether {t2} matters much for a beginner.",
        "Can you compare {t} and {t2} for me?",
    ],
    "zh": [
        "我{rel}{name}带我开始了{t}，现在我天天都在想这件事。",
        "{name}说{t2}是最难的部分，真的吗？",
        "我昨晚又花了一整晚在{t}上，{name}也来了一会儿。",
        "怎么在不花太多钱的情况下把{t}做得更好？",
        "{name}问{t2}对新手来说重要不重要。",
        "你能帮我比较一下{t}和{t2}吗？",
    ],
    "ja": [
        "{rel}の{name}に誘われて{t}を始めたんだけど、すっかりはまっています。",
        "{name}が{t2}が一番難しいって言うんだけど、本当？",
        "昨日の夜もずっと{t}をしていて、{name}も少し来てくれました。",
        "あまりお金をかけずに{t}を上達させるにはどうすればいい？",
        "{name}が初心者にとって{t2}は大事かどうか聞いてきました。",
        "{t}と{t2}を比べてもらえますか。",
    ],
    "ko": [
        "{rel} {name}{ga} {t}{eul} 알려줘서 요즘 계속 그 생각만 해요.",
        "{name}{ga} {t2}{ga2} 제일 어렵다고 하는데 정말이에요?",
        "어제 저녁에도 {t}{eul} 했는데 {name}{do} 잠깐 왔어요.",
        "돈을 너무 많이 안 쓰고 {t} 실력을 늘리려면 어떻게 해요?",
        "{name}{ga} 초보자한테 {t2}{ga2} 중요하냐고 물어봤어요.",
        "{t}{wa} {t2}{eul2} 비교해 줄 수 있어요?",
    ],
}

CHAT_ASSISTANT = {
    "en": [
        "That sounds great, {me}! With {t}, the {t2} usually takes a few weeks to get right.",
        "For {t}, I'd start small: focus on {t2} first and keep notes on what works.",
        "Good question. Most people find {t2} tricky at first, so {name} is right to ask.",
        "Here is a simple plan for {t}: two short sessions a week, and review the {t2} each time.",
    ],
    "zh": [
        "听起来很棒，{me}！{t}的话，{t2}通常要几个星期才能掌握。",
        "做{t}的话，我建议先从{t2}开始，把有效的方法记下来。",
        "好问题。大多数人一开始都觉得{t2}很难，所以{name}问得很对。",
        "给你一个简单的{t}计划：每周两次，每次都复习一下{t2}。",
    ],
    "ja": [
        "いいですね、{me}さん！{t}なら、{t2}に慣れるまで数週間かかるのが普通です。",
        "{t}はまず{t2}から始めて、うまくいったことをメモしておくのがおすすめです。",
        "いい質問です。{t2}は最初は難しく感じる人が多いので、{name}さんの疑問はもっともです。",
        "{t}の簡単な計画です：週に二回、毎回{t2}を見直しましょう。",
    ],
    "ko": [
        "좋네요, {me} 님! {t}{neun} {t2}에 익숙해지는 데 보통 몇 주 걸려요.",
        "{t}{neun} {t2}부터 시작하고 잘 된 방법을 적어 두세요.",
        "좋은 질문이에요. {t2}{neun} 처음엔 다들 어려워하니까 {name} 님 질문이 맞아요.",
        "{t} 계획을 간단히 드릴게요: 일주일에 두 번, 매번 {t2}{eul2} 복습하세요.",
    ],
}

# Shared by every session: the generic words a question has in common with
# every distractor ("remember", "talk", "last", "time", ...).
GENERIC_USER = {
    "en": [
        "Thanks, that helps a lot.",
        "Do you remember what I told you last time?",
        "Ok, let me think about it and we can talk again tomorrow.",
        "What would you do in my place?",
        "Sorry, I was busy this week. Where were we?",
        "Can you say that again more simply?",
    ],
    "zh": [
        "谢谢，这很有帮助。",
        "你还记得我上次跟你说的吗？",
        "好的，我想一想，我们明天再聊。",
        "如果是你，你会怎么做？",
        "不好意思，这周太忙了。我们说到哪儿了？",
        "你能说得简单一点吗？",
    ],
    "ja": [
        "ありがとう、とても助かります。",
        "前回話したこと、覚えていますか。",
        "じゃあ少し考えて、また明日話しましょう。",
        "あなたならどうしますか。",
        "今週は忙しくてごめんなさい。どこまで話しましたっけ。",
        "もう少し簡単に言ってもらえますか。",
    ],
    "ko": [
        "고마워요, 정말 도움이 돼요.",
        "지난번에 제가 말한 거 기억나요?",
        "알겠어요, 좀 생각해 보고 내일 다시 얘기해요.",
        "당신이라면 어떻게 하겠어요?",
        "이번 주에 바빠서 미안해요. 어디까지 얘기했죠?",
        "좀 더 쉽게 말해 줄 수 있어요?",
    ],
}

GENERIC_ASSISTANT = {
    "en": [
        "Of course! Let me know if there is anything else I can help with.",
        "I remember we talked about this before. Take your time and go step by step.",
        "That makes sense. It is normal to feel unsure at the start.",
        "Sure, here is a short summary of what we said so far.",
        "Happy to help. Tell me how it goes next time.",
    ],
    "zh": [
        "当然！还有什么需要帮忙的随时告诉我。",
        "我记得我们之前聊过这个。慢慢来，一步一步做。",
        "这很正常，刚开始没把握是很自然的。",
        "好的，下面是我们目前说过的内容的简短总结。",
        "很高兴能帮上忙。下次告诉我进展如何。",
    ],
    "ja": [
        "もちろんです！ほかに手伝えることがあれば言ってください。",
        "前にもこの話をしましたね。焦らず一歩ずつ進めましょう。",
        "なるほど。最初は自信がないのも普通です。",
        "はい、ここまで話したことを短くまとめます。",
        "お役に立ててうれしいです。次回どうなったか教えてください。",
    ],
    "ko": [
        "물론이죠! 더 도와드릴 게 있으면 말씀해 주세요.",
        "전에 이 얘기를 했던 게 기억나요. 천천히 한 단계씩 해 봐요.",
        "그럴 수 있어요. 처음에는 확신이 없는 게 당연해요.",
        "네, 지금까지 얘기한 내용을 짧게 정리해 드릴게요.",
        "도움이 돼서 기뻐요. 다음에 어떻게 됐는지 알려 주세요.",
    ],
}

CODE_USER = {
    "en": [
        "The {t} in {p} is broken again, can you look at it?",
        "Still seeing the {t2} problem in {p}. Any idea?",
        "Ok that worked. Can you also check the {t2} part?",
        "Please run the tests for {p} again.",
    ],
    "zh": [
        "{p}的{t}又出问题了，帮我看看？",
        "{p}里的{t2}问题还在，有什么想法吗？",
        "好了，这个可以了。你再看看{t2}那部分？",
        "再跑一遍{p}的测试。",
    ],
    "ja": [
        "{p}の{t}がまた壊れています。見てもらえますか。",
        "{p}で{t2}の問題がまだ出ます。何か心当たりは？",
        "それで動きました。{t2}の部分も確認してもらえますか。",
        "{p}のテストをもう一度実行してください。",
    ],
    "ko": [
        "{p}의 {t}에 또 문제가 생겼어요. 좀 봐 줄래요?",
        "{p}에서 {t2} 문제가 아직 나와요. 짐작 가는 게 있어요?",
        "그걸로 됐어요. {t2} 부분도 확인해 줄래요?",
        "{p} 테스트를 다시 돌려 주세요.",
    ],
}

CODE_ASSISTANT = {
    "en": [
        "I'll look at the {t} first. Let me check the logs in {p}.",
        "The output shows the {t2} is the cause. I'll patch it and rerun.",
        "Done: the {t} is {t3} now and the tests pass.",
        "Let me search the code for where the {t2} is set up.",
    ],
    "zh": [
        "我先看看{t}，查一下{p}的日志。",
        "输出显示原因是{t2}。我来改一下再跑一遍。",
        "好了：{t}已经{t3}，测试都通过了。",
        "我在代码里搜一下{t2}是在哪里配置的。",
    ],
    "ja": [
        "まず{t}を見ます。{p}のログを確認しますね。",
        "出力を見ると原因は{t2}です。修正して再実行します。",
        "完了です：{t}は{t3}ので、テストも通りました。",
        "{t2}をどこで設定しているかコードを検索します。",
    ],
    "ko": [
        "먼저 {t}부터 볼게요. {p} 로그를 확인해 볼게요.",
        "출력을 보니 원인은 {t2}예요. 수정하고 다시 돌려 볼게요.",
        "완료: {t} 문제는 {t3} 테스트도 통과해요.",
        "{t2}{ga2} 어디서 설정되는지 코드를 검색해 볼게요.",
    ],
}

# Question openers with {who} {what} {when}; "cat" templates ask for a category.
QUESTIONS = {
    "en": [
        "What did {who} say about {what}{when}?",
        "Do you remember the conversation with {who} about {what}{when}?",
        "What advice did you give about {who} and {what}{when}?",
    ],
    "zh": [
        "{when}{who}说的{what}是怎么回事？",
        "你还记得{when}关于{who}和{what}的对话吗？",
        "{when}你给{who}的{what}提了什么建议？",
    ],
    "ja": [
        "{when}{who}が{what}について何と言っていたか覚えていますか",
        "{when}{who}と{what}の話はどうなりましたか",
        "{when}{who}の{what}についてどんな助言をしましたか",
    ],
    "ko": [
        "{when}{who}{ga} {what}에 대해 뭐라고 했었죠?",
        "{when}{who}{wa} {what} 얘기 기억나요?",
        "{when}{who}의 {what}에 대해 어떤 조언을 했었나요?",
    ],
}
CATEGORY_QUESTIONS = {
    "en": [
        "What kind of {cat} did {who} get into{when}?",
        "Which {cat} did {who} talk about{when}?",
    ],
    "zh": ["{when}{who}迷上了什么{cat}？", "{when}{who}聊的是哪种{cat}？"],
    "ja": [
        "{when}{who}がはまった{cat}は何でしたか",
        "{when}{who}はどんな{cat}の話をしていましたか",
    ],
    "ko": [
        "{when}{who}{ga} 빠진 {cat}{ga2} 뭐였죠?",
        "{when}{who}{ga} 얘기한 {cat}{ga2} 뭐였어요?",
    ],
}
CODE_QUESTIONS = {
    "en": [
        "What did we do about the {what} in {who}{when}?",
        "What was the {what} problem in {who}{when}?",
    ],
    "zh": ["{when}{who}的{what}是怎么解决的？", "{when}{who}里{what}的问题是什么？"],
    "ja": [
        "{when}{who}の{what}はどうやって解決しましたか",
        "{when}{who}で{what}の問題は何でしたか",
    ],
    "ko": ["{when}{who}의 {what} 어떻게 해결했죠?", "{when}{who}에서 {what} 문제가 뭐였어요?"],
}

# Sentences a model adds to a question, and their words that no message holds
# (the smoke test checks that).
ABSENT = {
    "en": [
        "Give me the conclusion.",
        "Please summarize it specifically.",
        "I need your recommendation again.",
    ],
    "zh": ["请给我具体结论。", "最终答复是什么？"],
    "ja": ["具体的な結論を教えてください。", "総括してください。"],
    "ko": ["구체적인 결론을 알려 주세요.", "총정리해 주세요."],
}
ABSENT_WORDS = {
    "en": ["conclusion", "summarize", "specifically", "recommendation"],
    "zh": ["结论", "答复"],
    "ja": ["結論", "総括"],
    "ko": ["결론", "총정리"],
}

# Date phrases: absolute month, absolute day, and relative ones (resolved at the
# store's "now"); the dates live only in message timestamps.
MONTHS_EN = (
    "January February March April May June July August September October November December".split()
)
RELATIVE = {
    "last_week": {"en": " last week", "zh": "上周", "ja": "先週", "ko": "지난주 "},
    "last_month": {"en": " last month", "zh": "上个月", "ja": "先月", "ko": "지난달 "},
}
