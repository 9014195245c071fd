"""Messages and notes as the model sees them: JSON-ready, capped, without ANSI codes."""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from .._display import whole_prefix

log = logging.getLogger(__name__)

WINDOW_CONTENT_CAP = 4000
BOOKEND_CONTENT_CAP = 1200
# The most a read or scroll payload takes, as UTF-8 JSON: a model's context is
# not the place for a 3 MB transcript.
PAYLOAD_BUDGET_BYTES = 64 * 1024
_MIN_CONTENT_CAP = 250
_NOTES_ROOM = 1024  # bytes kept for the notes that say what was cut
_FIT_BYTES = PAYLOAD_BUDGET_BYTES - _NOTES_ROOM
_TRUNCATION_MARK = "\u2026"
_CALL_ROOM = 512  # a tool call's id, type and name beside its cut arguments
_COMPACTION_PREFIXES = ("[CONTEXT COMPACTION", "[CONTEXT SUMMARY]:")
_ANSI_RE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_TS_FORMAT = "%B %d, %Y at %I:%M %p"


def format_ts(ts: Any) -> str:
    """A stored timestamp as local time for people ("March 15, 2026 at 09:24 AM")."""
    if ts is None:
        return "unknown"
    if isinstance(ts, str):
        try:
            number = float(ts)
        except ValueError:
            return ts
    elif isinstance(ts, (int, float)) and not isinstance(ts, bool):
        number = float(ts)
    else:
        return str(ts)
    try:
        return datetime.fromtimestamp(number).strftime(_TS_FORMAT)
    except (ValueError, OverflowError, OSError):
        return str(ts)


def without_escapes(text: str) -> str:
    """``text`` without terminal escape sequences (tool output keeps its colours)."""
    return _ANSI_RE.sub("", text) if "\x1b" in text else text


def is_compaction_summary(content: Any) -> bool:
    """Whether ``content`` is a summary the agent wrote when it compacted its context."""
    return isinstance(content, str) and content.lstrip().startswith(_COMPACTION_PREFIXES)


def shape_message(
    msg: dict[str, Any], anchor_id: int | None = None, cap: int | None = None
) -> dict[str, Any]:
    """One stored message, as the store reads it (decoded: ``transcript``), as a payload
    entry; ``cap`` limits the content's characters."""
    content = msg.get("content")
    if isinstance(content, str):
        content = without_escapes(content)
    out: dict[str, Any] = {
        "id": msg.get("id"),
        "role": msg.get("role"),
        "content": content,
        "timestamp": _json_time(msg.get("timestamp")),
    }
    for key in ("tool_name", "tool_calls", "tool_call_id"):
        value = msg.get(key)
        if value:
            out[key] = value
    if anchor_id is not None and msg.get("id") == anchor_id:
        out["anchor"] = True
    if cap is not None and isinstance(content, str) and len(content) > cap:
        out["content"] = whole_prefix(content, cap) + _TRUNCATION_MARK
        out["content_truncated"] = True
        out["original_content_chars"] = len(content)
    if cap is not None and "tool_calls" in out:
        calls, cut = _cap_tool_calls(out["tool_calls"], cap)
        if cut:
            out["tool_calls"], out["tool_calls_truncated"] = calls, True
    return {k: v for k, v in out.items() if v is not None or k == "content"}


def _json_time(ts: Any) -> Any:
    """A stored time as JSON can hold it: a REAL column holds infinity (``9e999`` from
    the sqlite3 shell), which ``json.dumps`` wrote as ``Infinity``, no JSON at all."""
    if isinstance(ts, float) and not math.isfinite(ts):
        return str(ts)
    return ts


def _cap_tool_calls(calls: Any, cap: int) -> tuple[Any, bool]:
    """``calls`` with every call's arguments longer than ``cap`` cut; whether any was."""
    if isinstance(calls, str):
        if len(calls) <= cap:
            return calls, False
        return whole_prefix(calls, cap) + _TRUNCATION_MARK, True
    if not isinstance(calls, list):
        return _cap_call(calls, cap)
    out: list[Any] = []
    cut = False
    for call in calls:
        call, was_cut = _cap_call(call, cap)
        out.append(call)
        cut = cut or was_cut
    return out, cut


