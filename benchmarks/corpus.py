"""Deterministic generator of realistic agent-conversation data for benchmarks.

Text is made from real word-frequency lists (the ``wordfreq`` package, which
ships them; nothing is downloaded at run time and no prose is committed):
words are drawn with their corpus frequencies (a Zipf distribution) and glued
into sentences the way each script writes them (no spaces in Chinese and
Japanese, spaces in Korean and English).  On top of that come the things that
make agent histories hard to search: Latin glued to CJK (``修改youer服务端``),
identifiers (``my-app.config.ts``), JSON tool calls and long tool output.

Everything is a pure function of ``(n_messages, seed)`` and ``CORPUS_VERSION``:

    sessions, messages = generate(100_000, seed=0)   # list[dict], iterator of dict
    build_store("/tmp/x.db", 100_000)                # through hermes_fts.SessionStore
    path = cached_store(100_000)                     # built once, reused by later runs
    term_samples("zh2")                              # query terms per frequency band

Run ``python -m benchmarks.corpus --help`` for a command line.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import math
import os
import random
import shutil
import sys
import tempfile
import time
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from typing import Any

# Bump whenever the output for a given (n_messages, seed) changes.
CORPUS_VERSION = 1

LANGS = ("zh", "ja", "ko", "en")
SOURCES = ("cli", "telegram", "cron", "subagent")
YEAR_START = 1735689600.0  # 2025-01-01T00:00:00Z
YEAR_SECONDS = 365 * 86400.0

# How many of each language's most frequent words are used.
LEXICON_SIZE = {"zh": 40000, "ja": 40000, "ko": 30000, "en": 40000}

MODELS = ("claude-sonnet-4", "gpt-4.1", "qwen3-coder", "deepseek-v3", "kimi-k2", "glm-4.6")
TOOL_NAMES = (
    "terminal",
    "read_file",
    "write_file",
    "patch",
    "search_files",
    "web_search",
    "browser_navigate",
    "execute_code",
    "session_search",
    "todo",
)
TOOL_WEIGHTS = (30, 18, 6, 8, 10, 8, 4, 8, 3, 5)
EXTENSIONS = ("py", "ts", "tsx", "js", "json", "md", "toml", "yaml", "go", "rs", "sh", "c")
LANG_WEIGHTS = {"zh": 34, "en": 28, "ja": 14, "ko": 10, "mixed": 14}
SOURCE_WEIGHTS = {"cli": 50, "telegram": 25, "cron": 15, "subagent": 10}

# Frequency bands for query terms, as rank ranges in a class's candidate list.
BANDS: dict[str, tuple[int, int]] = {
    "very_common": (0, 50),
    "common": (50, 500),
    "mid": (500, 5000),
    "rare": (5000, 20000),
}
QUERY_CLASSES = (
    "zh2",  # Chinese two-character word
    "zh3",  # Chinese word of three or more characters
    "cjk1",  # single CJK character
    "ja",  # Japanese word (kana and/or kanji), 2+ characters
    "ja2",  # Japanese 2-character word with kana (Hermes Agent LIKE-scans it)
    "ja3",  # Japanese word of 3+ characters (Hermes Agent uses its trigram index)
    "ko",  # Korean word, 2+ syllables
    "latin_word",  # English word
    "latin_ident",  # identifier such as my-app.config.ts
    "latin_glued",  # Latin glued to CJK, e.g. config修改
    "zh2_or",  # "A OR B" with two Chinese two-character words
)
_CLASS_ALIASES = {"zh": "zh2", "en": "latin_word"}


# --------------------------------------------------------------------------- scripts


def _is_han(c: str) -> bool:
    o = ord(c)
    return 0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF or 0x20000 <= o <= 0x3134F


def _is_kana(c: str) -> bool:
    o = ord(c)
    return 0x3041 <= o <= 0x309F or 0x30A0 <= o <= 0x30FF


def _is_hangul(c: str) -> bool:
    return 0xAC00 <= ord(c) <= 0xD7A3


def _fits(lang: str, word: str) -> bool:
    if lang == "zh":
        return all(_is_han(c) for c in word)
    if lang == "ja":
        return all(_is_han(c) or _is_kana(c) for c in word)
    if lang == "ko":
        return all(_is_hangul(c) for c in word)
    return word.isascii() and word.isalpha()


# --------------------------------------------------------------------------- lexicons


class Lexicon:
    """Words of one language in frequency order, with cumulative Zipf weights."""

    def __init__(self, words: list[str], weights: list[float]) -> None:
        self.words = words
        self.weights = weights
        self.cum = list(accumulate(weights))
        self.total = self.cum[-1]

    def sample(self, rng: random.Random, k: int) -> list[str]:
        return rng.choices(self.words, cum_weights=self.cum, k=k)

    def one(self, rng: random.Random) -> str:
        return self.words[bisect_right(self.cum, rng.random() * self.total)]


def _wordfreq() -> Any:
    try:
        import wordfreq
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise RuntimeError(
            "the benchmark corpus needs the word lists of the 'wordfreq' package: "
            "pip install 'hermes-fts[bench]' (or pip install wordfreq)"
        ) from exc
    return wordfreq


@functools.cache
def lexicon(lang: str) -> Lexicon:
    """The ``LEXICON_SIZE[lang]`` most frequent words of ``lang`` that fit its script.

    ``wordfreq.get_frequency_list`` buckets words by centibel: bucket ``i``
    holds words of frequency ``10 ** (-i / 100)``; that is the sampling weight.
    """
    if lang not in LEXICON_SIZE:
        raise ValueError(f"unknown language {lang!r}; expected one of {LANGS}")
    buckets = _wordfreq().get_frequency_list(lang)
    words: list[str] = []
    weights: list[float] = []
    limit = LEXICON_SIZE[lang]
    for i, bucket in enumerate(buckets):
        w = 10.0 ** (-i / 100.0)
        for word in bucket:
            if _fits(lang, word):
                words.append(word)
                weights.append(w)
        if len(words) >= limit:
            break
    return Lexicon(words[:limit], weights[:limit])


@functools.cache
def _sublexicon(lang: str, min_len: int, max_len: int) -> Lexicon:
    lex = lexicon(lang)
    pairs = [(w, f) for w, f in zip(lex.words, lex.weights) if min_len <= len(w) <= max_len]
    return Lexicon([w for w, _ in pairs], [f for _, f in pairs])


@functools.cache
def _identifier_pool() -> Lexicon:
    """A fixed pool of code identifiers with Zipf weights (rank r → 1/(r+1))."""
    rng = random.Random(0x1DE17)
    en = _sublexicon("en", 3, 10)
    head = Lexicon(en.words[:3000], en.weights[:3000])
    seen: set[str] = set()
    out: list[str] = []
    while len(out) < 6000:
        ident = _make_identifier(rng, head)
        if ident not in seen:
            seen.add(ident)
            out.append(ident)
    return Lexicon(out, [1.0 / (r + 1) for r in range(len(out))])


@functools.cache
def _glued_pool() -> Lexicon:
    """Fixed Latin-glued-to-CJK fragments (``config修改``, ``修改youer``), Zipf weights."""
    rng = random.Random(0x61DE)
    zh = _sublexicon("zh", 2, 3)
    latin = _sublexicon("en", 3, 9)
    latin_head = Lexicon(latin.words[:4000], latin.weights[:4000])
    zh_head = Lexicon(zh.words[:4000], zh.weights[:4000])
    seen: set[str] = set()
    out: list[str] = []
    while len(out) < 6000:
        a, b = latin_head.one(rng), zh_head.one(rng)
        frag = a + b if rng.random() < 0.5 else b + a
        if frag not in seen:
            seen.add(frag)
            out.append(frag)
    return Lexicon(out, [1.0 / (r + 1) for r in range(len(out))])


def _make_identifier(rng: random.Random, words: Lexicon) -> str:
    k = rng.random()
    a, b, c = words.one(rng), words.one(rng), words.one(rng)
    if k < 0.22:  # my-app.config.ts
        return f"{a}-{b}.{c}.{rng.choice(EXTENSIONS)}"
    if k < 0.40:  # user_session_id
        return f"{a}_{b}_{c}" if rng.random() < 0.5 else f"{a}_{b}"
    if k < 0.55:  # getUserName
        return a + b.capitalize() + (c.capitalize() if rng.random() < 0.5 else "")
    if k < 0.72:  # src/foo/bar-baz.py
        return f"src/{a}/{b}-{c}.{rng.choice(EXTENSIONS)}"
    if k < 0.82:  # HERMES_HOME
        return f"{a.upper()}_{b.upper()}"
    if k < 0.92:  # config.yaml
        return f"{a}.{rng.choice(EXTENSIONS)}"
    return f"{a}-{b}"  # kebab-case


# --------------------------------------------------------------------------- text

_CLAUSE_END = {"zh": ("，", "，", "、"), "ja": ("、", "、", "，")}
_SENT_END = {"zh": ("。", "。", "。", "？", "！"), "ja": ("。", "。", "。", "？")}


class TextGen:
    """Sentences and messages for one random stream."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.lex = {lang: lexicon(lang) for lang in LANGS}
        self.idents = _identifier_pool()
        self.glued = _glued_pool()

    def _latin_bit(self) -> str:
        r = self.rng.random()
        if r < 0.45:
            return self.idents.one(self.rng)
        if r < 0.75:
            return self.lex["en"].one(self.rng)
        return self.glued.one(self.rng)

    def sentence(self, lang: str, mixed: bool = False) -> str:
        rng = self.rng
        lex = self.lex[lang]
        if lang in ("zh", "ja"):
            n = 4 + int(rng.expovariate(1 / 10))
            words = lex.sample(rng, n)
            if mixed or rng.random() < 0.15:
                # Latin glued into CJK text (修改youer服务端), sometimes spaced.
                for _ in range(1 + (rng.random() < 0.3)):
                    pos = rng.randrange(len(words) + 1)
                    bit = self._latin_bit()
                    words.insert(pos, bit if rng.random() < 0.7 else f" {bit} ")
            out: list[str] = []
            clause = 0
            for w in words:
                out.append(w)
                clause += 1
                if clause >= 5 and rng.random() < 0.25:
                    out.append(rng.choice(_CLAUSE_END[lang]))
                    clause = 0
            out.append(rng.choice(_SENT_END[lang]))
            return "".join(out)
        if lang == "ko":
            n = 3 + int(rng.expovariate(1 / 8))
            words = lex.sample(rng, n)
            if mixed or rng.random() < 0.15:
                words.insert(rng.randrange(len(words) + 1), self._latin_bit())
            # Particles are separate entries in the list; glue some onto the word before.
            out = [words[0]]
            for w in words[1:]:
                out.append(w if rng.random() < 0.3 else " " + w)
            return "".join(out) + rng.choice((".", ".", "?", "요."))
        n = 4 + int(rng.expovariate(1 / 12))
        words = lex.sample(rng, n)
        if mixed or rng.random() < 0.2:
            words.insert(rng.randrange(len(words) + 1), self.idents.one(rng))
        words[0] = words[0].capitalize()
        return " ".join(words) + rng.choice((".", ".", ".", "?", "!"))

    def paragraph(self, lang: str, n_sentences: int, mixed: bool = False) -> str:
        sep = " " if lang in ("en", "ko") else ""
        return sep.join(self.sentence(self._pick(lang), mixed) for _ in range(n_sentences))

    def _pick(self, lang: str) -> str:
        if lang != "mixed":
            return lang
        return self.rng.choice(("zh", "zh", "en", "ja", "ko"))

    def user_text(self, lang: str) -> str:
        n = 1 + int(self.rng.expovariate(1 / 1.2))
        return self.paragraph(lang, n, mixed=lang == "mixed")

    def assistant_text(self, lang: str) -> str:
        rng = self.rng
        paras = [self.paragraph(lang, 1 + int(rng.expovariate(1 / 2.5)), lang == "mixed")]
        if rng.random() < 0.35:
            items = [f"- {self.sentence(self._pick(lang))}" for _ in range(rng.randint(2, 5))]
            paras.append("\n".join(items))
        if rng.random() < 0.15:
            paras.append(f"```\n{self._code_lines(rng.randint(2, 8), lang)}\n```")
        return "\n\n".join(paras)

    def _code_lines(self, n: int, lang: str) -> str:
        rng = self.rng
        lines = []
        for _ in range(n):
            ident = self.idents.one(rng)
            r = rng.random()
            if r < 0.3:
                lines.append(f"# {self.sentence(self._pick(lang))}")
            elif r < 0.6:
                lines.append(
                    f"{ident.replace('-', '_').replace('.', '_').replace('/', '_')} = "
                    f'load("{self.idents.one(rng)}")'
                )
            else:
                lines.append(f"    return {ident}({rng.randint(0, 999)})")
        return "\n".join(lines)

    def tool_call(self, tool: str, lang: str) -> tuple[str, dict[str, Any]]:
        rng = self.rng
        if tool == "terminal":
            args: dict[str, Any] = {
                "command": rng.choice(
                    (
                        "npm run build",
                        "pytest -q",
                        "git status",
                        "ls -la",
                        "cat",
                        "grep -rn",
                        "make",
                        "cargo test",
                    )
                )
                + " "
                + self.idents.one(rng)
            }
        elif tool in ("read_file", "write_file", "patch"):
            args = {"path": self.idents.one(rng)}
            if tool != "read_file":
                args["content"] = self.sentence(self._pick(lang))
        elif tool in ("web_search", "session_search", "search_files"):
            args = {"query": " ".join(self._pick_words(lang, rng.randint(1, 3)))}
        elif tool == "browser_navigate":
            args = {"url": f"https://{self.lex['en'].one(rng)}.example/{self.idents.one(rng)}"}
        elif tool == "execute_code":
            args = {"code": self._code_lines(rng.randint(1, 4), lang)}
        else:
            args = {"todos": [self.sentence(self._pick(lang)) for _ in range(rng.randint(1, 3))]}
        call_id = f"call_{rng.getrandbits(64):016x}"
        call = {
            "id": call_id,
            "type": "function",
            "function": {"name": tool, "arguments": json.dumps(args, ensure_ascii=False)},
        }
        return call_id, call

    def _pick_words(self, lang: str, n: int) -> list[str]:
        return [self.lex[self._pick(lang)].one(self.rng) for _ in range(n)]

    def tool_output(self, tool: str, lang: str) -> str:
        rng = self.rng
        # Long-tailed length: median ~500 characters, capped.
        target = min(12000, int(rng.lognormvariate(math.log(500), 0.85)))
        parts: list[str] = []
        size = 0
        while size < target:
            if tool == "web_search":
                item = json.dumps(
                    {
                        "title": self.sentence(self._pick(lang)),
                        "url": f"https://{self.lex['en'].one(rng)}.example/{self.idents.one(rng)}",
                        "snippet": self.paragraph(lang, 2),
                    },
                    ensure_ascii=False,
                )
            elif tool in ("read_file", "execute_code", "patch", "write_file"):
                item = self._code_lines(rng.randint(3, 10), lang)
            elif tool == "search_files":
                item = (
                    f"{self.idents.one(rng)}:{rng.randint(1, 900)}: "
                    f"{self.sentence(self._pick(lang))}"
                )
            else:
                r = rng.random()
                if r < 0.4:
                    item = (
                        f"{self.idents.one(rng)}:{rng.randint(1, 400)}:{rng.randint(1, 80)} - "
                        f"error TS{rng.randint(1000, 9999)}: {self.sentence('en')}"
                    )
                elif r < 0.7:
                    item = f"-rw-r--r-- 1 root root {rng.randint(10, 99999)} {self.idents.one(rng)}"
                else:
                    item = self.sentence(self._pick(lang))
            parts.append(item)
            size += len(item) + 1
        return "\n".join(parts)[: max(target, 1)]

    def title(self, lang: str) -> str:
        rng = self.rng
        lang = self._pick(lang)
        words = self.lex[lang].sample(rng, rng.randint(2, 4))
        if rng.random() < 0.3:
            words.insert(rng.randrange(len(words) + 1), self.idents.one(rng))
        sep = "" if lang in ("zh", "ja") else " "
        return sep.join(words)[:80]


