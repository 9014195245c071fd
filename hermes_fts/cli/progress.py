"""The progress ``hermes-fts optimize-storage`` shows on stderr.

On a terminal one line is redrawn in place; anywhere else (a log, a pipe) a
plain line is written every few seconds, with no carriage returns, and once
more when the backfill completes.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Callable

from .output import bar

PLAIN_EVERY_S = 5.0  # seconds between lines when stderr is not a terminal


def _eta(seconds: float) -> str:
    seconds = int(max(seconds, 0))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


# Phases that count their work, drawn as a bar: what they do, and what they count.
_COUNTED = {"backfill": ("Indexing", "messages"), "rank_bounds": ("Measuring", "words")}


def _is_terminal(stream: Any) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class ProgressBar:
    """Bar, percent, messages, rate and time left for one whole backfill.

    Called with the events ``SessionStore.optimize_storage(progress=...)``
    reports: ``indexed`` and ``total`` count messages over the whole job.  The
    rate counts only what this run indexed, so a resumed run is not credited
    with the earlier run's work.  A phase change ends the bar and prints the
    phase's label.
    """

    def __init__(
        self,
        stream: Any = None,
        width: int = 28,
        clock: Callable[[], float] = time.monotonic,
        terminal: bool | None = None,
    ) -> None:
        self.stream = stream or sys.stderr
        self.width = width
        self.clock = clock
        self.terminal = _is_terminal(self.stream) if terminal is None else terminal
        self.start: float | None = None
        self.first_indexed = 0
        self.last_plain: float | None = None
        self.last_line = ""
        self.phase = ""
        self.drawn = False

    def __call__(self, ev: dict[str, Any]) -> None:
        phase = ev.get("phase", "")
        if phase != self.phase:
            self._end_line()
            self.start = None  # each counted phase has its own rate
        if phase in _COUNTED and ev.get("total"):
            self._bar(ev)
        elif phase != self.phase:
            label = {
                "repair": "Checking indexes…",
                "backfill": "Indexes complete.",
                "time": "Filling the time table (time sorts)…",
                "rank_bounds": "Measuring frequent words (rank bounds)…",
                "vacuum": "Compacting database (VACUUM)…",
                "done": "Done.",
            }.get(phase)
            if label:
                print(label, file=self.stream, flush=True)
        self.phase = phase

    def _line(self, ev: dict[str, Any], now: float) -> str:
        indexed, total, percent = int(ev["indexed"]), int(ev["total"]), int(ev["percent"])
        if self.start is None:
            self.start, self.first_indexed = now, indexed
        elapsed = now - self.start
        rate = (indexed - self.first_indexed) / elapsed if elapsed > 0 else 0.0
        left = f"left {_eta((total - indexed) / rate)}" if rate > 0 else "left -:--:--"
        doing, things = _COUNTED.get(str(ev.get("phase", "")), _COUNTED["backfill"])
        return (
            f"{doing} {bar(percent / 100, self.width)} {percent:3d}%  "
            f"{indexed:,}/{total:,} {things}  {rate:,.0f} {things}/s  {left}"
        )

    def _bar(self, ev: dict[str, Any]) -> None:
        now = self.clock()
        line = self._line(ev, now)
        if self.terminal:
            self.stream.write("\r" + line)
            self.drawn = True
        else:
            complete = int(ev["percent"]) >= 100
            due = self.last_plain is None or now - self.last_plain >= PLAIN_EVERY_S
            if not (due or complete) or line == self.last_line:
                return
            self.stream.write(line + "\n")
            self.last_plain, self.last_line = now, line
        self.stream.flush()

    def _end_line(self) -> None:
        if self.drawn:
            self.stream.write("\n")
            self.drawn = False

    def close(self) -> None:
        self._end_line()
