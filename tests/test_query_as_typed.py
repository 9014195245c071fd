"""Queries as people and models type them into ``session_search``, ``hermes-fts
search`` and ``search_messages``: a name glued to a CJK word, typographic
quotes, and other forms the query language reads, on real stores built by the
package's own API.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from _support import needs_extension
from _tool_fixtures import T0, conversation, one_message_each, open_store

from hermes_fts import session_search
from hermes_fts.query.syntax import parse_query
from hermes_fts.search.request import ROUTE_ORDER
from hermes_fts.store import SessionStore

pytestmark = needs_extension  # the fts_cjk route is one of the routes under test

EVERY_ROUTE = (None, *ROUTE_ORDER)  # None: the route the store chooses

ROWS = {
    "k8s": "Kubernetes集群扩容到10个节点",
    "script": "用Python 3.11重写了脚本",
    "date": "会議は3月8日に延期されました",
    "other": "集群 and 节点 without the name",
    "trip": "桂林旅游很好",
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    yield from one_message_each(tmp_path_factory, "typed", ROWS)


def cli(db: Path, *args: str) -> dict[str, Any]:
    """``hermes-fts <args> --json --db <db>`` in a subprocess; its JSON answer."""
    proc = subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", *args, "--json", "--db", str(db)],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _sessions(st_: SessionStore, query: str, route: str | None) -> tuple[list[str], Any]:
    result = st_.search(query, limit=100, route=route, fields=("id", "session_id"))
    return [r["session_id"] for r in result.rows], result


# --------------------------------------------------------------------------- glued names


@pytest.mark.parametrize("route", EVERY_ROUTE)
@pytest.mark.parametrize(
    ("query", "wanted"),
    [("Kubernetes扩容", "k8s"), ("Kubernetes节点", "k8s"), ("Python脚本", "script")],
)
def test_a_name_glued_to_a_cjk_word_finds_the_message_holding_both(
    store: Any, route: str | None, query: str, wanted: str
) -> None:
    """``Kubernetes扩容`` as a Chinese question writes it: no message holds it as
    written, so it is searched again by its words, and a note says so.  It was
    answered empty, with no note, while a message held both words."""
    found, result = _sessions(store[0], query, route)
    assert found and found[0] == wanted, (query, route, result.route, found)
    assert f"{query!r} is in no message as written: searched as a sentence, by its words" in (
        result.notes
    )


@pytest.mark.parametrize("route", EVERY_ROUTE)
def test_a_korean_word_in_no_message_is_not_said_to_be_read_by_its_words(
    store: Any, route: str | None
) -> None:
    """Regression: ``복구테스트``, in no message, was searched again as the same one
    word (Korean has no two-character parts to read it by), with a note that it
    was "searched as a sentence, by its words"."""
    found, result = _sessions(store[0], "복구테스트", route)
    assert found == []
    assert not any("as written" in n for n in result.notes), result.notes


def test_a_glued_name_held_as_written_is_searched_as_written(store: Any) -> None:
    found, result = _sessions(store[0], "Kubernetes集群", None)
    assert found == ["k8s"]
    assert not any("as written" in n for n in result.notes)
    # A date glued to CJK (3月8日) is no name: never read again by its parts.
    found, result = _sessions(store[0], "3月9日", None)
    assert found == [] and not any("as written" in n for n in result.notes)


def test_a_glued_name_through_the_tool_and_the_command(store: Any) -> None:
    st_, path = store
    tool = session_search(st_, query="Kubernetes扩容", limit=5)
    answer = cli(path, "search", "Kubernetes扩容")
    for payload in (tool, answer):
        assert [r["session_id"] for r in payload["results"]][:1] == ["k8s"], payload
        assert any("in no message as written" in n for n in payload["query_notes"])


KOREAN_NAMES = {
    "particle": "Anna가 프로젝트를 맡았어요",
    "english": "Anna said the 프로젝트 is late",
    "project": "프로젝트 일정만",
    "name": "Anna will call",
}


@pytest.fixture(scope="module")
def korean_names(tmp_path_factory: pytest.TempPathFactory) -> Any:
    yield from one_message_each(tmp_path_factory, "korean_names", KOREAN_NAMES)


@pytest.mark.parametrize("route", EVERY_ROUTE)
@pytest.mark.parametrize("query", ["Anna프로젝트", "Anna프로젝트를"])
def test_a_name_glued_to_a_korean_word_finds_the_messages_holding_both(
    korean_names: Any, route: str | None, query: str
) -> None:
    """``Anna프로젝트`` was said to be "searched as a sentence, by its words", and
    answered empty: a Korean word was searched whole, so the name glued to it
    stayed glued.  It is searched as Anna and 프로젝트 too, as a name glued to a
    Chinese word is."""
    found, result = _sessions(korean_names[0], query, route)
    assert set(found[:2]) == {"particle", "english"}, (route, result.route, found)
    assert set(found) == set(KOREAN_NAMES), (route, result.route, found)
    assert any("searched as a sentence, by its words" in n for n in result.notes)


# --------------------------------------------------------------------------- typographic quotes

QUOTED = {
    "phrase": "please deploy the rocket today",
    "words": "the rocket we deploy is ready",
    "ja": "「日本語の引用」です",
    "ja_apart": "日本語を引用する",
    "inches": "a 12” screen and a 15” laptop",
}


@pytest.fixture(scope="module")
def quoted(tmp_path_factory: pytest.TempPathFactory) -> Any:
    yield from one_message_each(tmp_path_factory, "quoted", QUOTED)


@pytest.mark.parametrize("route", EVERY_ROUTE)
@pytest.mark.parametrize(
    ("query", "wanted", "read"),
    [
        ("“deploy the rocket”", {"phrase"}, '“deploy the rocket” as "deploy the rocket"'),
        ("„deploy the rocket“", {"phrase"}, '„deploy the rocket“ as "deploy the rocket"'),
        ("«deploy the rocket»", {"phrase"}, '«deploy the rocket» as "deploy the rocket"'),
        ("＂deploy the rocket＂", {"phrase"}, '＂deploy the rocket＂ as "deploy the rocket"'),
        ("「日本語の引用」", {"ja"}, '「日本語の引用」 as "日本語の引用"'),
        ("『日本語の引用』", {"ja"}, '『日本語の引用』 as "日本語の引用"'),
    ],
)
def test_typographic_quotes_are_a_phrase(
    quoted: Any, route: str | None, query: str, wanted: set[str], read: str
) -> None:
    """A phrase in curly, German, French, full-width or CJK quotes finds what the
    same phrase in ``"`` finds, and a note says how it was read.  The quotes were
    dropped without a word: the query was a best match of its words, which
    found the rows holding them apart (and split 日本語の引用 into bigrams)."""
    found, result = _sessions(quoted[0], query, route)
    straight, _ = _sessions(quoted[0], '"' + query[1:-1] + '"', route)
    assert set(found) == wanted == set(straight), (query, route, result.route)
    assert f"read typographic quotes as an exact phrase: {read}" in result.notes


def test_typographic_quotes_as_the_tool_and_the_command_read_them(quoted: Any) -> None:
    st_, path = quoted
    query = '" “deploy the rocket” OR 「日本語の引用」'  # and a " that closes nothing
    tool = session_search(st_, query=query, limit=5)
    answer = cli(path, "search", query)
    for payload in (tool, answer):
        assert {r["session_id"] for r in payload["results"]} == {"phrase", "ja"}, payload
        assert payload["query_notes"][0] == (
            'read typographic quotes as an exact phrase: “deploy the rocket” as "deploy the '
            'rocket", 「日本語の引用」 as "日本語の引用"'
        )


@pytest.mark.parametrize(
    "query",
    [
        "“deploy the rocket",  # unbalanced: its words, as before
        "12” screen 15”",  # inches, never a phrase
        '"a “rocket” today"',  # inside a phrase in ": text of that phrase
        "‘deploy the rocket’",  # single quotes are text, straight or curly
    ],
)
def test_quotes_that_quote_no_phrase_are_left_as_they_were(quoted: Any, query: str) -> None:
    result = quoted[0].search(query, limit=10)
    assert not any("typographic" in n for n in result.notes), result.notes


# --------------------------------------------------------------------------- invisible characters

INVISIBLE = {
    "plain": "the database is down",
    "pasted": "the data\u200bbase pasted from a page",
    "persian": "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645 \u0628\u0631\u0645",
}


@pytest.fixture(scope="module")
def invisible(tmp_path_factory: pytest.TempPathFactory) -> Any:
    yield from one_message_each(tmp_path_factory, "invisible", INVISIBLE)


@pytest.mark.parametrize("route", EVERY_ROUTE)
@pytest.mark.parametrize(
    ("ch", "name"),
    [
        ("\u200b", "U+200B zero-width space"),
        ("\u200c", "U+200C zero-width non-joiner"),
        ("\u200d", "U+200D zero-width joiner"),
        ("\u2060", "U+2060 word joiner"),
        ("\ufeff", "U+FEFF zero-width no-break space"),
        ("\u00ad", "U+00AD soft hyphen"),
    ],
)
def test_an_invisible_character_inside_a_word_is_dropped(
    invisible: Any, route: str | None, ch: str, name: str
) -> None:
    """``data\u200bbase`` looks like ``database`` and found nothing: the character
    split the word into the phrase "data base".  It is searched as it looks,
    and the note names the character and how to find text that holds it."""
    found, result = _sessions(invisible[0], f"data{ch}base", route)
    assert found == ["plain"], (route, result.route, found)
    assert (
        f"dropped invisible characters inside words ({name}): searched as database; the "
        'index splits text that holds them there (search "data base" for it)'
    ) in result.notes
    # The stored text with the character is split there, and found as the phrase.
    assert _sessions(invisible[0], '"data base"', route)[0] == ["pasted"]


@pytest.mark.parametrize("route", EVERY_ROUTE)
def test_an_invisible_character_inside_a_quoted_word_names_the_phrase_to_search(
    invisible: Any, route: str | None
) -> None:
    """Quoted, ``"data\u200bbase"`` told the model to search ``""data base""``: two
    empty phrases around data and base, which found the plain "database" too."""
    found, result = _sessions(invisible[0], '"data\u200bbase"', route)
    assert found == ["plain"], (route, result.route, found)
    assert (
        "dropped invisible characters inside words (U+200B zero-width space): searched as "
        'database; the index splits text that holds them there (search "data base" for it)'
    ) in result.notes


@pytest.mark.parametrize(
    "query",
    [
        "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",  # Persian spells with ZWNJ
        "\U0001f468\u200d\U0001f469",  # an emoji sequence
        "\ufeffdatabase",  # at a word's edge it already separates
        '"a\u200d"',
    ],
)
def test_an_invisible_character_that_spells_or_separates_is_kept(
    invisible: Any, query: str
) -> None:
    result = invisible[0].search(query, limit=10, fields=("session_id",))
    assert not any("invisible" in n for n in result.notes), result.notes
    if query.startswith("\u0645"):
        assert [r["session_id"] for r in result.rows] == ["persian"]


def test_invisible_characters_through_the_tool_and_the_command(invisible: Any) -> None:
    st_, path = invisible
    for payload in (
        session_search(st_, query="data\u00adbase", limit=5),
        cli(path, "search", "data\u00adbase"),
    ):
        assert [r["session_id"] for r in payload["results"]] == ["plain"], payload
        assert any(n.startswith("dropped invisible") for n in payload["query_notes"])


# --------------------------------------------------------------------------- C++, C#, .NET

SIGNS = {
    "cpp": "rewrote the parser in C++",
    "csharp": "the C# service on .NET",
    "c": "plain C with a makefile",
    "fsharp": "F# type providers",
    "network": "network outage in the app",
}


@pytest.fixture(scope="module")
def signs(tmp_path_factory: pytest.TempPathFactory) -> Any:
    yield from one_message_each(tmp_path_factory, "signs", SIGNS)


@pytest.mark.parametrize("route", EVERY_ROUTE)
@pytest.mark.parametrize(
    ("query", "word", "wanted"),
    [
        ("C++", "c", {"cpp", "csharp", "c"}),
        ("C#", "c", {"cpp", "csharp", "c"}),
        ("F#", "f", {"fsharp"}),
        (".NET", "net", {"csharp"}),
    ],
)
def test_a_language_name_with_signs_says_it_is_searched_as_its_word(
    signs: Any, route: str | None, query: str, word: str, wanted: set[str]
) -> None:
    """The index keeps no '+' or '#' (C++ is the token c), so ``C++`` can only be
    searched as c, which finds C and C# too.  It was, with no note: the results
    read as answers for C++."""
    found, result = _sessions(signs[0], query, route)
    assert set(found) == wanted, (route, result.route, found)
    assert (
        f"{query!r} is searched as {word}: the index keeps no '+', '#' or leading '.' around "
        f"a word, so it finds every {word}, not only {query}"
    ) in result.notes


@pytest.mark.parametrize(
    ("query", "stem", "shown"),
    [
        ("in C#, mostly", "C#,", "C#"),
        ("C++; mostly", "C++;", "C++"),
        ("see .NET.", ".NET.", ".NET"),
    ],
)
def test_a_language_name_beside_punctuation_is_named_with_its_signs_alone(
    query: str, stem: str, shown: str
) -> None:
    """``C#,`` was said to find every c "not only C#,": the comma is no sign of it."""
    notes = parse_query(query).notes
    said = [n for n in notes if n.startswith(f"{stem!r} is searched as")]
    assert len(said) == 1 and said[0].endswith(f", not only {shown}"), notes


