"""Rank bounds (index/rank_bounds.py, search/topk.py): a one-term search reads the index
block by block, best bound first, and its page stays the exact top of every match
while other processes change the store after the bounds were built."""

from __future__ import annotations

import json
import math
import random
import shutil
import sqlite3
import subprocess

import pytest
from _tool_fixtures import T0, open_store

import hermes_fts
from hermes_fts import cli
from hermes_fts.index import rank_bounds, schema
from hermes_fts.search import run as search
from hermes_fts.search import topk

FILLER = ["filler", "noise", "padding", "text", "more", "words"]


def _store(path, rows=20_000, seed=5):
    """Sessions of 30 messages in id order.  "alpha" is in most rows, once, among 20 to
    60 other words; a few short rows of the first blocks repeat it: those are the
    top of its ranking, and most blocks cannot reach them.  "bravo" is in some."""
    rng = random.Random(seed)
    st = open_store(path)
    for s in range(rows // 30 + 1):
        st.add_session(f"s{s:03d}", "cli", started_at=T0 + s)
    messages = []
    for i in range(rows):
        if i % 97 == 0 and i < 1500:
            words = ["alpha", "alpha", "filler"]
        else:
            words = rng.choices(FILLER, k=rng.randint(20, 60))
            words += ["alpha"] * (rng.random() < 0.7) + ["bravo"] * (rng.random() < 0.2)
        rng.shuffle(words)
        messages.append(
            {
                "session_id": f"s{i // 30:03d}",
                "role": rng.choice(["user", "assistant"]),
                "content": " ".join(words),
                "timestamp": T0 + i,
            }
        )
    st.add_messages(messages)
    return st


def _exact(store, query, **kw):
    """The page scored from every match: the search with rank bounds switched off."""
    saved = search.bounded_page
    search.bounded_page = lambda *a, **k: None
    try:
        return _ids(store, query, **kw)
    finally:
        search.bounded_page = saved


def _ids(store, query, **kw):
    return [r["id"] for r in store.search_messages(query, fields=("id",), **kw)]


@pytest.fixture(scope="module")
def original(tmp_path_factory):
    """The store written once, without bounds."""
    st = _store(tmp_path_factory.mktemp("original") / "state.db")
    yield st
    st.close()


def _copy(store, path):
    copy = sqlite3.connect(path)
    store._conn.backup(copy)
    copy.close()
    return open_store(path)


@pytest.fixture
def built(original, tmp_path, monkeypatch):
    """A copy of ``original`` with rank bounds (tokens in 100 rows or more)."""
    monkeypatch.setattr(rank_bounds, "FREQUENT", 100)
    st = _copy(original, tmp_path / "state.db")
    assert rank_bounds.build(st._conn)[schema.CJK] >= 2  # alpha and bravo at least
    st._seen.forget()
    yield st
    st.close()


def _reads_blocks(store, query, **kw):
    """How many blocks the search read, and its page."""
    read: list[int] = []
    original = topk._Reader.blocks

    def spy(self, blocks):
        blocks = list(blocks)
        before = set(self.read)
        original(self, blocks)
        read.extend(set(self.read) - before)

    topk._Reader.blocks = spy
    try:
        page = _ids(store, query, **kw)
        return len(read), page
    finally:
        topk._Reader.blocks = original


@pytest.mark.parametrize("sort", [None, "sessions"])
def test_a_common_word_reads_few_blocks_for_the_same_page(built, sort):
    blocks, page = _reads_blocks(built, "alpha", limit=5, sort=sort)
    assert page == _exact(built, "alpha", limit=5, sort=sort)
    total = (int(built._conn.execute("SELECT max(id) FROM messages").fetchone()[0]) >> 9) + 1
    assert 0 < blocks < total  # some blocks were never read


def _foreign(store):
    """A plain connection without the extension, as Hermes Agent writes."""
    return sqlite3.connect(store._path, isolation_level=None)


@pytest.mark.parametrize("sort", [None, "sessions"])
def test_a_row_changed_after_the_build_is_found(built, sort):
    """An old row rewritten to hold "bravo" at its peak: its block is dirty, read whole."""
    target = 17  # block 0, covered by the bounds
    with _foreign(built) as conn:
        conn.execute("UPDATE messages SET content = 'bravo bravo bravo' WHERE id = ?", (target,))
        dirty = [r[0] for r in conn.execute(f"SELECT block FROM {rank_bounds.DIRTY}")]
    assert dirty == [0]
    built._seen.forget()
    page = _ids(built, "bravo", limit=3, sort=sort)
    assert page == _exact(built, "bravo", limit=3, sort=sort)
    assert page[0] == target  # the shortest, most saturated row of all


def test_rows_added_and_deleted_after_the_build(built):
    last = int(built._conn.execute("SELECT max(id) FROM messages").fetchone()[0])
    with _foreign(built) as conn:
        conn.execute("DELETE FROM messages WHERE id BETWEEN 600 AND 700")
        conn.execute(
            "INSERT INTO messages(session_id, role, content, timestamp) "
            "VALUES ('s001', 'user', 'bravo bravo', ?)",
            (T0 + 9999,),
        )
        dirty = {r[0] for r in conn.execute(f"SELECT block FROM {rank_bounds.DIRTY}")}
    assert dirty == {600 >> 9}  # the insert is after the bounds: unknown, not dirty
    built._seen.forget()
    for sort in (None, "sessions"):
        page = _ids(built, "bravo", limit=4, sort=sort)
        assert page == _exact(built, "bravo", limit=4, sort=sort)
    assert _ids(built, "bravo", limit=1)[0] == last + 1
    assert rank_bounds.lag(built._conn) == {"newer_rows": 1, "dirty_blocks": 1, "ready": 1}


def test_filters_and_time_bounds_keep_the_exact_page(built):
    for kw in (
        {"role_filter": "user"},
        {"after": T0 + 500, "before": T0 + 2200},
        {"role_filter": "assistant", "sort": "sessions"},
        {"after": T0 + 1000, "sort": "sessions"},
    ):
        for limit in (1, 6, 40):
            assert _ids(built, "alpha", limit=limit, **kw) == _exact(
                built, "alpha", limit=limit, **kw
            ), kw


def test_a_phrase_is_bounded_by_its_tokens(built):
    with _foreign(built) as conn:
        conn.execute(
            "UPDATE messages SET content = content || ' alpha bravo' "
            "WHERE id % 7 = 0 AND id > 19000"
        )
    built._seen.forget()
    for sort in (None, "sessions"):
        assert _ids(built, '"alpha bravo"', limit=5, sort=sort) == _exact(
            built, '"alpha bravo"', limit=5, sort=sort
        )


def _statements(store, query, **kw):
    """The page of a search and the statements it ran that score rows of the index."""
    scored: list[str] = []
    store._conn.set_trace_callback(
        lambda sql: "hermes_fts_bm25" in sql and " MATCH " in sql and scored.append(sql)
    )
    try:
        return _ids(store, query, **kw), scored
    finally:
        store._conn.set_trace_callback(None)


@pytest.mark.parametrize("sort", [None, "sessions"])
def test_a_rare_phrase_of_common_words_is_read_in_one_statement(built, sort):
    """Both words have bounds in every block, the phrase is in few rows: it used to
    be read block by block, one statement per run of blocks, hundreds on a
    large store.  Its matches are read at once, and the page is the full
    pass's."""
    df = built._conn.execute(
        f"SELECT count(*) FROM {schema.CJK} WHERE {schema.CJK} MATCH ?", ('"alpha bravo"',)
    ).fetchone()[0]
    assert 0 < df < 1000  # rare beside its words
    for query, kw in (
        ("alpha-bravo", {}),
        ('"alpha bravo"', {"role_filter": "user"}),
        ("alpha-bravo", {"after": T0 + 3000, "before": T0 + 15000}),
    ):
        for limit in (1, 5, 40):
            page, scored = _statements(built, query, limit=limit, sort=sort, **kw)
            assert page == _exact(built, query, limit=limit, sort=sort, **kw), (query, kw)
            assert len(scored) == 1, scored


@pytest.fixture
def common_phrase(original, tmp_path, monkeypatch):
    """A copy of ``original`` where "charlie delta" is in most rows, a few short rows
    of one late block repeating it (the top of its ranking), with bounds built."""
    monkeypatch.setattr(rank_bounds, "FREQUENT", 100)
    st = _copy(original, tmp_path / "state.db")
    with _foreign(st) as conn:
        conn.execute("UPDATE messages SET content = content || ' charlie delta' WHERE id % 3 <> 0")
        conn.execute(
            "UPDATE messages SET content = 'charlie delta charlie delta' "
            "WHERE id BETWEEN 15400 AND 15410"
        )
    st.sync()
    assert rank_bounds.build(st._conn)[schema.CJK] >= 4
    st._seen.forget()
    yield st
    st.close()


@pytest.mark.parametrize("sort", [None, "sessions"])
def test_a_common_phrase_is_read_by_blocks_for_the_same_page(common_phrase, sort):
    """A phrase in most rows (``という`` in Japanese text) was scored match by match: it
    is now read block by block, each block bounded by its tokens' lowest peak,
    and its page is still the full pass's."""
    total = (
        int(common_phrase._conn.execute("SELECT max(id) FROM messages").fetchone()[0]) >> 9
    ) + 1
    for query, kw in (
        ('"charlie delta"', {}),
        ("charlie-delta", {"role_filter": "user"}),
        ('"charlie delta"', {"after": T0 + 3000, "before": T0 + 15500}),
    ):
        for limit in (1, 5, 40):
            blocks, page = _reads_blocks(common_phrase, query, limit=limit, sort=sort, **kw)
            assert page == _exact(common_phrase, query, limit=limit, sort=sort, **kw), (query, kw)
            assert 0 < blocks < total, (query, kw, limit)


@pytest.mark.parametrize("sort", [None, "sessions"])
def test_a_phrase_of_one_token_repeated_keeps_the_exact_page(common_phrase, sort):
    """Regression: a phrase whose tokens are one token twice (哈哈哈 is 哈哈 哈哈) failed
    with a TypeError once phrases could be read by blocks."""
    for query in ('"alpha alpha"', '"charlie charlie"', '"delta delta delta"'):
        for limit in (1, 12):
            page = _ids(common_phrase, query, limit=limit, sort=sort)
            assert page == _exact(common_phrase, query, limit=limit, sort=sort), query
    conn = common_phrase._conn
    assert conn.execute(
        f"SELECT count(*) FROM {schema.CJK} WHERE {schema.CJK} MATCH ?", ('"alpha alpha"',)
    ).fetchone()[0]  # the fixture's short rows repeat it


@pytest.mark.parametrize("sort", [None, "sessions"])
def test_a_phrase_dense_in_one_place_only_is_read_in_one_statement(common_phrase, sort):
    """The phrase "charlie delta charlie" is in eleven short rows of one block only:
    dense in its best block, it would be read block by block to the end.  The
    last blocks holding its tokens hold none of it, so one statement reads it."""
    for limit in (1, 5, 40):
        page, scored = _statements(common_phrase, '"charlie delta charlie"', limit=limit, sort=sort)
        assert page == _exact(common_phrase, '"charlie delta charlie"', limit=limit, sort=sort)
        assert len(scored) == 1, scored


@pytest.mark.parametrize("budget", [1, 2, 3])
@pytest.mark.parametrize("sort", [None, "sessions"])
def test_past_its_statement_budget_a_search_reads_the_rest_at_once(
    common_phrase, monkeypatch, sort, budget
):
    """Blocks far apart take a statement each; past the budget the rest of the index
    is read by one more, and the page is still the full pass's."""
    monkeypatch.setattr(topk, "STATEMENT_BUDGET", budget)
    for query, kw in (("alpha", {}), ('"charlie delta"', {}), ("alpha", {"role_filter": "user"})):
        for limit in (1, 12, 40):
            page, scored = _statements(common_phrase, query, limit=limit, sort=sort, **kw)
            assert page == _exact(common_phrase, query, limit=limit, sort=sort, **kw), (query, kw)
            assert len(scored) <= budget + 1, (query, kw, limit, scored)


def test_a_phrase_is_bounded_by_its_tokens_lowest_peak_in_each_block(common_phrase):
    """A block's bound on the phrase is the lowest of its tokens' peaks there, and a
    block missing one of the tokens cannot hold the phrase."""
    conn = common_phrase._conn
    bounds = rank_bounds.load(conn, schema.CJK, ["charlie", "delta", "bravo"])
    assert bounds is not None
    each = [bounds.tokens[t] for t in ("charlie", "bravo")]
    phrase = topk._phrase_bounds(each)
    for b in range(len(phrase.peaks)):
        assert phrase.peaks[b] == min(t.peaks[b] for t in each)
        assert phrase.counts[b] == min(t.counts[b] for t in each)
    assert set(phrase.best_first) == {b for b, n in enumerate(phrase.counts) if n}
    # The phrase's saturation in every row stays under its block's bound.
    rows, tokens = rank_bounds.index_totals(conn, schema.CJK)
    scale = bounds.saturation_scale(tokens / rows)
    both = topk._phrase_bounds([bounds.tokens[t] for t in ("charlie", "delta")])
    for rid, saturation in conn.execute(
        f"SELECT rowid, hermes_fts_bm25({schema.CJK}, ?) FROM {schema.CJK} "
        f"WHERE {schema.CJK} MATCH ? AND rowid <= ?",
        (tokens / rows, '"charlie delta"', bounds.last_id),
    ):
        assert saturation <= both.peaks[rid >> 9] * scale


def test_a_phrase_scored_in_python_equals_fts5_to_the_bit(built):
    """The phrase's IDF comes from its row count, times each row's saturation."""
    conn, table = built._conn, schema.CJK
    rows, tokens = rank_bounds.index_totals(conn, table)
    found = conn.execute(
        f"SELECT -rank, hermes_fts_bm25({table}, ?) FROM {table} WHERE {table} MATCH ?",
        (tokens / rows, '"alpha bravo"'),
    ).fetchall()
    idf = max(1e-6, math.log((rows - len(found) + 0.5) / (len(found) + 0.5)))
    assert found and all(rank == idf * saturation for rank, saturation in found)


@pytest.mark.parametrize("sort", [None, "sessions"])
def test_the_page_kept_between_rounds_equals_resorting_every_row(built, monkeypatch, sort):
    """Between rounds only the page's rows are kept (rows read below its worst are
    not): the same page as ranking every row read, ties on equal scores
    (identical short rows) included, while what is kept stays the page."""
    kept_sizes: list[int] = []
    keep = topk._Reader.keep

    def spy(self, ids, floor):
        keep(self, ids, floor)
        kept_sizes.append(len(self.rows))

    cases = [({}, 1), ({}, 3), ({}, 14), ({"role_filter": "user"}, 6), ({"after": T0 + 700}, 9)]
    monkeypatch.setattr(topk._Reader, "keep", spy)
    bounded = [_reads_blocks(built, "alpha", limit=n, sort=sort, **kw) for kw, n in cases]
    assert kept_sizes and max(kept_sizes) <= max(n for _, n in cases)
    monkeypatch.setattr(topk._Reader, "keep", lambda self, ids, floor: None)
    for (kw, n), (blocks, page) in zip(cases, bounded):
        assert _reads_blocks(built, "alpha", limit=n, sort=sort, **kw) == (blocks, page), kw
        assert page == _exact(built, "alpha", limit=n, sort=sort, **kw), kw


def test_a_rebuilt_index_forgets_its_bounds(built):
    assert rank_bounds.load(built._conn, schema.CJK, ["alpha"]) is not None
    with built._conn:
        schema.forget_rank_bounds(built._conn, schema.CJK)
    assert rank_bounds.load(built._conn, schema.CJK, ["alpha"]) is None
    built._seen.forget()
    assert _ids(built, "alpha", limit=5, sort="sessions") == _exact(
        built, "alpha", limit=5, sort="sessions"
    )


def test_optimize_storage_builds_them_and_says_when_they_lag(original, tmp_path, monkeypatch):
    monkeypatch.setattr(rank_bounds, "FREQUENT", 100)
    monkeypatch.setattr(rank_bounds, "WORTH_IT", 1000)
    st = _copy(original, tmp_path / "state.db")
    try:
        assert "rank_bounds" in st.status()["needs_optimize"]
        events: list[dict] = []
        assert st.optimize_storage(progress=events.append, vacuum=False)["ok"]
        counted = [e for e in events if e["phase"] == "rank_bounds" and e["total"]]
        assert [e["indexed"] for e in counted] == list(range(1, counted[-1]["total"] + 1))
        assert counted[-1]["percent"] == 100
        assert rank_bounds.lag(st._conn) == {"newer_rows": 0, "dirty_blocks": 0, "ready": 1}
        assert "rank_bounds" not in st.status()["needs_optimize"]
        st.add_messages(
            [
                {"session_id": "s000", "role": "user", "content": "alpha", "timestamp": T0}
                for _ in range(3000)
            ]
        )
        assert "rank_bounds" in st.status()["needs_optimize"]  # a tenth of the rows is newer
    finally:
        st.close()


def test_the_bm25_function_equals_fts5_to_the_bit(built):
    conn = built._conn
    table = schema.CJK
    rows, tokens = rank_bounds.index_totals(conn, table)
    units = ['"alpha"', '"bravo"', '"noise"']
    idf = []
    for unit in units:
        df = conn.execute(f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", (unit,))
        n = df.fetchone()[0]
        idf.append(max(1e-6, math.log((rows - n + 0.5) / (n + 0.5))))
    found = conn.execute(
        f"SELECT -rank, hermes_fts_bm25({table}, ?, ?, ?, ?), hermes_fts_held({table}) "
        f"FROM {table} WHERE {table} MATCH ?",
        (tokens / rows, *idf, " OR ".join(units)),
    ).fetchall()
    assert len(found) > 2000
    assert all(rank == ours for rank, ours, _ in found)
    assert {held for _, _, held in found} == set(range(1, 8))


def test_the_row_functions_refuse_what_they_cannot_answer(built):
    conn = built._conn
    table = schema.CJK
    with pytest.raises(sqlite3.OperationalError, match="one IDF per phrase"):
        conn.execute(
            f"SELECT hermes_fts_bm25({table}, 1.0, 2.0) FROM {table} WHERE {table} MATCH ?",
            ('"alpha" OR "bravo"',),
        ).fetchall()
    many = " OR ".join(f'"w{i}"' for i in range(63))
    with pytest.raises(sqlite3.OperationalError, match="more than 62 phrases"):
        conn.execute(
            f"SELECT hermes_fts_held({table}) FROM {table} WHERE {table} MATCH ?",
            (f'"alpha" OR {many}',),
        ).fetchall()


def test_row_sizes_read_once_give_the_bounds_of_a_lookup_per_row(built, monkeypatch):
    """``hermes_fts_saturation`` with every row's size read in one pass of the index's
    sizes equals ``hermes_fts_bm25`` asking the index row by row, to the byte."""
    conn = built._conn
    table = schema.CJK
    long_row = " ".join(["alpha"] * 150 + ["filler"] * 300)  # sizes of two-byte varints
    built.add_messages([{"session_id": "s000", "role": "user", "content": long_row}])
    built.sync()
    last = conn.execute("SELECT max(id) FROM messages").fetchone()[0]
    rows, tokens = rank_bounds.index_totals(conn, table)
    sizes = rank_bounds._row_sizes(conn, table, last)
    assert sizes is not None and len(sizes) == 4 * (last + 1)
    for token in ("alpha", "bravo", "noise", "filler"):
        looked_up = rank_bounds._read_token(conn, table, token, last, tokens / rows)
        once = rank_bounds._read_token(conn, table, token, last, tokens / rows, sizes)
        assert looked_up is not None and once == looked_up
    # A row past the sizes read (written since) is asked of the index.
    short = rank_bounds._read_token(conn, table, "alpha", last, tokens / rows, sizes[:400])
    assert short == rank_bounds._read_token(conn, table, "alpha", last, tokens / rows)
    # A library without the function: the bounds are read row by row as before.
    monkeypatch.setattr(rank_bounds.loader, "has_saturation", lambda *_: False)
    assert rank_bounds._row_sizes(conn, table, last) is None


def test_block_peaks_gathers_counts_and_peaks_and_refuses_a_block_out_of_range(built):
    conn = built._conn
    rows = [(0, 0.5), (2, 1.234), (2, 2.0), (0, 0.001)]
    values = ", ".join(f"({b}, {s})" for b, s in rows)
    (blob,) = conn.execute(
        f"SELECT hermes_fts_block_peaks(column1, column2, 3, 100) FROM (VALUES {values})"
    ).fetchone()
    # Counts (little-endian), then ceil(saturation * 100) as _read_token rounds it.
    peaks = [
        max(math.ceil(s * 100 + 1e-9) for b, s in rows if b == k) if k != 1 else 0 for k in range(3)
    ]
    assert peaks == [51, 0, 201]
    assert blob == bytes([2, 0, 0, 0, 2, 0]) + bytes(peaks)
    no_rows = conn.execute("SELECT hermes_fts_block_peaks(0, 1.0, 3, 100) WHERE 0")
    assert tuple(no_rows.fetchone()) == (None,)
    with pytest.raises(sqlite3.OperationalError, match="block out of range"):
        conn.execute("SELECT hermes_fts_block_peaks(3, 1.0, 3, 100)").fetchone()
    with pytest.raises(sqlite3.OperationalError, match="nblocks out of range"):
        conn.execute("SELECT hermes_fts_block_peaks(0, 1.0, 0, 100)").fetchone()


@pytest.mark.parametrize(
    "call, refused",
    [
        ("hermes_fts_bm25(t, 'abc', 1.0)", "hermes_fts_bm25: avgdl must be a number"),
        ("hermes_fts_bm25(t, NULL)", "hermes_fts_bm25: avgdl must be a number"),
        ("hermes_fts_bm25(t, 3.0, 'x')", "hermes_fts_bm25: an IDF must be a number"),
        ("hermes_fts_bm25(t, 3.0, x'00ff')", "hermes_fts_bm25: an IDF must be a number"),
        ("hermes_fts_saturation(t, 'abc', NULL)", "hermes_fts_saturation: avgdl must be a number"),
        ("hermes_fts_block_peaks('abc', 0.5, 2, 10)", "block must be an integer"),
        ("hermes_fts_block_peaks(1.9, 0.5, 2, 10)", "block must be an integer"),
        ("hermes_fts_block_peaks(NULL, 0.5, 2, 10)", "block must be an integer"),
        ("hermes_fts_block_peaks(0, 'x', 2, 10)", "saturation must be a number"),
        ("hermes_fts_block_peaks(0, 0.5, 'two', 10)", "nblocks must be an integer"),
        ("hermes_fts_block_peaks(0, 0.5, 2, NULL)", "scale must be a number"),
    ],
)
def test_the_row_functions_refuse_what_is_not_a_number(call, refused):
    """Text, a blob or NULL where a number goes was read as 0: hermes_fts_bm25(t,
    'abc', 1.0) scored with the index's own average, an IDF of 'x' scored 0, and
    hermes_fts_block_peaks('abc', ...) (or 1.9) counted the row in block 0 (or 1)."""
    conn = hermes_fts.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='cjk_unicode61')")
    conn.execute("INSERT INTO t VALUES ('hello world'), ('hello')")
    source = "FROM t WHERE t MATCH 'hello'" if "(t," in call else ""
    with pytest.raises(sqlite3.OperationalError, match=refused):
        conn.execute(f"SELECT {call} {source}").fetchall()
    # A number written as text is read as the number, as SQLite reads it.
    same = conn.execute(
        "SELECT hermes_fts_bm25(t, '2.5', '1') = hermes_fts_bm25(t, 2.5, 1), "
        "hermes_fts_saturation(t, '2.5', NULL) = hermes_fts_saturation(t, 2.5, NULL) "
        "FROM t WHERE t MATCH 'hello'"
    ).fetchall()
    assert same == [(1, 1), (1, 1)]
    (blob,) = conn.execute("SELECT hermes_fts_block_peaks(1, '0.5', 2, 10)").fetchone()
    assert blob == bytes([0, 0, 1, 0, 0, 6])  # ceil(0.5 * 10 + 1e-9), as _read_token rounds
    conn.close()


def test_saturation_at_no_average_takes_the_index_average_as_bm25_does():
    """``hermes_fts_saturation(t, 0, ...)`` took an average of 1 token a row where
    ``hermes_fts_bm25(t, 0)``, which its header calls the same saturation, takes
    the index's own: the two disagreed on every row."""
    conn = hermes_fts.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='cjk_unicode61')")
    conn.executemany("INSERT INTO t VALUES (?)", [("hello world " * 3,), ("hello",), ("a b c",)])
    pairs = conn.execute(
        "SELECT hermes_fts_saturation(t, 0, NULL), hermes_fts_bm25(t, 0), "
        "hermes_fts_saturation(t, -1, NULL), hermes_fts_bm25(t, 10 / 3.0) "
        "FROM t WHERE t MATCH 'hello'"
    ).fetchall()
    assert len(pairs) == 2
    for at_zero, bm25_zero, at_minus, bm25_average in pairs:
        assert at_zero == bm25_zero == at_minus == pytest.approx(bm25_average, rel=1e-12)
    conn.close()


