"""A quoted CJK phrase whose parts stand apart means the same on every route.

``"数据库 迁移"`` and ``"数据库、迁移"`` are the phrase of two words: on the CJK
index the space or the punctuation between them is no token, so either finds
"数据库、迁移", "数据库 迁移" and "数据库,迁移".  The LIKE scan took such a term
as its literal text and found only the rows with that very separator, so the
same query gave other rows when no index could serve it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _support import needs_extension

from hermes_fts.store import SessionStore

pytestmark = needs_extension

TEXTS = ["数据库、迁移完成", "数据库迁移", "大数据库 迁移", "数据库,迁移", "迁移 数据库", "数据库"]
APART = ["数据库、迁移完成", "大数据库 迁移", "数据库,迁移"]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("apart") / "state.db"
    with SessionStore(path) as st:
        st.add_session("s1", "cli")
        for text in TEXTS:
            st.add_message("s1", "user", text)
    return path


@pytest.mark.parametrize(
    "query, want",
    [
        ('"数据库 迁移"', APART),
        ('"数据库、迁移"', APART),
        ("「数据库、迁移」", APART),
        ('"数据库 迁移*"', APART),
        ('数据库 NOT "数据库 迁移"', ["数据库迁移", "迁移 数据库", "数据库"]),
    ],
)
@pytest.mark.parametrize("route", ["fts_cjk", "like_scan"])
def test_the_parts_apart_are_a_phrase_on_every_route(
    db: Path, query: str, want: list[str], route: str
) -> None:
    with SessionStore(db, readonly=True) as st:
        found = st.search(query, limit=50, route=route)
        assert found.route == route
        assert sorted(TEXTS[r["id"] - 1] for r in found.rows) == sorted(want), (query, route)
