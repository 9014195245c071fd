"""The Hermes agent behind a ``session_search`` call, and the store it reads.

Hermes hands the tool middleware no agent: ``agent_behind`` finds it in the
closures of the call chain, and ``agents_store_path`` asks it which file its
recall SessionDB reads, so the plugin serves only the agent's own store.
"""

from __future__ import annotations

import inspect
import logging
import os
import sys
from pathlib import Path
from typing import Any

# The plugin's logger: what is logged here is the plugin's to say.
log = logging.getLogger("hermes_fts.hermes.plugin")

__all__ = ["agent_behind", "agents_store_path", "agents_store_path_async", "db_path", "same_file"]


_CLOSURE_HOPS = 8  # Hermes' chain: next_call -> call_at -> terminal lambda -> _execute


def _closure_values(fn: Any) -> list[Any]:
    """What ``fn`` closes over (bound methods and partials looked through)."""
    out: list[Any] = []
    self_obj = getattr(fn, "__self__", None)
    if self_obj is not None and not isinstance(self_obj, type(sys)):
        out.append(self_obj)
    for inner in (getattr(fn, "__func__", None), getattr(fn, "func", None)):
        if callable(inner):
            out.append(inner)
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            out.append(cell.cell_contents)
        except ValueError:  # a cell not assigned yet
            continue
    return out


def agent_behind(next_call: Any, session_id: str | None) -> Any | None:
    """The Hermes agent whose built-in ``next_call`` ends in, or ``None``.

    Hermes hands the middleware no agent, but the built-in at the end of the chain
    needs the agent's SessionDB, so the chain's closures hold it.  Only functions
    are followed, never containers, so other plugins' callbacks are not visited;
    the agent is the object with Hermes' recall opener and this call's session id.
    """
    frontier = [next_call]
    seen: set[int] = set()
    for _ in range(_CLOSURE_HOPS):
        following: list[Any] = []
        for fn in frontier:
            if id(fn) in seen:
                continue
            seen.add(id(fn))
            for value in _closure_values(fn):
                if (
                    hasattr(value, "_get_session_db_for_recall")
                    and getattr(value, "session_id", None) == session_id
                ):
                    return value
                if callable(value):
                    following.append(value)
        frontier = following
    return None


def same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return os.path.realpath(a) == os.path.realpath(b)


def db_path(db: Any) -> Path | None:
    """The file a Hermes SessionDB ``db`` reads, ``None`` when it names none."""
    path = getattr(db, "db_path", None)
    return Path(path) if path else None


def agents_store_path(agent: Any) -> Path | None:
    """The file the agent's recall SessionDB reads, ``None`` when it has none.

    The agent's own opener is called: without a SessionDB it opens Hermes' default
    one, exactly what the built-in does on this same call (and what makes Hermes
    write the session at the end of the turn), so the agent ends up as it would.
    """
    try:
        return db_path(agent._get_session_db_for_recall())
    except Exception:  # noqa: BLE001 - the built-in meets the same failure and reports it
        log.debug("the agent's SessionDB could not be opened", exc_info=True)
        return None


async def agents_store_path_async(agent: Any) -> Path | None:
    """``agents_store_path`` for async Hermes, whose opener is a coroutine."""
    try:
        db = agent._get_session_db_for_recall()
        return db_path(await db if inspect.isawaitable(db) else db)
    except Exception:  # noqa: BLE001 - the built-in meets the same failure and reports it
        log.debug("the agent's SessionDB could not be opened", exc_info=True)
        return None
