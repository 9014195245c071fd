"""DDL for the Hermes-compatible session store and its three FTS5 indexes.

This module owns every ``CREATE``/``DROP`` statement: the base tables
(``sessions``, ``messages``, ``state_meta``, declared once by the column
tables ``SESSIONS``/``MESSAGES``/``STATE_META``, which drive CREATE, ALTER
and the read-only TEMP views alike), the content views, the FTS5 virtual
tables, their triggers and the CJK pending-change table.  Row-level SQL lives
in ``store.py`` and ``transcript.py``; index *content* (backfill, pending
apply, the ``state_meta`` flags) lives in ``indexing.py``.

Nothing here decides *when* to create something; ``store.py`` does that.
"""

from __future__ import annotations

import logging
import re
import sqlite3
from dataclasses import dataclass

from ..content import INDEXED_COLUMNS, indexed_text_sql, indexed_values

logger = logging.getLogger("hermes_fts.index.schema")

# Every index covers content, tool_name and tool_calls of every row, whole,
# so every route gives one answer (docs/DESIGN.md §14.7).  Each column's text
# is ``indexed_text_sql``'s: the stored value, plus the decoded text of JSON
# escapes it holds.

# Every object hermes-fts creates is named ``hermes_fts_*``: Hermes Agent owns
# ``messages_fts*`` (its cleanup renames and its repair deletes what matches),
# and newer Hermes builds keep a CJK index of their own there (docs/DESIGN.md §9).
NAMESPACE = "hermes_fts_"
BASE = "hermes_fts_word"
TRIGRAM = "hermes_fts_trigram"
CJK = "hermes_fts_cjk"
INDEXES = (BASE, TRIGRAM, CJK)
CJK_PENDING = "hermes_fts_cjk_pending"
# The CJK index's tokenizer, under our own name (a Hermes library may own
# ``cjk_unicode61`` in the same process).  ``variants 1`` folds Han variants
# (東京 finds 东京); ``glue 1`` marks words a unicode61 index cannot see
# (glued to CJK, full width: ``_index_text.GLUE_MARKS``); ``kana 1`` folds
# katakana to hiragana (らーめん finds ラーメン); ``symbols 1`` reads an emoji
# newer than unicode61's tables as a separator (``deploy🫠`` holds ``deploy``);
# ``remove_diacritics 2`` folds a letter with two diacritics too (``viet`` finds
# Việt; unicode61's default leaves it whole); ``compose 1`` composes Hangul
# jamo and kana voiced marks written decomposed (a macOS file name's 한국어
# finds 한국어); ``letters 1`` reads Greek tonos, ё and Hebrew and Arabic vowel
# points as the letters without them (αλφα finds άλφα, еще finds ещё), and a
# ligature as its letters (finance finds ﬁnance); ``selectors 1`` reads a
# variation selector after a CJK character as part of it (葛飾 finds 葛󠄀飾, the
# ideographic variant a Japanese name is often written with).
# Other options: rebuilt by optimize.
CJK_TOKENIZER = "hermes_fts_cjk"
CJK_TOKENIZE = (
    f"{CJK_TOKENIZER} unigrams 1 variants 1 glue 1 kana 1 symbols 1 remove_diacritics 2"
    " compose 1 letters 1 selectors 1"
)
# The opt-in word index folds diacritics as the CJK index does, so a store that
# keeps it answers a Latin query with the same rows as one that does not.
WORD_TOKENIZE = "unicode61 remove_diacritics 2"

# The word and trigram indexes are rebuilt under this suffix and swapped in
# complete, so our search keeps serving the old one meanwhile.
BUILD_SUFFIX = "_next"
SWAPPED = (BASE, TRIGRAM)


def build_name(index: str) -> str:
    return index + BUILD_SUFFIX


def content_view(index: str) -> str:
    """The view an index of the current layout reads its rows from."""
    return f"{index}_text"


# Every message as every index holds it: what backfills and the pending apply
# read (the CJK index's view shows only what that index holds already).
MESSAGE_TEXT = (
    "(SELECT m.id AS id, "
    + ", ".join(f"{indexed_text_sql(f'm.{c}')} AS {c}" for c in INDEXED_COLUMNS)
    + " FROM messages m)"
)


