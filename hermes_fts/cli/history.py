"""``hermes-fts search|read|scroll|browse``: the session_search tool on a terminal.

A thin layer over the tool (:func:`hermes_fts.tool.run_call`) with the command
line's own defaults: a search covers every role, listings page (``--limit`` up to
``LIMIT_MAX``, ``--offset``, the JSON's ``next_offset``) and ``--full`` shows
messages whole.  ``--json`` prints the tool's payload, an empty search's message
in the command line's words; otherwise a table or a transcript, with the route
and the time taken (docs/USAGE.md, "The command line": the tool's own defaults).
"""

from __future__ import annotations

import argparse
import contextlib
import shlex
import sys
import time
from typing import Any, Callable, TextIO

from .._display import columns, fit_columns
from .._params import as_int, digits_hint
from .._store_problems import file_kind
from ..store import SessionStore, default_db_path, failure_cause, open_store
from ..tool import Call, nothing_found, run_call
from ..tool.args import (
    DETAILS,
    LINK_PREFIX,
    ROLES,
    SCROLL_WINDOW_MAX,
    SCROLL_WINDOW_MIN,
    SORTS,
    split_session_ref,
    strip_link,
)
from ..tool.errors import BadValue, NoStore, ToolError
from .messages import MESSAGE_LINES, clip, print_messages
from .output import (
    BOLD,
    DIM,
    LINE_CHARS,
    SEARCH_MARKS,
    JsonList,
    emit_json,
    marked_line,
    one_line,
    pad,
    printable,
    style,
    use_color,
)
from .progress import ProgressBar, scan_note, waiting
from .registry import (
    CommandError,
    bounded_int,
    carry_notes,
    carry_store,
    command,
    follow_up,
    profile_option,
    profile_store,
    role_list,
)

LIMIT_MAX = 100  # results a page may hold on the command line (the tool's cap is 10)
SEARCH_LIMIT = 10
BROWSE_LIMIT = 20
OFFSET_MAX = 100_000
READ_PROGRESS_MIN = 20_000  # messages from which `read --full` shows its progress

# --------------------------------------------------------------------------- rendering


def _print_session_header(
    args: argparse.Namespace, payload: dict[str, Any], elapsed: float, color: bool
) -> None:
    meta = payload.get("session_meta") or {}
    title = one_line(meta.get("title") or "(untitled)")
    print(f"{style(title, BOLD, color)}  {_origin(meta)}  ({elapsed:.1f} ms)")
    line = one_line(payload.get("link"))
    if payload.get("profile"):
        line += f"  (found in profile {payload['profile']})"
    print(line)
    if payload.get("warning"):
        print(style(f"note: {payload['warning']}", DIM, color))
    _print_notes(args, payload, color, sys.stdout)


def _origin(meta: dict[str, Any]) -> str:
    """``source · when · model`` of a session, each on one line and without the
    controls stored text may hold (a model name with an escape sequence, say)."""
    return " · ".join(one_line(meta.get(key)) for key in ("source", "when", "model"))


def _print_notes(
    args: argparse.Namespace, payload: dict[str, Any], color: bool, out: TextIO
) -> None:
    """The tool's ``query_notes`` (what it clamped or cut), one dim line each."""
    for note in payload.get("query_notes") or ():
        print(style(f"note: {carry_store(args, note)}", DIM, color), file=out)


# --------------------------------------------------------------------------- calling the tool


def _open_history_store(args: argparse.Namespace, session: str | None) -> SessionStore | None:
    """The store ``--db`` names, else the default store (``StoreError`` when missing, as
    for every subcommand); ``None`` lets the tool open a ``--profile`` store read-only,
    or look a session up in the profiles when there is no default store."""
    if args.db:
        path = args.db.expanduser()
    else:
        if args.profile is not None:
            return None  # the tool opens the profile's store read-only
        path = default_db_path()
        # Only when nothing is there: a store this user cannot reach is named by the open.
        if session is not None and file_kind(path)[0] == "missing":
            return None
    # Searching never writes: rows still pending for the CJK index are
    # answered by the exact LIKE fallback, on a read-only file or folder too.
    return open_store(path, readonly=True)


