"""Helpers shared by the view, tool and tool-CLI tests (not a test module)."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from functools import cache, lru_cache
from pathlib import Path
from typing import Any, Union

import pytest

from hermes_fts.store import SessionStore

T0 = 1_700_000_000.0

Turn = Union[tuple[str, Any], dict[str, Any]]


def open_store(path: Path, *, word_index: bool = False) -> SessionStore:
    """A store at ``path``; ``word_index``: a new one keeps the opt-in word index
    (``HERMES_WORD_FTS=1`` while it is created; served from then on), for tests
    that compare the ``fts5`` route with the others."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not word_index:
        return SessionStore(path)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HERMES_WORD_FTS", "1")
        return SessionStore(path)


def one_message_each(
    tmp_path_factory: pytest.TempPathFactory, name: str, rows: dict[str, str]
) -> Iterator[tuple[SessionStore, Path]]:
    """A store whose sessions each hold one user message (``rows``: session, text),
    with every index kept (every route, fts5 too); yields it and its path."""
    path = tmp_path_factory.mktemp(name) / "state.db"
    st_ = open_store(path, word_index=True)
    for n, (session, text) in enumerate(rows.items()):
        conversation(st_, session, [("user", text)], start=T0 + n)
    yield st_, path
    st_.close()


def conversation(
    store: SessionStore,
    session_id: str,
    turns: Sequence[Turn],
    *,
    source: str = "cli",
    start: float = T0,
    title: str | None = None,
    parent: str | None = None,
    end_reason: str | None = None,
    model: str = "test-model",
    **fields: Any,
) -> list[int]:
    """Add a session and its messages (one second apart); returns the message ids."""
    store.add_session(
        session_id,
        source,
        started_at=start,
        title=title,
        parent_session_id=parent,
        model=model,
        **fields,
    )
    ids = []
    for number, turn in enumerate(turns):
        if isinstance(turn, tuple):
            role, content = turn
            extra: dict[str, Any] = {}
        else:
            extra = dict(turn)
            role = extra.pop("role")
            content = extra.pop("content", None)
        extra.setdefault("timestamp", start + number)
        ids.append(store.add_message(session_id, role, content, **extra))
    if end_reason:
        store.end_session(session_id, end_reason)
    return ids


def chat(n: int, topic: str = "chatter") -> list[Turn]:
    """``n`` alternating user/assistant turns numbered from 0."""
    return [("user" if i % 2 == 0 else "assistant", f"{topic} turn {i}") for i in range(n)]


def require_search(store: SessionStore) -> None:
    if not hasattr(store, "search_messages"):
        pytest.skip("search_messages not implemented yet")


def assert_error(payload: dict[str, Any], *needles: str) -> None:
    """The error shape: exactly success False plus a non-empty message."""
    assert set(payload) == {"success", "error"}, payload
    assert payload["success"] is False
    assert isinstance(payload["error"], str) and payload["error"].strip()
    for needle in needles:
        assert needle in payload["error"], payload["error"]
    json.dumps(payload, ensure_ascii=False)


def ids_of(messages: Iterable[dict[str, Any]]) -> list[int]:
    return [m["id"] for m in messages]


# --------------------------------------------------------------------------- the real user nobody


@lru_cache(maxsize=1)
def nobody_python() -> str | None:
    """A Python the real user ``nobody`` can run (as root with runuser), else None."""
    if os.geteuid() != 0 or shutil.which("runuser") is None:
        return None
    for exe in (sys.executable, "/usr/bin/python3"):
        probe = subprocess.run(
            ["runuser", "-u", "nobody", "--", exe, "-c", "import sqlite3"], capture_output=True
        )
        if probe.returncode == 0:
            return exe
    return None


needs_nobody = pytest.mark.skipif(
    nobody_python() is None, reason="needs root to run as the real user nobody"
)


@cache
def nobody_package_root() -> Path:
    """A folder ``nobody`` can read holding a copy of this checkout's package.

    The checkout itself may sit where ``nobody`` cannot look (a fresh clone
    under root's 0700 home or a 0700 temporary folder); put this folder on
    ``PYTHONPATH`` for processes run as ``nobody``.
    """
    root = Path(tempfile.mkdtemp(prefix="hermes-fts-nobody-pkg-"))
    shutil.copytree(
        Path(__file__).resolve().parent.parent / "hermes_fts",
        root / "hermes_fts",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    for path in [root, *root.rglob("*")]:
        path.chmod(0o755 if path.is_dir() or path.suffix in (".so", ".dylib") else 0o644)
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return root


@contextlib.contextmanager
def nobody_dir() -> Iterator[Path]:
    """A fresh folder ``nobody`` can reach (pytest's tmp_path lives under root's own)."""
    path = Path(tempfile.mkdtemp(prefix="hermes-fts-perm-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
