"""``hermes-fts browse`` deep in a long history: a page far down is read from the
store once, and is the same slice of the listing a single read of everything gives."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from _tool_fixtures import T0, conversation
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_fts import listing
from hermes_fts._params import SQLITE_INT_MAX
from hermes_fts.cli import main
from hermes_fts.store import SessionStore
from hermes_fts.tool import sessions
from hermes_fts.tool.context import HIDDEN_SESSION_SOURCES, CallContext

SESSIONS = 300
CONTINUED_EVERY = 10  # one session in ten continues the one before (compression)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("browse") / "state.db"
    with SessionStore(path) as store:
        for n in range(SESSIONS):
            continues = n % CONTINUED_EVERY == 1
            conversation(
                store,
                f"s{n:03d}",
                [("user", f"question {n}"), ("assistant", f"answer {n}")],
                start=T0 + 100 * n,
                session_key=f"k{n - 1 if continues else n}",
                parent=f"s{n - 1:03d}" if continues else None,
                end_reason="compression" if n % CONTINUED_EVERY == 0 else None,
            )
    return path


def _page(db: Path, capsys: pytest.CaptureFixture[str], offset: int) -> dict[str, Any]:
    assert (
        main(["--db", str(db), "--json", "browse", "--offset", str(offset), "--limit", "10"]) == 0
    )
    return json.loads(capsys.readouterr().out)


def test_a_deep_page_reads_the_listing_once(
    db: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The listing's first read was the page and 15 rows more: the conversations a
    continuation folds into (one session in ten on the 1M store) ran it short deep
    down, and the second read computed the whole listing again, and more (3.7 s and
    99 MB at offset 20,000 of the 1M store; now 2.0 s and 68 MB)."""
    real = SessionStore.sessions_by_activity
    reads: list[tuple[int, int]] = []

    def counted(self: SessionStore, *args: Any, **kwargs: Any) -> Any:
        reads.append((kwargs.get("limit", 0), kwargs.get("offset", 0)))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(SessionStore, "sessions_by_activity", counted)
    got = _page(db, capsys, 200)
    assert len(reads) == 1, reads
    monkeypatch.setattr(sessions, "_BROWSE_EXTRA_ROWS", 10 * SESSIONS)  # everything at once
    reference = _page(db, capsys, 200)
    assert got["results"] == reference["results"]
    assert got["next_offset"] == reference["next_offset"] == 210
    listed = [r["session_id"] for r in got["results"]]
    # A continued conversation is listed once: by its latest session, not also its first.
    continued = [s for s in listed if int(s[1:]) % CONTINUED_EVERY == 1]
    assert len(listed) == 10 and continued
    assert not any(f"s{int(s[1:]) - 1:03d}" in listed for s in continued)


# --------------------------------------------------------------------------- ranking every session

WIDE_SESSIONS = 1000
WIDE_TURNS = 40


@pytest.fixture(scope="module")
def wide_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """1,000 sessions of 40 messages, Hermes' order: ids follow the timestamps."""
    path = tmp_path_factory.mktemp("browse-wide") / "state.db"
    with SessionStore(path) as store:
        for n in range(WIDE_SESSIONS):
            store.add_session(f"w{n:04d}", "cli", started_at=T0 + 100 * n)
        store.add_messages(
            {
                "session_id": f"w{n:04d}",
                "role": "user",
                "content": "hi",
                "timestamp": T0 + 100 * n + k,
            }
            for n in range(WIDE_SESSIONS)
            for k in range(WIDE_TURNS)
        )
    return path


