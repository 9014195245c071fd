"""A read or scroll cuts a long message at the edge of what shows as one character
(an emoji family, a letter and its accent, a flag) and never inside a JSON escape
of a tool output or a tool call's arguments, and still says that it cut."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
from _tool_fixtures import T0, conversation

from hermes_fts import session_search
from hermes_fts.cli import main
from hermes_fts.store import SessionStore

FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"  # 7 code points
CAP = 4000


@pytest.fixture(scope="module")
def messages(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    texts = {
        "family": FAMILY * 1000,
        "accent": "x" + "e\u0301" * 3000,
        "flags": "x" + "\U0001f1ef\U0001f1f5" * 3000,
        "escapes": json.dumps({"out": "桂林" * 3000}),
        "pairs": "x" * 9 + json.dumps("\U0001f600" * 1000),  # cut between a pair's halves
    }
    path = tmp_path_factory.mktemp("cut") / "state.db"
    call = {"id": "c1", "type": "function", "function": {"name": "web_search"}}
    call["function"]["arguments"] = json.dumps({"query": "桂林" * 1000})
    turns = [{"role": "tool", "content": text, "tool_name": name} for name, text in texts.items()]
    turns.append({"role": "assistant", "content": None, "tool_calls": [call]})
    texts["arguments"] = call["function"]["arguments"]
    with SessionStore(path) as st:
        conversation(st, "s", turns, start=T0)
    return path, texts


def _shown(path: Path) -> dict[str, dict]:
    with SessionStore(path, readonly=True) as st:
        page = session_search(st, session_id="s")
    assert page["success"] is True
    return {m.get("tool_name", "arguments"): m for m in page["messages"]}


@pytest.mark.parametrize("name", ["family", "accent", "flags", "escapes", "pairs"])
def test_a_cut_message_ends_at_a_whole_character(
    messages: tuple[Path, dict[str, str]], name: str
) -> None:
    path, texts = messages
    msg = _shown(path)[name]
    original = texts[name]
    assert msg["content_truncated"] is True
    assert msg["original_content_chars"] == len(original)
    kept = msg["content"].removesuffix("\u2026")
    assert msg["content"].endswith("\u2026") and original.startswith(kept)
    assert CAP - 12 <= len(kept) <= CAP
    rest = original[len(kept) :]
    # The cut is where a reader's character (and an escape, and a pair of them) ends.
    assert not rest.startswith(("\u200d", "\u0301")) and not kept.endswith("\u200d")
    if name == "family":
        assert len(kept) % len(FAMILY) == 0
    if name == "flags":
        assert (len(kept) - 1) % 2 == 0
    if name in ("escapes", "pairs"):
        assert rest.startswith("\\u") and not kept.endswith("\\")
        assert not kept.lower().endswith(("\\ud83d",))


def test_a_cut_tool_call_argument_ends_before_an_escape(
    messages: tuple[Path, dict[str, str]],
) -> None:
    path, texts = messages
    msg = _shown(path)["arguments"]
    assert msg["tool_calls_truncated"] is True
    shown = msg["tool_calls"][0]["function"]["arguments"]
    kept = shown.removesuffix("\u2026")
    assert texts["arguments"].startswith(kept) and texts["arguments"][len(kept) :][:2] == "\\u"


def test_read_shows_a_cut_json_tool_output_as_text(
    messages: tuple[Path, dict[str, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    """A JSON tool output cut to 4,000 characters no longer parses: its escapes were
    printed as stored (\\u6842\\u6797) where the whole output shows 桂林."""
    path, _texts = messages
    assert main(["--db", str(path), "read", "s"]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if "tool:escapes:" in line)
    assert line.split("tool:escapes: ", 1)[1].startswith('{"out": "桂林桂林')
    assert "\\u6842" not in line and "[cut from 36,011 characters" in line


def test_a_browse_preview_ends_at_a_whole_character(tmp_path: Path) -> None:
    """The preview of a session's first message was its first 60 code points: half
    an emoji family, or a letter without its accent."""
    path = tmp_path / "state.db"
    with SessionStore(path) as st:
        conversation(st, "f", [("user", "x" * 58 + FAMILY + " more")], start=T0)
        conversation(st, "a", [("user", "e\u0301" * 40)], start=T0 + 10)
        page = session_search(st)
    previews = {entry["session_id"]: entry["preview"] for entry in page["results"]}
    assert previews["f"] == "x" * 58 + "..."
    assert previews["a"] == "e\u0301" * 30 + "..."


@pytest.mark.parametrize(
    "unit", [FAMILY, "e\u0301", "\U0001f1ef\U0001f1f5"], ids=["family", "accent", "flags"]
)
def test_search_lines_cut_a_title_and_a_message_at_a_whole_character(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], unit: str
) -> None:
    """The command line cut a title and the messages around a match to 160 code points:
    half an emoji family showed another family, a flag pair cut in two other flags."""
    path = tmp_path / "state.db"
    long = "xx" + unit * 200  # the cut at 159 falls inside a unit
    with SessionStore(path) as st:
        conversation(st, "s", [("user", "deploy now"), ("user", long)], title=long, start=T0)
    assert main(["--db", str(path), "search", "deploy", "--detail", "full"]) == 0
    out = capsys.readouterr().out
    title = next(line for line in out.splitlines() if line.startswith("1. "))[3:]
    message = next(line for line in out.splitlines() if "#2 user: " in line)
    for shown in (title.split("  ", 1)[0], message.split("#2 user: ", 1)[1]):
        assert shown.endswith("\u2026"), shown
        kept = shown.removesuffix("\u2026")
        assert len(kept) > 100 and (len(kept) - 2) % len(unit) == 0 and long.startswith(kept)


@pytest.mark.parametrize(
    "unit", [FAMILY, "e\u0301", "\U0001f1ef\U0001f1f5"], ids=["family", "accent", "flags"]
)
def test_a_search_rows_context_ends_at_a_whole_character(tmp_path: Path, unit: str) -> None:
    """``SessionStore.search`` gives each row the messages before and after its match,
    200 characters of each: they were cut at 200 code points, inside an emoji family,
    between a letter and its accent, or between a flag's two halves."""
    path = tmp_path / "state.db"
    long = "x" + unit * 200  # a cut at 200 falls inside a unit
    with SessionStore(path) as st:
        conversation(st, "s", [("user", long), ("user", "deploy now"), ("user", long)], start=T0)
        [row] = st.search("deploy").rows
    before, hit, after = row["context"]
    assert hit["content"] == "deploy now"
    for shown in (before["content"], after["content"]):
        assert 190 < len(shown) <= 200 and long.startswith(shown), shown
        assert (len(shown) - 1) % len(unit) == 0


def test_a_long_word_a_note_names_keeps_its_marks(tmp_path: Path) -> None:
    """A note names a word longer than 40 characters by its first 39: cut at a code
    point, a Thai sentence (written without spaces, one word) lost the vowel mark of
    its last letter, naming a word that was not typed."""
    path = tmp_path / "state.db"
    word = "ผการติดตั้งระบบคลาวด์ที่ไม่มีปัญหาเลยครับผมคิดว่าดีมาก"
    assert unicodedata.category(word[39]) == "Mn"  # the cut falls before a mark
    with SessionStore(path) as st:
        conversation(st, "s", [("user", "we deploy kubernetes")], start=T0)
        page = session_search(st, query=f"kubernetes {word}")
    [note] = [n for n in page["query_notes"] if "holds every word" in n]
    named = note.rsplit(" not ", 1)[1]
    assert named == word[:38] + "\u2026", named