@pytest.mark.parametrize("route", EVERY_ROUTE)
@pytest.mark.parametrize(
    ("query", "typed", "wanted"),
    [('"C++"', "C++", {"cpp", "csharp", "c"}), ('"the C# service"', "C#", {"csharp"})],
)
def test_a_language_name_with_signs_in_a_phrase_says_it_is_searched_as_its_word(
    signs: Any, route: str | None, query: str, typed: str, wanted: set[str]
) -> None:
    """Quoted, ``"C++"`` was searched as c too, and found C and C#, with no note."""
    found, result = _sessions(signs[0], query, route)
    assert set(found) == wanted, (route, result.route, found)
    assert (
        f"{typed!r} is searched as c: the index keeps no '+', '#' or leading '.' around "
        f"a word, so it finds every c, not only {typed}"
    ) in result.notes


@pytest.mark.parametrize("route", EVERY_ROUTE)
def test_a_language_name_is_searched_exactly_beside_other_words(
    signs: Any, route: str | None
) -> None:
    """``.NET service`` searched net in its other forms (net…), which found
    "network"; ``A+`` beside words was left out as the common word a."""
    found, result = _sessions(signs[0], ".NET service", route)
    assert not any("other forms of: NET" in n for n in result.notes), result.notes
    assert found == ["csharp"], (route, result.route, found)
    assert "common words" not in " ".join(SessionStore.query_notes("A+ grades"))


