"""Time bounds and session exclusions inside the search's SQL.

The reference is what discovery did before they moved into SQL: page through
the unfiltered ``search_messages`` and drop rows outside the bounds or in an
excluded session.  Every route, sort and bound must give exactly those rows,
in that order, and discovery must return the same payload as before.
"""

from __future__ import annotations

import itertools
import shutil
import sqlite3
import subprocess
from collections.abc import Collection
from pathlib import Path
from typing import Any

import pytest
from _support import needs_extension

from hermes_fts.store import SessionStore
from hermes_fts.tool.args import SearchOptions
from hermes_fts.tool.context import HIDDEN_SESSION_SOURCES, CallContext

# The old post-filter's rule (numeric timestamps in [after, before)); discovery
# still applies it to title matches.
from hermes_fts.tool.discover import _DISCOVER_SEARCH_FIELDS, Discovery, _in_bounds

pytestmark = needs_extension

T0 = 1_700_000_000.0
PAGE = 1000
MAX_ROWS = 30_000  # the old scan's cap


def post_filtered(
    store: SessionStore,
    query: str,
    limit: int,
    after: float | None,
    before: float | None,
    excluded: frozenset[str],
    **kw: Any,
) -> list[Any]:
    kept: list[Any] = []
    offset = 0
    fields = kw.pop("fields", ["id", "session_id", "role", "snippet", "timestamp"])
    while len(kept) < limit and offset < MAX_ROWS:
        page = store.search_messages(query, limit=PAGE, offset=offset, fields=fields, **kw)
        kept += [
            r
            for r in page
            if r["session_id"] not in excluded and _in_bounds(r["timestamp"], after, before)
        ]
        if len(page) < PAGE:
            break
        offset += PAGE
    return kept[:limit]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> SessionStore:
    path = tmp_path_factory.mktemp("filters") / "state.db"
    st = SessionStore(path)
    texts = [
        "数据库迁移 database migration",
        "配置文件 config file",
        "数据 分析 analysis",
        "修改youer服务端 deploy",
        "日本語のテキスト データ",
        "한국어 데이터 텍스트",
        "数据库迁移 database migration",
    ]  # repeated text: equal ranks
    for s in range(30):
        sid = f"s{s:02d}"
        st.add_session(sid, "cron" if s % 9 == 0 else "cli", started_at=T0 + s * 3600)
        rows = []
        for i in range(40):
            rows.append(
                {
                    "session_id": sid,
                    "role": ("user", "assistant", "tool")[i % 3],
                    "content": f"{texts[(s + i) % len(texts)]} 第{i}条",
                    "tool_name": "shell" if i % 3 == 2 else None,
                    "timestamp": T0 + s * 3600 + i * 60,
                }
            )
        st.add_messages(rows)
    # Text timestamps, which another writer may leave (SessionStore refuses them):
    # they sort after every number in SQLite.
    other = sqlite3.connect(path)
    for s, i in ((3, 5), (7, 7), (20, 4)):
        other.execute(
            "UPDATE messages SET timestamp = 'unknown' WHERE session_id = ? AND content LIKE ?",
            (f"s{s:02d}", f"% 第{i}条"),
        )
    other.commit()
    other.close()
    # Back-dated rows written late: ids no longer follow timestamps.
    st.add_messages(
        [
            {
                "session_id": "s05",
                "role": "user",
                "timestamp": T0 - 100 + k,
                "content": "数据库迁移 database migration 补录",
            }
            for k in range(5)
        ]
    )
    yield st
    st.close()


SPAN = 30 * 3600
BOUNDS = [
    (None, T0 + SPAN / 3),
    (T0 + SPAN / 2, None),
    (T0 + SPAN / 4, T0 + SPAN / 2),
    (T0 - 50, T0 + 10),
]
EXCLUDED = [frozenset(), frozenset({"s01", "s05", "s12"})]
QUERIES = ["数据", "database OR config", "youer", "データ", "데이터", "据", "数据 -分析"]


