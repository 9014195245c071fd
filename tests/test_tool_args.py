"""The tool's argument rules: one Call per call, each coercion written once."""

from __future__ import annotations

import json
import time
from datetime import datetime

import pytest
from _tool_fixtures import T0, assert_error, chat, conversation, open_store

from hermes_fts.tool import TOOL_SCHEMA, session_search
from hermes_fts.tool.args import Call, clamp_int, parse_roles, parse_time_bound, scroll_anchor
from hermes_fts.tool.errors import ToolError


@pytest.mark.parametrize(
    ("session_id", "profile", "expected"),
    [
        ("@session:work/abc", None, ("abc", "work", True)),
        ("  work/abc ", None, ("abc", "work", True)),
        ("@session:abc", None, ("abc", None, False)),
        ("work/abc", "home", ("abc", "home", True)),  # an explicit profile wins
        ("work/", None, ("work/", None, False)),  # no id after the slash: not a reference
        ("@session:", None, (None, None, False)),
        # A number is the session of that name (noted), not dropped into a browse.
        (42, "x", ("42", "x", False)),
        # A blank profile is none, as Hermes reads it (models send "" for it).
        ("abc", "", ("abc", None, False)),
        ("work/abc", " ", ("abc", "work", True)),
        ("/abc", None, ("abc", None, False)),
        ("@session: /abc", "home", ("abc", "home", True)),
    ],
)
def test_call_parses_session_references(session_id, profile, expected):
    call = Call.parse(session_id, profile, None)
    assert (call.session_id, call.profile, call.qualified) == expected


@pytest.mark.parametrize("profile", ["", "  "])
def test_a_blank_profile_is_none_given_in_every_form(tmp_path, profile):
    """Hermes' own tool reads profile="" as no profile; it was refused here ("profile
    name is empty"), so a model that fills every argument got an error, not an answer."""
    store = open_store(tmp_path / "state.db")
    conversation(store, "s1", [("user", "deploy the blue build"), ("assistant", "done")])
    found = session_search(store, query="deploy", profile=profile)
    assert found["success"] and [r["session_id"] for r in found["results"]] == ["s1"], found
    read = session_search(store, session_id="s1", profile=profile)
    assert read["success"] and read["mode"] == "read", read
    assert session_search(store, session_id="/s1")["success"]
    browsed = session_search(store, profile=profile)
    assert browsed["success"] and browsed["mode"] == "browse", browsed
    store.close()


@pytest.mark.parametrize("as_given", [str, lambda p: p, lambda p: 5])
def test_a_store_that_is_not_a_session_store_is_named_as_the_callers_mistake(
    tmp_path, caplog, as_given
):
    # A path failed inside ('str' object has no attribute 'path'), was logged with a
    # traceback and answered as our own failure: "retry with simpler arguments".
    path = tmp_path / "state.db"
    with open_store(path) as store:
        conversation(store, "s1", [("user", "deploy the blue build")])
    found = session_search(as_given(path), query="deploy")
    assert_error(found, "store must be a SessionStore", "not ")
    assert "simpler arguments" not in found["error"]
    assert not [r for r in caplog.records if r.exc_info]


def test_every_optional_argument_blank_is_none_given(tmp_path):
    """A model that fills every argument sends "" for those it does not mean: the call
    is the search (or read) it names, with no note about the blanks.  A blank
    around_message_id made it the error "scroll requires session_id"."""
    store = open_store(tmp_path / "state.db")
    conversation(store, "s1", [("user", "deploy the blue build"), ("assistant", "done")])
    blanks = dict.fromkeys(
        ["around_message_id", "window", "limit", "sort", "detail", "role_filter", "profile"], ""
    )
    blanks |= dict.fromkeys(["after", "before", "exclude_session_ids"], " ")
    found = session_search(store, query="deploy", session_id="", **blanks)
    assert found["success"] and found["mode"] == "discover", found
    assert [r["session_id"] for r in found["results"]] == ["s1"]
    assert "query_notes" not in found, found
    read = session_search(store, session_id="s1", **blanks)
    assert read["success"] and read["mode"] == "read", read
    assert "query_notes" not in read, read
    browsed = session_search(store, query="", session_id="", **blanks)
    assert browsed["success"] and browsed["mode"] == "browse", browsed
    store.close()


