"""How ``hermes-fts read``, ``scroll`` and ``search`` print a session's messages: the
role, the text as people read it (JSON escapes decoded, tool calls as calls), at
most ``MESSAGE_LINES`` lines without ``--full``, and what was left out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TextIO

from ..content import render_tool_calls
from ..search.snippets import readable_text
from .output import BOLD, LINE_CHARS, one_line, printable, style

__all__ = ["MESSAGE_LINES", "clip", "print_messages"]

MESSAGE_LINES = 12  # lines of a message read and scroll show without --full


def _message_text(msg: dict[str, Any]) -> str:
    """A message as people read it: JSON escapes decoded, tool calls as calls."""
    content = msg.get("content")
    if content:
        return printable(readable_text(str(content), cut=bool(msg.get("content_truncated"))))
    calls = render_tool_calls(msg.get("tool_calls"))
    if calls:
        return "calls " + printable(calls)
    return "(no text)"


def _role_label(msg: dict[str, Any]) -> str:
    role = one_line(msg.get("role") or "?")
    if role == "tool" and msg.get("tool_name"):
        return f"tool:{one_line(msg['tool_name'])}"
    return role


def _body_lines(msg: dict[str, Any], max_lines: int | None) -> list[str]:
    """The message's lines, at most ``max_lines`` of them and a line saying what was left."""
    lines = _message_text(msg).splitlines() or [""]
    chars = int(msg.get("original_content_chars") or 0)
    cut = f"cut from {chars:,} characters" if msg.get("content_truncated") else ""
    if max_lines is not None and len(lines) > max_lines:
        # The cut is said here too: at the end of the lines left out, it went unseen.
        more = "; ".join(filter(None, [f"{len(lines) - max_lines:,} more lines", cut]))
        return [*lines[:max_lines], f"[{more}; --full shows the message whole]"]
    if cut:
        lines[-1] += f" [{cut}; --full shows it whole]"
    return lines


def print_messages(
    messages: Sequence[dict[str, Any]],
    color: bool,
    out: TextIO,
    indent: str = "  ",
    max_lines: int | None = None,
) -> None:
    for msg in messages:
        marker = "\u25b6" if msg.get("anchor") else " "
        head = f"{indent}{marker} #{msg.get('id')} {_role_label(msg)}: "
        lines = _body_lines(msg, max_lines)
        text = head + lines[0]
        for extra in lines[1:]:
            text += "\n" + indent + "    " + extra
        if msg.get("anchor"):
            text = style(text, BOLD, color)
        print(text, file=out)


def clip(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    clipped = []
    for msg in messages:
        copy = dict(msg)
        copy["content"] = one_line(_message_text(msg), LINE_CHARS)
        clipped.append(copy)
    return clipped