def _view_sql(index: str, view: str, gated: bool = False) -> str:
    """Every message's indexed text; ``gated``: only the rows ``index``'s backfill
    has reached (``indexed_condition``), what a table being built holds."""
    texts = ", ".join(f"{indexed_text_sql(f'm.{c}')} AS {c}" for c in INDEXED_COLUMNS)
    where = f" WHERE {indexed_condition(index, 'm.id')}" if gated else ""
    return f"CREATE VIEW IF NOT EXISTS {view} AS SELECT m.id, {texts} FROM messages m{where}"


# state_meta keys (Hermes keeps its own fts_* keys there).
META_FTS_STALE = "hermes_fts_stale"
META_FTS_STALE_REASON = "hermes_fts_stale_reason"
META_TRIGRAM_STALE = "hermes_fts_trigram_stale"
META_CJK_STALE = "hermes_fts_cjk_stale"
# Set when an optimize-storage run that compacts starts, cleared by its VACUUM:
# a run cut short says that its compaction is left.
META_COMPACTION = "hermes_fts_compaction_pending"
MARKER_PREFIX = {
    BASE: "hermes_fts_word_rebuild",
    TRIGRAM: "hermes_fts_trigram_rebuild",
    CJK: "hermes_fts_cjk_rebuild",
}


@dataclass(frozen=True)
class Column:
    """One column we rely on: how a fresh table declares it, and how it is added later.

    ``decl`` is the declaration in a fresh ``CREATE TABLE`` (Hermes Agent's
    own layout).  ``ALTER TABLE ADD COLUMN`` cannot add a ``NOT NULL`` column
    without a default, so ``added`` gives the declaration used when an
    existing store (an older Hermes build) lacks the column; its default is
    also what a read-only open shows for a column the file does not have.
    """

    name: str
    decl: str
    added: str | None = None

    @property
    def add_decl(self) -> str:
        return self.added or self.decl

    @property
    def default_sql(self) -> str:
        """The SQL literal the column defaults to (``NULL`` when none)."""
        match = re.search(r"\bDEFAULT\s+('[^']*'|[-\w.]+)", self.add_decl, re.IGNORECASE)
        return match.group(1) if match else "NULL"


@dataclass(frozen=True)
class Table:
    """A base table: its key, the columns we rely on and its table constraints.

    Any other column of an existing store is left alone; a column missing
    from an existing store is added (writers) or shown with its default
    (read-only opens).
    """

    name: str
    key: str
    columns: tuple[Column, ...]
    constraints: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """Column names without the key, in declaration order."""
        return tuple(c.name for c in self.columns)

    def create_sql(self) -> str:
        body = [self.key, *(f"{c.name} {c.decl}" for c in self.columns), *self.constraints]
        return f"CREATE TABLE IF NOT EXISTS {self.name} (\n    " + ",\n    ".join(body) + "\n)"


def _text(name: str) -> Column:
    return Column(name, "TEXT")


def _flag(name: str) -> Column:
    return Column(name, "INTEGER NOT NULL DEFAULT 0")


# Fresh tables match Hermes Agent's layout (it ADDs its own extra columns on
# its next open).  NOT NULL columns are only those Hermes always fills, so a
# Hermes writer never trips over a constraint of ours.
SESSIONS = Table(
    "sessions",
    "id TEXT PRIMARY KEY",
    (
        Column("source", "TEXT NOT NULL", "TEXT NOT NULL DEFAULT 'cli'"),
        *map(
            _text,
            (
                "created_source",
                "session_key",
                "user_id",
                "chat_id",
                "chat_type",
                "thread_id",
                "display_name",
                "origin_json",
                "model",
                "model_config",
                "parent_session_id",
            ),
        ),
        Column("started_at", "REAL NOT NULL", "REAL NOT NULL DEFAULT 0"),
        Column("ended_at", "REAL"),
        _text("end_reason"),
        Column("message_count", "INTEGER DEFAULT 0"),
        Column("tool_call_count", "INTEGER DEFAULT 0"),
        _text("title"),
        _text("title_source"),
        Column("last_activity_at", "REAL"),
        _flag("archived"),
        _flag("pinned"),
        _flag("hidden"),
    ),
    ("FOREIGN KEY (parent_session_id) REFERENCES sessions(id)",),
)

