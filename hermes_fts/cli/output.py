"""How ``hermes-fts`` prints: JSON for scripts, sizes, colour and one-line text for people.

Matches (``>>> <<<`` in snippets, ``SEARCH_MARKS`` in those ``search`` asks for)
are coloured on a terminal and bracketed ``[ ]`` elsewhere, on a ``TERM=dumb``
one or when ``NO_COLOR`` is set.
"""

from __future__ import annotations

import codecs
import contextlib
import itertools
import json
import os
import re
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from .._display import char_start, columns

MARK_OPEN = ">>>"
MARK_CLOSE = "<<<"
# The marks ``search`` asks the tool for: noncharacters, which stored text does not
# hold, so a stored ``>>>`` (a Python prompt, a merge conflict) prints as it is.
SEARCH_MARKS = ("\ufdd0", "\ufdd1")
BOLD_MATCH = "\x1b[1;33m"
DIM = "\x1b[2m"
BOLD = "\x1b[1m"
RESET = "\x1b[0m"
LINE_CHARS = 160


# True while a JSON document is being written: the command line's Ctrl-C handler
# then lets it end, since half a document and the error's after it are no JSON.
WRITING_JSON: list[bool] = []
# The signal a piece of a document written as it is made (``JsonList``) made wait:
# the document stops after that piece, and the error ends it (``end_open``).
WAITED: list[int] = []


def end_open(error: str) -> bool:
    """End the document ``JsonList`` was writing when ``error`` stopped it, with the
    error; False when none was begun (the error is then a document of its own).  Half
    a piece out (a second Ctrl-C cut it), no end makes it JSON: stderr says the error."""
    if not OPEN:
        return False
    document = OPEN.pop()
    if document.cut:  # as progress.say writes a note event, stderr's lines under --json
        note = {"event": "note", "message": error, "level": "error"}
        with contextlib.suppress(OSError):
            print(json.dumps(note), file=sys.stderr, flush=True)
    else:
        document.end({"success": False, "error": error})
    return True


def emit_json(payload: Any) -> None:
    """The payload verbatim, for scripts (``--json``): characters stdout's encoding
    cannot write (a Latin-1 or ASCII locale) as JSON escapes, never lost.
    Written and flushed whole, a first Ctrl-C meanwhile waiting for its end."""
    WRITING_JSON.append(True)
    try:
        if not _stream_utf8(payload):
            _emit_whole(payload)
    finally:
        WRITING_JSON.clear()


# Bytes gathered before each write: a document of 100 MB (`read --full` of a long
# session) is never held whole as text and again as bytes.
_WRITE_CHUNK = 1 << 20


def _stream_utf8(payload: Any) -> bool:
    """Write the document to a UTF-8 stdout as it is encoded; False (nothing written)
    when stdout is no file or not UTF-8.  Whole, it took twice the memory of the
    payload again: ``json.dumps`` with ``indent`` joins a list of every token."""
    try:
        fd = sys.stdout.fileno()
        utf8 = codecs.lookup(sys.stdout.encoding or "utf-8").name == "utf-8"
    except (AttributeError, OSError, ValueError, LookupError, TypeError):
        return False
    if not utf8:
        return False
    sys.stdout.flush()  # what was printed before goes first
    encoder = json.JSONEncoder(ensure_ascii=False, indent=2, default=str)
    parts: list[str] = []
    size = 0
    for part in itertools.chain(encoder.iterencode(payload), ["\n"]):
        parts.append(part)
        size += len(part)
        if size >= _WRITE_CHUNK or part == "\n":
            # A lone surrogate, the only text UTF-8 cannot write, as its JSON escape.
            _write_all(fd, "".join(parts).encode("utf-8", "backslashreplace"))
            parts, size = [], 0
    return True


# The document a ``JsonList`` is writing, from its ``begin`` to its ``end``.
OPEN: list[JsonList] = []


class JsonList:
    """One document written as it is made, as ``emit_json`` writes it whole: ``begin``
    its first keys and ``key``'s list, ``item`` each element, ``end`` the keys after."""

    def __init__(self) -> None:
        try:
            self.fd: int | None = sys.stdout.fileno()
            utf8 = codecs.lookup(sys.stdout.encoding or "utf-8").name == "utf-8"
        except (AttributeError, OSError, ValueError, LookupError, TypeError):
            self.fd, utf8 = None, False
        # Another encoding gets escapes: a character it lacks may come in any element.
        self.encoder = json.JSONEncoder(ensure_ascii=not utf8, indent=2, default=str)
        self.items = 0
        self.head: dict[str, Any] = {}
        self.cut = False
        self.parts: list[str] = []
        self.size = 0

    def _value(self, value: Any, indent: str) -> str:
        return self.encoder.encode(value).replace("\n", "\n" + indent)

    def _put(self, text: str) -> None:
        self.parts.append(text)
        self.size += len(text)
        if self.size >= _WRITE_CHUNK:
            self.flush()

    def flush(self) -> None:
        text, self.parts, self.size = "".join(self.parts), [], 0
        if self.fd is None:
            sys.stdout.write(text)
        else:
            _write_all(self.fd, text.encode("utf-8", "backslashreplace"))

    @contextlib.contextmanager
    def _piece(self, stops: bool = True) -> Iterator[None]:
        """A piece of the document, written whole: a first Ctrl-C meanwhile waits for
        its end, then (``stops``) stops the document, which the command ends with
        ``end`` (the reading it waited for can take minutes on a long session)."""
        WRITING_JSON.append(True)
        try:
            yield
        except BaseException:
            self.cut = True  # (a second Ctrl-C) the document can no longer end as JSON
            raise
        finally:
            WRITING_JSON.clear()
        if stops and WAITED:
            raise KeyboardInterrupt

    def begin(self, head: dict[str, Any], key: str) -> None:
        with self._piece():
            # "success" goes last, with the rest: a document stopped half way says false.
            self.head = {k: v for k, v in head.items() if k != "success"}
            OPEN.append(self)
            sys.stdout.flush()  # what was printed before goes first
            keys = [f"  {json.dumps(k)}: {self._value(v, '  ')}" for k, v in self.head.items()]
            self._put("{\n" + "".join(line + ",\n" for line in keys) + f"  {json.dumps(key)}: [")

    def item(self, value: Any) -> None:
        with self._piece():
            self._put(("," if self.items else "") + "\n    " + self._value(value, "    "))
            self.items += 1

    def end(self, tail: dict[str, Any]) -> None:
        with self._piece(stops=False):
            self._put("\n  ]" if self.items else "]")
            for k, v in tail.items():
                self._put(f",\n  {json.dumps(k)}: {self._value(v, '  ')}")
            self._put("\n}\n")
            self.flush()
            if self.fd is None:
                sys.stdout.flush()
        OPEN.clear()