def _cap_call(call: Any, cap: int) -> tuple[Any, bool]:
    """One tool call with its arguments cut to ``cap``; a call of another shape (arguments
    as an object, no ``function``, a bare string) that is still long, as its JSON text cut:
    left whole, one such call made a scroll of a megabyte."""
    if isinstance(call, (int, float, bool)) or call is None:
        return call, False
    fn = call.get("function") if isinstance(call, dict) else None
    arguments = fn.get("arguments") if isinstance(fn, dict) else None
    cut = False
    beside: Any = call  # what is measured against the room
    room = cap + _CALL_ROOM
    if isinstance(fn, dict) and isinstance(arguments, str):  # the usual shape
        if len(arguments) > cap:
            fn = {**fn, "arguments": whole_prefix(arguments, cap) + _TRUNCATION_MARK}
            call = {**call, "function": fn}
            cut = True
        beside, room = {**call, "function": {**fn, "arguments": ""}}, _CALL_ROOM
    if len(_as_json(beside)) <= room:
        return call, cut
    return whole_prefix(_as_json(call), cap) + _TRUNCATION_MARK, True


def _as_json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def payload_bytes(payload: Any) -> int:
    """The payload's size as UTF-8 JSON, the way a tool result reaches the model."""
    return len(json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8"))


def over_budget(payload: Any) -> bool:
    """Whether ``payload`` leaves less than the notes' room of ``PAYLOAD_BUDGET_BYTES``."""
    return payload_bytes(payload) > _FIT_BYTES


def smaller_cap(cap: int) -> int | None:
    """The next content cap to try when a payload is over its budget, None at the floor."""
    return None if cap <= _MIN_CONTENT_CAP else max(_MIN_CONTENT_CAP, cap // 2)


def fit_content_cap(payload: Any, reshape: Callable[[int], None]) -> int:
    """Halve the content cap, calling ``reshape(cap)`` to shape ``payload`` anew, while
    it is over its budget and the cap above its floor; the cap it ended at."""
    cap = WINDOW_CONTENT_CAP
    while over_budget(payload):
        smaller = smaller_cap(cap)
        if smaller is None:
            break
        cap = smaller
        reshape(cap)
    return cap


def messages_within_budget(
    frame: dict[str, Any],
    raw: list[dict[str, Any]],
    anchor_id: int | None = None,
    first_out: bool = False,
) -> dict[str, Any]:
    """``frame`` with ``messages``: ``raw`` shaped to fit ``PAYLOAD_BUDGET_BYTES`` in all.

    Each message's content is capped at ``WINDOW_CONTENT_CAP`` characters, as
    discovery does; while the payload is still over the budget the cap is
    halved (down to ``_MIN_CONTENT_CAP``), then messages farthest from the
    anchor (or the last ones, the first ones with ``first_out``: a page before
    a message keeps the messages next to it) are left out.  Every cut is named in
    ``query_notes`` with how to see more; nothing is cut silently.
    """
    payload = {**frame, "messages": [shape_message(m, anchor_id, WINDOW_CONTENT_CAP) for m in raw]}

    def reshape(cap: int) -> None:
        payload["messages"] = [shape_message(m, anchor_id, cap=cap) for m in raw]

    cap = fit_content_cap(payload, reshape)
    messages = payload["messages"]
    left_out = 0
    while len(messages) > 1 and over_budget(payload):
        at = 0 if first_out else _farthest(messages, anchor_id)
        messages.pop(at)
        left_out += 1
        # A page that lost its first (last) message no longer reaches the session's
        # start (end): saying it does would end the reader's paging before them.
        edge = "at_start" if at == 0 else "at_end"
        if edge in payload:
            payload[edge] = False
    notes: list[str] = []
    cut = sum(1 for m in messages if m.get("content_truncated") or m.get("tool_calls_truncated"))
    if cut:
        notes.append(
            f"{cut} message(s) cut to {cap:,} characters (content_truncated, "
            "original_content_chars): a message shows at most "
            f"{WINDOW_CONTENT_CAP:,} characters, fewer when many share the "
            f"{PAYLOAD_BUDGET_BYTES // 1024} KB payload budget; scroll to the message with a "
            "small window to see up to the full cap"
        )
    if left_out:
        payload["messages_omitted"] = left_out
        notes.append(
            f"{left_out} message(s) left out to keep the payload under "
            f"{PAYLOAD_BUDGET_BYTES // 1024} KB; scroll with around_message_id and a smaller "
            "window to page through them"
        )
    return with_notes(payload, notes)


def _farthest(messages: list[dict[str, Any]], anchor_id: int | None) -> int:
    """The index of the message to leave out first: farthest from the anchor, else the last."""
    ids = [m.get("id") for m in messages]
    if anchor_id is None or anchor_id not in ids:
        return len(messages) - 1
    at = ids.index(anchor_id)
    return 0 if at > len(messages) - 1 - at else len(messages) - 1


def bookend_messages(
    messages: Iterable[dict[str, Any]], cap: int = BOOKEND_CONTENT_CAP
) -> list[dict[str, Any]]:
    """A session's opening or closing turns, compaction summaries left out."""
    return [
        shape_message(m, cap=cap) for m in messages if not is_compaction_summary(m.get("content"))
    ]


def with_notes(payload: dict[str, Any], notes: Iterable[str | None]) -> dict[str, Any]:
    """``payload`` with ``query_notes``: every argument clamped or ignored, every cut made."""
    given = [note for note in notes if note]
    if given:
        payload["query_notes"] = [*payload.get("query_notes", []), *given]
    return payload


def nothing_found(timed: bool) -> str:
    """The message of a search that found nothing (``timed``: it had time bounds)."""
    return (
        "No matching sessions found. Try fewer or different words, join alternatives "
        "with OR, use a prefix such as deploy*"
        + (", or drop the time filters" if timed else "")
        + "; this searches past conversations only."
    )


def deleted_meanwhile(left_out: int) -> str | None:
    """The note of a page ``left_out`` results short: their messages were deleted
    between the search and the read of them (Hermes deleting a session meanwhile)."""
    if not left_out:
        return None
    return (
        f"{left_out} result(s) left out: the message found was deleted after the search "
        "found it (or could not be read); search again for a full page"
    )


def past_the_end(offset: int, found: str) -> str:
    """The message of an empty page that starts after the last result (``found``:
    what there is, "this search found 3 matching")."""
    return (
        f"No results at offset {offset}: {found} sessions, all on earlier pages; lower the offset."
    )


def rebuild_note(store: Any) -> dict[str, Any] | None:
    """A note for the model when the indexes are not complete: the backfill's
    progress, or the reasons searches take slower exact routes (the store's
    ``needs_optimize`` codes); None when the indexes are complete."""
    try:
        status = store.rebuild_status()
        reasons = store.slowed_by()
        # A build under its build name (``_next``) leaves every search where it was.
        if status and "backfill" in reasons:
            # The percent only: the totals add up each index's window of messages.
            percent = int(status.get("percent") or 0)
            return {
                "percent": percent,
                "note": (
                    f"Search index backfill incomplete: {percent}% done. The messages it "
                    "has not reached are read by a slower exact scan, so no hit is left "
                    "out; it does not advance on its own (Hermes and `sync` leave it), "
                    "and `hermes-fts optimize-storage` finishes it."
                ),
            }
        if reasons == ["cjk_pending"]:
            return {
                "reasons": reasons,
                "note": (
                    "Messages written since the last hermes-fts write wait for the search "
                    "index and were read by a slower exact scan; `hermes-fts sync` adds them."
                ),
            }
        if reasons:
            from ..store import fix_command, missed_until_rebuilt, slowed_why  # with the store

            missed = missed_until_rebuilt(store.index_state())
            return {
                "reasons": reasons,
                "note": (
                    f"Searches of this store take slower exact routes, since {slowed_why(reasons)}"
                    f"{f', and {missed}' if missed else ''}; "
                    f"`hermes-fts {fix_command(reasons)}` makes searches fast and complete again."
                ),
            }
        return None
    except Exception:  # noqa: BLE001 - an annotation must never break a search
        log.debug("rebuild status unavailable", exc_info=True)
        return None