MESSAGES = Table(
    "messages",
    "id INTEGER PRIMARY KEY AUTOINCREMENT",
    (
        Column("session_id", "TEXT NOT NULL REFERENCES sessions(id)", "TEXT NOT NULL DEFAULT ''"),
        Column("role", "TEXT NOT NULL", "TEXT NOT NULL DEFAULT 'user'"),
        *map(_text, ("content", "tool_call_id", "tool_calls", "tool_name")),
        Column("timestamp", "REAL NOT NULL", "REAL NOT NULL DEFAULT 0"),
        *map(_text, ("reasoning", "reasoning_content", "reasoning_details")),
        Column("active", "INTEGER NOT NULL DEFAULT 1"),
        _flag("compacted"),
        _text("display_kind"),
    ),
)

STATE_META = Table("state_meta", "key TEXT PRIMARY KEY", (_text("value"),))
BASE_TABLES = (SESSIONS, MESSAGES, STATE_META)

_BASE_INDEXES = """
CREATE INDEX IF NOT EXISTS idx_sessions_source ON sessions(source);
CREATE INDEX IF NOT EXISTS idx_sessions_source_id ON sessions(source, id);
CREATE INDEX IF NOT EXISTS idx_sessions_parent ON sessions(parent_session_id);
CREATE INDEX IF NOT EXISTS idx_sessions_started ON sessions(started_at DESC);
CREATE INDEX IF NOT EXISTS idx_sessions_session_key ON sessions(session_key, started_at DESC);
CREATE INDEX IF NOT EXISTS hermes_fts_sessions_title ON sessions(title) WHERE title IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_messages_session ON messages(session_id, timestamp);
CREATE INDEX IF NOT EXISTS idx_messages_session_active ON messages(session_id, active, timestamp);
"""


def _statements(script: str) -> list[str]:
    # executescript() would COMMIT our open transaction, so scripts are run
    # statement by statement inside the caller's transaction instead.
    return [s.strip() for s in script.split(";\n") if s.strip()]


def table_columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')}


# Reading a session in id order needs an index on messages(session_id, id).
# Hermes 0.20+ creates the same one under its own name; 0.19.0 has none.
HERMES_SESSION_ID_INDEX = "idx_messages_session_id"
SESSION_ID_INDEX = "hermes_fts_messages_session_id"


def _ensure_session_id_index(conn: sqlite3.Connection) -> None:
    """Ours where Hermes has none; where Hermes has one, ours would be a copy."""
    hermes = conn.execute(
        "SELECT 1 FROM main.sqlite_master WHERE type = 'index' AND name = ?",
        (HERMES_SESSION_ID_INDEX,),
    ).fetchone()
    if hermes is not None:
        conn.execute(f"DROP INDEX IF EXISTS {SESSION_ID_INDEX}")
    else:
        conn.execute(f"CREATE INDEX IF NOT EXISTS {SESSION_ID_INDEX} ON messages(session_id, id)")


def missing_read_indexes(conn: sqlite3.Connection) -> list[str]:
    """Our B-tree indexes the file lacks (dropped by hand, or never made by an older
    hermes-fts): reading a session and applying the CJK changes go slower without
    them, and nothing but a write (``ensure_base_schema``, the CJK index's
    alignment) puts them back."""
    held = {str(r[0]): str(r[1]) for r in conn.execute("SELECT name, type FROM main.sqlite_master")}
    if "sessions" not in held or "messages" not in held:
        return []
    wanted = ["hermes_fts_sessions_title"]
    if HERMES_SESSION_ID_INDEX not in held:
        wanted.append(SESSION_ID_INDEX)
    if held.get(CJK_PENDING) == "table":
        wanted.append(f"{CJK_PENDING}_msg")
    return [name for name in wanted if held.get(name) != "index"]


def ensure_base_schema(conn: sqlite3.Connection) -> list[str]:
    """Create missing base tables, add missing columns; returns added columns."""
    added: list[str] = []
    for table in BASE_TABLES:
        conn.execute(table.create_sql())
        live = table_columns(conn, table.name)
        for column in table.columns:
            if column.name in live:
                continue
            try:
                conn.execute(
                    f'ALTER TABLE "{table.name}" ADD COLUMN "{column.name}" {column.add_decl}'
                )
                added.append(f"{table.name}.{column.name}")
            except sqlite3.OperationalError as exc:
                # A sibling process may have added it a moment ago.
                if "duplicate column" not in str(exc).lower():
                    raise
    for stmt in _statements(_BASE_INDEXES):
        conn.execute(stmt)
    _ensure_session_id_index(conn)
    if added:
        logger.info("added missing columns to an existing store: %s", ", ".join(added))
    return added


