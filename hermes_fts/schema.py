"""DDL for the Hermes-compatible session store and its three FTS5 indexes.

This module owns every ``CREATE``/``DROP`` statement: the base tables
(``sessions``, ``messages``, ``state_meta``), the content views, the FTS5
virtual tables, their triggers and the CJK pending-change table.  Row-level
SQL for ``sessions``/``messages`` lives in ``store.py``; index *content*
(backfill, pending apply) lives in ``migrate.py``.

Nothing here decides *when* to create something; ``store.py`` does that.
"""

from __future__ import annotations

import logging
import re
import sqlite3
from dataclasses import dataclass

logger = logging.getLogger("hermes_fts.schema")

# Tool results can be megabytes of JSON; the word index keeps a prefix so it
# stays small, and a tool-role search reads the full body with LIKE instead.
TOOL_CONTENT_PREFIX_CHARS = 8192
# Automated sessions repeat the same vocabulary thousands of times; keeping
# them out of the substring index keeps it small and their noise out of CJK hits.
TRIGRAM_EXCLUDED_SOURCES = ("cron", "subagent")

BASE = "messages_fts"
TRIGRAM = "messages_fts_trigram"
CJK = "messages_fts_cjk"
INDEXES = (BASE, TRIGRAM, CJK)
CJK_PENDING = "messages_fts_cjk_pending"

# state_meta keys.
META_FTS_STALE = "fts_stale"
META_FTS_STALE_REASON = "fts_stale_reason"
META_TRIGRAM_STALE = "fts_trigram_stale"
META_CJK_STALE = "fts_cjk_stale"
MARKER_PREFIX = {
    BASE: "fts_rebuild",
    TRIGRAM: "fts_trigram_rebuild",
    CJK: "fts_cjk_rebuild",
}

# Columns we rely on.  Any other column of an existing store is left alone;
# a column missing from an existing store (an older Hermes build) is added.
SESSIONS_COLUMNS: tuple[tuple[str, str], ...] = (
    ("source", "TEXT NOT NULL DEFAULT 'cli'"),
    ("created_source", "TEXT"),
    ("session_key", "TEXT"),
    ("user_id", "TEXT"),
    ("chat_id", "TEXT"),
    ("chat_type", "TEXT"),
    ("thread_id", "TEXT"),
    ("display_name", "TEXT"),
    ("origin_json", "TEXT"),
    ("model", "TEXT"),
    ("model_config", "TEXT"),
    ("parent_session_id", "TEXT"),
    ("started_at", "REAL NOT NULL DEFAULT 0"),
    ("ended_at", "REAL"),
    ("end_reason", "TEXT"),
    ("message_count", "INTEGER DEFAULT 0"),
    ("tool_call_count", "INTEGER DEFAULT 0"),
    ("title", "TEXT"),
    ("title_source", "TEXT"),
    ("last_activity_at", "REAL"),
    ("archived", "INTEGER NOT NULL DEFAULT 0"),
    ("pinned", "INTEGER NOT NULL DEFAULT 0"),
    ("hidden", "INTEGER NOT NULL DEFAULT 0"),
)
MESSAGES_COLUMNS: tuple[tuple[str, str], ...] = (
    ("session_id", "TEXT NOT NULL DEFAULT ''"),
    ("role", "TEXT NOT NULL DEFAULT 'user'"),
    ("content", "TEXT"),
    ("tool_call_id", "TEXT"),
    ("tool_calls", "TEXT"),
    ("tool_name", "TEXT"),
    ("timestamp", "REAL NOT NULL DEFAULT 0"),
    ("reasoning", "TEXT"),
    ("reasoning_content", "TEXT"),
    ("reasoning_details", "TEXT"),
    ("active", "INTEGER NOT NULL DEFAULT 1"),
    ("compacted", "INTEGER NOT NULL DEFAULT 0"),
    ("display_kind", "TEXT"),
)