@pytest.mark.parametrize("route", [None, "fts5", "fts_cjk", "trigram", "like_scan"])
@pytest.mark.parametrize("sort", [None, "newest", "oldest"])
def test_sql_filters_equal_post_filtering(
    store: SessionStore, route: str | None, sort: str | None
) -> None:
    for query, (after, before), excluded in itertools.product(QUERIES, BOUNDS, EXCLUDED):
        for limit in (3, 50) if sort is None else (50,):  # 3: the ranked page is cut early
            kw = {"route": route, "sort": sort, "exclude_sources": HIDDEN_SESSION_SOURCES}
            expected = post_filtered(store, query, limit, after, before, excluded, **kw)
            got = store.search_messages(
                query,
                limit=limit,
                fields=["id", "session_id", "role", "snippet", "timestamp"],
                after=after,
                before=before,
                exclude_session_ids=sorted(excluded),
                **kw,
            )
            assert got == expected, (query, after, before, sorted(excluded), limit)


def test_filters_keep_only_rows_inside(store: SessionStore) -> None:
    rows = store.search_messages(
        "数据",
        limit=10**6,
        fields=["session_id", "timestamp"],
        after=T0 + 3600,
        before=T0 + 7200,
        exclude_session_ids=["s01"],
    )
    assert rows == []  # the only session in that hour is excluded
    rows = store.search_messages(
        "数据", limit=10**6, fields=["session_id", "timestamp"], after=T0 + 3600, before=T0 + 7200
    )
    assert rows and all(
        r["session_id"] == "s01" and T0 + 3600 <= r["timestamp"] < T0 + 7200 for r in rows
    )
    # A bound drops rows without a numeric timestamp; no bound keeps them.
    all_ids = {
        r["timestamp"] for r in store.search_messages("数据", limit=10**6, fields=["timestamp"])
    }
    assert "unknown" in all_ids
    assert "unknown" not in {
        r["timestamp"]
        for r in store.search_messages("数据", limit=10**6, fields=["timestamp"], after=0)
    }


def test_many_excluded_sessions(store: SessionStore) -> None:
    many = [f"s{s:02d}" for s in range(29)] + [f"absent-{k}" for k in range(40_000)]
    rows = store.search_messages(
        "数据", limit=10**6, fields=["session_id"], exclude_session_ids=many
    )
    assert rows and {r["session_id"] for r in rows} == {"s29"}


@pytest.mark.parametrize("bad", ["2024-01-01", True, float("nan"), [1]])
def test_bad_bounds_are_refused(store: SessionStore, bad: Any) -> None:
    with pytest.raises((TypeError, ValueError)):
        store.search_messages("数据", after=bad)
    with pytest.raises((TypeError, ValueError)):
        store.search_messages("数据", before=bad)


@pytest.mark.parametrize("after, before", [(T0 + 60, T0 + 60), (T0 + 60, T0)])
def test_an_empty_window_is_refused_not_answered_with_nothing(
    store: SessionStore, after: float, before: float
) -> None:
    """Regression: ``after`` at or past ``before`` found nothing and said nothing,
    where the tool and the command refuse it."""
    with pytest.raises(ValueError, match="must be earlier than before"):
        store.search_messages("数据", after=after, before=before)
    with pytest.raises(ValueError, match="must be earlier than before"):
        store.search("数据", after=after, before=before)


def test_exclusions_must_be_a_collection(store: SessionStore) -> None:
    with pytest.raises(TypeError):
        store.search_messages("数据", exclude_session_ids="s01")
    with pytest.raises(TypeError):
        store.search_messages("数据", exclude_session_ids=[1, 2])


class _PostFilteringDiscovery(Discovery):
    """Discovery as it was: the unfiltered search, paged and filtered afterwards."""

    def scan(self, want: int, crowding: Collection[str] = ()) -> list[dict[str, Any]]:
        opts = self.options
        self.route = self.ctx.store.describe_search_path(opts.query)  # what answers it
        return post_filtered(
            self.ctx.store,
            opts.query,
            want,
            opts.after,
            opts.before,
            frozenset({*opts.excluded, *crowding}),
            fields=[*_DISCOVER_SEARCH_FIELDS, "timestamp"],
            exclude_sources=HIDDEN_SESSION_SOURCES,
            role_filter=opts.roles,
            sort=opts.sort,
        )


