"""``hermes-fts demo``: build a small multilingual store and search it.

The conversations live in ``demo.json`` next to this module (package data,
written for this project, in four languages).  Each session has ``id``,
``source``, ``title``, ``model``, ``day`` (offset from ``epoch`` in days),
optional ``parent``/``end_reason``, and ``turns``: ``[role, text]`` pairs,
``["call", tool_name, arguments]`` for an assistant tool call and
``["tool", tool_name, output]`` for its result.  ``searches`` lists the
queries the demo runs, in order, with what each one shows and optional
``after``/``before`` time bounds.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from .._env import cjk_switch_value
from ..store import SessionStore, open_store
from ..tool import session_search
from .output import BOLD, emit_json, highlight, one_line, style, use_color
from .registry import CommandError, command, follow_up

_DATA_FILE = "demo.json"


_BOUNDS = ("after", "before")


@dataclass(frozen=True)
class DemoSearch:
    query: str
    shows: str  # the claim the result proves
    bounds: dict[str, str]  # after/before, as passed to --after/--before

    def words(self) -> str:
        """The search as ``hermes-fts`` arguments (``registry.follow_up`` adds the store)."""
        flags = "".join(f" --{name} {value}" for name, value in self.bounds.items())
        return f"search {self.query!r}{flags}"


@dataclass(frozen=True)
class DemoData:
    epoch: float
    turn_gap: float
    searches: list[DemoSearch]
    sessions: list[dict[str, Any]]


@lru_cache(maxsize=1)
def load_demo() -> DemoData:
    """The demo conversations and searches, read from the package's ``demo.json``."""
    text = resources.files(__package__).joinpath(_DATA_FILE).read_text(encoding="utf-8")
    raw = json.loads(text)
    return DemoData(
        epoch=float(raw["epoch"]),
        turn_gap=float(raw["turn_gap_seconds"]),
        searches=[
            DemoSearch(item["query"], item["shows"], {k: item[k] for k in _BOUNDS if k in item})
            for item in raw["searches"]
        ],
        sessions=raw["sessions"],
    )


def _messages(session: dict[str, Any], start: float, gap: float) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    pending_call: str | None = None
    for number, turn in enumerate(session["turns"]):
        ts = start + number * gap
        kind = turn[0]
        if kind == "call":
            call_id = f"call_{session['id'][-6:]}_{number}"
            pending_call = call_id
            call = {
                "id": call_id,
                "type": "function",
                "function": {"name": turn[1], "arguments": json.dumps(turn[2], ensure_ascii=False)},
            }
            out.append(
                {"role": "assistant", "content": None, "tool_calls": [call], "timestamp": ts}
            )
        elif kind == "tool":
            out.append(
                {
                    "role": "tool",
                    "content": turn[2],
                    "tool_name": turn[1],
                    "tool_call_id": pending_call,
                    "timestamp": ts,
                }
            )
        else:
            out.append({"role": kind, "content": turn[1], "timestamp": ts})
    return out


def build_demo_store(path: str | Path) -> SessionStore:
    """Create a new store at ``path`` holding the demo sessions; returns the open store."""
    demo = load_demo()
    store = open_store(path, readonly=False, create=True)
    for session in demo.sessions:
        start = demo.epoch + session["day"] * 86400.0
        messages = _messages(session, start, demo.turn_gap)
        fields: dict[str, Any] = {"model": session["model"], "title": session["title"]}
        if session.get("parent"):
            fields["parent_session_id"] = session["parent"]
        if session["source"] == "subagent":
            fields["model_config"] = json.dumps({"_delegate_from": session["parent"]})
        store.add_session(session["id"], session["source"], started_at=start, **fields)
        store.add_messages([{"session_id": session["id"], **m} for m in messages])
        if session.get("end_reason"):
            store.end_session(session["id"], session["end_reason"])
    store.sync()
    return store