def test_a_deeper_page_costs_the_store_no_more(
    wide_db: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page's candidates were the owners of its 40 × (offset + limit) newest messages,
    so the store's work grew with the offset (1.1 s at offset 30,000 of the 1M store);
    a deep page now ranks every session once, the same work at any depth, and lists
    the same rows the candidates gave."""
    real = SessionStore.sessions_by_activity
    steps: list[int] = []

    def counted(self: SessionStore, *args: Any, **kwargs: Any) -> Any:
        count = [0]

        def tick() -> int:
            count[0] += 1
            return 0

        self._conn.set_progress_handler(tick, 100)
        try:
            return real(self, *args, **kwargs)
        finally:
            self._conn.set_progress_handler(None, 0)
            steps.append(count[0])

    monkeypatch.setattr(SessionStore, "sessions_by_activity", counted)
    pages = [_page(wide_db, capsys, offset) for offset in (500, 900)]
    assert len(steps) == 2 and steps[1] <= steps[0] * 1.05, steps
    monkeypatch.setattr(listing, "_RANK_ALL_FROM", SQLITE_INT_MAX)  # the candidates alone
    assert pages == [_page(wide_db, capsys, offset) for offset in (500, 900)]
    assert [r["session_id"] for r in pages[1]["results"]] == [
        f"w{n:04d}" for n in range(WIDE_SESSIONS - 901, WIDE_SESSIONS - 911, -1)
    ]


# A history as Hermes writes one: each step starts a session or adds a message to
# one, a second after the step before, so message ids follow their timestamps.
_SOURCES = ("cli", "cli", "telegram", "cron", "subagent", "tool")
_CONFIGS = (None, None, None, '{"_delegate_from": "x"}', '{"_branched_from": "x"}', "{}")
_ENDS = (None, None, "compression", "compression", "branched", "new_session", "idle")
_HIDDEN_AT_MOST = 5  # hidden sessions' messages take candidate room from the listed ones
_TURNS_AT_MOST = 6


@st.composite
def histories(
    draw: st.DrawFn,
    hidden_at_most: int = _HIDDEN_AT_MOST,
    turns_at_most: int = _TURNS_AT_MOST,
    run_at_most: int = 1,
) -> list[tuple[str, Any]]:
    """Steps: ``("session", (id, fields))``, or ``("messages", (id, how many))`` in a row
    (``run_at_most``: an agent's run)."""
    steps: list[tuple[str, Any]] = []
    sessions: list[str] = []
    turns: dict[str, int] = {}
    hidden = 0
    for _ in range(draw(st.integers(1, 90))):
        if not sessions or draw(st.integers(0, 3)) == 0:
            source = draw(st.sampled_from(_SOURCES))
            if source in HIDDEN_SESSION_SOURCES:
                if hidden == hidden_at_most:
                    source = "cli"
                hidden += source != "cli"
            sid = f"h{len(sessions):03d}"
            parent = draw(st.sampled_from([None, None, *sessions[-4:]]))
            fields = {
                "source": source,
                "parent": parent,
                "config": draw(st.sampled_from(_CONFIGS)) if parent else None,
                "key": draw(st.sampled_from(["a", "b", None])),
                "end": draw(st.sampled_from(_ENDS)),
                "active_mark": draw(st.booleans()),
            }
            steps.append(("session", (sid, fields)))
            sessions.append(sid)
            turns[sid] = 0
        else:
            sid = draw(st.sampled_from(sessions))
            count = min(draw(st.integers(1, run_at_most)), turns_at_most - turns[sid])
            if count:
                turns[sid] += count
                steps.append(("messages", (sid, count)))
    return steps


def _write(path: Path, history: list[tuple[str, Any]]) -> None:
    """``history`` written a second a step (a message is a step)."""
    with SessionStore(path) as store:
        ends: list[tuple[str, str]] = []
        when = T0
        for kind, (sid, what) in history:
            if kind == "messages":
                store.add_messages(
                    {"session_id": sid, "role": "user", "content": "said", "timestamp": when + k}
                    for k in range(what)
                )
                when += what
                continue
            store.add_session(
                sid,
                what["source"],
                started_at=when,
                parent_session_id=what["parent"],
                model_config=what["config"],
                session_key=what["key"],
                # A half second: no start or message shares the time.
                last_activity_at=when + 0.5 if what["active_mark"] else None,
            )
            when += 1
            if what["end"]:
                ends.append((sid, what["end"]))
        for sid, reason in ends:
            store.end_session(sid, reason)


def _listings(path: Path, ranked: bool) -> tuple[list[Any], list[Any]]:
    """Every slice of the store's listing, and the tool's browse pages, either by
    ranking every session or from the candidates only (no floor of 500 messages)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(listing, "_RANK_ALL_FROM", 0 if ranked else SQLITE_INT_MAX)
        mp.setattr(listing, "_RANK_ALL_SHARE", SQLITE_INT_MAX)
        mp.setattr(listing, "_RECENT_MESSAGE_FLOOR", 0)
        with SessionStore(path) as store:
            rows = [
                [r["id"] for r in store.sessions_by_activity(HIDDEN_SESSION_SOURCES, size, start)]
                for size in (1, 3, 10)
                for start in range(0, 40, 3)
            ]
            pages = [
                sessions.browse(CallContext(store, None, None), size, start)
                for size in (1, 4)
                for start in range(0, 30, 5)
            ]
    return rows, pages


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=histories())
def test_ranking_every_session_lists_what_the_candidates_list(
    history: list[tuple[str, Any]],
) -> None:
    """On histories Hermes writes (ids in time order), a deep page ranks every
    session and a shallow one reads candidates: both give the same rows in the
    same order, and the same browse pages (continuations folded, delegations left out)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "state.db"
        _write(path, history)
        assert _listings(path, ranked=True) == _listings(path, ranked=False)


def test_a_long_run_does_not_hide_the_session_active_before_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A page's candidates are the latest-started sessions and the owners of the newest
    40 messages a row (at least 500): an agent run of 1,600 messages after the session
    the user had been talking in hid it, and sessions that went quiet earlier were
    listed in its place."""
    path = tmp_path / "state.db"
    with SessionStore(path) as store:
        conversation(store, "talked", [("user", "started first")], start=T0)
        for n in range(40):  # short sessions, all over before "talked" spoke last
            conversation(store, f"quiet{n:02d}", [("user", "brief")], start=T0 + 10 + n)
        store.add_message("talked", "assistant", "still going", timestamp=T0 + 1000)
        store.add_session("run", "cli", started_at=T0 + 2000)
        store.add_messages(
            {"session_id": "run", "role": "tool", "content": "step", "timestamp": T0 + 2000 + k}
            for k in range(1600)
        )
    main(["--db", str(path), "--json", "browse", "--limit", "3"])
    listed = [r["session_id"] for r in json.loads(capsys.readouterr().out)["results"]]
    assert listed == ["run", "talked", "quiet39"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=histories(hidden_at_most=1000, turns_at_most=1000, run_at_most=120))
def test_a_listing_the_messages_read_cannot_vouch_for_ranks_every_session(
    history: list[tuple[str, Any]],
) -> None:
    """Long runs and hidden sessions' traffic fill the newest messages a listing reads:
    the sessions active before them were left out of it, and are listed now."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "state.db"
        _write(path, history)
        assert _listings(path, ranked=True) == _listings(path, ranked=False)


def test_a_conversation_compressed_thousands_of_times_leaves_no_other_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A gateway chat compressed 1,200 times lists once, so the listing read sessions
    eight times over and then stopped: the 30 other conversations between its
    continuations were cut short, and the page said there were no more."""
    path = tmp_path / "state.db"
    with SessionStore(path) as store:
        previous = None
        for n in range(1200):
            sid = f"chat{n:04d}"
            store.add_session(sid, "telegram", started_at=T0 + 10 * n, parent_session_id=previous)
            store.add_message(sid, "user", "more", timestamp=T0 + 10 * n + 1)
            if previous is not None:
                store.end_session(previous, "compression")
            previous = sid
            if n % 40 == 0:
                conversation(store, f"other{n // 40:02d}", [("user", "hi")], start=T0 + 10 * n + 2)
    main(["--db", str(path), "--json", "browse", "--limit", "50"])
    page = json.loads(capsys.readouterr().out)
    listed = [r["session_id"] for r in page["results"]]
    assert listed[0] == "chat1199"
    assert listed[1:] == [f"other{n:02d}" for n in range(29, -1, -1)]
