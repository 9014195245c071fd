"""Hermes Agent 0.19.0's own store code on a test's store, run inside the Hermes venv.

``python _coex_driver.py COMMAND DB [ARG]`` prints one JSON document:

* ``seed DB`` writes a history through ``hermes_state.SessionDB`` the way the
  agent does: CJK and Latin chat, tool rows longer than 8 KB with a word past
  the first 8 KB, tool calls whose arguments hold CJK and multimodal (list)
  content (both stored JSON-escaped), cron and subagent sessions.
* ``json DB`` appends rows of awkward JSON through SessionDB: huge, deeply
  nested, strings holding JSON, escapes that do not decode, lone surrogates.
* ``probe DB QUERIES_JSON`` runs ``SessionDB.search_messages(q, limit=100000)``
  for each query: ``{query: [ids]}``.
* ``write DB TAG`` appends, edits and deletes rows through SessionDB, with
  words the probes look for.
* ``timechurn DB TAG`` changes what time sorts order by, through SessionDB:
  back-dated and explicit timestamps, a transcript rewrite
  (``replace_messages``), an edited timestamp and a changed id (raw SQL on
  its writer connection), ``delete_session`` and ``vacuum()``.

Only the standard library and Hermes are imported: the venv has no pytest.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

FILLER = "lorem ipsum dolor sit amet " * 400  # > 8 KB of tool output


def _db(path: str) -> Any:
    from hermes_state import SessionDB

    return SessionDB(Path(path))


def _tool_call(name: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }
    ]


def seed(path: str) -> dict[str, Any]:
    db = _db(path)
    for n in range(12):
        sid = f"chat-{n}"
        db.create_session(sid, "cli")
        db.append_message(sid, "user", content=f"服务端要先升级，然后做数据库迁移 #{n}")
        db.append_message(
            sid,
            "assistant",
            content="好的。The deploy pipeline uses "
            "scripts/deploy.sh; mail user@example.com when done. 한국어 검색.",
            tool_calls=_tool_call("web_search", {"query": f"桂林 天气 {n}"}),
        )
        db.append_message(
            sid,
            "tool",
            content=f"工具标记 result {n} " + FILLER + " tailmarker",
            tool_name="terminal",
        )
        db.append_message(sid, "assistant", content="東京タワーの近くでラーメン。服。")
        # Multimodal content: stored as "\x00json:" + JSON, CJK escaped.
        db.append_message(
            sid,
            "user",
            content=[
                {"type": "text", "text": f"象鼻山的照片 {n}"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0K"}},
            ],
        )
        db.end_session(sid, "user_exit")
    for source in ("cron", "subagent"):
        sid = f"{source}-1"
        db.create_session(sid, source)
        db.append_message(sid, "user", content=f"{source}word 定时任务报告 服务端")
        db.append_message(sid, "tool", content="每日构建 ok", tool_name="cronjob")
    db.close()
    return {"ok": True}


def probe(path: str, queries_json: str) -> dict[str, Any]:
    db = _db(path)
    out = {
        q: sorted({int(r["id"]) for r in db.search_messages(q, limit=100000)})
        for q in json.loads(queries_json)
    }
    db.close()
    return out


def write(path: str, tag: str) -> dict[str, Any]:
    db = _db(path)
    sid = f"later-{tag}"
    db.create_session(sid, "cli")
    new = [
        db.append_message(sid, "user", content=f"新消息 服务端 deploy {tag}word"),
        db.append_message(
            sid, "tool", content="工具标记 " + FILLER + f" tail{tag}", tool_name="terminal"
        ),
    ]
    edited = db.append_message(sid, "assistant", content="placeholder text")
    db._execute_write(
        lambda c: c.execute(
            "UPDATE messages SET content = ? WHERE id = ?",
            (f"数据库迁移 edited{tag} 한국어", edited),
        )
    )
    db.delete_session("chat-0")
    db.close()
    return {"new": [int(i) for i in new], "edited": int(edited)}


def timechurn(path: str, tag: str) -> dict[str, Any]:
    db = _db(path)
    sid = f"churn-{tag}"
    db.create_session(sid, "cli")
    old = db.append_message(sid, "user", content=f"服务端 deploy 补录 {tag}", timestamp=1.0e9)
    late = db.append_message(
        sid, "assistant", content=f"服务端 deploy later {tag}", timestamp=4.0e9
    )
    db.replace_messages(
        "chat-3",
        [
            {"role": "user", "content": "服务端 deploy rewritten", "timestamp": 1.5e9},
            {"role": "assistant", "content": "数据库迁移 deploy rewritten", "timestamp": 1.5e9},
        ],
    )
    moved = db.append_message(sid, "user", content=f"服务端 deploy moved {tag}")
    top = db._execute_write(lambda c: c.execute("SELECT max(id) FROM messages").fetchone()[0])
    db._execute_write(
        lambda c: c.execute("UPDATE messages SET timestamp = ? WHERE id = ?", (2.0e9, late))
    )
    db._execute_write(
        lambda c: c.execute("UPDATE messages SET id = ? WHERE id = ?", (top + 100, moved))
    )
    db.delete_session("chat-1")
    db.vacuum()
    db.close()
    return {"old": int(old), "late": int(late), "moved": int(top + 100)}


def awkward_json(path: str) -> dict[str, Any]:
    db = _db(path)
    sid = "json-1"
    db.create_session(sid, "cli")
    deep: Any = "深层嵌套"
    for _ in range(1500):  # valid for SQLite 3.40 (limit 2000), not for 3.45+ (1000)
        deep = [deep]
    sys.setrecursionlimit(10_000)  # json.dumps recurses once per level
    # arguments: a JSON string holding JSON, one part of it JSON again (escaped thrice).
    inner = json.dumps({"query": "漓江 竹筏", "nested": json.dumps({"city": "阳朔"})})
    ids = [
        db.append_message(sid, "user", content=[{"type": "text", "text": "巨大 " * 100_000}]),
        db.append_message(sid, "user", content=deep),
        db.append_message(
            sid,
            "assistant",
            content="calling",
            tool_calls=[
                {
                    "id": "c9",
                    "type": "function",
                    "function": {"name": "plan_trip", "arguments": inner},
                }
            ],
        ),
        db.append_message(
            sid, "tool", content='{"broken": "\\u12 \\x41 \u5e7f"', tool_name="plan_trip"
        ),
        db.append_message(sid, "user", content=[{"type": "text", "text": "孤立\ud800代理"}]),
        db.append_message(sid, "tool", content="[not json \\u5e7f\\u5dde", tool_name="t"),
    ]
    db.close()
    return {"ids": [int(i) for i in ids]}


if __name__ == "__main__":
    command, db_path, *rest = sys.argv[1:]
    commands = {
        "seed": seed,
        "probe": probe,
        "write": write,
        "json": awkward_json,
        "timechurn": timechurn,
    }
    result = commands[command](db_path, *rest)
    print(json.dumps(result))