# Time sorts only: by relevance, discovery scores each session by its messages
# inside the bounds, which filtering an unbounded answer afterwards cannot do.
@pytest.mark.parametrize("sort", ["newest", "oldest"])
def test_time_bounded_discovery_equals_post_filtering(
    store: SessionStore, sort: str | None
) -> None:
    checked = 0
    for query, (after, before), excluded in itertools.product(
        ["数据", "database", "데이터", "据"], BOUNDS, EXCLUDED
    ):
        options = SearchOptions(
            query=query,
            limit=10,
            roles=[],
            sort=sort,
            detail="full",
            after=after,
            before=before,
            excluded=excluded,
        )
        new = Discovery(CallContext(store, None, None), options).run()
        old = _PostFilteringDiscovery(CallContext(store, None, None), options).run()
        assert new == old, (query, after, before, sorted(excluded))
        checked += bool(new["results"])
    assert checked >= 10  # most combinations find something


@pytest.mark.parametrize("route", [None, "fts_cjk", "like_scan"])
def test_time_sort_with_a_text_timestamp(store: SessionStore, route: str | None) -> None:
    """Regression: a text timestamp made the newest/oldest merge raise TypeError."""
    newest = store.search_messages(
        "数据", limit=10**6, sort="newest", route=route, fields=["id", "timestamp"]
    )
    oldest = store.search_messages(
        "数据", limit=10**6, sort="oldest", route=route, fields=["id", "timestamp"]
    )
    assert newest == oldest[::-1]
    # SQLite orders text after every number, so "newest" starts with it.
    assert newest[0]["timestamp"] == "unknown"
    numbers = [r["timestamp"] for r in oldest if r["timestamp"] != "unknown"]
    assert numbers == sorted(numbers)


# "alpha" is common (five rows), "beta" rare (two), but a window after the
# fourth alpha row holds one alpha row and both beta rows.
WEIGHED = ["alpha notes"] * 4 + ["beta notes", "beta notes", "alpha notes"]


def _weighed(path: Path, shell: bool) -> SessionStore:
    """WEIGHED as session w (one row a minute), written by hermes-fts or, pending
    for the CJK index, by the sqlite3 shell; opened read-only."""
    with SessionStore(path) as st:
        st.add_session("w", "cli", started_at=T0)
        if not shell:
            st.add_messages(
                {"session_id": "w", "role": "user", "content": text, "timestamp": T0 + n * 60}
                for n, text in enumerate(WEIGHED)
            )
    if shell:
        script = "".join(
            "INSERT INTO messages(session_id, role, content, timestamp) "
            f"VALUES('w', 'user', '{text}', {T0 + n * 60});"
            for n, text in enumerate(WEIGHED)
        )
        subprocess.run([str(shutil.which("sqlite3")), str(path), script], check=True, timeout=60)
    return SessionStore(path, readonly=True)


@pytest.mark.parametrize("shell", [False, True])
@pytest.mark.parametrize("sort", [None, "newest", "sessions"])
def test_a_word_weighs_the_same_whatever_the_filters_keep(
    tmp_path: Path, shell: bool, sort: str | None
) -> None:
    """A best match ranks by each word's weight over the whole store (DESIGN §6.4a).
    Rows pending for the CJK index counted only where the filters kept them, so
    inside the window alpha outweighed beta, and a filtered answer was no longer
    the unfiltered one with rows left out (qa14)."""
    with _weighed(tmp_path / "state.db", shell) as st:
        assert st.index_state()["cjk_pending"] == (len(WEIGHED) if shell else 0)
        every = st.search_messages("alpha beta", limit=50, sort=sort, fields=["id"])
        window = [r["id"] for r in every if r["id"] > 4]  # ids follow the minutes
        for filters in ({"after": T0 + 4 * 60}, {"role_filter": "user", "after": T0 + 4 * 60}):
            got = st.search_messages("alpha beta", limit=50, sort=sort, fields=["id"], **filters)
            assert [r["id"] for r in got] == window, filters
