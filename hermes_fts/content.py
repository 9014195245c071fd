"""How Hermes stores message text, and how to read it back: pure functions.

Hermes Agent stores plain text as is.  Structured content (a list of
multimodal parts, a dict, a number) is stored as ``"\\x00json:" + JSON``, and
``tool_calls`` as a JSON array.  Everything that shows or searches stored
text decodes it here, so every layer reads a value the same way.

``indexed_text_sql`` is the same reading in SQL: the text every index holds
for a stored value, so that JSON-escaped CJK (``\\u6842\\u6797``) is found as
the characters it encodes.

A leaf module: it imports nothing from the package.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from typing import Any

__all__ = [
    "JSON_CONTENT_PREFIX",
    "MULTIMODAL_PLACEHOLDER",
    "as_text",
    "decode_content",
    "encode_value",
    "escape_lone_surrogates",
    "INDEXED_COLUMNS",
    "JSON_PREFIX_END_SQL",
    "JSON_PREFIX_SQL",
    "indexed_text_sql",
    "indexed_values",
    "parse_tool_calls",
    "render_tool_calls",
]

log = logging.getLogger("hermes_fts.content")

JSON_CONTENT_PREFIX = "\x00json:"
MULTIMODAL_PLACEHOLDER = "[multimodal content]"
# After json.loads a pair is one character, so any surrogate left is a lone one.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def escape_lone_surrogates(value: Any) -> Any:
    """``value`` with each lone UTF-16 surrogate written back as its JSON escape.

    Hermes stores ``"\\ud800"`` as given, and decoding it yields a character
    that no UTF-8 output (a tool payload, ``--json``, a terminal) can carry, so
    decoded text shows the escape as stored.  Lists and dicts are walked.
    """
    if isinstance(value, str):
        if value.isascii() or not _LONE_SURROGATE.search(value):
            return value
        return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m[0]):04x}", value)
    if isinstance(value, list):
        return [escape_lone_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {escape_lone_surrogates(k): escape_lone_surrogates(v) for k, v in value.items()}
    return value


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


def as_text(value: Any) -> Any:
    """``value``, with bytes (a BLOB another program stored where text belongs) read
    as UTF-8 and a bad sequence as U+FFFD, as text that is not valid UTF-8 reads."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def decode_content(content: Any) -> Any:
    """Return displayable text for a stored ``content`` value.

    Structured content is stored as ``"\\x00json:" + JSON``; a list of parts
    (multimodal) is flattened to its text parts joined by a space, or
    ``"[multimodal content]"`` when it has none.  Anything that cannot be
    decoded is returned without the prefix.  ``None`` stays ``None``; bytes are
    read as text (``as_text``).
    """
    content = as_text(content)
    if not isinstance(content, str) or not content.startswith(JSON_CONTENT_PREFIX):
        return content
    payload = content[len(JSON_CONTENT_PREFIX) :]
    try:
        value = json.loads(payload)
    except (ValueError, RecursionError):  # RecursionError: nested past Python's limit
        log.debug("undecodable structured content (%d chars)", len(payload))
        return payload
    if isinstance(value, str):
        return escape_lone_surrogates(value)
    if isinstance(value, list):
        return escape_lone_surrogates(_flatten_parts(value))
    if isinstance(value, dict):
        return escape_lone_surrogates(_flatten_parts([value]))
    return json.dumps(value, ensure_ascii=False)


def parse_tool_calls(raw: Any) -> Any:
    """A stored ``tool_calls`` value as Python data.

    JSON text becomes the list (or object) it encodes; blank text becomes
    ``None``; text that is not JSON is returned unchanged, and so is a value
    that is not text at all (bytes are read as text, ``as_text``).
    """
    raw = as_text(raw)
    if not isinstance(raw, str):
        return raw
    if not raw.strip():
        return None
    try:
        calls = json.loads(raw)
        return escape_lone_surrogates(calls) if _SURROGATE_ESCAPE.search(raw) else calls
    except (ValueError, RecursionError):
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
            except (ValueError, RecursionError):
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
    return escape_lone_surrogates("; ".join(shown))