def shadow_missing_columns(conn: sqlite3.Connection) -> list[str]:
    """Make an older store readable without writing to it; returns what was shadowed.

    A read-only store from an older Hermes build may lack columns we read
    (``active``, ``display_kind`` …) or ``state_meta``.  Writers add them
    (``ensure_base_schema``); a reader cannot, so it puts TEMP views in front
    of the tables (unqualified names find ``temp`` before ``main``) that add
    the missing columns with their declared defaults.  Nothing touches the file.
    """
    shadowed: list[str] = []
    for table in (SESSIONS, MESSAGES):
        live = table_columns(conn, table.name)
        missing = [c for c in table.columns if c.name not in live]
        if not live or not missing:
            continue
        extra = ", ".join(f'{c.default_sql} AS "{c.name}"' for c in missing)
        conn.execute(
            f'CREATE TEMP VIEW "{table.name}" AS SELECT *, {extra} FROM main."{table.name}"'
        )
        shadowed += [f"{table.name}.{c.name}" for c in missing]
    if not table_columns(conn, STATE_META.name):
        conn.execute(STATE_META.create_sql().replace("CREATE TABLE", "CREATE TEMP TABLE", 1))
        shadowed.append(STATE_META.name)
    if shadowed:
        logger.info("read-only store lacks %s; read with defaults", ", ".join(shadowed))
    return shadowed


# --------------------------------------------------------------------------
# FTS objects


def indexed_condition(index: str, id_expr: str) -> str:
    """SQL that is true when the row ``id_expr`` belongs in ``index`` already.

    A row is in the index unless it lies in the not-yet-backfilled window
    (progress, high_water] kept in ``state_meta``.  Triggers must neither
    'delete' a row the backfill has not indexed (corrupts FTS5) nor skip one
    it has (leaves a stale entry); this one predicate keeps both right.
    """
    prefix = MARKER_PREFIX[index]
    return (
        f"({id_expr} > COALESCE((SELECT CAST(value AS INTEGER) FROM state_meta "
        f"WHERE key = '{prefix}_high_water'), -1) OR {id_expr} <= COALESCE("
        f"(SELECT CAST(value AS INTEGER) FROM state_meta "
        f"WHERE key = '{prefix}_progress'), -1))"
    )


@dataclass(frozen=True)
class IndexDDL:
    name: str
    view: str
    view_sql: str
    table_sql: str
    triggers: tuple[tuple[str, str], ...]  # (name, CREATE TRIGGER ...)
    columns: tuple[str, ...]


_CHANGED = (
    "(old.content IS NOT new.content OR old.tool_name IS NOT new.tool_name "
    "OR old.tool_calls IS NOT new.tool_calls OR old.id IS NOT new.id)"
)