NUMBERS = {
    "percent": "revenue grew 61.2% this year, for $100 a seat",
    "plain": "version 61.2 released, 100 seats",
}


@pytest.fixture(scope="module")
def numbers(tmp_path_factory: pytest.TempPathFactory) -> Any:
    yield from one_message_each(tmp_path_factory, "numbers", NUMBERS)


@pytest.mark.parametrize("route", EVERY_ROUTE)
@pytest.mark.parametrize(
    ("query", "said"),
    [
        (
            "61.2%",
            "'61.2%' is searched as 61.2: the index keeps no '%', so it finds every "
            "61.2, not only 61.2%",
        ),
        (
            "$100",
            "'$100' is searched as 100: the index keeps no '$', so it finds every 100, "
            "not only $100",
        ),
        ("61.2\uff05", "the index keeps no '\uff05', so it finds every 61.2, not only 61.2\uff05"),
        # quoted, the same: searched as the number, and said so
        (
            '"61.2%"',
            "'61.2%' is searched as 61.2: the index keeps no '%', so it finds every "
            "61.2, not only 61.2%",
        ),
        (
            '"grew 61.2%"',
            "'61.2%' is searched as 61.2: the index keeps no '%', so it finds every "
            "61.2, not only 61.2%",
        ),
        (
            '"$100"',
            "'$100' is searched as 100: the index keeps no '$', so it finds every 100, "
            "not only $100",
        ),
        # the signs alone beside the number are named, no bracket or comma
        ('"(61.2%)"', "so it finds every 61.2, not only 61.2%"),
        ("$100,", "so it finds every 100, not only $100"),
    ],
)
def test_a_number_with_a_percent_or_dollar_sign_says_it_is_searched_as_the_number(
    numbers: Any, route: str | None, query: str, said: str
) -> None:
    """The indexes keep no '%' or '$': ``61.2%`` found "version 61.2" too, with no
    note, as if it held the percentage; quoted (``"61.2%"``) it still had none."""
    found, result = _sessions(numbers[0], query, route)
    wanted = {"percent"} if "grew" in query else {"percent", "plain"}
    assert set(found) == wanted, (route, result.route, found)
    assert any(n.endswith(said) for n in result.notes), result.notes


