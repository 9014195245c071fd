"""search_messages: sanitize → route → MATCH / LIKE → finalize.

Routes, in the order they are tried (DESIGN.md decision 6, never silently
empty):

``fts5``      queries without CJK, on the unicode61 word index (all roles, tool
              rows by their first 8192 characters).  Latin glued to CJK
              (``修改youer服务端``) is one unicode61 token, so when the word index
              comes up short the CJK index, which splits Latin off CJK, adds
              the rows it missed *after* the ranked hits: searches that already
              succeed keep their unicode61 ranking.
``fts_cjk``   CJK queries, on the cjk_unicode61 bigram index (non-tool rows);
              one-character terms too, thanks to ``unigrams 1``.
``trigram``   CJK queries when the CJK index is unavailable and every term has at
              least 3 characters; rows the trigram index leaves out by design
              (cron and subagent sessions, and rows with ``tool_calls``, a
              column it lacks) are answered by a LIKE scan over those rows only.
``like_scan`` the last resort, with the same AND/OR/NOT meaning;
              ``like_scan_fts_stale`` when the indexes are under repair.
``empty``     nothing searchable in the query.
``refused``   a query the language refuses (``query.parse_query``): search_messages
              raises ``QueryError`` saying how to write it.

A route is taken only when it can represent the query exactly
(``query.route_can_represent``); a miss on such a route is the answer, not a
reason to scan.  A tool-role search reads full tool bodies with LIKE.
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import schema
from .like_sql import like_where
from .query import (
    Query,
    QueryError,
    choose_route,
    has_cjk,
    like_plan,
    match_expression,
    parse_query,
    route_can_represent,
    snippet_terms,
)
from .views import decode_content

if TYPE_CHECKING:
    from .store import SessionStore

logger = logging.getLogger("hermes_fts.search")

RESULT_FIELDS = (
    "id",
    "session_id",
    "role",
    "snippet",
    "timestamp",
    "tool_name",
    "source",
    "model",
    "session_started",
    "context",
)
INDEX_ROUTES = {"fts5": schema.BASE, "fts_cjk": schema.CJK, "trigram": schema.TRIGRAM}
ROUTE_ORDER = ("fts5", "fts_cjk", "trigram", "like_scan")

SNIPPET_TOKENS = 40  # built-in snippet(): a word index counts tokens
SNIPPET_CHARS = 80  # cjk_snippet(): characters, since a bigram is one character wide
LIKE_SNIPPET_BEFORE = 40
LIKE_SNIPPET_CHARS = 120
CONTEXT_CHARS = 200
GAP_SCAN_LIMIT = 200  # bound on rows added from a not-yet-indexed id range
RANK_TIER = 256  # matches ordered together; see _match_rows
MAX_ROWS = 2**62  # bound on limit + offset, within SQLite's 64-bit LIMIT
SLOW_MS_DEFAULT = 1000.0


@dataclass(frozen=True)
class Plan:
    """The route a search takes and the parsed query it runs."""

    route: str
    query: Query
    sanitized: str

    @property
    def notes(self) -> tuple[str, ...]:
        """What the parser changed in the query as written, and why (query.parse_query)."""
        return self.query.notes


# ---------------------------------------------------------------------------
# Planning


def _role_list(role_filter: Any) -> list[str] | None:
    if role_filter is None:
        return None
    if isinstance(role_filter, str):
        role_filter = role_filter.split(",")
    roles = [str(r).strip() for r in role_filter if str(r).strip()]
    return roles or None


def plan_search(
    store: SessionStore,
    query: Any,
    role_filter: Any = None,
    only_route: str | None = None,
    state: dict[str, Any] | None = None,
) -> Plan:
    """Choose the route for ``query``.

    ``only_route`` restricts the indexes to that one (plus LIKE), as if it
    were the only index available: tests use it to prove every route exact.
    """
    if not isinstance(query, str) or not query.strip():
        return Plan("empty", Query(), "")
    parsed = parse_query(query)
    if parsed.error:  # search_messages raises QueryError with the reason
        return Plan("refused", parsed, "")
    sanitized = match_expression(parsed, "fts5")  # = sanitize_fts5_query(query)
    if parsed.is_empty:
        return Plan("empty", parsed, sanitized)
    state = state if state is not None else store.index_state()
    if state["fts_stale"]:
        return Plan("like_scan_fts_stale", parsed, sanitized)
    roles = _role_list(role_filter)
    if roles is not None and "tool" in roles:
        # The word index holds only a prefix of tool output.
        return Plan("like_scan", parsed, sanitized)
    if only_route is not None and only_route not in ROUTE_ORDER:
        raise ValueError(f"unknown route {only_route!r}")
    served = {route: state[index]["served"] and only_route in (None, route)
              for route, index in INDEX_ROUTES.items()}
    route = choose_route(parsed, fts5_index=served["fts5"], cjk_index=served["fts_cjk"],
                         trigram_index=served["trigram"])
    return Plan(route, parsed, sanitized)


def query_notes(query: Any) -> list[str]:
    """What the parser changed in ``query`` and why, then the refusal reason if any.

    The same notes as ``plan_search(...).notes``; for the tool's and CLI's output.
    """
    parsed = parse_query(query)
    return [*parsed.notes, *([parsed.error] if parsed.error else [])]


def describe_search_path(store: SessionStore, query: Any) -> str:
    """The route ``search_messages(query)`` takes; never raises."""
    try:
        return plan_search(store, query).route
    except Exception:  # a description must never break the caller
        logger.debug("describe_search_path failed", exc_info=True)
        return "unknown"


# ---------------------------------------------------------------------------
# SQL pieces


def _filters(
    include_inactive: bool,
    source_filter: Sequence[str] | None,
    exclude_sources: Sequence[str] | None,
    roles: list[str] | None,
) -> tuple[str, list[Any]]:
    parts = ["COALESCE(m.display_kind, '') <> 'hidden'"]
    params: list[Any] = []
    if not include_inactive:
        parts.append("(m.active = 1 OR m.compacted = 1)")
    for values, op in ((source_filter, "IN"), (exclude_sources, "NOT IN")):
        if values is not None:
            # "cli,cron" means two sources, as "user,assistant" is two roles.
            values = ([v.strip() for v in values.split(",") if v.strip()]
                      if isinstance(values, str) else list(values))
            parts.append(f"s.source {op} ({', '.join('?' for _ in values)})")
            params.extend(values)
    if roles:
        parts.append(f"m.role IN ({', '.join('?' for _ in roles)})")
        params.extend(roles)
    return " AND ".join(parts), params


def _order(sort: str | None, ranked: bool) -> str:
    key = sort.strip().lower() if isinstance(sort, str) else ""
    if key == "newest":
        return "m.timestamp DESC, m.id DESC"
    if key == "oldest":
        return "m.timestamp ASC, m.id ASC"
    return "rank" if ranked else "m.timestamp DESC, m.id DESC"


_ROW_COLUMNS = (
    "m.id, m.session_id, m.role, {snippet} AS snippet, m.timestamp, m.tool_name, "
    "s.source, s.model, s.started_at AS session_started"
)


def _match_rows(
    conn: sqlite3.Connection,
    table: str,
    expression: str,
    snippet_sql: str,
    where: str,
    params: list[Any],
    order: str,
    limit: int,
    extra: str = "",
    extra_params: Sequence[Any] = (),
) -> list[dict[str, Any]]:
    """Matching rows in ``order``, ranked tier by tier.

    Ranking or sorting every match costs microseconds per match, which for a
    very common term (tens of thousands of matches) would approach the LIKE
    scan the index replaces.  So matches are taken in tiers of RANK_TIER by
    rowid (newest first) and ranked inside each tier; a term with at most
    RANK_TIER matches is ranked exactly.  Time sorts are not tiered: rowids
    need not follow timestamps (imported or back-dated rows), so only one
    ordered query is exact there.
    """
    order_sql = order.replace("rank", f"{table}.rank")
    sql = (
        f"SELECT {_ROW_COLUMNS.format(snippet=snippet_sql)} FROM {table} "
        f"JOIN messages m ON m.id = {table}.rowid JOIN sessions s ON s.id = m.session_id "
        f"WHERE {table} MATCH ? AND {where}{extra}{{tier}} ORDER BY {order_sql} LIMIT ?"
    )
    if "rank" not in order:
        cur = conn.execute(sql.format(tier=""), [expression, *params, *extra_params, limit])
        return [_row_dict(cur, row) for row in cur]
    bound_sql = (
        f"SELECT rowid FROM {table} WHERE {table} MATCH ?{{tier}} "
        f"ORDER BY rowid DESC LIMIT 1 OFFSET {RANK_TIER - 1}"
    )
    rows: list[dict[str, Any]] = []
    edge: int | None = None  # rowids past this edge were handled by earlier tiers
    while len(rows) < limit:
        edge_sql = "" if edge is None else f" AND {table}.rowid < {int(edge)}"
        bound = conn.execute(bound_sql.format(tier=edge_sql.replace(f"{table}.", "")),
                             [expression]).fetchone()
        tier_sql = edge_sql
        if bound is not None:
            tier_sql += f" AND {table}.rowid >= {int(bound[0])}"
        cur = conn.execute(sql.format(tier=tier_sql),
                           [expression, *params, *extra_params, limit - len(rows)])
        rows.extend(_row_dict(cur, row) for row in cur)
        if bound is None:
            break
        edge = int(bound[0])
    return rows


def _row_dict(cur: sqlite3.Cursor, row: Sequence[Any]) -> dict[str, Any]:
    return {d[0]: v for d, v in zip(cur.description, row)}


def _like_rows(
    conn: sqlite3.Connection,
    parsed: Query,
    where: str,
    params: list[Any],
    sort: str | None,
    limit: int,
    extra: str = "",
    extra_params: Sequence[Any] = (),
) -> list[dict[str, Any]]:
    like_sql, like_params = like_where(conn, like_plan(parsed))
    sql = (
        f"SELECT {_ROW_COLUMNS.format(snippet='NULL')}, m.content AS _content, "
        f"m.tool_name AS _tool_name, m.tool_calls AS _tool_calls "
        f"FROM messages m JOIN sessions s ON s.id = m.session_id "
        f"WHERE {like_sql} AND {where}{extra} ORDER BY {_order(sort, ranked=False)} LIMIT ?"
    )
    cur = conn.execute(sql, [*like_params, *params, *extra_params, limit])
    terms = snippet_terms(parsed)
    rows = []
    for raw in cur:
        row = _row_dict(cur, raw)
        texts = [row.pop("_content"), row.pop("_tool_name"), row.pop("_tool_calls")]
        row["snippet"] = like_snippet(texts, terms)
        rows.append(row)
    return rows


def like_snippet(texts: Iterable[str | None], terms: Sequence[str]) -> str:
    """Text around the first term found, marked ``>>>term<<<``.

    Taken from the first column holding a term, so a hit in ``tool_name``
    alone still shows the term.
    """
    found = [t for t in (decode_content(x) for x in texts) if isinstance(t, str) and t]
    for text in found:
        lowered = text.lower()
        for term in terms:
            at = lowered.find(term.lower())
            if at < 0:
                continue
            start = max(0, at - LIKE_SNIPPET_BEFORE)
            end = min(len(text), start + LIKE_SNIPPET_CHARS)
            end = max(end, at + len(term))
            return (
                ("..." if start > 0 else "")
                + text[start:at]
                + ">>>"
                + text[at : at + len(term)]
                + "<<<"
                + text[at + len(term) : end]
                + ("..." if end < len(text) else "")
            )
    return found[0][:LIKE_SNIPPET_CHARS] if found else ""


def _snippet_sql(table: str, cjk_helpers: bool) -> str:
    if cjk_helpers:  # merges overlapping bigram/trigram hits into one span
        return f"cjk_snippet({table}, -1, '>>>', '<<<', '...', {SNIPPET_CHARS})"
    return f"snippet({table}, -1, '>>>', '<<<', '...', {SNIPPET_TOKENS})"


# ---------------------------------------------------------------------------
# Running a plan


@dataclass
class _Request:
    store: SessionStore
    plan: Plan
    where: str
    params: list[Any]
    sort: str | None
    want: int  # limit + offset: rows needed before the page is cut
    state: dict[str, Any]


def _run_index(req: _Request, route: str) -> list[dict[str, Any]]:
    table = INDEX_ROUTES[route]
    conn = req.store.conn
    snippet = _snippet_sql(table, req.store.cjk_available)
    expression = match_expression(req.plan.query, route)
    order = _order(req.sort, ranked=True)
    blind = _blind_spot(req, table)
    extra = f" AND NOT ({blind})" if blind else ""
    rows = _match_rows(conn, table, expression, snippet, req.where, req.params, order, req.want,
                       extra)
    if route == "fts5":
        rows += _glued_latin(req, expression, rows)
    if route == "trigram":
        rows += _left_out(req, rows, f"s.source IN ({_EXCLUDED_MARKS}) OR {blind}",
                          schema.TRIGRAM_EXCLUDED_SOURCES)
    elif blind:
        rows += _left_out(req, rows, blind)
    rows += _unindexed_gap(req, table, rows)
    return rows


_EXCLUDED_MARKS = ", ".join("?" for _ in schema.TRIGRAM_EXCLUDED_SOURCES)


def _blind_spot(req: _Request, table: str) -> str:
    """SQL condition for the non-tool rows ``table`` cannot answer exactly, or "".

    The trigram index has no ``tool_calls`` column.  The CJK index lags behind
    rows in the pending table when the store could not apply it (read-only):
    those may be missing or indexed with their old text.  Such rows are left
    out of the MATCH and answered by LIKE instead (``_left_out``).
    """
    if table == schema.TRIGRAM:
        return "COALESCE(m.tool_calls, '') <> ''"
    if table == schema.CJK and req.state["cjk_pending"]:
        return f"m.id IN (SELECT msg_id FROM {schema.CJK_PENDING})"
    return ""


def _still_wanted(req: _Request, found: list[dict[str, Any]]) -> int:
    """Rows a disjoint supplement must add to the rows already ``found``.

    Relevance keeps the ranked hits first, so only the shortfall is needed.
    A time sort merges every source by timestamp afterwards: a supplement row
    may belong before any found row, so each source gives its own first ``want``.
    """
    if _sort_key(req.sort) is not None:
        return req.want
    return req.want - len(found)


def _glued_latin(
    req: _Request, fts5_expr: str, found: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Rows where a Latin term is glued to CJK, which unicode61 cannot see."""
    missing = _still_wanted(req, found)
    cjk = req.state[schema.CJK]
    if missing <= 0 or not cjk["served"]:
        return []
    if not route_can_represent(req.plan.query, "fts_cjk"):
        return []
    expression = match_expression(req.plan.query, "fts_cjk")
    snippet = _snippet_sql(schema.CJK, True)
    extra = f" AND m.id NOT IN (SELECT rowid FROM {schema.BASE} WHERE {schema.BASE} MATCH ?)"
    blind = _blind_spot(req, schema.CJK)
    if blind:  # a stale CJK entry must not add a row
        extra += f" AND NOT ({blind})"
    return _match_rows(
        req.store.conn, schema.CJK, expression, snippet, req.where, req.params,
        _order(req.sort, ranked=True), missing, extra, [fts5_expr],
    )


