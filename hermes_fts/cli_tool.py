"""``hermes-fts search|read|scroll|browse|demo``: the session_search tool on a terminal.

A thin layer over :func:`hermes_fts.tool.session_search`: ``--json`` prints the
tool's payload verbatim; otherwise the payload is rendered as a table or a
transcript, with the search route and the time taken.  Matches (``>>> <<<``
in snippets) are coloured on a terminal and bracketed ``[ ]`` elsewhere or
when ``NO_COLOR`` is set.

``register(subparsers, parents)`` adds the subcommands to an argparse parser;
each handler is stored as ``_handler`` and returns an exit status.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Callable, TextIO

from . import tool
from .store import StoreError, default_db_path, open_store
from .tool import session_search

__all__ = [
    "StoreError",
    "cmd_browse",
    "cmd_demo",
    "cmd_read",
    "cmd_scroll",
    "cmd_search",
    "highlight",
    "register",
    "store_error_text",
    "use_color",
]

_MARK_OPEN = ">>>"
_MARK_CLOSE = "<<<"
_BOLD_MATCH = "\x1b[1;33m"
_DIM = "\x1b[2m"
_BOLD = "\x1b[1m"
_RESET = "\x1b[0m"
_LINE_CHARS = 160


# --------------------------------------------------------------------------- rendering helpers


def use_color(stream: TextIO | None = None) -> bool:
    """Colour only on a terminal and only when ``NO_COLOR`` is unset or empty."""
    stream = stream or sys.stdout
    if os.environ.get("NO_COLOR", ""):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def highlight(text: str, color: bool) -> str:
    """Turn the ``>>> <<<`` match markers into colour or plain brackets."""
    if color:
        return text.replace(_MARK_OPEN, _BOLD_MATCH).replace(_MARK_CLOSE, _RESET)
    return text.replace(_MARK_OPEN, "[").replace(_MARK_CLOSE, "]")


def _style(text: str, code: str, color: bool) -> str:
    return f"{code}{text}{_RESET}" if color else text


def _one_line(text: Any, width: int = _LINE_CHARS) -> str:
    if text is None:
        return ""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "\u2026"


def _message_text(msg: dict[str, Any]) -> str:
    content = msg.get("content")
    if content:
        return str(content)
    calls = msg.get("tool_calls")
    if isinstance(calls, list):
        names = []
        for call in calls:
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict) and fn.get("name"):
                names.append(str(fn["name"]))
        if names:
            return "(calls " + ", ".join(names) + ")"
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
            body += f" [{msg.get('original_content_chars')} chars, truncated]"
        lines = body.splitlines() or [""]
        text = head + lines[0]
        for extra in lines[1:]:
            text += "\n" + indent + "    " + extra
        if msg.get("anchor"):
            text = _style(text, _BOLD, color)
        print(text, file=out)


def _print_error(payload: dict[str, Any]) -> int:
    print(f"Error: {payload.get('error')}", file=sys.stderr)
    return 1


def emit_json(payload: Any) -> None:
    """The payload verbatim, for scripts (``--json``)."""
    print(json.dumps(payload, ensure_ascii=False, indent=2, default=str))


# --------------------------------------------------------------------------- store handling

def store_error_text(exc: StoreError) -> str:
    """The error line for a store that cannot be opened; hints at --db only for a wrong path."""
    return f"{exc}; pass the Hermes state.db as --db PATH" if exc.wrong_path else str(exc)


def _open_store(args: argparse.Namespace) -> Any:
    """The store named by ``--db``, the default store if it exists, else None.

    ``None`` lets the tool report a missing store as an error payload.
    """
    db = getattr(args, "db", None)
    if db:
        path = Path(db).expanduser()
    else:
        if getattr(args, "profile", None) is not None:
            return None  # the tool opens the profile's store read-only
        path = default_db_path()
        if not path.exists():
            return None
    return open_store(path, readonly=False)


def _route(store: Any, args: argparse.Namespace, query: str) -> str:
    """The search route (fts5, fts_cjk, trigram, like_scan, ...) or ``unknown``."""
    target = store
    opened = None
    try:
        if getattr(args, "profile", None) is not None:
            try:
                path = tool.profile_db_path(args.profile)
            except Exception:  # noqa: BLE001 - the tool reports a bad profile itself
                return "unknown"
            opened = target = open_store(path, readonly=True)
        describe = getattr(target, "describe_search_path", None)
        if not callable(describe):
            return "unknown"
        return str(describe(query))
    except Exception:  # noqa: BLE001 - a label only
        return "unknown"
    finally:
        if opened is not None:
            opened.close()


def _run(
    args: argparse.Namespace, route_query: str | None = None, **kwargs: Any
) -> tuple[dict[str, Any], float, str]:
    """Call the tool once; returns (payload, milliseconds, route).

    The route is asked first (it also loads the search code), so the time
    shown is the search itself, not module imports.
    """
    store = _open_store(args)
    try:
        route = ""
        if route_query is not None and not getattr(args, "json", False):
            route = _route(store, args, route_query)
        started = time.perf_counter()
        payload = session_search(
            store,
            limit=getattr(args, "limit", None),
            sort=getattr(args, "sort", None),
            profile=getattr(args, "profile", None),
            **kwargs,
        )
        elapsed = (time.perf_counter() - started) * 1000.0
    finally:
        if store is not None:
            store.close()
    return payload, elapsed, route


# --------------------------------------------------------------------------- commands


def cmd_search(args: argparse.Namespace) -> int:
    if not args.query.strip():
        print(
            "Error: search needs a QUERY (words to find); run `hermes-fts browse` to list "
            "recent sessions",
            file=sys.stderr,
        )
        return 2
    payload, elapsed, route = _run(
        args,
        route_query=args.query,
        query=args.query,
        detail=args.detail,
        role_filter=args.role,
        after=args.after,
        before=args.before,
        exclude_session_ids=args.exclude or None,
    )
    done = _json_or_error(args, payload)
    if done is not None:
        return done
    _print_search(payload, route, elapsed, use_color(), sys.stdout)
    return 0


def _print_search(
    payload: dict[str, Any], route: str, elapsed: float, color: bool, out: TextIO
) -> None:
    count = payload.get("count", 0)
    noun = "session" if count == 1 else "sessions"
    print(
        f"Search {payload.get('query')!r}: {count} {noun}  "
        f"(route {route}, {elapsed:.1f} ms, detail {payload.get('detail')})",
        file=out,
    )
    note = payload.get("index_rebuild")
    if note:
        print(_style(note["note"], _DIM, color), file=out)
    if not payload.get("results"):
        print(payload.get("message", "No matching sessions found."), file=out)
        return
    for number, res in enumerate(payload["results"], start=1):
        title = res.get("title") or "(untitled)"
        print(file=out)
        print(
            f"{number}. {_style(title, _BOLD, color)}  "
            f"{res.get('source')} · {res.get('when')} · {res.get('model')}",
            file=out,
        )
        print(
            f"   {res.get('link')}  match #{res.get('match_message_id')} "
            f"({res.get('matched_role')})",
            file=out,
        )
        snippet = _one_line(res.get("snippet"), 200)
        print("   " + highlight(snippet, color), file=out)
        if res.get("detail") == "full":
            if res.get("bookend_start"):
                print(_style("   opening:", _DIM, color), file=out)
                _print_messages(_clip(res["bookend_start"]), color, out, "     ")
            print(_style("   around the match:", _DIM, color), file=out)
            _print_messages(_clip(res.get("messages") or []), color, out, "     ")
            if res.get("bookend_end"):
                print(_style("   closing:", _DIM, color), file=out)
                _print_messages(_clip(res["bookend_end"]), color, out, "     ")


def _clip(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    clipped = []
    for msg in messages:
        copy = dict(msg)
        copy["content"] = _one_line(msg.get("content"), _LINE_CHARS) or None
        clipped.append(copy)
    return clipped


def _json_or_error(args: argparse.Namespace, payload: dict[str, Any]) -> int | None:
    """Print ``--json`` output or the error; None when the caller prints the result."""
    if args.json:
        emit_json(payload)
        return 0 if payload.get("success") else 1
    if not payload.get("success"):
        return _print_error(payload)
    return None


def cmd_read(args: argparse.Namespace) -> int:
    if not args.session.strip().removeprefix("@session:").strip():
        print(
            "Error: read needs a SESSION id or link (@session:PROFILE/ID); run "
            "`hermes-fts browse` to list recent sessions",
            file=sys.stderr,
        )
        return 2
    payload, elapsed, _route_unused = _run(args, session_id=args.session)
    done = _json_or_error(args, payload)
    if done is not None:
        return done
    color = use_color()
    _print_session_header(payload, elapsed, color)
    print(payload.get("message") or f"{payload['message_count']} messages")
    shown = payload["messages"]
    if payload.get("truncated"):
        head, tail = shown[:20], shown[20:]
        _print_messages(head, color, sys.stdout)
        print(
            _style(f"  … {payload['message_count'] - len(shown)} messages not shown …", _DIM, color)
        )
        _print_messages(tail, color, sys.stdout)
    else:
        _print_messages(shown, color, sys.stdout)
    return 0


def _print_session_header(payload: dict[str, Any], elapsed: float, color: bool) -> None:
    meta = payload.get("session_meta") or {}
    title = meta.get("title") or "(untitled)"
    print(
        f"{_style(title, _BOLD, color)}  {meta.get('source')} · {meta.get('when')} · "
        f"{meta.get('model')}  ({elapsed:.1f} ms)"
    )
    line = f"{payload.get('link')}"
    if payload.get("profile"):
        line += f"  (found in profile {payload['profile']})"
    print(line)
    if payload.get("warning"):
        print(_style(f"note: {payload['warning']}", _DIM, color))


def cmd_scroll(args: argparse.Namespace) -> int:
    payload, elapsed, _route_unused = _run(
        args, session_id=args.session, around_message_id=args.message_id, window=args.window
    )
    done = _json_or_error(args, payload)
    if done is not None:
        return done
    color = use_color()
    _print_session_header(payload, elapsed, color)
    messages = payload["messages"]
    if payload.get("messages_before", 0) < payload["window"]:
        print(_style("  (start of session)", _DIM, color))
    _print_messages(messages, color, sys.stdout)
    if payload.get("messages_after", 0) < payload["window"]:
        print(_style("  (end of session)", _DIM, color))
    elif messages:
        print(
            _style(
                f"  more: hermes-fts scroll {payload['session_id']} {messages[-1]['id']}",
                _DIM,
                color,
            )
        )
    return 0


def cmd_browse(args: argparse.Namespace) -> int:
    payload, elapsed, _route_unused = _run(args)
    done = _json_or_error(args, payload)
    if done is not None:
        return done
    color = use_color()
    rows = payload["results"]
    print(f"{len(rows)} most recently active sessions ({elapsed:.1f} ms)")
    if not rows:
        return 0
    header = f"{'last active':<28} {'source':<9} {'msgs':>5}  title / preview"
    print(_style(header, _BOLD, color))
    for row in rows:
        label = row.get("title") or row.get("preview") or "(empty)"
        print(
            f"{str(row.get('last_active')):<28} {str(row.get('source')):<9} "
            f"{row.get('message_count', 0):>5}  {_one_line(label, 60)}"
        )
        print(_style(f"{'':<44}{row.get('link')}", _DIM, color))
    return 0


# --------------------------------------------------------------------------- demo


def cmd_demo(args: argparse.Namespace) -> int:
    from .demo_data import DEMO_SEARCHES, build_demo_store

    db = getattr(args, "db", None)
    tmp: tempfile.TemporaryDirectory[str] | None = None
    if db:
        path = Path(db).expanduser()
        if path.exists():
            print(
                f"Error: {path} already exists; pass a new --db PATH for the demo store",
                file=sys.stderr,
            )
            return 2
    else:
        tmp = tempfile.TemporaryDirectory(prefix="hermes-fts-demo-")
        path = Path(tmp.name) / "state.db"
    try:
        started = time.perf_counter()
        store = build_demo_store(path)
        build_ms = (time.perf_counter() - started) * 1000.0
        try:
            report = _demo_searches(store, DEMO_SEARCHES)
            counts = store.status()
            messages, sessions = counts["messages"], counts["sessions"]
            cjk = store.cjk_available
        finally:
            store.close()
        if args.json:
            emit_json(
                {
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
            f"(built in {build_ms:.0f} ms; cjk_unicode61 "
            f"{'loaded' if cjk else 'NOT loaded: CJK queries use LIKE'})"
        )
        for item in report:
            _print_demo_item(item, color)
        return 0
    finally:
        if tmp is not None:
            tmp.cleanup()


def _demo_searches(store: Any, searches: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
    report = []
    session_search(store, query=searches[0][0], limit=3)  # untimed warm-up (lazy imports)
    for query, what in searches:
        describe = getattr(store, "describe_search_path", None)
        try:
            route = str(describe(query)) if callable(describe) else "unknown"
        except Exception:  # noqa: BLE001 - a label only
            route = "unknown"
        started = time.perf_counter()
        payload = session_search(store, query=query, limit=3)
        elapsed = (time.perf_counter() - started) * 1000.0
        report.append(
            {
                "query": query,
                "shows": what,
                "route": route,
                "ms": round(elapsed, 2),
                "payload": payload,
            }
        )
    return report


def _print_demo_item(item: dict[str, Any], color: bool) -> None:
    payload = item["payload"]
    print()
    head = f"$ hermes-fts search {item['query']!r}"
    print(f"{_style(head, _BOLD, color)}   # {item['shows']}")
    if not payload.get("success"):
        print(f"  error: {payload.get('error')}")
        return
    print(f"  route {item['route']}, {item['ms']:.1f} ms, {payload.get('count', 0)} session(s)")
    for res in payload.get("results", []):
        title = res.get("title") or "(untitled)"
        snippet = highlight(_one_line(res.get("snippet"), 110), color)
        print(f"  - {title} [{res.get('source')}] {res.get('link')}")
        print(f"      {snippet}")
    if not payload.get("results"):
        print(f"  {payload.get('message', 'no results')}")


# --------------------------------------------------------------------------- registration


def _common(parser: argparse.ArgumentParser, with_base: bool, limit: bool = True) -> None:
    if with_base:
        parser.add_argument(
            "--db", default=None, help="session store (default: $HERMES_HOME/state.db)"
        )
        parser.add_argument(
            "--json", action="store_true", help="print the tool's JSON payload verbatim"
        )
    parser.add_argument(
        "--profile",
        default=None,
        help="read another profile's store ($HERMES_HOME/profiles/NAME), read-only",
    )
    if limit:
        parser.add_argument("--limit", default=None, help="results to return (1-10, default 3)")
    parser.add_argument(
        "--sort",
        default=None,
        choices=("newest", "oldest"),
        help="bias results by time instead of relevance",
    )


def register(subparsers: Any, parents: Sequence[argparse.ArgumentParser] | None = None) -> None:
    """Add search/read/scroll/browse/demo to an argparse subparsers object.

    ``parents`` may already provide ``--db`` and ``--json`` (as in
    ``hermes_fts.cli``); without it they are added here.
    """
    base = list(parents or [])
    with_base = not base

    def add(name: str, help_text: str, handler: Callable[[argparse.Namespace], int]) -> Any:
        parser = subparsers.add_parser(name, help=help_text, description=help_text, parents=base)
        parser.set_defaults(_handler=handler)
        return parser

    p = add("search", "full-text search over past conversations", cmd_search)
    p.add_argument("query", help='words to find; OR for alternatives, "quotes" for phrases')
    _common(p, with_base)
    p.add_argument(
        "--detail",
        default=None,
        choices=("adaptive", "full", "index"),
        help="adaptive (default), full, or index (snippets only)",
    )
    p.add_argument(
        "--role", default=None, help="comma-separated roles to search (default user,assistant)"
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

    p = add("read", "show one session (first 20 + last 10 messages when long)", cmd_read)
    p.add_argument("session", help="session id or link (@session:PROFILE/ID)")
    _common(p, with_base)

    p = add("scroll", "show the messages around one message of a session", cmd_scroll)
    p.add_argument("session", help="session id or link (@session:PROFILE/ID)")
    p.add_argument("message_id", help="message id to centre on")
    p.add_argument("--window", default=None, help="messages on each side (1-20, default 5)")
    _common(p, with_base)

    p = add("browse", "list the most recently active sessions", cmd_browse)
    _common(p, with_base)

    p = add("demo", "build a small multilingual demo store and search it", cmd_demo)
    if with_base:
        p.add_argument("--db", default=None, help="where to build the demo store (new file)")
        p.add_argument("--json", action="store_true", help="machine-readable output")


def main(argv: Sequence[str] | None = None) -> int:
    """Run one of these subcommands on its own (``python -m hermes_fts.cli_tool``)."""
    parser = argparse.ArgumentParser(prog="hermes-fts")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    register(sub)
    args = parser.parse_args(list(argv) if argv is not None else None)
    try:
        return int(args._handler(args))
    except StoreError as exc:
        print(f"Error: {store_error_text(exc)}", file=sys.stderr)
        return 2
    except FileNotFoundError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
