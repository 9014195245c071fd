"""The progress line ``hermes-fts optimize-storage`` draws on stderr."""

from __future__ import annotations

import sys
import time
from typing import Any

from .output import bar


def _eta(seconds: float) -> str:
    seconds = int(max(seconds, 0))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


class ProgressBar:
    """One rewritten stderr line: bar, percent, rows, rate, time left.

    Called with the events ``SessionStore.optimize_storage(progress=...)``
    reports; a phase change ends the bar's line and prints the phase's label.
    """

    def __init__(self, stream: Any = None, width: int = 28) -> None:
        self.stream = stream or sys.stderr
        self.width = width
        self.start: float | None = None
        self.first_indexed = 0
        self.phase = ""
        self.drawn = False

    def __call__(self, ev: dict[str, Any]) -> None:
        phase = ev.get("phase", "")
        if phase == "backfill" and ev.get("total"):
            self._bar(ev)
        elif phase != self.phase:
            self._end_line()
            label = {
                "repair": "Checking indexes…",
                "backfill": "Indexes complete.",
                "vacuum": "Compacting database (VACUUM)…",
                "done": "Done.",
            }.get(phase)
            if label:
                print(label, file=self.stream, flush=True)
        self.phase = phase

    def _bar(self, ev: dict[str, Any]) -> None:
        now = time.monotonic()
        indexed, total = int(ev["indexed"]), int(ev["total"])
        if self.start is None:
            self.start, self.first_indexed = now, indexed
        done = indexed - self.first_indexed
        elapsed = now - self.start
        # The store measures the rate from the start of the backfill itself.
        rate = float(ev["rate"]) if ev.get("rate") else (done / elapsed if elapsed > 0 else 0.0)
        left = (total - indexed) / rate if rate > 0 else 0.0
        line = (
            f"\rRebuilding index {bar(ev['percent'] / 100, self.width)} "
            f"{ev['percent']:3d}%  {indexed:,}/{total:,} rows  {rate:,.0f} rows/s  "
            f"left {_eta(left)}"
        )
        self.stream.write(line)
        self.stream.flush()
        self.drawn = True

    def _end_line(self) -> None:
        if self.drawn:
            self.stream.write("\n")
            self.drawn = False

    def close(self) -> None:
        self._end_line()