def _demo_searches(
    args: argparse.Namespace, store: SessionStore, searches: list[DemoSearch]
) -> list[dict[str, Any]]:
    """Each demo search run through the tool, with the command that reruns it: on the
    kept store (``--db``), none for a temporary one."""
    report = []
    session_search(store, query=searches[0].query, limit=3)  # untimed warm-up (lazy imports)
    for search in searches:
        query = search.query
        started = time.perf_counter()
        payload = session_search(store, query=query, limit=3, **search.bounds)
        elapsed = (time.perf_counter() - started) * 1000.0
        report.append(
            {
                "query": query,
                "shows": search.shows,
                "command": follow_up(args, search.words()),
                **search.bounds,
                "route": payload.get("route", "unknown"),
                "ms": round(elapsed, 2),
                "payload": payload,
            }
        )
    return report


def _print_demo_item(item: dict[str, Any], color: bool) -> None:
    payload = item["payload"]
    print()
    head = f"$ {item['command']}"
    print(f"{style(head, BOLD, color)}   # {item['shows']}")
    if not payload.get("success"):
        print(f"  error: {payload.get('error')}")
        return
    print(f"  route {item['route']}, {item['ms']:.1f} ms, {payload.get('count', 0)} session(s)")
    for res in payload.get("results", []):
        title = res.get("title") or "(untitled)"
        snippet = highlight(one_line(res.get("snippet"), 110), color)
        print(f"  - {title} [{res.get('source')}] {res.get('link')}")
        print(f"      {snippet}")
    if not payload.get("results"):
        # Without the extension the folding searches find nothing: the notes say why.
        for note in payload.get("query_notes") or ():
            print(f"  note: {note}")
        print(f"  {payload.get('message', 'no results')}")


def _extension_words(status: dict[str, Any]) -> str:
    """Whether the extension is loaded, and if not why (status' ``extension``)."""
    ext = status["extension"]
    if ext["loaded"]:
        return "loaded"
    why = (
        f"switched off by HERMES_CJK_FTS={cjk_switch_value()}" if ext["disabled"] else ext["error"]
    )
    return (
        f"NOT loaded ({why or 'unknown'}): CJK queries use LIKE, without width or variant "
        "folding, so the searches that show folding find nothing"
    )


def _exit_through_finally() -> None:
    """SIGTERM (``timeout``, ``kill``) and SIGHUP (a closed terminal) end the process
    without running a ``finally``, which left the temporary store in /tmp: they now
    exit as SystemExit, with the shell's status for the signal.  Only a signal no
    one handles yet (a host process keeps its own), and only in the main thread."""
    import signal
    import threading

    def leave(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    if threading.current_thread() is not threading.main_thread():
        return
    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None and signal.getsignal(number) is signal.SIG_DFL:
            signal.signal(number, leave)


@command("demo", help="build a small multilingual demo store and search it")
def cmd_demo(args: argparse.Namespace) -> int:
    db = args.db
    tmp: tempfile.TemporaryDirectory[str] | None = None
    if db:
        path = Path(db).expanduser()
        # os.path's exists is False where this user cannot look (a folder above it
        # closed to it); the open then names that, where Path.exists raised.
        if os.path.exists(path):
            raise CommandError(f"{path} already exists; pass a new --db PATH for the demo store")
    else:
        _exit_through_finally()
        tmp = tempfile.TemporaryDirectory(prefix="hermes-fts-demo-")
        path = Path(tmp.name) / "state.db"
    try:
        demo = load_demo()
        started = time.perf_counter()
        store = build_demo_store(path)
        build_ms = (time.perf_counter() - started) * 1000.0
        try:
            report = _demo_searches(args, store, demo.searches)
            cjk = bool(store.cjk_available)
            status = store.status()
        finally:
            store.close()
        sessions, messages = status["sessions"], status["messages"]
        if args.json:
            emit_json(
                {
                    "success": True,
                    "db": str(path) if db else None,
                    "sessions": sessions,
                    "messages": messages,
                    "cjk_extension": cjk,
                    "searches": report,
                }
            )
            return 0
        color = use_color()
        where = str(path) if db else "a temporary folder (pass --db PATH to keep it)"
        print(
            f"Demo store: {sessions} sessions, {messages} messages in {where} "
            f"(built in {build_ms:.0f} ms; cjk_unicode61 {_extension_words(status)})"
        )
        for item in report:
            _print_demo_item(item, color)
        return 0
    finally:
        if tmp is not None:
            tmp.cleanup()