# --------------------------------------------------------------------------- roles left out


@pytest.fixture(scope="module")
def tool_output(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = tmp_path_factory.mktemp("roles") / "state.db"
    st_ = open_store(path)
    turns: list[Any] = [
        ("user", "run the build"),
        {"role": "tool", "content": "Error: ECONNREFUSED 127.0.0.1:5432", "tool_name": "terminal"},
        ("assistant", "the build failed"),
    ]
    conversation(st_, "build", turns, start=T0)
    yield st_, path
    st_.close()


def test_an_empty_answer_names_the_roles_left_out_that_hold_matches(tool_output: Any) -> None:
    """The model searches user and assistant messages unless it asks for tool output.
    A word only tool output holds was answered "No matching sessions found", with
    nothing saying the tool output that holds it was not searched."""
    st_, _ = tool_output
    answer = session_search(st_, query="ECONNREFUSED")
    assert answer["count"] == 0 and answer["roles_with_matches"] == ["tool"]
    assert answer["message"].endswith(
        "Messages of role tool hold matches, but role_filter left them out: search them "
        "with role_filter='user,assistant,tool'."
    )
    assert "time filters" not in answer["message"]  # none were given
    again = session_search(st_, query="ECONNREFUSED", role_filter="user,assistant,tool")
    assert [r["session_id"] for r in again["results"]] == ["build"]
    # Only when they do: a word no message holds, a time window that leaves it out.
    for nothing in (
        session_search(st_, query="nowhere"),
        session_search(st_, query="ECONNREFUSED", after=T0 + 86400),
    ):
        assert nothing["count"] == 0 and "roles_with_matches" not in nothing, nothing
    assert "drop the time filters" in nothing["message"]


def test_no_hint_points_at_matches_only_the_current_conversation_holds(
    tmp_path: Path,
) -> None:
    """The current conversation is never a result, but the hints' probe counted its
    messages: its own tool output held the word, so an empty answer said "Messages
    of role tool hold matches" (or that the excluded sessions do), and the search
    the hint proposed found nothing again."""
    with open_store(tmp_path / "state.db") as st_:
        old: list[Any] = [{"role": "tool", "content": "walrus: one found", "tool_name": "terminal"}]
        conversation(st_, "old", old, start=T0)
        turns: list[Any] = []
        for _ in range(12):  # more of the current session's rows than one probe reads
            turns += [
                ("user", "look up the zebrafish and walrus notes"),
                {"role": "tool", "content": "zebrafish, walrus: none", "tool_name": "terminal"},
            ]
        conversation(st_, "now", turns, start=T0 + 60)
        for answer in (
            session_search(st_, query="zebrafish", current_session_id="now"),
            session_search(
                st_,
                query="zebrafish",
                role_filter="user,assistant,tool",
                exclude_session_ids="old",
                current_session_id="now",
            ),
        ):
            assert answer["count"] == 0, answer
            assert "roles_with_matches" not in answer and "excluded_hold_matches" not in answer
            assert "hold matches" not in answer["message"], answer
        # A match outside it still gets its hint, read past the current session's rows.
        held = session_search(st_, query="walrus", current_session_id="now")
        assert held["count"] == 0 and held["roles_with_matches"] == ["tool"], held


def test_the_roles_suggested_leave_out_a_role_hermes_has_not(tool_output: Any) -> None:
    """Regression: with ``role_filter='bot,user'`` the suggestion was
    ``role_filter='bot,user,tool'``, keeping the role that matches no message."""
    st_, _ = tool_output
    answer = session_search(st_, query="ECONNREFUSED", role_filter="bot,user")
    assert answer["message"].endswith("search them with role_filter='user,tool'."), answer
    assert any("'bot' is not a Hermes role" in note for note in answer["query_notes"])
    again = session_search(st_, query="ECONNREFUSED", role_filter="user,tool")
    assert [r["session_id"] for r in again["results"]] == ["build"]


def test_the_command_names_them_in_its_own_words(tool_output: Any) -> None:
    _, path = tool_output
    command = [sys.executable, "-m", "hermes_fts.cli", "search", "ECONNREFUSED", "--role", "user"]
    proc = subprocess.run(
        [*command, "--db", str(path)],
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    said = (
        "Searched user messages only; assistant, tool, system left out.\n"
        "Tool messages hold matches: add them with --role user,tool.\n"
    )
    assert said in proc.stdout and "role_filter" not in proc.stdout, proc.stdout
    assert cli(path, "search", "ECONNREFUSED", "--role", "user")["roles_with_matches"] == ["tool"]


def test_an_empty_answer_says_the_excluded_sessions_hold_matches(tool_output: Any) -> None:
    """Regression: every match in a session the search excluded was answered "Try
    fewer or different words", as if the words matched nothing."""
    st_, path = tool_output
    roles = "user,assistant,tool"
    answer = session_search(
        st_, query="ECONNREFUSED", role_filter=roles, exclude_session_ids="build"
    )
    assert answer["count"] == 0 and answer["excluded_hold_matches"] is True
    assert answer["message"].endswith(
        "exclude_session_ids leaves out hold matches; drop it to see them."
    )
    nothing = session_search(st_, query="nowhere", exclude_session_ids="build")
    assert "excluded_hold_matches" not in nothing, nothing
    shown = subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", "search", "ECONNREFUSED"]
        + ["--exclude", "build", "--db", str(path)],
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
        timeout=120,
    )
    assert shown.returncode == 0, shown.stderr
    assert "The sessions --exclude leaves out hold matches." in shown.stdout, shown.stdout
    assert "exclude_session_ids" not in shown.stdout


# --------------------------------------------------------------------------- notes that say what happened


@pytest.mark.parametrize("query", ["NEAR(deploy rocket, 5", "NEAR(deploy rocket, 5 ", "NEAR(a b"])
def test_an_unclosed_near_is_refused_as_unclosed(query: str) -> None:
    """``NEAR(deploy rocket, 5`` was refused with "NEAR(...) takes a number after its
    comma", which it has: the ``)`` is what is missing."""
    parsed = parse_query(query)
    assert parsed.error is not None and parsed.error.startswith("NEAR( is not closed: "), parsed
    assert str(parse_query("NEAR(a b, x)").error).startswith(
        "NEAR(...) takes a number after its comma"
    )


@pytest.mark.parametrize(("query", "word"), [("deploy or rocket", "or"), ("deploy not x", "not")])
def test_a_lower_case_operator_left_out_is_not_said_to_be_searched(query: str, word: str) -> None:
    """``deploy or rocket``: the notes said 'or' "is searched as a word", then that it
    was left out as a common word.  They now agree: left out, and a 'not' (meant to
    exclude, surely) is also said to be a word, not an operator; an 'or' or 'and'
    needs no such word (a best match is an OR of the words)."""
    notes = SessionStore.query_notes(query)
    said = f"'{word}' is a word here, not an operator: operators are upper case ({word.upper()})"
    assert (said in notes) == (word == "not"), notes
    assert f"left out common words that do not decide a match: {word}" in notes
    assert not any("is searched as a word" in n for n in notes), notes


# --------------------------------------------------------------------------- full-width parentheses

GROUPED = {
    "deploy_prod": "我们把服务部署到了生产环境",
    "deploy_test": "部署到测试环境",
    "migrate": "数据库迁移做完了",
    "migrate_prod": "生产环境的数据库迁移",
    "aside": "部署（生产环境）的计划",
}


@pytest.fixture(scope="module")
def grouped(tmp_path_factory: pytest.TempPathFactory) -> Any:
    yield from one_message_each(tmp_path_factory, "grouped", GROUPED)


@pytest.mark.parametrize("route", EVERY_ROUTE)
def test_full_width_parentheses_group_a_query_with_operators(
    grouped: Any, route: str | None
) -> None:
    """A Chinese keyboard types （ ）.  ``（部署 OR 迁移） NOT 生产`` was read as
    ``部署 OR (迁移 NOT 生产)``: the rows that say 生产 came back, with no note."""
    found, result = _sessions(grouped[0], "（部署 OR 迁移） NOT 生产", route)
    straight, _ = _sessions(grouped[0], "(部署 OR 迁移) NOT 生产", route)
    assert set(found) == set(straight) == {"deploy_test", "migrate"}, (route, result.route)
    assert "read full-width （ ） as parentheses" in result.notes


def test_full_width_parentheses_in_words_alone_stay_text(grouped: Any) -> None:
    """Without an operator they are prose (部署（生产环境）), searched as before."""
    result = grouped[0].search("部署（生产环境）", limit=10)
    assert not any("parentheses" in n for n in result.notes), result.notes
    assert result.rows  # its words are found
    quoted = parse_query('"（部署 OR" 迁移）')  # inside a phrase: text of the phrase
    assert not any("parentheses" in n for n in quoted.notes), quoted.notes


def test_full_width_parentheses_through_the_tool_and_the_command(grouped: Any) -> None:
    st_, path = grouped
    query = "（部署 OR 迁移） NOT 生产"
    for payload in (session_search(st_, query=query, limit=10), cli(path, "search", query)):
        assert {r["session_id"] for r in payload["results"]} == {"deploy_test", "migrate"}
        assert "read full-width （ ） as parentheses" in payload["query_notes"]


@pytest.mark.parametrize("route", EVERY_ROUTE)
@pytest.mark.parametrize(
    ("query", "straight", "read"),
    [
        ("（部署 ＯＲ 迁移） ＮＯＴ 生产", "(部署 OR 迁移) NOT 生产", "ＯＲ as OR, ＮＯＴ as NOT"),
        ("部署 ＡＮＤ 生产", "部署 AND 生产", "ＡＮＤ as AND"),
        ("部署ＯＲ迁移", "部署 OR 迁移", "ＯＲ as OR"),
        ("ＮＥＡＲ（数据库 迁移, 2）", "NEAR(数据库 迁移, 2)", "ＮＥＡＲ as NEAR"),
    ],
)
def test_full_width_operators_are_operators(
    grouped: Any, route: str | None, query: str, straight: str, read: str
) -> None:
    """A CJK keyboard types ＯＲ, ＡＮＤ, ＮＯＴ in full width, as it types （ ）.  They
    were searched as words: ``部署 ＯＲ 迁移`` ranked rows by the word "or", and
    ``ＮＯＴ 生产`` looked for the word "not" instead of leaving 生产 out."""
    found, result = _sessions(grouped[0], query, route)
    wanted, _ = _sessions(grouped[0], straight, route)
    assert set(found) == set(wanted) and found, (route, result.route, found)
    assert f"read full-width operators as operators: {read}" in result.notes


@pytest.mark.parametrize("route", EVERY_ROUTE)
@pytest.mark.parametrize("query", ["ＮＥＡＲ（数据库 迁移，2）", "NEAR(数据库 迁移，２)"])
def test_a_full_width_comma_before_a_near_distance_is_its_comma(
    grouped: Any, route: str | None, query: str
) -> None:
    """``NEAR(数据库 迁移，2)``: the comma typed in full width made "迁移，2" a term
    and the distance the default 10, without a word: nothing was found."""
    found, result = _sessions(grouped[0], query, route)
    wanted, _ = _sessions(grouped[0], "NEAR(数据库 迁移, 2)", route)
    assert set(found) == set(wanted) == {"migrate", "migrate_prod"}, (route, result.route)
    assert "read a full-width '，' before NEAR's distance as ','" in result.notes


@pytest.mark.parametrize("route", EVERY_ROUTE)
@pytest.mark.parametrize(
    ("query", "straight"),
    [
        ("NEAR(数据库, 迁移)", "NEAR(数据库 迁移, 10)"),
        ("NEAR(数据库,迁移, 2)", "NEAR(数据库 迁移, 2)"),
        ("NEAR(数据库，迁移，2)", "NEAR(数据库 迁移, 2)"),
        ('NEAR("生产环境", 部署)', "NEAR(生产环境 部署, 10)"),
    ],
)
def test_near_terms_listed_with_commas_are_its_terms(
    grouped: Any, route: str | None, query: str, straight: str
) -> None:
    """``NEAR(deploy, rollback)``, as a model calls a function, was refused ("takes a
    number after its comma"), and ``NEAR(数据库，迁移)`` searched the one phrase
    "数据库 迁移": a comma between every two terms lists them."""
    found, result = _sessions(grouped[0], query, route)
    wanted, _ = _sessions(grouped[0], straight, route)
    assert set(found) == set(wanted) and found, (route, result.route, found)
    note = f"read the commas between NEAR's terms as spaces: {straight}"
    assert any(n.startswith(note) for n in result.notes), result.notes


@pytest.mark.parametrize("query", ["NEAR(a b, x)", "NEAR(a, b c)", "NEAR(a b,)", "NEAR(a,, b)"])
def test_near_with_commas_only_between_some_terms_is_refused(query: str) -> None:
    """Words apart by spaces before a comma put a distance there: ``x`` may be a
    mistyped one, so the query is refused rather than read one way."""
    error = parse_query(query).error
    assert error is not None and error.startswith("NEAR(...) takes a number after its comma")


@pytest.mark.parametrize("route", EVERY_ROUTE)
@pytest.mark.parametrize(
    ("query", "straight"), [("Kube＊", "Kube*"), ("ｋｕｂｅ＊ 桂林", "kube* 桂林")]
)
def test_a_full_width_star_is_a_prefix(
    store: Any, route: str | None, query: str, straight: str
) -> None:
    """The same keyboard types a prefix's ``*`` as ＊: dropped as punctuation without a
    note, ``Kube＊`` searched the word "kube" alone and found nothing."""
    found, result = _sessions(store[0], query, route)
    wanted, _ = _sessions(store[0], straight, route)
    assert "k8s" in found and set(found) == set(wanted), (route, result.route, found)
    assert "read full-width operators as operators: ＊ as *" in result.notes
    payload = session_search(store[0], query=query, limit=10)
    assert "k8s" in {r["session_id"] for r in payload["results"]}
    assert "read full-width operators as operators: ＊ as *" in payload["query_notes"]


@pytest.mark.parametrize(
    "query", ["ＦＯＲＭ", "ｏｒ ｎｏｔ", "ＯＲacle", '"部署 ＯＲ 迁移"', "ＮＥＡＲ by"]
)
def test_full_width_letters_that_are_no_operator_stay_words(query: str) -> None:
    """Inside a word, in lower case, in a phrase, ＮＥＡＲ without its ( : text."""
    notes = parse_query(query).notes
    assert not any("full-width operators" in n for n in notes), notes


def test_full_width_operators_through_the_tool_and_the_command(grouped: Any) -> None:
    st_, path = grouped
    query = "（部署 ＯＲ 迁移） ＮＯＴ 生产"
    for payload in (session_search(st_, query=query, limit=10), cli(path, "search", query)):
        assert {r["session_id"] for r in payload["results"]} == {"deploy_test", "migrate"}
        assert payload["query_notes"][:2] == [
            "read full-width operators as operators: ＯＲ as OR, ＮＯＴ as NOT",
            "read full-width （ ） as parentheses",
        ]


def test_a_word_written_twice_is_named_once_in_the_notes(store: Any) -> None:
    """A question pasted twice without a space: ``上周`` was named once per time in
    the time note, and the sentence between as often in the note on what the
    first result lacks."""
    st_, _ = store
    query = "上周扩容集群节点上周扩容集群节点上周扩容集群节点"
    notes = session_search(st_, query=query, now=T0 + 10 * 86400)["query_notes"]
    time_note = next(n for n in notes if n.startswith("time words"))
    assert time_note.count("上周") == 1, time_note
    partial = (
        "no conversation holds every word; the first result matches only part of "
        "扩容集群节点 (扩容, 集群, 节点)"  # apart in the row: not joined
    )
    assert partial in notes, notes


# --------------------------------------------------------------------------- weekdays, the past few days

THURSDAY = "2026-12-03T12:00"  # last week is 23-29 November; Tuesday was 1 December


def _at(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()  # local time, as the package reads dates


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> Any:
    st_ = open_store(tmp_path_factory.mktemp("week") / "state.db")
    say = [
        ("tuesday", "2026-12-01T10:00", "we deploy the cache to staging, 部署完成"),
        ("recent", "2026-12-02T10:00", "部署了缓存服务"),
        # holds the question's words as words: a plain best match ranks it first
        (
            "decoy",
            "2026-10-06T10:00",
            "last tuesday deploy, the past days deploy: 部署 周二 过去 三天",
        ),
    ]
    for sid, when, text in say:
        conversation(st_, sid, [("user", text)], start=_at(when))
    yield st_
    st_.close()


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("what did we deploy last Tuesday", "tuesday"),
        ("deploy on Tuesday", "tuesday"),
        ("what did we deploy in the past few days", "tuesday"),
        ("部署 周二", "tuesday"),
        ("过去三天部署了什么", "tuesday recent"),
    ],
)
def test_weekdays_and_the_past_few_days_are_time_words(week: Any, query: str, first: str) -> None:
    """``last Tuesday`` and ``the past few days`` were searched as the words "last",
    "tuesday", "past", "days", so the conversation that said them came first and
    the one from that Tuesday after it, with no note on the time asked about."""
    found = week.search(query, sort="sessions", fields=["session_id"], now=THURSDAY)
    assert found.rows[0]["session_id"] in first.split(), (found.rows, found.notes)
    assert found.rows[-1]["session_id"] == "decoy"
    assert any(n.startswith("time words") for n in found.notes), found.notes