# Bounds edited by hand in the sqlite3 shell: a page read block by block from them
# missed the best rows without a sign, or the search raised "math domain error".
HAND_EDITS = {
    "peaks zeroed": f"UPDATE {rank_bounds.TABLE} SET peaks = zeroblob(length(peaks));",
    "counts zeroed": f"UPDATE {rank_bounds.TABLE} SET counts = zeroblob(length(counts));",
    "rows changed": f"UPDATE {rank_bounds.TABLE} SET rows = rows * 3;",
    "last id lowered": f"UPDATE {rank_bounds.BUILT} SET last_id = 10;",
    "last id raised": f"UPDATE {rank_bounds.BUILT} SET last_id = last_id * 4;",
    # Values of another type: every search of a frequent word, status and
    # optimize-storage raised (ValueError, ZeroDivisionError).
    "last id text": f"UPDATE {rank_bounds.BUILT} SET last_id = 'abc';",
    "average length zeroed": f"UPDATE {rank_bounds.BUILT} SET avgdl = 0;",
    "average length text": f"UPDATE {rank_bounds.BUILT} SET avgdl = 'x';",
    "rows text": f"UPDATE {rank_bounds.TABLE} SET rows = 'many';",
}


@pytest.mark.skipif(shutil.which("sqlite3") is None, reason="needs the sqlite3 shell")
@pytest.mark.parametrize("edit", list(HAND_EDITS))
def test_bounds_edited_by_hand_are_not_trusted_and_optimize_measures_them_again(
    built, edit, capsys
):
    subprocess.run(
        [str(shutil.which("sqlite3")), str(built._path), HAND_EDITS[edit]],
        check=True,
        capture_output=True,
    )
    built._seen.forget()
    for sort in (None, "sessions"):
        for offset in (0, 40):
            kw = {"limit": 5, "offset": offset, "sort": sort}
            assert _ids(built, "alpha", **kw) == _exact(built, "alpha", **kw), (sort, offset)
    assert rank_bounds.TABLE in built.status()["damaged"]
    assert cli.main(["status", "--db", str(built._path)]) == 0
    assert "Rank bounds: NOT used" in capsys.readouterr().out
    done = built.optimize_storage(sleep=lambda s: None, vacuum=False)
    assert done["ok"] and rank_bounds.TABLE in done["repaired"], done
    assert done["rank_bounds_measured"][schema.CJK] >= 2, done
    assert built.status()["damaged"] == {}
    blocks, page = _reads_blocks(built, "alpha", limit=5)
    assert page == _exact(built, "alpha", limit=5) and blocks > 0  # read by its bounds again