@pytest.mark.parametrize(
    "excluded", ['["s1", "s2"]', "['s1', 's2']", "s1 s2", "s1,s2", "@session:s1, s2"]
)
def test_sessions_to_leave_out_sent_as_text_are_left_out(tmp_path, excluded):
    """A list a model wrote as JSON text was split at its commas alone: '["s1"' and
    '"s2"]' named no session, and both were kept in the results without a word."""
    store = open_store(tmp_path / "state.db")
    for sid in ("s1", "s2", "s3"):
        conversation(store, sid, [("user", f"deploy the build of {sid}")])
    found = session_search(store, query="deploy", exclude_session_ids=excluded, limit=10)
    assert [r["session_id"] for r in found["results"]] == ["s3"], found
    store.close()


def test_call_current_session_is_trimmed_or_dropped():
    assert Call.parse(None, None, "  s1 ").current_session_id == "s1"
    assert Call.parse(None, None, "   ").current_session_id is None
    assert Call.parse(None, None, 7).current_session_id == "7"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, ["user", "assistant"]),
        ("", ["user", "assistant"]),
        (" , ,", ["user", "assistant"]),
        (" Tool , tool,,USER", ["tool", "user"]),
        # a list sent as JSON text, or with blanks between: it was one role of that name
        ('["tool", "user"]', ["tool", "user"]),
        ("user assistant", ["user", "assistant"]),
        (["assistant", " Assistant ", "tool"], ["assistant", "tool"]),
        (("user",), ["user"]),
    ],
)
def test_roles_are_trimmed_lowercased_and_deduplicated(value, expected):
    assert parse_roles(value) == expected


@pytest.mark.parametrize("value", [3.5, {"user": 1}, ["user", 3]])
def test_roles_of_the_wrong_type_are_an_error(value):
    with pytest.raises(ToolError, match="role_filter"):
        parse_roles(value)


@pytest.mark.parametrize(
    ("value", "expected", "note"),
    [
        (None, 3, None),
        ("4", 4, None),
        (" 4 ", 4, None),
        (4.0, 4, None),
        ("abc", 3, "limit 'abc' is not a number; used the default 3"),
        (True, 3, "limit True is not a number; used the default 3"),
        ("7.9", 7, "limit '7.9' is not a whole number; used 7"),
        ("5.0", 5, None),  # a whole number written with a decimal point
        (" 6.00 ", 6, None),
        ("2e0", 2, None),
        ("+4", 4, None),
        (-1, 1, "limit -1 is outside 1-10; used 1"),
        (0, 1, "limit 0 is outside 1-10; used 1"),
        (99, 10, "limit 99 is outside 1-10; used 10"),
        # Python's int() reads these; nobody writes a count so (it was 4, unsaid)
        ("\uff14", 3, "limit '\uff14' is not a number; used the default 3"),
        ("0_4", 3, "limit '0_4' is not a number; used the default 3"),
        ("\u0664.0", 3, "limit '\u0664.0' is not a number; used the default 3"),
    ],
)
def test_limit_is_clamped_the_hermes_way_and_the_clamp_is_noted(value, expected, note):
    assert clamp_int(value, 3, 1, 10) == expected
    assert Call.parse(None, None, None, limit=value).count == (expected, note)


def test_every_clamp_reaches_the_payload_as_a_query_note(tmp_path, monkeypatch):
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    with open_store(tmp_path / "state.db") as store:
        ids = conversation(store, "s1", chat(6))
        browse = session_search(store, limit=50)
        assert browse["success"] is True
        assert browse["query_notes"] == ["limit 50 is outside 1-10; used 10"]
        scroll = session_search(store, session_id="s1", around_message_id=ids[2], window="x")
        assert scroll["window"] == 5
        assert scroll["query_notes"] == ["window 'x' is not a number; used the default 5"]
        found = session_search(store, query="chatter", limit="2", sort="sideways", detail="Huge")
        assert found["success"] is True and found["detail"] == "adaptive"
        assert found["query_notes"] == [
            "sort 'sideways' is not one of newest, oldest; used best match first",
            "detail 'Huge' is not one of adaptive, full, index; used adaptive",
        ]
        exact = session_search(store, query="chatter", limit=2, sort="Newest", detail="index")
        assert "query_notes" not in exact
        assert "query_notes" not in session_search(store, session_id="s1", limit="junk")


