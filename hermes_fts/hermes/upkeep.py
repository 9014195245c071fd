"""Keeping the CJK index current from inside Hermes (docs/DESIGN.md §10).

Hermes writes every message without our extension, so each one waits in the
pending table (§5.3).  The plugin searches read-only and finds those rows by
a LIKE scan over them, and the backlog grew until someone ran ``sync``.
After each turn (Hermes' ``on_session_end`` hook, fired at the end of every
``run_conversation``) one thread applies it with the short writes a ``sync``
makes, so the next search finds the turn's messages in the index and deleted
text leaves the pending table.  It never stands in the agent's way: the
answer is already given, one run at a time, nothing is raised, and a store
whose CJK index is not served is left alone (the plugin builds nothing).
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any

from ..index.schema import CJK
from ..store import BUSY_TIMEOUT_S, open_store, write_lock_held

__all__ = ["apply_after_turn", "running"]

log = logging.getLogger(__name__)

_RUN = threading.Lock()  # held while a run applies; a turn ending meanwhile starts none
_REPORTED: set[str] = set()  # the reasons a run failed, each logged once at INFO
_LOCK_POLL_S = 0.05  # how often a run waiting for another process' write lock looks again


class _Exiting(Exception):
    """Hermes' main thread has ended: the run stops before its next batch."""


def _exiting() -> bool:
    # Python ends the main thread, then waits for every non-daemon thread.
    return not threading.main_thread().is_alive()


def _stop_when_exiting(_event: dict[str, Any]) -> None:
    """The apply's ``progress``, told before each batch of a backlog of several:
    stops the run once Hermes exits, so it waits for one batch, not the backlog."""
    if _exiting():
        raise _Exiting


def _wait_for_the_write_lock(path: Path) -> None:
    """Until no other process holds ``path``'s write lock, for as long as a write would
    wait for it, stopping once Hermes exits: SQLite's own wait cannot be cut short,
    so an exiting Hermes sat out the busy timeout for rows the next run applies."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while write_lock_held(path) and time.monotonic() < deadline:
        if _exiting():
            raise _Exiting
        time.sleep(_LOCK_POLL_S)


def apply_after_turn(path: Path) -> threading.Thread | None:
    """Apply ``path``'s pending CJK changes in a thread of their own, unless a run is
    under way (the next turn catches up); the thread started, or None.  Not a
    daemon: a Hermes that exits waits for the run's current batch (the rest
    waits for the next run), never for a whole backlog."""
    if not _RUN.acquire(blocking=False):
        return None
    thread = threading.Thread(target=_apply, args=(path,), name="hermes-fts-sync")
    try:
        thread.start()
    except BaseException:
        _RUN.release()
        raise
    return thread


def running() -> bool:
    """Whether a run is applying now."""
    return _RUN.locked()


def _apply(path: Path) -> None:
    try:
        _wait_for_the_write_lock(path)
        # A write open applies the pending table in bounded batches, each its own
        # transaction, and keeps the disk's last room for Hermes (§5.3).  open_store
        # refuses, untouched, a store gone since the hook looked or not Hermes'.
        with open_store(path, readonly=False, progress=_stop_when_exiting) as store:
            # sync() creates a missing CJK index (and its backfill); the plugin builds
            # nothing, so where there is none the open's own repair and apply suffice.
            applied = store.sync() if store.index_state()[CJK]["exists"] else 0
        log.debug("hermes-fts applied %d pending CJK changes to %s", applied, path)
    except _Exiting:
        log.debug("hermes-fts left pending CJK changes for the next run: Hermes exits")
    except Exception as exc:  # noqa: BLE001 - the next turn or `hermes fts sync` applies them
        reason = f"{type(exc).__name__}: {exc}"
        level = logging.DEBUG if reason in _REPORTED else logging.INFO
        _REPORTED.add(reason)
        log.log(level, "hermes-fts left pending CJK changes for later (%s)", reason)
    finally:
        _RUN.release()