def _shell(store, sql):
    subprocess.run(
        [str(shutil.which("sqlite3")), str(store._path), sql], check=True, capture_output=True
    )


@pytest.mark.skipif(shutil.which("sqlite3") is None, reason="needs the sqlite3 shell")
@pytest.mark.parametrize("trigger", [name for name, _sql in rank_bounds.TRIGGERS])
def test_a_trigger_dropped_by_hand_is_seen_and_put_back(built, trigger, capsys):
    """A trigger dropped in the sqlite3 shell: the rows changed since were never marked
    dirty, and a search read their blocks by stale bounds (a page without the best
    row), status said nothing and optimize-storage never put the trigger back."""
    _shell(
        built,
        f"DROP TRIGGER {trigger}; UPDATE messages SET content = 'alpha alpha alpha alpha' "
        "WHERE id = 15000;",
    )
    built.sync()  # the index holds the change; no dirty block says so
    built._seen.forget()
    assert _ids(built, "alpha", limit=5) == _exact(built, "alpha", limit=5)
    assert _ids(built, "alpha", limit=1) == [15000]
    assert trigger in built.status()["damaged"][rank_bounds.TABLE]
    assert cli.main(["status", "--db", str(built._path)]) == 0
    assert "Rank bounds: NOT used" in capsys.readouterr().out
    done = built.optimize_storage(sleep=lambda s: None, vacuum=False)
    assert done["ok"] and rank_bounds.TABLE in done["repaired"], done
    assert built.status()["damaged"] == {}
    assert rank_bounds._triggers_lost(built._conn) == []
    blocks, page = _reads_blocks(built, "alpha", limit=5)
    assert page == _exact(built, "alpha", limit=5) and blocks > 0  # read by its bounds again