@pytest.mark.parametrize(("value", "expected"), [(12, 12), (" 12 ", 12), (12.0, 12), ("-3", -3)])
def test_scroll_anchor_accepts_integers_in_any_spelling(value, expected):
    assert scroll_anchor(value) == expected


@pytest.mark.parametrize("value", ["x", 1.5, True, None, "1.5", [3]])
def test_scroll_anchor_refuses_what_is_not_an_integer(value):
    with pytest.raises(ToolError, match="integer around_message_id"):
        scroll_anchor(value)


def _digits(first: int):
    """A message id written with the ten digits from ``first`` (U+FF10: full-width)."""
    return lambda n: str(n).translate({ord(d): first + int(d) for d in "0123456789"})


@pytest.mark.parametrize("written", [_digits(0xFF10), _digits(0x0966), lambda n: f"0_{n}"])
def test_scroll_anchor_refuses_digits_other_than_0_to_9(tmp_path, written):
    """Regression: a message id written in full-width or Devanagari digits, or with
    an underscore, was read as that id, as Python's int() reads it, unsaid."""
    with pytest.raises(ToolError, match="^scroll requires integer around_message_id, written "):
        scroll_anchor(written(12))
    with open_store(tmp_path / "state.db") as store:
        ids = conversation(store, "s1", chat(3))
        got = session_search(store, session_id="s1", around_message_id=written(ids[1]))
        assert_error(got, "around_message_id, written with the digits 0-9")


def test_search_options_are_parsed_only_for_the_search_form(tmp_path, monkeypatch):
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    with open_store(tmp_path / "state.db") as store:
        conversation(store, "s1", chat(3))
        _check_search_only_options(store)


def _check_search_only_options(store):
    bad = {"role_filter": 3.5, "after": "nonsense", "exclude_session_ids": 5}
    # a read and a browse never fail on an argument only the search uses
    assert session_search(store, session_id="s1", **bad)["success"] is True
    assert session_search(store, **bad)["success"] is True
    assert_error(session_search(store, query="chatter", **bad), "role_filter")
    assert_error(
        session_search(store, query="chatter", role_filter="user", after="nonsense"),
        "after must be epoch seconds",
    )
    assert_error(
        session_search(store, query="chatter", after="2026-03-02", before="2026-03-01"),
        "after must be earlier than before",
    )


def test_search_options_carry_the_parsed_values():
    call = Call.parse(
        None,
        None,
        None,
        query="  deploy  ",
        limit="5",
        sort=" Newest ",
        detail="INDEX",
        role_filter="tool",
        after="100",
        before=200,
        exclude_session_ids=["@session:work/a", "b", " "],
    )
    options = call.search_options()
    assert options.query == "deploy" and options.limit == 5
    assert options.sort == "newest" and options.detail == "index"
    assert options.roles == ["tool"]
    assert (options.after, options.before) == (100.0, 200.0)
    assert options.excluded == frozenset({"a", "b"}) and options.filtered
    plain = Call.parse(None, None, None, query="deploy", sort="sideways", detail="huge")
    options = plain.search_options()
    assert options.sort is None and options.detail == "adaptive" and not options.filtered


@pytest.mark.parametrize(
    ("query", "searched", "note"),
    [
        (404, "404", None),  # a number is its digits, as a model that typed it meant
        (2.5, "2.5", None),
        (["deploy", " docker "], "deploy docker", "query was a list"),
        (("rollback", 7), "rollback 7", "query was a list"),
    ],
)
def test_a_query_that_is_not_text_is_searched_not_browsed(tmp_path, query, searched, note):
    with open_store(tmp_path / "state.db") as store:
        conversation(store, "s1", [("user", "deploy docker 404 rollback 7 2.5")])
        found = session_search(store, query=query)
        assert found["success"] is True and found["mode"] == "discover", found
        assert found["query"] == searched and found["count"] == 1
        notes = found.get("query_notes", [])
        assert (note is None and not notes) or any(note in n and searched in n for n in notes)