def _word_ddl(index: str, tokenize: str, table: str, gated: bool) -> IndexDDL:
    """The word index or the trigram index, live (``table == index``) or being built.

    Both are external-content tables over a view of every message, so FTS5's
    own ``'rebuild'`` (which Hermes Agent runs to repair) rebuilds them right.
    A table being built carries the backfill gate (``indexed_condition``);
    the live one is complete, so its triggers are not gated.
    """
    view = content_view(table)
    view_sql = _view_sql(index, view, gated)
    table_sql = (
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING fts5("
        f"content, tool_name, tool_calls, content='{view}', content_rowid='id'{tokenize})"
    )
    # Insert and 'delete' must give FTS5 the very same text, or the index
    # keeps tokens no row has: both take it from indexed_values.
    into = f"INSERT INTO {table}(rowid, content, tool_name, tool_calls)"
    into_delete = f"INSERT INTO {table}({table}, rowid, content, tool_name, tool_calls)"
    new_row = f"new.id, {indexed_values('new.')}"
    old_row = f"'delete', old.id, {indexed_values('old.')}"
    ins = f"{into} VALUES ({new_row});"
    dele = f"{into_delete} VALUES ({old_row});"

    def gate(row: str) -> str:
        return f" AND {indexed_condition(index, row + '.id')}" if gated else ""

    update = f"BEGIN {dele} {ins} END"
    if gated:
        # A new id can lie on the other side of the backfill window than the old:
        # the old id's tokens go only if the build holds them, the new id's come only
        # if the backfill will not reach it.  Gated on the old id alone, a row moved
        # past the window was never indexed, and one moved into it twice.
        held, coming = indexed_condition(index, "old.id"), indexed_condition(index, "new.id")
        update = (
            f"AND ({held} OR {coming}) BEGIN {into_delete} SELECT {old_row} WHERE {held}; "
            f"{into} SELECT {new_row} WHERE {coming}; END"
        )

    triggers = (
        (
            f"{table}_insert",
            f"CREATE TRIGGER IF NOT EXISTS {table}_insert AFTER INSERT ON messages "
            f"WHEN 1{gate('new')} BEGIN {ins} END",
        ),
        (
            f"{table}_delete",
            f"CREATE TRIGGER IF NOT EXISTS {table}_delete AFTER DELETE ON messages "
            f"WHEN 1{gate('old')} BEGIN {dele} END",
        ),
        # UPDATE OF narrows firing to indexed columns: flipping active/compacted
        # must never touch the index.
        (
            f"{table}_update",
            f"CREATE TRIGGER IF NOT EXISTS {table}_update AFTER UPDATE OF "
            f"id, content, tool_name, tool_calls ON messages "
            f"WHEN {_CHANGED} {update}",
        ),
    )
    return IndexDDL(index, view, view_sql, table_sql, triggers, INDEXED_COLUMNS)


def _cjk_view_sql() -> str:
    """The CJK index's content: what the index holds, never ahead of it.

    Rows still waiting in the pending table (written by a process without
    the extension) show the text the index holds for them: none for an
    insert, the old values for an update or a delete (a message's first
    pending row keeps them); rows a backfill has not reached show nothing.
    So FTS5's own ``integrity-check`` (``rank = 1`` included) and
    ``'rebuild'`` agree with the index at every moment, not only once the
    pending rows are applied.
    """
    now = ", ".join(f"{indexed_text_sql(f'm.{c}')} AS {c}" for c in INDEXED_COLUMNS)
    before = ", ".join(f"{indexed_text_sql(f'p.old_{c}')} AS {c}" for c in INDEXED_COLUMNS)
    return (
        f"CREATE VIEW IF NOT EXISTS {content_view(CJK)} AS "
        f"SELECT m.id, {now} FROM messages m WHERE {indexed_condition(CJK, 'm.id')} "
        f"AND NOT EXISTS (SELECT 1 FROM {CJK_PENDING} q WHERE q.msg_id = m.id) "
        f"UNION ALL SELECT p.msg_id, {before} FROM {CJK_PENDING} p "
        f"WHERE p.op <> 'insert' AND {indexed_condition(CJK, 'p.msg_id')} "
        f"AND p.seq = (SELECT min(f.seq) FROM {CJK_PENDING} f WHERE f.msg_id = p.msg_id)"
    )


def _cjk_ddl() -> IndexDDL:
    view = content_view(CJK)
    view_sql = _cjk_view_sql()
    table_sql = (
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {CJK} USING fts5("
        f"content, tool_name, tool_calls, content='{view}', content_rowid='id', "
        f"tokenize='{CJK_TOKENIZE}')"
    )
    # No trigger writes the CJK index (a writer without the extension would get
    # "no such tokenizer"); they log into a table SessionStore applies later.
    # Only a message's first pending row keeps old values (what the index
    # holds), so deleted text is kept once, until the next apply (DESIGN
    # §5.3.1).  An id change also logs the new id.
    log = (
        f"INSERT INTO {CJK_PENDING}(msg_id, op, old_role, old_content, old_tool_name, "
        f"old_tool_calls) SELECT "
    )
    first = f" WHERE NOT EXISTS (SELECT 1 FROM {CJK_PENDING} WHERE msg_id = old.id);"
    triggers = (
        (
            f"{CJK_PENDING}_insert",
            f"CREATE TRIGGER IF NOT EXISTS {CJK_PENDING}_insert AFTER INSERT ON messages BEGIN "
            f"{log}new.id, 'insert', NULL, NULL, NULL, NULL; END",
        ),
        (
            f"{CJK_PENDING}_delete",
            f"CREATE TRIGGER IF NOT EXISTS {CJK_PENDING}_delete AFTER DELETE ON messages BEGIN "
            f"{log}old.id, 'delete', old.role, old.content, old.tool_name, old.tool_calls"
            f"{first} END",
        ),
        (
            f"{CJK_PENDING}_update",
            f"CREATE TRIGGER IF NOT EXISTS {CJK_PENDING}_update AFTER UPDATE OF "
            f"id, content, tool_name, tool_calls ON messages WHEN {_CHANGED} BEGIN "
            f"{log}old.id, 'update', old.role, old.content, old.tool_name, old.tool_calls{first} "
            f"{log}new.id, 'insert', NULL, NULL, NULL, NULL WHERE new.id IS NOT old.id; END",
        ),
    )
    return IndexDDL(CJK, view, view_sql, table_sql, triggers, INDEXED_COLUMNS)


PENDING_TABLE_SQL = (
    f"CREATE TABLE IF NOT EXISTS {CJK_PENDING} ("
    "seq INTEGER PRIMARY KEY AUTOINCREMENT, msg_id INTEGER NOT NULL, op TEXT NOT NULL, "
    "old_role TEXT, old_content TEXT, old_tool_name TEXT, old_tool_calls TEXT)"
)
PENDING_INDEX_SQL = f"CREATE INDEX IF NOT EXISTS {CJK_PENDING}_msg ON {CJK_PENDING}(msg_id, seq)"

DDL: dict[str, IndexDDL] = {
    BASE: _word_ddl(BASE, f", tokenize='{WORD_TOKENIZE}'", BASE, gated=False),
    TRIGRAM: _word_ddl(TRIGRAM, ", tokenize='trigram'", TRIGRAM, gated=False),
    CJK: _cjk_ddl(),
}
BUILD_DDL: dict[str, IndexDDL] = {
    BASE: _word_ddl(BASE, f", tokenize='{WORD_TOKENIZE}'", build_name(BASE), gated=True),
    TRIGRAM: _word_ddl(TRIGRAM, ", tokenize='trigram'", build_name(TRIGRAM), gated=True),
}


def create_index_objects(conn: sqlite3.Connection, index: str) -> None:
    """View + virtual table (+ pending table for CJK); triggers separately."""
    ddl = DDL[index]
    if index == CJK:  # its view reads the pending table
        conn.execute(PENDING_TABLE_SQL)
        conn.execute(PENDING_INDEX_SQL)
    conn.execute(ddl.view_sql)
    conn.execute(ddl.table_sql)


def _trigger_sql(conn: sqlite3.Connection) -> dict[str, str]:
    return {
        row[0]: row[1] or ""
        for row in conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")
    }


_OUR_NAME = re.compile(rf"\b{NAMESPACE}\w+", re.IGNORECASE)
# A string in SQL: a build's triggers name its state_meta keys in strings, and a
# key is no table.
_SQL_STRING = re.compile(r"'(?:[^']|'')*'")


def dangling_triggers(conn: sqlite3.Connection) -> dict[str, list[str]]:
    """Our triggers that name a table or view of ours the file no longer holds, with
    those names.  SQLite reads a trigger's body only when it fires, so after such a
    table is dropped by hand every write to ``messages`` fails ("no such table")."""
    rows = conn.execute("SELECT type, name, sql FROM main.sqlite_master").fetchall()
    held = {str(name).lower() for kind, name, _sql in rows if kind in ("table", "view")}
    dangling: dict[str, list[str]] = {}
    for kind, name, sql in rows:
        if kind != "trigger" or not str(name).lower().startswith(NAMESPACE):
            continue
        named = {found.lower() for found in _OUR_NAME.findall(_SQL_STRING.sub("''", sql or ""))}
        missing = named - held - {str(name).lower()}  # its own name heads its SQL
        if missing:
            dangling[str(name)] = sorted(missing)
    return dangling


def create_triggers(conn: sqlite3.Connection, index: str) -> None:
    for _name, sql in DDL[index].triggers:
        conn.execute(sql)


def drop_triggers(conn: sqlite3.Connection, index: str) -> None:
    for name, _sql in DDL[index].triggers:
        conn.execute(f"DROP TRIGGER IF EXISTS {name}")


# rank_bounds' bounds, and its record of what each index's bounds cover: an index
# dropped or swapped for a rebuild forgets its bounds (``forget_rank_bounds``).
RANK_BOUNDS = "hermes_fts_rank_bounds"
RANK_BOUNDS_BUILT = "hermes_fts_rank_bounds_built"


def forget_rank_bounds(conn: sqlite3.Connection, index: str) -> None:
    """Inside the caller's transaction: ``index``'s rank bounds no longer apply.  The
    bounds go with the record: an index dropped for good (no longer kept) left
    them in the file, where nothing would measure or delete them again."""
    for table in (RANK_BOUNDS_BUILT, RANK_BOUNDS):
        if conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).fetchone():
            conn.execute(f"DELETE FROM {table} WHERE tbl = ?", (index,))


# The tables FTS5 keeps for an index of ours (external content: no ``_content``).
FTS5_SHADOWS = ("data", "idx", "docsize", "config")


def drop_fts_table(conn: sqlite3.Connection, table: str) -> None:
    """``DROP TABLE IF EXISTS table``, also when a shadow table of it was dropped by
    hand: FTS5 must open a table to drop it, and cannot without them."""
    try:
        conn.execute(f"DROP TABLE IF EXISTS {table}")
    except sqlite3.DatabaseError:
        if not _restore_shadows(conn, table):
            raise
        conn.execute(f"DROP TABLE IF EXISTS {table}")


def _restore_shadows(conn: sqlite3.Connection, table: str) -> bool:
    """Put back what FTS5 needs to open ``table`` that was removed by hand: missing
    shadow tables, and the version and structure rows, copied from a new empty
    FTS5 table; False if nothing was missing."""
    held = {row[0] for row in conn.execute("SELECT name FROM main.sqlite_master")}
    missing = [s for s in FTS5_SHADOWS if f"{table}_{s}" not in held]
    scratch = f"{NAMESPACE}shadow_scratch"
    conn.execute(f"DROP TABLE IF EXISTS {scratch}")
    conn.execute(f"CREATE VIRTUAL TABLE {scratch} USING fts5(x, content='')")
    before = conn.total_changes
    for suffix in missing:
        (sql,) = conn.execute(
            "SELECT sql FROM main.sqlite_master WHERE name = ?", (f"{scratch}_{suffix}",)
        ).fetchone()
        conn.execute(sql.replace(f"{scratch}_{suffix}", f"{table}_{suffix}", 1))
    for suffix in ("config", "data"):  # a new table holds only those two rows
        conn.execute(f"INSERT OR IGNORE INTO {table}_{suffix} SELECT * FROM {scratch}_{suffix}")
    conn.execute(f"DROP TABLE {scratch}")
    return bool(missing) or conn.total_changes > before


def drop_index_objects(conn: sqlite3.Connection, index: str) -> None:
    forget_rank_bounds(conn, index)
    drop_triggers(conn, index)
    views = {DDL[index].view, reads_view(conn, index)} - {reads_view(conn, build_name(index))}
    drop_fts_table(conn, index)
    for view in views - {None}:
        conn.execute(f"DROP VIEW IF EXISTS {view}")
    if index == CJK:
        conn.execute(f"DROP TABLE IF EXISTS {CJK_PENDING}")


# ---------------------------------------------------------------- build + swap


def building(conn: sqlite3.Connection, index: str) -> bool:
    """Whether a rebuild of ``index`` under its build name is in progress."""
    return index in SWAPPED and index_sql(conn, build_name(index)) is not None


def reads_view(conn: sqlite3.Connection, table: str) -> str | None:
    """The view an external-content ``table`` reads (its ``content=``); None: no such table."""
    match = re.search(r"content\s*=\s*'([^']+)'", index_sql(conn, table) or "")
    return match.group(1) if match else None


def create_build_objects(conn: sqlite3.Connection, index: str) -> None:
    """Inside the caller's transaction: an empty build table with its gated triggers.

    The build reads a view of the rows it holds so far (gated like its
    triggers), so FTS5's integrity-check passes on it at every moment, also
    after a run was killed half way.  A table keeps the view it was created
    with through its rename, so builds take ``<index>_text`` and
    ``<index>_next_text`` in turn: the first unless the live table reads it.
    """
    drop_build_objects(conn, index)
    ddl = BUILD_DDL[index]
    view = DDL[index].view if reads_view(conn, index) != DDL[index].view else ddl.view
    conn.execute(f"DROP VIEW IF EXISTS {view}")
    conn.execute(_view_sql(index, view, gated=True))
    conn.execute(ddl.table_sql.replace(f"content='{ddl.view}'", f"content='{view}'"))
    for _name, sql in ddl.triggers:
        conn.execute(sql)


def drop_build_objects(conn: sqlite3.Connection, index: str) -> None:
    for name, _sql in BUILD_DDL[index].triggers:
        conn.execute(f"DROP TRIGGER IF EXISTS {name}")
    conn.execute(f"DROP TABLE IF EXISTS {build_name(index)}")


def swap_in_build(conn: sqlite3.Connection, index: str) -> None:
    """Inside the caller's transaction: the complete build table becomes ``index``.

    The live table and its triggers go, and the live triggers come, in the
    same transaction: no reader ever sees the name missing, empty or half
    built, and no writer's change falls between the two.
    """
    forget_rank_bounds(conn, index)
    drop_triggers(conn, index)
    conn.execute(f"DROP TABLE IF EXISTS {index}")
    for name, _sql in BUILD_DDL[index].triggers:
        conn.execute(f"DROP TRIGGER IF EXISTS {name}")
    view = reads_view(conn, build_name(index)) or DDL[index].view
    conn.execute(f"ALTER TABLE {build_name(index)} RENAME TO {index}")
    # Complete now: its view shows every message, also once a later build opens a window.
    conn.execute(f"DROP VIEW IF EXISTS {view}")
    conn.execute(_view_sql(index, view))
    for _name, sql in DDL[index].triggers:
        conn.execute(sql)


def missing_triggers(conn: sqlite3.Connection, index: str) -> list[str]:
    """Trigger names of ``index`` that are absent."""
    live = _trigger_sql(conn)
    return [name for name, _ in DDL[index].triggers if name not in live]


def cjk_parts_missing(conn: sqlite3.Connection) -> list[str]:
    """Names of what the CJK index needs besides its table that are absent: its
    pending-change table, the view it reads and its triggers.  Without them a
    change goes unlogged (the index misses rows) or the index cannot be read."""
    held = {
        row[0]
        for row in conn.execute(
            "SELECT name FROM main.sqlite_master WHERE type IN ('table', 'view')"
        )
    }
    parts = [CJK_PENDING, reads_view(conn, CJK) or content_view(CJK)]
    parts += [f"{CJK}_{suffix}" for suffix in FTS5_SHADOWS]
    return [name for name in parts if name not in held] + missing_triggers(conn, CJK)


def index_sql(conn: sqlite3.Connection, index: str) -> str | None:
    row = conn.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (index,)
    ).fetchone()
    return None if row is None else (row[0] or "")


