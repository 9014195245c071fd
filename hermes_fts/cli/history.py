"""``hermes-fts search|read|scroll|browse``: the session_search tool on a terminal.

A thin layer over :func:`hermes_fts.tool.session_search`: ``--json`` prints the
tool's payload verbatim; otherwise the payload is rendered as a table or a
transcript, with the search route and the time taken.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from ..content import render_tool_calls
from ..store import SessionStore, default_db_path, open_store
from ..tool import session_search
from ..tool.args import (
    DETAILS,
    LIMIT_MAX,
    LIMIT_MIN,
    LINK_PREFIX,
    ROLES,
    SCROLL_WINDOW_MAX,
    SCROLL_WINDOW_MIN,
    SORTS,
)
from .output import BOLD, DIM, LINE_CHARS, emit_json, highlight, one_line, style, use_color
from .registry import CommandError, bounded_int, command, role_list

# --------------------------------------------------------------------------- rendering


def _message_text(msg: dict[str, Any]) -> str:
    content = msg.get("content")
    if content:
        return str(content)
    calls = render_tool_calls(msg.get("tool_calls"))
    if calls:
        return "calls " + calls
    return "(no text)"


def _role_label(msg: dict[str, Any]) -> str:
    role = str(msg.get("role") or "?")
    if role == "tool" and msg.get("tool_name"):
        return f"tool:{msg['tool_name']}"
    return role


def _print_messages(
    messages: Sequence[dict[str, Any]], color: bool, out: TextIO, indent: str = "  "
) -> None:
    for msg in messages:
        marker = "\u25b6" if msg.get("anchor") else " "
        head = f"{indent}{marker} #{msg.get('id')} {_role_label(msg)}: "
        body = _message_text(msg)
        if msg.get("content_truncated"):
            body += f" [cut from {int(msg.get('original_content_chars') or 0):,} characters]"
        lines = body.splitlines() or [""]
        text = head + lines[0]
        for extra in lines[1:]:
            text += "\n" + indent + "    " + extra
        if msg.get("anchor"):
            text = style(text, BOLD, color)
        print(text, file=out)


def _clip(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    clipped = []
    for msg in messages:
        copy = dict(msg)
        copy["content"] = one_line(_message_text(msg), LINE_CHARS)
        clipped.append(copy)
    return clipped


def _json_or_error(args: argparse.Namespace, payload: dict[str, Any]) -> int | None:
    """Print ``--json`` output (the exit status) or raise the error; None: the caller prints."""
    if args.json:
        emit_json(payload)
        return 0 if payload.get("success") else 1
    if not payload.get("success"):
        raise CommandError(str(payload.get("error")), 1)
    return None


def _print_session_header(payload: dict[str, Any], elapsed: float, color: bool) -> None:
    meta = payload.get("session_meta") or {}
    title = meta.get("title") or "(untitled)"
    print(
        f"{style(title, BOLD, color)}  {meta.get('source')} · {meta.get('when')} · "
        f"{meta.get('model')}  ({elapsed:.1f} ms)"
    )
    line = f"{payload.get('link')}"
    if payload.get("profile"):
        line += f"  (found in profile {payload['profile']})"
    print(line)
    if payload.get("warning"):
        print(style(f"note: {payload['warning']}", DIM, color))
    _print_notes(payload, color, sys.stdout)


def _print_notes(payload: dict[str, Any], color: bool, out: TextIO) -> None:
    """The tool's ``query_notes`` (what it clamped or cut), one dim line each."""
    for note in payload.get("query_notes") or ():
        print(style(f"note: {note}", DIM, color), file=out)


# --------------------------------------------------------------------------- calling the tool


def _open_history_store(args: argparse.Namespace) -> SessionStore | None:
    """The store named by ``--db``, the default store if it exists, else None.

    ``None`` lets the tool report a missing store (or open a ``--profile``
    store read-only) itself.
    """
    if args.db:
        path = args.db.expanduser()
    else:
        if args.profile is not None:
            return None  # the tool opens the profile's store read-only
        path = default_db_path()
        if not path.exists():
            return None
    # Searching never writes: rows still pending for the CJK index are
    # answered by the exact LIKE fallback, on a read-only file or folder too.
    return open_store(path, readonly=True)


