"""The read, scroll and browse forms: one session, a window of one, the recent ones."""

from __future__ import annotations

import json
import logging
import shlex
from collections.abc import Callable, Iterator
from typing import Any

from .._params import SQLITE_INT_MAX
from ..store import failure_cause
from .args import scroll_anchor, scroll_window
from .context import FRESH_RESET_END_REASONS, CallContext
from .errors import Failed, NotHere, ToolError
from .shape import (
    format_ts,
    messages_within_budget,
    past_the_end,
    shape_message,
    with_notes,
    without_escapes,
)

log = logging.getLogger(__name__)

_READ_HEAD = 20
_READ_TAIL = 10
_BROWSE_EXTRA_ROWS = 15


def _not_found(session_id: str) -> NotHere:
    return NotHere(
        f"session_id not found: {session_id}; pass a session_id (or link) from a search or "
        "browse result, or call with no arguments to list recent sessions",
        person=f"session {session_id} not found; `hermes-fts browse` lists recent sessions "
        "and `hermes-fts search WORDS` finds one",
    )


def _shaped(
    frame: dict[str, Any],
    raw: list[dict[str, Any]],
    anchor_id: int | None,
    full: bool,
    first_out: bool = False,
) -> dict[str, Any]:
    """``frame`` with ``messages``: whole with ``full`` (the command line's ``--full``),
    else cut to the model's payload budget (``first_out``: leaving the first out first)."""
    if full:
        return {**frame, "messages": [shape_message(m, anchor_id) for m in raw]}
    return messages_within_budget(frame, raw, anchor_id, first_out)


# --------------------------------------------------------------------------- scroll


def _check_not_live(ctx: CallContext, session_id: str, flags: tuple[str, int, int] | None) -> None:
    """Refuse an anchor the model already has in front of it (its own live lineage)."""
    if ctx.current_session_id is None:
        return
    anchor_session = flags[0] if flags is not None else session_id
    current_root = ctx.lineage(ctx.current_session_id)[0]
    if ctx.lineage(anchor_session)[0] != current_root:
        return
    archived = flags is not None and flags[1] == 0 and flags[2] == 1
    rewound = flags is not None and flags[1] == 0 and flags[2] == 0
    if not (archived or (not rewound and ctx.left_live_context(anchor_session))):
        raise ToolError(
            "scroll rejected: anchor lives in the current session lineage (already in "
            "your active context); scroll a session from another search result instead"
        )


def scroll(
    ctx: CallContext,
    session_id: str,
    around: Any,
    window: Any,
    full: bool = False,
    beyond: Any = None,
) -> dict[str, Any]:
    """``window`` messages on each side of message ``around`` of ``session_id``, or
    with ``beyond`` (``"after"``, ``"before"``) the 2 × window that follow
    (precede) it; ``full``: every message whole, with no payload budget."""
    anchor_id = scroll_anchor(around, session_id)
    size, window_note = scroll_window(window)
    if beyond not in (None, "after", "before"):
        raise ToolError(f"beyond must be 'after' or 'before', got {beyond!r}")
    # A session this store lacks may be another profile's, whose message ids say
    # nothing about the current session here: not found first, so the profiles are tried.
    if ctx.session(session_id) is None:
        raise _not_found(session_id)
    flags = ctx.message_flags(anchor_id)
    owner = flags[0] if flags is not None else None
    _check_not_live(ctx, session_id, flags)
    if beyond is not None:
        gone = None if flags is not None else _gone(anchor_id, beyond)
        return _page_beyond(
            ctx, session_id, anchor_id, size, beyond == "after", full, [window_note, gone]
        )
    try:
        view = ctx.around(session_id, anchor_id, size)
    except Exception as exc:  # noqa: BLE001 - reported to the caller
        log.error("failed to load messages around %s in %s", anchor_id, session_id, exc_info=True)
        raise Failed(f"failed to load messages: {exc}") from exc
    payload_extra: dict[str, Any] = {}
    if (
        not view.get("window")
        and owner is not None
        and owner != session_id
        and ctx.lineage(owner)[0] == ctx.lineage(session_id)[0]
    ):
        given = session_id
        session_id = owner
        view = ctx.around(session_id, anchor_id, size)
        payload_extra["warning"] = (
            f"around_message_id {anchor_id} lives in {owner} (same conversation lineage as "
            f"{given}); switched to that session"
        )
    if not view.get("window"):
        raise _not_in_session(anchor_id, session_id)
    frame = _frame(
        ctx,
        session_id,
        {"around_message_id": anchor_id},
        size,
        messages_before=int(view.get("messages_before") or 0),
        messages_after=int(view.get("messages_after") or 0),
        **payload_extra,
    )
    messages = list(view["window"])
    # No message before (after) the window: a count short of the window says
    # so, else one look past its first (last) message.
    frame["at_start"] = frame["messages_before"] < size or _last(
        ctx, session_id, messages[0], False
    )
    frame["at_end"] = frame["messages_after"] < size or _last(ctx, session_id, messages[-1], True)
    frame = with_notes(frame, [window_note])
    return _shaped(frame, messages, anchor_id, full)


