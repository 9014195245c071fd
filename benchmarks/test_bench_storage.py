"""Storage: what hermes-fts adds to a Hermes store, in index bytes and file size.

Three stores hold the same generated messages, each VACUUMed:

* **Hermes 0.19.0 only**: every search object removed, then Hermes Agent
  0.19.0's own ``SessionDB`` opens the file and builds its indexes
  (``tests/_hermes_env.py`` installs it in a venv; skipped when it cannot be
  installed);
* **+ hermes-fts, plugin enabled**: that store after ``optimize-storage``
  with a ``config.yaml`` next to it that enables the Hermes plugin, so our
  trigram index is not kept (the agent's ``session_search`` reads the CJK
  index);
* **+ hermes-fts, no plugin**: the same without that file: our trigram index
  is kept.

Hermes keeps its own indexes beside ours (we never touch them), so the
figure that matters is what ours add: all our FTS × text, and the file
against Hermes' own (reported, never asserted).

    python -m pytest benchmarks/test_bench_storage.py --bench-size 200k
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

import hermes_fts
from benchmarks._hermes import hermes_env, hermes_venv
from hermes_fts.store import SessionStore

TABLE = "Lean storage: index bytes and file size (same messages, each store VACUUMed)"
PLUGIN_ENABLED = "plugins:\n  enabled:\n    - hermes-fts\n"
HERMES_OPEN = (
    "import sys; from pathlib import Path; from hermes_state import SessionDB; "
    "SessionDB(Path(sys.argv[1])).close()"
)


def _ours(source: Path, folder: Path, plugin: bool, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder.mkdir()
    db = folder / "state.db"
    shutil.copyfile(source, db)
    if plugin:
        (folder / "config.yaml").write_text(PLUGIN_ENABLED)
    monkeypatch.delenv("HERMES_TRIGRAM_FTS", raising=False)
    with SessionStore(db) as store:
        if not store.cjk_available:
            pytest.skip("cjk_unicode61 extension unavailable")
        assert store.optimize_storage(min_pause=0)["ok"]
    return db


def _strip_ours(db: Path) -> None:
    """Drop every search object (ours and Hermes'), leaving sessions and messages."""
    conn = hermes_fts.connect(str(db))  # the CJK table needs its tokenizer to be dropped
    try:
        objects = conn.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE name LIKE 'hermes_fts%' "
            "OR name LIKE 'messages_fts%'"
        ).fetchall()
        with conn:
            for kind, name, _sql in objects:
                if kind == "trigger":
                    conn.execute(f"DROP TRIGGER IF EXISTS {name}")
            for kind, name, sql in objects:  # a virtual table drops its shadow tables
                if kind == "table" and (sql or "").startswith("CREATE VIRTUAL"):
                    conn.execute(f"DROP TABLE IF EXISTS {name}")
            for kind, name, sql in objects:
                if kind == "view":
                    conn.execute(f"DROP VIEW IF EXISTS {name}")
                elif kind == "table" and not (sql or "").startswith("CREATE VIRTUAL"):
                    conn.execute(f"DROP TABLE IF EXISTS {name}")
    finally:
        conn.close()


def _hermes_only(source: Path, folder: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    he = hermes_env()
    venv = hermes_venv(tmp_path_factory)
    folder.mkdir()
    db = folder / "state.db"
    shutil.copyfile(source, db)
    _strip_ours(db)
    done = subprocess.run(
        [str(he.venv_python(venv)), "-c", HERMES_OPEN, str(db)],
        capture_output=True,
        text=True,
        env=he.clean_env(folder),
        timeout=3600,
    )
    assert done.returncode == 0, done.stderr
    conn = sqlite3.connect(db)
    try:
        conn.execute("VACUUM")
    finally:
        conn.close()
    return db


def _sizes(db: Path) -> dict[str, Any]:
    with SessionStore(db, readonly=True) as store:
        status = store.status()
    indexes = {name: info["bytes"] or 0 for name, info in status["indexes"].items()}
    return {
        "file": db.stat().st_size,
        "text": status["text_bytes"],
        "indexes": indexes,
        "fts": sum(indexes.values()),
    }


def test_storage_sizes(
    bench_store: Path,
    bench_size: int,
    bench_report: Any,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base = tmp_path_factory.mktemp("bench-storage")
    hermes = _hermes_only(bench_store, base / "hermes", tmp_path_factory)
    stores = {
        "Hermes 0.19.0 only": hermes,
        "+ hermes-fts, plugin enabled": _ours(hermes, base / "plugin", True, monkeypatch),
        "+ hermes-fts, no plugin": _ours(hermes, base / "no-plugin", False, monkeypatch),
    }
    sizes = {name: _sizes(db) for name, db in stores.items()}
    hermes_file = sizes["Hermes 0.19.0 only"]["file"]
    mib = 1024 * 1024
    for name, size in sizes.items():
        text = size["text"] or 1
        bench_report.add(
            TABLE,
            {
                "store": name,
                "messages": bench_size,
                "text MiB": round(text / mib, 1),
                **{f"{index} × text": round(b / text, 2) for index, b in size["indexes"].items()},
                "all FTS × text": round(size["fts"] / text, 2),
                "file MiB": round(size["file"] / mib, 1),
                "file / Hermes-only": round(size["file"] / hermes_file, 2),
            },
        )
    lean = sizes["+ hermes-fts, plugin enabled"]
    assert lean["indexes"]["hermes_fts_trigram"] == 0  # not kept