@pytest.mark.parametrize("query", [{"words": "deploy"}, b"deploy", True, [["deploy"]]])
def test_a_query_of_another_type_is_refused_not_browsed(tmp_path, query):
    with open_store(tmp_path / "state.db") as store:
        conversation(store, "s1", chat(3))
        assert_error(session_search(store, query=query), "query must be text")


def test_a_session_id_sent_as_a_number_reads_that_session_with_a_note(tmp_path):
    with open_store(tmp_path / "state.db") as store:
        conversation(store, "5", [("user", "deploy the five")])
        conversation(store, "s2", [("user", "deploy docker")])
        read = session_search(store, session_id=5)
        assert read["success"] is True and read["mode"] == "read", read
        assert read["session_id"] == "5"
        assert any("session_id was a number" in n for n in read["query_notes"])
        # Given beside a query, the number still decides the form: a read, not a search.
        beside = session_search(store, session_id=5, query="docker")
        assert beside["mode"] == "read" and beside["session_id"] == "5", beside


def test_a_current_session_id_sent_as_a_number_is_left_out(tmp_path):
    with open_store(tmp_path / "state.db") as store:
        conversation(store, "7", [("user", "deploy docker here")])
        conversation(store, "s2", [("user", "deploy docker there")], start=T0 + 100)
        found = session_search(store, query="deploy docker", current_session_id=7)
        assert [r["session_id"] for r in found["results"]] == ["s2"], found
        assert any("current_session_id was a number" in n for n in found["query_notes"])
        listed = session_search(store, current_session_id=7)
        assert [r["session_id"] for r in listed["results"]] == ["s2"], listed


@pytest.mark.parametrize("name", ["session_id", "current_session_id"])
@pytest.mark.parametrize("value", [["s1"], {"id": "s1"}, True, b"s1", float("nan")])
def test_a_session_id_of_another_type_is_refused(tmp_path, name, value):
    with open_store(tmp_path / "state.db") as store:
        conversation(store, "s1", chat(3))
        assert_error(session_search(store, **{name: value}), f"{name} must be text")
        assert_error(
            session_search(store, query="chatter", **{name: value}), f"{name} must be text"
        )


NOW = 1_780_000_000.0


@pytest.mark.parametrize(
    ("value", "seconds_back"),
    [
        ("30m", 1800),
        ("24h", 86400),
        ("7d", 7 * 86400),
        ("2w", 14 * 86400),
        (" 7D ", 7 * 86400),
        ("1.5h", 5400),
        ("0d", 0),
        ("12 h", 12 * 3600),
    ],
)
def test_relative_time_bounds_count_back_from_now(value, seconds_back):
    assert parse_time_bound(value, "after", now=NOW) == NOW - seconds_back


@pytest.mark.parametrize("value", ["9" * 400 + "d", "1e309", 10**309, -(10**400), 1e308 * 10])
def test_bounds_past_any_float_are_out_of_range(value):
    with pytest.raises(
        ToolError, match=r"^after is out of range: epoch seconds must be a finite number"
    ):
        parse_time_bound(value, "after", now=NOW)


@pytest.mark.parametrize("value", ["99999999d", "999999999999w", "9999999999h", "740000d"])
def test_a_time_back_past_the_year_1_is_refused(tmp_path, value):
    """Regression: `--after 99999999d` (a typo) was read as 273,000 years ago, so
    the filter kept every message, and `--before` found nothing, neither said."""
    with pytest.raises(ToolError, match=rf"^before '{value}' goes back past the year 1; "):
        parse_time_bound(value, "before", now=NOW)
    with open_store(tmp_path / "state.db") as store:
        conversation(store, "s1", [("user", "deploy the rocket")])
        assert_error(session_search(store, query="deploy", after=value), "past the year 1")


