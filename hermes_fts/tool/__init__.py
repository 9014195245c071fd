"""The ``session_search`` agent tool: four call forms over a ``SessionStore``.

The call form is inferred from the arguments, there is no mode parameter:

* ``session_id`` + ``around_message_id`` → SCROLL a window of one session;
* ``session_id`` alone                   → READ a whole session (head + tail when long);
* ``query``                              → DISCOVERY: full-text search, one result per
                                           conversation lineage, with the messages around
                                           each hit;
* nothing                                → BROWSE the most recently active sessions.

Every answer is a JSON-ready dict; failures are ``{"success": False,
"error": "..."}`` with a message that says what to pass instead.  The tool
never raises for bad arguments.

Profiles: ``$HERMES_HOME/profiles/<name>/state.db`` (the default profile is
``$HERMES_HOME/state.db``).  A profile store, and the default store when no
store is passed, is opened read-only for one call and closed afterwards; a
store passed in by the caller is never closed.

The package, bottom layer first: ``errors`` and ``args`` (coercion),
``schema`` (what the model reads), ``shape`` (messages as payload entries),
``profiles``, ``context`` (one call's store and lookups), then one module per
form: ``discover`` and ``sessions`` (read, scroll, browse).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from ..store import SessionStore, failure_cause
from .args import Call
from .context import open_context, with_profile_fallback
from .discover import Discovery
from .errors import INTERNAL_FAILURE, ToolError, error_payload
from .sessions import browse, read, scroll
from .shape import nothing_found as nothing_found  # the command line's empty answer
from .shape import with_notes
from .spec import TOOL_SCHEMA

# ``Call`` and ``run_call`` serve the command line; the public names are these.
__all__ = ["TOOL_SCHEMA", "session_search"]

log = logging.getLogger(__name__)


def session_search(
    store: Any = None,
    query: str | None = None,
    session_id: str | None = None,
    around_message_id: Any = None,
    window: Any = None,
    limit: Any = None,
    sort: str | None = None,
    detail: str | None = None,
    role_filter: Any = None,
    profile: str | None = None,
    current_session_id: str | None = None,
    *,
    after: Any = None,
    before: Any = None,
    exclude_session_ids: Any = None,
    now: Any = None,
    beyond: str | None = None,
    **unknown: Any,
) -> dict[str, Any]:
    """Search, read, scroll or browse past conversations; returns a JSON-ready dict.

    The call form follows from the arguments: ``session_id`` with
    ``around_message_id`` scrolls, ``session_id`` alone reads, ``query``
    searches, nothing browses.  ``store`` is a ``SessionStore`` (``None`` opens
    ``$HERMES_HOME/state.db``); ``profile`` (or a ``@session:<profile>/<id>``
    link) reads another profile's store read-only.  Errors come back as
    ``{"success": False, "error": "..."}``.  ``now`` (epoch seconds or ISO,
    default the current time) is where relative bounds such as ``7d`` and a
    question's time words such as "last week" count from; for tests and
    replays, not part of the model's schema.  ``beyond`` (``"after"`` or
    ``"before"``) makes a scroll the 2 × window messages that follow (precede)
    ``around_message_id`` instead of those around it: the next page after one
    already shown (``hermes-fts scroll --after``), never overlapping it.
    An argument of another name (a model's ``max_results``) is an error naming the
    arguments there are, as every bad argument is: it raised TypeError.
    """
    if unknown:
        return error_payload(_unknown_arguments(unknown))
    if store is not None and not isinstance(store, SessionStore):
        return error_payload(_not_a_store(store))
    try:
        call = Call.parse(
            session_id,
            profile,
            current_session_id,
            query=query,
            around_message_id=around_message_id,
            window=window,
            limit=limit,
            sort=sort,
            detail=detail,
            role_filter=role_filter,
            after=after,
            before=before,
            exclude_session_ids=exclude_session_ids,
            now=now,
            beyond=beyond,
        )
        return run_call(store, call)
    except ToolError as exc:
        return error_payload(str(exc))
    except Exception as exc:  # noqa: BLE001 - the tool answers, it never raises
        cause = failure_cause(exc)
        if cause is not None:  # the store's state, not the arguments
            log.warning("session_search could not read the store: %s", cause)
            return error_payload(f"session_search could not read the store: {cause}")
        log.exception("session_search failed")
        return error_payload(f"{INTERNAL_FAILURE}: {exc}; retry with simpler arguments")


def _not_a_store(store: Any) -> str:
    """The error of a ``store`` that is no SessionStore: a path failed deep inside ('str'
    object has no attribute 'path'), reported as our own failure ("retry with simpler
    arguments") when the caller's store was wrong."""
    return (
        "store must be a SessionStore (hermes_fts.SessionStore(path, readonly=True)), "
        f"or None for $HERMES_HOME/state.db; not {type(store).__name__}"
    )


def _unknown_arguments(names: Iterable[str]) -> str:
    """The error of a call naming arguments the tool does not take: which, and the ones
    it does.  Not ignored: a narrowing argument dropped would widen what is shown."""
    given = ", ".join(sorted(map(repr, names)))
    known = ", ".join(TOOL_SCHEMA["parameters"]["properties"])
    return f"session_search does not take {given}; its arguments are {known}"


def run_call(store: Any, call: Call) -> dict[str, Any]:
    """``session_search`` for a parsed ``call``; raises ``ToolError`` instead of answering one.

    The command line calls it with its own caps (``Call.limit_max``,
    ``offset``, ``full``) and words the errors for a person (``ToolError.person``).
    Stores opened for the call are closed before it returns.
    """
    owned: list[Any] = []
    try:
        return _dispatch(owned, store, call)
    finally:
        for opened in owned:
            try:
                opened.close()
            except Exception:  # noqa: BLE001
                log.debug("closing a profile store failed", exc_info=True)


def _dispatch(owned: list[Any], store: Any, call: Call) -> dict[str, Any]:
    """Run the form the arguments name; stores opened on the way go to ``owned``."""
    return with_notes(_form(owned, store, call), call.notes)


def _form(owned: list[Any], store: Any, call: Call) -> dict[str, Any]:
    """The payload of the form the arguments name, without the call's own notes."""
    ctx, call = open_context(owned, store, call)
    sid = call.session_id
    if sid is not None and call.around_message_id is not None:
        around, window = call.around_message_id, call.window
        payload = with_profile_fallback(
            owned, ctx, call, lambda c: scroll(c, sid, around, window, call.full, call.beyond)
        )
        return with_notes(payload, [call.search_arguments_note("scrolls")])
    if call.beyond is not None:  # a page beside a message needs the message
        raise ToolError("beyond pages past around_message_id: pass session_id and it too")
    if sid is not None:
        payload = with_profile_fallback(
            owned, ctx, call, lambda c: read(c, sid, call.full, call.progress, call.sink)
        )
        return with_notes(payload, [call.search_arguments_note("reads"), call.window_note()])
    if call.around_message_id is not None:
        raise ToolError(
            "scroll requires session_id; pass the session_id (or link) of the result that "
            "holds around_message_id"
        )
    if call.search_query is None:
        limit, note = call.count
        notes = [note, call.browse_note(), call.window_note()]
        return with_notes(browse(ctx, limit, call.offset), notes)
    return with_notes(Discovery(ctx, call.search_options()).run(), [call.window_note()])
