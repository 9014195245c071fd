"""``hermes-fts bench``: the indexes timed against a LIKE scan on the user's own
store, read-only (``hermes_fts.bench`` does the timing; this prints it)."""

from __future__ import annotations

import argparse
import math
import sys
import time
from typing import Any

from .. import bench
from .output import bar, emit_json, human_bytes
from .progress import PLAIN_EVERY_S, is_terminal, redraw, say, try_write
from .registry import bounded_int, command, open_db, profile_option


def _bench_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--per-band",
        type=bounded_int(1, 50),
        default=2,
        help="terms per frequency band and class (1-50, default 2)",
    )
    p.add_argument(
        "--repeats",
        type=bounded_int(1, 100),
        default=3,
        help="timed runs per term (1-100, default 3)",
    )
    p.add_argument("--seed", type=int, default=0, help="term sampling seed")
    profile_option(p)


@command(
    "bench", help="time the indexes against a LIKE scan on this store (read-only)", args=_bench_args
)
def cmd_bench(args: argparse.Namespace) -> int:
    terminal = not args.json and is_terminal(sys.stderr)
    # Off a terminal: when the last line was written.  Under --json a short bench
    # (a small store) writes none, as the other commands' progress on small stores.
    last_line: list[float] = [time.monotonic()] if args.json else []

    def progress(what: str) -> None:
        if terminal:
            redraw(sys.stderr, f" {what}")
        elif not last_line or time.monotonic() - last_line[0] >= PLAIN_EVERY_S:
            last_line[:] = [time.monotonic()]
            # --json: a note event, as the other long commands' progress.
            say(f"bench: {what}", args.json)

    try:
        with open_db(args, readonly=True) as store:
            report = bench.run(store, args.per_band, args.repeats, args.seed, progress)
    finally:  # also on Ctrl-C, so the error line does not run into the term shown
        if terminal:
            try_write(sys.stderr, "\r\033[K")
    if args.json:
        emit_json({"success": True, **report})
        return 0
    print(f"Store: {report['db']} ({human_bytes(report['text_bytes'])} of text)")
    print(
        f"{'class':11} {'terms':>5} {'index ms':>9} {'LIKE ms':>9} {'ratio':>7} "
        f"{'worst':>7}  {'recall':>6}  routes / worst term"
    )
    for row in report["classes"]:
        recall = "-" if row["min_recall"] is None else f"{row['min_recall']:.3f}"
        print(
            f"{row['class']:11} {row['terms']:>5} {row['median_index_ms']:>9.2f} "
            f"{row['median_like_ms']:>9.1f} {row['median_ratio'] or 0:>6.0f}x "
            f"{row['worst_ratio'] or 0:>6.0f}x  {recall:>6}  {row['routes']} / "
            f"{row['worst_term']}"
        )
    for index, size in report["sizes"].items():
        print(f"{index:22} {human_bytes(size['bytes']):>10} = {size['x_text'] or 0:.2f}x text")
    if sys.stdout.isatty():
        _print_ratio_chart(report["classes"])
    return 0


def _print_ratio_chart(classes: list[dict[str, Any]]) -> None:
    """Median speed-up per class on a log scale (1x empty, the largest ratio full)."""
    ratios = {row["class"]: row["median_ratio"] or 0.0 for row in classes}
    top = max([math.log10(r) for r in ratios.values() if r > 1] or [0.0])
    print("\nindex vs LIKE, median speed-up (log scale):")
    for name, ratio in ratios.items():
        fraction = math.log10(ratio) / top if top > 0 and ratio > 1 else 0.0
        print(f"  {name:11} {bar(fraction, 30)} {ratio:,.0f}x")
