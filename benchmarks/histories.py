"""Histories that look like real ones, and the questions a model asks about them.

Several people (``people_per_lang`` per language, en/zh/ja/ko) each have a
history: short personal chats (10-30 messages) about a topic and a relative,
and long coding sessions on one of their projects, with tool calls as Hermes
stores them (assistant rows with OpenAI-style ``tool_calls`` JSON, tool rows
with the tool's JSON output).  A session is recognisable through recurrence:
its relative's name and its topic words come back in many of its messages,
while every session shares generic sentences ("Do you remember what I told
you last time?").  Each person has two sessions per chat topic, so a topic
alone does not name the session; other people of the same language share
the topics and the project names.

Questions are written the way a model asks: a possessive ("Anna's sister"),
a relative's name or a project; a topic word, an inflected form no message
holds ("boulder" for "bouldering", 直す for 直した) or a category word
("what kind of hobby"); sometimes a date ("in March 2025", "上周", "先週",
"지난주"; the date lives only in the message timestamps) and words no message
holds.  Every question records these features, so misses can be grouped.

Everything is a pure function of ``(seed, people_per_lang, sessions, now)``;
``now`` (the day relative dates count from) defaults to today's midnight UTC.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from dataclasses import dataclass, field
from typing import Any

from benchmarks import histories_vocab as V

# Bump whenever the output for the same arguments changes.
HISTORIES_VERSION = 1
DAY = 86400.0
SPAN_DAYS = 420
MODELS = ("claude-sonnet-4", "gpt-4.1", "qwen3-coder", "deepseek-v3")
# Korean particles, resolved by the preceding syllable's final consonant.
_PARTICLES = {
    "ga": ("이", "가"),
    "ga2": ("이", "가"),
    "eul": ("을", "를"),
    "eul2": ("을", "를"),
    "neun": ("은", "는"),
    "wa": ("과", "와"),
}


@dataclass
class Message:
    role: str
    content: str | None
    timestamp: float
    tool_name: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = None


@dataclass
class Session:
    id: str
    person: str
    lang: str
    kind: str  # "chat" or "code"
    source: str
    model: str
    started_at: float
    topic: int
    relative: tuple[str, str] = ("", "")  # (relation, name) of a chat
    project: str = ""
    messages: list[Message] = field(default_factory=list)

    @property
    def ended_at(self) -> float:
        return self.messages[-1].timestamp


@dataclass(frozen=True)
class Question:
    person: str
    lang: str
    session_id: str
    text: str
    keywords: tuple[str, ...]
    features: tuple[str, ...]


@dataclass
class Person:
    key: str
    lang: str
    name: str
    login: str
    relatives: list[tuple[str, str]]
    projects: list[str]


@dataclass
class Histories:
    now: float
    people: list[Person]
    sessions: list[Session]
    questions: list[Question]

    def sessions_of(self, person: str) -> list[Session]:
        return [s for s in self.sessions if s.person == person]


def today_utc() -> float:
    """Midnight UTC of today: the default ``now`` of a generated history."""
    day = dt.datetime.now(dt.timezone.utc).date()
    return dt.datetime(day.year, day.month, day.day, tzinfo=dt.timezone.utc).timestamp()


def korean(text: str) -> str:
    """Resolve the ``⟨이가⟩``-style particle marks by the syllable before each."""
    out: list[str] = []
    i = 0
    while i < len(text):
        if text[i] == "⟨":
            first, second = text[i + 1], text[i + 2]
            prev = out[-1] if out else ""
            batchim = "가" <= prev <= "힣" and (ord(prev) - 0xAC00) % 28 != 0
            out.append(first if batchim else second)
            i += 4
            continue
        out.append(text[i])
        i += 1
    return "".join(out)


def fill(lang: str, template: str, **slots: str) -> str:
    """A template with its slots; Korean particles agree with the word before them."""
    marks = {k: f"⟨{a}{b}⟩" for k, (a, b) in _PARTICLES.items()}
    text = template.format(do="도", **marks, **slots)
    return korean(text) if lang == "ko" else text


# --------------------------------------------------------------------------- people


def _people(rng: random.Random, per_lang: int) -> list[Person]:
    people: list[Person] = []
    projects = list(V.PROJECTS)
    rng.shuffle(projects)
    for lang in V.LANGS:
        names = list(V.NAMES[lang])
        rng.shuffle(names)
        for i in range(per_lang):
            own = names[i]
            # Relatives come from the rest of the list, so people of one
            # language share some relatives' names, as real people do.
            others = rng.sample(names[per_lang:], 4)
            rels = rng.sample(range(len(V.RELATIONS[lang])), 4)
            relatives = [(V.RELATIONS[lang][r], n) for r, n in zip(rels, others)]
            own_projects = [projects[(len(people) * 2 + j) % len(projects)] for j in range(2)]
            login = f"user{len(people)}"
            people.append(Person(f"{lang}-{i}", lang, own, login, relatives, own_projects))
    return people


# --------------------------------------------------------------------------- sessions


def _session_id(rng: random.Random, started: float) -> str:
    stamp = dt.datetime.fromtimestamp(started, dt.timezone.utc).strftime("%Y%m%d_%H%M%S")
    return f"{stamp}_{rng.getrandbits(24):06x}"


def _start_times(rng: random.Random, now: float, count: int) -> list[float]:
    """Session starts over the last SPAN_DAYS, two of them in the previous
    calendar week and one in the previous calendar month."""
    today = dt.datetime.fromtimestamp(now, dt.timezone.utc).date()
    week_start = today - dt.timedelta(days=today.weekday() + 7)
    first_this_month = today.replace(day=1)
    month_start = (first_this_month - dt.timedelta(days=1)).replace(day=1)
    anchors = [week_start + dt.timedelta(days=rng.randint(0, 6)) for _ in range(2)]
    anchors.append(month_start + dt.timedelta(days=rng.randint(0, 20)))
    days = [float((today - d).days) for d in anchors]
    days += [rng.uniform(14, SPAN_DAYS) for _ in range(count - len(days))]
    rng.shuffle(days)
    hour = lambda: rng.uniform(8, 22) * 3600  # noqa: E731
    return [
        dt.datetime(t.year, t.month, t.day, tzinfo=dt.timezone.utc).timestamp() + hour()
        for t in (today - dt.timedelta(days=int(d)) for d in days)
    ]


def _chat(rng: random.Random, person: Person, s: Session) -> None:
    lang = person.lang
    _cat, words, infl = V.CHAT_TOPICS[s.topic][lang]
    rel, name = s.relative
    n = rng.randint(10, 30)
    ts = s.started_at
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        t, t2 = rng.sample(words, 2)
        if i == 0:
            template = V.CHAT_USER[lang][0]
            t = words[0]
        elif role == "user":
            pool = V.CHAT_USER[lang] if rng.random() < 0.55 else V.GENERIC_USER[lang]
            template = rng.choice(pool)
        else:
            pool = V.CHAT_ASSISTANT[lang] if rng.random() < 0.6 else V.GENERIC_ASSISTANT[lang]
            template = rng.choice(pool)
        text = fill(lang, template, t=t, t2=t2, name=name, rel=rel, me=person.name)
        s.messages.append(Message(role, text, ts))
        ts += rng.uniform(15, 240)


def _tool_call(rng: random.Random, person: Person, s: Session, term: str) -> tuple[str, dict]:
    root = f"/home/{person.login}/src/{s.project}"
    tool = rng.choice(V.TOOLS)
    if tool == "terminal":
        args: dict[str, Any] = {
            "command": f"cd {root} && {rng.choice(['pytest -x -q', 'make run', 'git log -3 --stat'])}"
        }
    elif tool == "read_file":
        args = {"path": f"{root}/{rng.choice(['app/models.py', 'app/api.py', 'config.toml'])}"}
    elif tool == "search_files":
        args = {"pattern": term, "path": root}
    else:
        args = {"path": f"{root}/app/api.py", "old_string": "retries=3", "new_string": "retries=5"}
    return tool, args


def _tool_output(rng: random.Random, s: Session, tool: str, args: dict) -> str:
    body = V.CODE_OUTPUT[s.topic].format(p=s.project, n=rng.randint(2, 400))
    if tool == "read_file":
        return json.dumps(
            {"content": f"# {args['path']}\n{body}", "total_lines": rng.randint(40, 900)}
        )
    if tool == "patch":
        return json.dumps({"success": True, "diff": f"--- {args['path']}\n-retries=3\n+retries=5"})
    if tool == "search_files":
        return json.dumps(
            {"matches": [f"{args['path']}/app/api.py:{rng.randint(1, 300)}: {body[:80]}"]}
        )
    return json.dumps({"output": body, "exit_code": rng.choice([0, 1, 1])})


def _code(rng: random.Random, person: Person, s: Session) -> None:
    lang = person.lang
    words, (done, _q) = V.CODE_TOPICS[s.topic][lang]
    target = rng.randint(30, 80)
    ts = s.started_at
    talk = lambda role, pool, **kw: s.messages.append(  # noqa: E731
        Message(role, fill(lang, rng.choice(pool), p=s.project, t3=done, **kw), ts)
    )
    t, t2 = words[0], rng.choice(words[1:])
    talk("user", V.CODE_USER[lang][:1], t=t, t2=t2)
    while len(s.messages) < target:
        ts += rng.uniform(5, 90)
        t, t2 = rng.sample(words, 2)
        if rng.random() < 0.15:
            talk("user", V.CODE_USER[lang], t=t, t2=t2)
            continue
        calls = []
        for _ in range(rng.choice((1, 1, 2))):
            tool, args = _tool_call(rng, person, s, t)
            call_id = f"call_{rng.getrandbits(48):012x}"
            calls.append((call_id, tool, args))
        text = fill(lang, rng.choice(V.CODE_ASSISTANT[lang]), p=s.project, t=t, t2=t2, t3=done)
        tool_calls = [
            {
                "id": c,
                "type": "function",
                "function": {"name": tool, "arguments": json.dumps(args, ensure_ascii=False)},
            }
            for c, tool, args in calls
        ]
        s.messages.append(
            Message("assistant", text if rng.random() < 0.6 else None, ts, tool_calls=tool_calls)
        )
        for call_id, tool, args in calls:
            ts += rng.uniform(1, 20)
            s.messages.append(
                Message(
                    "tool",
                    _tool_output(rng, s, tool, args),
                    ts,
                    tool_name=tool,
                    tool_call_id=call_id,
                )
            )
    ts += rng.uniform(5, 60)
    talk("assistant", V.CODE_ASSISTANT[lang][2:3], t=words[0], t2=words[1])


def _sessions(rng: random.Random, person: Person, count: int, now: float) -> list[Session]:
    n_code = max(1, count // 4)
    n_chat = count - n_code
    topics = rng.sample(range(len(V.CHAT_TOPICS)), max(1, (n_chat + 1) // 2))
    starts = _start_times(rng, now, count)
    out = []
    for i, started in enumerate(starts):
        sid = _session_id(rng, started)
        model = rng.choice(MODELS)
        if i < n_chat:
            relative = rng.choice(person.relatives)
            source = rng.choice(("telegram", "cli", "telegram"))
            s = Session(
                sid,
                person.key,
                person.lang,
                "chat",
                source,
                model,
                started,
                topics[i % len(topics)],
                relative,
            )
            _chat(rng, person, s)
        else:
            topic = rng.randrange(len(V.CODE_TOPICS))
            s = Session(
                sid,
                person.key,
                person.lang,
                "code",
                "cli",
                model,
                started,
                topic,
                project=rng.choice(person.projects),
            )
            _code(rng, person, s)
        out.append(s)
    return out


# --------------------------------------------------------------------------- questions


def _date_cue(rng: random.Random, lang: str, started: float, now: float) -> tuple[str, str]:
    """A true date phrase for a session that started at ``started``: (feature, text)."""
    day = dt.datetime.fromtimestamp(started, dt.timezone.utc).date()
    today = dt.datetime.fromtimestamp(now, dt.timezone.utc).date()
    week_start = today - dt.timedelta(days=today.weekday() + 7)
    if week_start <= day < week_start + dt.timedelta(days=7):
        return "last_week", V.RELATIVE["last_week"][lang]
    prev_month = (today.replace(day=1) - dt.timedelta(days=1)).replace(day=1)
    if (day.year, day.month) == (prev_month.year, prev_month.month):
        return "last_month", V.RELATIVE["last_month"][lang]
    if rng.random() < 0.5:
        texts = {
            "en": f" in {V.MONTHS_EN[day.month - 1]} {day.year}",
            "zh": f"{day.year}年{day.month}月",
            "ja": f"{day.year}年{day.month}月に",
            "ko": f"{day.year}년 {day.month}월에 ",
        }
        return "date_month", texts[lang]
    texts = {
        "en": f" on {V.MONTHS_EN[day.month - 1]} {day.day}",
        "zh": f"{day.month}月{day.day}号",
        "ja": f"{day.month}月{day.day}日に",
        "ko": f"{day.month}월 {day.day}일에 ",
    }
    return "date_day", texts[lang]


def _possessive(lang: str, owner: str, thing: str) -> str:
    return {
        "en": f"{owner}'s {thing}",
        "zh": f"{owner}的{thing}",
        "ja": f"{owner}の{thing}",
        "ko": f"{owner}의 {thing}",
    }[lang]


def _chat_question(
    rng: random.Random, person: Person, s: Session
) -> tuple[str, list[str], list[str], str]:
    """(template with {what} filled, features, keywords, who)."""
    lang = person.lang
    cat, words, infl = V.CHAT_TOPICS[s.topic][lang]
    rel, name = s.relative
    features, keys = [], []
    if rng.random() < 0.6:
        who, keys = _possessive(lang, person.name, rel), [person.name, rel]
        features.append("possessive")
    else:
        who, keys = name, [name]
        features.append("name")
    roll = rng.random()
    if roll < 0.35:
        features.append("category")
        return rng.choice(V.CATEGORY_QUESTIONS[lang]), features, [*keys, cat], who
    if roll < 0.65 and infl is not None:
        what = infl[1]
        features.append("inflected")
    else:
        what = rng.choice([w for w in words if infl is None or w != infl[0]])
        features.append("term")
    return rng.choice(V.QUESTIONS[lang]).replace("{what}", what), features, [*keys, what], who


def _question(rng: random.Random, person: Person, s: Session, now: float) -> Question:
    lang = person.lang
    if s.kind == "chat":
        template, features, keys, who = _chat_question(rng, person, s)
        cat = V.CHAT_TOPICS[s.topic][lang][0]
    else:
        words, (done, asked) = V.CODE_TOPICS[s.topic][lang]
        features = ["possessive"] if rng.random() < 0.4 else ["project"]
        who = (
            _possessive(lang, person.name, s.project) if features[0] == "possessive" else s.project
        )
        what = asked if rng.random() < 0.5 else rng.choice(words[:3])
        features.append("inflected" if what == asked else "term")
        template = rng.choice(V.CODE_QUESTIONS[lang]).replace("{what}", what)
        keys, cat = [*([person.name] if features[0] == "possessive" else []), s.project, what], ""
    when = ""
    if rng.random() < 0.4:
        feature, when = _date_cue(rng, lang, s.started_at, now)
        features.append(feature)
    text = fill(lang, template, who=who, when=when, cat=cat).strip()
    text = text[0].upper() + text[1:] if lang == "en" else text
    if rng.random() < 0.3:
        text += " " + rng.choice(V.ABSENT[lang])
        features.append("absent_words")
    return Question(person.key, lang, s.id, text, tuple(keys), tuple(features))


def generate(
    seed: int = 0, people_per_lang: int = 4, sessions_per_person: int = 32, now: float | None = None
) -> Histories:
    """The people, their sessions (oldest first) and about 0.7 questions per session."""
    now = today_utc() if now is None else now
    rng = random.Random(f"histories/{HISTORIES_VERSION}/{seed}")
    people = _people(rng, people_per_lang)
    sessions: list[Session] = []
    questions: list[Question] = []
    for person in people:
        own = _sessions(random.Random(f"{seed}/{person.key}"), person, sessions_per_person, now)
        q_rng = random.Random(f"{seed}/{person.key}/questions")
        for s in own:
            if q_rng.random() < 0.7:
                questions.append(_question(q_rng, person, s, now))
        sessions += own
    sessions.sort(key=lambda s: s.started_at)
    return Histories(now, people, sessions, questions)