@pytest.mark.parametrize(
    ("value", "meant"),
    [
        ("\u00b2\u2070\u00b2\u2076", "a year in superscript digits"),
        ("\uff11\uff17\uff10\uff10\uff10\uff10\uff10\uff10\uff10", "full-width seconds"),
        ("\u0967\u0968\u0969\u096a", "Devanagari seconds"),
        ("1_700_000_000", "seconds with underscores"),
        ("\uff17d", "a full-width time back"),
    ],
)
def test_a_time_bound_in_digits_other_than_0_to_9_is_refused(tmp_path, caplog, value, meant):
    """Regression: superscript digits failed in int() ("session_search failed",
    a traceback logged, CLI exit 1); full-width or other scripts' digits were
    read as epoch seconds, a bound in 1970 kept silently."""
    with pytest.raises(ToolError, match=r"2w, written with the digits 0-9 \(got "):
        parse_time_bound(value, "after", now=NOW)
    with open_store(tmp_path / "state.db") as store:
        conversation(store, "s1", [("user", "deploy the rocket")])
        got = session_search(store, query="deploy", before=value)
    assert_error(got, "before must be epoch seconds", "written with the digits 0-9")
    assert "Traceback" not in caplog.text, meant


def test_a_time_back_to_the_year_1_is_read():
    assert parse_time_bound("700000d", "after", now=NOW) == NOW - 700000 * 86400


@pytest.mark.parametrize(
    ("value", "unit"),
    [
        (1_700_000_000_000, "milliseconds"),
        ("1700000000000", "milliseconds"),
        (1.7e15, "microseconds"),
        ("1700000000000000000", "nanoseconds"),
    ],
)
def test_a_bound_in_finer_units_is_refused_with_its_seconds(value, unit):
    """Epoch milliseconds read as seconds were a time in the year 55,000: an `after`
    that found nothing, a `before` that kept everything, neither said."""
    with pytest.raises(ToolError, match="past the year 5000") as refused:
        parse_time_bound(value, "after", now=NOW)
    assert f"epoch {unit}, pass it in seconds: 1700000000 (2023-11-14)" in str(refused.value)


def test_a_model_passing_milliseconds_is_told_so(tmp_path):
    with open_store(tmp_path / "state.db") as store:
        conversation(store, "s1", [("user", "deploy the rocket")])
        late = session_search(store, query="deploy", after=int(T0 * 1000))
        assert_error(late, "epoch milliseconds", f"pass it in seconds: {T0:.0f}")
        found = session_search(store, query="deploy", after=T0 - 1)
        assert found["success"] is True and found["results"], found


def test_the_latest_seconds_are_still_read_as_seconds():
    assert parse_time_bound(99_999_999_999, "before", now=NOW) == 99_999_999_999.0


@pytest.mark.parametrize("value", ["7x", "d7", "-7d", "7 days", "7dd", "7d ago", "h"])
def test_malformed_relative_bounds_are_refused_with_the_forms_that_work(value):
    with pytest.raises(
        ToolError,
        match=r"before must be epoch seconds, an ISO date/time .*"
        r"30m, 24h, 7d or 2w",
    ) as refused:
        parse_time_bound(value, "before", now=NOW)
    assert repr(value) in str(refused.value)


def test_absolute_time_bounds_are_read_as_before():
    assert parse_time_bound("2026-03-15", "after", now=NOW) == datetime(2026, 3, 15).timestamp()
    assert parse_time_bound("2026-03-15T09:30Z", "after") == 1773567000.0
    assert parse_time_bound("100", "after", now=NOW) == 100.0
    assert parse_time_bound(250, "after") == 250.0
    assert parse_time_bound("  ", "after") is None


@pytest.mark.parametrize("compact", ["20260315", " 20260315 ", "19991231"])
def test_a_compact_date_is_read_as_a_date_not_as_seconds_of_1970(compact):
    """ISO 8601's basic form (YYYYMMDD): read as epoch seconds it meant a day in
    August 1970, so `--after 20260315` kept every message, silently."""
    expanded = f"{compact.strip()[:4]}-{compact.strip()[4:6]}-{compact.strip()[6:]}"
    assert parse_time_bound(compact, "after") == parse_time_bound(expanded, "after")


