"""Opening the store ``--db`` names (checked first, so a wrong path is never changed)."""

from __future__ import annotations

import argparse
import sqlite3
from pathlib import Path

from ..store import SessionStore
from .registry import db_path

_SQLITE_HEADER = b"SQLite format 3\x00"


class StoreError(Exception):
    """A store path that cannot be used; the message says what to pass instead."""


def check_store(path: Path) -> Path:
    """``path`` when it is an existing Hermes session store; raises ``StoreError``.

    Looks without writing: a folder, a file that is not SQLite, or a SQLite
    file without the ``sessions``/``messages`` tables is refused, so a wrong
    ``--db`` never turns some other file into a session store.
    """
    hint = "pass the Hermes state.db as --db PATH"
    if not path.exists():
        raise StoreError(f"no session store at {path}; pass an existing --db PATH")
    if path.is_dir():
        raise StoreError(f"{path} is a directory, not a session store; {hint}")
    try:
        with path.open("rb") as fh:
            header = fh.read(len(_SQLITE_HEADER))
    except OSError as exc:
        raise StoreError(f"cannot read {path} ({exc.strerror}); {hint}") from exc
    if not header:
        raise StoreError(f"{path} is empty, not a session store; {hint}")
    if header != _SQLITE_HEADER:
        raise StoreError(f"{path} is not a SQLite database; {hint}")
    try:
        conn = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
        try:
            names = {
                row[0]
                for row in conn.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table'"
                    " AND name IN ('sessions', 'messages')"
                )
            }
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise StoreError(f"cannot read {path} as SQLite ({exc}); {hint}") from exc
    if names != {"sessions", "messages"}:
        raise StoreError(
            f"{path} is a SQLite database but not a Hermes session store (no sessions and "
            f"messages tables); {hint}"
        )
    return path


def open_store(path: Path, *, readonly: bool) -> SessionStore:
    """The store at ``path`` after ``check_store``; raises ``StoreError``."""
    return SessionStore(check_store(path), readonly=readonly)


def open_db(args: argparse.Namespace, *, readonly: bool) -> SessionStore:
    """The store ``--db`` (or the default path) names; raises ``StoreError``."""
    return open_store(db_path(args), readonly=readonly)
