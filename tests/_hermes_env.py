"""A real Hermes Agent 0.19.0 next to this checkout, for the plugin tests.

Two halves in one file, because the second one runs inside that environment:

* ``ensure_venv(folder)`` (test side) creates a virtual environment with
  ``hermes-agent==0.19.0`` from the package index and this checkout installed
  by pip (never into the interpreter running the tests), and returns it.
* ``python _hermes_env.py COMMAND`` (venv side) drives Hermes' own code:
  ``seed`` writes a history through ``hermes_state.SessionDB`` (``session``: one
  more session on a given store; ``hold``: a turn of tool outputs, then a
  Hermes keeping the store open until stdin closes); ``turn`` runs one
  real ``AIAgent`` turn against a scripted OpenAI-compatible server on
  127.0.0.1; ``calls`` runs ``session_search`` calls through the agent's own
  dispatch (``invoke_tool``, middleware included) with SessionDB writes in
  between; ``plugins`` lists what Hermes' PluginManager found.  Every command
  prints one JSON document on stdout.

Only the standard library is imported at the top: the venv has no pytest.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import logging
import os
import sqlite3
import subprocess
import sys
import threading
import time
import venv
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HERMES_REQUIREMENT = "hermes-agent==0.19.0"
ROOT = Path(__file__).resolve().parent.parent
SESSION_ID = "current-session"


# ============================================================================ test side


class HermesUnavailable(RuntimeError):
    """hermes-agent could not be installed here (the message has pip's output)."""


def venv_python(folder: Path) -> Path:
    return folder / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")


def venv_bin(folder: Path, name: str) -> Path:
    return folder / ("Scripts" if sys.platform == "win32" else "bin") / name


def checkout_digest() -> str:
    """Changes with the checkout's installable sources, so a kept venv
    (``HERMES_FTS_TEST_VENV``) never tests an older hermes-fts."""
    h = hashlib.sha1()
    for pattern in ("hermes_fts/**/*.py", "csrc/*.[ch]", "setup.py", "pyproject.toml"):
        for path in sorted(ROOT.glob(pattern)):
            h.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def _pip(folder: Path, *args: str) -> None:
    cmd = [
        str(venv_python(folder)),
        "-m",
        "pip",
        "install",
        "-q",
        "--disable-pip-version-check",
        *args,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise HermesUnavailable(f"`pip install {' '.join(args)}` failed:\n{tail}")


def ensure_venv(folder: Path, requirement: str = HERMES_REQUIREMENT) -> Path:
    """``folder`` as a venv holding ``requirement`` (a Hermes Agent build, 0.19.0 unless
    told) and this checkout; returns it.

    A venv made earlier is kept; when the checkout changed since, only
    hermes-fts is installed again."""
    marker = folder / "hermes-fts-ready"
    digest = checkout_digest()
    if marker.is_file():
        if marker.read_text().strip() != digest:
            _pip(folder, "--no-deps", "--force-reinstall", str(ROOT))
            marker.write_text(digest + "\n")
        return folder
    venv.EnvBuilder(with_pip=True, clear=True).create(folder)
    _pip(folder, requirement, str(ROOT))
    marker.write_text(digest + "\n")
    return folder


def run_driver(
    folder: Path, home: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> dict[str, Any]:
    """Run ``_hermes_env.py ARGS`` in the venv with ``HERMES_HOME=home``; its JSON output."""
    full_env = clean_env(home, env)
    proc = subprocess.run(
        [str(venv_python(folder)), __file__, *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
        cwd=str(home),
    )
    if proc.returncode != 0:
        raise AssertionError(
            f"driver {args} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
        )
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError) as exc:
        raise AssertionError(
            f"driver {args} printed no JSON:\n{proc.stdout}\n{proc.stderr}"
        ) from exc


def clean_env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The test process' environment minus anything that would reach into this checkout
    or the developer's own Hermes, plus ``HERMES_HOME=home``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("HERMES_") and k not in ("PYTHONPATH", "PYTHONHOME")
    }
    env["HERMES_HOME"] = str(home)
    env["HOME"] = str(home.parent)  # nothing falls back to the real ~/.hermes
    env["NO_COLOR"] = "1"
    env.update(extra or {})
    return env


def run_hermes(
    folder: Path, home: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    """The real ``hermes`` command of the venv, stdin closed (no prompts)."""
    return subprocess.run(
        [str(venv_bin(folder, "hermes")), *args],
        capture_output=True,
        text=True,
        env=clean_env(home, env),
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        cwd=str(home),
    )


# ============================================================================ venv side

# One conversation per language plus an English one; words the tests look for.
HISTORY = [
    (
        "zh-1",
        "cli",
        [
            ("user", "我们明天讨论数据库迁移的方案，服务端要先升级。"),
            ("assistant", "好的，服务端升级以后再做数据库迁移，桂林的机房也要通知。"),
        ],
    ),
    (
        "ja-1",
        "cli",
        [
            ("user", "東京タワーの近くでラーメンを食べました。"),
            ("assistant", "東京の天気は明日も晴れです。"),
        ],
    ),
    (
        "ko-1",
        "telegram",
        [
            ("user", "한국어 검색이 잘 되나요? 서울에서 회의가 있어요."),
            ("assistant", "네, 한국어 형태소 없이도 검색됩니다."),
        ],
    ),
    (
        "en-1",
        "cli",
        [
            ("user", "The deploy pipeline failed on the staging cluster yesterday."),
            ("assistant", "I restarted the deploy job; staging is green again."),
        ],
    ),
]


def _session_db(path: str | None = None) -> Any:
    from hermes_state import SessionDB

    return SessionDB(Path(path)) if path else SessionDB()


def cmd_seed(_args: argparse.Namespace) -> dict[str, Any]:
    db = _session_db()
    ids: dict[str, list[int]] = {}
    for sid, source, messages in HISTORY:
        db.create_session(sid, source)
        ids[sid] = [int(db.append_message(sid, role, content=text)) for role, text in messages]
        db.end_session(sid, "user_exit")
    db.close()
    return {"ids": ids, "db": str(Path(os.environ["HERMES_HOME"]) / "state.db")}


def cmd_session(args: argparse.Namespace) -> dict[str, Any]:
    """One new session with one message, through SessionDB, on the store ``--db-path``."""
    db = _session_db(args.db_path)
    db.create_session(args.session_id, "cli")
    message = int(db.append_message(args.session_id, "user", content="still writing"))
    db.close()
    return {"session": args.session_id, "message": message}


def cmd_hold(args: argparse.Namespace) -> dict[str, Any]:
    """A turn of ``--tool-rows`` tool outputs saved by a Hermes that then exits (closing
    the store truncates its WAL), then a Hermes that keeps ``--db-path`` open: one
    message saved, a line of JSON (the outputs' ids), and once stdin closes one
    more message before it closes the store."""
    db = _session_db(args.db_path)
    db.create_session("held", "cli")
    ids = [
        int(db.append_message("held", "tool", content=f"tool output 部署日志 {words}"))
        for words in (" ".join(f"w{i}x{k}" for k in range(200)) for i in range(args.tool_rows))
    ]
    db.close()
    db = _session_db(args.db_path)
    db.append_message("held", "user", content="back again")
    print(json.dumps({"first": ids[0], "last": ids[-1]}), file=sys.__stdout__, flush=True)
    sys.stdin.read()
    message = int(db.append_message("held", "user", content="still writing"))
    db.close()
    return {"message": message}


class _Records(logging.Handler):
    """Log records of hermes-fts (and Hermes' middleware/plugin loader) for the test."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[dict[str, Any]] = []

    def emit(self, record: logging.LogRecord) -> None:
        ours = record.name.startswith("hermes_fts")
        if ours or record.levelno >= logging.WARNING:
            self.records.append(
                {"logger": record.name, "level": record.levelname, "message": record.getMessage()}
            )


def _capture_logs() -> _Records:
    handler = _Records()
    for name in ("hermes_fts", "hermes_cli.middleware", "hermes_cli.plugins"):
        logger = logging.getLogger(name)
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG)
    return handler


class _Script:
    """What the scripted model answers: session_search calls first, then a final message."""

    def __init__(self, tool_args: list[dict[str, Any]]) -> None:
        self.tool_args = tool_args
        self.requests: list[dict[str, Any]] = []
        self.chat_requests = 0
        self.lock = threading.Lock()

    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            self.requests.append(body)
            if not body.get("messages"):
                return {"role": "assistant", "content": "ok"}  # the agent's probe
            self.chat_requests += 1
            first = self.chat_requests == 1
        if first:
            return {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_fts_{i}",
                        "type": "function",
                        "function": {
                            "name": "session_search",
                            "arguments": json.dumps(args, ensure_ascii=False),
                        },
                    }
                    for i, args in enumerate(self.tool_args)
                ],
            }
        return {"role": "assistant", "content": "Here is what I found."}


def _serve(script: _Script) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a: Any) -> None:  # keep the driver's stdout JSON-only
            pass

        def do_GET(self) -> None:  # /v1/models and similar probes
            self._send({"object": "list", "data": [{"id": "scripted", "object": "model"}]})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                body = {}
            message = script.reply(body)
            finish = "tool_calls" if message.get("tool_calls") else "stop"
            if body.get("stream"):
                self._stream(message, finish)
            else:
                self._send(
                    {
                        "id": "chatcmpl-1",
                        "object": "chat.completion",
                        "created": 0,
                        "model": "scripted",
                        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    }
                )

        def _send(self, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, message: dict[str, Any], finish: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            delta: dict[str, Any] = {"role": "assistant"}
            if message.get("tool_calls"):
                delta["tool_calls"] = [
                    dict(tc, index=i) for i, tc in enumerate(message["tool_calls"])
                ]
            else:
                delta["content"] = message.get("content") or ""
            for chunk in (
                {"delta": delta, "finish_reason": None},
                {"delta": {}, "finish_reason": finish},
            ):
                event = {
                    "id": "chatcmpl-1",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": "scripted",
                    "choices": [dict(chunk, index=0)],
                }
                self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _agent(base_url: str, db: Any, session_id: str = SESSION_ID) -> Any:
    from run_agent import AIAgent

    return AIAgent(
        base_url=base_url,
        api_key="test-key",
        model="scripted",
        quiet_mode=True,
        max_iterations=3,
        tool_delay=0,
        session_id=session_id,
        enabled_toolsets=["session_search"],
        session_db=db,
    )


def _tool_schema(body: dict[str, Any]) -> dict[str, Any] | None:
    for tool in body.get("tools") or []:
        fn = tool.get("function") or {}
        if fn.get("name") == "session_search":
            return fn
    return None


def _host_takes(names: list[str]) -> None:
    """Add parameters to Hermes' own ``session_search`` schema before plugins load, as a
    newer Hermes declares them (Hermes main's chat ``scope``); its code ignores them."""
    from tools.registry import discover_builtin_tools, registry

    discover_builtin_tools()
    properties = registry.get_entry("session_search").schema["parameters"]["properties"]
    for name in names:
        properties[name] = {"type": "string", "description": f"{name}, as a newer Hermes has it"}


def cmd_turn(args: argparse.Namespace) -> dict[str, Any]:
    records = _capture_logs()
    _host_takes(args.host_param)
    script = _Script(json.loads(args.tool_args))
    server = _serve(script)
    db = _session_db(args.db_path)
    try:
        agent = _agent(f"http://127.0.0.1:{server.server_address[1]}/v1", db)
        final = agent.run_conversation(args.prompt)
    finally:
        server.shutdown()
    chats = [r for r in script.requests if r.get("messages")]
    tool_messages = [m for m in chats[-1]["messages"] if m.get("role") == "tool"] if chats else []
    return {
        "final": final.get("final_response") if isinstance(final, dict) else str(final),
        "requests": len(script.requests),
        "chat_requests": len(chats),
        "probe_first": bool(script.requests) and not script.requests[0].get("messages"),
        "tool_messages": [m["content"] for m in tool_messages],
        "schema": _tool_schema(chats[0]) if chats else None,
        "logs": records.records,
    }


def cmd_sessions(args: argparse.Namespace) -> dict[str, Any]:
    """``--count`` new sessions in one process (as a gateway runs them), each an AIAgent
    with a fresh session id whose first turn calls ``session_search`` with ``--tool-args``."""
    import uuid

    records = _capture_logs()
    out: list[dict[str, Any]] = []
    for _ in range(args.count):
        script = _Script(json.loads(args.tool_args))
        server = _serve(script)
        session_id = f"new-{uuid.uuid4().hex[:12]}"
        db = None if args.lazy_db else _session_db()
        try:
            agent = _agent(f"http://127.0.0.1:{server.server_address[1]}/v1", db, session_id)
            final = agent.run_conversation(args.prompt)
        finally:
            server.shutdown()
        chats = [r for r in script.requests if r.get("messages")]
        tools = [m["content"] for m in chats[-1]["messages"] if m.get("role") == "tool"]
        stored = _session_db().get_session(session_id) is not None
        out.append(
            {
                "session_id": session_id,
                "tool_messages": tools,
                "stored_after": stored,
                "final": final.get("final_response") if isinstance(final, dict) else None,
            }
        )
    return {"sessions": out, "logs": records.records}


def cmd_async_turn(args: argparse.Namespace) -> dict[str, Any]:
    """``turn`` on async Hermes (async-hermes-agent): its SessionDB writes the history,
    its PluginManager loads the enabled plugins, its AIAgent runs the turn."""
    import asyncio

    async def run() -> dict[str, Any]:
        from hermes_cli.plugins import discover_plugins, get_plugin_manager
        from hermes_state import SessionDB
        from run_agent import AIAgent

        records = _capture_logs()
        db = SessionDB()
        for sid, source, messages in HISTORY:
            await db.create_session(sid, source)
            for role, text in messages:
                await db.append_message(sid, role, content=text)
            await db.end_session(sid, "user_exit")
        await discover_plugins()
        plugins = get_plugin_manager().list_plugins()
        script = _Script(json.loads(args.tool_args))
        server = _serve(script)
        try:
            agent = AIAgent(
                base_url=f"http://127.0.0.1:{server.server_address[1]}/v1",
                api_key="test-key",
                model="scripted",
                quiet_mode=True,
                max_iterations=3,
                session_id=SESSION_ID,
                enabled_toolsets=["session_search"],
                session_db=db,
            )
            final = await agent.run_conversation(args.prompt)
        finally:
            server.shutdown()
        chats = [r for r in script.requests if r.get("messages")]
        tools = [m["content"] for m in chats[-1]["messages"] if m.get("role") == "tool"]
        return {
            "final": final.get("final_response") if isinstance(final, dict) else None,
            "tool_messages": tools,
            "plugins": plugins,
            "new_sessions": [await new_session() for _ in range(args.new_sessions)],
            "logs": records.records,
        }

    async def new_session() -> dict[str, Any]:
        """A fresh session id on an agent built without a SessionDB (it opens Hermes'
        default one at its first recall and writes the session after the turn)."""
        import uuid

        from hermes_state import SessionDB
        from run_agent import AIAgent

        script = _Script(json.loads(args.tool_args))
        server = _serve(script)
        session_id = f"new-{uuid.uuid4().hex[:12]}"
        try:
            agent = AIAgent(
                base_url=f"http://127.0.0.1:{server.server_address[1]}/v1",
                api_key="test-key",
                model="scripted",
                quiet_mode=True,
                max_iterations=3,
                session_id=session_id,
                enabled_toolsets=["session_search"],
            )
            await agent.run_conversation(args.prompt)
        finally:
            server.shutdown()
        chats = [r for r in script.requests if r.get("messages")]
        tools = [m["content"] for m in chats[-1]["messages"] if m.get("role") == "tool"]
        stored = await SessionDB().get_session(session_id) is not None
        return {"session_id": session_id, "tool_messages": tools, "stored_after": stored}

    return asyncio.run(run())


def cmd_calls(args: argparse.Namespace) -> dict[str, Any]:
    """Steps (JSON list): {"search": ARGS} through invoke_tool, {"dispatch": ARGS} through
    the tool registry, a SessionDB write
    ({"append": [sid, role, text]}, {"update": [message_id, text]}, {"delete": sid}),
    or "lock" / "unlock" (a second connection holding BEGIN EXCLUSIVE)."""
    from agent.agent_runtime_helpers import invoke_tool

    records = _capture_logs()
    db = _session_db()
    agent = _agent("http://127.0.0.1:9/v1", db)
    db.create_session(SESSION_ID, "cli")
    out: list[Any] = []
    holder = None
    for step in json.loads(args.steps):
        if step == "lock":  # another connection takes the write lock and keeps it
            holder = sqlite3.connect(db.db_path, isolation_level=None, timeout=5)
            holder.execute("BEGIN EXCLUSIVE")
            out.append("locked")
        elif step == "unlock":
            assert holder is not None
            holder.execute("ROLLBACK")
            holder.close()
            out.append("unlocked")
        elif "search" in step:
            out.append(json.loads(invoke_tool(agent, "session_search", step["search"], "task-1")))
        elif "dispatch" in step:  # the registry entry, as ctx.dispatch_tool callers reach it
            from tools.registry import registry

            out.append(
                json.loads(
                    registry.dispatch(
                        "session_search", step["dispatch"], db=db, current_session_id=SESSION_ID
                    )
                )
            )
        elif "append" in step:
            sid, role, text = step["append"]
            if db.get_session(sid) is None:
                db.create_session(sid, "cli")
            out.append(int(db.append_message(sid, role, content=text)))
        elif "update" in step:
            # SessionDB has no message editor; this is the UPDATE its own triggers watch.
            db._execute_write(
                lambda conn, s=step: conn.execute(
                    "UPDATE messages SET content = ? WHERE id = ?", (s["update"][1], s["update"][0])
                )
            )
            out.append(None)
        elif "delete" in step:
            out.append(bool(db.delete_session(step["delete"])))
    return {"results": out, "logs": records.records}


def cmd_parity(args: argparse.Namespace) -> dict[str, Any]:
    """``--history`` (JSON: [sid, [[role, text], ...]] each) written through SessionDB and
    the store built by ``hermes-fts optimize-storage``; then for each of ``--queries``
    the sessions Hermes' built-in ``session_search`` finds, ours finds, and our notes."""
    from tools.session_search_tool import session_search as builtin

    import hermes_fts

    db = _session_db()
    for sid, messages in json.loads(args.history):
        db.create_session(sid, "cli")
        for role, text in messages:
            db.append_message(sid, role, content=text)
        db.end_session(sid, "user_exit")
    db.create_session(SESSION_ID, "cli")
    path = Path(os.environ["HERMES_HOME"]) / "state.db"
    built = subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", "optimize-storage", "--db", str(path), "--yes"],
        capture_output=True,
        text=True,
    )
    out: dict[str, Any] = {}
    with hermes_fts.SessionStore(path, readonly=True) as store:
        for query in json.loads(args.queries):
            theirs = json.loads(
                builtin(query=query, db=db, limit=10, current_session_id=SESSION_ID)
            )
            ours = hermes_fts.session_search(
                store=store, query=query, limit=10, current_session_id=SESSION_ID
            )
            out[query] = {
                "builtin": sorted(r["session_id"] for r in theirs.get("results", [])),
                "ours": sorted(r["session_id"] for r in ours.get("results", [])),
                "notes": ours.get("query_notes", []),
                "error": ours.get("error"),
            }
    return {"built": built.returncode, "queries": out}


def cmd_plugins(_args: argparse.Namespace) -> dict[str, Any]:
    from hermes_cli.plugins import PluginManager

    manager = PluginManager()
    manager.discover_and_load()
    return {"plugins": manager.list_plugins()}


def cmd_slash(args: argparse.Namespace) -> dict[str, Any]:
    """The in-session ``/NAME`` command, looked up the way Hermes' CLI and gateway do."""
    from hermes_cli.plugins import get_plugin_command_handler, resolve_plugin_command_result

    handler = get_plugin_command_handler(args.name)
    if handler is None:
        return {"text": None}
    return {"text": resolve_plugin_command_result(handler(args.raw))}


def cmd_bench(args: argparse.Namespace) -> dict[str, Any]:
    """Median seconds per query through invoke_tool (middleware on) and the built-in."""
    from agent.agent_runtime_helpers import invoke_tool
    from hermes_cli import plugins as hp
    from tools.session_search_tool import session_search as builtin

    db = _session_db()
    agent = _agent("http://127.0.0.1:9/v1", db)
    agent.session_id = None  # no current-lineage filtering: both sides search everything
    queries: dict[str, list[str]] = json.loads(args.queries)
    hp.discover_plugins()
    out: dict[str, Any] = {}
    for klass, terms in queries.items():
        timings: dict[str, list[float]] = {"plugin": [], "builtin": []}
        engines = set()
        for term in terms:
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                payload = json.loads(invoke_tool(agent, "session_search", {"query": term}, "bench"))
                timings["plugin"].append(time.perf_counter() - t0)
                engines.add(payload.get("engine", "built-in"))
                t0 = time.perf_counter()
                builtin(query=term, db=db, current_session_id=None)
                timings["builtin"].append(time.perf_counter() - t0)
        out[klass] = {k: sorted(v)[len(v) // 2] for k, v in timings.items()}
        out[klass]["engines"] = sorted(engines)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="_hermes_env.py")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("seed").set_defaults(fn=cmd_seed)
    session = sub.add_parser("session")
    session.add_argument("--db-path", required=True)
    session.add_argument("--session-id", default="after-optimize")
    session.set_defaults(fn=cmd_session)
    hold = sub.add_parser("hold")
    hold.add_argument("--db-path", required=True)
    hold.add_argument("--tool-rows", type=int, default=3000)
    hold.set_defaults(fn=cmd_hold)
    turn = sub.add_parser("turn")
    turn.add_argument("--tool-args", required=True, help="JSON arguments of the tool call")
    turn.add_argument("--prompt", default="What did we say earlier?")
    turn.add_argument("--db-path", help="a custom SessionDB file instead of Hermes' default")
    turn.add_argument(
        "--host-param", action="append", default=[], help="a parameter Hermes' schema gains"
    )
    turn.set_defaults(fn=cmd_turn)
    sessions = sub.add_parser("sessions")
    sessions.add_argument("--tool-args", required=True, help="JSON arguments of the tool call")
    sessions.add_argument("--count", type=int, default=10)
    sessions.add_argument("--prompt", default="What did we say earlier?")
    sessions.add_argument(
        "--lazy-db",
        action="store_true",
        help="construct each AIAgent without a SessionDB, as one-shot runs do",
    )
    sessions.set_defaults(fn=cmd_sessions)
    async_turn = sub.add_parser("async-turn")
    async_turn.add_argument("--tool-args", required=True, help="JSON arguments of the tool call")
    async_turn.add_argument("--prompt", default="What did we say earlier?")
    async_turn.add_argument(
        "--new-sessions",
        type=int,
        default=0,
        help="then this many new sessions without a SessionDB",
    )
    async_turn.set_defaults(fn=cmd_async_turn)
    calls = sub.add_parser("calls")
    calls.add_argument("--steps", required=True)
    calls.set_defaults(fn=cmd_calls)
    parity = sub.add_parser("parity")
    parity.add_argument("--history", required=True)
    parity.add_argument("--queries", required=True)
    parity.set_defaults(fn=cmd_parity)
    sub.add_parser("plugins").set_defaults(fn=cmd_plugins)
    slash = sub.add_parser("slash")
    slash.add_argument("name")
    slash.add_argument("raw", nargs="?", default="")
    slash.set_defaults(fn=cmd_slash)
    bench = sub.add_parser("bench")
    bench.add_argument("--queries", required=True)
    bench.add_argument("--repeats", type=int, default=5)
    bench.set_defaults(fn=cmd_bench)
    args = parser.parse_args(argv)
    with contextlib.redirect_stdout(sys.stderr):  # Hermes may print; stdout stays JSON
        result = args.fn(args)
    print(json.dumps(result, ensure_ascii=False, default=str), flush=True)
    if args.command == "async-turn":
        os._exit(0)  # async Hermes leaves worker threads that would keep the process alive
    return 0


if __name__ == "__main__":
    sys.exit(main())