@pytest.mark.skipif(shutil.which("sqlite3") is None, reason="needs the sqlite3 shell")
@pytest.mark.parametrize(
    "edit",
    [f"DELETE FROM {rank_bounds.DIRTY};", f"DELETE FROM {rank_bounds.DIRTY} WHERE block = 29;"],
)
def test_a_dirty_table_emptied_by_hand_is_seen_and_measured_again(built, edit, capsys):
    """A row changed after the build, then its dirty block deleted in the sqlite3 shell:
    a search skipped the block holding the best row, and status said nothing."""
    with _foreign(built) as conn:
        conn.execute("UPDATE messages SET content = 'alpha alpha alpha alpha' WHERE id = 15000")
    built.sync()
    _shell(built, edit)
    built._seen.forget()
    assert rank_bounds.TABLE in built.status()["damaged"]
    assert cli.main(["status", "--db", str(built._path)]) == 0
    assert "Rank bounds: NOT used" in capsys.readouterr().out
    done = built.optimize_storage(sleep=lambda s: None, vacuum=False)
    assert done["ok"] and rank_bounds.TABLE in done["repaired"], done
    assert built.status()["damaged"] == {}
    blocks, page = _reads_blocks(built, "alpha", limit=5)
    assert page == _exact(built, "alpha", limit=5) == [15000, 1456, 1359, 1262, 1165]
    assert blocks > 0