def _run(
    args: argparse.Namespace, session: str | None = None, **fields: Any
) -> tuple[dict[str, Any], float]:
    """Call the tool once with the command line's caps; returns (payload, milliseconds).

    Raises ``CommandError`` worded for a person: status 2 when it could not start
    (no store, a --profile store that cannot be opened, a value such as --after
    that is no time), as for every subcommand; else 1.
    """
    if args.db and args.profile is not None:
        # The profile's store would answer and the --db store be opened for nothing.
        raise CommandError(
            f"--profile {args.profile} reads {profile_store(args.profile)} "
            f"and --db names another store ({args.db}): pass one of them"
        )
    try:
        call = Call.parse(session, args.profile, None, limit_max=LIMIT_MAX, **fields)
    except ToolError as exc:  # an argument the command line let through (bytes not UTF-8)
        raise CommandError(exc.person, 1) from exc
    # A profile/id reference reads its profile's store; --db or another --profile too?
    named = split_session_ref(session, None)[1] if call.qualified else None
    if named is not None and (args.db or named != call.profile):
        flag, other = ("--db", args.db) if args.db else ("--profile", profile_store(call.profile))
        raise CommandError(
            f"{session} reads {profile_store(named)} and {flag} names another store ({other})"
            f": pass the session id alone with {flag}, or drop {flag}"
        )
    store = _open_history_store(args, session)
    try:
        started = time.perf_counter()
        note = scan_note(store) if store is not None and "query" in fields else None
        note = carry_store(args, note) if note else None
        with waiting(note, args.json) if note else contextlib.nullcontext():
            payload = run_call(store, call)
        elapsed = (time.perf_counter() - started) * 1000.0
    except ToolError as exc:
        raise CommandError(exc.person, 2 if isinstance(exc, (NoStore, BadValue)) else 1) from exc
    except OSError:  # writing a `read --full` as it is read (a closed pipe, a full disk)
        raise
    except Exception as exc:  # noqa: BLE001 - an error line, as the tool answers one
        cause = failure_cause(exc)
        if cause is not None:  # the store's state (locked, damaged), not the arguments
            raise CommandError(f"cannot read the session store: {cause}", 1) from exc
        raise CommandError(f"{args.command} failed: {exc}", 1) from exc
    finally:
        if store is not None:
            store.close()
    return payload, elapsed


# Each subcommand takes only the options it uses.


def _page_options(parser: argparse.ArgumentParser, default: int) -> None:
    parser.add_argument(
        "--limit",
        type=bounded_int(1, LIMIT_MAX),
        default=default,
        help=f"results on a page (1-{LIMIT_MAX}, default {default})",
    )
    parser.add_argument(
        "--offset",
        type=bounded_int(0, OFFSET_MAX),
        default=0,
        help="results to skip: the next page starts at the offset printed (--json: next_offset)",
    )


def _full_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--full", action="store_true", help="show every message whole (no cut, no line limit)"
    )


def _session_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session", help="session id or link (@session:PROFILE/ID)")


def _message_id(text: str) -> int:
    try:
        return as_int(text.strip(), "message id")
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(
            f"must be a message id such as 42{digits_hint(text)} (got {text!r})"
        ) from None


def _more(payload: dict[str, Any], color: bool, out: TextIO) -> None:
    """Where the next page starts, when there is one."""
    if payload.get("next_offset") is not None:
        line = f"next page: the same command with --offset {payload['next_offset']}"
        print(style(line, DIM, color), file=out)


# --------------------------------------------------------------------------- search


def _time_text(text: str) -> str:
    """An argparse ``type``: ``--after``/``--before`` as given, read by the tool.  A blank
    one (``--after "$SINCE"`` with SINCE unset), which the tool reads as no bound, is
    refused: the search would silently cover every date."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            "the time is empty; give epoch seconds, an ISO date such as 2026-03-15, "
            "or a time back from now such as 7d, or leave the option out"
        )
    return text


def _excluded(text: str) -> str:
    """``--exclude``'s session; a blank one (SID unset) would leave nothing out."""
    if not text.strip().removeprefix(LINK_PREFIX).strip():
        raise argparse.ArgumentTypeError("the session is empty; give an id or leave it out")
    return text