def _tokenize_options(sql: str) -> list[str]:
    match = re.search(r"tokenize\s*=\s*'([^']*)'", sql, re.IGNORECASE)
    return match.group(1).split() if match else []


def cjk_tokenize_current(sql: str | None) -> bool:
    """Whether the CJK index DDL ``sql`` uses ``CJK_TOKENIZE`` (False when absent).

    An index an older hermes-fts built (without ``variants 1`` or ``glue 1``)
    is not current: optimize-storage rebuilds it."""
    return sql is not None and _tokenize_options(sql) == CJK_TOKENIZE.split()


def cjk_option_on(sql: str | None, option: str, value: str = "1") -> bool | None:
    """Whether tokenizer option ``option`` is ``value`` in the CJK index DDL ``sql``;
    None: no index."""
    if sql is None:
        return None
    options = _tokenize_options(sql)
    return any(options[i : i + 2] == [option, value] for i in range(len(options)))


def index_layout(sql: str | None) -> str | None:
    """``external`` (ours, current), ``outdated`` (ours, an earlier layout: its
    view capped or left out tool rows, or indexed JSON escapes as stored; or
    the word index built before ``WORD_TOKENIZE``) or ``inline`` (Hermes
    Agent's own)."""
    if sql is None:
        return None
    flat = sql.replace(" ", "").lower()
    if "content=" not in flat:
        return "inline"
    if "_text'" not in flat:
        return "outdated"
    word = (
        f"content='{content_view(BASE)}'" in flat or f"'{content_view(build_name(BASE))}'" in flat
    )
    return "outdated" if word and _tokenize_options(sql) != WORD_TOKENIZE.split() else "external"


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