def encode_value(value: Any) -> Any:
    """A value to bind for a message or session column.

    Lists and dicts (``tool_calls`` above all) are stored as JSON text, the
    way Hermes Agent stores them; everything else is bound as it is.
    """
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    return value


# --------------------------------------------------------------------------
# The indexed text, in SQL
#
# Every index we own, the views they read and the LIKE scan take a column's
# text from ``indexed_text_sql``: the stored value, and, for JSON holding
# ``\uXXXX`` escapes, a newline and the text those escapes encode.  The
# expression runs in Hermes Agent's process too (the word and trigram
# triggers), where our extension is absent, so it uses only SQLite's
# built-in scalar functions; and FTS5 reads its external-content view with
# virtual tables disabled (``'rebuild'`` fails on ``json_tree``), so it
# cannot walk the JSON.  Instead it turns the whole value into one JSON string
# literal (escaped backslashes set aside, structural quotes dropped, escaped
# quotes kept as ``\u0022``) and lets ``json_extract`` decode every escape at
# once.  It must give the same bytes in every SQLite version that may write
# the store, or FTS5's 'delete' of an external-content row would remove
# tokens the row never added.  So ``json_valid`` is asked only about the flat
# literal, never about the value's nesting (SQLite 3.45 lowered its depth
# limit from 2000 to 1000); ``\u0000``, which SQLite 3.40 decodes as the end
# of the text and 3.54 as a NUL, stays literal; and a decode holding text
# SQLite reads as U+FFFD (a lone UTF-16 surrogate decodes to invalid UTF-8)
# is dropped.  docs/DESIGN.md §5.7 has the whole story.

_BS = "\\"
_ESCAPE = "'\\u'"  # where an escape may start, as an SQL literal
JSON_PREFIX_SQL = "char(0) || 'json:'"  # JSON_CONTENT_PREFIX as an SQL value
JSON_PREFIX_END_SQL = "char(0) || 'json;'"  # the first text after every prefixed one
_HOLD = "char(1)"  # an escaped backslash, set aside while quotes are rewritten


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _replace(expr: str, pairs: list[tuple[str, str]]) -> str:
    for old, new in pairs:
        expr = f"replace({expr}, {old}, {new})"
    return expr


def _has(expr: str, needle: str) -> str:
    """Whether ``needle`` (no GLOB wildcard in it) occurs in the text ``expr``.

    GLOB finds a leading character with ``strcspn``; ``instr`` compares at
    every byte and takes several times longer on SQLite 3.40.  GLOB stops at
    a NUL, so ``expr`` must not hold one before the needle: the ``\\x00json:``
    prefix is stripped first, and a decode never yields a NUL.
    """
    return f"{expr} GLOB ('*' || {needle} || '*')"


def _when_any(expr: str, needles: list[str], then: str) -> str:
    hit = " OR ".join(_has(expr, n) for n in needles)
    return f"CASE WHEN {hit} THEN {then} ELSE {expr} END"