@pytest.mark.skipif(shutil.which("sqlite3") is None, reason="needs the sqlite3 shell")
def test_repair_measures_every_token_where_status_probes_the_most_frequent(built, monkeypatch):
    """status measures the blocks of the most frequent tokens only (a whole build's
    reads at 1M would make every status that slow); optimize-storage's repair
    measures every token, so a change the probe leaves out is still mended."""
    monkeypatch.setattr(rank_bounds, "PROBED_TOKENS", 0)
    with _foreign(built) as conn:
        conn.execute("UPDATE messages SET content = 'alpha alpha alpha alpha' WHERE id = 15000")
    built.sync()
    _shell(built, f"DELETE FROM {rank_bounds.DIRTY};")
    built._seen.forget()
    assert built.status()["damaged"] == {}  # the probe read no token's blocks
    assert "changed without being marked dirty" in rank_bounds.damage(built._conn, full=True)
    done = built.optimize_storage(sleep=lambda s: None, vacuum=False)
    assert done["ok"] and rank_bounds.TABLE in done["repaired"], done
    assert rank_bounds.damage(built._conn, full=True) is None
    assert _ids(built, "alpha", limit=5) == _exact(built, "alpha", limit=5)


@pytest.mark.skipif(shutil.which("sqlite3") is None, reason="needs the sqlite3 shell")
def test_status_of_an_index_whose_pages_are_gone_names_the_damage_not_a_traceback(built, capsys):
    """Pages of the CJK index deleted in the sqlite3 shell: ``status`` failed with
    "the session store cannot be used (database disk image is malformed)", since its
    check of the bounds read the damaged index; searches and optimize-storage coped."""
    _shell(built, f"DELETE FROM {schema.CJK}_data WHERE id > 10;")
    built._seen.forget()
    assert cli.main(["--json", "status", "--db", str(built._path)]) == 0
    status = json.loads(capsys.readouterr().out)
    assert "damaged" in status["needs_optimize"], status
    assert "malformed" in status["damaged"][rank_bounds.TABLE], status["damaged"]
    assert cli.main(["status", "--db", str(built._path)]) == 0
    assert "optimize-storage" in capsys.readouterr().out
    assert _ids(built, "alpha", limit=5) == _exact(built, "alpha", limit=5)
    done = built.optimize_storage(sleep=lambda s: None, vacuum=False)
    assert done["ok"], done
    after = built.status()
    assert after["damaged"] == {} and after["needs_optimize"] == [], after
    assert built.search("alpha").route == "fts_cjk"
    assert _ids(built, "alpha", limit=5) == _exact(built, "alpha", limit=5)


