"""How Hermes stores message text, and how to read it back: pure functions.

Hermes Agent stores plain text as is.  Structured content (a list of
multimodal parts, a dict, a number) is stored as ``"\\x00json:" + JSON``, and
``tool_calls`` as a JSON array.  Everything that shows or searches stored
text decodes it here, so every layer reads a value the same way.

A leaf module: it imports nothing from the package.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import Any

__all__ = [
    "JSON_CONTENT_PREFIX",
    "MULTIMODAL_PLACEHOLDER",
    "decode_content",
    "encode_value",
    "parse_tool_calls",
    "render_tool_calls",
]

log = logging.getLogger("hermes_fts.content")

JSON_CONTENT_PREFIX = "\x00json:"
MULTIMODAL_PLACEHOLDER = "[multimodal content]"


def _flatten_parts(parts: Iterable[Any]) -> str:
    texts: list[str] = []
    for part in parts:
        if isinstance(part, str):
            if part:
                texts.append(part)
        elif isinstance(part, dict):
            text = part.get("text")
            if isinstance(text, str) and text:
                texts.append(text)
    return " ".join(texts) if texts else MULTIMODAL_PLACEHOLDER


def decode_content(content: Any) -> Any:
    """Return displayable text for a stored ``content`` value.

    Structured content is stored as ``"\\x00json:" + JSON``; a list of parts
    (multimodal) is flattened to its text parts joined by a space, or
    ``"[multimodal content]"`` when it has none.  Anything that cannot be
    decoded is returned without the prefix.  ``None`` stays ``None``.
    """
    if not isinstance(content, str) or not content.startswith(JSON_CONTENT_PREFIX):
        return content
    payload = content[len(JSON_CONTENT_PREFIX) :]
    try:
        value = json.loads(payload)
    except ValueError:
        log.debug("undecodable structured content (%d chars)", len(payload))
        return payload
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return _flatten_parts(value)
    if isinstance(value, dict):
        return _flatten_parts([value])
    return json.dumps(value, ensure_ascii=False)


def parse_tool_calls(raw: Any) -> Any:
    """A stored ``tool_calls`` value as Python data.

    JSON text becomes the list (or object) it encodes; blank text becomes
    ``None``; text that is not JSON is returned unchanged, and so is a value
    that is not text at all.
    """
    if not isinstance(raw, str):
        return raw
    if not raw.strip():
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def render_tool_calls(raw: Any) -> str | None:
    """``tool_calls`` (stored JSON text or parsed) as ``web_search(query="nginx")``.

    Arguments are shown as ``key=value`` with JSON values (strings quoted);
    several calls are joined with ``; ``.  None when ``raw`` is not a list of
    calls, so the caller shows what it has instead.
    """
    calls = parse_tool_calls(raw)
    if not isinstance(calls, list) or not calls:
        return None
    shown: list[str] = []
    for call in calls:
        fn = call.get("function") if isinstance(call, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            return None
        args: Any = fn.get("arguments")
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except ValueError:
                pass  # not JSON: shown as the text it is
        if isinstance(args, dict):
            inner = ", ".join(
                f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in args.items()
            )
        elif args is None:
            inner = ""
        else:
            inner = json.dumps(args, ensure_ascii=False)
        shown.append(f"{fn['name']}({inner})")
    return "; ".join(shown)


def encode_value(value: Any) -> Any:
    """A value to bind for a message or session column.

    Lists and dicts (``tool_calls`` above all) are stored as JSON text, the
    way Hermes Agent stores them; everything else is bound as it is.
    """
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    return value
