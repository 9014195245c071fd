"""The SQL a search request's filters and sort become, and the rows the LIKE scan
finds with them (docs/DESIGN.md "Life of a search", step 5).  ``search/run.py``
puts these pieces into every route's statements."""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from .._sqlite import row_dict, sqlite_sort_key
from ..transcript import visible_sql
from .like import LIKE_SOURCE, like_plan, like_where
from .plan import Query, snippet_terms
from .request import RANKED_ORDER, Filters, SearchRequest
from .request import ROW_COLUMNS as _ROW_COLUMNS
from .snippets import like_snippet


def where_sql(request: SearchRequest) -> Filters:
    """The request's ``Filters``."""
    parts = [visible(request.include_inactive)]
    params: list[Any] = []
    reads_session = False
    for values, op in ((request.source_filter, "IN"), (request.exclude_sources, "NOT IN")):
        if values is not None:
            # "cli,cron" means two sources, as "user,assistant" is two roles.
            values = (
                [v.strip() for v in values.split(",") if v.strip()]
                if isinstance(values, str)
                else list(values)
            )
            parts.append(f"s.source {op} ({', '.join('?' for _ in values)})")
            params.extend(values)
            reads_session = True
    if request.roles:
        parts.append(f"m.role IN ({', '.join('?' for _ in request.roles)})")
        params.extend(request.roles)
    if request.after is not None or request.before is not None:
        # Text or NULL timestamps compare oddly with numbers in SQLite: out.
        parts.append("typeof(m.timestamp) IN ('integer', 'real')")
        if request.after is not None:
            parts.append("m.timestamp >= ?")
            params.append(request.after)
        if request.before is not None:
            parts.append("m.timestamp < ?")
            params.append(request.before)
    if request.windows:  # a time preference's windows (request.search_preferring): any of them
        parts.append(
            "(" + " OR ".join(["m.timestamp >= ? AND m.timestamp < ?"] * len(request.windows)) + ")"
        )
        params.extend(bound for window in request.windows for bound in window)
    if request.exclude_session_ids:
        # One JSON parameter, however many ids (no bound-variable limit).
        parts.append("m.session_id NOT IN (SELECT value FROM json_each(?))")
        params.append(json.dumps(list(request.exclude_session_ids)))
    return Filters(" AND ".join(parts), params, reads_session)


@functools.lru_cache(maxsize=2)
def visible(include_inactive: bool) -> str:
    return visible_sql("m", include_rewound=include_inactive)


def order_sql(sort: str | None, ranked: bool) -> str:
    if sort == "newest":
        return "m.timestamp DESC, m.id DESC"
    if sort == "oldest":
        return "m.timestamp ASC, m.id ASC"
    return RANKED_ORDER if ranked else "m.timestamp DESC, m.id DESC"


def time_sort_key(sort: str | None) -> Callable[[dict[str, Any]], tuple[Any, Any]] | None:
    """The key of ``_order``'s time sorts in Python, for "oldest" (reverse it for "newest")."""
    if sort in ("oldest", "newest"):
        return lambda r: (sqlite_sort_key(r["timestamp"]), r["id"])
    return None


def like_rows(
    conn: sqlite3.Connection,
    parsed: Query,
    where: str,
    params: list[Any],
    sort: str | None,
    limit: int,
    extra: str = "",
    extra_params: Sequence[Any] = (),
    *,
    fold: bool,
    snippets: bool,
    letters: bool = False,
) -> list[dict[str, Any]]:
    """Rows the LIKE scan finds, with snippets cut from their text when ``snippets``;
    ``fold`` and ``letters`` as ``like.like_where``'s."""
    like_sql, like_params = like_where(conn, like_plan(parsed), fold, letters)
    # `+`: a scan in file order, as before optimize-storage added the time
    # index; walking that index reads rows in random order, which for a rare
    # term (every row read, few kept) costs several times the plain scan.
    order = order_sql(sort, ranked=False).replace("m.timestamp", "+m.timestamp")
    columns = ", m.content AS _content, m.tool_name AS _tool_name, m.tool_calls AS _tool_calls"
    sql = (
        f"SELECT {_ROW_COLUMNS.format(snippet='NULL')}{columns if snippets else ''} "
        f"FROM {LIKE_SOURCE} m JOIN sessions s ON s.id = m.session_id "
        f"WHERE {like_sql} AND {where}{extra} ORDER BY {order} LIMIT ?"
    )
    cur = conn.execute(sql, [*like_params, *params, *extra_params, limit])
    rows = [row_dict(cur, raw) for raw in cur]
    if snippets:  # not asked for (`fields`): a long row's text is never read into Python
        terms = snippet_terms(parsed)
        for row in rows:
            texts = [row.pop("_content"), row.pop("_tool_name"), row.pop("_tool_calls")]
            row["snippet"] = like_snippet(texts, terms, fold=conn if fold else None)
    return rows