def _left_out(
    req: _Request, found: list[dict[str, Any]], condition: str, params: Sequence[Any] = ()
) -> list[dict[str, Any]]:
    """Non-tool rows an index leaves out (``condition``), found by a LIKE scan of only them.

    The trigram index leaves out cron and subagent sessions by design, and
    with the CJK index, the rows of ``_blind_spot``.
    """
    missing = _still_wanted(req, found)
    if missing <= 0:
        return []
    return _like_rows(
        req.store.conn, req.plan.query, req.where, req.params, req.sort, missing,
        f" AND m.role <> 'tool' AND ({condition})", list(params),
    )


def _unindexed_gap(req: _Request, table: str, found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """During a backfill, rows not yet indexed are found by a bounded LIKE scan."""
    gap = req.state[table]["unindexed_range"]
    if not gap:
        return []
    seen = {r["id"] for r in found}
    lo, hi = gap
    extra = " AND m.id > ? AND m.id <= ?"
    if table != schema.BASE:
        extra += " AND m.role <> 'tool'"
    rows = _like_rows(
        req.store.conn, req.plan.query, req.where, req.params, req.sort,
        min(GAP_SCAN_LIMIT, req.want), extra, [lo, hi],
    )
    return [r for r in rows if r["id"] not in seen]


def _sort_key(sort: str | None):
    key = sort.strip().lower() if isinstance(sort, str) else ""
    if key == "oldest":
        return lambda r: (r["timestamp"], r["id"])
    if key == "newest":
        return lambda r: (-r["timestamp"], -r["id"])
    return None


_MARKED = re.compile(r">>>(.*?)<<<", re.DOTALL)


def narrow_single_char_hits(snippet: str, q: Query) -> str:
    """Mark just the character when a one-character term hit inside a bigram.

    cjk_snippet can only narrow such a hit itself on SQLite >= 3.45 (which
    says which token matched); before that it marks the whole bigram, e.g.
    ``>>>猫粮<<<`` for the query 猫.  The query knows which character it was.
    """
    singles = {t.text for t in q.terms if not t.negated and len(t.text) == 1 and has_cjk(t.text)}
    if not singles or not snippet:
        return snippet
    longer = [t.text for t in q.terms if not t.negated and len(t.text) > 1]

    def narrow(m: re.Match[str]) -> str:
        span = m.group(1)
        if len(span) != 2 or any(span in t for t in longer):
            return m.group(0)
        first, second = span[0], span[1]
        if first in singles:
            return f">>>{first}<<<{second}"
        if second in singles:
            return f"{first}>>>{second}<<<"
        return m.group(0)

    return _MARKED.sub(narrow, snippet)


def _execute(req: _Request) -> list[dict[str, Any]]:
    route = req.plan.route
    if route in INDEX_ROUTES:
        rows = _run_index(req, route)
        if route == "fts_cjk":
            for row in rows:
                if isinstance(row.get("snippet"), str):
                    row["snippet"] = narrow_single_char_hits(row["snippet"], req.plan.query)
    else:
        rows = _like_rows(req.store.conn, req.plan.query, req.where, req.params, req.sort, req.want)
    key = _sort_key(req.sort)
    if key is not None:
        rows.sort(key=key)
    return rows


# ---------------------------------------------------------------------------
# Finalize: context and projection


def _attach_context(
    conn: sqlite3.Connection, rows: list[dict[str, Any]], include_inactive: bool
) -> None:
    """The previous message, the match and the next message of the same session."""
    visible = "" if include_inactive else " AND (n.active = 1 OR n.compacted = 1)"
    visible += " AND COALESCE(n.display_kind, '') <> 'hidden'"
    neighbour = (
        "(SELECT n.id FROM messages n WHERE n.session_id = m.session_id{vis} "
        "AND (n.timestamp, n.id) {op} (m.timestamp, m.id) "
        "ORDER BY n.timestamp {dir}, n.id {dir} LIMIT 1)"
    )
    prev_sql = neighbour.format(vis=visible, op="<", dir="DESC")
    next_sql = neighbour.format(vis=visible, op=">", dir="ASC")
    for row in rows:
        row["context"] = []
    by_id = {r["id"]: r for r in rows}
    ids = list(by_id)
    try:
        for start in range(0, len(ids), 500):
            batch = ids[start : start + 500]
            marks = ", ".join("?" for _ in batch)
            triples = conn.execute(
                f"SELECT m.id, {prev_sql}, {next_sql} FROM messages m WHERE m.id IN ({marks})",
                batch,
            ).fetchall()
            wanted = {i for t in triples for i in t if i is not None}
            bodies = {}
            wanted_list = list(wanted)
            for s in range(0, len(wanted_list), 500):
                chunk = wanted_list[s : s + 500]
                q = ", ".join("?" for _ in chunk)
                for mid, role, content in conn.execute(
                    f"SELECT id, role, content FROM messages WHERE id IN ({q})", chunk
                ):
                    text = decode_content(content)
                    text = text[:CONTEXT_CHARS] if isinstance(text, str) else text
                    bodies[mid] = {"role": role, "content": text}
            for mid, prev_id, next_id in triples:
                by_id[mid]["context"] = [bodies[i] for i in (prev_id, mid, next_id) if i in bodies]
    except sqlite3.Error:
        logger.debug("context lookup failed; results keep empty contexts", exc_info=True)


def _check_fields(fields: Any) -> tuple[str, ...] | None:
    if fields is None:
        return None
    if isinstance(fields, (str, bytes)):
        raise TypeError("search fields must be a collection of field names, not a string")
    names = list(fields)
    unknown = sorted({str(f) for f in names} - set(RESULT_FIELDS))
    if unknown:
        raise ValueError(f"unknown search result field(s): {', '.join(unknown)}")
    return tuple(f for f in RESULT_FIELDS if f in names)


# ---------------------------------------------------------------------------
# Entry point


def _slow_ms() -> float:
    raw = os.environ.get("HERMES_SEARCH_SLOW_MS")
    if raw is None:
        return SLOW_MS_DEFAULT
    try:
        value = float(raw)
    except ValueError:
        return SLOW_MS_DEFAULT
    return value if value >= 0 else SLOW_MS_DEFAULT


def _truthy(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


def search_messages(
    store: SessionStore,
    query: Any,
    source_filter: Sequence[str] | None = None,
    exclude_sources: Sequence[str] | None = None,
    role_filter: Any = None,
    limit: int = 20,
    offset: int = 0,
    sort: str | None = None,
    include_inactive: bool = False,
    fields: Any = None,
    *,
    only_route: str | None = None,
) -> list[dict[str, Any]]:
    """Search visible messages; see the module docstring for the routes."""
    projection = _check_fields(fields)
    started = time.perf_counter()
    route = "unknown"
    rows: list[dict[str, Any]] | None = None
    try:
        route, rows = _search(
            store, query, source_filter, exclude_sources, role_filter,
            limit, offset, sort, include_inactive, projection, only_route,
        )
        return rows
    finally:
        _log_search(route, started, rows, query)


def _log_search(route: str, started: float, rows: list | None, query: Any) -> None:
    elapsed_ms = (time.perf_counter() - started) * 1000.0
    if elapsed_ms < _slow_ms():
        return
    text = query if isinstance(query, str) else ""
    line = (
        f"session search: path={route} elapsed={elapsed_ms:.1f}ms "
        f"rows={len(rows) if rows is not None else 'err'} chars={len(text)}"
    )
    if _truthy("HERMES_SEARCH_LOG_QUERY"):
        line += f" query={text[:200]!r}"
    logger.info(line)


def _count(value: Any, name: str) -> int:
    """An integer ``limit``/``offset`` (``5``, ``"5"``, ``5.0``) or a clear error."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise TypeError(f"search {name} must be an integer, not {type(value).__name__}")
    try:
        number = int(value) if isinstance(value, str) else value
        if number != int(number):
            raise ValueError
        return int(number)
    except (ValueError, OverflowError):
        raise ValueError(f"search {name} must be an integer, got {value!r}") from None


def _search(
    store: SessionStore,
    query: Any,
    source_filter: Sequence[str] | None,
    exclude_sources: Sequence[str] | None,
    role_filter: Any,
    limit: int,
    offset: int,
    sort: str | None,
    include_inactive: bool,
    projection: tuple[str, ...] | None,
    only_route: str | None,
) -> tuple[str, list[dict[str, Any]]]:
    limit = max(0, _count(limit, "limit"))
    offset = max(0, _count(offset, "offset"))
    if not store.readonly:
        store.sync()  # rows written by processes without the extension
    state = store.index_state()
    plan = plan_search(store, query, role_filter, only_route, state)
    if plan.route == "refused":
        raise QueryError(plan.query.error)
    if plan.route == "empty" or limit == 0:
        return plan.route, []
    roles = _role_list(role_filter)
    where, params = _filters(include_inactive, source_filter, exclude_sources, roles)
    # SQLite binds 64-bit integers; a larger "no limit" means every row anyway.
    req = _Request(store, plan, where, params, sort, min(limit + offset, MAX_ROWS), state)
    try:
        rows = _execute(req)
    except sqlite3.DatabaseError as exc:
        if not store.is_index_corruption(exc):
            raise
        store.mark_fts_stale(str(exc))
        plan = Plan("like_scan_fts_stale", plan.query, plan.sanitized)
        req.plan = plan
        rows = _execute(req)
    rows = rows[offset : offset + limit]
    if projection is None or "context" in projection:
        _attach_context(store.conn, rows, include_inactive)
    if projection is not None:
        rows = [{k: r.get(k) for k in projection} for r in rows]
    return plan.route, rows


# ---------------------------------------------------------------------------
# One best hit per group (discovery: a session lineage per result)

DISTINCT_FIRST_SCAN = 300  # what discovery scanned before
DISTINCT_MAX_SCAN = 30_000


def search_distinct(
    store: SessionStore,
    query: Any,
    group_of: Callable[[dict[str, Any]], str | None],
    want: int,
    *,
    demote: Callable[[dict[str, Any]], bool] | None = None,
    first_scan: int = DISTINCT_FIRST_SCAN,
    max_scan: int = DISTINCT_MAX_SCAN,
    **options: Any,
) -> list[dict[str, Any]]:
    """The best hit of each of the first ``want`` groups, in search order.

    ``group_of(row)`` names a row's group (for discovery, its session
    lineage), or None to skip the row; a group is represented by its first
    row.  ``demote(row)`` ranks groups whose first row it is true for (cron
    sessions) after all others, keeping search order within each tier.  One long session cannot crowd out the rest: while the rows
    read hold fewer than ``want`` groups of the first tier, the scan doubles
    (re-read from the top, so the ranking holds), up to ``max_scan`` rows.
    Doubling keeps all the rows read within twice the last scan.  ``options``
    go to :func:`search_messages` (not ``limit``/``offset``).
    """
    if want <= 0:
        return []
    scan = max(1, min(first_scan, max_scan))
    while True:
        rows = search_messages(store, query, limit=scan, offset=0, **options)
        tiers: tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]] = ({}, {})
        for row in rows:
            key = group_of(row)
            if key is None or key in tiers[0] or key in tiers[1]:
                continue
            tier = tiers[1] if demote is not None and demote(row) else tiers[0]
            tier[key] = row
            if len(tiers[0]) >= want:
                break
        if len(tiers[0]) >= want or len(rows) < scan or scan >= max_scan:
            return [*tiers[0].values(), *tiers[1].values()][:want]
        scan = min(scan * 2, max_scan)