def test_rows_changed_and_marked_dirty_are_not_damage(built):
    """Rows the triggers marked (changed, deleted, inserted) leave the bounds sound."""
    with _foreign(built) as conn:
        conn.execute("UPDATE messages SET content = 'alpha alpha alpha alpha' WHERE id = 15000")
        conn.execute("DELETE FROM messages WHERE id BETWEEN 600 AND 700")
        conn.execute(
            "INSERT INTO messages(id, session_id, role, content, timestamp) "
            "VALUES (650, 's001', 'user', 'bravo alpha', ?)",
            (T0,),
        )
    built.sync()
    built._seen.forget()
    assert built.status()["damaged"] == {}


class _InterruptedAfterCommit:
    """A connection whose COMMIT succeeds and is then interrupted, as SIGTERM's
    handler can raise between SQLite's commit and Python's next line."""

    def __init__(self, conn):
        self._conn = conn

    @property
    def in_transaction(self):
        return self._conn.in_transaction

    def executemany(self, sql, rows):
        return self._conn.executemany(sql, rows)

    def execute(self, sql, *args):
        cursor = self._conn.execute(sql, *args)
        if sql == "COMMIT":
            raise KeyboardInterrupt
        return cursor


def test_an_interrupt_after_the_commit_of_saved_tokens_is_not_hidden(built):
    """SIGTERM in optimize-storage's rank-bounds step ended in 'cannot rollback - no
    transaction is active' (exit 1, not 143): the save's clean-up rolled back a
    transaction its COMMIT had already ended, and that error hid the interrupt."""
    conn = built._conn
    ((token, rows, counts, peaks),) = conn.execute(
        f"SELECT token, rows, counts, peaks FROM {rank_bounds.TABLE} WHERE token = 'alpha'"
    ).fetchall()
    with pytest.raises(KeyboardInterrupt):
        rank_bounds._write(
            _InterruptedAfterCommit(conn), schema.CJK, [(token, rows, counts, peaks)], ready=True
        )
    assert not conn.in_transaction
    saved = conn.execute(f"SELECT count(*) FROM {rank_bounds.TABLE} WHERE token = 'alpha'")
    assert saved.fetchone()[0] == 1