def _search_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "query",
        nargs="+",  # `hermes-fts search what did we decide` is one query, quoted or not
        help='words to find; OR for alternatives, "quotes" for phrases',
    )
    profile_option(p)
    _page_options(p, SEARCH_LIMIT)
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
        help=f"comma-separated roles to search: {', '.join(ROLES)} (default: every role)",
    )
    p.add_argument(
        "--after",
        type=_time_text,
        default=None,
        help="only hits at/after (epoch seconds, ISO date, or 7d, 24h)",
    )
    p.add_argument(
        "--before",
        type=_time_text,
        default=None,
        help="only hits before (epoch seconds, ISO date, or 7d, 24h)",
    )
    p.add_argument(
        "--exclude",
        action="append",
        type=_excluded,
        default=[],
        metavar="SESSION",
        help="leave out a session id or link (repeatable)",
    )


@command("search", args=_search_args)
def cmd_search(args: argparse.Namespace) -> int:
    args.query = " ".join(args.query)
    if not args.query.strip():
        raise CommandError(
            "search needs a QUERY (words to find); run `hermes-fts browse` to list recent sessions"
        )
    payload, elapsed = _run(
        args,
        query=args.query,
        limit=args.limit,
        offset=args.offset,
        sort=args.sort,
        detail=args.detail,
        # Every row, whole: tool output is searched too unless --role narrows it.
        role_filter=args.role or ",".join(ROLES),
        after=args.after,
        before=args.before,
        exclude_session_ids=args.exclude or None,
        full=True,  # a person's page of results, not cut to the model's payload budget
        marks=None if args.json else SEARCH_MARKS,  # --json: the tool's >>> <<<
    )
    if args.json:  # an empty answer's message, in the command line's words
        if payload.get("roles_with_matches") or payload.get("excluded_hold_matches"):
            payload = {**payload, "message": " ".join(_nothing_found_lines(payload, args))}
        emit_json(carry_notes(args, payload))
        return 0
    _print_search(payload, elapsed, args, use_color(), sys.stdout)
    return 0


def _nothing_found_lines(payload: dict[str, Any], args: argparse.Namespace) -> list[str]:
    """An empty answer's message with --role and --exclude: the tool's names the
    model's role_filter and exclude_session_ids."""
    held, excluded = payload.get("roles_with_matches"), payload.get("excluded_hold_matches")
    timed = args.after is not None or args.before is not None
    lines = [nothing_found(timed) if held or excluded else payload.get("message", "")]
    lines += ["The sessions --exclude leaves out hold matches."] if excluded else []
    if args.role:
        left_out = [role for role in ROLES if role not in args.role.split(",")]
        lines.append(f"Searched {args.role} messages only; {', '.join(left_out)} left out.")
    if held:
        wider, roles = ",".join(dict.fromkeys([*args.role.split(","), *held])), ", ".join(held)
        lines.append(f"{roles.capitalize()} messages hold matches: add them with --role {wider}.")
    return lines


def _print_search(
    payload: dict[str, Any], elapsed: float, args: argparse.Namespace, color: bool, out: TextIO
) -> None:
    count = payload.get("count", 0)
    noun = "session" if count == 1 else "sessions"
    print(
        # A pasted page of text is cut here too; a note says what was searched.
        f"Search {one_line(payload.get('query'), LINE_CHARS)!r}: {count} {noun}  "
        f"(route {payload.get('route')}, {elapsed:.1f} ms, detail {payload.get('detail')})",
        file=out,
    )
    note = payload.get("index_rebuild")
    if note:  # `hermes-fts sync` / `optimize-storage`: of the store searched
        print(style(carry_store(args, note["note"]), DIM, color), file=out)
    _print_notes(args, payload, color, out)
    if not payload.get("results"):
        print("\n".join(_nothing_found_lines(payload, args)), file=out)
        return
    for number, res in enumerate(payload["results"], start=args.offset + 1):
        _print_result(number, res, color, out)
    _more(payload, color, out)


def _print_result(number: int, res: dict[str, Any], color: bool, out: TextIO) -> None:
    title = one_line(res.get("title") or "(untitled)")
    print(file=out)
    print(f"{number}. {style(title, BOLD, color)}  {_origin(res)}", file=out)
    match = f"match #{res.get('match_message_id')} ({one_line(res.get('matched_role'))})"
    print(f"   {one_line(res.get('link'))}  {match}", file=out)
    print("   " + marked_line(res.get("snippet"), 200, color), file=out)
    if res.get("detail") == "full":
        for key, label in (
            ("bookend_start", "opening:"),
            ("messages", "around the match:"),
            ("bookend_end", "closing:"),
        ):
            if res.get(key) or key == "messages":
                print(style(f"   {label}", DIM, color), file=out)
                print_messages(clip(res.get(key) or []), color, out, "     ")