@pytest.mark.parametrize(
    ("words", "read"),
    [
        ("last Tuesday", "2026-11-24 or 2026-12-01"),  # the one before today, or last week's
        ("last Thursday", "2026-11-26"),
        ("this Monday", "2026-11-30"),
        ("on Friday", "2026-11-27"),
        ("past week", "2026-11-26 – 2026-12-03"),
        ("the last 3 days", "2026-11-30 – 2026-12-03"),
        ("past couple of weeks", "2026-11-19 – 2026-12-03"),
        ("上周二", "2026-11-24"),
        ("星期天", "2026-11-29"),
        ("这个星期一", "2026-11-30"),
        ("过去三天", "2026-11-30 – 2026-12-03"),
        ("最近一周", "2026-11-26 – 2026-12-03"),
        ("火曜日", "2026-12-01"),
        ("先週の金曜日", "2026-11-27"),
        ("過去3日間", "2026-11-30 – 2026-12-03"),
        ("화요일", "2026-12-01"),
        ("지난주 금요일", "2026-11-27"),
        ("최근 3일", "2026-11-30 – 2026-12-03"),
    ],
)
def test_weekdays_and_stretches_read(week: Any, words: str, read: str) -> None:
    said = week.search(f"deploy script {words}", fields=["id"], now=THURSDAY).notes
    assert any(f"({read}, local time) left out of the words" in n for n in said), said