def _run(args: argparse.Namespace, **kwargs: Any) -> tuple[dict[str, Any], float]:
    """Call the tool once; returns (payload, milliseconds).  A search's payload
    names the route that answered it (``route``)."""
    store = _open_history_store(args)
    try:
        started = time.perf_counter()
        payload = session_search(store, profile=args.profile, **kwargs)
        elapsed = (time.perf_counter() - started) * 1000.0
    finally:
        if store is not None:
            store.close()
    return payload, elapsed


# Each subcommand takes only the options it uses; the ranges are the tool's.


def _profile_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--profile",
        default=None,
        help="read another profile's store ($HERMES_HOME/profiles/NAME), read-only",
    )


def _limit_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--limit",
        type=bounded_int(LIMIT_MIN, LIMIT_MAX),
        default=None,
        help=f"results to return ({LIMIT_MIN}-{LIMIT_MAX}, default 3)",
    )


def _session_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session", help="session id or link (@session:PROFILE/ID)")


# --------------------------------------------------------------------------- search


def _search_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("query", help='words to find; OR for alternatives, "quotes" for phrases')
    _profile_option(p)
    _limit_option(p)
    p.add_argument(
        "--sort", default=None, choices=SORTS, help="bias results by time instead of relevance"
    )
    p.add_argument(
        "--detail",
        default=None,
        choices=DETAILS,
        help="adaptive (default), full, or index (snippets only)",
    )
    p.add_argument(
        "--role",
        type=role_list(ROLES),
        default=None,
        help=f"comma-separated roles to search: {', '.join(ROLES)} (default user,assistant)",
    )
    p.add_argument("--after", default=None, help="only hits at/after (epoch seconds or ISO date)")
    p.add_argument("--before", default=None, help="only hits before (epoch seconds or ISO date)")
    p.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="SESSION",
        help="leave out a session id or link (repeatable)",
    )


@command("search", help="full-text search over past conversations", args=_search_args)
def cmd_search(args: argparse.Namespace) -> int:
    if not args.query.strip():
        raise CommandError(
            "search needs a QUERY (words to find); run `hermes-fts browse` to list recent sessions"
        )
    payload, elapsed = _run(
        args,
        query=args.query,
        limit=args.limit,
        sort=args.sort,
        detail=args.detail,
        role_filter=args.role,
        after=args.after,
        before=args.before,
        exclude_session_ids=args.exclude or None,
    )
    done = _json_or_error(args, payload)
    if done is not None:
        return done
    _print_search(payload, elapsed, use_color(), sys.stdout)
    return 0


def _print_search(payload: dict[str, Any], elapsed: float, color: bool, out: TextIO) -> None:
    count = payload.get("count", 0)
    noun = "session" if count == 1 else "sessions"
    print(
        f"Search {payload.get('query')!r}: {count} {noun}  "
        f"(route {payload.get('route')}, {elapsed:.1f} ms, detail {payload.get('detail')})",
        file=out,
    )
    note = payload.get("index_rebuild")
    if note:
        print(style(note["note"], DIM, color), file=out)
    _print_notes(payload, color, out)
    if not payload.get("results"):
        print(payload.get("message", "No matching sessions found."), file=out)
        return
    for number, res in enumerate(payload["results"], start=1):
        title = res.get("title") or "(untitled)"
        print(file=out)
        print(
            f"{number}. {style(title, BOLD, color)}  "
            f"{res.get('source')} · {res.get('when')} · {res.get('model')}",
            file=out,
        )
        print(
            f"   {res.get('link')}  match #{res.get('match_message_id')} "
            f"({res.get('matched_role')})",
            file=out,
        )
        snippet = one_line(res.get("snippet"), 200)
        print("   " + highlight(snippet, color), file=out)
        if res.get("detail") == "full":
            for key, label in (
                ("bookend_start", "opening:"),
                ("messages", "around the match:"),
                ("bookend_end", "closing:"),
            ):
                if res.get(key) or key == "messages":
                    print(style(f"   {label}", DIM, color), file=out)
                    _print_messages(_clip(res.get(key) or []), color, out, "     ")


