"""What the plugin serves with, shared by its serving and its commands: what
``register`` achieved (``REGISTRATION``), the store Hermes' active profile reads
and the read-only ``SessionStore`` kept open on it (``STORES``), and the logging
that says once why a call went to Hermes' built-in."""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._version import __version__
from ..store import SessionStore, default_db_path

__all__ = [
    "ENGINE",
    "REGISTRATION",
    "STORES",
    "Decline",
    "Registration",
    "StoreCache",
    "hermes_home",
    "host_only_reason",
    "once",
    "store_path",
]

log = logging.getLogger("hermes_fts.hermes.plugin")  # the plugin's one logger

ENGINE = f"hermes-fts {__version__}"
_STORE_TTL_S = 30.0  # a cached read-only store is reopened after this long


@dataclass
class Registration:
    """What ``register`` achieved in this process (``hermes fts status``, ``/fts``)."""

    middleware: bool = False
    schema_override: bool = False
    override_refused: str | None = None
    commands: list[str] = field(default_factory=list)
    # Parameters of the host's own session_search that ours lacks: its every call
    # then goes to the host, which may narrow a search by them (a chat ``scope``).
    host_only: tuple[str, ...] = ()

    @property
    def grant(self) -> str:
        if not self.middleware:
            return "not serving"
        return "schema override" if self.schema_override else "execution middleware only"


REGISTRATION = Registration()
_warned: set[str] = set()
_warned_lock = threading.Lock()


def once(level: int, key: str, message: str, *args: Any) -> None:
    """Log ``message`` at ``level`` the first time ``key`` comes up, at DEBUG after."""
    with _warned_lock:
        first = key not in _warned
        _warned.add(key)
    log.log(level if first else logging.DEBUG, message, *args)


class Decline(Exception):
    """hermes-fts will not answer this call; Hermes' built-in does (message: why)."""


def hermes_home() -> Path:
    """The home Hermes uses for this call (its per-task override included)."""
    try:
        from hermes_constants import get_hermes_home
    except ImportError:  # outside Hermes (tests, benchmarks): $HERMES_HOME as Hermes reads it
        return default_db_path().parent
    return Path(get_hermes_home())


def store_path() -> Path:
    return hermes_home() / "state.db"


class StoreCache:
    """One read-only SessionStore per database file, reused across calls.

    Opening costs about as much as a search, so the store is kept; it is
    reopened when the file is replaced, after ``_STORE_TTL_S`` and after any
    failure.  A read-only connection sees every commit Hermes makes, so live
    writes show up on the next search.  The lock keeps concurrent tool calls off
    one connection.
    """

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._entries: dict[str, tuple[tuple[int, int], float, Any]] = {}

    def get(self, path: Path) -> Any:
        key = os.path.realpath(path)
        try:
            st = os.stat(key)
        except FileNotFoundError:
            self.drop(key)
            raise Decline(f"no session store at {path}") from None
        except OSError as exc:
            raise Decline(f"cannot stat the session store {path}: {exc}") from exc
        ident = (st.st_dev, st.st_ino)
        cached = self._entries.get(key)
        fresh = cached is not None and time.monotonic() - cached[1] < _STORE_TTL_S
        if cached is not None and fresh and cached[0] == ident:
            return cached[2]
        self.drop(key)
        try:
            store = SessionStore(key, readonly=True)
        except Exception as exc:  # noqa: BLE001 - any open failure means "ask the built-in"
            raise Decline(f"cannot open the session store {path} read-only: {exc}") from exc
        self._entries[key] = (ident, time.monotonic(), store)
        return store

    def drop(self, key: str | None = None) -> None:
        keys = [key] if key is not None else list(self._entries)
        for k in keys:
            entry = self._entries.pop(os.path.realpath(k), None)
            if entry is not None:
                with contextlib.suppress(Exception):
                    entry[2].close()


STORES = StoreCache()
# Close before interpreter teardown: a connection still open when the handle
# of the library is collected would call into unmapped tokenizer code.
atexit.register(STORES.drop)


def host_only_reason(names: tuple[str, ...]) -> str:
    """Why every call goes to the host: its session_search takes ``names``, ours not."""
    return f"Hermes' session_search takes {', '.join(names)}, which hermes-fts does not honour"