class _CutShort:
    """A cursor whose reading is interrupted after its first row, as SIGTERM's handler
    raises KeyboardInterrupt between two rows; the statement stays open until closed."""

    def __init__(self, cursor):
        self._cursor = cursor

    def __iter__(self):
        yield next(self._cursor)
        raise KeyboardInterrupt

    def close(self):
        self._cursor.close()


class _InterruptedVocabulary:
    """A connection whose read of the frequent words (``_frequent``) is cut short."""

    def __init__(self, conn):
        self._conn = conn

    def execute(self, sql, *args):
        cursor = self._conn.execute(sql, *args)
        return _CutShort(cursor) if sql.startswith("SELECT term FROM") else cursor


def test_an_interrupt_while_the_frequent_words_are_read_is_not_hidden(built):
    """SIGTERM while optimize-storage listed the frequent words ended in "optimization
    failed: ... locked by another process (database table is locked)", exit 1: the
    clean-up dropped the vocabulary table its open read still held, and that error
    hid the interrupt."""
    conn = built._conn
    with pytest.raises(KeyboardInterrupt):
        rank_bounds._frequent(_InterruptedVocabulary(conn), schema.CJK)
    left = conn.execute("SELECT name FROM temp.sqlite_master WHERE name LIKE 'hermes_fts_vocab%'")
    assert left.fetchall() == []
    assert "alpha" in rank_bounds._frequent(conn, schema.CJK)