# --------------------------------------------------------------------------- read / scroll


def _show_session(args: argparse.Namespace, **kwargs: Any) -> tuple[dict[str, Any], bool] | int:
    """Read or scroll one session and print its header; the exit status when that is all.

    Returns ``(payload, colour)`` for the caller to print the messages, or the
    exit status after ``--json`` output or an error.
    """
    payload, elapsed = _run(args, **kwargs)
    done = _json_or_error(args, payload)
    if done is not None:
        return done
    color = use_color()
    _print_session_header(payload, elapsed, color)
    return payload, color


def _read_args(p: argparse.ArgumentParser) -> None:
    _session_arg(p)
    _profile_option(p)


@command("read", help="show one session (first 20 + last 10 messages when long)", args=_read_args)
def cmd_read(args: argparse.Namespace) -> int:
    if not args.session.strip().removeprefix(LINK_PREFIX).strip():
        raise CommandError(
            "read needs a SESSION id or link (@session:PROFILE/ID); run "
            "`hermes-fts browse` to list recent sessions"
        )
    shown_session = _show_session(args, session_id=args.session)
    if isinstance(shown_session, int):
        return shown_session
    payload, color = shown_session
    print(payload.get("message") or f"{payload['message_count']} messages")
    shown = payload["messages"]
    if payload.get("truncated"):
        head, tail = shown[:20], shown[20:]
        _print_messages(head, color, sys.stdout)
        hidden = payload["message_count"] - len(shown)
        print(style(f"  … {hidden} messages not shown …", DIM, color))
        _print_messages(tail, color, sys.stdout)
    else:
        _print_messages(shown, color, sys.stdout)
    return 0


def _scroll_args(p: argparse.ArgumentParser) -> None:
    _session_arg(p)
    p.add_argument("message_id", help="message id to centre on")
    p.add_argument(
        "--window",
        type=bounded_int(SCROLL_WINDOW_MIN, SCROLL_WINDOW_MAX),
        default=None,
        help=f"messages on each side ({SCROLL_WINDOW_MIN}-{SCROLL_WINDOW_MAX}, default 5)",
    )
    _profile_option(p)


@command("scroll", help="show the messages around one message of a session", args=_scroll_args)
def cmd_scroll(args: argparse.Namespace) -> int:
    shown_session = _show_session(
        args, session_id=args.session, around_message_id=args.message_id, window=args.window
    )
    if isinstance(shown_session, int):
        return shown_session
    payload, color = shown_session
    messages = payload["messages"]
    if payload.get("messages_before", 0) < payload["window"]:
        print(style("  (start of session)", DIM, color))
    _print_messages(messages, color, sys.stdout)
    if payload.get("messages_after", 0) < payload["window"]:
        print(style("  (end of session)", DIM, color))
    elif messages:
        more = f"  more: hermes-fts scroll {payload['session_id']} {messages[-1]['id']}"
        print(style(more, DIM, color))
    return 0


# --------------------------------------------------------------------------- browse


def _browse_args(p: argparse.ArgumentParser) -> None:
    _profile_option(p)
    _limit_option(p)


@command("browse", help="list the most recently active sessions", args=_browse_args)
def cmd_browse(args: argparse.Namespace) -> int:
    payload, elapsed = _run(args, limit=args.limit)
    done = _json_or_error(args, payload)
    if done is not None:
        return done
    color = use_color()
    rows = payload["results"]
    print(f"{len(rows)} most recently active sessions ({elapsed:.1f} ms)")
    if not rows:
        return 0
    header = f"{'last active':<28} {'source':<9} {'msgs':>5}  title / preview"
    print(style(header, BOLD, color))
    for row in rows:
        label = row.get("title") or row.get("preview") or "(empty)"
        print(
            f"{str(row.get('last_active')):<28} {str(row.get('source')):<9} "
            f"{row.get('message_count', 0):>5}  {one_line(label, 60)}"
        )
        print(style(f"{'':<44}{row.get('link')}", DIM, color))
    return 0
