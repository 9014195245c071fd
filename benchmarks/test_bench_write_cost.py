"""What hermes-fts adds to each message Hermes saves: write-ahead-log bytes.

Hermes Agent 0.19.0 saves every message in its own write transaction, and in
WAL mode each page that transaction changes is appended to ``state.db-wal`` whole.
On a nearly full disk those bytes decide how many more messages Hermes can
save, so this counts them: Hermes' own ``SessionDB.append_message`` (in a venv
holding hermes-agent 0.19.0, as the agent calls it) appends messages to two
copies of the same store, one with Hermes' own search objects only, one after
hermes-fts' ``optimize-storage`` (its pending-table, time-table and
rank-bound triggers).  Checkpoints (SQLite's and the ones Hermes asks for
every 50 writes) and Hermes' periodic FTS5 merge are off while it runs, so
the log holds every page each save writes.  Reported, never asserted.

    python -m pytest benchmarks/test_bench_write_cost.py --bench-size 20k -s
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks._hermes import hermes_venv
from hermes_fts.store import SessionStore

TABLE = "Write-ahead-log bytes per message Hermes saves"
APPENDS = 200
PAGE_FRAME = 24  # the header SQLite writes before each page in the log

# Runs in Hermes' venv: appends APPENDS messages with SessionDB, checkpoints off.
_APPEND = """
import json, os, sys
from pathlib import Path
from hermes_state import SessionDB

store, count = sys.argv[1], int(sys.argv[2])
db = SessionDB(Path(store))
# Hermes checkpoints every 50 writes and merges its FTS5 indexes now and then;
# either would reuse or swell the log measured.
db._CHECKPOINT_EVERY_N_WRITES = db._OPTIMIZE_EVERY_N_WRITES = 10**9
db._conn.execute("PRAGMA wal_autocheckpoint = 0")
db._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
db.create_session("write-cost", "cli", model="m")
before = os.path.getsize(store + "-wal")
for n in range(count):
    role = "user" if n % 2 == 0 else "assistant"
    text = f"message {n}: the staging deploy failed again, 部署又失败了, check the logs"
    db.append_message("write-cost", role, content=text, timestamp=1_800_000_000 + n)
print(json.dumps({"wal": os.path.getsize(store + "-wal") - before,
                  "page": db._conn.execute("PRAGMA page_size").fetchone()[0]}))
os._exit(0)  # no close: closing checkpoints and truncates the log measured
"""


def _hermes_only(src: Path, dst: Path) -> Path:
    """``src`` without hermes-fts: every object of ours dropped (Hermes' own stay)."""
    shutil.copy(src, dst)
    conn = sqlite3.connect(dst)
    ours = conn.execute(
        "SELECT type, name FROM sqlite_master WHERE name LIKE 'hermes_fts%' "
        "ORDER BY CASE type WHEN 'trigger' THEN 0 WHEN 'view' THEN 1 WHEN 'index' THEN 2 "
        "ELSE 3 END"
    ).fetchall()
    for kind, name in ours:
        if kind == "table" and name.endswith(("_data", "_idx", "_content", "_docsize", "_config")):
            continue  # an FTS5 shadow table goes with its virtual table
        conn.execute(f'DROP {kind.upper()} IF EXISTS "{name}"')
    conn.commit()
    conn.execute("VACUUM")
    conn.close()
    return dst


def test_wal_bytes_per_message(
    bench_store: Path, tmp_path_factory: pytest.TempPathFactory, bench_report: Any
) -> None:
    venv = hermes_venv(tmp_path_factory)
    python = venv / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    folder = tmp_path_factory.mktemp("write-cost")
    ours = folder / "with-hermes-fts.db"
    shutil.copy(bench_store, ours)
    with SessionStore(ours) as st:
        st.optimize_storage()
    hermes = _hermes_only(ours, folder / "hermes-only.db")
    script = folder / "append.py"
    script.write_text(_APPEND, encoding="utf-8")
    per_message = {}
    for label, store in (("Hermes 0.19.0 only", hermes), ("+ hermes-fts", ours)):
        out = subprocess.run(
            [str(python), str(script), str(store), str(APPENDS)],
            check=True,
            capture_output=True,
            text=True,
            timeout=600,
        )
        measured = json.loads(out.stdout.strip().splitlines()[-1])
        per_message[label] = measured["wal"] / APPENDS
        frames = per_message[label] / (measured["page"] + PAGE_FRAME)
        row = {"store": label, "WAL bytes per message": round(per_message[label])}
        row["pages per message"] = round(frames, 1)
        bench_report.add(TABLE, row)
    ratio = per_message["+ hermes-fts"] / per_message["Hermes 0.19.0 only"]
    bench_report.add(TABLE, {"store": "ratio", "WAL bytes per message": f"{ratio:.2f}x"})