def _frame(
    ctx: CallContext, session_id: str, anchor: dict[str, int], size: int, **rest: Any
) -> dict[str, Any]:
    """A scroll's payload before its messages: the session, the message it is
    anchored on (``anchor``: its key and id), the window, and ``rest``."""
    head = {"success": True, "mode": "scroll", "session_id": session_id}
    meta = {"session_meta": ctx.meta(session_id), "window": size}
    return {**head, "link": ctx.link(session_id), **anchor, **meta, **rest}


def _last(ctx: CallContext, session_id: str, message: dict[str, Any], forward: bool) -> bool:
    """Whether no message of the session lies after (``forward``) or before ``message``."""
    view = ctx.beyond(session_id, message["id"], 0, forward)
    return view is not None and bool(view["at_end" if forward else "at_start"])


def _not_in_session(anchor_id: int, session_id: str) -> ToolError:
    return ToolError(
        f"around_message_id {anchor_id} not in session_id {session_id}; pass a message id "
        "from that session (read it with session_id alone to see its ids)",
        person=f"message {anchor_id} is not in session {session_id}; "
        f"`hermes-fts read {shlex.quote(session_id)}` shows its message ids",
    )


def _gone(anchor_id: int, beyond: str) -> str:
    return (
        f"message {anchor_id} no longer exists (the session was rewritten, by /retry or "
        f"/undo, say); these are the messages {beyond} where it was"
    )


def _page_beyond(
    ctx: CallContext,
    session_id: str,
    anchor_id: int,
    size: int,
    forward: bool,
    full: bool,
    notes: list[str | None],
) -> dict[str, Any]:
    """The 2 × ``size`` messages after (``forward``) or before ``anchor_id``: the page
    that follows (precedes) one a reader was shown, so pages never overlap."""
    view = ctx.beyond(session_id, anchor_id, 2 * size, forward)
    if view is None:
        raise _not_in_session(anchor_id, session_id)
    anchor = {("after_message_id" if forward else "before_message_id"): anchor_id}
    frame = _frame(ctx, session_id, anchor, size, at_start=view["at_start"], at_end=view["at_end"])
    # Paging backwards goes on from the page's first message: the budget leaves out
    # the first ones, so the next page back shows them.
    page = list(view["window"])
    return _shaped(with_notes(frame, notes), page, None, full, first_out=not forward)


# --------------------------------------------------------------------------- read