# Fresh tables match Hermes Agent's layout (it ADDs its own extra columns on
# its next open).  NOT NULL columns are only those Hermes always fills, so a
# Hermes writer never trips over a constraint of ours.
_BASE_TABLES = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    created_source TEXT,
    session_key TEXT,
    user_id TEXT,
    chat_id TEXT,
    chat_type TEXT,
    thread_id TEXT,
    display_name TEXT,
    origin_json TEXT,
    model TEXT,
    model_config TEXT,
    parent_session_id TEXT,
    started_at REAL NOT NULL,
    ended_at REAL,
    end_reason TEXT,
    message_count INTEGER DEFAULT 0,
    tool_call_count INTEGER DEFAULT 0,
    title TEXT,
    title_source TEXT,
    last_activity_at REAL,
    archived INTEGER NOT NULL DEFAULT 0,
    pinned INTEGER NOT NULL DEFAULT 0,
    hidden INTEGER NOT NULL DEFAULT 0,
    FOREIGN KEY (parent_session_id) REFERENCES sessions(id)
);
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL,
    content TEXT,
    tool_call_id TEXT,
    tool_calls TEXT,
    tool_name TEXT,
    timestamp REAL NOT NULL,
    reasoning TEXT,
    reasoning_content TEXT,
    reasoning_details TEXT,
    active INTEGER NOT NULL DEFAULT 1,
    compacted INTEGER NOT NULL DEFAULT 0,
    display_kind TEXT
);
CREATE TABLE IF NOT EXISTS state_meta (
    key TEXT PRIMARY KEY,
    value TEXT
);
"""

_BASE_INDEXES = """
CREATE INDEX IF NOT EXISTS idx_sessions_source ON sessions(source);
CREATE INDEX IF NOT EXISTS idx_sessions_source_id ON sessions(source, id);
CREATE INDEX IF NOT EXISTS idx_sessions_parent ON sessions(parent_session_id);
CREATE INDEX IF NOT EXISTS idx_sessions_started ON sessions(started_at DESC);
CREATE INDEX IF NOT EXISTS idx_sessions_session_key ON sessions(session_key, started_at DESC);
CREATE INDEX IF NOT EXISTS idx_sessions_title ON sessions(title) WHERE title IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_messages_session ON messages(session_id, timestamp);
CREATE INDEX IF NOT EXISTS idx_messages_session_id ON messages(session_id, id);
CREATE INDEX IF NOT EXISTS idx_messages_session_active ON messages(session_id, active, timestamp);
"""


def _statements(script: str) -> list[str]:
    # executescript() would COMMIT our open transaction, so scripts are run
    # statement by statement inside the caller's transaction instead.
    return [s.strip() for s in script.split(";\n") if s.strip()]


def table_columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')}


def ensure_base_schema(conn: sqlite3.Connection) -> list[str]:
    """Create missing base tables, add missing columns; returns added columns."""
    for stmt in _statements(_BASE_TABLES):
        conn.execute(stmt)
    added: list[str] = []
    for table, columns in (("sessions", SESSIONS_COLUMNS), ("messages", MESSAGES_COLUMNS)):
        live = table_columns(conn, table)
        for name, decl in columns:
            if name in live:
                continue
            try:
                conn.execute(f'ALTER TABLE "{table}" ADD COLUMN "{name}" {decl}')
                added.append(f"{table}.{name}")
            except sqlite3.OperationalError as exc:
                # A sibling process may have added it a moment ago.
                if "duplicate column" not in str(exc).lower():
                    raise
    for stmt in _statements(_BASE_INDEXES):
        conn.execute(stmt)
    if added:
        logger.info("added missing columns to an existing store: %s", ", ".join(added))
    return added


def _default_of(decl: str) -> str:
    """The SQL literal a declared column defaults to (``NULL`` when none)."""
    match = re.search(r"\bDEFAULT\s+('[^']*'|[-\w.]+)", decl, re.IGNORECASE)
    return match.group(1) if match else "NULL"


def shadow_missing_columns(conn: sqlite3.Connection) -> list[str]:
    """Make an older store readable without writing to it; returns what was shadowed.

    A read-only store from an older Hermes build may lack columns we read
    (``active``, ``display_kind`` …) or ``state_meta``.  Writers add them
    (``ensure_base_schema``); a reader cannot, so it puts TEMP views in front
    of the tables (unqualified names find ``temp`` before ``main``) that add
    the missing columns with their declared defaults.  Nothing touches the file.
    """
    shadowed: list[str] = []
    for table, columns in (("sessions", SESSIONS_COLUMNS), ("messages", MESSAGES_COLUMNS)):
        live = table_columns(conn, table)
        missing = [(name, decl) for name, decl in columns if name not in live]
        if not live or not missing:
            continue
        extra = ", ".join(f'{_default_of(decl)} AS "{name}"' for name, decl in missing)
        conn.execute(f'CREATE TEMP VIEW "{table}" AS SELECT *, {extra} FROM main."{table}"')
        shadowed += [f"{table}.{name}" for name, _ in missing]
    if not table_columns(conn, "state_meta"):
        conn.execute("CREATE TEMP TABLE state_meta (key TEXT PRIMARY KEY, value TEXT)")
        shadowed.append("state_meta")
    if shadowed:
        logger.info("read-only store lacks %s; read with defaults", ", ".join(shadowed))
    return shadowed


# --------------------------------------------------------------------------
# state_meta


def get_meta(conn: sqlite3.Connection, key: str) -> str | None:
    try:
        row = conn.execute("SELECT value FROM state_meta WHERE key = ?", (key,)).fetchone()
    except sqlite3.OperationalError:
        return None  # no state_meta yet (read-only open of a foreign file)
    return None if row is None else row[0]


def set_meta(conn: sqlite3.Connection, key: str, value: object) -> None:
    conn.execute(
        "INSERT INTO state_meta(key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, str(value)),
    )


def delete_meta(conn: sqlite3.Connection, *keys: str) -> None:
    for key in keys:
        conn.execute("DELETE FROM state_meta WHERE key = ?", (key,))


def markers(conn: sqlite3.Connection, index: str) -> tuple[int, int] | None:
    """``(high_water, progress)`` of a pending backfill of ``index``, else None."""
    prefix = MARKER_PREFIX[index]
    high = get_meta(conn, f"{prefix}_high_water")
    if high is None:
        return None
    try:
        high_i = int(high)
        prog_i = int(get_meta(conn, f"{prefix}_progress") or 0)
    except ValueError:
        return None
    if high_i <= 0:
        return None
    return high_i, prog_i


def seed_markers(conn: sqlite3.Connection, index: str, high_water: int) -> None:
    prefix = MARKER_PREFIX[index]
    set_meta(conn, f"{prefix}_high_water", high_water)
    set_meta(conn, f"{prefix}_progress", 0)


def clear_markers(conn: sqlite3.Connection, index: str) -> None:
    prefix = MARKER_PREFIX[index]
    delete_meta(conn, f"{prefix}_high_water", f"{prefix}_progress")


# --------------------------------------------------------------------------
# FTS objects


def gate(index: str, id_expr: str) -> str:
    # The rebuild predicate: a row is "in the index" unless it lies in the
    # not-yet-backfilled window (progress, high_water].  Triggers must neither
    # 'delete' a row the backfill has not indexed (corrupts FTS5) nor skip one
    # it has (leaves a stale entry); this one predicate keeps both right.
    prefix = MARKER_PREFIX[index]
    return (
        f"({id_expr} > COALESCE((SELECT CAST(value AS INTEGER) FROM state_meta "
        f"WHERE key = '{prefix}_high_water'), -1) OR {id_expr} <= COALESCE("
        f"(SELECT CAST(value AS INTEGER) FROM state_meta "
        f"WHERE key = '{prefix}_progress'), -1))"
    )


def _tool_prefix(row: str) -> str:
    # Must be the exact expression of the view, so 'delete' removes precisely
    # the tokens that were inserted.
    return (
        f"CASE WHEN {row}.role = 'tool' THEN substr(COALESCE({row}.content, ''), 1, "
        f"{TOOL_CONTENT_PREFIX_CHARS}) ELSE {row}.content END"
    )


_EXCLUDED = ", ".join(f"'{s}'" for s in TRIGRAM_EXCLUDED_SOURCES)


def _trigram_session_ok(session_expr: str) -> str:
    return (
        f"EXISTS (SELECT 1 FROM sessions s WHERE s.id = {session_expr} "
        f"AND s.source NOT IN ({_EXCLUDED}))"
    )


@dataclass(frozen=True)
class IndexDDL:
    name: str
    view: str
    view_sql: str
    table_sql: str
    triggers: tuple[tuple[str, str], ...]  # (name, CREATE TRIGGER ...)
    columns: tuple[str, ...]


def _base_ddl() -> IndexDDL:
    view_sql = (
        f"CREATE VIEW IF NOT EXISTS {BASE}_src AS SELECT id, "
        f"{_tool_prefix('messages')} AS content, tool_name, tool_calls FROM messages"
    )
    table_sql = (
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {BASE} USING fts5("
        f"content, tool_name, tool_calls, content='{BASE}_src', content_rowid='id')"
    )
    ins = (
        f"INSERT INTO {BASE}(rowid, content, tool_name, tool_calls) VALUES "
        f"(new.id, {_tool_prefix('new')}, new.tool_name, new.tool_calls);"
    )
    dele = (
        f"INSERT INTO {BASE}({BASE}, rowid, content, tool_name, tool_calls) VALUES "
        f"('delete', old.id, {_tool_prefix('old')}, old.tool_name, old.tool_calls);"
    )
    changed = (
        "(old.content IS NOT new.content OR old.tool_name IS NOT new.tool_name "
        "OR old.tool_calls IS NOT new.tool_calls OR old.role IS NOT new.role "
        "OR old.id IS NOT new.id)"
    )
    triggers = (
        (f"{BASE}_insert",
         f"CREATE TRIGGER IF NOT EXISTS {BASE}_insert AFTER INSERT ON messages "
         f"WHEN {gate(BASE, 'new.id')} BEGIN {ins} END"),
        (f"{BASE}_delete",
         f"CREATE TRIGGER IF NOT EXISTS {BASE}_delete AFTER DELETE ON messages "
         f"WHEN {gate(BASE, 'old.id')} BEGIN {dele} END"),
        # UPDATE OF narrows firing to indexed columns: flipping active/compacted
        # must never touch the index.
        (f"{BASE}_update",
         f"CREATE TRIGGER IF NOT EXISTS {BASE}_update AFTER UPDATE OF "
         f"id, content, tool_name, tool_calls, role ON messages "
         f"WHEN {changed} AND {gate(BASE, 'old.id')} BEGIN {dele} {ins} END"),
    )
    return IndexDDL(BASE, f"{BASE}_src", view_sql, table_sql, triggers,
                    ("content", "tool_name", "tool_calls"))


def _trigram_ddl() -> IndexDDL:
    view_sql = (
        f"CREATE VIEW IF NOT EXISTS {TRIGRAM}_src AS SELECT m.id AS id, m.content AS content, "
        f"m.tool_name AS tool_name FROM messages m JOIN sessions s ON s.id = m.session_id "
        f"WHERE m.role <> 'tool' AND s.source NOT IN ({_EXCLUDED})"
    )
    table_sql = (
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {TRIGRAM} USING fts5("
        f"content, tool_name, content='{TRIGRAM}_src', content_rowid='id', tokenize='trigram')"
    )
    ins = (f"INSERT INTO {TRIGRAM}(rowid, content, tool_name) "
           f"VALUES (new.id, new.content, new.tool_name);")
    dele = (f"INSERT INTO {TRIGRAM}({TRIGRAM}, rowid, content, tool_name) "
            f"VALUES ('delete', old.id, old.content, old.tool_name);")
    new_ok = f"(new.role <> 'tool' AND {_trigram_session_ok('new.session_id')})"
    old_ok = f"(old.role <> 'tool' AND {_trigram_session_ok('old.session_id')})"
    changed = (
        "(old.content IS NOT new.content OR old.tool_name IS NOT new.tool_name "
        "OR old.role IS NOT new.role OR old.session_id IS NOT new.session_id "
        "OR old.id IS NOT new.id)"
    )
    # Membership depends on the session row too, so session changes that move
    # messages in or out of the view must be mirrored, or 'integrity-check'
    # would fail after e.g. a foreign process deletes a session first.
    old_src_ok = f"old.source NOT IN ({_EXCLUDED})"
    new_src_ok = f"new.source NOT IN ({_EXCLUDED})"

    def session_rows(extra: str) -> str:
        return (f"FROM messages m WHERE m.session_id = old.id AND m.role <> 'tool' "
                f"AND {gate(TRIGRAM, 'm.id')}{extra}")

    def sess_delete(extra: str = "") -> str:
        return (f"INSERT INTO {TRIGRAM}({TRIGRAM}, rowid, content, tool_name) "
                f"SELECT 'delete', m.id, m.content, m.tool_name {session_rows(extra)};")

    sess_insert = (f"INSERT INTO {TRIGRAM}(rowid, content, tool_name) "
                   f"SELECT m.id, m.content, m.tool_name {session_rows(f' AND {new_src_ok}')};")
    triggers = (
        (f"{TRIGRAM}_insert",
         f"CREATE TRIGGER IF NOT EXISTS {TRIGRAM}_insert AFTER INSERT ON messages "
         f"WHEN {new_ok} AND {gate(TRIGRAM, 'new.id')} BEGIN {ins} END"),
        (f"{TRIGRAM}_delete",
         f"CREATE TRIGGER IF NOT EXISTS {TRIGRAM}_delete AFTER DELETE ON messages "
         f"WHEN {old_ok} AND {gate(TRIGRAM, 'old.id')} BEGIN {dele} END"),
        (f"{TRIGRAM}_update",
         f"CREATE TRIGGER IF NOT EXISTS {TRIGRAM}_update AFTER UPDATE OF "
         f"id, content, tool_name, role, session_id ON messages "
         f"WHEN {changed} AND {gate(TRIGRAM, 'old.id')} BEGIN "
         f"INSERT INTO {TRIGRAM}({TRIGRAM}, rowid, content, tool_name) "
         f"SELECT 'delete', old.id, old.content, old.tool_name WHERE {old_ok}; "
         f"INSERT INTO {TRIGRAM}(rowid, content, tool_name) "
         f"SELECT new.id, new.content, new.tool_name WHERE {new_ok}; END"),
        (f"{TRIGRAM}_session_update",
         f"CREATE TRIGGER IF NOT EXISTS {TRIGRAM}_session_update AFTER UPDATE OF "
         f"source ON sessions WHEN ({old_src_ok}) IS NOT ({new_src_ok}) BEGIN "
         f"{sess_delete(f' AND {old_src_ok}')} {sess_insert} END"),
        (f"{TRIGRAM}_session_delete",
         f"CREATE TRIGGER IF NOT EXISTS {TRIGRAM}_session_delete AFTER DELETE ON sessions "
         f"WHEN {old_src_ok} BEGIN {sess_delete()} END"),
    )
    return IndexDDL(TRIGRAM, f"{TRIGRAM}_src", view_sql, table_sql, triggers,
                    ("content", "tool_name"))


def _cjk_ddl() -> IndexDDL:
    view_sql = (
        f"CREATE VIEW IF NOT EXISTS {CJK}_src AS SELECT id, content, tool_name, tool_calls "
        f"FROM messages WHERE role <> 'tool'"
    )
    table_sql = (
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {CJK} USING fts5("
        f"content, tool_name, tool_calls, content='{CJK}_src', content_rowid='id', "
        f"tokenize='cjk_unicode61 unigrams 1')"
    )
    # No trigger writes into the CJK index: a writer without the extension
    # (sqlite3 shell, older agent) would fail with "no such tokenizer".  The
    # triggers only log the change, with the old indexed values, into a plain
    # table that SessionStore applies later.
    log = (f"INSERT INTO {CJK_PENDING}(msg_id, op, old_role, old_content, old_tool_name, "
           f"old_tool_calls) VALUES ")
    changed = (
        "(old.content IS NOT new.content OR old.tool_name IS NOT new.tool_name "
        "OR old.tool_calls IS NOT new.tool_calls OR old.role IS NOT new.role)"
    )
    triggers = (
        (f"{CJK_PENDING}_insert",
         f"CREATE TRIGGER IF NOT EXISTS {CJK_PENDING}_insert AFTER INSERT ON messages "
         f"WHEN new.role <> 'tool' BEGIN "
         f"{log}(new.id, 'insert', NULL, NULL, NULL, NULL); END"),
        (f"{CJK_PENDING}_delete",
         f"CREATE TRIGGER IF NOT EXISTS {CJK_PENDING}_delete AFTER DELETE ON messages "
         f"WHEN old.role <> 'tool' BEGIN "
         f"{log}(old.id, 'delete', old.role, old.content, old.tool_name, old.tool_calls); END"),
        (f"{CJK_PENDING}_update",
         f"CREATE TRIGGER IF NOT EXISTS {CJK_PENDING}_update AFTER UPDATE OF "
         f"content, tool_name, tool_calls, role ON messages "
         f"WHEN {changed} AND (old.role <> 'tool' OR new.role <> 'tool') BEGIN "
         f"{log}(old.id, 'update', old.role, old.content, old.tool_name, old.tool_calls); END"),
    )
    return IndexDDL(CJK, f"{CJK}_src", view_sql, table_sql, triggers,
                    ("content", "tool_name", "tool_calls"))


PENDING_TABLE_SQL = (
    f"CREATE TABLE IF NOT EXISTS {CJK_PENDING} ("
    "seq INTEGER PRIMARY KEY AUTOINCREMENT, msg_id INTEGER NOT NULL, op TEXT NOT NULL, "
    "old_role TEXT, old_content TEXT, old_tool_name TEXT, old_tool_calls TEXT)"
)
PENDING_INDEX_SQL = (
    f"CREATE INDEX IF NOT EXISTS {CJK_PENDING}_msg ON {CJK_PENDING}(msg_id, seq)"
)

DDL: dict[str, IndexDDL] = {BASE: _base_ddl(), TRIGRAM: _trigram_ddl(), CJK: _cjk_ddl()}


def create_index_objects(conn: sqlite3.Connection, index: str) -> None:
    """View + virtual table (+ pending table for CJK); triggers separately."""
    ddl = DDL[index]
    conn.execute(ddl.view_sql)
    conn.execute(ddl.table_sql)
    if index == CJK:
        conn.execute(PENDING_TABLE_SQL)
        conn.execute(PENDING_INDEX_SQL)


# Hermes Agent 0.19.0 counts six trigger names when it opens a store (the
# three messages_fts_* and the three messages_fts_trigram_* ones); with
# fewer present it creates its own trigram index and refills messages_fts with
# its inline text, which wrecks our external-content layout.  So while our
# trigram index is off (opt-out, no tokenizer, stale), the three trigram names
# are held by placeholders: WHEN 0 means they never fire, and the body touches
# no table, so no writer (one without FTS5 included) can fail on them.
PLACEHOLDER_MARK = "hermes_fts placeholder: trigram index off"
_TRIGRAM_EVENTS = (("insert", "INSERT"), ("delete", "DELETE"), ("update", "UPDATE"))
TRIGRAM_PLACEHOLDERS: tuple[tuple[str, str], ...] = tuple(
    (f"{TRIGRAM}_{suffix}",
     f"CREATE TRIGGER IF NOT EXISTS {TRIGRAM}_{suffix} AFTER {event} ON messages "
     f"WHEN 0 BEGIN SELECT '{PLACEHOLDER_MARK}'; END")
    for suffix, event in _TRIGRAM_EVENTS
)


def _trigger_sql(conn: sqlite3.Connection) -> dict[str, str]:
    return {row[0]: row[1] or "" for row in conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")}


def is_placeholder(sql: str | None) -> bool:
    return sql is not None and PLACEHOLDER_MARK in sql


def install_trigram_placeholders(conn: sqlite3.Connection) -> None:
    """Detach the trigram index but keep Hermes' three trigger names taken.

    Idempotent: placeholders already in place are left alone, so an open
    does not rewrite the schema every time.
    """
    live = _trigger_sql(conn)
    for name, _sql in DDL[TRIGRAM].triggers:  # real ones, session triggers included
        if name in live and not is_placeholder(live[name]):
            conn.execute(f"DROP TRIGGER {name}")
    for name, sql in TRIGRAM_PLACEHOLDERS:
        if not is_placeholder(live.get(name)):
            conn.execute(sql)


def drop_trigram_placeholders(conn: sqlite3.Connection) -> None:
    live = _trigger_sql(conn)
    for name, _sql in TRIGRAM_PLACEHOLDERS:
        if is_placeholder(live.get(name)):
            conn.execute(f"DROP TRIGGER {name}")


def create_triggers(conn: sqlite3.Connection, index: str) -> None:
    if index == TRIGRAM:
        # CREATE TRIGGER IF NOT EXISTS would keep a placeholder in place.
        drop_trigram_placeholders(conn)
    for _name, sql in DDL[index].triggers:
        conn.execute(sql)


def drop_triggers(conn: sqlite3.Connection, index: str) -> None:
    for name, _sql in DDL[index].triggers:
        conn.execute(f"DROP TRIGGER IF EXISTS {name}")


def drop_index_objects(conn: sqlite3.Connection, index: str) -> None:
    drop_triggers(conn, index)
    conn.execute(f"DROP TABLE IF EXISTS {index}")
    conn.execute(f"DROP VIEW IF EXISTS {DDL[index].view}")
    if index == CJK:
        conn.execute(f"DROP TABLE IF EXISTS {CJK_PENDING}")


def missing_triggers(conn: sqlite3.Connection, index: str) -> list[str]:
    """Trigger names of ``index`` that are absent or only a placeholder."""
    names = [name for name, _ in DDL[index].triggers]
    if index == TRIGRAM:
        # Hermes Agent's own trigram layout has only the three message
        # triggers; the session triggers are ours and optional for it.
        names = names[:3]
    live = _trigger_sql(conn)
    return [n for n in names if n not in live or is_placeholder(live[n])]


def index_sql(conn: sqlite3.Connection, index: str) -> str | None:
    row = conn.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (index,)
    ).fetchone()
    return None if row is None else (row[0] or "")


def index_layout(sql: str | None) -> str | None:
    """``external`` (ours: content over a view) or ``inline`` (Hermes Agent's own)."""
    if sql is None:
        return None
    return "external" if "content=" in sql.replace(" ", "").lower() else "inline"


def probe_fts5(conn: sqlite3.Connection) -> bool:
    return _probe(conn, "fts5(x)")


def probe_trigram(conn: sqlite3.Connection) -> bool:
    return _probe(conn, "fts5(x, tokenize='trigram')")


def _probe(conn: sqlite3.Connection, module: str) -> bool:
    # A temp table never touches the database file, so this is safe on a
    # read-only connection too.
    try:
        conn.execute(f"CREATE VIRTUAL TABLE temp._hermes_fts_probe USING {module}")
    except sqlite3.OperationalError as exc:
        logger.debug("capability probe %s failed: %s", module, exc)
        return False
    conn.execute("DROP TABLE temp._hermes_fts_probe")
    return True
