"""cjk_snippet() on a long text full of hits, with a window as long as the caller asks.

Every hit is a candidate window's start, and the window's score counts the
phrases inside it.  Counting them anew for each start made the cost grow with
hits times hits per window (a 10 MB text of one repeated word, max_chars
20,000: over a minute); the windows are now swept once, each hit entering and
leaving once.  Reported, never asserted.

    python -m pytest benchmarks/test_bench_snippet_hits.py
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

import pytest

TEXTS = {
    "中国 x 150,000 (300,000 characters)": ("中国" * 150_000, "中国", 150_000),
    "'a ' x 1,000,000 (2 MB)": ("a " * 1_000_000, "a", 20_000),
}


@pytest.mark.parametrize("name", list(TEXTS))
def test_snippet_of_a_text_full_of_hits(
    benchmark: Any, connect_db: Callable[..., sqlite3.Connection], name: str
) -> None:
    text, query, max_chars = TEXTS[name]
    conn = connect_db(need_extension=True)
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='cjk_unicode61')")
    conn.execute("INSERT INTO t VALUES (?)", (text,))
    sql = "SELECT cjk_snippet(t, 0, '[', ']', '…', ?) FROM t WHERE t MATCH ?"
    (snippet,) = benchmark(lambda: conn.execute(sql, (max_chars, query)).fetchone())
    assert snippet.count("[") > 0
