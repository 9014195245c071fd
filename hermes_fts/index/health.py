"""Whether a served index still answers for the messages it covers (DESIGN §5.6).

FTS5's own ``integrity-check`` reads the whole index, but it misses damage
that only a lookup meets: with ``%_idx`` emptied every term search finds
nothing while the check passes.  So each index is also asked, for a few
messages spread over the id range, to find the message by a phrase of its
own text, and its row count is compared with the rows of its content view.
A probe is SELECTs only, so a read-only open can run it (optimize-storage's
preflight); the full check needs a write transaction (FTS5 runs it as an
INSERT).
"""

from __future__ import annotations

import re
import sqlite3

from .._index_text import segments
from . import maintain as indexing
from . import schema

__all__ = ["PROBES", "damage", "probe"]

PROBES = 12  # messages asked for per index
PHRASE_WORDS = 8  # the first words of a message's text make its phrase
MAX_PHRASE = 400  # characters; a longer phrase (a blob without spaces) is not asked


def damage(conn: sqlite3.Connection, index: str, *, full: bool, counts: bool = True) -> str | None:
    """What is wrong with ``index`` (a current, complete index of ours), else None.

    ``full`` adds FTS5's ``integrity-check`` of the whole index to the probe.
    """
    if full:
        broken = indexing.integrity_check(conn, index)
        if broken is not None:
            return f"integrity-check: {broken}"
    return probe(conn, index, counts)


def probe(conn: sqlite3.Connection, index: str, counts: bool = True) -> str | None:
    """The row-count and lookup probe of ``index``; None when it answers right.
    ``counts`` False: the lookups alone (the counts read every row, a second
    at a million messages)."""
    view = schema.reads_view(conn, index) or schema.content_view(index)
    try:
        held = conn.execute(f"SELECT count(*) FROM {index}_docsize").fetchone()[0] if counts else 0
        rows = conn.execute(f"SELECT count(*) FROM {view}").fetchone()[0] if counts else 0
        if held != rows:
            return f"holds {held:,} rows, its messages are {rows:,}"
        for msg_id, text in _samples(conn, view):
            found = conn.execute(
                f"SELECT 1 FROM {index} WHERE {index} MATCH ? AND rowid = ?",
                (_phrase(text), msg_id),
            ).fetchone()
            if found is None:
                return f"message {msg_id} is not found by its own text"
    except sqlite3.DatabaseError as exc:
        return str(exc)
    return None


def _samples(conn: sqlite3.Connection, view: str) -> list[tuple[int, str]]:
    """Up to ``PROBES`` rows of ``view`` spread over the message ids, with searchable text."""
    top = conn.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()[0]
    out: list[tuple[int, str]] = []
    for k in range(PROBES):
        row = conn.execute(
            "SELECT id FROM messages WHERE id >= ? ORDER BY id LIMIT 1", (top * k // PROBES,)
        ).fetchone()
        if row is None:
            continue
        # The view, not the message: it shows the text the index should hold
        # (none for a row the CJK index still waits for).
        texts = conn.execute(
            f"SELECT content, tool_name, tool_calls FROM {view} WHERE id = ?", (row[0],)
        ).fetchone()
        words = (_first_words(t) for t in texts or () if isinstance(t, str))
        # A phrase with no token (``___``: "_" separates words) finds no row anywhere.
        phrase = next((w for w in words if 3 <= len(w) <= MAX_PHRASE and segments(w)), None)
        if phrase is not None:
            out.append((int(row[0]), phrase))
    return out


def _first_words(text: str) -> str:
    """The text of its first words, exactly as stored (a trigram sees the whitespace).
    Only those before a NUL: FTS5 reads a MATCH text as a C string, so a phrase
    holding one was 'unterminated', and the index was called damaged."""
    match = _FIRST_WORDS.match(text.partition("\0")[0])
    return match.group(1) if match else ""


_FIRST_WORDS = re.compile(rf"\s*(\S+(?:\s+\S+){{0,{PHRASE_WORDS - 1}}})")


def _phrase(words: str) -> str:
    """An FTS5 phrase of a row's first words: every tokenizer finds the row by it."""
    return '"' + words.replace('"', '""') + '"'