def _decoded_sql(value: str, when: str = "1") -> str:
    """The text the JSON escapes in ``value`` encode; NULL when they do not decode
    or ``when`` is false.

    Five steps, each a subquery of the one before (``OFFSET 0`` keeps SQLite
    from merging them, which would compute a step once per mention of it),
    which also keeps the SQL shallow: SQLite before 3.46 parses with a fixed
    stack of 100 entries, and a trigger it cannot parse makes the whole
    schema unreadable.  A step that has nothing to do costs a GLOB or two.
    """
    pairs = [(_lit(_BS * 2), _HOLD), (_lit(_BS + "u0000"), f"{_HOLD} || 'u0000'")]
    held = _when_any("a", [old for old, _new in pairs], _replace("a", pairs))
    spaces = [(f"char({c})", "' '") for c in (9, 10, 13)]
    spaced = _when_any("a", [old for old, _new in spaces], _replace("a", spaces))
    quoted = _replace(spaced, [(_lit(_BS + '"'), _lit(_BS + "u0022")), (_lit('"'), "''")])
    literal = (
        "'\"' || " + _when_any("a", [_HOLD], _replace("a", [(_HOLD, _lit(_BS * 2))])) + " || '\"'"
    )
    decoded = "CASE WHEN json_valid(a) THEN json_extract(a, '$') END"
    # A lone surrogate decodes to bytes that SQLite reads as U+FFFD.
    checked = f"CASE WHEN NOT {_has('a', 'char(65533)')} THEN a END"
    sql = f"SELECT {value} AS a WHERE {when}"  # a WHERE: a CASE here would cost parser stack
    for step in (held, quoted, literal, decoded):
        sql = f"SELECT {step} AS a FROM ({sql} LIMIT -1 OFFSET 0)"
    return f"(SELECT {checked} FROM ({sql} LIMIT -1 OFFSET 0))"


def indexed_text_sql(column: str) -> str:
    """SQL for the text every index holds for the stored ``column`` value.

    The value itself (structured content's ``"\\x00json:"`` prefix with a
    space for its NUL); and when it is JSON (structured content, or text
    starting with ``[``, ``{`` or ``"``) holding a ``\\u`` escape and its
    escapes decode, that, a newline and the decoded text.
    Strings that hold JSON themselves (tool-call ``arguments``) are decoded
    one level more.  Anything else (no escape, not JSON, escapes that do not
    decode, not text) is the value unchanged, so such rows index exactly as
    Hermes Agent's own.
    """
    prefixed = f"({column} >= {JSON_PREFIX_SQL} AND {column} < {JSON_PREFIX_END_SQL})"
    payload = (
        f"CASE WHEN {prefixed} THEN CAST(substr(CAST({column} AS BLOB), "
        f"{len(JSON_CONTENT_PREFIX.encode()) + 1}) AS TEXT) ELSE {column} END"
    )
    # Each mention of a column reads its value again (a long one from its
    # overflow pages), so a value that cannot be JSON is settled by typeof()
    # (which reads no text) and unicode() of its first character (NULL for
    # the prefix's NUL): two reads, as many as the stored value itself costs.
    not_json = (
        f"typeof({column}) <> 'text' OR COALESCE(unicode({column}), 0) NOT IN (0, 34, 91, 123)"
    )
    again = _decoded_sql("d", _has("d", _ESCAPE))
    # The prefix's NUL as a space: FTS5's trigram tokenizer and LIKE read text
    # only up to a NUL, so they would never see a prefixed value; unicode61
    # splits words at either, so the word index keeps Hermes Agent's tokens.
    stored = f"' ' || CAST(substr(CAST({column} AS BLOB), 2) AS TEXT)"
    decoded = (
        f"(SELECT (CASE WHEN {prefixed} THEN {stored} ELSE {column} END) || "
        f"COALESCE(char(10) || COALESCE({again}, d), '') "
        f"FROM (SELECT {_decoded_sql(payload)} AS d LIMIT -1 OFFSET 0))"
    )
    return (
        f"CASE WHEN {not_json} THEN {column} "
        f"WHEN {_has(f'({payload})', _ESCAPE)} THEN {decoded} "
        f"WHEN {prefixed} THEN {stored} ELSE {column} END"
    )


INDEXED_COLUMNS = ("content", "tool_name", "tool_calls")


def indexed_values(row: str) -> str:
    """``content, tool_name, tool_calls`` of ``row`` (``new.``, ``old.``, ``p.old_`` …)
    as the indexes hold them: the one list every insert and 'delete' uses."""
    return ", ".join(indexed_text_sql(f"{row}{col}") for col in INDEXED_COLUMNS)
