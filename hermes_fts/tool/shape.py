"""Messages and notes as the model sees them: JSON-ready, capped, without ANSI codes."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from ..content import decode_content, parse_tool_calls

log = logging.getLogger(__name__)

WINDOW_CONTENT_CAP = 4000
BOOKEND_CONTENT_CAP = 1200
_TRUNCATION_MARK = "\u2026"
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


def is_compaction_summary(content: Any) -> bool:
    """Whether ``content`` is a summary the agent wrote when it compacted its context."""
    return isinstance(content, str) and content.lstrip().startswith(_COMPACTION_PREFIXES)


def shape_message(
    msg: dict[str, Any], anchor_id: int | None = None, cap: int | None = None
) -> dict[str, Any]:
    """One stored message as a payload entry; ``cap`` limits the content's characters."""
    content = decode_content(msg.get("content"))
    if isinstance(content, str) and "\x1b" in content:
        content = _ANSI_RE.sub("", content)
    out: dict[str, Any] = {
        "id": msg.get("id"),
        "role": msg.get("role"),
        "content": content,
        "timestamp": msg.get("timestamp"),
    }
    for key in ("tool_name", "tool_calls", "tool_call_id"):
        value = msg.get(key)
        if key == "tool_calls":
            value = parse_tool_calls(value)
        if value:
            out[key] = value
    if anchor_id is not None and msg.get("id") == anchor_id:
        out["anchor"] = True
    if cap is not None and isinstance(content, str) and len(content) > cap:
        out["content"] = content[:cap] + _TRUNCATION_MARK
        out["content_truncated"] = True
        out["original_content_chars"] = len(content)
    return {k: v for k, v in out.items() if v is not None or k == "content"}


def bookend_messages(messages: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """A session's opening or closing turns, compaction summaries left out."""
    return [
        shape_message(m, cap=BOOKEND_CONTENT_CAP)
        for m in messages
        if not is_compaction_summary(decode_content(m.get("content")))
    ]


def with_notes(payload: dict[str, Any], notes: Iterable[str | None]) -> dict[str, Any]:
    """``payload`` with ``query_notes``: every argument that was clamped or ignored."""
    given = [note for note in notes if note]
    if given:
        payload["query_notes"] = given
    return payload


def rebuild_note(store: Any) -> dict[str, Any] | None:
    """The backfill's progress as a note for the model, None when the indexes are complete."""
    try:
        status = store.rebuild_status()
        if not status:
            return None
        # The percent only: the store's totals count id windows per index, not messages.
        percent = int(status.get("percent") or 0)
        return {
            "percent": percent,
            "note": (
                f"Search index backfill incomplete: {percent}% done. Hits from older "
                "messages can be missing until it completes; it advances while Hermes "
                "runs, and `hermes-fts optimize-storage` finishes it now."
            ),
        }
    except Exception:  # noqa: BLE001 - an annotation must never break a search
        log.debug("rebuild status unavailable", exc_info=True)
        return None