@pytest.mark.parametrize(
    ("number", "seconds"),
    [("12345678", 12345678.0), ("19700101", 19700101.0), ("1700000000", 1.7e9)],
)
def test_a_number_that_is_no_date_stays_epoch_seconds(number, seconds):
    assert parse_time_bound(number, "after") == seconds


@pytest.mark.parametrize("typo", ["20261399", "20260230", "20250000"])
def test_eight_digits_of_no_day_are_refused_not_read_as_1970(typo):
    """Regression: `--after 20260230` (no such day) was read as epoch seconds, a day
    in August 1970, so the filter silently kept every message."""
    with pytest.raises(ToolError, match=rf"after '{typo}' is no date: .*YYYYMMDD"):
        parse_time_bound(typo, "after")


@pytest.mark.parametrize(("typed", "first"), [("2024", "2024-01-01"), ("202403", "2024-03-01")])
def test_a_year_or_a_month_alone_is_refused_not_read_as_1970(tmp_path, typed, first):
    """Regression: `--after 2024` ("from 2024 on") was read as 2,024 epoch seconds, in
    1970, so the filter silently kept every message; `202403` as well."""
    with pytest.raises(ToolError, match=rf"after '{typed}' is no date: .*such as {first}"):
        parse_time_bound(typed, "after")
    with open_store(tmp_path / "state.db") as store:
        conversation(store, "old", chat(2, "lighthouse"), start=datetime(2023, 5, 1).timestamp())
        got = session_search(store, query="lighthouse", after=typed)
    assert not got["success"] and f"such as {first}" in got["error"], got


def test_a_capital_m_is_refused_not_read_as_minutes(tmp_path):
    """Regression: `--after 6M` (six months, as many tools write it) was read as six
    minutes, so a search of the last half year kept only the last minutes' messages."""
    with pytest.raises(ToolError, match=r"after '6M': M is minutes or months\?"):
        parse_time_bound("6M", "after", now=NOW)
    assert parse_time_bound("6m", "after", now=NOW) == NOW - 360
    with open_store(tmp_path / "state.db") as store:
        conversation(store, "recent", chat(2, "lighthouse"), start=time.time() - 86400)
        got = session_search(store, query="lighthouse", after="6M")
    assert not got["success"] and "minutes or months" in got["error"], got


def test_relative_bounds_select_messages_by_their_own_time(tmp_path, monkeypatch):
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    with open_store(tmp_path / "state.db") as store:
        conversation(store, "old", chat(2, "lighthouse"), start=T0)
        # The session started long ago; its message of ten minutes ago is what counts.
        conversation(store, "mixed", chat(2, "harbour"), start=T0 + 60)
        store.add_message("mixed", "user", "lighthouse again", timestamp=time.time() - 600)

        def found(**bounds):
            payload = session_search(store, query="lighthouse", **bounds)
            assert payload["success"] is True, payload
            return sorted(r["session_id"] for r in payload["results"])

        assert found() == ["mixed", "old"]
        assert found(after="1d") == ["mixed"]
        assert found(after="30m", before="5m") == ["mixed"]
        assert found(before="1d") == ["old"]
        assert found(after="5m") == []
        assert_error(
            session_search(store, query="lighthouse", after="1d", before="2d"),
            "after must be earlier than before",
        )
        assert_error(
            session_search(store, query="lighthouse", after="last week"),
            "or a time back from now such as 30m, 24h, 7d or 2w",
        )


@pytest.mark.parametrize(
    "extra",
    [{"max_results": 5}, {"mode": "search", "explanation": "find the deploy chat"}],
)
def test_an_argument_the_tool_does_not_take_is_an_error_naming_those_it_does(tmp_path, extra):
    """A model's call passed as keywords (``session_search(store, **arguments)``, as
    TOOL_SCHEMA invites) raised TypeError for any name the schema lacks, where every
    other bad argument is an error payload saying what to pass."""
    with open_store(tmp_path / "state.db") as store:
        conversation(store, "s1", [("user", "deploy docker")])
        out = session_search(store, **{"query": "deploy", **extra})
    assert_error(out, *map(repr, extra))
    assert all(name in out["error"] for name in TOOL_SCHEMA["parameters"]["properties"])
    assert json.loads(json.dumps(out)) == out