@pytest.mark.parametrize("query", ["deploy on Fridays", "我们每周一部署", "deploy Tuesday"])
def test_habits_and_bare_weekday_names_are_words(week: Any, query: str) -> None:
    """Every Monday names no day; a bare English weekday name may name a meeting."""
    said = week.search(query, fields=["id"], now=THURSDAY).notes
    assert not any(n.startswith("time words") for n in said), said


@pytest.fixture(scope="module")
def lately(tmp_path_factory: pytest.TempPathFactory) -> Any:
    st_ = open_store(tmp_path_factory.mktemp("lately") / "state.db")
    said = "we deploy the cache, 部署了缓存, 서버 배포 완료, キャッシュをデプロイした"
    say = [
        ("recent", "2026-11-20T10:00", said),
        ("old", "2026-06-01T10:00", said),
        # holds the question's words as words: a plain best match ranks it first
        (
            "decoy",
            "2026-05-01T10:00",
            f"{said}; recently, lately 最近部署 최근 배포 最近のデプロイ",
        ),
    ]
    for sid, when, text in say:
        conversation(st_, sid, [("user", text)], start=_at(when))
    yield st_
    st_.close()


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ("what did we deploy recently", "recently"),
        ("deploy cache lately", "lately"),
        ("最近部署了什么", "最近"),
        ("최근 서버 배포", "최근"),
        ("最近のデプロイ", "最近"),
    ],
)
def test_recently_is_a_time_preference(lately: Any, query: str, words: str) -> None:
    """``recently``, ``lately``, 最近 and 최근 were searched as words: the
    conversation that said them came first, the recent one after it, and
    nothing said the question asked about a time.  They are the last 30 days
    now, first, and every other match after (a preference, never a filter)."""
    found = lately.search(query, sort="sessions", fields=["session_id"], now=THURSDAY)
    assert [r["session_id"] for r in found.rows][:1] == ["recent"], (found.rows, found.notes)
    assert {r["session_id"] for r in found.rows} == {"recent", "old", "decoy"}
    assert (
        f"time words '{words}' (2026-11-03 – 2026-12-03, local time) left out of the words: "
        in (" ".join(found.notes))
    ), found.notes


