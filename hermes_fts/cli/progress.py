"""The progress ``hermes-fts optimize-storage``, ``sync``, ``status`` and ``read --full``
show on stderr, and the line a ``search`` shows while it waits on a slow scan.

On a terminal one line is redrawn in place; anywhere else (a log, a pipe) a
plain line is written every few seconds, with no carriage returns, and once
more when a step completes.  With ``--json`` the same lines are JSON
objects, one a line (``event``: ``progress``, ``phase`` or ``note``), so
stdout stays the command's one JSON document.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Iterator
from typing import Any, Callable

from .._display import fit_columns
from .output import bar

PLAIN_EVERY_S = 5.0  # seconds between lines when stderr is not a terminal


def _eta(seconds: float) -> str:
    seconds = int(max(seconds, 0))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


# Phases that count their work, drawn as a bar: what they do, and what they count.
_COUNTED = {
    "pending": ("Applying", "messages"),
    "repair": ("Checking", "indexes"),
    "backfill": ("Indexing", "messages"),
    "time": ("Filling", "ids"),
    "rank_bounds": ("Measuring", "words"),
    "text": ("Measuring text", "ids"),
    "read": ("Reading", "messages"),
}
_LABELS = {
    "pending": "Applying the pending CJK changes…",
    "repair": "Checking indexes…",
    "backfill": "Indexes complete.",
    "time": "Filling the time table (time sorts)…",
    "rank_bounds": "Measuring frequent words (rank bounds)…",
    "vacuum": "Compacting database (VACUUM)…",
    "done": "Done.",
    "text": "Measuring the text…",
    "sizes": "Measuring the indexes…",
}


def try_write(stream: Any, text: str) -> bool:
    """Write ``text`` to ``stream`` now; False when it cannot be written.

    Progress only says how the work goes: a reader that went away (``2>&1 |
    head``) or a stream that fails must not stop the work, which then ran
    half and exited 0 as if done.
    """
    try:
        stream.write(text)
        stream.flush()
    except OSError:
        return False
    return True


def say(text: str, as_json: bool = False, stream: Any = None, **fields: Any) -> None:
    """A line for people on stderr (stdout stays the command's output); under
    ``--json`` a ``note`` event holding it, with ``fields``, ASCII as the other
    events: stderr may not encode a CJK path, and ``?`` in its place loses it."""
    if as_json:
        text = json.dumps({"event": "note", "message": text, **fields})
    try_write(stream or sys.stderr, text + "\n")


def say_library_warnings(as_json: bool, stopped: Callable[[], bool] = lambda: False) -> None:
    """The package's warnings (a run stopped by a full disk …) as ``say`` lines: Python's
    last-resort handler printed them as bare text amid ``--json``'s event lines.  None
    once ``stopped()`` (Ctrl-C): a statement it cut short logs a failure that is none."""
    import logging

    class Say(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if not stopped():
                say(record.getMessage(), as_json, level=record.levelname.lower())

    logger = logging.getLogger("hermes_fts")
    if not logger.handlers:
        logger.addHandler(Say(logging.WARNING))


def is_terminal(stream: Any) -> bool:
    """A terminal that can redraw a line: ``TERM=dumb`` (Emacs' shell, some CI
    consoles) shows ESC [K as text, so it gets plain lines."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


def _line_room(stream: Any) -> int:
    """Columns a redrawn line may take: fewer than the terminal's width, since a
    line that fills it wraps and ESC [K erases only the last row (``COLUMNS`` wins)."""
    try:
        width = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        width = 0
    if width <= 0:
        try:
            width = os.get_terminal_size(stream.fileno()).columns
        except (AttributeError, OSError, ValueError):
            width = 0
    return max(width or 80, 2) - 1  # 0: a terminal that does not know its width


def redraw(stream: Any, text: str) -> bool:
    """``text`` over the terminal line the cursor is on, cut to fit it; False when
    it cannot be written (``try_write``)."""
    return try_write(stream, "\r\x1b[K" + fit_columns(text, _line_room(stream)))


@contextlib.contextmanager
def waiting(text: str, as_json: bool = False, stream: Any = None, **fields: Any) -> Iterator[None]:
    """``text`` on stderr while the work inside runs: on a terminal one line, erased
    when it ends (the answer follows); anywhere else ``say``'s line, which stays."""
    stream = stream or sys.stderr
    if as_json or not is_terminal(stream):
        say(text, as_json, stream, **fields)
        yield
        return
    drawn = redraw(stream, text)
    try:
        yield
    finally:
        if drawn:
            try_write(stream, "\r\x1b[K")


# Messages the CJK index cannot answer from which a search says what it waits for.
SCAN_NOTE_PENDING = 20_000


def scan_note(store: Any) -> str | None:
    """What a search of ``store`` waits for while the CJK index cannot answer many rows
    (seconds on a long history, with nothing said): rows that wait for it, or a store
    it does not serve (not built, half built, the extension off), read by an exact scan."""
    from ..store import slowed_why  # with the store stack, which the caller opened

    state = store.index_state()
    cjk, pending = state.get("hermes_fts_cjk") or {}, int(state.get("cjk_pending") or 0)
    gap = cjk.get("unindexed_range") or (0, 0)
    unserved = 0 if cjk.get("served") else int(state.get("message_id_max") or 0)
    scanned = max(unserved, gap[1] - gap[0])
    if scanned >= SCAN_NOTE_PENDING:
        codes = store.slowed_by()
        # No code: the extension is off or does not load, which the answer's note explains.
        why = (
            f", since {slowed_why(codes)} (`hermes-fts optimize-storage` makes searches fast)"
            if codes
            else " without the CJK extension"
        )
        return f"Searching up to {scanned:,} messages by a slower exact scan{why}…"
    if pending < SCAN_NOTE_PENDING:
        return None
    return (
        f"Searching; {pending:,} messages wait for the search index and are read by "
        "a slower exact scan (`hermes-fts sync` adds them)…"
    )


class ProgressBar:
    """One line per step: bar, percent, count, rate and time left of the step.

    Called with the events ``SessionStore.optimize_storage(progress=...)``
    reports: a counted phase (``_COUNTED``) gives ``indexed`` of ``total``
    in its own unit.  The rate counts only what this step did since its
    first event, so a resumed run is not credited with an earlier run's
    work and no step inherits another's count; until a rate is known the
    time left says so.  A phase change ends the line and prints the
    phase's label.  ``json_lines`` writes each line as a JSON object.
    """

    def __init__(
        self,
        stream: Any = None,
        width: int = 28,
        clock: Callable[[], float] = time.monotonic,
        terminal: bool | None = None,
        json_lines: bool = False,
    ) -> None:
        self.stream = stream or sys.stderr
        self.width = width
        self.clock = clock
        self.json_lines = json_lines
        terminal = is_terminal(self.stream) if terminal is None else terminal
        self.terminal = terminal and not json_lines
        self.start: float | None = None
        self.first_indexed = 0
        self.last_plain: float | None = None
        self.last_line = ""
        self.phase = ""
        self.drawn = False
        self.lost = False  # the stream failed: the work goes on without progress

    def _write(self, text: str) -> None:
        if not self.lost:
            self.lost = not try_write(self.stream, text)

    def __call__(self, ev: dict[str, Any]) -> None:
        phase = ev.get("phase", "")
        if phase != self.phase:
            self._end_line()
            self.start = None  # each counted phase has its own rate
            self.last_plain = None
            label = _LABELS.get(phase)
            if label and not (phase in _COUNTED and ev.get("total")):
                self._write_phase(phase, label)
        if phase in _COUNTED and ev.get("total"):
            self._bar(ev)
        self.phase = phase

    def _write_phase(self, phase: str, label: str) -> None:
        if self.json_lines:
            label = json.dumps({"event": "phase", "phase": phase, "message": label})
        self._write(label + "\n")

    def _measure(self, ev: dict[str, Any], now: float) -> dict[str, Any]:
        """The step's counts, rate (per second, None until known) and seconds left."""
        indexed, total = int(ev["indexed"]), int(ev["total"])
        if self.start is None:
            self.start, self.first_indexed = now, indexed
        elapsed = now - self.start
        done_here = indexed - self.first_indexed
        rate = done_here / elapsed if elapsed > 0 and done_here > 0 else None
        doing, unit = _COUNTED[str(ev["phase"])]
        return {
            "event": "progress",
            "phase": ev["phase"],
            "step": doing,
            "unit": unit,
            "done": indexed,
            "total": total,
            "percent": int(ev["percent"]),
            "rate": None if rate is None else round(rate, 1),
            "seconds_left": None if rate is None else round(max(total - indexed, 0) / rate),
        }

    def _line(self, m: dict[str, Any], room: int | None = None) -> str:
        """The line; within ``room`` columns the bar narrows first, then goes."""
        if self.json_lines:
            return json.dumps(m)
        whole = self._text(m, self.width)
        if room is None or len(whole) <= room:
            return whole
        narrower = self.width - (len(whole) - room)
        return self._text(m, narrower if narrower >= 5 else 0)

    def _text(self, m: dict[str, Any], width: int) -> str:
        unit = m["unit"]
        # Below one a second (an index checked in seconds), tenths: "0 indexes/s" reads as stalled.
        if m["rate"] is None:
            rate = "rate -"
        else:
            rate = f"{m['rate']:,.{1 if m['rate'] < 1 else 0}f} {unit}/s"
        left = "-:--:--" if m["seconds_left"] is None else _eta(m["seconds_left"])
        drawn = f" {bar(m['percent'] / 100, width)}" if width else ""
        return (
            f"{m['step']}{drawn} {m['percent']:3d}%  "
            f"{m['done']:,}/{m['total']:,} {unit}  {rate}  left {left}"
        )

    def _bar(self, ev: dict[str, Any]) -> None:
        now = self.clock()
        room = _line_room(self.stream) if self.terminal else None
        line = self._line(self._measure(ev, now), room)
        if self.terminal:
            # Erase the old line first: a shorter one (a rate that fell to fewer
            # digits) would leave the old line's last characters after it.
            if not self.lost:
                self.lost = not redraw(self.stream, line)
            self.drawn = True
        else:
            complete = int(ev["percent"]) >= 100
            due = self.last_plain is None or now - self.last_plain >= PLAIN_EVERY_S
            if not (due or complete) or line == self.last_line:
                return
            self._write(line + "\n")
            self.last_plain, self.last_line = now, line

    def _end_line(self) -> None:
        if self.drawn:
            self._write("\n")
            self.drawn = False

    def close(self) -> None:
        self._end_line()
