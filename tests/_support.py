"""Helpers shared by test modules (not a test module itself)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import hermes_fts


def extension_available() -> bool:
    """True when hermes_fts.connect() gives a connection with cjk_unicode61."""
    try:
        hermes_fts.connect(":memory:").close()
    except hermes_fts.ExtensionUnavailable:
        return False
    return True


def generator_copy(tmp_path: Path, generator: str, files: tuple[str, ...]) -> list[str]:
    """Copy a table generator and its files (paths relative to the repository) into
    ``tmp_path`` with the same layout; returns the command that runs the copy."""
    root = Path(__file__).resolve().parent.parent
    for rel in (generator, *files):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / rel, tmp_path / rel)
    return [sys.executable, str(tmp_path / generator)]


needs_extension = pytest.mark.skipif(
    not extension_available(),
    reason="cjk_unicode61 extension unavailable here (not built, or not loadable here)",
)


# Identifiers users search for verbatim (hermes-agent "silent empty" reports):
# every one must still find the message that contains it.
IDENTIFIERS = [
    "chat-send",
    "P2.2",
    "my-app.config.ts",
    "scripts/deploy.sh",
    "user@example.com",
    "61.2%",
    "TODO: fix",
    "C:\\Users",
    ".env",
    "rm -rf",
    "--force",
    "`npm run build`",
    "path:config.yaml",
    "alpha`beta",
    "my-app.config*",
]


def rebuild_cjk_index(st, without: str) -> None:
    """Replace a store's CJK index by one an older hermes-fts built: the tokenizer
    options of ``schema.CJK_TOKENIZE`` without ``without`` (such as ``" glue 1"``)."""
    from hermes_fts.index import maintain as indexing
    from hermes_fts.index import schema

    conn = st._conn
    old_sql = schema.DDL[schema.CJK].table_sql.replace(without, "")
    assert without.split()[0] not in old_sql
    with indexing.write_txn(conn):
        schema.drop_index_objects(conn, schema.CJK)
        conn.execute(schema.DDL[schema.CJK].view_sql)
        conn.execute(old_sql)
        conn.execute(schema.PENDING_TABLE_SQL)
        conn.execute(schema.PENDING_INDEX_SQL)
        indexing.seed_full_backfill(conn, schema.CJK)
        schema.create_triggers(conn, schema.CJK)
    st.backfill(schema.CJK)


def rebuilt_by_optimize_storage(
    st, option: str, query: str, row: int, status_text: str, note_text: str | None = None
) -> None:
    """After ``rebuild_cjk_index`` left a CJK index built without the tokenizer option
    whose ``index_state`` key is ``option``: it answers as it did (``query`` misses
    ``row``), ``status`` and the tool's note say so (``status_text``,
    ``note_text``), and ``optimize-storage`` rebuilds it (``query`` finds ``row``).
    Closes ``st``."""
    from hermes_fts.index.schema import CJK
    from hermes_fts.store import SessionStore

    path = st.path
    assert st.status()["indexes"][CJK][option] is False
    assert "cjk_outdated" in st.status()["needs_optimize"]
    assert row not in [r["id"] for r in st.search(query).rows]  # the old tokens
    if note_text is not None:
        note = hermes_fts.session_search(st, query=query)["index_rebuild"]["note"]
        assert note_text in note and "optimize-storage" in note
    st.close()
    status = subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", "status", "--db", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert status_text in status.stdout
    with SessionStore(path) as st:
        st.optimize_storage(vacuum=False)
        assert st.status()["indexes"][CJK][option] is True
        assert not st.optimize_needed()
        assert row in [r["id"] for r in st.search(query).rows]


def shell_backlog(path: Path, rows: int) -> None:
    """A store with a CJK index and ``rows`` more messages the sqlite3 shell wrote, as
    Hermes writes without the extension: they wait in the pending table."""
    from hermes_fts.store import SessionStore

    with SessionStore(path) as store:
        store.add_session("s1", "cli")
        store.add_message("s1", "user", "first 東京 deploy")
    script = (
        "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < "
        f"{rows}) INSERT INTO messages(session_id, role, content, timestamp) "
        "SELECT 's1', 'user', 'note ' || i || ' 部署到东京 backlog deploy', 1700000000 + i "
        "FROM c;"
    )
    subprocess.run([str(shutil.which("sqlite3")), str(path), script], check=True, timeout=120)


def other_application_db(path: Path) -> Path:
    """A SQLite file of another application (a notes table with a row) at ``path``:
    hermes-fts must refuse it and leave it untouched."""
    import sqlite3

    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (x TEXT)")
    conn.execute("INSERT INTO notes VALUES ('keep me')")
    conn.commit()
    conn.close()
    return path


def cut_short_after(store: Any, chunks: int) -> None:
    """An optimize-storage run stopped by Ctrl-C after ``chunks`` chunks of 100 messages."""
    done = 0

    def interrupt(_seconds: float) -> None:
        nonlocal done
        done += 1
        if done == chunks:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        store.optimize_storage(
            vacuum=False, sleep=interrupt, chunk_rows=100, min_pause=0, txn_target=None
        )