@pytest.mark.parametrize("query", ["离公司最近的地铁站", "距离最近的服务器", "a recent deploy"])
def test_nearest_and_recent_are_words(lately: Any, query: str) -> None:
    """离…最近 is "nearest", a distance; "recent" describes a thing, not when it was said."""
    said = lately.search(query, fields=["id"], now=THURSDAY).notes
    assert not any(n.startswith("time words") for n in said), said


# --------------------------------------------------------------------------- a search that browses


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ({"after": "7d"}, "after not used"),
        ({"query": "   "}, "query holds no words"),
        (
            {"query": "\u3000", "role_filter": "tool"},
            "query holds no words and role_filter not used",
        ),
        ({"query": ["", " "], "sort": "newest"}, "query holds no words and sort not used"),
    ],
)
def test_a_call_that_names_a_search_but_browses_says_so(
    tool_output: Any, arguments: dict[str, Any], said: str
) -> None:
    """``session_search(after="7d")`` ("what did I do this week") listed the latest
    sessions, unfiltered, and a query of spaces did the same: nothing said the
    time bound or the role was not used, so the listing read as their answer."""
    answer = session_search(tool_output[0], **arguments)
    assert answer["mode"] == "browse"
    assert answer["query_notes"] == [
        f"{said}: with no query this lists the most recently active sessions; pass words "
        "in query to search"
    ]
    assert "query_notes" not in session_search(tool_output[0])  # browse as asked: no note


# --------------------------------------------------------------------------- a long CJK paste