def read(
    ctx: CallContext,
    session_id: str,
    full: bool = False,
    progress: Callable[[int, int], None] | None = None,
    sink: Callable[[dict[str, Any]], Callable[[dict[str, Any]], None]] | None = None,
) -> dict[str, Any]:
    """The whole session, or its head and tail when it is long; ``full``: every
    message, each whole, shaped as it is read, with ``progress(done, total)`` on
    the way (a session of 400,000 messages takes seconds).  ``sink`` (with
    ``full``): called with the payload before its messages, it returns what takes
    each message as it is read, and the payload returned holds none of them."""
    if ctx.session(session_id) is None:
        raise _not_found(session_id)
    frame: dict[str, Any] = {
        "success": True,
        "mode": "read",
        "session_id": session_id,
        "link": ctx.link(session_id),
        "session_meta": ctx.meta(session_id),
    }
    if full and sink is not None:  # the sink's own failures (a closed pipe) are its caller's
        return _read_into(ctx, frame, sink, progress)
    try:
        if full:
            chosen: list[dict[str, Any]] = []
            total = _read_whole(ctx, session_id, progress, chosen.append)
        else:
            total, chosen = ctx.store.get_message_ends(session_id, _READ_HEAD, _READ_TAIL)
    except Exception as exc:  # noqa: BLE001 - reported to the caller
        log.error("failed to load session %s", session_id, exc_info=True)
        raise Failed(f"failed to load session: {exc}") from exc
    truncated = not full and total > _READ_HEAD + _READ_TAIL
    frame.update(message_count=total, truncated=truncated)
    out = {**frame, "messages": chosen} if full else _shaped(frame, chosen, None, full)
    if truncated:
        # Counted after the payload budget, which may leave some of the ends out.
        shown = {m.get("id") for m in out["messages"]}
        head = sum(m.get("id") in shown for m in chosen[:_READ_HEAD])
        tail = sum(m.get("id") in shown for m in chosen[_READ_HEAD:])
        last = f" and the last {tail}" if tail else ""
        out["message"] = (
            f"Session has {total} messages; showing the first {head}{last}. To see the "
            "middle, pass around_message_id (any message id shown here) with this session_id."
        )
    return out


def _read_into(
    ctx: CallContext,
    frame: dict[str, Any],
    sink: Callable[[dict[str, Any]], Callable[[dict[str, Any]], None]],
    progress: Callable[[int, int], None] | None,
) -> dict[str, Any]:
    """A full read handed to ``sink`` message by message: a session of 400,000 held
    whole took 400 MB, and printing it began only once it was all read."""
    # The count the header says and the messages that follow it, of one moment.
    total, messages = ctx.store.counted_messages(frame["session_id"], readable=True)
    frame["message_count"] = total
    frame["truncated"] = False
    if ctx.found_elsewhere:  # the header names where the session was found
        frame["profile"] = ctx.profile
    _read_whole(ctx, frame["session_id"], progress, sink(dict(frame)), total, messages)
    return frame


_PROGRESS_EVERY = 2_000  # messages between two calls of a read's progress


def _read_whole(
    ctx: CallContext,
    session_id: str,
    progress: Callable[[int, int], None] | None,
    each: Callable[[dict[str, Any]], None],
    total: int | None = None,
    messages: Iterator[dict[str, Any]] | None = None,
) -> int:
    """Every message a read shows, shaped whole, each handed to ``each`` as it is read;
    how many.  ``total`` and ``messages``: the count and the messages when the caller has them."""
    if total is None:
        total = ctx.store.count_messages(session_id, readable=True) if progress else 0
    if messages is None:
        messages = ctx.store.each_message(session_id, readable=True)
    done = 0
    for message in messages:
        each(shape_message(message))
        done += 1
        if progress is not None and done % _PROGRESS_EVERY == 0 and done < total:
            progress(done, total)
    if progress is not None:  # once complete, whatever a writer changed meanwhile
        progress(done, done)
    return done


# --------------------------------------------------------------------------- browse


def _model_config(row: dict[str, Any]) -> dict[str, Any]:
    raw = row.get("model_config")
    if not raw:
        return {}
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _listable(ctx: CallContext, row: dict[str, Any]) -> str | None:
    """The id of the conversation this session belongs to in a listing, or None.

    Roots, ``/branch`` children and ``/new`` reset children are conversations of
    their own; compression continuations belong to the conversation they
    continue; delegation children are never listed.
    """
    seen: set[str] = set()
    cur = row
    while True:
        sid = str(cur["id"])
        if sid in seen:
            return min(seen)
        seen.add(sid)
        config = _model_config(cur)
        if config.get("_delegate_from"):
            return None
        parent_id = cur.get("parent_session_id")
        if not parent_id:
            return sid
        if parent_id in seen:  # a parent cycle: the loop is one conversation
            return min(seen)
        if config.get("_branched_from") or config.get("_reset_from"):
            return sid
        parent = ctx.session(parent_id)
        if parent is None:
            return sid
        reason = parent.get("end_reason")
        if reason == "branched":
            return sid
        if reason in FRESH_RESET_END_REASONS:
            key = cur.get("session_key")
            if key and key == parent.get("session_key"):
                return sid
            return _cycle_root(ctx, sid)
        if reason == "compression":
            cur = parent
            continue
        return _cycle_root(ctx, sid)


