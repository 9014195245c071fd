"""One very long message on the LIKE route: what a search costs as the row grows.

A store Hermes wrote and hermes-fts has not synced yet, opened read-only (as
the plugin opens it), is searched by the LIKE scan.  Its one long message
(1 MB and 11 MB of mixed Chinese, Japanese, half-width kana and English)
holds the term once, at its very end: the LIKE scan reads the whole row, and
the snippet reads up to its cap (``LIKE_SNIPPET_READ`` characters; the 1 MB
row is shorter, so its snippet reads it all).  The 11 MB row's search should
cost at most about 11 times the 1 MB row's (issue 33: it cost 8-9 s, the
snippet folding the text one character at a time in Python).
``fields=['id']`` asks for no snippet, so none is cut.  The ratio is
reported, never asserted.

    python -m pytest benchmarks/test_bench_long_row.py
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from hermes_fts.store import SessionStore

TABLE = "One long message on the LIKE route (read-only store, not synced)"
SIZES_MB = (1, 11)
UNIT = "部署脚本又失败了 check deploy.sh permissions ｶﾞ東京タワー らーめん "
QUERIES = {"latin": "needle", "folded CJK": "东京塔"}  # 东京塔 is written 東京塔 at the end
FIELDS = {"all": None, "id only": ["id"]}
HERMES_SCHEMA = """
CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, model TEXT,
    parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL, title TEXT);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,
    role TEXT NOT NULL, content TEXT, tool_calls TEXT, tool_name TEXT, timestamp REAL NOT NULL);
"""
_seconds: dict[tuple[str, str, int], float] = {}


def _store(folder: Path, megabytes: int) -> Path:
    db = folder / f"state-{megabytes}mb.db"
    if db.exists():
        return db
    text = UNIT * (megabytes * 1_000_000 // len(UNIT.encode()))
    conn = sqlite3.connect(db)
    conn.executescript(HERMES_SCHEMA)
    conn.execute("INSERT INTO sessions VALUES ('s1', 'cli', 'm', NULL, 100, NULL, 'long')")
    conn.executemany(
        "INSERT INTO messages(session_id, role, content, timestamp) VALUES ('s1', ?, ?, ?)",
        [("user", "short message", 101), ("tool", text + " 東京塔 needle", 102)],
    )
    conn.commit()
    conn.close()
    return db


def _ratios(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        base = _seconds.get((row["query"], row["fields"], SIZES_MB[0]))
        if base:
            row["x 1 MB"] = _seconds[(row["query"], row["fields"], row["MB"])] / base


@pytest.mark.parametrize("fields", sorted(FIELDS))
@pytest.mark.parametrize("query", sorted(QUERIES))
@pytest.mark.parametrize("megabytes", SIZES_MB)
def test_long_row_search(
    benchmark: Any,
    bench_report: Any,
    tmp_path_factory: pytest.TempPathFactory,
    megabytes: int,
    query: str,
    fields: str,
) -> None:
    folder = tmp_path_factory.getbasetemp() / "long_row"
    folder.mkdir(exist_ok=True)
    with SessionStore(_store(folder, megabytes), readonly=True) as st:
        if not st.cjk_fold_available:
            pytest.skip("the extension's cjk_fold is unavailable: LIKE does not fold")
        term = QUERIES[query]
        assert st.describe_search_path(term) == "like_scan"
        benchmark.group = f"long row: {query}, {fields}"
        found: list[dict[str, Any]] = []

        def run() -> None:
            found[:] = st.search_messages(term, fields=FIELDS[fields])

        benchmark.pedantic(run, rounds=5, iterations=1, warmup_rounds=1)
    assert len(found) == 1  # the long row, found by its last characters
    if fields == "all" and megabytes == 1:
        assert found[0]["snippet"].endswith("<<<" if query == "latin" else "<<< needle")
    elif fields == "all":  # the hit lies past the snippet's cap: the head, unmarked
        assert found[0]["snippet"].startswith(UNIT[:20]) and ">>>" not in found[0]["snippet"]
    stats = benchmark.stats.stats if benchmark.stats else None
    if stats is None:  # --benchmark-disable: nothing measured
        return
    _seconds[(query, fields, megabytes)] = stats.min
    benchmark.extra_info["megabytes"] = megabytes
    bench_report.finalizer(TABLE, _ratios)
    bench_report.add(
        TABLE, {"query": query, "fields": fields, "MB": megabytes, "ms": stats.min * 1000}
    )