# --------------------------------------------------------------------------- sessions


@dataclass
class _Plan:
    index: int
    session: dict[str, Any]
    n_messages: int
    lang: str


def _choose(rng: random.Random, weights: dict[str, int]) -> str:
    keys = list(weights)
    return rng.choices(keys, weights=[weights[k] for k in keys])[0]


def _session_id(rng: random.Random, started_at: float) -> str:
    return time.strftime("%Y%m%d_%H%M%S", time.gmtime(started_at)) + f"_{rng.getrandbits(24):06x}"


def _plan(n_messages: int, seed: int) -> list[_Plan]:
    """Sessions with their message counts; cheap (one pass, no text)."""
    rng = random.Random(f"hermes-fts-corpus/{CORPUS_VERSION}/{seed}/plan")
    gen = TextGen(rng)
    plans: list[_Plan] = []
    titles: set[str] = set()
    interactive: list[dict[str, Any]] = []
    remaining = n_messages
    # Sessions are spread over a year in start order.
    mean_len = 36.0
    expected_sessions = max(1.0, n_messages / mean_len)
    step = YEAR_SECONDS / expected_sessions
    clock = YEAR_START
    while remaining > 0:
        clock += rng.expovariate(1.0 / step) if step > 0 else 1.0
        source = _choose(rng, SOURCE_WEIGHTS)
        lang = _choose(rng, LANG_WEIGHTS)
        model = rng.choice(MODELS)
        if source == "cron":
            length = rng.randint(2, 8)
        elif source == "subagent":
            length = rng.randint(4, 40)
        else:
            length = max(2, int(rng.lognormvariate(math.log(24), 0.9)))
        length = min(length, remaining)
        # A long interactive conversation may be compressed into a lineage of sessions.
        chain = 1
        if source in ("cli", "telegram") and length > 60 and rng.random() < 0.6:
            chain = min(1 + length // 60, 6)
        base_title = None if rng.random() < 0.15 else gen.title(lang)
        if base_title is not None:
            while base_title in titles:
                base_title = f"{base_title} {rng.getrandbits(16):04x}"
            titles.add(base_title)
        parent: dict[str, Any] | None = None
        if source == "subagent" and interactive:
            parent = interactive[-1 - rng.randrange(min(len(interactive), 20))]
        per = [length // chain + (1 if i < length % chain else 0) for i in range(chain)]
        started = clock
        for hop, count in enumerate(per):
            sid = _session_id(rng, started)
            duration = count * rng.uniform(20, 240)
            title = base_title if hop == 0 or base_title is None else f"{base_title} #{hop + 1}"
            if title is not None:
                titles.add(title)
            end_reason: str | None
            if hop < chain - 1:
                end_reason = "compression"
            else:
                end_reason = rng.choice(
                    (None, None, "idle", "session_reset", "new_session", "daily")
                )
            session = {
                "id": sid,
                "source": source,
                "parent_session_id": parent["id"] if parent is not None else None,
                "started_at": round(started, 3),
                "ended_at": round(started + duration, 3) if end_reason or hop < chain - 1 else None,
                "end_reason": end_reason,
                "title": title,
                "model": model,
            }
            plans.append(_Plan(len(plans), session, count, lang))
            if source in ("cli", "telegram"):
                interactive.append(session)
            parent = session
            started += duration + rng.uniform(1, 30)
        clock = max(clock, started)
        remaining -= length
    return plans


def _messages_for(plan: _Plan, seed: int) -> list[dict[str, Any]]:
    """The messages of one session, from a random stream of its own (so it is lazy)."""
    rng = random.Random(f"hermes-fts-corpus/{CORPUS_VERSION}/{seed}/session/{plan.index}")
    gen = TextGen(rng)
    sid = plan.session["id"]
    lang = plan.lang
    ts = plan.session["started_at"]
    rows: list[dict[str, Any]] = []
    n = plan.n_messages

    def add(
        role: str, content: str, tool_name: str | None = None, tool_calls: str | None = None
    ) -> None:
        nonlocal ts
        ts += rng.uniform(2, 90)
        rows.append(
            {
                "session_id": sid,
                "role": role,
                "content": content,
                "tool_name": tool_name,
                "tool_calls": tool_calls,
                "timestamp": round(ts, 3),
                "active": 1,
                "compacted": 0,
            }
        )

    while len(rows) < n:
        add("user", gen.user_text(lang))
        # Assistant turn: maybe a few tool calls first, then the answer.
        while len(rows) < n and rng.random() < 0.45:
            tools = rng.choices(TOOL_NAMES, weights=TOOL_WEIGHTS, k=rng.choice((1, 1, 1, 2)))
            calls = [gen.tool_call(t, lang) for t in tools]
            preface = gen.sentence(gen._pick(lang)) if rng.random() < 0.5 else ""
            add("assistant", preface, None, json.dumps([c for _, c in calls], ensure_ascii=False))
            for tool in tools:
                if len(rows) >= n:
                    break
                add("tool", gen.tool_output(tool, lang), tool)
        if len(rows) < n:
            add("assistant", gen.assistant_text(lang))
    rows = rows[:n]

    # In-place compaction archived the early part of some long sessions.
    if n >= 12 and rng.random() < 0.12:
        for row in rows[: rng.randint(4, n // 2)]:
            row["active"], row["compacted"] = 0, 1
    # Some sessions had their last exchange rewound (undo).
    if n >= 4 and rng.random() < 0.1:
        for row in rows[-rng.randint(1, 3) :]:
            if row["compacted"] == 0:
                row["active"] = 0
    return rows


def generate(
    n_messages: int, seed: int = 0
) -> tuple[list[dict[str, Any]], Iterator[dict[str, Any]]]:
    """``(sessions, messages)`` for exactly ``n_messages`` messages.

    Sessions come as a list in start order (parents before children); messages
    are an iterator, in session order, so a million rows never sit in memory.
    """
    if n_messages < 0:
        raise ValueError("n_messages must be >= 0")
    plans = _plan(n_messages, seed)

    def messages() -> Iterator[dict[str, Any]]:
        for plan in plans:
            yield from _messages_for(plan, seed)

    return [p.session for p in plans], messages()


def texts(lang: str, n: int, seed: int = 0) -> list[str]:
    """``n`` conversation messages (user and assistant turns) all in ``lang``.

    The tokenizer benchmarks insert exactly this text into each table.
    """
    rng = random.Random(f"hermes-fts-corpus/{CORPUS_VERSION}/{seed}/texts/{lang}")
    gen = TextGen(rng)
    return [gen.user_text(lang) if i % 2 == 0 else gen.assistant_text(lang) for i in range(n)]


# --------------------------------------------------------------------------- query terms


@functools.cache
def _candidates(query_class: str) -> tuple[str, ...]:
    """Query candidates of one class, most frequent first."""
    if query_class == "zh2":
        return tuple(_sublexicon("zh", 2, 2).words)
    if query_class == "zh3":
        return tuple(_sublexicon("zh", 3, 8).words)
    if query_class == "cjk1":
        score: dict[str, float] = {}
        for lang in ("zh", "ja"):
            lex = lexicon(lang)
            for w, f in zip(lex.words, lex.weights):
                for c in w:
                    if _is_han(c):
                        score[c] = score.get(c, 0.0) + f
        return tuple(sorted(score, key=lambda c: (-score[c], c)))
    if query_class in ("ja", "ja2", "ja3"):
        words = [
            w for w in _sublexicon("ja", 2, 8).words if any(_is_kana(c) for c in w) or len(w) >= 3
        ]
        if query_class != "ja":  # split where Hermes' own search changes route
            words = [w for w in words if (len(w) >= 3) == (query_class == "ja3")]
        return tuple(words)
    if query_class == "ko":
        return tuple(_sublexicon("ko", 2, 6).words)
    if query_class == "latin_word":
        return tuple(_sublexicon("en", 4, 14).words)
    if query_class == "latin_ident":
        return tuple(_identifier_pool().words)
    if query_class == "latin_glued":
        return tuple(_glued_pool().words)
    raise ValueError(f"unknown query class {query_class!r}; expected one of {QUERY_CLASSES}")


def term_samples(
    query_class: str,
    bands: Sequence[str] | dict[str, tuple[int, int]] | None = None,
    per_band: int = 3,
    seed: int = 0,
) -> dict[str, list[str]]:
    """Query terms of one class, ``per_band`` per frequency band (rare … very common).

    ``query_class`` is one of ``QUERY_CLASSES`` (``"zh"`` and ``"en"`` are
    accepted for ``"zh2"`` and ``"latin_word"``).  ``bands`` names bands of
    ``BANDS`` or maps names to ``(first_rank, end_rank)`` ranges.  Terms are
    drawn from the same lists the generator samples from, so common terms are
    common in the corpus and rare ones rare.
    """
    query_class = _CLASS_ALIASES.get(query_class, query_class)
    if bands is None:
        ranges = dict(BANDS)
    elif isinstance(bands, dict):
        ranges = dict(bands)
    else:
        ranges = {b: BANDS[b] for b in bands}
    rng = random.Random(f"hermes-fts-terms/{CORPUS_VERSION}/{seed}/{query_class}")
    base = "zh2" if query_class == "zh2_or" else query_class
    cands = _candidates(base)
    out: dict[str, list[str]] = {}
    for name, (lo, hi) in ranges.items():
        hi = min(hi, len(cands))
        lo = min(lo, max(0, hi - 1))
        pool = list(cands[lo:hi])
        if not pool:
            out[name] = []
            continue
        if query_class == "zh2_or":
            picks = [f"{rng.choice(pool)} OR {rng.choice(pool)}" for _ in range(per_band)]
        else:
            picks = rng.sample(pool, min(per_band, len(pool)))
        out[name] = picks
    return out


# --------------------------------------------------------------------------- stores


STORE_BATCH = 20_000


def store_class() -> Any:
    """``hermes_fts.SessionStore``, or None while the store layer is not there."""
    try:
        import hermes_fts

        return hermes_fts.SessionStore
    except (ImportError, AttributeError):
        return None


def build_store(path: str | os.PathLike[str], n_messages: int, seed: int = 0) -> Path:
    """Write a generated store through ``hermes_fts.SessionStore`` at ``path``."""

    store_cls = store_class()
    if store_cls is None:
        raise RuntimeError("hermes_fts.SessionStore is not available in this build")
    sessions, messages = generate(n_messages, seed)
    store = store_cls(str(path))
    try:
        for session in sessions:
            store.add_session(**session)
        # Bounded batches: one transaction each, never a million rows in memory.
        batch: list[dict[str, Any]] = []
        for message in messages:
            batch.append(message)
            if len(batch) >= STORE_BATCH:
                store.add_messages(batch)
                batch = []
        if batch:
            store.add_messages(batch)
    finally:
        close = getattr(store, "close", None)
        if close is not None:
            close()
    return Path(path)


# The package files whose changes make a cached store stale (paths in hermes_fts/).
STORE_CODE = ("store.py", "index/schema.py", "index/maintain.py")
# ... and those whose changes make a cached optimized store stale.
OPTIMIZE_CODE = (
    "index/lifecycle.py",
    "index/align.py",
    "index/time_table.py",
    "index/rank_bounds.py",
)


def _store_code_tag() -> str:
    """Changes whenever the store's schema code changes, so stale caches are rebuilt."""
    import hermes_fts

    h = hashlib.sha1(str(getattr(hermes_fts, "__version__", "")).encode())
    pkg = Path(hermes_fts.__file__).parent
    for name in STORE_CODE:
        h.update((pkg / name).read_bytes())
    return h.hexdigest()[:10]


def _optimize_code_tag() -> str:
    """Changes when what optimize-storage adds changes (index_state.repair, the time table)."""
    import hermes_fts

    h = hashlib.sha1()
    pkg = Path(hermes_fts.__file__).parent
    for name in OPTIMIZE_CODE:
        h.update((pkg / name).read_bytes())
    return h.hexdigest()[:6]


def cache_dir() -> Path:
    env = os.environ.get("HERMES_BENCH_CACHE")
    if env:
        return Path(env)
    return Path(tempfile.gettempdir()) / "hermes-fts-bench-cache"


def cached_store(
    n_messages: int, seed: int = 0, directory: Path | None = None, optimized: bool = False
) -> Path:
    """A built store for ``(n_messages, seed)``, built once and reused.

    The file name carries the corpus version and a hash of the store code;
    it is built under a temporary name and renamed, so an interrupted build
    never leaves a half-written cache entry.  Treat the result as read-only.
    ``optimized``: a copy after ``optimize_storage()`` (without VACUUM), the
    state a user's store is in once they ran it (it adds the time index).
    """
    directory = directory or cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    name = f"store-c{CORPUS_VERSION}-n{n_messages}-s{seed}-{_store_code_tag()}.db"
    if optimized:
        name = name.replace(".db", f"-opt{_optimize_code_tag()}.db")
    final = directory / name
    if final.exists():
        return final
    tmp = directory / f".{name}.{os.getpid()}.tmp"
    for suffix in ("", "-wal", "-shm"):
        Path(str(tmp) + suffix).unlink(missing_ok=True)
    if optimized:
        shutil.copyfile(cached_store(n_messages, seed, directory), tmp)
        store = store_class()(str(tmp))
        try:
            store.optimize_storage(vacuum=False)
        finally:
            store.close()
    else:
        build_store(tmp, n_messages, seed)
    for suffix in ("-wal", "-shm"):
        Path(str(tmp) + suffix).unlink(missing_ok=True)
    os.replace(tmp, final)
    return final


# --------------------------------------------------------------------------- CLI


def _stats(sessions: list[dict[str, Any]], messages: Iterable[dict[str, Any]]) -> dict[str, Any]:
    roles: dict[str, int] = {}
    n = size = rewound = archived = 0
    for m in messages:
        n += 1
        roles[m["role"]] = roles.get(m["role"], 0) + 1
        size += len((m["content"] or "").encode()) + len((m["tool_calls"] or "").encode())
        rewound += m["active"] == 0 and m["compacted"] == 0
        archived += m["compacted"] == 1
    return {
        "sessions": len(sessions),
        "messages": n,
        "roles": roles,
        "text_mb": round(size / 1e6, 1),
        "rewound": rewound,
        "compacted": archived,
        "compression_children": sum(
            1 for s in sessions if s["parent_session_id"] and s["source"] != "subagent"
        ),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.corpus",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("n_messages", type=int)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--store", metavar="PATH", help="write a store here (needs SessionStore)")
    ap.add_argument("--cached", action="store_true", help="build or reuse the cached store")
    ap.add_argument("--sample", type=int, default=0, help="print this many messages as JSON")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    if args.cached:
        print(cached_store(args.n_messages, args.seed))
    elif args.store:
        build_store(args.store, args.n_messages, args.seed)
    else:
        sessions, messages = generate(args.n_messages, args.seed)
        if args.sample:
            for _, m in zip(range(args.sample), messages):
                print(json.dumps(m, ensure_ascii=False))
        else:
            print(json.dumps(_stats(sessions, messages), ensure_ascii=False))
    print(f"{time.perf_counter() - t0:.1f}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