def _cycle_root(ctx: CallContext, session_id: str) -> str | None:
    """The conversation of a session on a ``parent_session_id`` cycle (the cycle's
    lineage root), None for any other: on a cycle every member is some member's
    child, and reading each as a delegation left the conversation out of every listing."""
    seen: set[str] = set()
    cur: str | None = session_id
    while cur is not None and cur not in seen:
        seen.add(cur)
        row = ctx.session(cur)
        cur = str(row["parent_session_id"]) if row and row.get("parent_session_id") else None
    return ctx.lineage(session_id)[0] if cur == session_id else None


def browse(ctx: CallContext, limit: int, offset: int | None = None) -> dict[str, Any]:
    """The ``limit`` most recently active conversations, one entry each.

    ``offset`` (the command line's paging) skips that many first and says in
    ``next_offset`` where the next page starts (None after the last).
    """
    current = ctx.current_session_id
    # The conversation the caller is in (a compressed chain lists as one entry):
    # already in context, so it is left out; other conversations of the same
    # lineage (/new resets, branches) stay listed.
    skip_conversation: str | None = None
    if current is not None:
        current_row = ctx.session(current)
        if current_row is not None:
            skip_conversation = _listable(ctx, current_row)
    want = limit if offset is None else offset + limit + 1
    # Room for the sessions a listing folds or leaves out (continuations, delegations:
    # a share of every store, a tenth of a large one), so a page is mostly one read.
    page = want + want // 8 + _BROWSE_EXTRA_ROWS
    results: list[tuple[dict[str, Any], str]] = []  # (row, its conversation)
    shown: set[str] = set()

    def take(rows: list[dict[str, Any]]) -> None:
        for row in rows:
            if len(results) >= want:
                return
            sid = str(row["id"])
            conversation = _listable(ctx, row) if sid != current else None
            if conversation is None or conversation in shown:
                continue
            if conversation == skip_conversation:
                continue
            shown.add(conversation)
            results.append((row, conversation))

    try:
        first = ctx.sessions_by_activity(limit=page, offset=0)
        take(first)
        if len(results) < want and len(first) == page:
            # Folded short (a chat compressed a thousand times lists once): every
            # other session in one read, which ranks them all, as a deep page does.
            take(ctx.sessions_by_activity(limit=SQLITE_INT_MAX - page, offset=page))
        start = offset or 0
        entries = [_browse_entry(ctx, row, conv) for row, conv in results[start : start + limit]]
    except Exception as exc:  # noqa: BLE001 - reported to the caller
        cause = failure_cause(exc)
        if cause is not None:  # the store's state, not a fault of ours
            raise ToolError(f"Listing recent sessions could not read the store: {cause}") from exc
        log.error("listing recent sessions failed", exc_info=True)
        raise Failed(f"Failed to list recent sessions: {exc}") from exc
    payload: dict[str, Any] = {
        "success": True,
        "mode": "browse",
        "results": entries,
        "count": len(entries),
        "message": (
            f"Showing the {len(entries)} most recently active sessions. Pass query to "
            "search, session_id to read one, or session_id with around_message_id to scroll."
        ),
    }
    if not results:  # "Showing the 0 ..." would read as a page of a listing that has none
        besides = " besides the current conversation" if current is not None else ""
        payload["message"] = f"No sessions to list{besides}."
    elif not entries and offset and len(results) <= offset:
        payload["message"] = past_the_end(offset, f"there are {len(results)}")
    if offset is not None:
        payload["offset"] = offset
        payload["next_offset"] = offset + limit if len(results) > offset + limit else None
    return payload


def _browse_entry(ctx: CallContext, row: dict[str, Any], conversation: str) -> dict[str, Any]:
    sid = str(row["id"])
    count = row.get("message_count")
    if not count:
        count = ctx.store.count_messages(sid)
    entry: dict[str, Any] = {
        "session_id": sid,
        "link": ctx.link(sid),
        "title": row.get("title") or None,
        "source": row.get("source") or "unknown",
        "started_at": format_ts(row.get("started_at")),
        "last_active": format_ts(row.get("last_active")),
        "message_count": int(count),
        "preview": without_escapes(ctx.store.session_preview(sid)),
    }
    if conversation != sid:
        entry["lineage_root_id"] = conversation
    return entry
