"""Small API edges: lone surrogates, a folder as a store, LIKE scans with many terms, sizes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import hermes_fts
from hermes_fts.index import maintain as indexing
from hermes_fts.search.like import MAX_LIKE_ALTERNATIVES, QueryTooBroad
from hermes_fts.store import SessionStore, StoreError
from hermes_fts.tool import session_search

pytestmark = pytest.mark.skipif(
    not hermes_fts.extension_path(), reason="needs the built cjk_unicode61 extension"
)


# --------------------------------------------------------------------------- tokenize


def test_tokenize_lone_surrogate_is_a_separator_like_invalid_utf8_in_sqlite():
    assert hermes_fts.tokenize("\ud800") == []
    tokens = hermes_fts.tokenize("a\ud800b")
    # The surrogate is 3 bytes (its surrogatepass encoding) the tokenizer skips.
    assert [(t.text, t.start, t.end) for t in tokens] == [("a", 0, 1), ("b", 4, 5)]
    # The same bytes stored by another client tokenize the same way in SQLite.
    conn = hermes_fts.connect(":memory:")
    raw = "a\ud800b".encode("utf-8", "surrogatepass")
    (json_text,) = conn.execute("SELECT cjk_tokens(CAST(? AS TEXT))", [raw]).fetchone()
    assert '"token":"b","start":4' in json_text
    assert [t.text for t in hermes_fts.tokenize("東京\udfff塔", query=True)] == ["東京", "塔"]


def test_tokenize_refuses_what_is_not_text_with_a_type_error():
    for value in (None, b"abc", 123):
        with pytest.raises(TypeError, match=f"not {type(value).__name__}"):
            hermes_fts.tokenize(value)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- a folder


@pytest.mark.parametrize("readonly", [True, False])
def test_a_directory_is_a_clear_store_error(tmp_path: Path, readonly: bool):
    folder = tmp_path / "somedir"
    folder.mkdir()
    with pytest.raises(StoreError, match="is a directory, not a session store") as exc:
        SessionStore(folder, readonly=readonly)
    assert exc.value.wrong_path
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("readonly", [True, False])
def test_a_file_that_is_not_sqlite_is_a_clear_store_error(tmp_path: Path, readonly: bool):
    path = tmp_path / "notes.txt"
    path.write_text("hello, not a database\n")
    with pytest.raises(StoreError, match="is not a SQLite database") as exc:
        SessionStore(path, readonly=readonly)
    assert exc.value.wrong_path
    assert path.read_text() == "hello, not a database\n"


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda path: path.write_bytes(b""), "is empty, not a session store"),
        (lambda path: sqlite3.connect(path).execute("CREATE TABLE t(x)").connection.commit(),
         "not a Hermes session store"),
    ],
    ids=["empty", "another_application"],
)  # fmt: skip
def test_a_read_only_open_of_what_holds_no_hermes_tables_is_refused(tmp_path: Path, make, said):
    # Opened, it failed every search and read later with "no such table".
    path = tmp_path / "other.db"
    make(path)
    before = path.read_bytes()
    with pytest.raises(StoreError, match=said) as exc:
        SessionStore(path, readonly=True)
    assert exc.value.wrong_path
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    "make",
    [
        lambda conn: conn.execute("CREATE TABLE notes (x TEXT)"),
        lambda conn: conn.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY)"),
    ],
    ids=["another_application", "sessions_only"],
)  # fmt: skip
def test_a_write_open_of_another_applications_database_is_refused_untouched(tmp_path: Path, make):
    # It added Hermes' tables and our index to the other application's file, unsaid.
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    make(conn)
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="not a Hermes session store") as exc:
        SessionStore(path)
    assert exc.value.wrong_path
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.db"]


def test_a_write_open_of_a_sqlite_file_without_tables_makes_it_a_store(tmp_path: Path):
    path = tmp_path / "blank.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 7")  # a database file, with no table yet
    conn.commit()
    conn.close()
    with SessionStore(path) as store:
        store.add_session("s1")
        assert store.get_session("s1") is not None


# --------------------------------------------------------------------------- LIKE bound


@pytest.fixture()
def emoji_store(tmp_path: Path):
    with SessionStore(tmp_path / "state.db") as store:
        store.add_session("s1", "cli")
        store.add_message("s1", "user", "party \U0001f600 time")
        yield store


def _emoji_or(count: int) -> str:
    return " OR ".join(chr(0x1F600 + i) for i in range(count))


def test_like_scan_over_the_term_bound_is_refused_with_how_to_narrow(emoji_store):
    query = _emoji_or(MAX_LIKE_ALTERNATIVES + 1)
    assert emoji_store.describe_search_path(query) == "like_scan"
    with pytest.raises(QueryTooBroad, match=f"{MAX_LIKE_ALTERNATIVES + 1} OR alternatives"):
        emoji_store.search_messages(query)
    out = session_search(emoji_store, query=query)
    assert out["success"] is False
    assert (
        f"at most {MAX_LIKE_ALTERNATIVES}" in out["error"] and "split the OR list" in out["error"]
    )


def test_over_the_bound_where_the_index_proposes_the_rows_says_no_index_is_exact(emoji_store):
    # Anna의 goes to fts_cjk_checked: an index is read there, so "no index serves it"
    # was untrue; what the bound is about, testing each row's text, holds on both routes.
    query = " OR ".join(f"Anna{i}의" for i in range(MAX_LIKE_ALTERNATIVES + 1))
    assert emoji_store.describe_search_path(query) == "fts_cjk_checked"
    with pytest.raises(QueryTooBroad, match="no index answers it exactly"):
        emoji_store.search_messages(query)


def test_like_scan_at_the_bound_runs_and_finds_every_match(emoji_store):
    out = session_search(emoji_store, query=_emoji_or(MAX_LIKE_ALTERNATIVES))
    assert out["success"] is True and out["count"] == 1


def test_many_anded_terms_are_not_alternatives(emoji_store):
    # ANDed terms stop at the first miss: they do not multiply a scan's work.
    query = " ".join(["\U0001f600"] + [chr(0x1F601 + i) for i in range(40)])
    assert emoji_store.describe_search_path(query) == "like_scan"
    assert session_search(emoji_store, query=query)["success"] is True


def test_an_indexed_query_with_many_terms_is_not_bounded(emoji_store):
    emoji_store.add_message("s1", "user", "word40 here")
    words = " OR ".join(f"word{i}" for i in range(MAX_LIKE_ALTERNATIVES + 10))
    assert emoji_store.describe_search_path(words) != "like_scan"
    assert session_search(emoji_store, query=words)["count"] == 1


# --------------------------------------------------------------------------- sizes


def test_optimize_sizes_are_the_main_file_and_the_wal_apart(tmp_path: Path):
    db = tmp_path / "state.db"
    with SessionStore(db) as store:
        store.add_session("s1", "cli")
        store.add_messages(
            {"session_id": "s1", "role": "user", "content": f"message number {i} " * 20}
            for i in range(400)
        )
        store._mark_fts_stale("test")
        wal = Path(str(db) + "-wal")
        main, log = db.stat().st_size, (wal.stat().st_size if wal.exists() else 0)
        assert log > 0 and store.disk_bytes() == main + log
        result = store.optimize_storage()
        # The WAL's pages go to the main file first: counted once, not on top.
        assert result["ok"] and result["wal_before"] == 0
        assert main <= result["size_before"] <= main + log
        assert result["size_after"] == db.stat().st_size
        # The VACUUM's copy does not stay in the WAL: it was truncated.
        assert result["wal_after"] == 0 and (not wal.exists() or wal.stat().st_size == 0)


def test_index_bytes_counts_an_inline_tables_content_copy(tmp_path: Path):
    conn = sqlite3.connect(tmp_path / "x.db")
    conn.execute("CREATE VIRTUAL TABLE demo_fts USING fts5(content)")
    conn.executemany("INSERT INTO demo_fts(content) VALUES (?)", [("é" * 500,)] * 10)
    data = conn.execute("SELECT SUM(length(block)) FROM demo_fts_data").fetchone()[0]
    assert indexing.index_bytes(conn, "demo_fts") == data + 10 * 1000  # 500 two-byte chars
    conn.execute("CREATE VIRTUAL TABLE ext_fts USING fts5(content, content='')")
    conn.execute("INSERT INTO ext_fts(rowid, content) VALUES (1, 'x')")
    data = conn.execute("SELECT SUM(length(block)) FROM ext_fts_data").fetchone()[0]
    assert indexing.index_bytes(conn, "ext_fts") == data


def test_the_errors_a_caller_catches_come_from_the_package() -> None:
    import hermes_fts.query.plan
    import hermes_fts.store
    from hermes_fts import QueryError, SearchRequest, StoreError

    assert issubclass(QueryError, ValueError) and issubclass(StoreError, Exception)
    assert {"QueryError", "StoreError", "SearchRequest"} <= set(hermes_fts.__all__)
    # The very classes the store and the query parser raise, not copies.
    assert StoreError is hermes_fts.store.StoreError
    assert QueryError is hermes_fts.query.plan.QueryError
    assert SearchRequest.__module__ == "hermes_fts.search.request"
