"""Write generated sessions into a state.db with Hermes Agent's own ``SessionDB``.

Runs inside the venv that holds hermes-agent 0.19.0 (``benchmarks/_hermes.py``
makes it): ``python _hermes_writer.py STORE SESSIONS.json``.  Sessions and
messages go through ``create_session``/``append_message``/``end_session``
exactly as the agent writes them, message timestamps included.  Hermes has
no call that back-dates a session row, so ``started_at``/``ended_at`` are then
set with one UPDATE per session (what an import of old sessions leaves).
Only the standard library and Hermes are imported.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path


def main(store: str, spec: str) -> int:
    from hermes_state import SessionDB

    sessions = json.loads(Path(spec).read_text(encoding="utf-8"))
    db = SessionDB(Path(store))
    for s in sessions:
        db.create_session(s["id"], s["source"], model=s["model"])
        for m in s["messages"]:
            db.append_message(
                s["id"],
                m["role"],
                content=m.get("content"),
                tool_name=m.get("tool_name"),
                tool_calls=m.get("tool_calls"),
                tool_call_id=m.get("tool_call_id"),
                timestamp=m["timestamp"],
            )
        db.end_session(s["id"], "user_exit")
    db.close()
    conn = sqlite3.connect(store)
    with conn:
        conn.executemany(
            "UPDATE sessions SET started_at = ?, ended_at = ? WHERE id = ?",
            [(s["started_at"], s["ended_at"], s["id"]) for s in sessions],
        )
    conn.close()
    print(json.dumps({"sessions": len(sessions)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