def _emit_whole(payload: Any) -> None:
    text = json.dumps(payload, ensure_ascii=False, indent=2, default=str)
    data: bytes | None = None
    try:
        data = (text + "\n").encode(sys.stdout.encoding or "utf-8")
    except UnicodeEncodeError:
        text = json.dumps(payload, ensure_ascii=True, indent=2, default=str)
        data = (text + "\n").encode("ascii")
    except (LookupError, TypeError):
        pass  # a stream without a usable encoding: print as given
    _write_whole(text, data)


def _write_whole(text: str, data: bytes | None) -> None:
    """``data`` (``text`` encoded) on stdout's file, every byte: a buffered print
    cut by a signal whose handler returns drops the rest of what it was writing."""
    stream = sys.stdout
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # no file under it (io.StringIO)
        fd = None
    if fd is None or data is None:
        print(text, file=stream, flush=True)
        return
    stream.flush()  # what was printed before goes first
    _write_all(fd, data)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def version_document() -> dict[str, str]:
    """What ``--version`` says, as ``--json`` prints it."""
    from .._version import __version__

    return {"name": "hermes-fts", "version": __version__}


def human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def bar(fraction: float, width: int = 20) -> str:
    """``[####......]``: ``fraction`` (clamped to 0-1) of ``width`` cells filled."""
    fill = int(width * min(max(fraction, 0.0), 1.0))  # full only when complete
    return f"[{'#' * fill}{'.' * (width - fill)}]"


def use_color(stream: TextIO | None = None) -> bool:
    """Colour only on a terminal, only when ``NO_COLOR`` is unset or empty, and not on
    a ``TERM=dumb`` one (Emacs' shell), which shows the escapes as text."""
    stream = stream or sys.stdout
    if os.environ.get("NO_COLOR", "") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def highlight(text: str, color: bool, marks: tuple[str, str] = (MARK_OPEN, MARK_CLOSE)) -> str:
    """Turn the match ``marks`` (``>>> <<<``) into colour or plain brackets."""
    opening, closing = marks
    if color:
        return text.replace(opening, BOLD_MATCH).replace(closing, RESET)
    return text.replace(opening, "[").replace(closing, "]")


def style(text: str, code: str, color: bool) -> str:
    return f"{code}{text}{RESET}" if color else text


# Stored text printed to a terminal acts there: tool output keeps its colours, and an
# OSC sequence retitles the window.  Escape sequences (a lone ESC too: a snippet may cut
# one) and the other control characters go; tabs and line breaks stay.  The bidi
# embeddings, overrides and isolates go too: a stored U+202E shows what follows it
# reversed, the rest of the line included (the marks LRM and RLM stay).
_TERMINAL_CONTROLS = re.compile(
    r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])?"
    r"|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]"
)


def printable(text: str) -> str:
    """Stored ``text`` as a terminal may be given it: no escape sequence or control."""
    return _TERMINAL_CONTROLS.sub("", text)


def one_line(text: Any, width: int = LINE_CHARS) -> str:
    """``text`` with its whitespace runs folded to one space, cut to ``width`` characters,
    without escape sequences or controls (``printable``).  The cut falls where a
    reader's character ends: half an emoji family or a flag shows another one."""
    if text is None:
        return ""
    flat = " ".join(printable(str(text)).split())
    return flat if len(flat) <= width else flat[: char_start(flat, width - 1)] + "\u2026"


_MARKS = re.compile("(" + "|".join(SEARCH_MARKS) + ")")


def marked_line(text: Any, width: int, color: bool) -> str:
    """A snippet as ``one_line`` shows text, ``width`` characters of it besides its
    ``SEARCH_MARKS``, the marks as ``highlight`` shows them.  A cut inside a mark
    closes it: the match's colour (or ``[``) ran on to the shell's prompt."""
    if text is None:
        return ""
    opening, closing = SEARCH_MARKS
    pieces = _MARKS.split(" ".join(printable(str(text)).split()))
    shown = sum(len(piece) for piece in pieces if piece not in SEARCH_MARKS)
    out: list[str] = []
    room, inside = width - 1, False  # when cut, the last character is the ellipsis
    for piece in pieces:
        if piece in SEARCH_MARKS:
            inside = piece == opening
        elif shown > width and len(piece) > room:
            out += [piece[: char_start(piece, room)], closing * inside, "\u2026"]
            break
        else:
            room -= len(piece)
        out.append(piece)
    return highlight("".join(out), color, SEARCH_MARKS)


def pad(text: str, width: int) -> str:
    """``text`` and the spaces that make it ``width`` terminal columns wide (a CJK
    character takes two, a combining mark none)."""
    return text + " " * max(0, width - columns(text))