# --------------------------------------------------------------------------- read / scroll


def _show_session(args: argparse.Namespace, session: str) -> tuple[dict[str, Any], bool] | None:
    """Read one session (not ``--full``) and print its header; None after ``--json``
    output.  Returns ``(payload, colour)`` for the caller to print the messages."""
    payload, elapsed = _run(args, session)
    if args.json:
        emit_json(carry_notes(args, payload))
        return None
    color = use_color()
    _print_session_header(args, payload, elapsed, color)
    return payload, color


def _read_full(args: argparse.Namespace) -> int:
    """``read --full``: each message printed (``--json``: written) as it is read, with
    a long session's progress on stderr, where stdout is no terminal its lines scroll."""
    isatty = getattr(sys.stdout, "isatty", None)
    shows = args.json or not (isatty and isatty())
    bar = ProgressBar(json_lines=args.json) if shows else None
    started = time.perf_counter()
    document = JsonList() if args.json else None
    color = use_color()

    def progress(done: int, total: int) -> None:
        if bar is not None and total >= READ_PROGRESS_MIN:
            bar({"phase": "read", "indexed": done, "total": total, "percent": 100 * done // total})

    def sink(frame: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
        if document is not None:
            document.begin(frame, "messages")
            return document.item
        _print_session_header(args, frame, (time.perf_counter() - started) * 1000.0, color)
        print(f"{frame['message_count']} messages")
        return lambda message: print_messages([message], color, sys.stdout)

    try:
        payload, _ = _run(args, args.session, full=True, progress=progress, sink=sink)
        if document is not None:
            document.end({k: v for k, v in payload.items() if k not in document.head})
    finally:
        if bar is not None:
            bar.close()
    return 0


def _session_ref(args: argparse.Namespace, payload: dict[str, Any]) -> str:
    """The session shown, as the command line names it again: ``PROFILE/ID`` when the
    profile came from the reference or the lookup, not from ``--profile``; quoted for
    the shell (an id with a space is one word), without the escape sequences a stored
    id may hold (``printable``: the hint is printed to a terminal)."""
    sid = str(payload["session_id"])
    ref = strip_link(args.session)
    profile = payload.get("profile") or (ref.split("/", 1)[0] if "/" in ref else None)
    shown = f"{profile}/{sid}" if profile and args.profile is None else sid
    return shlex.quote(printable(shown))


def _read_args(p: argparse.ArgumentParser) -> None:
    _session_arg(p)
    profile_option(p)
    _full_option(p)


@command("read", args=_read_args)
def cmd_read(args: argparse.Namespace) -> int:
    if not args.session.strip().removeprefix(LINK_PREFIX).strip():
        raise CommandError(
            "read needs a SESSION id or link (@session:PROFILE/ID); run "
            "`hermes-fts browse` to list recent sessions"
        )
    if args.full:
        return _read_full(args)
    shown_session = _show_session(args, args.session)
    if shown_session is None:
        return 0
    payload, color = shown_session
    shown = payload["messages"]
    # The payload budget leaves out the last messages first: the tail can be short or gone.
    head, tail = shown[:20], shown[20:]
    if payload.get("truncated"):
        # The tool's message tells the model to pass around_message_id: a person scrolls.
        scroll = follow_up(args, f"scroll {_session_ref(args, payload)} ID")
        last = f" and the last {len(tail)}" if tail else ""
        print(
            f"Session has {payload['message_count']:,} messages; showing the first "
            f"{len(head)}{last}. `{scroll}` shows the messages around any id "
            "shown here; --full shows them all."
        )
    else:
        print(payload.get("message") or f"{payload['message_count']} messages")
    if payload.get("truncated"):
        print_messages(head, color, sys.stdout, max_lines=MESSAGE_LINES)
        hidden = payload["message_count"] - len(shown)
        print(style(f"  … {hidden} messages not shown (--full shows them) …", DIM, color))
        print_messages(tail, color, sys.stdout, max_lines=MESSAGE_LINES)
    else:
        print_messages(shown, color, sys.stdout, max_lines=MESSAGE_LINES)
    return 0


def _scroll_args(p: argparse.ArgumentParser) -> None:
    _session_arg(p)
    p.add_argument("message_id", type=_message_id, help="message id to centre on")
    p.add_argument(
        "--window",
        type=bounded_int(SCROLL_WINDOW_MIN, SCROLL_WINDOW_MAX),
        default=None,
        help=f"messages on each side ({SCROLL_WINDOW_MIN}-{SCROLL_WINDOW_MAX}, default 5)",
    )
    side = p.add_mutually_exclusive_group()
    side.add_argument(
        "--after",
        action="store_true",
        help="show the page that starts after MESSAGE_ID (the pages `more:` names)",
    )
    side.add_argument(
        "--before",
        action="store_true",
        help="show the page that ends before MESSAGE_ID (the pages `earlier:` names)",
    )
    profile_option(p)
    _full_option(p)


@command("scroll", args=_scroll_args)
def cmd_scroll(args: argparse.Namespace) -> int:
    beyond = "after" if args.after else "before" if args.before else None
    payload, elapsed = _run(
        args,
        args.session,
        full=args.full,
        around_message_id=args.message_id,
        window=args.window,
        beyond=beyond,
    )
    if args.json:
        emit_json(carry_notes(args, payload))
        return 0
    color = use_color()
    _print_session_header(args, payload, elapsed, color)
    messages = payload["messages"]
    if not messages:  # --after the last message, or --before the first
        print(style(f"  ({'end' if args.after else 'start'} of session)", DIM, color))
        return 0
    # The pages either side, with this one's --window and --full.
    same = (f" --window {args.window}" if args.window else "") + (" --full" if args.full else "")
    ref = _session_ref(args, payload)
    if payload["at_start"]:
        print(style("  (start of session)", DIM, color))
    else:
        words = f"scroll {ref} {messages[0]['id']} --before{same}"
        print(style(f"  earlier: {follow_up(args, words)}", DIM, color))
    print_messages(messages, color, sys.stdout, max_lines=None if args.full else MESSAGE_LINES)
    if payload["at_end"]:
        print(style("  (end of session)", DIM, color))
    else:
        words = f"scroll {ref} {messages[-1]['id']} --after{same}"
        print(style(f"  more: {follow_up(args, words)}", DIM, color))
    return 0


# --------------------------------------------------------------------------- browse


def _browse_args(p: argparse.ArgumentParser) -> None:
    profile_option(p)
    _page_options(p, BROWSE_LIMIT)


@command("browse", args=_browse_args)
def cmd_browse(args: argparse.Namespace) -> int:
    payload, elapsed = _run(args, limit=args.limit, offset=args.offset)
    if args.json:
        emit_json(carry_notes(args, payload))
        return 0
    color = use_color()
    rows = payload["results"]
    if not rows:  # no sessions at all, or a page past the last: the tool says which
        print(f"{payload['message']} ({elapsed:.1f} ms)")
        return 0
    first = args.offset + 1
    span = f"{first}-{args.offset + len(rows)} of the" if args.offset else f"{len(rows)}"
    print(f"{span} most recently active sessions ({elapsed:.1f} ms)")
    cells = [
        (
            one_line(row.get("last_active")),
            one_line(row.get("source")),
            f"{row.get('message_count', 0):,}",
            one_line(row.get("title") or row.get("preview") or "(empty)"),
        )
        for row in rows
    ]
    # Columns as wide as their widest cell, counted in terminal columns: a date,
    # a source or a title in CJK takes two a character.
    widths = [
        max(columns(name), *(columns(cell[k]) for cell in cells))
        for k, name in enumerate(_BROWSE_COLUMNS[:3])
    ]
    indent = sum(widths) + 4
    head = _BROWSE_COLUMNS
    header = f"{pad(head[0], widths[0])} {pad(head[1], widths[1])} {head[2]:>{widths[2]}}  "
    print(style(header + head[3], BOLD, color))
    for row, (when, source, count, label) in zip(rows, cells):
        title = fit_columns(label, _TITLE_COLUMNS)
        print(f"{pad(when, widths[0])} {pad(source, widths[1])} {count:>{widths[2]}}  {title}")
        print(style(" " * indent + one_line(row.get("link")), DIM, color))
    _more(payload, color, sys.stdout)
    return 0


_BROWSE_COLUMNS = ("last active", "source", "msgs", "title / preview")
_TITLE_COLUMNS = 60