@pytest.mark.parametrize(
    "pasted",
    [
        "桂林漓江的旅游攻略" * 250,  # no space, no punctuation
        "桂林漓江的旅游攻略，" * 230,  # CJK punctuation, no space
        "deploy " + "桂林漓江的旅游攻略" * 240,  # one space, far from the limit
    ],
)
def test_a_long_cjk_paste_is_cut_between_characters(store: Any, pasted: str) -> None:
    """A Chinese paragraph has no spaces, so a paste past 2,048 characters was refused
    ("one term longer than 2048 characters"), or cut to the word before its one
    space.  It is cut between two CJK characters now, near the limit, and searched;
    the note on what the first result lacks names that long word by its start."""
    parsed = parse_query(pasted)
    assert parsed.error is None
    (cut,) = [n for n in parsed.notes if "was cut to" in n]
    assert cut.startswith("the query was cut to 2048 characters"), cut
    answer = session_search(store[0], query="旅游" + pasted)
    assert answer["success"], answer
    assert [r["session_id"] for r in answer["results"]] == ["trip"]
    (partial,) = [n for n in answer["query_notes"] if n.startswith("no conversation")]
    # the word by its start, then the parts of it the result holds
    assert "… (" in partial and partial.endswith(")") and len(partial) < 200, partial
    # One word with no CJK in it is still one term: refused, never cut inside.
    assert parse_query("x" * 2100).error is not None


# --------------------------------------------------------------------------- the command's words


def test_the_command_reads_unquoted_words_as_one_query(store: Any) -> None:
    """``hermes-fts search Kubernetes 节点`` failed with "unrecognized arguments: 节点":
    a person types a question without quotes, as with grep's words.  The words are
    one query, the same as quoted."""
    _, path = store
    unquoted = cli(path, "search", "Kubernetes", "节点", "--limit", "5")
    quoted = cli(path, "search", "Kubernetes 节点", "--limit", "5")
    assert unquoted["query"] == "Kubernetes 节点"
    assert unquoted["results"] == quoted["results"] and unquoted["results"]


# --------------------------------------------------------------------------- lists without spaces


@pytest.mark.parametrize("route", EVERY_ROUTE)
@pytest.mark.parametrize("query", ["Kubernetes,扩容", "Python|Kubernetes", "节点;Python"])
def test_words_listed_without_spaces_are_words_side_by_side(
    store: Any, route: str | None, query: str
) -> None:
    """``deploy,rollback`` and ``deploy|rollback`` (a model's keyword list, a regex's
    alternatives) were the phrase "deploy rollback": rows holding the words apart
    were never found, and nothing said why."""
    found, result = _sessions(store[0], query, route)
    words = query.replace(",", " ").replace("|", " ").replace(";", " ")
    apart, _ = _sessions(store[0], words, route)
    assert set(found) == set(apart) and found, (route, result.route, found)
    if query.isascii():
        assert f"read {query!r} as the words {words}" in result.notes[0], result.notes


def test_a_listing_sign_beside_a_digit_or_in_a_phrase_stays_text() -> None:
    for query in ("1,000", "x=1,y=2", '"deploy,rollback"', "scripts/deploy.sh"):
        assert not any("as the words" in n for n in parse_query(query).notes), query


# --------------------------------------------------------------------------- Korean 하다 verbs


@pytest.fixture(scope="module")
def korean(tmp_path_factory: pytest.TempPathFactory) -> Any:
    st_ = open_store(tmp_path_factory.mktemp("korean") / "state.db")
    conversation(st_, "deploy", [("user", "서버 배포는 금요일에 끝났어요")], start=T0)
    conversation(st_, "chat", [("user", "점심 뭐 먹을까요")], start=T0 + 1)
    yield st_
    st_.close()


@pytest.mark.parametrize(
    "query",
    [
        "지난주에 뭐 배포했어?",
        "언제 배포했어요?",
        "배포했나요",
        # the dictionary form and one carrying a particle were searched whole
        "배포하다 얘기 기억나요?",
        "배포하다에 대해 뭐라고 했죠?",
    ],
)
def test_a_korean_hada_verb_searches_its_noun(korean: Any, query: str) -> None:
    """배포했어 is 배포 (deployment) made a verb.  It was searched whole, which no
    message says, and 배포했어요 was left out as the question's predicate: the
    conversation about 배포 was not found."""
    found = korean.search(query, fields=["session_id"], now=T0 + 7 * 86400)
    assert found.rows and found.rows[0]["session_id"] == "deploy", (found.rows, found.notes)


def test_a_korean_predicate_that_is_no_hada_verb_still_decides_nothing(korean: Any) -> None:
    notes = SessionStore.query_notes("서버 기억나요")
    assert "left out common words that do not decide a match: 기억나요" in notes, notes


@pytest.mark.parametrize("query", ["서버 배포 뭐라고 했지?", "서버 배포 했었어?"])
def test_a_hada_verb_written_apart_from_its_noun_decides_nothing(
    tmp_path: Path, query: str
) -> None:
    """``배포 했지`` (did deploy, 하다 typed apart) searched ``했지`` as a word, so a
    message that only says it did something came before the one about the
    deployment."""
    st_ = open_store(tmp_path / "state.db")
    conversation(st_, "said", [("user", "서버 점검 했지, 배포는 아직이야 했었어")], start=T0)
    conversation(st_, "deploy", [("user", "서버 배포 금요일")], start=T0 + 1)
    try:
        found = st_.search(query, fields=["session_id"])
        assert [r["session_id"] for r in found.rows][:1] == ["deploy"], found.notes
    finally:
        st_.close()


def test_a_hada_verb_in_the_past_perfect_searches_its_noun() -> None:
    """``배포했었지`` (had deployed) was searched whole, its noun 배포 never."""
    from hermes_fts.query.best import best_match

    terms = [t.text for t in best_match(parse_query("배포했었지 서버")).terms]
    assert "배포" in terms, terms
