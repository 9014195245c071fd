"""Shared fixtures for the benchmark suites.

Size: ``--bench-size N`` (``10k``, ``1M`` work too) or ``HERMES_BENCH_MESSAGES``;
the default is small so a smoke run in CI stays well under two minutes.
Every suite records its rows with ``bench_report.add(table, row)``; the tables
are printed as Markdown at the end of the run (paste them into README.md).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks import corpus

DEFAULT_BENCH_SIZE = 2000


def parse_size(text: str) -> int:
    """``"2000"``, ``"10k"``, ``"1M"`` → int."""
    t = text.strip().lower().replace("_", "")
    mult = 1
    if t.endswith("k"):
        mult, t = 1000, t[:-1]
    elif t.endswith("m"):
        mult, t = 1000_000, t[:-1]
    value = int(float(t) * mult)
    if value <= 0:
        raise ValueError(f"benchmark size must be positive, got {text!r}")
    return value


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("hermes-fts benchmarks")
    group.addoption(
        "--bench-size",
        default=None,
        help="messages per generated corpus (e.g. 2000, 10k, 1M); "
        f"default $HERMES_BENCH_MESSAGES or {DEFAULT_BENCH_SIZE}",
    )
    group.addoption("--bench-seed", type=int, default=0, help="corpus seed (default 0)")


@pytest.fixture(scope="session")
def bench_size(request: pytest.FixtureRequest) -> int:
    raw = request.config.getoption("--bench-size") or os.environ.get("HERMES_BENCH_MESSAGES")
    return parse_size(raw) if raw else DEFAULT_BENCH_SIZE


@pytest.fixture(scope="session")
def bench_seed(request: pytest.FixtureRequest) -> int:
    return int(request.config.getoption("--bench-seed"))


@pytest.fixture(scope="session")
def lang_texts(bench_size: int, bench_seed: int) -> Callable[[str], list[str]]:
    """``lang_texts("zh")`` → the same ``bench_size`` messages every time it is asked."""
    cache: dict[str, list[str]] = {}

    def get(lang: str) -> list[str]:
        if lang not in cache:
            cache[lang] = corpus.texts(lang, bench_size, bench_seed)
        return cache[lang]

    return get


def _extension_status() -> str | None:
    """None when ``hermes_fts.connect`` gives a connection with cjk_unicode61, else why not."""
    try:
        import hermes_fts

        conn = hermes_fts.connect(":memory:")
        try:
            conn.execute("CREATE VIRTUAL TABLE temp.probe USING fts5(x, tokenize='cjk_unicode61')")
        finally:
            conn.close()
    except Exception as exc:  # any failure means: benchmark without the extension
        return f"hermes_fts extension unavailable: {type(exc).__name__}: {exc}"
    return None


@pytest.fixture(scope="session")
def extension_missing() -> str | None:
    return _extension_status()


@pytest.fixture(scope="session")
def connect_db(extension_missing: str | None) -> Callable[..., sqlite3.Connection]:
    """Open a connection; with the extension when it is available.

    All tables of one comparison go through the same SQLite library, so the
    numbers compare tokenizers, not builds.
    """

    def open_(path: str = ":memory:", need_extension: bool = False) -> sqlite3.Connection:
        if extension_missing is None:
            import hermes_fts

            return hermes_fts.connect(path)
        if need_extension:
            pytest.skip(extension_missing)
        return sqlite3.connect(path)

    return open_


@pytest.fixture(scope="session")
def bench_store(bench_size: int, bench_seed: int) -> Path:
    """A generated store of ``bench_size`` messages after optimize-storage (cached), read-only."""
    if corpus.store_class() is None:
        pytest.skip("hermes_fts.SessionStore is not available yet")
    return corpus.cached_store(bench_size, bench_seed, optimized=True)


def merge_indexes(store: Any) -> None:
    """FTS5 'optimize' on each index of a writable ``store``: the one segment each that
    optimize-storage leaves, which the cached stores (built without VACUUM) lack."""
    from hermes_fts.index import lifecycle

    lifecycle.merge_segments(store._conn, store._caps)


@pytest.fixture(scope="module")
def store(bench_store: Path) -> Iterator[Any]:
    """The benchmark store opened read-only, with the extension (the CJK routes to time)."""
    from hermes_fts.store import SessionStore

    st = SessionStore(bench_store, readonly=True)
    if not st.cjk_available:
        pytest.skip("cjk_unicode61 extension unavailable: nothing to compare")
    yield st
    st.close()


class BenchReport:
    """Rows collected by the suites, printed as Markdown tables at the end."""

    def __init__(self) -> None:
        self.tables: dict[str, list[dict[str, Any]]] = {}
        self.notes: dict[str, str] = {}
        self._finalizers: dict[str, Callable[[list[dict[str, Any]]], None]] = {}

    def add(self, table: str, row: dict[str, Any]) -> None:
        self.tables.setdefault(table, []).append(row)

    def rows(self, table: str) -> list[dict[str, Any]]:
        return self.tables.get(table, [])

    def finalizer(self, table: str, fn: Callable[[list[dict[str, Any]]], None]) -> None:
        """``fn(rows)`` runs once before the table is printed (e.g. to add ratios)."""
        self._finalizers.setdefault(table, fn)

    def markdown(self) -> Iterator[str]:
        for table, rows in self.tables.items():
            fin = self._finalizers.get(table)
            if fin is not None:
                fin(rows)
            cols: list[str] = []
            for row in rows:
                cols.extend(k for k in row if k not in cols)
            yield f"### {table}"
            if table in self.notes:
                yield self.notes[table]
            yield ""
            yield "| " + " | ".join(cols) + " |"
            yield "|" + "|".join("---" for _ in cols) + "|"
            for row in rows:
                yield "| " + " | ".join(_fmt(row.get(c, "")) for c in cols) + " |"
            yield ""


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.3g}" if abs(v) < 100 else f"{v:,.0f}"
    return str(v)


_REPORT = BenchReport()


@pytest.fixture(scope="session")
def bench_report() -> BenchReport:
    return _REPORT


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _REPORT.tables:
        return
    terminalreporter.section("hermes-fts benchmark tables")
    for line in _REPORT.markdown():
        terminalreporter.write_line(line)
